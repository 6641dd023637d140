"""Command line: ``python -m taotp run|info PROGRAM`` (Chapter 8) and ``python -m taotp progress``.

``progress`` prints your table of puzzles (solved / not yet / reflect), as
``taotp.exercises.progress()`` does in a notebook; everything else goes to the
TAOTP interpreter's command line (``taotp.interpreter.cli``).
"""
import os
import sys

PROGRESS_HELP = '''
also:
  progress [CHAPTER]  print your table of puzzles (solved / not yet / reflect), kept
                      between sessions (see taotp.exercises.progress_file())'''


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ['progress']:
            from .exercises import progress
            if len(argv) > 2 or (len(argv) == 2 and not argv[1].isdigit()):
                print('usage: python -m taotp progress [CHAPTER]', file=sys.stderr)
                return 2
            progress(int(argv[1]) if len(argv) == 2 else None, show_file=True)
            return 0
        from .interpreter.cli import main as interpreter_main
        if argv[:1] in ([], ['-h'], ['--help']):
            try:
                return interpreter_main(argv)
            finally:                     # argparse exits after its help; ours follows it
                print(PROGRESS_HELP)
        return interpreter_main(argv)
    except BrokenPipeError:          # e.g. `python -m taotp progress | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == '__main__':
    sys.exit(main())
