"""Predictors of the next token: the Bayes optimum, maximum likelihood, and what the network does.

Every function takes ``tokens`` of shape ``(T,)`` or a batch ``(..., T)`` and
returns one row per prefix: row ``t`` (0-based) answers "what comes after the
first ``t + 1`` tokens?", i.e. the query at 1-based position ``i = t + 1``.
While the next token still belongs to the warm-up (``t + 2 <= kmax``) every
predictor returns the stationary law ``pi``.

* ``log_likelihoods``: ``ell_k = sum_{j = kmax+1}^{i} log P[x_{j-k}, x_j]``;
  the warm-up factors are the same for every lag and are left out.
* ``bma_predictive``: the posterior-weighted mixture of the candidate rows
  ``P[x_{i+1-k}]`` (optimal for the expected KL); ``ml_predictive``: the row
  of the maximum-likelihood lag.
* ``normalised_transitions``: ``ptil[i, k] = P[x_{i-k}, x_i] / sum_l P[x_{i-l}, x_i]``,
  the evidence the network averages; ``prop1_predictive``: the paper's
  Proposition 1 (softmax of ``beta`` times the mean ``ptil``);
  ``construction_predictive``: the exact finite-length function of the
  three-layer network (per-head class means, see ``taotp.selective.design``).

    >>> import numpy as np
    >>> P = np.array([[.7, .2, .1], [.1, .7, .2], [.2, .1, .7]])
    >>> x = np.array([2, 0, 1, 2, 0, 0, 2, 1, 1, 2])
    >>> lag_posterior(P, (1, 2, 3), x)[-1].round(3).tolist()
    [0.039, 0.001, 0.96]
"""
import numpy as np

from .design import check_design, plan_heads
from .task import check_lags, check_transition_matrix, stationary

TIE_TOL = 1e-9   # maximum likelihood: lags within this of the best log-likelihood tie


def exact_softmax(x, axis=-1):
    """Max-shifted softmax with no epsilon: the paper's maths.

    Not the engine's ``taotp.softmax``, which adds the book's 1e-10 to the
    denominator; the predictors and the disentangled network (the paper's own
    architecture, ``network.py``) use this one.
    """
    z = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def _prep(P, lags, tokens, where):
    P = check_transition_matrix(P, where)
    tokens = np.asarray(tokens)
    if tokens.dtype.kind not in 'iu' or tokens.ndim < 1:
        raise TypeError(f'{where}: tokens must be an integer array (..., T); '
                        f'got dtype {tokens.dtype}, shape {tokens.shape}')
    if tokens.size and (tokens.min() < 0 or tokens.max() >= len(P)):
        raise ValueError(f'{where}: tokens must lie in 0..{len(P) - 1}; '
                         f'got {int(tokens.min())}..{int(tokens.max())}')
    return P, check_lags(lags, tokens.shape[-1], where), tokens


# ----------------------------------------------------------------------------- likelihoods

def transition_logprobs(P, lags, tokens):
    """``(..., T, K)``: ``[t, c] = log P[x_{t-k}, x_t]`` for the c-th lag k (-inf if t < k)."""
    P, lags, tokens = _prep(P, lags, tokens, 'transition_logprobs')
    logP, T = np.log(P), tokens.shape[-1]
    out = np.full(tokens.shape + (len(lags),), -np.inf)
    for c, k in enumerate(lags):
        out[..., k:, c] = logP[tokens[..., :T - k], tokens[..., k:]]
    return out


def log_likelihoods(P, lags, tokens):
    """``(..., T, K)``: row t holds each lag's ``ell_k`` after ``t + 1`` tokens (0 up to kmax)."""
    lp = transition_logprobs(P, lags, tokens)
    lp[..., :check_lags(lags)[-1], :] = 0.0          # the warm-up counts for no lag
    return np.cumsum(lp, axis=-2)


def lag_posterior(P, lags, tokens):
    """``(..., T, K)``: the posterior over the lags after ``t + 1`` tokens (uniform prior)."""
    return exact_softmax(log_likelihoods(P, lags, tokens))


# ----------------------------------------------------------------------------- mixtures

def candidate_rows(P, lags, tokens):
    """``(..., T, K, S)``: row t, lag k holds ``P[x_{i+1-k}]`` (``i = t + 1``); NaN if i < k."""
    P, lags, tokens = _prep(P, lags, tokens, 'candidate_rows')
    T, S = tokens.shape[-1], len(P)
    out = np.full(tokens.shape + (len(lags), S), np.nan)
    for c, k in enumerate(lags):
        out[..., k - 1:, c, :] = P[tokens[..., :T - k + 1]]
    return out


def mix(P, lags, tokens, weights):
    """``(..., T, S)``: candidate rows mixed by lag ``weights`` (..., T, K); warm-up rows ``pi``."""
    P, lags, tokens = _prep(P, lags, tokens, 'mix')
    kmax, T = lags[-1], tokens.shape[-1]
    out = 0.0
    for c, k in enumerate(lags):     # row t >= kmax - 1: weight c on candidate P[x_{t+1-k}]
        out = out + weights[..., kmax - 1:, c, None] * P[tokens[..., kmax - k:T - k + 1]]
    early = np.broadcast_to(stationary(P), tokens.shape[:-1] + (kmax - 1, len(P)))
    return np.concatenate([early, out], axis=-2)


def bma_predictive(P, lags, tokens):
    """``(T, S)`` (or ``(..., T, S)``): the Bayes-optimal next-token law after each prefix.

    Row t mixes the candidate rows ``P[x_{t+1-k}]`` (0-based) with the lag
    posterior after ``t + 1`` tokens; warm-up rows are ``pi``.
    """
    P, lags, tokens = _prep(P, lags, tokens, 'bma_predictive')
    return mix(P, lags, tokens, lag_posterior(P, lags, tokens))


def ml_lags(P, lags, tokens, tol=TIE_TOL):
    """``(..., T, K)``: 0/1 mask of the maximum-likelihood lags (several when tied within tol)."""
    ell = log_likelihoods(P, lags, tokens)
    return (ell >= ell.max(axis=-1, keepdims=True) - tol).astype(np.float64)


def ml_predictive(P, lags, tokens, tol=TIE_TOL):
    """Maximum likelihood: the row of the best lag's parent.

    The paper has no tie rule; ours: lags within ``tol`` of the best share the
    weight equally (so after exactly ``kmax`` tokens, where every lag ties, the
    prediction is the uniform mixture, as for the BMA).
    """
    P, lags, tokens = _prep(P, lags, tokens, 'ml_predictive')
    best = ml_lags(P, lags, tokens, tol)
    return mix(P, lags, tokens, best / best.sum(axis=-1, keepdims=True))


def true_predictive(P, lags, tokens, lag):
    """The data's own next-token law given the true ``lag`` (one per sequence); warm-up ``pi``."""
    P, lags, tokens = _prep(P, lags, tokens, 'true_predictive')
    onehot = (np.asarray(lags) == np.asarray(lag)[..., None]).astype(np.float64)     # (..., K)
    weights = np.broadcast_to(onehot[..., None, :], tokens.shape + (len(lags),))
    return mix(P, lags, tokens, weights)


# ----------------------------------------------------------------------- the network's evidence

def normalised_transitions(P, lags, tokens):
    """``(..., T, K)``: ``ptil[i, k] = P[x_{i-k}, x_i] / sum_l P[x_{i-l}, x_i]``, row t = i - 1.

    The sum runs over the lags whose parent lies inside the sequence; rows with
    no such lag (``i <= kmin``) are zero and nothing downstream reads them.
    """
    lp = transition_logprobs(P, lags, tokens)
    valid = np.isfinite(lp)
    top = np.max(np.where(valid, lp, -1e300), axis=-1, keepdims=True)
    w = np.exp(lp - top)                              # exactly 0 where lp = -inf
    total = w.sum(axis=-1, keepdims=True)
    return np.divide(w, total, out=np.zeros_like(w), where=total > 0)


def prop1_weights(P, lags, tokens, beta):
    """``(..., T, K)``: Proposition 1's weights ``softmax(beta * mean_{kmax < j <= i} ptil[j])``.

    Uniform while the mean is empty (``i <= kmax``).
    """
    P, lags, tokens = _prep(P, lags, tokens, 'prop1_weights')
    kmax = lags[-1]
    ptil = normalised_transitions(P, lags, tokens)
    ptil[..., :kmax, :] = 0.0
    count = np.maximum(np.arange(1, tokens.shape[-1] + 1) - kmax, 1)[:, None]
    return exact_softmax(beta * np.cumsum(ptil, axis=-2) / count)


def prop1_predictive(P, lags, tokens, beta):
    """Proposition 1's predictor: ``sum_k w_k P[x_{i+1-k}]`` with ``prop1_weights``."""
    P, lags, tokens = _prep(P, lags, tokens, 'prop1_predictive')
    return mix(P, lags, tokens, prop1_weights(P, lags, tokens, beta))


def class_means(ptil, lags, design):
    """``(..., H, T, K)``: the mean of ``ptil`` over head h's keys ``C_h(i)`` (0 when empty).

    ``C_h(i) = {j : kmax < j <= i, (i - j) mod period in classes[h]}`` (1-based).
    """
    kmax, period, T = lags[-1], design.period, ptil.shape[-2]
    live = np.zeros(T)
    live[kmax:] = 1.0
    total = ptil * live[:, None]
    # strided running sums: row i holds the sum of rows i, i - period, i - 2 period, ...
    count = live.copy()
    for i in range(period, T):
        total[..., i, :] += total[..., i - period, :]
        count[i] += count[i - period]
    means = []
    for cls in design.classes:
        tot, cnt = np.zeros_like(total), np.zeros(T)
        for r in (r for r in cls if r < T):
            tot[..., r:, :] += total[..., :T - r, :]
            cnt[r:] += count[:T - r]
        means.append(tot / np.maximum(cnt, 1)[:, None])
    return np.stack(means, axis=-3)


def construction_weights(P, lags, tokens, beta, design=None):
    """``(..., T, K)``: the lag weights of ``construction_predictive`` (layer 3's attention row).

    'main' and 'positional' designs: ``score_k(i) = beta * sum_h mean_{j in C_h(i)} ptil[j, k]``.
    'pair' design (two lags, one head): the candidate key ``m = i + 1 - k`` scores
    ``+-beta * mean_{j in C(m)} (ptil[j, kmin] - ptil[j, kmax])`` (+ for kmin).
    """
    P, lags, tokens = _prep(P, lags, tokens, 'construction_weights')
    design = plan_heads(lags) if design is None else check_design(design)
    if design.lags != lags:
        raise ValueError(f'construction_weights: design lags must equal lags; got '
                         f'{list(design.lags)} vs {list(lags)}')
    means = class_means(normalised_transitions(P, lags, tokens), lags, design)
    if design.variant != 'pair':
        return exact_softmax(beta * means.sum(axis=-3))
    diff = means[..., 0, :, 0] - means[..., 0, :, 1]               # (..., T): lag kmin - kmax
    T = tokens.shape[-1]
    score = np.zeros(tokens.shape + (2,))
    for c, (k, sign) in enumerate(((lags[0], 1.0), (lags[1], -1.0))):
        score[..., k - 1:, c] = sign * beta * diff[..., :T - k + 1]   # key m = i + 1 - k
    return exact_softmax(score)


def construction_predictive(P, lags, tokens, beta, design=None):
    """The exact function of the three-layer network as ``lam`` grows without bound.

    ``sum_k w_k P[x_{i+1-k}]`` with ``construction_weights``; the network built
    by ``build_selective_induction`` equals it from query ``exact_from(design)``
    on (``design`` defaults to ``plan_heads(lags)``).
    """
    P, lags, tokens = _prep(P, lags, tokens, 'construction_predictive')
    return mix(P, lags, tokens, construction_weights(P, lags, tokens, beta, design))


# ----------------------------------------------------------------------------- metrics

def kl_divergence(p, q, axis=-1):
    """``sum p (log p - log q)`` along ``axis``; terms with ``p = 0`` count 0.

    >>> float(kl_divergence([0.5, 0.5], [0.25, 0.75]).round(4))
    0.1438
    """
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide='ignore', invalid='ignore'):
        terms = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
    return terms.sum(axis=axis)


def kl_curve(truth, pred):
    """``(T,)``: the mean over a batch ``(n, T, S)`` of KL(truth || pred) at each position."""
    return kl_divergence(truth, pred).mean(axis=0)


def kl_curves(P, lags, tokens, true_lags, predictions=None):
    """``{'BMA': curve, 'ML': curve, **{name: curve}}``: mean KL per position against the truth.

    ``tokens`` (n, T) and ``true_lags`` (n,) come from ``sample_batch``;
    ``predictions`` maps names to further ``(n, T, S)`` predictions.
    """
    truth = true_predictive(P, lags, tokens, true_lags)
    curves = {'BMA': kl_curve(truth, bma_predictive(P, lags, tokens)),
              'ML': kl_curve(truth, ml_predictive(P, lags, tokens))}
    curves.update({name: kl_curve(truth, pred) for name, pred in (predictions or {}).items()})
    return curves
