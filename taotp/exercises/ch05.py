"""Checkers for the puzzles of Chapter 5, Min, Max and Sort.

A Sort answer must print the sorted numbers by greedy decoding (judged teacher-forced: the
first wrong step is where greedy decoding goes wrong), on the *visible* cases of
``visible_cases(id)`` (a failure shows the expected token) and on *hidden* ones drawn afresh.
Inputs end with the terminator 0; in 5.7 tokens 0-9 are digits, ``COMMA = 10`` and ``END =
11``: 42, 7, 100 is ``[4, 2, 10, 7, 10, 1, 0, 0, 11]``.  The package's own Sorts of Chapter
12 are recognised by the shape of their token table and refused.
"""
import numpy as np

from ..decoding import last_token_argmax, teacher_forced_argmax
from ..sort import random_min_inputs
from . import toolkit
from .registry import Puzzle, checker
from .toolkit import Finding, Passed
from .training_checks import check_5_8

COMMA, END = 10, 11

_VISIBLE = {
    '5.1': [('all numbers, decreasing', list(range(32, 0, -1))),
            ('all numbers, increasing', list(range(1, 33))),
            ('largest and smallest, alternating', [v for k in range(16) for v in (32 - k, 1 + k)]),
            ('both ends, alternating', [32, 1, 31, 2]), ('the example', [5, 3, 9]),
            ('powers of two', [16, 1, 8, 32, 2, 4]), ('the smallest number alone', [1]),
            ('the largest number alone', [32])],
    '5.4': [('neighbours in the middle and both ends', [500, 499, 501, 1, 999]),
            ('30 small neighbours, decreasing', list(range(31, 1, -1))),
            ('30 large neighbours, decreasing', list(range(999, 969, -1))),
            ('powers of two', [64, 1, 512, 8, 256, 2, 128, 4, 32, 16]),
            ('the smallest number alone', [1]), ('the largest number alone', [999])],
    '5.6': [('the example', [5, 2, 5, 2]), ('two copies', [3, 3]),
            ('three copies and a smaller number', [15, 15, 15, 1]), ('six copies', [1] * 6),
            ('two numbers, three copies each', [2, 9, 2, 9, 9, 2]),
            ('three numbers, two copies each', [15, 14, 15, 14, 1, 1]),
            ('one number', [4]), ('twelve copies of one number', [8] * 12),
            ('eleven copies and one smaller number', [15] * 11 + [1]),
            ('eleven copies and one larger number', [1] * 11 + [15]),
            ('twelve distinct numbers, decreasing', list(range(15, 3, -1))),
            ('both ends, six copies each', [15, 1] * 6),
            ('powers of two, three copies each', [8, 4, 2, 1] * 3)],
    '5.7': [('the example', [42, 7, 100]), ('shared prefixes', [7, 70, 700, 71, 17]),
            ('the ends', [0, 999]),
            ('each a prefix of another', [1, 10, 100, 11, 101, 110, 111, 0]),
            ('three widths', [100, 99, 10, 9, 1, 0]), ('the number 0 alone', [0]),
            ('the largest number alone', [999]), ('the same digits', [120, 12, 102, 21, 201]),
            ('powers of two', [512, 256, 128, 64, 32, 16, 8, 4]),
            ('eight three-digit neighbours', [999, 998, 997, 996, 995, 994, 993, 992]),
            ('runs of nines', [9, 99, 999, 98, 989, 8, 89, 899])],
}


def visible_cases(puzzle_id):
    """The cases ``puzzle_id`` always tries, as (label, numbers); the input is the numbers
    followed by the terminator 0 (5.7: written with ``encode_numbers``)."""
    return [(label, list(numbers)) for label, numbers in _VISIBLE.get(puzzle_id, [])]


def encode_numbers(numbers):
    """Token list of 5.7: base-10 digits, ``COMMA`` between numbers, ``END`` at the end."""
    tokens = [t for value in numbers for t in [int(d) for d in str(int(value))] + [COMMA]]
    return tokens[:-1] + [END] if tokens else []


# ----------------------------------------------------------------------------- reading programs

def _program(params, vocab, vocab_why, block, block_why, **limits):
    """(params, config) of a program with ``vocab`` tokens, ``block`` positions, in ``limits``."""
    params = toolkit.program(params)
    toolkit.room(params, vocab, vocab_why=f'({vocab_why})')
    toolkit.budget(params, **limits)
    return params, toolkit.room(params, block=block, block_why=f'({block_why})')


def _is_bits_sort(params, rows=200):
    """Whether the numbers' rows, as the layers read them, are distinct words of one length
    and one weight: the balanced codes of ``taotp.sort``'s bits design, of any code length,
    with any ranks, rotated, rescaled or cast.  Rows are taken as layer norm sees them at
    position 0 (token plus position row, centred), on the dimensions some layer reads; then
    the squared distance of two rows is proportional to their Hamming distance, so it falls
    on 3 to 64 equally spaced levels, however large a part all rows share."""
    tok = np.asarray(params['tok_emb'], dtype=float)
    if len(tok) <= rows:
        return False
    x = tok[1:rows + 1] + np.asarray(params['pos_emb'], dtype=float)[0]
    x = x - x.mean(axis=1, keepdims=True)
    read = np.zeros(tok.shape[1], dtype=bool)
    for layer in params['layers']:
        for key in ('Q', 'K', 'V', 'M1'):
            w = np.abs(np.asarray(layer[key], dtype=float))
            read |= (w.sum(axis=(0, 2)) if w.ndim == 3 else w.sum(axis=1)) > 0
    x = x[:, read] if read.any() else x
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-300)
    x = x - x.mean(axis=0)        # distances stay, a part all rows share goes (round 7)
    square = (x * x).sum(axis=1)
    gaps = (square[:, None] + square[None, :] - 2 * x @ x.T)[np.triu_indices(rows, 1)]
    if gaps.min() <= 1e-6 * gaps.max():         # rows that repeat: not codes of numbers
        return False
    for unit in gaps.min() / np.arange(1, 5):   # the closest two may differ in 2 to 8 bits
        levels = gaps / unit
        if np.abs(levels - np.round(levels)).max() < 0.02:
            return 3 <= len(np.unique(np.round(levels))) <= 64
    return False


def _is_compact_sort(tok_emb, count=33):
    """Whether the first ``count`` rows lie on one circle at the angles arctan(t0 r**t) of
    ``taotp.sort``'s compact design, for some t0 and r (any rotation or reflection)."""
    x = tok_emb[:count] - tok_emb[:count].mean(axis=1, keepdims=True)
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    if len(s) < 2 or (len(s) > 2 and s[2] > 1e-4 * s[0]):
        return False                                   # not one circle
    plane = x @ vt[:2].T
    delta = np.unwrap(np.arctan2(plane[:, 1], plane[:, 0]))
    delta -= delta[0]
    for d in (delta, -delta):
        # a_t = a_0 + d_t and tan(a_t) = (t0 + tan d_t) / (1 - t0 tan d_t) with t0 = tan(a_0):
        # a geometric tan(a_t) needs tan(a_1)^2 = t0 tan(a_2), a quartic in t0 (left = right)
        T1, T2 = np.tan(d[1]), np.tan(d[2])
        left = np.polymul(np.polymul([1, T1], [1, T1]), [-T2, 1])
        right = np.polymul(np.polymul([1, 0], [1, T2]), np.polymul([-T1, 1], [-T1, 1]))
        roots = np.roots(np.polysub(right, left))
        for t0 in roots[(roots.real > 0) & (np.abs(roots.imag) <= 1e-6 * np.abs(roots))].real:
            a = np.arctan(t0) + d
            r = np.tan(a[1]) / t0
            if 0 < r < 1 and np.abs(np.arctan(t0 * r ** np.arange(count)) - a).max() < 1e-4:
                return True
    return False


# ----------------------------------------------------------------------------- judging Sort

def _text(tokens, digits):
    if not digits:
        return str([int(t) for t in tokens])
    return '"' + ''.join({COMMA: ', ', END: ' END'}.get(int(t), str(int(t))) for t in tokens) + '"'


def _token(t, digits):
    return {COMMA: 'COMMA', END: 'END'}.get(int(t), str(int(t))) if digits else str(int(t))


def first_wrong_step(params, cases, on):
    """Teacher-forced decoding of (prompt, answer) token lists, one pass per shape (``on(n)``
    names the prompts of n tokens): None if every answer comes out, else (index, step,
    predicted answer) of the first case that goes wrong, at its first wrong step."""
    shapes, wrong = {}, {}
    for i, (prompt, answer) in enumerate(cases):
        shapes.setdefault((len(prompt), len(answer)), []).append(i)
    for (n, _), idx in shapes.items():
        seqs = np.array([np.concatenate(cases[i]) for i in idx], dtype=np.int64)
        with np.errstate(all='ignore'):
            pred = toolkit.run_program(lambda: teacher_forced_argmax(seqs, params, n), on=on(n))
        wrong.update((idx[j], pred[j]) for j in np.flatnonzero((pred != seqs[:, n:]).any(1)))
    if not wrong:
        return None
    k = min(wrong)
    return k, int(np.flatnonzero(wrong[k] != cases[k][1])[0]), wrong[k]


def _judge_sort(params, visible, hidden, hint, digits=False):
    """Greedy decoding must sort every (label, numbers) case; the first wrong step of the first
    wrong case becomes a Finding (its expected token only for a visible case)."""
    def prompt_answer(numbers):
        numbers = [int(v) for v in numbers]
        if digits:
            return encode_numbers(numbers), encode_numbers(sorted(numbers))
        return numbers + [0], sorted(numbers)
    cases = [(*prompt_answer(numbers), label, shown)
             for shown, group in ((True, visible), (False, hidden)) for label, numbers in group]
    found = first_wrong_step(params, [case[:2] for case in cases], 'inputs of {} tokens'.format)
    if found is None:
        return len(cases)
    k, step, pred = found
    (x, w, label, shown), got = cases[k], pred[step]
    done = 'at the first step' if step == 0 else (
        f'after printing {_text(w[:step], digits)}' if step <= 8 or digits else
        f'after printing {step} numbers right (..., {", ".join(map(str, w[step - 3:step]))})')
    where = f'input {_text(x, digits)} ({label}{"" if shown else ", drawn for this check"}): ' \
            f'wrong at step {step + 1} of {len(w)}'
    verdict = f'; expected {_token(w[step], digits)}' if shown else f', which is not right; {hint}'
    raise Finding(f'{where}: {done} your program printed {_token(got, digits)}{verdict}', x)


SORT_HINT = 'each step prints the smallest input number larger than the one printed last'


def _runs(rng, first, last, size):
    """Runs of ``size`` neighbours (shuffled) through first..last from a random offset, then the
    pairs the runs split, ``size // 2`` per input: every number and pair of neighbours is in one."""
    cuts = sorted({first, last + 1} | set(range(first + int(rng.integers(size)), last + 1, size)))
    cases = [(f'{b - a} neighbours, shuffled', rng.permutation(np.arange(a, b)).tolist())
             for a, b in zip(cuts, cuts[1:])]
    pairs = [(c - 1, c) for c in cuts[1:-1]]
    step = max(1, size // 2)
    return cases + [('pairs of neighbours', rng.permutation(np.ravel(pairs[i:i + step])).tolist())
                    for i in range(0, len(pairs), step)]


def _subsets(rng, numbers, count, max_len):
    return [('a random subset', rng.choice(numbers, size=int(rng.integers(1, max_len + 1)),
                                           replace=False).tolist()) for _ in range(count)]


def _each_length(rng, numbers, max_len, per_length=1):
    """``per_length`` random subsets of ``numbers`` of every size 1..max_len (round 25: a
    fixed count of random sizes left some sizes out of most checks)."""
    return [(f'{n} random numbers', rng.choice(numbers, size=n, replace=False).tolist())
            for n in range(1, max_len + 1) for _ in range(per_length)]


@checker('5.1')
def check_5_1(params):
    """Sort with a vocabulary of at least 33 on one layer with d_model <= 6."""
    params, cfg = _program(params, 33, 'numbers 1..32 and the terminator 0', 64,
                           '32 + 1 input tokens and 31 fed-back outputs', layers=1, d_model=6)
    if _is_compact_sort(params['tok_emb']):
        raise Finding('your program is the compact Sort of Chapter 12 '
                      '(taotp.sort.build_compact_sort_transformer) with other settings; 5.1 asks '
                      'for a small change to this chapter\'s Sort (its powerpoints)')
    rng, numbers = toolkit.fresh_rng(), np.arange(1, 33)
    hidden = [('all numbers, shuffled', rng.permutation(numbers).tolist()) for _ in range(3)]
    hidden += [('the 16 largest numbers, shuffled', rng.permutation(numbers[16:]).tolist())]
    hidden += [('two numbers', [a, b]) for a in numbers for b in numbers if a != b]
    hidden += _subsets(rng, numbers, 1500, 32)
    count = _judge_sort(params, visible_cases('5.1'), hidden, SORT_HINT)
    return Passed(f'{count:,} inputs over numbers 1..32 sorted: the 8 of ch05.visible_cases'
                  f'(\'5.1\'), every ordered pair, the full set shuffled, the crowded end, and '
                  f'1,500 random subsets of every size drawn afresh; budget kept: 1 layer, '
                  f'd_model {cfg["d_model"]} <= 6')


# ----------------------------------------------------------------------------- 5.2

MIN_LENGTHS = (1, 2, 3, 5, 8, 16, 31, 32)         # every pattern; the other lengths up to 32 get
OTHER_LENGTHS = sorted(set(range(1, 33)) - set(MIN_LENGTHS))   # a few rows each (round 17: none)


def _min_rows(rng, vocab, n):
    """Rows of length ``n`` for Min: patterns at both ends and in the middle, minima in each 16th
    of the vocabulary, random rows with half of their values among the 20 smallest and largest;
    for the ``OTHER_LENGTHS``, the minimum first, the minimum last and 2 random rows."""
    if n in OTHER_LENGTHS:
        m, top = (int(v) for v in np.sort(rng.choice(vocab, size=2, replace=False)))
        return [([m] + [top] * (n - 1), 'the minimum first'),
                ([top] * (n - 1) + [m], 'the minimum last')] + \
            [(r.tolist(), 'random, half of it at the ends')
             for r in random_min_inputs(vocab, n, 2, rng=rng)]
    top, mid = vocab - 1, vocab // 2
    rows = [([top] * n, 'all equal to the largest token'), ([0] * n, 'all equal to 0'),
            ([mid] * n, 'all equal')]
    if n >= 2:
        rows += [([top] * (n - 2) + [1, 0], 'the two smallest at the end'),
                 ([0] + [1] * (n - 1), 'the minimum first, its neighbour after it'),
                 ([1] * (n - 1) + [0], 'the minimum last'),
                 ([top] * (n - 1) + [top - 1], 'no small value'),
                 ([mid + 1] * (n - 1) + [mid], 'neighbours in the middle'),
                 ([top - 1, top] * (n // 2) + [top - 1] * (n % 2), 'the two largest tokens')]
        for k in rng.choice(int(np.log2(top)) + 1, size=2, replace=False):
            p = 2 ** int(k)
            row = rng.choice([p - 1, p, p + 1], size=n)
            row[int(rng.integers(n))] = p - 1
            rows.append((np.minimum(row, top).tolist(), 'powers of two and their neighbours'))
    for s in range(16):                                   # the minimum anywhere in the vocabulary
        m = int(rng.integers(s * vocab // 16, (s + 1) * vocab // 16 - 1))
        row = rng.integers(m + 1, min(vocab, m + 1 + int(rng.integers(1, 10 ** 6))), size=n)
        row[rng.choice(n, size=min(n, 2), replace=False)] = [m, m + 1][:min(n, 2)]
        rows.append((row.tolist(), 'the minimum and the next token, anywhere in the vocabulary'))
    random = random_min_inputs(vocab, n, 60 if n == 32 else 6, rng=rng)
    return rows + [(r.tolist(), 'random, half of it at the ends') for r in random]


@checker('5.2')
def check_5_2(params):
    """Min for a vocabulary of at least 1,000,000, including the hard cases at both ends."""
    params, cfg = _program(params, 1_000_000, 'a million values', 32,
                           'inputs of up to 32 tokens', d_model=8)
    rng, vocab, total = toolkit.fresh_rng(), cfg['vocab_size'], 0
    for n in range(1, 33):
        rows = _min_rows(rng, vocab, n)
        X = np.array([r for r, _ in rows], dtype=np.int64)
        got = toolkit.run_program(lambda: last_token_argmax(X, params), on=f'inputs of {n} tokens')
        bad = np.flatnonzero(got != X.min(axis=1))
        total += len(rows)
        if len(bad):
            row, label = rows[int(bad[0])]
            on = f'the input of {n} tokens {toolkit.short(row, 200)} ({label}, drawn for this ' \
                 f'check; all of it is the result\'s .counterexample)'
            raise toolkit.wrong(on, int(got[bad[0]]), 'the answer at the last position is the '
                                'smallest token of the input', row)
    return Passed(f'the minimum of {total} inputs of every length from 1 to 32 over a '
                  f'vocabulary of {vocab:,}, read at the last position: at lengths '
                  f'{", ".join(map(str, MIN_LENGTHS))} all equal, the '
                  f'minimum first or last, neighbouring tokens at both ends and in the middle, '
                  f'powers of two, the minimum and the next token in each sixteenth of the '
                  f'vocabulary, and random rows with half of their values among the 20 smallest '
                  f'and 20 largest tokens, at the others the minimum first, last and 2 random '
                  f'rows, drawn afresh; budget kept: d_model {cfg["d_model"]} <= 8')


@checker('5.4')
def check_5_4(params):
    """Sort distinct numbers from 1..999 with a vocabulary of at least 1,000 (block_size >= 64)."""
    params, cfg = _program(params, 1000, 'numbers 1..999 and the terminator 0', 64,
                           'inputs of up to 30 numbers', d_model=2048)
    if _is_bits_sort(params):
        raise Finding('your numbers\' rows are codes of one length and weight, as layer norm '
                      'sees them: the bits Sort of Chapter 12 (taotp.build_large_vocab_sort_'
                      'transformer, any code length or ranks); 5.4 asks for a construction of '
                      'your own')
    rng = toolkit.fresh_rng()
    hidden = _runs(rng, 1, 999, 30) + _each_length(rng, np.arange(1, 1000), 30, 2)
    _judge_sort(params, visible_cases('5.4'), hidden, SORT_HINT)
    return Passed(f'inputs of up to 30 distinct numbers from 1..999 sorted: the 6 of '
                  f'ch05.visible_cases(\'5.4\'), runs of neighbours that put every number and '
                  f'every pair of neighbours of 1..999 in some input, and two random inputs of '
                  f'every length from 1 to 30, drawn afresh; {cfg["n_layers"]} layer(s), '
                  f'budget kept: d_model {cfg["d_model"]:,} <= 2,048')


def _each_distinct_count(rng, longest=12, top=15):
    """A multiset of 1..top for every length n <= longest and every count k <= n of distinct
    numbers, the n - k repeats spread at random (round 25: all distinct, or one repeat, at
    lengths 8-12 were missing from most checks)."""
    out = []
    for n, k in ((n, k) for n in range(1, longest + 1) for k in range(1, n + 1)):
        counts = 1 + rng.multinomial(n - k, np.ones(k) / k)
        values = np.repeat(rng.choice(np.arange(1, top + 1), size=k, replace=False), counts)
        out.append((f'{n} numbers, {k} of them distinct', rng.permutation(values).tolist()))
    return out


@checker('5.6')
def check_5_6(params):
    """Sort with repeated elements: numbers 1..15 (repeats allowed), up to 12 of them, then 0."""
    params, _ = _program(params, 16, 'numbers 1..15 and the terminator 0', 24,
                         '12 numbers, the terminator and 11 fed-back outputs')
    rng, hidden = toolkit.fresh_rng(), []
    for value in range(1, 16):                  # every number with every count of copies
        for copies in range(1, 13):
            rest = rng.integers(1, 16, size=int(rng.integers(0, 13 - copies)))
            hidden.append((f'{copies} copies of {value} among others',
                           rng.permutation(np.concatenate([[value] * copies, rest])).tolist()))
    hidden += _each_distinct_count(rng)
    for _ in range(600):
        pool = rng.choice(np.arange(1, 16), size=int(rng.integers(1, 13)), replace=False)
        hidden.append(('a random multiset', rng.choice(pool, size=int(rng.integers(1, 13)))
                       .tolist()))
    count = _judge_sort(params, visible_cases('5.6'), hidden, 'a number is printed again while '
                        'the input holds more copies of it than were printed')
    return Passed(f'{count:,} inputs sorted with their repeats: the 13 of ch05.visible_cases'
                  f'(\'5.6\'), every number 1..15 with every count of copies 1..12, every length '
                  f'1-12 with every count of distinct numbers, and 600 random multisets of 1-12 '
                  f'numbers, drawn afresh')


def _with_widths(rng, widths):
    """Distinct numbers below 1,000 with these numbers of digits, in random order."""
    widths = np.asarray(widths)
    values = [v for w in (1, 2, 3) for v in rng.choice(
        np.arange(10 ** (w - 1) if w > 1 else 0, 10 ** w), size=int((widths == w).sum()),
        replace=False).tolist()]
    return rng.permutation(values).tolist()


def _lists_of_every_size(rng):
    """A list for every prompt size of 5.7, 2 to 32 tokens (a number of w digits takes w + 1
    tokens with its COMMA or END): k numbers, 2k <= size <= 4k, the extra digits spread
    among them at random (round 25: some sizes were missing from most checks)."""
    out = []
    for size in range(2, 33):
        k = int(rng.choice([k for k in range(1, 9) if 2 * k <= size <= 4 * k]))
        widths = np.ones(k, dtype=int)
        np.add.at(widths, rng.choice(np.repeat(np.arange(k), 2), size - 2 * k, replace=False), 1)
        out.append((f'a random list of {size} tokens', _with_widths(rng, widths)))
    return out


@checker('5.7')
def check_5_7(params):
    """Sort up to 8 distinct numbers below 1,000 written with digit tokens (see module doc)."""
    params, _ = _program(params, 12, 'digits 0-9, COMMA = 10, END = 11', 64,
                         'up to 32 input tokens and as many outputs')
    rng = toolkit.fresh_rng()
    hidden = _runs(rng, 0, 999, 8) + _lists_of_every_size(rng)
    hidden += [('a random list', _with_widths(rng, rng.integers(1, 4, size=rng.integers(1, 9))))
               for _ in range(40)]                # mixed widths: 1, 2 or 3 digits
    _judge_sort(params, visible_cases('5.7'), hidden, 'the output is the same numbers in '
                'ascending order, digit by digit, COMMA between numbers and END last', digits=True)
    return Passed('lists of 1-8 distinct numbers below 1,000 sorted in the digit format: '
                  'the 11 of ch05.visible_cases(\'5.7\'), runs of neighbours that put every '
                  'number and every pair of neighbours of 0..999 in some list, a random list '
                  'of every length from 2 to 32 tokens and 40 random lists of mixed widths, '
                  'drawn afresh')


PUZZLES = [
    Puzzle('5.1', 'Sort a vocabulary of 33 with a slight change', 'checked', check_5_1,
           budget='1 layer, d_model <= 6'),
    Puzzle('5.2', 'Min that stays exact for a million values', 'checked', check_5_2,
           budget='d_model <= 8'),
    Puzzle('5.3', 'An architecture change that makes Sort as easy as Min', 'reflect'),
    Puzzle('5.4', 'Sort for a large vocabulary (reconstructed)', 'checked', check_5_4,
           budget='vocabulary >= 1,000, d_model <= 2,048'),
    Puzzle('5.5', 'Sort with negative numbers', 'reflect'),
    Puzzle('5.6', 'Sort with repeated elements', 'checked', check_5_6),
    Puzzle('5.7', 'Sort numbers written with several digit tokens', 'checked', check_5_7),
    Puzzle('5.8', 'Train a transformer to sort', 'checked', check_5_8,
           'none (the size is reported)'),
]
