"""Checkers for the book's puzzles.

    from taotp.exercises import check
    check('1.3', my_decode)          # prints one line: PASS 1.3 · ... or NOT YET 1.3 · ...

Every checker accepts anything (None, wrong types, NaN, code that raises or
loops) and reports it instead of crashing; it states what it checked and, on
failure, the first input that broke with what was expected and what came out.
``progress()`` prints a table of every puzzle and your latest verdicts.
"""
from .registry import CHAPTERS, Puzzle, registry
from .result import CheckResult

_latest = {}


def check(puzzle_id, answer, verbose=False, **kwargs):
    """Check ``answer`` for puzzle ``puzzle_id`` (e.g. ``'1.3'``); print and return the verdict."""
    puzzle_id = str(puzzle_id)
    table = registry()
    if puzzle_id not in table:
        result = CheckResult(puzzle_id, False, f'there is no puzzle {puzzle_id!r}; ids look like '
                                               f"'1.3' (see taotp.exercises.progress())")
    elif table[puzzle_id].checker is None:
        kind = table[puzzle_id].kind
        result = CheckResult(puzzle_id, False, f'puzzle {puzzle_id} is a {kind} puzzle with no '
                                               f'checker; its discussion is in '
                                               f'{table[puzzle_id].solution_notebook}')
    else:
        result = table[puzzle_id].checker(answer, verbose=verbose, **kwargs)
        _latest[puzzle_id] = result.passed
    print(result.line)
    return result


def progress(chapter=None):
    """Print every puzzle (or one chapter's) with its kind and your latest verdict."""
    rows = [p for p in registry().values() if chapter is None or p.chapter == chapter]
    print(f'{"puzzle":<7} {"kind":<8} {"status":<8} title')
    for p in rows:
        status = {True: 'PASS', False: 'NOT YET', None: '-'}[_latest.get(p.id)]
        if p.kind != 'checked':
            status = ''
        print(f'{p.id:<7} {p.kind:<8} {status:<8} {p.title}')
    checked = [p for p in rows if p.kind == 'checked']
    done = sum(bool(_latest.get(p.id)) for p in checked)
    print(f'{done} of {len(checked)} checked puzzles passed in this session')


__all__ = ['check', 'progress', 'registry', 'CheckResult', 'Puzzle', 'CHAPTERS']
