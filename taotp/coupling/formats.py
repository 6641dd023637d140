"""The task formats of Chapter 9: scratchpads and coupled position IDs.

Every format is plain Python: one character per token, no BOS/EOS unless a
docstring says so, and position IDs as lists of integers (one list per level).

* ``parity_sequence(bits)``: the bits, ``=``, the running parities; one level.
* ``addition_sequence(operands)``: ``057+048+096=000>750>501>102``; two levels
  (``scratchpad_text`` is its string).
* ``baseline_sequence(operands)``: no scratchpad, one level, answer reversed.
* ``multiplication_sequence(a, b)``: a two-stage scratchpad, three levels.

Glyphs: ``>`` separates scratchpad numbers (an ASCII stand-in for the paper's
arrow, as in the authors' released code), ``*`` is the multiplication sign,
``$`` is both BOS and EOS.

    >>> tokens, p1, p2 = addition_sequence([57, 48, 96])
    >>> ''.join(tokens)
    '057+048+096=000>750>501>102'
    >>> ''.join(map(str, p1)), ''.join(map(str, p2))
    ('432143214321234123412341234', '111122223331111222233334444')
"""
from itertools import accumulate

import numpy as np

VOCAB = list('0123456789+=>$')
SEP = '>'
EOS = '$'
TOKEN_ID = {c: i for i, c in enumerate(VOCAB)}
PARITY_VOCAB = ['0', '1', '=', '$']


# ----------------------------------------------------------------------------- argument checks

def _is_count(value, low):
    """True for an integer (not a bool) of at least ``low``."""
    return (not isinstance(value, bool) and isinstance(value, (int, np.integer))
            and value >= low)


def _check_offset(s, where):
    if not _is_count(s, 1):
        raise ValueError(f'{where}: offsets must be integers >= 1; got {s!r}')


def operand_list(operands, where):
    """``operands`` as a list of Python ints, or ``ValueError`` naming ``where``."""
    try:
        ops = list(operands)
    except TypeError:
        raise ValueError(f'{where}: operands must be a list of non-negative integers; '
                         f'got {operands!r}') from None
    if not ops or not all(_is_count(a, 0) for a in ops):
        raise ValueError(f'{where}: operands must be a non-empty list of non-negative '
                         f'integers; got {ops!r}')
    return [int(a) for a in ops]


def _bit_list(bits, where):
    if isinstance(bits, str):
        if not bits or set(bits) - {'0', '1'}:
            raise ValueError(f'{where}: bits must be a non-empty string of 0/1; got {bits!r}')
        return [int(b) for b in bits]
    values = list(bits)
    if not values or any(isinstance(b, bool) or b not in (0, 1) for b in values):
        raise ValueError(f'{where}: bits must be a non-empty sequence of 0/1; got {values!r}')
    return [int(b) for b in values]


# ----------------------------------------------------------------------------- parity

def parity_sequence(bits, offset=1):
    """Parity with a running-parity scratchpad, and its coupled position IDs.

    Query bit k and scratchpad bit k (1-based) share the ID ``offset + k``; the
    ``=`` gets ``offset``, so the token writing bit k has the ID one below it.

    Args:
        bits: a string of ``0``/``1`` or a sequence of 0/1 integers.
        offset: the ID of ``=`` (an integer >= 1; random during training).

    Returns:
        ``(tokens, pos)``: one-character strings and one ID per token.

    >>> tokens, pos = parity_sequence('0101')
    >>> ''.join(tokens), pos
    ('0101=0110', [2, 3, 4, 5, 1, 2, 3, 4, 5])
    """
    x = _bit_list(bits, 'parity_sequence')
    _check_offset(offset, 'parity_sequence')
    running = list(accumulate(x, lambda a, b: a ^ b))
    ids = [offset + k for k in range(1, len(x) + 1)]
    return [str(b) for b in x] + ['='] + [str(b) for b in running], ids + [offset] + ids


def parity_positions(tokens, offset=1):
    """IDs of a parity token-id sequence ``$ bits = scratchpad`` (or any prefix); ``$`` gets 0.

    Token ids index ``PARITY_VOCAB`` (``0 1 = $``); the callable a decoder needs
    for ``positions``.

    >>> parity_positions([3, 0, 1, 2, 0, 1]).tolist()
    [0, 2, 3, 1, 2, 3]
    """
    out, k = [], 0
    for t in tokens:
        c = PARITY_VOCAB[t]
        if c == '$':
            out.append(0)
        elif c == '=':
            out.append(offset)
            k = 0
        else:
            k += 1
            out.append(offset + k)
    return np.array(out, dtype=np.int64)


# ----------------------------------------------------------------------------- addition

def pad_length(operands):
    """The experiments' padding: the digits of (10^L - 1) * m, L = longest operand length.

    >>> pad_length([57, 48, 96]), pad_length([99] * 11)
    (3, 4)
    """
    ops = operand_list(operands, 'pad_length')
    longest = max(len(str(a)) for a in ops)
    return len(str((10 ** longest - 1) * len(ops)))


def theory_pad_length(n, m):
    """The proof's padding ``n + 1 + floor(log10 m)``, an upper bound for every instance.

    >>> theory_pad_length(2, 10)
    4
    """
    return n + 1 + len(str(m)) - 1


def scratchpad_text(operands, ell=None, where='scratchpad_text'):
    """The query and the running-sum scratchpad as one string.

    Every number is zero-padded to ``ell`` digits (default: ``pad_length``);
    the running sums ``b_0 = 0, b_1, ..., b_m`` are written units first.

    >>> scratchpad_text([57, 48, 96])
    '057+048+096=000>750>501>102'
    """
    ops = operand_list(operands, where)
    need = pad_length(ops)
    ell = need if ell is None else ell
    if ell < need:
        raise ValueError(f'{where}: ell must be at least {need} (digits of the largest '
                         f'possible sum); got {ell}')
    running = accumulate([0] + ops)          # Python ints: any number of digits
    return ('+'.join(str(a).zfill(ell) for a in ops) + '='
            + SEP.join(str(b).zfill(ell)[::-1] for b in running))


def coupled_ids(tokens, offsets=(1, 1)):
    """Both levels of IDs of an addition sequence or any prefix of one (``$`` gets 0, 0).

    Level 1 is the significance (a digit worth 10^j gets ``s1 + 1 + j``, every
    separator ``s1``); level 2 says which number (``a_i`` and ``b_(i-1)`` share
    ``s2 + i - 1``).  The padded width is read off the first operand.

    >>> coupled_ids('$07+08=00>7')
    ([0, 3, 2, 1, 3, 2, 1, 2, 3, 1, 2], [0, 1, 1, 1, 2, 2, 1, 1, 1, 2, 2])
    """
    chars = list(tokens)
    ids = _CoupledIds(_first_width(chars), offsets)
    for c in chars:
        ids.push(c)
    return ids.p1, ids.p2


def _first_width(chars):
    """The padded width ``ell``: the digits of the first operand (after a leading ``$``)."""
    ell = 0
    for c in (c for c in chars if c != EOS):
        if not c.isdigit():
            break
        ell += 1
    return ell


class _CoupledIds:
    """``coupled_ids`` one token at a time: ``push`` appends the IDs of the next token.

    The IDs of a token depend only on the tokens before it and on ``ell``, so a
    sequence that grows (greedy decoding) extends its IDs instead of recomputing
    them, once its first operand is complete.
    """

    def __init__(self, ell, offsets=(1, 1)):
        self.ell, (self.s1, self.s2) = ell, offsets
        self.p1, self.p2 = [], []
        self.in_query, self.number, self.j = True, 0, 0

    def push(self, c):
        s1, s2 = self.s1, self.s2
        if c == EOS:
            self.p1.append(0)
            self.p2.append(0)
        elif c.isdigit():
            self.p1.append(s1 + self.ell - self.j if self.in_query else s1 + 1 + self.j)
            self.p2.append(s2 + self.number)
            self.j += 1
        elif c in '+=' + SEP:
            if c == '=':
                self.in_query, self.number = False, 0
            elif c == SEP:
                self.number += 1
            self.p1.append(s1)
            self.p2.append(s2 + self.number)
            self.number += c == '+'
            self.j = 0
        else:
            raise ValueError(f'coupled_ids: tokens must come from {"".join(VOCAB)}; got {c!r}')


def addition_sequence(operands, offsets=(1, 1), ell=None):
    """Multi-operand addition with the running-sum scratchpad and bi-level IDs.

    Args:
        operands: a non-empty list of non-negative integers.
        offsets: ``(s1, s2)``, the IDs of a separator and of the first number.
        ell: the padded width (default: ``pad_length(operands)``).

    Returns:
        ``(tokens, pos1, pos2)``: one-character strings (no BOS/EOS) and the IDs
        of both levels (see the module example).
    """
    for s in offsets:
        _check_offset(s, 'addition_sequence')
    tokens = list(scratchpad_text(operands, ell, where='addition_sequence'))
    p1, p2 = coupled_ids(tokens, offsets)
    return tokens, p1, p2


def read_total(response):
    """The sum a response ``b_0 > ... > b_m $`` encodes (``None`` if it is malformed).

    >>> read_total('000>750>501>102$'), read_total('000>75')
    (201, None)
    """
    text = ''.join(response)
    if text.count(EOS) != 1 or not text.endswith(EOS):
        return None
    last = text[:-1].split(SEP)[-1]
    return int(last[::-1]) if last.isdigit() else None


def keys_for(tokens, index, offsets=(1, 1)):
    """The keys the digit-sum head must find for the token at ``index`` (predicting index + 1).

    Positions (0-based, in ``tokens``) whose level-1 ID is one larger and whose
    level-2 ID is one smaller: the digit of the next operand and the digit of
    the previous running sum.

    >>> keys_for(addition_sequence([57, 48, 96])[0], 23)
    [10, 20]
    """
    p1, p2 = coupled_ids(tokens, offsets)
    return [i for i in range(index + 1) if tokens[i] != EOS and p1[i] == p1[index] + 1
            and p2[i] == p2[index] - 1]


# ----------------------------------------------------------------------------- other formats

def baseline_sequence(operands, offset=1, ell=None):
    """No scratchpad, one level of coupling: ``057+048+096=102`` (the answer reversed).

    A digit worth 10^j gets ``offset + 1 + j`` in every number; ``+`` and ``=``
    get ``offset``.  Returns ``(tokens, pos)``.

    >>> ''.join(baseline_sequence([57, 48, 96])[0])
    '057+048+096=102'
    """
    ops = operand_list(operands, 'baseline_sequence')
    _check_offset(offset, 'baseline_sequence')
    ell = pad_length(ops) if ell is None else ell
    tokens, pos = [], []
    for i, a in enumerate(ops):
        for j, c in enumerate(str(a).zfill(ell)):
            tokens.append(c)
            pos.append(offset + ell - j)
        tokens.append('+' if i < len(ops) - 1 else '=')
        pos.append(offset)
    for j, c in enumerate(str(sum(ops)).zfill(ell)[::-1]):
        tokens.append(c)
        pos.append(offset + 1 + j)
    return tokens, pos


def multiplication_sequence(a, b, offsets=(1, 1, 1)):
    """Multiplication with a two-stage scratchpad and tri-level IDs.

    Stage 1 writes the partial products ``a * B_i`` (padded to M + 1 digits,
    reversed, joined by ``+``), stage 2 the shifted running sums (padded to
    M + N digits, reversed, joined by ``>``).  Returns ``(tokens, pos1, pos2,
    pos3)``; no BOS/EOS.

    >>> ''.join(multiplication_sequence(37, 925)[0])
    '37*925=581+470+333=58100>52900>52243'
    """
    for v in (a, b):
        if not _is_count(v, 0):
            raise ValueError(f'multiplication_sequence: operands must be non-negative '
                             f'integers; got {v!r}')
    for s in offsets:
        _check_offset(s, 'multiplication_sequence')
    s1, s2, s3 = offsets
    A, B = str(int(a)), str(int(b))
    M, N = len(A), len(B)
    rows = [(c, s1 + M - k, 0, 0) for k, c in enumerate(A)]         # A's digit worth 10^(M-1-k)
    rows.append(('*', 0, 0, 0))
    rows += [(c, 0, s2 + N - 1 - k, 0) for k, c in enumerate(B)]
    digits_b = [int(c) for c in reversed(B)]                      # B_i is worth 10^i
    for i, bi in enumerate(digits_b):                               # stage 1
        rows.append(('=' if i == 0 else '+', s1, s2 + i, s3 + i))
        rows += [(c, s1 + 1 + k, s2 + i, s3 + 1 + i + k)
                 for k, c in enumerate(str(int(a) * bi).zfill(M + 1)[::-1])]
    run = 0
    for j, bj in enumerate(digits_b):                               # stage 2
        run += int(a) * bj * 10 ** j
        rows.append(('=' if j == 0 else SEP, 0, s2 + j, s3))
        rows += [(c, 0, s2 + j, s3 + 1 + k) for k, c in enumerate(str(run).zfill(M + N)[::-1])]
    tokens, p1, p2, p3 = (list(col) for col in zip(*rows))
    return tokens, p1, p2, p3


# ----------------------------------------------------------------------------- random data

def random_offsets(ell, m, max_pos=(40, 40), *, rng):
    """Training-style offsets: ``s1`` uniform on 1..max_pos1 - ell, ``s2`` on 1..max_pos2 - m.

    >>> random_offsets(3, 3, (6, 5), rng=np.random.default_rng(0))
    (3, 2)
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'random_offsets: rng must be a numpy.random.Generator; '
                        f'got {type(rng).__name__}')
    if ell + 1 > max_pos[0] or m + 1 > max_pos[1]:
        raise ValueError(f'random_offsets: max_pos must be at least (ell + 1, m + 1) = '
                         f'{(ell + 1, m + 1)}; got {tuple(max_pos)}')
    return int(rng.integers(1, max_pos[0] - ell + 1)), int(rng.integers(1, max_pos[1] - m + 1))


def random_operands(m, n, *, rng):
    """``m`` operands of exactly ``n`` digits (the paper's TA(n, m)); 1-digit ones may be 0.

    >>> random_operands(3, 2, rng=np.random.default_rng(0))
    [56, 13, 20]
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'random_operands: rng must be a numpy.random.Generator; '
                        f'got {type(rng).__name__}')
    ops = []
    for _ in range(m):
        digits = rng.integers(0, 10, size=n)
        if n > 1:
            digits[0] = rng.integers(1, 10)
        ops.append(int(''.join(map(str, digits))))
    return ops
