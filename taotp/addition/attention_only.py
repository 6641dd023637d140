"""Puzzle 6.12: one layer of attention alone *can* add two digits modulo 10.

Section 6.1 of the preprint proves that an attention-only layer cannot output
``(i + j) % 10`` for the prompt ``[i, j]``, assuming each head reads a fixed
position: the last position then holds ``x_i + y_j`` (the residual adds a
function of ``j`` alone, which folds into ``y_j``), and no additive score
picks the right digit on the four prompts (0, 0), (0, 5), (5, 0), (5, 5).
The assumption is the gap: a head's query comes from ``j``, so *whether* it
reads ``i`` may depend on ``j``.

The construction: number the ``C(H, 2) >= base`` pairs of ``H`` heads, one
pair per digit (5 heads for base 10).  Head ``h`` reads the first digit
exactly when ``h`` belongs to the pair of ``j``, and then writes, for each
answer ``k``, a 1 where ``h`` belongs to the pair of ``(k - i) % base``.  The
two heads of ``j``'s pair both write a 1 at ``k = i + j`` and never both
elsewhere (two different pairs share at most one head), so the answer gets 2
and every other digit at most 1.  A head that stays on ``j`` must write
(almost) nothing: position 1 gets a long position vector, so layer norm
shrinks ``j``'s token part there by a factor ``DAMPING`` (a query built from it
is scaled back up; a value is not).

Layout: ``| tok (base, one-hot) | pos (2) |``; 1 layer, ``H`` heads, d_head =
base, no MLP, tied embeddings.

    >>> import taotp
    >>> p = build_attention_only_mod_transformer()
    >>> int(taotp.transformer([7, 8], **p)[-1].argmax())
    5
"""
import copy
import itertools
import math

import numpy as np

from ..params import base_layer, base_params
from ..residual import Layout
from ..trace import trace

FAR = 1000.0          # position 1's long vector: (FAR, -1 - FAR)
SCORE_GAP = 50.0      # score gap between the two positions (softmax units, after 1/sqrt(d_head))
OUT_SCALE = 1e3       # the heads' writes drown the residual's one-hot of j


def head_pairs(base=10):
    """The pair of heads of each digit: the first ``base`` pairs of the fewest heads that suffice.

    >>> head_pairs(10)[:3], len(head_pairs(10))
    ([(0, 1), (0, 2), (0, 3)], 10)
    """
    heads = 2
    while math.comb(heads, 2) < base:
        heads += 1
    return list(itertools.combinations(range(heads), 2))[:base]


def mod_layout(base=10):
    """``tok`` (one-hot digit) and ``pos`` (2 dims that make every row sum to zero)."""
    return Layout([('tok', base), ('pos', 2)])


def build_attention_only_mod_transformer(base=10, far=FAR, score_gap=SCORE_GAP,
                                         out_scale=OUT_SCALE, patterns=None, tables=None):
    """``[i, j] -> (i + j) % base`` with one attention-only layer (module docstring).

    Architecture: 1 layer, ``H`` heads (``C(H, 2) >= base``; 5 for base 10),
    d_model ``base + 2``, d_head ``base``, d_ff 0, tied embeddings.  Every
    prompt of two digits is answered exactly (tests check all of them).

    ``patterns`` and ``tables`` replace the pairs: ``patterns[j]`` is the set of
    heads that read the first digit when the second is ``j``, and ``tables[h][i]``
    the vector of ``base`` scores head ``h`` writes when it reads ``i`` (the default
    writes a 1 where ``h`` belongs to the pair of ``(k - i) % base``).  Heads whose
    choice depends on ``j`` alone need at least 4 for base 10 (Chapter 12).

    Raises:
        ValueError: base outside 2..50, non-positive scales, or tables whose shape
        does not match the patterns.
    """
    where = 'build_attention_only_mod_transformer'
    if isinstance(base, bool) or not isinstance(base, (int, np.integer)) or not 2 <= base <= 50:
        raise ValueError(f'{where}: base must be an int in 2..50; got {base!r}')
    for name, value in (('far', far), ('score_gap', score_gap), ('out_scale', out_scale)):
        if not isinstance(value, (int, float)) or not np.isfinite(value) or value <= 0:
            raise ValueError(f'{where}: {name} must be a positive finite number; got {value!r}')
    if patterns is None:
        patterns = head_pairs(base)
    patterns = [set(int(h) for h in p) for p in patterns]
    n_heads = max(max(p, default=-1) for p in patterns) + 1
    if len(patterns) != base or n_heads < 1:
        raise ValueError(f'{where}: patterns must give a set of heads for each of the {base} '
                         f'digits; got {len(patterns)} sets using {n_heads} heads')
    if tables is None:
        member = np.array([[h in patterns[d] for d in range(base)] for h in range(n_heads)],
                          dtype=np.float64)
        tables = [[[member[h, (k - i) % base] for k in range(base)] for i in range(base)]
                  for h in range(n_heads)]
    tables = np.asarray(tables, dtype=np.float64)
    if tables.shape != (n_heads, base, base):
        raise ValueError(f'{where}: tables must have shape (heads, base, base) = ({n_heads}, '
                         f'{base}, {base}); got {tables.shape}')
    L = mod_layout(base)
    d = L.d_model
    tok, pos = L['tok'], L['pos']
    params = base_params(base, 2, d)
    params['tok_emb'][:, tok] = np.eye(base)
    params['out_emb'] = params['tok_emb']
    # rows sum to 0 (one-hot + positions summing to -1): layer norm only rescales them,
    # by sqrt(d / |row|^2); position 1's long vector makes that factor small there
    params['pos_emb'][:, pos] = [[-0.5, -0.5], [far, -1.0 - far]]
    rows = params['pos_emb'][:, pos]
    shrink = np.sqrt(d / (1.0 + (rows ** 2).sum(axis=1)))       # per position
    key = np.linalg.solve(rows * shrink[:, None], [1.0, -1.0])   # key 1 at pos 0, -1 at pos 1
    layer = base_layer(n_heads=n_heads, d_model=d, d_ff=0, d_head=base)
    unit = score_gap * np.sqrt(base) / 2           # +-unit queries differ by score_gap
    for h in range(n_heads):
        reads = np.array([h in patterns[j] for j in range(base)], dtype=np.float64)
        layer['Q'][h, tok, 0] = unit * (2 * reads - 1) / shrink[1]      # +-unit from j
        layer['K'][h, pos, 0] = key
        layer['V'][h, tok, :] = tables[h] / shrink[0]                   # row i: what i writes
        layer['P'][h, tok, :] = out_scale * np.eye(base)
    params['layers'].append(layer)
    return params


def reading_by_position(params, digit='first'):
    """A copy whose heads all read one position, whatever the digits: the proof's assumption.

    Every query becomes a constant read from the position block, large and positive
    (``digit='first'``: every head reads ``i``) or negative (``'second'``: ``j``).
    """
    if digit not in ('first', 'second'):
        raise ValueError(f"reading_by_position: digit must be 'first' or 'second'; got {digit!r}")
    p = copy.deepcopy(params)
    layer = p['layers'][0]
    pos = np.asarray(p['pos_emb'])[1]                      # the query's position vector
    layer['Q'] = np.zeros_like(layer['Q'])
    layer['Q'][:, :, 0] = (1e3 if digit == 'first' else -1e3) * pos / (pos @ pos)
    return p


def unscaled_logits(params, prompts):
    """``sigma * logits`` at the last position: the final layer norm's division undone.

    With the default layer norm (gamma 1, beta 0) the logits are ``out_emb (z - mean) /
    sigma``; multiplying by ``sigma > 0`` changes no argmax and leaves a linear function
    of the residual ``z``.
    """
    z = trace(np.asarray(prompts), params).final[:, -1]
    return (z - z.mean(axis=1, keepdims=True)) @ np.asarray(params['out_emb']).T


def four_prompt_cycle(params, base=10):
    """Section 6.1's certificate on prompts (0, 0), (h, h), (0, h), (h, 0), h = base // 2.

    With ``d(i, j)`` the lead of answer 0 over answer h in ``unscaled_logits``, a
    correct program needs ``d(0,0) > 0``, ``d(h,h) > 0``, ``d(0,h) < 0`` and ``d(h,0) < 0``.
    Returns ``d(0,0) + d(h,h) - d(0,h) - d(h,0)`` (positive is possible only when the
    logits are not ``x_i + y_j``) and whether all four prompts are answered right.
    """
    h = base // 2
    prompts = np.array([[0, 0], [h, h], [0, h], [h, 0]])
    U = unscaled_logits(params, prompts)
    d = U[:, 0] - U[:, h]
    right = bool(np.array_equal(U.argmax(axis=1), prompts.sum(axis=1) % base))
    return float(d[0] + d[1] - d[2] - d[3]), right
