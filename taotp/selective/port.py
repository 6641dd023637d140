"""The construction in the book's params format, run by the book's forward pass.

``book_params`` returns an ordinary params dict (Chapter 1): embeddings, three
attention-only layers (MLPs zero) and ``out_emb``.  It runs on
``taotp.transformer`` / ``taotp.trace`` like every program of the book:

* ``norm='layer'`` (default): with the book's PreLN layer norms.  Every block
  of the stream sums to a known constant at every position (one-hots and
  attention averages), so each norm subtracts the same mean everywhere; two
  anchor dimensions holding ``+anchor`` and ``-anchor`` keep the standard
  deviation nearly constant (relative variation of order ``1 / anchor^2``).
  Each norm is then an affine map ``x -> (x - mu) / sigma``, undone inside
  ``Q``, ``K``, ``V`` and ``out_emb`` by ``G`` with ``x = LN(x) @ G``.
* ``norm='none'``: no anchors and no undoing; run it with
  ``taotp.trace(tokens, params, norm='none')`` (identity norms).

The residual stream (``book_layout``): ``tok``, ``pos``, ``anchor``, ``l1``,
then ``mhat{h}``, ``phat{h}`` per layer-2 head, then ``copy``; the parts of
the disentangled stream that nothing reads are dropped.  The logits are
``sum_k w_k log P[x_{i+1-k}]``, so the softmax gives the geometric mixture of
the candidate rows: the disentangled network with ``output='log'``.

    >>> import numpy as np, taotp
    >>> P = np.array([[.7, .2, .1], [.1, .7, .2], [.2, .1, .7]])
    >>> params = book_params(P, (1, 2, 3), 10, beta=10.0)
    >>> taotp.config(params)['d_model']       # 2 S + 2 T + 2 + 2 T H
    88
    >>> x = np.array([2, 0, 1, 2, 0, 0, 2, 1, 1, 2])
    >>> taotp.softmax(taotp.transformer(x, **params))[-1].round(3).tolist()
    [0.106, 0.679, 0.215]
"""
import numpy as np

from ..params import base_layer, base_params
from ..residual import Layout
from .construction import layer_matrices
from .design import check_constants, plan_heads
from .task import check_length, check_lags, check_transition_matrix

NORMS = ('layer', 'none')
MAX_PORT_LENGTH = 512     # d_model grows like 2 T (H + 1), each layer like T ** 2
ANCHOR = 1e5      # the anchors' magnitude; the port's error shrinks like lam / anchor^2


def book_layout(S, T, H):
    """The ``Layout`` of the port's residual stream (H layer-2 heads)."""
    blocks = [('tok', S), ('pos', T), ('anchor', 2), ('l1', T)]
    for h in range(H):
        blocks += [(f'mhat{h}', T), (f'phat{h}', T)]
    return Layout(blocks + [('copy', S)])


def _norm_inverse(L, filled, anchor, norm):
    """``G`` with ``x = LN(x) @ G`` for the streams reaching a layer (identity for norm='none').

    ``filled`` lists the blocks written so far; each sums to 1 at every
    position, and the anchors hold ``+anchor`` and ``-anchor``, so the mean is
    ``len(filled) / d`` everywhere and the variance is nearly constant.
    """
    d = L.d_model
    if norm == 'none':
        return np.eye(d)
    mu = len(filled) / d
    sumsq = 2 * anchor ** 2 + 0.5 * len(filled)       # nominal; the true value differs by O(1)
    sigma = np.sqrt(sumsq / d - mu ** 2)
    plus, minus = L['anchor'].start, L['anchor'].start + 1
    G = sigma * np.eye(d)
    # LN(x)_plus - LN(x)_minus = 2 anchor / sigma recovers the constant mu / sigma
    G[plus, :] += sigma * mu / (2 * anchor)
    G[minus, :] -= sigma * mu / (2 * anchor)
    return G


def book_params(P, lags, T, lam=500.0, beta=100.0, heads=None, variant=None, period=None,
                classes=None, norm='layer', anchor=ANCHOR):
    """The selective-induction construction as a params dict (attention-only, MLPs zero).

    Args:
        P, lags, T, lam, beta, heads, variant, period, classes: as for
            ``build_selective_induction``.
        norm: 'layer' (run with the book's PreLN norms, the default) or
            'none' (run with ``norm='none'``).
        anchor: the magnitude of the two anchor dimensions (norm='layer').

    Returns:
        the book's params dict; ``vocab_size = S``, ``block_size = T``,
        ``d_model = 2 S + 2 T + 2 + 2 T H``; so ``T`` is at most ``MAX_PORT_LENGTH``
        (512; each layer holds about ``T ** 2`` numbers per head).
    """
    where = 'book_params'
    P = check_transition_matrix(P, where)
    T = check_length(T, where, MAX_PORT_LENGTH, 'taotp.selective.port.MAX_PORT_LENGTH')
    lags = check_lags(lags, T, where)
    if norm not in NORMS:
        raise ValueError(f'{where}: norm must be one of {NORMS}; got {norm!r}')
    design = plan_heads(lags, heads, variant, period, classes)
    H = len(design.classes)
    check_constants(P, T, lam, beta, H, design.variant, where)
    S = len(P)
    L = book_layout(S, T, H)
    d = L.d_model
    cols = {name: np.arange(d)[L[name]] for name, _ in L.blocks}
    params = base_params(S, T, d)
    params['tok_emb'][:, L['tok']] = np.eye(S)
    params['pos_emb'][:, L['pos']] = np.eye(T)
    if norm == 'layer':
        params['pos_emb'][:, L['anchor']] = [anchor, -anchor]
    filled = ['tok', 'pos']
    for layer in layer_matrices(P, T, lam, beta, design):
        G = _norm_inverse(L, filled, anchor, norm)
        d_qk = max(sum(len(cols[k]) for _, k, _ in blocks) for blocks, _ in layer)
        d_v = max(sum(len(cols[s]) for s, _ in moves) for _, moves in layer)
        weights = base_layer(len(layer), d, 0, d_qk)
        weights['V'] = np.zeros((len(layer), d, d_v))
        weights['P'] = np.zeros((len(layer), d, d_v))
        for h, (blocks, moves) in enumerate(layer):
            at = 0
            for q, k, m in blocks:    # x_q m x_k^T = (y G_q m) . (y G_k), y = LN(x)
                w = len(cols[k])
                weights['Q'][h][:, at:at + w] = G[:, cols[q]] @ m * np.sqrt(d_qk)
                weights['K'][h][:, at:at + w] = G[:, cols[k]]
                at += w
            at = 0
            for src, dst in moves:    # V reads the source block, P writes it into the target
                w = len(cols[src])
                weights['V'][h][:, at:at + w] = G[:, cols[src]]
                weights['P'][h][cols[dst], at + np.arange(w)] = 1.0
                at += w
                filled.append(dst)
        params['layers'].append(weights)
    G = _norm_inverse(L, filled, anchor, norm)
    params['out_emb'] = (G[:, cols['copy']] @ np.log(P)).T.copy()
    return params
