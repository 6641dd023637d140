"""Package-level contracts: an explicit face, no matplotlib at import, imports that flow one way."""
import ast
import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import taotp

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / 'taotp'
CORE = {'model', 'params', 'decoding', 'trace', 'reference', 'residual', 'blocks', 'verify',
        'corpus'}
FIGURES = {'plot', 'widgets'}
CHAPTERS = {'hello_world', 'lookup', 'search', 'sort', 'addition', 'encodings', 'interpreter',
            'coupling', 'selective'}
ABOVE_CHAPTERS = {'programs', 'trained', 'exercises', '__main__', '__init__'}
EXTRAS = {'train', 'export'}   # need the training extra (PyTorch): import the core only
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
    """(dotted name, path) of every module of the package."""
    for info in pkgutil.walk_packages([str(PACKAGE)], 'taotp.'):
        module = importlib.util.find_spec(info.name)
        yield info.name, Path(module.origin)


def _group(dotted):
    """The layer a module belongs to: core, figures, a chapter, or above the chapters."""
    top = dotted.split('.')[1] if dotted.count('.') else '__init__'
    if top in EXTRAS:
        return 'extras'
    for group in (CORE, FIGURES, CHAPTERS, ABOVE_CHAPTERS):
        if top in group:
            return top if group is CHAPTERS else {id(CORE): 'core', id(FIGURES): 'figures',
                                                  id(ABOVE_CHAPTERS): 'above'}[id(group)]
    raise AssertionError(f'{dotted} is in no layer; add it to tests/test_package.py')


def _imports(dotted, path):
    """taotp modules imported by a module (relative imports resolved), top level and inside functions."""
    tree = ast.parse(path.read_text())
    package = dotted if path.name == '__init__.py' else dotted.rsplit('.', 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith('taotp')}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.')
                base = base[:len(base) - node.level + 1]
                stem = '.'.join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ''
            if stem.startswith('taotp'):
                submodules = {f'{stem}.{a.name}' for a in node.names
                              if _is_module(f'{stem}.{a.name}')}
                found |= submodules
                if node.module or not submodules:    # `from .. import plot` imports taotp.plot
                    found.add(stem)
    return found


def _is_module(dotted):
    try:
        return importlib.util.find_spec(dotted) is not None
    except ModuleNotFoundError:     # a name imported from a module, not a submodule
        return False


def _allowed(src, dst):
    """Imports flow one way: core <- figures <- chapters <- catalogue/exercises/CLI."""
    if src == dst or dst == '__init__' and src == 'above':
        return True
    rank = {'core': 0, 'figures': 1}
    if src == 'extras':
        return dst == 'core'
    if src in rank:
        return dst in rank and rank[dst] <= rank[src]
    if src in CHAPTERS:                 # a chapter: the core, figures, never another chapter
        return dst in rank
    return dst != 'above' or src == 'above'


def test_imports_flow_one_way():
    problems = []
    for dotted, path in _modules():
        src = _group(dotted)
        for target in _imports(dotted, path):
            if target == 'taotp':
                if src != 'above':
                    problems.append(f'{dotted} imports the package root')
                continue
            dst = _group(target)
            if not _allowed(src, dst):
                problems.append(f'{dotted} ({src}) imports {target} ({dst})')
    assert not problems, '\n'.join(problems)


def test_docstring_examples_run():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    count = 0
    for dotted, _ in _modules():
        if dotted.endswith('__main__') or _group(dotted) == 'extras':   # tests/test_train.py
            continue
        module = importlib.import_module(dotted)
        for test in finder.find(module, dotted, extraglobs={'taotp': taotp, 'np': taotp.model.np}):
            runner.run(test)
            count += len(test.examples)
    assert count > 0
    assert runner.failures == 0, f'{runner.failures} docstring example(s) failed'
