"""Package-level contracts: the book's names at top level, no silent shadowing."""
import doctest
import importlib

import pytest

import taotp

CHAPTER_MODULES = ['hello_world', 'lookup', 'search', 'sort', 'addition', 'encodings',
                   'interpreter']
BOOK_NAMES = ['transformer', 'decode', 'base_params', 'base_layer', 'count_params',
              'count_non0_params', 'layer_norm', 'softmax', 'pos_enc_3d', 'pos_enc_3d_array',
              'padding_block', 'validate_params', 'scramble_transformer']


@pytest.mark.parametrize('name', BOOK_NAMES)
def test_book_names_are_at_top_level(name):
    assert callable(getattr(taotp, name))


def test_chapter_modules_do_not_shadow_each_other_or_the_core():
    core = {n for n in dir(taotp) if not n.startswith('_')} - {
        n for m in CHAPTER_MODULES for n in importlib.import_module(f'taotp.{m}').__all__}
    seen = {}
    for name in CHAPTER_MODULES:
        module = importlib.import_module(f'taotp.{name}')
        for symbol in module.__all__:
            assert symbol not in core, f'taotp.{name} exports {symbol!r}, a core name'
            assert symbol not in seen, f'{symbol!r} is exported by taotp.{seen[symbol]} and taotp.{name}'
            seen[symbol] = name
            assert getattr(taotp, symbol) is getattr(module, symbol)


def test_docstring_examples_run():
    for module in (taotp.residual,):
        failures, _ = doctest.testmod(module)
        assert failures == 0
