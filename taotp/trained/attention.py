"""How much of a trained model's attention falls where a construction looks.

A construction's heads put their weight on few keys; a trained head spreads
some weight everywhere.  ``mass_on_support`` measures the share of a trained
map's weight on the keys a reference (the construction) weighs at least
``cutoff``; ``uniform_share`` is the same share for attention spread evenly
over the past, the baseline a map with no structure gets.

    >>> causal = np.tril(np.ones((4, 4)))
    >>> reference = np.eye(4)[None]                 # every query looks at itself
    >>> float(mass_on_support(reference, reference, 0)[0])
    1.0
    >>> round(uniform_share(reference, 0), 4)       # (1 + 1/2 + 1/3 + 1/4) / 4
    0.5208
"""
import numpy as np


def mass_on_support(maps, reference, start, cutoff=0.01):
    """Per map of ``maps`` (``(k, n, n)``), the share of its weight on rows ``start`` on
    that falls on keys some map of ``reference`` weighs at least ``cutoff`` from the
    same query.

    For ``maps`` uniform over the causal past the share is the support's size
    relative to the past; ``uniform_share`` gives that baseline.
    """
    support = (np.asarray(reference) >= cutoff).any(axis=0)[start:]
    rows = np.asarray(maps)[:, start:]
    return (rows * support).sum(axis=(1, 2)) / rows.sum(axis=(1, 2))


def uniform_share(reference, start, cutoff=0.01):
    """``mass_on_support`` of attention spread evenly over every earlier token and itself."""
    n = np.shape(reference)[-1]
    causal = np.tril(np.ones((n, n)))
    return float(mass_on_support((causal / causal.sum(1, keepdims=True))[None], reference,
                                 start, cutoff)[0])
