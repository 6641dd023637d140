import numpy as np
import pytest


@pytest.fixture
def rng():
    """A fresh seeded generator per test: same inputs on every run."""
    return np.random.default_rng(1234)
