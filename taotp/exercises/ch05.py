"""Checkers for the puzzles of Chapter 5, Min, Max and Sort.

Programs are submitted as params dicts, read once into plain float64 arrays
(``ch04.frozen``), and judged by greedy decoding for exactly as many steps as
the answer has tokens, computed by the shared engine in one teacher-forced pass
per group of inputs (``teacher_forced_argmax``).  Every stated budget is
enforced on the submitted arrays with ``guard.budget``.  Each checker tries
hand-made boundary inputs (shortest and longest, all equal, both ends of the
range, powers of two, the crowded end) and a seeded random sweep whose seed is
taken from the submitted program (``ch04.submission_rng``).

Token conventions:

* Sort (5.1, 5.4, 5.6): numbers are tokens, the input ends with the terminator
  0, and the answer is the numbers before it in ascending order (one token
  each; the terminator is not repeated).
* Multi-token numbers (5.7): tokens 0-9 are digits, ``COMMA = 10`` separates
  numbers and ``END = 11`` closes the list.  Numbers are written in base 10
  without leading zeros ("0" itself is one digit), e.g. 42, 7, 100 is
  ``[4, 2, 10, 7, 10, 1, 0, 0, 11]``.  The answer lists the same numbers in
  ascending order in the same format, ``END`` included, so it has exactly as
  many tokens as the input: ``[7, 10, 4, 2, 10, 1, 0, 0, 11]``.
"""
import numpy as np

from ..decoding import decode, last_token_argmax, teacher_forced_argmax
from ..params import config
from . import guard
from .ch04 import frozen, submission_rng
from .registry import Puzzle, checker
from .result import Finding, Passed
from .training import check_5_8

COMMA, END = 10, 11
SEED_NOTE = 'the random ones drawn with a seed taken from your program'


def _shape(params):
    cfg = config(params)
    return cfg, cfg['vocab_size'], cfg['block_size']


def _need(cond, message):
    if not cond:
        raise Finding(message)


def _check_answers(params, prompts, answers, labels=None):
    """Is greedy decoding of every prompt exactly its answer?  The first wrong one -> Finding.

    Greedy decoding reproduces an answer exactly when, fed the answer so far, every
    answer position predicts the next token; so one teacher-forced pass of the
    shared engine per (prompt length, answer length) group decides every prompt.
    A failure is then decoded for real, so the message shows what the program prints.
    """
    groups = {}
    for i, (x, w) in enumerate(zip(prompts, answers)):
        groups.setdefault((len(x), len(w)), []).append(i)
    wrong = []
    for (n_prompt, _), idx in groups.items():
        seqs = np.array([list(prompts[i]) + list(answers[i]) for i in idx], dtype=np.int64)
        pred = guard.run_program(lambda: teacher_forced_argmax(seqs, params, n_prompt),
                                 on=f'inputs of length {n_prompt}')
        wrong += [idx[j] for j in np.flatnonzero((pred != seqs[:, n_prompt:]).any(1))]
    if wrong:
        k = min(wrong)
        x, w = [int(t) for t in prompts[k]], [int(t) for t in answers[k]]
        got = guard.run_program(lambda: decode(x, params, max_steps=len(w)), on=f'input {x}')
        label = f' ({labels[k]})' if labels and labels[k] else ''
        raise Finding(f'input {x}{label}: expected {w}, got {got[len(x):].tolist()} · first '
                      f'failure, input {k + 1} of {len(prompts)} ({len(wrong)} wrong)', x)


def _sort_inputs(vocab, rng, count, max_len, full_set=True):
    """Distinct-number inputs (then 0): hand-made boundary cases and ``count`` seeded ones.

    Returns (prompts, labels); the labels name the hand-made cases.
    """
    numbers = np.arange(1, vocab)
    top = int(numbers[-1])
    cases = []
    if full_set and vocab - 1 <= max_len:
        cases += [(rng.permutation(numbers).tolist(), 'all numbers, shuffled') for _ in range(3)]
        cases += [(numbers[::-1].tolist(), 'all numbers, decreasing'),
                  (numbers.tolist(), 'all numbers, already sorted')]
    crowd = numbers[-min(len(numbers), max_len):]
    cases += [(crowd[::-1].tolist(), 'the largest numbers, decreasing'),
              (numbers[:max_len][::-1].tolist(), 'the smallest numbers, decreasing'),
              ([top, 1, top - 1, 2] if vocab > 4 else [1], 'both ends, alternating'),
              ([1], 'the smallest number alone'), ([top], 'the largest number alone')]
    powers = [2 ** k for k in range(20) if 2 ** k <= top][:max_len]
    cases.append((rng.permutation(powers).tolist(), 'powers of two'))
    alternating = [v for pair in zip(numbers[::-1], numbers) for v in pair]
    cases.append((list(dict.fromkeys(alternating))[:max_len], 'largest and smallest, alternating'))
    cases += [(rng.choice(numbers, size=min(max_len, len(numbers)), replace=False).tolist(),
               'the longest allowed input') for _ in range(3)]
    for _ in range(count):
        k = int(rng.integers(1, min(max_len, vocab - 1) + 1))
        cases.append((rng.choice(numbers, size=k, replace=False).tolist(), ''))
    return [[int(v) for v in c] + [0] for c, _ in cases], [label for _, label in cases]


def _pairs(top):
    """Every ordered pair of distinct numbers 1..top, then 0."""
    return [[a, b, 0] for a in range(1, top + 1) for b in range(1, top + 1) if a != b]


@checker('5.1')
def check_5_1(params):
    """Sort with a vocabulary of at least 33 on one layer with d_model <= 6."""
    params = frozen(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 33, f'the vocabulary must have at least 33 tokens (numbers 1..32 and the '
                       f'terminator 0); got vocab_size {vocab}')
    guard.budget(params, layers=1, d_model=6)
    _need(block >= 2 * 33 - 2, f'block_size must be at least 64 to sort 32 numbers (32 + 1 '
                               f'input tokens + 31 fed-back outputs); got {block}')
    prompts, labels = _sort_inputs(33, submission_rng(51, params), 1500, 32)
    pairs = _pairs(32)
    prompts, labels = prompts + pairs, labels + ['two numbers'] * len(pairs)
    _check_answers(params, prompts, [sorted(p[:-1]) for p in prompts], labels)
    return Passed(f'{len(prompts):,} inputs over numbers 1..32 sorted: the full set in 5 orders, '
                  f'every ordered pair, each number alone, the crowded end, powers of two, '
                  f'both ends alternating, and 1,500 random subsets of every size ({SEED_NOTE}); '
                  f'budget kept: 1 layer, d_model {cfg["d_model"]} <= 6')


def _min_inputs(rng, vocab, length, count):
    """Rows of ``length`` values: half of them among the 20 smallest and 20 largest tokens."""
    rows = rng.integers(0, vocab, size=(count, length))
    ends = np.concatenate([np.arange(20), np.arange(vocab - 20, vocab)])
    return np.where(rng.random(rows.shape) < 0.5, rng.choice(ends, size=rows.shape), rows)


def _min_boundary(rng, vocab, length):
    """Hand-made Min inputs of one length, each with a label."""
    V, n = vocab, length
    top = V - 1
    cases = [([top] * n, 'all equal to the largest token'), ([0] * n, 'all equal to 0'),
             ([V // 2] * n, 'all equal')]
    if n >= 2:
        cases += [([top] * (n - 2) + [1, 0], 'the two smallest at the end'),
                  ([0] + [1] * (n - 1), 'the minimum first, its neighbour after it'),
                  ([1] * (n - 1) + [0], 'the minimum last'),
                  ([top] * (n - 1) + [top - 1], 'no small value; the answer is V - 2'),
                  ([V // 2 + 1] * (n - 1) + [V // 2], 'neighbours in the middle'),
                  ([top - 1, top] * (n // 2) + [top - 1] * (n % 2), 'the two largest tokens')]
        for k in rng.choice(int(np.log2(top)) + 1, size=2, replace=False):
            p = 2 ** int(k)
            row = rng.choice([p - 1, p, p + 1], size=n).tolist()
            row[int(rng.integers(n))] = p - 1
            cases.append(([min(v, top) for v in row], 'powers of two and their neighbours'))
        m = int(rng.integers(0, top))
        row = rng.integers(m + 1, V, size=n)
        row[rng.choice(n, size=2, replace=False)] = [m, m + 1]
        cases.append((row.tolist(), 'the minimum and the next token both present'))
    return cases


MIN_LENGTHS = (1, 2, 3, 5, 8, 16, 31, 32)


@checker('5.2')
def check_5_2(params):
    """Min for a vocabulary of at least 1,000,000, including the hard cases at both ends."""
    length = 32
    params = frozen(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 1_000_000, f'the vocabulary must have at least 1,000,000 tokens; got {vocab:,}')
    guard.budget(params, d_model=8)
    _need(block >= length, f'block_size must be at least {length}; got {block}')
    rng = submission_rng(52, params)
    checked = 0
    for n in sorted({min(k, length) for k in MIN_LENGTHS}):
        cases = _min_boundary(rng, vocab, n)
        count = 100 if n == length else 8
        rows = np.concatenate([np.array([c for c, _ in cases], dtype=np.int64).reshape(-1, n),
                               _min_inputs(rng, vocab, n, count)])
        labels = [label for _, label in cases] + ['random'] * count
        got = guard.run_program(lambda: last_token_argmax(rows, params), what='your program')
        want = rows.min(axis=1)
        bad = np.flatnonzero(got != want)
        checked += len(rows)
        if len(bad):
            k = int(bad[0])
            shown = rows[k].tolist()
            text = shown if n <= 8 else (f'of length {n} ending {shown[-4:]} (holding '
                                         f'{sorted(set(shown))[:3]}...)')
            raise Finding(f'input {text} ({labels[k]}): expected {int(want[k])}, got '
                          f'{int(got[k])} · first failure ({len(bad)} of {len(rows)} inputs of '
                          f'length {n} wrong)', shown)
    return Passed(f'the minimum of {checked} inputs of lengths {", ".join(map(str, MIN_LENGTHS))} '
                  f'over a vocabulary of {vocab:,}, read at the last position: all equal, the '
                  f'minimum first or last, neighbouring tokens at both ends and in the middle, '
                  f'powers of two, and random rows with half of their values among the 20 '
                  f'smallest and 20 largest tokens ({SEED_NOTE}); budget kept: d_model '
                  f'{cfg["d_model"]} <= 8')


@checker('5.4')
def check_5_4(params):
    """Sort distinct numbers from 1..999 with a vocabulary of at least 1,000 (block_size >= 64)."""
    params = frozen(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 1000, f'the vocabulary must have at least 1,000 tokens; got {vocab:,}')
    guard.budget(params, d_model=2048)
    _need(block >= 64, f'block_size must be at least 64 (inputs of up to 30 numbers); got {block}')
    prompts, labels = _sort_inputs(1000, submission_rng(54, params), 100, 30)
    extra = [([500, 499, 501, 1, 999], 'neighbours in the middle and both ends'),
             (list(range(31, 1, -1)), '30 small neighbours, decreasing')]
    prompts += [p + [0] for p, _ in extra]
    labels += [label for _, label in extra]
    _check_answers(params, prompts, [sorted(p[:-1]) for p in prompts], labels)
    return Passed(f'{len(prompts)} inputs of up to 30 distinct numbers from 1..999 sorted: both '
                  f'ends, neighbours at the top, bottom and middle, each end alone, powers of two, '
                  f'the longest allowed, and 100 random inputs of every length ({SEED_NOTE}); '
                  f'{cfg["n_layers"]} layer(s), budget kept: d_model {cfg["d_model"]:,} <= 2,048')


def _repeat_inputs(rng, count):
    """Multisets of 1..12 numbers from 1..15 (then 0): hand-made ones and ``count`` seeded ones."""
    cases = [([3, 3], ''), ([5, 2, 5, 2], ''), ([15, 15, 15, 1], ''), ([1] * 6, ''),
             ([2, 9, 2, 9, 9, 2], ''), ([15, 14, 15, 14, 1, 1], ''), ([4], 'one number'),
             ([1], 'one number'), ([15], 'one number')]
    cases += [([v] * 12, 'twelve copies of one number (the longest input)') for v in (1, 8, 15)]
    cases += [([15] * 11 + [1], 'eleven copies and one smaller number'),
              ([1] * 11 + [15], 'eleven copies and one larger number'),
              (list(range(15, 3, -1)), 'twelve distinct numbers, decreasing'),
              ([15, 1] * 6, 'both ends, six copies each'),
              ([8, 4, 2, 1] * 3, 'powers of two, three copies each')]
    for _ in range(count):
        pool = rng.choice(np.arange(1, 16), size=int(rng.integers(1, 13)), replace=False)
        cases.append((rng.choice(pool, size=int(rng.integers(1, 13))).tolist(), ''))
    return [[int(v) for v in c] + [0] for c, _ in cases], [label for _, label in cases]


@checker('5.6')
def check_5_6(params):
    """Sort with repeated elements: numbers 1..15 (repeats allowed), up to 12 of them, then 0."""
    params = frozen(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 16, f'the vocabulary must have at least 16 tokens (numbers 1..15 and the '
                       f'terminator 0); got vocab_size {vocab}')
    _need(block >= 24, f'block_size must be at least 24 (12 numbers, 0, 11 outputs); got {block}')
    prompts, labels = _repeat_inputs(submission_rng(56, params), 1000)
    _check_answers(params, prompts, [sorted(p[:-1]) for p in prompts], labels)
    return Passed(f'{len(prompts):,} inputs sorted with their repeats: twelve copies of one '
                  f'number, eleven copies and one other, twelve distinct numbers, single numbers, '
                  f'and 1,000 random multisets of 1-12 numbers drawn from 1-12 distinct values in '
                  f'1..15 ({SEED_NOTE})')


def encode_numbers(numbers):
    """Token list of 5.7: base-10 digits, ``COMMA`` between numbers, ``END`` at the end."""
    tokens = []
    for k, value in enumerate(numbers):
        tokens += [int(d) for d in str(int(value))]
        tokens.append(END if k == len(numbers) - 1 else COMMA)
    return tokens


def _digit_lists(rng, count):
    """Lists of 1-8 distinct numbers below 1,000: hand-made ones and ``count`` seeded ones."""
    lists = [([7, 70, 700, 71, 17], 'shared prefixes'), ([0, 999], ''),
             ([100, 99, 10, 9, 1, 0], ''), ([5], 'one number'), ([0], 'the number 0 alone'),
             ([999], 'the largest number alone'), ([120, 12, 102, 21, 201], ''),
             ([998, 989, 899, 999, 0, 1, 10, 100], ''),
             ([1, 10, 100, 11, 101, 110, 111, 0], 'each a prefix of another'),
             ([512, 256, 128, 64, 32, 16, 8, 4], 'powers of two'),
             ([999, 998, 997, 996, 995, 994, 993, 992], 'eight three-digit numbers (the longest '
                                                         'input)'),
             ([100, 101, 110, 111, 200, 210, 211, 300], 'eight three-digit numbers, sorted'),
             ([9, 99, 999, 98, 989, 8, 89, 899], 'runs of nines')]
    for _ in range(count):
        k = int(rng.integers(1, 9))
        width = rng.integers(1, 4, size=k)               # mix 1-, 2- and 3-digit numbers
        values = set()
        while len(values) < k:
            w = int(width[len(values)])
            values.add(int(rng.integers(0 if w == 1 else 10 ** (w - 1), 10 ** w)))
        lists.append((rng.permutation(sorted(values)).tolist(), ''))
    return lists


@checker('5.7')
def check_5_7(params):
    """Sort up to 8 distinct numbers below 1,000 written with digit tokens (see module doc)."""
    params = frozen(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 12, f'the vocabulary needs at least 12 tokens (digits 0-9, COMMA = 10, '
                       f'END = 11); got vocab_size {vocab}')
    _need(block >= 64, f'block_size must be at least 64 (up to 32 input tokens and as many '
                       f'outputs); got {block}')
    lists = _digit_lists(submission_rng(57, params), 300)
    prompts = [encode_numbers(v) for v, _ in lists]
    answers = [encode_numbers(sorted(v)) for v, _ in lists]
    _check_answers(params, prompts, answers, [label for _, label in lists])
    return Passed(f'{len(prompts)} lists of 1-8 distinct numbers below 1,000 sorted in the digit '
                  f'format: shared prefixes, numbers that are prefixes of others, 0 and 999 '
                  f'alone, eight three-digit numbers (the longest input), powers of two, and 300 '
                  f'random lists ({SEED_NOTE})')


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
