"""Chapter 7 checkers: what each one calls solved, and the answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 7.1, 7.2, 7.4, 7.5, 7.6 | no checker (reflection or proof; worked answers in the solutions notebook) | - |
| 7.3 | `shift_matrix(delta, d)` maps every valid row j of `og_embedding(q, d)` to row j + delta to 1e-9, for 50 (delta, d): d = 2 and non-powers of two, delta from -500 to 999, tables of up to 1000 rows | T fitted by least squares on a 200-row table, right only for the old d grid, right only for abs(delta) <= 150 (all three passed before); the sign bug / transpose / (cos, sin) order: told it shifts by -delta, not "return its transpose" (wrong advice before); the identity |
| 7.7 | `window_matrix(k, q, thetas)`: every query i >= k - 1 puts 1/k (to 1e-3) on keys i-k+1..i and < 1e-3 elsewhere; 14 cases, k = 1 to k = q, random, sorted, evenly spaced and sinusoidal angles | summed shift matrices; a scaled identity; overflowing scores; a soft hardening factor; right only for k <= 7 (passed before) |
| 7.8 | the distinguishability of `uniform_rotation_embedding(q, d)` (Def. 7.6) to 1e-3: the number 0.5 at q = d = 256, or a function of (q, d) checked at 25 sizes, d = 2 to 256, q = 1 to 10^12 | 1 / ceil(q / n), which ignores the far positions (passed before); the package's measure on the table (passed before; no table of 10^12 rows fits); a lookup of the old 7 sizes (passed before); 1 / (q / (d/2)); the constant 1; a returned value whose `__array__` never returns (stopped by the total budget) |
| 7.9 | four labels for panels A-D naming each encoding once, in the right order; free text is read as exactly one kind or refused | "unsorted random" read as sorted (a right answer refused before); "uniform random" (ambiguous, refused with a message); wrong orders; a duplicate; labels whose `__str__` or list whose `__len__` never returns (budget). Not preventable: guessing among the 24 orders |
| 7.10 | `padding_dim(X, eps)` returns the general padding dimension on 17 encodings with a wide gap around eps: quiet subspaces hidden by rotations, equal shapes with different answers, a direction quiet but for one row, and the same encodings shuffled, rotated, moved and rescaled | a lookup keyed by the shape (passed before); an RMS threshold on the singular values (passed before); the axis-aligned count; a singular-value threshold at 2 eps; 4.5; True |
| 7.11 | two PostLN models differing only in a fixed position table (sinusoidal vs random rotation); the verdict must match their held-out accuracy beyond the training length; checker in taotp.exercises.training, tested in test_training_puzzles.py | see test_training_puzzles.py |

The contract every checker keeps (the reference passes, garbage is reported,
loops are stopped) is tested once in test_checker_contract.py; the reference
answers come from their one copy, the solutions notebook (``answer``).
"""
import inspect
import time

import numpy as np
import pytest

import taotp
from solutions import answer
from submissions import raises
from taotp.encodings import (distinguishability, og_angles, og_embedding, shift_by_delta,
                             uniform_rotation_embedding)
from taotp.exercises import ch07, check, registry
from taotp.exercises.registry import checker


def budgeted(puzzle, seconds=0.3):
    """The puzzle's checker body under a short total budget (the real one is 30 s)."""
    return checker(puzzle, budget=seconds)(registry()[puzzle].checker.__wrapped__)


def forever(*args):
    while True:
        time.sleep(0.01)


class NeverArray:
    """A value whose conversion to an array never returns."""

    def __array__(self, *args, **kwargs):
        forever()


class NeverStr(str):
    def __str__(self):
        forever()

    def lower(self):
        forever()


class NeverLen(list):
    def __len__(self):
        forever()

    def __iter__(self):
        forever()


# ---------------------------------------------------------------- right answers in other forms

def test_number_answers_for_7_8():
    assert check('7.8', 0.5)
    assert check('7.8', np.float64(0.5))
    result = check('7.8', 0.25)
    assert not result and 'q=256, d=256: expected 0.5000, got 0.2500' in result.message


def test_7_9_accepts_spelled_out_labels():
    assert check('7.9', ['random, sorted angles', 'Sinusoidal (OG)', 'evenly spaced', 'Random'])
    assert check('7.9', ['sorted random', 'og', 'uniform', 'unsorted random'])
    assert check('7.9', np.array(['sorted', 'sine', 'linspace', 'random (not sorted)']))
    panels = ch07.puzzle_7_9_panels()
    assert len(panels) == 4 and all(p.shape == (64, 128) for p in panels)
    order = answer('7.9')
    np.testing.assert_array_equal(panels[order.index('og')], taotp.og_embedding(64, 128))
    np.testing.assert_array_equal(panels[order.index('uniform')],
                                  taotp.encodings.uniform_rotation_embedding(64, 128))


@pytest.mark.parametrize('text, kind', [
    ('unsorted random', 'random'), ('not sorted', 'random'), ('non-sorted angles', 'random'),
    ('sorted random', 'sorted'), ('OG (sinusoidal)', 'og'), ('equally spaced', 'uniform'),
    ('uniform random', None), ('sorted uniform', None), ('og random', None), ('cosine', None)])
def test_7_9_reads_each_label_as_one_kind_or_none(text, kind):
    assert ch07._label(text) == kind


def test_7_9_panels_do_not_give_the_answer_away():
    assert isinstance(ch07.puzzle_7_9_panels(), list)     # tables only, no labels


# ---------------------------------------------------------------- wrong answers and cheats

def _sinusoidal_shift(delta, d):
    return shift_by_delta(delta, og_angles(d), reversed=True)


def _fitted_on_200_rows(delta, d):
    """Least squares on a 200-row table: exact there, wrong on longer tables."""
    q = 200 + abs(delta)
    E = og_embedding(q, d)
    rows = np.arange(max(0, -delta), min(q, q - delta))
    return np.linalg.lstsq(E[rows], E[rows + delta], rcond=None)[0]


def _soft_window(k, q, thetas):
    return answer('7.7')(k, q, thetas) / 8        # hardening 5 instead of 40: leaks


def _old_sizes_lookup():
    table = {(q, d): distinguishability(uniform_rotation_embedding(q, d))
             for q, d in ((256, 256), (256, 128), (100, 64), (64, 128), (300, 48), (90, 32),
                          (33, 64))}
    return lambda q, d: table.get((q, d), 0.5)


def _shape_lookup():
    table = {}
    for X, _, m, _ in ch07._padding_cases():
        table.setdefault(X.shape, m)
    return lambda X, eps: table[np.shape(X)]


WRONG = [
    ('7.3', _fitted_on_200_rows, 'delta=64, d=128: og_embedding(1000, 128)'),
    ('7.3', lambda delta, d: _sinusoidal_shift(delta, d) if d in (4, 16, 64, 128)
     else np.eye(d), 'delta=1, d=2'),
    ('7.3', lambda delta, d: _sinusoidal_shift(delta, d) if abs(delta) <= 150 else np.eye(d),
     'delta=-300, d=10'),
    ('7.3', lambda delta, d: _sinusoidal_shift(delta, d).T,
     'delta=1, d=4: og_embedding(200, 4)[11] @ T should be row 12, but is off by 1.68e+00; '
     'it lands on row 10 instead: your matrix shifts by -delta'),
    ('7.3', lambda delta, d: shift_by_delta(delta, og_angles(d)),   # (cos, sin) order
     'your matrix shifts by -delta'),
    ('7.3', lambda delta, d: _sinusoidal_shift(-delta, d), 'your matrix shifts by -delta'),
    ('7.3', lambda delta, d: np.eye(d), 'delta=1, d=4'),
    ('7.7', lambda k, q, th: 40 * sum(shift_by_delta(-s, th) for s in range(k)),
     'k=3, q=24, 24 random angles: query 2 puts weight'),
    ('7.7', lambda k, q, th: 1e3 * np.eye(2 * len(th)), 'k=3, q=24, 24 random angles'),
    ('7.7', lambda k, q, th: np.full((2 * len(th),) * 2, 1e308), 'k=3, q=24'),   # overflow
    ('7.7', _soft_window, 'outside its window'),
    ('7.7', lambda k, q, th: answer('7.7')(k, q, th) if k <= 7 else np.zeros((2 * len(th),) * 2),
     'k=16, q=32, 32 random angles, k = q/2: query 16 puts weight'),
    ('7.7', raises, 'raised RuntimeError: boom on k=3, q=24, 24 random angles'),
    ('7.8', lambda q, d: 1 / -(-q // (d // 2)), 'q=10, d=4: expected 0.1762, got 0.2000'),
    ('7.8', lambda q, d: distinguishability(uniform_rotation_embedding(q, d)),
     'your formula raised MemoryError'),
    ('7.8', _old_sizes_lookup(), 'q=10, d=4: expected 0.1762, got 0.5000'),
    ('7.8', lambda q, d: 1 / (q / (d / 2)) if q > d / 2 else 1.0,
     'q=100, d=64: expected 0.2500, got 0.3200'),
    ('7.8', lambda q, d: 1.0, 'q=256, d=256: expected 0.5000, got 1.0000'),
    ('7.9', ['og', 'random', 'sorted', 'uniform'], '0 of 4 panels right'),
    ('7.9', ['sorted', 'og', 'random', 'uniform'], '2 of 4 panels right'),
    ('7.9', ['og', 'og', 'random', 'uniform'], 'each encoding appears exactly once'),
    ('7.9', ['og', 'sinus', 'cosine', 'random'], "could not read label 'cosine'"),
    ('7.9', ['sorted', 'og', 'uniform', 'uniform random'],
     "could not read label 'uniform random' as exactly one of"),
    ('7.10', taotp.padding_dimension,                                # the axis-aligned count
     'encoding 1 (100 x 12, eps=0.001): expected padding dimension 4, got 0'),
    ('7.10', lambda X, eps: int(np.sum(np.linalg.svd(X - X.mean(0))[1] <= 2 * eps)),
     'one quiet direction spread over +-0.4 eps): expected padding dimension 5, got 4'),
    ('7.10', lambda X, eps: int(np.sum(np.linalg.svd(X - X.mean(0))[1] / np.sqrt(len(X))
                                       <= eps)),
     'quiet but for a single row): expected padding dimension 3, got 4'),
    ('7.10', _shape_lookup(), 'encoding 7 (100 x 12, eps=0.001): expected padding dimension 7, '
                              'got 4'),
    ('7.10', lambda X, eps: 4.5, 'expected an integer, got 4.5'),
    ('7.10', lambda X, eps: True, 'expected an integer, got True'),
]


@pytest.mark.parametrize('puzzle, answer_, message', WRONG,
                         ids=[f'{w[0]}-{i}' for i, w in enumerate(WRONG)])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, answer_, message):
    result = check(puzzle, answer_)
    assert not result
    assert message in result.message, result.message


def test_7_3_never_tells_a_sign_bug_to_transpose():
    result = check('7.3', lambda delta, d: _sinusoidal_shift(-delta, d))
    assert 'transpose' not in result.message and 'column vectors' not in result.message


@pytest.mark.parametrize('puzzle, value', [
    ('7.8', NeverArray()), ('7.8', lambda q, d: NeverArray()),
    ('7.9', [NeverStr('og'), 'random', 'sorted', 'uniform']), ('7.9', NeverLen(['og'] * 4)),
    ('7.3', lambda delta, d: NeverArray()), ('7.10', lambda X, eps: NeverArray())])
def test_results_that_never_finish_are_stopped_by_the_total_budget(puzzle, value):
    start = time.perf_counter()
    result = budgeted(puzzle)(value)
    assert not result and 'did not finish within its 0.3 s budget' in result.message
    assert time.perf_counter() - start < 3


EXTRA_GARBAGE = {
    '7.3': {'a ragged matrix': lambda *a: [[1, 2], [3]], 'a wrong-size matrix':
            lambda *a: np.zeros((5, 5)), 'a complex matrix': lambda delta, d: np.eye(d) * 1j},
    '7.7': {'a NaN matrix': lambda *a: np.full((3, 3), np.nan)},
    '7.8': {'a list of numbers': [1, 2, 3, 4], 'a function returning a list':
            lambda *a: [0.5, 0.5], 'a bool': True},
    '7.9': {'four strings that are not labels': ['a', 'b', 'c', 'd'], 'an array': np.zeros(4),
            'three labels': ['og', 'random', 'sorted'], 'a dict of labels':
            {'A': 'sorted', 'B': 'og', 'C': 'uniform', 'D': 'random'},
            'numbers for labels': [1, 2, 3, 4], 'a generator': (x for x in 'abcd')},
    '7.10': {'a function returning a matrix': lambda *a: np.zeros((2, 2))},
}


# ---------------------------------------------------------------- the test data are as claimed

def test_padding_cases_have_a_wide_gap():
    for X, eps, m, label in ch07._padding_cases():
        _, s, Vt = np.linalg.svd(X - X.mean(axis=0))
        quiet, loud = Vt[::-1][:m], Vt[::-1][m:]
        if m:   # the m quietest directions fit in a ball of radius eps / 2 (Euclidean)
            Y = X @ quiet.T
            assert np.linalg.norm(Y - (Y.max(0) + Y.min(0)) / 2, axis=1).max() < eps / 2, label
        if 'single row' in label:   # the next direction: tiny RMS, but one row 25 eps out
            y = X @ Vt[::-1][m]
            assert np.ptp(y) > 20 * eps and np.std(y) < eps, label
            loud = loud[1:]
        if len(loud):   # a unit u in the other span has range >= max |u.x| >= s_min / sqrt(q)
            assert s[:len(loud)].min() / np.sqrt(len(X)) > 20 * eps, label
        assert answer('7.10')(X, eps) == m


def test_padding_cases_repeat_shapes_with_different_answers():
    by_shape = {}
    for X, _, m, _ in ch07._padding_cases():
        by_shape.setdefault(X.shape, set()).add(m)
    assert max(len(answers) for answers in by_shape.values()) >= 3


def test_window_reference_margin():
    window_matrix = answer('7.7')
    worst = 0.0
    for k, q, thetas, _ in ch07._window_cases():
        P = taotp.encodings.window_attention(window_matrix(k, q, thetas), q, thetas)
        for i in range(k - 1, q):
            worst = max(worst, np.abs(P[i, i - k + 1:i + 1] - 1 / k).max(),
                        P[i, :i - k + 1].max(initial=0))
    assert worst < 1e-4     # the checker allows 1e-3


def test_uniform_closed_form_matches_computation():
    formula = answer('7.8')
    for q, d in [(256, 256), (256, 128), (10, 4), (7, 2), (100, 64), (5, 40)]:
        assert formula(q, d) == pytest.approx(
            taotp.distinguishability(taotp.encodings.uniform_rotation_embedding(q, d)), abs=1e-9)


@pytest.mark.parametrize('q, d', [(256, 256), (10, 4), (7, 2), (1, 2), (300, 48), (129, 8),
                                  (5, 40), (64, 6), (1000, 10)])
def test_folded_distinguishability_is_the_definition(q, d):
    assert ch07._folded_distinguishability(q, d) == pytest.approx(
        distinguishability(uniform_rotation_embedding(q, d)), abs=1e-9)


def test_7_8_sizes_reach_past_any_table():
    sizes = ch07._sizes_7_8()
    assert max(q for q, _ in sizes) >= 10 ** 12 and min(d for _, d in sizes) == 2


def test_registry_rows():
    rows = [p for p in registry().values() if p.chapter == 7]
    assert [p.id for p in rows] == [f'7.{i}' for i in range(1, 12)]
    checked = {p.id for p in rows if p.kind == 'checked'}
    assert checked - {'7.11'} == {'7.3', '7.7', '7.8', '7.9', '7.10'}   # 7.11: another issue


CHECKED_HERE = ['7.3', '7.7', '7.8', '7.9', '7.10']

@pytest.mark.parametrize('puzzle', CHECKED_HERE)
def test_no_checker_takes_options_that_change_the_puzzle(puzzle):
    body = registry()[puzzle].checker.__wrapped__
    assert len(inspect.signature(body).parameters) == 1
    assert registry()[puzzle].checker.budget == 30
