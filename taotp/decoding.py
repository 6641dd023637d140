"""Running a program: the validated forward pass and every way to decode.

All of these call ``taotp.model.forward``, the one implementation of the
architecture, and accept the same variant switches (``norm``, ``post_ln``):

* ``transformer(tokens, **params)``: the book's entry point, logits (n, vocab).
* ``decode(tokens, params, ...)``: greedy by default; ``cache=False`` is the
  book's naive loop (Fig. 1.2), ``cache=True`` an equivalent KV-cached decoder
  (puzzle 1.3); ``window=True`` slides over the last ``block_size`` tokens
  (puzzle 1.7); ``temperature > 0`` samples with an explicit ``rng`` (puzzle 1.6).
* ``transformer_batch`` / ``decode_batch``: many equal-length inputs at once.
* ``last_token_argmax`` and ``teacher_forced_argmax``: the greedy choices an
  exhaustive check needs, computed in memory-bounded chunks.
"""
import numpy as np

from .model import DistinctRows, forward, multi_level, softmax
from .params import (ParamsError, as_arrays, block_size, check_tokens, check_variant,
                     validate_params)

FLOAT_BUDGET = 1 << 23   # numbers in the largest intermediate array of one chunk (64 MB)


def transformer(tokens, tok_emb, pos_emb, out_emb, layers, lnf, positions=None,
                norm='layer', post_ln=False):
    """Logits of every position, shape (n, vocab_size).

    Validates the program and the tokens first (cheap next to the forward pass),
    so a malformed program fails with a message that names the field.
    ``positions`` (optional) overrides the default position ids 0..n-1; see
    ``taotp.model.embed``.  ``norm`` and ``post_ln`` select a variant
    (``'rms'``/``'none'``, PostLN); the book's programs use the defaults.
    """
    params = as_arrays(validate_params(dict(tok_emb=tok_emb, pos_emb=pos_emb, out_emb=out_emb,
                                            layers=layers, lnf=lnf)))
    variant = check_variant(norm, post_ln, 'transformer')
    tokens = check_tokens(tokens, params, window=positions is not None)
    positions = check_positions(positions, params, tokens.shape[-1])
    return forward(tokens, positions=positions, **variant, **params)


def transformer_variant(tokens, params, norm='layer', post_ln=False, positions=None):
    """``transformer`` under a variant; kept for the puzzles that use this name."""
    return transformer(tokens, positions=positions, norm=norm, post_ln=post_ln, **params)


def transformer_batch(tokens, params, positions=None, norm='layer', post_ln=False):
    """Logits for a batch of equal-length sequences: (batch, n) -> (batch, n, vocab)."""
    params = as_arrays(validate_params(params))
    variant = check_variant(norm, post_ln, 'transformer_batch')
    tokens = check_tokens(tokens, params)
    if tokens.ndim != 2:
        raise ParamsError(f'transformer_batch: tokens must have shape (batch, n); '
                          f'got {tokens.shape}')
    positions = check_positions(positions, params, tokens.shape[-1])
    return forward(tokens, positions=positions, **variant, **params)


def check_positions(positions, params, n):
    """Position ids checked against the program's tables (``None`` stays ``None``).

    One table: ids of shape (..., n).  A list of tables: one such array per table.
    Each id must index a row of its table.
    """
    if positions is None:
        return None
    multi = multi_level(params['pos_emb'])
    tables = list(params['pos_emb']) if multi else [params['pos_emb']]
    try:
        levels = [np.asarray(ids) for ids in positions] if multi else [np.asarray(positions)]
    except TypeError:
        raise ParamsError(f'positions must be an array of integer ids; '
                          f'got {type(positions).__name__}') from None
    if len(levels) != len(tables) or any(ids.shape[-1:] != (n,) for ids in levels):
        raise ParamsError(f'positions has shape {np.shape(positions)}; expected one id per '
                          f'token for each of the {len(tables)} position table(s), n = {n}')
    for level, (table, ids) in enumerate(zip(tables, levels)):
        if ids.dtype.kind not in 'iu':
            raise ParamsError(f'positions must be integer ids; got dtype {ids.dtype}')
        if ids.min() < 0 or ids.max() >= len(table):
            bad = int(ids.min()) if ids.min() < 0 else int(ids.max())
            raise ParamsError(f'positions[{level}] holds id {bad}, outside 0..'
                              f'{len(table) - 1} (rows of that pos_emb table)')
    return levels if multi else levels[0]


class KVCache:
    """Keys and values of every past position, per layer, for incremental decoding.

    The attention of a new token needs the keys and values of all earlier
    tokens; those never change (the mask hides the future, in every variant),
    so each is computed once.  ``extend`` runs ``forward`` on the new tokens
    only; leading batch axes are allowed (the same for every call).
    """

    def __init__(self, params, capacity, norm='layer', post_ln=False):
        self.params = as_arrays(params)
        self.capacity = int(capacity)
        self.variant = check_variant(norm, post_ln, 'KVCache')
        self.length = 0
        self._slots = [None] * len(params['layers'])

    def layer(self, i, batch_shape=()):
        """The slot of layer ``i`` (created on first use, for rows of ``batch_shape``)."""
        if self._slots[i] is None:
            self._slots[i] = _LayerCache(self, tuple(batch_shape))
        return self._slots[i]

    def extend(self, tokens, positions=None, logits_at=None):
        """Feed new tokens (..., m) and return their logits (..., m, vocab).

        ``positions``: ids of the new tokens only (default: they continue after
        the cached ones).  ``logits_at`` as in ``forward``.
        """
        m = np.shape(tokens)[-1]
        if self.length + m > self.capacity:
            raise ParamsError(f'KVCache: {self.length} cached + {m} new positions exceed its '
                              f'capacity of {self.capacity}')
        return forward(tokens, positions=positions, cache=self, logits_at=logits_at,
                       **self.variant, **self.params)


class _LayerCache:
    def __init__(self, cache, batch_shape):
        self.cache, self.batch_shape = cache, batch_shape
        self.keys = self.values = None

    def append(self, k, v):
        """Store keys/values (..., h, m, d) of the new positions; return all of them so far."""
        start = self.cache.length
        stop = start + k.shape[-2]
        if self.keys is None:
            cap = self.cache.capacity
            self.keys = np.zeros(k.shape[:-2] + (cap, k.shape[-1]), dtype=k.dtype)
            self.values = np.zeros(v.shape[:-2] + (cap, v.shape[-1]), dtype=v.dtype)
        self.keys[..., start:stop, :] = k
        self.values[..., start:stop, :] = v
        return self.keys[..., :stop, :], self.values[..., :stop, :]


def _next_token(logits, temperature, rng):
    if not temperature:
        return int(np.argmax(logits))
    probs = softmax(logits / temperature)
    return int(rng.choice(len(probs), p=probs / probs.sum()))


def decode(tokens, params, max_steps=1000, eos=None, cache=True, window=False,
           temperature=0.0, rng=None, positions=None, norm='layer', post_ln=False):
    """Generate up to ``max_steps`` tokens after the prompt; returns prompt + output.

    Args:
        tokens: the prompt, a 1-D sequence of token ids.
        params: a program (see ``taotp.params``).
        max_steps: how many tokens to generate at most.
        eos: stop right after emitting this id (it is included in the result).
        cache: reuse past keys/values (same tokens as ``cache=False``, much faster).
        window: allow running past ``block_size`` by feeding only the last
            ``block_size`` tokens (positions restart at 0 in every window, so the
            cache cannot be reused there and each such step is a full pass).
        temperature: 0 is greedy (the book); > 0 samples from softmax(logits / T).
        rng: a ``numpy.random.Generator``; required when sampling.
        positions: optional callable ``tokens -> position ids`` (one id per token,
            or one row per position table) for programs with custom positions.
        norm, post_ln: the architecture variant (default: the book's PreLN).
    Raises:
        ParamsError: malformed program, bad token ids, or a sequence longer than
            ``block_size`` without ``window=True``.
    """
    params = as_arrays(validate_params(params))
    variant = check_variant(norm, post_ln, 'decode')
    tokens = check_tokens(tokens, params, allow_batch=False,
                          window=window or positions is not None)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.number)) \
            or not temperature >= 0:
        raise ParamsError(f'decode: temperature must be >= 0; got {temperature}')
    if temperature and not isinstance(rng, np.random.Generator):
        raise ParamsError('decode: sampling (temperature > 0) needs rng=np.random.default_rng(seed)')
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) \
            or max_steps < 0:
        raise ParamsError(f'decode: max_steps must be an integer >= 0; got {max_steps}')
    # with custom position ids the sequence may outgrow pos_emb (ids repeat)
    limit = block_size(params) if positions is None else len(tokens) + max_steps
    if not window and eos is None and max_steps > 0 and len(tokens) + max_steps - 1 > limit:
        # the last generated token is never fed back, hence the -1
        raise ParamsError(f'decode: prompt of {len(tokens)} tokens + {max_steps} steps needs '
                          f'{len(tokens) + max_steps - 1} positions but block_size is {limit}; '
                          f'lower max_steps or pass window=True')
    out = list(tokens)
    kv = KVCache(params, limit, norm, post_ln) if cache else None
    for _ in range(max_steps):
        seq = np.array(out)
        if len(out) > limit:
            if not window:
                raise ParamsError(f'decode: the sequence reached {len(out)} tokens but block_size '
                                  f'is {limit}; lower max_steps or pass window=True')
            seq = seq[-limit:]
            logits = forward(seq, positions=_ids(positions, seq, params), **variant,
                             **params)[-1]
        elif cache:
            ids = _ids(positions, seq, params)
            new = slice(kv.length, None)
            if ids is not None:
                ids = [level[new] for level in ids] if isinstance(ids, list) else ids[new]
            logits = kv.extend(seq[new], ids, logits_at=-1)[-1]
        else:   # the book's loop: the whole forward pass again for every new token
            logits = forward(seq, positions=_ids(positions, seq, params), **variant,
                             **params)[-1]
        token = _next_token(logits, temperature, rng)
        out.append(token)
        if token == eos:
            break
    return np.array(out, dtype=np.int64)


def _ids(position_fn, seq, params):
    """Checked position ids of ``seq`` from the caller's ``positions`` callable (or None)."""
    if position_fn is None:
        return None
    return check_positions(position_fn(seq), params, len(seq))


def decode_variant(tokens, params, max_steps, eos=None, norm='layer', post_ln=False):
    """``decode`` under a variant; kept for the puzzles that use this name."""
    return decode(tokens, params, max_steps, eos, norm=norm, post_ln=post_ln)


def _chunk_rows(params, n, chunk=None, n_logits=None):
    """Rows per chunk so the biggest intermediate stays near ``FLOAT_BUDGET`` numbers.

    ``n`` positions run per row; ``n_logits`` of them need logits (default: all).
    """
    if chunk is not None:
        if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            raise ParamsError(f'chunk must be a positive integer; got {chunk!r}')
        return int(chunk)
    d_model = np.shape(params['tok_emb'])[1]
    n_logits = n if n_logits is None else n_logits
    per_row = n * d_model + n_logits * np.shape(params['out_emb'])[0]
    for layer in params['layers']:
        h, _, d_head = np.shape(layer['Q'])
        per_row = max(per_row, n * (h * n + 3 * h * d_head + d_model))
    return int(max(1, FLOAT_BUDGET // max(1, per_row)))


def _batch(tokens, params, where, window=False):
    """(tokens as a (batch, n) int array, params with array weights), both checked."""
    params = as_arrays(validate_params(params))
    tokens = check_tokens(tokens, params, window=window)
    if tokens.ndim != 2:
        raise ParamsError(f'{where}: tokens must have shape (batch, n); got {tokens.shape}')
    return tokens, params


def decode_batch(tokens, params, n_steps, chunk=None, norm='layer', post_ln=False):
    """Greedy decoding of a batch of equal-length prompts for exactly ``n_steps``.

    Returns an int array (batch, n + n_steps).  Runs ``chunk`` rows at a time
    (default: sized to bound memory) with a KV cache; no eos handling (every
    row runs the same number of steps).
    """
    tokens, params = _batch(tokens, params, 'decode_batch')
    n = tokens.shape[1]
    if n + n_steps - 1 > block_size(params):
        raise ParamsError(f'decode_batch: {n} + {n_steps} steps need {n + n_steps - 1} '
                          f'positions but block_size is {block_size(params)}')
    rows = _chunk_rows(params, n + n_steps, chunk, n_logits=1)
    done = []
    for begin in range(0, len(tokens), rows):
        seq = tokens[begin:begin + rows]
        kv = KVCache(params, n + n_steps, norm, post_ln)
        new = seq
        for _ in range(n_steps):
            nxt = kv.extend(new, logits_at=-1)[:, -1].argmax(-1)
            new = nxt[:, None]
            seq = np.concatenate([seq, new], axis=1)
        done.append(seq)
    return np.concatenate(done) if done else np.zeros((0, n + n_steps), np.int64)


def last_token_argmax(tokens, params, chunk=None, norm='layer', post_ln=False):
    """Greedy next token after each row of ``tokens`` (batch, n): an int array (batch,).

    Only the last position's logits are computed, ``chunk`` rows at a time
    (default: sized to bound memory), so a vocabulary of millions fits.
    Computes in the dtype of ``params`` (see ``taotp.params.as_dtype``).
    """
    tokens, params = _batch(tokens, params, 'last_token_argmax')
    variant = check_variant(norm, post_ln, 'last_token_argmax')
    rows = _chunk_rows(params, tokens.shape[1], chunk, n_logits=1)
    out = [forward(tokens[i:i + rows], logits_at=-1, **variant, **params)[:, -1].argmax(-1)
           for i in range(0, len(tokens), rows)]
    return np.concatenate(out).astype(np.int64) if out else np.zeros(0, np.int64)


def teacher_forced_argmax(sequences, params, start, positions=None, chunk=None,
                          norm='layer', post_ln=False, mlp_rows='all'):
    """The greedy prediction of every answer token, given the true tokens before it.

    ``sequences`` (batch, n) are prompts of ``start`` tokens followed by their
    expected answers.  Returns the argmax of the logits at positions
    ``start - 1 .. n - 2``, shape (batch, n - start): the prediction of each
    answer token.  Greedy decoding of ``row[:start]`` reproduces ``row[start:]``
    exactly when this equals ``row[start:]``, so one pass checks a whole answer
    (the last answer token is never fed in, as in decoding).  Runs ``chunk``
    rows at a time (default: sized to bound memory); ``positions`` as in
    ``transformer`` for the first n - 1 tokens (the same for every row);
    ``mlp_rows='distinct'`` speeds up programs whose MLP sees few distinct inputs.
    """
    seq = np.asarray(sequences)
    if seq.ndim != 2 or seq.shape[1] < 2:
        raise ParamsError(f'teacher_forced_argmax: sequences must have shape (batch, n) with '
                          f'n >= 2; got {seq.shape}')
    n = seq.shape[1]
    if isinstance(start, bool) or not isinstance(start, (int, np.integer)) \
            or not 1 <= start <= n - 1:
        raise ParamsError(f'teacher_forced_argmax: start (the prompt length) must be in '
                          f'1..{n - 1}; got {start!r}')
    fed, params = _batch(seq[:, :-1], params, 'teacher_forced_argmax',
                         window=positions is not None)
    variant = check_variant(norm, post_ln, 'teacher_forced_argmax')
    positions = check_positions(positions, params, n - 1)
    rows = _chunk_rows(params, n - 1, chunk, n_logits=n - start)
    at = slice(start - 1, n - 1)
    if mlp_rows == 'distinct':       # remember the MLP outputs across chunks
        mlp_rows = DistinctRows()
    out = [forward(fed[i:i + rows], positions=positions, logits_at=at, mlp_rows=mlp_rows,
                   **variant, **params).argmax(-1) for i in range(0, len(fed), rows)]
    return np.concatenate(out).astype(np.int64) if out else np.zeros((0, n - start), np.int64)
