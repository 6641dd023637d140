"""Chapter 3 checkers: plausible wrong answers fail and name the input; messages are pinned.

The contract every checker keeps (the reference from solutions/03_lookup_table.py passes,
shared garbage and ``EXTRA_GARBAGE`` below are reported, loops are stopped) is tested once
for all chapters in tests/test_checker_contract.py.
"""
import numpy as np
import pytest

import taotp
from solutions import answer
from taotp.exercises import registry
from taotp.exercises.ch03 import PUZZLES, additive_separable, check_3_2, check_3_6, check_3_7, \
    check_3_11


def tied(ks, vs, vocab_size, block_size):
    """The 3.7 reference (the PreLN tied builder)."""
    return answer('3.7')(ks, vs, vocab_size, block_size)


def with_nan(ks, vs, vocab_size, block_size, *rest):
    params = tied(ks, vs, vocab_size, block_size)
    params['tok_emb'] = params['tok_emb'].copy()
    params['tok_emb'][0, 0] = np.nan
    return params


def half_built(*args):
    return {'tok_emb': np.zeros((3, 3))}


def wrong_vocab(ks, vs, vocab_size, block_size, *rest):
    return tied(np.array([[0]]), np.array([0]), 3, block_size)


GARBAGE_3_11 = {
    'xor as a word': ('xor', 'got str'),
    'keys only': ({'ks': [[0, 0]]}, "got ['ks']"),
    'text keys': ({'ks': 'ab', 'vs': [0], 'smallest': 4}, "answer['ks'] must be numeric"),
    'flat keys': ({'ks': [0, 1], 'vs': [0, 1], 'smallest': 4},
                  'must have shape (n_entries, key_len)'),
    'too few values': ({'ks': [[0, 0], [1, 1]], 'vs': [0], 'smallest': 4},
                       "answer['vs'] has shape (1,)"),
    'fractional ids': ({'ks': [[0.5, 0]], 'vs': [0], 'smallest': 4}, 'must hold integers'),
    'NaN ids': ({'ks': [[np.nan, 0]], 'vs': [0], 'smallest': 4}, 'NaN'),
    'repeated keys': ({'ks': [[0, 0], [0, 0]], 'vs': [0, 1], 'smallest': 4},
                      'keys must be distinct'),
    'negative ids': ({'ks': [[-1, 0]], 'vs': [0], 'smallest': 4}, 'must be >= 0'),
    'a huge vocabulary': ({'ks': [[0, 99]], 'vs': [500], 'smallest': 4}, 'too large to check'),
    'smallest as a word': ({'ks': [[0, 0], [0, 1], [1, 0], [1, 1]], 'vs': [0, 1, 1, 0],
                            'smallest': 'four'}, "answer['smallest'] must be an int"),
}
GARBAGE_BUILDERS = {
    'a builder returning a half-built dict': (half_built, 'missing'),
    'a builder returning NaN weights': (with_nan, 'non-finite'),
    'a builder with the wrong vocabulary': (wrong_vocab, 'expected vocab_size = '),
}
EXTRA_GARBAGE = {
    '3.2': {label: value for label, (value, _) in GARBAGE_BUILDERS.items()},
    '3.7': {label: value for label, (value, _) in GARBAGE_BUILDERS.items()},
    '3.11': {label: value for label, (value, _) in GARBAGE_3_11.items()},
}


def test_catalogue():
    ids = [p.id for p in PUZZLES]
    assert ids == [f'3.{i}' for i in range(1, 12)]
    kinds = {p.id: p.kind for p in PUZZLES}
    assert [i for i, k in kinds.items() if k == 'checked'] == ['3.2', '3.6', '3.7', '3.11']
    assert kinds['3.1'] == 'train'
    assert all(registry()[i].kind == kinds[i] for i in ids)


# ----------------------------------------------------------------------------- wrong answers

def test_3_2_narrow_untied_fails_naming_an_input():
    narrow = lambda ks, vs, V, B, l: taotp.build_untied_transformer(ks, vs, V, B, l, 4)
    result = check_3_2(narrow)
    assert not result
    assert '50 entries, keys of 3, vocab 50' in result.message
    assert 'e.g. input [' in result.message and 'expected' in result.message


def test_3_2_two_layers_fail():
    def two(ks, vs, V, B, l):
        params = answer('3.2')(ks, vs, V, B, l)
        params['layers'].append(taotp.base_layer(1, params['tok_emb'].shape[1], 0, 2))
        return params
    result = check_3_2(two)
    assert not result and 'one layer; your program has 2' in result.message


def test_3_6_the_books_own_builder_is_no_improvement():
    result = check_3_6(taotp.build_untied_transformer)
    assert not result
    assert "expected more than the book's" in result.message and '1000 entries' in result.message


def test_3_7_without_cleanup_fails_under_postln():
    def no_cleanup(ks, vs, vocab_size, block_size):
        params = tied(ks, vs, vocab_size, block_size)
        params['layers'][0]['P'][0] += np.eye(params['layers'][0]['P'].shape[1])
        return params
    result = check_3_7(no_cleanup)
    assert not result
    assert 'PostLN forward' in result.message and 'input [' in result.message


def test_3_11_separable_table_fails():
    result = check_3_11({'ks': [[0, 0], [0, 1], [1, 0]], 'vs': [0, 1, 1], 'smallest': 4})
    assert not result
    assert '[[0, 0], [0, 1], [1, 0]] -> [0, 1, 1]' in result.message
    assert 'can hold this table' in result.message


def test_3_11_wrong_smallest_fails():
    result = check_3_11({**answer('3.11'), 'smallest': 3})
    assert not result and 'smallest number of entries is not 3' in result.message


def test_additive_separable_helper():
    xor = answer('3.11')
    assert not additive_separable(xor['ks'], xor['vs'], 2)
    assert additive_separable([[0, 1], [1, 0], [1, 1]], [1, 0, 1], 2)
    # XOR embedded in a bigger vocabulary and a longer key is still impossible
    assert not additive_separable([[5, 0, 0], [5, 0, 1], [5, 1, 0], [5, 1, 1]], [2, 3, 3, 2], 6)


def test_tied_builder_really_fails_on_xor():
    """The LP verdict matches the construction: even very wide, XOR is not learned."""
    ks, vs = np.array(answer('3.11')['ks']), np.array(answer('3.11')['vs'])
    params = taotp.build_lookup_transformer(ks, vs, 2, 2, 30, optimization_iters=2000)
    assert taotp.lookup.lookup_precision(params, ks, vs) <= 0.75


# ----------------------------------------------------------------------------- messages

@pytest.mark.parametrize('check', [check_3_2, check_3_7], ids=['3.2', '3.7'])
@pytest.mark.parametrize('label', GARBAGE_BUILDERS)
def test_builder_garbage_messages(check, label):
    build, words = GARBAGE_BUILDERS[label]
    result = check(build)
    assert not result and words in result.message, result.message


@pytest.mark.parametrize('label', GARBAGE_3_11)
def test_3_11_garbage_messages(label):
    value, words = GARBAGE_3_11[label]
    result = check_3_11(value)
    assert not result and words in result.message, result.message
