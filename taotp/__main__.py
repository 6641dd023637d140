"""Command line: ``python -m taotp run|info PROGRAM`` (filled in by Chapter 8)."""
import sys


def main(argv=None):
    try:
        from .interpreter import cli
    except ImportError:
        print('taotp: the command line arrives with Chapter 8 (the TAOTP interpreter)',
              file=sys.stderr)
        return 2
    return cli(argv)


if __name__ == '__main__':
    sys.exit(main())
