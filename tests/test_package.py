"""Package-level contracts: an explicit face, no matplotlib at import, imports that flow one way.

The layer rules are read from CONTRIBUTING.md by ``tests/layering.py``."""
import doctest
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import taotp

import layering

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / 'taotp'
BOOK_NAMES = ['transformer', 'decode', 'base_params', 'base_layer', 'count_params',
              'count_non0_params', 'layer_norm', 'softmax', 'pos_enc_3d', 'pos_enc_3d_array',
              'padding_block', 'validate_params', 'build_hello_world_transformer',
              'build_lookup_transformer', 'build_search_transformer', 'build_min_transformer',
              'build_max_transformer', 'build_sort_transformer',
              'build_decimal_addition_transformer', 'build_MLP', 'load_program', 'dump_program',
              'og_embedding', 'rotation_encoding', 'distinguishability', 'padding_dimension',
              'random_search_inputs', 'hamming_embedding']


@pytest.mark.parametrize('name', BOOK_NAMES)
def test_book_names_are_at_top_level(name):
    assert callable(getattr(taotp, name))


def test_every_name_in_all_exists_and_nothing_else_is_star_exported():
    for name in taotp.__all__:
        assert hasattr(taotp, name), name
    source = (PACKAGE / '__init__.py').read_text()
    assert 'import *' not in source


def test_puzzle_answers_are_not_importable():
    for name in ('scramble_transformer', 'build_parity_program'):
        assert not hasattr(taotp, name)
        assert not hasattr(taotp.coupling, name)


def test_importing_taotp_loads_no_matplotlib_and_runs_no_magic():
    code = ('import sys, taotp, taotp.model; '
            'print(sorted(m for m in ("matplotlib", "IPython", "ipywidgets") if m in sys.modules))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '[]', out.stdout


def _modules():
    """(dotted name, layer) of every module of the package, from the files."""
    table = layering.read_table()
    for dotted in layering.package_modules():
        layer, _ = layering.unit(table, dotted)
        yield dotted, (layer.name if layer else None)


# ----------------------------------------------------------------------------- layers

def test_the_layer_table_covers_every_module_and_names_only_real_ones():
    """CONTRIBUTING's table is the rule: every module has a row, every row a real module,
    a package written with a slash and a plain module without."""
    table = layering.read_table()
    assert set(table.layers) == {'core', 'figures', 'chapter', 'above', 'extras'}
    tops = {layering.top_name(d) for d in layering.package_modules()}
    assert tops - set(table.owner) == set(), 'modules in no row of the layer table'
    assert set(table.owner) - tops == set(), 'rows naming modules that do not exist'
    for top, layer in table.owner.items():
        is_package = (PACKAGE / top).is_dir()
        assert (top in layer.packages) == is_package, \
            f'`{top}` is {"a package: write `" + top + "/`" if is_package else "a module"}'
    assert table.owner['model'].modules[:4] == ['model', 'params', 'decoding', 'trace']


def test_imports_flow_one_way():
    problems = [p for p in layering.problems() if not p.startswith('import cycle')]
    assert not problems, '\n'.join(problems)


def test_no_import_cycle_at_load_time():
    cycles = [p for p in layering.problems() if p.startswith('import cycle')]
    assert not cycles, '\n'.join(cycles)


DODGES = {
    'importlib.import_module': "import importlib\nimportlib.import_module('taotp.sort')\n",
    '__import__': "def f():\n    return __import__('taotp.addition')\n",
    'relative import_module': "import importlib\nimportlib.import_module('..sort', __package__)\n",
    'relative __import__': "__import__('sort', globals(), None, ['x'], 2)\n",
    'an alias': "from importlib import import_module as load\nload('taotp.sort.minmax')\n",
    'a module alias': "import importlib as il\nil.import_module('taotp.lookup')\n",
    'a computed name': "import importlib\nNAME = 'sort'\nimportlib.import_module('taotp.' + NAME)\n",
    'an f-string': "import importlib\nn = 'sort'\nimportlib.import_module(f'..{n}', __package__)\n",
    'getattr': "import importlib\ngetattr(importlib, 'import_module')('taotp.sort')\n",
    'a stored loader': "import importlib\nload = importlib.import_module\nload('taotp.sort')\n",
    'a static import': "from ..sort import build_sort_transformer\n",
}


@pytest.mark.parametrize('dodge', DODGES)
def test_a_chapter_cannot_import_another_chapter_by_any_route(dodge):
    problems, _ = layering.judge('taotp.search.sneaky', DODGES[dodge])
    assert problems, f'{dodge}: a chapter importing another chapter was not caught'
    assert all('taotp.search.sneaky' in p for p in problems)


def test_dynamic_imports_inside_the_rules_pass():
    """A chapter may load its own figures lazily, the checkers anything."""
    own = "import importlib\nimportlib.import_module('.figures', __name__)\n"
    assert layering.judge('taotp.search', own, is_package=True)[0] == []
    anything = "import importlib\nimportlib.import_module(f'.ch{1:02d}', __package__)\n" \
               "importlib.import_module('taotp.sort')\n"
    assert layering.judge('taotp.exercises.new_checks', anything)[0] == []


def test_the_core_keeps_its_order():
    """engine -> params -> decoding -> trace: an import against the order fails, even one
    inside a function (which Python would let through), so no core cycle can form."""
    late = "def f():\n    from .trace import trace\n    return trace\n"
    problems, _ = layering.judge('taotp.model', late)
    assert problems and 'the core is ordered model -> params -> decoding -> trace' in problems[0]
    assert layering.judge('taotp.params', 'from . import decoding\n')[0]
    assert layering.judge('taotp.trace', 'from .decoding import check_positions\n')[0] == []


def test_a_load_time_cycle_fails_and_a_deferred_import_does_not():
    first = 'from . import second\n'
    cyclic = {'taotp.exercises.first': (first, False),
              'taotp.exercises.second': ('from .first import x\n', False)}
    deferred = dict(cyclic, **{'taotp.exercises.second':
                               ('def f():\n    from .first import x\n', False)})
    table = layering.read_table()
    assert layering.problems(cyclic, table) == [
        'import cycle at load time: taotp.exercises.first -> taotp.exercises.second -> '
        'taotp.exercises.first']
    assert layering.problems(deferred, table) == []


def test_a_new_module_needs_a_row():
    problems, _ = layering.judge('taotp.newthing', 'import numpy\n')
    assert problems == ['taotp.newthing is in no row of the layer table (CONTRIBUTING.md)']
    problems, _ = layering.judge('taotp.sort.helper', 'from ..newthing import x\n')
    assert problems and 'which is in no layer' in problems[0]


# Functions that took ``rng`` positionally before the rule; their call forms keep working.
LEGACY_RNG = {'decode', 'random_params', 'random_search_inputs', 'build_untied_transformer',
              'build_lookup_transformer', 'build_universal_lookup_transformer',
              'random_lookup_table', 'lookup_queries', 'lookup_precision', 'fit_hashes',
              'hash_directions', 'large_vocab_sort_inputs', 'random_pairs', 'random_angles',
              'random_rotation_embedding', 'random_normal_encoding', 'random_sign_encoding',
              'transition_matrix', 'sample_sequence', 'as_rng'}


def _public_functions():
    import inspect
    spaces = [taotp] + [getattr(taotp, name) for name in (
        'hello_world', 'lookup', 'search', 'sort', 'addition', 'encodings', 'interpreter',
        'coupling', 'selective')]
    for space in spaces:
        for name in space.__all__:
            value = getattr(space, name)
            if inspect.isfunction(value):
                yield name, inspect.signature(value)


def test_new_sampling_functions_take_rng_keyword_only():
    """CONTRIBUTING: randomness comes in as ``rng``, keyword-only, in every function written
    since the rule; the older ones (``LEGACY_RNG``) keep their positional form."""
    import inspect
    positional, seen = set(), set()
    for name, signature in _public_functions():
        parameter = signature.parameters.get('rng')
        if parameter is None:
            continue
        seen.add(name)
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            positional.add(name)
    assert positional - LEGACY_RNG == set(), 'take rng keyword-only (after a *)'
    assert LEGACY_RNG - positional == set(), 'no longer legacy: drop them from LEGACY_RNG'
    assert 'train_hello_world' in seen


def test_docstring_examples_run():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    count = 0
    for dotted, layer in _modules():
        if dotted.endswith('__main__') or layer == 'extras':   # tests/test_train.py
            continue
        module = importlib.import_module(dotted)
        for test in finder.find(module, dotted, extraglobs={'taotp': taotp, 'np': taotp.model.np}):
            runner.run(test)
            count += len(test.examples)
    assert count > 0
    assert runner.failures == 0, f'{runner.failures} docstring example(s) failed'
