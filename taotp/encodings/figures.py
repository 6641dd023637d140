"""The figures of Chapter 7, each one ``draw_*(fig, ...)`` function (matplotlib loads here).

Every function draws into a figure made by ``taotp.plot.figure`` (or by
``taotp.widgets.Explorer``, which uses the same ``draw_explorer`` for the live
widget and for its kernel-free player).
"""
import numpy as np
from matplotlib.ticker import MaxNLocator

from ..plot import heatmap
from .codes import random_sign_encoding
from .measures import distinguishability, padding_dimension
from .rotation import random_rotation_embedding, uniform_rotation_embedding
from .sinusoidal import og_angles, og_embedding

# The encodings the explorer offers: name -> (positions, dims) -> table (seeded).
EXPLORER_ENCODINGS = {
    'random rotation': lambda q, d: random_rotation_embedding(q, d, np.random.default_rng(0)),
    'uniform angles': uniform_rotation_embedding,
    'random sign': lambda q, d: random_sign_encoding(q, d, np.random.default_rng(0)),
    'sinusoidal (OG)': og_embedding,
}


def _integer_ticks(ax):
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.tick_params(labelsize=7)


def draw_heatmaps(fig, encodings, titles, ylabel='position', cols=None):
    """Encodings (each (q, d)) side by side: rows are positions or items, columns dims.

    Panels that share one colour scale get one colour bar at the end of each row.
    """
    encodings = [np.asarray(e, dtype=float) for e in encodings]
    cols = cols or len(encodings)
    rows = -(-len(encodings) // cols)
    scales = [float(np.abs(e).max()) or 1.0 for e in encodings]
    shared = len(set(scales)) == 1
    axes = np.atleast_1d(fig.subplots(rows, cols)).ravel()
    for i, ax in enumerate(axes):
        if i >= len(encodings):
            ax.set_axis_off()
            continue
        last_in_row = i % cols == cols - 1 or i == len(encodings) - 1
        im = heatmap(ax, encodings[i], title=titles[i], xlabel='dimension',
                          ylabel=ylabel if i % cols == 0 else None, vmax=scales[i],
                          colorbar=not shared or last_in_row)
        im.set_interpolation('nearest')
        _integer_ticks(ax)


def draw_angles(fig, d=1024, shown=10):
    """Left: the d/2 sinusoidal angles; right: exp(i theta_k) on the unit circle for k < shown."""
    angles = og_angles(d)
    left, right = fig.subplots(1, 2)
    left.plot(angles, lw=1.5)
    left.set_xlabel('angle index k')
    left.set_ylabel('angle (radians per position)')
    left.set_title(f'sinusoidal angles, d = {d} ({d // 2} angles)', fontsize=9)
    circle = np.linspace(0, 2 * np.pi, 200)
    right.plot(np.cos(circle), np.sin(circle), color='0.85', lw=1)
    right.scatter(np.cos(angles[:shown]), np.sin(angles[:shown]), s=20, zorder=3)
    for k, offset in ((0, (8, -10)), (shown - 1, (-30, 8))):
        right.annotate(f'k={k}', (np.cos(angles[k]), np.sin(angles[k])), fontsize=8,
                       xytext=offset, textcoords='offset points')
    right.set_aspect('equal')
    right.set_title(f'exp(i theta_k), k < {shown}: all within '
                    f'{angles[0] - angles[shown - 1]:.2f} rad', fontsize=9)


def draw_distinguishability(fig, curves, claim_dims=10):
    """D against dims (log scale) from ``measures.distinguishability_curves``.

    The sinusoidal curve, the random rotation median with its 10-90 % band, the
    bound for any encoding, the 0.99 level and the dimension the book names.
    """
    ax = fig.subplots()
    ax.plot(curves['dims_og'], curves['og'], label='sinusoidal (OG)')
    low, mid, high = np.percentile(curves['random'], [10, 50, 90], axis=1)
    seeds = curves['random'].shape[1]
    ax.plot(curves['dims_random'], mid, label=f'random rotation, median of {seeds} seeds')
    ax.fill_between(curves['dims_random'], low, high, alpha=0.3,
                    label='random rotation, 10-90 %')
    ax.plot(curves['dims_og'], curves['bound'], ':', color='0.3',
            label='upper bound for any encoding')
    ax.axhline(0.99, color='0.6', lw=0.8)
    ax.axvline(claim_dims, color='0.6', lw=0.8, ls='--')
    ax.set_xscale('log', base=2)
    ax.set_xlabel('dimensions d (log scale)')
    ax.set_ylabel('distinguishability D')
    ax.set_title(f'{curves["q"]} positions', fontsize=10)
    ax.legend(fontsize=7, loc='lower right')


def draw_explorer(fig, encoding='random rotation', positions=64, dims=128):
    """The sinusoidal encoding beside another one, each titled with its D and padding dimension."""
    pair = {'sinusoidal': og_embedding(positions, dims),
            encoding: EXPLORER_ENCODINGS[encoding](positions, dims)}
    axes = fig.subplots(1, 2, sharey=True)
    for ax, (name, table) in zip(axes, pair.items()):
        im = heatmap(ax, table, xlabel='dimension', colorbar=False, vmax=1.0,
                          ylabel='position' if ax is axes[0] else None,
                          title=f'{name}, d = {dims}: D = {distinguishability(table):.2f}, '
                                f'padding {padding_dimension(table)}')
        im.set_interpolation('nearest')
        ax.title.set_fontsize(8)
        _integer_ticks(ax)
