"""Chapter 5 checkers: plausible wrong answers are named, garbage is reported, never raised."""
import numpy as np
import pytest

import taotp
from taotp.exercises import check
from taotp.exercises.ch05 import COMMA, END, PUZZLES, encode_numbers

CHECKED = [p.id for p in PUZZLES if p.kind == 'checked']


def test_puzzle_list():
    assert [p.id for p in PUZZLES] == [f'5.{i}' for i in range(1, 9)]
    assert CHECKED == ['5.1', '5.2', '5.4', '5.6', '5.7']
    assert {p.kind for p in PUZZLES if p.id in ('5.3', '5.5')} == {'reflect'}
    assert next(p.kind for p in PUZZLES if p.id == '5.8') == 'train'


def test_encode_numbers():
    assert encode_numbers([42, 7, 100]) == [4, 2, COMMA, 7, COMMA, 1, 0, 0, END]
    assert encode_numbers([0]) == [0, END]


# ----------------------------------------------------------------------------- wrong answers

def test_5_1_rejects_the_book_program_too_small_and_at_33():
    small = check('5.1', taotp.build_sort_transformer(28, 64))
    assert not small and 'at least 33 tokens' in small.message and 'got vocab_size 28' in small.message
    book33 = check('5.1', taotp.build_sort_transformer(33, 64))
    assert not book33 and book33.message.startswith('input [') and 'expected [1, 2' in book33.message
    assert book33.counterexample[-1] == 0


def test_5_1_budget():
    wide = taotp.build_sort_transformer(33, 64)
    wide['layers'].append(taotp.base_layer(1, 6, 0, 6))
    result = check('5.1', wide)
    assert not result and '1 layer and d_model <= 6; got 2 layers' in result.message
    short = check('5.1', taotp.build_sort_transformer(33, 40))
    assert not short and 'block_size must be at least 64' in short.message


def test_5_2_rejects_the_book_min_at_a_million():
    result = check('5.2', taotp.build_min_transformer(1_000_000, 32))
    assert not result and 'expected 0, got 1' in result.message and 'first failure' in result.message
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


def test_the_book_sort_passes_its_own_range_as_a_sanity_check():
    # 5.1's input generator and comparison agree with a correct program on n = 28 inputs
    from taotp.exercises.ch05 import _check_by_length, _sort_inputs
    rng = np.random.default_rng(0)
    prompts = _sort_inputs(28, rng, 20, 27)
    _check_by_length(taotp.build_sort_transformer(28, 56), prompts,
                     [sorted(p[:-1]) for p in prompts], 'input')


# ----------------------------------------------------------------------------- garbage

def _nan_program():
    p = taotp.build_sort_transformer(33, 64)
    p['tok_emb'] = p['tok_emb'].copy()
    p['tok_emb'][3, 1] = np.nan
    return p


def _bad_shape_program():
    p = taotp.build_sort_transformer(33, 64)
    p['layers'][0]['Q'] = np.zeros((1, 5, 6))
    return p


def _raising():
    raise RuntimeError('boom')


@pytest.mark.parametrize('puzzle', CHECKED)
@pytest.mark.parametrize('answer, words', [
    (None, 'got None'),
    ('params', 'expected a params dict'),
    ({}, "missing key 'tok_emb'"),
    (_nan_program, 'non-finite'),
    (_bad_shape_program, "layers[0]['Q'] has shape (1, 5, 6)"),
    (lambda: {'tok_emb': 1, 'pos_emb': 2, 'out_emb': 3, 'layers': 4, 'lnf': 5}, 'must be a NumPy array'),
    (_raising, 'expected a params dict'),
], ids=['none', 'string', 'empty', 'nan', 'bad-shape', 'scalars', 'function'])
def test_garbage_is_reported_not_raised(puzzle, answer, words):
    if callable(answer) and answer is not _raising:
        answer = answer()
    result = check(puzzle, answer)
    assert not result
    assert words in result.message, result.message


@pytest.mark.parametrize('puzzle', CHECKED)
def test_a_program_that_emits_out_of_range_tokens_is_not_a_crash(puzzle):
    # a 1-token vocabulary program: valid params, but far too small for every puzzle
    p = taotp.base_params(1, 64, 3)
    result = check(puzzle, p)
    assert not result
    assert 'got vocab_size 1' in result.message or 'got 1' in result.message
