"""Fitting the tied construction: token embeddings and hash matrices by gradient descent.

The optimiser never runs the transformer.  It works on the chapter's *training
model*, the closed form of what the wired program computes at the last key
position (book Figs. 3.4-3.5)::

    hash(k) = sum_p E[k_p] @ M[p]                      # (t,), the token block
    logits  = layer_norm([hash(k), 0, 0, 0])[:t] @ E.T # tied out_emb; the 3 zeros
                                                       # are the emptied pos block

``E`` (vocab, t) is the token block of ``tok_emb`` and ``M`` (l, t, t) the
hash matrices.  ``lookup_scores`` evaluates it; ``loss_and_grad`` adds the
summed cross-entropy and its gradient, derived by hand through that layer
norm; ``optimize`` runs plain gradient descent.  tests/test_lookup.py checks
that ``lookup_scores`` equals the last logits of the wired program as run by
the engine (``taotp.transformer_batch``).
"""
import sys

import numpy as np

from ..model import EPS, layer_norm
from ..params import check_numbers, check_size
from .tables import as_rng, check_table

DEFAULT_OPTIMIZATION_ITERS = 5000  # a cap: the book states no count; see fit_hashes
MAX_OPTIMIZATION_ITERS = 1_000_000  # the most gradient steps a builder accepts
INIT_SCALE = 0.1                   # the book's N(0, 1e-1) start for E and M (Fig. 3.6)


def logsumexp(x, axis=-1):
    """log(sum(exp(x))) along ``axis`` (kept as a length-1 axis), without overflow.

    >>> float(logsumexp(np.array([[1000.0, 1000.0]]))[0, 0] - 1000)   # log 2
    0.693...
    """
    top = np.max(x, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top


def _scores(E, M, k):
    """The training model: logits (n, V) of every key, and what the gradient needs."""
    n_tok = E.shape[1]
    D = n_tok + 3                                   # the final norm also sees the 3 pos dims
    x = E[k]                                        # (n, l, t)
    n, l = k.shape
    h = x.reshape(n, l * n_tok) @ M.reshape(l * n_tok, n_tok)   # hash(key), (n, t)
    mean = h.sum(axis=1, keepdims=True) / D
    c = h - mean                                    # centred tok block; the pos block is -mean
    var = ((c ** 2).sum(axis=1, keepdims=True) + 3 * mean ** 2) / D
    root = np.sqrt(var)
    sigma = root + EPS                              # the book adds epsilon to the std
    y = c / sigma                                   # layer-normed tok block
    z = y @ E.T                                     # tied out_emb: logits (n, V)
    return z, (x, c, mean, root, sigma, y, D)


def lookup_scores(E, M, ks):
    """Logits the tied lookup program gives each key, before the argmax: shape (n, V).

    >>> E, M = np.eye(3)[:, :2] * 2 - 1, np.zeros((1, 2, 2)) + np.eye(2)
    >>> lookup_scores(E, M, np.array([[0], [1]])).argmax(1)
    array([0, 1])
    """
    return _scores(np.asarray(E, float), np.asarray(M, float), np.asarray(ks))[0]


def loss_and_grad(E, M, k, v, y=None):
    """Summed cross-entropy of the values given the keys, and its gradients.

    Args:
        E: (V, t) token embeddings (the tok block).
        M: (l, t, t) hash matrices.
        k, v: keys (n, l) and values (n,).
        y: their one-hot rows; accepted for the book's signature, not needed.

    Returns:
        ``loss, (dM, dE)``.  The derivative runs through the final layer norm
        over all t + 3 dimensions (the 3 zeros of the position block included).
    """
    k, v = np.asarray(k), np.asarray(v)
    z, cache = _scores(E, M, k)
    return _loss_grad(E, M, k, v, z, cache)


def _loss_grad(E, M, k, v, z, cache, plan=None):
    x, c, mean, root, sigma, normed, D = cache
    rows = np.arange(len(z))
    top = np.max(z, axis=1, keepdims=True)
    dz = np.exp(z - top)                                       # one exp for both the
    total = np.sum(dz, axis=1, keepdims=True)
    lse = np.log(total) + top                                  # logsumexp (n, 1) and
    loss = float(np.sum(lse[:, 0] - z[rows, v]))
    dz /= total                                                # softmax ...
    dz[rows, v] -= 1                                           # ... minus the one-hot target
    g = dz @ E                                                 # dL/d(normed tok block)
    # normed = c / sigma, sigma = sqrt(var) + eps; the pos block's normed value
    # (-mean / sigma) meets zeros in tok_emb, so it never reaches the logits.
    gc = (g * c).sum(axis=1, keepdims=True)                    # sum_i g_i c_i
    dvar = -gc / sigma ** 2 / (2 * root)                       # dL/dvar
    # var = (sum_tok c^2 + 3 mean^2) / D, and c = -mean on each of the 3 pos dims
    dc_tok = g / sigma + dvar * 2 * c / D                      # dL/dc on the tok block
    dc_pos = dvar * 2 * (-mean) / D                            # dL/dc on each pos dim
    # c = u - mean(u) over all D dims, u = (h, 0, 0, 0): subtract the mean gradient
    shift = (dc_tok.sum(axis=1, keepdims=True) + 3 * dc_pos) / D
    dh = dc_tok - shift                                        # (n, t)
    n, l, t = x.shape
    dM = (x.reshape(n, l * t).T @ dh).reshape(l, t, t)
    dE = dz.T @ normed                                         # E as the output embedding
    dx = (dh @ M.reshape(l * t, t).T).reshape(n, l, t)        # E as the input embedding
    _scatter_add(dE, k.ravel(), dx.reshape(n * l, t), plan)
    return loss, (dM, dE)


def _scatter_plan(index):
    """What ``_scatter_add`` needs of ``index``: the sort order, the run starts, their ids."""
    order = np.argsort(index, kind='stable')
    index = index[order]
    starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    return order, starts, index[starts]


def _scatter_add(target, index, rows, plan=None):
    """``target[index[i]] += rows[i]`` for repeated indices (a faster ``np.add.at``).

    ``plan`` is ``_scatter_plan(index)``, computed once when the same index repeats.
    """
    order, starts, ids = _scatter_plan(index) if plan is None else plan
    target[ids] += np.add.reduceat(rows[order], starts, axis=0)


def _margin(z, v):
    """How far each key's value beats the best other token (negative: a wrong answer)."""
    rows = np.arange(len(z))
    right = z[rows, v].copy()
    z[rows, v] = -np.inf
    best_other = z.max(axis=1)
    z[rows, v] = right
    return right - best_other


def optimize(E, M, ks, vs, iters, lr=1e-3, progress=None, progress_every=100, stop_margin=0.01):
    """Gradient descent on ``E`` and ``M`` in place, layer-normalising ``E`` before every step.

    Args:
        E, M, ks, vs: as in ``loss_and_grad``; ``E`` and ``M`` are updated in place.
        iters: at most this many gradient steps.
        lr: the step size (the book's 1e-3).
        progress: if given, called as ``progress(step, iters, loss, accuracy)``
            every ``progress_every`` steps and at the end (nothing is printed
            otherwise; ``terminal_progress`` is one such callback).
        stop_margin: stop once every key's value wins by at least this many
            logits; ``None`` runs all ``iters`` steps, like the book.

    Returns:
        A dict: ``iters`` (steps taken), the final ``loss`` and ``accuracy`` on
        the table, and the ``losses`` seen every ``progress_every`` steps.
    """
    ks, vs = np.asarray(ks), np.asarray(vs)
    plan = _scatter_plan(ks.ravel())            # the keys never change: sort them once
    losses = []
    step = 0
    while True:
        E[:] = layer_norm(E)
        z, cache = _scores(E, M, ks)
        margins = _margin(z, vs)
        acc = float(np.mean(margins > 0))
        if step == iters or (stop_margin is not None and margins.min() > stop_margin):
            loss = float(np.sum(logsumexp(z)[:, 0] - z[np.arange(len(z)), vs]))
            losses.append(loss)
            break
        loss, (dM, dE) = _loss_grad(E, M, ks, vs, z, cache, plan)
        E -= lr * dE
        M -= lr * dM
        if step % progress_every == 0:
            losses.append(loss)
            if progress is not None:
                progress(step, iters, loss, acc)
        step += 1
    if progress is not None:
        progress(step, iters, loss, acc)
    return {'iters': step, 'loss': loss, 'accuracy': acc, 'losses': losses}


def terminal_progress(step, total, loss, accuracy):
    """A one-line progress display on the process's real stderr.

    Pass it as ``progress=taotp.lookup.terminal_progress``.  It writes to
    ``sys.__stderr__`` (the terminal that started Jupyter), so notebooks never
    store it.
    """
    stream = sys.__stderr__
    if stream is None:
        return
    width = 30
    filled = int(width * step / max(total, 1))
    stream.write(f'\r[{"#" * filled}{"." * (width - filled)}] step {step}/{total} '
                 f'loss {loss:.3f} right {accuracy:.1%}')
    stream.flush()


def check_iters(where, optimization_iters):
    """A count of gradient steps: an int in 0..``MAX_OPTIMIZATION_ITERS``."""
    check_size(where, 'optimization_iters', optimization_iters, low=None,
               high=MAX_OPTIMIZATION_ITERS, limit='taotp.lookup.training.MAX_OPTIMIZATION_ITERS')
    if optimization_iters < 0:
        raise ValueError(f'{where}: optimization_iters must be >= 0; got {optimization_iters}')
    return int(optimization_iters)


def fit_hashes(ks, vs, vocab_size, tok_dims, optimization_iters=DEFAULT_OPTIMIZATION_ITERS,
               rng=None, lr=1e-3, progress=None, stop_margin=0.01):
    """Token embeddings and hash matrices for a table, fitted from a small random start.

    ``E`` and ``M`` start at N(0, 0.1) (the book's scale) and ``optimize`` runs
    for at most ``optimization_iters`` steps of size ``lr``.  The default cap of
    5,000 (the book never states its count) reaches 100 % on seeded random
    tables of the book's sizes, and the early stop (``stop_margin``) usually
    ends far sooner.

    Args:
        ks, vs: the table; ids must be below ``vocab_size``.
        tok_dims: t, the width of the token block (>= 2).
        rng: None (seed 0), an int seed or a numpy Generator.

    Returns:
        ``(E, M, info)``: E (vocab_size, t) layer-normalised, M (l, t, t), and
        ``optimize``'s report.

    >>> E, M, info = fit_hashes(np.array([[0, 1], [1, 0]]), np.array([2, 3]), 4, 3, rng=0)
    >>> E.shape, M.shape, info['accuracy']
    ((4, 3), (2, 3, 3), 1.0)
    """
    where = 'fit_hashes'
    ks, vs = check_table(where, ks, vs, vocab_size)
    check_size(where, 'tok_dims', tok_dims, low=None)
    if tok_dims < 2:
        raise ValueError(f'{where}: tok_dims must be >= 2 (layer norm flattens 1 dim); '
                         f'got {tok_dims}')
    check_iters(where, optimization_iters)
    check_numbers(where, (vocab_size + ks.shape[1] * tok_dims) * tok_dims, 'the fitted weights')
    rng = as_rng(rng, where)
    E = rng.normal(0, INIT_SCALE, (vocab_size, tok_dims))
    M = rng.normal(0, INIT_SCALE, (ks.shape[1], tok_dims, tok_dims))
    info = optimize(E, M, ks, vs, optimization_iters, lr=lr, progress=progress,
                    stop_margin=stop_margin)
    return E, M, info
