"""Checkers for Chapter 9, Multi-Operand Addition with Position Coupling."""
import numpy as np

from .. import coupling as C
from ..decoding import transformer
from ..params import count_non0_params, count_params
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed


# the package's own answer to a "write this function" puzzle: a submission that calls it is
# refused once its outputs are all right (a wrong one gets its counterexample first); the
# references write each one, and helpers such as pad_length stay allowed
PACKAGE_ANSWERS = {
    '9.1': ('parity_sequence', 'parity_positions'),
    '9.2': ('scratchpad_text', 'addition_sequence'),
    '9.3': ('addition_sequence', 'coupled_ids'),
    '9.4': ('multiplication_sequence',),
    '9.5': ('keys_for',),
    '9.6': ('cube_code', 'position_codes'),
    '9.8': ('carry_out',),
    '9.12': ('sizes',),
    '9.18': ('build_adder_params',),       # every builder of the adder goes through it
}


class _Watch:
    """Calls a submission (``guard.call``) and notes whether it used the package's answer."""

    def __init__(self, puzzle, what):
        self.what = what
        self.forbidden = {getattr(C, name).__code__: f'taotp.coupling.{name}'
                          for name in PACKAGE_ANSWERS[puzzle]}
        self.seen = []

    def __call__(self, fn, *args, **kwargs):
        with guard.watching(self.forbidden) as seen:
            out = guard.call(fn, *args, **kwargs)
        if seen and not self.seen:
            self.seen.append(seen[0])
        return out

    def ok(self, message):
        """``Passed(message)``, unless a call handed the work to the package."""
        what = self.what
        if self.seen:
            raise Finding(f'{what} switched off the check\'s watch (sys.settrace)'
                          if self.seen[0] == 'sys.settrace' else
                          f'{what} gives the right outputs by calling {self.seen[0]}, the '
                          f'package\'s own answer to this puzzle; write it yourself')
        return Passed(message)


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
    if not all(isinstance(t, str) and len(t) == 1 for t in items):
        raise Finding(f'{what} must be a string or a list of one-character strings (one per '
                      f'token); got {value!r:.120}')
    return ''.join(items)


# every padding boundary: m = 1, 9, 10, 11, 100 operands, all nines (carries everywhere), zeros,
# ragged lengths, a power of ten
BOUNDARY_PROBLEMS = ((57, 48, 96), (5,), (0,), (0, 0), (1, 2), (9,) * 9, (9,) * 10, (9,) * 11,
                     (99,) * 11, (7,) * 100, (99999999,) * 8, (1, 99999999),
                     (10 ** 7, 0, 10 ** 7), (999, 1, 0))     # tuples: read-only


def _problems(seed, count, max_m=6, max_n=5):
    """The boundary problems, then ``count`` seeded random ones (half of them ragged)."""
    rng = np.random.default_rng(seed)
    out = [list(ops) for ops in BOUNDARY_PROBLEMS]
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
    own = _Watch('9.1', 'your parity_sequence')
    rng = np.random.default_rng(91)
    cases = [('0101', 1), ('1', 1), ('0', 3), ('0' * 100, 1), ('1' * 100, 7), ('01' * 50, 50),
             ('1' * 64, 1)]
    cases += [(''.join(map(str, rng.integers(0, 2, size=int(rng.integers(1, 101))))),
               int(rng.integers(1, 20))) for _ in range(40)]
    for bits, s in cases:
        got = own(parity_sequence, bits, s, what='your parity_sequence',
                  on=f'bits {bits!r}, s = {s}')
        want_t, want_p = C.parity_sequence(bits, offset=s)   # expected values made after the call
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise Finding(f'bits {bits!r}, s = {s}: expected a pair (tokens, ids); got {got!r}')
        tokens, ids = _text(got[0], 'tokens'), _ints(got[1], 'ids')
        if tokens != ''.join(want_t):
            raise Finding(f'bits {bits!r}: expected tokens {"".join(want_t)}, got {tokens}', bits)
        if ids != want_p:
            raise Finding(f'bits {bits!r}, s = {s}: expected IDs {want_p}, got {ids}', bits)
    return own.ok(f'tokens and IDs equal the reference on {len(cases)} bit strings '
                  f'(1 to 100 bits: all zeros, all ones, alternating, random; offsets 1 to 50)')


@checker('9.2')
def check_9_2(scratchpad_text):
    """``scratchpad_text(operands) -> '057+048+096=000>750>501>102'`` (experiments' padding)."""
    own = _Watch('9.2', 'your scratchpad_text')
    problems = _problems(92, 40)
    for ops in problems:
        got = _text(own(scratchpad_text, list(ops), what='your scratchpad_text',
                        on=f'operands {ops}'), 'your result')
        want = C.scratchpad_text(ops)
        if got != want:
            raise Finding(f'operands {ops}: expected {want}, got {got}', ops)
    return own.ok(f'the same string as the reference on {len(problems)} operand lists '
                  f'(1 to 100 operands of up to 8 digits: every padding boundary, all nines, '
                  f'zeros, ragged lengths)')


@checker('9.3')
def check_9_3(bilevel_ids):
    """``bilevel_ids(operands, s1, s2) -> (level1, level2)`` for the addition format."""
    own = _Watch('9.3', 'your bilevel_ids')
    rng = np.random.default_rng(93)
    problems = _problems(93, 40)
    checked = 0
    for ops in problems:
        s1, s2 = (1, 1) if checked == 0 else (int(rng.integers(1, 20)), int(rng.integers(1, 20)))
        got = own(bilevel_ids, list(ops), s1, s2, what='your bilevel_ids',
                  on=f'operands {ops}, s1 = {s1}, s2 = {s2}')
        _, w1, w2 = C.addition_sequence(ops, offsets=(s1, s2))
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise Finding(f'operands {ops}: expected a pair (level1, level2); got {got!r}')
        g1, g2 = _ints(got[0], 'level 1'), _ints(got[1], 'level 2')
        if g1 != w1:
            raise Finding(f'operands {ops}, s1 = {s1}: expected level-1 IDs {w1}, got {g1}', ops)
        if g2 != w2:
            raise Finding(f'operands {ops}, s2 = {s2}: expected level-2 IDs {w2}, got {g2}', ops)
        checked += 1
    return own.ok(f'both levels equal the reference on {checked} problems (1 to 100 operands, '
                  f'every padding boundary) with offsets (1, 1) and random ones up to 19')


@checker('9.4')
def check_9_4(multiplication_sequence):
    """``multiplication_sequence(a, b) -> (text, level1, level2, level3)``, all offsets 1."""
    own = _Watch('9.4', 'your multiplication_sequence')
    rng = np.random.default_rng(94)
    pairs = [(37, 925), (0, 5), (9, 9), (5, 0), (0, 0), (1, 1), (905, 1203), (99999, 99999),
             (10 ** 5, 7), (7, 10 ** 5)] + [
        (int(rng.integers(0, 10 ** int(rng.integers(1, 7)))),
         int(rng.integers(0, 10 ** int(rng.integers(1, 6))))) for _ in range(30)]
    for a, b in pairs:
        got = own(multiplication_sequence, a, b, what='your multiplication_sequence',
                  on=f'{a} * {b}')
        want = C.multiplication_sequence(a, b)
        if not isinstance(got, (tuple, list)) or len(got) != 4:
            raise Finding(f'{a} * {b}: expected (text, level1, level2, level3); got {got!r}')
        if _text(got[0], 'text') != ''.join(want[0]):
            raise Finding(f'{a} * {b}: expected {"".join(want[0])}, got {_text(got[0], "text")}',
                          (a, b))
        for level in (1, 2, 3):
            g = _ints(got[level], f'level {level}')
            if g != want[level]:
                shown = ''.join(map(str, want[level])) if max(want[level]) < 10 else want[level]
                raise Finding(f'{a} * {b}: expected level-{level} IDs {shown}, got {g}', (a, b))
    return own.ok(f'text and all three levels equal the reference on {len(pairs)} products '
                  f'(zeros, ones, zeros inside a factor, all nines, powers of ten, random)')


@checker('9.5')
def check_9_5(keys):
    """``keys(operands, index) -> [i, j]``: the two positions head 1 must read at ``index``."""
    own = _Watch('9.5', 'your keys')
    checked = 0
    for ops in _problems(95, 12, max_m=5, max_n=4):
        if len(ops) < 2 or len(ops) > 12:
            continue
        tokens, _, _ = C.addition_sequence(ops)
        eq = tokens.index('=')
        start = eq + C.pad_length(ops) + 1   # the arrow in front of b_1
        for index in range(start, len(tokens)):
            if not C.keys_for(tokens, index):
                continue
            got = own(keys, list(ops), index, what='your keys',
                      on=f'operands {ops}, index {index}')
            got = sorted(_ints(got, 'your keys'))
            want = C.keys_for(tokens, index)
            if got != want:
                raise Finding(f'operands {ops} ({"".join(tokens)}), index {index} '
                              f'(token {tokens[index]!r}): expected {want}, got {got}',
                              (ops, index))
            checked += 1
    return own.ok(f'the right pair of keys at {checked} response positions of problems with '
                  f'2 to 11 operands (all nines, zeros, ragged, random)')


# ----------------------------------------------------------------------------- 9.6 - 9.10 pieces

@checker('9.6')
def check_9_6(cube):
    """``cube(D, k) -> v^D_k`` in {+1, -1}^D (bits of k - 1, most significant first)."""
    own = _Watch('9.6', 'your cube')
    for D in range(1, 7):
        codes = []
        for k in range(1, 2 ** D + 1):
            got = guard.array(own(cube, D, k, what='your cube', on=f'D = {D}, k = {k}'),
                              shape=(D,), what=f'cube({D}, {k})')
            want = C.cube_code(D, k)
            if not np.array_equal(got, want):
                raise Finding(f'D = {D}, k = {k}: expected {want.astype(int).tolist()}, got '
                              f'{np.asarray(got).tolist()}', (D, k))
            codes.append(got)
    for D, k in ((10, 1), (10, 2), (10, 512), (10, 513), (10, 1024), (12, 2731), (16, 65536)):
        got = guard.array(own(cube, D, k, what='your cube', on=f'D = {D}, k = {k}'),
                          shape=(D,), what=f'cube({D}, {k})')
        want = C.cube_code(D, k)
        if not np.array_equal(got, want):
            raise Finding(f'D = {D}, k = {k}: expected {want.astype(int).tolist()}, got '
                          f'{np.asarray(got).tolist()}', (D, k))
    return own.ok('every code for D = 1..6 and codes up to D = 16 (k = 1, the middle, 2^D)')


HEAD1_CASES = ((6, 7, 20.0), (2, 3, 20.0), (20, 40, 20.0), (6, 7, 3.0))   # (n, m, lam)


@checker('9.7')
def check_9_7(head1):
    """``head1(P1, P2, lam) -> (Wq, Wk)`` of shapes (d, k): the digit-sum head's scores."""
    checked = 0
    for c, (n_max, m_max, lam) in enumerate(HEAD1_CASES):
        model = C.build_multi_operand_adder(n_max, m_max, lam=lam)
        P1, P2 = model.P1, model.P2
        d = model.layout.d_model
        where = f'P1 = {P1}, P2 = {P2}, lam = {lam:g}'
        got = guard.call(head1, P1, P2, lam, what='your head1', on=where)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise Finding(f'expected a pair (Wq, Wk); got {type(got).__name__}')
        Wq = guard.array(got[0], what='Wq')
        Wk = guard.array(got[1], what='Wk')
        model = C.build_multi_operand_adder(n_max, m_max, lam=lam)   # again: never in reach
        if Wq.ndim != 2 or Wq.shape[0] != d or Wk.shape != Wq.shape:
            raise Finding(f'Wq and Wk must both have shape ({d}, k) for {where}; got '
                          f'{Wq.shape} and {Wk.shape}')
        num = model.layout['NUM'].start
        for ops in _problems(97 + c, 6, max_m=m_max, max_n=min(n_max, 8)):
            if not model.fits(ops) or len(ops) > 12:
                continue
            seq = model.tokens(ops)[:-1]
            run = model.trace(seq)
            x = run.resid_pre[0]                    # token plus position embeddings
            start = seq.index(C.TOKEN_ID['='])
            n = len(seq)
            mask = np.tril(np.ones((n, n), dtype=bool))
            with np.errstate(over='ignore', invalid='ignore'):
                s = np.where(mask, (x @ Wq) @ (x @ Wk).T, -np.inf)   # no 1/sqrt(d_head)
                w = np.exp(s - s.max(1, keepdims=True))
                w /= w.sum(1, keepdims=True)
            pre_sum = w @ (3 * x[:, num])
            want_w = run.attn[0][0]
            want = want_w @ (3 * x[:, num])
            for q in range(start, n):
                if not abs(pre_sum[q] - want[q]) <= 0.01:
                    keys_want = [int(i) for i in np.flatnonzero(want_w[q] > 0.05)]
                    keys_got = [int(i) for i in np.flatnonzero(w[q] > 0.05)]
                    raise Finding(f'{where}, operands {ops}, query position {q} (token '
                                  f'{C.VOCAB[seq[q]]!r}): PRE_SUM should be {want[q]:.2f} '
                                  f'(attending to {keys_want}), got {pre_sum[q]:.2f} (attending '
                                  f'to {keys_got})', (ops, q))
                checked += 1
    return Passed(f'PRE_SUM within 0.01 of the reference at {checked} response positions, for '
                  f'code widths (P1, P2) = (4, 3), (3, 2), (5, 6) at lam = 20 and (4, 3) at '
                  f'lam = 3, where the weights are still soft')


@checker('9.8')
def check_9_8(carry_out):
    """``carry_out(pair_sum, written_digit) -> 0 or 1``: the carry leaving a place."""
    own = _Watch('9.8', 'your carry_out')
    for a in range(10):
        for b in range(10):
            for c in (0, 1):
                o = (a + b + c) % 10
                got = own(carry_out, a + b, o, what='your carry_out',
                          on=f'pair sum {a + b}, written digit {o}')
                got = guard.array(got, (), what=f'carry_out({a + b}, {o})').item()
                want = (a + b + c) // 10
                if got != want:
                    raise Finding(f'digits {a} + {b} with carry in {c}: pair sum {a + b}, '
                                  f'written digit {o}: expected carry {want}, got {got!r}',
                                  (a + b, o))
    return own.ok('all 200 (digit, digit, carry-in) cases')


def _relu_mlp(weights, inputs, outputs, max_units, what):
    """A submitted ReLU MLP ``(M1, b1, M2, b2)`` as a function of an (N, inputs) array.

    ``relu(x @ M1 + b1) @ M2 + b2``: the shape of an MLP of the book's format,
    with at most ``max_units`` hidden ReLUs (the budget).
    """
    if callable(weights) or not isinstance(weights, (tuple, list)) or len(weights) != 4:
        raise Finding(f'{what}: expected the weights (M1, b1, M2, b2) of a ReLU MLP, computed '
                      f'as relu(x @ M1 + b1) @ M2 + b2 (not a function: the budget counts its '
                      f'ReLUs); got {type(weights).__name__}')
    M1 = guard.array(weights[0], what=f'{what}: M1')
    units = M1.shape[1] if M1.ndim == 2 else -1
    if M1.ndim != 2 or M1.shape[0] != inputs:
        raise Finding(f'{what}: M1 must have shape ({inputs}, units); got {M1.shape}')
    b1 = guard.array(weights[1], (units,), what=f'{what}: b1')
    M2 = guard.array(weights[2], (units, outputs), what=f'{what}: M2')
    b2 = guard.array(weights[3], (outputs,), what=f'{what}: b2')
    if units > max_units:
        raise Finding(f'{what} is over the budget: {units} ReLUs; at most {max_units} allowed')
    M1, b1, M2, b2 = (np.asarray(a, dtype=np.float64) for a in (M1, b1, M2, b2))
    return lambda x: np.maximum(np.asarray(x, dtype=np.float64) @ M1 + b1, 0) @ M2 + b2, units


# every operand count 1..12 at the shortest and the longest width: together they meet every
# (PRE_ARROW, PRE_EOS, next token) the adder (8, 12) produces (49 of them; a sweep of 400
# random problems finds no other)
FLAG_PROBLEMS = ((57, 48, 96), (5,), (0,), (1, 2), (123, 4, 56, 7, 890), (1, 99999999), (0,) * 7,
                 *((9,) * m for m in range(1, 13)), *((99999999,) * m for m in range(1, 13)))


def _flag_cases():
    """(PRE_ARROW, PRE_EOS, next token, operands, position) at every response position."""
    model = C.build_multi_operand_adder(8, 12)
    L = model.layout
    out = []
    for ops in map(list, FLAG_PROBLEMS):
        full = model.tokens(ops)
        seq = full[:-1]
        mid = model.trace(seq).resid_mid[0]
        start = seq.index(C.TOKEN_ID['='])
        for q, t in zip(range(start, len(seq)), full[start + 1:]):
            out.append((float(mid[q, L['PRE_ARROW'].start]), float(mid[q, L['PRE_EOS'].start]),
                        C.VOCAB[t], ops, q))
    return out


@checker('9.9')
def check_9_9(weights):
    """``(M1, b1, M2, b2)``: at most 3 ReLUs mapping (PRE_ARROW, PRE_EOS) to (ARROW, EOS)."""
    mlp, units = _relu_mlp(weights, 2, 2, 3, 'your flag MLP')
    cases = _flag_cases()
    flags = mlp(np.array([(pa, pe) for pa, pe, _, _, _ in cases]))
    if not np.all(np.isfinite(flags)):
        raise Finding('your flag MLP gives NaN or infinity on the heads\' outputs')
    for (pa, pe, token, ops, q), (arrow, eos) in zip(cases, flags):
        logits = {'digit': 1.0, '>': 10 * arrow, '$': 100 * eos}
        winner = max(logits, key=logits.get)
        want = token if token in '>$' else 'digit'
        if winner != want:
            raise Finding(f'operands {ops}, response position {q} (PRE_ARROW = {pa:.3f}, '
                          f'PRE_EOS = {pe:.3f}): the next token is {want!r} but your flags '
                          f'(ARROW {arrow:.3f}, EOS {eos:.3f}) make the readout pick {winner!r}',
                          (pa, pe))
    return Passed(f'{units} ReLU(s) (budget 3): the right winner (digit, separator or EOS) at '
                  f'all {len(cases)} response positions of {len(FLAG_PROBLEMS)} problems (every '
                  f'count of 1 to 12 operands of 1 and of 8 digits, zeros, ragged)')


def _digit_inputs():
    """(PRE_SUM, PRE_CARRY, NUM, next digit): every consistent case, PRE_SUM off by <= 0.09."""
    S, prev, cin = (a.ravel() for a in np.meshgrid(np.arange(19), np.arange(19), (0, 1),
                                                    indexing='ij'))
    written, carry = (prev + cin) % 10, (prev + cin) // 10
    rng = np.random.default_rng(910)
    rows = []
    for delta in (-0.09, -0.045, 0.0, 0.045, 0.09):
        rows.append((S + delta, prev, written, (S + carry) % 10))
    jitter = rng.uniform(-0.09, 0.09, size=S.shape)
    rows.append((S + jitter, prev, written, (S + carry) % 10))
    x = np.concatenate([np.stack(r[:3], axis=1).astype(np.float64) for r in rows])
    return x, np.concatenate([r[3] for r in rows])


@checker('9.10')
def check_9_10(weights):
    """``(M1, b1, M2, b2)``, <= 80 ReLUs: (PRE_SUM, PRE_CARRY, NUM) -> an exact one-hot digit."""
    mlp, units = _relu_mlp(weights, 3, 10, 80, 'your digit MLP')
    x, digit = _digit_inputs()
    with np.errstate(over='ignore', invalid='ignore'):
        got = mlp(x)
    want = np.eye(10)[digit]
    bad = np.flatnonzero(~(np.abs(got - want) <= 1e-6).all(axis=1))
    if len(bad):
        i = int(bad[0])
        s, prev, num = x[i]
        raise Finding(f'PRE_SUM {s:.4g}, PRE_CARRY {prev:g}, NUM {num:g} (carry in '
                      f'{int(prev - num >= 9)}): expected exactly one-hot at {digit[i]}, got '
                      f'{np.round(got[i], 3).tolist()}', (float(s), float(prev), float(num)))
    return Passed(f'{units} ReLUs (budget 80): exactly one-hot (to 1e-6) and correct for every '
                  f'pair sum 0..18, previous pair sum 0..18 and carry, with PRE_SUM off by up to '
                  f'0.09 ({len(x)} inputs)')


# ----------------------------------------------------------------------------- 9.11 - 9.14

def _adder_program(params, what, vocab=C.VOCAB):
    """A submitted adder program: valid, two position tables, the chapter's vocabulary."""
    guard.program(params, what)
    tables = params['pos_emb']
    if not isinstance(tables, (list, tuple)) or len(tables) != 2:
        raise Finding(f'{what}: pos_emb must be a list of two tables (level 1: significance, '
                      f'level 2: which number)')
    if np.shape(params['tok_emb'])[0] != len(vocab):
        raise Finding(f'{what}: the vocabulary is {"".join(vocab)} ({len(vocab)} tokens); '
                      f'tok_emb has {np.shape(params["tok_emb"])[0]} rows')
    return params


def _teacher_forced(params, ops, norm, what):
    """Run a submitted adder on ``$ query = scratchpad`` with coupled IDs (offsets 1, 1).

    Returns ``(expected, predicted)``: the response after ``=`` with its EOS, and
    the argmax at every position that predicts it.  Equal strings mean greedy
    decoding writes the whole response, EOS exactly once.
    """
    text = C.scratchpad_text(ops)
    seq = [C.TOKEN_ID['$']] + [C.TOKEN_ID[c] for c in text]
    ids = np.array(C.coupled_ids([C.VOCAB[t] for t in seq]), dtype=np.int64)
    rows = [np.shape(table)[0] for table in params['pos_emb']]
    if ids[0].max() >= rows[0] or ids[1].max() >= rows[1]:
        raise Finding(f'operands {ops}: the IDs reach ({ids[0].max()}, {ids[1].max()}) but '
                      f'{what}\'s position tables have {rows[0]} and {rows[1]} rows', ops)
    logits = guard.run_program(lambda: transformer(seq, **params, positions=ids, norm=norm),
                               what=what, on=f'operands {ops}')
    start = seq.index(C.TOKEN_ID['='])
    got = ''.join(C.VOCAB[t] for t in np.asarray(logits)[start:].argmax(-1))
    return text[start:] + '$', got


def _wrong_response(ops, want, got, what):
    i = next(k for k, (a, b) in enumerate(zip(want, got)) if a != b)
    return Finding(f'operands {ops}: {what} predicts {got} (teacher-forced), expected {want}; '
                   f'the first wrong token is number {i + 1} of the response ({got[i]!r} instead '
                   f'of {want[i]!r})', ops)


def _adder_problems(n, m, seed, count):
    """Problems up to m operands of n digits: all nines (carries everywhere), zeros, the
    smallest, ragged, powers of ten, then seeded random sizes."""
    top = 10 ** n - 1
    out = [[top] * m, [0], [0] * m, [5 % (top + 1)], [1, top][:m], [10 ** (n - 1)] * m]
    rng = np.random.default_rng(seed)
    for _ in range(count):
        out.append(C.random_operands(int(rng.integers(1, m + 1)), int(rng.integers(1, n + 1)),
                                     rng=rng))
    return out


BUILDS_9_11 = ((8, 8, 14), (3, 12, 6), (1, 1, 4))     # (max_digits, max_operands, random problems)


@checker('9.11')
def check_9_11(build):
    """``build(max_digits, max_operands)`` -> norm-free params within Theorem 4.1's budget."""
    if not callable(build):
        raise Finding(f'expected a function build(max_digits, max_operands) -> params; got '
                      f'{type(build).__name__}')
    checked = 0
    for n, m, count in BUILDS_9_11:
        what = f'build({n}, {m})'
        params = guard.frozen(guard.call(build, n, m, what='your build', on=f'({n}, {m})',
                                         seconds=20), what)     # counted = run
        _adder_program(params, what)
        width = C.sizes(n, m)['d_model']
        guard.budget(params, what, layers=1, heads=4, d_ff=83, d_model=width)
        for ops in _adder_problems(n, m, 911 + n, count):
            want, got = _teacher_forced(params, ops, 'none', what)
            if got != want:
                raise _wrong_response(ops, want, got, what)
            checked += 1
    return Passed(f'budget kept (1 layer, 4 heads, 83 ReLUs, d = 19 + 2 P1 + 2 P2) by build(8, 8), '
                  f'build(3, 12) and build(1, 1), each exact (every response token, EOS once, '
                  f'teacher-forced without layer norm) on {checked} problems up to its maxima: '
                  f'all nines, zeros, ragged, powers of ten and random sizes')


def _size_cases():
    """(n, m): every log10 boundary of m, every power-of-two boundary of m + 1 and of ell + 2."""
    cases = {(2, 3), (10, 10), (13, 13), (30, 30), (100, 100), (1, 1), (6, 7), (5, 99)}
    for k in range(1, 9):
        for m in (2 ** k - 2, 2 ** k - 1, 2 ** k, 2 ** k + 1):
            if m >= 1:
                cases.add((3, m))
    for m in (9, 10, 11, 99, 100, 101, 999, 1000, 1001):
        cases.add((4, m))
    for m in (1, 12, 150):
        for k in range(2, 8):
            for ell in (2 ** k - 3, 2 ** k - 2, 2 ** k - 1, 2 ** k):
                n = ell - len(str(m))
                if n >= 1:
                    cases.add((n, m))
    rng = np.random.default_rng(912)
    cases |= {(int(rng.integers(1, 200)), int(rng.integers(1, 2000))) for _ in range(20)}
    return sorted(cases)


@checker('9.12')
def check_9_12(size):
    """``size(n, m) -> (ell, P1, P2, d_model)`` for the norm-free construction."""
    own = _Watch('9.12', 'your size')
    cases = _size_cases()
    for n, m in cases:
        got = own(size, n, m, what='your size', on=f'n = {n}, m = {m}')
        got = tuple(_ints(got, 'your size'))
        z = C.sizes(n, m)
        want = (z['ell'], z['P1'], z['P2'], z['d_model'])
        if got != want:
            paper = C.sizes(n, m, literal=True)
            hint = ''
            if got[1:2] == (paper['P1'],) and paper['P1'] != z['P1']:
                hint = (f' -- that is the paper\'s P1 = ceil(log2 ell); the last digit\'s ID '
                        f's1 + ell then reaches 2^P1 (or past it) and its next code wraps onto '
                        f'the separators\' code')
            raise Finding(f'n = {n}, m = {m}: expected (ell, P1, P2, d) = {want}, got {got}{hint}',
                          (n, m))
    return own.ok(f'(ell, P1, P2, d) right on {len(cases)} sizes: every power-of-two boundary of '
                  f'm + 1 and of ell + 2, every power-of-ten boundary of m, random sizes up to '
                  f'n = 200, m = 2000')


@checker('9.13')
def check_9_13(operands):
    """Operands on which the paper's literal code width fails though its own condition holds."""
    try:
        ops = C.operand_list(operands, 'your operands')
    except ValueError as exc:
        raise Finding(str(exc)) from None
    if len(ops) > 20 or max(len(str(a)) for a in ops) > 20:
        raise Finding(f'keep it small: at most 20 operands of 20 digits; got {len(ops)} operands')
    n, m = max(len(str(a)) for a in ops), len(ops)
    literal = C.build_multi_operand_adder(n, m, literal=True)
    ell = C.sizes(n, m)['ell']
    if ell + 1 > 2 ** literal.P1:
        raise Finding(f'operands {ops}: for n = {n}, m = {m} the padding is ell = {ell}, and the '
                      f'paper\'s P1 = ceil(log2 ell) = {literal.P1} gives only {2 ** literal.P1} '
                      f'codes, fewer than the ell + 1 IDs the paper itself requires (ell + 1 <= '
                      f'2^P1): a rounding slip, not the bug. Find operands for which that '
                      f'condition holds and the adder still fails', ops)
    want, got = literal.teacher_forced(ops)
    if want == got:
        raise Finding(f'operands {ops}: the literal width (P1 = {literal.P1}) adds them '
                      f'correctly ({got}); compare the largest level-1 ID a problem uses, '
                      f's1 + (its padded width), with 2^P1', ops)
    want_f, got_f = C.build_multi_operand_adder(n, m).teacher_forced(ops)
    if want_f != got_f:
        raise Finding(f'operands {ops}: the corrected adder fails too ({got_f} instead of '
                      f'{want_f}); that is not the code width', ops)
    return Passed(f'operands {ops}: ell + 1 = {ell + 1} <= 2^P1 = {2 ** literal.P1} as the paper '
                  f'requires, yet the literal width P1 = {literal.P1} predicts {got} instead of '
                  f'{want}; the corrected P1 = {C.sizes(n, m)["P1"]} is exact')


@checker('9.14')
def check_9_14(answer):
    """``(operands, lam)``: lam is exact on that problem and lam - 0.25 is not."""
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise Finding(f'expected a pair (operands, lam); got {answer!r:.80}')
    try:
        ops = C.operand_list(answer[0], 'your operands')
    except ValueError as exc:
        raise Finding(str(exc)) from None
    lam = answer[1]
    if isinstance(lam, (bool, np.bool_)) or not isinstance(lam, (int, float, np.integer,
                                                                 np.floating)):
        raise Finding(f'lam must be a number; got {lam!r:.40}')
    lam = float(lam)
    if not 0.25 < lam <= 20:
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


BASES_9_15 = (2, 3, 7, 10, 16, 4, 5, 6, 8, 9, 11, 12, 13, 14, 15, 20, 36, 60)


@checker('9.15')
def check_9_15(shape):
    """``shape(b) -> (w, r, c0)``: plateau, ramp and offset of an exactly one-hot digit block."""
    for b in BASES_9_15:
        got = guard.call(shape, b, what='your shape', on=f'base {b}')
        vals = guard.array(got, shape=(3,), what=f'shape({b})')
        w, r, c0 = (float(v) for v in vals)
        if not (w > 0 and r > 0 and w + r <= 1 + 1e-12):
            raise Finding(f'base {b}: need w > 0, r > 0 and w + r <= 1 so neighbouring '
                          f'trapezoids do not overlap; got w = {w}, r = {r}', b)
        S, prev, cin, delta = np.meshgrid(np.arange(2 * b - 1), np.arange(2 * b - 1), (0, 1),
                                          (-0.02, -0.01, 0.0, 0.01, 0.02), indexing='ij')
        written, carry = (prev + cin) % b, (prev + cin) // b
        g = S + delta + (prev - written) / b + c0
        block = np.stack([base_trapezoid(k, g, w, r, b) for k in range(b)], axis=-1)
        want = np.eye(b)[(S + carry) % b]
        bad = np.argwhere(~(np.abs(block - want).max(-1) <= 1e-9))    # NaN counts as wrong
        if len(bad):
            i = tuple(bad[0])
            raise Finding(f'base {b}, pair sum {S[i]}, carry in {carry[i]}: the digit block is '
                          f'{np.round(block[i], 3).tolist()}, not exactly one-hot at '
                          f'{(S[i] + carry[i]) % b}', (b, int(S[i]), int(carry[i])))
    return Passed(f'exactly one-hot digit blocks in every base from 2 to 16 and in bases '
                  f'{", ".join(map(str, BASES_9_15[15:]))}, for every pair sum and carry, with the '
                  f'pair sum off by up to 0.02')


# ----------------------------------------------------------------------------- 9.16 - 9.19

@checker('9.16')
def check_9_16(params):
    """A 1-layer book-format program for the parity scratchpad (vocabulary ``0 1 = $``)."""
    params = guard.frozen(params)          # the copy that is counted is the one that runs
    guard.budget(params, layers=1)
    if np.shape(params['tok_emb'])[0] != len(C.PARITY_VOCAB):
        raise Finding(f'the vocabulary is 0 1 = $ (4 tokens); tok_emb has '
                      f'{np.shape(params["tok_emb"])[0]} rows')
    if isinstance(params['pos_emb'], (list, tuple)) or np.shape(params['pos_emb'])[0] < 102:
        raise Finding('pos_emb must be one table with at least 102 rows (IDs 0..101)')
    rng = np.random.default_rng(916)
    strings = ['0', '1', '0' * 100, '1' * 100, '01' * 50, '1' + '0' * 99, '0' * 99 + '1', '11']
    strings += [''.join(map(str, rng.integers(0, 2, size=int(n))))
                for n in [2, 3, 100] + list(rng.integers(1, 101, size=16))]
    for bits in strings:
        n = len(bits)
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
    return Passed(f'1 layer (the budget); exact running parities and EOS on {len(strings)} bit '
                  f'strings of 1 to 100 bits (all zeros, all ones, alternating, a lone 1 at '
                  f'either end, random), teacher-forced, IDs from offset 1')


@checker('9.17')
def check_9_17(needed):
    """``needed(operands, j) -> positions``: what answer digit j reads without a scratchpad."""
    checked = 0
    for ops in _problems(917, 10, max_m=8, max_n=4):
        tokens, pos = C.baseline_sequence(ops)
        eq = tokens.index('=')
        for j in range(C.pad_length(ops)):
            got = sorted(_ints(guard.call(needed, list(ops), j, what='your needed',
                                          on=f'operands {ops}, j = {j}'), 'your positions'))
            tokens, pos = C.baseline_sequence(ops)      # made after the call: never in reach
            want = [i for i in range(eq) if tokens[i].isdigit() and pos[i] == 2 + j]
            if got != want:
                raise Finding(f'operands {ops} ({"".join(tokens)}), digit {j}: expected '
                              f'{want}, got {got}', (ops, j))
            checked += 1
    return Passed(f'the {checked} answer digits each read one digit per operand (fan-in m)')


SIZES_9_18 = ((2, 3), (10, 10), (30, 30), (4, 1), (1, 1), (1, 2), (5, 3), (6, 4), (5, 7),
              (5, 8), (13, 15), (14, 16), (12, 100), (60, 63), (61, 64), (1000, 1000))


@checker('9.18')
def check_9_18(counts):
    """``counts(n, m) -> (total, non_zero)`` of the norm-free adder in the book's census."""
    watch = _Watch('9.18', 'your counts')
    for n, m in SIZES_9_18:
        got = tuple(_ints(watch(counts, n, m, what='your counts', on=f'n = {n}, m = {m}'),
                          'your counts'))
        params = C.build_adder_params(n, m)
        want = (count_params(params)['n_params'], count_non0_params(params)['n_params'])
        if got != want:
            raise Finding(f'n = {n}, m = {m}: expected (total, non-zero) = {want}, got {got}',
                          (n, m))
    return watch.ok(f'total and non-zero counts right for {len(SIZES_9_18)} sizes (one operand, '
                    f'power-of-two boundaries of both code widths, up to 1000 operands of 1000 '
                    f'digits), without building the program')


@checker('9.19')
def check_9_19(params):
    """A book-format PreLN program (two position tables) adding up to 4 operands of 4 digits."""
    params = guard.frozen(params)          # the copy that is counted is the one that runs
    _adder_program(params, 'your program')
    guard.budget(params, layers=1, heads=4)
    rng = np.random.default_rng(919)
    problems = _adder_problems(4, 4, 919, 0)
    problems += [C.random_operands(m, n, rng=rng) for m in (1, 2, 3, 4) for n in (1, 2, 3, 4)]
    for ops in problems:
        want, got = _teacher_forced(params, ops, 'layer', 'your program')
        if got != want:
            raise _wrong_response(ops, want, got, 'your program')
    return Passed(f'1 layer, 4 heads (the budget); exact response (every token, EOS once, '
                  f'teacher-forced through PreLN layer norms) on {len(problems)} problems up to '
                  f'4 operands of 4 digits (all nines, zeros, ragged, every size), IDs offset '
                  f'(1, 1)')


PUZZLES = [
    Puzzle('9.1', 'Parity scratchpad and coupled IDs', 'checked', check_9_1),
    Puzzle('9.2', 'The addition format (padding, reversed running sums)', 'checked', check_9_2),
    Puzzle('9.3', 'Bi-level position IDs', 'checked', check_9_3),
    Puzzle('9.4', 'Multiplication: two-stage scratchpad and tri-level IDs', 'checked', check_9_4),
    Puzzle('9.5', 'Which keys does a response digit need?', 'checked', check_9_5),
    Puzzle('9.6', 'Hypercube position codes', 'checked', check_9_6),
    Puzzle('9.7', 'Head 1: the digit-pair sum', 'checked', check_9_7),
    Puzzle('9.8', 'Head 2 and the carry identity', 'checked', check_9_8),
    Puzzle('9.9', 'The separator and EOS flags', 'checked', check_9_9, 'at most 3 ReLUs'),
    Puzzle('9.10', 'The digit MLP', 'checked', check_9_10, 'at most 80 ReLUs'),
    Puzzle('9.11', 'Assemble the adder', 'checked', check_9_11,
           '1 layer, 4 heads, 83 ReLUs, d = 19 + 2 P1 + 2 P2'),
    Puzzle('9.12', 'Size calculator', 'checked', check_9_12),
    Puzzle('9.13', 'Find the bug in the code width', 'checked', check_9_13,
           'at most 20 operands of 20 digits'),
    Puzzle('9.14', 'The smallest exact lambda', 'checked', check_9_14),
    Puzzle('9.15', 'Addition in base b', 'checked', check_9_15),
    Puzzle('9.16', 'Design your own: a 1-layer parity program', 'checked', check_9_16,
           '1 layer'),
    Puzzle('9.17', 'Without the scratchpad, fan-in grows', 'checked', check_9_17),
    Puzzle('9.18', 'Count the parameters', 'checked', check_9_18),
    Puzzle('9.19', 'Port the adder to PreLN', 'checked', check_9_19, 'PreLN, 1 layer, 4 heads'),
]
