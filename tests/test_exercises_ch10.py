"""Chapter 10 checkers: references pass, plausible wrong answers fail with a message,
garbage is reported, never raised."""

import numpy as np
import pytest

from taotp import selective as sel
from taotp.exercises import check
from taotp.exercises.ch10 import PUZZLES
from submissions import loops, raises


def grid(T):
    return np.arange(1, T + 1)[:, None], np.arange(1, T + 1)[None, :]


# ----------------------------------------------------------------------------- references

def lag_posterior(P, lags, x):
    kmax, logP = max(lags), np.log(P)
    ell = np.zeros((len(x), len(lags)))
    for t in range(kmax, len(x)):
        ell[t] = ell[t - 1] + [logP[x[t - k], x[t]] for k in lags]
    w = np.exp(ell - ell.max(1, keepdims=True))
    return w / w.sum(1, keepdims=True)


def layer1_matrix(P, lags, T, lam):
    S = len(P)
    A = np.zeros((S + T, S + T))
    A[:S, :S] = np.log(P).T
    i, j = grid(T)
    A[S:, S:] = np.where(np.isin(i - j, lags), lam, -lam)
    return A


def layer2_masks(T=40, kmax=4, K=4):
    i, j = grid(T)
    return [np.where((i >= j) & (j > kmax) & ((i - j) % K == h), 1, -1) for h in range(K)]


def layer3_blocks(lags, T, lam, beta):
    i, j = grid(T)
    K = len(lags)
    return np.where(np.isin(i - j + 1, lags), lam, -lam), beta * ((i - j) % K == K - 1)


DESIGN_357 = {'period': 3, 'classes': [[0], [1], [2]], 'choice_134': 'B'}


def single_head_blocks(lags, T, beta, shift=None):
    kmin, kmax = min(lags), max(lags)
    D = kmax - kmin
    shift = 2 * kmin - 1 if shift is None else shift
    i, j = grid(T)
    mask = np.where((i >= j) & (j > kmax) & ((i - j) % (2 * D) < D), 1, -1)
    B = np.where(j >= i, 0.0, np.where((i - j - shift) % (2 * D) < D, beta, -beta))
    return mask, B


def how_hard(P, T):
    return int(np.floor(np.log(T * P.max() / P.min() * 1e6) / 2)) + 1


def one_head_budget(T, lags, beta_c):
    return (T - max(lags) - 1) // len(lags) + 1, len(lags) * beta_c


REFERENCES = {'10.1': lag_posterior, '10.2': layer1_matrix, '10.3': layer2_masks(),
              '10.4': layer3_blocks, '10.5': DESIGN_357, '10.6': single_head_blocks,
              '10.7': how_hard, '10.8': one_head_budget}


def test_every_puzzle_has_a_reference():
    assert sorted(p.id for p in PUZZLES) == sorted(REFERENCES)


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
def test_references_pass(puzzle):
    result = check(puzzle, REFERENCES[puzzle])
    assert result, result.message


def test_reference_blocks_are_the_packages():
    m = sel.build_selective_induction(sel.transition_matrix(3, np.random.default_rng(0)),
                                      (2, 5), 30, beta=4.0, heads=1)
    np.testing.assert_array_equal(m.layers[2][0][1][2], single_head_blocks((2, 5), 30, 4.0)[1])


# ----------------------------------------------------------------------------- wrong answers

def posterior_from_own_lag(P, lags, x):           # sums from j = k + 1 instead of kmax + 1
    logP = np.log(P)
    ell = np.zeros((len(x), len(lags)))
    for t in range(len(x)):
        for c, k in enumerate(lags):
            ell[t, c] = sum(logP[x[j - k], x[j]] for j in range(k, t + 1))
    w = np.exp(ell - ell.max(1, keepdims=True))
    return w / w.sum(1, keepdims=True)


def posterior_unnormalised(P, lags, x):
    w = lag_posterior(P, lags, x)
    return w * 2.0


def posterior_products(P, lags, x):               # no logs: underflows on long sequences
    kmax = max(lags)
    like = np.ones((len(x), len(lags)))
    for t in range(kmax, len(x)):
        like[t] = like[t - 1] * [P[x[t - k], x[t]] for k in lags]
    return like / like.sum(1, keepdims=True)


def layer1_not_transposed(P, lags, T, lam):
    A = layer1_matrix(P, lags, T, lam)
    A[:len(P), :len(P)] = np.log(P)
    return A


def layer1_band_plus_one(P, lags, T, lam):
    A = layer1_matrix(P, lags, T, lam)
    i, j = grid(T)
    A[len(P):, len(P):] = np.where(np.isin(i - j + 1, lags), lam, -lam)
    return A


def layer1_P_not_log(P, lags, T, lam):
    A = layer1_matrix(P, lags, T, lam)
    A[:len(P), :len(P)] = P.T
    return A


def layer1_soft(P, lags, T, lam):
    return layer1_matrix(P, lags, T, 1.0)


def masks_one_head():
    i, j = grid(40)
    return [np.where((i >= j) & (j > 4), 1, -1)]


def masks_period_3():
    return layer2_masks(K=3)


def masks_skip_a_residue():
    return layer2_masks()[:3]


def blocks_identity(lags, T, lam, beta):
    band, _ = layer3_blocks(lags, T, lam, beta)
    return band, beta * np.eye(T)


def blocks_wrong_shift(lags, T, lam, beta):
    band, _ = layer3_blocks(lags, T, lam, beta)
    i, j = grid(T)
    return band, beta * ((i - j) % len(lags) == 0)


def blocks_unshifted_band(lags, T, lam, beta):
    _, B = layer3_blocks(lags, T, lam, beta)
    i, j = grid(T)
    return np.where(np.isin(i - j, lags), lam, -lam), B


def paper_pair_rule(lags, T, beta):
    return single_head_blocks(lags, T, beta, shift=1)


def paper_zero_mask(lags, T, beta):
    mask, B = single_head_blocks(lags, T, beta)
    return np.where(mask > 0, 1, 0), B


def hard_no_factor_two(P, T):
    return int(np.floor(np.log(T * P.max() / P.min() * 1e6))) + 1


def hard_no_ratio(P, T):
    return int(np.floor(np.log(T * 1e6) / 2)) + 1


def budget_all_tokens(T, lags, beta_c):
    return T - max(lags), len(lags) * beta_c


def budget_paper_float(T, lags, beta_c):
    return (T - max(lags) - 1) / len(lags) + 1, len(lags) * beta_c


def budget_same_beta(T, lags, beta_c):
    return (T - max(lags) - 1) // len(lags) + 1, beta_c


WRONG = [
    ('10.1', posterior_from_own_lag, 'after 2 tokens: expected [0.3333, 0.3333, 0.3333]'),
    ('10.1', posterior_unnormalised, 'lags [1, 2, 3], S = 5, after 1 tokens'),
    ('10.1', posterior_products, 'T = 1000'),
    ('10.2', layer1_not_transposed, 'belongs in slot i - k'),
    ('10.2', layer1_band_plus_one, 'at position i = 4'),
    ('10.2', layer1_P_not_log, 'lags [1, 2, 3], S = 3'),
    ('10.2', layer1_soft, 'should be'),
    ('10.3', masks_one_head(), 'share slot'),
    ('10.3', masks_period_3(), 'share slot'),
    ('10.3', masks_skip_a_residue(), 'no head attends to token(s)'),
    ('10.4', blocks_identity, 'at query 8 the scores of keys'),
    ('10.4', blocks_wrong_shift, 'at query 8'),
    ('10.4', blocks_unshifted_band, 'should be lam +'),
    ('10.5', {'period': 2, 'classes': [[0], [1]], 'choice_134': 'B'}, 'share a slot'),
    ('10.5', {'period': 5, 'classes': [[0], [1], [2], [3], [4]], 'choice_134': 'B'},
     'at most 3 heads'),
    ('10.5', {'period': 3, 'classes': [[0], [1]], 'choice_134': 'B'}, 'split the residues'),
    ('10.5', {'period': 3, 'classes': [[0, 1, 2]], 'choice_134': 'B'}, 'share a slot'),
    ('10.5', {'period': 3, 'classes': [[0], [1], [2]], 'choice_134': 'A'}, "got 'A'"),
    ('10.6', paper_pair_rule, 'lags [2, 5]'),
    ('10.6', paper_zero_mask, 'only +1 and -1'),
    ('10.7', hard_no_factor_two, 'S = 3, T = 10'),
    ('10.7', hard_no_ratio, 'expected lam ='),
    ('10.8', budget_all_tokens, 'one head averages 42 transitions, got 125'),
    ('10.8', budget_paper_float, 'must be an integer'),
    ('10.8', budget_same_beta, 'Prop. 1 needs beta = 300'),
]


@pytest.mark.parametrize('puzzle, answer, message', WRONG,
                         ids=[f'{p}-{i}' for i, (p, _, _) in enumerate(WRONG)])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, answer, message):
    result = check(puzzle, answer)
    assert not result
    assert message in result.message, result.message


def test_paper_pair_rule_names_the_query_and_the_wrong_lag():
    result = check('10.6', paper_pair_rule)
    assert 'at query' in result.message and 'prefers lag' in result.message, result.message


# ----------------------------------------------------------------------------- garbage

GARBAGE = [None, 'answer', 42, raises, lambda *a, **k: None, lambda *a, **k: 'x',
           lambda *a, **k: np.full((3, 3), np.nan), lambda *a, **k: [[1, 2], [3]],
           {'period': 'three'}, [np.full((40, 40), np.nan)], [[1, -1]]]


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
@pytest.mark.parametrize('answer', GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_is_reported_not_raised(puzzle, answer):
    result = check(puzzle, answer)
    assert not result and result.message


@pytest.mark.parametrize('puzzle', ['10.1', '10.2', '10.4', '10.6', '10.7', '10.8'])
def test_endless_loops_hit_the_time_limit(short_time_limit, puzzle):
    result = check(puzzle, loops)
    assert not result and 'took longer than 0.5 s' in result.message
