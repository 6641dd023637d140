"""Chapter 10: selective induction heads on interleaved Markov chains.

A sequence hides a lag ``k`` (drawn from a known set) and every token is drawn
from the row of the token ``k`` places back.  A three-layer, attention-only
network gathers evidence for every lag, picks one and copies from the right
place (D'Angelo, Croce, Flammarion, ICLR 2025).  One file per idea:

* ``task``: transition matrices, the stationary law, lag sets, sampling;
* ``predictors``: per-lag likelihoods, the Bayes average (BMA), maximum
  likelihood, the normalised transitions ``ptil``, Proposition 1, the exact
  finite-length formula of the network, KL metrics;
* ``design``: which tokens each layer-2 head averages (``plan_heads``) and
  how large the constants must be (``safety_margins``);
* ``construction``: the weights of the three layers, by named blocks;
* ``network``: the paper's disentangled transformer and
  ``build_selective_induction``;
* ``port``: the same weights in the book's params format (``book_params``),
  run by ``taotp.transformer`` / ``taotp.trace``;
* ``figures``: every figure as ``draw_*(fig, ...)`` (loads matplotlib, so it
  is imported on first use);
* ``example``: the hand-checkable worked example (S = 3, T = 10).

Conventions.  Arrays are 0-based: row ``t`` of a ``(T, S)`` prediction is the
law of the token after the first ``t + 1`` tokens, i.e. the query at 1-based
position ``i = t + 1``.  Masks and residue classes use 1-based positions ``i``
(query) and ``j`` (key), as the chapter does.  Everything is float64.
"""
import importlib

from .task import (PRESETS, check_lags, check_transition_matrix, sample_batch, sample_sequence,
                   stationary, transition_matrix)
from .predictors import (TIE_TOL, bma_predictive, candidate_rows, class_means,
                         construction_predictive, construction_weights, kl_curve, kl_curves,
                         kl_divergence, lag_posterior, log_likelihoods, ml_lags, ml_predictive,
                         normalised_transitions, prop1_predictive, prop1_weights,
                         transition_logprobs, true_predictive)
from .design import (VARIANTS, Design, check_constants, check_design, design_problems,
                     design_table, exact_from, plan_heads, safety_margins)
from .construction import layer_matrices, pair_evidence_block
from .network import DisentangledTransformer, build_selective_induction, disentangled_slots
from .port import book_layout, book_params
from . import example

_FIGURES = ('draw_subchains', 'draw_data', 'draw_kl', 'draw_hardening', 'margin_readout')


def __getattr__(name):
    """The figure functions, loaded (with matplotlib) on first use."""
    if name in _FIGURES:
        return getattr(importlib.import_module('.figures', __name__), name)
    if name == 'figures':
        return importlib.import_module('.figures', __name__)
    raise AttributeError(f"module 'taotp.selective' has no attribute {name!r}")


__all__ = [
    # the task
    'PRESETS', 'transition_matrix', 'stationary', 'check_transition_matrix', 'check_lags',
    'sample_sequence', 'sample_batch',
    # predictors
    'transition_logprobs', 'log_likelihoods', 'lag_posterior', 'candidate_rows',
    'bma_predictive', 'TIE_TOL', 'ml_lags', 'ml_predictive', 'true_predictive',
    'normalised_transitions', 'prop1_weights', 'prop1_predictive', 'class_means',
    'construction_weights', 'construction_predictive', 'kl_divergence', 'kl_curve', 'kl_curves',
    # designs and constants
    'Design', 'VARIANTS', 'plan_heads', 'check_design', 'design_problems', 'exact_from',
    'design_table', 'safety_margins', 'check_constants',
    # the construction, the paper's network and the book-format port
    'layer_matrices', 'pair_evidence_block', 'DisentangledTransformer',
    'build_selective_induction', 'disentangled_slots', 'book_params', 'book_layout',
    # figures (lazy) and the worked example
    *_FIGURES, 'example',
]
