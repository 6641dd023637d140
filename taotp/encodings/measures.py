"""Two yardsticks for encodings: distinguishability (Def. 7.6) and padding dimension (Lemma 7.2).

    >>> round(distinguishability(og_embedding(64, 128)), 3), padding_dimension(og_embedding(64, 128))
    (0.769, 16)
"""
import numpy as np

from ..model import softmax
from ._args import count as _count, encoding as _encoding
from .rotation import random_rotation_embedding
from .sinusoidal import og_embedding


def distinguishability(encoding):
    """Definition 7.6: D = min_i softmax(E E^T)[i, i] for an encoding E of shape (q, d).

    Row i of softmax(E E^T) is the attention that a query equal to E[i] pays
    to the keys E[0..q-1], with no hardening factor and no 1/sqrt(d) scaling.
    D near 1 means every position picks itself out sharply; D = 1/c when c
    rows are identical.
    """
    E = _encoding(encoding, 'distinguishability')
    gram = np.einsum('id,jd->ij', E, E)     # a plain loop: faster than threaded BLAS here
    return float(np.min(np.diag(softmax(gram, axis=-1))))


def distinguishability_bound(q, sq_norm):
    """An upper bound on the distinguishability of *any* q rows of squared norm ``sq_norm``.

    With F = E E^T, D_i = 1 / (1 + sum_{j != i} exp(F_ij - sq_norm)).  By
    Jensen the sum is at least (q - 1) exp(mean_j F_ij - sq_norm), and some
    row has mean_{j != i} F_ij >= -sq_norm / (q - 1) because sum_{i,j} F_ij =
    |sum_i E_i|^2 >= 0.  Hence D <= 1 / (1 + (q - 1) exp(-sq_norm q / (q - 1))).
    A rotation encoding in d real dims has sq_norm = d / 2 (Theorem 7.1).
    """
    q = _count(q, 'distinguishability_bound')
    if q == 1:
        return 1.0
    return float(1.0 / (1.0 + (q - 1) * np.exp(-sq_norm * q / (q - 1))))


def padding_dimension(encoding, epsilon=1e-3):
    """The *standard* padding dimension (Lemma 7.2): columns whose range is at most 2 epsilon.

    A column with max - min <= 2 epsilon stays within epsilon of its midpoint
    for every row, so those coordinates can hold a program's own data with
    (almost) no position noise.  This is the per-coordinate reading of
    Definition 7.7 that Lemma 7.2 computes; with the Euclidean ball of the
    definition, k such coordinates only guarantee a radius of epsilon * sqrt(k).
    """
    E = _encoding(encoding, 'padding_dimension')
    if not np.isfinite(epsilon) or epsilon < 0:
        raise ValueError(f'padding_dimension: epsilon must be a finite number >= 0; got {epsilon}')
    spread = E.max(axis=0) - E.min(axis=0)
    return int(np.sum(spread <= 2 * epsilon))


def distinguishability_curves(q, dims_og, dims_random, seeds):
    """D against the number of dims for ``q`` positions (the data of Fig. 7.9 and our bound).

    Returns a dict: ``dims_og`` and ``og`` (the sinusoidal encoding),
    ``dims_random`` and ``random`` (shape (len(dims_random), seeds), one
    random rotation encoding per seed 0..seeds-1), ``bound``
    (``distinguishability_bound`` at each of ``dims_og``) and ``q``.
    """
    dims_og, dims_random = np.asarray(dims_og), np.asarray(dims_random)
    return {
        'q': q, 'dims_og': dims_og, 'dims_random': dims_random,
        'og': np.array([distinguishability(og_embedding(q, int(d))) for d in dims_og]),
        'random': np.array([[distinguishability(random_rotation_embedding(
            q, int(d), np.random.default_rng(seed))) for seed in range(seeds)]
            for d in dims_random]),
        'bound': np.array([distinguishability_bound(q, d / 2) for d in dims_og]),
    }
