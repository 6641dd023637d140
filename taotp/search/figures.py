"""The chapter's figure: the match head of layer 1 as the hardening factor grows.

``draw_match_attention(fig, ...)`` draws into a figure and returns it; the same
function serves the live slider and its kernel-free player
(``hardening_explorer``).  This module loads matplotlib (through ``taotp.plot``);
``taotp.search`` imports it only when one of these names is first used.
"""
import functools

import numpy as np

from ..plot import heatmap
from ..trace import trace
from ..widgets import Explorer, slider
from .construction import build_search_transformer
from .task import search_reference

__all__ = ['draw_match_attention', 'hardening_explorer']


def draw_match_attention(fig, tokens, log10_harden, prefix_len=3, vocab_size=10):
    """Layer 1's match head (head 0) on ``tokens``, built with ``harden = 10 ** log10_harden``.

    Rows are query positions, columns key positions; the title gives the
    program's prediction after ``tokens`` and the plain-Python answer.
    """
    tokens = np.asarray(tokens)
    params = build_search_transformer(vocab_size, len(tokens), prefix_len,
                                      harden=10.0 ** log10_harden)
    run = trace(tokens, params)
    heatmap(fig.subplots(), run.attn[1][0], symmetric=False, colorbar=False,
            xlabel='key position', ylabel='query position',
            title=f'harden = 1e{log10_harden:g}: predicts {int(run.logits[-1].argmax())}, '
                  f'expected {search_reference(tokens, prefix_len)}')
    return fig


def hardening_explorer(tokens, prefix_len=3, vocab_size=10, size=(4.4, 4.0)):
    """``draw_match_attention`` with a slider over log10(harden) = 0, 1, ..., 8.

    ``.widget()`` gives the live slider, ``.player()`` its kernel-free twin; both
    draw with the same function.
    """
    draw = functools.partial(draw_match_attention, tokens=tokens, prefix_len=prefix_len,
                             vocab_size=vocab_size)
    return Explorer(draw, size=size, log10_harden=slider(0, 8, 1, value=0))
