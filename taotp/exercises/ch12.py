"""Checkers for Chapter 12, Records: beat a record.

Each puzzle runs a program for one row of the chapter's table on the inputs its record is
verified on plus inputs drawn afresh, and compares its size with the record's, rebuilt from
the package.  PASS needs a correct program smaller than the record: a tie is what the
record's own program gets, so it is reported (NOT YET) and not counted.  12.3 is open (kind
``open``: no program is known to beat it); the other records carry weights that no input
needs, and their references beat them by removing those.
Sizes are the book's census (layer norms not counted, an untied ``out_emb`` counted), so
every layer norm must stay at gamma = 1, beta = 0.
"""
import functools

import numpy as np

from ..addition import addition_prompts, answer_digits, carry_chain_pairs
from ..addition.adderboard import unique_parameters
from ..decoding import last_token_argmax
from ..lookup import build_universal_lookup_transformer, lookup_queries, random_lookup_table
from ..params import config, count_non0_params, count_params
from ..programs import CATALOGUE
from ..sort import large_vocab_sort_inputs
from . import toolkit as tk
from .ch05 import first_wrong_step
from .registry import Puzzle, checker
from .result import Finding, Passed

ADDER, ADDER_DIGITS = 'compact-addition-3', 3       # 12.1: the record at 3 digits
ADDER_DRAWN = 43_000                                  # 12.1: pairs drawn afresh
SORT_V, SORT_BLOCK, SORT_LEN = 65_536, 128, 64        # 12.2: up to 64 numbers
SORT_DRAWN = 24                                       # 12.2: inputs of 64 distinct fresh numbers
SMALL_V, SMALL_BLOCK = 28, 54                         # 12.3: all 27 numbers, 26 fed back
LOOKUP, LOOKUP_BLOCK = 'universal-lookup-1000-block-16', 16   # 12.4: keys behind prefixes


@functools.lru_cache(maxsize=None)
def record_size(key):
    """(total, non-zero) of a record's program (a catalogue key), built once per judge."""
    if key == LOOKUP:       # the catalogue's universal lookups have block_size 5
        return _sizes(build_universal_lookup_transformer(*_big_table(), 10, LOOKUP_BLOCK))
    return _sizes(CATALOGUE[key].build())


def _big_table():
    return random_lookup_table(1000, 5, 10, rng=0)          # Chapter 3's 1,000-entry table


def _sizes(params):
    return count_params(params)['n_params'], count_non0_params(params)['n_params']


_METRICS = {'total': (0, 'parameters'), 'non-zero': (1, 'non-zero parameters')}


def _program(params, vocab, block, vocab_why, block_why, what='your program', **limits):
    """The submitted program as plain float64 arrays: budget kept, layer norms at their
    defaults, vocabulary and block at least ``vocab`` and ``block``."""
    params = tk.program(params, what=what)
    tk.budget(params, what=what, **limits)
    norms = [('lnf', params['lnf'])] + [(f"layers[{i}]['{k}']", layer[k])
                                        for i, layer in enumerate(params['layers'])
                                        for k in ('ln1', 'ln2') if k in layer]
    for where, ln in norms:
        for key, default in (('gamma', 1.0), ('beta', 0.0)):
            if isinstance(ln, dict) and key in ln and not np.all(np.asarray(ln[key]) == default):
                raise Finding(f'{what}: {where}[{key!r}] must stay {default:g}: layer norms are '
                              f'not counted, so a record keeps them at their defaults')
    vocab_size = config(params)['vocab_size']
    if vocab_size < vocab:
        raise Finding(f'{what}: the vocabulary must hold 0..{vocab - 1:,} ({vocab_why}): '
                      f'vocab_size >= {vocab:,}; got {vocab_size:,}')
    tk.room(params, block=block, on=what, block_why=f'({block_why})')
    return params


def _at_most_record(params, metric, key, what='your program'):
    """Stop before running anything when the program is larger than the record."""
    index, name = _METRICS[metric]
    mine, record = _sizes(params)[index], record_size(key)[index]
    if mine > record:
        raise Finding(f'{what} has {mine:,} {name}; the record has {record:,}: beat it '
                      f'(nothing was run)')


def _verdict(params, metric, key, scope, extra=''):
    """The verdict once every input is right: PASS for a program smaller than the record, a
    NOT YET that says so for a tie; both give the program's size and shape, and the record's."""
    (index, name), sizes, cfg = _METRICS[metric], _sizes(params), config(params)
    mine, record = sizes[index], record_size(key)[index]
    shape = (f'{cfg["n_layers"]} layer(s), {sum(cfg["n_heads"])} head(s), d_model '
             f'{cfg["d_model"]}, {sizes[0]:,} parameters, {sizes[1]:,} non-zero')
    if mine == record:
        raise Finding(f"{scope}; your program ({shape}) is right on all of them and has {mine:,} "
                      f"{name}, as many as the record: a tie, which the record's own program "
                      f'also gets; one fewer sets a new record{extra}')
    return Passed(f'{scope}; your program ({shape}): {mine:,} {name} against the '
                  f"record's {record:,}: it beats the record by {record - mine:,}{extra}")


# ----------------------------------------------------------------------------- addition

def adder_pairs(n=ADDER_DIGITS):
    """The fixed 3-digit pairs the adder puzzle tries: every pair of numbers whose digits are
    0, 1, 8 or 9 (carries born, passed on and killed), x + (999 - x), x + (1000 - x),
    x + 999 and 999 + x for every x, and the record's own carry chains (unique, sorted)."""
    top, x = 10 ** n, np.arange(10 ** n)
    patterned = sorted({int(''.join(map(str, d))) for d in np.array(np.meshgrid(
        *[[0, 1, 8, 9]] * n)).reshape(n, -1).T})
    pairs = [(a, b) for a in patterned for b in patterned]
    pairs += list(zip(x, top - 1 - x)) + list(zip(x[1:], top - x[1:]))   # all 9s; full carry
    pairs += list(zip(x, np.full(top, top - 1))) + list(zip(np.full(top, top - 1), x))
    pairs += [(int(a), int(b)) for a, b in carry_chain_pairs(n)]
    return np.unique(np.array(pairs, dtype=np.int64), axis=0)


def _adderboard_count(params):
    """AdderBoard's unique-parameter count of the program, when it can count it."""
    try:
        return f"; AdderBoard's unique parameters (tied weights once, sinusoidal position " \
               f'tables free): {unique_parameters(params):,}'
    except Exception:           # a program it cannot read (it counts plain arrays only)
        return ''


@checker('12.1')
def check_12_1(params):
    """3-digit decimal addition in the book's format, no larger than the compact record (total)."""
    n = ADDER_DIGITS
    params = _program(params, 12, 3 * n + 2, 'the digits, + and =',
                      f'the prompt of {2 * n + 2} tokens and {n} digits fed back')
    _at_most_record(params, 'total', ADDER)
    fixed = adder_pairs()
    pairs = np.concatenate([fixed, tk.fresh_rng().integers(0, 10 ** n, size=(ADDER_DRAWN, 2))])
    prompts, _ = addition_prompts(n, pairs)
    answers = answer_digits(pairs.sum(axis=1), n + 1)
    found = first_wrong_step(params, list(zip(prompts, answers)),
                             lambda _: f'{len(pairs):,} prompts')
    if found:
        k, _, pred = found
        a, b = (int(v) for v in pairs[k])
        raise tk.wrong(f'input {prompts[k].tolist()} ({a} + {b}, '
                       f'{"a fixed pair" if k < len(fixed) else "drawn afresh"})',
                       pred.tolist(), 'these are its 4 answer digits, each predicted with the '
                       'right digits before it fed back; they do not spell the sum',
                       prompts[k].tolist())
    return _verdict(params, 'total', ADDER, f'{len(pairs):,} sums of two 3-digit numbers (every '
                    f'pair of numbers with digits in 0, 1, 8, 9; x + (999 - x), x + (1000 - x), '
                    f'x + 999 and 999 + x for every x; the record\'s carry chains; '
                    f'{ADDER_DRAWN:,} pairs drawn afresh)', _adderboard_count(params))


# ----------------------------------------------------------------------------- Sort

def _ordinal(n):
    return f'{n}{"th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")}'


def _sort_answers(params, inputs):
    """Decode every input (teacher-forced), shortest first; the first wrong one -> Finding."""
    inputs = sorted(([int(t) for t in row] for row in inputs), key=len)
    found = first_wrong_step(params, [(row, sorted(row[:-1])) for row in inputs],
                             lambda length: f'inputs of {length - 1} numbers')
    if found:
        k, step, got = found
        row = inputs[k]
        count = f'{len(row) - 1} number{"s" if len(row) > 2 else ""}'
        shown = row if len(row) <= 12 else row[:5] + ['...'] + row[-5:]
        before = ('right after the terminator 0' if step == 0 else
                  f'after output{"s 1-" if step > 1 else " "}{step}, right and fed back')
        rank = 'the smallest' if step == 0 else f'the {_ordinal(step + 1)} smallest'
        raise tk.wrong(f'input {shown} ({count}, then the terminator 0), output {step + 1} '
                       f'({before})', int(got[step]), f'output {step + 1} must be {rank} '
                       f'number of the input', row)


@checker('12.2')
def check_12_2(params):
    """Sort 1..65,535 closed by 0 on one layer, no larger than the bits record (total)."""
    params = _program(params, SORT_V, SORT_BLOCK, 'the numbers', '64 numbers, the 0, 63 fed back',
                      layers=1)
    _at_most_record(params, 'total', 'sort-65536')
    inputs = large_vocab_sort_inputs(SORT_V, np.random.default_rng(1202), count=6, length=SORT_LEN)
    inputs.append(list(range(SORT_V - 1, SORT_V - 1 - SORT_LEN, -1)) + [0])
    rng = tk.fresh_rng()
    inputs += large_vocab_sort_inputs(SORT_V, rng, count=4, length=SORT_LEN)[-4:]
    # 1,536 distinct fresh numbers, 64 to an input: a program that mishandles even a few
    # hundred of the 65,535 numbers is caught
    drawn = rng.permutation(np.arange(1, SORT_V))[:SORT_DRAWN * SORT_LEN].reshape(SORT_DRAWN, -1)
    inputs += [row.tolist() + [0] for row in drawn]
    _sort_answers(params, inputs)
    return _verdict(params, 'total', 'sort-65536', f'{len(inputs)} inputs of up to {SORT_LEN} '
                    f'numbers from 1..{SORT_V - 1:,} sorted (both ends, runs of neighbours where '
                    f'codes part at every position, powers of two, 6 fixed sets; 4 sets and '
                    f'{SORT_DRAWN * SORT_LEN:,} distinct numbers drawn afresh)')


@checker('12.3')
def check_12_3(params):
    """Sort 1..27 closed by 0 with at most the sparse record's non-zero parameters."""
    params = _program(params, SMALL_V, SMALL_BLOCK, 'the numbers', '27 numbers, the 0, 26 fed back')
    _at_most_record(params, 'non-zero', 'sort-28-sparse')
    numbers, rng = list(range(1, SMALL_V)), tk.fresh_rng()
    inputs = [[x, 0] for x in numbers] + [[a, b, 0] for a in numbers for b in numbers if a != b]
    inputs += [numbers[::-1] + [0], numbers + [0]]
    inputs += [rng.permutation(numbers).tolist() + [0] for _ in range(4)]
    inputs += [rng.choice(numbers, size=int(rng.integers(3, SMALL_V)), replace=False).tolist()
               + [0] for _ in range(400)]
    _sort_answers(params, inputs)
    return _verdict(params, 'non-zero', 'sort-28-sparse', f'{len(inputs):,} inputs over 1..27 '
                    f'sorted (every number alone, every ordered pair, all 27 increasing, '
                    f'decreasing and in 4 orders drawn afresh, 400 sets drawn afresh)')


# ----------------------------------------------------------------------------- Lookup

def lookup_tables(seed):
    """(name, ks, vs, vocab, block) of the tables one 12.4 check builds beside the 1,000-entry
    one: XOR, 50 keys of 12 tokens that differ only in the first (or only in the last)
    token, at block size 16, and five random tables drawn from ``seed``: keys of five
    different lengths from 1 to 16 tokens, 16 always among them, the first over a vocabulary
    of 256, the second of 61 to 255, the others of 2 to 60, up to 300 keys (40 in the last
    two), at a block size from the key's length to 32, one of them at 32 (round 20: a
    builder that ignored the block size, or one right at the four lengths once tried, passed
    when three tables missed them; round 24: one wrong past a vocabulary of 200, or at keys
    of 16 tokens, passed while those tops were drawn at random)."""
    tables = [('XOR', np.array([[0, 0], [0, 1], [1, 0], [1, 1]]), np.array([0, 1, 1, 0]), 2,
               LOOKUP_BLOCK)]
    base = np.random.default_rng(1204).integers(0, 50, size=12)
    for where, name in ((0, 'first'), (-1, 'last')):
        ks = np.tile(base, (50, 1))
        ks[:, where] = np.arange(50)
        tables.append((f'50 keys of 12 tokens that differ only in the {name} token', ks,
                       np.random.default_rng(where + 5).permutation(50), 50, LOOKUP_BLOCK))
    rng = np.random.default_rng(seed)
    widest = int(rng.integers(5))
    lengths = rng.permutation([16] + rng.choice(np.arange(1, 16), size=4, replace=False).tolist())
    for i, length in enumerate(lengths.tolist()):
        vocab = 256 if i == 0 else int(rng.integers(61, 256) if i == 1 else rng.integers(2, 61))
        entries = int(min(rng.integers(1, 301 if i < 3 else 41), vocab ** length))
        block = 2 * LOOKUP_BLOCK if i == widest else int(rng.integers(length, 2 * LOOKUP_BLOCK + 1))
        ks, vs = random_lookup_table(entries, length, vocab, rng=rng)
        tables.append((f'the random table ch12.lookup_tables({seed})[{3 + i}] ({entries} keys '
                       f'of {length} tokens over {vocab}, block size {block})', ks, vs, vocab,
                       block))
    return tables


def _lookup_right(params, ks, vs, vocab, block, name, rng):
    """Every key alone, behind random prefixes of every length that fits and behind a full
    prefix cut from other keys: a program right only when the key sits at the start or at
    the end of the block fails."""
    longest = block - ks.shape[1]
    for length, mode in [(n, 'random') for n in range(longest + 1)] + [(longest, 'keys')]:
        q = lookup_queries(ks, length, vocab, rng=rng, mode=mode)
        got = tk.run_program(lambda: last_token_argmax(q, params), on=name)
        bad = np.flatnonzero(got != vs)
        if len(bad):
            k = int(bad[0])
            kind = {'random': 'a random', 'keys': 'a prefix of other keys as'}[mode]
            behind = f'behind {kind} {length}-token prefix' if length else 'alone'
            raise tk.wrong(f'{name}, key {k} ({ks[k].tolist()}) {behind} (input '
                           f'{q[k].tolist()})', int(got[k]), f'the answer is the key\'s value, '
                           f'vs[{k}]', q[k].tolist())


@checker('12.4')
def check_12_4(build):
    """``build(ks, vs, vocab_size, block_size) -> params`` right on every table tried, and its
    program for the 1,000-entry vocab-10 table (block 16) smaller than the record's (total)."""
    if not isinstance(build, tk.Remote):
        raise Finding(f'expected a builder function build(ks, vs, vocab_size, block_size); got '
                      f'{tk.describe(build)}')
    tables = [("Chapter 3's table of 1,000 keys of 5 tokens over 10", *_big_table(), 10,
               LOOKUP_BLOCK)]
    tables += lookup_tables(tk.fresh_seed())
    rng = tk.fresh_rng()
    for i, (name, ks, vs, vocab, block) in enumerate(tables):
        what = f'the program your builder returned for {name}'
        params = tk.call(build, ks, vs, vocab, block, what='your builder',
                         on=f'{name} (vocab_size={vocab}, block_size={block})')
        if params is None:
            raise Finding('your builder returned None (starter code not filled in yet, or a '
                          'missing return?)')
        params = _program(params, vocab, block, 'the size it was given',
                          'the size it was given', what=what)
        if i == 0:                                     # measured and run: the same program
            _at_most_record(params, 'total', LOOKUP, f'{what} (block_size {LOOKUP_BLOCK})')
            record = params
        _lookup_right(params, ks, vs, vocab, block, name, rng)
    return _verdict(record, 'total', LOOKUP,
                    f'{len(tables)} programs of your builder: every key of the 1,000-entry '
                    f'table, of XOR, of keys sharing 11 of 12 tokens (first or last differs), '
                    f'all at block size {LOOKUP_BLOCK}, and of five random tables of shapes and '
                    f'block sizes drawn afresh (keys of 1 to 16 tokens, 16 among them, over up '
                    f'to 256, 256 among them, one block of 32), alone, '
                    f'behind random prefixes of every length that fits and behind prefixes made '
                    f'of other keys (prefixes drawn afresh); '
                    f'size of the 1,000-entry program')


# ----------------------------------------------------------------------------- 6.12

@checker('12.5')
def check_12_5(params):
    """``[i, j] -> (i + j) % 10`` on one layer without an MLP, every prompt, at most the
    record's non-zero parameters."""
    params = _program(params, 10, 2, 'the digits', 'two digits', layers=1)
    layer = params['layers'][0]
    for name in ('M1', 'b1', 'M2'):
        if np.any(layer[name]):
            raise Finding(f"attention only: the MLP must be off (M1, b1 and M2 all zero); your "
                          f"layer's {name} has {int(np.count_nonzero(layer[name]))} non-zero "
                          f"entries")
    _at_most_record(params, 'non-zero', 'mod-1-digit-attention')
    prompts = np.array([[i, j] for i in range(10) for j in range(10)])
    got = tk.run_program(lambda: last_token_argmax(prompts, params), on='the 100 prompts')
    bad = np.flatnonzero(got != prompts.sum(axis=1) % 10)
    if len(bad):
        i, j = (int(v) for v in prompts[bad[0]])
        raise tk.wrong(f'input [{i}, {j}]', int(got[bad[0]]), f'the answer is ({i} + {j}) % 10',
                       [i, j])
    return _verdict(params, 'non-zero', 'mod-1-digit-attention', 'all 100 prompts [i, j] '
                    'answered (i + j) % 10 at the last position, one layer, MLP off')


PUZZLES = [
    Puzzle('12.1', 'Beat the compact decimal adder at 3 digits', 'checked', check_12_1,
           budget="fewer than the record's parameters"),
    Puzzle('12.2', 'Beat the Sort record at V = 65,536', 'checked', check_12_2,
           budget="1 layer; fewer than the record's parameters"),
    Puzzle('12.3', 'Beat the Sort record at n = 28 (non-zero parameters)', 'open',
           check_12_3, budget="fewer than the record's non-zero parameters"),
    Puzzle('12.4', 'Beat the universal Lookup Table', 'checked', check_12_4,
           budget="fewer than the record's parameters for 1,000 entries"),
    Puzzle('12.5', 'Beat the attention-only adder of puzzle 6.12', 'checked', check_12_5,
           budget="1 layer, no MLP; fewer than the record's non-zero parameters"),
]
