"""Chapter 3, Lookup Table: memorise key -> value pairs in one attention layer.

One file per idea:

* ``tables``: the task (random tables, the plain-Python meaning, queries
  behind prefixes, precision, n-gram tables from text);
* ``construction``: the residual layout, the hash layer and the two builders,
  ``build_untied_transformer`` (random hashes, Fig. 3.3) and
  ``build_lookup_transformer`` (tied, fitted, Figs. 3.4-3.6);
* ``training``: the training model of the tied builder, its hand-derived
  gradient and the optimiser (``fit_hashes``);
* ``sweep``: precision across widths (the data of Fig. 3.8);
* ``universal``: the Records chapter's lookup that holds every table (hash + MLP);
* ``figures``: ``draw_*`` functions and the hardening explorer (they load
  matplotlib, so they are imported on first use).

    >>> ks, vs = random_lookup_table(10, 5, 10, rng=0)
    >>> params = taotp.build_lookup_transformer(ks, vs, 10, 5, tok_dims=5)
    >>> taotp.config(params)['d_model'], lookup_precision(params, ks, vs)
    (8, 1.0)
"""
import importlib

from .tables import (as_rng, check_table, lookup_precision, lookup_queries, lookup_reference,
                     ngram_table, random_lookup_table)
from .training import (DEFAULT_OPTIMIZATION_ITERS, fit_hashes, logsumexp, lookup_scores,
                       loss_and_grad, optimize, terminal_progress)
from .construction import (HASH_SCALE, build_lookup_transformer, build_untied_transformer,
                           hash_layer, lookup_embeddings, lookup_layout, wire_lookup_transformer,
                           with_hardening)
from .sweep import precision_sweep
from .universal import (build_universal_lookup_transformer, hash_directions, interpolating_mlp,
                        universal_hash_layer, universal_layout, universal_lookup_size)

_FIGURES = ('draw_hardening', 'hardening_explorer', 'draw_precision_sweep',
            'draw_word_histogram')


def __getattr__(name):
    """The figure functions, loaded (with matplotlib) on first use."""
    if name in _FIGURES:
        return getattr(importlib.import_module('.figures', __name__), name)
    raise AttributeError(f"module 'taotp.lookup' has no attribute {name!r}")


__all__ = [
    'random_lookup_table', 'lookup_reference', 'lookup_queries', 'lookup_precision',
    'ngram_table', 'check_table', 'as_rng',
    'DEFAULT_OPTIMIZATION_ITERS', 'logsumexp', 'lookup_scores', 'loss_and_grad', 'optimize',
    'terminal_progress', 'fit_hashes',
    'HASH_SCALE', 'lookup_layout', 'hash_layer', 'lookup_embeddings', 'build_untied_transformer',
    'wire_lookup_transformer', 'build_lookup_transformer', 'with_hardening',
    'precision_sweep', *_FIGURES,
    'universal_layout', 'hash_directions', 'universal_hash_layer', 'interpolating_mlp',
    'build_universal_lookup_transformer', 'universal_lookup_size',
]
