"""An AdderBoard entry: 10-digit addition on the book's engine, counted by the board's rules.

AdderBoard (github.com/anadim/AdderBoard) asks for the smallest autoregressive
transformer that adds two integers in ``[0, 9_999_999_999]``: at least 99 % right on
10,000 random pairs, generic greedy decoding, *unique* parameters counted (tied weights
once, fixed sinusoidal position tables free, learned ones counted).  This module
builds an entry that runs on ``taotp.decode`` unchanged (PreLN, the book's layer norm,
tied nothing by hand at run time) and counts it both ways.

**Format.**  ``prompt(a, b)`` is the ten digits of ``a``, least significant first, a
0 as delimiter, the ten digits of ``b`` the same way, and a 0 again: 22 tokens,
vocabulary ``0..9``.  Greedy decoding prints the 11 digits of ``a + b``, least
significant first; the answer has a fixed length, so ``read`` takes those 11 tokens
(a twelfth decoded token, if any, is ignored).

**How it adds.**  One layer, two heads, ``d_model`` 5, two ReLUs.

* *Alignment.*  Position ``i`` sits on a circle at angle ``2 pi i / 11`` (a fixed
  sinusoidal table of radius ``RADIUS``).  Digit k of ``a`` (position k) and of ``b``
  (position 11 + k) share an angle, so a head that looks at one angle averages the
  pair.  The token that predicts answer digit k sits at position 21 + k, one step
  *behind* column k on the circle: head A turns its query one step forward and reads
  ``(a_k + b_k) / 2``; head B looks at its own angle and reads the average of
  ``a_{k-1}``, ``b_{k-1}`` and the digit ``z_{k-1}`` it has just printed (for k = 0 the
  two delimiters).  No later answer token shares head A's angle, so nothing collides.
* *Per-digit sum and carry.*  Column k - 1 produced ``z_{k-1} = (s + c) mod 10`` from
  its sum ``s = a_{k-1} + b_{k-1}`` and incoming carry c, so ``s - z_{k-1}`` is -1 or 0
  without an outgoing carry and 9 or 10 with one.  The token's own embedding and the
  two heads add up, on one coordinate, to ``-5 y`` with
  ``y = a_k + b_k + (s - z_{k-1}) / 10``: y is the column's digit sum plus carry, at
  most 0.1 below it.
* *Wrap.*  Two ReLUs of y form a step at ``y = 9.45`` (between 9.0 and 9.9, the
  nearest values on either side) and subtract 10 from the digit when it wraps.
* *Readout.*  The output embedding scores digit v by ``2 v x - v^2`` (a parabola whose
  top is at the value x on the coordinate), so the nearest digit wins; the constant
  the ``-v^2`` term needs comes from the MLP's bias ``b2``, which is the same at every
  position.

**Layer norm.**  The circle has radius ``RADIUS = 1e6`` and everything else stays
below a few hundred, so every layer norm divides by nearly the same number
everywhere (relative changes below 1e-8): the block is linear where it should be.

**Counting.**  ``params()`` returns a params dict that also carries the tensors the
construction builds it from (``DeclaredParams``): every weight of the engine is a
sum of outer products of those tensors, and ``unique_parameters`` rebuilds each weight
from them, checks that it equals the dict's array bit for bit, and counts each tensor
once.  Anything it cannot rebuild is counted densely.  See ``unique_parameters`` for
the rules.

    >>> import taotp
    >>> tokens = taotp.decode(np.array(prompt(9_999_999_999, 1)), params(), max_steps=12)
    >>> read(tokens)
    10000000000
    >>> unique_parameters(params())
    57
"""
from dataclasses import dataclass, field
from time import perf_counter

import numpy as np

from ..blocks import pos_enc_3d
from ..params import (base_layer, base_params, count_non0_params, count_params, position_tables,
                      validate_params)

N_DIGITS = 10
TOP = 10 ** N_DIGITS - 1               # the largest operand, 9,999,999,999
PERIOD = 11                            # positions per turn of the circle
PROMPT_LEN = 2 * N_DIGITS + 2          # a, delimiter, b, delimiter
ANSWER_LEN = N_DIGITS + 1
MAX_STEPS = 12                         # what the board's check decodes
BLOCK = PROMPT_LEN + MAX_STEPS - 1     # the last decoded token is never fed back
RADIUS = 1e6                           # radius of the position circle (layer norm's scale)
HARDEN = 7.3                           # key scale: neighbouring angles score >= 30 apart
WRAP_LOW, WRAP_HIGH = 9.2, 9.7         # the step of the wrap, in units of y
# the board's snapshot read for the book: its best entries' unique parameters
BOARD_BEST_HAND_CODED = 130
BOARD_BEST_TRAINED = 311


# ----------------------------------------------------------------------------- declared tensors

class DeclaredParams(dict):
    """A params dict that also carries the tensors it was built from.

    ``tensors`` maps a name to an array; ``recipe`` maps the path of a weight (or of
    one head's slice of it) to a list of terms, each a tuple of tensor names whose
    outer product, reshaped to the weight's shape, is added.  The dict itself is an
    ordinary program (``dict(p)`` runs the same and forgets the declaration).
    """

    def __init__(self, params, tensors, recipe):
        super().__init__(params)
        self.tensors = {name: np.asarray(t, dtype=np.float64) for name, t in tensors.items()}
        self.recipe = {tuple(path): [tuple(term) for term in terms]
                       for path, terms in recipe.items()}


def assemble(tensors, terms, shape):
    """Sum of the outer products named by ``terms``, reshaped to ``shape``.

    >>> assemble({'u': [1.0, 2.0], 'v': [3.0, 4.0]}, [('u', 'v')], (2, 2)).tolist()
    [[3.0, 4.0], [6.0, 8.0]]
    """
    total = np.zeros(shape)
    for term in terms:
        product = np.asarray(tensors[term[0]], dtype=np.float64)
        for name in term[1:]:
            product = np.multiply.outer(product, np.asarray(tensors[name], dtype=np.float64))
        if product.size != int(np.prod(shape)):
            raise ValueError(f'assemble: term {term} has {product.size} numbers; the weight has '
                             f'shape {shape}')
        total = total + product.reshape(shape)
    return total


def _weight(params, path):
    """The array at ``path`` (``('layers', 0, 'Q', 1)`` is head 1 of layer 0's Q)."""
    value = params
    for key in path:
        value = value[key]
    return np.asarray(value, dtype=np.float64)


def _build(tensors, recipe):
    """The entry's params dict, every weight assembled from ``tensors`` by ``recipe``."""
    params = base_params(vocab_size=10, block_size=BLOCK, d_model=5)
    layer = base_layer(n_heads=2, d_model=5, d_ff=2, d_head=2)
    layer['V'], layer['P'] = np.zeros((2, 5, 1)), np.zeros((2, 5, 1))
    params['layers'] = [layer]
    for path, terms in recipe.items():
        target = params
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = assemble(tensors, terms, np.shape(target[path[-1]]))
    params['pos_emb'] = position_table()
    return DeclaredParams(params, tensors, recipe)


# ----------------------------------------------------------------------------- the entry

def position_table(rows=BLOCK, radius=RADIUS, period=PERIOD):
    """The fixed table: position i at angle ``2 pi i / period`` on a circle of ``radius``.

    The circle lives on the first three coordinates, in the plane perpendicular to
    (1, 1, 1), so each of those columns is ``radius * sqrt(2) * cos(2 pi i / period +
    phase)``; the last two columns are zero.

    >>> position_table().shape
    (33, 5)
    """
    table = np.zeros((rows, 5))
    table[:, :3] = radius * pos_enc_3d(2 * np.pi * np.arange(rows) / period)
    return table


def _declared():
    """The tensors of the entry and how each weight is made of them (see ``params``)."""
    write = np.array([0.0, 0.0, 0.0, 1.0, -1.0])           # the value coordinate
    const = np.array([1.0, 1.0, 1.0, -1.5, -1.5])          # b2: a constant for the readout
    # layer norm divides by sigma = RADIUS sqrt(3 / 5); `read` turns a value back into digits
    sigma = RADIUS * (3 / 5) ** 0.5
    read_scale = -sigma / 2                                # read = read_scale * write
    digits = np.arange(10.0)
    # logit of v: 2 v x - v^2 scaled by 5 |read_scale| (x = the digit on the value coordinate)
    square = 5 * read_scale * digits ** 2 / (const @ const)
    frame = pos_enc_3d(np.array([0.0, np.pi / 2])) / 3 ** 0.5      # (2, 3): the circle's axes
    key = np.zeros((5, 2))
    key[:3] = HARDEN * frame.T
    step = 2 * np.pi / PERIOD
    turn = np.array([[np.cos(step), np.sin(step)], [-np.sin(step), np.cos(step)]])
    query = key @ turn                                     # head A: one step ahead
    tensors = {'digits': digits, 'write': write, 'read_scale': read_scale, 'square': square,
               'const': const, 'key': key, 'query': query,
               'gain_a': 10.0, 'gain_b': 1.5,              # head writes, in units of `write`
               'b1': np.array([-10 * WRAP_LOW / 2, -10 * WRAP_HIGH / 2]),
               'unit_out': np.array([20.0, -20.0])}        # 50 / (WRAP_HIGH - WRAP_LOW) / 5
    L = ('layers', 0)
    recipe = {('tok_emb',): [('digits', 'write')],
              ('out_emb',): [('digits', 'read_scale', 'write'), ('square', 'const')],
              L + ('Q', 0): [('query',)], L + ('Q', 1): [('key',)],
              L + ('K', 0): [('key',)], L + ('K', 1): [('key',)],
              L + ('V', 0): [('read_scale', 'write')], L + ('V', 1): [('read_scale', 'write')],
              L + ('P', 0): [('gain_a', 'write')], L + ('P', 1): [('gain_b', 'write')],
              L + ('M1',): [('read_scale', 'write', 'ones')],
              L + ('b1',): [('b1',)],
              L + ('M2',): [('unit_out', 'write')],
              L + ('b2',): [('const',)]}
    return tensors, recipe


def params():
    """The entry: 1 layer, 2 heads (d_head 2, one value each), d_model 5, 2 ReLUs, vocabulary 10.

    Returns a ``DeclaredParams`` (a params dict that also carries the tensors it is
    built from).  Both MLP units read the same coordinate with slope 1, so ``M1``'s
    two columns are one tensor used twice (the name ``ones`` stands for that tie and
    holds no number of its own: it is not counted).

    >>> import taotp
    >>> taotp.config(params())['d_model'], taotp.count_params(params())['n_params']
    (5, 352)
    """
    tensors, recipe = _declared()
    tensors['ones'] = np.ones(2)
    built = _build(tensors, recipe)
    del built.tensors['ones']
    built.ties = {'ones': np.ones(2)}
    return built


# ----------------------------------------------------------------------------- format

def _operand(where, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f'{where}: {name} must be an integer; got {type(value).__name__}')
    if not 0 <= int(value) <= TOP:
        raise ValueError(f'{where}: {name} must be in [0, {TOP:,}]; got {value!r}')
    return int(value)


def prompt(a, b):
    """Token ids for a + b: the digits of a least significant first, 0, those of b, 0.

    >>> prompt(1_234_567_890, 98_765)
    [0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 5, 6, 7, 8, 9, 0, 0, 0, 0, 0, 0]
    """
    a, b = _operand('prompt', 'a', a), _operand('prompt', 'b', b)
    return [int(ch) for ch in f'{a:010d}'[::-1]] + [0] + \
        [int(ch) for ch in f'{b:010d}'[::-1]] + [0]


def read(tokens):
    """The sum spelled by the 11 answer digits (least significant first).

    ``tokens`` is a decoded sequence (the 22-token prompt, then the answer, then
    anything) or the answer alone (11 or 12 tokens).

    >>> read(prompt(0, 0) + [2, 1] + [0] * 9 + [7])
    12
    """
    seq = np.asarray(tokens).ravel()
    if len(seq) >= PROMPT_LEN + ANSWER_LEN:
        answer = seq[PROMPT_LEN:PROMPT_LEN + ANSWER_LEN]
    elif len(seq) in (ANSWER_LEN, ANSWER_LEN + 1):
        answer = seq[:ANSWER_LEN]
    else:
        raise ValueError(f'read: tokens must be a decoded sequence of at least '
                         f'{PROMPT_LEN + ANSWER_LEN} tokens or an answer of {ANSWER_LEN} or '
                         f'{ANSWER_LEN + 1}; got {len(seq)}')
    if seq.dtype.kind not in 'iu' or answer.min() < 0 or answer.max() > 9:
        raise ValueError(f'read: answer tokens must be digits 0..9; got {answer.tolist()}')
    return int(''.join(str(int(d)) for d in answer[::-1]))


@dataclass(frozen=True)
class Format:
    """How an adder takes two numbers and gives their sum: ``prompt``, ``read`` and the steps."""
    name: str
    prompt: object
    read: object
    steps: int


ENTRY_FORMAT = Format('AdderBoard entry: digits least significant first, answer reversed',
                      prompt, read, MAX_STEPS)


def book_format(n_digits=N_DIGITS):
    """The book's format (Chapter 6, the compact adder): ``[a, 10, b, 11]`` most significant first.

    >>> f = book_format(2)
    >>> f.prompt(45, 78), f.read([4, 5, 10, 7, 8, 11, 1, 2, 3])
    ([4, 5, 10, 7, 8, 11], 123)
    """
    n = int(n_digits)

    def book_prompt(a, b):
        return [int(ch) for ch in f'{a:0{n}d}'] + [10] + [int(ch) for ch in f'{b:0{n}d}'] + [11]

    def book_read(tokens):
        answer = np.asarray(tokens).ravel()[2 * n + 2:3 * n + 3]
        if len(answer) != n + 1 or answer.min() < 0 or answer.max() > 9:
            return -1
        return int(''.join(str(int(d)) for d in answer))
    return Format(f"the book's format, {n} digits most significant first", book_prompt,
                  book_read, n + 1)


# ----------------------------------------------------------------------------- verification

def edge_cases():
    """The pairs every check adds to the random ones: 0 + 0, max + max, carry chains.

    Both orders of max + 0 and max + 1, 5e9 + 5e9, and (10^k - 1) + 1 for every k
    (a carry that runs through k columns), with its mirror.

    >>> len(edge_cases()), edge_cases()[:2]
    (27, [(0, 0), (9999999999, 9999999999)])
    """
    pairs = [(0, 0), (TOP, TOP), (TOP, 0), (0, TOP), (TOP, 1), (1, TOP),
             (5_000_000_000, 5_000_000_000)]
    for k in range(1, N_DIGITS + 1):
        pairs += [(10 ** k - 1, 1), (1, 10 ** k - 1)]
    return pairs


def column_cases(rng=None):
    """Pairs that show every column every situation it can meet: 170,300 pairs.

    Answer digit k depends on the digits of column k, those of column k - 1 and
    the carry into column k - 1.  For every k = 0..10 this lists every choice of
    the four digits (column k is empty at k = 10) with both incoming carries
    (made by column k - 2: 9 + 9 or 0 + 0; none into column 0); the other
    columns hold seeded random digits.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    pairs = []
    for k in range(N_DIGITS + 1):
        for carry in ((0, 1) if k >= 2 else (0,)):
            for digits in np.ndindex(10, 10, 10, 10):
                a = rng.integers(0, 10, size=N_DIGITS)      # index i: 10^i
                b = rng.integers(0, 10, size=N_DIGITS)
                if k < N_DIGITS:
                    a[k], b[k] = digits[0], digits[1]
                elif digits[:2] != (0, 0):
                    continue
                if k >= 1:
                    a[k - 1], b[k - 1] = digits[2], digits[3]
                elif digits[2:] != (0, 0):
                    continue
                if k >= 2:
                    a[k - 2] = b[k - 2] = 9 * carry
                pairs.append((int(a @ 10 ** np.arange(N_DIGITS)),
                              int(b @ 10 ** np.arange(N_DIGITS))))
    return pairs


def teacher_forced_errors(params, pairs):
    """Pairs whose answer is not reproduced, checked in one teacher-forced pass.

    Greedy decoding prints the right answer exactly when every answer position,
    fed the right digits before it, predicts the next right digit
    (``taotp.teacher_forced_argmax``).  The entry's format; the 11 answer digits.
    """
    from ..decoding import teacher_forced_argmax
    rows = [prompt(a, b) + [int(ch) for ch in f'{a + b:011d}'[::-1]] for a, b in pairs]
    rows = np.array(rows, dtype=np.int64)
    got = teacher_forced_argmax(rows, params, PROMPT_LEN)
    wrong = np.flatnonzero((got != rows[:, PROMPT_LEN:]).any(axis=1))
    return [pairs[i] for i in wrong]


@dataclass
class Verdict:
    """What ``verify`` found: ``accuracy`` on the random pairs, the edge cases, the failures."""
    accuracy: float
    right: int
    total: int
    edge_right: int
    edge_total: int
    failures: list = field(default_factory=list)    # up to 5 (a, b, got); got None: no number
    seconds: float = 0.0

    @property
    def qualifies(self):
        """The board's bar: at least 99 % of the random pairs, and every edge case."""
        return self.accuracy >= 0.99 and self.edge_right == self.edge_total

    def __str__(self):
        return (f'{self.right:,} / {self.total:,} random pairs right ({self.accuracy:.2%}), '
                f'edge cases {self.edge_right} / {self.edge_total}')


def _sums(params, pairs, fmt, chunk):
    from ..decoding import decode_batch
    prompts = np.array([fmt.prompt(int(a), int(b)) for a, b in pairs], dtype=np.int64)
    got = []
    for start in range(0, len(prompts), chunk):
        rows = decode_batch(prompts[start:start + chunk], params, fmt.steps)
        got += [_read_or_none(fmt, row) for row in rows]
    return got


def _read_or_none(fmt, row):
    """What ``fmt.read`` makes of a decoded row; None when the row spells no number."""
    try:
        return fmt.read(row)
    except (ValueError, TypeError):
        return None


def verify(params, n=10_000, seed=2025, fmt=ENTRY_FORMAT, chunk=2_000):
    """Run ``n`` seeded random pairs and ``edge_cases()`` through greedy decoding.

    Pairs are drawn uniformly from ``[0, 9_999_999_999]`` with
    ``np.random.default_rng(seed)``.  Decoding is ``taotp.decode_batch``, the batched
    form of ``taotp.decode`` (same engine, greedy, no eos), ``fmt.steps`` steps;
    ``fmt.read`` turns each decoded row into an integer.

    Returns:
        A ``Verdict`` with ``.accuracy`` (0..1, random pairs), ``.edge_right`` /
        ``.edge_total``, the first failures and the time taken.

    >>> verify(params(), n=50).accuracy
    1.0
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f'verify: n must be an integer >= 1; got {n!r}')
    validate_params(params)
    start = perf_counter()
    rng = np.random.default_rng(seed)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, TOP + 1, size=(int(n), 2))]
    edges = edge_cases()
    got = _sums(params, pairs + edges, fmt, chunk)
    wrong = [(a, b, g) for (a, b), g in zip(pairs + edges, got) if g != a + b]
    right = sum(g == a + b for (a, b), g in zip(pairs, got))
    edge_right = sum(g == a + b for (a, b), g in zip(edges, got[len(pairs):]))
    return Verdict(right / len(pairs), right, len(pairs), edge_right, len(edges), wrong[:5],
                   perf_counter() - start)


# ----------------------------------------------------------------------------- counting

def is_sinusoidal(column, tol=1e-9):
    """True when ``column`` is ``A cos(w i + phase)`` of the row index i, 0 < w < pi (or all 0).

    Tested by the recurrence ``c[i+1] + c[i-1] = 2 cos(w) c[i]`` with ``|2 cos w| < 2``,
    which holds for exactly those sequences: constants, ramps and exponentials
    fail it.  Needs at least four rows.

    >>> i = np.arange(12)
    >>> is_sinusoidal(3 * np.sin(2 * np.pi * i / 11 + 1)), is_sinusoidal(i / 10.0)
    (True, False)
    """
    c = np.asarray(column, dtype=np.float64)
    if len(c) < 4:
        return False
    top = np.abs(c).max()
    if top == 0:
        return True
    mid, sides = c[1:-1], c[2:] + c[:-2]
    if mid @ mid == 0:
        return False
    t = (mid @ sides) / (mid @ mid)                 # 2 cos w, by least squares
    return bool(abs(t) < 2 - 1e-9 and np.abs(sides - t * mid).max() <= tol * top)


def _norm_count(ln):
    """Numbers in a layer norm: 0 for the fixed one (gamma 1, beta 0), else its entries."""
    count = 0
    for key, default in (('gamma', 1.0), ('beta', 0.0)):
        value = np.asarray(ln.get(key, default), dtype=np.float64)
        if not np.all(value == default):
            count += value.size
    return count


def _paths(params):
    """Every weight of a program as (path, array): head slices for Q, K, V and P."""
    yield ('tok_emb',), _weight(params, ('tok_emb',))
    yield ('out_emb',), _weight(params, ('out_emb',))
    for i, layer in enumerate(params['layers']):
        for key in ('Q', 'K', 'V', 'P'):
            for h in range(np.shape(layer[key])[0]):
                yield ('layers', i, key, h), np.asarray(layer[key][h], dtype=np.float64)
        for key in ('M1', 'b1', 'M2', 'b2'):
            yield ('layers', i, key), np.asarray(layer[key], dtype=np.float64)


def parameter_census(params):
    """``unique_parameters`` with its parts: a dict of counts and the rules that applied.

    Keys: ``declared`` (numbers in the tensors the construction declared, each
    counted once), ``dense`` (numbers in weights counted entry by entry), ``norms``,
    ``positions`` (0 when the tables are sinusoidal), ``tied_out`` (True when
    ``out_emb`` equals ``tok_emb`` and is not counted again), ``unique`` (the sum),
    and ``rebuilt`` (the paths rebuilt from declared tensors).
    """
    validate_params(params)
    tensors = getattr(params, 'tensors', {}) or {}
    recipe = getattr(params, 'recipe', {}) or {}
    # a tie stands for using one tensor in several places: it must hold only ones
    ties = {name: t for name, t in (getattr(params, 'ties', {}) or {}).items()
            if np.all(np.asarray(t) == 1.0)}
    known = {**tensors, **ties}
    used, rebuilt, dense = set(), [], 0
    tied_out = bool(np.shape(params['tok_emb']) == np.shape(params['out_emb'])
                    and np.all(np.asarray(params['tok_emb']) == np.asarray(params['out_emb'])))
    for path, array in _paths(params):
        terms = recipe.get(path)
        ok = False
        if terms and all(name in known for term in terms for name in term):
            try:
                ok = np.array_equal(assemble(known, terms, array.shape), array)
            except ValueError:
                ok = False
        if ok:
            rebuilt.append(path)
            used |= {name for term in terms for name in term if name in tensors}
        elif not (path == ('out_emb',) and tied_out):
            dense += array.size
    declared = sum(np.asarray(tensors[name]).size for name in used)
    norms = _norm_count(params['lnf']) + sum(_norm_count(layer[key])
                                             for layer in params['layers']
                                             for key in ('ln1', 'ln2'))
    tables = position_tables(params['pos_emb'])
    free = all(is_sinusoidal(col) for table in tables for col in np.asarray(table, float).T)
    positions = 0 if free else sum(np.asarray(t).size for t in tables)
    return {'declared': int(declared), 'dense': int(dense), 'norms': int(norms),
            'positions': int(positions), 'tied_out': tied_out,
            'unique': int(declared + dense + norms + positions), 'rebuilt': rebuilt}


def unique_parameters(params):
    """Parameters by AdderBoard's rules, as code.

    * A weight that the program declares as built from named tensors (a
      ``DeclaredParams``: a sum of outer products of them, or one of them copied)
      is rebuilt from those tensors and must equal the array bit for bit; each
      declared tensor counts once, however often it is used (tied weights).  A
      factorisation counts only when the construction made the factors: nothing
      here decomposes an array after the fact.
    * Every other weight counts entry by entry (zeros included), except an
      ``out_emb`` equal to ``tok_emb`` (tied, counted once, the book's rule).
    * Position tables are free when every column is a sinusoid of the position
      (``is_sinusoidal``: fixed, not learned); otherwise every entry counts.
    * Layer norms count nothing at gamma 1 and beta 0 (normalisation with no
      parameters), else their entries.

    >>> import taotp
    >>> unique_parameters(params()), unique_parameters(dict(params()))
    (57, 187)
    """
    return parameter_census(params)['unique']


def entry_counts():
    """Both counts of the entry: the book's census (total, non-zero, non-zero outside the
    fixed position table) and AdderBoard's unique parameters.

    >>> entry_counts()
    {'total': 352, 'non0': 205, 'non0_no_positions': 107, 'unique': 57}
    """
    p = params()
    total, non0 = count_params(p)['n_params'], count_non0_params(p)['n_params']
    return {'total': total, 'non0': non0,
            'non0_no_positions': non0 - count_non0_params(p)['pos_emb'],
            'unique': unique_parameters(p)}
