"""A Lookup Table that works for every table: one attention layer hashes, the MLP looks up.

Chapter 3's constructions score each value by a sum over key positions, so
some tables (puzzle 3.11) defeat them at any width.  Here the attention
layer still adds up the key (``l`` heads, head ``h`` reading ``h`` positions
back), but into a single number: ``s = sum_h u_h . c(x_{t-h})`` with token
codes ``c`` on the layer-norm circle and one direction ``u_h`` per head.  For
all but a measure-zero set of directions the table's keys get ``n`` distinct
numbers; the builder draws a few seeded candidates and keeps the one that
spreads the keys widest.  Layer norm turns ``s`` into a strictly increasing
``g(s)``, and the MLP is the piecewise-linear interpolation through the points
``(g(key), big * c(value))``: one ReLU per entry (bar one), ``ReLU(g - g_i)``
with the change of slope at ``g_i`` as its output row.  At every key the MLP
writes exactly its value's code, large enough to drown the last token's own
code; the tied output embedding reads it back.

Residual layout (``universal_layout()``), every input row a layer-norm fixed point::

    | tok (3) | pos (3) | hash (1) |

One layer, ``l`` heads of width 3, d_ff = n - 1, tied embeddings.

    >>> ks, vs = np.array([[0, 0], [0, 1], [1, 0], [1, 1]]), np.array([0, 1, 1, 0])
    >>> p = build_universal_lookup_transformer(ks, vs, vocab_size=2, block_size=6)
    >>> taotp.last_token_argmax(np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]]), p).tolist()
    [1, 0, 1]
"""
import numpy as np

from ..blocks import HARDEN, pos_3d_enc_rotation_matrix, pos_enc_3d, pos_enc_3d_array
from ..params import base_layer, base_params, check_size
from ..residual import Layout
from ..trace import trace
from .tables import as_rng, check_table

CANDIDATES = 16      # seeded hash directions tried; the widest spread of the keys wins
MIN_GAP = 1e-9       # the smallest allowed gap between two keys' g values
OUT_SCALE = 1e4      # the value codes are written OUT_SCALE / (1 - cos(2 pi / V)) large
WHERE = 'build_universal_lookup_transformer'


def universal_layout():
    """The residual stream: a token's code, its position, the hash.

    >>> universal_layout()
    Layout(tok=3, pos=3, hash=1; d_model=7)
    """
    return Layout([('tok', 3), ('pos', 3), ('hash', 1)])


def _fixed(rows):
    """Scale 3-d circle rows so that a row of the 7-d stream (zeros elsewhere but one other
    circle block) has squared norm 7: both blocks together are a layer-norm fixed point."""
    return rows * np.sqrt(7 / 6)


def token_codes(vocab_size):
    """Each token's point on the circle (evenly spaced), as a ``tok`` block row."""
    return _fixed(pos_enc_3d(2 * np.pi * np.arange(vocab_size) / vocab_size))


def _key_hashes(ks, codes, directions):
    """``s`` of each key for each candidate set of directions: (candidates, n)."""
    # directions (c, l, 3); head h reads k[:, l-1-h]
    l = ks.shape[1]
    parts = np.einsum('nhd,chd->cnh', codes[ks[:, ::-1]], directions)
    return parts.sum(axis=2) if l else np.zeros((len(directions), len(ks)))


def _spread(values):
    """Smallest gap between sorted values (inf for one value)."""
    values = np.sort(values, axis=-1)
    return np.diff(values, axis=-1).min(axis=-1) if values.shape[-1] > 1 else \
        np.full(values.shape[:-1], np.inf)


def hash_directions(ks, vocab_size, rng=None, candidates=CANDIDATES):
    """The per-head directions ``u_h`` (shape (l, 3)) that spread the table's keys widest.

    Draws ``candidates`` seeded sets of random directions in the circle's plane,
    each of length 1 / l (so that ``|s| <= sqrt(7/2)``), and keeps the set whose
    smallest gap between two keys' hashes is largest.
    """
    rng = as_rng(rng, WHERE)
    ks = np.asarray(ks, dtype=np.int64)
    l = ks.shape[1]
    codes = token_codes(vocab_size)
    raw = rng.normal(size=(candidates, l, 3))
    raw -= raw.mean(axis=2, keepdims=True)          # in the circle's plane
    raw /= np.linalg.norm(raw, axis=2, keepdims=True) * l
    gaps = _spread(_key_hashes(ks, codes, raw))
    return raw[int(np.argmax(gaps))]


def universal_hash_layer(directions, block_size, harden=HARDEN):
    """The attention layer: head h reads h positions back and adds ``u_h . code`` to ``hash``.

    Queries and keys read only the ``pos`` block, which is orthogonal to
    (1, 1, 1); so adding ``a 1^T + 1 b^T`` to a head's 3 x 3 turn changes no
    score, and the first row and column are cleared (4 non-zeros a head).
    """
    L = universal_layout()
    l = len(directions)
    layer = base_layer(n_heads=l, d_model=L.d_model, d_ff=0, d_head=3)
    tok, pos, hsh = L['tok'], L['pos'], L['hash'].start
    scale = 7 / 6                                   # |pos row|^2 = 3 * 7/6 after _fixed
    for h in range(l):
        turn = pos_3d_enc_rotation_matrix(-2 * np.pi * h / block_size)
        turn = turn - turn[:, :1] - turn[:1, :] + turn[0, 0]
        turn[np.abs(turn) < 1e-15] = 0.0
        layer['Q'][h, pos, :] = harden * turn / scale
        layer['K'][h, pos, :] = np.eye(3)
        layer['V'][h, tok, 0] = directions[h]
        layer['P'][h, hsh, 0] = 1.0
    return layer


def interpolating_mlp(g, targets, d_model, out_dims):
    """MLP weights whose output at each ``g[i]`` is exactly ``targets[i]`` (in ``out_dims``).

    Sorted by ``g``: ``f(g) = Y_0 + sum_i (m_i - m_{i-1}) ReLU(g - g_i)``, the
    piecewise-linear interpolation, with ``m_i`` the slope between points i and
    i + 1.  The unit of ``g_i`` reads coordinate ``d_model - 1`` (the hash).
    Every output row may gain a multiple of (1, 1, 1) in the 3 token dims
    (the token rows have zero sum, so no logit changes): its first entry is
    cleared.  Returns ``(M1, b1, M2, b2)`` with ``len(g) - 1`` hidden units.
    """
    order = np.argsort(g)
    g, Y = np.asarray(g)[order], np.asarray(targets, dtype=np.float64)[order]
    slopes = np.diff(Y, axis=0) / np.diff(g)[:, None]          # (n - 1, 3)
    changes = np.diff(np.vstack([np.zeros((1, Y.shape[1])), slopes]), axis=0)
    units = len(g) - 1
    M1, b1 = np.zeros((d_model, units)), -g[:units].copy()
    M1[-1, :] = 1.0
    M2, b2 = np.zeros((units, d_model)), np.zeros(d_model)
    M2[:, out_dims] = changes - changes[:, :1]
    b2[out_dims] = Y[0] - Y[0, 0]
    return M1, b1, M2, b2


def universal_lookup_size(n_entries, key_len, vocab_size, block_size):
    """The parameter count of ``build_universal_lookup_transformer`` (no build needed).

    >>> universal_lookup_size(1000, 5, 10, 5)
    15517
    """
    return 7 * vocab_size + 7 * block_size + 84 * key_len + 15 * (n_entries - 1) + 7


def build_universal_lookup_transformer(ks, vs, vocab_size, block_size, rng=None, harden=HARDEN,
                                       candidates=CANDIDATES, out_scale=OUT_SCALE):
    """A Lookup Table correct for every table of distinct keys (module docstring).

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    Same prompt and answer convention as ``build_lookup_transformer``: a prompt
    whose last ``l`` tokens are a key (after any prefix, up to ``block_size``
    tokens in all) is answered with that key's value.

    Architecture: 1 layer, ``l`` heads (d_head 3), d_model 7, d_ff ``n - 1``,
    tied embeddings; ``7 V + 7 block_size + 84 l + 15 (n - 1) + 7`` parameters.

    Args:
        ks, vs: the table, keys (n, l) and values (n,).
        vocab_size, block_size: of the program; block_size >= l.
        rng: None (seed 0), an int seed or a numpy Generator (picks the hash).
        harden: the attention-score factor of the position heads.
        candidates: how many seeded hash directions to try.
        out_scale: the value codes are written ``out_scale / (1 - cos(2 pi / V))`` large.

    Raises:
        ValueError, TypeError: a malformed table (``check_table``), block_size < l,
        or a table whose keys no candidate separates by ``MIN_GAP``.
    """
    ks, vs = check_table(WHERE, ks, vs, vocab_size)
    n, l = ks.shape
    if not isinstance(block_size, bool) and isinstance(block_size, (int, np.integer)):
        check_size(WHERE, 'block_size', block_size, low=None)      # at most MAX_SIZE
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) \
            or block_size < l:
        raise ValueError(f'{WHERE}: block_size must be an int >= the key length {l}; '
                         f'got {block_size!r}')
    L = universal_layout()
    params = base_params(vocab_size, block_size, L.d_model)
    params['tok_emb'][:, L['tok']] = token_codes(vocab_size)
    params['out_emb'] = params['tok_emb']
    params['pos_emb'][:, L['pos']] = _fixed(pos_enc_3d_array(block_size))
    directions = hash_directions(ks, vocab_size, rng, candidates)
    layer = universal_hash_layer(directions, block_size, harden)
    params['layers'].append(layer)
    g = trace(ks, params).mlp_in[0][:, -1, L['hash'].start]     # each key's g, by the engine
    gap = _spread(g)
    if gap < MIN_GAP:
        raise ValueError(f'{WHERE}: no hash of {candidates} candidates separates the keys; '
                         f'smallest gap {gap:.1e} < {MIN_GAP:.0e}')
    big = out_scale / (1 - np.cos(2 * np.pi / max(vocab_size, 3)))
    targets = big * params['tok_emb'][vs][:, L['tok']]
    layer['M1'], layer['b1'], layer['M2'], layer['b2'] = \
        interpolating_mlp(g, targets, L.d_model, L['tok'])
    return params
