"""Running a program: the validated forward pass and every way to decode.

* ``transformer(tokens, **params)``: the book's entry point, logits (n, vocab).
* ``decode(tokens, params, ...)``: greedy by default; ``cache=False`` is the
  book's naive loop (Fig. 1.2), ``cache=True`` an equivalent KV-cached decoder
  (puzzle 1.3); ``window=True`` slides over the last ``block_size`` tokens
  (puzzle 1.7); ``temperature > 0`` samples with an explicit ``rng`` (puzzle 1.6).
* ``transformer_batch`` / ``decode_batch``: many equal-length inputs at once,
  for exhaustive verification.
"""
import numpy as np

from .model import embed, forward, layer_norm, mlp, rms_norm, softmax
from .params import ParamsError, block_size, check_tokens, validate_params


def transformer(tokens, tok_emb, pos_emb, out_emb, layers, lnf, positions=None):
    """Logits of every position, shape (n, vocab_size).

    Validates the program and the tokens first (cheap next to the forward pass),
    so a malformed program fails with a message that names the field.
    ``positions`` (optional) overrides the default position ids 0..n-1; see
    ``taotp.model.embed``.
    """
    params = validate_params(dict(tok_emb=tok_emb, pos_emb=pos_emb, out_emb=out_emb,
                                  layers=layers, lnf=lnf))
    tokens = check_tokens(tokens, params, window=positions is not None)
    positions = _check_positions(positions, params, tokens.shape[-1])
    return forward(tokens, positions=positions, **params)


def transformer_variant(tokens, params, norm='layer', post_ln=False, positions=None):
    """Logits under a variant architecture: ``norm='rms'`` and/or ``post_ln=True``.

    Used by puzzles that ask for programs on a PostLN or RMSNorm transformer; the
    params format is unchanged (``ln1``, ``ln2``, ``lnf`` hold that norm's gamma/beta).
    """
    norms = {'layer': layer_norm, 'rms': rms_norm}
    if norm not in norms:
        raise ParamsError(f"transformer_variant: norm must be 'layer' or 'rms'; got {norm!r}")
    validate_params(params)
    tokens = check_tokens(tokens, params, window=positions is not None)
    positions = _check_positions(positions, params, tokens.shape[-1])
    return forward(tokens, positions=positions, norm_fn=norms[norm], post_ln=post_ln, **params)


def decode_variant(tokens, params, max_steps, eos=None, norm='layer', post_ln=False):
    """Greedy decoding (no cache) under ``transformer_variant``."""
    out = list(check_tokens(tokens, params, allow_batch=False))
    for _ in range(max_steps):
        token = int(np.argmax(transformer_variant(np.array(out), params, norm, post_ln)[-1]))
        out.append(token)
        if token == eos:
            break
    return np.array(out, dtype=np.int64)


def transformer_batch(tokens, params, positions=None):
    """Logits for a batch of equal-length sequences: (batch, n) -> (batch, n, vocab)."""
    validate_params(params)
    tokens = check_tokens(tokens, params)
    if tokens.ndim != 2:
        raise ParamsError(f'transformer_batch: tokens must have shape (batch, n); '
                          f'got {tokens.shape}')
    positions = _check_positions(positions, params, tokens.shape[-1])
    return forward(tokens, positions=positions, **params)


def _check_positions(positions, params, n):
    if positions is None:
        return None
    tables = params['pos_emb'] if isinstance(params['pos_emb'], (list, tuple)) \
        else [params['pos_emb']]
    arr = np.asarray(positions)
    if arr.dtype.kind not in 'iu':
        raise ParamsError(f'positions must be integer ids; got dtype {arr.dtype}')
    if not isinstance(params['pos_emb'], (list, tuple)):
        arr = arr[None]
    if arr.shape[0] != len(tables) or arr.shape[-1] != n:
        raise ParamsError(f'positions has shape {np.shape(positions)}; expected one id per '
                          f'token for each of the {len(tables)} position table(s), n = {n}')
    for level, (table, ids) in enumerate(zip(tables, arr)):
        if ids.min() < 0 or ids.max() >= len(table):
            raise ParamsError(f'positions[{level}] holds id {int(ids.max())}, outside 0..'
                              f'{len(table) - 1} (rows of that pos_emb table)')
    return list(arr) if isinstance(params['pos_emb'], (list, tuple)) else arr[0]


class KVCache:
    """Keys and values of every past position, per layer, for incremental decoding.

    The attention of a new token needs the keys and values of all earlier tokens;
    those never change (the mask hides the future), so we compute them once.
    """

    def __init__(self, params, capacity):
        self.params = params
        self.length = 0
        self.keys, self.values = [], []
        for layer in params['layers']:
            n_heads, _, d_head = layer['K'].shape
            self.keys.append(np.zeros((n_heads, capacity, d_head)))
            self.values.append(np.zeros((n_heads, capacity, layer['V'].shape[2])))

    def extend(self, tokens, positions=None):
        """Feed new tokens (m,) and return their logits (m, vocab)."""
        p = self.params
        start, m = self.length, len(tokens)
        stop = start + m
        if positions is None:  # absolute positions continue where the cache stopped
            ids = np.arange(start, stop)
            positions = [ids] * len(p['pos_emb']) if isinstance(p['pos_emb'], (list, tuple)) else ids
        x = embed(tokens, p['tok_emb'], p['pos_emb'], positions)      # (m, d_model)
        # query i (absolute position start + i) sees keys 0..start + i
        mask = np.arange(stop)[None, :] <= (start + np.arange(m))[:, None]
        for layer, keys, values in zip(p['layers'], self.keys, self.values):
            h = layer_norm(x, **layer['ln1'])
            keys[:, start:stop] = np.einsum('md,hdk->hmk', h, layer['K'])
            values[:, start:stop] = np.einsum('md,hdk->hmk', h, layer['V'])
            queries = np.einsum('md,hdk->hmk', h, layer['Q'])
            scores = np.einsum('hmk,htk->hmt', queries, keys[:, :stop])
            weights = softmax(np.where(mask, scores / layer['Q'].shape[-1] ** 0.5, -np.inf))
            heads = np.einsum('hmt,htk->hmk', weights, values[:, :stop])
            x = x + np.einsum('hmk,hdk->md', heads, layer['P'])
            x = x + mlp(layer_norm(x, **layer['ln2']), layer['M1'], layer['b1'],
                        layer['M2'], layer['b2'])
        self.length = stop
        return layer_norm(x, **p['lnf']) @ p['out_emb'].T


def _next_token(logits, temperature, rng):
    if not temperature:
        return int(np.argmax(logits))
    probs = softmax(logits / temperature)
    return int(rng.choice(len(probs), p=probs / probs.sum()))


def _positions_for(position_fn, tokens):
    return None if position_fn is None else position_fn(tokens)


def decode(tokens, params, max_steps=1000, eos=None, cache=True, window=False,
           temperature=0.0, rng=None, positions=None):
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
    Raises:
        ParamsError: malformed program, bad token ids, or a sequence longer than
            ``block_size`` without ``window=True``.
    """
    validate_params(params)
    tokens = check_tokens(tokens, params, allow_batch=False,
                          window=window or positions is not None)
    if temperature < 0:
        raise ParamsError(f'decode: temperature must be >= 0; got {temperature}')
    if temperature and not isinstance(rng, np.random.Generator):
        raise ParamsError('decode: sampling (temperature > 0) needs rng=np.random.default_rng(seed)')
    if max_steps < 0:
        raise ParamsError(f'decode: max_steps must be >= 0; got {max_steps}')
    # with custom position ids the sequence may outgrow pos_emb (ids repeat)
    limit = block_size(params) if positions is None else len(tokens) + max_steps
    if not window and len(tokens) + max_steps - 1 > limit and max_steps > 0:
        # the last generated token is never fed back, hence the -1
        if eos is None:
            raise ParamsError(f'decode: prompt of {len(tokens)} tokens + {max_steps} steps needs '
                              f'{len(tokens) + max_steps - 1} positions but block_size is {limit}; '
                              f'lower max_steps or pass window=True')
    out = list(tokens)
    kv = KVCache(params, limit) if cache else None
    fed = 0  # tokens already inside the cache
    for _ in range(max_steps):
        if len(out) > limit:
            if not window:
                raise ParamsError(f'decode: the sequence reached {len(out)} tokens but block_size '
                                  f'is {limit}; lower max_steps or pass window=True')
            seq = np.array(out[-limit:])
            logits = forward(seq, positions=_positions_for(positions, seq), **params)[-1]
        elif cache:
            seq = np.array(out)
            pos = _positions_for(positions, seq)
            if pos is not None:
                pos = np.asarray(pos)[..., fed:]
                pos = list(pos) if isinstance(params['pos_emb'], (list, tuple)) else pos
            try:
                logits = kv.extend(seq[fed:], pos)[-1]
            except IndexError as exc:
                raise ParamsError(f'decode: a position id is outside its pos_emb table ({exc})') \
                    from None
            fed = len(out)
        else:
            seq = np.array(out)
            logits = forward(seq, positions=_positions_for(positions, seq), **params)[-1]
        token = _next_token(logits, temperature, rng)
        out.append(token)
        if token == eos:
            break
    return np.array(out, dtype=np.int64)


def decode_batch(tokens, params, n_steps, chunk=4096):
    """Greedy decoding of a batch of equal-length prompts for exactly ``n_steps``.

    Returns an int array (batch, n + n_steps).  Processes ``chunk`` rows at a time
    to bound memory; no eos handling (every row runs the same number of steps).
    """
    validate_params(params)
    tokens = check_tokens(tokens, params)
    if tokens.ndim != 2:
        raise ParamsError(f'decode_batch: tokens must have shape (batch, n); got {tokens.shape}')
    if tokens.shape[1] + n_steps - 1 > block_size(params):
        raise ParamsError(f'decode_batch: {tokens.shape[1]} + {n_steps} steps need '
                          f'{tokens.shape[1] + n_steps - 1} positions but block_size is '
                          f'{block_size(params)}')
    done = []
    for start in range(0, len(tokens), chunk):
        seq = tokens[start:start + chunk]
        for _ in range(n_steps):
            nxt = forward(seq, **params)[:, -1].argmax(-1)
            seq = np.concatenate([seq, nxt[:, None]], axis=1)
        done.append(seq)
    return np.concatenate(done) if done else np.zeros((0, tokens.shape[1] + n_steps), np.int64)
