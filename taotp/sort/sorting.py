"""Sort with powerpoints: one head finds the next larger number (Figs. 5.3-5.5).

The "powerpoints" ``p_t`` put token ``t`` at a point of ``[0, pi]`` whose gaps
halve each time; the "next points" ``q_t`` lie a quarter of the way from
``p_{t+1}`` to ``p_{t+2}``, so seen from ``q_i`` the nearest ``p_j`` among the
tokens present is the smallest ``j > i``.  The last token printed queries with
its ``q``; the keys are the ``p`` of every token::

    [6, 2, 12, 18, 7, 0]  ->  [2, 6, 7, 12, 18]  (vocab_size = n >= 19)

Input: distinct numbers in ``1..n-1`` followed by the terminator 0; the program
is decoded for ``len(input) - 1`` steps.
"""
import numpy as np

from ..blocks import pos_enc_3d
from ..params import base_layer, base_params
from ..residual import Layout
from ._args import check_int, check_scale

SORT_LAYOUT = Layout([('p', 3), ('q', 3)])

HARDEN = 1e20       # the book's query scale for Sort (Fig. 5.5)
OUT_SCALE = 1e20    # the book's value scale: the copied token drowns the query's own


def stretch(x, mx):
    """Rescale ``x`` (non-negative, not all 0) so that its largest entry becomes ``mx``.

    >>> stretch([0.0, 1.0, 2.0], 4.0).tolist()
    [0.0, 2.0, 4.0]
    """
    x = np.asarray(x, dtype=np.float64)
    return x * (mx / x.max())


def powerpoints(n, mx=np.pi):
    """``n`` points: 0, 1, 1.5, 1.75, ... (gap ``2**-i`` after point i), stretched to ``[0, mx]``.

    >>> powerpoints(4, mx=1.75).tolist()
    [0.0, 1.0, 1.5, 1.75]
    """
    check_int('powerpoints', 'n', n, 2)
    gaps = 0.5 ** np.arange(n - 1)
    return stretch(np.concatenate(([0.0], np.cumsum(gaps))), mx)


def nextpoint(ts):
    """Query points: ``(3 ts[i+1] + ts[i+2]) / 4`` for i < n-2, then ``pi`` and ``0``.

    With powerpoints ``ts``, point i's query is nearest to ``ts[i+1]``, then
    ``ts[i+2]``, ... and only after all larger points to the smaller ones.  The
    last two entries send the largest but one to the largest (``pi``) and the
    largest back to 0.

    >>> nextpoint(powerpoints(4, mx=1.75)).tolist()[:2]
    [1.125, 1.5625]
    """
    ts = np.asarray(ts, dtype=np.float64)
    if ts.ndim != 1 or len(ts) < 2:
        raise ValueError(f'nextpoint: ts must be a 1-D array of at least 2 points; '
                         f'got shape {ts.shape}')
    return np.concatenate((0.75 * ts[1:-1] + 0.25 * ts[2:], [np.pi, 0.0]))


def build_sort_transformer(n=28, block_size=100, harden=HARDEN, out_scale=OUT_SCALE):
    """Sort distinct numbers that precede a terminating 0 (Chapter 5, Fig. 5.5).

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    Architecture: 1 layer, 1 head, d_model 6, d_head 6, d_ff 0, tied embeddings,
    ``pos_emb`` all zero.  ``6 n + 6 block_size + 150`` parameters; for n = 28,
    166 non-zero in ``tok_emb`` and 18 elsewhere (the book's 166 is the first part).

    The book's listing writes ``Q[3:, :3]`` and ``K[:3, :3]`` without the head
    index (a crash as printed); here they are ``Q[0, 3:, :3]`` and ``K[0, :3, :3]``.

    Args:
        n: vocabulary size (numbers 0..n-1, 0 is the terminator).
        block_size: rows of ``pos_emb``.
        harden: the query scale that makes the softmax a hard max (book 1e20).
        out_scale: scale of the copied token instead of a cleanup (book 1e20).
    Returns:
        A params dict.  Decode ``len(input) - 1`` steps to sort ``input``.
    Raises:
        TypeError, ValueError: n < 3, block_size < 1, non-positive scales.

    >>> import taotp
    >>> p = build_sort_transformer(19, 16)
    >>> taotp.decode([6, 2, 12, 18, 7, 0], p, max_steps=5)[6:].tolist()
    [2, 6, 7, 12, 18]
    """
    check_int('build_sort_transformer', 'n', n, 3)
    check_int('build_sort_transformer', 'block_size', block_size, 1)
    check_scale('build_sort_transformer', 'harden', harden)
    check_scale('build_sort_transformer', 'out_scale', out_scale)
    L = SORT_LAYOUT
    angles = powerpoints(n)
    params = base_params(n, block_size, L.d_model)
    emb = np.zeros((n, L.d_model))
    emb[:, L['p']] = pos_enc_3d(angles)              # where token t is
    emb[:, L['q']] = pos_enc_3d(nextpoint(angles))   # where token t looks next
    params['tok_emb'] = params['out_emb'] = emb
    layer = base_layer(n_heads=1, d_model=L.d_model, d_ff=0, d_head=6)
    # score(i, j) = harden * q_i . p_j / sqrt(6) = harden * 3 cos(angle(q_i) - angle(p_j)) / sqrt(6)
    layer['Q'][0, L['q'], :3] = np.eye(3) * harden
    layer['K'][0, L['p'], :3] = np.eye(3)
    layer['V'][0] = np.eye(6) * out_scale    # instead of a cleanup
    layer['P'][0] = np.eye(6)
    params['layers'].append(layer)
    return params


def sort_reference(tokens):
    """Plain-Python reference: the numbers before the terminating 0, ascending.

    >>> sort_reference([6, 2, 12, 18, 7, 0])
    [2, 6, 7, 12, 18]
    """
    tokens = [int(t) for t in tokens]
    if not tokens or tokens[-1] != 0:
        raise ValueError(f'sort_reference: the input must end with the terminator 0; got {tokens}')
    return sorted(tokens[:-1])
