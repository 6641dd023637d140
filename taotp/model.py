"""The forward pass of Chapter 1: a decoder-only, PreLN transformer in NumPy.

Every function here follows the book's equations exactly (same epsilon placement,
same -inf causal mask, same 1/sqrt(d_head) scaling) so that hand-set weights
behave as the book says they do.  All functions accept extra leading batch axes:
a residual stream is ``x`` of shape ``(..., n, d_model)``.

Weights of one layer (shapes are the book's):
    Q, K, V, P : (n_heads, d_model, d_head)   P maps a head's output back to d_model
    M1 (d_model, d_ff), b1 (d_ff,), M2 (d_ff, d_model), b2 (d_model,)
    ln1, ln2   : {'gamma': ..., 'beta': ...}
"""
import numpy as np

EPS = 1e-10  # the book's epsilon, for both norm() and layer_norm()


def norm(x, axis=-1, epsilon=EPS):
    """Divide by the sum along ``axis`` (plus a tiny epsilon, as in the book)."""
    return x / (x.sum(axis=axis, keepdims=True) + epsilon)


def softmax(x, axis=-1):
    """Max-shifted softmax; entries equal to -inf get weight exactly 0."""
    shifted = x - x.max(axis=axis, keepdims=True)
    return norm(np.exp(shifted), axis=axis)


def layer_norm(x, gamma=1.0, beta=0.0, axis=-1, epsilon=EPS):
    """Centre, then divide by the (population) standard deviation plus epsilon.

    Note the book adds epsilon to the standard deviation, not inside the square
    root.  A vector with zero mean and squared norm equal to its length is a
    fixed point (Chapter 3 builds everything out of such blocks).
    """
    centred = x - x.mean(axis=axis, keepdims=True)
    return beta + gamma * centred / (x.var(axis=axis, keepdims=True) ** 0.5 + epsilon)


def rms_norm(x, gamma=1.0, beta=0.0, axis=-1, epsilon=EPS):
    """RMSNorm (no centring): x / (root-mean-square + epsilon), then gamma and beta.

    Not used by the book's model; puzzles 2.6 and 7.6 ask what changes with it.
    """
    return beta + gamma * x / ((x ** 2).mean(axis=axis, keepdims=True) ** 0.5 + epsilon)


def causal_mask(n):
    """Boolean (n, n) mask: query t may attend to keys 0..t."""
    return np.tril(np.ones((n, n), dtype=bool))


def attention_weights(x, Q, K, mask):
    """Softmax attention weights, shape (..., n_heads, n_queries, n_keys)."""
    queries = np.einsum('...nd,hdk->...hnk', x, Q)
    keys = np.einsum('...md,hdk->...hmk', x, K)
    scores = np.einsum('...hnk,...hmk->...hnm', queries, keys) / Q.shape[-1] ** 0.5
    return softmax(np.where(mask, scores, -np.inf), axis=-1)


def self_attn(x, Q, K, V, P, mask, return_weights=False):
    """Multi-head masked self-attention; returns the (..., n, d_model) update."""
    weights = attention_weights(x, Q, K, mask)                     # (..., h, n, m)
    values = np.einsum('...md,hdk->...hmk', x, V)                  # (..., h, m, d_head)
    heads = np.einsum('...hnm,...hmk->...hnk', weights, values)    # (..., h, n, d_head)
    out = np.einsum('...hnk,hdk->...nd', heads, P)
    return (out, weights) if return_weights else out


def mlp(x, M1, b1, M2, b2):
    """Two-layer ReLU MLP; with d_ff = 0 it adds just b2."""
    return np.maximum(x @ M1 + b1, 0) @ M2 + b2


def transformer_layer(x, mask, Q, K, V, P, M1, b1, M2, b2, ln1, ln2, record=None,
                      norm_fn=layer_norm, post_ln=False):
    """One PreLN block: x + attn(LN(x)), then x + MLP(LN(x)).

    ``post_ln=True`` gives the original PostLN block instead,
    LN(x + attn(x)) then LN(x + MLP(x)); ``norm_fn`` swaps the normalisation
    (e.g. ``rms_norm``).  Both exist for puzzles; the book's programs use neither.
    """
    if post_ln:
        attn_out, weights = self_attn(x, Q, K, V, P, mask, return_weights=True)
        mid = norm_fn(x + attn_out, **ln1)
        out = norm_fn(mid + mlp(mid, M1, b1, M2, b2), **ln2)
    else:
        attn_out, weights = self_attn(norm_fn(x, **ln1), Q, K, V, P, mask, return_weights=True)
        mid = x + attn_out
        out = mid + mlp(norm_fn(mid, **ln2), M1, b1, M2, b2)
    if record is not None:
        record.append({'resid_pre': x, 'attn': weights, 'resid_mid': mid, 'resid_post': out})
    return out


def embed(tokens, tok_emb, pos_emb, positions=None):
    """Token plus position embeddings, shape (..., n, d_model).

    ``pos_emb`` is one table (the book) or a list of tables, one per position
    level (multi-level position coupling).  ``positions`` defaults to 0..n-1 for
    every level; otherwise it holds an index per token, shape (n,) for one table
    or (n_levels, n) for a list (leading batch axes allowed before n).
    """
    tokens = np.asarray(tokens)
    n = tokens.shape[-1]
    tables = pos_emb if isinstance(pos_emb, (list, tuple)) else [pos_emb]
    if positions is None:
        positions = [np.arange(n)] * len(tables)
    elif not isinstance(pos_emb, (list, tuple)):
        positions = [positions]
    x = tok_emb[tokens]
    for table, pos in zip(tables, positions):
        x = x + table[np.asarray(pos)]
    return x


def forward(tokens, tok_emb, pos_emb, out_emb, layers, lnf, positions=None, record=None,
            norm_fn=layer_norm, post_ln=False):
    """Embeddings -> layers -> final layer norm -> logits (..., n, vocab).

    ``record``, if a list, receives one dict per layer with the attention weights
    and the residual stream before the layer, after attention and after the MLP.
    ``norm_fn`` and ``post_ln`` select the puzzle variants (see transformer_layer);
    the final ``lnf`` is applied in every variant.
    """
    x = embed(tokens, tok_emb, pos_emb, positions)
    mask = causal_mask(x.shape[-2])
    for layer in layers:
        x = transformer_layer(x, **layer, mask=mask, record=record, norm_fn=norm_fn,
                              post_ln=post_ln)
    if record is not None:
        record.append({'final': x})
    return np.einsum('...nd,vd->...nv', norm_fn(x, **lnf), out_emb)
