"""Checkers for the book's puzzles.

    from taotp.exercises import check, progress
    check('1.3', my_decode)    # prints one line: PASS 1.3 · ... or NOT YET 1.3 · ...
    progress()                 # your table of puzzles: solved, not yet, reflect

Every checker accepts anything (None, wrong types, NaN, code that raises, exits
or loops) and reports it instead of crashing; it states what it checked and, on
failure, the first input that broke with what was expected and what came out.
Puzzle ids are strings such as ``'6.20'`` (a float cannot tell 6.2 from 6.20).
Options passed to ``check`` beyond the answer weaken what is checked: such a
result says ``PASS (relaxed: ...)`` and never counts as solved.

Verdicts are remembered in a small JSON file, so ``progress()`` survives a kernel
restart: ``$TAOTP_PROGRESS`` if set, else ``taotp/progress.json`` in the user's
data folder (``$XDG_DATA_HOME`` or ``~/.local/share``).
"""
import json
import os
import re
from pathlib import Path

from .registry import CHAPTERS, Puzzle, registry
from .result import CheckResult

_ID = re.compile(r'^[1-9][0-9]?\.[1-9][0-9]?$')
_keep = [True]


def keep_progress(on=True):
    """Save verdicts to the progress file (the default), or not (the solution notebooks)."""
    _keep[0] = bool(on)


def progress_file():
    """Where verdicts are kept (see the module docstring)."""
    if os.environ.get('TAOTP_PROGRESS'):
        return Path(os.environ['TAOTP_PROGRESS'])
    data = Path(os.environ.get('XDG_DATA_HOME') or Path.home() / '.local' / 'share')
    return data / 'taotp' / 'progress.json'


def _load():
    try:
        saved = json.loads(progress_file().read_text())
        return {k: v for k, v in saved.items() if v in ('solved', 'not yet')}
    except (OSError, ValueError, AttributeError):
        return {}


def _save(puzzle_id, verdict):
    saved = _load()
    saved[puzzle_id] = verdict
    path = progress_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(saved, indent=1, sort_keys=True))
    except OSError:        # a read-only home must not break a notebook
        pass


def _bad_id(puzzle_id, table):
    if isinstance(puzzle_id, (int, float)) and not isinstance(puzzle_id, bool):
        return (f'puzzle ids are strings, e.g. check("6.20", answer); got the number '
                f'{puzzle_id!r} (as a number 6.2 and 6.20 are the same)')
    if not isinstance(puzzle_id, str) or not _ID.match(puzzle_id):
        return f"there is no puzzle {puzzle_id!r}; ids look like '1.3' (see progress())"
    if puzzle_id not in table:
        return f"there is no puzzle {puzzle_id!r}; ids look like '1.3' (see progress())"
    return None


def check(puzzle_id, answer, verbose=False, **options):
    """Check ``answer`` for puzzle ``puzzle_id`` (e.g. ``'1.3'``); print and return the verdict.

    ``options`` (a checker's own keywords, e.g. a smaller sample) weaken the check:
    the verdict says so and is not counted as solved.
    """
    table = registry()
    problem = _bad_id(puzzle_id, table)
    if problem:
        result = CheckResult(str(puzzle_id), False, problem)
    elif table[puzzle_id].checker is None:
        kind = table[puzzle_id].kind
        result = CheckResult(puzzle_id, False, f'puzzle {puzzle_id} is a {kind} puzzle with no '
                                               f'checker; its discussion is in '
                                               f'{table[puzzle_id].solution_notebook}')
    else:
        relaxed = ', '.join(f'{k}={v!r}' for k, v in sorted(options.items()))
        result = table[puzzle_id].checker(answer, verbose=verbose, **options)
        result.relaxed = relaxed
        if _keep[0] and (not relaxed or not result.passed):
            _save(puzzle_id, 'solved' if result.passed else 'not yet')
    print(result.line)
    return result


def progress(chapter=None):
    """Print every puzzle (or one chapter's) with its kind and your latest verdict."""
    saved = _load()
    rows = [p for p in registry().values() if chapter is None or p.chapter == chapter]
    print(f'{"puzzle":<7} {"kind":<8} {"status":<8} title')
    for p in rows:
        status = {'solved': 'solved', 'not yet': 'not yet'}.get(saved.get(p.id), '-')
        if p.kind != 'checked':
            status = p.kind
        print(f'{p.id:<7} {p.kind:<8} {status:<8} {p.title}')
    checked = [p for p in rows if p.kind == 'checked']
    done = sum(saved.get(p.id) == 'solved' for p in checked)
    print(f'{done} of {len(checked)} checked puzzles solved '
          f'(kept between sessions: see taotp.exercises.progress_file())')


__all__ = ['check', 'progress', 'progress_file', 'keep_progress', 'registry', 'CheckResult', 'Puzzle',
           'CHAPTERS']
