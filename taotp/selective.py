"""Chapter 10: selective induction heads on interleaved Markov chains.

A lag-``k`` source weaves ``k`` independent copies of one Markov chain (kernel ``P``)
together: the token at position ``t`` is drawn from row ``P[x_{t-k}]``.  Each sequence
picks its lag uniformly from a set ``lags`` and keeps it hidden; a predictor must work
out in context which lag is active.  This module holds

* the data: ``transition_matrix``, ``stationary``, ``sample_sequence``, ``sample_batch``;
* the predictors: per-lag log-likelihoods, the Bayes-optimal average (``bma_predictive``),
  maximum likelihood (``ml_predictive``), the normalised transition probabilities
  (``normalised_transitions``), Proposition 1 (``prop1_predictive``) and the exact
  finite-length form that the network computes (``construction_predictive``), KL metrics;
* the network: a *disentangled* attention-only transformer (``DisentangledTransformer``:
  one-hot token and position inputs, residual update by concatenation, one square matrix
  per head) and the three-layer construction (``build_selective_induction``) with all the
  head designs of the chapter (``plan_heads``);
* the same network in the book's params format (``book_params``), with or without the
  PreLN layer norms.

Conventions.  Arrays are 0-based: row ``t`` of every ``(T, S)`` predictor output is the
law of the next token after the first ``t + 1`` tokens, i.e. the query at 1-based
position ``i = t + 1``.  Masks and residue classes are stated with 1-based positions
``i`` (query) and ``j`` (key), as in the chapter.  All constants are float64.
"""
from collections import namedtuple
from itertools import combinations

import numpy as np

from .model import forward, layer_norm
from .params import base_layer, base_params
from .residual import Layout

__all__ = [
    'transition_matrix', 'stationary', 'check_transition_matrix', 'check_lags',
    'sample_sequence', 'sample_batch',
    'transition_logprobs', 'log_likelihoods', 'lag_posterior', 'bma_predictive',
    'ml_lags', 'ml_predictive', 'true_predictive', 'candidate_rows',
    'normalised_transitions', 'prop1_weights', 'prop1_predictive',
    'construction_weights', 'construction_predictive',
    'kl_divergence', 'kl_curve',
    'Design', 'plan_heads', 'check_design', 'design_problems', 'exact_from',
    'safety_margins', 'check_constants',
    'DisentangledTransformer', 'build_selective_induction', 'layer_matrices',
    'book_params', 'book_forward', 'book_layout', 'pair_evidence_block',
    'PRESETS', 'new_figure', 'parse_lags', 'draw_strip', 'draw_evidence', 'explorer_figure', 'draw_kl',
    'kl_figure', 'margin_readout', 'hardening_figure', 'design_table',
]

TIE_TOL = 1e-9   # ML: lags whose log-likelihood is within this of the best are tied


# ============================================================================ data

def transition_matrix(S, rng, alpha=None):
    """A random strictly positive row-stochastic ``S x S`` matrix.

    The paper does not say how its matrices were drawn; our rule (the spec's
    recommendation, which reproduces the paper's Claim-1 statistics): every row holds
    i.i.d. Uniform(0, 1) entries divided by their sum.  ``alpha`` switches to rows drawn
    from a symmetric Dirichlet(alpha).
    """
    if isinstance(S, bool) or not isinstance(S, (int, np.integer)) or S < 2:
        raise ValueError(f'transition_matrix: S must be an integer >= 2; got {S!r}')
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'transition_matrix: rng must be a numpy Generator; '
                        f'got {type(rng).__name__}')
    if alpha is None:
        rows = rng.random((S, S))
        rows = np.where(rows > 0, rows, np.finfo(float).tiny)
    else:
        if not np.isfinite(alpha) or alpha <= 0:
            raise ValueError(f'transition_matrix: alpha must be a positive number; got {alpha!r}')
        rows = rng.dirichlet(np.full(S, float(alpha)), size=S)
        rows = np.maximum(rows, 1e-300)
    return rows / rows.sum(axis=1, keepdims=True)


def check_transition_matrix(P, where='P'):
    """Return ``P`` as float64 after checking: square, finite, rows sum to 1, entries > 0."""
    try:
        arr = np.asarray(P, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f'{where}: transition matrix must be a numeric array; '
                        f'got {type(P).__name__}') from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 2:
        raise ValueError(f'{where}: transition matrix must be square with S >= 2; '
                         f'got shape {arr.shape}')
    if not np.all(np.isfinite(arr)):
        raise ValueError(f'{where}: transition matrix must be finite; got a NaN or inf')
    if np.any(arr <= 0):
        bad = tuple(int(v) for v in np.argwhere(arr <= 0)[0])
        raise ValueError(f'{where}: transition matrix entries must be > 0 (layer 1 stores '
                         f'log P); got P{list(bad)} = {arr[bad]}')
    sums = arr.sum(axis=1)
    if not np.allclose(sums, 1.0, atol=1e-9):
        row = int(np.argmax(np.abs(sums - 1)))
        raise ValueError(f'{where}: transition matrix rows must sum to 1; '
                         f'got row {row} summing to {sums[row]:.6g}')
    return arr


def check_lags(lags, T=None, where='lags'):
    """Return the lag set as a sorted tuple of distinct positive ints (and ``max < T``)."""
    try:
        items = list(lags)
    except TypeError:
        raise TypeError(f'{where}: lag set must be an iterable of integers; '
                        f'got {type(lags).__name__}') from None
    if not items:
        raise ValueError(f'{where}: lag set must be non-empty; got {items}')
    for k in items:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f'{where}: lags must be integers; got {k!r}')
        if k < 1:
            raise ValueError(f'{where}: lags must be >= 1; got {int(k)}')
    if len(set(items)) != len(items):
        raise ValueError(f'{where}: lags must be distinct; got {[int(k) for k in items]}')
    out = tuple(sorted(int(k) for k in items))
    if T is not None and out[-1] >= T:
        raise ValueError(f'{where}: the largest lag must be < T; got max lag {out[-1]} '
                         f'with T = {T}')
    return out


def stationary(P):
    """The stationary law ``pi`` of ``P`` (``pi @ P = pi``, ``sum(pi) = 1``), by least squares."""
    P = check_transition_matrix(P, 'stationary')
    S = len(P)
    system = np.vstack([(P - np.eye(S)).T, np.ones((1, S))])
    rhs = np.zeros(S + 1)
    rhs[-1] = 1.0
    pi = np.linalg.lstsq(system, rhs, rcond=None)[0]
    pi = np.maximum(pi, 0)
    return pi / pi.sum()


def _check_T(T, where):
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) or T < 1:
        raise ValueError(f'{where}: T must be a positive integer; got {T!r}')
    return int(T)


def sample_sequence(P, lags, T, rng, lag=None):
    """One sequence of the task: returns ``(tokens, true_lag)``.

    The lag is uniform over ``lags`` (or ``lag`` if given); the first ``max(lags)``
    tokens are i.i.d. from ``pi`` whatever the lag (the i.i.d. warm-up); every later
    token is drawn from ``P[x_{t-k}]``.
    """
    P = check_transition_matrix(P, 'sample_sequence')
    T = _check_T(T, 'sample_sequence')
    lags = check_lags(lags, T, 'sample_sequence')
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'sample_sequence: rng must be a numpy Generator; '
                        f'got {type(rng).__name__}')
    if lag is None:
        lag = lags[int(rng.integers(len(lags)))]
    elif lag not in lags:
        raise ValueError(f'sample_sequence: lag must be one of {list(lags)}; got {lag!r}')
    S, kmax = len(P), lags[-1]
    tokens = np.empty(T, dtype=np.int64)
    tokens[:kmax] = rng.choice(S, size=kmax, p=stationary(P))
    for t in range(kmax, T):
        tokens[t] = rng.choice(S, p=P[tokens[t - lag]])
    return tokens, int(lag)


def sample_batch(P, lags, T, n, rng, lag=None):
    """``n`` sequences at once: ``(tokens (n, T), true_lags (n,))`` by inverse-CDF sampling."""
    P = check_transition_matrix(P, 'sample_batch')
    T = _check_T(T, 'sample_batch')
    lags = check_lags(lags, T, 'sample_batch')
    S, kmax = len(P), lags[-1]
    if lag is None:
        true = np.asarray(lags)[rng.integers(len(lags), size=n)]
    else:
        if lag not in lags:
            raise ValueError(f'sample_batch: lag must be one of {list(lags)}; got {lag!r}')
        true = np.full(n, int(lag))
    cdf = np.cumsum(P, axis=1)
    cdf[:, -1] = 1.0
    pi_cdf = np.cumsum(stationary(P))
    pi_cdf[-1] = 1.0
    tokens = np.empty((n, T), dtype=np.int64)
    tokens[:, :kmax] = np.searchsorted(pi_cdf, rng.random((n, kmax)), side='right')
    rows = np.arange(n)
    for t in range(kmax, T):
        parent = tokens[rows, t - true]
        u = rng.random(n)
        tokens[:, t] = (u[:, None] >= cdf[parent]).sum(axis=1)
    np.minimum(tokens, S - 1, out=tokens)
    return tokens, true


# ============================================================================ predictors

def _prep(P, lags, tokens, where):
    P = check_transition_matrix(P, where)
    tokens = np.asarray(tokens)
    if tokens.dtype.kind not in 'iu' or tokens.ndim < 1:
        raise TypeError(f'{where}: tokens must be an integer array (..., T); '
                        f'got dtype {tokens.dtype}, shape {tokens.shape}')
    if tokens.size and (tokens.min() < 0 or tokens.max() >= len(P)):
        raise ValueError(f'{where}: tokens must lie in 0..{len(P) - 1}; '
                         f'got {int(tokens.min())}..{int(tokens.max())}')
    lags = check_lags(lags, tokens.shape[-1], where)
    return P, lags, tokens


def transition_logprobs(P, lags, tokens):
    """``(..., T, K)``: entry ``[t, k] = log P[x_{t-k}, x_t]`` (0-based t), ``-inf`` if t < k."""
    P, lags, tokens = _prep(P, lags, tokens, 'transition_logprobs')
    logP = np.log(P)
    T = tokens.shape[-1]
    out = np.full(tokens.shape + (len(lags),), -np.inf)
    for c, k in enumerate(lags):
        out[..., k:, c] = logP[tokens[..., :T - k], tokens[..., k:]]
    return out


def log_likelihoods(P, lags, tokens):
    """``(..., T, K)``: row t holds ``ell_k`` after ``t + 1`` tokens.

    ``ell_k(n) = sum_{j = kmax+1}^{n} log P[x_{j-k}, x_j]`` (1-based; the ``pi`` factors of
    the warm-up are the same for every lag and are left out).  Zero while ``n <= kmax``.
    """
    lp = transition_logprobs(P, lags, tokens)
    kmax = check_lags(lags)[-1]
    lp[..., :kmax, :] = 0.0
    return np.cumsum(lp, axis=-2)


def _softmax(x, axis=-1):
    z = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def lag_posterior(P, lags, tokens):
    """``(..., T, K)``: posterior over the lag after ``t + 1`` tokens (uniform prior)."""
    return _softmax(log_likelihoods(P, lags, tokens))


def candidate_rows(P, lags, tokens):
    """``(..., T, K, S)``: row t, lag k holds ``P[x_{t+1-k}]`` (1-based ``x_{i+1-k}``).

    Entries whose parent would lie before the sequence (0-based ``t + 1 - k < 0``) are NaN.
    """
    P, lags, tokens = _prep(P, lags, tokens, 'candidate_rows')
    T, S = tokens.shape[-1], len(P)
    out = np.full(tokens.shape + (len(lags), S), np.nan)
    for c, k in enumerate(lags):
        out[..., k - 1:, c, :] = P[tokens[..., :T - k + 1]]
    return out


def _mix(P, lags, tokens, weights):
    """Mix candidate rows with lag weights; rows with a prefix shorter than kmax get ``pi``."""
    kmax = lags[-1]
    rows = candidate_rows(P, lags, tokens)
    out = np.einsum('...k,...ks->...s', weights[..., kmax - 1:, :], rows[..., kmax - 1:, :, :])
    early = np.broadcast_to(stationary(P), tokens.shape[:-1] + (kmax - 1, len(P)))
    return np.concatenate([early, out], axis=-2)


def bma_predictive(P, lags, tokens):
    """``(T, S)`` (or ``(..., T, S)``): the Bayes-optimal next-token law after each prefix.

    Row t mixes ``P[x_{t+1-k}]`` with the lag posterior after ``t + 1`` tokens.  While the
    next token still belongs to the i.i.d. warm-up (``t + 2 <= kmax``) the row is ``pi``.
    """
    P, lags, tokens = _prep(P, lags, tokens, 'bma_predictive')
    return _mix(P, lags, tokens, lag_posterior(P, lags, tokens))


def ml_lags(P, lags, tokens, tol=TIE_TOL):
    """``(..., T, K)`` 0/1 mask of the maximum-likelihood lags (several when tied)."""
    ell = log_likelihoods(P, lags, tokens)
    return (ell >= ell.max(axis=-1, keepdims=True) - tol).astype(np.float64)


def ml_predictive(P, lags, tokens, tol=TIE_TOL):
    """Maximum-likelihood selection: copy the row of the best lag's parent.

    Tie rule (the paper has none): lags whose log-likelihood is within ``tol`` of the
    maximum share the weight equally (at ``t + 1 = kmax`` every lag ties, so the first
    prediction is the uniform mixture, like the BMA's).
    """
    P, lags, tokens = _prep(P, lags, tokens, 'ml_predictive')
    mask = ml_lags(P, lags, tokens, tol)
    return _mix(P, lags, tokens, mask / mask.sum(axis=-1, keepdims=True))


def true_predictive(P, lags, tokens, lag):
    """The data's real next-token law given the true lag (``pi`` during the warm-up)."""
    P, lags, tokens = _prep(P, lags, tokens, 'true_predictive')
    lag = np.asarray(lag)
    onehot = (np.asarray(lags) == lag[..., None]).astype(np.float64)          # (..., K)
    weights = np.broadcast_to(onehot[..., None, :], tokens.shape + (len(lags),))
    return _mix(P, lags, tokens, weights)


def normalised_transitions(P, lags, tokens):
    """``(..., T, K)``: ``ptil[i, k] = P[x_{i-k}, x_i] / sum_{l < i} P[x_{i-l}, x_i]``.

    Row ``t`` (0-based) is position ``i = t + 1``; the sum runs over the lags with a
    parent inside the sequence.  Rows with no valid lag (``i <= kmin``) are all zero;
    nothing downstream reads them.
    """
    lp = transition_logprobs(P, lags, tokens)
    valid = np.isfinite(lp)
    safe = np.where(valid, lp, -np.inf)
    top = np.max(np.where(valid, safe, -1e300), axis=-1, keepdims=True)
    w = np.where(valid, np.exp(safe - top), 0.0)
    total = w.sum(axis=-1, keepdims=True)
    return np.divide(w, total, out=np.zeros_like(w), where=total > 0)


def prop1_weights(P, lags, tokens, beta):
    """``(..., T, K)``: Proposition 1's lag weights ``softmax(beta * mean ptil)``.

    Row t (prefix length ``n = t + 1``) averages ``ptil[i, .]`` over ``kmax < i <= n``;
    at ``n <= kmax`` the mean is empty and the weights are uniform.
    """
    P, lags, tokens = _prep(P, lags, tokens, 'prop1_weights')
    kmax = lags[-1]
    ptil = normalised_transitions(P, lags, tokens)
    ptil[..., :kmax, :] = 0.0
    n = np.arange(1, tokens.shape[-1] + 1)
    count = np.maximum(n - kmax, 1)[:, None]
    return _softmax(beta * np.cumsum(ptil, axis=-2) / count)


def prop1_predictive(P, lags, tokens, beta):
    """Proposition 1's predictor ``sum_k w_k P[x_{i+1-k}]`` with ``prop1_weights``
    (rows with a prefix shorter than kmax are ``pi``)."""
    P, lags, tokens = _prep(P, lags, tokens, 'prop1_predictive')
    return _mix(P, lags, tokens, prop1_weights(P, lags, tokens, beta))


def kl_divergence(p, q, axis=-1):
    """``sum p (log p - log q)`` along ``axis`` (terms with ``p = 0`` count 0)."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide='ignore', invalid='ignore'):
        terms = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
    return terms.sum(axis=axis)


def kl_curve(truth, pred):
    """Mean KL(truth || pred) per position over a batch ``(n, T, S)`` -> ``(T,)``."""
    return kl_divergence(truth, pred).mean(axis=0)


# ============================================================================ head designs

Design = namedtuple('Design', 'lags period classes variant')
Design.__doc__ = """A layer-2/layer-3 plan.

``period`` and ``classes`` (tuples of residues mod period, one per layer-2 head): head h
averages the keys ``kmax < j <= i`` with ``(i - j) mod period`` in ``classes[h]``.
``variant``: ``'main'`` (layer 3 reads each head's averaged positions; singleton classes),
``'positional'`` (layer 3 reads the key's own position; any valid classes) or ``'pair'``
(two lags, one head; corrected App. H rule)."""

VARIANTS = ('main', 'positional', 'pair')


def design_problems(lags, period, classes):
    """Why a (period, classes) plan is invalid; empty list when it is fine.

    Rule: for every class, every two residues ``r, r'`` in it (also ``r = r'``) and every
    two different lags ``k != k'``: ``(r - r') mod period != (k - k') mod period``.
    """
    problems = []
    for h, cls in enumerate(classes):
        for r in cls:
            for r2 in cls:
                for k, k2 in ((a, b) for a in lags for b in lags if a != b):
                    if (r - r2) % period == (k - k2) % period:
                        problems.append(f'head {h}: residues {r}, {r2} differ by {(r - r2) % period} '
                                        f'= lags {k} - {k2} (mod {period})')
    return problems


def check_design(design):
    """Validate a ``Design`` and return it (raises ``ValueError`` naming the clash)."""
    lags = check_lags(design.lags, where='check_design')
    if design.variant not in VARIANTS:
        raise ValueError(f'check_design: variant must be one of {VARIANTS}; got {design.variant!r}')
    if isinstance(design.period, bool) or not isinstance(design.period, (int, np.integer)) \
            or design.period < 1:
        raise ValueError(f'check_design: period must be a positive integer; got {design.period!r}')
    classes = tuple(tuple(int(r) for r in c) for c in design.classes)
    if not classes or any(not c for c in classes):
        raise ValueError(f'check_design: need at least one non-empty residue class; got {classes}')
    flat = [r for c in classes for r in c]
    if len(set(flat)) != len(flat) or any(not 0 <= r < design.period for r in flat):
        raise ValueError(f'check_design: classes must be disjoint residues in 0..'
                         f'{design.period - 1}; got {classes}')
    if design.variant == 'pair':
        D = lags[-1] - lags[0]
        if len(lags) != 2 or design.period != 2 * D or classes != (tuple(range(D)),):
            raise ValueError(f'check_design: the pair variant needs two lags, period 2D and the '
                             f'one class 0..D-1 (D = kmax - kmin); got lags {list(lags)}, period '
                             f'{design.period}, classes {classes}')
        return Design(lags, int(design.period), classes, 'pair')
    problems = design_problems(lags, design.period, classes)
    if problems:
        raise ValueError(f'check_design: two stored transitions would share a slot; got '
                         f'{problems[0]} (lags {list(lags)}, period {design.period}, '
                         f'classes {classes})')
    if design.variant == 'main' and any(len(c) != 1 for c in classes):
        raise ValueError(f'check_design: the main third layer needs one residue per head; got '
                         f'classes {classes} (use variant="positional")')
    return Design(lags, int(design.period), classes, design.variant)


def _greedy_classes(lags, period):
    """Colour residues 0..period-1 greedily into valid classes (None if lags clash)."""
    if len({k % period for k in lags}) != len(lags):
        return None
    bad = {(k - k2) % period for k in lags for k2 in lags if k != k2}
    classes = []
    for r in range(period):
        for cls in classes:
            if all((r - s) % period not in bad and (s - r) % period not in bad for s in cls):
                cls.append(r)
                break
        else:
            classes.append([r])
    return tuple(tuple(c) for c in classes)


def _candidate_designs(lags):
    K, kmax, kmin = len(lags), lags[-1], lags[0]
    found = []
    for period in range(K, 2 * (kmax - kmin + 1) + 1):
        if len({k % period for k in lags}) != len(lags):
            continue
        found.append((period, tuple((r,) for r in range(period))))
        greedy = _greedy_classes(lags, period)
        if greedy is not None and len(greedy) < period:
            found.append((period, greedy))
    return found


def plan_heads(lags, heads=None, variant=None, period=None, classes=None):
    """Choose the layer-2 design of the construction.

    * contiguous lags: period ``K``, one residue per head (the paper's Sec. 4);
    * other lag sets: the fewest heads over periods ``K .. 2 (kmax - kmin + 1)`` with
      greedily coloured residue classes (``{1,3}``: period 4, classes {0,1},{2,3};
      ``{1,3,4}``: period 4, four heads; ``{3,5,7}``: period 3, three heads);
    * ``heads`` smaller than that keeps the first ``heads`` classes (fewer transitions,
      same algorithm); ``heads=1`` with two lags gives the corrected single-head pair
      design of App. H unless ``variant`` says otherwise;
    * ``period`` and ``classes`` set the design by hand.
    ``variant`` defaults to ``'main'`` for one residue per head, else ``'positional'``.
    """
    lags = check_lags(lags, where='plan_heads')
    K, kmax, kmin = len(lags), lags[-1], lags[0]
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f'plan_heads: variant must be one of {VARIANTS}; got {variant!r}')
    if heads is not None and (isinstance(heads, bool) or not isinstance(heads, (int, np.integer))
                              or heads < 1):
        raise ValueError(f'plan_heads: heads must be a positive integer; got {heads!r}')
    if period is not None or classes is not None:
        if period is None or classes is None:
            raise ValueError('plan_heads: give both period and classes; got only one of them')
        cls = tuple(tuple(c) for c in classes)
        var = variant or ('main' if all(len(c) == 1 for c in cls) else 'positional')
        return check_design(Design(lags, period, cls, var))
    if variant == 'pair' or (heads == 1 and K == 2 and variant is None):
        if K != 2:
            raise ValueError(f'plan_heads: the pair variant needs exactly two lags; got {list(lags)}')
        D = kmax - kmin
        return check_design(Design(lags, 2 * D, (tuple(range(D)),), 'pair'))
    contiguous = lags == tuple(range(kmin, kmax + 1))
    if contiguous:
        options = [(K, tuple((r,) for r in range(K)))]
    else:
        options = _candidate_designs(lags)
        if variant == 'main':
            options = [o for o in options if all(len(c) == 1 for c in o[1])]
        options.sort(key=lambda o: (len(o[1]), o[0]))
    best_period, best = options[0]
    if heads is not None:
        exact = [o for o in options if len(o[1]) == heads]
        if exact:
            best_period, best = exact[0]
        elif heads < len(best):
            best = best[:heads]
        else:
            raise ValueError(f'plan_heads: heads must be at most {len(best)} for lags '
                             f'{list(lags)}; got {heads}')
    var = variant or ('main' if all(len(c) == 1 for c in best) else 'positional')
    return check_design(Design(lags, best_period, best, var))


def exact_from(design):
    """First 1-based query position from which the network equals ``construction_predictive``."""
    kmax = design.lags[-1]
    if design.variant == 'main':
        return 2 * kmax + max(c[0] for c in design.classes)
    if design.variant == 'positional':
        return kmax + 1 + max(min(c) for c in design.classes)
    return 2 * kmax


def _class_means(ptil, lags, design):
    """``(..., H, T, K)``: mean of ptil over each head's keys ``C_h(i)`` (0 when empty)."""
    kmax, Pd = lags[-1], design.period
    T = ptil.shape[-2]
    masked = ptil.copy()
    masked[..., :kmax, :] = 0.0
    live = np.zeros(T)
    live[kmax:] = 1.0
    # strided cumulative sums: cs[i] = sum of rows i, i - Pd, i - 2 Pd, ...
    cs, cn = masked.copy(), live.copy()
    for i in range(Pd, T):
        cs[..., i, :] += cs[..., i - Pd, :]
        cn[i] += cn[i - Pd]
    means = []
    for cls in design.classes:
        tot = np.zeros_like(masked)
        cnt = np.zeros(T)
        for r in cls:
            if r < T:
                tot[..., r:, :] += cs[..., :T - r, :]
                cnt[r:] += cn[:T - r]
        means.append(tot / np.maximum(cnt, 1)[:, None])
    return np.stack(means, axis=-3)


def construction_predictive(P, lags, tokens, beta, design=None):
    """The exact finite-length predictor of the three-layer network (lam -> infinity).

    main / positional: ``score_k(i) = beta * sum_h mean_{j in C_h(i)} ptil[j, k]`` with
    ``C_h(i) = {j : kmax < j <= i, (i - j) mod period in classes[h]}`` (empty -> 0);
    pair: ``score_k(i) = beta * mean_{m in C(i+1-k)} (ptil[m, k] - ptil[m, k'])``.
    Output ``sum_k softmax(score)_k P[x_{i+1-k}]``.  Rows with a prefix shorter than kmax
    are ``pi``.  The network agrees from query ``exact_from(design)`` on.
    """
    P, lags, tokens = _prep(P, lags, tokens, 'construction_predictive')
    return _mix(P, lags, tokens, construction_weights(P, lags, tokens, beta, design))


def construction_weights(P, lags, tokens, beta, design=None):
    """``(..., T, K)``: the lag weights of ``construction_predictive`` (layer 3's row)."""
    P, lags, tokens = _prep(P, lags, tokens, 'construction_weights')
    design = plan_heads(lags) if design is None else check_design(design)
    if design.lags != lags:
        raise ValueError(f'construction_weights: design lags must equal lags; got '
                         f'{list(design.lags)} vs {list(lags)}')
    ptil = normalised_transitions(P, lags, tokens)
    means = _class_means(ptil, lags, design)
    if design.variant == 'pair':
        m = means[..., 0, :, :]                                   # (..., T, 2)
        diff = m[..., 0] - m[..., 1]                              # lag kmin minus lag kmax
        T = tokens.shape[-1]
        score = np.zeros(tokens.shape + (2,))
        for c, (k, sign) in enumerate(((lags[0], 1.0), (lags[1], -1.0))):
            # query row t (i = t + 1) reads the key at 1-based i + 1 - k, i.e. row t + 1 - k
            score[..., k - 1:, c] = sign * beta * diff[..., :T - k + 1]
    else:
        score = beta * means.sum(axis=-3)
    return _softmax(score)


# ============================================================================ constants

def safety_margins(P, T, lam, beta, H, variant='main'):
    """Log-margins of the three soft masks (positive = the mask holds).

    A masked key's weight relative to an allowed one is at most ``T * exp(-margin)``:
    layer 1 ``2 lam - log T - log(pmax / pmin)``; layer 2 ``2 lam - log T``; layer 3
    ``2 lam - spread - log T`` where the evidence term can move a key by ``spread =
    beta * H`` (``2 beta`` for the pair variant, whose entries are +-beta).
    """
    P = np.asarray(P, dtype=np.float64)
    spread = 2 * beta if variant == 'pair' else beta * H
    m = {'layer1': 2 * lam - np.log(T) - np.log(P.max() / P.min()),
         'layer2': 2 * lam - np.log(T),
         'layer3': 2 * lam - spread - np.log(T)}
    return {k: float(v) for k, v in m.items()}


def check_constants(P, T, lam, beta, H, variant='main', where='build_selective_induction'):
    """Raise ``ValueError`` when a mask can fail: ``2 lam <= beta H + log T`` and friends."""
    for name, v in (('lam', lam), ('beta', beta)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not np.isfinite(v):
            raise ValueError(f'{where}: {name} must be a finite number; got {v!r}')
    if lam <= 0:
        raise ValueError(f'{where}: lam must be > 0; got {lam}')
    if beta < 0:
        raise ValueError(f'{where}: beta must be >= 0; got {beta}')
    m = safety_margins(P, T, lam, beta, H, variant)
    spread = 2 * beta if variant == 'pair' else beta * H
    if m['layer3'] <= 0:
        raise ValueError(f'{where}: need 2*lam > beta*H + log T for the layer-3 mask; got '
                         f'2*lam = {2 * lam:g} <= {spread:g} + {np.log(T):.3g}')
    if m['layer1'] <= 0:
        raise ValueError(f'{where}: need 2*lam > log T + log(pmax/pmin) for the layer-1 mask; '
                         f'got 2*lam = {2 * lam:g} <= {np.log(T) + np.log(P.max() / P.min()):.3g}')
    return m


# ============================================================================ the network

class DisentangledTransformer:
    """Attention-only transformer with concatenated residual updates.

    Input at position i: ``[onehot(x_i, S), onehot(i, T)]``.  Each head is a square matrix
    ``A`` stored as blocks ``(rows, cols, block)``; its scores are ``h_i A h_j / alpha``
    (causal), and it appends the attention average of whole residual vectors.  After the
    layers, ``readout`` (rows, matrix) maps ``h[:, rows] @ matrix`` to the output:
    probabilities directly (``output='mixture'``) or through a softmax (``output='log'``).
    """

    def __init__(self, S, T, layers, readout, alpha=1.0, output='mixture', meta=None):
        if output not in ('mixture', 'log'):
            raise ValueError(f"DisentangledTransformer: output must be 'mixture' or 'log'; "
                             f'got {output!r}')
        self.S, self.T, self.layers, self.readout = int(S), int(T), layers, readout
        self.alpha, self.output, self.meta = float(alpha), output, dict(meta or {})
        widths = [self.S + self.T]
        for heads in layers:
            widths.append(widths[-1] * (1 + len(heads)))
        self.widths = widths

    def heads(self):
        return [len(h) for h in self.layers]

    def matrix(self, layer, head):
        """The dense ``d x d`` matrix of one head (d = width entering that layer)."""
        d = self.widths[layer]
        A = np.zeros((d, d))
        for rows, cols, block in self.layers[layer][head]:
            A[np.ix_(rows, cols)] += block
        return A

    def count_nonzero(self):
        """Non-zero weights per layer and in the readout (every +-lam entry counts)."""
        counts = {}
        for l in range(len(self.layers)):
            counts[f'layer{l + 1}'] = int(sum(np.count_nonzero(self.matrix(l, h))
                                              for h in range(len(self.layers[l]))))
        counts['readout'] = int(np.count_nonzero(self.readout[1]))
        return counts

    def _tokens(self, tokens):
        tokens = np.asarray(tokens)
        if tokens.dtype.kind not in 'iu' or tokens.ndim < 1:
            raise TypeError(f'DisentangledTransformer: tokens must be an integer array; '
                            f'got dtype {tokens.dtype}, shape {tokens.shape}')
        n = tokens.shape[-1]
        if not 1 <= n <= self.T:
            raise ValueError(f'DisentangledTransformer: sequence length must be in 1..{self.T}; '
                             f'got {n}')
        if tokens.min() < 0 or tokens.max() >= self.S:
            raise ValueError(f'DisentangledTransformer: tokens must lie in 0..{self.S - 1}; '
                             f'got {int(tokens.min())}..{int(tokens.max())}')
        return tokens

    def run(self, tokens):
        """Dict with ``resid`` (list of (..., n, d_l)), ``attn`` (list of (..., H, n, n)),
        ``scores`` (pre-softmax, masked entries -inf) and ``probs`` (..., n, S)."""
        tokens = self._tokens(tokens)
        n = tokens.shape[-1]
        h = np.concatenate([np.eye(self.S)[tokens],
                            np.broadcast_to(np.eye(self.T)[:n], tokens.shape + (self.T,))],
                           axis=-1)
        causal = np.tril(np.ones((n, n), dtype=bool))
        resid, attn, scores = [h], [], []
        for heads in self.layers:
            outs, ws, zs = [], [], []
            for blocks in heads:
                z = np.zeros(tokens.shape[:-1] + (n, n))
                for rows, cols, block in blocks:
                    z = z + (h[..., rows] @ block) @ np.swapaxes(h[..., cols], -1, -2)
                z = np.where(causal, z / self.alpha, -np.inf)
                w = _softmax(z)
                outs.append(w @ h)
                ws.append(w)
                zs.append(z)
            h = np.concatenate([h] + outs, axis=-1)
            resid.append(h)
            attn.append(np.stack(ws, axis=-3))
            scores.append(np.stack(zs, axis=-3))
        rows, mat = self.readout
        out = h[..., rows] @ mat
        probs = _softmax(out) if self.output == 'log' else out
        return {'resid': resid, 'attn': attn, 'scores': scores, 'probs': probs}

    def next_token_probs(self, tokens):
        """``(..., n, S)``: row t is the predicted law of the token after the first t + 1."""
        return self.run(tokens)['probs']

    def attention_maps(self, tokens):
        return self.run(tokens)['attn']


def _pm(mask, lam):
    return np.where(mask, lam, -lam)


def layer_matrices(P, lags, T, lam, beta, design, pair_shift=None):
    """The construction in named blocks: per layer, per head, a list of
    ``(query_block, key_block, matrix)`` and the moves ``(source_block, target_block)``.

    Block names: ``tok``, ``pos`` (inputs), ``l1`` (layer-1 positional output, the ptil
    slots), ``mhat{h}`` / ``phat{h}`` (head h of layer 2 averaging ``pos`` / ``l1``),
    ``copy`` (layer 3's copied token).  Positions in the masks are 1-based.
    ``pair_shift`` overrides the pair variant's shift (see ``pair_evidence_block``).
    """
    lags, kmax, Pd = design.lags, design.lags[-1], design.period
    i = np.arange(1, T + 1)[:, None]
    j = np.arange(1, T + 1)[None, :]
    L1 = [([('tok', 'tok', np.log(P).T),
            ('pos', 'pos', _pm(np.isin(i - j, lags), lam))],
           [('pos', 'l1')])]
    L2 = []
    for h, cls in enumerate(design.classes):
        keep = (i >= j) & (j > kmax) & np.isin((i - j) % Pd, cls)
        L2.append(([('pos', 'pos', _pm(keep, lam))], [('pos', f'mhat{h}'), ('l1', f'phat{h}')]))
    band3 = ('pos', 'pos', _pm(np.isin(i - j + 1, lags), lam))
    a, b = i, j          # slot indices (1-based) for the evidence blocks
    blocks3 = [band3]
    if design.variant == 'main':
        B = beta * ((a - b) % Pd == Pd - 1)
        blocks3 += [(f'phat{h}', f'mhat{h}', B) for h in range(len(design.classes))]
    elif design.variant == 'positional':
        for h, cls in enumerate(design.classes):
            blocks3.append((f'phat{h}', 'pos', beta * np.isin((b - a - 1) % Pd, cls)))
    else:   # pair: rows = query position a, cols = key's phat slot b
        blocks3.append(('pos', 'phat0', pair_evidence_block(lags, T, beta, pair_shift)))
    L3 = [(blocks3, [('tok', 'copy')])]
    return [L1, L2, L3]


def pair_evidence_block(lags, T, beta, shift=None):
    """The ``T x T`` layer-3 block of the two-lag single-head design (rows: query position
    a, columns: the key's phat slot b, both 1-based).

    ``B[a, b] = 0`` if ``b >= a`` (never read), ``+beta`` if ``(a - b - shift) mod 2D < D``,
    else ``-beta``, with ``D = kmax - kmin`` and the corrected ``shift = 2 kmin - 1``.  The
    paper's App. H uses ``shift = 1``, which agrees only when ``kmin = 1 (mod D)``.
    """
    lags = check_lags(lags, where='pair_evidence_block')
    if len(lags) != 2:
        raise ValueError(f'pair_evidence_block: needs exactly two lags; got {list(lags)}')
    kmin, D = lags[0], lags[1] - lags[0]
    shift = 2 * kmin - 1 if shift is None else shift
    a = np.arange(1, T + 1)[:, None]
    b = np.arange(1, T + 1)[None, :]
    sign = np.where((a - b - shift) % (2 * D) < D, float(beta), -float(beta))
    return np.where(b >= a, 0.0, sign)


def _disentangled_slots(S, T, H):
    """Column ranges of each named block in the concatenated residual stream."""
    d0 = S + T
    d1 = 2 * d0
    slots = {'tok': np.arange(S), 'pos': np.arange(S, d0), 'l1': np.arange(d0 + S, d1)}
    for h in range(H):
        base = (h + 1) * d1
        slots[f'mhat{h}'] = np.arange(base + S, base + d0)
        slots[f'phat{h}'] = np.arange(base + d0 + S, base + d1)
    d2 = (1 + H) * d1
    slots['copy'] = np.arange(d2, d2 + S)
    return slots


def build_selective_induction(P, lags, T, lam=500.0, beta=100.0, heads=None, variant=None,
                              period=None, classes=None, alpha=1.0, output='mixture',
                              strict=True, pair_shift=None):
    """The three-layer selective-induction network as a ``DisentangledTransformer``.

    Layer 1 (1 head) stores the normalised transition probabilities of each token in its
    positional slots ``i - k``; layer 2 (one head per residue class of ``plan_heads``)
    averages them over disjoint sets of earlier tokens; layer 3 (1 head) scores the K
    candidate parents ``i + 1 - k`` by that evidence (``beta``) and copies the winner's
    token; the readout maps it through ``P``.  ``lam`` hardens the masks.  With
    ``strict`` (default) the constants must pass ``check_constants``; ``strict=False``
    builds soft networks for demonstrations.  ``alpha`` is the attention temperature
    (the matrices are scaled by it, so the function does not change).  ``output='log'``
    puts ``log P`` in the readout and a softmax after it (geometric mixture).
    ``pair_shift`` replaces the pair design's corrected shift (for showing the paper's).
    The model's ``meta`` holds the design, constants, margins and ``exact_from``.
    """
    P = check_transition_matrix(P, 'build_selective_induction')
    T = _check_T(T, 'build_selective_induction')
    lags = check_lags(lags, T, 'build_selective_induction')
    if not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f'build_selective_induction: alpha must be > 0; got {alpha!r}')
    design = plan_heads(lags, heads, variant, period, classes)
    H = len(design.classes)
    if strict:
        margins = check_constants(P, T, lam, beta, H, design.variant)
    else:
        margins = safety_margins(P, T, lam, beta, H, design.variant)
    S = len(P)
    slots = _disentangled_slots(S, T, H)
    layers = []
    for layer in layer_matrices(P, lags, T, lam, beta, design, pair_shift):
        layers.append([[(slots[q], slots[k], alpha * m) for q, k, m in blocks]
                       for blocks, _ in layer])
    readout = (slots['copy'], np.log(P) if output == 'log' else P.copy())
    meta = {'design': design, 'lam': float(lam), 'beta': float(beta), 'margins': margins,
            'exact_from': exact_from(design), 'P': P, 'slots': slots}
    return DisentangledTransformer(S, T, layers, readout, alpha, output, meta)


# ============================================================================ book format

def book_layout(S, T, H):
    """The residual layout of the book-format port."""
    blocks = [('tok', S), ('pos', T), ('anchor', 2), ('l1', T)]
    for h in range(H):
        blocks += [(f'mhat{h}', T), (f'phat{h}', T)]
    return Layout(blocks + [('copy', S)])


def _norm_inverse(L, filled, M, layer_norm_on):
    """``G`` with ``x = LN(x) @ G`` for the streams that reach this layer (identity if off).

    ``filled`` lists the blocks already written; each sums to 1 at every position (one-hots
    and attention averages), the anchors hold +M and -M, so the mean is the same at every
    position and the standard deviation varies only by O(1/M^2).
    """
    d = L.d_model
    if not layer_norm_on:
        return np.eye(d)
    mu = len(filled) / d
    sumsq = 2 * M ** 2 + 0.5 * len(filled)        # nominal; true value differs by O(1)
    sigma = np.sqrt(sumsq / d - mu ** 2)
    plus, minus = L['anchor'].start, L['anchor'].start + 1
    G = sigma * np.eye(d)
    G[plus, :] += sigma * mu / (2 * M)
    G[minus, :] -= sigma * mu / (2 * M)
    return G


def book_params(P, lags, T, lam=500.0, beta=100.0, heads=None, variant=None, period=None,
                classes=None, layer_norm=True, M=1e5):
    """The construction in the book's params format (attention-only, MLPs zero).

    Residual stream ``book_layout``: token and position one-hots, two anchors (+M, -M,
    in every ``pos_emb`` row), the layer-1 slots, ``mhat``/``phat`` per head, the copied
    token.  With ``layer_norm=True`` every PreLN norm is undone inside Q, K, V (see
    ``_norm_inverse``) and the program runs on ``taotp.transformer``; with ``False`` the
    anchors are 0 and it must run with an identity norm (``book_forward(...,
    layer_norm=False)``).  Logits are ``sum_k w_k log P[x_{i+1-k}]`` (softmax = geometric
    mixture), matching ``build_selective_induction(..., output='log')``.
    """
    P = check_transition_matrix(P, 'book_params')
    T = _check_T(T, 'book_params')
    lags = check_lags(lags, T, 'book_params')
    design = plan_heads(lags, heads, variant, period, classes)
    H = len(design.classes)
    check_constants(P, T, lam, beta, H, design.variant, 'book_params')
    S = len(P)
    L = book_layout(S, T, H)
    d = L.d_model
    params = base_params(S, T, d)
    params['tok_emb'][:, L['tok']] = np.eye(S)
    params['pos_emb'][:, L['pos']] = np.eye(T)
    if layer_norm:
        params['pos_emb'][:, L['anchor']] = [M, -M]
    idx = lambda name: np.arange(d)[L[name]]
    filled = ['tok', 'pos']
    for layer in layer_matrices(P, lags, T, lam, beta, design):
        G = _norm_inverse(L, filled, M, layer_norm)
        n_heads = len(layer)
        qk = [sum(len(idx(k)) for _, k, _ in blocks) for blocks, _ in layer]
        vv = [sum(len(idx(s)) for s, _ in moves) for _, moves in layer]
        dh, dv = max(qk), max(vv)
        lay = base_layer(n_heads, d, 0, dh)
        lay['V'] = np.zeros((n_heads, d, dv))
        lay['P'] = np.zeros((n_heads, d, dv))
        for h, (blocks, moves) in enumerate(layer):
            col = 0
            for q, k, m in blocks:   # score = x_q m x_k^T = (y G_q m) . (y G_k)
                w = len(idx(k))
                lay['Q'][h][:, col:col + w] = G[:, idx(q)] @ m * np.sqrt(dh)
                lay['K'][h][:, col:col + w] = G[:, idx(k)]
                col += w
            col = 0
            for src, dst in moves:
                w = len(idx(src))
                lay['V'][h][:, col:col + w] = G[:, idx(src)]
                lay['P'][h][idx(dst), col + np.arange(w)] = 1.0
                col += w
                filled.append(dst)
        params['layers'].append(lay)
    G = _norm_inverse(L, filled, M, layer_norm)
    params['out_emb'] = (G[:, idx('copy')] @ np.log(P)).T.copy()
    return params


def _identity_norm(x, gamma=1.0, beta=0.0):
    return x


def book_forward(tokens, params, layer_norm=True):
    """Run a ``book_params`` program: ``(probs (n, S), attention list (H, n, n) per layer)``.

    ``layer_norm=False`` runs the core forward pass with an identity norm (the norm-free
    port); otherwise the book's PreLN forward pass.
    """
    record = []
    logits = forward(np.asarray(tokens), record=record, norm_fn=layer_norm_fn(layer_norm),
                     **params)
    return _softmax(logits), [r['attn'] for r in record[:-1]]


def layer_norm_fn(on):
    return layer_norm if on else _identity_norm


# ============================================================================ figures
# (Figures are built without pyplot, like taotp.plot; ``draw_*`` functions draw into a
# given figure so that widgets and ``taotp.plot.animate`` twins share them.)

PRESETS = {'{1,2,3}': (1, 2, 3), '{1,3}': (1, 3), '{1,3,4}': (1, 3, 4), '{3,5,7}': (3, 5, 7),
           '{1,...,5}': (1, 2, 3, 4, 5)}


def new_figure(size):
    """An empty pyplot-free figure (constrained layout), for multi-panel chapter figures."""
    from matplotlib.figure import Figure
    return Figure(figsize=size, layout='constrained')


_figure = new_figure


def parse_lags(text):
    """``'1, 3, 4'`` or ``'{1,3,4}'`` -> ``(1, 3, 4)`` (raises ValueError on junk)."""
    cleaned = str(text).strip().strip('{}()[]')
    try:
        values = [int(v) for v in cleaned.replace(';', ',').split(',') if v.strip()]
    except ValueError:
        raise ValueError(f'parse_lags: expected comma-separated integers; got {text!r}') from None
    return check_lags(values, where='parse_lags')


def draw_strip(ax, tokens, lag, title=None):
    """The token strip: one cell per position, coloured by sub-chain (position mod lag)."""
    from matplotlib.colors import ListedColormap
    tokens = np.asarray(tokens)
    T = len(tokens)
    residue = (np.arange(T) % lag)[None, :]
    cmap = ListedColormap([f'C{c % 10}' for c in range(max(lag, 1))])
    ax.imshow(residue, cmap=cmap, vmin=-0.5, vmax=lag - 0.5, aspect='auto', alpha=0.55)
    if T <= 64:
        for t, s in enumerate(tokens):
            ax.text(t, 0, str(s), ha='center', va='center', fontsize=7 if T <= 32 else 5)
    step = 1 if T <= 16 else 5 if T <= 64 else 10
    ticks = [t for t in range(T) if (t + 1) % step == 0 or t == 0]
    ax.set_xticks(ticks, [str(t + 1) for t in ticks], fontsize=7)
    ax.set_yticks([])
    ax.set_xlabel('position (colour = sub-chain, position mod lag)', fontsize=8)
    ax.set_title(title or f'tokens of a lag-{lag} sequence', fontsize=9)


def draw_evidence(axes, P, lags, tokens):
    """Three panels: per-lag log-likelihood, the lag posterior, the running mean of ptil."""
    lags = check_lags(lags)
    kmax = lags[-1]
    n = np.arange(1, len(tokens) + 1)
    ell = log_likelihoods(P, lags, tokens)
    post = lag_posterior(P, lags, tokens)
    ptil = normalised_transitions(P, lags, tokens)
    ptil[:kmax] = 0
    mean = np.cumsum(ptil, axis=0) / np.maximum(n - kmax, 1)[:, None]
    panels = ((ell, 'log-likelihood per lag', kmax - 1), (post, 'posterior (BMA weights)', kmax - 1),
              (mean, 'running mean of ptil', kmax))
    for ax, (values, title, start) in zip(axes, panels):
        for c, k in enumerate(lags):
            ax.plot(n[start:], values[start:, c], label=f'lag {k}', color=f'C{c}')
        ax.set_title(title, fontsize=8)
        ax.set_xlabel('tokens seen', fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=6)


def explorer_figure(P, lags, tokens, lag, fig=None):
    """Token strip over the three evidence panels (the data-explorer widget)."""
    fig = fig or _figure((7.5, 4.2))
    grid = fig.add_gridspec(2, 3, height_ratios=[1, 3])
    draw_strip(fig.add_subplot(grid[0, :]), tokens, lag,
               f'lags {set(check_lags(lags))}, true lag {lag}, T = {len(tokens)}')
    draw_evidence([fig.add_subplot(grid[1, c]) for c in range(3)], P, lags, tokens)
    return fig


def draw_kl(ax, curves, kmax, title='', ylim=(1e-5, 2.0)):
    """KL (log axis) against the number of tokens seen, from ``kmax`` on."""
    for c, (name, (curve, style)) in enumerate(curves.items()):
        n = np.arange(1, len(curve) + 1)
        ax.semilogy(n[kmax - 1:], np.maximum(curve[kmax - 1:], 1e-12), style, label=name, lw=1.2)
    ax.set_ylim(*ylim)
    ax.set_xlabel('sequence length (tokens seen)', fontsize=8)
    ax.set_ylabel('mean KL(truth || prediction)', fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, ncol=2)


def kl_figure(curves, kmax, title='', size=(6.0, 3.4), ylim=(1e-5, 2.0)):
    fig = _figure(size)
    draw_kl(fig.subplots(), curves, kmax, title, ylim)
    return fig


def margin_readout(margins):
    """One line: the three log-margins, flagged when negative."""
    parts = [f'{k}: {v:+.1f}' + (' (LEAKS)' if v <= 0 else '') for k, v in margins.items()]
    return 'margins 2*lam - ... - log T: ' + ', '.join(parts)


def hardening_figure(P, lags, T, lam, beta, seed=0, n=24, fig=None):
    """The hardening widget: layer-1 and layer-3 attention of a soft network and its KL
    curve against BMA, ML and the lam -> infinity formula, with the margin readout."""
    fig = fig or _figure((8.0, 3.0))
    lags = check_lags(lags, T)
    rng = np.random.default_rng(seed)
    X, true = sample_batch(P, lags, T, n, rng)
    m = build_selective_induction(P, lags, T, lam=lam, beta=beta, strict=False)
    run = m.run(X)
    truth = true_predictive(P, lags, X, true)
    curves = {'BMA': (kl_curve(truth, bma_predictive(P, lags, X)), 'k-'),
              'ML': (kl_curve(truth, ml_predictive(P, lags, X)), 'k--'),
              'formula (lam = inf)': (kl_curve(truth, construction_predictive(
                  P, lags, X, beta, m.meta['design'])), 'C1:'),
              'network': (kl_curve(truth, run['probs']), 'C0-')}
    axes = fig.subplots(1, 3, width_ratios=[1, 1, 1.4])
    for ax, layer, name in ((axes[0], 0, 'layer 1'), (axes[1], 2, 'layer 3')):
        ax.imshow(run['attn'][layer][0, 0], cmap='viridis', vmin=0, vmax=1, aspect='auto')
        ax.set_title(f'{name} attention (sequence 0)', fontsize=8)
        ax.set_xlabel('key position - 1', fontsize=7)
        ax.tick_params(labelsize=6)
    axes[0].set_ylabel('query position - 1', fontsize=7)
    draw_kl(axes[2], curves, lags[-1], f'lam = {lam:g}, beta = {beta:g}', ylim=(1e-6, 2.0))
    color = 'red' if min(m.meta['margins'].values()) <= 0 else 'black'
    fig.suptitle(margin_readout(m.meta['margins']), fontsize=8, color=color)
    return fig


def design_table(lags):
    """Rows (period, classes, heads, variant, exact_from) for the chosen and fallback designs."""
    lags = check_lags(lags)
    chosen = plan_heads(lags)
    fallback_period = lags[-1] - lags[0] + 1
    fallback = plan_heads(lags, period=fallback_period,
                          classes=[(r,) for r in range(fallback_period)])
    return [('chosen', chosen.period, chosen.classes, len(chosen.classes), chosen.variant,
             exact_from(chosen)),
            ('fallback', fallback.period, fallback.classes, len(fallback.classes),
             fallback.variant, exact_from(fallback))]
