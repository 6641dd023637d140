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


def agreement_matrix(maps, reference, start, cutoff=0.01):
    """``(len(maps), len(reference))``: entry ``[i, j]`` is the share of ``maps[i]``'s
    weight (rows ``start`` on) on the keys ``reference[j]`` alone weighs at least ``cutoff``.

    ``mass_on_support`` against every reference head at once is the union of a
    row's supports; this matrix takes them one at a time, head to head.
    """
    reference = np.asarray(reference)
    return np.stack([mass_on_support(maps, reference[j:j + 1], start, cutoff)
                     for j in range(len(reference))], axis=1)


def best_matching(agreement):
    """The one-to-one pairing of rows to columns with the largest total agreement.

    Returns ``[(row, column), ...]`` sorted by row (as many pairs as the smaller
    side); brute force over pairings, fine for a handful of heads.

        >>> best_matching(np.array([[0.9, 0.8], [0.85, 0.1]]))
        [(0, 1), (1, 0)]
    """
    from itertools import permutations
    agreement = np.asarray(agreement)
    rows, cols = agreement.shape
    if rows <= cols:
        best = max(permutations(range(cols), rows),
                   key=lambda p: sum(agreement[i, j] for i, j in enumerate(p)))
        return [(i, int(j)) for i, j in enumerate(best)]
    best = max(permutations(range(rows), cols),
               key=lambda p: sum(agreement[i, j] for j, i in enumerate(p)))
    return sorted((int(i), j) for j, i in enumerate(best))
