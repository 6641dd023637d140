"""Checkers for the puzzles of Chapter 5, Min, Max and Sort.

Programs are submitted as params dicts and judged by greedy decoding for
exactly as many steps as the answer has tokens, computed by the shared engine
in one teacher-forced pass per group of inputs (``teacher_forced_argmax``).

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
from .registry import Puzzle, checker
from .result import Finding, Passed

COMMA, END = 10, 11


def _shape(params):
    cfg = config(params)
    return cfg, cfg['vocab_size'], cfg['block_size']


def _need(cond, message):
    if not cond:
        raise Finding(message)


def _check_answers(params, prompts, answers, label='input'):
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
        raise Finding(f'input {x}: expected {w}, got {got[len(x):].tolist()} · first failure, '
                      f'{label} {k + 1} of {len(prompts)} ({len(wrong)} wrong)', x)


def _sort_inputs(vocab, rng, count, max_len, full_set=True):
    """Seeded distinct-number inputs (then 0), plus the full set and adversarial ones."""
    numbers = np.arange(1, vocab)
    prompts = []
    if full_set and vocab - 1 <= max_len:
        prompts += [rng.permutation(numbers).tolist() + [0] for _ in range(3)]
        prompts.append(numbers[::-1].tolist() + [0])
    top = numbers[-min(len(numbers), max_len):]
    prompts.append(top[::-1].tolist() + [0])                          # the crowded end
    prompts.append([int(numbers[-1]), 1, int(numbers[-2]), 2, 0] if vocab > 4 else [1, 0])
    for _ in range(count):
        k = int(rng.integers(1, min(max_len, vocab - 1) + 1))
        prompts.append(rng.choice(numbers, size=k, replace=False).tolist() + [0])
    return prompts


@checker('5.1')
def check_5_1(params, n_inputs=120):
    """Sort with a vocabulary of at least 33 on one layer with d_model <= 6."""
    guard.program(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 33, f'the vocabulary must have at least 33 tokens (numbers 1..32 and the '
                       f'terminator 0); got vocab_size {vocab}')
    _need(cfg['n_layers'] == 1 and cfg['d_model'] <= 6,
          f'the budget is the book\'s shape, 1 layer and d_model <= 6; got '
          f'{cfg["n_layers"]} layers, d_model {cfg["d_model"]}')
    _need(block >= 2 * 33 - 2, f'block_size must be at least 64 to sort 32 numbers (32 + 1 '
                               f'input tokens + 31 fed-back outputs); got {block}')
    rng = np.random.default_rng(51)
    prompts = _sort_inputs(33, rng, n_inputs, 32)
    answers = [sorted(p[:-1]) for p in prompts]
    _check_answers(params, prompts, answers)
    return Passed(f'{len(prompts)} inputs over numbers 1..32 sorted (the full set in 4 orders, '
                  f'the 32 numbers in decreasing order, and {n_inputs} seeded subsets of random '
                  f'size); 1 layer, d_model {cfg["d_model"]}')


@checker('5.2')
def check_5_2(params, n_inputs=200, length=32):
    """Min for a vocabulary of at least 1,000,000, including the hard cases at both ends."""
    guard.program(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 1_000_000, f'the vocabulary must have at least 1,000,000 tokens; got {vocab:,}')
    _need(cfg['d_model'] <= 8, f'keep d_model <= 8 (the check multiplies by a {vocab:,}-row '
                               f'out_emb); got {cfg["d_model"]}')
    _need(block >= length, f'block_size must be at least {length}; got {block}')
    rng = np.random.default_rng(52)
    rows = rng.integers(0, vocab, size=(n_inputs, length))
    ends = np.concatenate([np.arange(20), np.arange(vocab - 20, vocab)])
    hard = rng.random(rows.shape) < 0.5
    rows = np.where(hard, rng.choice(ends, size=rows.shape), rows)
    fixed = np.array([
        [vocab - 1] * (length - 2) + [1, 0],          # the two smallest, query at the low end
        [1] * (length - 1) + [0],
        [0] + [1] * (length - 1),                     # the answer far back, query next to it
        [vocab - 1] * (length - 1) + [vocab - 2],     # no small value at all
        [vocab // 2 + 1] * (length - 1) + [vocab // 2],
        [vocab - 2, vocab - 1] * (length // 2),
    ])
    rows = np.concatenate([fixed, rows]).astype(np.int64)
    got = guard.run_program(lambda: last_token_argmax(rows, params), what='your program')
    want = rows.min(axis=1)
    bad = np.flatnonzero(got != want)
    if len(bad):
        k = int(bad[0])
        shown = rows[k].tolist()
        raise Finding(f'input of length {length} ending {shown[-4:]} '
                      f'(holding {sorted(set(shown))[:3]}'
                      f'...): expected {int(want[k])}, got {int(got[k])} · first failure, input '
                      f'{k + 1} of {len(rows)} ({len(bad)} wrong)', shown)
    return Passed(f'the minimum of {len(rows)} seeded inputs of length {length} over a vocabulary '
                  f'of {vocab:,} (half of the values among the 20 smallest and 20 largest, plus 6 '
                  f'hand-made edge cases), read at the last position')


@checker('5.4')
def check_5_4(params, n_inputs=10):
    """Sort distinct numbers from a vocabulary of at least 1,000 (block_size >= 64)."""
    guard.program(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 1000, f'the vocabulary must have at least 1,000 tokens; got {vocab:,}')
    _need(cfg['d_model'] <= 2048, f'keep d_model <= 2,048 so the check stays fast; got '
                                  f'{cfg["d_model"]}')
    _need(block >= 64, f'block_size must be at least 64 (inputs of up to 30 numbers); got {block}')
    rng = np.random.default_rng(54)
    top = vocab - 1
    prompts = [
        [top, 1, top - 1, 2, 0],
        list(range(top, top - 30, -1)) + [0],                 # 30 neighbours, decreasing
        [500, 499, 501, 1, top, 0],
        [7, 0],
    ]
    for _ in range(n_inputs):
        k = int(rng.integers(2, 31))
        prompts.append(rng.choice(np.arange(1, vocab), size=k, replace=False).tolist() + [0])
    answers = [sorted(p[:-1]) for p in prompts]
    _check_answers(params, prompts, answers)
    return Passed(f'{len(prompts)} inputs of up to 30 distinct numbers from 1..{top:,} sorted '
                  f'(4 hand-made: both ends, 30 neighbours in decreasing order; '
                  f'{n_inputs} seeded); {cfg["n_layers"]} layer(s), d_model {cfg["d_model"]}')


@checker('5.6')
def check_5_6(params, n_inputs=120):
    """Sort with repeated elements: numbers 1..15 (repeats allowed), up to 12 of them, then 0."""
    guard.program(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 16, f'the vocabulary must have at least 16 tokens (numbers 1..15 and the '
                       f'terminator 0); got vocab_size {vocab}')
    _need(block >= 24, f'block_size must be at least 24 (12 numbers, 0, 11 outputs); got {block}')
    rng = np.random.default_rng(56)
    prompts = [[3, 3, 0], [5, 2, 5, 2, 0], [15, 15, 15, 1, 0], [1, 1, 1, 1, 1, 1, 0],
               [2, 9, 2, 9, 9, 2, 0], [15, 14, 15, 14, 1, 1, 0], [4, 0]]
    for _ in range(n_inputs):
        k = int(rng.integers(2, 13))
        pool = rng.choice(np.arange(1, 16), size=int(rng.integers(1, 5)), replace=False)
        prompts.append(rng.choice(pool, size=k).tolist() + [0])     # few values: many repeats
    answers = [sorted(p[:-1]) for p in prompts]
    _check_answers(params, prompts, answers)
    return Passed(f'{len(prompts)} inputs sorted with their repeats (7 hand-made, '
                  f'{n_inputs} seeded '
                  f'multisets of 2-12 numbers drawn from 1-4 distinct values in 1..15)')


def encode_numbers(numbers):
    """Token list of 5.7: base-10 digits, ``COMMA`` between numbers, ``END`` at the end."""
    tokens = []
    for k, value in enumerate(numbers):
        tokens += [int(d) for d in str(int(value))]
        tokens.append(END if k == len(numbers) - 1 else COMMA)
    return tokens


@checker('5.7')
def check_5_7(params, n_inputs=40):
    """Sort up to 8 distinct numbers below 1,000 written with digit tokens (see module doc)."""
    guard.program(params)
    cfg, vocab, block = _shape(params)
    _need(vocab >= 12, f'the vocabulary needs at least 12 tokens (digits 0-9, COMMA = 10, '
                       f'END = 11); got vocab_size {vocab}')
    _need(block >= 64, f'block_size must be at least 64 (up to 32 input tokens and as many '
                       f'outputs); got {block}')
    rng = np.random.default_rng(57)
    lists = [[7, 70, 700, 71, 17], [0, 999], [100, 99, 10, 9, 1, 0], [5], [120, 12, 102, 21, 201],
             [998, 989, 899, 999, 0, 1, 10, 100]]
    for _ in range(n_inputs):
        k = int(rng.integers(1, 9))
        width = rng.integers(1, 4, size=k)               # mix 1-, 2- and 3-digit numbers
        values = set()
        while len(values) < k:
            w = int(width[len(values)])
            values.add(int(rng.integers(0 if w == 1 else 10 ** (w - 1), 10 ** w)))
        lists.append(rng.permutation(sorted(values)).tolist())
    prompts = [encode_numbers(v) for v in lists]
    answers = [encode_numbers(sorted(v)) for v in lists]
    _check_answers(params, prompts, answers)
    return Passed(f'{len(prompts)} lists of 1-8 distinct numbers below 1,000 sorted in the '
                  f'digit format (6 hand-made with shared prefixes and 0, {n_inputs} seeded)')


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
    Puzzle('5.8', 'Train a transformer to sort', 'train'),
]
