"""Checkers for Chapter 12, Records: beat a record.

Every puzzle takes a program (a builder, for the lookup table) for the task of one
row of the chapter's table, verifies it on the inputs the record is verified on
(plus inputs drawn with a seed taken from the submission, ``ch04.submission_rng``),
and compares its size with the record's, rebuilt from the package.  PASS needs a
correct program that is no larger than the record (a tie counts); the line says
by how much it beats the record.  NOT YET names the first input that broke, or
the size and the record's size.

Shared rules, enforced on the submitted arrays (read once, ``ch04.frozen``):

* the book's architecture, with every layer norm left at gamma = 1, beta = 0:
  layer norms are not counted, so weights hidden there would dodge the count;
* sizes are the book's census (``count_params`` / ``count_non0_params``): layer
  norms not counted, an untied ``out_emb`` counted.
"""
import functools

import numpy as np

from ..addition import (addition_prompts, answer_digits, build_compact_addition_transformer,
                        carry_chain_pairs)
from ..decoding import last_token_argmax, teacher_forced_argmax
from ..lookup import build_universal_lookup_transformer, lookup_queries, random_lookup_table
from ..params import config, count_non0_params, count_params
from ..programs import CATALOGUE
from ..sort import large_vocab_sort_inputs
from . import guard
from .ch04 import frozen, submission_rng
from .registry import Puzzle, checker
from .result import Finding, Passed

ADDER, ADDER_DIGITS = 'compact-adder-3', 3          # 12.1: the record at 3 digits
ADDER_DRAWN = 40_000                                  # 12.1: pairs drawn with the program's seed
SORT_V, SORT_BLOCK, SORT_LEN = 65_536, 128, 64        # 12.2: up to 64 numbers
SORT_DRAWN = 24                                       # 12.2: seeded inputs of 64
SMALL_V, SMALL_BLOCK = 28, 54                         # 12.3: all 27 numbers, 26 fed back
LOOKUP, LOOKUP_BLOCK = 'universal-lookup-1000-block-16', 16   # 12.4: keys behind prefixes


@functools.lru_cache(maxsize=None)
def record_size(key):
    """(total, non-zero) of a record's program (a catalogue key), built once."""
    if key == ADDER:
        params = _compact_adder()
    elif key == LOOKUP:
        params = build_universal_lookup_transformer(*_big_table(), 10, LOOKUP_BLOCK)
    else:
        params = CATALOGUE[key].build()
    return count_params(params)['n_params'], count_non0_params(params)['n_params']


def _big_table():
    return random_lookup_table(1000, 5, 10, rng=0)          # Chapter 3's 1,000-entry table


def _compact_adder():
    return build_compact_addition_transformer(ADDER_DIGITS)


def _sizes(params):
    return count_params(params)['n_params'], count_non0_params(params)['n_params']


def _plain_norms(params):
    """Every layer norm at gamma = 1, beta = 0 (they are not counted)."""
    norms = [('lnf', params['lnf'])]
    for i, layer in enumerate(params['layers']):
        norms += [(f"layers[{i}]['{k}']", layer[k]) for k in ('ln1', 'ln2') if k in layer]
    for where, ln in norms:
        for key, default in (('gamma', 1.0), ('beta', 0.0)):
            if key in ln and not np.all(np.asarray(ln[key]) == default):
                raise Finding(f'{where}[{key!r}] must stay {default:g}: layer norms are not '
                              f'counted, so a record keeps them at their defaults')


def _at_most_record(params, metric, key, what='your program'):
    """Stop before running anything when the program is larger than the record."""
    total, non0 = _sizes(params)
    mine = total if metric == 'total' else non0
    record = record_size(key)[0 if metric == 'total' else 1]
    _need(mine <= record, f'{what} has {mine:,} {_NAMES[metric]}; the record has {record:,}: '
                          f'beat or match it (nothing was run)')


_NAMES = {'total': 'parameters', 'non-zero': 'non-zero parameters'}


def _verdict(params, metric, key, scope):
    """The PASS line: what was checked, the program's size and shape, and the record's."""
    total, non0 = _sizes(params)
    mine = total if metric == 'total' else non0
    record = record_size(key)[0 if metric == 'total' else 1]
    cfg = config(params)
    shape = (f'{cfg["n_layers"]} layer(s), {sum(cfg["n_heads"])} head(s), d_model '
             f'{cfg["d_model"]}, {total:,} parameters, {non0:,} non-zero')
    margin = 'ties the record' if mine == record else f'beats the record by {record - mine:,}'
    return Passed(f'{scope}; your program ({shape}): {mine:,} {_NAMES[metric]} against the '
                  f"record's {record:,}: it {margin}")


def _program(params, **limits):
    params = frozen(params)
    guard.budget(params, **limits)
    _plain_norms(params)
    return params


def _need(cond, message):
    if not cond:
        raise Finding(message)


# ----------------------------------------------------------------------------- addition

def adder_pairs(rng, n=ADDER_DIGITS):
    """The 3-digit pairs the adder puzzle tries (every carry pattern, and seeded ones)."""
    top = 10 ** n
    digits = [0, 1, 8, 9]                                  # kill, propagate and generate
    patterned = sorted({int(''.join(map(str, d))) for d in np.array(np.meshgrid(
        *[digits] * n)).reshape(n, -1).T})
    pairs = [(a, b) for a in patterned for b in patterned]          # carries born and killed
    x = np.arange(top)
    pairs += list(zip(x, top - 1 - x)) + list(zip(x[1:], top - x[1:]))   # all 9s; full carry
    pairs += list(zip(x, np.full(top, top - 1))) + list(zip(np.full(top, top - 1), x))
    pairs += [tuple(p) for p in rng.integers(0, top, size=(3000, 2))]
    pairs += [(int(a), int(b)) for a, b in carry_chain_pairs(n)]      # the record's own set
    return np.unique(np.array(pairs, dtype=np.int64), axis=0)


@checker('12.1')
def check_12_1(params):
    """3-digit decimal addition in the book's format, no larger than the compact record (total)."""
    params = _program(params)
    cfg = config(params)
    n = ADDER_DIGITS
    _need(cfg['vocab_size'] >= 12, f'the vocabulary needs the digits, + (10) and = (11): '
                                   f'vocab_size >= 12; got {cfg["vocab_size"]}')
    _need(cfg['block_size'] >= 3 * n + 2, f'block_size must be at least {3 * n + 2} (the prompt '
                                          f'of {2 * n + 2} tokens and {n} digits fed back); got '
                                          f'{cfg["block_size"]}')
    _at_most_record(params, 'total', ADDER)
    pairs = adder_pairs(np.random.default_rng(1201))
    # ~4 % of all 10^6 pairs, drawn with the program's seed: a program wrong on a hundred
    # pairs (a few columns' digit sums, say) passes with a chance of about 1 %
    extra = submission_rng(1201, params).integers(0, 10 ** n, size=(ADDER_DRAWN, 2))
    pairs = np.concatenate([pairs, extra])
    prompts, _ = addition_prompts(n, pairs)
    answers = answer_digits(pairs.sum(axis=1), n + 1)
    seqs = np.concatenate([prompts, answers], axis=1)
    start = prompts.shape[1]
    pred = guard.run_program(lambda: teacher_forced_argmax(seqs, params, start),
                             on=f'{len(seqs):,} prompts')
    bad = np.flatnonzero((pred != answers).any(axis=1))
    if len(bad):
        k = int(bad[0])
        a, b = (int(v) for v in pairs[k])
        raise Finding(f'input {prompts[k].tolist()} ({a} + {b}): expected '
                      f'{answers[k].tolist()}, got {pred[k].tolist()} (each digit predicted '
                      f'after the right ones before it) · {len(bad):,} of {len(seqs):,} wrong',
                      prompts[k].tolist())
    return _verdict(params, 'total', ADDER,
                    f'{len(seqs):,} sums of two 3-digit numbers (every pair of numbers with '
                    f'digits in 0, 1, 8, 9; x + (999 - x), x + (1000 - x), x + 999 and '
                    f'999 + x for every x; the record\'s carry chains; 3,000 seeded pairs and '
                    f'{ADDER_DRAWN:,} drawn with a seed taken from your program)')


# ----------------------------------------------------------------------------- Sort

def _sort_answers(params, inputs, what):
    """Decode every input (teacher-forced, one pass per length); the first wrong one -> Finding."""
    groups = {}
    for i, row in enumerate(inputs):
        groups.setdefault(len(row), []).append(i)
    for length, idx in sorted(groups.items()):           # shortest first; stop at a failure
        seqs = np.array([list(inputs[i]) + sorted(inputs[i][:-1]) for i in idx], dtype=np.int64)
        with np.errstate(all='ignore'):
            pred = guard.run_program(lambda: teacher_forced_argmax(seqs, params, length),
                                     on=f'inputs of {length - 1} numbers')
        wrong = [(idx[j], pred[j]) for j in np.flatnonzero((pred != seqs[:, length:]).any(1))]
        if wrong:
            break
    if wrong:
        k, pred = wrong[0]
        row = [int(t) for t in inputs[k]]
        want = sorted(row[:-1])
        step = int(np.flatnonzero(pred != np.array(want))[0])
        shown = row if len(row) <= 12 else row[:5] + ['...'] + row[-5:]
        listed = want if len(want) <= 12 else want[:5] + ['...'] + want[-5:]
        raise Finding(f'input {shown} ({len(row) - 1} numbers{what}): expected {listed}, but '
                      f'step {step + 1} (after the right {step}) printed {int(pred[step])} '
                      f'instead of {want[step]} · {len(wrong)} of the {len(idx)} inputs of '
                      f'{length - 1} numbers wrong', row)


@checker('12.2')
def check_12_2(params):
    """Sort 1..65,535 closed by 0 on one layer, no larger than the bits record (total)."""
    params = _program(params, layers=1)
    cfg = config(params)
    _need(cfg['vocab_size'] >= SORT_V, f'the vocabulary must hold 0..{SORT_V - 1:,} (vocab_size '
                                       f'>= {SORT_V:,}); got {cfg["vocab_size"]:,}')
    _need(cfg['block_size'] >= SORT_BLOCK, f'block_size must be at least {SORT_BLOCK} (64 '
                                           f'numbers, the 0, 63 fed back); got '
                                           f'{cfg["block_size"]}')
    _at_most_record(params, 'total', 'sort-65536')
    inputs = large_vocab_sort_inputs(SORT_V, np.random.default_rng(1202), count=6,
                                     length=SORT_LEN)
    inputs.append(list(range(SORT_V - 1, SORT_V - 1 - SORT_LEN, -1)) + [0])
    rng = submission_rng(1202, params)
    inputs += large_vocab_sort_inputs(SORT_V, rng, count=4, length=SORT_LEN)[-4:]
    # 1,536 distinct numbers drawn with the program's seed, 64 to an input: a program that
    # mishandles even a few hundred of the 65,535 numbers is caught, whatever its seed
    drawn = rng.permutation(np.arange(1, SORT_V))[:SORT_DRAWN * SORT_LEN].reshape(SORT_DRAWN, -1)
    inputs += [row.tolist() + [0] for row in drawn]
    _sort_answers(params, inputs, '')
    return _verdict(params, 'total', 'sort-65536',
                    f'{len(inputs)} inputs of up to {SORT_LEN} numbers from 1..{SORT_V - 1:,} '
                    f'sorted (both ends, runs of neighbours where codes part at every position, '
                    f'powers of two, seeded sets; {SORT_DRAWN * SORT_LEN:,} distinct numbers and '
                    f'4 sets drawn with a seed taken from your program)')


def _small_sort_inputs(rng):
    numbers = list(range(1, SMALL_V))
    inputs = [[x, 0] for x in numbers]
    inputs += [[a, b, 0] for a in numbers for b in numbers if a != b]
    inputs += [numbers[::-1] + [0], numbers + [0]]
    inputs += [rng.permutation(numbers).tolist() + [0] for _ in range(4)]
    for _ in range(400):
        k = int(rng.integers(3, SMALL_V))
        inputs.append(rng.choice(numbers, size=k, replace=False).tolist() + [0])
    return inputs


@checker('12.3')
def check_12_3(params):
    """Sort 1..27 closed by 0 with at most the compact record's non-zero parameters."""
    params = _program(params)
    cfg = config(params)
    _need(cfg['vocab_size'] >= SMALL_V, f'the vocabulary must hold 0..{SMALL_V - 1} (vocab_size '
                                        f'>= {SMALL_V}); got {cfg["vocab_size"]}')
    _need(cfg['block_size'] >= SMALL_BLOCK, f'block_size must be at least {SMALL_BLOCK} (27 '
                                            f'numbers, the 0, 26 fed back); got '
                                            f'{cfg["block_size"]}')
    _at_most_record(params, 'non-zero', 'sort-28-compact')
    inputs = _small_sort_inputs(np.random.default_rng(1203))
    inputs += [submission_rng(1203, params).permutation(range(1, SMALL_V)).tolist()[:k] + [0]
               for k in (5, 13, 21)]
    _sort_answers(params, inputs, '')
    return _verdict(params, 'non-zero', 'sort-28-compact',
                    f'{len(inputs):,} inputs over 1..27 sorted (every number alone, every ordered '
                    f'pair, all 27 in 6 orders, 400 seeded sets, 3 drawn with a seed taken from '
                    f'your program)')


# ----------------------------------------------------------------------------- Lookup

def _lookup_tables(rng):
    """(name, ks, vs, vocab): the record's adversarial tables and seeded random ones."""
    tables = [('XOR', np.array([[0, 0], [0, 1], [1, 0], [1, 1]]), np.array([0, 1, 1, 0]), 2)]
    base = np.random.default_rng(1204).integers(0, 50, size=12)
    for where in (0, -1):
        ks = np.tile(base, (50, 1))
        ks[:, where] = np.arange(50)
        tables.append((f'50 keys of 12 tokens that differ only in the '
                       f'{"first" if where == 0 else "last"} token', ks,
                       np.random.default_rng(where + 5).permutation(50), 50))
    ks, vs = random_lookup_table(200, 3, 7, rng=rng)
    tables.append(('a random table of 200 keys of 3 tokens over 7', ks, vs, 7))
    return tables


def _lookup_right(params, ks, vs, vocab, name, prefix, seed):
    """Every key behind random prefixes of every length 1..``prefix`` (0: alone), and behind
    a ``prefix``-token prefix cut from other keys: a program right only when the key sits at
    the start or at the end of the block fails."""
    asks = [(0, 'random')] if not prefix else \
        [(n, 'random') for n in range(1, prefix + 1)] + [(prefix, 'keys')]
    for length, mode in asks:
        q = lookup_queries(ks, length, vocab, rng=seed + length, mode=mode)
        got = guard.run_program(lambda: last_token_argmax(q, params), on=name)
        bad = np.flatnonzero(got != vs)
        if len(bad):
            k = int(bad[0])
            kind = {'random': 'a random', 'keys': 'a prefix of other keys as'}[mode]
            behind = f'behind {kind} {length}-token prefix' if length else 'alone'
            raise Finding(f'{name}, key {ks[k].tolist()} {behind} (input {q[k].tolist()}): '
                          f'expected {int(vs[k])}, got {int(got[k])} · {len(bad)} of {len(ks)} '
                          f'keys wrong', q[k].tolist())


def _built(build, ks, vs, vocab, block, name):
    params = guard.call(build, ks.copy(), vs.copy(), vocab, block, what='your builder',
                        on=f'{name} (vocab_size={vocab}, block_size={block})')
    params = frozen(params, f'the program your builder returned for {name}')
    _plain_norms(params)
    cfg = config(params)
    _need(cfg['vocab_size'] >= vocab and cfg['block_size'] >= block,
          f'for {name} your builder returned vocab_size {cfg["vocab_size"]} and block_size '
          f'{cfg["block_size"]}; expected at least {vocab} and {block}')
    return params


@checker('12.4')
def check_12_4(build):
    """``build(ks, vs, vocab_size, block_size) -> params`` right on every table tried, and its
    program for the 1,000-entry vocab-10 table (block 16) no larger than the record's (total)."""
    if not callable(build):
        raise Finding(f'expected a builder function build(ks, vs, vocab_size, block_size); got '
                      f'{type(build).__name__}')
    # every table is made again after the builder ran, and the program is judged on that copy:
    # the builder never holds an array of the check's (so it cannot, e.g., rewrite the values)
    name = "Chapter 3's table of 1,000 keys of 5 tokens over 10"
    params = _built(build, *_big_table(), 10, LOOKUP_BLOCK, name)   # measured and run: one program
    _at_most_record(params, 'total', LOOKUP,
                    f'the program your builder returned for {name} (block_size {LOOKUP_BLOCK})')
    seed = submission_rng(1204, params)
    ks, vs = _big_table()
    _lookup_right(params, ks, vs, 10, name, 0, 0)
    _lookup_right(params, ks, vs, 10, name, LOOKUP_BLOCK - 5, int(seed.integers(1 << 30)))
    count = len(_lookup_tables(submission_rng(1214, params)))
    for i in range(count):
        tname, tks, tvs, vocab = _lookup_tables(submission_rng(1214, params))[i]
        p = _built(build, tks, tvs, vocab, LOOKUP_BLOCK, tname)
        tname, tks, tvs, vocab = _lookup_tables(submission_rng(1214, params))[i]
        _lookup_right(p, tks, tvs, vocab, tname, 0, 0)
        prefix = LOOKUP_BLOCK - tks.shape[1]
        _lookup_right(p, tks, tvs, vocab, tname, prefix, int(seed.integers(1 << 30)))
    return _verdict(params, 'total', LOOKUP,
                    f'{count + 1} programs of your builder (block_size {LOOKUP_BLOCK}): '
                    f'every key of the 1,000-entry table, of XOR, of keys sharing 11 of 12 '
                    f'tokens (first or last differs) and of a random table drawn with a seed '
                    f'taken from your program, alone, behind random prefixes of every length '
                    f'that fits and behind prefixes made of other keys; size of the '
                    f'1,000-entry program')


# ----------------------------------------------------------------------------- 6.12

@checker('12.5')
def check_12_5(params):
    """``[i, j] -> (i + j) % 10`` on one layer without an MLP, every prompt, at most the
    record's non-zero parameters."""
    params = _program(params, layers=1)
    cfg = config(params)
    _need(cfg['vocab_size'] >= 10 and cfg['block_size'] >= 2,
          f'the program reads two digits: vocab_size >= 10 and block_size >= 2; got '
          f'{cfg["vocab_size"]} and {cfg["block_size"]}')
    layer = params['layers'][0]
    for name in ('M1', 'b1', 'M2'):
        _need(not np.any(layer[name]), f"attention only: the MLP must be off (M1, b1 and M2 all "
                                       f"zero); your layer's {name} has "
                                       f"{int(np.count_nonzero(layer[name]))} non-zero entries")
    _at_most_record(params, 'non-zero', 'mod-1-digit-attention')
    prompts = np.array([[i, j] for i in range(10) for j in range(10)])
    got = guard.run_program(lambda: last_token_argmax(prompts, params), on='the 100 prompts')
    bad = np.flatnonzero(got != prompts.sum(axis=1) % 10)
    if len(bad):
        i, j = prompts[bad[0]]
        raise Finding(f'input [{i}, {j}]: expected {(i + j) % 10}, got {int(got[bad[0]])} · '
                      f'{len(bad)} of 100 prompts wrong', [int(i), int(j)])
    return _verdict(params, 'non-zero', 'mod-1-digit-attention',
                    'all 100 prompts [i, j] answered (i + j) % 10 at the last position, one '
                    'layer, MLP off')


PUZZLES = [
    Puzzle('12.1', 'Beat the compact decimal adder at 3 digits', 'checked', check_12_1,
           budget="at most the record's parameters"),
    Puzzle('12.2', 'Beat the Sort record at V = 65,536', 'checked', check_12_2,
           budget="1 layer; at most the record's parameters"),
    Puzzle('12.3', 'Beat the Sort record at n = 28 (non-zero parameters)', 'checked',
           check_12_3, budget="at most the record's non-zero parameters"),
    Puzzle('12.4', 'Beat the universal Lookup Table', 'checked', check_12_4,
           budget="at most the record's parameters for 1,000 entries"),
    Puzzle('12.5', 'Beat the attention-only adder of puzzle 6.12', 'checked', check_12_5,
           budget="1 layer, no MLP; at most the record's non-zero parameters"),
]
