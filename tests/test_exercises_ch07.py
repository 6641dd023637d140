"""Chapter 7 checkers: plausible wrong answers fail with a message that names the case.

The contract every checker keeps (the reference passes, garbage is reported,
loops are stopped) is tested once in test_checker_contract.py; the reference
answers come from their one copy, the solutions notebook (``answer``).
"""
import numpy as np
import pytest

import taotp
from solutions import answer
from submissions import raises
from taotp.encodings import og_angles, shift_by_delta
from taotp.exercises import ch07, check, registry


def test_number_answers_for_7_8():
    assert check('7.8', 0.5)
    assert check('7.8', np.float64(0.5))
    result = check('7.8', 0.25)
    assert not result and 'q=256, d=256: expected 0.5000, got 0.2500' in result.message


def test_7_9_accepts_spelled_out_labels():
    assert check('7.9', ['random, sorted angles', 'Sinusoidal (OG)', 'evenly spaced', 'Random'])
    panels = ch07.puzzle_7_9_panels()
    assert len(panels) == 4 and all(p.shape == (64, 128) for p in panels)
    order = answer('7.9')
    np.testing.assert_array_equal(panels[order.index('og')], taotp.og_embedding(64, 128))
    np.testing.assert_array_equal(panels[order.index('uniform')],
                                  taotp.encodings.uniform_rotation_embedding(64, 128))


def test_7_9_panels_do_not_give_the_answer_away():
    assert isinstance(ch07.puzzle_7_9_panels(), list)     # tables only, no labels


# ---------------------------------------------------------------- plausible wrong answers

def _sinusoidal_shift(delta, d):
    return shift_by_delta(delta, og_angles(d), reversed=True)


WRONG = [
    ('7.3', lambda delta, d: _sinusoidal_shift(delta, d).T,
     'delta=1, d=4: og_embedding(200, 4)[0] @ T should be row 1'),
    ('7.3', lambda delta, d: shift_by_delta(delta, og_angles(d)),   # real-first layout
     'return its transpose'),
    ('7.3', lambda delta, d: _sinusoidal_shift(-delta, d), 'delta=1, d=4'),
    ('7.7', lambda k, q, th: 40 * sum(shift_by_delta(-s, th) for s in range(k)),
     'k=3, q=24, 24 random angles: query 2 puts weight'),
    ('7.7', lambda k, q, th: 1e3 * np.eye(2 * len(th)), 'k=3, q=24, 24 random angles'),
    ('7.7', lambda k, q, th: np.full((2 * len(th),) * 2, 1e308), 'k=3, q=24'),   # overflow
    ('7.8', lambda q, d: 1 / (q / (d / 2)) if q > d / 2 else 1.0,
     'q=100, d=64: expected 0.2500, got 0.3200'),
    ('7.8', lambda q, d: 1.0, 'q=256, d=256: expected 0.5000, got 1.0000'),
    ('7.9', ['og', 'random', 'sorted', 'uniform'], '0 of 4 panels right'),
    ('7.9', ['sorted', 'og', 'random', 'uniform'], '2 of 4 panels right'),
    ('7.9', ['og', 'og', 'random', 'uniform'], 'each encoding appears exactly once'),
    ('7.9', ['og', 'sinus', 'cosine', 'random'], "could not read label 'cosine'"),
    ('7.10', taotp.padding_dimension,                                # the axis-aligned count
     '100 x 12, eps=0.001: expected padding dimension 4, got 0'),
    ('7.10', lambda X, eps: int(np.sum(np.linalg.svd(X - X.mean(0))[1] <= 2 * eps)),
     '300 x 14, eps=0.001, one quiet direction spread over +-0.4 eps: expected padding '
     'dimension 5, got 4'),
    ('7.10', lambda X, eps: 4.5, 'expected an integer, got 4.5'),
    ('7.7', raises, 'raised RuntimeError: boom on k=3, q=24, 24 random angles'),
]


@pytest.mark.parametrize('puzzle, answer_, message', WRONG,
                         ids=[f'{w[0]}-{i}' for i, w in enumerate(WRONG)])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, answer_, message):
    result = check(puzzle, answer_)
    assert not result
    assert message in result.message


EXTRA_GARBAGE = {
    '7.3': {'a ragged matrix': lambda *a: [[1, 2], [3]], 'a wrong-size matrix':
            lambda *a: np.zeros((5, 5))},
    '7.7': {'a NaN matrix': lambda *a: np.full((3, 3), np.nan)},
    '7.8': {'a list of numbers': [1, 2, 3, 4], 'a function returning a list':
            lambda *a: [0.5, 0.5]},
    '7.9': {'four strings that are not labels': ['a', 'b', 'c', 'd'], 'an array': np.zeros(4),
            'three labels': ['og', 'random', 'sorted']},
    '7.10': {'a function returning a matrix': lambda *a: np.zeros((2, 2))},
}


# ---------------------------------------------------------------- the test data are what the checkers claim

def test_padding_cases_have_a_wide_gap():
    for X, eps, m, label in ch07._padding_cases():
        _, s, Vt = np.linalg.svd(X - X.mean(axis=0))
        quiet, loud = Vt[::-1][:m], Vt[::-1][m:]
        if m:   # the m quietest directions fit in a ball of radius eps / 2 (Euclidean)
            Y = X @ quiet.T
            assert np.linalg.norm(Y - (Y.max(0) + Y.min(0)) / 2, axis=1).max() < eps / 2, label
        if len(loud):   # a unit u in the other span has range >= max |u.x| >= s_min / sqrt(q)
            assert s[:len(loud)].min() / np.sqrt(len(X)) > 20 * eps, label
        assert answer('7.10')(X, eps) == m


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


def test_registry_rows():
    rows = [p for p in registry().values() if p.chapter == 7]
    assert [p.id for p in rows] == [f'7.{i}' for i in range(1, 12)]
    assert {p.id for p in rows if p.kind == 'checked'} == {'7.3', '7.7', '7.8', '7.9', '7.10'}
    assert [p.id for p in rows if p.kind == 'train'] == ['7.11']
