"""Checkers for the book's puzzles.

    from taotp.exercises import check, progress
    check('1.3', my_decode)    # prints PASS 1.3 · ... or NOT YET 1.3 · ... (wrapped)
    progress()                 # your table of puzzles: solved, not yet, reflect

``check`` pickles the answer (cloudpickle) and hands it to a judge process that
never runs it (``judge``); the judge runs it in a fresh worker process on cases
drawn anew for every check, computes the expected values itself and sends back
the verdict, so nothing the kernel did before takes part, and an answer that
hangs, crashes or exits ends only its worker.  Every checker accepts anything
and reports it instead of crashing, naming the input that broke.  Puzzle ids
are strings such as ``'6.20'``.  Options passed to ``check`` weaken the check:
the result says ``PASS (relaxed: ...)`` and never counts as solved.  Verdicts
are kept in a small JSON file (``progress``): once solved, a puzzle stays solved.
"""
import atexit
import contextlib
import functools
import linecache
import os
import re
import socket
import subprocess
import sys
import sysconfig
import textwrap

from . import store as _progress
from . import toolkit
from .store import progress_file
from .registry import CHAPTERS, CHECKER_KINDS, Puzzle, registry
from .result import CheckResult

_ID = re.compile(r'^[1-9][0-9]?\.[1-9][0-9]?$')
_keep = [True]
_judge = {'process': None, 'channel': None}
PAGE_WIDTH = 88       # characters of the book's text column
PATIENCE = 90          # seconds the kernel waits for the judge beyond a check's own budget
PICKLE_SECONDS = 20
MAX_ANSWER_BYTES = 256 << 20


def keep_progress(on=True):
    """Save verdicts to the progress file (the default), or not (the solution notebooks)."""
    _keep[0] = bool(on)


def check(puzzle_id, answer, verbose=False, **options):
    """Check ``answer`` for puzzle ``puzzle_id`` (e.g. ``'1.3'``); print and return the verdict.
    ``options`` (a checker's own keywords) weaken the check: such a verdict is not counted as
    solved.  ``verbose=True`` adds the traceback of an answer that raised."""
    result = evaluate(puzzle_id, answer, **options)
    if _keep[0] and result.puzzle in registry() and (result.counts or not result.passed):
        _progress.record(result.puzzle, result.passed)
    if result.output:
        print(result.output, end='' if result.output.endswith('\n') else '\n')
    # the verdict (``result.line``) fits the page: it continues on indented lines
    print(textwrap.fill(result.line, PAGE_WIDTH, subsequent_indent='    ',
                        break_long_words=False, break_on_hyphens=False))
    if verbose and result.detail:
        print(result.detail)
    return result


def evaluate(puzzle_id, answer, call_seconds=None, **options):
    """The verdict on ``answer``, without printing or recording it (for tests and tools).

    ``call_seconds`` lowers the time limit of each call of the answer (never raises it).
    """
    table = registry()
    if isinstance(puzzle_id, (int, float)) and not isinstance(puzzle_id, bool):
        return CheckResult(str(puzzle_id), False, f'puzzle ids are strings, e.g. check("6.20", '
                           f'answer); got the number {puzzle_id!r} (as a number 6.2 and 6.20 are '
                           f'the same)')
    if not isinstance(puzzle_id, str) or not _ID.match(puzzle_id) or puzzle_id not in table:
        return CheckResult(str(puzzle_id), False, f"there is no puzzle {puzzle_id!r}; ids look "
                                                  f"like '1.3' (see progress())")
    row = table[puzzle_id]
    if row.checker is None:
        return CheckResult(puzzle_id, False, f'puzzle {puzzle_id} is a {row.kind} puzzle with no '
                                             f'checker; its discussion is in '
                                             f'{row.solution_notebook}')
    relaxed = ', '.join(f'{k}={v!r}' for k, v in sorted(options.items()))
    not_yet = functools.partial(CheckResult, puzzle_id, False, relaxed=relaxed)
    if not _plain(options):
        return not_yet('options must be plain numbers, text or lists of them')
    try:
        with toolkit.time_limit(PICKLE_SECONDS):
            answer_bytes = _pickled(answer)
    except toolkit.TimeUp:
        return not_yet(f'your answer could not be packed for the process that checks it within '
                       f'{PICKLE_SECONDS} s (reading one of its values never ends?)')
    except Exception as exc:        # noqa: BLE001 (anything cloudpickle trips on)
        return not_yet(f'your answer cannot be sent to the process that checks it '
                       f'({type(exc).__name__}: {str(exc)[:200]}); keep what it needs in plain '
                       f'values, arrays and functions')
    if len(answer_bytes) > MAX_ANSWER_BYTES:
        return not_yet(f'your answer packs into {len(answer_bytes):,} bytes; at most '
                       f'{MAX_ANSWER_BYTES:,} can be sent to the process that checks it')
    request = {'puzzle': puzzle_id, 'answer': answer_bytes, 'options': options,
               'call_seconds': call_seconds, 'cwd': os.getcwd(), 'progress': str(progress_file()),
               'sys_path': [p for p in sys.path if isinstance(p, str)]}
    verdict = _ask_judge(request, row.checker.budget + PATIENCE)
    message = _with_source_line(verdict.get('message', ''), verdict.get('where'))
    return CheckResult(puzzle_id, bool(verdict.get('passed')), message,
                       verdict.get('counterexample'), verdict.get('detail', ''),
                       relaxed=relaxed, output=verdict.get('output', ''))


# ----------------------------------------------------------------------------- talking to the judge

def _ask_judge(request, patience):
    from . import wire
    for attempt in range(2):
        channel = _judge_channel()
        try:
            wire.send(channel, ('check', request))
            channel.settimeout(patience)
            reply = wire.loads(wire.recv_bytes(channel))       # plain data only
            if type(reply) is tuple and reply[0] == 'verdict':
                return reply[1]
        except KeyboardInterrupt:
            _stop_judge()
            raise
        except (OSError, wire.WireError, EOFError) as exc:
            _stop_judge()
            if attempt or isinstance(exc, socket.timeout):
                return {'passed': False, 'message': f'the checking process did not answer '
                        f'({type(exc).__name__}: {exc}); run the check again'}
    return {'passed': False, 'message': 'the checking process did not answer'}


def _judge_channel():
    process = _judge['process']
    if process is not None and process.poll() is None:
        return _judge['channel']
    _stop_judge()
    ours, theirs = socket.socketpair()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # one BLAS thread: a spinning second one slows every check tenfold on a busy machine;
    # started in the package's folder: ``-m`` puts the working folder first on the judge's
    # path, where a reader's ``selectors.py`` would stand in for the standard library's
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1',
               PYTHONPATH=os.pathsep.join(
                   [root] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    _judge['process'] = subprocess.Popen(
        [sys.executable, '-m', 'taotp.exercises.judge', str(theirs.fileno())],
        pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env=env, start_new_session=True, cwd=root)
    theirs.close()
    _judge['channel'] = ours
    return ours


def _stop_judge():
    process, channel = _judge['process'], _judge['channel']
    _judge['process'] = _judge['channel'] = None
    if channel is not None:
        channel.close()
    if process is not None and process.poll() is None:
        process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5)


atexit.register(_stop_judge)


def _plain(value, depth=0):
    if depth > 8:
        return False
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) in (list, tuple):
        return all(_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    return False


_INSTALLED = tuple(os.path.realpath(p) + os.sep for p in
                   {sysconfig.get_paths()[k] for k in ('stdlib', 'platstdlib', 'purelib',
                                                       'platlib')})
_INSTALLED_FILE = {}     # a module's file -> whether it is installed (realpath is slow)


def _user_modules():
    """Modules of the reader's own (not installed, not the package): sent by value, so the
    worker never imports them."""
    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, '__file__', None)
        if not isinstance(path, str) or name == '__main__' or name.split('.')[0] == 'taotp':
            continue
        if path not in _INSTALLED_FILE:
            _INSTALLED_FILE[path] = os.path.realpath(path).startswith(_INSTALLED)
        if not _INSTALLED_FILE[path]:
            found.append(module)
    return found


def _pickled(answer):
    import cloudpickle
    registered = []
    for module in _user_modules():
        with contextlib.suppress(ValueError, TypeError):
            cloudpickle.register_pickle_by_value(module)
            registered.append(module)
    try:
        return cloudpickle.dumps(answer, protocol=5)
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)


def _with_source_line(message, where):
    """Add the text of the answer's line named in ``message`` when this kernel knows it."""
    if not where or type(where) not in (list, tuple) or len(where) != 2:
        return message
    text = linecache.getline(str(where[0]), int(where[1])).strip()
    return message.replace(f'(line {where[1]} ', f'(`{text[:80]}`, line {where[1]} ', 1) \
        if text else message


# ----------------------------------------------------------------------------- progress

def progress(chapter=None, show_file=False):
    """Print every puzzle (or one chapter's) with its kind and your best verdict.

    ``show_file=True`` (``python -m taotp progress``) ends with the file's path.
    """
    saved = _progress.load()
    rows = [p for p in registry().values() if chapter is None or p.chapter == chapter]
    print(f'{"puzzle":<7} {"kind":<8} {"status":<18} title')
    for p in rows:
        row = saved.get(p.id, {})
        if p.kind not in CHECKER_KINDS:
            status = p.kind
        elif row.get('solved'):
            status = f'solved {row["solved"]}'[:18]
        else:
            status = row.get('latest') or '-'
        title = textwrap.wrap(p.title, PAGE_WIDTH - 36) or ['']   # the page's width
        print(f'{p.id:<7} {p.kind:<8} {status:<18} ' + f'\n{"":36}'.join(title))
    for kind, done_as in (('checked', 'checked puzzles solved'), ('open', 'open records beaten')):
        mine = [p for p in rows if p.kind == kind]
        if mine or kind == 'checked':
            done = sum(bool(saved.get(p.id, {}).get('solved')) for p in mine)
            print(f'{done} of {len(mine)} {done_as}')
    print(f'kept in {progress_file()}' if show_file else
          'kept between sessions: see taotp.exercises.progress_file()')


__all__ = ['check', 'evaluate', 'progress', 'progress_file', 'keep_progress', 'registry',
           'CheckResult', 'Puzzle', 'CHAPTERS']
