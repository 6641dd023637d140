"""The chapter's own figures, each a ``draw_*(fig, ...)`` function that returns ``fig``.

The same function serves a static figure (``draw_x(taotp.plot.figure(size), ...)``),
a live widget and its kernel-free player (``hardening_explorer``).  This module
loads matplotlib (through ``taotp.plot``); ``taotp.lookup`` imports it only when
one of these names is first used.
"""
import functools

import numpy as np

from ..decoding import last_token_argmax
from ..plot import heatmap
from ..trace import trace
from ..widgets import Explorer, slider
from .construction import with_hardening
from .tables import lookup_reference


def draw_hardening(fig, params, ks, vs, query, harden):
    """The last query's attention (heads x key positions) at factor ``harden``, drawn into ``fig``.

    The title gives the program's answer for ``query`` and its precision on the
    whole table (every key behind the prefix of ``query``).
    """
    program = with_hardening(params, harden)
    run = trace(query, program)
    weights = run.attn[0][:, -1]                                         # (heads, n)
    answer = int(np.argmax(run.logits[-1]))
    want = lookup_reference(query, ks, vs)
    prefix = np.asarray(query)[:len(query) - ks.shape[1]]
    queries = np.concatenate([np.tile(prefix, (len(ks), 1)), ks], axis=1)
    right = np.mean(last_token_argmax(queries, program) == vs)
    ax = fig.subplots()
    heatmap(ax, weights, xlabel='key position (token)', symmetric=False,
            xticks=[str(t) for t in query],
            yticks=[f'head {h} ({h} back)' for h in range(len(weights))],
            title=f'harden = {harden:.3g}: answer {answer} (want {want}); '
                  f'{right:.0%} of the table right')
    ax.tick_params(axis='x', labelrotation=0)
    return fig


def hardening_explorer(params, ks, vs, query, size=(6.0, 2.6), lo=1.0, hi=1e4, step=0.25):
    """``draw_hardening`` with a log slider over ``harden`` from ``lo`` to ``hi``.

    ``.widget()`` gives the live slider, ``.player('harden', values)`` its
    kernel-free twin; both draw with the same function.
    """
    draw = functools.partial(draw_hardening, params=params, ks=ks, vs=vs, query=query)
    return Explorer(draw, size=size, harden=slider(lo, hi, step, value=lo, log=True))


def draw_precision_sweep(fig, result, entries, vocab_sizes, d_models):
    """The book's Fig. 3.8: precision vs d_model, one panel per table size, min-max bands.

    ``result`` is ``precision_sweep(entries, vocab_sizes, d_models, ...)``.
    """
    axes = np.atleast_1d(fig.subplots(1, len(entries), sharey=True))
    for a, (ax, n) in enumerate(zip(axes, entries)):
        for b, vocab in enumerate(vocab_sizes):
            cell = result[a, b]
            if np.all(np.isnan(cell)):
                continue
            line, = ax.plot(d_models, 100 * np.nanmean(cell, axis=1), marker='o', ms=3,
                            label=f'vocab {vocab}')
            ax.fill_between(d_models, 100 * np.nanmin(cell, axis=1),
                            100 * np.nanmax(cell, axis=1), color=line.get_color(), alpha=0.2)
        ax.set_title(f'{n:,} entries', fontsize=10)
        ax.set_xlabel('d_model')
        ax.set_ylim(-3, 103)
    axes[0].set_ylabel('keys decoded right (%)')
    axes[-1].legend(fontsize=8, loc='lower right')
    return fig


def draw_word_histogram(fig, words, top=40, title='word frequencies'):
    """Counts of the ``top`` most frequent words, largest first (the book's Fig. 3.7)."""
    vocab, counts = np.unique(np.asarray(list(words)), return_counts=True)
    order = np.lexsort((vocab, -counts))[:top]
    ax = fig.subplots()
    ax.bar(range(len(order)), counts[order])
    ax.set_xticks(range(len(order)), vocab[order], rotation=90, fontsize=7)
    ax.set_ylabel('occurrences')
    ax.set_title(title, fontsize=10)
    return fig
