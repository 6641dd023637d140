"""Chapter 5 checkers: plausible wrong answers fail and name the input that broke them.

The reference solutions (read from solutions/05_sort.py), the shared garbage and
endless loops are covered once for every chapter by tests/test_checker_contract.py.
"""
import numpy as np

import taotp
from solutions import answer
from taotp.exercises import check
from taotp.exercises.ch05 import COMMA, END, PUZZLES, _check_answers, _sort_inputs, encode_numbers

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
    assert CHECKED == ['5.1', '5.2', '5.4', '5.6', '5.7']
    assert {p.kind for p in PUZZLES if p.id in ('5.3', '5.5')} == {'reflect'}
    assert next(p.kind for p in PUZZLES if p.id == '5.8') == 'train'


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
    assert not result and '1 layer and d_model <= 6; got 2 layers' in result.message
    short = check('5.1', taotp.build_sort_transformer(33, 40))
    assert not short and 'block_size must be at least 64' in short.message


def test_5_2_rejects_the_book_min_at_a_million():
    result = check('5.2', taotp.build_min_transformer(1_000_000, 32))
    assert not result and 'expected 0, got 1' in result.message
    assert 'first failure' in result.message
    small = check('5.2', taotp.build_min_transformer(1000, 32))
    assert not small and 'at least 1,000,000 tokens; got 1,000' in small.message


def test_5_4_rejects_powerpoints_on_a_large_vocabulary():
    result = check('5.4', taotp.build_sort_transformer(1000, 64))
    assert not result and 'input [999, 1, 998, 2, 0]: expected [1, 2, 998, 999]' in result.message
    small = check('5.4', taotp.build_sort_transformer(28, 64))
    assert not small and 'at least 1,000 tokens' in small.message


def test_5_6_rejects_sort_without_repeats():
    result = check('5.6', taotp.build_sort_transformer(16, 24))
    assert not result and 'input [5, 2, 5, 2, 0]: expected [2, 2, 5, 5]' in result.message


def test_5_7_rejects_single_token_sort():
    result = check('5.7', taotp.build_sort_transformer(12, 64))
    assert not result and result.message.startswith('input [7, 10, 7, 0, 10')
    small = check('5.7', taotp.build_sort_transformer(11, 64))
    assert not small and 'at least 12 tokens' in small.message


def test_the_input_generator_agrees_with_a_correct_program():
    # 5.1's inputs and comparison accept the book's Sort inside its own range (n = 28)
    prompts = _sort_inputs(28, np.random.default_rng(0), 20, 27)
    _check_answers(taotp.build_sort_transformer(28, 56), prompts,
                   [sorted(p[:-1]) for p in prompts])
