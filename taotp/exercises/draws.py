"""Tests of draws against the laws they should follow (puzzle 1.6's sampler).

A right sampler draws each token from a law the judge knows (softmax(logits / T) of the
prefix it drew), so sums of (what was drawn) - (what the law expects) are martingales:
their steps have mean 0 and a variance the judge computes.  ``hoeffding_margin`` bounds a
frequency of n draws, ``freedman_margin`` a martingale with steps within 1 of their means,
each so that a right sampler fails with probability at most ``ALPHA`` over ``tests`` tests.
"""
import numpy as np

ALPHA = 1e-6   # the chance that the sampling test of 1.6 fails a right answer, at most
GRID = 2 ** 0.125     # Freedman's bound is taken on a grid of variances, this far apart
BINS = 10             # the calibration test groups (step, token) by the law's p, in tenths


def tests_for(cases, steps, vocab):
    """How many margins a check of ``cases`` laws of ``steps`` steps over ``vocab`` tokens
    tests: a frequency per (step or all steps, token) per case, and ``martingales``' sums
    per case and over all cases."""
    return (cases + 1) * (BINS + 3) + cases * (steps + 1) * vocab


def hoeffding_margin(n, tests):
    """Hoeffding-Azuma: a right sampler strays further with probability <= ALPHA / tests."""
    return float(np.sqrt(np.log(2 * tests / ALPHA) / (2 * n)))


def freedman_margin(variance, n, tests):
    """Freedman: a sum of n martingale steps within 1 of their means, with summed conditional
    variance ``variance``, strays further with probability <= ALPHA / tests (a union over
    the grid of variances from 2^-40 to n that the realised one is rounded up to)."""
    levels = int(np.ceil((np.log2(max(n, 2)) + 40) / np.log2(GRID))) + 1
    s2 = GRID ** max(np.ceil(np.log(max(variance, 1e-300)) / np.log(GRID)), -40 / np.log2(GRID))
    L = np.log(2 * levels * tests / ALPHA)
    return float(L / 3 + np.sqrt((L / 3) ** 2 + 2 * L * s2))


def martingales(logits, probs, drawn):
    """Sums that stay near 0 for a right sampler, with their conditional variances, for
    (n runs, steps) of draws; every step moves a sum by at most 1 from its mean.  With
    y = logits / (their range at that step) minus its mean under the law, at the drawn token:

    * per tenth of p (``BINS``): how often tokens with such a p were drawn, minus their p;
    * the score of T, y (below 0: draws too flat for T, above 0: too sharp);
    * y^2 minus its mean (draws that mix sharp and flat laws land on the extremes);
    * the spread between runs: (2 R + y) y minus its mean, for R the run's y so far, which
      sums to R^2 minus its variance (a temperature that changes from run to run).

    Returns ``(sums, variances, chances, masses)``; the last two per bin, for messages."""
    z = logits / np.maximum(np.ptp(logits, axis=-1, keepdims=True), 1e-12)
    y = z - (probs * z).sum(-1, keepdims=True)                     # every token's y
    pick = lambda a: np.take_along_axis(a, drawn[..., None], -1)[..., 0]  # noqa: E731
    before = np.cumsum(pick(y), axis=1) - pick(y)                  # R: the run's y so far
    spread = (2 * before[..., None] + y) * y / (2 * drawn.shape[1] - 1)   # within 1 of its mean
    hit = np.eye(probs.shape[-1])[drawn]
    in_bin = np.minimum((probs * BINS).astype(int), BINS - 1)[..., None] == np.arange(BINS)
    q = (probs[..., None] * in_bin).sum(-2)                        # (..., BINS): the law's mass
    sums, variances = [((hit[..., None] * in_bin).sum(-2) - q).sum((0, 1))], [
        (q * (1 - q)).sum((0, 1))]
    for values in (y, y * y, spread):
        mean = (probs * values).sum(-1)
        sums.append([(pick(values) - mean).sum()])
        variances.append([((probs * values ** 2).sum(-1) - mean ** 2).sum()])
    return (np.concatenate(sums), np.concatenate(variances),
            np.append(in_bin.sum((0, 1, 2)), [drawn.size] * 3), np.append(q.sum((0, 1)), [0] * 3))
