"""Chapter 7 checkers: references pass, plausible wrong answers fail with a message, garbage is reported."""

import numpy as np
import pytest

import taotp
from taotp.exercises import check, registry
from taotp.exercises import ch07
from submissions import loops, raises


# ---------------------------------------------------------------- reference answers (as in the solutions)

def window_matrix(k, q, thetas, hardness=40.0):
    """Least-squares fit of a score depending only on i - j: 0 on the window, -hardness beyond it."""
    n = len(thetas)
    lag = np.arange(q)[:, None]
    basis = np.concatenate([np.cos(lag * thetas), -np.sin(lag * thetas)], axis=1)
    target = np.where(np.arange(q) < k, 0.0, -1.0)
    coef = np.linalg.lstsq(basis, target, rcond=None)[0]
    W = np.zeros((2 * n, 2 * n))
    ev, od = np.arange(0, 2 * n, 2), np.arange(1, 2 * n, 2)
    W[ev, ev] = W[od, od] = coef[:n]
    W[ev, od], W[od, ev] = coef[n:], -coef[n:]
    return hardness * W


def uniform_distinguishability(q, d):
    n = d // 2
    copies = -(-q // n)
    return 1 / (copies + (q - copies) * np.exp(-n))


def general_padding_dim(encoding, epsilon):
    X = np.asarray(encoding, dtype=float)
    directions = np.linalg.svd(X - X.mean(axis=0))[2][::-1].T   # quietest direction first
    best = 0
    for k in range(1, X.shape[1] + 1):
        Y = X @ directions[:, :k]
        centre = (Y.max(axis=0) + Y.min(axis=0)) / 2
        if np.linalg.norm(Y - centre, axis=1).max() > epsilon:
            break
        best = k
    return best


REFERENCES = {
    '7.3': lambda delta, d: taotp.og_shift_matrix(delta, d),
    '7.7': window_matrix,
    '7.8': uniform_distinguishability,
    '7.9': ['sorted', 'og', 'uniform', 'random'],
    '7.10': general_padding_dim,
}


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
def test_references_pass(puzzle):
    result = check(puzzle, REFERENCES[puzzle])
    assert result, result.message


def test_number_answers_for_7_8():
    assert check('7.8', 0.5)
    assert check('7.8', np.float64(0.5))
    result = check('7.8', 0.25)
    assert not result and 'q=256, d=256: expected 0.5000, got 0.2500' in result.message


def test_7_9_accepts_spelled_out_labels():
    assert check('7.9', ['random, sorted angles', 'Sinusoidal (OG)', 'evenly spaced', 'Random'])
    panels, order = ch07.puzzle_7_9_panels()
    assert order == ['sorted', 'og', 'uniform', 'random']
    np.testing.assert_array_equal(panels[1], taotp.og_embedding(64, 128))
    np.testing.assert_array_equal(panels[2], taotp.uniform_rotation_embedding(64, 128))


# ---------------------------------------------------------------- plausible wrong answers

WRONG = [
    ('7.3', lambda delta, d: taotp.og_shift_matrix(delta, d).T,
     'delta=1, d=4: og_embedding(200, 4)[0] @ T should be row 1'),
    ('7.3', lambda delta, d: taotp.shift_by_delta(delta, taotp.og_angles(d)),   # real-first layout
     'return its transpose'),
    ('7.3', lambda delta, d: taotp.og_shift_matrix(-delta, d), 'delta=1, d=4'),
    ('7.7', lambda k, q, th: 40 * sum(taotp.shift_by_delta(-s, th) for s in range(k)),
     'k=3, q=24, 24 random angles: query 2 puts weight'),
    ('7.7', lambda k, q, th: 1e3 * np.eye(2 * len(th)), 'k=3, q=24, 24 random angles'),
    ('7.8', lambda q, d: 1 / (q / (d / 2)) if q > d / 2 else 1.0,
     'q=100, d=64: expected 0.2500, got 0.3200'),
    ('7.8', lambda q, d: 1.0, 'q=256, d=256: expected 0.5000, got 1.0000'),
    ('7.9', ['og', 'random', 'sorted', 'uniform'], '0 of 4 panels right'),
    ('7.9', ['sorted', 'og', 'random', 'uniform'], '2 of 4 panels right'),
    ('7.9', ['og', 'og', 'random', 'uniform'], 'each encoding appears exactly once'),
    ('7.10', taotp.padding_dimension,                                # the axis-aligned count
     '100 x 12, eps=0.001: expected padding dimension 4, got 0'),
    ('7.10', lambda X, eps: int(np.sum(np.linalg.svd(X - X.mean(0))[1] <= 2 * eps)),
     '300 x 14, eps=0.001, one quiet direction spread over +-0.4 eps: expected padding '
     'dimension 5, got 4'),
]


@pytest.mark.parametrize('puzzle, answer, message', WRONG, ids=[f'{w[0]}-{i}' for i, w in enumerate(WRONG)])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, answer, message):
    result = check(puzzle, answer)
    assert not result
    assert message in result.message


# ---------------------------------------------------------------- garbage

GARBAGE = [None, 'shift', 42, raises, lambda *a, **k: None, lambda *a, **k: 'matrix',
           lambda *a, **k: np.full((3, 3), np.nan), lambda *a, **k: [[1, 2], [3]],
           lambda *a, **k: np.zeros((5, 5)), lambda *a, **k: float('nan'), [1, 2, 3, 4],
           ['a', 'b', 'c', 'd'], np.zeros(4)]


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
@pytest.mark.parametrize('answer', GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_is_reported_not_raised(puzzle, answer):
    result = check(puzzle, answer)
    assert not result and result.message


def test_overflowing_scores_are_reported():
    result = check('7.7', lambda k, q, th: np.full((2 * len(th),) * 2, 1e308))
    assert not result and 'k=3, q=24' in result.message


def test_non_integer_padding_answer():
    result = check('7.10', lambda X, eps: 4.5)
    assert not result and 'expected an integer, got 4.5' in result.message


@pytest.mark.parametrize('puzzle', ['7.3', '7.7', '7.8', '7.10'])
def test_endless_loops_hit_the_time_limit(short_time_limit, puzzle):
    result = check(puzzle, loops)
    assert not result and 'took longer than 0.5 s' in result.message


def test_exception_names_the_input():
    result = check('7.7', raises)
    assert 'raised RuntimeError: boom on k=3, q=24, 24 random angles' in result.message


# ---------------------------------------------------------------- the test data are what the checkers claim

def test_padding_cases_have_a_wide_gap():
    for X, eps, m, label in ch07._padding_cases():
        Xc = X - X.mean(axis=0)
        _, s, Vt = np.linalg.svd(Xc)
        quiet, loud = Vt[::-1][:m], Vt[::-1][m:]
        if m:   # the m quietest directions fit in a ball of radius eps / 2 (Euclidean)
            Y = X @ quiet.T
            assert np.linalg.norm(Y - (Y.max(0) + Y.min(0)) / 2, axis=1).max() < eps / 2, label
        if len(loud):   # a unit u in the other span has range >= max |u.x| >= s_min / sqrt(q)
            assert s[:len(loud)].min() / np.sqrt(len(X)) > 20 * eps, label
        assert general_padding_dim(X, eps) == m


def test_window_reference_margin():
    worst = 0.0
    for k, q, thetas, _ in ch07._window_cases():
        P = ch07.window_attention(window_matrix(k, q, thetas), q, thetas)
        for i in range(k - 1, q):
            worst = max(worst, np.abs(P[i, i - k + 1:i + 1] - 1 / k).max(),
                        P[i, :i - k + 1].max(initial=0))
    assert worst < 1e-4     # the checker allows 1e-3


def test_uniform_closed_form_matches_computation():
    for q, d in [(256, 256), (256, 128), (10, 4), (7, 2), (100, 64), (5, 40)]:
        assert uniform_distinguishability(q, d) == pytest.approx(
            taotp.distinguishability(taotp.uniform_rotation_embedding(q, d)), abs=1e-9)


def test_train_offset_head_prefers_random_angles():
    og = taotp.og_embedding(64, 32)
    rand = taotp.random_rotation_embedding(64, 32, np.random.default_rng(0))
    _, losses_og, weight_og = ch07.train_offset_head(og, 3, steps=150)
    _, losses_rand, weight_rand = ch07.train_offset_head(rand, 3, steps=150)
    assert losses_og[-1] < losses_og[0] and losses_rand[-1] < losses_rand[0]
    assert weight_rand > 0.99 > weight_og > 0.5
    with pytest.raises(ValueError, match=r'train_offset_head: delta must be in 1..63; got 0'):
        ch07.train_offset_head(og, 0)


def test_registry_rows():
    rows = [p for p in registry().values() if p.chapter == 7]
    assert [p.id for p in rows] == [f'7.{i}' for i in range(1, 12)]
    assert {p.id for p in rows if p.kind == 'checked'} == {'7.3', '7.7', '7.8', '7.9', '7.10'}
    assert [p.id for p in rows if p.kind == 'train'] == ['7.11']
