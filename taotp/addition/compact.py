"""A decimal adder whose size grows linearly in the number of digits (the Records chapter).

Chapter 6's adder looks the whole answer up in one MLP, so it needs about
36 * 10^n parameters for n digits.  This one computes the carries: four layers, a
13-dimensional residual stream, and nothing that grows with n except the position
table, so it has ``39 n + 1182`` parameters (1,299 at three digits, 2,742 at forty).
The token format is the book's: ``[a digits, 10, b digits, 11]``, most significant
digit first, zero padded to n digits; greedy decoding of n + 1 steps prints the
n + 1 digits of a + b.

Columns.  Position p has the *column* ``col = p - (n + 1)``: digit i of b (i = 0 ..
n - 1, from the left) is column i, '=' is column n (a sentinel), the digits of a
sit at columns -n-1 .. -2, '+' at -1, and the m-th answer token at n + m.  Column i
adds ``t_i = a_i + b_i``; it *generates* a carry (t >= 10), *propagates* one (t = 9)
or *kills* it (t <= 8).  Answer digit m (m = 0 .. n; digit 0 is predicted at '=') is
``(t_{m-1} + c_m) % 10``, where the carry ``c_m`` into column m - 1 is 1 exactly when
the first column at or right of m that does not propagate generates (the sentinel
kills).

The four layers, seen from column i (a digit of b, or '='):

1. Three fetch heads.  Positions sit on a circle (``code``, see ``slots``); a query
   turns its own point by a fixed angle and lands halfway between two neighbours,
   so the head averages them: head 1 reads ``(a_i, b_i)``, head 2
   ``(a_{i-1}, b_{i-1})``, head 3 (at the answer tokens) ``(a_{m-1}, b_{m-1})``.  The
   MLP turns the two sums into ``Z_i`` (1 for generate or kill, 0 for propagate, plus
   a small ``delta`` for generate) and a *flag*: column i - 1 does not propagate.
2. A recency head finds the latest flagged position at or before i: one right of
   ``p_i``, the last column before i that does not propagate (-1 if none).  Column i
   now knows its interval ``(p_i, i]``.
3. A head attends equally to the positions whose ``p`` equals its own, the run
   ``p_i + 1 .. i``; the average of ``(j + 1/2)^2`` over it contains the product
   ``i * p_i`` (``interval_product``), which layer 4 needs and which a read of one
   position (a sum of a function of i and a copied function of p_i) cannot give.
4. At answer digit m the head scores column i by ``(i + 1/2 - m)(m - p_i - 1/2) +
   B Z_i``: the product is positive exactly when ``p_i < m <= i``, and the intervals
   of the columns that do not propagate tile ``(-1, n]``; ``B`` outweighs any product,
   so the head reads ``Z`` of the first such column at or right of m.  The MLP writes
   ``(t_{m-1} + c_m) % 10``.  Everything else (the digits of a, '+', the answer
   tokens) scores like a column whose interval misses every m.

Layer norm.  Every position carries a point of radius ``RADIUS = 1e8`` on the circle
(a zero-sum block, ``taotp.blocks.pos_enc_3d``) and nothing else exceeds a few
hundred, so every layer norm divides by ``RADIUS / sqrt(13)`` up to a relative 1e-12:
the network is linear where it should be.  Every read matrix has columns that sum
to zero (the 'zero' coordinate, never written, takes minus the rest), so the mean
that layer norm subtracts cancels, without rounding since ``0 - mean`` is exact.
Measured at n = 64: fetched sums within 2e-9 of the integers, carries within 2e-5
of 0 or 1 (``compact_addition_internals``).

Limits.  Exact on carry chains and random pairs up to 512 digits; at 1,024 digits 14
of 29 such sums fail.  The generate bit rides on ``Z`` as an increment of
``delta = 1 / (8 B)``, about ``1 / (2 n^2)``, so layer 4 multiplies layer 1's error
(2e-7 at n = 1,024) by 2e6: the carries come out 0.35 off.  All scores are polynomial
in n (the largest is about 3 n^2), where a score built from ``exp(alpha (k - j))``
needs a range of about n^n, which a layer norm holding O(1) features next to it cannot
keep in float64 beyond a dozen digits.

    >>> import taotp
    >>> p = build_compact_addition_transformer(3)
    >>> taotp.decode([9, 9, 9, 10, 0, 0, 1, 11], p, max_steps=4)[-4:].tolist()
    [1, 0, 0, 0]
    >>> taotp.count_params(p)['n_params']
    1299
"""
import numpy as np

from ..blocks import pos_enc_3d
from ..params import base_layer, base_params
from ..residual import Layout
from .data import EQUALS, PLUS, check_digits

LAYOUT = Layout([('code', 3),     # a point on the circle, radius RADIUS (positional)
                 ('digit', 1),    # c_v * digit (token); the output digit at the end
                 ('square', 1),   # -c_v * digit^2 / 2 (token): makes the tied logits peak
                 ('pad', 1),      # makes every token row sum to 1: the constant 'one'
                 ('col', 1),      # col / (n + 1) (positional)
                 ('col2', 1),     # (col + 1/2)^2 / (n + 1)^2, then the interval's product
                 ('pair', 1),     # c_v * t_i / 2 after layer 1, then Z_i
                 ('prev', 1),     # c_v * t_{i-1} / 2 after layer 1, then the flag
                 ('sum', 1),      # c_v * (t_{m-1} + c_m) / 2 at the answer positions
                 ('left', 1),     # p_i / (n + 1): the left end of column i's interval
                 ('zero', 1)])    # always 0: every read subtracts layer norm's mean here

RADIUS = 1e8          # radius of the circle block; the rest of the stream stays below ~300
DIGIT_SCALE = 0.1     # c_v: the 'digit' coordinate of token k is c_v * k
OUT_SCALE = 1e6       # the final MLP's write (messy cleanup of the output)
SCORE_GAP = 50.0      # every head's score gap between its choice and the runner-up
N_UNITS = (9, 0, 0, 3)   # hidden units of the four MLPs


# ----------------------------------------------------------------------------- geometry

def columns(n_digits):
    """The column of every position: ``position - (n + 1)``, for 3 n + 2 positions.

    >>> columns(2).tolist()
    [-3, -2, -1, 0, 1, 2, 3, 4]
    """
    return np.arange(3 * n_digits + 2) - (n_digits + 1)


def slots(n_digits):
    """Where each position sits on the circle of ``4 n + 4`` slots.

    The digits of a take the even slots ``2i``, every other position the odd slot
    ``2 col + 1`` (modulo 4 n + 4: '+' lands on the last slot, the answer tokens on
    the far side).  So ``(a_i, b_i)`` are neighbours around ``2i + 1/2``, and the
    turns of the three heads of layer 1 (``-1/2``, ``-5/2`` and ``-(2n + 5/2)`` slots)
    land halfway between the pair they read, the runner-up 3/2 slots away:

    * b_i -> pair i, pair i - 1; '=' (slot 2n + 1, slot 2n is empty) -> itself and
      pair n - 1; b_0's second head -> -3/2, where only '+' is visible;
    * answer token m (slot 2n + 2m + 1) -> pair m - 1 with the third head, '=' -> '+'.

    '+' and '=' have the digit value 0, so what they read is a kill (t = 0).

    >>> slots(2).tolist()
    [0, 2, 11, 1, 3, 5, 7, 9]
    """
    n = n_digits
    col = columns(n)
    out = (2 * col + 1) % (4 * n + 4)
    out[:n] = 2 * np.arange(n)
    return out


# the heads of layer 1 turn a query's point by these many slots
def _turns(n):
    return {'pair': -0.5, 'prev': -2.5, 'sum': -(2 * n + 2.5)}


def _at(name):
    """The index of a one-wide block of the layout."""
    return LAYOUT[name].start


def _sigma():
    """The standard deviation layer norm sees: the circle block dominates it."""
    return RADIUS / LAYOUT.d_model ** 0.5


def _read(spec):
    """A column of a read matrix that recovers ``sum(coef * raw value)`` after layer norm.

    ``spec`` maps layout names to coefficients; ``'one'`` reads the constant 1 (the
    token row sums).  The column gets minus its sum on the 'zero' coordinate, so it
    sums to zero: the mean that layer norm subtracts cancels, and exactly, because
    ``0 - mean`` is computed without rounding.
    """
    L, column = LAYOUT, np.zeros(LAYOUT.d_model)
    for name, coef in spec.items():
        if name == 'one':
            for tok in ('digit', 'square', 'pad'):
                column[L[tok]] += coef
        else:
            column[L[name]] += coef
    column *= _sigma()
    column[L['zero']] -= column.sum()
    return column


def _write(name, coef=1.0):
    row = np.zeros(LAYOUT.d_model)
    row[LAYOUT[name]] = coef
    return row


def interval_product(i, p):
    """``(i + 1/2)(p + 1/2)`` from what layers 2 and 3 can compute; returns both sides.

    A position reads linear functions of its own column i and of one copied value,
    which gives sums f(i) + g(p) but never the product.  The average ``A`` of
    ``(j + 1/2)^2`` over the run j = p + 1 .. i does contain it:
    ``A = (I + P + 1)^2 / 4 + ((I - P)^2 - 1) / 12`` with I = i + 1/2, P = p + 1/2, so
    ``I P = 3A - I^2 - P^2 - 3(I + P)/2 - 1/2``.

    >>> interval_product(7, 2)
    (18.75, 18.75)
    """
    run = np.arange(p + 1, i + 1)
    A = float(np.mean((run + 0.5) ** 2))
    I, P = i + 0.5, p + 0.5
    return I * P, 3 * A - I * I - P * P - 1.5 * (I + P) - 0.5


# ----------------------------------------------------------------------------- embeddings

def _token_embedding():
    """Digits k: ``(c k, -c k^2 / 2, 1 - c k + c k^2 / 2)``; '+' and '=': ``(0, -c, 1 + c)``.

    Rows sum to 1 (read as the constant 'one').  Tied logits ``k d - k^2 / 2`` peak at
    ``k = d`` when the stream holds ``(d, 1)`` in (digit, square); '+' and '=' score -1.
    """
    L, c = LAYOUT, DIGIT_SCALE
    tok = np.zeros((12, L.d_model))
    k = np.arange(10.0)
    digit, square, pad = _at('digit'), _at('square'), _at('pad')
    tok[:10, digit] = c * k
    tok[:10, square] = -c * k ** 2 / 2
    tok[[PLUS, EQUALS], square] = -c
    tok[:, pad] = 1 - tok[:, digit] - tok[:, square]
    return tok


def _position_embedding(n):
    L, ns = LAYOUT, n + 1
    col = columns(n)
    pos = np.zeros((3 * n + 2, L.d_model))
    pos[:, L['code']] = RADIUS / 3 ** 0.5 * pos_enc_3d(2 * np.pi * slots(n) / (4 * n + 4))
    pos[:, _at('col')] = col / ns
    pos[:, _at('col2')] = (col + 0.5) ** 2 / ns ** 2
    return pos


# ----------------------------------------------------------------------------- layers

def _fetch_layer(n):
    """Layer 1: three heads average a pair of digits each; the MLP classifies the sums."""
    L, ns, c = LAYOUT, n + 1, DIGIT_SCALE
    layer = base_layer(3, L.d_model, N_UNITS[0], 2)
    gamma = 2 * np.pi / (4 * n + 4)
    # the pair sits half a slot from the target, the runner-up 3/2 slots away
    harden = SCORE_GAP * 2 ** 0.5 / (np.cos(gamma / 2) - np.cos(1.5 * gamma))
    frame = np.stack([pos_enc_3d(0.0), pos_enc_3d(np.pi / 2)], axis=1) / 3 ** 0.5  # (3, 2)
    for head, (target, turn) in enumerate(_turns(n).items()):
        a = turn * gamma
        turn_matrix = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
        # key: the unit point (cos, sin); query: the point turned by `turn` slots
        layer['K'][head, L['code'], :] = _sigma() / RADIUS * frame
        layer['Q'][head, L['code'], :] = harden * _sigma() / RADIUS * frame @ turn_matrix
        layer['V'][head, :, 0] = _read({'digit': 1.0})
        layer['P'][head, :, 0] = _write(target)         # the average: c * (sum of the pair) / 2
    # MLP, with t = 2 pair / c and r = ReLU: exact on the integers,
    # [t = 9] = r(t - 8) - 2 r(t - 9) + r(t - 10) and [t >= 10] = r(t - 9) - r(t - 10)
    t_i, t_prev = {'pair': 2 / c}, {'prev': 2 / c}
    units = [(t_i, -8), (t_i, -9), (t_i, -10), (t_prev, -8), (t_prev, -9), (t_prev, -10),
             ({'col': ns}, -n),                                # > 0 only at the answer tokens
             ({'pair': 1.0}, 0), ({'prev': 1.0}, 0)]          # the fetched sums, to erase
    for u, (spec, bias) in enumerate(units):
        layer['M1'][:, u] = _read(spec)
        layer['b1'][u] = bias
    delta = _delta(n)
    layer['M2'][0:3] = np.outer([-1, 2 + delta, -1 - delta], _write('pair'))   # Z - 1
    layer['M2'][3:6] = np.outer([-1, 2, -1], _write('prev'))                     # flag - 1
    # answer token m gets the flag 2m (+ at most 1): its own position is always the latest
    # flagged one, so p = its column - 1 >= n, an interval that misses every m in layer 4
    layer['M2'][6] = _write('prev', 2.0)
    layer['M2'][7] = _write('pair', -1.0)
    layer['M2'][8] = _write('prev', -1.0)
    layer['b2'][:] = _write('pair') + _write('prev')
    return layer


def _bonus(n):
    """B: more than any interval product (at most (n + 1)^2 / 4), so propagating columns lose."""
    return (n + 1) ** 2 / 4 + 1


def _delta(n):
    """Z of a generating column is 1 + delta; the bonus B * delta stays below 1/8."""
    return 1 / (8 * _bonus(n))


def _recency_layer(n):
    """Layer 2: the latest flagged position; copy p = its column - 1, and -P^2/2 into col2."""
    L, ns = LAYOUT, n + 1
    layer = base_layer(1, L.d_model, N_UNITS[1], 2)
    # key col + bonus * flag: a flag outweighs any distance (the digits of a and '+' sit
    # left of b_0, which is always flagged: column -1, '+', counts as a kill)
    lam, bonus = 1.0, n + 3.0
    harden = SCORE_GAP * 2 ** 0.5 / lam
    layer['Q'][0, :, 0] = _read({'one': harden})
    layer['K'][0, :, 0] = _read({'col': lam * ns, 'prev': bonus})
    layer['V'][0, :, 0] = _read({'col': 1.0, 'one': -1 / ns})                  # p / ns
    # (p + 1/2)^2 / ns^2 = (col - 1/2)^2 / ns^2 = col2 - 2 col / ns  (raw units)
    layer['V'][0, :, 1] = _read({'col2': -0.5, 'col': 1 / ns})                  # -P^2 / 2
    layer['P'][0, :, 0] = _write('left')
    layer['P'][0, :, 1] = _write('col2')
    return layer


def _run_layer(n):
    """Layer 3: attend equally to the positions whose p equals the query's own; col2 += -3 avg."""
    L, ns = LAYOUT, n + 1
    layer = base_layer(1, L.d_model, N_UNITS[2], 2)
    harden = SCORE_GAP * 2 ** 0.5 * ns      # p differs by at least 1, i.e. 1/ns raw
    # score = harden * (one_q * left_k - left_q * one_k): exactly 0 on the run
    layer['Q'][0, :, 0] = _read({'one': harden})
    layer['Q'][0, :, 1] = _read({'left': -harden})
    layer['K'][0, :, 0] = _read({'left': 1.0})
    layer['K'][0, :, 1] = _read({'one': 1.0})
    layer['V'][0, :, 0] = _read({'col2': 1.0})
    layer['P'][0, :, 0] = _write('col2', -3.0)
    return layer


def _carry_layer(n):
    """Layer 4: the column whose interval holds m; the MLP writes (t + c) % 10."""
    L, ns, c = LAYOUT, n + 1, DIGIT_SCALE
    layer = base_layer(1, L.d_model, N_UNITS[3], 2)
    bonus, delta = _bonus(n), _delta(n)
    harden = SCORE_GAP * 2 ** 0.5 / (3 / 8)    # margin: 1/4 each side, less B * DELTA
    # query (m, 1) with m = col - n; key (I + P, -I P + B Z) with I + P = col + p + 1
    layer['Q'][0, :, 0] = _read({'col': harden * ns, 'one': -harden * n})
    layer['Q'][0, :, 1] = _read({'one': harden})
    sum_ip = {'col': ns, 'left': ns, 'one': 1.0}
    layer['K'][0, :, 0] = _read(sum_ip)
    # after layer 3, col2 holds (-I P - 3 (I + P) / 2 - 1/2) / ns^2
    minus_ip = {'col2': ns ** 2, 'col': 1.5 * ns, 'left': 1.5 * ns, 'one': 2.0}
    layer['K'][0, :, 1] = _read({**minus_ip, 'pair': bonus})
    layer['V'][0, :, 0] = _read({'pair': 1 / delta, 'one': -1 / delta})      # the carry
    layer['P'][0, :, 0] = _write('sum', c / 2)
    # MLP: v = 2 sum / c in 0..19; digit = r(v) - 10 r(v - 9) + 10 r(v - 10)
    for u, bias in enumerate((0, -9, -10)):
        layer['M1'][:, u] = _read({'sum': 2 / c})
        layer['b1'][u] = bias
    layer['M2'][:, _at('digit')] = OUT_SCALE * np.array([1.0, -10.0, 10.0])
    layer['b2'][_at('square')] = OUT_SCALE
    return layer


# ----------------------------------------------------------------------------- the builder

def build_compact_addition_transformer(n_digits):
    """Decimal addition in the book's format with ``39 n + 1182`` parameters.

    Args:
        n_digits: digits of each operand, an integer in 1..``MAX_DIGITS`` (349,524: the
            prompt and answer fill 3 n + 2 positions, at most ``taotp.params.MAX_SIZE``).

    Returns:
        A params dict: 4 layers (3, 1, 1, 1 heads; d_head 2; MLPs of 9, 0, 0 and 3
        units), d_model 13, vocabulary 12, block size 3 n + 2, tied embeddings.  The
        prompt is ``[a digits, 10, b digits, 11]`` (most significant first, zero
        padded); greedy decoding of n + 1 steps gives the n + 1 digits of a + b.

    Raises:
        ValueError: ``n_digits`` is not an integer in 1..``MAX_DIGITS``.

    Example:
        >>> import taotp
        >>> p = build_compact_addition_transformer(2)
        >>> taotp.decode([4, 5, 10, 7, 8, 11], p, max_steps=3)[-3:].tolist()
        [1, 2, 3]
    """
    check_digits('build_compact_addition_transformer', n_digits)
    n = int(n_digits)
    params = base_params(vocab_size=12, block_size=3 * n + 2, d_model=LAYOUT.d_model)
    params['tok_emb'] = _token_embedding()
    params['out_emb'] = params['tok_emb'].copy()
    params['pos_emb'] = _position_embedding(n)
    params['layers'] = [_fetch_layer(n), _recency_layer(n), _run_layer(n), _carry_layer(n)]
    return params


def compact_addition_size(n_digits):
    """The parameter count of ``build_compact_addition_transformer(n_digits)``: 39 n + 1182.

    >>> compact_addition_size(3), compact_addition_size(40)
    (1299, 2742)
    """
    check_digits('compact_addition_size', n_digits)
    return 39 * int(n_digits) + 1182


def book_addition_size(n_digits):
    """The parameter count of the book's adder (Fig. 6.4) for n digits, as an exact integer.

    ``189 + 189 n + 15 F`` with ``F = 3 (n + 1)(2 10^n - 1)`` hidden units (see
    ``build_decimal_addition_transformer``); it reproduces the preprint's 2,088 /
    27,432 / 360,576 and grows like 90 (n + 1) 10^n.

    >>> [book_addition_size(n) for n in (1, 2, 3)]
    [2088, 27432, 360576]
    """
    check_digits('book_addition_size', n_digits)
    n = int(n_digits)
    return 189 + 189 * n + 15 * 3 * (n + 1) * (2 * 10 ** n - 1)


def compact_addition_table(n_max=64):
    """Sizes for n = 1 .. n_max: rows ``(n, ours, ours non-zero, the book's)``.

    Ours are counted on the built programs (``count_params``, ``count_non0_params``);
    the book's come from ``book_addition_size`` (Python integers: 10^66 and up).

    >>> compact_addition_table(2)
    [(1, 1221, 205, 2088), (2, 1260, 220, 27432)]
    """
    from ..params import count_non0_params, count_params
    check_digits('compact_addition_table', n_max)
    rows = []
    for n in range(1, int(n_max) + 1):
        params = build_compact_addition_transformer(n)
        rows.append((n, count_params(params)['n_params'],
                     count_non0_params(params)['n_params'], book_addition_size(n)))
    return rows


# ----------------------------------------------------------------------------- verification

def _pairs(n, pairs, where):
    """Validate ``pairs`` of Python ints (or int-likes) for n digits; return a list of tuples."""
    top = 10 ** n
    try:
        out = [(int(a), int(b)) for a, b in pairs]
    except (TypeError, ValueError):
        raise ValueError(f'{where}: pairs must be (a, b) integer pairs; got {pairs!r:.60}')
    bad = [p for p in out if not (0 <= p[0] < top and 0 <= p[1] < top)]
    if bad:
        raise ValueError(f'{where}: numbers must be in 0..{top - 1} for {n} digits; '
                         f'got {bad[0]}')
    return out


def _digits(x, n):
    return [int(ch) for ch in str(x).zfill(n)]


def long_addition_prompts(n_digits, pairs):
    """Prompts and answers for any number of digits (Python integers, no int64 limit).

    Returns ``(prompts (N, 2n + 2), answers (N, n + 1))`` int arrays in the book's
    format (``taotp.addition.addition_prompts`` is the int64 version for n <= 18).

    >>> p, a = long_addition_prompts(2, [(45, 78)])
    >>> p.tolist(), a.tolist()
    ([[4, 5, 10, 7, 8, 11]], [[1, 2, 3]])
    """
    check_digits('long_addition_prompts', n_digits)
    n = int(n_digits)
    pairs = _pairs(n, pairs, 'long_addition_prompts')
    prompts = np.array([_digits(a, n) + [PLUS] + _digits(b, n) + [EQUALS] for a, b in pairs],
                       dtype=np.int64).reshape(len(pairs), 2 * n + 2)
    answers = np.array([_digits(a + b, n + 1) for a, b in pairs],
                       dtype=np.int64).reshape(len(pairs), n + 1)
    return prompts, answers


def long_addition_errors(params, n_digits, pairs, chunk=None):
    """Greedy decoding against a + b on ``pairs``: ``(n_wrong, n_checked, first wrong pair)``.

    One teacher-forced pass of the shared engine (``taotp.teacher_forced_argmax``,
    ``chunk`` rows at a time) decides every pair: decoding reproduces an answer
    exactly when each answer position, fed the right digits before it, predicts the
    next right digit.  The first wrong pair is ``None`` when all are right.

    >>> long_addition_errors(build_compact_addition_transformer(2), 2, [(99, 1), (45, 78)])
    (0, 2, None)
    """
    from ..decoding import teacher_forced_argmax
    pairs = _pairs(int(n_digits), pairs, 'long_addition_errors')
    prompts, answers = long_addition_prompts(n_digits, pairs)
    if not len(pairs):
        return 0, 0, None
    got = teacher_forced_argmax(np.concatenate([prompts, answers], axis=1), params,
                                prompts.shape[1], chunk=chunk)
    wrong = np.flatnonzero((got != answers).any(axis=1))
    return len(wrong), len(pairs), (pairs[wrong[0]] if len(wrong) else None)


def carry_chain_pairs(n_digits):
    """Adversarial pairs for n digits: carry chains ended at every column (5 n + 11 pairs).

    * ``0 + 0``, ``M + M``, ``M + 1``, ``1 + M``, ``M + 0``, ``0 + M`` with M = 10^n - 1;
    * ``x + (10^n - x)`` for five x: the carry runs through every column;
    * for every column e, a run of propagating columns (sum 9, split as 9+0, 0+9, 4+5
      or 7+2) over all of 0 .. e - 1, ended at e by a generating column, and again by
      a killing one; the same with a run of at most 3 columns before e (other
      generating and killing digits); the other columns follow a fixed pattern;
    * for every column e, propagating columns from e to the last one (the carry that
      enters them is the sentinel's 0).

    Deterministic (no randomness), so every check sees the same pairs.

    >>> carry_chain_pairs(1)[:6]
    [(0, 0), (9, 9), (9, 1), (1, 9), (9, 0), (0, 9)]
    >>> len(carry_chain_pairs(40))
    211
    """
    check_digits('carry_chain_pairs', n_digits)
    n = int(n_digits)
    top, M = 10 ** n, 10 ** n - 1
    splits = [(9, 0), (0, 9), (4, 5), (7, 2)]
    generate, kill = [(9, 9), (5, 5), (1, 9)], [(0, 0), (4, 4), (8, 0)]

    def number(ds):
        return int(''.join(map(str, ds)))

    def background():
        return [(3 * i + 1) % 10 for i in range(n)], [(7 * i + 2) % 10 for i in range(n)]

    out = [(0, 0), (M, M), (M, 1), (1, M), (M, 0), (0, M)]
    x_pattern = number(background()[0]) or 1
    out += [(x, top - x) for x in (2, top // 10 or 1, top // 2, top - 2, x_pattern)]
    for e in range(n):
        short = max(0, e - 3)       # a short run, ended by the other generate and kill
        for start, ender in [(0, generate[e % 3]), (0, kill[e % 3]),
                             (short, generate[(e + 1) % 3]), (short, kill[(e + 1) % 3])]:
            a, b = background()
            for c in range(start, e):
                a[c], b[c] = splits[c % 4]
            a[e], b[e] = ender
            out.append((number(a), number(b)))
        a, b = background()
        for c in range(e, n):
            a[c], b[c] = splits[c % 4]
        out.append((number(a), number(b)))
    return out


def random_pairs(n_digits, count, rng):
    """``count`` pairs of uniformly random n-digit numbers (Python integers), from ``rng``.

    >>> random_pairs(3, 2, np.random.default_rng(0))
    [(865, 230), (1, 869)]
    """
    check_digits('random_pairs', n_digits)
    n = int(n_digits)
    digits = rng.integers(0, 10, size=(int(count), 2, n))
    return [(int(''.join(map(str, row[0]))), int(''.join(map(str, row[1])))) for row in digits]


def carry_plan(a, b, n_digits):
    """What the network should compute for a + b, in plain Python (one entry per column).

    Returns a dict of lists: ``sums`` t_0 .. t_n (t_n = 0 for the sentinel), ``kinds``
    ('G', 'P' or 'K'), ``left`` p_0 .. p_n (the last column before i that does not
    propagate, -1 if none) and ``carries`` c_0 .. c_n (into the column left of m; c_0 is
    the first answer digit).

    >>> plan = carry_plan(95, 7, 2)
    >>> plan['kinds'], plan['left'], plan['carries']
    (['P', 'G', 'K'], [-1, -1, 1], [1, 1, 0])
    """
    check_digits('carry_plan', n_digits)
    n = int(n_digits)
    (a, b), = _pairs(n, [(a, b)], 'carry_plan')
    sums = [x + y for x, y in zip(_digits(a, n), _digits(b, n))] + [0]
    kinds = ['G' if t >= 10 else 'P' if t == 9 else 'K' for t in sums]
    left, last = [], -1
    for i, kind in enumerate(kinds):
        left.append(last)
        if kind != 'P':
            last = i
    carries = [(a % 10 ** (n - m) + b % 10 ** (n - m)) // 10 ** (n - m) for m in range(n + 1)]
    return {'sums': sums, 'kinds': kinds, 'left': left, 'carries': carries}


def compact_addition_internals(params, a, b, n_digits):
    """Read back what each layer of the compact adder wrote, for one sum (teacher forced).

    Returns a dict of float arrays indexed by column (0 .. n) like ``carry_plan``:
    ``sums`` (layer 1, at the digits of b and '='), ``Z`` and ``flag`` (MLP 1),
    ``left`` (layer 2), ``product`` ``(i + 1/2)(p_i + 1/2)`` (layer 3) and ``carries``
    (layer 4, at the answer positions), plus the predicted ``digits``.  Tests compare
    them with ``carry_plan``; the Records chapter prints them.

    >>> p = build_compact_addition_transformer(2)
    >>> got = compact_addition_internals(p, 95, 7, 2)
    >>> np.rint(got['left']).astype(int).tolist(), np.rint(got['carries']).astype(int).tolist()
    ([-1, -1, 1], [1, 1, 0])
    """
    from ..trace import trace
    n, ns, c = int(n_digits), int(n_digits) + 1, DIGIT_SCALE
    prompts, answers = long_addition_prompts(n, [(a, b)])
    t = trace(np.concatenate([prompts[0], answers[0, :-1]]), params)
    cols = slice(n + 1, 2 * n + 2)                      # the digits of b and '='
    queries = slice(2 * n + 1, 3 * n + 2)               # '=' and the answer tokens
    i, left = np.arange(n + 1), t.resid_mid[1][cols, _at('left')] * ns
    # after layer 3, col2 holds (-I P - 3 (I + P) / 2 - 1/2) / ns^2 with I + P = i + p + 1
    product = -(t.resid_mid[2][cols, _at('col2')] * ns ** 2 + 1.5 * (i + left + 1) + 0.5)
    fetched = 2 * t.resid_mid[0][queries, _at('sum')] / c
    return {'sums': 2 * t.resid_mid[0][cols, _at('pair')] / c,
            'Z': t.resid_post[0][cols, _at('pair')],
            'flag': t.resid_post[0][cols, _at('prev')],
            'left': left, 'product': product,
            'carries': 2 * t.resid_mid[3][queries, _at('sum')] / c - fetched,
            'digits': t.logits[queries].argmax(-1)}


# ----------------------------------------------------------------------------- the record

COMPACT_ADDITION_HOW = (
    'Attention heads average the two digits of each column, and the MLP classifies '
    'the sum as generate, propagate or kill. '
    'Each column then finds the last non-propagating column to its left, and a head '
    'averaging over the run between them supplies the product of the two ends. '
    'At answer digit m a head picks the column whose interval holds m with a '
    'quadratic score, reads whether it generates, and the MLP writes the digit.')

COMPACT_ADDITION_VERIFIED = (
    'all 10^(2n) pairs for n = 1, 2, 3 (tests/test_compact_addition.py); for every n up '
    'to 64, seeded random pairs and carry chains ended at every column by a generate '
    'and by a kill, x + (10^n - x), 99..9 + 99..9 and 0 + 0')


def compact_addition_record(n_digits, n_random=100, seed=0, chunk=None):
    """Build the record at n digits and verify it: a dict for the Records table.

    Checks ``carry_chain_pairs(n)`` and ``n_random`` pairs from ``seed`` with one
    teacher-forced pass; about 1 s at n = 40 and 4 s at n = 64.

    Returns:
        ``{'n', 'total', 'non0', 'layers', 'heads', 'd_model', 'book', 'checked',
        'wrong', 'first_wrong', 'how'}`` where ``book`` is the book's count at n.

    >>> r = compact_addition_record(3, n_random=20)
    >>> r['total'], r['book'], r['checked'], r['wrong']
    (1299, 360576, 46, 0)
    """
    from ..params import config, count_non0_params, count_params
    check_digits('compact_addition_record', n_digits)
    n = int(n_digits)
    params = build_compact_addition_transformer(n)
    pairs = carry_chain_pairs(n) + random_pairs(n, n_random, np.random.default_rng(seed))
    wrong, checked, first = long_addition_errors(params, n, pairs, chunk=chunk)
    cfg = config(params)
    return {'n': n, 'total': count_params(params)['n_params'],
            'non0': count_non0_params(params)['n_params'], 'layers': cfg['n_layers'],
            'heads': cfg['n_heads'], 'd_model': cfg['d_model'], 'book': book_addition_size(n),
            'checked': checked, 'wrong': wrong, 'first_wrong': first,
            'how': COMPACT_ADDITION_HOW}
