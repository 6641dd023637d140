"""Min and Max: one attention head reads the smallest (largest) token seen so far (Fig. 5.2).

Token ``t`` of a vocabulary of ``V`` sits at angle ``2*pi*(t + 1) / (2V + 2)``
of the layer-norm circle: every token lies strictly inside the upper half
``(0, pi)``.  The query of every token is its component along the angle
``pi/2`` (positive everywhere on that half), the key its component along 0
(which falls as the token grows), so each query scores the keys by a positive
multiple of ``cos(angle)`` and a hardened softmax lands on the smallest token.
Max turns the key direction to ``pi``.  Three residual dimensions, no MLP and
no positions::

    [6, 2, 0, 12, 18, 7, 12, 12]  ->  0          (vocab_size >= 19)
"""
import numpy as np

from ..blocks import pos_enc_3d, pos_enc_3d_array
from ..params import base_layer, base_params
from ..residual import Layout
from ._args import check_int, check_scale

MIN_LAYOUT = Layout([('tok', 3)])

HARDEN = 1e8        # the book's query scale for Min (Fig. 5.2)
OUT_SCALE = 1e6     # the book's P scale: the copied token drowns the query's own (messy cleanup)


def min_angles(vocab_size):
    """Angle of every token on the circle: ``2*pi*(t + 1) / (2V + 2)``, all in (0, pi).

    >>> bool(((min_angles(5) > 0) & (min_angles(5) < np.pi)).all())
    True
    """
    return 2 * np.pi * np.arange(1, vocab_size + 1) / (2 * vocab_size + 2)


def _extreme_transformer(where, vocab_size, block_size, key_sign, harden, out_scale):
    check_int(where, 'vocab_size', vocab_size, 2)
    check_int(where, 'block_size', block_size, 1)
    check_scale(where, 'harden', harden)
    check_scale(where, 'out_scale', out_scale)
    L = MIN_LAYOUT
    params = base_params(vocab_size, block_size, d_model=L.d_model)   # pos_emb stays 0
    # tokens: points 1..V of 2V + 2 evenly spaced ones, i.e. the open upper half circle
    circle = pos_enc_3d_array(2 * (vocab_size + 1))
    params['tok_emb'] = circle[1:vocab_size + 1]
    params['out_emb'] = params['tok_emb']                              # tied
    layer = base_layer(n_heads=1, d_model=L.d_model, d_ff=0, d_head=3)
    # query . x_t = 3 sin(angle_t) > 0 for every token; key . x_s = +-3 cos(angle_s)
    layer['Q'][0, L['tok'], 0] = pos_enc_3d(np.pi / 2) * harden
    layer['K'][0, L['tok'], 0] = key_sign * pos_enc_3d(0.0)
    # copy the chosen token, large enough to drown the query's own token (messy cleanup)
    layer['V'][0] = np.eye(3)
    layer['P'][0] = np.eye(3) * out_scale
    params['layers'].append(layer)
    return params


def build_min_transformer(vocab_size, block_size, harden=HARDEN, out_scale=OUT_SCALE):
    """Output the smallest token seen so far (Chapter 5, Fig. 5.2).

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    Args:
        vocab_size: numbers 0..vocab_size-1 (repeats allowed).
        block_size: longest input (rows of the all-zero ``pos_emb``).
        harden: the query scale that makes the softmax a hard max (book 1e8).
        out_scale: scale of the copied token, the messy cleanup (book 1e6).
    Returns:
        A params dict: 1 layer, 1 head, d_model 3, d_head 3, d_ff 0, tied embeddings;
        ``3 vocab_size + 3 block_size + 39`` parameters, 11 non-zero outside tok_emb.
    Raises:
        TypeError, ValueError: sizes that are not integers >= 2 (>= 1 for
        block_size), scales that are not positive and finite.

    >>> import taotp
    >>> p = build_min_transformer(19, 8)
    >>> int(taotp.transformer([6, 2, 0, 12, 18, 7, 12, 12], **p)[-1].argmax())
    0
    """
    return _extreme_transformer('build_min_transformer', vocab_size, block_size, 1.0,
                                harden, out_scale)


def build_max_transformer(vocab_size, block_size, harden=HARDEN, out_scale=OUT_SCALE):
    """Output the largest token seen so far: Min with the key direction turned to ``pi``.

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    The key is written as ``-pos_enc_3d(0)`` (exactly the direction at angle pi,
    without the 1e-16 that ``sin(pi)`` leaves), so Max also has 11 non-zeros
    outside ``tok_emb``.  Arguments as in ``build_min_transformer``.

    >>> import taotp
    >>> p = build_max_transformer(19, 8)
    >>> int(taotp.transformer([6, 2, 0, 12, 18, 7, 12, 12], **p)[-1].argmax())
    18
    """
    return _extreme_transformer('build_max_transformer', vocab_size, block_size, -1.0,
                                harden, out_scale)


def min_so_far(tokens):
    """Plain-Python reference: the minimum of every prefix.

    >>> min_so_far([6, 2, 0, 12])
    [6, 2, 0, 0]
    """
    out, best = [], None
    for t in tokens:
        best = t if best is None or t < best else best
        out.append(int(best))
    return out


def max_so_far(tokens):
    """Plain-Python reference: the maximum of every prefix.

    >>> max_so_far([6, 2, 0, 12])
    [6, 6, 6, 12]
    """
    return [-m for m in min_so_far([-int(t) for t in tokens])]
