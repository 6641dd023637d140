"""Chapter 4, Search: find the last ``prefix_len`` tokens earlier in the input, print what followed.

Example with ``prefix_len = 3``: ``[1, 2, 3, 4, 5, 6, 1, 2, 3] -> 4``.  The program
has two attention-only layers and ``d_model = 3 * (prefix_len + 1)``.

One file per idea:

* ``task``: the plain-Python meaning (``search_reference``) and seeded inputs
  whose query occurs exactly once (``random_search_inputs``);
* ``construction``: the residual layouts and ``build_search_transformer``;
* ``figures``: ``draw_match_attention`` and its hardening explorer (they load
  matplotlib, so they are imported on first use).

Positions ``j < prefix_len`` have no full key: their "earlier" slots hold copies of
token 0 (the nearest position on the circle that the causal mask allows).  The
program therefore behaves as if the input were preceded by ``prefix_len`` copies
of its first token; ``search_reference(..., as_model=True)`` models exactly that.

    >>> X, want = random_search_inputs(np.random.default_rng(0), 3, 10, 20, 3)
    >>> params = build_search_transformer(10, 20, 3)
    >>> bool(np.array_equal(taotp.last_token_argmax(X, params), want))
    True
"""
import importlib

from .task import random_search_inputs, search_reference
from .construction import build_search_transformer, search_layouts

_FIGURES = ('draw_match_attention', 'hardening_explorer')


def __getattr__(name):
    """The figure functions, loaded (with matplotlib) on first use."""
    if name in _FIGURES:
        return getattr(importlib.import_module('.figures', __name__), name)
    raise AttributeError(f"module 'taotp.search' has no attribute {name!r}")


__all__ = ['search_reference', 'random_search_inputs', 'search_layouts',
           'build_search_transformer', *_FIGURES]
