import os
import tempfile

# One BLAS thread: the suite's arrays are small, and on 2 cores a second thread spinning
# next to a notebook kernel made single tests up to 10x slower.  Set before NumPy loads,
# and inherited by the kernels nbval starts.
for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')
# Puzzle verdicts of the tests and of the notebooks nbval runs go to a scratch file,
# never to the reader's own progress file.
os.environ['TAOTP_PROGRESS'] = os.path.join(tempfile.mkdtemp(prefix='taotp-'), 'progress.json')

import numpy as np
import pytest


@pytest.fixture
def rng():
    """A fresh seeded generator per test: same inputs on every run."""
    return np.random.default_rng(1234)


@pytest.fixture
def short_time_limit(monkeypatch):
    """Make checkers give up on a submission after 0.2 s instead of their usual limit."""
    import taotp.exercises.guard as guard
    original = guard.call
    monkeypatch.setattr(guard, 'call', lambda *a, **k: original(*a, **{**k, 'seconds': 0.2}))
