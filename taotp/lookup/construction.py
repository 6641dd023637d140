"""The construction: one attention layer that hashes the last ``l`` tokens.

Residual layout (``lookup_layout(tok_dims)``)::

    | tok (tok_dims) | pos (3) |

Token rows live in the ``tok`` block (layer-normalised, zero in ``pos``),
position rows on the sqrt(3)-circle in ``pos`` (zero in ``tok``), so every
input vector is a fixed point of ``layer_norm``.  One layer with ``l`` heads
of width d_model: head ``h`` attends exactly ``h`` positions back (a hardened
turn of the position circle) and maps what it reads through a hash matrix;
head 0 also subtracts the residual (proper cleanup), so the last position ends
up holding ``hash(key) = sum_p tok(k_p) @ M[p]`` and nothing else.
"""
import numpy as np

from ..blocks import (HARDEN, harden as harden_matrix, pos_3d_enc_rotation_matrix,
                      pos_enc_3d_array)
from ..model import forward, layer_norm
from ..params import base_layer, base_params, check_numbers, check_size
from ..residual import Layout
from .tables import as_rng, check_table
from .training import DEFAULT_OPTIMIZATION_ITERS, check_iters, fit_hashes

HASH_SCALE = 0.1   # the book's N(0, 1e-1) hash matrices of the untied construction (Fig. 3.3)


def lookup_layout(tok_dims):
    """The residual stream of both lookup builders: the ``tok`` block, then ``pos``.

    >>> lookup_layout(5)
    Layout(tok=5, pos=3; d_model=8)
    """
    return Layout([('tok', tok_dims), ('pos', 3)])


def hash_layer(hash_matrices, block_size, harden=HARDEN):
    """The one attention layer: head h reads h positions back and applies ``M[l - 1 - h]``.

    Args:
        hash_matrices: M, shape (l, t, t); ``M[p]`` maps the token at key position p.
        block_size: the number of positions on the circle.
        harden: the attention-score factor; the book's Figs. 3.3 and 3.6 use
            1e8 (``taotp.blocks.HARDEN``); tests/test_lookup.py measures the
            working range (from 100 up).

    Returns:
        A layer dict (``base_layer`` format), ``l`` heads, d_head = d_model, no MLP.
    """
    l, tok_dims = len(hash_matrices), np.shape(hash_matrices)[1]
    L = lookup_layout(tok_dims)
    d = L.d_model
    layer = base_layer(l, d, 0, d)       # d_head = d_model: each head copies everything
    tok, pos = L['tok'], L['pos']
    for head in range(l):
        turn = pos_3d_enc_rotation_matrix(-2 * np.pi * head / block_size)
        turn[np.abs(turn) < 1e-15] = 0.0     # rounding dust (the turn by 0 is exactly I)
        layer['Q'][head, pos, pos] = harden_matrix(turn, harden)
        layer['K'][head, pos, pos] = np.eye(3)
        layer['V'][head] = np.eye(d)
        layer['P'][head, tok, tok] = hash_matrices[l - 1 - head].T
    layer['P'][0] -= np.eye(d)           # proper cleanup: head 0 reads us, so subtract us
    return layer


def lookup_embeddings(tok_rows, block_size):
    """``base_params`` with ``layer_norm(tok_rows)`` in ``tok`` and the circle in ``pos``."""
    vocab_size, tok_dims = np.shape(tok_rows)
    L = lookup_layout(tok_dims)
    params = base_params(vocab_size, block_size, L.d_model)
    params['pos_emb'][:, L['pos']] = pos_enc_3d_array(block_size)
    params['tok_emb'][:, L['tok']] = layer_norm(tok_rows)
    return params


def _check_sizes(where, ks, block_size, tok_dims, vocab_size):
    """Sizes as ints (at most ``MAX_SIZE``), the program within ``MAX_NUMBERS``."""
    check_size(where, 'block_size', block_size, low=None)
    check_size(where, 'tok_dims', tok_dims, low=None)
    if block_size < ks.shape[1]:
        raise ValueError(f'{where}: block_size must be >= key length {ks.shape[1]}; '
                         f'got {block_size}')
    if tok_dims < 2:
        raise ValueError(f'{where}: tok_dims must be >= 2 (layer norm flattens 1 dim); '
                         f'got {tok_dims}')
    d_model = tok_dims + 3         # the embeddings, then about 5 matrices (d, d) per key token
    check_numbers(where, (2 * vocab_size + block_size + 5 * ks.shape[1] * d_model) * d_model)


def build_untied_transformer(ks, vs,  # the table: keys (n, l) and values (n,)
                             vocab_size, block_size, prefix_len, tok_dims, rng=None,
                             harden=HARDEN, hash_scale=HASH_SCALE):
    """The simplified construction (book Fig. 3.3): random hashes, untied ``out_emb``.

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    ``out_emb[v]`` is the sum of the residual vectors that the keys with value v
    leave at their last position (the engine runs every key through the layer).

    Args:
        ks, vs: the table, keys (n, l) and values (n,).
        prefix_len: the key length l (the book's name for it).
        tok_dims: t; d_model = t + 3.
        rng: None (seed 0), an int seed or a numpy Generator.
        harden: the attention-score factor (see ``hash_layer``).

    >>> ks, vs = np.array([[0, 1], [1, 0]]), np.array([2, 3])
    >>> params = build_untied_transformer(ks, vs, 4, 4, 2, 16, rng=0)
    >>> taotp.transformer_batch(ks, params)[:, -1].argmax(-1)
    array([2, 3])
    """
    where = 'build_untied_transformer'
    ks, vs = check_table(where, ks, vs, vocab_size)
    if prefix_len != ks.shape[1]:
        raise ValueError(f'{where}: prefix_len must equal the key length {ks.shape[1]}; '
                         f'got {prefix_len}')
    _check_sizes(where, ks, block_size, tok_dims, vocab_size)
    rng = as_rng(rng, where)
    params = lookup_embeddings(rng.normal(0, 1, (vocab_size, tok_dims)), block_size)
    hashes = rng.normal(0, hash_scale, (prefix_len, tok_dims, tok_dims))
    params['layers'].append(hash_layer(hashes, block_size, harden))
    record = []                                    # each key's hash (n, d_model), run by the engine:
    forward(ks, record=record, logits_at=-1, **params)     # last position only (out_emb is 0)
    last = record[-1]['final'][:, -1]
    np.add.at(params['out_emb'], vs, last)         # out_emb[v] = sum of its keys' hashes
    return params


def wire_lookup_transformer(E, M, block_size, harden=HARDEN):
    """The tied program of fitted embeddings ``E`` (V, t) and hash matrices ``M`` (l, t, t).

    d_model = t + 3, one layer of l heads (``hash_layer``), ``out_emb`` is the
    same array as ``tok_emb``.
    """
    params = lookup_embeddings(E, block_size)
    params['out_emb'] = params['tok_emb']           # tied: the same array
    params['layers'].append(hash_layer(M, block_size, harden))
    return params


def build_lookup_transformer(ks, vs,  # the table: keys (n, l) and values (n,)
                             vocab_size, block_size, tok_dims,
                             optimization_iters=DEFAULT_OPTIMIZATION_ITERS, rng=None, lr=1e-3,
                             harden=HARDEN, progress=None, stop_margin=0.01):
    """The tied construction (book Figs. 3.4-3.6): d_model = tok_dims + 3, one layer, l heads.

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    The token embeddings and hash matrices are fitted first (``fit_hashes``:
    at most ``optimization_iters`` gradient steps of size ``lr``, stopping once
    every value wins by ``stop_margin``), then wired (``wire_lookup_transformer``).
    The default cap of 5,000 steps reaches 100 % on seeded random tables of the
    book's sizes (10, 100 and 1,000 entries at d_model 8, 13 and 33; for 1,000
    entries the vocabulary must be larger than 10).

    Args:
        ks, vs: the table, keys (n, l) and values (n,).
        vocab_size, block_size: of the program; block_size >= l.
        tok_dims: t; d_model = t + 3.
        optimization_iters: the cap on gradient steps (at most
            ``taotp.lookup.training.MAX_OPTIMIZATION_ITERS``, 1,000,000).
        rng: None (seed 0), an int seed or a numpy Generator.
        harden: the attention-score factor (see ``hash_layer``).
        progress: an optional callback, see ``optimize``.

    Returns:
        The params dict (``out_emb is tok_emb``).

    >>> ks, vs = np.array([[1, 2, 3], [4, 5, 6]]), np.array([4, 7])
    >>> params = build_lookup_transformer(ks, vs, 8, 6, 4, rng=0)
    >>> taotp.decode([1, 2, 3, 4, 5, 6], params, max_steps=1).tolist()
    [1, 2, 3, 4, 5, 6, 7]
    """
    where = 'build_lookup_transformer'
    ks, vs = check_table(where, ks, vs, vocab_size)
    _check_sizes(where, ks, block_size, tok_dims, vocab_size)
    check_iters(where, optimization_iters)
    E, M, _ = fit_hashes(ks, vs, vocab_size, tok_dims, optimization_iters,
                         rng=as_rng(rng, where), lr=lr, progress=progress,
                         stop_margin=stop_margin)
    return wire_lookup_transformer(E, M, block_size, harden)


def with_hardening(params, harden):
    """A copy of a lookup program whose query weights use the factor ``harden`` instead.

    The query matrices are turns times the old factor, and the largest entry of
    a turn (the turn by 0, the identity) is 1, so dividing by the largest
    |entry| recovers the turns.
    """
    layer = dict(params['layers'][0])
    old = np.abs(layer['Q']).max()
    layer['Q'] = layer['Q'] / (old or 1.0) * harden
    return {**params, 'layers': [layer]}
