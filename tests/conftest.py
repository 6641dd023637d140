"""Fixtures and the tier rules of the suite.

The environment every pytest process needs (one BLAS thread, a scratch progress file) is
set earlier, in ``tests/session_env.py``, so that ``pytest --nbval book/`` gets it too.

Tiers (README, "Tests: two tiers"): pyproject's ``-m 'not slow'`` makes the default tier,
``pytest -m slow`` the slow one.  Tests marked ``e2e`` (a real browser, a simulated Colab)
or ``train`` (PyTorch, TransformerLens) run only when the ``-m`` expression names their
marker (``.ci/run`` runs ``pytest -m "e2e or train" tests``), so that the default tier and
``pytest -m "not slow"`` are the same tests.
"""
import re

import numpy as np
import pytest

OPT_IN_MARKERS = ('e2e', 'train')


def pytest_collection_modifyitems(config, items):
    expression = config.getoption('markexpr') or ''
    left_out = [m for m in OPT_IN_MARKERS if not re.search(rf'\b{m}\b', expression)]
    if not left_out:
        return
    keep, drop = [], []
    for item in items:
        (drop if any(item.get_closest_marker(m) for m in left_out) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture
def rng():
    """A fresh seeded generator per test: same inputs on every run."""
    return np.random.default_rng(1234)


@pytest.fixture(autouse=True, scope='module')
def _forget_the_reference_solutions():
    """Each test module reads the reference answers it needs (``tests/solutions.py`` runs a
    chapter's solution script once and keeps its namespace); when the module is done they
    are let go, so one pytest process never holds every chapter's arrays at once (the
    default tier's 600 MB budget)."""
    yield
    import sys
    solutions = sys.modules.get('solutions')
    if solutions is not None and hasattr(solutions, 'chapter_answers'):
        solutions.chapter_answers.cache_clear()
        import gc
        gc.collect()
