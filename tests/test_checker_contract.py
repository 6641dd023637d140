"""The contract every checker keeps, tested once over the whole registry.

* garbage is reported as NOT YET with a message, never raised: a handful of inputs that
  differ in kind, chosen by the kind of answer the puzzle expects (a function, or data),
  plus each chapter's ``EXTRA_GARBAGE`` (``tests/test_exercises_chNN.py``);
* a submitted function that never returns is stopped by its time limit;
* every checked puzzle's reference lives in its solution notebook, in the cell that calls
  ``check`` and asserts the result (nbval runs those cells: each reference runs once per
  test run, there and nowhere else); an open record's cell submits the record, and nbval
  compares the tie its stored output shows;
* unknown puzzle ids are answered, not raised.
"""
import importlib
import re
import time
from pathlib import Path

import jupytext
import numpy as np
import pytest

from checking import forever, raises, verdict
from taotp.exercises import CHAPTERS, check, registry

ROOT = Path(__file__).resolve().parent.parent
CHECKED = sorted((p.id for p in registry().values() if p.kind in ('checked', 'open')),
                 key=lambda i: tuple(map(int, i.split('.'))))
OPEN = [p for p in CHECKED if registry()[p].kind == 'open']     # open records: none passes
CHECK_CELL = re.compile(r"""check\(\s*['"](\d+\.\d+)['"]""")


def _solution_cells():
    """Puzzle id -> the source of the solution cell that checks it."""
    cells = {}
    for chapter, name in CHAPTERS.items():
        path = ROOT / 'solutions' / f'{name}.py'
        if not path.exists():
            continue
        for cell in jupytext.read(path).cells:
            for pid in CHECK_CELL.findall(cell.source) if cell.cell_type == 'code' else ():
                cells[pid] = cell.source
    return cells


SOLUTION_CELLS = _solution_cells()
FUNCTION_PUZZLES = {pid for pid, source in SOLUTION_CELLS.items()
                    if re.search(r'^def \w+\(', source, re.M)
                    and re.search(rf"check\(\s*['\"]{re.escape(pid)}['\"],\s*\w+\)", source)}

GARBAGE_FOR_FUNCTIONS = {
    'None': None, 'a number': 42, 'a function that raises': raises,
    'a function returning None': lambda *a, **k: None,
    'a function returning NaN': lambda *a, **k: np.full(3, np.nan),
}
GARBAGE_FOR_DATA = {
    'None': None, 'text': 'text', 'a function': lambda *a, **k: None,
    'a half-built params dict': {'tok_emb': np.zeros(3)}, 'a NaN array': np.array([np.nan, 1.0]),
}
MISSING_TEST_MODULES = [f'test_exercises_ch{c:02d}' for c in CHAPTERS
                        if any(p.chapter == c for p in registry().values() if p.kind == 'checked')
                        and not (ROOT / 'tests' / f'test_exercises_ch{c:02d}.py').exists()]


def _extra_garbage():
    extra = {}
    for chapter in CHAPTERS:
        name = f'test_exercises_ch{chapter:02d}'
        if not (ROOT / 'tests' / f'{name}.py').exists():
            continue
        for puzzle, items in getattr(importlib.import_module(name), 'EXTRA_GARBAGE', {}).items():
            extra.setdefault(puzzle, {}).update(items)
    return extra


EXTRA = _extra_garbage()
GARBAGE_CASES = [(puzzle, label, value) for puzzle in CHECKED
                 for label, value in {**(GARBAGE_FOR_FUNCTIONS if puzzle in FUNCTION_PUZZLES
                                         else GARBAGE_FOR_DATA),
                                      **EXTRA.get(puzzle, {})}.items()]


def test_every_chapter_with_puzzles_has_its_test_module():
    assert not MISSING_TEST_MODULES, f'missing: {MISSING_TEST_MODULES}'


def test_every_checked_puzzle_has_a_reference_cell_that_asserts_it():
    for puzzle in CHECKED:
        assert puzzle in SOLUTION_CELLS, f'no solution cell checks {puzzle}'
        asserts = re.search(r'^assert result\b', SOLUTION_CELLS[puzzle], re.M)
        if puzzle in OPEN:      # the record itself, whose tie the stored output shows
            assert not asserts, f'{puzzle} is open: its solution cell cannot assert a PASS'
        else:
            assert asserts, f'the solution cell of {puzzle} does not assert its result'


@pytest.mark.parametrize('puzzle, label, value', GARBAGE_CASES,
                         ids=[f'{p}-{label}' for p, label, _ in GARBAGE_CASES])
def test_garbage_is_reported_not_raised(puzzle, label, value):
    result = verdict(puzzle, value, call_seconds=1)
    assert not result, f'{label} passed {puzzle}'
    assert result.line.startswith(f'NOT YET {puzzle} · ') and len(result.message) > 10


@pytest.mark.parametrize('puzzle', sorted(FUNCTION_PUZZLES))
def test_endless_loops_are_stopped(puzzle):
    start = time.perf_counter()
    result = verdict(puzzle, forever, call_seconds=0.3)
    assert not result
    assert time.perf_counter() - start < 5, f'{puzzle} took too long to give up'


@pytest.mark.parametrize('puzzle_id', ['99.1', '1.99', 'one point three', '', None])
def test_unknown_ids_are_answered(puzzle_id, capsys):
    result = check(puzzle_id, None)
    assert not result and 'no puzzle' in result.message
    assert capsys.readouterr().out.startswith('NOT YET')
