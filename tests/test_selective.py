"""Chapter 10: the task, the predictors, the head designs, the paper's network and the book port.

Sections follow the files of ``taotp/selective/``.  The network is compared with the
exact finite-length formula (``construction_predictive``) and with a plain-loop version
of it below; the book-format port is compared with the network through ``taotp.trace``
(the book's one forward pass) and through the independent loop reference.
"""
import itertools

import numpy as np
import pytest

import taotp
from taotp import selective as sel
from taotp.reference import naive_transformer
from taotp.selective import example as ex

LAGS = (1, 2, 3)


# ------------------------------------------------------------------------ plain-loop references

def ref_ptil(P, lags, x):
    """Normalised transition probabilities, one at a time: {(i, k): value}, 1-based i."""
    out = {}
    for i in range(1, len(x) + 1):
        valid = [k for k in lags if k < i]
        total = sum(P[x[i - k - 1], x[i - 1]] for k in valid)
        for k in valid:
            out[i, k] = P[x[i - k - 1], x[i - 1]] / total
    return out


def ref_design_prediction(P, lags, x, beta, period, classes, i):
    """The finite-length formula at 1-based query i ('main'/'positional' designs), by loops."""
    kmax, pt = max(lags), ref_ptil(P, lags, x)
    score = []
    for k in lags:
        s = 0.0
        for cls in classes:
            members = [j for j in range(kmax + 1, i + 1) if (i - j) % period in cls]
            if members:
                s += sum(pt[j, k] for j in members) / len(members)
        score.append(beta * s)
    w = np.exp(np.array(score) - max(score))
    w /= w.sum()
    return sum(w[c] * P[x[i - k]] for c, k in enumerate(lags))


# ----------------------------------------------------------------------------- the worked example

def test_example_ptil_and_likelihoods():
    ptil = sel.normalised_transitions(ex.P, ex.LAGS, ex.TOKENS)
    np.testing.assert_allclose(ptil[3:], ex.PTIL, atol=1e-12)
    for (i, k), v in ref_ptil(ex.P, ex.LAGS, ex.TOKENS).items():
        assert ptil[i - 1, ex.LAGS.index(k)] == pytest.approx(v)
    np.testing.assert_allclose(sel.log_likelihoods(ex.P, ex.LAGS, ex.TOKENS)[-1],
                               ex.LOG_LIKELIHOODS, atol=1e-4)


def test_example_bma_and_prop1():
    np.testing.assert_allclose(sel.lag_posterior(ex.P, ex.LAGS, ex.TOKENS)[-1], ex.POSTERIOR,
                               atol=1e-4)
    np.testing.assert_allclose(sel.bma_predictive(ex.P, ex.LAGS, ex.TOKENS)[-1], ex.BMA,
                               atol=1e-4)
    w = sel.prop1_weights(ex.P, ex.LAGS, ex.TOKENS, 3.0)[-1]
    np.testing.assert_allclose(w, ex.PROP1_BETA3, atol=1e-4)
    np.testing.assert_allclose(sel.prop1_predictive(ex.P, ex.LAGS, ex.TOKENS, 3.0)[-1],
                               w @ ex.P[ex.TOKENS[[9, 8, 7]]])
    # ... which is not what the beta = 1 network computes (class sizes 3, 2, 2)
    np.testing.assert_allclose(sel.construction_weights(ex.P, ex.LAGS, ex.TOKENS, 1.0)[-1],
                               ex.NETWORK[1.0]['weights'], atol=1e-4)


@pytest.mark.parametrize('beta', sorted(ex.NETWORK))
def test_example_network(beta):
    model = sel.build_selective_induction(ex.P, ex.LAGS, 10, lam=500.0, beta=beta)
    run = model.run(ex.TOKENS)
    want = ex.NETWORK[beta]
    keys = [9, 8, 7]                                   # query 10's candidates for lags 1, 2, 3
    np.testing.assert_allclose(run['scores'][2][0, 9, keys] - 500, want['scores'], atol=1e-3)
    np.testing.assert_allclose(run['attn'][2][0, 9, keys], want['weights'], atol=1e-4)
    np.testing.assert_allclose(run['probs'][-1], want['output'], atol=1e-4)


@pytest.mark.parametrize('S, T, lags', [(5, 10, (1, 2, 3)), (5, 40, (1, 2, 3, 4, 5)),
                                        (3, 24, (1, 3, 4))])
def test_widths_and_counts_follow_the_formulas(S, T, lags):
    """d0 = S + T, then x2, x(1 + H), x2; non-zero: S^2 + T^2, H T^2, T^2 + H nnz(B), S^2."""
    model = sel.build_selective_induction(sel.transition_matrix(S, np.random.default_rng(0)),
                                          lags, T)
    H = len(model.meta['design'].classes)
    d0 = S + T
    assert model.widths == [d0, 2 * d0, 2 * d0 * (1 + H), 4 * d0 * (1 + H)]
    evidence = sum(np.count_nonzero(m) for _, _, m in model.layers[2][0][1:])  # the B blocks
    assert model.count_nonzero() == {'layer1': S * S + T * T, 'layer2': H * T * T,
                                     'layer3': T * T + evidence, 'readout': S * S}
    if lags == (1, 2, 3) and T == 10:                 # nnz(B) = 33 for K = 3, T = 10
        assert evidence == 3 * 33


# ----------------------------------------------------------------------------- task

def test_transition_matrix_and_stationary(rng):
    for alpha in (None, 2.0, 0.5):
        P = sel.transition_matrix(6, rng, alpha)
        assert P.shape == (6, 6) and np.all(P > 0)
        np.testing.assert_allclose(P.sum(1), 1, atol=1e-12)
        pi = sel.stationary(P)
        np.testing.assert_allclose(pi @ P, pi, atol=1e-12)
        assert pi.sum() == pytest.approx(1)
    assert np.array_equal(sel.transition_matrix(4, np.random.default_rng(5)),
                          sel.transition_matrix(4, np.random.default_rng(5)))


def test_sampler_laws(rng):
    P = sel.transition_matrix(3, rng)
    pi = sel.stationary(P)
    X, true = sel.sample_batch(P, (1, 3), 12, 20000, rng=rng)
    assert set(np.unique(true)) == {1, 3} and abs((true == 1).mean() - 0.5) < 0.02
    for t in range(3):                 # the warm-up (positions 1..kmax) is i.i.d. pi, any lag
        assert np.abs(np.bincount(X[:, t], minlength=3) / len(X) - pi).max() < 0.02
    lag1 = X[true == 1]                # later tokens follow P[x_{t-k}]
    pairs = np.zeros((3, 3))
    np.add.at(pairs, (lag1[:, 5], lag1[:, 6]), 1)
    np.testing.assert_allclose(pairs / pairs.sum(1, keepdims=True), P, atol=0.03)


def test_sample_sequence_contract(rng):
    P = sel.transition_matrix(3, rng)
    tokens, lag = sel.sample_sequence(P, (1, 3), 20, np.random.default_rng(3))
    assert tokens.shape == (20,) and tokens.dtype == np.int64 and lag in (1, 3)
    again = sel.sample_sequence(P, (1, 3), 20, np.random.default_rng(3))
    assert np.array_equal(tokens, again[0]) and lag == again[1]
    tokens, lag = sel.sample_sequence(P, (1, 3), 20, rng, lag=3)
    assert lag == 3 and tokens.min() >= 0 and tokens.max() < 3


# ----------------------------------------------------------------------------- predictors

def test_bma_properties(rng):
    P = sel.transition_matrix(5, rng)
    X, true = sel.sample_batch(P, LAGS, 64, 400, rng=rng)
    w = sel.lag_posterior(P, LAGS, X)
    np.testing.assert_allclose(w.sum(-1), 1)
    np.testing.assert_allclose(w[:, 2], 1 / 3)            # after kmax tokens: uniform
    bma = sel.bma_predictive(P, LAGS, X)
    np.testing.assert_allclose(bma[:, :2], np.broadcast_to(sel.stationary(P), (400, 2, 5)))
    curves = sel.kl_curves(P, LAGS, X, true)
    assert curves['BMA'][2:].mean() < curves['ML'][2:].mean()
    np.testing.assert_allclose(sel.bma_predictive(P, LAGS, X[7]), bma[7])   # (T, S) contract


def test_ml_tie_rule():
    ml = sel.ml_predictive(ex.P, LAGS, ex.TOKENS)
    np.testing.assert_allclose(ml[2], ex.P[ex.TOKENS[[2, 1, 0]]].mean(0))    # all lags tie
    assert np.all(sel.ml_lags(ex.P, LAGS, ex.TOKENS)[2] == 1)
    np.testing.assert_allclose(ml[-1], ex.P[ex.TOKENS[7]])    # then lag 3 is the MLE


def test_kl_divergence():
    p = np.array([0.5, 0.5, 0.0])
    assert sel.kl_divergence(p, p) == 0
    assert sel.kl_divergence(p, np.array([0.25, 0.5, 0.25])) == pytest.approx(0.5 * np.log(2))


def test_formula_matches_plain_loop(rng):
    P = sel.transition_matrix(4, rng)
    for lags, period, classes in (((1, 2, 3), 3, ((0,), (1,), (2,))),
                                  ((1, 3), 4, ((0, 1), (2, 3))),
                                  ((3, 5, 7), 3, ((0,), (1,), (2,)))):
        x, _ = sel.sample_sequence(P, lags, 30, rng)
        design = sel.plan_heads(lags, period=period, classes=classes)
        fast = sel.construction_predictive(P, lags, x, 5.0, design)
        for i in range(max(lags), 31):
            np.testing.assert_allclose(fast[i - 1], ref_design_prediction(
                P, lags, x, 5.0, period, classes, i), atol=1e-12)


def test_converges_to_ml_as_beta_grows(rng):
    P = sel.transition_matrix(5, rng)
    X, _ = sel.sample_batch(P, LAGS, 96, 300, rng=rng)
    ml = sel.ml_predictive(P, LAGS, X)
    gaps = [sel.kl_curve(ml, sel.prop1_predictive(P, LAGS, X, beta))[60:].mean()
            for beta in (1.0, 10.0, 100.0, 1000.0)]
    assert all(a > b for a, b in zip(gaps, gaps[1:])) and gaps[-1] < 1e-3
    model = sel.build_selective_induction(P, LAGS, 96, lam=5000.0, beta=2000.0)
    assert np.abs(model.next_token_probs(X[:3])[:, 60:] - ml[:3, 60:]).max() < 0.05


# ----------------------------------------------------------------------------- designs

def test_plan_heads_designs():
    d = sel.plan_heads((1, 2, 3))
    assert (d.period, d.classes, d.variant) == (3, ((0,), (1,), (2,)), 'main')
    d = sel.plan_heads((1, 3))
    assert (d.period, d.classes, d.variant) == (4, ((0, 1), (2, 3)), 'positional')
    assert (sel.plan_heads((1, 3, 4)).period, len(sel.plan_heads((1, 3, 4)).classes)) == (4, 4)
    assert (sel.plan_heads((3, 5, 7)).period, len(sel.plan_heads((3, 5, 7)).classes)) == (3, 3)
    assert (sel.plan_heads((2, 5)).period, len(sel.plan_heads((2, 5)).classes)) == (2, 2)
    d = sel.plan_heads((2, 5), heads=1)
    assert (d.period, d.classes, d.variant) == (6, ((0, 1, 2),), 'pair')
    d = sel.plan_heads((1, 2), heads=1, variant='main')
    assert (d.period, d.classes, d.variant) == (2, ((0,),), 'main')
    assert sel.design_problems((1, 3, 4), 3, ((0,), (1,), (2,)))     # 1 = 4 mod 3
    assert [row[3] for row in sel.design_table('{3,5,7}')] == [3, 5]


def test_safety_margins():
    m = sel.safety_margins(ex.P, 10, 500.0, 100.0, 3)
    assert m['layer3'] == pytest.approx(1000 - 300 - np.log(10))
    assert m['layer1'] == pytest.approx(1000 - np.log(10) - np.log(7))
    assert sel.safety_margins(ex.P, 10, 500.0, 100.0, 1, 'pair')['layer3'] == pytest.approx(
        1000 - 200 - np.log(10))


def test_the_margin_rule_is_sufficient_not_necessary(rng):
    """Measured (S = 5, T = 40, lags 1..3, beta = 20): the network leaves the formula by
    1e-3 at lam = 5, 3e-6 at lam = 8 and < 1e-12 from lam = 15, long before the rule
    (2 lam > beta H + log T, lam > 31.8) holds."""
    P = sel.transition_matrix(5, rng)
    X, _ = sel.sample_batch(P, LAGS, 40, 6, rng=rng)
    want = sel.construction_predictive(P, LAGS, X, 20.0)
    errs = {}
    for lam in (5.0, 8.0, 15.0, 50.0, 500.0):
        model = sel.build_selective_induction(P, LAGS, 40, lam=lam, beta=20.0, strict=lam >= 50)
        errs[lam] = np.abs(model.next_token_probs(X) - want)[:, 7:].max()
    assert errs[5.0] > 1e-4 and 1e-7 < errs[8.0] < 1e-4
    assert errs[15.0] < 1e-10 and errs[50.0] < 1e-12 and errs[500.0] < 1e-12
    with pytest.raises(ValueError, match=r'need 2\*lam > beta\*H \+ log T'):
        sel.build_selective_induction(P, LAGS, 40, lam=30.0, beta=20.0)
    soft = sel.build_selective_induction(P, LAGS, 40, lam=30.0, beta=20.0, strict=False)
    assert soft.meta['margins']['layer3'] < 0


# ----------------------------------------------------------------------------- the network

CASES = [   # (lags, builder keywords, S, T)
    ((1, 2, 3), {}, 5, 64),
    ((1, 2, 3, 4, 5), {}, 3, 48),
    ((2, 3, 4, 5), {}, 7, 40),
    ((1, 3), {}, 5, 40),                       # holes: period 4, two residues per head
    ((1, 3, 4), {}, 4, 48),                    # period 4, four heads
    ((3, 5, 7), {}, 2, 48),                    # period 3, three heads
    ((1, 3, 4), {'period': 8, 'classes': [(0, 4), (1, 5), (2, 6), (3, 7)]}, 5, 40),
    ((1, 2, 3), {'variant': 'positional'}, 5, 40),
    ((1, 2, 3), {'heads': 1}, 5, 40),          # fewer heads than lags
    ((1, 2, 3), {'heads': 2}, 5, 40),          # ... every design of the chapter's head panel
    ((1, 2, 3, 4, 5), {'heads': 1}, 3, 40),
    ((1, 2, 3, 4, 5), {'heads': 2}, 3, 40),
    ((1, 2, 3, 4, 5), {'heads': 3}, 3, 40),
    ((1, 2, 3, 4, 5), {'heads': 4}, 3, 40),
    ((1, 3), {'heads': 1}, 5, 40),             # two lags, one head (App. H)
    ((2, 5), {'heads': 1}, 4, 40),             # ... where the paper's shift is wrong
    ((2, 4), {'heads': 1}, 3, 40),
]


@pytest.mark.parametrize('lags, kw, S, T', CASES, ids=[f'{c[0]}{c[1] or ""}' for c in CASES])
def test_network_equals_the_finite_length_formula(lags, kw, S, T):
    rng = np.random.default_rng(sum(lags) * 100 + S * 10 + T)
    P = sel.transition_matrix(S, rng)
    for beta in (1.0, 7.0, 40.0):
        model = sel.build_selective_induction(P, lags, T, lam=500.0, beta=beta, **kw)
        X, _ = sel.sample_batch(P, lags, T, 5, rng=rng)
        got = model.next_token_probs(X)
        want = sel.construction_predictive(P, lags, X, beta, model.meta['design'])
        assert np.abs(got - want)[:, model.meta['exact_from'] - 1:].max() < 1e-6
        np.testing.assert_allclose(got.sum(-1), 1, atol=1e-12)


def test_network_equals_the_formula_at_T256(rng):
    for lags in ((1, 2, 3), (1, 3)):
        P = sel.transition_matrix(5, rng)
        model = sel.build_selective_induction(P, lags, 256, beta=20.0)
        X, _ = sel.sample_batch(P, lags, 256, 2, rng=rng)
        want = sel.construction_predictive(P, lags, X, 20.0, model.meta['design'])
        err = np.abs(model.next_token_probs(X) - want)[:, model.meta['exact_from'] - 1:]
        assert err.max() < 1e-6


def test_next_token_probs_runs_the_forward_pass_in_blocks(rng):
    """Chunked batches give the forward pass's own outputs, bit for bit, in any batch shape."""
    P = sel.transition_matrix(4, rng)
    model = sel.build_selective_induction(P, LAGS, 24, beta=30.0)
    X, _ = sel.sample_batch(P, LAGS, 24, 7, rng=rng)
    whole = model.run(X)['probs']
    for chunk in (None, 1, 3, 7, 50):
        assert np.array_equal(model.next_token_probs(X, chunk=chunk), whole)
    assert np.array_equal(model.next_token_probs(X[:6].reshape(2, 3, 24)), whole[:6].reshape(2, 3, 24, 4))
    assert np.array_equal(model.next_token_probs(X[0]), model.run(X[0])['probs'])
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match=r'DisentangledTransformer: chunk must be a positive int'):
            model.next_token_probs(X, chunk=bad)


def test_the_network_is_worse_than_its_formula_before_exact_from(rng):
    """Chapter 10's KL claim: before exact_from the forward pass reads fallback rows."""
    P = sel.transition_matrix(5, np.random.default_rng(0))
    model = sel.build_selective_induction(P, LAGS, 16, beta=100.0)
    X, true = sel.sample_batch(P, LAGS, 16, 300, rng=rng)
    curves = sel.kl_curves(P, LAGS, X, true, {
        'net': model.next_token_probs(X), 'formula': sel.construction_predictive(P, LAGS, X, 100.0)})
    start = model.meta['exact_from']
    assert curves['net'][2] > 2 * curves['formula'][2]                     # t = 3
    np.testing.assert_allclose(curves['formula'][2], curves['BMA'][2])      # no evidence yet: uniform
    np.testing.assert_allclose(curves['net'][start - 1:], curves['formula'][start - 1:], atol=1e-12)


def test_exact_from_is_tight(rng):
    P = sel.transition_matrix(5, rng)
    model = sel.build_selective_induction(P, LAGS, 40, beta=50.0)
    assert model.meta['exact_from'] == 2 * 3 + 3 - 1
    X, _ = sel.sample_batch(P, LAGS, 40, 50, rng=rng)
    err = np.abs(model.next_token_probs(X) - sel.construction_predictive(P, LAGS, X, 50.0))
    assert err[:, 6].max() > 1e-6        # query 7: some keys still read fallback rows


def test_prop1_equality_exactly_when_the_classes_balance(rng):
    """The network with beta equals Prop. 1 with K beta iff (i - kmax) % K == 0."""
    for lags in ((1, 2, 3), (1, 2, 3, 4, 5), (2, 3, 4, 5)):
        K, kmax = len(lags), max(lags)
        P = sel.transition_matrix(5, rng)
        model = sel.build_selective_induction(P, lags, 60, beta=4.0)
        X, _ = sel.sample_batch(P, lags, 60, 4, rng=rng)
        gap = np.abs(model.next_token_probs(X) - sel.prop1_predictive(P, lags, X, K * 4.0))
        i = np.arange(1, 61)
        late = i >= model.meta['exact_from']
        assert gap[:, late & ((i - kmax) % K == 0)].max() < 1e-10
        assert gap[:, late & ((i - kmax) % K != 0)].max() > 1e-6


def test_pair_single_head_equals_two_heads(rng):
    P = sel.transition_matrix(5, rng)
    one = sel.build_selective_induction(P, (1, 3), 48, heads=1, beta=30.0)
    two = sel.build_selective_induction(P, (1, 3), 48, beta=30.0)
    assert one.heads() == [1, 1, 1] and two.heads() == [1, 2, 1]
    X, _ = sel.sample_batch(P, (1, 3), 48, 4, rng=rng)
    start = max(one.meta['exact_from'], two.meta['exact_from']) - 1
    assert np.abs(one.next_token_probs(X) - two.next_token_probs(X))[:, start:].max() < 1e-12


def test_paper_pair_shift_breaks_2_5(rng):
    P = sel.transition_matrix(4, rng)
    X, _ = sel.sample_batch(P, (2, 5), 48, 20, rng=rng)
    for shift, ok in ((None, True), (1, False)):
        model = sel.build_selective_induction(P, (2, 5), 48, beta=10.0, heads=1, pair_shift=shift)
        want = sel.construction_predictive(P, (2, 5), X, 10.0, model.meta['design'])
        err = np.abs(model.next_token_probs(X) - want)[:, model.meta['exact_from'] - 1:].max()
        assert (err < 1e-9) == ok


def test_temperature_and_log_output(rng):
    P = sel.transition_matrix(4, rng)
    x, _ = sel.sample_sequence(P, LAGS, 30, rng)
    a = sel.build_selective_induction(P, LAGS, 30, beta=5.0).run(x)
    b = sel.build_selective_induction(P, LAGS, 30, beta=5.0, temperature=4.0).run(x)
    np.testing.assert_allclose(a['probs'], b['probs'], atol=1e-12)
    g = sel.build_selective_induction(P, LAGS, 30, beta=5.0, output='log').run(x)
    want = np.exp(a['attn'][2][0][8:] @ np.log(P)[x])     # the geometric mixture of the rows
    np.testing.assert_allclose(g['probs'][8:], want / want.sum(-1, keepdims=True), atol=1e-10)


def test_dense_matrices_match_the_blocks():
    model = sel.build_selective_induction(ex.P, LAGS, 10, beta=2.0)
    A1 = model.matrix(0, 0)
    np.testing.assert_allclose(A1[:3, :3], np.log(ex.P).T)
    i, j = 5, 2                                 # 1-based; i - j = 3 is a lag
    assert A1[3 + i - 1, 3 + j - 1] == 500 and A1[3 + i - 1, 3 + i - 1] == -500
    A3 = model.matrix(2, 0)
    assert A3.shape == (104, 104)
    assert A3[3 + 9, 3 + 7] == 500 and A3[3 + 9, 3 + 6] == -500    # band: i - j + 1 a lag


def test_layer1_stores_ptil_in_slot_i_minus_k_exhaustively():
    """Every sequence of length 6 over 2 tokens."""
    P = np.array([[.6, .4], [.25, .75]])
    lags = (1, 2)
    model = sel.build_selective_induction(P, lags, 6, beta=1.0)
    X = np.array(list(itertools.product(range(2), repeat=6)))
    stored = model.run(X)['resid'][1][..., model.meta['slots']['l1']]
    ptil = sel.normalised_transitions(P, lags, X)
    want = np.zeros_like(stored)
    for i in range(3, 7):                       # 1-based positions past kmax = 2
        for c, k in enumerate(lags):
            want[:, i - 1, i - k - 1] = ptil[:, i - 1, c]
    np.testing.assert_allclose(stored[:, 2:], want[:, 2:], atol=1e-12)


def test_layer2_rows_are_uniform_on_the_classes(rng):
    P = sel.transition_matrix(3, rng)
    for lags in ((1, 2, 3), (1, 3), (3, 5, 7)):
        model = sel.build_selective_induction(P, lags, 30, beta=1.0)
        design, kmax = model.meta['design'], max(lags)
        x, _ = sel.sample_sequence(P, lags, 30, rng)
        w = model.run(x)['attn'][1]
        for h, cls in enumerate(design.classes):
            for i in range(kmax + 1 + min(cls), 31):
                members = [j for j in range(kmax + 1, i + 1) if (i - j) % design.period in cls]
                want = np.zeros(30)
                want[np.array(members) - 1] = 1 / len(members)
                np.testing.assert_allclose(w[h, i - 1], want, atol=1e-12)


# ----------------------------------------------------------------------------- the book port

@pytest.mark.parametrize('lags, kw', [((1, 2, 3), {}), ((1, 3, 4), {}), ((1, 3), {}),
                                      ((2, 5), {'heads': 1})])
def test_book_port_runs_the_network_on_the_books_forward_pass(lags, kw, rng):
    """The paper's network (own small forward) and the port (taotp.trace) agree, with and
    without layer norms; the port's logits are the geometric mixture (output='log')."""
    P = sel.transition_matrix(5, rng)
    T = 40
    x, _ = sel.sample_sequence(P, lags, T, rng)
    ref = sel.build_selective_induction(P, lags, T, output='log', **kw).run(x)
    for norm in ('none', 'layer'):
        params = sel.book_params(P, lags, T, norm=norm, **kw)
        t = taotp.trace(x, params, norm=norm)
        for a, b in zip(t.attn, ref['attn']):
            assert np.abs(a - b).max() < 1e-7
        assert np.abs(taotp.softmax(t.logits) - ref['probs']).max() < 1e-7
    H = len(sel.plan_heads(lags, **kw).classes)
    assert taotp.config(params)['d_model'] == 2 * 5 + 2 * T + 2 + 2 * T * H
    assert sel.book_layout(5, T, H).d_model == taotp.config(params)['d_model']


@pytest.mark.parametrize('norm', ['none', 'layer'])
def test_book_port_on_the_independent_reference(norm):
    params = sel.book_params(ex.P, ex.LAGS, 10, beta=10.0, norm=norm)
    want = sel.build_selective_induction(ex.P, ex.LAGS, 10, beta=10.0, output='log')
    ref = naive_transformer(ex.TOKENS, **params, norm=norm)
    np.testing.assert_allclose(taotp.softmax(ref), want.next_token_probs(ex.TOKENS), atol=1e-7)


def test_catalogue_row_is_the_port():
    from taotp.programs import CATALOGUE
    params = CATALOGUE['selective-123-T64'].build()
    P = sel.transition_matrix(3, np.random.default_rng(0))
    assert taotp.params_equal(params, sel.book_params(P, (1, 2, 3), 64))


# ----------------------------------------------------------------------------- errors

def test_error_paths(rng):
    P = sel.transition_matrix(3, rng)
    Z = P.copy()
    Z[0] = [0.0, 0.5, 0.5]
    with pytest.raises(ValueError, match=r'entries must be > 0 .*P\[0, 0\] = 0'):
        sel.build_selective_induction(Z, LAGS, 10)
    with pytest.raises(ValueError, match='rows must sum to 1; got row 0'):
        sel.bma_predictive(P * [[2.0], [1.0], [1.0]], LAGS, ex.TOKENS)
    with pytest.raises(ValueError, match=r'square with S >= 2; got shape \(3, 2\)'):
        sel.stationary(P[:, :2])
    with pytest.raises(ValueError, match=r'lag set must be non-empty; got \[\]'):
        sel.sample_sequence(P, [], 10, rng)
    with pytest.raises(ValueError, match='lags must be >= 1; got 0'):
        sel.bma_predictive(P, (0, 1), ex.TOKENS)
    with pytest.raises(ValueError, match='lags must be distinct'):
        sel.plan_heads((1, 1, 2))
    with pytest.raises(TypeError, match='lags must be integers'):
        sel.plan_heads((1, 2.5))
    with pytest.raises(ValueError, match='largest lag must be < T; got max lag 10 with T = 10'):
        sel.build_selective_induction(P, (1, 10), 10)
    with pytest.raises(ValueError, match=r'tokens must lie in 0\.\.2; got 0\.\.5'):
        sel.bma_predictive(P, LAGS, np.array([0, 5, 1, 2]))
    with pytest.raises(ValueError, match='heads must be at most 3'):
        sel.build_selective_induction(P, LAGS, 20, heads=4)
    with pytest.raises(ValueError, match='share a slot; got head 0: residues 0, 0 differ by 0 '
                                         r'= lags 1 - 4 \(mod 3\)'):
        sel.plan_heads((1, 3, 4), period=3, classes=[(0,), (1,), (2,)])
    with pytest.raises(ValueError, match='main third layer needs one residue per head'):
        sel.plan_heads((1, 3), period=4, classes=[(0, 1), (2, 3)], variant='main')
    with pytest.raises(ValueError, match='pair variant needs exactly two lags'):
        sel.plan_heads((1, 2, 3), variant='pair')
    with pytest.raises(ValueError, match='variant must be one of'):
        sel.plan_heads((1, 2), variant='fancy')
    with pytest.raises(ValueError, match='lam must be > 0; got -1'):
        sel.build_selective_induction(P, LAGS, 10, lam=-1.0)
    with pytest.raises(ValueError, match='beta must be a finite number'):
        sel.build_selective_induction(P, LAGS, 10, beta=np.nan)
    with pytest.raises(ValueError, match=r'need 2\*lam > log T \+ log\(pmax/pmin\)'):
        sel.build_selective_induction(np.array([[1e-6, 1 - 1e-6], [.5, .5]]), (1,), 4,
                                      lam=5.0, beta=0.0)
    with pytest.raises(ValueError, match='temperature must be > 0; got 0'):
        sel.build_selective_induction(P, LAGS, 10, temperature=0)
    with pytest.raises(ValueError, match="output must be one of .*; got 'probs'"):
        sel.build_selective_induction(P, LAGS, 10, output='probs')
    with pytest.raises(ValueError, match="book_params: norm must be one of .*; got 'rms'"):
        sel.book_params(P, LAGS, 10, norm='rms')
    with pytest.raises(ValueError, match='S must be an integer >= 2; got 1'):
        sel.transition_matrix(1, rng)
    with pytest.raises(TypeError, match='transition_matrix: rng must be a numpy Generator'):
        sel.transition_matrix(3, 7)
    with pytest.raises(TypeError, match=r'sample_batch: rng must be a numpy Generator .*; got int'):
        sel.sample_batch(P, LAGS, 10, 2, rng=7)
    model = sel.build_selective_induction(P, LAGS, 10)
    with pytest.raises(ValueError, match=r'sequence length must be in 1\.\.10; got 11'):
        model.next_token_probs(np.zeros(11, dtype=int))
    with pytest.raises(ValueError, match=r'sample_sequence: lag must be one of \[1, 2, 3\]; got 4'):
        sel.sample_sequence(P, LAGS, 10, rng, lag=4)


# ----------------------------------------------------------------------------- figures

def test_figures_draw_their_panels(rng):
    P = sel.transition_matrix(4, rng)
    fig = taotp.plot.figure((6, 3))
    sel.draw_data(fig, P, '{1,3}', 'largest', 24, 0)
    assert len(fig.axes) == 4 and 'true lag 3' in fig.axes[0].get_title()
    fig = taotp.plot.figure((6, 3))
    sel.draw_subchains(fig, P, (1, 2), T=16)
    assert len(fig.axes) == 2
    fig = taotp.plot.figure((6, 3))
    sel.draw_hardening(fig, P, lam=2.0, beta=20.0, T=16, n=4)
    assert 'leaks' in fig._suptitle.get_text() and fig._suptitle.get_color() == 'red'
    fig = taotp.plot.figure((6, 3))
    sel.draw_kl(fig, [('a', 3, {'BMA': np.ones(10), 'x': np.ones(10)}), ('b', 2, {})])
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 2
