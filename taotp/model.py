"""The forward pass of Chapter 1: a decoder-only transformer in NumPy.

This is the only implementation of the architecture in taotp.  Everything that
runs a program (``transformer``, every decoder, the KV cache, teacher forcing,
``trace``, the checkers) calls ``forward`` below, and the tests compare each
of those paths with the independent loop reference in ``taotp.reference``.
Inside it, attention scores are computed in one place, ``attention_scores``
(``trace`` records them before the softmax), and a ReLU MLP in one, ``mlp``
(``scalar_mlp`` evaluates an MLP that reads a single number).

It follows the book's equations exactly (epsilon added to the standard
deviation, a -inf causal mask, scores divided by sqrt(d_head)) so that
hand-set weights behave as the book says.  Extra leading batch axes are
allowed everywhere: a residual stream ``x`` has shape ``(..., n, d_model)``.

Weights of one layer (shapes are the book's)::

    Q, K, V, P : (n_heads, d_model, d_head)   P maps a head's output back to d_model
    M1 (d_model, d_ff), b1 (d_ff,), M2 (d_ff, d_model), b2 (d_model,)
    ln1, ln2   : {'gamma': ..., 'beta': ...}

Three switches select the variants the puzzles and the later chapters need;
the book's programs use the defaults:

* ``norm``: ``'layer'`` (the book), ``'rms'`` (RMSNorm) or ``'none'`` (only the
  affine part ``beta + gamma * x``; the normalisation-free model of Chapter 9);
* ``post_ln``: ``False`` (PreLN, the book) or ``True`` (the original PostLN
  block);
* ``mlp_rows``: ``'all'`` or ``'distinct'`` (run the MLP once per distinct
  input; a speed-up for exhaustive checks whose many rows repeat few values).
"""
import numpy as np

EPS = 1e-10  # the book's epsilon, for both norm() and layer_norm()
MLP_BLOCK = 1 << 22  # hidden activations computed at once (32 MB of float64)


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

    Not used by the book's programs; puzzles 2.6 and 7.6 ask what changes with it.
    """
    return beta + gamma * x / ((x ** 2).mean(axis=axis, keepdims=True) ** 0.5 + epsilon)


def no_norm(x, gamma=1.0, beta=0.0, axis=-1, epsilon=EPS):
    """No normalisation, only the affine part: ``beta + gamma * x`` (Chapter 9's model)."""
    return beta + gamma * x


NORMS = {'layer': layer_norm, 'rms': rms_norm, 'none': no_norm}


def norm_function(norm):
    """The normalisation named by ``norm`` (a key of ``NORMS``) or ``norm`` itself if callable."""
    if callable(norm):
        return norm
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {', '.join(map(repr, NORMS))}; got {norm!r}")
    return NORMS[norm]


def causal_mask(n):
    """Boolean (n, n) mask: query t may attend to keys 0..t."""
    return np.tril(np.ones((n, n), dtype=bool))


def heads(x, W):
    """Per-head projection: x (..., n, d_model) @ W (n_heads, d_model, k) -> (..., n_heads, n, k)."""
    h, d, k = W.shape
    out = x @ W.transpose(1, 0, 2).reshape(d, h * k)                  # (..., n, h * k)
    return np.moveaxis(out.reshape(out.shape[:-1] + (h, k)), -2, -3)


def attention_scores(q, k, mask, scale=None):
    """Pre-softmax scores of queries ``q`` on keys ``k``: taotp's one score path.

    q (..., h, m, d_head), k (..., h, t, d_head), ``mask`` (m, t) True where a
    query may see a key.  Returns ``q . k * scale`` of shape (..., h, m, t), with
    ``-inf`` where the mask hides a key (softmax gives those weight exactly 0).
    ``scale`` defaults to the book's ``1 / sqrt(d_head)``; Chapter 7's positional
    attention uses 1 (a bare bilinear form).
    """
    scores = q @ np.swapaxes(k, -1, -2)
    scores = scores / q.shape[-1] ** 0.5 if scale is None else scores * scale
    return np.where(mask, scores, -np.inf)


def mix_values(weights, v, P):
    """Each head's weighted values ``weights @ v``, mapped through ``P``.

    weights (..., h, m, t), v (..., h, t, d_v), P (h, d_model, d_v); returns
    (..., m, d_model).
    """
    per_head = weights @ v                                       # (..., h, m, d_v)
    h, d_model, d_v = P.shape
    m = weights.shape[-2]
    stacked = np.moveaxis(per_head, -3, -2).reshape(per_head.shape[:-3] + (m, h * d_v))
    return stacked @ P.transpose(0, 2, 1).reshape(h * d_v, d_model)


def attend(q, k, v, P, mask):
    """Softmax attention of queries ``q`` on keys ``k``, values ``v``; output through ``P``.

    q (..., h, m, d_head), k (..., h, t, d_head), v (..., h, t, d_v), P (h, d_model, d_v),
    ``mask`` (m, t) True where a query may see a key.  Returns the update
    (..., m, d_model) and the weights (..., h, m, t).
    """
    weights = softmax(attention_scores(q, k, mask), axis=-1)
    return mix_values(weights, v, P), weights


def self_attn(x, Q, K, V, P, mask, return_weights=False):
    """Multi-head masked self-attention; returns the (..., n, d_model) update."""
    out, weights = attend(heads(x, Q), heads(x, K), heads(x, V), P, mask)
    return (out, weights) if return_weights else out


def mlp(x, M1, b1, M2, b2, rows='all'):
    """Two-layer ReLU MLP; with d_ff = 0 it adds just b2.

    Rows are processed in blocks so the hidden layer never holds more than
    ``MLP_BLOCK`` numbers.  ``rows='distinct'`` runs it once per distinct input
    (compared on the coordinates that ``M1`` reads), which gives the same
    numbers for every row and is much faster when many rows repeat; a
    ``DistinctRows`` memo (``rows=memo.layer(i)``) also remembers the outputs
    across calls, e.g. across the chunks of an exhaustive check.
    """
    shape = x.shape[:-1] + (np.shape(M2)[-1],)     # d_model, or d_out of a lone MLP
    flat = x.reshape(-1, x.shape[-1])
    if rows == 'all' or len(flat) < 2:
        return _mlp_blocks(flat, M1, b1, M2, b2).reshape(shape)
    if not (rows == 'distinct' or isinstance(rows, dict)):
        raise ValueError(f"mlp: rows must be 'all' or 'distinct'; got {rows!r}")
    read = np.flatnonzero(np.any(M1 != 0, axis=1))        # coordinates M1 reads
    keys, inverse = np.unique(flat[:, read], axis=0, return_inverse=True)
    if isinstance(rows, dict):
        outputs = _remembered(rows, keys, lambda k: _mlp_blocks(k, M1[read], b1, M2, b2))
    else:
        outputs = _mlp_blocks(keys, M1[read], b1, M2, b2)
    return outputs[inverse.ravel()].reshape(shape)


def scalar_mlp(x, m1, b1, M2, b2):
    """A ReLU MLP that reads one number, at every value of ``x``: shape (*x.shape, d_out).

    ``m1`` is the single row of ``M1`` (shape (d_ff,) or (1, d_ff)); ``M2`` is
    (d_ff, d_out).  The same evaluation as ``mlp`` (it calls it), for the MLPs of
    Chapter 6 (``build_MLP``) and the checkers that probe an MLP on a grid.

    >>> scalar_mlp([0.0, 2.0], np.ones(1), np.zeros(1), np.ones((1, 2)), np.zeros(2)).tolist()
    [[0.0, 0.0], [2.0, 2.0]]
    """
    x = np.asarray(x, dtype=np.float64)
    return mlp(x[..., None], np.reshape(m1, (1, -1)), b1, M2, b2)


class DistinctRows:
    """A memo of MLP outputs by distinct input, one table per layer (see ``mlp``)."""

    def __init__(self, max_rows=1 << 20):
        self.max_rows, self.tables = max_rows, {}

    def layer(self, i):
        return self.tables.setdefault(i, _Memo(self.max_rows))


class _Memo(dict):
    def __init__(self, max_rows):
        super().__init__()
        self.max_rows = max_rows


def _remembered(memo, keys, compute):
    """Outputs for ``keys`` (distinct rows), computing only those not in ``memo`` yet."""
    raw = [k.tobytes() for k in keys]
    missing = [j for j, r in enumerate(raw) if r not in memo]
    fresh = compute(keys[missing]) if missing else None
    if not missing:
        return np.stack([memo[r] for r in raw])
    if len(memo) + len(missing) > memo.max_rows:      # full: use, do not store
        out = np.empty((len(keys), fresh.shape[1]), dtype=fresh.dtype)
        known = np.setdiff1d(np.arange(len(keys)), missing)
        out[missing] = fresh
        if len(known):
            out[known] = np.stack([memo[raw[j]] for j in known])
        return out
    for j, row in zip(missing, fresh):
        memo[raw[j]] = row
    return np.stack([memo[r] for r in raw])


def _mlp_blocks(x, M1, b1, M2, b2):
    step = max(1, MLP_BLOCK // max(1, M1.shape[1]))
    if len(x) <= step:
        return np.maximum(x @ M1 + b1, 0) @ M2 + b2
    return np.concatenate([np.maximum(x[i:i + step] @ M1 + b1, 0) @ M2 + b2
                           for i in range(0, len(x), step)])


def transformer_layer(x, mask, Q, K, V, P, M1, b1, M2, b2, ln1, ln2, record=None,
                      norm_fn=layer_norm, post_ln=False, cache=None, queries=None,
                      mlp_rows='all'):
    """One block: PreLN ``x + attn(LN(x))`` then ``x + MLP(LN(x))`` (the book).

    ``post_ln=True`` gives the original PostLN block instead,
    LN(x + attn(x)) then LN(x + MLP(x)); ``norm_fn`` swaps the normalisation.

    ``x`` holds the rows of the new positions.  ``cache`` (one layer's slot of a
    ``KVCache``) stores their keys and values after those of earlier positions,
    and ``mask`` then has one column per cached position.  ``queries`` (an index
    or slice of rows) computes the output of those rows only (keys and values
    still come from every row); used for the last layer when only some logits
    are needed.  ``record``, if a list, receives this layer's intermediates.
    """
    attn_in = x if post_ln else norm_fn(x, **ln1)
    k, v = heads(attn_in, K), heads(attn_in, V)
    if cache is not None:
        k, v = cache.append(k, v)
    if queries is not None:
        x, attn_in, mask = x[..., queries, :], attn_in[..., queries, :], mask[queries]
    scores = attention_scores(heads(attn_in, Q), k, mask)
    weights = softmax(scores, axis=-1)
    attn_out = mix_values(weights, v, P)
    if post_ln:
        mid = norm_fn(x + attn_out, **ln1)
        mlp_in = mid
    else:
        mid = x + attn_out
        mlp_in = norm_fn(mid, **ln2)
    out = mid + mlp(mlp_in, M1, b1, M2, b2, rows=mlp_rows)
    if post_ln:
        out = norm_fn(out, **ln2)
    if record is not None:
        record.append({'resid_pre': x, 'scores': scores, 'attn': weights,
                       'resid_mid': mid, 'mlp_in': mlp_in, 'resid_post': out})
    return out


def multi_level(pos_emb):
    """True when ``pos_emb`` is several position tables (a list of 2-D tables).

    A single table may also come as a nested list of rows; that is one table.
    """
    return isinstance(pos_emb, (list, tuple)) and (not pos_emb or np.ndim(pos_emb[0]) == 2)


def position_tables(pos_emb):
    """``pos_emb`` as a list of tables: one for the book, one per level for coupled positions."""
    return list(pos_emb) if multi_level(pos_emb) else [pos_emb]


def position_ids(pos_emb, positions, n, start=0):
    """Position ids as a list with one array per table of ``pos_emb``.

    ``positions`` is ``None`` (consecutive ids ``start..start+n-1`` for every
    table), one id per token ``(..., n)`` for a single table, or one such array
    per table for a list of tables.
    """
    tables = position_tables(pos_emb)
    if positions is None:
        return [np.arange(start, start + n)] * len(tables)
    if multi_level(pos_emb):
        return [np.asarray(ids) for ids in positions]
    return [np.asarray(positions)]


def embed(tokens, tok_emb, pos_emb, positions=None, start=0):
    """Token plus position embeddings, shape (..., n, d_model).

    ``pos_emb`` is one table (the book) or a list of tables, one per position
    level (multi-level position coupling).  ``positions`` defaults to
    ``start..start+n-1`` for every level; otherwise it holds one id per token,
    shape (..., n) for one table or (n_levels, ..., n) for a list.
    """
    tokens = np.asarray(tokens)
    x = tok_emb[tokens]
    for table, ids in zip(position_tables(pos_emb),
                          position_ids(pos_emb, positions, tokens.shape[-1], start)):
        x = x + table[ids]
    return x


def forward(tokens, tok_emb, pos_emb, out_emb, layers, lnf, positions=None, record=None,
            norm_fn=layer_norm, post_ln=False, cache=None, logits_at=None, mlp_rows='all'):
    """Embeddings -> layers -> final norm -> logits (..., n, vocab).

    Args:
        tokens: token ids (..., n); with a ``cache``, only the new ones.
        positions: position ids (see ``embed``); default: consecutive, continuing
            after the cached positions.
        record: a list that receives one dict per layer (attention scores before the
            softmax and weights after it, the residual stream before the layer,
            after attention and after the MLP, and the MLP's normalised input),
            then ``{'final': x}``.
        norm_fn, post_ln: the variant (see the module docstring).
        cache: a ``taotp.decoding.KVCache``; its keys and values are reused and
            extended by the new tokens.
        logits_at: an index or slice of positions: compute only their logits
            (the last layer's attention and MLP run for those rows only).
        mlp_rows: ``'distinct'`` to run each MLP once per distinct input, or a
            ``DistinctRows`` memo to remember its outputs across calls.
    """
    if isinstance(logits_at, (int, np.integer)):   # keep the position axis
        logits_at = slice(logits_at, logits_at + 1 or None)
    start = 0 if cache is None else cache.length
    x = embed(tokens, tok_emb, pos_emb, positions, start=start)
    n = x.shape[-2]
    mask = np.arange(start + n)[None, :] <= np.arange(start, start + n)[:, None]
    for i, layer in enumerate(layers):
        last = i == len(layers) - 1
        rows = mlp_rows.layer(i) if isinstance(mlp_rows, DistinctRows) else mlp_rows
        x = transformer_layer(x, mask=mask, record=record, norm_fn=norm_fn, post_ln=post_ln,
                              cache=None if cache is None else cache.layer(i, x.shape[:-2]),
                              queries=logits_at if last else None, mlp_rows=rows, **layer)
    if cache is not None:
        cache.length = start + n
    if logits_at is not None and not layers:
        x = x[..., logits_at, :]
    if record is not None:
        record.append({'final': x})
    return np.einsum('...d,vd->...v', norm_fn(x, **lnf), out_emb)
