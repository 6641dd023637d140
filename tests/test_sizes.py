"""Every size has a stated limit: the public builders refuse bad and huge sizes at once.

Each size argument of each public builder (and of the samplers beside them) is fed
0, -1, 10**12, 2.5, None, "7" and NaN.  Every call either builds (where the value is
valid) or raises a TypeError or ValueError whose message starts with the function's
own name, within a second; 10**12 always raises a ValueError that names the limit it
passed (``taotp.params.MAX_SIZE`` or the builder's own, stated in its docstring).
"""
import math
import re
import time

import numpy as np
import pytest

import taotp
from taotp import coupling, encodings, lookup, selective, sort
from taotp.params import MAX_NUMBERS, MAX_SIZE

BAD = {'0': 0, '-1': -1, '10**12': 10 ** 12, '2.5': 2.5, 'None': None, '"7"': '7',
       'NaN': math.nan}
KS, VS = np.array([[1, 2], [3, 1]]), np.array([3, 0])
P3 = np.array([[.7, .2, .1], [.1, .7, .2], [.2, .1, .7]])


def rng():
    return np.random.default_rng(0)


# (function, the size argument it is fed, a call with the value in that argument,
#  the values that are valid there, what the refusal of 10**12 names)
CASES = [
    (taotp.build_hello_world_simpleformer, 'message', lambda x: {'message': x}, {'"7"'}, None),
    (taotp.build_hello_world_transformer, 'message', lambda x: {'message': x}, {'"7"'}, None),
    (taotp.build_untied_transformer, 'vocab_size',
     lambda x: dict(ks=KS, vs=VS, vocab_size=x, block_size=4, prefix_len=2, tok_dims=4),
     set(), 'MAX_SIZE'),
    (taotp.build_untied_transformer, 'block_size',
     lambda x: dict(ks=KS, vs=VS, vocab_size=5, block_size=x, prefix_len=2, tok_dims=4),
     set(), 'MAX_SIZE'),
    (taotp.build_untied_transformer, 'prefix_len',
     lambda x: dict(ks=KS, vs=VS, vocab_size=5, block_size=4, prefix_len=x, tok_dims=4),
     set(), 'must equal the key length 2'),
    (taotp.build_untied_transformer, 'tok_dims',
     lambda x: dict(ks=KS, vs=VS, vocab_size=5, block_size=4, prefix_len=2, tok_dims=x),
     set(), 'MAX_SIZE'),
    (taotp.build_lookup_transformer, 'vocab_size',
     lambda x: dict(ks=KS, vs=VS, vocab_size=x, block_size=4, tok_dims=4,
                    optimization_iters=0), set(), 'MAX_SIZE'),
    (taotp.build_lookup_transformer, 'block_size',
     lambda x: dict(ks=KS, vs=VS, vocab_size=5, block_size=x, tok_dims=4,
                    optimization_iters=0), set(), 'MAX_SIZE'),
    (taotp.build_lookup_transformer, 'tok_dims',
     lambda x: dict(ks=KS, vs=VS, vocab_size=5, block_size=4, tok_dims=x,
                    optimization_iters=0), set(), 'MAX_SIZE'),
    (taotp.build_lookup_transformer, 'optimization_iters',
     lambda x: dict(ks=KS, vs=VS, vocab_size=5, block_size=4, tok_dims=4,
                    optimization_iters=x), {'0'}, 'MAX_OPTIMIZATION_ITERS'),
    (taotp.build_universal_lookup_transformer, 'vocab_size',
     lambda x: dict(ks=KS, vs=VS, vocab_size=x, block_size=4), set(), 'MAX_SIZE'),
    (taotp.build_universal_lookup_transformer, 'block_size',
     lambda x: dict(ks=KS, vs=VS, vocab_size=5, block_size=x), set(), 'MAX_SIZE'),
    (lookup.random_lookup_table, 'n_entries',
     lambda x: dict(n_entries=x, key_len=2, vocab_size=5), set(), 'MAX_SIZE'),
    (lookup.random_lookup_table, 'key_len',
     lambda x: dict(n_entries=3, key_len=x, vocab_size=5), set(), 'MAX_SIZE'),
    (lookup.random_lookup_table, 'vocab_size',
     lambda x: dict(n_entries=3, key_len=2, vocab_size=x), set(), 'MAX_SIZE'),
    (taotp.build_search_transformer, 'vocab_size',
     lambda x: dict(vocab_size=x, block_size=10, prefix_len=3), set(), 'MAX_SIZE'),
    (taotp.build_search_transformer, 'block_size',
     lambda x: dict(vocab_size=10, block_size=x, prefix_len=3), set(), 'MAX_SIZE'),
    (taotp.build_search_transformer, 'prefix_len',
     lambda x: dict(vocab_size=10, block_size=10, prefix_len=x), set(), 'MAX_SIZE'),
    (taotp.random_search_inputs, 'n',
     lambda x: dict(rng=rng(), n=x, vocab_size=10, length=20, prefix_len=2), {'0'},
     'MAX_SIZE'),
    (taotp.random_search_inputs, 'length',
     lambda x: dict(rng=rng(), n=2, vocab_size=10, length=x, prefix_len=2), set(),
     'MAX_SIZE'),
    (taotp.build_min_transformer, 'vocab_size', lambda x: dict(vocab_size=x, block_size=10),
     set(), 'MAX_SIZE'),
    (taotp.build_min_transformer, 'block_size', lambda x: dict(vocab_size=10, block_size=x),
     set(), 'MAX_SIZE'),
    (taotp.build_max_transformer, 'vocab_size', lambda x: dict(vocab_size=x, block_size=10),
     set(), 'MAX_SIZE'),
    (taotp.build_max_transformer, 'block_size', lambda x: dict(vocab_size=10, block_size=x),
     set(), 'MAX_SIZE'),
    (taotp.build_sort_transformer, 'n', lambda x: dict(n=x, block_size=10), set(), 'MAX_SIZE'),
    (taotp.build_sort_transformer, 'block_size', lambda x: dict(n=10, block_size=x), set(),
     'MAX_SIZE'),
    (taotp.build_large_vocab_sort_transformer, 'vocab_size',
     lambda x: dict(vocab_size=x, block_size=10), set(), 'MAX_SIZE'),
    (taotp.build_large_vocab_sort_transformer, 'block_size',
     lambda x: dict(vocab_size=10, block_size=x), set(), 'MAX_SIZE'),
    (sort.build_bits_sort_transformer, 'vocab_size', lambda x: dict(vocab_size=x, block_size=10),
     set(), 'MAX_SIZE'),
    (sort.build_bits_sort_transformer, 'block_size',
     lambda x: dict(vocab_size=100, block_size=x), set(), 'MAX_SIZE'),
    (sort.build_compact_sort_transformer, 'vocab_size',
     lambda x: dict(vocab_size=x, block_size=10), set(), 'MAX_SIZE'),
    (sort.build_compact_sort_transformer, 'block_size',
     lambda x: dict(vocab_size=10, block_size=x), set(), 'MAX_SIZE'),
    (taotp.build_MLP, 'xs', lambda x: dict(xs=x, ys=[1.0]), set(), 'non-empty 1-D'),
    (taotp.build_single_digit_mod_transformer, 'base', lambda x: dict(base=x), set(),
     r'base must be in 2\.\.100'),
    (taotp.build_multi_digit_mod_transformer, 'n_digits', lambda x: dict(n_digits=x), set(),
     'MAX_TABLE_DIGITS'),
    (taotp.build_decimal_addition_transformer, 'n_digits', lambda x: dict(n_digits=x), set(),
     'MAX_TABLE_DIGITS'),
    (taotp.build_attention_only_mod_transformer, 'base', lambda x: dict(base=x), set(),
     r'base must be an int in 2\.\.50'),
    (taotp.build_compact_addition_transformer, 'n_digits', lambda x: dict(n_digits=x), set(),
     'MAX_DIGITS'),
    (taotp.og_embedding, 'block_size', lambda x: dict(block_size=x, d=4), set(), 'MAX_SIZE'),
    (taotp.og_embedding, 'd', lambda x: dict(block_size=4, d=x), set(), 'MAX_SIZE'),
    (taotp.rotation_encoding, 'q', lambda x: dict(q=x, thetas=[0.1]), set(), 'MAX_SIZE'),
    (encodings.reversed_rotation_encoding, 'q', lambda x: dict(q=x, thetas=[0.1]), set(),
     'MAX_SIZE'),
    (encodings.complex_rotation_encoding, 'q', lambda x: dict(q=x, thetas=[0.1]), set(),
     'MAX_SIZE'),
    (taotp.hamming_embedding, 'r', lambda x: dict(r=x), set(), 'MAX_TABLE_BYTES'),
    (encodings.balanced_hamming_embedding, 'r', lambda x: dict(r=x), set(), 'MAX_TABLE_BYTES'),
    (encodings.uniform_rotation_embedding, 'q', lambda x: dict(q=x, d=4), set(), 'MAX_SIZE'),
    (encodings.uniform_rotation_embedding, 'd', lambda x: dict(q=4, d=x), set(), 'MAX_SIZE'),
    (encodings.random_rotation_embedding, 'q', lambda x: dict(q=x, d=4, rng=rng()), set(),
     'MAX_SIZE'),
    (encodings.random_rotation_embedding, 'd', lambda x: dict(q=4, d=x, rng=rng()), set(),
     'MAX_SIZE'),
    (encodings.random_normal_encoding, 'q', lambda x: dict(q=x, d=4, rng=rng()), set(),
     'MAX_SIZE'),
    (encodings.random_sign_encoding, 'd', lambda x: dict(q=4, d=x, rng=rng()), set(),
     'MAX_SIZE'),
    (coupling.build_multi_operand_adder, 'max_digits',
     lambda x: dict(max_digits=x, max_operands=3), set(), 'MAX_COUNT'),
    (coupling.build_multi_operand_adder, 'max_operands',
     lambda x: dict(max_digits=3, max_operands=x), set(), 'MAX_COUNT'),
    (coupling.build_adder_params, 'max_digits', lambda x: dict(max_digits=x, max_operands=3),
     set(), 'MAX_COUNT'),
    (selective.build_selective_induction, 'T', lambda x: dict(P=P3, lags=(1, 2, 3), T=x),
     set(), 'MAX_LENGTH'),
    (selective.book_params, 'T', lambda x: dict(P=P3, lags=(1, 2, 3), T=x), set(),
     'MAX_PORT_LENGTH'),
    (taotp.base_params, 'vocab_size', lambda x: dict(vocab_size=x, block_size=4, d_model=3),
     {'0'}, 'MAX_SIZE'),
    (taotp.base_params, 'block_size', lambda x: dict(vocab_size=4, block_size=x, d_model=3),
     {'0'}, 'MAX_SIZE'),
    (taotp.base_params, 'd_model', lambda x: dict(vocab_size=4, block_size=4, d_model=x),
     {'0'}, 'MAX_SIZE'),
    (taotp.base_layer, 'n_heads', lambda x: dict(n_heads=x, d_model=4, d_ff=4, d_head=4),
     {'0'}, 'MAX_SIZE'),
    (taotp.base_layer, 'd_ff', lambda x: dict(n_heads=1, d_model=4, d_ff=x, d_head=4),
     {'0'}, 'MAX_SIZE'),
    (taotp.random_params, 'vocab_size', lambda x: dict(rng=rng(), vocab_size=x), {'0'},
     'MAX_SIZE'),
    (taotp.random_params, 'n_layers', lambda x: dict(rng=rng(), n_layers=x), {'0'},
     'MAX_SIZE'),
]
IDS = [f'{fn.__name__}-{arg}' for fn, arg, *_ in CASES]


def _where(fn):
    """The name a refusal starts with: the function's own (base_params' for random_params'
    table sizes, which it passes straight on)."""
    return fn.__name__


@pytest.mark.parametrize('fn, arg, kwargs, valid, limit', CASES, ids=IDS)
def test_every_bad_size_is_refused_at_once_with_the_builders_name(fn, arg, kwargs, valid, limit):
    for label, value in BAD.items():
        start = time.process_time()
        try:
            fn(**kwargs(value))
            outcome = None
        except (TypeError, ValueError) as exc:
            outcome = exc
        seconds = time.process_time() - start
        assert seconds < 1, f'{fn.__name__}({arg}={label}) took {seconds:.2f} s of CPU'
        if label in valid:
            assert outcome is None, f'{fn.__name__}({arg}={label}) refused a valid value'
            continue
        assert outcome is not None, f'{fn.__name__}({arg}={label}) was accepted'
        names = (_where(fn), 'base_params') if fn is taotp.random_params else (_where(fn),)
        assert str(outcome).startswith(tuple(f'{n}:' for n in names)), \
            f'{fn.__name__}({arg}={label}): the message does not name the function: {outcome}'
        if label == '10**12' and limit is not None:        # None: not a size (a message)
            assert isinstance(outcome, ValueError), outcome
            assert limit is None or re.search(limit, str(outcome)), \
                f'{fn.__name__}({arg}=10**12) does not name its limit {limit!r}: {outcome}'


def test_the_limits_are_where_the_docstrings_say():
    """Right at a limit builds; one past it is refused (cheap cases only)."""
    assert taotp.params.check_size('f', 'n', MAX_SIZE) == MAX_SIZE
    with pytest.raises(ValueError, match=r'f: n must be at most 1,048,576 '
                                         r'\(taotp.params.MAX_SIZE\); got 1048577'):
        taotp.params.check_size('f', 'n', MAX_SIZE + 1)
    with pytest.raises(ValueError, match=r'base_params: the embeddings would hold '
                                         r'[\d,]+ numbers, more than the limit '
                                         r'taotp.params.MAX_NUMBERS'):
        taotp.base_params(MAX_SIZE, MAX_SIZE, 1024)
    assert MAX_NUMBERS == 1 << 27
    with pytest.raises(ValueError, match='build_hello_world_transformer: message must have at '
                                         'most 1,048,575 characters'):
        taotp.build_hello_world_transformer('x' * MAX_SIZE)
    with pytest.raises(ValueError, match=r'build_MLP: xs must hold at most 349,525 points'):
        taotp.build_MLP(np.arange(MAX_SIZE // 3 + 1.0), np.zeros(MAX_SIZE // 3 + 1))
    with pytest.raises(ValueError, match=r'og_embedding: the encoding \(1,048,576 x 1,048,576\) '
                                         r'would hold'):
        taotp.og_embedding(MAX_SIZE, MAX_SIZE)
    with pytest.raises(ValueError, match=r'build_search_transformer: the program would hold'):
        taotp.build_search_transformer(10, 6000, 5000)
    with pytest.raises(ValueError, match=r'n_digits must be at most 4 '
                                         r'\(taotp.addition.programs.MAX_TABLE_DIGITS\); got 5'):
        taotp.build_decimal_addition_transformer(5)
    with pytest.raises(ValueError, match=r'T must be at most 512 '
                                         r'\(taotp.selective.port.MAX_PORT_LENGTH\); got 513'):
        selective.book_params(P3, (1, 2, 3), 513)


def _public_builders():
    """Every ``build_*`` of the package's face and of its chapters' namespaces."""
    spaces = [taotp] + [getattr(taotp, name) for name in (
        'hello_world', 'lookup', 'search', 'sort', 'addition', 'encodings', 'interpreter',
        'coupling', 'selective')]
    return {getattr(space, name) for space in spaces for name in space.__all__
            if name.startswith('build') and callable(getattr(space, name))}


def test_every_public_builder_is_fed_the_bad_sizes():
    fed = {fn for fn, *_ in CASES}
    missing = sorted(fn.__name__ for fn in _public_builders() - fed)
    assert not missing, f'builders with no row in tests/test_sizes.py CASES: {missing}'


# one small build per builder; what it returns (CONTRIBUTING: "Builders")
GOOD = {
    'build_hello_world_simpleformer': {}, 'build_hello_world_transformer': {},
    'build_untied_transformer': dict(ks=KS, vs=VS, vocab_size=5, block_size=4, prefix_len=2,
                                     tok_dims=4),
    'build_lookup_transformer': dict(ks=KS, vs=VS, vocab_size=5, block_size=4, tok_dims=4,
                                     optimization_iters=0),
    'build_universal_lookup_transformer': dict(ks=KS, vs=VS, vocab_size=5, block_size=4),
    'build_search_transformer': dict(vocab_size=10, block_size=10, prefix_len=3),
    'build_min_transformer': dict(vocab_size=10, block_size=10),
    'build_max_transformer': dict(vocab_size=10, block_size=10),
    'build_sort_transformer': dict(n=10, block_size=10),
    'build_large_vocab_sort_transformer': dict(vocab_size=10, block_size=10),
    'build_bits_sort_transformer': dict(vocab_size=100, block_size=10),
    'build_compact_sort_transformer': dict(vocab_size=10, block_size=10),
    'build_MLP': dict(xs=[0.0, 1.0], ys=[1.0, 2.0]),
    'build_single_digit_mod_transformer': {}, 'build_multi_digit_mod_transformer': {
        'n_digits': 1}, 'build_decimal_addition_transformer': {'n_digits': 1},
    'build_attention_only_mod_transformer': {}, 'build_compact_addition_transformer': {
        'n_digits': 2},
    'build_multi_operand_adder': dict(max_digits=2, max_operands=2),
    'build_adder_params': dict(max_digits=2, max_operands=2),
    'build_selective_induction': dict(P=P3, lags=(1, 2, 3), T=12),
}
NOT_A_PARAMS_DICT = {   # builder -> what it returns instead (and where the params are)
    'build_hello_world_simpleformer': lambda out: taotp.validate_params(out[0]) and out[1],
    'build_hello_world_transformer': lambda out: taotp.validate_params(out[0]) and out[1],
    'build_MLP': lambda out: isinstance(out, taotp.addition.MLPWeights),
    'build_multi_operand_adder': lambda out: taotp.validate_params(out.params),
    'build_selective_induction': lambda out: isinstance(out, selective.DisentangledTransformer),
}


@pytest.mark.parametrize('fn', sorted(_public_builders(), key=lambda f: f.__name__),
                         ids=lambda f: f.__name__)
def test_builders_return_a_params_dict_unless_listed(fn):
    out = fn(**GOOD[fn.__name__])
    if fn.__name__ in NOT_A_PARAMS_DICT:
        assert not isinstance(out, dict) and NOT_A_PARAMS_DICT[fn.__name__](out)
    else:
        assert isinstance(out, dict) and taotp.validate_params(out) is out
