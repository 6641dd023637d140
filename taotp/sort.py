"""Chapter 5: Min, Max and Sort with one attention-only layer and no positions.

Min (and Max) use three residual dimensions.  Token ``t`` of a vocabulary of
``V`` sits at angle ``2*pi*(t + 1) / (2V + 2)`` of the layer-norm circle, so all
tokens lie on its upper half, strictly inside ``(0, pi)``::

    [6, 2, 0, 12, 18, 7, 12, 12]  ->  0          (vocab_size >= 19)

The query of every token points along the circle's angle ``pi/2`` (positive for
all tokens), the key reads the cosine of the token's angle, so the score is a
positive multiple of ``cos(angle)`` and the hardened softmax picks the smallest
token seen so far.  Max uses the key direction ``pi`` instead.

Sort uses six dimensions: the "powerpoints" ``p_t`` (token ``t`` at a point of
``[0, pi]`` whose gaps halve each time) and the "next points" ``q_t`` that lie
between ``p_{t+1}`` and ``p_{t+2}``.  The last token ``i`` queries with ``q_i``;
the nearest key ``p_j`` among the tokens present is the smallest ``j > i``::

    [6, 2, 12, 18, 7, 0]  ->  [2, 6, 7, 12, 18]  (vocab_size = n >= 19)

The input is distinct numbers in ``1..n-1`` followed by the terminator 0; the
program is decoded for ``len(input) - 1`` steps.

All programs here are plain float64 arrays (NumPy's default; the book's text
says "fp32", which is not NumPy's default).  ``as_dtype(params, np.float32)``
gives a float32 copy that the package's forward pass keeps in float32, which
is how the float32 limits in the chapter are measured.
"""
import numpy as np

from .blocks import pos_enc_3d, pos_enc_3d_array
from .decoding import decode_batch, last_token_argmax
from .params import as_dtype, base_layer, base_params
from .residual import Layout

__all__ = ['build_min_transformer', 'build_max_transformer', 'stretch', 'powerpoints',
           'nextpoint', 'build_sort_transformer', 'min_so_far', 'max_so_far',
           'sort_reference', 'MIN_LAYOUT', 'SORT_LAYOUT',
           'min_angles', 'random_sort_inputs', 'random_min_inputs', 'sort_errors',
           'min_errors']

MIN_LAYOUT = Layout([('tok', 3)])
SORT_LAYOUT = Layout([('p', 3), ('q', 3)])


def _check_int(where, name, value, low):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f'{where}: {name} must be an int; got {type(value).__name__}')
    if value < low:
        raise ValueError(f'{where}: {name} must be >= {low}; got {value}')


def _check_scale(where, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not np.isfinite(value) or value <= 0:
        raise ValueError(f'{where}: {name} must be a positive finite number; got {value!r}')


# ----------------------------------------------------------------------------- Min and Max

def min_angles(vocab_size):
    """Angle of every token on the circle: ``2*pi*(t + 1) / (2V + 2)``, all in (0, pi)."""
    return 2 * np.pi * np.arange(1, vocab_size + 1) / (2 * vocab_size + 2)


def _extreme_transformer(where, vocab_size, block_size, key_sign, q_scale, p_scale):
    _check_int(where, 'vocab_size', vocab_size, 2)
    _check_int(where, 'block_size', block_size, 1)
    _check_scale(where, 'q_scale', q_scale)
    _check_scale(where, 'p_scale', p_scale)
    L = MIN_LAYOUT
    params = base_params(vocab_size, block_size, d_model=L.d_model)   # pos_emb stays 0
    # tokens: rows 1..V of 2V + 2 evenly spaced points, i.e. the open upper half circle
    circle = pos_enc_3d_array(2 * (vocab_size + 1))
    params['tok_emb'] = circle[1:vocab_size + 1]
    params['out_emb'] = params['tok_emb']                              # tied
    layer = base_layer(n_heads=1, d_model=L.d_model, d_ff=0, d_head=3)
    # query . x_t = 3 sin(angle_t) > 0 for every token; key . x_s = +-3 cos(angle_s)
    layer['Q'][0, L['tok'], 0] = pos_enc_3d(np.pi / 2) * q_scale
    layer['K'][0, L['tok'], 0] = key_sign * pos_enc_3d(0.0)
    # copy the chosen token and drown the query's own token in it (messy cleanup)
    layer['V'][0] = np.eye(3)
    layer['P'][0] = np.eye(3) * p_scale
    params['layers'].append(layer)
    return params


def build_min_transformer(vocab_size, block_size, q_scale=1e8, p_scale=1e6):
    """Output the smallest token seen so far (Chapter 5, Fig. 5.2).

    Args:
        vocab_size: numbers 0..vocab_size-1 (repeats allowed).
        block_size: longest input (rows of the all-zero ``pos_emb``).
        q_scale: hardening of the query (the book's 1e8); tolerated range is
            measured in ``tests/test_sort.py`` and in the chapter.
        p_scale: scale of the copied token, messy cleanup (the book's 1e6).
    Returns:
        A params dict: 1 layer, 1 head, d_model 3, d_head 3, d_ff 0, tied embeddings;
        ``3 * vocab_size + 3 * block_size + 39`` parameters, 11 non-zero outside tok_emb.

    >>> import taotp
    >>> p = build_min_transformer(19, 8)
    >>> int(taotp.transformer([6, 2, 0, 12, 18, 7, 12, 12], **p)[-1].argmax())
    0
    """
    return _extreme_transformer('build_min_transformer', vocab_size, block_size, 1.0,
                                q_scale, p_scale)


def build_max_transformer(vocab_size, block_size, q_scale=1e8, p_scale=1e6):
    """Output the largest token seen so far: Min with the key direction turned to ``pi``.

    The key is written as ``-pos_enc_3d(0)`` (exactly the direction at angle pi,
    without the 1e-16 that ``sin(pi)`` leaves), so Max also has 11 non-zeros
    outside ``tok_emb``.

    >>> import taotp
    >>> p = build_max_transformer(19, 8)
    >>> int(taotp.transformer([6, 2, 0, 12, 18, 7, 12, 12], **p)[-1].argmax())
    18
    """
    return _extreme_transformer('build_max_transformer', vocab_size, block_size, -1.0,
                                q_scale, p_scale)


def min_so_far(tokens):
    """Plain-Python reference: the minimum of every prefix."""
    out, best = [], None
    for t in tokens:
        best = t if best is None or t < best else best
        out.append(int(best))
    return out


def max_so_far(tokens):
    """Plain-Python reference: the maximum of every prefix."""
    return [-m for m in min_so_far([-int(t) for t in tokens])]


# ----------------------------------------------------------------------------- Powerpoints

def stretch(x, mx):
    """Rescale ``x`` (non-negative, not all 0) so that its largest entry becomes ``mx``."""
    x = np.asarray(x, dtype=np.float64)
    return x * (mx / x.max())


def powerpoints(n, mx=np.pi):
    """``n`` points: 0, 1, 1.5, 1.75, ... (gap ``2**-i`` after point i), stretched to ``[0, mx]``.

    >>> powerpoints(4, mx=1.75).tolist()
    [0.0, 1.0, 1.5, 1.75]
    """
    _check_int('powerpoints', 'n', n, 2)
    gaps = 0.5 ** np.arange(n - 1)
    return stretch(np.concatenate(([0.0], np.cumsum(gaps))), mx)


def nextpoint(ts):
    """Query points: ``(3 ts[i+1] + ts[i+2]) / 4`` for i < n-2, then ``pi`` and ``0``.

    With powerpoints ``ts``, point i's query is nearest to ``ts[i+1]``, then
    ``ts[i+2]``, ... and only after all larger points to the smaller ones.  The
    last two entries send the largest but one to the largest (``pi``) and the
    largest back to 0.
    """
    ts = np.asarray(ts, dtype=np.float64)
    if ts.ndim != 1 or len(ts) < 2:
        raise ValueError(f'nextpoint: ts must be a 1-D array of at least 2 points; '
                         f'got shape {ts.shape}')
    return np.concatenate((0.75 * ts[1:-1] + 0.25 * ts[2:], [np.pi, 0.0]))


def build_sort_transformer(n=28, block_size=100, q_scale=1e20, v_scale=1e20):
    """Sort distinct numbers that precede a terminating 0 (Chapter 5, Fig. 5.5).

    Input: distinct ints in ``1..n-1``, then 0.  Decode ``len(input) - 1`` steps;
    the output is the numbers in ascending order.  Architecture: 1 layer, 1 head,
    d_model 6, d_head 6, d_ff 0, tied embeddings, ``pos_emb`` all zero.
    Parameters: ``6 n + 6 block_size + 150`` in total; for n = 28 there are 184
    non-zero, 166 of them in ``tok_emb`` and 18 elsewhere.

    The book's listing writes ``Q[3:, :3]`` and ``K[:3, :3]`` without the head
    index (a crash as printed); here they are ``Q[0, 3:, :3]`` and ``K[0, :3, :3]``.

    Args:
        n: vocabulary size (numbers 0..n-1, 0 is the terminator).
        block_size: rows of ``pos_emb``.
        q_scale: hardening of the query (book 1e20).
        v_scale: scale of the copied token instead of cleanup (book 1e20).

    >>> import taotp
    >>> p = build_sort_transformer(19, 16)
    >>> taotp.decode([6, 2, 12, 18, 7, 0], p, max_steps=5)[6:].tolist()
    [2, 6, 7, 12, 18]
    """
    _check_int('build_sort_transformer', 'n', n, 3)
    _check_int('build_sort_transformer', 'block_size', block_size, 1)
    _check_scale('build_sort_transformer', 'q_scale', q_scale)
    _check_scale('build_sort_transformer', 'v_scale', v_scale)
    L = SORT_LAYOUT
    angles = powerpoints(n)
    params = base_params(n, block_size, L.d_model)
    emb = np.zeros((n, L.d_model))
    emb[:, L['p']] = pos_enc_3d(angles)              # where token t is
    emb[:, L['q']] = pos_enc_3d(nextpoint(angles))   # where token t looks next
    params['tok_emb'] = params['out_emb'] = emb
    layer = base_layer(n_heads=1, d_model=L.d_model, d_ff=0, d_head=6)
    # score(i, j) = q_scale * q_i . p_j / sqrt(6) = q_scale * 3 cos(angle(q_i) - angle(p_j)) / sqrt(6)
    layer['Q'][0, L['q'], :3] = np.eye(3) * q_scale
    layer['K'][0, L['p'], :3] = np.eye(3)
    layer['V'][0] = np.eye(6) * v_scale    # instead of cleanup
    layer['P'][0] = np.eye(6)
    params['layers'].append(layer)
    return params


def sort_reference(tokens):
    """Plain-Python reference: the numbers before the terminating 0, ascending."""
    tokens = [int(t) for t in tokens]
    if not tokens or tokens[-1] != 0:
        raise ValueError(f'sort_reference: the input must end with the terminator 0; got {tokens}')
    return sorted(tokens[:-1])


# ----------------------------------------------------------------------------- inputs

def random_sort_inputs(n, length, count, rng):
    """``count`` rows: ``length`` distinct numbers from 1..n-1 in random order, then 0."""
    _check_int('random_sort_inputs', 'length', length, 1)
    if length > n - 1:
        raise ValueError(f'random_sort_inputs: length must be <= n - 1 = {n - 1}; got {length}')
    rows = [rng.permutation(np.arange(1, n))[:length] for _ in range(count)]
    return np.concatenate([np.array(rows, dtype=np.int64).reshape(count, length),
                           np.zeros((count, 1), dtype=np.int64)], axis=1)


def random_min_inputs(vocab_size, length, count, rng, near_zero=True):
    """Seeded Min inputs; with ``near_zero`` half of each row's values sit near 0 and V-1.

    The hardest cases for the circle construction are neighbouring tokens at the
    ends of the arc, so the rows mix uniform values with values from the 20
    smallest and 20 largest tokens.
    """
    rows = rng.integers(0, vocab_size, size=(count, length))
    if near_zero:
        ends = np.concatenate([np.arange(min(20, vocab_size)),
                               np.arange(max(0, vocab_size - 20), vocab_size)])
        mask = rng.random((count, length)) < 0.5
        rows = np.where(mask, rng.choice(ends, size=(count, length)), rows)
    return rows.astype(np.int64)


# ----------------------------------------------------------------------------- measured limits

def sort_errors(n, count=50, seed=0, dtype=np.float64, length=None, **scales):
    """How many of ``count`` seeded inputs (``length`` numbers, default n-1) Sort gets wrong.

    Builds ``build_sort_transformer(n, ...)`` with ``scales`` (q_scale, v_scale),
    casts it to ``dtype`` and decodes the whole batch.  Overflow inside a float32
    run (the book's 1e20 squared in the layer-norm variance) is part of what is
    measured, so those floating-point warnings are silenced here.
    """
    length = n - 1 if length is None else length
    params = build_sort_transformer(n, length + max(length, 1), **scales)
    params = params if dtype == np.float64 else as_dtype(params, dtype)
    inputs = random_sort_inputs(n, length, count, np.random.default_rng([seed, n]))
    with np.errstate(over='ignore', invalid='ignore', divide='ignore'):
        out = decode_batch(inputs, params, length)[:, length + 1:]
    return int((out != np.sort(inputs[:, :-1], axis=1)).any(axis=1).sum())


def min_errors(vocab_size, count=300, length=16, seed=0, dtype=np.float64, hard=True,
               largest=False, builder=None, **scales):
    """How many of ``count`` seeded Min inputs the program gets wrong (last position only).

    ``hard=True`` draws half of the values from the 20 smallest and 20 largest
    tokens (``random_min_inputs``), where the circle construction is weakest.
    ``largest=True`` measures Max instead.  ``builder(vocab_size, block_size,
    **scales)`` defaults to ``build_min_transformer`` (``build_max_transformer``).
    """
    builder = builder or (build_max_transformer if largest else build_min_transformer)
    params = builder(vocab_size, length, **scales)
    params = params if dtype == np.float64 else as_dtype(params, dtype)
    inputs = random_min_inputs(vocab_size, length, count, np.random.default_rng([seed, vocab_size]),
                               near_zero=hard)
    with np.errstate(over='ignore', invalid='ignore', divide='ignore'):
        got = last_token_argmax(inputs, params)
    want = inputs.max(axis=1) if largest else inputs.min(axis=1)
    return int((got != want).sum())
