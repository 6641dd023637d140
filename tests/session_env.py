"""What every pytest process of this project sets up first (``-p session_env``, pyproject.toml).

Loaded before every other plugin (nbval among them) and before NumPy, in each process:
``pytest`` itself, each ``pytest-xdist`` worker, whatever folders are named on the command
line (``pytest --nbval book/`` loads no ``tests/conftest.py``, but loads this).  The notebook
kernels that nbval starts inherit the environment set here.

* One BLAS thread: the suite's arrays are small, and on 2 cores a second thread spinning
  next to a notebook kernel made single tests up to 10x slower.
* Notebook kernels build every figure and player but do not rasterize them
  (``TAOTP_IMAGES=skip``, see ``taotp.plot``): nbval compares text only, and rasterizing
  was most of the book's nbval time.  ``tools/run_notebooks.py`` stores real pictures,
  and the pytest process itself, where the variable is not read, rasterizes what the
  tests draw (``tests/test_residual.py``, ``tests/test_widgets.py``).
* Puzzle verdicts of the tests and of the notebooks nbval runs go to a scratch file, never
  to the reader's own progress file.
* A lazy stand-in for ``rfc3987_syntax``.  nbval and jupytext import nbformat, nbformat
  imports jsonschema, and jsonschema imports ``rfc3987_syntax`` when it is installed
  (JupyterLab's dependencies install it) to check the ``iri`` string format; that import
  compiles an Earley grammar, 1.5-3 s of CPU in every process, the largest single cost of
  starting pytest here, for a format no notebook schema uses.  The stand-in imports the
  real module the first time an IRI is checked, so jsonschema behaves exactly as before.
"""
import importlib
import importlib.util
import os
import sys
import tempfile
import types

for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')
os.environ['TAOTP_PROGRESS'] = os.path.join(tempfile.mkdtemp(prefix='taotp-'), 'progress.json')
os.environ['TAOTP_IMAGES'] = 'skip'      # notebook kernels: pictures built, not rasterized

LAZY = 'rfc3987_syntax'


def _lazy_stand_in(spec):
    module = types.ModuleType(LAZY, 'Imported on first use; see tests/session_env.py.')
    module.__path__ = list(spec.submodule_search_locations or [])
    module.__spec__ = spec

    def is_valid_syntax(term, value):
        return importlib.import_module(f'{LAZY}.syntax_helpers').is_valid_syntax(term, value)

    module.is_valid_syntax = is_valid_syntax
    return module


if LAZY not in sys.modules and importlib.util.find_spec(LAZY) is not None:
    sys.modules[LAZY] = _lazy_stand_in(importlib.util.find_spec(LAZY))
