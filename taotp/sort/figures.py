"""Chapter 5's figures, each one ``draw_*(fig, ...)`` function.

Each draws on a matplotlib figure it is given (``taotp.plot.figure`` or the
frames of ``taotp.widgets.Explorer``), so this module loads no matplotlib by
itself.
"""
import numpy as np

from ..decoding import decode
from ..trace import trace
from .sorting import build_sort_transformer, nextpoint, powerpoints


def draw_powerpoints(fig, n=8):
    """The powerpoints ``p_i`` (keys) and next points ``q_i`` (queries) on a line."""
    p = powerpoints(n)
    q = nextpoint(p)
    ax = fig.subplots()
    ax.scatter(p, np.zeros(n), label='p_i (keys)', zorder=3)
    ax.scatter(q[:-2], np.zeros(n - 2), marker='x', color='C3', label='q_i (queries, i < n-2)')
    for i, x in enumerate(p):
        ax.annotate(str(i), (x, 0), xytext=(x, 0.25), ha='center', fontsize=8)
    ax.set_yticks([])
    ax.set_ylim(-0.6, 0.6)
    ax.set_xlabel('position on the line, stretched to [0, pi]')
    ax.set_title(f'Powerpoints in 1-D (n = {n}): every gap is half the previous one',
                 fontsize=10)
    ax.legend(loc='lower left', fontsize=8)


def draw_sort_run(fig, length, n=28, seed=11):
    """Attention of the Sort program while it sorts ``length`` seeded numbers below ``n``."""
    from .. import plot
    program = build_sort_transformer(n, 2 * n)
    numbers = np.random.default_rng(seed).permutation(np.arange(1, n))[:length]
    run = decode(list(numbers) + [0], program, max_steps=length)
    fed = run[:-1]
    ticks = [f'{i}:{t}' for i, t in enumerate(fed.tolist())]
    plot.heatmap(fig.subplots(), trace(fed, program).attn[0][0], symmetric=False,
                 xticks=ticks, yticks=ticks, xlabel='key (position:token)',
                 ylabel='query (position:token)',
                 title=f'sorting {length} numbers: {run[length + 1:].tolist()}')
