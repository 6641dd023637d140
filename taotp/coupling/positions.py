"""Position codes on a hypercube, the sizes they imply, and the attention scale.

The code of ID k is the binary expansion of k - 1 written with signs,
``v_k`` in {+1, -1}^D: every code has squared norm D and two different codes
have a dot product of at most D - 2, a gap attention can use.  A level of IDs
stores the code of the token's ID and the code of the next ID side by side.

    >>> cube_code(3, 2)
    array([ 1.,  1., -1.])
    >>> z = sizes(30, 30)
    >>> z['P1'], z['P2'], z['d_model']
    (6, 5, 41)
"""
import math

import numpy as np

from .formats import _is_count, theory_pad_length


def cube_code(D, k):
    """The hypercube code v^D_k in {+1, -1}^D: the bits of k - 1 (most significant first) as signs."""
    if not 1 <= k <= 2 ** D:
        raise ValueError(f'cube_code: k must be in 1..2^D = {2 ** D}; got {k}')
    bits = [(k - 1) >> (D - 1 - i) & 1 for i in range(D)]
    return np.array([-1.0 if b else 1.0 for b in bits])


def wrap(ids, D):
    """IDs reduced onto the 2^D codes: ``((p - 1) mod 2^D) + 1`` for p >= 1; 0 stays 0.

    >>> wrap(np.array([0, 1, 8, 9]), 3).tolist()
    [0, 1, 8, 1]
    """
    ids = np.asarray(ids)
    return np.where(ids > 0, (ids - 1) % 2 ** D + 1, 0)


def position_codes(D, p):
    """``[v_p ; v_(p+1)]``, the current and the next code of ID p >= 1; zeros for p = 0.

    IDs wrap modulo 2^D, so the next code of ID 2^D is v_1: the collision
    behind the paper's off-by-one in the code width.

    >>> position_codes(2, 4).tolist()
    [-1.0, -1.0, 1.0, 1.0]
    """
    if p == 0:
        return np.zeros(2 * D)
    return np.concatenate([cube_code(D, int(wrap(p, D))), cube_code(D, int(wrap(p + 1, D)))])


def sizes(n, m, literal=False):
    """Sizes of the adder for up to ``m`` operands of up to ``n`` digits.

    Args:
        n, m: the largest operand length and operand count.
        literal: use the paper's ``P1 = ceil(log2 ell)`` with ``max_pos1 = 2^P1``
            instead of the corrected ``2^P1 >= ell + 2``.  With the paper's width
            the last digit's next code wraps onto the separators' whenever
            ``s1 + ell = 2^P1``, so the separator is never written.

    Returns:
        A dict: ``ell`` (the proof's padding), ``P1``, ``P2`` (code widths),
        ``max_pos1``, ``max_pos2`` (largest ID each table holds), ``d_model``
        (norm-free, 19 + 2 P1 + 2 P2) and ``d_model_preln`` (42 + 4 (P1 + P2)).
    """
    for v, name in ((n, 'n'), (m, 'm')):
        if not _is_count(v, 1):
            raise ValueError(f'sizes: {name} must be an integer >= 1; got {v!r}')
    ell = theory_pad_length(n, m)
    P1 = max(1, math.ceil(math.log2(ell))) if literal else math.ceil(math.log2(ell + 2))
    P2 = max(1, math.ceil(math.log2(m + 1)))
    return {'ell': ell, 'P1': P1, 'P2': P2,
            'max_pos1': 2 ** P1 if literal else 2 ** P1 - 1, 'max_pos2': 2 ** P2,
            'd_model': 19 + 2 * P1 + 2 * P2, 'd_model_preln': 42 + 4 * (P1 + P2)}


def lambda_bound(N):
    """The sufficient attention scale ``ln(1000 N) / 2`` for a sequence of N tokens.

    >>> round(lambda_bound(28), 2)
    5.12
    """
    return 0.5 * math.log(1000 * N)
