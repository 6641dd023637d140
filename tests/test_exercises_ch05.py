"""Chapter 5 checkers: what each one calls solved, and the answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 5.1 | a program with vocabulary >= 33, block >= 64, 1 layer and d_model <= 6 (measured on the submitted arrays) greedily sorts 2,507 inputs over 1..32: the full set in 5 orders, every ordered pair, each number alone, the crowded end, powers of two, both ends alternating, 1,500 random subsets of every size drawn with a seed taken from the program | a Python oracle in ndarray subclasses (passed before); a d_model-34 sorter shown as a d_model-6 program by a dict subclass (passed before); the book's Sort at 33 and at 28; a second layer; a block of 40 |
| 5.2 | a program with vocabulary >= 1,000,000, block >= 32 and d_model <= 8 gives the minimum at the last position of inputs of lengths 1, 2, 3, 5, 8, 16, 31, 32: all equal (at 0, in the middle, at the top), the minimum first or last, neighbours at both ends and in the middle, powers of two and their neighbours, the minimum and the next token together, random rows with half of their values among the 20 smallest and largest tokens | the oracle (passed before); the book's Min at a million (off by one) and at 1,000 |
| 5.3, 5.5 | no checker (reflections; worked answers in the solutions notebook) | - |
| 5.4 | a program with vocabulary >= 1,000, block >= 64 and d_model <= 2,048 sorts up to 30 distinct numbers of 1..999: both ends, neighbours at the top, bottom and middle, each end alone, powers of two, the longest allowed, 100 random inputs of every length | the oracle (passed before); a sorter that knows the right order only for the numbers the old checker's 14 inputs used (passed before); powerpoints on a large vocabulary; too small a vocabulary |
| 5.6 | a program with vocabulary >= 16 and block >= 24 sorts 1,017 multisets of 1-12 numbers of 1..15: twelve copies of one number (the longest input), eleven copies and one other, twelve distinct numbers, single numbers, 1,000 random multisets from 1-12 distinct values | the oracle (passed before); Sort without repeats |
| 5.7 | a program with vocabulary >= 12 and block >= 64 sorts 313 lists of 1-8 distinct numbers below 1,000 in the digit format: shared prefixes, numbers that are prefixes of others, 0 and 999 alone, eight three-digit numbers, powers of two, 300 random lists | the oracle (passed before); single-token Sort; too small a vocabulary |
| 5.8 | a trained (or any) program with vocabulary 28 sorts >= 95 % of 540 held-out prompts (20 of each length 1..27); checker in taotp.exercises.training, tested in test_training_puzzles.py | the book's Sort at vocabulary 10; untrained weights |

The contract every checker keeps (the reference passes, garbage is reported, loops are
stopped) is tested once in test_checker_contract.py; the reference answers come from their
one copy, the solutions notebook (``answer``).
"""
import time

import numpy as np
import pytest

import taotp
from solutions import answer
from taotp.exercises import check, registry
from taotp.exercises.ch04 import frozen
from taotp.exercises.ch05 import (COMMA, END, PUZZLES, _check_answers, _digit_lists,
                                  _repeat_inputs, _sort_inputs, encode_numbers)
from test_exercises_ch04 import NeverUfunc, Switch, budgeted, oracle_program

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
    nan = check('5.1', _nan_program())
    assert not nan and 'non-finite' in nan.message
    shape = check('5.1', _bad_shape_program())
    assert not shape and "layers[0]['Q'] has shape (1, 5, 6)" in shape.message


# ----------------------------------------------------------------------------- wrong answers

def test_5_1_rejects_the_book_program_too_small_and_at_33():
    small = check('5.1', taotp.build_sort_transformer(28, 64))
    assert not small and 'at least 33 tokens' in small.message
    assert 'got vocab_size 28' in small.message
    book33 = check('5.1', taotp.build_sort_transformer(33, 64))
    assert not book33 and book33.message.startswith('input [')
    assert 'expected [1, 2' in book33.message and book33.counterexample[-1] == 0


def test_5_1_budget():
    wide = answer('5.1')
    wide = dict(wide, layers=wide['layers'] + [taotp.base_layer(1, 6, 0, 6)])
    result = check('5.1', wide)
    assert not result and 'is over the budget: 2 layers; at most 1 allowed' in result.message
    short = check('5.1', taotp.build_sort_transformer(33, 40))
    assert not short and 'block_size must be at least 64' in short.message


def test_5_2_rejects_the_book_min_at_a_million():
    result = check('5.2', taotp.build_min_transformer(1_000_000, 32))
    assert not result and result.message.startswith('input [')
    assert '(powers of two and their neighbours): expected 255, got 256' in result.message
    assert 'first failure' in result.message
    small = check('5.2', taotp.build_min_transformer(1000, 32))
    assert not small and 'at least 1,000,000 tokens; got 1,000' in small.message


def test_5_4_rejects_powerpoints_on_a_large_vocabulary():
    result = check('5.4', taotp.build_sort_transformer(1000, 64))
    assert not result and 'input [' in result.message and 'first failure' in result.message
    small = check('5.4', taotp.build_sort_transformer(28, 64))
    assert not small and 'at least 1,000 tokens' in small.message


def test_5_6_rejects_sort_without_repeats():
    result = check('5.6', taotp.build_sort_transformer(16, 24))
    assert not result and 'input [5, 2, 5, 2, 0]: expected [2, 2, 5, 5]' in result.message


def test_5_7_rejects_single_token_sort():
    result = check('5.7', taotp.build_sort_transformer(12, 64))
    assert not result and result.message.startswith('input [7, 10, 7, 0, 10')
    assert '(shared prefixes)' in result.message
    small = check('5.7', taotp.build_sort_transformer(11, 64))
    assert not small and 'at least 12 tokens' in small.message


# ----------------------------------------------------------------------------- cheats

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


def oracle_5_1():
    return oracle_program(_sort_next, 33, 64, layers=[taotp.base_layer(1, 1, 0, 1)])


def oracle_5_2():
    return oracle_program(min, 1_000_000, 32)


def oracle_5_4():
    return oracle_program(_sort_next, 1000, 64)


def oracle_5_6():
    return oracle_program(_sort_next, 16, 24)


def oracle_5_7():
    return oracle_program(_digits_next, 12, 64)


def wide_shown_narrow():
    """5.4's one-hot sorter at 33 tokens (d_model 34), shown as a 1-layer d_model-6 program."""
    fake = taotp.base_params(33, 64, 6)
    fake['layers'] = [taotp.base_layer(1, 6, 0, 6)]
    return Switch(_one_hot_sorter(33, 64), fake)


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


def _old_5_4_numbers():
    """The numbers the old 5.4 checker used: 4 fixed inputs and 10 seeded with seed 54."""
    rng = np.random.default_rng(54)
    used = {999, 1, 998, 2, 500, 499, 501, 7} | set(range(999, 969, -1))
    for _ in range(10):
        k = int(rng.integers(2, 31))
        used |= set(rng.choice(np.arange(1, 1000), size=k, replace=False).tolist())
    return sorted(used)


def knows_only_old_numbers():
    """The 5.4 reference with the order of every other number scrambled (their keys permuted)."""
    p = _one_hot_sorter(1000, 64)
    others = np.setdiff1d(np.arange(1, 1000), _old_5_4_numbers())
    K = p['layers'][0]['K'][0]
    K[others] = K[others[::-1]]
    return p


CHEATS = [
    ('5.1', oracle_5_1, 'input ['),
    ('5.1', wide_shown_narrow, 'input ['),
    ('5.2', oracle_5_2, 'first failure'),
    ('5.4', oracle_5_4, 'input ['),
    ('5.4', knows_only_old_numbers, 'input ['),
    ('5.6', oracle_5_6, 'input ['),
    ('5.7', oracle_5_7, 'input ['),
]


@pytest.mark.parametrize('puzzle, cheat, message', CHEATS,
                         ids=[f'{p}-{c.__name__}' for p, c, _ in CHEATS])
def test_cheats_do_not_pass(puzzle, cheat, message):
    result = registry()[puzzle].checker(cheat())
    assert not result, f'{cheat.__name__} passed {puzzle}: {result.message}'
    assert message in result.message, result.message


def test_the_cheats_are_real():
    """Run as submitted, each cheat answers right where the old checkers looked."""
    prompts = [[5, 3, 9, 0], [32, 1, 0]]
    _check_answers(oracle_5_1(), prompts, [sorted(p[:-1]) for p in prompts])
    sorter = dict.items(wide_shown_narrow())
    _check_answers(dict(sorter), prompts, [sorted(p[:-1]) for p in prompts])
    old = [[999, 1, 998, 2, 0], list(range(999, 969, -1)) + [0]]
    _check_answers(knows_only_old_numbers(), old, [sorted(p[:-1]) for p in old])
    assert frozen(wide_shown_narrow())['tok_emb'].shape == (33, 6)


def test_a_weight_whose_ufuncs_never_return_cannot_hang_the_check():
    """The checker copies the numbers once (guard.frozen) and never calls the subclass's ufuncs:
    the right numbers in a hostile array pass, quickly; a hostile value that cannot even be
    copied is stopped by the budget (test_values_that_never_return_are_stopped_by_the_budget)."""
    p = answer('5.6')
    p = dict(p, tok_emb=np.array(p['tok_emb']).view(NeverUfunc))
    start = time.perf_counter()
    result = budgeted('5.6')(p)
    assert result and time.perf_counter() - start < 3


# ----------------------------------------------------------------------------- the inputs

def test_sort_inputs_are_distinct_and_within_range():
    prompts, labels = _sort_inputs(33, np.random.default_rng(0), 50, 32)
    assert len(prompts) == len(labels)
    for p in prompts:
        assert p[-1] == 0 and 1 <= len(p) - 1 <= 32 and len(set(p[:-1])) == len(p) - 1
        assert all(1 <= v <= 32 for v in p[:-1])
    assert {'all numbers, decreasing', 'powers of two', 'the largest number alone'} <= set(labels)


def test_repeat_and_digit_inputs_keep_the_stated_limits():
    prompts, labels = _repeat_inputs(np.random.default_rng(0), 200)
    assert all(p[-1] == 0 and 1 <= len(p) - 1 <= 12 and set(p[:-1]) <= set(range(1, 16))
               for p in prompts)
    assert [15] * 12 + [0] in prompts and max(len(set(p)) for p in prompts) >= 12
    for values, _ in _digit_lists(np.random.default_rng(0), 200):
        assert 1 <= len(values) <= 8 and len(set(values)) == len(values)
        assert all(0 <= v < 1000 for v in values)
        assert len(encode_numbers(values)) <= 32


def test_the_input_generator_agrees_with_a_correct_program():
    # 5.1's inputs and comparison accept the book's Sort inside its own range (n = 28)
    prompts, labels = _sort_inputs(28, np.random.default_rng(0), 20, 27)
    _check_answers(taotp.build_sort_transformer(28, 56), prompts,
                   [sorted(p[:-1]) for p in prompts], labels)
