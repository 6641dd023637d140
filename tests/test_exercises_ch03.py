"""Chapter 3 checkers: what each one calls solved, and the answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 3.1 | a trained (or any) program answers the seeded table behind 1,100 random and 1,100 key-cut prefixes drawn from a hash of the answer, >= 99 % each; a greedy prefix search is reported, not judged; checker in taotp.exercises.training, tested in test_training_puzzles.py | untrained weights; a program of the wrong vocabulary |
| 3.3, 3.4, 3.5, 3.8, 3.9, 3.10 | no checker (proofs, experiments, questions; worked answers in the solutions notebook) | - |
| 3.2 | `build(ks, vs, V, B, l)` on 5 seeded tables (keys of 1 to 6 tokens, vocabularies 30 to 100, one of 64): one layer (`guard.budget`), at least 99 % of the keys right behind random prefixes of every length 0 to 6 and behind prefixes cut from other keys, and concatenation: the directions in which two key positions move the last position's stream are orthogonal (largest cosine <= 0.1); no options | `threshold=0.0` with a 2 %-accurate builder (passed before, marked relaxed; now refused); the book's hash builder at tok_dims 100 (passed before: 100 % right, but a hash); random slots of 32 dimensions (the old reference; passed before, 91.7 % on a new table); a narrow untied hash; two layers; a half-built dict, NaN weights, the wrong vocabulary |
| 3.6 | a builder with the book's arguments that keeps the book's token embeddings and hash layer (the same rng draws, 1 layer, 5 heads, d_model 33, no MLP: `guard.budget` and a comparison with the book's program for the same seed) and beats the book's out_emb by 2 points (mean of 3 seeds, 1,000 entries); no options | the book's builder at twice the token width (passed before); `gain=-1` (passed before, marked relaxed; now refused); the book's builder with a lucky seed of its own (passed before: +2.5 points without any idea); an MLP added (passed before); the book's own builder |
| 3.7 | `build(ks, vs, V, B)` on 4 seeded tables (keys of 1 to 5 tokens): every key right under PostLN behind random prefixes of every length 0 to 6 and behind prefixes cut from other keys; no options | the untied book builder (built for PreLN); a program without the cleanup; `seconds=` (now refused); garbage builders |
| 3.11 | a table of distinct keys that no additive score sum_p A_p[v, k_p] separates (an LP, scipy), and `smallest` = 4 as a plain int; failure messages do not give the number | an int subclass whose != says equal (passed before); smallest 3 and 5 (the message gave 4 away before); a separable table; garbage tables |

Not preventable by a deterministic checker: a builder that recognises the checker's seeded
tables and returns hand-made programs for them.

The contract every checker keeps (the reference from solutions/03_lookup_table.py passes,
shared garbage and ``EXTRA_GARBAGE`` below are reported, loops are stopped) is tested once
for all chapters in tests/test_checker_contract.py.
"""
import numpy as np
import pytest

import taotp
from solutions import answer
from taotp.exercises import check, registry
from taotp.exercises.ch03 import PUZZLES, SPEC_3_6, TABLES_3_2, _tables, additive_separable, \
    check_3_2, check_3_6, check_3_7, check_3_11, key_position_overlap


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
                            'smallest': 'four'}, "answer['smallest'] must be a plain int"),
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


@pytest.fixture(autouse=True, scope='module')
def solutions_read_first():
    """Read the solutions notebook before any check runs (not inside a builder's time limit)."""
    answer('3.2')


def test_catalogue():
    ids = [p.id for p in PUZZLES]
    assert ids == [f'3.{i}' for i in range(1, 12)]
    kinds = {p.id: p.kind for p in PUZZLES}
    assert [i for i, k in kinds.items() if k == 'checked'] == ['3.1', '3.2', '3.6', '3.7', '3.11']
    assert all(registry()[i].kind == kinds[i] for i in ids)


# ----------------------------------------------------------------------------- 3.2

def random_slots(ks, vs, vocab_size, block_size, prefix_len, width=32):
    """Concatenation with random 32-dimensional slot contents (an earlier reference)."""
    L = taotp.Layout([(f'slot{p}', width) for p in range(prefix_len)] + [('pos', 3)])
    params = taotp.base_params(vocab_size, block_size, L.d_model)
    params['pos_emb'][:, L['pos']] = taotp.pos_enc_3d_array(block_size)
    rng = np.random.default_rng(0)
    params['tok_emb'][:, L['slot0']] = taotp.layer_norm(rng.normal(size=(vocab_size, width)))
    layer = taotp.base_layer(prefix_len, L.d_model, 0, 3)
    layer['V'] = np.zeros((prefix_len, L.d_model, width))
    layer['P'] = np.zeros((prefix_len, L.d_model, width))
    for h in range(1, prefix_len):
        layer['Q'][h, L['pos']] = taotp.blocks.harden(taotp.shift_matrix(-h, block_size))
        layer['K'][h, L['pos']] = np.eye(3)
        layer['V'][h, L['slot0']] = layer['P'][h, L[f'slot{h}']] = np.eye(width)
    params['layers'].append(layer)
    final = taotp.layer_norm(taotp.trace(ks, params).final[:, -1])
    final[:, L['pos']] = 0
    params['out_emb'] = np.zeros((vocab_size, L.d_model))
    np.add.at(params['out_emb'], vs, final)
    return params


def two_layers(ks, vs, V, B, l):
    params = answer('3.2')(ks, vs, V, B, l)
    params['layers'].append(taotp.base_layer(1, params['tok_emb'].shape[1], 0, 2))
    return params


def two_percent(ks, vs, V, B, l):
    """Right on the first key of each table only."""
    params = answer('3.2')(ks[:1], vs[:1], V, B, l)
    return params


CHEATS_3_2 = {
    'the book\'s hash at tok_dims 100':
        (lambda: lambda ks, vs, V, B, l: taotp.build_untied_transformer(ks, vs, V, B, l, 100),
         'a hash sums the key positions into the same dimensions'),
    'random slots of 32 dimensions': (lambda: random_slots,
                                      '60 entries, keys of 2, vocab 64, every key'),
    'a narrow hash': (lambda: lambda ks, vs, V, B, l: taotp.build_untied_transformer(
        ks, vs, V, B, l, 4), 'e.g. behind a random 0-token prefix, input ['),
    'two layers': (lambda: two_layers, '2 layers; at most 1 allowed'),
}


@pytest.mark.parametrize('label', CHEATS_3_2)
def test_3_2_cheats_fail(label):
    make, words = CHEATS_3_2[label]
    result = check('3.2', make())
    assert not result, label
    assert words in result.message, result.message


def test_3_2_accepts_no_threshold():
    result = check('3.2', two_percent, threshold=0.0)
    assert not result and "unexpected keyword argument 'threshold'" in result.message
    assert not check('3.2', two_percent)


def test_key_positions_of_the_reference_are_separate_and_a_hash_shares_them():
    name, ks, vs, vocab, block = _tables(TABLES_3_2)[1]
    prefix = np.zeros(block - ks.shape[1], dtype=int)
    ours = answer('3.2')(ks, vs, vocab, block, ks.shape[1])
    assert key_position_overlap(ours, ks[0], prefix, vocab)[0] < 1e-9
    for width in (30, 100):
        book = taotp.build_untied_transformer(ks, vs, vocab, block, ks.shape[1], width)
        assert key_position_overlap(book, ks[0], prefix, vocab)[0] > 0.25


# ----------------------------------------------------------------------------- 3.6

def book_at(tok_dims=None, seed=None):
    def build(ks, vs, vocab, block, key_len, dims, rng=None):
        return taotp.build_untied_transformer(ks, vs, vocab, block, key_len, tok_dims or dims,
                                              rng=seed if seed is not None else rng)
    return build


def with_mlp(ks, vs, vocab, block, key_len, tok_dims, rng=None):
    params = answer('3.6')(ks, vs, vocab, block, key_len, tok_dims, rng)
    layer = params['layers'][0]
    d = params['tok_emb'].shape[1]
    layer.update(M1=np.zeros((d, 4)), b1=np.zeros(4), M2=np.zeros((4, d)))
    return params


CHEATS_3_6 = {
    'the book\'s builder at twice the width': (lambda: book_at(tok_dims=60),
                                               '63 d_model; at most 33 allowed'),
    'the book\'s builder with a lucky seed of its own': (lambda: book_at(seed=103),
                                                         'your tok_emb differs from the book'),
    'an MLP added': (lambda: with_mlp, 'MLP width (d_ff) in a layer; at most 0 allowed'),
    'the book\'s own builder': (lambda: taotp.build_untied_transformer,
                                "expected at least the book's"),
}


@pytest.mark.parametrize('label', CHEATS_3_6)
def test_3_6_cheats_fail(label):
    make, words = CHEATS_3_6[label]
    result = check('3.6', make())
    assert not result, label
    assert words in result.message, result.message


def test_3_6_accepts_no_gain():
    result = check('3.6', taotp.build_untied_transformer, gain=-1)
    assert not result and "unexpected keyword argument 'gain'" in result.message


def test_3_6_spec_is_the_books_experiment():
    assert SPEC_3_6['tok_dims'] + 3 == 33 and SPEC_3_6['n'] == SPEC_3_6['vocab'] == 1000


# ----------------------------------------------------------------------------- 3.7

def untied_for_preln(ks, vs, vocab_size, block_size):
    return taotp.build_untied_transformer(ks, vs, vocab_size, block_size, ks.shape[1], 30)


def without_cleanup(ks, vs, vocab_size, block_size):
    params = tied(ks, vs, vocab_size, block_size)
    params['layers'][0]['P'][0] += np.eye(params['layers'][0]['P'].shape[1])
    return params


CHEATS_3_7 = {
    'the untied builder, made for PreLN': (lambda: untied_for_preln, 'PostLN forward'),
    'no cleanup': (lambda: without_cleanup, 'PostLN forward, a key behind'),
}


@pytest.mark.parametrize('label', CHEATS_3_7)
def test_3_7_cheats_fail(label):
    make, words = CHEATS_3_7[label]
    result = check('3.7', make())
    assert not result, label
    assert words in result.message and 'input [' in result.message, result.message


def test_3_7_accepts_no_options():
    result = check('3.7', tied, seconds=1000)
    assert not result and "unexpected keyword argument 'seconds'" in result.message


# ----------------------------------------------------------------------------- 3.11

class SaysFour(int):
    def __ne__(self, other):
        return False

    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def test_3_11_an_int_that_pretends_fails():
    result = check_3_11({**answer('3.11'), 'smallest': SaysFour(7)})
    assert not result and 'must be a plain int' in result.message


@pytest.mark.parametrize('smallest', [1, 3, 5, 6])
def test_3_11_wrong_smallest_fails_without_giving_the_answer(smallest):
    result = check_3_11({**answer('3.11'), 'smallest': smallest})
    assert not result and f'{smallest}' in result.message
    assert '4' not in result.message.replace(str(answer('3.11')['ks']), ''), result.message


def test_3_11_separable_table_fails():
    result = check_3_11({'ks': [[0, 0], [0, 1], [1, 0]], 'vs': [0, 1, 1], 'smallest': 4})
    assert not result
    assert '[[0, 0], [0, 1], [1, 0]] -> [0, 1, 1]' in result.message
    assert 'can hold this table' in result.message


def test_3_11_accepts_no_options():
    result = check('3.11', answer('3.11'), max_vars=10 ** 9)
    assert not result and "unexpected keyword argument 'max_vars'" in result.message


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


def test_3_6_builder_garbage_is_reported():
    assert 'missing' in check_3_6(half_built).message
