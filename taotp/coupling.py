"""Chapter 9: scratchpads, multi-level Position Coupling and a 1-layer 4-head adder.

Formats (plain Python, one character per token, no BOS/EOS unless stated):

* ``parity_sequence(bits)``: bits, ``=``, running parities; one level of IDs.
* ``addition_sequence(operands)``: ``057+048+096=000>750>501>102``; two levels.
* ``baseline_sequence(operands)``: no scratchpad, one level (the answer reversed).
* ``multiplication_sequence(a, b)``: two-stage scratchpad, three levels.

The construction (Theorem 4.1 of Cho et al. 2025) lives in
``build_multi_operand_adder``: one layer, four heads, an 83-unit ReLU layer.
``norm=False`` is the paper's normalisation-free model (run by this module);
``norm=True`` is a port to the book's PreLN ``transformer`` (run by the core).
``build_parity_program`` applies the same ideas to parity (one layer, one head).

Glyphs: ``>`` separates scratchpad numbers (ASCII, and the authors' released
code uses it; the paper's arrow does not survive copy and paste), ``*`` is the
multiplication sign and ``$`` is both BOS and EOS.
"""
import math

import numpy as np

from .decoding import decode
from .residual import Layout
from .trace import trace

__all__ = ['VOCAB', 'SEP', 'EOS', 'parity_sequence', 'addition_sequence', 'addition_text',
           'coupled_ids', 'baseline_sequence', 'multiplication_sequence', 'pad_length',
           'theory_pad_length', 'random_offsets', 'random_operands', 'read_total', 'cube_code', 'position_codes', 'sizes',
           'lambda_bound', 'digit_mlp', 'trapezoid', 'carry_out', 'build_multi_operand_adder',
           'MultiOperandAdder', 'keys_for', 'plot_ids', 'PARITY_VOCAB',
           'parity_positions', 'build_parity_program']

VOCAB = list('0123456789+=>$')
SEP = '>'
EOS = '$'
TOKEN_ID = {c: i for i, c in enumerate(VOCAB)}


# ----------------------------------------------------------------------------- formats

def _bits(bits, where):
    if isinstance(bits, str):
        if not bits or set(bits) - {'0', '1'}:
            raise ValueError(f'{where}: bits must be a non-empty string of 0/1; got {bits!r}')
        return [int(b) for b in bits]
    values = list(bits)
    if not values or any(b not in (0, 1) or isinstance(b, bool) for b in values):
        raise ValueError(f'{where}: bits must be a non-empty sequence of 0/1; got {values!r}')
    return [int(b) for b in values]


def parity_sequence(bits, offset=1):
    """Parity with a running-parity scratchpad: ``0101`` -> ``0101=0110``.

    Query bit k and scratchpad bit k (1-based) share the ID ``offset + k``; the
    ``=`` gets ``offset``.  Returns ``(tokens, pos)``.
    """
    x = _bits(bits, 'parity_sequence')
    _offset(offset, 'parity_sequence')
    running, acc = [], 0
    for b in x:
        acc ^= b
        running.append(acc)
    n = len(x)
    tokens = [str(b) for b in x] + ['='] + [str(b) for b in running]
    pos = [offset + k for k in range(1, n + 1)] + [offset] + \
          [offset + k for k in range(1, n + 1)]
    return tokens, pos


def _offset(s, where):
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
        raise ValueError(f'{where}: offsets must be integers >= 1; got {s!r}')


def _operands(operands, where):
    try:
        ops = list(operands)
    except TypeError:
        raise ValueError(f'{where}: operands must be a list of non-negative integers; '
                         f'got {operands!r}') from None
    if not ops or any(isinstance(a, bool) or not isinstance(a, (int, np.integer)) or a < 0
                      for a in ops):
        raise ValueError(f'{where}: operands must be a non-empty list of non-negative '
                         f'integers; got {ops!r}')
    return [int(a) for a in ops]


def pad_length(operands):
    """The experiments' padding: digits of (10^L - 1) * m, L = longest operand length."""
    ops = _operands(operands, 'pad_length')
    longest = max(len(str(a)) for a in ops)
    return len(str((10 ** longest - 1) * len(ops)))


def theory_pad_length(n, m):
    """The proof's padding ``n + 1 + floor(log10 m)`` (an upper bound for every instance)."""
    return n + 1 + len(str(m)) - 1


def addition_text(operands, ell=None):
    """The query+response string, e.g. ``057+048+096=000>750>501>102``."""
    ops = _operands(operands, 'addition_text')
    need = pad_length(ops)
    ell = need if ell is None else ell
    if ell < need:
        raise ValueError(f'addition_text: ell must be at least {need} (digits of the largest '
                         f'possible sum); got {ell}')
    query = '+'.join(str(a).zfill(ell) for a in ops)
    sums, run = [], 0
    for a in [0] + ops:
        run += a
        sums.append(str(run).zfill(ell)[::-1])
    return query + '=' + SEP.join(sums)


def coupled_ids(tokens, offsets=(1, 1)):
    """Bi-level IDs of an addition sequence or any prefix of one (``$`` gets 0, 0).

    Level 1 = digit significance (``s1 + 1 + j`` for 10^j; separators ``s1``),
    level 2 = which number (``a_i`` and ``b_(i-1)`` share ``s2 + i - 1``).
    The padded width is read off the first operand.
    """
    s1, s2 = offsets
    chars = list(tokens)
    body = [c for c in chars if c != EOS]
    ell = 0
    for c in body:
        if not c.isdigit():
            break
        ell += 1
    p1, p2 = [], []
    in_query, number, j = True, 0, 0
    for c in chars:
        if c == EOS:
            p1.append(0)
            p2.append(0)
        elif c.isdigit():
            p1.append(s1 + ell - j if in_query else s1 + 1 + j)
            p2.append(s2 + number)
            j += 1
        elif c in '+=' + SEP:
            if c == '=':
                in_query, number = False, 0
            elif c == SEP:
                number += 1
            p1.append(s1)
            p2.append(s2 + number)
            if c == '+':
                number += 1
            j = 0
        else:
            raise ValueError(f'coupled_ids: tokens must come from {"".join(VOCAB)}; got {c!r}')
    return p1, p2


def addition_sequence(operands, offsets=(1, 1), ell=None):
    """Multi-operand addition with the running-sum scratchpad and bi-level IDs.

    ``[57, 48, 96]`` -> tokens of ``057+048+096=000>750>501>102``, level-1 IDs
    ``432143214321234123412341234``, level-2 IDs ``111122223331111222233334444``.
    Returns ``(tokens, pos1, pos2)``; no BOS/EOS.
    """
    for s in offsets:
        _offset(s, 'addition_sequence')
    tokens = list(addition_text(operands, ell))
    p1, p2 = coupled_ids(tokens, offsets)
    return tokens, p1, p2


def baseline_sequence(operands, offset=1, ell=None):
    """No scratchpad, single-level coupling: ``057+048+096=102`` (answer reversed).

    A digit of significance 10^j gets ``offset + 1 + j`` in every number; ``+``
    and ``=`` get ``offset``.  Returns ``(tokens, pos)``.
    """
    ops = _operands(operands, 'baseline_sequence')
    _offset(offset, 'baseline_sequence')
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
    """``37 * 925`` -> ``37*925=581+470+333=58100>52900>52243`` with tri-level IDs.

    Stage 1: partial products ``A * B_i`` (padded to M + 1, reversed, joined by
    ``+``); stage 2: shifted running sums (padded to M + N, reversed, joined by
    ``>``).  Returns ``(tokens, pos1, pos2, pos3)``; no BOS/EOS.
    """
    for v in (a, b):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f'multiplication_sequence: operands must be non-negative '
                             f'integers; got {v!r}')
    for s in offsets:
        _offset(s, 'multiplication_sequence')
    s1, s2, s3 = offsets
    A, B = str(int(a)), str(int(b))
    M, N = len(A), len(B)
    tok, p1, p2, p3 = [], [], [], []

    def put(c, x, y, z):
        tok.append(c)
        p1.append(x)
        p2.append(y)
        p3.append(z)

    for k, c in enumerate(A):                       # significance 10^(M-1-k)
        put(c, s1 + 1 + (M - 1 - k), 0, 0)
    put('*', 0, 0, 0)
    for k, c in enumerate(B):
        put(c, 0, s2 + (N - 1 - k), 0)
    digits_b = [int(c) for c in reversed(B)]        # B_i has significance 10^i
    for i, bi in enumerate(digits_b):
        put('=' if i == 0 else '+', s1, s2 + i, s3 + i)
        for k, c in enumerate(str(int(a) * bi).zfill(M + 1)[::-1]):
            put(c, s1 + 1 + k, s2 + i, s3 + 1 + i + k)
    run = 0
    for j, bj in enumerate(digits_b):
        run += int(a) * bj * 10 ** j
        put('=' if j == 0 else SEP, 0, s2 + j, s3)
        for k, c in enumerate(str(run).zfill(M + N)[::-1]):
            put(c, 0, s2 + j, s3 + 1 + k)
    return tok, p1, p2, p3


def random_offsets(rng, ell, m, max_pos=(40, 40)):
    """Training-style offsets: ``s1`` uniform on [1, max_pos1 - ell], ``s2`` on [1, max_pos2 - m]."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'random_offsets: rng must be a numpy.random.Generator; '
                        f'got {type(rng).__name__}')
    if ell + 1 > max_pos[0] or m + 1 > max_pos[1]:
        raise ValueError(f'random_offsets: max_pos must be at least (ell + 1, m + 1) = '
                         f'{(ell + 1, m + 1)}; got {tuple(max_pos)}')
    return int(rng.integers(1, max_pos[0] - ell + 1)), int(rng.integers(1, max_pos[1] - m + 1))


def random_operands(rng, m, n):
    """``m`` operands of exactly ``n`` digits (the paper's TA(n, m)); 1-digit ones may be 0."""
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


def keys_for(tokens, index, offsets=(1, 1)):
    """The two keys the coupling singles out for the token at ``index`` (predicting index+1).

    Returns positions (0-based, in ``tokens``) with level-1 ID one larger and level-2
    ID one smaller: the digit of the next operand and of the previous running sum.
    """
    p1, p2 = coupled_ids(tokens, offsets)
    return [i for i in range(index + 1) if tokens[i] != EOS and p1[i] == p1[index] + 1
            and p2[i] == p2[index] - 1]


# ----------------------------------------------------------------------------- position codes

def cube_code(D, k):
    """Hypercube code v^D_k in {+1, -1}^D: the bits of k - 1 (MSB first) as signs."""
    if not 1 <= k <= 2 ** D:
        raise ValueError(f'cube_code: k must be in 1..2^D = {2 ** D}; got {k}')
    bits = [(k - 1) >> (D - 1 - i) & 1 for i in range(D)]
    return np.array([-1.0 if b else 1.0 for b in bits])


def position_codes(D, p):
    """``[v_p ; v_(p+1)]`` (current and next code) for ID p >= 1, zeros for p = 0.

    IDs wrap modulo 2^D: code of p is that of ((p - 1) mod 2^D) + 1.  So the next
    code of ID 2^D is v_1 -- the collision behind the paper's off-by-one.
    """
    if p == 0:
        return np.zeros(2 * D)
    wrap = lambda q: (q - 1) % 2 ** D + 1  # noqa: E731
    return np.concatenate([cube_code(D, wrap(p)), cube_code(D, wrap(p + 1))])


def sizes(n, m, literal=False):
    """Sizes for up to m operands of up to n digits.

    Returns ``ell`` (proof's padding), ``P1``, ``P2``, ``max_pos1``, ``max_pos2``,
    ``d_model`` (norm-free, 19 + 2P1 + 2P2), ``d_model_preln`` (42 + 4(P1 + P2)).
    Corrected rule ``2^P1 >= ell + 2`` (IDs up to ``2^P1 - 1``); ``literal=True``
    uses the paper's ``P1 = ceil(log2 ell)`` with ``max_pos1 = 2^P1``: the last
    digit's next code then wraps onto the separators' whenever ``s1 + ell = 2^P1``
    and the separator is never emitted (and for ell a power of two the IDs do not
    even fit).
    """
    for v, name in ((n, 'n'), (m, 'm')):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f'sizes: {name} must be an integer >= 1; got {v!r}')
    ell = theory_pad_length(n, m)
    P1 = max(1, math.ceil(math.log2(ell))) if literal else math.ceil(math.log2(ell + 2))
    P2 = max(1, math.ceil(math.log2(m + 1)))
    return {'ell': ell, 'P1': P1, 'P2': P2,
            'max_pos1': 2 ** P1 if literal else 2 ** P1 - 1, 'max_pos2': 2 ** P2,
            'd_model': 19 + 2 * P1 + 2 * P2, 'd_model_preln': 42 + 4 * (P1 + P2)}


def lambda_bound(N):
    """The sufficient attention scale ``ln(1000 N) / 2`` for an N-token sequence."""
    return 0.5 * math.log(1000 * N)


# ----------------------------------------------------------------------------- the digit MLP

THRESHOLDS = (-0.5, 0.0, 0.5, 1.0, 9.5, 10.0, 10.5, 11.0)
SIGNS = (1, -1, -1, 1, 1, -1, -1, 1)
OFFSET_G = 0.21


def trapezoid(k, t):
    """f_k(t): 1 on [k, k+0.5] and [k+10, k+10.5], 0 outside (k-0.5, k+1) and (k+9.5, k+11)."""
    t = np.asarray(t, dtype=np.float64)
    return 2 * sum(s * np.maximum(t - k - c, 0) for s, c in zip(SIGNS, THRESHOLDS))


def digit_mlp(pre_sum, pre_carry, num):
    """The SUM block: ``f_k(g)`` for k = 0..9 with g = PRE_SUM + (PRE_CARRY - NUM)/10 + 0.21."""
    g = np.asarray(pre_sum, float) + (np.asarray(pre_carry, float) - num) / 10 + OFFSET_G
    return np.stack([trapezoid(k, g) for k in range(10)], axis=-1)


def carry_out(pair_sum, written_digit):
    """Carry leaving a place from its digit-pair sum and the digit written there."""
    gap = pair_sum - written_digit
    if gap in (9, 10):
        return 1
    if gap in (-1, 0):
        return 0
    raise ValueError(f'carry_out: pair_sum - written_digit must be in {{-1, 0, 9, 10}}; '
                     f'got {gap}')


# ----------------------------------------------------------------------------- the construction

FREE_LAYOUT_TOKEN = [('NUM', 1), ('IS_BOS', 1), ('ONES', 1), ('PRE_SUM', 1), ('PRE_CARRY', 1),
                     ('PRE_ARROW', 1), ('PRE_EOS', 1), ('SUM', 10), ('ARROW', 1), ('EOS', 1)]
HEADS = ('digit sum', 'carry', 'arrow', 'EOS')
HEAD_OUT = ('PRE_SUM', 'PRE_CARRY', 'PRE_ARROW', 'PRE_EOS')
# (query blocks, key blocks) compared by each head
HEAD_BLOCKS = ((('POS1_NEXT', 'POS2'), ('POS1', 'POS2_NEXT')),
               (('POS1', 'POS2'), ('POS1', 'POS2_NEXT')),
               (('POS1_NEXT',), ('POS1',)),
               (('POS1', 'POS2'), ('POS1', 'POS2')))


def _hidden_units():
    """The 83 hidden units as ({feature read: weight}, constant, {output written: weight}).

    80 digit units (eight ReLU thresholds per digit k), then ARROW, EOS and a
    constant unit (sigma(1) = 1) that gives EOS its -1.
    """
    units = []
    for k in range(10):
        for s, c in zip(SIGNS, THRESHOLDS):
            units.append(({'PRE_SUM': 1.0, 'PRE_CARRY': 0.1, 'NUM': -0.1}, OFFSET_G - (k + c),
                          {('SUM', k): 2.0 * s}))
    units.append(({'PRE_ARROW': 1.0}, -0.5, {('ARROW', 0): 2.0, ('EOS', 0): 2.0}))
    units.append(({'PRE_EOS': 1.0}, -1 / 3, {('EOS', 0): 6.0}))
    units.append(({}, 1.0, {('EOS', 0): -1.0}))
    return units


class MultiOperandAdder:
    """The Theorem 4.1 adder.  Build it with ``build_multi_operand_adder``.

    Attributes: ``sizes`` (see ``sizes``), ``lam``, ``norm``, ``literal``,
    ``layout`` (a ``taotp.Layout``), ``params`` (book-format dict; with
    ``norm=False`` its ``lnf``/``ln1``/``ln2`` are ``None`` because the paper's
    model has no normalisation), ``max_pos`` (largest usable ID per level).
    """

    def __init__(self, max_digits, max_operands, lam=20.0, norm=False, literal=False,
                 eps=1e-3):
        self.max_digits, self.max_operands = max_digits, max_operands
        self.sizes = sizes(max_digits, max_operands, literal)
        if not (isinstance(lam, (int, float, np.floating)) and lam > 0 and np.isfinite(lam)):
            raise ValueError(f'build_multi_operand_adder: lam must be a positive number; '
                             f'got {lam!r}')
        self.lam, self.norm, self.literal, self.eps = float(lam), bool(norm), bool(literal), eps
        self.P1, self.P2 = self.sizes['P1'], self.sizes['P2']
        self.max_pos = (self.sizes['max_pos1'], self.sizes['max_pos2'])
        self.params = self._build_preln() if self.norm else self._build_free()

    # ---------------------------------------------------------------- shared pieces
    def _pos_tables(self, layout, signed):
        tables = []
        for level, (D, top) in enumerate(((self.P1, self.max_pos[0]), (self.P2, self.max_pos[1]))):
            table = np.zeros((top + 1, layout.d_model))
            for p in range(1, top + 1):
                cur, nxt = np.split(position_codes(D, p), 2)
                for name, code in ((f'POS{level + 1}', cur), (f'POS{level + 1}_NEXT', nxt)):
                    table[p, layout[name]] = np.concatenate([code, -code]) if signed else code
            tables.append(table)
        return tables

    def _readout(self, layout, plus):
        out = np.zeros((len(VOCAB), layout.d_model))
        for k in range(10):
            out[k, plus('SUM', k)] = 1.0
        out[TOKEN_ID[SEP], plus('ARROW', 0)] = 10.0
        out[TOKEN_ID[EOS], plus('EOS', 0)] = 100.0
        return out

    # ---------------------------------------------------------------- the paper's model
    def _build_free(self):
        P1, P2 = self.P1, self.P2
        L = Layout(FREE_LAYOUT_TOKEN + [('POS1', P1), ('POS1_NEXT', P1), ('POS2', P2),
                                        ('POS2_NEXT', P2)])
        self.layout = L
        d = L.d_model
        idx = lambda name, i=0: L[name].start + i  # noqa: E731
        tok = np.zeros((len(VOCAB), d))
        for c, t in TOKEN_ID.items():
            tok[t, idx('ONES')] = 1.0
            if c.isdigit():
                tok[t, idx('NUM')] = float(c)
        tok[TOKEN_ID[EOS], idx('IS_BOS')] = 1.0
        d_head = P1 + P2 + 1
        Q, K = np.zeros((4, d, d_head)), np.zeros((4, d, d_head))
        V, Pm = np.zeros((4, d, 1)), np.zeros((4, d, 1))
        r = self.lam ** 0.5
        for h, (qb, kb) in enumerate(HEAD_BLOCKS):
            col = 0
            for qn, kn in zip(qb, kb):
                width = L[qn].stop - L[qn].start
                for i in range(width):
                    Q[h, L[qn].start + i, col] = r
                    K[h, L[kn].start + i, col] = r
                    col += 1
            Q[h, idx('ONES'), d_head - 1] = (self.lam * col) ** 0.5
            K[h, idx('IS_BOS'), d_head - 1] = (self.lam * col) ** 0.5
            if h < 2:
                V[h, idx('NUM'), 0] = 3.0
            else:
                V[h, idx('IS_BOS'), 0] = 1.0
            Pm[h, idx(HEAD_OUT[h]), 0] = 1.0
        units = _hidden_units()
        M1, M2 = np.zeros((d, len(units))), np.zeros((len(units), d))
        for u, (reads, const, writes) in enumerate(units):
            for name, w in reads.items():
                M1[idx(name), u] = w
            M1[idx('ONES'), u] = const
            for (name, i), w in writes.items():
                M2[u, idx(name, i)] = w
        layer = {'Q': Q, 'K': K, 'V': V, 'P': Pm, 'M1': M1, 'b1': np.zeros(len(units)),
                 'M2': M2, 'b2': np.zeros(d), 'ln1': None, 'ln2': None}
        return {'tok_emb': tok, 'pos_emb': self._pos_tables(L, signed=False),
                'out_emb': self._readout(L, lambda n, i: idx(n, i)), 'layers': [layer],
                'lnf': None}

    # ---------------------------------------------------------------- the PreLN port
    def _build_preln(self):
        P1, P2 = self.P1, self.P2
        P = P1 + P2
        L = Layout([('NUM', 4), ('IS_BOS', 2), ('ONES', 2), ('FILL', 2), ('POS1', 2 * P1),
                    ('POS1_NEXT', 2 * P1), ('POS2', 2 * P2), ('POS2_NEXT', 2 * P2),
                    ('PRE_SUM', 2), ('PRE_CARRY', 2), ('PRE_ARROW', 2), ('PRE_EOS', 2),
                    ('SUM', 20), ('ARROW', 2), ('EOS', 2)])
        self.layout = L
        d = L.d_model
        plus = lambda name, i=0: L[name].start + i  # noqa: E731

        def minus(name, i=0):
            width = L[name].stop - L[name].start
            return L[name].start + width // 2 + i

        tok = np.zeros((len(VOCAB), d))
        for c, t in TOKEN_ID.items():
            a = int(c) * 2 ** 0.5 / 9 if c.isdigit() else 0.0
            rest = max(2 - a * a, 0.0) ** 0.5
            tok[t, L['NUM']] = [a, -a, rest, -rest]
            bos = 1.0 if c == EOS else -1.0
            tok[t, L['IS_BOS']] = [bos, -bos]
            tok[t, L['ONES']] = [1.0, -1.0]
        f = (2 * P) ** 0.5
        tok[TOKEN_ID[EOS], L['FILL']] = [f, -f]
        sigma0 = ((8 + 4 * P) / d) ** 0.5          # LN(x0) = x0 / sigma0
        d_head = P + 1
        Q, K = np.zeros((4, d, d_head)), np.zeros((4, d, d_head))
        V, Pm = np.zeros((4, d, 1)), np.zeros((4, d, 1))
        r = self.lam ** 0.5
        qs, ks = sigma0 * d_head ** 0.5, sigma0
        for h, (qb, kb) in enumerate(HEAD_BLOCKS):
            col = 0
            for qn, kn in zip(qb, kb):
                width = (L[qn].stop - L[qn].start) // 2
                for i in range(width):
                    Q[h, plus(qn, i), col] = r * qs
                    K[h, plus(kn, i), col] = r * ks
                    col += 1
            sink = (self.lam * col) ** 0.5
            Q[h, plus('ONES'), d_head - 1] = sink * qs
            K[h, plus('IS_BOS'), d_head - 1] = sink * ks / 2   # (bos + 1) / 2
            K[h, plus('ONES'), d_head - 1] = sink * ks / 2
            if h < 2:
                V[h, plus('NUM'), 0] = sigma0 * 27 / 2 ** 0.5   # 3 * digit
            else:
                V[h, plus('IS_BOS'), 0] = sigma0 / 2
                V[h, plus('ONES'), 0] = sigma0 / 2
            Pm[h, plus(HEAD_OUT[h]), 0] = self.eps
            Pm[h, minus(HEAD_OUT[h]), 0] = -self.eps
        units = _hidden_units()
        M1, b1 = np.zeros((d, len(units))), np.zeros(len(units))
        M2, b2 = np.zeros((len(units), d)), np.zeros(d)
        for u, (reads, const, writes) in enumerate(units):
            for name, w in reads.items():
                if name == 'NUM':
                    M1[plus('NUM'), u] = w * sigma0 * 9 / 2 ** 0.5
                else:
                    M1[plus(name), u] = w * sigma0 / (2 * self.eps)
                    M1[minus(name), u] = -w * sigma0 / (2 * self.eps)
            b1[u] = const
            for (name, i), w in writes.items():
                M2[u, plus(name, i)] = w
                M2[u, minus(name, i)] = -w
        layer = {'Q': Q, 'K': K, 'V': V, 'P': Pm, 'M1': M1, 'b1': b1, 'M2': M2, 'b2': b2,
                 'ln1': {'gamma': 1.0, 'beta': 0.0}, 'ln2': {'gamma': 1.0, 'beta': 0.0}}
        return {'tok_emb': tok, 'pos_emb': self._pos_tables(L, signed=True),
                'out_emb': self._readout(L, plus), 'layers': [layer],
                'lnf': {'gamma': 1.0, 'beta': 0.0}}

    # ---------------------------------------------------------------- running it
    def prompt(self, operands):
        """Token ids of ``$ a_1 + ... + a_m =`` (padded with the experiments' rule)."""
        ops = _operands(operands, 'generate')
        text = addition_text(ops)
        return [TOKEN_ID[EOS]] + [TOKEN_ID[c] for c in text[:text.index('=') + 1]]

    def ids(self, token_ids, offsets=(1, 1)):
        """Both levels of position IDs of a token-id sequence, shape (2, n)."""
        return np.array(coupled_ids([VOCAB[t] for t in token_ids], offsets), dtype=np.int64)

    def fits(self, operands, offsets=(1, 1)):
        """True when every ID of the problem has its own row (the weight set's capacity)."""
        ops = _operands(operands, 'fits')
        return (offsets[0] + pad_length(ops) <= self.max_pos[0]
                and offsets[1] + len(ops) <= self.max_pos[1])

    def _code_tables(self):
        """Rows 0..2^P of each level's codes in the residual layout (IDs wrap modulo 2^P)."""
        if not hasattr(self, '_codes'):
            L, self._codes = self.layout, []
            for level, D in enumerate((self.P1, self.P2)):
                table = np.zeros((2 ** D + 1, L.d_model))
                for p in range(1, 2 ** D + 1):
                    cur, nxt = np.split(position_codes(D, p), 2)
                    table[p, L[f'POS{level + 1}']] = cur
                    table[p, L[f'POS{level + 1}_NEXT']] = nxt
                self._codes.append(table)
        return self._codes

    def _embed_free(self, token_ids, ids):
        x = self.params['tok_emb'][np.asarray(token_ids)]
        for table, D, level_ids in zip(self._code_tables(), (self.P1, self.P2), ids):
            level_ids = np.asarray(level_ids)
            rows = np.where(level_ids > 0, (level_ids - 1) % 2 ** D + 1, 0)
            x = x + table[rows]
        return x

    def run(self, token_ids, offsets=(1, 1), start=0, record=True):
        """Teacher-forced pass over query rows ``start..n-1``.

        Returns a dict with ``logits`` and, when ``record``, ``attn`` (4, rows, n),
        ``resid_pre``, ``resid_mid``, ``resid_post`` (rows, d_model) and ``ids``.
        """
        ids = self.ids(token_ids, offsets)
        if self.norm:
            t = trace(np.asarray(token_ids), self.params, positions=ids)
            return {'logits': t.logits[start:], 'attn': t.attn[0][:, start:],
                    'resid_pre': t.resid_pre[0][start:], 'resid_mid': t.resid_mid[0][start:],
                    'resid_post': t.resid_post[0][start:], 'ids': ids}
        x = self._embed_free(token_ids, ids)
        lay = self.params['layers'][0]
        n = len(x)
        rows = np.arange(start, n)
        mask = np.arange(n)[None, :] <= rows[:, None]
        y = x[start:].copy()
        attn = []
        for h in range(4):
            s = (x[start:] @ lay['Q'][h]) @ (x @ lay['K'][h]).T
            s[~mask] = -np.inf
            s -= s.max(axis=1, keepdims=True)
            w = np.exp(s, out=s)
            w /= w.sum(axis=1, keepdims=True)
            if record:
                attn.append(w)
            y += (w @ (x @ lay['V'][h])) @ lay['P'][h].T
        post = y + np.maximum(y @ lay['M1'] + lay['b1'], 0) @ lay['M2'] + lay['b2']
        out = {'logits': post @ self.params['out_emb'].T}
        if record:
            out.update(attn=np.stack(attn), resid_pre=x[start:], resid_mid=y, resid_post=post,
                       ids=ids)
        return out

    def teacher_forced(self, operands, offsets=(1, 1)):
        """(expected next tokens, predicted next tokens) over the response, as strings."""
        ops = _operands(operands, 'teacher_forced')
        text = addition_text(ops)
        seq = [TOKEN_ID[EOS]] + [TOKEN_ID[c] for c in text]
        start = seq.index(TOKEN_ID['='])
        pred = self.run(seq, offsets, start=start, record=False)['logits'].argmax(-1)
        want = text[start:] + EOS
        return want, ''.join(VOCAB[t] for t in pred)

    def generate(self, operands, offsets=(1, 1), max_steps=None, check_capacity=True):
        """Greedy decoding from ``$ query =``.

        Returns ``(response_tokens, total)``: every generated token after the
        prompt (one-character strings, the final EOS ``$`` included) and the
        integer read from the last scratchpad number (``None`` if the response
        is malformed, e.g. no EOS).
        """
        ops = _operands(operands, 'generate')
        for s in offsets:
            _offset(s, 'generate')
        if (check_capacity or self.norm) and not self.fits(ops, offsets):
            raise ValueError(f'generate: IDs up to (s1 + ell, s2 + m) = '
                             f'{(offsets[0] + pad_length(ops), offsets[1] + len(ops))} must be '
                             f'<= max_pos = {self.max_pos}; got operands {ops} with offsets '
                             f'{tuple(offsets)}')
        prompt = self.prompt(ops)
        ell = pad_length(ops)
        steps = max_steps if max_steps is not None else (len(ops) + 1) * (ell + 1) + 2
        if self.norm:
            out = decode(prompt, self.params, max_steps=steps, eos=TOKEN_ID[EOS],
                         positions=lambda toks: self.ids(toks, offsets))[len(prompt):]
        else:
            out = self._decode_free(prompt, offsets, steps)
        response = [VOCAB[t] for t in out]
        return response, read_total(response)

    def _decode_free(self, prompt, offsets, steps):
        """KV-cached greedy decoding of the norm-free model (one layer: keys depend on x0 only)."""
        lay = self.params['layers'][0]
        seq = list(prompt)
        x = self._embed_free(seq, self.ids(seq, offsets))
        keys = [x @ lay['K'][h] for h in range(4)]
        vals = [x @ lay['V'][h] for h in range(4)]
        out = []
        for _ in range(steps):
            q = x[-1]
            y = q.copy()
            for h in range(4):
                s = keys[h] @ (q @ lay['Q'][h])
                w = np.exp(s - s.max())
                y += (w / w.sum()) @ vals[h] @ lay['P'][h].T
            post = y + np.maximum(y @ lay['M1'] + lay['b1'], 0) @ lay['M2'] + lay['b2']
            token = int(np.argmax(post @ self.params['out_emb'].T))
            out.append(token)
            if token == TOKEN_ID[EOS]:
                break
            seq.append(token)
            row = self._embed_free([token], self.ids(seq, offsets)[:, -1:])
            x = np.vstack([x, row])
            for h in range(4):
                keys[h] = np.vstack([keys[h], row @ lay['K'][h]])
                vals[h] = np.vstack([vals[h], row @ lay['V'][h]])
        return out


def read_total(response):
    """The answer encoded by a response ``b_0 > ... > b_m $`` (None if malformed)."""
    text = ''.join(response)
    if text.count(EOS) != 1 or not text.endswith(EOS):
        return None
    last = text[:-1].split(SEP)[-1]
    if not last or not last.isdigit():
        return None
    return int(last[::-1])


def build_multi_operand_adder(max_digits, max_operands, lam=20.0, norm=False, literal=False,
                              eps=1e-3):
    """The 1-layer 4-head adder for up to ``max_operands`` numbers of ``max_digits`` digits.

    ``lam`` scales the attention scores (exact once lam >= ln(1000 N) / 2);
    ``norm=True`` returns the PreLN port (``.params`` runs on ``taotp.transformer``);
    ``literal=True`` uses the paper's position-code width (off by one: some sizes
    never emit the separator).  ``eps`` is the PreLN port's head-output scale.
    """
    return MultiOperandAdder(max_digits, max_operands, lam, norm, literal, eps)


# ----------------------------------------------------------------------------- figures

def plot_ids(tokens, levels, names=None, title='coupled position IDs', size=None):
    """The coloured ID table: one row per level, one column per token, IDs written in."""
    from matplotlib.figure import Figure
    levels = np.asarray(levels, dtype=float).reshape(len(levels), -1)
    names = names or [f'level {i + 1}' for i in range(len(levels))]
    fig = Figure(figsize=size or (0.3 * len(tokens) + 1.2, 0.45 * len(levels) + 0.9),
                 layout='constrained')
    ax = fig.subplots()
    ax.imshow(levels, cmap='tab20', vmin=0, vmax=20, aspect='auto')
    for (r, c), v in np.ndenumerate(levels):
        ax.text(c, r, str(int(v)), ha='center', va='center', fontsize=7)
    ax.set_xticks(range(len(tokens)), list(tokens), fontsize=8)
    ax.set_yticks(range(len(levels)), names, fontsize=8)
    ax.set_title(title, fontsize=9)
    return fig


# ----------------------------------------------------------------------------- parity (puzzle 9.16)

PARITY_VOCAB = ['0', '1', '=', '$']


def parity_positions(tokens, offset=1):
    """IDs of a parity token-id sequence ``$ bits = scratchpad`` (or a prefix): ``$`` gets 0."""
    chars = [PARITY_VOCAB[t] for t in tokens]
    out, k = [], 0
    for c in chars:
        if c == '$':
            out.append(0)
        elif c == '=':
            out.append(offset)
            k = 0
        else:
            k += 1
            out.append(offset + k)
    return np.array(out, dtype=np.int64)


def build_parity_program(max_bits=100, lam=20.0, eps=1e-3):
    """A 1-layer, 1-head PreLN program for the running-parity scratchpad with coupled IDs.

    The token with ID p reads the query bit with ID p + 1 (one head, BOS as sink);
    the MLP XORs it with its own bit; a last-bit flag (no key with ID p + 1) emits
    ``$``.  Runs on ``taotp.transformer`` with ``parity_positions``; vocabulary
    ``0 1 = $``.  Same paired-feature layout as the adder's PreLN port.
    """
    P = math.ceil(math.log2(max_bits + 3))      # IDs up to 1 + max_bits, next code must not wrap
    L = Layout([('BIT', 2), ('IS_BOS', 2), ('ONES', 2), ('FILL', 2), ('POS', 2 * P),
                ('POS_NEXT', 2 * P), ('X', 2), ('END', 2), ('OUT', 2), ('EOS', 2)])
    d = L.d_model
    first = lambda name: L[name].start          # noqa: E731
    second = lambda name: L[name].start + (L[name].stop - L[name].start) // 2  # noqa: E731
    tok = np.zeros((4, d))
    for t, c in enumerate(PARITY_VOCAB):
        bit = 1.0 if c == '1' else -1.0
        bos = 1.0 if c == '$' else -1.0
        tok[t, L['BIT']] = [bit, -bit]
        tok[t, L['IS_BOS']] = [bos, -bos]
        tok[t, L['ONES']] = [1.0, -1.0]
    f = (2 * P) ** 0.5
    tok[PARITY_VOCAB.index('$'), L['FILL']] = [f, -f]
    pos = np.zeros((2 ** P, d))
    for p in range(1, 2 ** P):
        cur, nxt = np.split(position_codes(P, p), 2)
        pos[p, L['POS']] = np.concatenate([cur, -cur])
        pos[p, L['POS_NEXT']] = np.concatenate([nxt, -nxt])
    sigma0 = ((6 + 4 * P) / d) ** 0.5
    d_head = P + 1
    Q, K = np.zeros((1, d, d_head)), np.zeros((1, d, d_head))
    V, Pm = np.zeros((1, d, 2)), np.zeros((1, d, 2))
    r, qs, ks = lam ** 0.5, sigma0 * d_head ** 0.5, sigma0
    for i in range(P):
        Q[0, first('POS_NEXT') + i, i] = r * qs
        K[0, first('POS') + i, i] = r * ks
    sink = (lam * P) ** 0.5
    Q[0, first('ONES'), P] = sink * qs
    K[0, first('IS_BOS'), P] = K[0, first('ONES'), P] = sink * ks / 2
    V[0, first('BIT'), 0] = V[0, first('ONES'), 0] = sigma0      # 2 * bit (0 or 2)
    V[0, first('IS_BOS'), 1] = V[0, first('ONES'), 1] = sigma0 / 2  # IS_BOS
    Pm[0, first('X'), 0], Pm[0, second('X'), 0] = eps, -eps
    Pm[0, first('END'), 1], Pm[0, second('END'), 1] = eps, -eps
    gain = sigma0 / (2 * eps)
    # units: s = x + y, s - 1, end - 3/4, with x the query bit, y the own bit
    M1, b1 = np.zeros((d, 3)), np.zeros(3)
    for u, shift in ((0, 0.0), (1, -1.0)):
        M1[first('X'), u], M1[second('X'), u] = gain, -gain
        M1[first('BIT'), u] = sigma0 / 2                      # y = (bit pair + 1) / 2
        b1[u] = 0.5 + shift
    M1[first('END'), 2], M1[second('END'), 2] = gain, -gain
    b1[2] = -0.75
    M2, b2 = np.zeros((3, d)), np.zeros(d)
    for u, w in ((0, 1.0), (1, -2.0)):
        M2[u, first('OUT')], M2[u, second('OUT')] = w, -w
    M2[2, first('EOS')], M2[2, second('EOS')] = 4.0, -4.0
    out = np.zeros((4, d))
    out[PARITY_VOCAB.index('1'), first('OUT')] = 1.0
    out[PARITY_VOCAB.index('0'), second('OUT')] = 1.0
    b2[first('OUT')], b2[second('OUT')] = -0.5, 0.5           # OUT pair = (z - 1/2, 1/2 - z)
    out[PARITY_VOCAB.index('$'), first('EOS')] = 10.0
    layer = {'Q': Q, 'K': K, 'V': V, 'P': Pm, 'M1': M1, 'b1': b1, 'M2': M2, 'b2': b2,
             'ln1': {'gamma': 1.0, 'beta': 0.0}, 'ln2': {'gamma': 1.0, 'beta': 0.0}}
    return {'tok_emb': tok, 'pos_emb': pos, 'out_emb': out, 'layers': [layer],
            'lnf': {'gamma': 1.0, 'beta': 0.0}}
