"""Chapter 5 checkers: what each one calls solved, and the answers that must not pass.

Every answer goes through the real protocol (``tests/checking.py``): pickled, run in a
worker process, judged in the judge process on cases drawn afresh for each check.

| id | what is checked (solved means) | plausible wrong answers (each a test below) |
|---|---|---|
| 5.1 | a program with vocabulary >= 33, block >= 64, 1 layer and d_model <= 6 (measured on the submitted arrays) greedily sorts 2,504 inputs over 1..32: the 8 of `ch05.visible_cases('5.1')`, every ordered pair, the full set shuffled, the crowded end, 1,500 random subsets of every size | the book's Sort at 33 and at 28; a second layer; a block of 40 |
| 5.2 | a program with vocabulary >= 1,000,000, block >= 32 and d_model <= 8 gives the minimum at the last position of 406 inputs of every length from 1 to 32 (at lengths 1, 2, 3, 5, 8, 16, 31, 32 all the patterns, at the others the minimum first, last and 2 random rows): all equal (at 0, in the middle, at the top), the minimum first or last, neighbours at both ends and in the middle, powers of two and their neighbours, the minimum and the next token in each sixteenth of the vocabulary, random rows with half of their values among the 20 smallest and largest tokens | the book's Min at a million (off by one) and at 1,000 |
| 5.3, 5.5 | no checker (reflections; worked answers in the solutions notebook) | - |
| 5.4 | a program with vocabulary >= 1,000, block >= 64 and d_model <= 2,048 sorts up to 30 distinct numbers of 1..999: the 6 visible cases, runs of neighbours that put every number and every pair of neighbours in some input, two random inputs of every length 1-30 | powerpoints on a large vocabulary; too small a vocabulary |
| 5.6 | a program with vocabulary >= 16 and block >= 24 sorts 871 multisets of 1-12 numbers of 1..15: the 13 visible cases, every number with every count of copies, every length with every count of distinct numbers, 600 random multisets | Sort without repeats |
| 5.7 | a program with vocabulary >= 12 and block >= 64 sorts lists of 1-8 distinct numbers below 1,000 in the digit format: the 11 visible cases, runs of neighbours that put every number and every pair of neighbours in some list, a list of every prompt length 2-32 tokens, 40 random lists | single-token Sort; too small a vocabulary |
| 5.8 | checker in taotp.exercises.training_checks, tested in test_training_puzzles.py | - |

Red team (the issue's classes of attack; each row is a test below):

| attack | puzzles | why it fails now |
|---|---|---|
| 1 a sorter that knows the right order only for the numbers that earlier NOT YET lines named (a table built from a loop of checks) | 5.4 | hidden cases are new on every check and reach every number; a NOT YET line of a hidden case names the input, the step and the answer's token, never the expected one |
| 2 a sorter that knows the right order only for the numbers written in the checker's source (its visible cases) | 5.4 | the hidden runs reach every number of 1..999 |
| 3 patch the checker's engine (`ch05.teacher_forced_argmax`) from a weight's `__array__`; raise the judge's `TimeUp` from one | 5.6 | the weights are read in a worker process; the judge's modules are out of its reach, and an exception there is the answer's own |
| 3 a Python oracle in ndarray subclasses; a wide sorter shown as a 1-layer d_model-6 program by a dict subclass | 5.1, 5.2, 5.4, 5.6, 5.7 | the worker sends back plain arrays and the dict's real storage only (``wire``) |
| 4 the package's own Sorts of Chapter 12: the compact design at 33 with t0 = 1 (fits 5.1's budget), the bits design at 1,000 (solves 5.4), also rotated, rescaled, cast to float32, padded with a constant dimension; the shipped 5.8 program | 5.1, 5.4, 5.6 | the token table's shape is recognised (``ch05._is_compact_sort``, ``ch05._is_bits_sort``) and refused; the trained 5.8 program cannot sort repeats; the bits design with its code ranks shifted by 1,500 or with 32-bit codes (round 4), a vector moved from the position rows to the token rows, or unread dimensions of noise (round 5) are refused too: ``_is_bits_sort`` takes the rows as layer norm sees them at position 0, on the dimensions some layer reads, and looks for cosines on a few equally spaced levels (Hamming distances), not for the package's ranks; a constant pair blown up so that every row is nearly parallel (round 7) is refused too: the squared distances are taken after the part all rows share is removed; **not refused** (round 5): plain unbalanced binary codes with two balancing columns the heads read, on the package's layer re-based (a disguised copy, CONTRIBUTING); (round 12) the bits design with three extra dimensions holding a zero-mean circle point per token, read by the layers: read by 1e-300, weighing dimensions by how strongly they are read would refuse it, but read at a tenth of the code's strength the circle hides the levels and the design still sorts, and weighing lost the 5,000-number design, so the geometry test stays as it is and this stays on the reader's honour (the statement says so) |
| 6 a Min program exact except for minima between 300,000 and 400,000 (random rows rarely have a minimum there) | 5.2 | the minimum and the next token in each sixteenth of the vocabulary, on every check |
| 6 a Min program that finds the maximum at every length but 1, 2, 3, 5, 8, 16, 31 and 32 (round 17) | 5.2 | every length from 1 to 32 is tried |
| 6 a sorter that swaps two neighbouring numbers only when both are present | 5.4 | runs of neighbours reach every pair of neighbours |
| 6 a sorter wrong on every input of 2 numbers (a position row read by the query; round 25: 25 inputs of random lengths missed length 2 in about half of the checks); prompt lengths of 5.7 and counts of distinct numbers of 5.6 missing from most checks | 5.4, 5.6, 5.7 | every length 1-30 twice (5.4), every prompt length 2-32 tokens (5.7), every length 1-12 with every count of distinct numbers (5.6), on every check |

The contract every checker keeps (the reference passes, garbage is reported, loops are
stopped) is tested once in test_checker_contract.py; the reference answers come from their
one copy, the solutions notebook (``answer``).
"""
import re
import time

import numpy as np
import pytest

import taotp
from checking import fails, never_names, passes, verdict
from solutions import answer
from taotp.exercises import toolkit, training
from taotp.exercises.ch05 import (COMMA, END, PUZZLES, _each_distinct_count, _each_length,
                                  _is_bits_sort, _is_compact_sort, _lists_of_every_size, _runs,
                                  encode_numbers, visible_cases)
from taotp.sort import build_bits_sort_transformer, build_compact_sort_transformer
from taotp.sort.large_vocab import bits_embeddings, bits_layout, bits_sort_layer
from test_exercises_ch04 import NeverUfunc, Switch, oracle_program

CHECKED = [p.id for p in PUZZLES if p.kind == 'checked']


def _nan_program():
    p = taotp.build_sort_transformer(33, 64)
    p['tok_emb'] = p['tok_emb'].copy()
    p['tok_emb'][3, 1] = np.nan
    return p


def _bad_shape_program():
    p = taotp.build_sort_transformer(33, 64)
    p['layers'][0]['Q'] = np.zeros((1, 5, 6))
    return p


# garbage particular to Chapter 5's answers: broken programs, and a valid one far too small
EXTRA_GARBAGE = {pid: {
    'params with a NaN': _nan_program(),
    'a Q of the wrong shape': _bad_shape_program(),
    'scalars for every table': {'tok_emb': 1, 'pos_emb': 2, 'out_emb': 3, 'layers': 4, 'lnf': 5},
    'a 1-token vocabulary': taotp.base_params(1, 64, 3),
} for pid in CHECKED}


def test_puzzle_list():
    assert [p.id for p in PUZZLES] == [f'5.{i}' for i in range(1, 9)]
    assert CHECKED == ['5.1', '5.2', '5.4', '5.6', '5.7', '5.8']
    assert {p.kind for p in PUZZLES if p.id in ('5.3', '5.5')} == {'reflect'}


def test_encode_numbers():
    assert encode_numbers([42, 7, 100]) == [4, 2, COMMA, 7, COMMA, 1, 0, 0, END]
    assert encode_numbers([0]) == [0, END]


def test_broken_programs_are_named():
    fails('5.1', _nan_program(), 'non-finite')
    fails('5.1', _bad_shape_program(), "layers[0]['Q'] has shape (1, 5, 6)")


# ----------------------------------------------------------------------------- wrong answers

def test_5_1_a_visible_case_names_the_step_the_position_and_the_expected_number():
    fails('5.1', taotp.build_sort_transformer(28, 64), 'at least 33 tokens', 'got vocab_size 28')
    result = fails('5.1', taotp.build_sort_transformer(33, 64),
                   'input [32, 31, 30', '(all numbers, decreasing): wrong at step ',
                   'numbers right (..., ', 'your program printed ', '; expected ')
    assert result.counterexample[-1] == 0
    step = int(re.search(r'wrong at step (\d+) of 32', result.message).group(1))
    assert f'expected {step}' in result.message         # the step-th number printed is `step`


def test_5_1_budget():
    wide = answer('5.1')
    wide = dict(wide, layers=wide['layers'] + [taotp.base_layer(1, 6, 0, 6)])
    fails('5.1', wide, 'is over the budget: 2 layers; at most 1 allowed')
    fails('5.1', taotp.build_sort_transformer(33, 40), 'block_size must be at least 64')


def test_5_2_rejects_the_book_min_at_a_million_without_naming_the_minimum():
    result = fails('5.2', taotp.build_min_transformer(1_000_000, 32), 'the input of ',
                   'drawn for this check', 'which is not right; the answer at the last position '
                   'is the smallest token of the input')
    row = result.counterexample
    never_names(result, f'{min(row)}, which')
    assert 'expected' not in result.message
    fails('5.2', taotp.build_min_transformer(1000, 32), 'at least 1,000,000 tokens',
          'got vocab_size 1,000')


def test_5_2_tries_every_length():
    """Red team, round 17 (class 6): a Min right at lengths 1, 2, 3, 5, 8, 16, 31 and 32 (the
    only ones tried then) that finds the maximum at every other length passed."""
    shown = (1, 2, 3, 5, 8, 16, 31, 32)
    others = [n - 1 for n in range(1, 33) if n not in shown]
    right = min_turned_at([])
    x = np.array([[500, 7, 900_000, 12]])
    assert taotp.last_token_argmax(x, right).tolist() == [7]
    assert taotp.last_token_argmax(x, min_turned_at(others)).tolist() == [900_000]
    fails('5.2', min_turned_at(others), 'the input of 4 tokens', 'which is not right')


def test_5_4_rejects_powerpoints_on_a_large_vocabulary():
    fails('5.4', taotp.build_sort_transformer(1000, 64), 'input [500, 499, 501, 1, 999, 0]',
          'wrong at step 2 of 5: after printing [1] your program printed')
    fails('5.4', taotp.build_sort_transformer(28, 64), 'at least 1,000 tokens')


def test_5_6_rejects_sort_without_repeats():
    fails('5.6', taotp.build_sort_transformer(16, 24),
          'input [5, 2, 5, 2, 0] (the example): wrong at step 2 of 4: after printing [2] your '
          'program printed 5; expected 2')


def test_5_7_rejects_single_token_sort():
    fails('5.7', taotp.build_sort_transformer(12, 64), 'input "42, 7, 100 END" (the example): '
          'wrong at step 1 of 9')
    fails('5.7', taotp.build_sort_transformer(11, 64), 'at least 12 tokens')


# ----------------------------------------------------------------------------- red team

def _sort_next(prefix):
    """The next token of a sort answer, by Python."""
    if 0 not in prefix:
        return 0
    i = prefix.index(0)
    done = len(prefix) - 1 - i
    numbers = sorted(prefix[:i])
    return numbers[done] if done < len(numbers) else 0


def _digits_next(prefix):
    if END not in prefix:
        return 0
    i = prefix.index(END)
    numbers, digits = [], ''
    for t in prefix[:i + 1]:
        if t in (COMMA, END):
            numbers.append(int(digits))
            digits = ''
        else:
            digits += str(t)
    out = encode_numbers(sorted(numbers))
    done = len(prefix) - 1 - i
    return out[done] if done < len(out) else 0


def _one_hot_sorter(V, block):
    """The thermometer-key sorter of the 5.4 reference, at vocabulary V (d_model V + 1)."""
    d = V + 1
    rows = taotp.layer_norm(np.eye(d)[:V])
    sigma = np.sqrt((1 / d) * (1 - 1 / d))

    def through_ln(features):
        W = np.zeros((d, features.shape[1]))
        W[:V] = sigma * features
        W[V] = -W[:V].sum(axis=0)
        return W
    query = np.concatenate([2.0 * np.eye(V), np.ones((V, 1))], axis=1)
    thermo = (np.arange(V)[:, None] > np.arange(V)[None, :]).astype(float)
    key = np.concatenate([thermo, -np.arange(V)[:, None] / V], axis=1)
    params = taotp.base_params(V, block, d)
    params['tok_emb'] = params['out_emb'] = rows
    layer = taotp.base_layer(1, d, 0, d)
    layer['Q'][0] = through_ln(query) * 50.0 * V * np.sqrt(d)
    layer['K'][0] = through_ln(key)
    layer['V'][0] = np.eye(d)
    layer['P'][0] = np.eye(d) * 1e6
    params['layers'].append(layer)
    return params


def knows_only(numbers):
    """The 5.4 reference with the order of every number outside ``numbers`` scrambled."""
    p = _one_hot_sorter(1000, 64)
    others = np.setdiff1d(np.arange(1, 1000), list(numbers))
    K = p['layers'][0]['K'][0]
    K[others] = K[others[::-1]]
    return p


def neighbours_swapped():
    """The 5.4 reference, but 617 and 618 swap keys: wrong only when both are present."""
    p = _one_hot_sorter(1000, 64)
    K = p['layers'][0]['K'][0]
    K[[617, 618]] = K[[618, 617]]
    return p


def band_collapsed_min():
    """The 5.2 reference, but every token of 300,000..399,999 embedded as 300,000."""
    p = answer('5.2')
    table = np.array(p['tok_emb'])
    table[300_000:400_000] = table[300_000]
    return dict(p, tok_emb=table, out_emb=table)


def min_turned_at(positions, vocab=1_000_000, block=32):
    """A Min of d_model 6 (tokens on an arc, a query from the position block) whose query
    turns by pi, and so finds the maximum, at the query ``positions``."""
    p = taotp.base_params(vocab, block, 6)
    p['tok_emb'][:, :3] = taotp.pos_enc_3d(np.linspace(0.1, np.pi - 0.1, vocab))
    turned = np.isin(np.arange(block), positions)
    p['pos_emb'][:, 3:] = taotp.pos_enc_3d(np.where(turned, np.pi, 0.0))
    p['out_emb'] = p['tok_emb']
    layer = taotp.base_layer(1, 6, 0, 1)                          # 1 head of width 1, no MLP
    layer['Q'][0, 3:, 0] = 1e9 * taotp.pos_enc_3d(0.0) / 3       # scores 1e9 cos(theta) / 3
    layer['K'][0, :3, 0] = taotp.pos_enc_3d(0.0) / 3
    layer['V'], layer['P'] = np.zeros((1, 6, 3)), np.zeros((1, 6, 3))
    layer['V'][0, :3], layer['P'][0, :3] = np.eye(3), 1e9 * np.eye(3)
    p['layers'].append(layer)
    return p


def wide_shown_narrow():
    """5.4's one-hot sorter at 33 tokens (d_model 34), shown as a 1-layer d_model-6 program."""
    fake = taotp.base_params(33, 64, 6)
    fake['layers'] = [taotp.base_layer(1, 6, 0, 6)]
    return Switch(_one_hot_sorter(33, 64), fake)


def _ones_fixing_rotation(d, seed):
    """A random rotation that keeps the all-ones direction (layer norm commutes with it)."""
    rng = np.random.default_rng(seed)
    ones = np.ones(d) / np.sqrt(d)
    basis = np.linalg.qr(np.column_stack([ones, rng.normal(size=(d, d - 1))]))[0]
    turn = np.linalg.qr(rng.normal(size=(d - 1, d - 1)))[0]
    return basis @ np.block([[np.eye(1), np.zeros((1, d - 1))],
                             [np.zeros((d - 1, 1)), turn]]) @ basis.T


def disguised(params, seed=0, scale=3.0, pad=0.0, round32=True):
    """The same program rotated (fixing the all-ones direction), its token table rescaled,
    every weight rounded to float32 (``round32``), a constant dimension appended (``pad``)."""
    d = np.shape(params['tok_emb'])[1]
    R = _ones_fixing_rotation(d, seed)
    f32 = (lambda a: np.asarray(a, dtype=np.float32)) if round32 else np.asarray

    def turn(layer):
        out = dict(layer, M1=f32(R.T @ layer['M1']), M2=f32(layer['M2'] @ R),
                   b2=f32(layer['b2'] @ R))
        out.update({k: f32(np.einsum('de,hef->hdf', R.T, layer[k])) for k in 'QKVP'})
        if pad:                   # the constant dimension, ignored by every weight
            out.update({k: np.pad(out[k], [(0, 0), (0, 1), (0, 0)]) for k in 'QKVP'})
            out['M1'] = np.pad(out['M1'], [(0, 1), (0, 0)])
            out['M2'], out['b2'] = np.pad(out['M2'], [(0, 0), (0, 1)]), np.pad(out['b2'], (0, 1))
        return out
    column = lambda a, value: np.c_[a, np.full(len(a), value)] if pad else a
    return dict(params, tok_emb=column(f32(scale * params['tok_emb'] @ R), pad),
                out_emb=column(f32(params['out_emb'] @ R), 0.0),
                pos_emb=column(f32(params['pos_emb'] @ R), 0.0),
                layers=[turn(layer) for layer in params['layers']])


COMPACT_33 = build_compact_sort_transformer(33, 64, t0=1.0)
BITS_1000 = build_bits_sort_transformer(1000, 64)


def bits_design(n, shift, vocab=1000):
    """The bits design with codes of length ``n`` and every number's rank moved by ``shift``
    (red team, round 4: it escaped a fingerprint that compared with the package's own ranks)."""
    params = taotp.base_params(vocab, 64, bits_layout(n).d_model)
    tokens = np.arange(vocab)
    params['tok_emb'] = params['out_emb'] = bits_embeddings(np.where(tokens > 0, tokens + shift,
                                                                     0), n)
    params['layers'].append(bits_sort_layer(n))
    return params


SHIFTED, LONG = bits_design(14, 1500), bits_design(32, 0)


def moved_to_tokens(params, seed=5):
    """Red team, round 5: a vector added to every token row and taken from every position
    row (the residual stream is the same, so is the program)."""
    v = np.random.default_rng(seed).normal(size=np.shape(params['tok_emb'])[1])
    return dict(params, tok_emb=params['tok_emb'] + v, pos_emb=params['pos_emb'] - v)


def _widened(norm, d, k):
    """A layer norm's gamma and beta for k more dimensions (gamma 1, beta 0 there)."""
    return {key: np.pad(np.broadcast_to(value, (d,)), (0, k),
                        constant_values=1.0 if key == 'gamma' else 0.0)
            for key, value in norm.items()}


def with_unread_noise(params, k=8, share=0.3, seed=6):
    """Red team, round 5: k appended dimensions of zero-mean noise per token that no weight
    reads, rows rescaled to keep one norm, Q, K, V scaled back."""
    rng = np.random.default_rng(seed)
    tok = np.asarray(params['tok_emb'])
    d = tok.shape[1]
    noise = rng.normal(size=(len(tok), k))
    noise -= noise.mean(1, keepdims=True)
    noise *= np.sqrt(share * d) / np.linalg.norm(noise, axis=1, keepdims=True)
    alpha = np.sqrt(d + k) / np.sqrt(d + share * d)
    layers = []
    for layer in params['layers']:
        wide = {key: np.pad(layer[key], [(0, 0), (0, k), (0, 0)]) for key in 'QKVP'}
        layers.append(dict(layer, Q=wide['Q'] / alpha, K=wide['K'] / alpha,
                           V=wide['V'] / alpha, P=wide['P'] * alpha,
                           M1=np.pad(layer['M1'], [(0, k), (0, 0)]),
                           M2=np.pad(layer['M2'], [(0, 0), (0, k)]),
                           b2=np.pad(layer['b2'], (0, k)),
                           ln1=_widened(layer['ln1'], d, k), ln2=_widened(layer['ln2'], d, k)))
    return dict(params, tok_emb=alpha * np.c_[tok, noise],
                out_emb=np.c_[params['out_emb'], np.zeros((len(tok), k))],
                pos_emb=np.pad(params['pos_emb'], [(0, 0), (0, k)]), layers=layers,
                lnf=_widened(params['lnf'], d, k))


CHEATS = [
    ('5.1', lambda: oracle_program(_sort_next, 33, 64, [taotp.base_layer(1, 1, 0, 1)]),
     'input [32, 31'),
    ('5.1', wide_shown_narrow, 'over the budget: 34 d_model'),
    ('5.1', lambda: COMPACT_33, 'compact Sort of Chapter 12'),
    ('5.1', lambda: disguised(COMPACT_33, round32=False), 'compact Sort of Chapter 12'),
    ('5.2', lambda: oracle_program(min, 1_000_000, 32), 'the input of '),
    ('5.2', band_collapsed_min, 'in the vocabulary'),
    ('5.4', lambda: oracle_program(_sort_next, 1000, 64), 'input [500, 499'),
    ('5.4', lambda: knows_only(n for _, c in visible_cases('5.4') for n in c), 'neighbours'),
    ('5.4', neighbours_swapped, ('neighbours', 'drawn for this check')),
    ('5.4', lambda: BITS_1000, 'bits Sort of Chapter 12'),
    ('5.4', lambda: disguised(BITS_1000, seed=1), 'bits Sort of Chapter 12'),
    ('5.4', lambda: disguised(BITS_1000, seed=2, pad=0.5), 'bits Sort of Chapter 12'),
    ('5.4', lambda: SHIFTED, 'bits Sort of Chapter 12'),
    ('5.4', lambda: disguised(SHIFTED, seed=3), 'bits Sort of Chapter 12'),
    ('5.4', lambda: disguised(LONG, seed=4, pad=0.5), 'bits Sort of Chapter 12'),
    ('5.4', lambda: moved_to_tokens(disguised(SHIFTED, seed=5)), 'bits Sort of Chapter 12'),
    ('5.4', lambda: with_unread_noise(BITS_1000), 'bits Sort of Chapter 12'),
    ('5.6', lambda: oracle_program(_sort_next, 16, 24), 'input [5, 2, 5, 2, 0]'),
    ('5.6', lambda: training.stored('5.8'), 'input [5, 2, 5, 2, 0]'),
    ('5.7', lambda: oracle_program(_digits_next, 12, 64), 'input "42, 7, 100 END"'),
]


@pytest.mark.parametrize('puzzle, cheat, messages', CHEATS,
                         ids=[f'{p}-{i}' for i, (p, _, _) in enumerate(CHEATS)])
def test_cheats_do_not_pass(puzzle, cheat, messages):
    fails(puzzle, cheat(), *((messages,) if isinstance(messages, str) else messages))


def test_the_disguises_keep_the_program_working():
    """The disguised package programs still sort (so refusing them is needed)."""
    for params, vocab in ((disguised(COMPACT_33, round32=False), 33),
                          (disguised(BITS_1000, seed=1), 1000),
                          (disguised(BITS_1000, seed=2, pad=0.5), 1000),
                          (disguised(SHIFTED, seed=3), 1000),
                          (disguised(LONG, seed=4, pad=0.5), 1000),
                          (moved_to_tokens(disguised(SHIFTED, seed=5)), 1000),
                          (with_unread_noise(BITS_1000), 1000)):
        rng = np.random.default_rng(0)
        x = rng.choice(np.arange(1, vocab), size=20, replace=False).tolist() + [0]
        plain = taotp.exercises.toolkit.program(params)          # what the judge runs
        out = taotp.decode(x, plain, max_steps=20)[21:].tolist()
        assert out == sorted(x[:-1])


def test_the_fingerprints_refuse_the_package_and_accept_the_references():
    assert _is_compact_sort(COMPACT_33['tok_emb'])
    assert _is_compact_sort(build_compact_sort_transformer(33, 64, ratio=0.6, push=1.5)['tok_emb'])
    assert not _is_compact_sort(answer('5.1')['tok_emb'])
    assert not _is_compact_sort(taotp.build_sort_transformer(33, 64)['tok_emb'])
    assert _is_bits_sort(build_bits_sort_transformer(5000, 64))
    assert not _is_bits_sort(answer('5.4'))
    for other in (np.where(np.arange(1000)[:, None] > np.arange(1000), 1.0, -1.0),   # thermometer
                  2.0 * ((np.arange(1000)[:, None] >> np.arange(10)) & 1) - 1,      # binary
                  np.random.default_rng(0).normal(size=(1000, 40))):
        plain = dict(BITS_1000, tok_emb=other, pos_emb=np.zeros((1, other.shape[1])), layers=[])
        assert not _is_bits_sort(plain)


def bits_with_a_loud_constant_pair(size=256.0):
    """Red team, round 7: the bits Sort with its constant pair of every number row blown up,
    so that all rows are nearly parallel, and Q, K, V rescaled to undo layer norm's scale."""
    from taotp.sort.large_vocab import _bits_scale, bits_layout, code_length
    p = build_bits_sort_transformer(1000, 64)
    n = code_length(1000)
    layout, s = bits_layout(n), _bits_scale(n)
    code, one = (np.arange(layout.d_model)[layout[k]] for k in ('code', 'one'))
    p['tok_emb'] = p['tok_emb'].copy()
    p['tok_emb'][1:, one] = np.array([size, -size])
    sigma = np.sqrt((n * s * s + 2 * size * size) / layout.d_model)
    layer = p['layers'][0]
    Q, K, V = (layer[k].copy() for k in 'QKV')
    Q[:, one[0], :] /= size / s
    for m in (Q, K, V):
        m[:, code, :] *= sigma / s
    Q[:, one[0], :] *= sigma / s
    layer.update(Q=Q, K=K, V=V)
    return p


def test_the_bits_fingerprint_sees_through_a_part_all_rows_share():
    disguised = bits_with_a_loud_constant_pair()
    x = np.random.default_rng(0).choice(np.arange(1, 1000), size=30, replace=False)
    sequence = np.concatenate([x, [0], np.sort(x)])[None]
    assert (taotp.teacher_forced_argmax(sequence, disguised, 31) == np.sort(x)).all()
    assert _is_bits_sort(disguised)
    fails('5.4', disguised, 'the bits Sort of Chapter 12')


@pytest.mark.slow       # four checks in a row; fresh cases per check: test_every_check_draws_new_hidden_cases
def test_a_table_of_numbers_from_earlier_checks_does_not_pass():
    """Class 1: collect the numbers of two NOT YET lines, then submit a sorter that knows
    them (and the visible cases); the next check draws other inputs."""
    known = {n for _, c in visible_cases('5.4') for n in c}
    for _ in range(2):
        result = fails('5.4', knows_only(known), 'drawn for this check')
        known |= set(result.counterexample[:-1])
    fails('5.4', knows_only(known), 'drawn for this check')


def test_a_hidden_case_never_shows_the_expected_token():
    result = fails('5.4', neighbours_swapped(), 'which is not right; each step prints the '
                   'smallest input number larger than the one printed last')
    x = result.counterexample[:-1]
    step = int(re.search(r'wrong at step (\d+)', result.message).group(1))
    assert 'expected' not in result.message
    never_names(result, f'printed {sorted(x)[step - 1]},')


class PatchOnRead:
    """A weight whose conversion to an array swaps 5.6's engine for a sorting oracle."""

    def __init__(self, value):
        self.value = value

    def __array__(self, dtype=None, copy=None):
        from taotp.exercises import ch05

        def oracle(seqs, params, n_prompt, **kwargs):
            return np.sort(seqs[:, :n_prompt - 1], axis=1)[:, :seqs.shape[1] - n_prompt]
        ch05.teacher_forced_argmax = oracle
        return np.asarray(self.value, dtype=dtype)


class TimeUpArray:
    def __array__(self, dtype=None, copy=None):
        raise toolkit.TimeUp()


def test_a_weight_that_patches_the_engine_when_read_patches_only_its_worker():
    answer_ = {**taotp.base_params(16, 24, 2), 'tok_emb': PatchOnRead(np.eye(16, 2))}
    fails('5.6', answer_, 'input [5, 2, 5, 2, 0] (the example)')


def test_a_forged_time_up_is_the_answers_own_exception():
    fails('5.6', {**taotp.base_params(16, 24, 2), 'tok_emb': TimeUpArray()}, 'TimeUp')


def test_a_weight_whose_ufuncs_never_return_is_copied_without_running_them():
    p = answer('5.6')
    start = time.perf_counter()
    passes('5.6', dict(p, tok_emb=np.array(p['tok_emb']).view(NeverUfunc)))
    assert time.perf_counter() - start < 30


# ----------------------------------------------------------------------------- the inputs

def test_the_visible_cases_keep_the_stated_limits():
    for puzzle, low, high, longest in (('5.1', 1, 32, 32), ('5.4', 1, 999, 30),
                                       ('5.6', 1, 15, 12), ('5.7', 0, 999, 8)):
        cases = visible_cases(puzzle)
        assert cases and all(1 <= len(c) <= longest and low <= min(c) and max(c) <= high
                             for _, c in cases)
        if puzzle != '5.6':
            assert all(len(set(c)) == len(c) for _, c in cases)
    assert ('the example', [5, 2, 5, 2]) in visible_cases('5.6')
    assert visible_cases('5.2') == []


@pytest.mark.parametrize('first, last, size', [(1, 999, 30), (0, 999, 8)])
def test_the_runs_reach_every_number_and_every_pair_of_neighbours(first, last, size):
    for seed in range(4):
        cases = _runs(np.random.default_rng(seed), first, last, size)
        assert all(1 <= len(c) <= size and len(set(c)) == len(c) for _, c in cases)
        assert set().union(*(set(c) for _, c in cases)) == set(range(first, last + 1))
        pairs = {(a, a + 1) for _, c in cases for a in c if a + 1 in c}
        assert pairs == {(a, a + 1) for a in range(first, last)}


def test_every_check_draws_new_hidden_cases():
    first, second = (verdict('5.4', neighbours_swapped()) for _ in range(2))
    assert not first and not second
    assert first.counterexample != second.counterexample


def wrong_on_two_numbers(c=0.1):
    """Red team, round 25: 5.4's one-hot sorter with two more dimensions, and a small +-c pair
    in position row 2 that the query reads: the terminator of a 2-number input asks for the
    largest number, not the smallest. At every other length row 2 holds a number, whose key
    the pair scales by about 1 - 1e-5 only."""
    p = _one_hot_sorter(1000, 64)
    d = p['tok_emb'].shape[1]
    pad = lambda a, axis: np.pad(a, [(0, 2 if i == axis else 0) for i in range(np.ndim(a))])
    axes = dict(Q=1, K=1, V=1, P=1, M1=0, M2=1, b2=0)
    layer = {k: pad(v, axes[k]) if k in axes else v for k, v in p['layers'][0].items()}
    layer['Q'][0, d, -1] = -3 * 50 * 1000 * np.sqrt(d) / c     # key weight of -v/V: 1 -> -2
    pos = pad(p['pos_emb'], 1)
    pos[2, d:] = c, -c
    return dict(p, tok_emb=pad(p['tok_emb'], 1), out_emb=pad(p['out_emb'], 1), pos_emb=pos,
                layers=[layer])


def test_5_4_tries_every_length():
    """Round 25: 25 inputs of random lengths left each length 2-29 out of many checks; a
    sorter wrong on every input of 2 numbers passed half of them."""
    attack = wrong_on_two_numbers()
    for n in (1, 2, 3, 17, 30):
        x = np.random.default_rng(n).choice(np.arange(1, 1000), size=n, replace=False)
        seq = np.concatenate([x, [0], np.sort(x)])[None]
        right = (taotp.teacher_forced_argmax(seq, attack, n + 1) == np.sort(x)).all()
        assert right == (n != 2), n
    for _ in range(2):
        fails('5.4', attack, '(2 random numbers, drawn for this check): wrong at step 1 of 2')
    for seed in range(4):
        cases = _each_length(np.random.default_rng(seed), np.arange(1, 1000), 30, 2)
        assert sorted(len(c) for _, c in cases) == sorted(list(range(1, 31)) * 2)
        assert all(len(set(c)) == len(c) and 1 <= min(c) and max(c) <= 999 for _, c in cases)


def test_5_6_tries_every_count_of_distinct_numbers_at_every_length():
    """Round 25: all distinct numbers at lengths 8-11, or 11 distinct among 12, were missing
    from most checks."""
    for seed in range(6):
        cases = _each_distinct_count(np.random.default_rng(seed))
        assert sorted((len(c), len(set(c))) for _, c in cases) == \
            [(n, k) for n in range(1, 13) for k in range(1, n + 1)]
        assert all(1 <= min(c) and max(c) <= 15 for _, c in cases)


def test_5_7_tries_every_prompt_length():
    """Round 25: prompts of 27-31 tokens (and of 5) were missing from most checks."""
    for seed in range(6):
        cases = _lists_of_every_size(np.random.default_rng(seed))
        assert [len(encode_numbers(c)) for _, c in cases] == list(range(2, 33))
        assert all(1 <= len(c) <= 8 and len(set(c)) == len(c) and max(c) <= 999
                   for _, c in cases)
        widths = {len(str(v)) for _, c in cases for v in c}
        assert widths == {1, 2, 3}
