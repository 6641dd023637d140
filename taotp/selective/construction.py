"""The weights of the three-layer construction, by named blocks of the residual stream.

``layer_matrices`` says *what* every head computes, independently of the
machine that runs it: per head, bilinear score blocks ``(query block, key
block, matrix)`` and the moves ``(source block, target block)`` its output
makes.  ``network.py`` places these blocks in the paper's disentangled
transformer, ``port.py`` in the book's params format.

Block names: ``tok`` and ``pos`` (token and position one-hots), ``l1`` (layer
1's output: ``ptil[i, k]`` in slot ``i - k``), ``mhat{h}`` / ``phat{h}``
(layer-2 head h's average of ``pos`` / ``l1``), ``copy`` (the token layer 3
copies).  Inside the masks, ``i`` is the 1-based query position and ``j`` the
key's.

* layer 1, one head: score ``log P[x_j, x_i] + lam`` if ``i - j`` is a lag,
  else ``-lam``, so the kept keys get weights ``ptil[i, k]``;
* layer 2, one head per class: ``+lam`` on ``kmax < j <= i`` with
  ``(i - j) mod period`` in the class (a uniform average), else ``-lam``;
* layer 3, one head: the band shifted by one (``i + 1 - j`` a lag: the
  candidate parents of the next token), plus the evidence blocks, worth
  ``beta`` times the summed class means of ``ptil`` for that lag.
"""
import numpy as np

from .task import check_lags


def _pm(mask, lam):
    """``+lam`` where ``mask`` holds, ``-lam`` elsewhere."""
    return np.where(mask, lam, -lam)


def pair_evidence_block(lags, T, beta, shift=None):
    """The ``(T, T)`` layer-3 block of the two-lag, one-head design.

    Rows: the query's position ``a``; columns: the key's ``phat`` slot ``b``
    (both 1-based).  ``B[a, b] = 0`` if ``b >= a`` (never read), ``+beta`` if
    ``(a - b - shift) mod 2D < D``, else ``-beta``, with ``D = kmax - kmin``.
    The right ``shift`` is ``2 kmin - 1`` (the default); the paper's App. H
    uses 1, which agrees only when ``kmin = 1 (mod D)``.

    >>> pair_evidence_block((1, 3), 5, 1.0).astype(int)
    array([[ 0,  0,  0,  0,  0],
           [ 1,  0,  0,  0,  0],
           [ 1,  1,  0,  0,  0],
           [-1,  1,  1,  0,  0],
           [-1, -1,  1,  1,  0]])
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


def layer_matrices(P, T, lam, beta, design, pair_shift=None):
    """The construction in named blocks: ``[layer1, layer2, layer3]``.

    Each layer is a list of heads ``(blocks, moves)``: ``blocks`` lists
    ``(query_block, key_block, matrix)`` (the head's score is the sum of
    ``x[query_block] @ matrix @ x[key_block]``), ``moves`` lists
    ``(source_block, target_block)`` (what the head's average writes where).

    Args:
        P: the transition matrix (checked by the callers).
        T: the number of positions.
        lam, beta: mask hardening and selection strength.
        design: a checked ``Design`` (``plan_heads``).
        pair_shift: the 'pair' design's shift (default the corrected one).
    """
    lags, kmax, period = design.lags, design.lags[-1], design.period
    i = np.arange(1, T + 1)[:, None]               # query position
    j = np.arange(1, T + 1)[None, :]               # key position
    # layer 1: keep the parents i - k, weighted by P[x_j, x_i]
    layer1 = [([('tok', 'tok', np.log(P).T), ('pos', 'pos', _pm(np.isin(i - j, lags), lam))],
               [('pos', 'l1')])]
    # layer 2: head h averages the keys of its residue class (after the warm-up)
    layer2 = []
    for h, cls in enumerate(design.classes):
        keep = (i >= j) & (j > kmax) & np.isin((i - j) % period, cls)
        layer2.append(([('pos', 'pos', _pm(keep, lam))],
                       [('pos', f'mhat{h}'), ('l1', f'phat{h}')]))
    # layer 3: the candidate parents i + 1 - k, scored by the averaged evidence
    blocks = [('pos', 'pos', _pm(np.isin(i - j + 1, lags), lam))]
    if design.variant == 'main':          # query's phat slot a, key's mhat slot b
        evidence = beta * ((i - j) % period == period - 1)
        blocks += [(f'phat{h}', f'mhat{h}', evidence) for h in range(len(design.classes))]
    elif design.variant == 'positional':  # query's phat slot a, key's own position b
        blocks += [(f'phat{h}', 'pos', beta * np.isin((j - i - 1) % period, cls))
                   for h, cls in enumerate(design.classes)]
    else:                                 # pair: query position a, key's phat slot b
        blocks.append(('pos', 'phat0', pair_evidence_block(lags, T, beta, pair_shift)))
    layer3 = [(blocks, [('tok', 'copy')])]
    return [layer1, layer2, layer3]
