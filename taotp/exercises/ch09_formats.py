"""Chapter 9's shared checker helpers and the format puzzles 9.1 to 9.6 (the scratchpads and
their position IDs), checked as "write this function" puzzles by ``_function_puzzle``; the
module ``ch09`` holds the rest and the chapter's puzzle rows.
"""
import functools

import numpy as np

from .. import coupling as C
from . import toolkit as T
from .registry import checker
from .toolkit import Finding, Passed


# ----------------------------------------------------------------------------- shared helpers

def _ints(value, what, order=list):
    if isinstance(value, str) or T.array(value, what=what).ndim != 1:
        raise Finding(f'{what} must be a flat list of integers; got {T.short(value, 80)}')
    return order(T.array(value, what=what, integer=True).tolist())


_SORTED = functools.partial(_ints, order=sorted)


def _text(value, what):
    items = list(value) if isinstance(value, (str, list, tuple, np.ndarray)) else [None]
    if not all(isinstance(t, str) and len(t) == 1 for t in items):
        raise Finding(f'{what} must be a string or a list of one-character strings (one per '
                      f'token); got {T.short(value, 80)}')
    return ''.join(items)


def _function_puzzle(pid, name, cases, parts, want, scope, visible=1):
    """The checker of a "write this function" puzzle: ``cases(rng)`` draws the ``(on, args)``
    of one check (the first ``visible`` are the notebook's examples, the only ones whose
    expected value is shown); ``parts`` reads each part of the output, ``(read, name, rule)``
    (``rule``: text, or a function of the part and the args); ``want(*args)``."""
    def body(fn):
        drawn = cases(T.fresh_rng())
        for i, (on, args) in enumerate(drawn):
            got = T.call(fn, *args, what=f'your {name}', on=on)
            got = [got] if len(parts) == 1 else T.parts(got, len(parts), f'{on}: expected '
                                                                         f'{len(parts)} results')
            for g, w, (read, part, rule) in zip(got, want(*args), parts):
                g = read(g, f'your result ({on})')
                if g == w:
                    continue
                rule = rule(g, *args) if callable(rule) else rule
                if i < visible:
                    raise Finding(f'{on}: {part}: expected {w}, got {g}; {rule}', args)
                if isinstance(g, (str, list)):
                    k = next((k for k, (a, b) in enumerate(zip(g, w)) if a != b), None)
                    rule += (f'; entry {k} (from 0) is the first wrong one' if k is not None
                             else f'; it has {len(g)} entries, {len(w)} are needed')
                raise T.wrong(f'{on}: {part}', g, rule, args)
        return Passed(scope.format(len(drawn)))
    body.__name__ = body.__qualname__ = f'check_{pid.replace(".", "_")}'
    return checker(pid)(body)


def _fresh(rng, top):
    return int(rng.integers(1, top + 1))


def _digits(rng, n):
    """A random number of exactly ``n`` digits (past what int64 holds, for n > 18)."""
    return int(str(_fresh(rng, 9)) + ''.join(map(str, rng.integers(0, 10, size=n - 1))))


def _problems(rng, count, max_m=6, max_n=5, counts=(1, 2, 9, 10, 11, 100, 101), nines=8,
              few_wide=False):
    """The example; ``counts`` operands of 1, 2, 3 and 4 to ``nines`` nines, where the padding
    grows (round 20: padding to L + ceil(log10 m), wrong at [9] * 11, passed when one length
    per count was drawn); zeros, a lone digit, a power of ten; wide operands: 15 and 16 nines,
    where log10 rounds up, and (unless ``few_wide``) nines of 9 to 25 digits, sums past
    2^63, 2^53 + 1 and 17 to 20 random digits (round 25: digit counts from math.log10, and
    sums kept in int64 or float64, passed while no operand had over 8 digits); ``count``
    random, half ragged."""
    out = [[57, 48, 96]] + [[10 ** n - 1] * m for m in counts
                            for n in (1, 2, 3, int(rng.integers(4, nines + 1)))]
    out += [[0] * _fresh(rng, 3), [int(rng.integers(0, 10))],
            [10 ** _fresh(rng, 7)] + [0] * int(rng.integers(0, 3)),
            [int(rng.integers(1, 10)), 10 ** _fresh(rng, 8) - 1]]
    out += [[10 ** 15 - 1], [10 ** 16 - 1] * 2]
    if not few_wide:
        out += [[10 ** int(rng.integers(9, 26)) - 1] * 2, [10 ** 19 - 1] * 2, [2 ** 53 + 1],
                [int(rng.integers(2 ** 62, 2 ** 63 - 1)) for _ in 'ab'],     # int64 wraps
                [_digits(rng, int(rng.integers(17, 21))) for _ in range(int(rng.integers(2, 5)))]]
    for _ in range(count):
        ops = C.random_operands(_fresh(rng, max_m), _fresh(rng, max_n), rng=rng)
        out.append([int(str(a)[:_fresh(rng, len(str(a)))]) for a in ops]
                   if rng.random() < 0.5 else ops)
    return out


# ----------------------------------------------------------------------------- 9.1 - 9.6 formats

def _parity_cases(rng):
    cases = [('0101', 1)]                                      # the statement's example
    for n in (1, 100, int(rng.integers(2, 100))):
        alternating = ('01' if rng.random() < 0.5 else '10') * 50
        cases += [(bits, _fresh(rng, 59)) for bits in ('0' * n, '1' * n, alternating[:n])]
    cases += [(''.join(map(str, rng.integers(0, 2, size=_fresh(rng, 100)))), _fresh(rng, 59))
              for _ in range(30)]
    return [(f'bits {b!r}, s = {s}', (b, s)) for b, s in cases]


check_9_1 = _function_puzzle(
    '9.1', 'parity_sequence', _parity_cases,
    [(_text, 'the tokens', 'the bits, "=", then the running parities'),
     (_ints, 'the IDs', 'query bit k and scratchpad bit k share the ID s + k; "=" gets s')],
    lambda b, s: (lambda t, p: (''.join(t), p))(*C.parity_sequence(b, offset=s)),
    'tokens and IDs right on {} bit strings (the example 0101; all zeros, all ones, alternating '
    'of length 1, 100 and one between; 30 random of 1 to 100 bits; offsets 1 to 59)')

check_9_2 = _function_puzzle(
    '9.2', 'scratchpad_text', lambda rng: [(f'operands {o}', (o,)) for o in _problems(rng, 30)],
    [(_text, 'the string', 'pad every number to the digits of (10^L - 1) m; operands plain, '
                           'running sums b_0 = 0, ..., b_m units first')],
    lambda ops: (C.scratchpad_text(ops),),
    'the right string on {} operand lists (1 to 101 operands of up to 8 digits: every padding '
    'boundary, all nines, zeros, ragged lengths; and wide ones of up to 25 digits, sums past '
    '2^63)')

check_9_3 = _function_puzzle(
    '9.3', 'bilevel_ids', lambda rng: [
        (f'operands {o}, s1 = {a}, s2 = {b}', (o, a, b)) for o, a, b in
        [(o, 1, 1) if i == 0 else (o, _fresh(rng, 40), _fresh(rng, 40))
         for i, o in enumerate(_problems(rng, 30))]],
    [(_ints, 'level 1', 'separators get s1, a digit worth 10^j gets s1 + 1 + j'),
     (_ints, 'level 2', 'a_i and the "+" after it get s2 + i - 1, b_i and the separator in '
                        'front of it s2 + i')],
    lambda o, a, b: C.addition_sequence(o, offsets=(a, b))[1:],
    'both levels right on {} problems (1 to 101 operands, every padding boundary, operands of '
    'up to 25 digits) with offsets (1, 1) and random ones up to 40')


def _product_cases(rng):
    def number(top):
        return int(rng.integers(0, 10 ** _fresh(rng, top)))

    pairs = [(37, 925), (0, number(5)), (number(5), 0), (0, 0), (1, 1), (9, 9),
             (10 ** _fresh(rng, 6) - 1,) * 2, (10 ** _fresh(rng, 5), number(5)),
             (number(5), 10 ** _fresh(rng, 5)), (int(f'{_fresh(rng, 9)}0{_fresh(rng, 9)}'),
                                                 int(f'{_fresh(rng, 9)}00{_fresh(rng, 9)}'))]
    # random factors of up to 6 digits, and 4 of up to 12 (round 15: none over 6 was tried)
    pairs += [(number(6), number(5)) for _ in range(26)]
    pairs += [(number(12), number(12)) for _ in range(4)]
    # products past 2^63 (round 21: sums kept in int64, wrong there, passed half the checks)
    pairs += [(10 ** 12 - 1,) * 2, tuple(int(rng.integers(10 ** 11, 10 ** 12)) for _ in 'ab')]
    return [(f'{a} * {b}', (a, b)) for a, b in pairs]


check_9_4 = _function_puzzle(
    '9.4', 'multiplication_sequence', _product_cases,
    [(_text, 'the text', 'the partial products a * B_i padded to M + 1 digits, then the '
                         'shifted running sums padded to M + N digits, all units first')] +
    [(_ints, f'level {k}', 'follow the rules of the chapter token by token') for k in (1, 2, 3)],
    lambda a, b: (lambda t, *ids: (''.join(t), *ids))(*C.multiplication_sequence(a, b)),
    'text and all three levels right on {} products (zeros, ones, zeros inside a factor, all '
    'nines, powers of ten, random, factors of up to 12 digits, products past 2^63)')


def _key_cases(rng):
    cases = []
    for ops in _problems(rng, 12, max_m=5, max_n=4, counts=(2, 9, 10, 11), nines=7,
                         few_wide=True):
        text = C.scratchpad_text(ops)
        cases += [(f'operands {ops} ({text}), index {i} (token {text[i]!r})', (ops, i))
                  for i in range(text.index('='), len(text)) if C.keys_for(text, i)]
    return sorted(cases, key=lambda case: case[1] != ([57, 48, 96], 23))    # the example first


check_9_5 = _function_puzzle(
    '9.5', 'keys', _key_cases,
    [(_SORTED, 'the keys', 'the two digits whose level-1 ID is one larger and level-2 ID one '
                           'smaller than those of the token at index')],
    lambda ops, i: (C.keys_for(C.scratchpad_text(ops), i),),
    'the right pair of keys at every response position of 33 problems (1 to 11 operands: all '
    'nines, zeros, ragged, random)')


def _cube_cases(rng):
    cases = [(3, 2)] + [(D, k) for D in range(1, 7) for k in range(1, 2 ** D + 1)]
    for D in range(7, 33):
        # the ends, 8 random codes, every code with one bit set or one clear (round 15: only
        # 3 codes per width were tried), a random one with each count of bits set (round 17:
        # a code wrong only with two bits set passed past D = 16), at every width (round 23:
        # 4 drawn widths let k - 1 held in an int32, wrong at D = 32, pass 3 checks in 4)
        ks = {1, 2 ** D, *(int(k) for k in rng.integers(1, 2 ** D + 1, size=8))}
        ks |= {2 ** j + 1 for j in range(D)} | {2 ** D - 2 ** j for j in range(D)}
        ks |= {sum(2 ** int(j) for j in rng.choice(D, size=c, replace=False)) + 1
               for c in range(2, D - 1)}
        cases += [(D, int(k)) for k in sorted(ks)]
    return [(f'D = {D}, k = {k}', (D, k)) for D, k in cases]


check_9_6 = _function_puzzle(
    '9.6', 'cube', _cube_cases,
    [(lambda v, what: T.array(v, what=what).tolist(), 'the code',
      'the signs (-1)^bit of the D-bit binary expansion of k - 1, most significant bit first')],
    lambda D, k: (C.cube_code(D, k).astype(int).tolist(),),
    'every code right: all of them for D = 1 to 6, and for every width from 7 to 32 k = 1, '
    '2^D, every code with one bit set or one bit clear, one with each other count of bits set '
    'and 8 random ones')
