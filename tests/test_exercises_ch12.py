"""Chapter 12 checkers ("beat a record"): what each calls solved, and answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 12.1 | a program with vocabulary >= 12 and block >= 11, layer norms at their defaults and at most the compact record's parameters (3 digits) adds 10,000+ pairs of 3-digit numbers in the book's format: every pair of numbers with digits in 0, 1, 8, 9, x + (999 - x), x + (1000 - x), x + 999 and 999 + x for every x, 3,000 seeded pairs and 1,000 drawn with a seed taken from the program | the book's adder (too large); the record with one weight changed (wrong carries); the record with a shift hidden in the final layer norm; the record with an extra unused head (too large) |
| 12.2 | a one-layer program with vocabulary >= 65,536, block >= 128, default layer norms and at most the record's parameters sorts 60+ inputs of up to 64 numbers: both ends, runs of neighbours where the codes part at every position, powers of two, seeded sets, 4 drawn with a seed taken from the program | the book's Sort (vocabulary 28); the record with block 130 (48 parameters over); a second layer; a head weight that no longer outweighs the shallower heads (wrong); a shift in the final layer norm |
| 12.3 | a program with vocabulary >= 28, block >= 54, default layer norms and at most the record's non-zero parameters sorts 1,138 inputs over 1..27: every number alone, every ordered pair, the 27 numbers in 6 orders, 400 seeded sets, 3 drawn with a seed taken from the program | the book's Sort (184 non-zero); the compact design at 29 (3 over); the record with its query map pushed too far (wrong); a block of 40; arrays given as lists (counted the same) |
| 12.4 | a builder ``build(ks, vs, vocab_size, block_size)`` whose program for Chapter 3's 1,000-entry vocab-10 table at block 16 has at most the record's parameters and answers every key alone and behind prefixes; and whose programs at block 16 answer every key of XOR, of 50 keys of 12 tokens differing only in the first or only in the last token, of a random table drawn with a seed taken from the program, and of the 1,000-entry table, behind random prefixes and prefixes of other keys | the book's fitted construction (wrong on the 1,000-entry table); a builder that always returns the 1,000-entry record (wrong on XOR); one that ignores block_size; one that raises; one that returns more parameters; one that scrambles the arrays it is given (the checker keeps its own); the size measured on a program other than the one run (each table is built once) |
| 12.5 | a one-layer program with vocabulary >= 10, MLP off (M1, b1, M2 zero), default layer norms and at most the record's non-zero parameters answers all 100 prompts [i, j] with (i + j) % 10 | the book's single-digit adder (MLP on); the record with a head removed (wrong); a second layer; a shift in the final layer norm |

The contract every checker keeps (the reference passes, garbage is reported, loops are
stopped) is tested once in test_checker_contract.py, and here as well for this chapter's own
garbage; the reference answers come from their one copy, the solutions notebook (``answer``).
"""
import copy

import numpy as np
import pytest

import taotp
from solutions import answer
from taotp.exercises import check, registry
from taotp.exercises.ch12 import PUZZLES, adder_pairs, record_size

CHECKED = [p.id for p in PUZZLES if p.kind == 'checked']


def run(puzzle, value):
    return registry()[puzzle].checker(value)


def failed(puzzle, value, *fragments):
    result = run(puzzle, value)
    assert not result, f'{puzzle} passed'
    for fragment in fragments:
        assert fragment in result.message, result.message
    return result


def with_shift(params):
    p = copy.deepcopy(params)
    p['lnf'] = {'gamma': 1.0, 'beta': np.full(np.shape(p['tok_emb'])[1], 0.5)}
    return p


# garbage particular to this chapter's answers
EXTRA_GARBAGE = {
    **{pid: {'a 1-token vocabulary': taotp.base_params(1, 200, 3),
             'params with a NaN': {**taotp.base_params(30, 200, 3),
                                   'tok_emb': np.full((30, 3), np.nan)}}
       for pid in ('12.1', '12.2', '12.3', '12.5')},
    '12.4': {'a builder returning None': lambda *a: None,
             'a builder returning text': lambda *a: 'params',
             'a builder returning a 1-token program': lambda *a: taotp.base_params(1, 20, 3),
             'params instead of a builder': taotp.base_params(10, 5, 3)},
}


def test_puzzle_list():
    assert CHECKED == ['12.1', '12.2', '12.3', '12.4', '12.5']


@pytest.mark.parametrize('puzzle', ['12.3', '12.4', '12.5'])      # 12.1, 12.2: the contract test
def test_reference_is_the_record_and_ties_it(puzzle, capsys):
    result = check(puzzle, answer(puzzle))
    assert result and 'ties the record' in result.message
    assert capsys.readouterr().out.startswith(f'PASS {puzzle}')


@pytest.mark.parametrize('puzzle, label', [(p, label) for p, items in EXTRA_GARBAGE.items()
                                           for label in items])
def test_own_garbage_is_reported(puzzle, label):
    result = run(puzzle, EXTRA_GARBAGE[puzzle][label])
    assert not result and result.line.startswith(f'NOT YET {puzzle} · ')


def test_record_sizes_are_the_catalogues():
    assert record_size('sort-28-compact')[1] == 97
    assert record_size('mod-1-digit-attention')[1] == 324
    assert record_size('universal-lookup-1000-block-16')[0] == 15_517 + 11 * 7   # 11 more rows


# ----------------------------------------------------------------------------- 12.1

def test_12_1_pairs_cover_every_carry_pattern():
    pairs = adder_pairs(np.random.default_rng(0))
    assert len(pairs) > 10_000 and len(np.unique(pairs, axis=0)) == len(pairs)
    sums = pairs.sum(axis=1)
    assert sums.max() == 1998 and sums.min() == 0 and (sums == 1000).sum() >= 999
    digit_sums = (pairs[:, :, None] // 10 ** np.arange(3) % 10).sum(axis=1)   # per column
    for column in range(3):
        assert {0, 9, 18} <= set(digit_sums[:, column].tolist())


def test_12_1_the_books_adder_is_too_large():
    failed('12.1', taotp.build_decimal_addition_transformer(3), '360,576 parameters',
           'nothing was run')


def test_12_1_a_broken_carry_is_found():
    p = copy.deepcopy(answer('12.1'))
    last = p['layers'][-1]
    last['M2'] = last['M2'] * 0.5                       # the final write loses half its weight
    result = run('12.1', p)
    if result:                                          # the write may survive halving:
        last['M2'][:] = 0                               # then switch it off altogether
        result = run('12.1', p)
    assert not result and 'input [' in result.message and 'expected' in result.message


def test_12_1_layer_norm_shift_and_extra_head_are_rejected():
    failed('12.1', with_shift(answer('12.1')), "['beta'] must stay 0")
    p = copy.deepcopy(answer('12.1'))
    layer = p['layers'][0]
    for name in 'QKVP':
        layer[name] = np.concatenate([layer[name], np.zeros_like(layer[name][:1])])
    failed('12.1', p, 'the record has', 'beat or match it')


# ----------------------------------------------------------------------------- 12.2

def test_12_2_the_books_sort_has_too_small_a_vocabulary():
    failed('12.2', taotp.build_sort_transformer(28, 128), 'vocab_size >= 65,536')


def test_12_2_larger_block_second_layer_and_shift():
    failed('12.2', taotp.sort.build_bits_sort_transformer(65_536, 130), '1,616,328 parameters')
    p = copy.deepcopy(answer('12.2'))
    p['layers'].append(copy.deepcopy(p['layers'][0]))
    failed('12.2', p, 'over the budget', 'layers')
    failed('12.2', with_shift(answer('12.2')), "lnf['beta'] must stay 0")


def test_12_2_heads_that_no_longer_outweigh_are_wrong():
    p = taotp.sort.build_bits_sort_transformer(65_536, 128, head_weight=1.01)
    layer = p['layers'][0]
    layer['P'] = layer['P'] / 2.0 ** np.arange(20)[:, None, None]   # all heads weigh the same
    failed('12.2', p, 'input [', 'expected', 'inputs of')


# ----------------------------------------------------------------------------- 12.3

def test_12_3_the_books_sort_and_the_compact_design_at_29_are_too_large():
    failed('12.3', taotp.build_sort_transformer(28, 54), '184 non-zero', 'the record has 97')
    failed('12.3', taotp.sort.build_compact_sort_transformer(29, 56), '100 non-zero')


def test_12_3_a_query_map_pushed_too_far_is_wrong():
    p = taotp.sort.build_compact_sort_transformer(28, 54, push=1.9)
    failed('12.3', p, 'input [', 'expected', 'inputs of')


def test_12_3_small_block_and_lists():
    failed('12.3', taotp.sort.build_compact_sort_transformer(28, 40), 'block_size must be at '
                                                                       'least 54')
    p = answer('12.3')
    as_lists = {**p, 'tok_emb': p['tok_emb'].tolist(), 'out_emb': p['out_emb'].tolist()}
    result = run('12.3', as_lists)
    assert result and '97 non-zero' in result.message


# ----------------------------------------------------------------------------- 12.4

def test_12_4_the_fitted_construction_is_wrong_on_the_big_table():
    def fitted(ks, vs, vocab_size, block_size):
        return taotp.build_lookup_transformer(ks, vs, vocab_size, block_size, tok_dims=4,
                                              optimization_iters=30)
    failed('12.4', fitted, "Chapter 3's table", 'expected', 'keys wrong')


def test_12_4_a_builder_that_ignores_its_table_or_block():
    table = taotp.lookup.random_lookup_table(1000, 5, 10, rng=0)
    failed('12.4', lambda ks, vs, v, b: answer('12.4')(*table, 10, b), 'XOR', 'expected')
    failed('12.4', lambda ks, vs, v, b: answer('12.4')(ks, vs, v, len(ks[0])), 'block_size',
           'expected at least')


def test_12_4_size_is_measured_on_the_program_that_is_run():
    """A builder that answers the size check with a small program and the prefix checks with
    another is impossible: each table is built once, and the measured program is the one run."""
    calls = []

    def counting(ks, vs, v, b):
        calls.append((len(ks), b))
        return answer('12.4')(ks, vs, v, b)
    assert run('12.4', counting)
    assert calls[0] == (1000, 16) and sum(n == 1000 for n, _ in calls) == 1


def test_12_4_raising_larger_and_scrambling_builders():
    def raises(*args):
        raise RuntimeError('boom')
    failed('12.4', raises, 'your builder raised RuntimeError: boom')

    def larger(ks, vs, v, b):
        return answer('12.4')(ks, vs, v + 1, b)
    failed('12.4', larger, 'the record has 15,594')

    def scrambles(ks, vs, v, b):
        params = answer('12.4')(ks, vs, v, b)
        ks[:] = 0
        vs[:] = 0
        return params
    assert run('12.4', scrambles)


# ----------------------------------------------------------------------------- 12.5

def test_12_5_the_books_adder_uses_its_mlp():
    failed('12.5', taotp.build_single_digit_mod_transformer(), 'the MLP must be off')


def test_12_5_a_missing_head_second_layer_and_shift():
    p = copy.deepcopy(answer('12.5'))
    for name in 'QKVP':
        p['layers'][0][name] = p['layers'][0][name][:4]
    failed('12.5', p, 'input [', 'expected', 'of 100 prompts wrong')
    p = copy.deepcopy(answer('12.5'))
    p['layers'].append(copy.deepcopy(p['layers'][0]))
    failed('12.5', p, 'over the budget')
    failed('12.5', with_shift(answer('12.5')), "lnf['beta'] must stay 0")
