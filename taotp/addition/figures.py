"""Chapter 6's figures, each one ``draw_*(fig, ...)`` function.

Each draws on a matplotlib figure it is given (``taotp.plot.figure`` or the
frames of ``taotp.widgets.Explorer``), so this module loads no matplotlib by
itself.
"""
import numpy as np

from ..decoding import decode
from ..model import layer_norm, scalar_mlp
from ..trace import trace
from .additive import additive_fit
from .data import addition_prompts, addition_text
from .mlp import build_MLP, mlp_apply, mlp_keys, spike
from .programs import build_decimal_addition_transformer

EXAMPLES = {1: (7, 8), 2: (45, 78), 3: (906, 187)}   # one sum per digit count, with carries


def draw_additive_tables(fig):
    """(i + j) mod 10 beside the argmax of the best table x_i + y_j."""
    table = (np.arange(10)[:, None] + np.arange(10)) % 10
    best = additive_fit(np.eye(10)[table])['fit'].argmax(-1)
    for ax, grid, title in zip(fig.subplots(1, 2), [table, best],
                               ['(i + j) mod 10: the target', 'argmax of the best x_i + y_j']):
        ax.imshow(grid, cmap='tab10', vmin=-0.5, vmax=9.5)
        for (r, c), v in np.ndenumerate(grid):
            ax.text(c, r, str(v), ha='center', va='center', fontsize=7, color='white')
        ax.set(title=title, xlabel='second digit j', ylabel='first digit i',
               xticks=range(10), yticks=range(10))


def draw_spike(fig):
    """The three ReLUs of Lemma 6.1 and their sum."""
    M1, b1, M2, b2 = spike(0.0, 1.0)
    t = np.linspace(-2.5, 2.5, 501)
    parts = scalar_mlp(t, M1, b1, np.diag(M2[:, 0]), np.zeros(3))   # each ReLU's share
    ax = fig.subplots()
    for k, label in enumerate(['relu(t + 1)', '-2 relu(t)', 'relu(t - 1)']):
        ax.plot(t, parts[:, k], lw=1, ls='--', label=label)
    ax.plot(t, parts.sum(1) + b2[0], lw=2.5, color='k', label='sum: the spike')
    ax.set(xlabel='t', ylabel='output', title='three ReLUs make a spike (Lemma 6.1)')
    ax.legend(fontsize=8)


def draw_build_mlp(fig, xs, ys):
    """``build_MLP(xs, ys)`` on a fine grid, with the points it must hit."""
    weights = build_MLP(xs, ys)
    grid = np.linspace(min(xs) - 0.5, max(xs) + 0.5, 2001)
    ax = fig.subplots()
    ax.plot(grid, mlp_apply(weights, grid)[:, 0], lw=1, label='MLP(x) from build_MLP')
    ax.scatter(xs, ys, color='C3', zorder=3, label='the set S and the wanted values')
    ax.set(xlabel='x', ylabel='MLP(x)', title='exact on S, spikes in between')
    ax.legend(fontsize=8)


def draw_keys(fig, sizes=(1, 2, 3)):
    """The 1-digit adder's MLP keys by answer position, and the gaps for each digit count."""
    adder = build_decimal_addition_transformer(1)
    ax, gaps_ax = fig.subplots(1, 2, width_ratios=[3, 2])
    for row, t in enumerate((3, 4)):                         # the tens, then the units digit
        pos = adder['pos_emb'][t, 4:]
        keys = [layer_norm(np.concatenate([[s / 100 + pos[0], 1, 0, 0], pos]))[0]
                for s in range(19)]
        ax.scatter(keys, np.full(19, row), s=14)
    ax.set(yticks=[0, 1], yticklabels=['tens', 'units'], ylim=(-0.5, 1.5),
           xlabel='MLP key (layer-normed coordinate 0)',
           title=f'1-digit adder: {len(mlp_keys(adder))} keys (19 sums x 2 positions)')
    for n in sizes:
        gaps = np.sort(np.diff(mlp_keys(build_decimal_addition_transformer(n))))
        gaps_ax.plot(np.linspace(0, 1, len(gaps)), gaps, label=f'{n} digit(s)')
    gaps_ax.set(yscale='log', xlabel='gaps, sorted (fraction of all)', ylabel='gap between keys',
                title='separation of neighbouring keys')
    gaps_ax.legend(fontsize=8)


def draw_adder_heads(fig, n_digits):
    """Three heads of the n-digit adder (first digit head, first of b, cleanup) on one sum."""
    from .. import plot
    a, b = EXAMPLES[n_digits]
    adder = build_decimal_addition_transformer(n_digits)
    run = decode(addition_prompts(n_digits, [[a, b]])[0][0], adder, max_steps=n_digits + 1)
    fed = run[:-1]
    weights = trace(fed, adder).attn[0]
    ticks = [addition_text(t) for t in fed]
    for ax, h in zip(fig.subplots(1, 3), [0, n_digits, 2 * n_digits]):
        plot.heatmap(ax, weights[h], symmetric=False, colorbar=False, xticks=ticks,
                     yticks=ticks, title=f'head {h}')
    fig.suptitle(f'{n_digits} digit(s): {a} + {b} = '
                 f'{"".join(map(str, run[-n_digits - 1:]))}', fontsize=10)
