"""Chapter 3 checkers: references pass, plausible wrong answers fail naming the input,
garbage is reported and never raised."""
import numpy as np
import pytest

import taotp
from taotp.exercises import registry
from taotp.exercises.ch03 import (PUZZLES, additive_separable, check_3_2, check_3_6, check_3_7,
                                  check_3_11)


def build_concat(ks, vs, vocab_size, block_size, prefix_len, width=32, seed=0):
    """The 3.2 reference: head h copies the token h places back into slot h."""
    rng = np.random.default_rng(seed)
    L = taotp.Layout([(f'slot{p}', width) for p in range(prefix_len)] + [('pos', 3)])
    d = L.d_model
    params = taotp.base_params(vocab_size, block_size, d)
    params['pos_emb'][:, L['pos']] = taotp.pos_enc_3d_array(block_size)
    params['tok_emb'][:, L['slot0']] = taotp.layer_norm(rng.normal(size=(vocab_size, width)))
    layer = taotp.base_layer(prefix_len, d, 0, d)
    for h in range(1, prefix_len):
        layer['Q'][h, L['pos'], :3] = taotp.blocks.harden(taotp.shift_matrix(-h, block_size))
        layer['K'][h, L['pos'], :3] = np.eye(3)
        layer['V'][h, L['slot0'], :width] = np.eye(width)
        layer['P'][h, L[f'slot{h}'], :width] = np.eye(width)
    params['layers'].append(layer)
    record = []
    taotp.model.forward(np.asarray(ks), record=record, **params)
    final = taotp.layer_norm(record[-1]['final'][:, -1])
    final[:, L['pos']] = 0
    params['out_emb'] = np.zeros((vocab_size, d))
    np.add.at(params['out_emb'], vs, final)
    return params


def untied_normed(ks, vs, vocab, block, key_len, tok_dims, rng=None):
    params = taotp.build_untied_transformer(ks, vs, vocab, block, key_len, tok_dims, rng=rng)
    params['out_emb'] = taotp.layer_norm(params['out_emb'])
    return params


def tied(ks, vs, vocab_size, block_size):
    return taotp.build_lookup_transformer(ks, vs, vocab_size, block_size, tok_dims=10)


def no_cleanup(ks, vs, vocab_size, block_size):
    params = tied(ks, vs, vocab_size, block_size)
    params['layers'][0]['P'][0] += np.eye(params['layers'][0]['P'].shape[1])
    return params


def raises(*args, **kwargs):
    raise RuntimeError('not today')


def loops(*args, **kwargs):
    while True:
        pass


def with_nan(*args, **kwargs):
    params = tied(*args[:4])
    params['tok_emb'] = params['tok_emb'].copy()
    params['tok_emb'][0, 0] = np.nan
    return params


XOR = {'ks': [[0, 0], [0, 1], [1, 0], [1, 1]], 'vs': [0, 1, 1, 0], 'smallest': 4}


def test_catalogue():
    ids = [p.id for p in PUZZLES]
    assert ids == [f'3.{i}' for i in range(1, 12)]
    kinds = {p.id: p.kind for p in PUZZLES}
    assert [i for i, k in kinds.items() if k == 'checked'] == ['3.2', '3.6', '3.7', '3.11']
    assert kinds['3.1'] == 'train'
    assert all(registry()[i].kind == kinds[i] for i in ids)


# ----------------------------------------------------------------------------- references

def test_references_pass():
    assert check_3_2(build_concat)
    assert check_3_7(tied)            # the PreLN builder already works under PostLN
    assert check_3_11(XOR)


def test_reference_3_6_passes():
    assert check_3_6(untied_normed)


# ----------------------------------------------------------------------------- wrong answers

def test_3_2_narrow_untied_fails_naming_an_input():
    narrow = lambda ks, vs, V, B, l: taotp.build_untied_transformer(ks, vs, V, B, l, 4)
    result = check_3_2(narrow)
    assert not result
    assert '50 entries, keys of 3, vocab 50' in result.message
    assert 'e.g. input [' in result.message and 'expected' in result.message


def test_3_2_two_layers_fail():
    def two(ks, vs, V, B, l):
        params = build_concat(ks, vs, V, B, l)
        params['layers'].append(taotp.base_layer(1, params['tok_emb'].shape[1], 0, 2))
        return params
    result = check_3_2(two)
    assert not result and 'one layer; your program has 2' in result.message


def test_3_6_the_books_own_builder_is_no_improvement():
    result = check_3_6(taotp.build_untied_transformer)
    assert not result
    assert "expected more than the book's" in result.message and '1000 entries' in result.message


def test_3_7_without_cleanup_fails_under_postln():
    result = check_3_7(no_cleanup)
    assert not result
    assert 'PostLN forward' in result.message and 'input [' in result.message


def test_3_11_separable_table_fails():
    result = check_3_11({'ks': [[0, 0], [0, 1], [1, 0]], 'vs': [0, 1, 1], 'smallest': 4})
    assert not result
    assert '[[0, 0], [0, 1], [1, 0]] -> [0, 1, 1]' in result.message
    assert 'can hold this table' in result.message


def test_3_11_wrong_smallest_fails():
    result = check_3_11({**XOR, 'smallest': 3})
    assert not result and 'smallest number of entries is not 3' in result.message


def test_additive_separable_helper():
    assert not additive_separable(XOR['ks'], XOR['vs'], 2)
    assert additive_separable([[0, 1], [1, 0], [1, 1]], [1, 0, 1], 2)
    # XOR embedded in a bigger vocabulary and a longer key is still impossible
    assert not additive_separable([[5, 0, 0], [5, 0, 1], [5, 1, 0], [5, 1, 1]], [2, 3, 3, 2], 6)


def test_tied_builder_really_fails_on_xor():
    """The LP verdict matches the construction: even very wide, XOR is not learned."""
    ks, vs = np.array(XOR['ks']), np.array(XOR['vs'])
    params = taotp.build_lookup_transformer(ks, vs, 2, 2, 30, optimization_iters=2000)
    assert taotp.lookup_precision(params, ks, vs) <= 0.75


# ----------------------------------------------------------------------------- garbage

@pytest.mark.parametrize('check', [check_3_2, check_3_7])
@pytest.mark.parametrize('answer, words', [
    (None, 'expected a function; got NoneType'),
    ('build', 'expected a function; got str'),
    (raises, 'raised RuntimeError: not today'),
    (lambda *a: 'params', 'expected a params dict'),
    (lambda *a: {'tok_emb': np.zeros((3, 3))}, 'missing key'),
])
def test_builder_garbage_is_reported(check, answer, words):
    result = check(answer)
    assert not result and words in result.message


def test_nan_params_reported():
    result = check_3_7(with_nan)
    assert not result and 'non-finite' in result.message


def test_wrong_vocab_reported():
    result = check_3_7(lambda ks, vs, V, B: tied(np.array([[0]]), np.array([0]), 3, B))
    assert not result and 'expected vocab_size = 100' in result.message


def test_loop_is_reported():
    result = check_3_2(loops, seconds=1)
    assert not result and 'took longer than 1 s' in result.message


def test_3_6_garbage_is_reported():
    assert 'expected a function' in check_3_6(None).message
    assert 'raised RuntimeError' in check_3_6(raises).message


@pytest.mark.parametrize('answer, words', [
    (None, "expected a dict with keys 'ks', 'vs' and 'smallest'; got NoneType"),
    ('xor', 'got str'),
    ({'ks': [[0, 0]]}, "got ['ks']"),
    ({'ks': 'ab', 'vs': [0], 'smallest': 4}, "answer['ks'] must be numeric"),
    ({'ks': [0, 1], 'vs': [0, 1], 'smallest': 4}, 'must have shape (n_entries, key_len)'),
    ({'ks': [[0, 0], [1, 1]], 'vs': [0], 'smallest': 4}, "answer['vs'] has shape (1,)"),
    ({'ks': [[0.5, 0]], 'vs': [0], 'smallest': 4}, 'must hold integers'),
    ({'ks': [[np.nan, 0]], 'vs': [0], 'smallest': 4}, 'NaN'),
    ({'ks': [[0, 0], [0, 0]], 'vs': [0, 1], 'smallest': 4}, 'keys must be distinct'),
    ({'ks': [[-1, 0]], 'vs': [0], 'smallest': 4}, 'must be >= 0'),
    ({'ks': [[0, 99]], 'vs': [500], 'smallest': 4}, 'too large to check'),
    ({**XOR, 'smallest': 'four'}, "answer['smallest'] must be an int"),
])
def test_3_11_garbage_is_reported(answer, words):
    result = check_3_11(answer)
    assert not result and words in result.message
