"""Chapter 10 checkers: what each one calls solved, and the answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 10.1 | `lag_posterior(P, lags, x)` equals the Bayesian posterior to 1e-9 after every prefix of 27 seeded sequences: 9 lag sets (one lag, kmin > 1, T = kmax + 1), T up to 1000, S from 2 to 6 | sums starting at each lag's own k; unnormalised; products instead of logs (underflow at T = 1000); one term short |
| 10.2 | `layer1_matrix(P, lags, T, lam)`: layer 1 stores ptil[i, k] in slot i - k for every i > kmax (1e-8) on 24 sequences over 6 lag sets | log P not transposed; the band shifted by one; P instead of log P; a soft lam |
| 10.3 | at most 4 sign masks (the budget): at every query 8..40 each token after the warm-up is averaged by exactly one head, uniformly, with no slot shared in a head | one head for all; period 3; a residue left out; five masks; non-sign values |
| 10.4 | `layer3_blocks(lags, T, lam, beta)`: layer-3 scores at the candidates equal lam + beta sum_h mean ptil and the outputs equal the reference, on 15 sequences over 5 lag sets | the identity block; the wrong shift; the unshifted band |
| 10.5 | a period and residue classes for {3, 5, 7} with at most 3 heads (the budget) that split every residue and pass the rule, the network equal to the analytic predictor, and the reason {1, 3, 4} fails with period 3 | a colliding period; 5 heads; residues left out; one class; the wrong reason; "b" in lower case (a right answer refused before) |
| 10.6 | `single_head_blocks(lags, T, beta)` for one head (the budget): candidate scores to 1e-9 and outputs equal the reference, on 21 sequences over 7 lag pairs (D = 1 to 5) | the paper's (a - b - 1) rule; the paper's 0 instead of -lam |
| 10.7 | `how_hard(P, T)`: the smallest integer lam of the definition on 12 (P, T) pairs, T from 2 to 100000, the same T with different P | a lookup keyed by T (passed before); no factor 2; no pmax/pmin; 4.5; a value whose `__array__` (budget) or `__ne__` (refused unread) never returns |
| 10.8 | `one_head_budget(T, lags, beta_c)`: the count and Prop. 1's beta on 20 cases: T at every residue modulo K, K from 1 to 6, kmin > 1 | a lookup keyed by T (passed before); every token counted; the paper's fraction; beta_c unscaled |

No checker takes keyword options any more: lam, beta, T and lags were
options that changed the puzzle (a test below keeps it that way).  The
contract every checker keeps (the reference solution passes, shared garbage
and ``EXTRA_GARBAGE`` below are reported, endless loops are stopped) is tested
once for all chapters in tests/test_checker_contract.py; the references are
read from solutions/10_selective_induction.py.
"""
import inspect
import time

import numpy as np
import pytest

from solutions import answer
from taotp import selective as sel
from taotp.exercises import ch10, check, registry
from taotp.exercises.ch10 import PUZZLES
from taotp.exercises.registry import checker


def grid(T):
    """1-based (query i, key j) index grids."""
    return np.arange(1, T + 1)[:, None], np.arange(1, T + 1)[None, :]


EXTRA_GARBAGE = {
    '10.1': {'a function returning a NaN matrix': lambda *a, **k: np.full((3, 3), np.nan),
             'a function returning a ragged list': lambda *a, **k: [[1, 2], [3]]},
    '10.2': {'a function returning a NaN matrix': lambda *a, **k: np.full((15, 15), np.nan)},
    '10.3': {'a list with a NaN mask': [np.full((40, 40), np.nan)],
             'a list with a tiny mask': [[1, -1]], 'five masks': [np.ones((40, 40))] * 5},
    '10.4': {'a function returning a triple': lambda *a, **k: (1, 2, 3),
             'a function returning ragged blocks': lambda *a, **k: ([[1, 2], [3]], None)},
    '10.5': {'a text period': {'period': 'three'},
             'classes that are not lists': {'period': 3, 'classes': 7, 'choice_134': 'B'}},
    '10.6': {'a function returning a triple': lambda *a, **k: (1, 2, 3)},
    '10.7': {'a function returning text': lambda *a, **k: 'ten'},
    '10.8': {'a function returning one number': lambda *a, **k: 42},
}


def test_puzzle_list():
    assert [p.id for p in PUZZLES] == [f'10.{i}' for i in range(1, 9)]
    assert {p.kind for p in PUZZLES} == {'checked'}


def test_the_single_head_reference_is_the_packages_block():
    model = sel.build_selective_induction(sel.transition_matrix(3, np.random.default_rng(0)),
                                          (2, 5), 30, beta=4.0, heads=1)
    np.testing.assert_array_equal(model.layers[2][0][1][2],
                                  answer('10.6')((2, 5), 30, 4.0)[1])


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
    return 2.0 * answer('10.1')(P, lags, x)


def posterior_products(P, lags, x):               # no logs: underflows on long sequences
    like = np.ones((len(x), len(lags)))
    for t in range(max(lags), len(x)):
        like[t] = like[t - 1] * [P[x[t - k], x[t]] for k in lags]
    return like / like.sum(1, keepdims=True)


def layer1_not_transposed(P, lags, T, lam):
    A = answer('10.2')(P, lags, T, lam)
    A[:len(P), :len(P)] = np.log(P)
    return A


def layer1_band_plus_one(P, lags, T, lam):
    A = answer('10.2')(P, lags, T, lam)
    i, j = grid(T)
    A[len(P):, len(P):] = np.where(np.isin(i - j + 1, lags), lam, -lam)
    return A


def layer1_P_not_log(P, lags, T, lam):
    A = answer('10.2')(P, lags, T, lam)
    A[:len(P), :len(P)] = P.T
    return A


def layer1_soft(P, lags, T, lam):
    return answer('10.2')(P, lags, T, 1.0)


def masks_one_head():
    i, j = grid(40)
    return [np.where((i >= j) & (j > 4), 1, -1)]


def masks_period_3():
    i, j = grid(40)
    return [np.where((i >= j) & (j > 4) & ((i - j) % 3 == h), 1, -1) for h in range(3)]


def masks_skip_a_residue():
    return answer('10.3')[:3]


def blocks_identity(lags, T, lam, beta):          # the paper's "plain inner product"
    band, _ = answer('10.4')(lags, T, lam, beta)
    return band, beta * np.eye(T)


def blocks_wrong_shift(lags, T, lam, beta):
    band, _ = answer('10.4')(lags, T, lam, beta)
    i, j = grid(T)
    return band, beta * ((i - j) % len(lags) == 0)


def blocks_unshifted_band(lags, T, lam, beta):
    _, B = answer('10.4')(lags, T, lam, beta)
    i, j = grid(T)
    return np.where(np.isin(i - j, lags), lam, -lam), B


def paper_pair_rule(lags, T, beta):               # App. H's (a - b - 1)
    mask, _ = answer('10.6')(lags, T, beta)
    return mask, sel.pair_evidence_block(lags, T, beta, shift=1)


def paper_zero_mask(lags, T, beta):               # App. H's 0 instead of -lam
    mask, B = answer('10.6')(lags, T, beta)
    return np.where(mask > 0, 1, 0), B


def hard_no_factor_two(P, T):
    return int(np.floor(np.log(T * P.max() / P.min() * 1e6))) + 1


def hard_no_ratio(P, T):
    return int(np.floor(np.log(T * 1e6) / 2)) + 1


def posterior_one_term_short(P, lags, x):         # sums from kmax + 1 (0-based) on
    logP, kmax = np.log(P), max(lags)
    ell = np.zeros((len(x), len(lags)))
    for t in range(kmax + 1, len(x)):
        ell[t] = ell[t - 1] + [logP[x[t - k], x[t]] for k in lags]
    w = np.exp(ell - ell.max(1, keepdims=True))
    return w / w.sum(1, keepdims=True)


def _hardness_by_T():
    """A lookup of the answers of the old five cases, keyed by T alone."""
    reference = answer('10.7')
    table = {T: reference(ch10._P(S, 80 + c), T)
             for c, (S, T) in enumerate([(3, 10), (5, 128), (4, 40), (6, 256), (2, 1000)])}
    return lambda P, T: table.get(T, 10)


def _budget_by_T():
    reference = answer('10.8')
    table = {T: reference(T, lags, beta_c) for T, lags, beta_c in
             [(128, (1, 2, 3), 100.0), (64, (1, 2, 3, 4, 5), 10.0), (40, (2, 3), 7.0),
              (129, (1, 2, 3), 1.0), (31, (4, 5, 6, 7), 2.5)]}
    return lambda T, lags, beta_c: table.get(T, (1, 1.0))


def budget_all_tokens(T, lags, beta_c):
    return T - max(lags), len(lags) * beta_c


def budget_paper_float(T, lags, beta_c):          # the paper's (T - kmax - 1) / K + 1
    return (T - max(lags) - 1) / len(lags) + 1, len(lags) * beta_c


def budget_same_beta(T, lags, beta_c):
    return (T - max(lags) - 1) // len(lags) + 1, beta_c


WRONG = [
    ('10.1', posterior_from_own_lag, 'after 2 tokens: expected [0.3333, 0.3333, 0.3333]'),
    ('10.1', posterior_unnormalised, 'lags [1, 2, 3], S = 5, after 1 tokens'),
    ('10.1', posterior_products, 'T = 1000'),
    ('10.1', posterior_one_term_short, 'lags [1, 2, 3], S = 5, after 4 tokens: expected'),
    ('10.2', layer1_not_transposed, 'belongs in slot i - k'),
    ('10.2', layer1_band_plus_one, 'at position i = 4'),
    ('10.2', layer1_P_not_log, 'lags [1, 2, 3], S = 3'),
    ('10.2', layer1_soft, 'should be'),
    ('10.3', masks_one_head, 'share slot'),            # 10.3 answers are lists of masks:
    ('10.3', masks_period_3, 'share slot'),            # these functions build them
    ('10.3', masks_skip_a_residue, 'no head attends to token(s)'),
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
    ('10.7', _hardness_by_T(), 'S = 2, T = 128, pmax/pmin = 3.5: expected lam = 10, got 11'),
    ('10.7', lambda P, T: 4.5, 'S = 3, T = 10: expected an integer; got 4.5'),
    ('10.8', budget_all_tokens, 'one head averages 42 transitions, got 125'),
    ('10.8', budget_paper_float, 'must be an integer'),
    ('10.8', budget_same_beta, 'Prop. 1 needs beta = 300'),
    ('10.8', _budget_by_T(), 'T = 130, lags [1, 2, 3]: one head averages 43 transitions, got 1'),
]


@pytest.mark.parametrize('puzzle, answer_, message', WRONG,
                         ids=[f'{p}-{i}' for i, (p, _, _) in enumerate(WRONG)])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, answer_, message):
    if puzzle == '10.3':
        answer_ = answer_()
    result = check(puzzle, answer_)
    assert not result
    assert message in result.message, result.message


def test_paper_pair_rule_names_the_query_and_the_wrong_lag():
    result = check('10.6', paper_pair_rule)
    assert 'at query' in result.message and 'prefers lag' in result.message, result.message


def test_a_wrong_count_names_the_case():
    result = check('10.8', budget_all_tokens)
    assert result.message.startswith('T = 128, lags [1, 2, 3]: '), result.message


def test_10_5_reads_the_letter_in_any_case():
    for letter in ('b', ' B ', '(b)'):
        assert check('10.5', {'period': 3, 'classes': [[0], [1], [2]], 'choice_134': letter})


def budgeted(puzzle, seconds=0.3):
    """The puzzle's checker body under a short total budget (the real one is 30 s)."""
    return checker(puzzle, budget=seconds)(registry()[puzzle].checker.__wrapped__)


def forever(*args, **kwargs):
    while True:
        time.sleep(0.01)


class NeverArray:
    def __array__(self, *args, **kwargs):
        forever()


class NeverCompared(int):
    __eq__ = __ne__ = forever


def test_10_7_results_that_never_finish_are_stopped_or_never_read():
    start = time.perf_counter()
    result = budgeted('10.7')(lambda P, T: NeverArray())
    assert not result and 'did not finish within its 0.3 s budget' in result.message
    result = budgeted('10.7')(lambda P, T: NeverCompared(10))
    assert not result and 'expected lam' in result.message     # read as the number 10
    assert time.perf_counter() - start < 3


@pytest.mark.parametrize('puzzle', [p.id for p in PUZZLES])
def test_no_checker_takes_options_that_change_the_puzzle(puzzle):
    body = registry()[puzzle].checker.__wrapped__
    assert len(inspect.signature(body).parameters) == 1
    result = check(puzzle, answer(puzzle), lam=1.0)
    assert not result and 'unexpected keyword' in result.message
