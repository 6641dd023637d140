"""Why attention alone cannot add: the best table of the form ``x_i + y_j``.

If one head reads the first digit and another the second, the layer's output
is ``x_i + y_j`` for some vectors: every such table is fixed by its first row
and first column, so the n m outputs span at most n + m - 1 dimensions
(Exercise 6.1), and a least-squares fit shows how little of a sum table fits.
"""
import numpy as np


def additive_fit(targets):
    """The least-squares fit of ``x_i + y_j`` to ``targets[i, j]`` (shape (n, m, d)).

    Returns a dict with ``rank`` (rank of the design, i.e. dimension of the
    reachable tables), ``fit`` (n, m, d), ``residual`` (root-mean-square error)
    and ``accuracy`` (share of cells whose argmax is right).

    >>> table = np.eye(10)[(np.arange(10)[:, None] + np.arange(10)) % 10]
    >>> fit = additive_fit(table)
    >>> fit['rank'], fit['accuracy'] < 0.5
    (19, True)
    """
    targets = np.asarray(targets, dtype=np.float64)
    n, m, d = targets.shape
    design = np.zeros((n * m, n + m))
    cells = np.arange(n * m)
    design[cells, cells // m] = 1.0
    design[cells, n + cells % m] = 1.0
    coef, *_ = np.linalg.lstsq(design, targets.reshape(n * m, d), rcond=None)
    fit = (design @ coef).reshape(n, m, d)
    right = fit.argmax(-1) == targets.argmax(-1)
    return {'rank': int(np.linalg.matrix_rank(design)), 'fit': fit,
            'residual': float(np.sqrt(np.mean((fit - targets) ** 2))),
            'accuracy': float(right.mean())}
