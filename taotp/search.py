"""Chapter 4, Search: find the last ``prefix_len`` tokens earlier in the input, print what followed.

Example with ``prefix_len = 3``: ``[1, 2, 3, 4, 5, 6, 1, 2, 3] -> 4``.

The program has two attention-only layers and ``d_model = 3 * (prefix_len + 1)``.
Residual layout going in (every block is fixed under layer norm)::

    tok (3) | pad (3 * prefix_len - 3) | pos (3)

* Layer 0, ``prefix_len + 1`` heads: head h (h >= 1) attends exactly h places back
  (rotate the position circle by -h, harden by N) and writes that token into
  slot h; head 0 attends to itself and subtracts ``pad`` and ``pos`` (proper
  cleanup).  Out comes ``t0 | t1 | ... | t_L`` where t_k is the token k back.
* Layer 1: head 0 compares the query ``t0..t_{L-1}`` (the last L tokens) with
  every key ``t1..t_L`` (the L tokens before that position) and copies the token
  of the position whose key matches; heads 1 and 2 attend to themselves and
  erase everything else (proper cleanup), so only the found token is left.

Positions ``j < prefix_len`` have no full key: their "earlier" slots hold copies of
token 0 (the nearest position on the circle that the causal mask allows).  The
program therefore behaves as if the input were preceded by ``prefix_len`` copies
of its first token; ``search_reference(..., as_model=True)`` models exactly that.
"""
import numpy as np

from .blocks import harden, padding_block, pos_enc_3d_array, proper_cleanup, shift_matrix
from .params import base_layer, base_params
from .residual import Layout

__all__ = ['build_search_transformer', 'search_reference', 'search_layouts',
           'random_search_inputs']


def _check_sizes(where, vocab_size, block_size, prefix_len):
    for name, value, low in (('vocab_size', vocab_size, 1), ('prefix_len', prefix_len, 2),
                             ('block_size', block_size, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f'{where}: {name} must be an int; got {type(value).__name__}')
        if value < low:
            raise ValueError(f'{where}: {name} must be >= {low}; got {value}')
    if block_size < prefix_len + 2:
        raise ValueError(f'{where}: block_size must be >= prefix_len + 2 = {prefix_len + 2} '
                         f'(a key, its next token and the query); got {block_size}')


def search_layouts(prefix_len):
    """``(entering, after_layer0)``: the residual Layouts before and after the first layer."""
    entering = Layout([('tok', 3), ('pad', 3 * prefix_len - 3), ('pos', 3)])
    after = Layout([(f't{k}', 3) for k in range(prefix_len + 1)])
    return entering, after


def build_search_transformer(vocab_size, block_size, prefix_len, N=1e8):
    """The book's two-layer Search program (Fig. 4.2), built from named blocks.

    ``N`` hardens every attention head (the book uses 1e8).  ``prefix_len`` must be
    at least 2: layer 1 needs three heads (lookup and two cleanups) and layer 0 has
    ``prefix_len + 1``.  Sizes: n_heads = prefix_len + 1, d_head = 3 * prefix_len,
    d_model = d_head + 3, no MLP; total parameters
    ``d_model * (vocab + block + 2) + 24 * prefix_len * (prefix_len + 1) * d_model``.
    """
    _check_sizes('build_search_transformer', vocab_size, block_size, prefix_len)
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
        gather['Q'][h, pos, :3] = harden(np.eye(3) if h == 0 else shift_matrix(-h, block_size), N)
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
    lookup['Q'][0, recent] = harden(np.eye(d_head), N)
    lookup['K'][0, older] = np.eye(d_head)
    lookup['V'][0, after['t0'], :3] = np.eye(3)   # copy the token at the matching position
    lookup['P'][0, after['t0'], :3] = np.eye(3)   # ... into t0
    # cleanup heads attend to themselves and subtract what is there (t0..t_{L-1}, then t_L)
    proper_cleanup(lookup, 1, recent, N)
    proper_cleanup(lookup, 2, after[f't{L}'], N)
    params['layers'] = [gather, lookup]
    return params


def search_reference(tokens, prefix_len, as_model=False):
    """Plain-Python Search: the token after the one earlier occurrence of the query.

    The query is the last ``prefix_len`` tokens; an occurrence must start early
    enough that its next token exists.  Returns ``None`` (undefined behaviour) when
    the query occurs zero or several times.  ``as_model=True`` first prepends
    ``prefix_len`` copies of the first token, which is what the transformer sees
    at positions that have fewer than ``prefix_len`` predecessors.
    """
    x = [int(t) for t in tokens]
    L = prefix_len
    if len(x) < L + 1:
        return None
    query = x[-L:]
    padded = [x[0]] * L + x if as_model else x
    hits = [s for s in range(len(padded) - L) if padded[s:s + L] == query]
    return padded[hits[0] + L] if len(hits) == 1 else None


def random_search_inputs(rng, n, vocab_size, length, prefix_len):
    """``(inputs, answers)``: n seeded sequences whose query occurs exactly once earlier.

    Uniqueness is checked in both views (the plain problem and the model's view
    with the first token repeated in front), so the answer is well defined and
    equal in both.  Returns an int array (n, length) and an int array (n,).
    """
    _check_sizes('random_search_inputs', vocab_size, length, prefix_len)
    L = prefix_len
    rows, answers = [], []
    while len(rows) < n:
        x = rng.integers(0, vocab_size, size=length)
        start = int(rng.integers(0, length - L))         # occurrence x[start:start+L], next exists
        x[length - L:] = x[start:start + L].copy()
        want = search_reference(x, L)
        if want is None or search_reference(x, L, as_model=True) != want:
            continue
        rows.append(x)
        answers.append(want)
    return np.array(rows, dtype=np.int64), np.array(answers, dtype=np.int64)
