"""Checkers for Chapter 9, Multi-Operand Addition with Position Coupling."""
import numpy as np

from .. import coupling as C
from ..decoding import transformer
from ..params import count_non0_params, count_params
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed


def _as_list(value, what):
    if value is None:
        raise Finding(f'{what} is None (did the function forget to return?)')
    if isinstance(value, str):
        return list(value)
    try:
        return list(value)
    except TypeError:
        raise Finding(f'{what} must be a list; got {type(value).__name__}') from None


def _ints(value, what):
    out = []
    for v in _as_list(value, what):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            if isinstance(v, (float, np.floating)) and float(v).is_integer():
                v = int(v)
            else:
                raise Finding(f'{what} must hold integers; got {v!r}')
        out.append(int(v))
    return out


def _text(value, what):
    items = _as_list(value, what)
    if not all(isinstance(t, str) for t in items):
        raise Finding(f'{what} must be a string or a list of one-character strings; got {value!r}')
    return ''.join(items)


def _problems(seed, count, max_m=6, max_n=5):
    rng = np.random.default_rng(seed)
    out = [[57, 48, 96], [5], [0, 0], [99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99]]
    for _ in range(count):
        m, n = int(rng.integers(1, max_m + 1)), int(rng.integers(1, max_n + 1))
        ops = C.random_operands(m, n, rng=rng)
        if rng.random() < 0.5:   # ragged lengths too
            ops = [int(str(a)[:int(rng.integers(1, len(str(a)) + 1))]) for a in ops]
        out.append(ops)
    return out


# ----------------------------------------------------------------------------- 9.1 - 9.5 formats

@checker('9.1')
def check_9_1(parity_sequence):
    """``parity_sequence(bits, s) -> (tokens, ids)`` with the running-parity scratchpad."""
    rng = np.random.default_rng(91)
    cases = [('0101', 1), ('1', 1), ('0', 3)]
    cases += [(''.join(map(str, rng.integers(0, 2, size=int(rng.integers(1, 101))))),
               int(rng.integers(1, 20))) for _ in range(40)]
    for bits, s in cases:
        want_t, want_p = C.parity_sequence(bits, offset=s)
        got = guard.call(parity_sequence, bits, s, what='your parity_sequence',
                         on=f'bits {bits!r}, s = {s}')
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise Finding(f'bits {bits!r}, s = {s}: expected a pair (tokens, ids); got {got!r}')
        tokens, ids = _text(got[0], 'tokens'), _ints(got[1], 'ids')
        if tokens != ''.join(want_t):
            raise Finding(f'bits {bits!r}: expected tokens {"".join(want_t)}, got {tokens}', bits)
        if ids != want_p:
            raise Finding(f'bits {bits!r}, s = {s}: expected IDs {want_p}, got {ids}', bits)
    return Passed(f'tokens and IDs equal the reference on {len(cases)} bit strings '
                  f'(up to 100 bits, offsets 1..19)')


@checker('9.2')
def check_9_2(scratchpad_text):
    """``scratchpad_text(operands) -> '057+048+096=000>750>501>102'`` (experiments' padding)."""
    problems = _problems(92, 40)
    for ops in problems:
        want = C.scratchpad_text(ops)
        got = _text(guard.call(scratchpad_text, list(ops), what='your scratchpad_text',
                               on=f'operands {ops}'), 'your result')
        if got != want:
            raise Finding(f'operands {ops}: expected {want}, got {got}', ops)
    return Passed(f'the same string as the reference on {len(problems)} operand lists '
                  f'(1..11 operands, ragged lengths, zeros)')


@checker('9.3')
def check_9_3(bilevel_ids):
    """``bilevel_ids(operands, s1, s2) -> (level1, level2)`` for the addition format."""
    rng = np.random.default_rng(93)
    problems = _problems(93, 40)
    checked = 0
    for ops in problems:
        s1, s2 = (1, 1) if checked == 0 else (int(rng.integers(1, 20)), int(rng.integers(1, 20)))
        _, w1, w2 = C.addition_sequence(ops, offsets=(s1, s2))
        got = guard.call(bilevel_ids, list(ops), s1, s2, what='your bilevel_ids',
                         on=f'operands {ops}, s1 = {s1}, s2 = {s2}')
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise Finding(f'operands {ops}: expected a pair (level1, level2); got {got!r}')
        g1, g2 = _ints(got[0], 'level 1'), _ints(got[1], 'level 2')
        if g1 != w1:
            raise Finding(f'operands {ops}, s1 = {s1}: expected level-1 IDs {w1}, got {g1}', ops)
        if g2 != w2:
            raise Finding(f'operands {ops}, s2 = {s2}: expected level-2 IDs {w2}, got {g2}', ops)
        checked += 1
    return Passed(f'both levels equal the reference on {checked} problems with random offsets')


@checker('9.4')
def check_9_4(multiplication_sequence):
    """``multiplication_sequence(a, b) -> (text, level1, level2, level3)``, all offsets 1."""
    rng = np.random.default_rng(94)
    pairs = [(37, 925), (0, 5), (9, 9)] + [
        (int(rng.integers(0, 10 ** int(rng.integers(1, 7)))),
         int(rng.integers(0, 10 ** int(rng.integers(1, 6))))) for _ in range(30)]
    for a, b in pairs:
        want = C.multiplication_sequence(a, b)
        got = guard.call(multiplication_sequence, a, b, what='your multiplication_sequence',
                         on=f'{a} * {b}')
        if not isinstance(got, (tuple, list)) or len(got) != 4:
            raise Finding(f'{a} * {b}: expected (text, level1, level2, level3); got {got!r}')
        if _text(got[0], 'text') != ''.join(want[0]):
            raise Finding(f'{a} * {b}: expected {"".join(want[0])}, got {_text(got[0], "text")}',
                          (a, b))
        for level in (1, 2, 3):
            g = _ints(got[level], f'level {level}')
            if g != want[level]:
                raise Finding(f'{a} * {b}: expected level-{level} IDs '
                              f'{"".join(map(str, want[level])) if max(want[level]) < 10 else want[level]}, '
                              f'got {g}', (a, b))
    return Passed(f'text and all three levels equal the reference on {len(pairs)} products')


@checker('9.5')
def check_9_5(keys):
    """``keys(operands, index) -> [i, j]``: the two positions head 1 must read at ``index``."""
    checked = 0
    for ops in _problems(95, 12, max_m=5, max_n=4):
        if len(ops) < 2:
            continue
        tokens, _, _ = C.addition_sequence(ops)
        eq = tokens.index('=')
        start = eq + C.pad_length(ops) + 1   # the arrow in front of b_1
        for index in range(start, len(tokens)):
            want = C.keys_for(tokens, index)
            if not want:
                continue
            got = guard.call(keys, list(ops), index, what='your keys',
                             on=f'operands {ops}, index {index}')
            got = sorted(_ints(got, 'your keys'))
            if got != want:
                raise Finding(f'operands {ops} ({"".join(tokens)}), index {index} '
                              f'(token {tokens[index]!r}): expected {want}, got {got}',
                              (ops, index))
            checked += 1
    return Passed(f'the right pair of keys at {checked} response positions')


# ----------------------------------------------------------------------------- 9.6 - 9.10 pieces

@checker('9.6')
def check_9_6(cube):
    """``cube(D, k) -> v^D_k`` in {+1, -1}^D (bits of k - 1, most significant first)."""
    for D in range(1, 7):
        codes = []
        for k in range(1, 2 ** D + 1):
            got = guard.array(guard.call(cube, D, k, what='your cube', on=f'D = {D}, k = {k}'),
                              shape=(D,), what=f'cube({D}, {k})')
            want = C.cube_code(D, k)
            if not np.array_equal(got, want):
                raise Finding(f'D = {D}, k = {k}: expected {want.astype(int).tolist()}, got '
                              f'{np.asarray(got).tolist()}', (D, k))
            codes.append(got)
        codes = np.array(codes, dtype=float)
        off = (codes @ codes.T)[~np.eye(len(codes), dtype=bool)]
        assert off.size == 0 or off.max() <= D - 2
    return Passed('every code for D = 1..6 (norm D, distinct codes at most D - 2 apart)')


@checker('9.7')
def check_9_7(head1):
    """``head1(P1, P2, lam) -> (Wq, Wk)`` of shapes (d, k): the digit-sum head's scores."""
    model = C.build_multi_operand_adder(6, 7)           # P1 = 4, P2 = 3
    P1, P2, lam = model.P1, model.P2, 20.0
    d = model.layout.d_model
    got = guard.call(head1, P1, P2, lam, what='your head1', on=f'P1 = {P1}, P2 = {P2}')
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise Finding(f'expected a pair (Wq, Wk); got {type(got).__name__}')
    Wq = guard.array(got[0], what='Wq')
    Wk = guard.array(got[1], what='Wk')
    if Wq.ndim != 2 or Wq.shape[0] != d or Wk.shape != Wq.shape:
        raise Finding(f'Wq and Wk must both have shape ({d}, k) for P1 = {P1}, P2 = {P2}; got '
                      f'{Wq.shape} and {Wk.shape}')
    checked = 0
    num = model.layout['NUM'].start
    for ops in _problems(97, 10, max_m=7, max_n=6):
        if not model.fits(ops):         # 11 operands: more than the tables hold
            continue
        seq = model.tokens(ops)[:-1]
        run = model.trace(seq)
        x = run.resid_pre[0]                    # token plus position embeddings
        start = seq.index(C.TOKEN_ID['='])
        n = len(seq)
        mask = np.tril(np.ones((n, n), dtype=bool))
        s = np.where(mask, (x @ Wq) @ (x @ Wk).T, -np.inf)   # the paper's scores: no 1/sqrt(d_head)
        w = np.exp(s - s.max(1, keepdims=True))
        w /= w.sum(1, keepdims=True)
        pre_sum = w @ (3 * x[:, num])
        want_w = run.attn[0][0]
        want = want_w @ (3 * x[:, num])
        for q in range(start, n):
            if abs(pre_sum[q] - want[q]) > 0.01:
                keys_want = [int(i) for i in np.flatnonzero(want_w[q] > 0.05)]
                keys_got = [int(i) for i in np.flatnonzero(w[q] > 0.05)]
                raise Finding(f'operands {ops}, query position {q} (token '
                              f'{C.VOCAB[seq[q]]!r}): PRE_SUM should be {want[q]:.2f} '
                              f'(attending to {keys_want}), got {pre_sum[q]:.2f} (attending '
                              f'to {keys_got})', (ops, q))
            checked += 1
    return Passed(f'PRE_SUM within 0.01 of the reference at {checked} response positions')


@checker('9.8')
def check_9_8(carry_out):
    """``carry_out(pair_sum, written_digit) -> 0 or 1``: the carry leaving a place."""
    for a in range(10):
        for b in range(10):
            for c in (0, 1):
                o = (a + b + c) % 10
                got = guard.call(carry_out, a + b, o, what='your carry_out',
                                 on=f'pair sum {a + b}, written digit {o}')
                want = (a + b + c) // 10
                if isinstance(got, (bool, np.bool_)):
                    got = int(got)
                if got != want:
                    raise Finding(f'digits {a} + {b} with carry in {c}: pair sum {a + b}, '
                                  f'written digit {o}: expected carry {want}, got {got!r}',
                                  (a + b, o))
    return Passed('all 200 (digit, digit, carry-in) cases')


def _flag_cases():
    """(PRE_ARROW, PRE_EOS, arrow wanted, eos wanted) at every response position type."""
    model = C.build_multi_operand_adder(3, 5)
    L = model.layout
    out = []
    for ops in ([57, 48, 96], [5], [1, 2], [123, 4, 56, 7, 890]):
        full = model.tokens(ops)
        seq = full[:-1]
        mid = model.trace(seq).resid_mid[0]
        start = seq.index(C.TOKEN_ID['='])
        for q, t in zip(range(start, len(seq)), full[start + 1:]):
            out.append((float(mid[q, L['PRE_ARROW'].start]), float(mid[q, L['PRE_EOS'].start]),
                        C.VOCAB[t] == '>', C.VOCAB[t] == '$', ops, q))
    return out


@checker('9.9')
def check_9_9(flags):
    """``flags(pre_arrow, pre_eos) -> (arrow, eos)``: readout 10*arrow and 100*eos vs digit 1."""
    cases = _flag_cases()
    for pa, pe, want_arrow, want_eos, ops, q in cases:
        got = guard.call(flags, pa, pe, what='your flags', on=f'PRE_ARROW {pa:.3f}, '
                                                             f'PRE_EOS {pe:.3f}')
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise Finding(f'expected a pair (arrow, eos); got {got!r}')
        arrow, eos = (float(v) for v in got)
        logits = {'digit': 1.0, '>': 10 * arrow, '$': 100 * eos}
        winner = max(logits, key=logits.get)
        want = '$' if want_eos else '>' if want_arrow else 'digit'
        if winner != want:
            raise Finding(f'operands {ops}, response position {q} (PRE_ARROW = {pa:.3f}, '
                          f'PRE_EOS = {pe:.3f}): the next token is a {want} but your flags '
                          f'(arrow {arrow:.3f}, eos {eos:.3f}) make the readout pick {winner}',
                          (pa, pe))
    return Passed(f'the right winner (digit, separator or EOS) at all {len(cases)} response '
                  f'positions of 4 problems')


@checker('9.10')
def check_9_10(digit_mlp):
    """``digit_mlp(pre_sum, pre_carry, num) -> 10 values``: exactly one-hot at the next digit."""
    for S in range(19):
        for prev in range(19):
            for cin in (0, 1):
                written = (prev + cin) % 10
                carry = (prev + cin) // 10
                for delta in (-0.09, 0.0, 0.09):
                    got = guard.array(guard.call(digit_mlp, S + delta, prev, written,
                                                 what='your digit_mlp'),
                                      shape=(10,), what='digit_mlp output')
                    want = np.eye(10)[(S + carry) % 10]
                    if not np.allclose(got, want, atol=1e-6):
                        raise Finding(f'PRE_SUM {S + delta:g}, PRE_CARRY {prev}, NUM {written} '
                                      f'(carry in {carry}): expected one-hot at '
                                      f'{(S + carry) % 10}, got {np.round(got, 3).tolist()}',
                                      (S + delta, prev, written))
    return Passed('exactly one-hot and correct for every pair sum 0..18, previous pair sum '
                  '0..18 and carry, with PRE_SUM perturbed by up to 0.09')


# ----------------------------------------------------------------------------- 9.11 - 9.14

@checker('9.11')
def check_9_11(build):
    """``build(max_digits, max_operands)`` -> a model with ``generate(operands)``."""
    model = guard.call(build, 8, 8, what='your build', on='(8, 8)', seconds=60)
    if not hasattr(model, 'generate'):
        raise Finding(f'build(8, 8) must return an object with .generate; got '
                      f'{type(model).__name__}')
    rng = np.random.default_rng(911)
    checked = 0
    for m in (1, 2, 3, 5, 8):
        for n in (1, 2, 5, 8):
            ops = C.random_operands(m, n, rng=rng)
            want = C.scratchpad_text(ops).split('=', 1)[1] + '$'
            got = guard.call(model.generate, ops, what='your generate', on=f'operands {ops}')
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise Finding(f'generate must return (response_tokens, total); got {got!r}')
            text = _text(got[0], 'response tokens')
            if text != want or got[1] != sum(ops):
                raise Finding(f'operands {ops}: expected {want} (total {sum(ops)}), got {text} '
                              f'(total {got[1]!r})', ops)
            checked += 1
    return Passed(f'one build(8, 8), exact responses with EOS once on {checked} problems '
                  f'from 1 to 8 operands of 1 to 8 digits')


@checker('9.12')
def check_9_12(size):
    """``size(n, m) -> (ell, P1, P2, d_model)`` for the norm-free construction."""
    for n, m in ((2, 3), (10, 10), (13, 13), (30, 30), (100, 100), (1, 1), (6, 7), (5, 99)):
        z = C.sizes(n, m)
        want = (z['ell'], z['P1'], z['P2'], z['d_model'])
        got = guard.call(size, n, m, what='your size', on=f'n = {n}, m = {m}')
        got = tuple(_ints(got, 'your size'))
        if got != want:
            paper = C.sizes(n, m, literal=True)
            hint = ''
            if got[1:2] == (paper['P1'],) and paper['P1'] != z['P1']:
                hint = (f' -- that is the paper\'s P1 = ceil(log2 ell); the last digit\'s ID '
                        f's1 + ell then equals 2^P1 and its next code wraps onto the '
                        f'separators\' code, so use 2^P1 >= ell + 2')
            raise Finding(f'n = {n}, m = {m}: expected (ell, P1, P2, d) = {want}, got {got}{hint}',
                          (n, m))
    return Passed('(ell, P1, P2, d) right on 8 sizes, including the ones where the paper\'s '
                  'formula is a bit short')


@checker('9.13')
def check_9_13(operands):
    """A list of operands on which the paper's literal code width fails (and the fix works)."""
    try:
        ops = C.operand_list(operands, 'your operands')
    except ValueError as exc:
        raise Finding(str(exc)) from None
    if len(ops) > 20 or max(len(str(a)) for a in ops) > 20:
        raise Finding(f'keep it small: at most 20 operands of 20 digits; got {len(ops)} operands')
    n, m = max(len(str(a)) for a in ops), len(ops)
    literal = C.build_multi_operand_adder(n, m, literal=True)
    fixed = C.build_multi_operand_adder(n, m)
    want, got = literal.teacher_forced(ops, check_capacity=False)   # IDs wrap, as codes do
    if want == got:
        raise Finding(f'operands {ops}: the literal width (P1 = {literal.P1}) adds them '
                      f'correctly ({got}); look for a padded width ell with s1 + ell = 2^P1',
                      ops)
    want_f, got_f = fixed.teacher_forced(ops)
    assert want_f == got_f
    return Passed(f'operands {ops}: the literal width P1 = {literal.P1} predicts {got} instead '
                  f'of {want}; the corrected P1 = {fixed.P1} is exact')


@checker('9.14')
def check_9_14(answer):
    """``(operands, lam)``: lam is exact on that problem and lam - 0.25 is not."""
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise Finding(f'expected a pair (operands, lam); got {answer!r}')
    try:
        ops = C.operand_list(answer[0], 'your operands')
    except ValueError as exc:
        raise Finding(str(exc)) from None
    lam = answer[1]
    if not isinstance(lam, (int, float, np.floating)) or not 0.25 < lam <= 20:
        raise Finding(f'lam must be a number in (0.25, 20]; got {lam!r}')
    if round(lam * 4) != lam * 4:
        raise Finding(f'lam must lie on the grid 0.25, 0.5, ...; got {lam}')
    if len(ops) > 20 or max(len(str(a)) for a in ops) > 20:
        raise Finding('keep it small: at most 20 operands of 20 digits')
    n, m = max(len(str(a)) for a in ops), len(ops)
    at = C.build_multi_operand_adder(n, m, lam=lam).teacher_forced(ops)
    below = C.build_multi_operand_adder(n, m, lam=lam - 0.25).teacher_forced(ops)
    if at[0] != at[1]:
        raise Finding(f'operands {ops}: lam = {lam} is not exact yet (predicts {at[1]}, '
                      f'wanted {at[0]})', ops)
    if below[0] == below[1]:
        raise Finding(f'operands {ops}: lam = {lam - 0.25} is exact too; go lower', ops)
    N = len(C.scratchpad_text(ops)) + 1
    return Passed(f'operands {ops} (N = {N}): exact from lam = {lam}, not at {lam - 0.25}; the '
                  f'sufficient bound ln(1000 N)/2 is {C.lambda_bound(N):.2f}')


# ----------------------------------------------------------------------------- 9.15 base b

def base_trapezoid(k, t, w, r, b):
    """Two ReLU trapezoids: 1 on [k, k + w] and [k + b, k + b + w], ramps of width r."""
    t = np.asarray(t, dtype=np.float64)

    def one(c):
        up = np.maximum(t - c + r, 0) - np.maximum(t - c, 0)
        down = np.maximum(t - c - w, 0) - np.maximum(t - c - w - r, 0)
        return (up - down) / r

    return one(k) + one(k + b)


@checker('9.15')
def check_9_15(shape):
    """``shape(b) -> (w, r, c0)``: plateau, ramp and offset giving an exactly one-hot digit block."""
    for b in (2, 3, 7, 16, 10):
        got = guard.call(shape, b, what='your shape', on=f'base {b}')
        vals = guard.array(got, shape=(3,), what=f'shape({b})')
        w, r, c0 = (float(v) for v in vals)
        if not (w > 0 and r > 0 and w + r <= 1 + 1e-12):
            raise Finding(f'base {b}: need w > 0, r > 0 and w + r <= 1 so neighbouring '
                          f'trapezoids do not overlap; got w = {w}, r = {r}', b)
        S, prev, cin, delta = np.meshgrid(np.arange(2 * b - 1), np.arange(2 * b - 1), (0, 1),
                                          (-0.02, 0.0, 0.02), indexing='ij')
        written, carry = (prev + cin) % b, (prev + cin) // b
        g = S + delta + (prev - written) / b + c0
        block = np.stack([base_trapezoid(k, g, w, r, b) for k in range(b)], axis=-1)
        want = np.eye(b)[(S + carry) % b]
        bad = np.argwhere(np.abs(block - want).max(-1) > 1e-9)
        if len(bad):
            i = tuple(bad[0])
            raise Finding(f'base {b}, pair sum {S[i]}, carry in {carry[i]}: the digit block is '
                          f'{np.round(block[i], 3).tolist()}, not exactly one-hot at '
                          f'{(S[i] + carry[i]) % b}', (b, int(S[i]), int(carry[i])))
    return Passed('exactly one-hot digit blocks in bases 2, 3, 7, 10 and 16 for every pair sum '
                  'and carry, with the pair sum perturbed by 0.02')


# ----------------------------------------------------------------------------- 9.16 - 9.19

@checker('9.16')
def check_9_16(params):
    """A 1-layer book-format program for the parity scratchpad (vocabulary ``0 1 = $``)."""
    guard.program(params)
    if np.shape(params['tok_emb'])[0] != len(C.PARITY_VOCAB):
        raise Finding(f'the vocabulary is 0 1 = $ (4 tokens); tok_emb has '
                      f'{np.shape(params["tok_emb"])[0]} rows')
    if len(params['layers']) != 1:
        raise Finding(f'budget: 1 layer; got {len(params["layers"])}')
    if isinstance(params['pos_emb'], (list, tuple)) or np.shape(params['pos_emb'])[0] < 102:
        raise Finding('pos_emb must be one table with at least 102 rows (IDs 0..101)')
    rng = np.random.default_rng(916)
    lengths = [1, 2, 3, 100] + [int(n) for n in rng.integers(1, 101, size=16)]
    for n in lengths:
        bits = ''.join(map(str, rng.integers(0, 2, size=n)))
        tokens, _ = C.parity_sequence(bits)
        seq = [C.PARITY_VOCAB.index('$')] + [C.PARITY_VOCAB.index(c) for c in tokens]
        logits = guard.run_program(
            lambda: transformer(seq, **params, positions=C.parity_positions(seq)),
            on=f'bits {bits}')
        start = n + 1
        got = ''.join(C.PARITY_VOCAB[t] for t in np.asarray(logits)[start:].argmax(-1))
        want = ''.join(tokens[n + 1:]) + '$'
        if got != want:
            raise Finding(f'bits {bits}: teacher-forced predictions {got}, expected {want}', bits)
    return Passed(f'exact running parities and EOS on {len(lengths)} bit strings of 1 to 100 '
                  f'bits, teacher-forced, IDs from offset 1')


@checker('9.17')
def check_9_17(needed):
    """``needed(operands, j) -> positions``: what answer digit j reads without a scratchpad."""
    checked = 0
    for ops in _problems(917, 10, max_m=8, max_n=4):
        tokens, pos = C.baseline_sequence(ops)
        eq = tokens.index('=')
        for j in range(C.pad_length(ops)):
            want = [i for i in range(eq) if tokens[i].isdigit() and pos[i] == 2 + j]
            got = sorted(_ints(guard.call(needed, list(ops), j, what='your needed',
                                          on=f'operands {ops}, j = {j}'), 'your positions'))
            if got != want:
                raise Finding(f'operands {ops} ({"".join(tokens)}), digit {j}: expected '
                              f'{want}, got {got}', (ops, j))
            checked += 1
    return Passed(f'the {checked} answer digits each read one digit per operand (fan-in m)')


@checker('9.18')
def check_9_18(counts):
    """``counts(n, m) -> (total, non_zero)`` of the norm-free adder in the book's census."""
    for n, m in ((2, 3), (10, 10), (30, 30), (4, 1)):
        model = C.build_multi_operand_adder(n, m)
        want = (count_params(model.params)['n_params'], count_non0_params(model.params)['n_params'])
        got = tuple(_ints(guard.call(counts, n, m, what='your counts', on=f'n = {n}, m = {m}'),
                          'your counts'))
        if got != want:
            raise Finding(f'n = {n}, m = {m}: expected (total, non-zero) = {want}, got {got}',
                          (n, m))
    return Passed('total and non-zero counts right for 4 sizes')


@checker('9.19')
def check_9_19(params):
    """A book-format PreLN program (two position tables) adding up to 4 operands of 4 digits."""
    guard.program(params)
    if not isinstance(params['pos_emb'], (list, tuple)) or len(params['pos_emb']) != 2:
        raise Finding('pos_emb must be a list of two tables (level 1, level 2)')
    if np.shape(params['tok_emb'])[0] != len(C.VOCAB):
        raise Finding(f'the vocabulary is {"".join(C.VOCAB)} ({len(C.VOCAB)} tokens); tok_emb '
                      f'has {np.shape(params["tok_emb"])[0]} rows')
    rng = np.random.default_rng(919)
    checked = 0
    for m in (1, 2, 3, 4):
        for n in (1, 2, 3, 4):
            ops = C.random_operands(m, n, rng=rng)
            text = C.scratchpad_text(ops)
            seq = [C.TOKEN_ID['$']] + [C.TOKEN_ID[c] for c in text]
            ids = np.array(C.coupled_ids([C.VOCAB[t] for t in seq]), dtype=np.int64)
            logits = guard.run_program(lambda: transformer(seq, **params, positions=ids),
                                       on=f'operands {ops}')
            start = seq.index(C.TOKEN_ID['='])
            got = ''.join(C.VOCAB[t] for t in np.asarray(logits)[start:].argmax(-1))
            want = text[start:] + '$'
            if got != want:
                raise Finding(f'operands {ops}: teacher-forced predictions {got}, expected '
                              f'{want}', ops)
            checked += 1
    return Passed(f'exact teacher-forced response (every token, EOS once) on {checked} problems '
                  f'up to 4 operands of 4 digits, IDs offset (1, 1)')


PUZZLES = [
    Puzzle('9.1', 'Parity scratchpad and coupled IDs', 'checked', check_9_1),
    Puzzle('9.2', 'The addition format (padding, reversed running sums)', 'checked', check_9_2),
    Puzzle('9.3', 'Bi-level position IDs', 'checked', check_9_3),
    Puzzle('9.4', 'Multiplication: two-stage scratchpad and tri-level IDs', 'checked', check_9_4),
    Puzzle('9.5', 'Which keys does a response digit need?', 'checked', check_9_5),
    Puzzle('9.6', 'Hypercube position codes', 'checked', check_9_6),
    Puzzle('9.7', 'Head 1: the digit-pair sum', 'checked', check_9_7),
    Puzzle('9.8', 'Head 2 and the carry identity', 'checked', check_9_8),
    Puzzle('9.9', 'The separator and EOS flags', 'checked', check_9_9),
    Puzzle('9.10', 'The digit MLP', 'checked', check_9_10),
    Puzzle('9.11', 'Assemble the adder', 'checked', check_9_11),
    Puzzle('9.12', 'Size calculator', 'checked', check_9_12),
    Puzzle('9.13', 'Find the bug in the code width', 'checked', check_9_13),
    Puzzle('9.14', 'The smallest exact lambda', 'checked', check_9_14),
    Puzzle('9.15', 'Addition in base b', 'checked', check_9_15),
    Puzzle('9.16', 'Design your own: a 1-layer parity program', 'checked', check_9_16,
           '1 layer'),
    Puzzle('9.17', 'Without the scratchpad, fan-in grows', 'checked', check_9_17),
    Puzzle('9.18', 'Count the parameters', 'checked', check_9_18),
    Puzzle('9.19', 'Port the adder to PreLN', 'checked', check_9_19, 'PreLN, 1 layer, 4 heads'),
]
