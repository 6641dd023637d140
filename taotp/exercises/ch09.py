"""Checkers for Chapter 9, Multi-Operand Addition with Position Coupling.

Cases are drawn afresh on each check; only the *visible* ones (the notebook's examples)
show an expected value in a message, a hidden one names its input, the answer's output
and a rule.  Expected values come from ``taotp.coupling``, computed in the judge; where
the answer runs, the package's own answer is switched off (each row's ``refuse``).
"""
import functools

import numpy as np

from .. import coupling as C
from ..decoding import transformer
from ..model import causal_mask, mlp, self_attn
from . import toolkit as T
# shared helpers and the format puzzles 9.1 to 9.6
from .ch09_formats import (_SORTED, _fresh, _function_puzzle, _ints, _problems,  # noqa: F401
                           check_9_1, check_9_2, check_9_3, check_9_4, check_9_5, check_9_6)
from .registry import Puzzle, checker
from .toolkit import Finding, Passed


# ----------------------------------------------------------------------------- 9.7 - 9.10 pieces

def _wide_size(rng, level, width):
    """(n, m) whose level-1 (``level`` 1) or level-2 code width is ``width``, just past the
    width below (a short sequence), the other small."""
    while True:
        top = int(rng.integers(2 ** (width - 1) - 4, 2 ** (width - 1) + 24))
        n, m = (top, 2) if level == 1 else (1, top)
        if top > 0 and C.sizes(n, m)[f'P{level}'] == width:
            return n, m


@checker('9.7')
def check_9_7(head1):
    """``head1(P1, P2, lam) -> (Wq, Wk)`` of shapes (d, k): the digit-sum head's scores."""
    rng = T.fresh_rng()
    # the chapter's example, then fresh sizes; then P1 = 6, 7, 8 and P2 = 7, 8 with lam from
    # 4 to 15 (rounds 21 and 24: heads comparing 5, then 6 bits of the codes passed while the
    # codes were no wider), their problems all nines and one drawn, with every operand
    sizes = [((2, 3), (20, 20))] + [((_fresh(rng, 20), _fresh(rng, 40)), band)
                                     for band in ((15, 30), (2.5, 4), (2.5, 4))]
    sizes += [((int(rng.integers(31, 61)), _fresh(rng, 8)), (4, 15))]
    wide = [_wide_size(rng, level, width) for level, width in ((1, 7), (1, 8), (2, 7), (2, 8))]
    for i, ((n_max, m_max), (low, high)) in enumerate(sizes + [(nm, (4, 15)) for nm in wide]):
        lam = rng.uniform(low, high)
        adder = C.build_multi_operand_adder(n_max, m_max, lam=lam)
        P1, P2, d = adder.P1, adder.P2, adder.layout.d_model
        where = f'P1 = {P1}, P2 = {P2}, lam = {lam:.4g}'
        pair = T.parts(T.call(head1, P1, P2, float(lam), what='your head1', on=where), 2,
                       f'{where}: expected a pair (Wq, Wk)')
        Wq, Wk = (T.array(w, what=f'your matrices ({where})') for w in pair)
        if Wq.ndim != 2 or Wq.shape[0] != d or Wk.shape != Wq.shape:
            raise Finding(f'{where}: Wq and Wk must both have shape ({d}, k); got {Wq.shape} '
                          f'and {Wk.shape}')
        V = 3.0 * np.eye(d)[None, :, [adder.layout['NUM'].start]]     # head 1's value: 3 NUM
        problems = [[10 ** n_max - 1] * m_max] + ([
            [0] * m_max, [int(rng.integers(0, 10))]] + [
            C.random_operands(_fresh(rng, m_max), _fresh(rng, n_max), rng=rng)
            for _ in range(3)] if i < len(sizes) else [C.random_operands(m_max, n_max, rng=rng)])
        for ops in problems:
            seq = adder.tokens(ops)[:-1]
            seen = adder.trace(seq)               # the chapter's head 1 writes PRE_SUM
            want = seen.resid_mid[0][:, adder.layout['PRE_SUM'].start]
            with np.errstate(all='ignore'):       # your head 1, run by the book's attention
                got, weights = self_attn(seen.resid_pre[0], Wq[None], Wk[None], V,
                                         np.ones((1, 1, 1)), causal_mask(len(seq)),
                                         return_weights=True)
            for q in range(seq.index(C.TOKEN_ID['=']), len(seq)):
                if not abs(got[q, 0] - want[q]) <= 0.01:
                    keys = np.flatnonzero(weights[0, q] > 0.05).tolist()
                    raise Finding(f'{where}, operands {T.short(ops, 160)}, query position {q}: '
                                  f'PRE_SUM = '
                                  f'{got[q, 0]:.3f}, attending to {keys}, is more than 0.01 off '
                                  f'the chapter\'s head 1 (BOS and the digits with level-1 ID one '
                                  f'larger, level-2 ID one smaller)', (ops, q))
    return Passed('PRE_SUM within 0.01 of the chapter\'s head (run by the book\'s attention) at '
                  'every response position of 38 problems, 9 sizes (P1 = 6, 7 and 8, P2 = 7 and '
                  '8 among them), lam in [15, 30], [4, 15] and [2.5, 4], where the weights are '
                  'still soft')


_CARRIES = sorted({(a + b, (a + b + c) % 10) for a in range(10) for b in range(10) for c in (0, 1)})
check_9_8 = _function_puzzle(
    '9.8', 'carry_out', lambda rng: [(f'pair sum {s}, written digit {o}', (s, o))
                                     for s, o in sorted(_CARRIES, key=lambda c: (c != (15, 5),
                                                                               rng.random()))],
    [(lambda v, what: T.array(v, (), what=what).item(), 'the carry', 'the written digit is '
      '(pair sum + carry in) mod 10, the carry leaving (pair sum + carry in) // 10')],
    lambda s, o: (C.carry_out(s, o),),
    'all {} (pair sum, written digit) pairs that occur, every digit pair with and without a '
    'carry in', visible=0)


def _relu_mlp(weights, inputs, outputs, max_units, what):
    """Submitted weights ``(M1, b1, M2, b2)`` of a ReLU MLP: (the MLP, its number of units)."""
    if not isinstance(weights, (tuple, list)) or len(weights) != 4:
        raise Finding(f'{what}: expected the weights (M1, b1, M2, b2) of relu(x @ M1 + b1) @ M2 '
                      f'+ b2 (not a function: the budget counts ReLUs); got {T.describe(weights)}')
    M1 = T.array(weights[0], what=f'{what}: M1')
    if M1.ndim != 2 or M1.shape[0] != inputs:
        raise Finding(f'{what}: M1 must have shape ({inputs}, units); got {M1.shape}')
    units = M1.shape[1]
    b1, M2, b2 = (T.array(w, shape, what=f'{what}: {name}') for w, shape, name in
                  zip(weights[1:], ((units,), (units, outputs), (outputs,)), ('b1', 'M2', 'b2')))
    if units > max_units:
        raise Finding(f'{what} is over the budget: {units} ReLUs; at most {max_units} allowed')
    return (lambda x: mlp(x, M1, b1, M2, b2)), units


# every count 1..12 at 1 and 8 digits: all 49 (PRE_ARROW, PRE_EOS, next token) of adder (8, 12)
FLAG_PROBLEMS = ((57, 48, 96), (5,), (0,), (1, 2), (123, 4, 56, 7, 890), (1, 99999999), (0,) * 7,
                 *((9,) * m for m in range(1, 13)), *((99999999,) * m for m in range(1, 13)))


@functools.lru_cache(maxsize=2)
def _flag_cases(problems):
    """(PRE_ARROW, PRE_EOS, next token, operands, position) at every response position."""
    adder, out = C.build_multi_operand_adder(8, 12), []
    arrow, eos = adder.layout['PRE_ARROW'].start, adder.layout['PRE_EOS'].start
    for ops in map(list, problems):
        full = adder.tokens(ops)
        mid = adder.trace(full[:-1]).resid_mid[0]
        out += [(mid[q, arrow], mid[q, eos], C.VOCAB[full[q + 1]], ops, q)
                for q in range(full.index(C.TOKEN_ID['=']), len(full) - 1)]
    return out


@checker('9.9')
def check_9_9(weights):
    """``(M1, b1, M2, b2)``: at most 2 ReLUs mapping (PRE_ARROW, PRE_EOS) to (ARROW, EOS)."""
    run, units = _relu_mlp(weights, 2, 2, 2, 'your flag MLP')
    rng = T.fresh_rng()
    cases = _flag_cases(FLAG_PROBLEMS) + _flag_cases(tuple(
        tuple(C.random_operands(_fresh(rng, 12), _fresh(rng, 8), rng=rng)) for _ in range(4)))
    with np.errstate(all='ignore'):
        flags = run(np.array([case[:2] for case in cases]))
    for (pa, pe, token, ops, q), (arrow, eos) in zip(cases, flags):
        logits = {'digit': 1.0, '>': 10 * arrow, '$': 100 * eos}
        winner = max(logits, key=logits.get)
        if not np.isfinite([arrow, eos]).all() or winner != (token if token in '>$' else 'digit'):
            shown = f'the next token is {token!r} but ' if ops == [57, 48, 96] else ''
            raise Finding(f'operands {ops}, response position {q} (PRE_ARROW = {pa:.3f}, '
                          f'PRE_EOS = {pe:.3f}): {shown}your flags (ARROW {arrow:.3f}, EOS '
                          f'{eos:.3f}) make the readout pick {winner!r}, not the next token '
                          f'there', (float(pa), float(pe)))
    return Passed(f'{units} ReLU(s) (budget 2): the right token kind at every response position '
                  f'of {len(FLAG_PROBLEMS)} problems (1 to 12 operands, zeros, ragged), 4 random')


@checker('9.10')
def check_9_10(weights):
    """``(M1, b1, M2, b2)``, <= 80 ReLUs: (PRE_SUM, PRE_CARRY, NUM) -> an exact one-hot digit.
    Along each interval of PRE_SUM the output is piecewise linear and |output - one-hot| <=
    1e-6 is convex in it: true at both ends and every kink, it is true on all of the interval
    (round 12: sampled offsets missed a 2e-4-wide notch); the floats beside each kink too."""
    run, units = _relu_mlp(weights, 3, 10, 80, 'your digit MLP')
    M1, b1 = (T.array(w).astype(float) for w in weights[:2])
    S, prev, cin = np.indices((19, 19, 2)).reshape(3, -1, 1)    # pair sum, previous, carry in
    num, digit, t = (prev + cin) % 10, (S + (prev + cin) // 10) % 10, 0.15
    with np.errstate(all='ignore'):     # a unit's kink: its pre-activation is 0 (<= 80 units)
        ks = -(b1 + prev * M1[1] + num * M1[2]) / np.where(M1[0] != 0, M1[0], np.nan)
        ks = np.concatenate([S - t, S + t, ks, np.nextafter(ks, -np.inf),
                             np.nextafter(ks, np.inf)], 1)
        keep = (ks >= S - t) & (ks <= S + t)                     # NaN: no kink
        x = np.stack([a[keep] for a in np.broadcast_arrays(ks, prev, num)], 1)
        got = run(x)
    bad = np.flatnonzero(T.off(got, np.eye(10)[np.broadcast_to(digit, ks.shape)[keep]],
                               1e-6).any(1))
    if len(bad):
        s, p, num = x[bad[0]].tolist()
        raise T.wrong(f'PRE_SUM {s!r}, PRE_CARRY {p:g}, NUM {num:g}',
                      (np.round(got[bad[0]], 3) + 0.0).tolist(),          # no -0.0
                      f'the output must be exactly one-hot (to 1e-6) at (pair sum + carry in) '
                      f'mod 10 for PRE_SUM anywhere up to {t} off the pair sum; the carry in is '
                      f'1 when PRE_CARRY - NUM is 9 or 10', (s, p, num))
    return Passed(f'{units} ReLUs (budget 80): exactly one-hot and right for every pair sum, '
                  f'previous pair sum and carry, PRE_SUM anywhere up to {t} off (each of the '
                  f'{len(S)} intervals at its ends and every kink: all of it, the MLP being '
                  f'piecewise linear)')


# ----------------------------------------------------------------------------- 9.11 - 9.14

def _teacher_forced(params, ops, norm, what):
    """The response after ``=`` (with EOS) and the adder's teacher-forced predictions of it,
    IDs offset (1, 1): equal when greedy decoding writes it all, EOS exactly once."""
    text = C.scratchpad_text(ops)
    seq = [C.TOKEN_ID[c] for c in '$' + text]
    ids = np.array(C.coupled_ids('$' + text), dtype=np.int64)      # too few rows: named
    logits = T.run_program(lambda: transformer(seq, **params, positions=ids, norm=norm),
                           what=what, on=f'operands {ops}')
    start = seq.index(C.TOKEN_ID['='])
    return text[start:] + '$', ''.join(C.VOCAB[t] for t in logits[start:].argmax(-1))


def _adder_puzzle(pid, name, norm, limits, sizes, scope):
    """The checker of an adder builder ``name(n, m)``: each ``(n, m, count)`` of
    ``sizes(rng)`` within ``limits``, then boundary problems and ``count`` random ones."""
    def body(build):
        rng, checked = T.fresh_rng(), 0
        for n, m, count in sizes(rng):
            what = f'the program {name}({n}, {m}) returned'
            width = {'d_model': C.sizes(n, m)['d_model']} if norm == 'none' else {}
            params = T.built(build, n, m, what=f'{name}({n}, {m})', **limits, **width)
            if not isinstance(params['pos_emb'], list) or len(params['pos_emb']) != 2 \
                    or params['tok_emb'].shape[0] != len(C.VOCAB):
                raise Finding(f'{what}: expected 14 tokens (0123456789+=>$, tok_emb rows) and '
                              f'pos_emb a list of two tables (level 1: significance, level 2: '
                              f'which number)')
            top = 10 ** n - 1
            problems = [[top] * m, [0], [0] * m, [int(rng.integers(0, 10))],
                        [_fresh(rng, 9), top][:m], [10 ** (n - 1)] * m]
            for ops in problems + [C.random_operands(_fresh(rng, m), _fresh(rng, n), rng=rng)
                                   for _ in range(count)]:
                want, got = _teacher_forced(params, ops, norm, what)
                if got != want:
                    i = next(k for k, (a, b) in enumerate(zip(want, got)) if a != b)
                    raise Finding(f'operands {ops}: {what} predicts {got} (teacher-forced); the '
                                  f'first wrong token is number {i + 1} of the response', ops)
                checked += 1
        return Passed(scope.format(checked))
    body.__name__ = body.__qualname__ = f'check_{pid.replace(".", "_")}'
    return checker(pid)(body)


# sizes whose padding ell is 2^k - 1 or 2^k, k = 2..5 (round 26: the paper's width, one bit
# short exactly at ell = 2^k - 1, passed 9.11 and 9.19 in half the checks)
WIDTH_EDGES = ((2, 3), (3, 3), (6, 5), (7, 5), (13, 12), (14, 12), (30, 5), (30, 10))

check_9_11 = _adder_puzzle(
    '9.11', 'build', 'none', dict(layers=1, heads=4, d_ff=83),
    lambda rng: [(8, 8, 10), (3, 12, 4), (1, 1, 2), (*rng.integers(2, (8, 13)).tolist(), 3),
                 (*rng.integers((9, 13), 31).tolist(), 3)]       # round 17: none below (8, 8)
    + [(n, m, 0) for n, m in WIDTH_EDGES],
    'within the budget and exact (teacher-forced without layer norm, EOS once) for build(8, 8), '
    '(3, 12), (1, 1), one more up to (7, 12) and one up to (30, 30), and at every size up to '
    '(30, 30) where ell + 1 or ell is a power of two, on {} problems up to their maxima: all '
    'nines, zeros, ragged, powers of ten, random')

check_9_19 = _adder_puzzle(
    '9.19', 'port', 'layer', dict(layers=1, heads=4),
    lambda rng: [(4, 4, 12), (*rng.integers(1, 4, size=2).tolist(), 3),
                 (*rng.integers(5, 31, size=2).tolist(), 3)]     # round 17: none below (4, 4)
    + [(n, m, 0) for n, m in WIDTH_EDGES],
    '1 layer, 4 heads and exact (teacher-forced through the layer norms, EOS once) for port(4, 4), '
    'one size up to (3, 3) and one up to (30, 30), and at every size up to (30, 30) where ell + 1 '
    'or ell is a power of two, on {} problems up to their maxima: all nines, zeros, ragged, '
    'random')


def _size_cases(rng):
    """(n, m): the book's five sizes, then boundaries and sizes drawn afresh."""
    cases = [(2, 3), (10, 10), (13, 13), (30, 30), (100, 100)]
    # m + 1 and ell + 2 near every 2^k up to 2^40 (round 21: math.log(x, 2) is above 29 at
    # 2^29; a P1 or P2 from it passed, no boundary past 2^20 being drawn)
    for k in range(2, 41):
        cases += [(_fresh(rng, 10 ** 4), 2 ** k + e) for e in (-2, -1, 0, 1)]
    for k in range(2, 41):      # from ell = 2 (round 26: a P1 of at least 3 passed 9 in 10)
        m = int(10 ** rng.uniform(0, 4)) if k > 3 else _fresh(rng, 9)
        cases += [(n, m) for e in (-1, 0, 1, 2) if (n := 2 ** k - 2 - len(str(m)) + e) >= 1]
    cases += [(1, 1), (1, 9)]
    # m next to every 10^k up to 10^12 (round 20: math.log(m, 10) falls short at 10^3 and 10^6;
    # round 24: math.log(m, 10) + 1e-9 passed, wrong at 10^9 - 1)
    for k in range(1, 13):
        cases += [(_fresh(rng, 10 ** 3), 10 ** k + e) for e in (-1, 0, 1)]
    cases += [(int(10 ** rng.uniform(0, 6)), int(10 ** rng.uniform(0, 6))) for _ in range(10)]
    return [(f'n = {n}, m = {m}', (n, m)) for n, m in cases]


_PAPER_P1 = ('your P1 is the paper\'s ceil(log2 ell); the last digit\'s ID s1 + ell then reaches '
             '2^P1 (or past it) and its next code wraps onto the separators\' code')
check_9_12 = _function_puzzle(
    '9.12', 'size', _size_cases,
    [(lambda v, what: tuple(_ints(T.parts(v, 4, f'{what}: expected 4 numbers'), what)),
      '(ell, P1, P2, d)', lambda got, n, m: _PAPER_P1 if got[1] == C.sizes(
          n, m, literal=True)['P1'] != C.sizes(n, m)['P1'] else 'check each against its rule')],
    lambda n, m: (tuple(C.sizes(n, m)[k] for k in ('ell', 'P1', 'P2', 'd_model')),),
    '(ell, P1, P2, d) right on {} sizes: the book\'s five, boundaries of m + 1 and of ell + 2 at '
    'every power of two up to 2^40, m next to every power of ten up to 10^12, 10 random sizes up '
    'to a million', visible=5)


def _operands(value):
    try:
        ops = C.operand_list(value, 'your operands')
    except ValueError as exc:
        raise Finding(str(exc)) from None
    if len(ops) > 20 or max(ops) >= 10 ** 20:
        raise Finding(f'keep it small: at most 20 operands of 20 digits; got {T.short(ops, 60)}')
    return ops, len(str(max(ops))), len(ops)


@checker('9.13')
def check_9_13(operands):
    """Operands on which the paper's literal code width fails though its own condition holds."""
    ops, n, m = _operands(operands)
    literal = C.build_multi_operand_adder(n, m, literal=True)
    ell, P1 = C.sizes(n, m)['ell'], literal.P1
    if ell + 1 > 2 ** P1:
        raise Finding(f'operands {ops}: ell = {ell}, and P1 = ceil(log2 ell) = {P1} breaks the '
                      f'paper\'s own condition ell + 1 <= 2^P1: a rounding slip, not the bug; '
                      f'find operands where that condition holds and the adder still fails', ops)
    want, got = literal.teacher_forced(ops)
    if want == got:
        raise Finding(f'operands {ops}: the literal width (P1 = {P1}) adds them correctly '
                      f'({got}); compare the largest level-1 ID a problem uses, s1 + (its '
                      f'padded width), with 2^P1', ops)
    return Passed(f'operands {ops}: ell + 1 = {ell + 1} <= 2^P1 = {2 ** P1}, yet P1 = {P1} '
                  f'predicts {got} instead of {want}; P1 = {C.sizes(n, m)["P1"]} is exact')


@checker('9.14')
def check_9_14(answer):
    """``(operands, lam)``: lam is exact on that problem and lam - 0.25 is not."""
    operands, lam = T.parts(answer, 2, 'expected a pair (operands, lam)')
    if type(lam) not in (int, float) or not 0.25 < lam <= 20 or round(lam * 4) != lam * 4:
        raise Finding(f'lam must be a number in (0.25, 20] on the grid 0.25, 0.5, ...; got '
                      f'{T.short(lam, 40)}')
    ops, n, m = _operands(operands)
    at, below = (C.build_multi_operand_adder(n, m, lam=v).teacher_forced(ops)
                 for v in (float(lam), lam - 0.25))
    if at[0] != at[1] or below[0] == below[1]:
        raise Finding(f'operands {ops}: ' + (f'lam = {lam - 0.25} is exact too; go lower' if
                      at[0] == at[1] else f'lam = {lam} is not exact yet (predicts {at[1]})'), ops)
    N = len(C.scratchpad_text(ops)) + 1
    return Passed(f'operands {ops} (N = {N}): exact from lam = {lam}, not at {lam - 0.25}; the '
                  f'sufficient bound ln(1000 N)/2 is {C.lambda_bound(N):.2f}')


# ----------------------------------------------------------------------------- 9.15 - 9.19

@checker('9.15')
def check_9_15(shape):
    """``shape(b) -> (w, r, c0)``: plateau, ramp and offset of an exactly one-hot digit block."""
    rng = T.fresh_rng()
    drawn = sorted(rng.choice(np.arange(17, 50), size=2, replace=False).tolist())
    # past 60, 30 pair sums by 6 previous ones (round 21: a margin of 1.2 / b passed)
    for b in list(range(2, 17)) + [20, 36, 60] + drawn + [100, int(rng.integers(101, 1001))]:
        w, r, c0 = T.array(T.call(shape, b, what='your shape', on=f'base {b}'), shape=(3,),
                           what=f'shape({b})').tolist()
        if not (w > 0 and r > 0 and w + r <= 1 + 1e-12):
            raise Finding(f'base {b}: need w > 0, r > 0 and w + r <= 1 so neighbouring '
                          f'trapezoids do not overlap; got w = {w}, r = {r}', b)
        ends = [0, b - 2, b - 1, b, 2 * b - 2]          # where the digit or the carry turns
        sums, prevs = (np.arange(2 * b - 1),) * 2 if b <= 60 else (
            np.r_[ends, rng.integers(0, 2 * b - 1, 25)], np.r_[ends, rng.integers(0, 2 * b - 1)])
        S, prev, cin, delta = np.meshgrid(sums, prevs, (0, 1), (-0.02, -0.01, 0.0, 0.01, 0.02),
                                          indexing='ij')
        written, carry = (prev + cin) % b, (prev + cin) // b
        with np.errstate(all='ignore'):
            g = S + delta + (prev - written) / b + c0
            block = sum(np.stack([np.clip(g - k - c + r, 0, r) - np.clip(g - k - c - w, 0, r)
                                  for k in range(b)], axis=-1) for c in (0, b)) / r
        bad = np.argwhere(T.off(block, np.eye(b)[(S + carry) % b], 1e-9).any(-1))
        if len(bad):                                                 # NaN counts as wrong
            i = tuple(bad[0])
            raise T.wrong(f'base {b}, pair sum {S[i]}, carry in {carry[i]}, pair sum off by '
                          f'{delta[i]:g}', np.round(block[i], 3).tolist(),
                          'the digit block must be exactly one-hot at (pair sum + carry in) '
                          'mod b', (b, int(S[i]), int(carry[i])))
    return Passed('exactly one-hot digit blocks in bases 2 to 16, 20, 36, 60 and two more below '
                  '50, for every pair sum and carry, and in base 100 and one from 101 to 1,000 for '
                  '30 pair sums by 6 previous ones, the pair sum off by up to 0.02')


def parity_strings(rng):
    """The bit strings of one 9.16 check: the example, all zeros, all ones, alternating, a lone
    1 at either end, and a random one of every length from 1 to 100 (round 21: a program
    wrong at one length passed, 21 lengths being tried)."""
    strings = ['0101', '0', '1', '0' * 100, '1' * 100, '01' * 50, '1' + '0' * 99, '0' * 99 + '1']
    return strings + [''.join(map(str, rng.integers(0, 2, size=n))) for n in range(1, 101)]


@checker('9.16')
def check_9_16(params):
    """A 1-layer book-format program for the parity scratchpad (vocabulary ``0 1 = $``)."""
    params = T.program(params)                # the copy that is counted is the one that runs
    T.budget(params, layers=1)
    if params['tok_emb'].shape[0] != 4 or isinstance(params['pos_emb'], list) \
            or params['pos_emb'].shape[0] < 102:
        raise Finding('expected 4 tokens (0 1 = $, tok_emb rows) and one position table of at '
                      'least 102 rows (IDs 0 to 101)')
    strings = parity_strings(T.fresh_rng())
    for bits in strings:
        tokens, _ = C.parity_sequence(bits)
        seq = [C.PARITY_VOCAB.index(c) for c in ['$'] + tokens]
        ids = C.parity_positions(seq)
        logits = T.run_program(lambda: transformer(seq, **params, positions=ids), on=f'bits {bits}')
        got = ''.join(C.PARITY_VOCAB[t] for t in logits[len(bits) + 1:].argmax(-1))
        want = ''.join(tokens[len(bits) + 1:]) + '$'
        on = f'bits {bits}: the predictions at "=" and at each scratchpad bit'
        if got != want:
            raise Finding(f'{on}: expected {want}, got {got}', bits) if bits == '0101' else \
                T.wrong(on, got, 'each is the next running parity, "$" after the last', bits)
    return Passed(f'1 layer; exact parities and EOS (teacher-forced, layer norms) on '
                  f'{len(strings)} strings of 1 to 100 bits: 0101, all zeros, all ones, '
                  f'alternating, a lone 1 at either end, and a random one of every length')


check_9_17 = _function_puzzle(
    '9.17', 'needed', lambda rng: [
        (f'operands {ops} ({"".join(C.baseline_sequence(ops)[0])}), digit {j}', (ops, j))
        for ops in _problems(rng, 10, max_m=8, max_n=4, counts=(1, 2, 9, 10, 11), few_wide=True)
        for j in range(C.pad_length(ops))],
    [(_SORTED, 'the positions', 'the query digits that share the ID of answer digit j')],
    lambda ops, j: ([i for i, (t, p) in enumerate(zip(*C.baseline_sequence(ops)))   # the
                     if t.isdigit() and p == 2 + j][:-1],),                      # last: digit j
    'every answer digit of 37 problems reads one digit per operand (fan-in m)', visible=0)


def _count_cases(rng):
    """The example, boundaries of both code widths, sizes up to a billion (beyond building;
    the counts depend only on the code widths P1, P2)."""
    cases = [(2, 3), (1, 1), (1, 9)]
    for k in range(2, 41):      # P1 and P2 boundaries at every 2^k (rounds 21, 26: _size_cases)
        m = int(10 ** rng.uniform(0, 4)) if k > 3 else _fresh(rng, 9)
        cases += [(n, m) for e in (2, 1) if (n := 2 ** k - e - len(str(m))) >= 1]
    for j in range(1, 13):      # ... at m = 10^j - 1 and 10^j (rounds 20, 24: _size_cases)
        for m in (10 ** j - 1, 10 ** j):
            k = int(rng.integers(j + 3, 41))
            cases += [(2 ** k - e - len(str(m)), m) for e in (2, 1)]
    for k in range(1, 41):
        cases += [(int(10 ** rng.uniform(0, 6)), m) for m in (2 ** k - 1, 2 ** k)]
    cases += [(int(10 ** rng.uniform(0, 9)), int(10 ** rng.uniform(0, 9))) for _ in range(8)]
    return [(f'n = {n}, m = {m}', (n, m)) for n, m in cases]


check_9_18 = _function_puzzle(
    '9.18', 'counts', _count_cases,
    [(lambda v, what: tuple(_ints(v, what)), '(total, non-zero)',
      'every count follows from the code widths P1, P2 of 9.12')],
    lambda n, m: (C.adder_census(n, m),),
    'total and non-zero counts right on {} sizes (the example, boundaries of both code widths at '
    'every power of two up to 2^40, a P1 boundary at m next to every power of ten up to 10^12, '
    'random sizes up to a billion), without building the program')


def _own(*names, hint='write this part yourself'):
    return {f'taotp.coupling.{name}': hint for name in names}


_ADDER = _own('build_adder_params', 'adder._free_params', 'adder._preln_params',
              'MultiOperandAdder', 'build_multi_operand_adder',
              hint='assemble the program yourself from the pieces of the earlier puzzles')
_SIZES = _own('sizes', 'theory_pad_length', hint='compute the sizes yourself')
_CENSUS = {**_ADDER, **_SIZES, **_own('adder_census', 'adder_layout', 'position_tables',
                                      hint='count by hand from the shapes')}

_ROWS = [   # id, title, budget, the package functions switched off while it is checked
    ('9.1', 'Parity scratchpad and coupled IDs', '', _own('parity_sequence', 'parity_positions')),
    ('9.2', 'The addition format (padding, reversed running sums)', '',
     _own('scratchpad_text', 'addition_sequence', 'pad_length')),
    ('9.3', 'Bi-level position IDs', '', _own('addition_sequence', 'coupled_ids',
                                              'formats._CoupledIds')),
    ('9.4', 'Multiplication: two-stage scratchpad and tri-level IDs', '',
     _own('multiplication_sequence')),
    ('9.5', 'Which keys does a response digit need?', '', _own('keys_for')),
    ('9.6', 'Hypercube position codes', '', _own('cube_code', 'position_codes')),
    ('9.7', 'Head 1: the digit-pair sum', '', _ADDER),
    ('9.8', 'Head 2 and the carry identity', '', _own('carry_out')),
    ('9.9', 'The separator and EOS flags', 'at most 2 ReLUs', {}),
    ('9.10', 'The digit MLP', 'at most 80 ReLUs', {}),
    ('9.11', 'Assemble the adder', '1 layer, 4 heads, 83 ReLUs, d = 19 + 2 P1 + 2 P2', _ADDER),
    ('9.12', 'Size calculator', '', _SIZES),
    ('9.13', 'Find the bug in the code width', 'at most 20 operands of 20 digits', {}),
    ('9.14', 'The smallest exact lambda', '', {}),
    ('9.15', 'Addition in base b', '', {}),
    ('9.16', 'Design your own: a 1-layer parity program', '1 layer', {}),
    ('9.17', 'Without the scratchpad, fan-in grows', '', {}),
    ('9.18', 'Count the parameters', '', _CENSUS),
    ('9.19', 'Port the adder to PreLN', 'PreLN, 1 layer, 4 heads', _ADDER),
]
PUZZLES = [Puzzle(pid, title, 'checked', globals()[f'check_{pid.replace(".", "_")}'], budget,
                  refuse) for pid, title, budget, refuse in _ROWS]
