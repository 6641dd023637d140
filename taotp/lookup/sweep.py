"""How wide must the model be?  The data of the book's Fig. 3.8.

``precision_sweep`` builds the tied program for every (table size, vocabulary,
d_model) on seeded random tables and measures how many keys it decodes right;
``taotp.lookup.draw_precision_sweep`` draws the result.
"""
import numpy as np

from .construction import build_lookup_transformer
from .tables import lookup_precision, random_lookup_table


def precision_sweep(entries, vocab_sizes, d_models, runs=1, key_len=5, optimization_iters=2000,
                    seed=0, prefix_len=0):
    """Precision of the tied builder for every (entries, vocab, d_model), ``runs`` seeds each.

    Table ``r`` of a cell is drawn with ``np.random.default_rng([seed, n, vocab, r])``,
    so a cell does not depend on the rest of the grid.

    Returns:
        An array of shape (len(entries), len(vocab_sizes), len(d_models), runs);
        NaN marks impossible cells (more entries than distinct keys).

    >>> precision_sweep([3], [4], [5], key_len=2, optimization_iters=500).shape
    (1, 1, 1, 1)
    """
    out = np.full((len(entries), len(vocab_sizes), len(d_models), runs), np.nan)
    for a, n in enumerate(entries):
        for b, vocab in enumerate(vocab_sizes):
            if n > vocab ** key_len:
                continue
            for r in range(runs):
                rng = np.random.default_rng([seed, n, vocab, r])
                ks, vs = random_lookup_table(n, key_len, vocab, rng)
                for c, d in enumerate(d_models):
                    params = build_lookup_transformer(ks, vs, vocab, key_len + prefix_len, d - 3,
                                                      optimization_iters, rng=rng)
                    out[a, b, c, r] = lookup_precision(params, ks, vs, prefix_len, rng)
    return out
