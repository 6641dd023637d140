"""Chapter 10 checkers: what each one calls solved, and the answers that must not pass.

Every answer goes through the real protocol (``checking.verdict``: pickled, run in a
worker, judged in the judge).  Each function puzzle tries one visible case first (the
chapter's worked example, or the case its exercise cell names), then cases drawn afresh
on every check; a message names a drawn case as ``ch10.<name>_cases(seed)[c]`` and shows
what the answer gave, never what was due.

| id | what is checked (solved means) | wrong answers tried (each a test below) |
|---|---|---|
| 10.1 | `lag_posterior(P, lags, x)` equals the Bayesian posterior to 1e-9 after every prefix of the worked example and 14 fresh sequences (one lag, kmin > 1, T = kmax + 1, T = 1000, S 2-6; one of 3,000 tokens whose lags' log-likelihoods lie more than 750 apart: round 22, weights exp(ll - ll of the first lag) overflow past 709 and passed, such a gap being drawn 1 check in 200); the package's posterior, likelihoods and log-probabilities switched off Round 15: lags up to 16 at T from 201 to 999 are drawn too (neither was). | sums starting at each lag's own k; unnormalised; products instead of logs (underflow at T = 1000); one term short |
| 10.2 | `layer1_matrix(P, lags, T, lam)`: layer 1 equals the chapter's (+-lam on the positions) to 1e-8 for every i > kmax on 16 sequences over the example (lam = 50: ptil[i, k] in slot i - k) and 5 fresh lag sets, each at a lam from 2 to 12 (round 17: lam was always 50, and an answer that ignored it passed); the package's construction switched off | log P not transposed; the band shifted by one; P instead of log P; a soft lam; NaN outputs |
| 10.3 | `layer2_masks(lags, T)`: at most K sign masks (the budget) for lags {1,2,3,4} at T = 40 and 4 fresh contiguous sets: at every query from 2 kmax each token after the warm-up is averaged by exactly one head, uniformly, with no slot shared in a head; construction and `plan_heads` switched off Round 15: one T from 49 to 149 too (10.4: 41 to 149, 10.6: 45 to 149). Round 25: the six drawn sets have K = 1 to 6, one each (no single lag was drawn about one check in three). | one head for all; period 3; a residue left out; K + 1 masks; non-sign values; two masks for a single lag (period at least 2) |
| 10.4 | `layer3_blocks(lags, T, lam, beta)`: layer-3 scores at the candidates equal lam + beta sum_h mean ptil, outputs equal the reference, on the example (lam = 500, beta = 7) and fresh contiguous sets, each with a lam from 100 to 1,000 and a beta from 1 to 20 (round 17: both were fixed); round 25: one fresh set for each K from 1 to 6 | the identity block; the wrong shift; the unshifted band; `(b - a) % K == 1`, right except at K = 1 |
| 10.5 | a period and residue classes for {3, 5, 7} with at most 3 heads (the budget) that split every residue and pass the rule, the network equal to the analytic predictor, and the reason {1, 3, 4} fails with period 3 (a salted digest) | a colliding period; 5 heads; residues left out; one class; the wrong reason; "b" in lower case (accepted) |
| 10.6 | `single_head_blocks(lags, T, beta)` for one head (the budget): candidate scores to 1e-9 and outputs equal the reference, with a beta from 1 to 30 per fresh case (round 17: beta was always 10), on the sequences ({2, 5} and 15 fresh pairs, one for each D = 1 to 5 and each residue of kmin modulo D, kmin up to 2 D: round 25, odd kmin at D = 2 and kmin = 5 at D = 5 were never drawn) | the paper's (a - b - 1) rule; the paper's 0 instead of -lam; the package's block; shifts fitted to kmin from 1 to 4 (even at D = 2) |
| 10.7 | `how_hard(P, T)`: the smallest integer lam of the definition on S = 5, T = 128 and 7 fresh (P, T) pairs, T from 2 to 100000, a T repeated with another P Round 15: S from 2 to 16 (was 2 to 8). Round 25: six more put x = ln(T pmax / pmin / 1e-6) / 2 within 1e-8 to 1e-5 of an integer, three above and three below, pmax and pmin in different rows. | no factor 2; no pmax/pmin; 4.5; values that never convert (stopped) or never compare (read as numbers); ln(1e6) / 2 rounded to 6.9; 7 in its place; the largest ratio within one row |
| 10.8 | `one_head_budget(T, lags, beta_c)`: the count (the package's design) and Prop. 1's beta (checked by running Proposition 1 against the K-head network at balanced queries) on the chapter's example and 8 fresh cases, T at every residue modulo K Round 15: kmin from 2 to 8 (was 2 to 4). | every token counted; the paper's fraction; beta_c unscaled; a NaN beta |

Red team (attacks written from the checker source alone; each must fail):

| class | attack | puzzles | why it fails now |
|---|---|---|---|
| 1 oracle | answer from a table of the cases and values earlier messages showed | 10.7, 10.8 | drawn cases are new on every check (`fresh_rng`); messages show the input and the answer's value only (`never_names`) |
| 1 oracle | right on the visible case only | 10.1, 10.7 | the visible case is one of 8 to 13 |
| 2 source | read the choice letter or a formula off `ch10.py` | 10.5, 10.8 | the letter is a salted digest; beta is checked by running Proposition 1, no formula in the source |
| 3 before | the package's own answer (`lag_posterior`, `pair_evidence_block`, the construction, `plan_heads`, `safety_margins`) | 10.1, 10.2, 10.3, 10.6, 10.7 | `Puzzle(refuse=...)`: switched off in the worker |
| 3 before | a copy of a package function's code | 10.6 | `copies.refused_copy` finds its bytecode |
| 3 before | shrink the checker's case list, patch the package or the checker where the answer runs | 10.1, 10.4 | the check's cases and references live in the judge; the worker's patches stay there |
| 3 before | patch the package in the kernel before the check | 10.1 | the judge and the worker import the package clean |
| 3 before | the package's blocks tabulated in the kernel for every lag set and T the cases can hold, shipped as data (round 5) | 10.3, 10.4, 10.6 | the last drawn case has T from 150 to 300: tables of every size would hold billions of entries (10.3's coverage rules are screened on all queries at once, `ch10._suspect_queries`, so a large T costs little) |
| 3 before | the same tables built once at T = 300 and cropped to T x T (round 7) | 10.3, 10.6 | **not refused**: the masks of a lag set at T are the top-left corner of those at 300, and there are 24 lag sets (an accepted limit of answers the package computes, CONTRIBUTING) |
| 3 before | 10.8 through `plan_heads` and beta fitted with `construction_weights` / `prop1_weights` (round 5) | 10.8 | switched off |
| 1 oracle | 10.5's letter by trying the four (round 5) | 10.5 | **not refused**: an enumerable answer (CONTRIBUTING); the message says the design passed, so 4 tries find the letter |
| 6 probes | right only on the visible size or lag set (masks for {1,2,3,4}, a band for {1,2,3}, the paper's rule where kmin = 1 mod D) | 10.2, 10.3, 10.6 | fresh lag sets and sizes every check; 10.6 always draws a pair where the paper's rule fails |
| 6 probes | a count right at one residue of T modulo K | 10.8 | 4 consecutive T for one lag set |

Classes 4 (training) and 5 (the KV cache) have no puzzle in this chapter.  References,
shared garbage and endless loops are tested for every checker in
``tests/test_checker_contract.py``.
"""
import inspect
import re
import types

import numpy as np
import pytest
from checking import SHORT, NeverArray, fails, never_names, passes, verdict

import taotp
from solutions import answer
from taotp import selective as sel
from taotp.exercises import ch10
from taotp.exercises.ch10 import PUZZLES

REF = {p.id: answer(p.id) for p in PUZZLES}


def grid(T):
    """1-based (query i, key j) index grids."""
    return np.arange(1, T + 1)[:, None], np.arange(1, T + 1)[None, :]


EXTRA_GARBAGE = {
    '10.1': {'a function returning a ragged list': lambda *a, **k: [[1, 2], [3]]},
    '10.2': {'a function returning a NaN matrix': lambda *a, **k: np.full((13, 13), np.nan)},
    '10.3': {'a function returning a NaN mask': lambda *a: [np.full((40, 40), np.nan)],
             'a function returning a tiny mask': lambda *a: [[1, -1]],
             'a function returning five masks': lambda *a: [np.ones((40, 40))] * 5,
             'a function returning one number': lambda *a: 7},
    '10.4': {'a function returning a triple': lambda *a, **k: (1, 2, 3),
             'a function returning ragged blocks': lambda *a, **k: ([[1, 2], [3]], None)},
    '10.5': {'a text period': {'period': 'three'},
             'classes that are not lists': {'period': 3, 'classes': 7, 'choice_134': 'B'}},
    '10.6': {'a function returning a triple': lambda *a, **k: (1, 2, 3)},
    '10.7': {'a function returning text': lambda *a, **k: 'ten'},
    '10.8': {'a function returning one number': lambda *a, **k: 42},
}


def seed_of(result):
    """The seed and case index a message names (``case c of ch10.name(seed)``)."""
    found = re.search(r'case (\d+) of ch10\.(\w+)\((\d+)\)', result.message)
    assert found, result.message
    return getattr(ch10, found[2])(int(found[3]))[int(found[1])]


def test_puzzle_list():
    assert [p.id for p in PUZZLES] == [f'10.{i}' for i in range(1, 9)]
    assert {p.kind for p in PUZZLES} == {'checked'}


def test_the_single_head_reference_is_the_packages_block():
    model = sel.build_selective_induction(sel.transition_matrix(3, np.random.default_rng(0)),
                                          (2, 5), 30, beta=4.0, heads=1)
    np.testing.assert_array_equal(model.layers[2][0][1][2],
                                  REF['10.6']((2, 5), 30, 4.0)[1])


def test_drawn_cases_cover_what_the_docstrings_promise():
    far, sizes, kmins = set(), set(), set()
    for seed in range(20):
        kinds = ch10.posterior_cases(seed)
        assert len(kinds) == 14 and len(kinds[0][1]) == 1 and min(kinds[2][1]) > 1
        assert kinds[4][2] == max(kinds[4][1]) + 1 and len(kinds[6][3][0]) == 1000
        assert 201 <= kinds[12][2] <= 999                  # round 15: T from 201 to 999 ...
        far.add(max(kinds[12][1]))                         # ... and lags up to 16
        P, lags, T, (x,) = kinds[13]                       # round 22: exp(ll - ll[0]) overflows
        ll = taotp.selective.log_likelihoods(P, lags, x)[-1]
        assert T == 3000 and ll.max() - max(ll.mean(), ll[0]) > 750
        assert all(lags == tuple(range(lags[0], lags[-1] + 1)) and T >= 2 * lags[-1] + 2
                   for _, lags, T, _ in ch10.mask_cases(seed))
        pairs = {(b - a, a % (b - a)) for _, (a, b), *_ in ch10.pair_cases(seed)[:15]}
        assert pairs == {(D, r) for D in range(1, 6) for r in range(D)}    # round 25
        assert all(a <= 2 * (b - a) for _, (a, b), *_ in ch10.pair_cases(seed))
        for cases in (ch10.mask_cases(seed), ch10.selection_cases(seed)):  # round 25: K = 1
            assert sorted(len(lags) for _, lags, *_ in cases) == [1, 2, 3, 4, 5, 6]
        for cases in (ch10.mask_cases(seed), ch10.pair_cases(seed), ch10.selection_cases(seed)):
            assert 150 <= cases[-1][2] <= 300 and 41 <= cases[-2][2] <= 149    # round 15
            assert all(T <= 48 for _, _, T, *_ in cases[:-2])
        assert any((lags[0] - 1) % (lags[1] - lags[0]) for _, lags, *_ in ch10.pair_cases(seed))
        # round 17: lam and beta are drawn per case (an answer that ignored them passed)
        assert all(2 <= lam <= 12 for *_, lam in ch10.layer1_cases(seed))
        assert all(100 <= lam <= 1000 and 1 <= beta <= 20
                   for *_, lam, beta in ch10.selection_cases(seed))
        assert all(1 <= beta <= 30 for *_, beta in ch10.pair_cases(seed))
        budget = ch10.budget_cases(seed)
        assert len(budget) == 8 and len({T % len(budget[0][1]) for T, _, _ in budget[:4]}) \
            == len(budget[0][1])
        Ts = [T for _, T, _ in ch10.hardness_cases(seed)]
        assert Ts[0] == 2 and Ts[5] in Ts[1:5] and Ts[6] in Ts[1:5] and Ts[4] > 5000
        sizes.update(S for S, _, _ in ch10.hardness_cases(seed))
        for side, (S, T, P) in zip((1, -1) * 3, ch10.hardness_cases(seed)[7:]):  # round 25
            x = np.log(T * P.max() / P.min() * 1e6) / 2
            assert 1e-9 < side * (x - round(x)) < 2e-5 and 2 <= T <= 100_000
            assert np.allclose(P.sum(1), 1) and P.argmin() // S != P.argmax() // S
        kmins.add(budget[0][1][0])
    assert max(far) > 8 and max(sizes) > 8 and max(kmins) > 4   # round 15: never drawn before


# ----------------------------------------------------------------------------- wrong answers

def posterior_from_own_lag(P, lags, x):           # sums from j = k + 1 instead of kmax + 1
    logP = np.log(P)
    ell = np.zeros((len(x), len(lags)))
    for t in range(len(x)):
        for c, k in enumerate(lags):
            ell[t, c] = sum(logP[x[j - k], x[j]] for j in range(k, t + 1))
    w = np.exp(ell - ell.max(1, keepdims=True))
    return w / w.sum(1, keepdims=True)


def posterior_shifted_by_the_first_lag(P, lags, x):   # round 22: exp overflows past 709
    logP, kmax = np.log(P), max(lags)
    steps = np.array([[logP[x[j - k], x[j]] if j >= kmax else 0.0 for k in lags]
                      for j in range(len(x))])
    ell = np.cumsum(steps, axis=0)
    with np.errstate(all='ignore'):
        w = np.exp(ell - ell[:, :1])
        return w / w.sum(1, keepdims=True)


def posterior_unnormalised(P, lags, x):
    return 2.0 * REF['10.1'](P, lags, x)


def posterior_products(P, lags, x):               # no logs: underflows on long sequences
    like = np.ones((len(x), len(lags)))
    for t in range(max(lags), len(x)):
        like[t] = like[t - 1] * [P[x[t - k], x[t]] for k in lags]
    return like / like.sum(1, keepdims=True)


def posterior_one_term_short(P, lags, x):         # sums from kmax + 1 (0-based) on
    logP, kmax = np.log(P), max(lags)
    ell = np.zeros((len(x), len(lags)))
    for t in range(kmax + 1, len(x)):
        ell[t] = ell[t - 1] + [logP[x[t - k], x[t]] for k in lags]
    w = np.exp(ell - ell.max(1, keepdims=True))
    return w / w.sum(1, keepdims=True)


def layer1_not_transposed(P, lags, T, lam):
    A = REF['10.2'](P, lags, T, lam)
    A[:len(P), :len(P)] = np.log(P)
    return A


def layer1_band_plus_one(P, lags, T, lam):
    A = REF['10.2'](P, lags, T, lam)
    i, j = grid(T)
    A[len(P):, len(P):] = np.where(np.isin(i - j + 1, lags), lam, -lam)
    return A


def layer1_P_not_log(P, lags, T, lam):
    A = REF['10.2'](P, lags, T, lam)
    A[:len(P), :len(P)] = P.T
    return A


def layer1_soft(P, lags, T, lam):
    return REF['10.2'](P, lags, T, 1.0)


def layer1_plus_lam_or_zero(P, lags, T, lam):    # right as lam grows, not the chapter's layer
    A = REF['10.2'](P, lags, T, lam)
    A[len(P):, len(P):] = np.maximum(A[len(P):, len(P):], 0)
    return A


def layer1_overflow(P, lags, T, lam):             # every stored slot NaN after the softmax
    return np.full((len(P) + T, len(P) + T), 1e308)


def masks_one_head(lags, T):
    i, j = grid(T)
    return [np.where((i >= j) & (j > max(lags)), 1, -1)]


def masks_period_3(lags, T):
    i, j = grid(T)
    return [np.where((i >= j) & (j > max(lags)) & ((i - j) % 3 == h), 1, -1) for h in range(3)]


def masks_skip_a_residue(lags, T):
    return REF['10.3'](lags, T)[:-1] if len(lags) > 1 else []


def masks_one_too_many(lags, T):
    return REF['10.3'](lags, T) + [-np.ones((T, T))]


def blocks_identity(lags, T, lam, beta):          # the paper's "plain inner product"
    band, _ = REF['10.4'](lags, T, lam, beta)
    return band, beta * np.eye(T)


def blocks_wrong_shift(lags, T, lam, beta):
    band, _ = REF['10.4'](lags, T, lam, beta)
    i, j = grid(T)
    return band, beta * ((i - j) % len(lags) == 0)


def blocks_unshifted_band(lags, T, lam, beta):
    _, B = REF['10.4'](lags, T, lam, beta)
    i, j = grid(T)
    return np.where(np.isin(i - j, lags), lam, -lam), B


def paper_block(lags, T, beta, shift=1):
    """App. H's block, written out (the package's ``pair_evidence_block`` is switched off)."""
    D = lags[1] - lags[0]
    i, j = grid(T)
    return np.where(j >= i, 0.0, np.where((i - j - shift) % (2 * D) < D, beta, -beta))


def paper_pair_rule(lags, T, beta):               # App. H's (a - b - 1)
    mask, _ = REF['10.6'](lags, T, beta)
    return mask, paper_block(lags, T, beta)


def paper_zero_mask(lags, T, beta):               # App. H's 0 instead of -lam
    mask, B = REF['10.6'](lags, T, beta)
    return np.where(mask > 0, 1, 0), B


def hard_no_factor_two(P, T):
    return int(np.floor(np.log(T * P.max() / P.min() * 1e6))) + 1


def hard_no_ratio(P, T):
    return int(np.floor(np.log(T * 1e6) / 2)) + 1


def hard_rounded_constant(P, T):                 # round 25: ln(1e6) / 2 = 6.9078 as 6.9
    return int(np.floor(np.log(T * P.max() / P.min()) / 2 + 6.9)) + 1


def hard_seven(P, T):                            # round 25: 7 for ln(1e6) / 2
    return int(np.floor(np.log(T * P.max() / P.min()) / 2 + 7)) + 1


def hard_row_ratio(P, T):                        # round 25: the ratio taken within each row
    r = max(row.max() / row.min() for row in P)
    return int(np.floor(np.log(T * r * 1e6) / 2)) + 1


def masks_period_at_least_two(lags, T):          # round 25: wrong only for a single lag
    i, j = grid(T)
    K = max(len(lags), 2)
    return [np.where((i >= j) & (j > max(lags)) & ((i - j) % K == h), 1, -1) for h in range(K)]


def blocks_next_slot(lags, T, lam, beta):        # round 25: (b - a) % K == 1, void at K = 1
    band, _ = REF['10.4'](lags, T, lam, beta)
    i, j = grid(T)
    return band, beta * ((j - i) % len(lags) == 1)


def pair_shift_fitted(lags, T, beta):            # round 25: right for the kmin once drawn
    kmin, D = min(lags), max(lags) - min(lags)
    mask, _ = REF['10.6'](lags, T, beta)
    shift = 3 if D == 2 else 2 * kmin - 1 if kmin < 5 else 1
    return mask, paper_block(lags, T, beta, shift)


def budget_all_tokens(T, lags, beta_c):
    return T - max(lags), len(lags) * beta_c


def budget_paper_float(T, lags, beta_c):          # the paper's (T - kmax - 1) / K + 1
    return (T - max(lags) - 1) / len(lags) + 1, len(lags) * beta_c


def budget_same_beta(T, lags, beta_c):
    return (T - max(lags) - 1) // len(lags) + 1, beta_c


def budget_nan_beta(T, lags, beta_c):
    return REF['10.8'](T, lags, beta_c)[0], float('nan')


WRONG = [
    ('10.1', posterior_from_own_lag, 'the example case (lags = [1, 2, 3], S = 3, T = 10), after '
                                     '2 tokens: your answer gave'),
    ('10.1', posterior_unnormalised, 'after 1 tokens', 'it sums to 1'),
    ('10.1', posterior_products, 'T = 1000', 'NaN'),
    ('10.1', posterior_shifted_by_the_first_lag, 'ch10.posterior_cases(', 'NaN or infinity'),
    ('10.1', posterior_one_term_short, 'the example case', 'after 4 tokens', 'same positions'),
    ('10.2', layer1_not_transposed, 'belongs in slot i - k'),
    ('10.2', layer1_band_plus_one, 'the example case', 'at position i = 4'),
    ('10.2', layer1_P_not_log, 'lags = [1, 2, 3], S = 3'),
    ('10.2', layer1_soft, 'your layer stores'),
    ('10.2', layer1_overflow, 'your layer stores'),
    ('10.2', layer1_plus_lam_or_zero, 'layer1_cases(', 'at a small lam the layer leaks'),
    # round 17: answers that ignore the hardening constants they are given
    ('10.2', lambda P, lags, T, lam: REF['10.2'](P, lags, T, 50.0), 'layer1_cases('),
    ('10.4', lambda lags, T, lam, beta: REF['10.4'](lags, T, 500.0, beta), 'score lam +'),
    ('10.4', lambda lags, T, lam, beta: REF['10.4'](lags, T, lam, 7.0), 'score lam +'),
    ('10.6', lambda lags, T, beta: REF['10.6'](lags, T, 10.0), 'score lam +'),
    ('10.3', masks_one_head, 'share slot'),
    ('10.3', masks_period_3, 'share slot'),
    ('10.3', masks_skip_a_residue, 'no head attends to token(s)'),
    ('10.3', masks_one_too_many, '1 to 4 masks (the budget: one head per lag); got list of 5'),
    ('10.3', lambda lags, T: [2 * m for m in REF['10.3'](lags, T)], 'only +1 and -1'),
    ('10.4', blocks_identity, 'the example case', 'at query 8 the candidate keys'),
    ('10.4', blocks_wrong_shift, 'at query 8'),
    ('10.4', blocks_unshifted_band, 'score lam +'),
    ('10.5', {'period': 2, 'classes': [[0], [1]], 'choice_134': 'B'}, 'share a slot'),
    ('10.5', {'period': 5, 'classes': [[0], [1], [2], [3], [4]], 'choice_134': 'B'},
     'at most 3 heads'),
    ('10.5', {'period': 3, 'classes': [[0], [1]], 'choice_134': 'B'}, 'split the residues'),
    ('10.5', {'period': 3, 'classes': [[0, 1, 2]], 'choice_134': 'B'}, 'share a slot'),
    ('10.5', {'period': 3, 'classes': [[0], [1], [2]], 'choice_134': 'A'}, "(got 'A')"),
    ('10.6', paper_pair_rule, 'lags = [2, 5]', 'score lam +'),
    ('10.6', paper_zero_mask, 'only +1 and -1'),
    ('10.7', hard_no_factor_two, 'the example case (S = 5, T = 128'),
    ('10.7', hard_no_ratio, 'the smallest integer lam'),
    ('10.7', lambda P, T: 4.5, 'lam must be an integer; got 4.5'),
    ('10.7', hard_rounded_constant, 'hardness_cases(', 'the smallest integer lam'),
    ('10.7', hard_seven, 'hardness_cases(', 'the smallest integer lam'),
    ('10.7', hard_row_ratio, 'hardness_cases(', 'the smallest integer lam'),
    ('10.3', masks_period_at_least_two, 'mask_cases(', 'lags = [', 'list of 1 to 1 masks'),
    ('10.4', blocks_next_slot, 'selection_cases(', 'score lam +'),
    ('10.6', pair_shift_fitted, 'pair_cases(', 'score lam +'),
    ('10.8', budget_all_tokens, 'the example case (T = 128, lags = [1, 2, 3], beta_c = 100.0): '
                                'the count: your answer gave 125'),
    ('10.8', budget_paper_float, 'must be an integer'),
    ('10.8', budget_same_beta, 'beta: your answer gave 100', 'balanced query'),
    ('10.8', budget_nan_beta, 'beta must be a finite number; got nan'),
]


@pytest.mark.parametrize('case', WRONG, ids=[f'{w[0]}-{i}' for i, w in enumerate(WRONG)])
def test_plausible_wrong_answers_fail_with_a_message(case):
    puzzle, wrong, *fragments = case
    result = fails(puzzle, wrong, *fragments)
    assert 'expected' not in result.message


def test_10_5_reads_the_letter_in_any_case():
    for letter in ('b', ' B ', '(b)'):
        passes('10.5', {'period': 3, 'classes': [[0], [1], [2]], 'choice_134': letter})


def test_10_7_values_that_never_convert_are_stopped_and_odd_ints_are_read_as_numbers():
    fails('10.7', lambda P, T: NeverArray(), 'took longer', call_seconds=SHORT)

    class NeverCompared(int):
        def __eq__(self, other):
            while True:
                pass
        __ne__ = __eq__
        __hash__ = int.__hash__
    fails('10.7', lambda P, T: NeverCompared(10), 'the example case', 'your answer gave 10')


@pytest.mark.parametrize('puzzle', ['10.2', '10.7'])
def test_options_that_would_change_the_puzzle_are_refused(puzzle):
    result = verdict(puzzle, answer(puzzle), lam=1.0)
    assert not result and 'no option' in result.message and result.relaxed


# ----------------------------------------------------------------------------- red team

def right_on_the_example(puzzle, wrong):
    """The reference on the visible case, ``wrong`` on every drawn one."""
    reference = answer(puzzle)

    def answer_(*args):
        visible = {'10.1': lambda P, lags, x: len(x) == 10 and P.shape == (3, 3),
                   '10.7': lambda P, T: T == 128 and P.shape == (5, 5)}[puzzle](*args)
        return reference(*args) if visible else wrong(*args)
    return answer_


def test_hidden_cases_never_print_the_expected_posterior():
    result = fails('10.1', right_on_the_example('10.1', posterior_one_term_short),
                   'case ', 'which is not right')
    P, lags, T, (x,) = seed_of(result)
    t = int(re.search(r'after (\d+) tokens', result.message)[1]) - 1
    never_names(result, taotp.selective.lag_posterior(P, lags, x)[t].round(4).tolist())


def test_hidden_cases_never_print_the_expected_lambda():
    result = fails('10.7', right_on_the_example('10.7', lambda P, T: hard_no_ratio(P, T) + 1),
                   'which is not right')
    S, T, P = seed_of(result)
    want = REF['10.7'](P, T)
    assert f'gave {want}' not in result.message and 'expected' not in result.message


def test_cases_are_new_on_every_check():
    messages = {fails('10.7', right_on_the_example('10.7', hard_no_ratio)).message
                for _ in range(2)}
    assert len(messages) == 2


def test_a_table_of_what_earlier_messages_showed_does_not_pass():
    """Class 1: keep every case a message named, answer it from a table next time."""
    seen = {(128, (1, 2, 3)): REF['10.8'](128, (1, 2, 3), 100.0)}   # the visible case
    for _ in range(6):
        result = verdict('10.8', lambda T, lags, beta_c: seen.get((T, tuple(lags)), (1, 1.0)))
        assert not result.passed and 'of ch10.budget_cases(' in result.message
        T, lags, beta_c = seed_of(result)
        seen[(T, lags)] = REF['10.8'](T, lags, beta_c)
    fails('10.8', lambda T, lags, beta_c: seen.get((T, tuple(lags)), (1, 1.0)))


def test_the_checker_module_holds_no_answer():
    body = inspect.getsource(ch10.check_10_5) + inspect.getsource(ch10.check_10_8)
    for literal in ("!= 'B'", "== 'B'", '* beta_c', 'beta_c *'):
        assert literal not in body, literal
    one = fails('10.5', {'period': 3, 'classes': [[0], [1], [2]], 'choice_134': 'A'}).message
    other = fails('10.5', {'period': 3, 'classes': [[0], [1], [2]], 'choice_134': 'C'}).message
    assert one.split('(got')[0] == other.split('(got')[0]     # a wrong letter narrows nothing


PACKAGE_ANSWERS = {
    '10.1': (lambda P, lags, x: taotp.selective.lag_posterior(P, lags, x), 'switched off'),
    '10.2': (lambda P, lags, T, lam: sel.build_selective_induction(P, lags, T, lam).matrix(0, 0),
             'switched off'),
    '10.3': (lambda lags, T: [np.sign(sel.build_selective_induction(
        sel.transition_matrix(3, np.random.default_rng(0)), lags, T).layers[1][h][0][2])
        for h in range(len(lags))], 'switched off'),
    '10.6': (lambda lags, T, beta: (REF['10.6'](lags, T, beta)[0],
                                    sel.pair_evidence_block(lags, T, beta)), 'switched off'),
    '10.7': (lambda P, T: next(lam for lam in range(100)
                               if sel.safety_margins(P, T, lam, 0.0, 1)['layer1'] >
                               np.log(1e6)), 'switched off'),
    '10.8': (lambda T, lags, beta_c: (len(sel.plan_heads(lags, heads=1).classes[0]),
                                      beta_c), 'switched off'),    # red team, round 5
}


def _layer2_weights(masks, T):
    """Layer 2's attention weights for sign masks, as check_10_3 computes them."""
    pos = np.arange(3, 3 + T)
    model = sel.DisentangledTransformer(3, T, [[[(pos, pos, ch10.LAM * a)] for a in masks]],
                                        (np.arange(3), np.eye(3)))
    return np.asarray(model.run(np.zeros(T, dtype=np.int64))['attn'][0])


def test_10_3_the_fast_screen_flags_every_query_the_rules_reject():
    """check_10_3 runs ``_coverage_problem`` only where ``_suspect_queries`` looks: on the
    reference, its rows flipped, and random masks, every rejected query is a suspect."""
    rng = np.random.default_rng(0)
    rejected = 0
    for trial in range(40):
        kmin = int(rng.integers(1, 5))
        lags = tuple(range(kmin, kmin + int(rng.integers(1, 7))))
        T = int(rng.integers(2 * lags[-1] + 2, 40))
        masks = [np.asarray(m) for m in REF['10.3'](lags, T)]
        if trial % 2:
            h, i = int(rng.integers(0, len(masks))), int(rng.integers(0, T))
            masks[h][i] = rng.choice([-1, 1], size=T)
        if trial % 4 == 3:
            masks = [rng.choice([-1, 1], size=(T, T)) for _ in masks]
        weights = _layer2_weights(masks, T)
        suspects = set(ch10._suspect_queries(weights, lags))
        for i in range(2 * lags[-1], T + 1):
            if ch10._coverage_problem(weights, lags, i):
                rejected += 1
                assert i in suspects, (lags, T, i)
    assert rejected > 50


def test_a_table_of_the_packages_masks_and_blocks_for_small_t_does_not_pass():
    """Red team, round 5 (class 3): 10.3's masks tabulated for every contiguous lag set and
    T <= 48 (the reference's, computed in the kernel); the last drawn case has T >= 150."""
    table = {}
    for kmin in range(1, 5):
        for K in range(1, 7):
            lags = tuple(range(kmin, kmin + K))
            for T in range(2 * lags[-1] + 2, 49):
                table[lags, T] = REF['10.3'](lags, T)
    table[(1, 2, 3, 4), 40] = REF['10.3']((1, 2, 3, 4), 40)
    fails('10.3', lambda lags, T: table[tuple(int(k) for k in lags), int(T)],
          'case 4 of ch10.mask_cases(')


def test_a_table_of_the_packages_blocks_for_small_t_does_not_pass():
    """Red team, round 5 (class 3): the package's blocks tabulated in the kernel for every
    contiguous lag set and T <= 44, shipped as data (at lam = beta = 1, scaled by the lam and
    beta asked for); the last drawn case has T >= 150."""
    table = {}
    for kmin in range(1, 5):
        for K in range(1, 7):
            lags = tuple(range(kmin, kmin + K))
            for T in range(2 * lags[-1] + K + 2, 45):
                table[lags, T] = REF['10.4'](lags, T, 1.0, 1.0)
    table[tuple(sel.example.LAGS), 10] = REF['10.4'](sel.example.LAGS, 10, 1.0, 1.0)

    def tabulated(lags, T, lam, beta):
        band, B = table[tuple(int(k) for k in lags), int(T)]
        return lam * band, beta * B
    result = fails('10.4', tabulated, 'of ch10.selection_cases(')
    assert seed_of(result)[2] > 44          # case 4 (T from 41 to 149) or the last


@pytest.mark.parametrize('puzzle', sorted(PACKAGE_ANSWERS))
def test_the_packages_own_answer_is_switched_off(puzzle):
    wrong, words = PACKAGE_ANSWERS[puzzle]
    fails(puzzle, wrong, words)


def test_a_copy_of_the_packages_code_is_refused():
    block = sel.pair_evidence_block
    copied = types.FunctionType(block.__code__, block.__globals__, 'my_block',
                                block.__defaults__)
    fails('10.6', lambda lags, T, beta: (REF['10.6'](lags, T, beta)[0],
                                         copied(lags, T, beta)),
          'holds a copy of the code of taotp.selective.pair_evidence_block')


def test_an_answer_cannot_shrink_the_cases_or_patch_the_reference():
    right = REF['10.1']

    def posterior(P, lags, x):                      # right on the example only...
        ch10.posterior_cases = lambda seed: []      # ...after dropping every drawn case
        taotp.selective.lag_posterior = lambda P, lags, x: np.zeros((len(x), len(lags)))
        return right(P, lags, x) if len(x) == 10 else np.zeros((len(x), len(lags)))
    fails('10.1', posterior, 'of ch10.posterior_cases(')      # (case 0 has 10 tokens 1 in 200)

    def blocks(lags, T, lam, beta):                 # the judge's reference is out of reach
        sel.build_selective_induction = lambda *a, **k: None
        ch10._close = lambda got, want, tol: np.zeros(np.shape(got), dtype=bool)
        return blocks_identity(lags, T, lam, beta)
    fails('10.4', blocks, 'at query 8')


def test_a_patch_made_in_the_kernel_does_not_reach_the_check(monkeypatch):
    monkeypatch.setattr(sel, 'lag_posterior', posterior_one_term_short)
    monkeypatch.setattr(ch10, 'posterior_cases', lambda seed: [])
    fails('10.1', posterior_one_term_short, 'after 4 tokens')


PARTIAL = {       # right only where a lazy probe would look
    '10.2': lambda P, lags, T, lam: REF['10.2'](P, (1, 2, 3), T, lam),
    '10.3': lambda lags, T: REF['10.3']((1, 2, 3, 4), T),
    '10.6': lambda lags, T, beta: (REF['10.6'](lags, T, beta) if tuple(lags) == (2, 5) else
                                   paper_pair_rule(lags, T, beta)),
    '10.8': lambda T, lags, beta_c: (-(-(T - max(lags)) // len(lags))       # right at the
                                     if (T - max(lags)) % len(lags) in (0, 2) else   # example's
                                     (T - max(lags)) // len(lags), len(lags) * beta_c),  # residue
}


@pytest.mark.parametrize('puzzle', sorted(PARTIAL))
def test_answers_right_only_on_the_visible_cases_fail(puzzle):
    fails(puzzle, PARTIAL[puzzle])

