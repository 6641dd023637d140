"""The task of Chapter 10: interleaved Markov chains with a hidden lag.

One row-stochastic matrix ``P`` (``P[a, b]`` = probability that a child is ``b``
when its parent is ``a``) serves every sequence.  A sequence first draws its lag
``k`` uniformly from the lag set, then:

* its first ``max(lags)`` tokens are i.i.d. from the stationary law ``pi`` of
  ``P`` (the warm-up; the same length whatever ``k`` is);
* every later token is drawn from the row of the token ``k`` places back,
  ``x_t ~ P[x_{t-k}]``.

So a lag-``k`` sequence is ``k`` copies of one Markov chain, woven together
position by position, and the lag must be inferred in context.

    >>> import numpy as np
    >>> P = transition_matrix(3, np.random.default_rng(0))
    >>> tokens, lag = sample_sequence(P, (1, 2, 3), 8, np.random.default_rng(1))
    >>> tokens.shape, lag in (1, 2, 3)
    ((8,), True)
"""
import numpy as np

# The lag sets the chapter's figures and widgets offer (name shown in a menu -> lags).
PRESETS = {'{1,2,3}': (1, 2, 3), '{1,3}': (1, 3), '{1,3,4}': (1, 3, 4), '{3,5,7}': (3, 5, 7),
           '{1,...,5}': (1, 2, 3, 4, 5)}


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_rng(rng, where):
    """Raise ``TypeError`` unless ``rng`` is a ``numpy.random.Generator``."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'{where}: rng must be a numpy Generator (np.random.default_rng(seed)); '
                        f'got {type(rng).__name__}')
    return rng


MAX_LENGTH = 1 << 12      # the longest sequence T a builder or sampler accepts


def check_length(T, where, high=MAX_LENGTH, limit='taotp.selective.task.MAX_LENGTH'):
    """``T`` as an int after checking that it is an integer in 1..``high``."""
    if not _is_int(T) or T < 1:
        raise ValueError(f'{where}: T must be a positive integer; got {T!r}')
    if T > high:
        raise ValueError(f'{where}: T must be at most {high:,} ({limit}); got {T}')
    return int(T)


def transition_matrix(S, rng, alpha=None):
    """A random, strictly positive, row-stochastic ``(S, S)`` matrix.

    The paper does not say how it drew its matrices.  Our rule: each row holds
    i.i.d. Uniform(0, 1) numbers divided by their sum (with it, the chapter's
    Claim-1 statistics land where the paper's histogram does).  With ``alpha``,
    each row is drawn from a symmetric Dirichlet(alpha) instead.

    Args:
        S: alphabet size, an integer >= 2.
        rng: a ``numpy.random.Generator``.
        alpha: ``None`` (normalised uniform rows) or a Dirichlet concentration > 0.

    >>> P = transition_matrix(4, np.random.default_rng(0))
    >>> P.shape, bool(np.allclose(P.sum(axis=1), 1)), bool((P > 0).all())
    ((4, 4), True, True)
    """
    if not _is_int(S) or S < 2:
        raise ValueError(f'transition_matrix: S must be an integer >= 2; got {S!r}')
    check_rng(rng, 'transition_matrix')
    if alpha is None:
        rows = rng.random((S, S))
        rows = np.where(rows > 0, rows, np.finfo(float).tiny)     # never an exact zero
    else:
        if not np.isfinite(alpha) or alpha <= 0:
            raise ValueError(f'transition_matrix: alpha must be a positive number; got {alpha!r}')
        rows = np.maximum(rng.dirichlet(np.full(S, float(alpha)), size=S), 1e-300)
    return rows / rows.sum(axis=1, keepdims=True)


def check_transition_matrix(P, where='P'):
    """``P`` as float64 after checking: square, S >= 2, finite, entries > 0, rows sum to 1.

    Entries must be strictly positive because layer 1 of the construction stores
    ``log P``.
    """
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
    """The lag set as a sorted tuple of distinct positive ints, all ``< T`` if ``T`` is given.

    >>> check_lags([3, 1, 2])
    (1, 2, 3)
    """
    try:
        items = list(lags)
    except TypeError:
        raise TypeError(f'{where}: lag set must be an iterable of integers; '
                        f'got {type(lags).__name__}') from None
    if not items:
        raise ValueError(f'{where}: lag set must be non-empty; got {items}')
    for k in items:
        if not _is_int(k):
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
    """The stationary law ``pi`` of ``P`` (``pi @ P = pi``, ``sum(pi) = 1``).

    Solved as a least-squares problem: the ``S`` equations ``pi (P - I) = 0``
    stacked on ``sum(pi) = 1``.

    >>> P = np.array([[.9, .1], [.5, .5]])
    >>> stationary(P).round(4).tolist()
    [0.8333, 0.1667]
    """
    P = check_transition_matrix(P, 'stationary')
    S = len(P)
    system = np.vstack([(P - np.eye(S)).T, np.ones((1, S))])      # (S + 1, S)
    rhs = np.zeros(S + 1)
    rhs[-1] = 1.0
    pi = np.maximum(np.linalg.lstsq(system, rhs, rcond=None)[0], 0)
    return pi / pi.sum()


def _lag_for(lags, lag, n, rng, where):
    """``n`` true lags: uniform over ``lags``, or ``lag`` repeated (checked to be in the set)."""
    if lag is None:
        return np.asarray(lags)[rng.integers(len(lags), size=n)]
    if lag not in lags:
        raise ValueError(f'{where}: lag must be one of {list(lags)}; got {lag!r}')
    return np.full(n, int(lag))


def sample_sequence(P, lags, T, rng, lag=None):
    """One sequence of the task: ``(tokens (T,) int64, true_lag)``.

    Args:
        P: the transition matrix (checked by ``check_transition_matrix``).
        lags: the lag set; the largest lag must be < T.
        T: the sequence length.
        rng: a ``numpy.random.Generator``; the same seed gives the same sequence.
        lag: force this lag (one of ``lags``) instead of drawing it.
    """
    P = check_transition_matrix(P, 'sample_sequence')
    T = check_length(T, 'sample_sequence')
    lags = check_lags(lags, T, 'sample_sequence')
    check_rng(rng, 'sample_sequence')
    if lag is None:
        k = lags[int(rng.integers(len(lags)))]
    else:
        k = int(_lag_for(lags, lag, 1, rng, 'sample_sequence')[0])
    S, kmax = len(P), lags[-1]
    tokens = np.empty(T, dtype=np.int64)
    tokens[:kmax] = rng.choice(S, size=kmax, p=stationary(P))      # the warm-up
    for t in range(kmax, T):
        tokens[t] = rng.choice(S, p=P[tokens[t - k]])
    return tokens, k


def sample_batch(P, lags, T, n, *, rng, lag=None):
    """``n`` sequences at once: ``(tokens (n, T) int64, true_lags (n,))``.

    Same law as ``sample_sequence`` (not the same draws): inverse-CDF sampling,
    one position at a time for the whole batch.

    >>> P = transition_matrix(3, np.random.default_rng(0))
    >>> X, lag = sample_batch(P, (1, 3), 10, 4, rng=np.random.default_rng(1), lag=3)
    >>> X.shape, lag.tolist()
    ((4, 10), [3, 3, 3, 3])
    """
    P = check_transition_matrix(P, 'sample_batch')
    T = check_length(T, 'sample_batch')
    lags = check_lags(lags, T, 'sample_batch')
    check_rng(rng, 'sample_batch')
    true = _lag_for(lags, lag, n, rng, 'sample_batch')
    S, kmax = len(P), lags[-1]
    cdf = np.cumsum(P, axis=1)
    cdf[:, -1] = 1.0
    pi_cdf = np.cumsum(stationary(P))
    pi_cdf[-1] = 1.0
    tokens = np.empty((n, T), dtype=np.int64)
    tokens[:, :kmax] = np.searchsorted(pi_cdf, rng.random((n, kmax)), side='right')
    rows = np.arange(n)
    for t in range(kmax, T):
        parent = tokens[rows, t - true]                               # (n,)
        tokens[:, t] = (rng.random(n)[:, None] >= cdf[parent]).sum(axis=1)
    np.minimum(tokens, S - 1, out=tokens)
    return tokens, true
