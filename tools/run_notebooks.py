"""Re-execute notebooks from their paired percent scripts and store the outputs.

    python tools/run_notebooks.py book/05_sort.py             # one notebook
    python tools/run_notebooks.py book exercises solutions    # every notebook in these folders

For each notebook the script (``NN_name.py``, the text that is reviewed) is read
with jupytext, executed top to bottom with nbclient in the notebook's folder
(as nbval and the book build do), and written back as ``NN_name.ipynb`` with
its outputs; the script is rewritten too, so the pair is in sync (unless the script
was edited while it ran: then nothing is stored, and the tool says so).  Two
notebooks run at a time (the machine's two cores).  Tracebacks are stored with
package-relative paths (``taotp/params.py``, ``numpy/...``), never the paths of
the machine that ran them.

What is stored is what a reader's JupyterLab writes back, so opening a notebook and
letting it autosave changes nothing: the kernelspec of the README's set-up
(``KERNELSPEC``), no cell ids (nbformat 4.4), no widget state.  A cell's printed text is
stored as one output per stream (nbclient may receive it in pieces, which would show as
several boxes), and a live widget's stored output says what it needs instead of
``VBox(children=...``.
"""
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')     # kernels inherit it; see tests/conftest.py

import jupytext
from nbclient import NotebookClient


ROOT = Path(__file__).resolve().parent.parent
# an absolute path up to the repository or an installed-packages folder; what follows
# it (``taotp/model.py``, ``numpy/linalg/...``) is what a reader needs to see
_MACHINE_PREFIX = re.compile(r'(?<![\w.])/[^\s:\'"\x1b]*?/(?:site|dist)-packages/|'
                             + re.escape(str(ROOT) + os.sep))


# what JupyterLab writes into a notebook it saves (ipykernel's own kernelspec)
KERNELSPEC = {'name': 'python3', 'display_name': 'Python 3 (ipykernel)', 'language': 'python'}
WIDGET = 'application/vnd.jupyter.widget-view+json'
WIDGET_TEXT = ('Live widget: shown when this cell runs in Jupyter or Colab '
               '(it needs a running kernel).')


def relative_paths(text):
    """``text`` with this machine's repository and site-packages prefixes removed."""
    return _MACHINE_PREFIX.sub('', text)


def merged_streams(outputs):
    """``outputs`` with each run of adjacent stream outputs of one name joined into one."""
    merged = []
    for out in outputs:
        last = merged[-1] if merged else None
        if (out.output_type == 'stream' and last is not None
                and last.output_type == 'stream' and last.name == out.name):
            last.text += out.text
        else:
            merged.append(out)
    return merged


def scripts(args):
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            yield from sorted(path.glob('*.py'))
        else:
            yield path.with_suffix('.py')


def run(script, timeout=600):
    start = time.perf_counter()
    source = script.read_text()
    nb = jupytext.reads(source, fmt='py:percent')
    nb.metadata['kernelspec'] = dict(KERNELSPEC)
    with tempfile.TemporaryDirectory() as scratch:   # a fresh puzzle progress file per run
        env = {**os.environ, 'TAOTP_PROGRESS': os.path.join(scratch, 'progress.json')}
        env.pop('TAOTP_IMAGES', None)                # stored notebooks hold real pictures
        NotebookClient(nb, timeout=timeout, kernel_name='python3',
                       resources={'metadata': {'path': str(script.parent.resolve())}}
                       ).execute(env=env)
    # widget state is not stored: live widgets need a kernel anyway, and every widget
    # has a kernel-free player twin in the stored outputs
    nb.metadata.pop('widgets', None)
    for cell in nb.cells:        # no per-run noise in the stored file
        cell.pop('id', None)
        cell.metadata.pop('execution', None)
        if cell.cell_type != 'code':
            continue
        cell.outputs = merged_streams(cell.outputs)
        for out in cell.outputs:
            if out.output_type == 'error':
                out.traceback = [relative_paths(line) for line in out.traceback]
            if WIDGET in out.get('data', {}):
                out.data['text/plain'] = WIDGET_TEXT
    nb.nbformat_minor = 4
    if script.read_text() != source:     # edited while it ran: keep the edit, store nothing
        return script, None
    jupytext.write(nb, script.with_suffix('.ipynb'))
    jupytext.write(nb, script, fmt='py:percent')
    return script, time.perf_counter() - start


def main(args):
    todo = list(scripts(args or ['book', 'exercises', 'solutions']))
    stale = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for script, seconds in pool.map(run, todo):
            if seconds is None:
                stale.append(script)
                print(f'{script}: changed while it ran; nothing stored (run it again)')
            else:
                size = script.with_suffix('.ipynb').stat().st_size / 1000
                print(f'{script}: executed in {seconds:.1f} s, stored {size:.0f} KB')
    return 1 if stale else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
