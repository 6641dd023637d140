"""The contract every checker keeps, tested once over the whole registry.

* the reference solution (read from its one copy, the solution notebook) passes;
* garbage (the shared list below plus each chapter's ``EXTRA_GARBAGE``) is
  reported as NOT YET with a message, never raised;
* a submission that never returns is stopped by the time limit;
* unknown puzzle ids are answered, not raised.

Each ``tests/test_exercises_chNN.py`` keeps only what is particular to its
chapter: plausible wrong answers and the messages that name their inputs.
"""
import importlib
import time

import numpy as np
import pytest

from solutions import answer
from submissions import loops, raises
from taotp.exercises import CHAPTERS, check, registry

CHECKED = sorted((p.id for p in registry().values() if p.kind == 'checked'),
                 key=lambda i: tuple(map(int, i.split('.'))))

SHARED_GARBAGE = {
    'None': None, 'a string': 'text', 'an int': 42, 'a float': 3.5, 'an empty list': [],
    'an empty dict': {}, 'a pair of None': (None, None), 'an object': object(),
    'a NaN array': np.array([np.nan, 1.0]), 'a function that raises': raises,
    'a function returning None': lambda *a, **k: None,
    'a function returning text': lambda *a, **k: 'x',
    'a function returning NaN': lambda *a, **k: np.full(3, np.nan),
    'a half-built params dict': {'tok_emb': np.zeros(3)},
}


IMPORT_ERRORS = {}


def _extra_garbage():
    """Each chapter's own garbage: ``EXTRA_GARBAGE = {'N.M': {label: value}}`` in its test file."""
    extra = {}
    for chapter in CHAPTERS:
        name = f'test_exercises_ch{chapter:02d}'
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        except Exception as exc:       # one broken chapter must not hide the others' tests
            IMPORT_ERRORS[name] = f'{type(exc).__name__}: {exc}'
            continue
        for puzzle, items in getattr(module, 'EXTRA_GARBAGE', {}).items():
            extra.setdefault(puzzle, {}).update(items)
    return extra


GARBAGE_CASES = [(puzzle, label, value) for puzzle in CHECKED
                 for label, value in {**SHARED_GARBAGE, **_extra_garbage().get(puzzle, {})}.items()]


def test_every_chapters_extra_garbage_was_read():
    assert not IMPORT_ERRORS, IMPORT_ERRORS


@pytest.mark.parametrize('puzzle', CHECKED)
def test_reference_solution_passes(puzzle, capsys):
    result = check(puzzle, answer(puzzle))
    assert result, result.message
    assert capsys.readouterr().out.startswith(f'PASS {puzzle} · ')


@pytest.mark.parametrize('puzzle, label, value', GARBAGE_CASES,
                         ids=[f'{p}-{label}' for p, label, _ in GARBAGE_CASES])
def test_garbage_is_reported_not_raised(puzzle, label, value, short_time_limit):
    result = registry()[puzzle].checker(value)
    assert not result, f'{label} passed {puzzle}'
    assert result.line.startswith(f'NOT YET {puzzle} · ') and len(result.message) > 10


@pytest.mark.parametrize('puzzle', CHECKED)
def test_endless_loops_are_stopped(puzzle, short_time_limit):
    start = time.perf_counter()
    result = registry()[puzzle].checker(loops)
    assert not result
    assert time.perf_counter() - start < 5, f'{puzzle} took too long to give up'


@pytest.mark.parametrize('puzzle_id', ['99.1', '1.99', 'one point three', '', None])
def test_unknown_ids_are_answered(puzzle_id, capsys):
    result = check(puzzle_id, None)
    assert not result and 'no puzzle' in result.message
    assert capsys.readouterr().out.startswith('NOT YET')
