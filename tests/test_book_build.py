"""The README's book command works: a full Jupyter Book build with -W (warnings are errors).

Slow tier (``pytest -m slow``, run by ``.ci/run``).  Without jupyter-book it skips on a
contributor's machine and fails when the environment variable ``CI`` is set (the rule of
``tests/e2e_helpers.py``), so that CI never passes without building the book.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_book_builds_without_warnings(tmp_path):
    jb = Path(sys.executable).parent / 'jupyter-book'
    if not jb.exists():
        why = f'jupyter-book is not installed next to {Path(sys.executable).name} (pip install -e ".[book]")'
        if os.environ.get('CI'):
            pytest.fail(f'{why}; CI is set, so the book build cannot be skipped')
        pytest.skip(why)
    result = subprocess.run([str(jb), 'build', '--all', '-W', '-n', '--keep-going',
                             '--path-output', str(tmp_path), str(ROOT)],
                            capture_output=True, text=True, timeout=1800)
    tail = (result.stdout + result.stderr)[-4000:]
    assert result.returncode == 0, tail
    html = tmp_path / '_build' / 'html'
    for page in ('book/intro.html', 'book/01_transformer.html', 'book/references.html'):
        assert (html / page).exists(), f'{page} was not built'
    shutil.rmtree(tmp_path / '_build' / '.jupyter_cache', ignore_errors=True)
