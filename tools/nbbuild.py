"""Build a notebook from a percent-format script and execute it in place.

    python tools/nbbuild.py src.py book/05_sort.ipynb     # convert + execute (stores outputs)
    python tools/nbbuild.py --run book/05_sort.ipynb       # re-execute an existing notebook
    python tools/nbbuild.py --to-py book/05_sort.ipynb > src.py   # back to a script to edit

Script format: cells start with a line ``# %%`` (code) or ``# %% [markdown]``;
markdown lines drop their leading ``# ``.  Tags go on the marker line:
``# %% tags=["hide-input", "nbval-ignore-output"]``.  Execution runs in the
notebook's folder with this interpreter's ``python3`` kernel, as nbval does.
"""
import json
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

MARKER = re.compile(r'^# %%(?P<md> \[markdown\])?(?:\s+tags=(?P<tags>\[.*\]))?\s*$')
KERNEL = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}


def from_script(text):
    cells, kind, tags, lines = [], None, [], []

    def flush():
        if kind is None:
            return
        body = '\n'.join(lines).strip('\n')
        if kind == 'markdown':
            body = '\n'.join(l[2:] if l.startswith('# ') else l.lstrip('#') for l in body.split('\n'))
            cell = nbformat.v4.new_markdown_cell(body)
        else:
            cell = nbformat.v4.new_code_cell(body)
        if tags:
            cell.metadata['tags'] = tags
        cells.append(cell)

    for line in text.split('\n'):
        m = MARKER.match(line)
        if m:
            flush()
            kind = 'markdown' if m.group('md') else 'code'
            tags = json.loads(m.group('tags')) if m.group('tags') else []
            lines = []
        else:
            lines.append(line)
    flush()
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata['kernelspec'] = KERNEL
    nb.metadata['language_info'] = {'name': 'python'}
    return nb


def to_script(nb):
    out = []
    for cell in nb.cells:
        tags = cell.metadata.get('tags', [])
        suffix = f' tags={json.dumps(tags)}' if tags else ''
        if cell.cell_type == 'markdown':
            out.append(f'# %% [markdown]{suffix}')
            out += [('# ' + l) if l else '#' for l in cell.source.split('\n')]
        else:
            out.append(f'# %%{suffix}')
            out += cell.source.split('\n')
        out.append('')
    return '\n'.join(out)


def execute(nb, folder, timeout=600):
    for cell in nb.cells:  # ids must be stable for clean diffs
        cell.pop('id', None)
    nb.nbformat_minor = 4
    NotebookClient(nb, timeout=timeout, kernel_name='python3',
                   resources={'metadata': {'path': str(folder)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop('execution', None)
    return nb


def main(argv):
    if argv[:1] == ['--to-py']:
        print(to_script(nbformat.read(argv[1], as_version=4)))
        return 0
    if argv[:1] == ['--run']:
        path = Path(argv[1])
        nb = nbformat.read(path, as_version=4)
    else:
        path = Path(argv[1])
        nb = from_script(Path(argv[0]).read_text())
    execute(nb, path.parent.resolve())
    nbformat.write(nb, path)
    print(f'wrote {path} ({len(nb.cells)} cells)')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
