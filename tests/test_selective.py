"""Chapter 10: interleaved Markov chains and the selective-induction construction."""
import numpy as np
import pytest

import taotp
from taotp import selective as sel

# the hand-checkable example of the spec (section 4.9)
P3 = np.array([[.7, .2, .1], [.1, .7, .2], [.2, .1, .7]])
X10 = np.array([2, 0, 1, 2, 0, 0, 2, 1, 1, 2])
LAGS = (1, 2, 3)


# ----------------------------------------------------------------------------- reference

def ref_ptil(P, lags, x):
    """Plain-Python normalised transition probabilities, 1-based dict {(i, k): value}."""
    out = {}
    for i in range(1, len(x) + 1):
        valid = [k for k in lags if k < i]
        tot = sum(P[x[i - k - 1], x[i - 1]] for k in valid)
        for k in valid:
            out[i, k] = P[x[i - k - 1], x[i - 1]] / tot
    return out


def ref_design_prediction(P, lags, x, beta, period, classes, i):
    """Loop version of the finite-T formula at 1-based query i (main/positional)."""
    kmax = max(lags)
    pt = ref_ptil(P, lags, x)
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


# ----------------------------------------------------------------------------- the test vector

def test_vector_ptil_and_likelihoods():
    ptil = sel.normalised_transitions(P3, LAGS, X10)
    want = [[.2, .1, .7], [.2, .1, .7], [.7, .2, .1], [1 / 9, 1 / 9, 7 / 9], [.2, .4, .4],
            [.7, .1, .2], [2 / 11, 2 / 11, 7 / 11]]
    np.testing.assert_allclose(ptil[3:], want, atol=1e-12)
    pt = ref_ptil(P3, LAGS, X10)
    for (i, k), v in pt.items():
        assert ptil[i - 1, LAGS.index(k)] == pytest.approx(v)
    np.testing.assert_allclose(sel.log_likelihoods(P3, LAGS, X10)[-1],
                               [-10.1468, -14.0387, -6.9482], atol=1e-4)


def test_vector_bma_and_prop1():
    np.testing.assert_allclose(sel.lag_posterior(P3, LAGS, X10)[-1], [.0392, .0008, .9600],
                               atol=1e-4)
    np.testing.assert_allclose(sel.bma_predictive(P3, LAGS, X10)[-1], [.1039, .6765, .2196],
                               atol=1e-4)
    # Prop. 1 with beta = 3: weights (.3019, .1884, .5096)
    w = sel.prop1_weights(P3, LAGS, X10, 3.0)[-1]
    np.testing.assert_allclose(w, [.3019, .1884, .5096], atol=1e-4)
    np.testing.assert_allclose(sel.prop1_predictive(P3, LAGS, X10, 3.0)[-1],
                               w @ P3[X10[[9, 8, 7]]])
    # ... which is not what the beta_c = 1 network computes (class sizes 3, 2, 2)
    net = sel.construction_weights(P3, LAGS, X10, 1.0)[-1]
    np.testing.assert_allclose(net, [.3342, .1961, .4697], atol=1e-4)


@pytest.mark.parametrize('beta, weights, output', [
    (1.0, (.3342, .1961, .4697), (.1334, .4995, .3671)),
    (10.0, (.0322, .0002, .9677), (.1032, .6807, .2161)),
])
def test_vector_network(beta, weights, output):
    m = sel.build_selective_induction(P3, LAGS, 10, lam=500.0, beta=beta)
    run = m.run(X10)
    # layer-3 row of query 10 puts the lag weights on keys 10, 9, 8 (lags 1, 2, 3)
    np.testing.assert_allclose(run['attn'][2][0, 9, [9, 8, 7]], weights, atol=1e-4)
    np.testing.assert_allclose(run['probs'][-1], output, atol=1e-4)
    if beta == 1.0:
        np.testing.assert_allclose(run['scores'][2][0, 9, [9, 8, 7]] - 500,
                                   [1.0643, 0.5310, 1.4047], atol=1e-4)
    assert m.widths == [13, 26, 104, 208]


def test_widths_and_counts_match_spec():
    rng = np.random.default_rng(0)
    P = sel.transition_matrix(5, rng)
    m = sel.build_selective_induction(P, LAGS, 10)
    assert m.widths == [15, 30, 120, 240]
    assert m.count_nonzero() == {'layer1': 125, 'layer2': 300, 'layer3': 199, 'readout': 25}


@pytest.mark.slow
def test_counts_at_T128():
    rng = np.random.default_rng(0)
    P = sel.transition_matrix(5, rng)
    m3 = sel.build_selective_induction(P, LAGS, 128)
    assert m3.widths == [133, 266, 1064, 2128]
    assert m3.count_nonzero() == {'layer1': 16409, 'layer2': 49152, 'layer3': 32767,
                                  'readout': 25}
    m5 = sel.build_selective_induction(P, (1, 2, 3, 4, 5), 128)
    assert m5.widths[2] == 1596
    assert m5.count_nonzero() == {'layer1': 16409, 'layer2': 81920, 'layer3': 32769,
                                  'readout': 25}


# ----------------------------------------------------------------------------- data

def test_transition_matrix_and_stationary(rng):
    for alpha in (None, 2.0, 0.5):
        P = sel.transition_matrix(6, rng, alpha)
        assert P.shape == (6, 6) and np.all(P > 0)
        np.testing.assert_allclose(P.sum(1), 1, atol=1e-12)
        pi = sel.stationary(P)
        np.testing.assert_allclose(pi @ P, pi, atol=1e-12)
        assert pi.sum() == pytest.approx(1)
    a = sel.transition_matrix(4, np.random.default_rng(5))
    b = sel.transition_matrix(4, np.random.default_rng(5))
    assert np.array_equal(a, b)


def test_sampler_laws(rng):
    P = sel.transition_matrix(3, rng)
    pi = sel.stationary(P)
    lags = (1, 3)
    X, true = sel.sample_batch(P, lags, 12, 20000, rng)
    assert set(np.unique(true)) == {1, 3}
    assert abs((true == 1).mean() - 0.5) < 0.02
    # warm-up tokens (positions 1..kmax) are i.i.d. pi, whatever the lag
    for t in range(3):
        freq = np.bincount(X[:, t], minlength=3) / len(X)
        assert np.abs(freq - pi).max() < 0.02
    # later tokens follow P[x_{t-k}]
    sel1 = X[true == 1]
    pairs = np.zeros((3, 3))
    np.add.at(pairs, (sel1[:, 5], sel1[:, 6]), 1)
    np.testing.assert_allclose(pairs / pairs.sum(1, keepdims=True), P, atol=0.03)
    tokens, lag = sel.sample_sequence(P, lags, 20, np.random.default_rng(3))
    assert tokens.shape == (20,) and lag in lags and tokens.dtype == np.int64
    again = sel.sample_sequence(P, lags, 20, np.random.default_rng(3))
    assert np.array_equal(tokens, again[0]) and lag == again[1]
    tokens, lag = sel.sample_sequence(P, lags, 20, rng, lag=3)
    assert lag == 3 and np.all(tokens >= 0) and np.all(tokens < 3)


def test_bma_properties(rng):
    P = sel.transition_matrix(5, rng)
    lags = (1, 2, 3)
    X, true = sel.sample_batch(P, lags, 64, 400, rng)
    w = sel.lag_posterior(P, lags, X)
    np.testing.assert_allclose(w.sum(-1), 1)
    np.testing.assert_allclose(w[:, 2], 1 / 3)            # t + 1 = kmax: uniform
    bma = sel.bma_predictive(P, lags, X)
    np.testing.assert_allclose(bma[:, :2], np.broadcast_to(sel.stationary(P), (400, 2, 5)))
    truth = sel.true_predictive(P, lags, X, true)
    ml = sel.ml_predictive(P, lags, X)
    kl_b = sel.kl_curve(truth, bma)[2:].mean()
    kl_m = sel.kl_curve(truth, ml)[2:].mean()
    assert kl_b < kl_m
    # single-sequence API gives the (T, S) rows of the batch version
    np.testing.assert_allclose(sel.bma_predictive(P, lags, X[7]), bma[7])


def test_ml_tie_rule():
    # at t + 1 = kmax every lag ties: the uniform mixture of candidate rows
    ml = sel.ml_predictive(P3, LAGS, X10)
    np.testing.assert_allclose(ml[2], P3[X10[[2, 1, 0]]].mean(0))
    assert np.all(sel.ml_lags(P3, LAGS, X10)[2] == 1)
    # afterwards lag 3 is the MLE on the test vector
    np.testing.assert_allclose(ml[-1], P3[X10[7]])


def test_kl_divergence():
    p = np.array([0.5, 0.5, 0.0])
    assert sel.kl_divergence(p, p) == 0
    assert sel.kl_divergence(p, np.array([0.25, 0.5, 0.25])) == pytest.approx(0.5 * np.log(2))


# ----------------------------------------------------------------------------- the construction

CASES = [   # (lags, builder kwargs, S, T)
    ((1, 2, 3), {}, 5, 64),
    ((1, 2, 3, 4, 5), {}, 3, 48),
    ((2, 3, 4, 5), {}, 7, 40),
    ((1, 3), {}, 5, 40),                       # non-contiguous, period 4, pairs of residues
    ((1, 3, 4), {}, 4, 48),                    # non-contiguous, period 4, four heads
    ((3, 5, 7), {}, 2, 48),                    # non-contiguous, period 3, three heads
    ((1, 3, 4), {'period': 8, 'classes': [(0, 4), (1, 5), (2, 6), (3, 7)]}, 5, 40),
    ((1, 2, 3), {'variant': 'positional'}, 5, 40),
    ((1, 2, 3), {'heads': 1}, 5, 40),          # fewer heads than lags
    ((1, 2, 3, 4, 5), {'heads': 2}, 3, 40),
    ((1, 3), {'heads': 1}, 5, 40),             # two lags, one head (App. H)
    ((2, 5), {'heads': 1}, 4, 40),             # ... the case the paper's rule gets wrong
    ((2, 4), {'heads': 1}, 3, 40),
]


@pytest.mark.parametrize('lags, kw, S, T', CASES)
def test_network_equals_finite_T_formula(lags, kw, S, T):
    rng = np.random.default_rng(hash((lags, S, T)) % 2 ** 32)
    P = sel.transition_matrix(S, rng)
    for beta in (1.0, 7.0, 40.0):
        m = sel.build_selective_induction(P, lags, T, lam=500.0, beta=beta, **kw)
        X, _ = sel.sample_batch(P, lags, T, 5, rng)
        got = m.next_token_probs(X)
        want = sel.construction_predictive(P, lags, X, beta, m.meta['design'])
        e = m.meta['exact_from']
        assert np.abs(got - want)[:, e - 1:].max() < 1e-6
        np.testing.assert_allclose(got.sum(-1), 1, atol=1e-12)


def test_network_equals_formula_at_T256(rng):
    for lags in ((1, 2, 3), (1, 3)):
        P = sel.transition_matrix(5, rng)
        m = sel.build_selective_induction(P, lags, 256, beta=20.0)
        X, _ = sel.sample_batch(P, lags, 256, 2, rng)
        got = m.next_token_probs(X)
        want = sel.construction_predictive(P, lags, X, 20.0, m.meta['design'])
        assert np.abs(got - want)[:, m.meta['exact_from'] - 1:].max() < 1e-6


def test_formula_matches_plain_loop(rng):
    P = sel.transition_matrix(4, rng)
    for lags, period, classes in (((1, 2, 3), 3, ((0,), (1,), (2,))), ((1, 3), 4, ((0, 1), (2, 3))),
                                  ((3, 5, 7), 3, ((0,), (1,), (2,)))):
        x, _ = sel.sample_sequence(P, lags, 30, rng)
        design = sel.plan_heads(lags, period=period, classes=classes)
        fast = sel.construction_predictive(P, lags, x, 5.0, design)
        for i in range(max(lags), 31):
            np.testing.assert_allclose(fast[i - 1], ref_design_prediction(
                P, lags, x, 5.0, period, classes, i), atol=1e-12)


def test_exact_from_is_tight(rng):
    P = sel.transition_matrix(5, rng)
    m = sel.build_selective_induction(P, LAGS, 40, beta=50.0)
    assert m.meta['exact_from'] == 2 * 3 + 3 - 1
    X, _ = sel.sample_batch(P, LAGS, 40, 50, rng)
    err = np.abs(m.next_token_probs(X) - sel.construction_predictive(P, LAGS, X, 50.0))
    assert err[:, 6].max() > 1e-6        # query 7: some keys still read fallback rows


def test_prop1_equality_when_classes_balance(rng):
    """Construction with beta_c equals Prop. 1 with beta = K * beta_c iff (i - kmax) % K == 0."""
    for lags in ((1, 2, 3), (1, 2, 3, 4, 5), (2, 3, 4, 5)):
        K, kmax = len(lags), max(lags)
        P = sel.transition_matrix(5, rng)
        m = sel.build_selective_induction(P, lags, 60, beta=4.0)
        X, _ = sel.sample_batch(P, lags, 60, 4, rng)
        net = m.next_token_probs(X)
        prop = sel.prop1_predictive(P, lags, X, K * 4.0)
        i = np.arange(1, 61)
        rows = (i >= m.meta['exact_from']) & ((i - kmax) % K == 0)
        assert np.abs(net - prop)[:, rows].max() < 1e-10
        other = (i >= m.meta['exact_from']) & ((i - kmax) % K != 0)
        assert np.abs(net - prop)[:, other].max() > 1e-6


def test_converges_to_ml_as_beta_grows(rng):
    P = sel.transition_matrix(5, rng)
    X, true = sel.sample_batch(P, LAGS, 96, 300, rng)
    ml = sel.ml_predictive(P, LAGS, X)
    gaps = []
    for beta in (1.0, 10.0, 100.0, 1000.0):
        pred = sel.prop1_predictive(P, LAGS, X, beta)
        gaps.append(sel.kl_curve(ml, pred)[60:].mean())
    assert all(a > b for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-3
    # and the network (exact formula) at a huge beta copies the parent of argmax score
    m = sel.build_selective_induction(P, LAGS, 96, lam=5000.0, beta=2000.0)
    net = m.next_token_probs(X[:3])
    assert np.abs(net[:, 60:] - ml[:3, 60:]).max() < 0.05


def test_pair_single_head_equals_two_heads(rng):
    P = sel.transition_matrix(5, rng)
    one = sel.build_selective_induction(P, (1, 3), 48, heads=1, beta=30.0)
    two = sel.build_selective_induction(P, (1, 3), 48, beta=30.0)
    assert one.heads() == [1, 1, 1] and two.heads() == [1, 2, 1]
    X, _ = sel.sample_batch(P, (1, 3), 48, 4, rng)
    start = max(one.meta['exact_from'], two.meta['exact_from']) - 1
    assert np.abs(one.next_token_probs(X) - two.next_token_probs(X))[:, start:].max() < 1e-12


def test_plan_heads_designs():
    d = sel.plan_heads((1, 2, 3))
    assert (d.period, d.classes, d.variant) == (3, ((0,), (1,), (2,)), 'main')
    d = sel.plan_heads((1, 3))
    assert (d.period, d.classes, d.variant) == (4, ((0, 1), (2, 3)), 'positional')
    d = sel.plan_heads((1, 3, 4))
    assert (d.period, len(d.classes)) == (4, 4)
    d = sel.plan_heads((3, 5, 7))
    assert (d.period, len(d.classes)) == (3, 3)      # fewer than the fallback's 5
    d = sel.plan_heads((2, 5))
    assert (d.period, len(d.classes)) == (2, 2)
    d = sel.plan_heads((2, 5), heads=1)
    assert (d.period, d.classes, d.variant) == (6, ((0, 1, 2),), 'pair')
    d = sel.plan_heads((1, 2), heads=1, variant='main')
    assert (d.period, d.classes, d.variant) == (2, ((0,),), 'main')
    assert sel.design_problems((1, 3, 4), 3, ((0,), (1,), (2,)))     # 1 = 4 mod 3


def test_alpha_and_log_output(rng):
    P = sel.transition_matrix(4, rng)
    x, _ = sel.sample_sequence(P, LAGS, 30, rng)
    a = sel.build_selective_induction(P, LAGS, 30, beta=5.0).run(x)
    b = sel.build_selective_induction(P, LAGS, 30, beta=5.0, alpha=4.0).run(x)
    np.testing.assert_allclose(a['probs'], b['probs'], atol=1e-12)
    g = sel.build_selective_induction(P, LAGS, 30, beta=5.0, output='log').run(x)
    w = a['attn'][2][0]
    want = np.exp(w[8:] @ np.log(P)[x])       # geometric mixture of the rows
    want /= want.sum(-1, keepdims=True)
    np.testing.assert_allclose(g['probs'][8:], want, atol=1e-10)


def test_dense_matrices_match_blocks():
    m = sel.build_selective_induction(P3, LAGS, 10, beta=2.0)
    A1 = m.matrix(0, 0)
    np.testing.assert_allclose(A1[:3, :3], np.log(P3).T)
    i, j = 5, 2                                 # 1-based; i - j = 3 is a lag
    assert A1[3 + i - 1, 3 + j - 1] == 500 and A1[3 + i - 1, 3 + i - 1] == -500
    A3 = m.matrix(2, 0)
    assert A3.shape == (104, 104)
    # positional band shifted by one: i - j + 1 in lags
    assert A3[3 + 9, 3 + 7] == 500 and A3[3 + 9, 3 + 6] == -500


# ----------------------------------------------------------------------------- constants

def test_safety_margin_range(rng):
    """The guaranteed rule (2 lam > beta H + log T) is sufficient, not necessary.

    Measured (S = 5, T = 40, lags 1..3, beta = 20): the network leaves the formula by
    1e-3 at lam = 5, 3e-6 at lam = 8 and < 1e-12 from lam = 15, long before the bound
    (lam > 31.8) is met; lam = 50 (margin 36) is the smallest value we build by default.
    """
    P = sel.transition_matrix(5, rng)
    X, _ = sel.sample_batch(P, LAGS, 40, 6, rng)
    beta = 20.0
    want = sel.construction_predictive(P, LAGS, X, beta)
    errs = {}
    for lam in (5.0, 8.0, 15.0, 50.0, 500.0):
        m = sel.build_selective_induction(P, LAGS, 40, lam=lam, beta=beta, strict=lam >= 50)
        errs[lam] = np.abs(m.next_token_probs(X) - want)[:, 7:].max()
    assert errs[5.0] > 1e-4 and 1e-7 < errs[8.0] < 1e-4
    assert errs[15.0] < 1e-10 and errs[50.0] < 1e-12 and errs[500.0] < 1e-12
    with pytest.raises(ValueError, match=r'need 2\*lam > beta\*H \+ log T'):
        sel.build_selective_induction(P, LAGS, 40, lam=30.0, beta=beta)
    soft = sel.build_selective_induction(P, LAGS, 40, lam=30.0, beta=beta, strict=False)
    assert soft.meta['margins']['layer3'] < 0


def test_margins_readout():
    m = sel.safety_margins(P3, 10, 500.0, 100.0, 3)
    assert m['layer3'] == pytest.approx(1000 - 300 - np.log(10))
    assert m['layer1'] == pytest.approx(1000 - np.log(10) - np.log(7))
    assert sel.safety_margins(P3, 10, 500.0, 100.0, 1, 'pair')['layer3'] == pytest.approx(
        1000 - 200 - np.log(10))


# ----------------------------------------------------------------------------- book format

@pytest.mark.parametrize('lags, kw', [((1, 2, 3), {}), ((1, 3, 4), {}), ((1, 3), {}),
                                      ((2, 5), {'heads': 1})])
def test_book_format_agrees(lags, kw, rng):
    P = sel.transition_matrix(5, rng)
    T = 40
    x, _ = sel.sample_sequence(P, lags, T, rng)
    ref = sel.build_selective_induction(P, lags, T, output='log', **kw).run(x)
    for layer_norm in (False, True):
        params = sel.book_params(P, lags, T, layer_norm=layer_norm, **kw)
        probs, attn = sel.book_forward(x, params, layer_norm=layer_norm)
        for a, b in zip(attn, ref['attn']):
            assert np.abs(a - b).max() < 1e-7
        assert np.abs(probs - ref['probs']).max() < 1e-7
    logits = taotp.transformer(x, **params)                    # the validated PreLN path
    np.testing.assert_allclose(taotp.softmax(logits), probs, atol=1e-12)
    assert taotp.config(params)['d_model'] == 2 * 5 + 2 * T + 2 + 2 * T * len(
        sel.plan_heads(lags, **kw).classes)


# ----------------------------------------------------------------------------- errors

def test_error_paths(rng):
    P = sel.transition_matrix(3, rng)
    Z = P.copy()
    Z[0] = [0.0, 0.5, 0.5]
    with pytest.raises(ValueError, match=r'entries must be > 0 .*P\[0, 0\] = 0'):
        sel.build_selective_induction(Z, LAGS, 10)
    with pytest.raises(ValueError, match='rows must sum to 1; got row 0'):
        sel.bma_predictive(P * [[2.0], [1.0], [1.0]], LAGS, X10)
    with pytest.raises(ValueError, match=r'square with S >= 2; got shape \(3, 2\)'):
        sel.stationary(P[:, :2])
    with pytest.raises(ValueError, match=r'lag set must be non-empty; got \[\]'):
        sel.sample_sequence(P, [], 10, rng)
    with pytest.raises(ValueError, match='lags must be >= 1; got 0'):
        sel.bma_predictive(P, (0, 1), X10)
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
    with pytest.raises(ValueError, match="variant must be one of"):
        sel.plan_heads((1, 2), variant='fancy')
    with pytest.raises(ValueError, match='lam must be > 0; got -1'):
        sel.build_selective_induction(P, LAGS, 10, lam=-1.0)
    with pytest.raises(ValueError, match='beta must be a finite number'):
        sel.build_selective_induction(P, LAGS, 10, beta=np.nan)
    with pytest.raises(ValueError, match='need 2\\*lam > log T \\+ log\\(pmax/pmin\\)'):
        sel.build_selective_induction(np.array([[1e-6, 1 - 1e-6], [.5, .5]]), (1,), 4,
                                      lam=5.0, beta=0.0)
    with pytest.raises(ValueError, match='S must be an integer >= 2; got 1'):
        sel.transition_matrix(1, rng)
    with pytest.raises(TypeError, match='rng must be a numpy Generator'):
        sel.transition_matrix(3, 7)
    m = sel.build_selective_induction(P, LAGS, 10)
    with pytest.raises(ValueError, match=r'sequence length must be in 1\.\.10; got 11'):
        m.next_token_probs(np.zeros(11, dtype=int))
    with pytest.raises(ValueError, match='lag must be one of'):
        sel.sample_sequence(P, LAGS, 10, rng, lag=4)


def test_figures_and_helpers(rng):
    P = sel.transition_matrix(4, rng)
    x, k = sel.sample_sequence(P, (1, 3), 24, rng)
    fig = sel.explorer_figure(P, (1, 3), x, k)
    assert len(fig.axes) == 4
    fig = sel.hardening_figure(P, (1, 2, 3), 16, 2.0, 20.0, n=4)
    assert 'LEAKS' in fig._suptitle.get_text()
    assert sel.parse_lags('{1, 3,4}') == (1, 3, 4)
    with pytest.raises(ValueError, match='parse_lags: expected comma-separated integers'):
        sel.parse_lags('1, x')
    rows = sel.design_table((3, 5, 7))
    assert [r[3] for r in rows] == [3, 5]


def test_layer1_exhaustive_tiny():
    """Every sequence of length 6 over 2 tokens: layer 1 stores ptil[i, k] in slot i - k."""
    import itertools
    P = np.array([[.6, .4], [.25, .75]])
    lags = (1, 2)
    m = sel.build_selective_induction(P, lags, 6, beta=1.0)
    X = np.array(list(itertools.product(range(2), repeat=6)))
    l1 = m.run(X)['resid'][1][..., m.meta['slots']['l1']]
    ptil = sel.normalised_transitions(P, lags, X)
    want = np.zeros_like(l1)
    for i in range(3, 7):                       # 1-based positions past kmax = 2
        for c, k in enumerate(lags):
            want[:, i - 1, i - k - 1] = ptil[:, i - 1, c]
    np.testing.assert_allclose(l1[:, 2:], want[:, 2:], atol=1e-12)


def test_layer2_rows_are_uniform_on_classes(rng):
    P = sel.transition_matrix(3, rng)
    for lags in ((1, 2, 3), (1, 3), (3, 5, 7)):
        m = sel.build_selective_induction(P, lags, 30, beta=1.0)
        d = m.meta['design']
        x, _ = sel.sample_sequence(P, lags, 30, rng)
        w = m.run(x)['attn'][1]
        kmax = max(lags)
        for h, cls in enumerate(d.classes):
            for i in range(kmax + 1 + min(cls), 31):
                members = [j for j in range(kmax + 1, i + 1) if (i - j) % d.period in cls]
                want = np.zeros(30)
                want[np.array(members) - 1] = 1 / len(members)
                np.testing.assert_allclose(w[h, i - 1], want, atol=1e-12)
