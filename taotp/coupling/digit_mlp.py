"""The feed-forward layer of the adder: ten double trapezoids and three flag units.

After attention a response token holds the pair sum S of the place it writes
(``PRE_SUM``), the pair sum of the place below (``PRE_CARRY``) and the digit it
wrote there (``NUM``).  The carry into the current place is hidden in the last
two (``carry_out``), so

    g = PRE_SUM + (PRE_CARRY - NUM) / 10 + 0.21

lands within [S + c + 0.11, S + c + 0.21] for the carry c.  The trapezoid
``f_k`` is exactly 1 on [k, k + 0.5] and [k + 10, k + 10.5] and exactly 0 away
from them, so ``f_k(g)`` is a one-hot digit (eight ReLUs per k).

    >>> int(digit_mlp(7, 0, 0).argmax()), carry_out(15, 5)
    (7, 1)
"""
import numpy as np

THRESHOLDS = (-0.5, 0.0, 0.5, 1.0, 9.5, 10.0, 10.5, 11.0)   # the eight ReLU kinks of f_0
SIGNS = (1, -1, -1, 1, 1, -1, -1, 1)                          # up, flat, down; twice
OFFSET_G = 0.21                                               # centres g on the plateaus


def trapezoid(k, t):
    """f_k(t): 1 on [k, k + 0.5] and [k + 10, k + 10.5], 0 outside (k - 0.5, k + 1) and (k + 9.5, k + 11).

    >>> trapezoid(3, [2.5, 3.2, 13.4, 14.0]).tolist()
    [0.0, 1.0, 1.0, 0.0]
    """
    t = np.asarray(t, dtype=np.float64)
    return 2 * sum(s * np.maximum(t - k - c, 0) for s, c in zip(SIGNS, THRESHOLDS))


def digit_mlp(pre_sum, pre_carry, num):
    """The digit block: ``f_k(g)`` for k = 0..9 with g = PRE_SUM + (PRE_CARRY - NUM)/10 + 0.21."""
    g = np.asarray(pre_sum, float) + (np.asarray(pre_carry, float) - num) / 10 + OFFSET_G
    return np.stack([trapezoid(k, g) for k in range(10)], axis=-1)


def carry_out(pair_sum, written_digit):
    """The carry leaving a place, from its digit-pair sum and the digit written there.

    The written digit is (pair sum + carry in) mod 10, so their gap is 9 or 10
    exactly when a carry leaves, and -1 or 0 otherwise.
    """
    gap = pair_sum - written_digit
    if gap in (9, 10):
        return 1
    if gap in (-1, 0):
        return 0
    raise ValueError(f'carry_out: pair_sum - written_digit must be in {{-1, 0, 9, 10}}; '
                     f'got {gap}')


def hidden_units():
    """The 83 hidden units as ``(reads, constant, writes)``.

    ``reads`` maps a residual feature to its input weight, ``writes`` maps
    ``(block, index)`` to its output weight.  Units 0-79 are the digit
    trapezoids (eight per digit), then the ARROW unit, the EOS unit and a
    constant unit (ReLU(1) = 1) that gives EOS its -1.

    >>> units = hidden_units()
    >>> len(units), units[80]
    (83, ({'PRE_ARROW': 1.0}, -0.5, {('ARROW', 0): 2.0, ('EOS', 0): 2.0}))
    """
    units = []
    for k in range(10):
        for s, c in zip(SIGNS, THRESHOLDS):
            units.append(({'PRE_SUM': 1.0, 'PRE_CARRY': 0.1, 'NUM': -0.1}, OFFSET_G - (k + c),
                          {('SUM', k): 2.0 * s}))
    units.append(({'PRE_ARROW': 1.0}, -0.5, {('ARROW', 0): 2.0, ('EOS', 0): 2.0}))
    units.append(({'PRE_EOS': 1.0}, -1 / 3, {('EOS', 0): 6.0}))
    units.append(({}, 1.0, {('EOS', 0): -1.0}))
    return units
