"""The book's two-layer Search program (Fig. 4.2), built from named blocks.

Residual layout going in (every block is fixed under layer norm)::

    tok (3) | pad (3 * prefix_len - 3) | pos (3)

* Layer 0, ``prefix_len + 1`` heads: head h (h >= 1) attends exactly h places back
  (rotate the position circle by -h, scaled by ``harden``) and writes that token
  into slot h; head 0 attends to itself and subtracts ``pad`` and ``pos`` (proper
  cleanup).  Out comes ``t0 | t1 | ... | t_L`` where t_k is the token k back.
* Layer 1: head 0 compares the query ``t0..t_{L-1}`` (the last L tokens) with
  every key ``t1..t_L`` (the L tokens before that position) and copies the token
  of the position whose key matches; heads 1 and 2 attend to themselves and
  erase everything else (proper cleanup), so only the found token is left.
"""
from numbers import Real

import numpy as np

from ..blocks import HARDEN, padding_block, pos_enc_3d_array, proper_cleanup, shift_matrix
from ..blocks import harden as harden_matrix
from ..params import base_layer, base_params, check_numbers
from ..residual import Layout
from .task import _check_sizes

__all__ = ['search_layouts', 'build_search_transformer']


def search_layouts(prefix_len):
    """``(entering, after_layer0)``: the residual Layouts before and after the first layer."""
    entering = Layout([('tok', 3), ('pad', 3 * prefix_len - 3), ('pos', 3)])
    after = Layout([(f't{k}', 3) for k in range(prefix_len + 1)])
    return entering, after


def build_search_transformer(vocab_size, block_size, prefix_len, harden=HARDEN):
    """The book's two-layer Search program (Fig. 4.2), built from named blocks.

    Sizes: n_heads = prefix_len + 1, d_head = 3 * prefix_len, d_model = d_head + 3,
    no MLP; total parameters
    ``d_model * (vocab + block + 2) + 24 * prefix_len * (prefix_len + 1) * d_model``.

    Every size is at most ``taotp.params.MAX_SIZE`` and the program holds at most
    ``MAX_NUMBERS`` numbers; a ValueError names the limit before anything is built.

    Args:
        vocab_size, block_size: the program's vocabulary and longest input.
        prefix_len: the query length L, at least 2 (layer 1 needs three heads:
            the lookup and two cleanups; every layer has L + 1).
        harden: the factor of every attention head's query (the book's N = 1e8;
            tests/test_search.py measures the working range).
    Returns:
        the params dict.

        >>> params = build_search_transformer(10, 20, 3)
        >>> int(taotp.decode([1, 2, 3, 4, 5, 6, 1, 2, 3], params, max_steps=1)[-1])
        4
    """
    _check_sizes('build_search_transformer', vocab_size, block_size, prefix_len)
    check_numbers('build_search_transformer', (3 * prefix_len + 3) * (
        vocab_size + block_size + 2 + 24 * prefix_len * (prefix_len + 1)))
    if isinstance(harden, bool) or not isinstance(harden, Real) or not harden > 0:
        raise ValueError(f'build_search_transformer: harden must be a number > 0; got {harden!r}')
    L = prefix_len
    enter, after = search_layouts(L)
    d_model, d_head, n_heads = enter.d_model, 3 * L, L + 1
    tok, pad, pos = enter['tok'], enter['pad'], enter['pos']

    params = base_params(vocab_size, block_size, d_model)
    emb = np.zeros((vocab_size, d_model))
    emb[:, tok] = pos_enc_3d_array(vocab_size)
    emb[:, pad] = padding_block(3 * L - 3)
    params['tok_emb'] = params['out_emb'] = emb
    params['pos_emb'][:, pos] = pos_enc_3d_array(block_size)

    # Layer 0: head h looks h positions back and files that token in slot t_h.
    gather = base_layer(n_heads, d_model, 0, d_head)
    for h in range(n_heads):
        # head 0 reads its own position: the identity, written exactly (no rounding noise)
        look = np.eye(3) if h == 0 else shift_matrix(-h, block_size)
        gather['Q'][h, pos, :3] = harden_matrix(look, harden)
        gather['K'][h, pos, :3] = np.eye(3)
        if h == 0:   # attends to itself: erase pad and pos, keep our own token in t0
            gather['V'][0, 3:] = np.eye(d_head)
            gather['P'][0, 3:] = -np.eye(d_head)
        else:
            gather['V'][h, tok, :3] = np.eye(3)
            gather['P'][h, after[f't{h}'], :3] = np.eye(3)

    # Layer 1: query = t0..t_{L-1} (our last L tokens), key = t1..t_L (the L before a position).
    lookup = base_layer(n_heads, d_model, 0, d_head)
    recent, older = slice(0, 3 * L), slice(3, 3 * L + 3)
    lookup['Q'][0, recent] = harden_matrix(np.eye(d_head), harden)
    lookup['K'][0, older] = np.eye(d_head)
    lookup['V'][0, after['t0'], :3] = np.eye(3)   # copy the token at the matching position
    lookup['P'][0, after['t0'], :3] = np.eye(3)   # ... into t0
    # cleanup heads attend to themselves and subtract what is there (t0..t_{L-1}, then t_L)
    proper_cleanup(lookup, 1, recent, harden)
    proper_cleanup(lookup, 2, after[f't{L}'], harden)
    params['layers'] = [gather, lookup]
    return params
