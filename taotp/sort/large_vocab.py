"""Sort beyond the book's 28 numbers: two one-layer, attention-only designs.

Both keep the book's convention: distinct numbers from ``1..V-1`` in any order,
then the terminator 0; decoding ``len(input) - 1`` steps prints them in
increasing order.  The last printed number ``y`` (the terminator 0 at the
first step) asks for its *successor*, the smallest number in the context that
is larger than ``y`` (everything already printed is at most ``y``).

**bits** (any vocabulary; exact at V = 65,536).  Number ``x`` is written as a
*balanced* binary code ``c(x)`` of length n (as many 1s as 0s, written +-1, so
the block has zero mean and a fixed norm and layer norm leaves it alone); the
codes are taken in lexicographic order, so comparing numbers is comparing
codes from the first position on.  The successor of ``y`` leaves ``y``'s code
at some position ``p`` where ``y`` has a 0 and the successor a 1, and then
continues with the smallest possible rest.  Head ``p`` looks for exactly that:
a key that agrees with ``y`` before ``p`` and has a 1 at ``p`` (only when
``y`` has a 0 there), with the smallest rest (a tie-break whose weights halve
from position to position).  A head that finds no such key falls back on the
terminator, whose value is zero.  Head ``p`` writes the code it found with
weight ``4 * 2**p``: the deepest head that found something outweighs all
shallower heads together, and what it found is the successor.  The output
embedding is the token table, so the logit of ``x`` is ``c(x) . z`` and the
winner is the code with the signs of ``z``.  One head per code position, no
MLP, no positions; d_model = n + 4 (n = 20 at V = 65,536).

**compact** (up to 28 numbers; d_model 3).  Token ``t`` sits on the layer-norm
circle at the angle ``arctan(t0 * r**t)`` (in the circle's own basis); the
query is the token pushed by the linear map ``diag(1, r**s)``, which moves
every token a little past its successor (a projective map of the circle, so
one matrix serves every token, where the book stores a second 3-d block of
query points).  The score is the cosine to each key, so the nearest present
token ahead, the successor, wins.  Like the book's powerpoints the points
crowd geometrically, so float64 runs out at about 28 numbers.

    >>> import taotp
    >>> p = build_large_vocab_sort_transformer(1000, 12)
    >>> taotp.decode([600, 7, 999, 12, 0], p, max_steps=4)[5:].tolist()
    [7, 12, 600, 999]
"""
import math

import numpy as np

from ..blocks import pos_enc_3d
from ..params import base_layer, base_params
from ..residual import Layout
from ._args import check_int, check_scale

SCORE_GAP = 40.0     # bits: smallest score gap between rival keys, after hardening
HEAD_WEIGHT = 4.0    # bits: head p writes HEAD_WEIGHT * 2**p times the code it found
COMPACT_MAX = 28     # 'auto' uses the compact design up to this vocabulary (certified in tests)
COMPACT_RATIO = 0.596  # r: the tangents of consecutive tokens shrink by this factor
COMPACT_PUSH = 1.383   # s: the query map diag(1, r**s) moves a token s steps ahead
COMPACT_T0 = 0.305     # t0: the tangent of token 0's angle
COMPACT_HARDEN = 1e18
COMPACT_OUT_SCALE = 1e12
WHERE = 'build_large_vocab_sort_transformer'


# ----------------------------------------------------------------------------- balanced codes

def code_length(vocab_size):
    """The shortest even ``n`` with ``C(n, n/2) >= vocab_size - 1`` balanced codes.

    >>> code_length(28), code_length(65_536)
    (8, 20)
    """
    check_int('code_length', 'vocab_size', vocab_size, 2)
    n = 2
    while math.comb(n, n // 2) < vocab_size - 1:
        n += 2
    return n


def balanced_codes(ranks, n):
    """Rows of 0s and 1s: the balanced words of length ``n`` with the given ranks.

    The rank of a word is its index among the ``C(n, n/2)`` words with ``n/2``
    ones in lexicographic order, so comparing ranks is comparing words.
    ``ranks`` is an int or an array of ints in ``0..C(n, n/2) - 1`` (n <= 64).

    >>> balanced_codes(np.arange(4), 4).tolist()
    [[0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 1, 0], [1, 0, 0, 1]]
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n % 2 or not 2 <= n <= 64:
        raise ValueError(f'balanced_codes: n must be an even int in 2..64; got {n!r}')
    total = math.comb(n, n // 2)
    rank = np.array(ranks, dtype=np.int64).reshape(-1)
    if rank.size and (rank.min() < 0 or rank.max() >= total):
        raise ValueError(f'balanced_codes: ranks must be in 0..C({n}, {n // 2}) - 1 = '
                         f'{total - 1}; got {int(rank.min())}..{int(rank.max())}')
    ones = np.full(rank.shape, n // 2, dtype=np.int64)
    words = np.zeros(rank.shape + (n,), dtype=np.int8)
    comb = np.array([[math.comb(m, k) for k in range(n // 2 + 1)] for m in range(n)],
                    dtype=np.int64)
    for pos in range(n):
        with_0 = comb[n - pos - 1, ones]       # words that continue with a 0 here
        one = rank >= with_0
        words[one, pos] = 1
        rank = np.where(one, rank - with_0, rank)
        ones = ones - one
    return words.reshape(np.shape(ranks) + (n,))


def code_ranks(words):
    """The ranks of balanced words (rows of 0s and 1s): the inverse of ``balanced_codes``.

    >>> code_ranks(balanced_codes(np.array([0, 5, 19]), 6)).tolist()
    [0, 5, 19]
    """
    words = np.asarray(words, dtype=np.int64)
    n = words.shape[-1]
    ones = words.sum(axis=-1)
    rank = np.zeros(words.shape[:-1], dtype=np.int64)
    comb = np.array([[math.comb(m, k) for k in range(n + 1)] for m in range(n + 1)],
                    dtype=np.int64)
    for pos in range(n):
        one = words[..., pos] == 1
        rank = rank + np.where(one, comb[n - pos - 1, ones], 0)   # skip the words with a 0 here
        ones = ones - one
    return rank


# ----------------------------------------------------------------------------- bits design

def bits_layout(n):
    """Residual layout of the bits design: the code, a constant pair, a terminator pair.

    >>> bits_layout(20)
    Layout(code=20, one=2, end=2; d_model=24)
    """
    return Layout([('code', n), ('one', 2), ('end', 2)])


def _bits_scale(n):
    """Raw rows have zero mean and squared norm n + 2; this factor makes them layer-norm fixed."""
    return np.sqrt((n + 4) / (n + 2))


def bits_embeddings(tokens, n):
    """Token rows of the bits design for the given token ids (0 is the terminator).

    Number ``x >= 1`` is ``s * [2 c(x) - 1, 1, -1, 0, 0]`` with ``c(x)`` the balanced
    word of rank ``x - 1``; the terminator is ``s * [0, ..., 0, 0, 0, f, -f]`` with
    ``f = sqrt(n / 2 + 1)`` (the same norm); ``s`` makes every row a layer-norm fixed point.
    """
    tokens = np.asarray(tokens, dtype=np.int64).reshape(-1)
    L = bits_layout(n)
    raw = np.zeros((len(tokens), L.d_model))
    numbers = tokens > 0
    raw[numbers, L['code']] = 2.0 * balanced_codes(tokens[numbers] - 1, n) - 1.0
    raw[numbers, L['one']] = [1.0, -1.0]
    raw[~numbers, L['end']] = np.sqrt(n / 2 + 1) * np.array([1.0, -1.0])
    return raw * _bits_scale(n)


def bits_sort_layer(n, score_gap=SCORE_GAP, head_weight=HEAD_WEIGHT):
    """The one layer of the bits design for codes of length ``n``: n heads, d_head n + 1.

    Its weights depend on ``n`` only (not on the vocabulary), so the layer for a
    code length too large to tabulate can still be run on a few tokens'
    rows (``bits_sign_errors`` does that to find where float64 gives out).
    """
    check_scale(WHERE, 'score_gap', score_gap)
    if isinstance(head_weight, bool) or not isinstance(head_weight, (int, float)) \
            or not 1 < head_weight < 1e6:
        raise ValueError(f'{WHERE}: head_weight must be a number in (1, 1e6) (it must outweigh '
                         f'the query\'s own code); got {head_weight!r}')
    L = bits_layout(n)
    d, s, f = L.d_model, _bits_scale(n), np.sqrt(n / 2 + 1)
    code, one, end = (np.arange(d)[L[k]] for k in ('code', 'one', 'end'))
    d_head, flag = n + 1, n            # key: the +-1 code, then a terminator flag
    # Score units: 1 for each position of agreement and for the 1 at p, a tie-break whose
    # weights 2**-(b-p) / 2 sum to less than 1, and the fallback in between.  The smallest
    # gap between rivals is 2**-(n-1); `unit` scales it to `score_gap` (and undoes 1/sqrt(d_head)).
    unit = score_gap * 2.0 ** (n - 1) * np.sqrt(d_head)
    layer = base_layer(n_heads=n, d_model=d, d_ff=0, d_head=d_head)
    for p in range(n):
        Q, K, V, P = (layer[w][p] for w in 'QKVP')
        K[code, np.arange(n)] = 1 / s                     # key = the raw +-1 code
        K[end[0], flag] = 1 / (s * f)                     # terminator: flag 1
        V[code, np.arange(n)] = 1 / s                     # value = the raw code (0 for the end)
        P[code, np.arange(n)] = head_weight * 2.0 ** p * s
        same = np.zeros(d_head)                           # the part shared by all numbers y
        same[p] = 1.0                                     # a 1 at position p
        same[p + 1:n] = -0.5 ** np.arange(1, n - p) / 2   # then the smallest rest
        same[flag] = p + 1.0                              # fallback: p + 1 + sign of y at p
        Q[code[:p], np.arange(p)] = unit / s              # agree with y before p
        Q[code[p], flag] = unit / s                       # y has a 1 at p: the fallback wins
        Q[one[0], :] = unit * same / s
        first = np.zeros(d_head)                          # the terminator asks for the minimum
        first[:n] = -0.5 ** np.arange(n) / 2
        first[flag] = -(n + 2.0)
        Q[end[0], :] = unit * first / (s * f)
    return layer


def build_bits_sort_transformer(vocab_size, block_size, score_gap=SCORE_GAP,
                                head_weight=HEAD_WEIGHT):
    """The bits design (module docstring): 1 layer, n heads, d_model n + 4, tied, no MLP.

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    Args:
        vocab_size: V; the numbers are 1..V-1, 0 is the terminator.
        block_size: rows of ``pos_emb`` (all zero).
        score_gap: the smallest score difference between rival keys after
            hardening (a rival's weight is at most ``exp(-score_gap)``).
        head_weight: head p writes ``head_weight * 2**p`` times what it found.

    >>> import taotp
    >>> p = build_bits_sort_transformer(65_536, 8)
    >>> taotp.config(p)['n_heads'], taotp.config(p)['d_model']
    ([20], 24)
    """
    check_int('build_bits_sort_transformer', 'vocab_size', vocab_size, 2)
    check_int('build_bits_sort_transformer', 'block_size', block_size, 1)
    n = code_length(vocab_size)
    layer = bits_sort_layer(n, score_gap, head_weight)
    params = base_params(vocab_size, block_size, bits_layout(n).d_model)
    params['tok_emb'] = params['out_emb'] = bits_embeddings(np.arange(vocab_size), n)
    params['layers'].append(layer)
    return params


# ----------------------------------------------------------------------------- compact design

def compact_angles(vocab_size, ratio=COMPACT_RATIO, t0=COMPACT_T0):
    """Angle of each token in the compact design, ``arctan(t0 * ratio**t)`` (decreasing).

    >>> bool(np.all(np.diff(compact_angles(5)) < 0))
    True
    """
    return np.arctan(t0 * ratio ** np.arange(vocab_size, dtype=np.float64))


def build_compact_sort_transformer(vocab_size=28, block_size=100, ratio=COMPACT_RATIO,
                                   push=COMPACT_PUSH, t0=COMPACT_T0, harden=COMPACT_HARDEN,
                                   out_scale=COMPACT_OUT_SCALE):
    """The compact design: 1 layer, 1 head, d_model 3, tied embeddings, no MLP, no positions.

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    ``3 V + 3 block_size + 39`` parameters; 13 non-zero outside ``tok_emb``
    (Q 4, K 3, V 3, P 3).

    Args:
        vocab_size: V; certified exact in float64 up to ``COMPACT_MAX`` (tests).
        ratio, push, t0: the geometry (module docstring).
        harden: the query scale; out_scale: the value scale (instead of a cleanup).

    >>> import taotp
    >>> p = build_compact_sort_transformer(19, 16)
    >>> taotp.decode([6, 2, 12, 18, 7, 0], p, max_steps=5)[6:].tolist()
    [2, 6, 7, 12, 18]
    """
    where = 'build_compact_sort_transformer'
    check_int(where, 'vocab_size', vocab_size, 2)
    check_int(where, 'block_size', block_size, 1)
    for name, value in (('harden', harden), ('out_scale', out_scale), ('t0', t0)):
        check_scale(where, name, value)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio < 1:
        raise ValueError(f'{where}: ratio must be in (0, 1); got {ratio!r}')
    if isinstance(push, bool) or not isinstance(push, (int, float)) or not 1 < push < 2:
        raise ValueError(f'{where}: push must be in (1, 2); got {push!r}')
    params = base_params(vocab_size, block_size, 3)
    params['tok_emb'] = params['out_emb'] = pos_enc_3d(compact_angles(vocab_size, ratio, t0))
    # pos_enc_3d(a) = sqrt(3) (cos a E1 + sin a E2): in the basis (E1, E2) the query map is
    # diag(1, ratio**push).  Keys and queries are orthogonal to (1, 1, 1), so adding
    # u 1^T + 1 w^T changes no score: clear the first row and column (4 non-zeros, not 9).
    E = pos_enc_3d(np.array([0.0, np.pi / 2])) / np.sqrt(3)
    B = E.T @ np.diag([1.0, ratio ** push]) @ E
    B = B - B[:, :1] - B[:1, :] + B[0, 0]
    B[np.abs(B) < 1e-15] = 0.0
    layer = base_layer(n_heads=1, d_model=3, d_head=3, d_ff=0)
    layer['Q'][0] = B * harden
    layer['K'][0] = np.eye(3)
    layer['V'][0] = np.eye(3) * out_scale
    layer['P'][0] = np.eye(3)
    params['layers'].append(layer)
    return params


# ----------------------------------------------------------------------------- the record

def build_large_vocab_sort_transformer(vocab_size, block_size, design='auto'):
    """Sort distinct numbers ``1..V-1`` closed by 0, on one attention-only layer, any V.

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    ``design='auto'`` takes the smaller of this module's two exact designs:
    ``'compact'`` (1 head, d_model 3) up to ``vocab_size = COMPACT_MAX``, else
    ``'bits'`` (one head per code position, d_model n + 4).  Decode
    ``len(input) - 1`` steps, as with ``build_sort_transformer``.

    Raises:
        TypeError, ValueError: vocab_size < 2, block_size < 1, an unknown design,
        or ``'compact'`` above ``COMPACT_MAX``.

    >>> import taotp
    >>> p = build_large_vocab_sort_transformer(28, 12)
    >>> taotp.config(p)['d_model'], taotp.count_non0_params(p)['n_params']
    (3, 97)
    """
    check_int(WHERE, 'vocab_size', vocab_size, 2)
    check_int(WHERE, 'block_size', block_size, 1)
    if design not in ('auto', 'bits', 'compact'):
        raise ValueError(f"{WHERE}: design must be 'auto', 'bits' or 'compact'; got {design!r}")
    if design == 'compact' and vocab_size > COMPACT_MAX:
        raise ValueError(f'{WHERE}: the compact design is certified only up to vocab_size '
                         f'{COMPACT_MAX}; got {vocab_size}')
    if design == 'compact' or (design == 'auto' and vocab_size <= COMPACT_MAX):
        return build_compact_sort_transformer(vocab_size, block_size)
    return build_bits_sort_transformer(vocab_size, block_size)


def large_vocab_sort_size(vocab_size, block_size, design='auto'):
    """The parameter count of ``build_large_vocab_sort_transformer`` (no build needed).

    compact: ``3 V + 3 B + 39``; bits (code length n): ``(n + 4)(V + B + 1) + 4 n (n + 4)(n + 1)``.

    >>> large_vocab_sort_size(65_536, 128), large_vocab_sort_size(28, 100)
    (1616280, 423)
    """
    check_int('large_vocab_sort_size', 'vocab_size', vocab_size, 2)
    if design == 'compact' or (design == 'auto' and vocab_size <= COMPACT_MAX):
        return 3 * vocab_size + 3 * block_size + 39
    n = code_length(vocab_size)
    return (n + 4) * (vocab_size + block_size + 1) + 4 * n * (n + 4) * (n + 1)


def compact_sort_certificate(params):
    """The smallest score lead that makes the compact design exact on every input.

    With no positions, hard attention picks the successor of every query ``y`` from
    every possible set of numbers exactly when ``y`` ranks its keys ``y+1 > y+2 > ... >
    V-1 > every key <= y``.  Returns the smallest lead in that chain over all ``y``,
    in the units of the softmax.  The scores are the ones the forward pass records
    (``taotp.trace``) on two runs: the tokens ``0..V-1`` in increasing order (each
    query sees every key below it) and in decreasing order (every key above it), all
    at position 0, which a program without positions cannot tell from any other.

    Raises:
        ValueError: the program has positions (a non-zero ``pos_emb``) or more than
        one layer or head, so the certificate would not cover it.
    """
    from ..trace import trace
    where = 'compact_sort_certificate'
    if np.any(np.asarray(params['pos_emb']) != 0):
        raise ValueError(f'{where}: the certificate holds for a program without positions; '
                         f'got a pos_emb with non-zero entries')
    if len(params['layers']) != 1 or len(params['layers'][0]['Q']) != 1:
        raise ValueError(f'{where}: the certificate covers 1 layer with 1 head; got '
                         f"{len(params['layers'])} layer(s)")
    V = len(params['tok_emb'])
    up = np.arange(V)
    tokens = np.stack([up, up[::-1]])
    scores = trace(tokens, params, positions=np.zeros_like(tokens)).scores[0][:, 0]
    # S[y, x]: query y on key x.  Increasing run: row y, column x <= y.  Decreasing run:
    # query y sits at V-1-y and key x at V-1-x, so flipping both axes gives x >= y.
    S = np.where(up[None, :] <= up[:, None], scores[0], scores[1][::-1, ::-1])
    leads = []
    for y in range(V - 1):
        chain = S[y, y + 1:]
        leads += (-np.diff(chain)).tolist() + [chain[-1] - S[y, :y + 1].max()]
    return float(min(leads))


# ----------------------------------------------------------------------------- checking

def _divergence(a, b, n):
    """First position where the codes of numbers a and b (>= 1) differ."""
    ca, cb = balanced_codes(np.asarray(a) - 1, n), balanced_codes(np.asarray(b) - 1, n)
    return np.argmax(ca != cb, axis=-1)


def large_vocab_sort_inputs(vocab_size, rng, count=8, length=32, max_len=None):
    """Seeded and adversarial Sort inputs (lists ending in 0) for a vocabulary of ``vocab_size``.

    * both ends: the smallest and the largest numbers, in decreasing order;
    * runs of consecutive numbers (a successor with its nearest rivals) that
      start where the bits design's codes change at each position, so every
      head meets its closest call; powers of two and their neighbours;
    * ``count`` seeded random sets of 1..``length`` numbers.

    ``max_len`` (default ``length``) caps every input's count of numbers.
    """
    check_int('large_vocab_sort_inputs', 'vocab_size', vocab_size, 2)
    top = vocab_size - 1
    cap = min(length if max_len is None else max_len, top)
    lists = [list(range(min(top, cap), 0, -1)), list(range(top, max(0, top - cap), -1))]
    n = code_length(vocab_size)
    if top >= 2:
        x = np.arange(1, top)                         # pairs (x, x+1): where they part
        where = _divergence(x, x + 1, n)
        for p in range(n):
            starts = x[where == p]
            for s in starts[:1].tolist() + starts[-1:].tolist():
                lists.append(list(range(s, min(top, s + min(6, cap) - 1) + 1)))
    for k in range(1, 64):
        if 2 ** k > top:
            break
        lists.append([v for v in (2 ** k + 1, 2 ** k, 2 ** k - 1) if 1 <= v <= top][:cap])
    for _ in range(count):
        k = int(rng.integers(1, cap + 1))
        lists.append(rng.choice(np.arange(1, top + 1), size=k, replace=False).tolist())
    out = []
    for numbers in lists:
        numbers = [int(v) for v in dict.fromkeys(numbers)][:cap]
        out.append([int(v) for v in rng.permutation(numbers)] + [0])
    return out


def sort_failures(params, inputs):
    """Indices of the ``inputs`` (lists ending in 0) that ``params`` does not sort exactly.

    Greedy decoding reproduces the sorted list exactly when, fed the sorted list so
    far, every step predicts the next number; one teacher-forced pass of the
    shared engine per input length decides it (``taotp.teacher_forced_argmax``).
    """
    from ..decoding import teacher_forced_argmax
    groups = {}
    for i, row in enumerate(inputs):
        groups.setdefault(len(row), []).append(i)
    wrong = []
    for length, idx in groups.items():
        if length < 2:
            continue
        seqs = np.array([list(inputs[i]) + sorted(inputs[i][:-1]) for i in idx], dtype=np.int64)
        with np.errstate(all='ignore'):
            pred = teacher_forced_argmax(seqs, params, length)
        wrong += [idx[j] for j in np.flatnonzero((pred != seqs[:, length:]).any(axis=1))]
    return sorted(wrong)


def bits_sign_errors(n, count=50, seed=0, dtype=np.float64, run=6):
    """Wrong steps of the bits design for codes of length ``n``, without the full table.

    The logit of a number is ``c(x) . z`` plus a part shared by all numbers, so
    the program prints the number whose code has the signs of ``z``'s code block.
    Each of ``count`` seeded inputs is a close call: a number ``y`` whose
    successor ``y + 1`` leaves its code at a random position ``p`` (shallow
    positions drawn more often: there the tie-break gap is smallest), the run
    ``y .. y + run - 1`` and ``run`` random numbers.  The layer runs on the
    rows of just those tokens, in ``dtype``; the count is the steps whose signs
    are not the successor's code.  Works for code lengths far too large to
    tabulate (n <= 64).
    """
    from ..params import as_dtype
    from ..trace import trace
    total = math.comb(n, n // 2)
    rng = np.random.default_rng([seed, n])
    layer = bits_sort_layer(n)
    wrong = 0
    for _ in range(count):
        p = min(int(rng.geometric(0.3)) - 1, n - 2)
        word = np.zeros(n, dtype=np.int64)          # y: a prefix, 0 at p, the largest rest
        word[:p] = rng.permutation([1] * min(p, n // 2 - 1) + [0] * (p - min(p, n // 2 - 1)))
        left = n // 2 - word[:p].sum()              # ones still to place after p
        if left < 1 or n - p - 1 < left:
            word[:p], left = 0, n // 2
        word[p + 1:p + 1 + left] = 1
        y = int(code_ranks(word)) + 1
        numbers = set(range(y, min(total, y + run - 1) + 1))
        numbers |= {int(v) for v in rng.integers(1, total + 1, size=run)}
        numbers = sorted(numbers)
        order = [numbers[i] for i in rng.permutation(len(numbers))]
        tokens = np.array(order + [0] + numbers[:-1])
        ids, local = np.unique(tokens, return_inverse=True)
        params = base_params(len(ids), len(tokens), bits_layout(n).d_model)
        params['tok_emb'] = params['out_emb'] = bits_embeddings(ids, n)
        params['layers'] = [layer]
        if dtype != np.float64:
            params = as_dtype(params, dtype)
        with np.errstate(all='ignore'):
            z = trace(local, params).final[len(numbers):, :n]
        want = 2.0 * balanced_codes(np.array(numbers) - 1, n) - 1.0
        wrong += int((np.sign(z) != want).any(axis=1).sum())
    return wrong
