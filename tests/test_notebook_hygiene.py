"""Every stored notebook is runnable as stored: python3 kernel, quiet, errors only where tagged.

And stored as a reader's tools leave it: the kernelspec JupyterLab writes back (so that
opening a notebook changes nothing; ``tests/test_jupyterlab.py`` opens each one), one
output box per stream, and within the size budgets of CONTRIBUTING.md; a notebook's printed
lines fit the book's text column.
"""
import importlib.util
import re
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for folder in ('book', 'exercises', 'solutions')
                   for p in (ROOT / folder).glob('*.ipynb'))
IDS = [str(p.relative_to(ROOT)) for p in NOTEBOOKS]


# KB a stored notebook may take (CONTRIBUTING.md, "Budgets")
BUDGET_KB = {'book': 250, 'exercises': 60, 'solutions': 60}


def _run_notebooks():
    """``tools/run_notebooks.py`` as a module: the one place the stored kernelspec is set."""
    spec = importlib.util.spec_from_file_location('run_notebooks', ROOT / 'tools' / 'run_notebooks.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KERNELSPEC = _run_notebooks().KERNELSPEC


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_kernelspec_is_python3(path):
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.get('kernelspec', {}).get('name') == 'python3'


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_kernelspec_is_what_jupyterlab_writes_back(path):
    """JupyterLab rewrites any other kernelspec on opening (autosave then changes both files)."""
    nb = nbformat.read(path, as_version=4)
    stale = f'run tools/run_notebooks.py {path.with_suffix(".py").relative_to(ROOT)}'
    assert nb.metadata.get('kernelspec') == KERNELSPEC, stale
    assert f'display_name: {KERNELSPEC["display_name"]}' in path.with_suffix('.py').read_text(), stale
    assert (nb.nbformat, nb.nbformat_minor) == (4, 4), 'stored as nbformat 4.4 (no cell ids)'


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_each_stream_is_stored_as_one_output(path):
    """A cell's printed text is one box: adjacent pieces of one stream are merged."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        outputs = cell.get('outputs', [])
        for a, b in zip(outputs, outputs[1:]):
            assert not (a.output_type == b.output_type == 'stream' and a.name == b.name), \
                (f'cell {i}: its {a.name} is stored in pieces (several boxes): '
                 f'run tools/run_notebooks.py {path.with_suffix(".py").relative_to(ROOT)}')


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_stored_pictures_are_real(path):
    """No stored picture is the 1-pixel stand-in of a kernel that skips images (taotp.plot)."""
    import base64
    from taotp.plot import _stand_in
    stand_in = base64.b64encode(_stand_in()).decode()
    text = path.read_text()
    assert stand_in not in text, (f'{path.name} stores a stand-in picture: run '
                                  f'tools/run_notebooks.py without TAOTP_IMAGES set')


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_stored_notebook_is_within_its_size_budget(path):
    budget = BUDGET_KB[path.parent.name]
    size = path.stat().st_size / 1000
    assert size <= budget, f'{path.name} stores {size:.0f} KB; its budget is {budget} KB'


# characters a stored line of text may take: the book's text column, and about what Jupyter
# and Colab show without wrapping it or scrolling sideways
WIDEST_LINE = 88


def _printed_text(out):
    """The text an output shows as text: a stream, or the text/plain of a result with no
    HTML or picture to show instead (those are laid out by the browser); None otherwise."""
    if out.output_type == 'stream':
        return out.text
    data = out.get('data', {})
    if 'text/plain' in data and not {'text/html', 'image/png'} & set(data):
        return data['text/plain']
    return None


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_printed_lines_fit_the_text_column(path):
    """A longer line wraps mid-word or scrolls sideways: print it as two meaningful lines,
    one key of a dict per line, a narrower table, or wrap it (``textwrap.fill``), as
    ``check()`` wraps its verdict."""
    nb = nbformat.read(path, as_version=4)
    wide = [f'cell {i}: {len(line)} characters: {line[:60]!r}...'
            for i, cell in enumerate(nb.cells) for out in cell.get('outputs', [])
            for line in (_printed_text(out) or '').splitlines()
            if len(line) > WIDEST_LINE]
    script = path.with_suffix('.py').relative_to(ROOT)
    assert not wide, (f'{path.name} prints lines wider than {WIDEST_LINE} characters (narrow '
                      f'them in {script}, then run tools/run_notebooks.py {script}):\n'
                      + '\n'.join(wide))


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_stored_outputs_are_quiet_and_errors_are_tagged(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != 'code':
            continue
        tags = cell.metadata.get('tags', [])
        for out in cell.get('outputs', []):
            assert not (out.output_type == 'stream' and out.name == 'stderr'), \
                f'cell {i} wrote to stderr: {out.text[:200]!r}'
            if out.output_type == 'error':
                assert 'raises-exception' in tags, f'cell {i} raised {out.ename} untagged'
            text = out.get('text', '') + str(out.get('data', {}).get('text/plain', ''))
            assert 'Warning' not in text, f'cell {i} shows a warning: {text[:200]!r}'


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_code_cells_were_executed_in_order(path):
    nb = nbformat.read(path, as_version=4)
    counts = [c.execution_count for c in nb.cells if c.cell_type == 'code']
    assert all(c is not None for c in counts), 'a code cell has no stored output count'
    assert counts == list(range(1, len(counts) + 1)), 'cells were not run top to bottom once'


@pytest.mark.parametrize('path', [p for p in NOTEBOOKS if p.parent.name == 'book'],
                         ids=[i for i in IDS if i.startswith('book')])
def test_animations_and_widgets_are_not_compared(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != 'code':
            continue
        kinds = {k for out in cell.get('outputs', []) for k in out.get('data', {})}
        volatile = 'application/vnd.jupyter.widget-view+json' in kinds or any(
            'taotp-player' in str(out.get('data', {}).get('text/html', ''))
            for out in cell.get('outputs', []))
        if volatile:
            assert 'nbval-ignore-output' in cell.metadata.get('tags', []), \
                f'cell {i} shows a widget or an animation but is not tagged nbval-ignore-output'


def test_every_chapter_is_in_the_table_of_contents():
    toc = (ROOT / '_toc.yml').read_text()
    for path in (ROOT / 'book').glob('*.ipynb'):
        assert f'book/{path.stem}' in toc, f'{path.name} is not in _toc.yml'


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_notebook_and_its_script_are_in_sync(path):
    """The percent script is the reviewed source; the notebook must hold the same cells."""
    script = path.with_suffix('.py')
    assert script.exists(), f'{script.name} is missing: run jupytext --sync {path.name}'
    pairing = nbformat.read(path, as_version=4).metadata.get('jupytext', {}).get('formats')
    assert pairing == 'ipynb,py:percent', f'{path.name} is not paired (jupytext metadata)'
    assert 'formats: ipynb,py:percent' in script.read_text()
    text, notebook = jupytext.read(script), jupytext.read(path)
    assert len(text.cells) == len(notebook.cells), 'different numbers of cells'
    for i, (a, b) in enumerate(zip(text.cells, notebook.cells)):
        assert (a.cell_type, a.source) == (b.cell_type, b.source), \
            f'cell {i} differs: run tools/run_notebooks.py {script}'
        assert a.metadata.get('tags', []) == b.metadata.get('tags', []), f'cell {i}: tags differ'


def test_every_script_has_a_notebook():
    for folder in ('book', 'exercises', 'solutions'):
        for script in (ROOT / folder).glob('*.py'):
            assert script.with_suffix('.ipynb').exists(), f'{script} has no notebook'


@pytest.mark.parametrize('path', [p for p in NOTEBOOKS if p.parent.name == 'exercises'],
                         ids=[i for i in IDS if i.startswith('exercises')])
def test_exercises_end_with_the_readers_progress(path):
    """The table shows the reader's own verdicts (kept between sessions): never compared."""
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == 'code']
    assert cells[-1].source.startswith('progress('), 'the last cell should show progress()'
    for cell in cells:
        if 'progress(' in cell.source:
            assert 'nbval-ignore-output' in cell.metadata.get('tags', []), cell.source


def test_colab_badges_and_install_cells_follow_the_configured_repository():
    """One repository URL (in _config.yml) feeds every badge and every install cell."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('colab_links', ROOT / 'tools' / 'colab_links.py')
    links = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(links)
    stale = [s.name for s in links.scripts() if links.expected(s) != s.read_text()]
    assert not stale, f'run python tools/colab_links.py (then tools/run_notebooks.py): {stale}'
    for script in links.scripts():
        assert links.BADGE.search(script.read_text()), f'{script.name} has no Colab badge'


def _output_texts(out):
    """The text a reader sees in one stored output (images and HTML players left out)."""
    data = out.get('data', {})
    yield out.get('text', '')
    yield from (str(v) for k, v in data.items() if k in ('text/plain', 'text/markdown'))
    yield out.get('evalue', '')
    yield '\n'.join(out.get('traceback', []))


REPR = re.compile(r'<(function|bound method|built-in function|lambda)\b[^>]*>'
                  r'|\bobject at 0x[0-9a-fA-F]+')
MACHINE_PATH = re.compile(re.escape(str(ROOT)) + r'|(site|dist)-packages/|ipykernel_\d+/'
                          r'|(?<![\w.:/])/(home|root|tmp|usr|opt|work|Users|var)/')


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_outputs_show_no_function_reprs(path):
    """A cell that ends in a function (e.g. ``interact(f)``) prints ``<function f>``."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        for out in cell.get('outputs', []):
            for text in _output_texts(out):
                match = REPR.search(text)
                assert not match, f'cell {i} shows {match.group(0)!r}: end the cell with ";"'


@pytest.mark.parametrize('path', NOTEBOOKS, ids=IDS)
def test_outputs_and_tracebacks_show_no_machine_paths(path):
    """Tracebacks are stored package-relative (tools/run_notebooks.py), outputs print none."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        for out in cell.get('outputs', []):
            for text in _output_texts(out):
                match = MACHINE_PATH.search(text)
                assert not match, (f'cell {i} shows the path {match.group(0)!r}: '
                                   f'run tools/run_notebooks.py {path.with_suffix(".py").name}')


@pytest.mark.parametrize('path', [p for p in NOTEBOOKS if p.parent.name == 'book'],
                         ids=[i for i in IDS if i.startswith('book')])
def test_live_widgets_are_left_out_of_the_book_and_have_a_player(path):
    """Without a kernel a widget is blank or frozen: the HTML shows its player instead."""
    nb = nbformat.read(path, as_version=4)
    assert 'widgets' not in nb.metadata, 'widget state is stored (the HTML would ship it)'
    sources = '\n'.join(c.source for c in nb.cells if c.cell_type == 'code')
    for i, cell in enumerate(nb.cells):
        kinds = {k for out in cell.get('outputs', []) for k in out.get('data', {})}
        if 'application/vnd.jupyter.widget-view+json' not in kinds:
            continue
        assert 'remove-output' in cell.metadata.get('tags', []), \
            f'cell {i} shows a live widget in the HTML book: tag it remove-output'
        name = re.search(r'(\w+)\.widget\(\)', cell.source)
        assert name and f'{name.group(1)}.player(' in sources, \
            f'cell {i}: the widget has no kernel-free player ({name and name.group(1)}.player)'
