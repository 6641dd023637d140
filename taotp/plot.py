"""Every figure of the book, at a fixed size, with labelled axes.

Functions return a ``matplotlib.figure.Figure`` built without pyplot, so a cell
that ends with ``taotp.plot.attention(...)`` shows the picture exactly once and
its stored text (``<Figure size ...>``) never changes.  ``animate`` turns a
parameter sweep into a kernel-free HTML player for the static book.
"""
import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.figure import Figure

CMAP = 'RdBu_r'


def _enable_inline_images():
    """Inside a Jupyter kernel, make ``Figure`` objects display as PNG images.

    ``%matplotlib inline`` registers the image formatter for figures; our figures
    are never handed to pyplot, so each one is shown once, by the cell that
    returns it.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and 'IPKernelApp' in shell.config:
        shell.run_line_magic('matplotlib', 'inline')


_enable_inline_images()


def _labels(tokens, detok=None):
    """Tick labels 'position:token' (the token decoded by ``detok`` if given)."""
    if tokens is None:
        return None
    return [f'{i}:{detok(t) if detok else t}' for i, t in enumerate(np.asarray(tokens).tolist())]


def _heatmap(ax, matrix, title=None, xlabel=None, ylabel=None, xticks=None, yticks=None,
             symmetric=True, colorbar=True, vmax=None):
    matrix = np.asarray(matrix, dtype=float)
    if symmetric:
        vmax = vmax or (np.abs(matrix).max() or 1.0)
        im = ax.imshow(matrix, cmap=CMAP, vmin=-vmax, vmax=vmax, aspect='auto')
    else:
        im = ax.imshow(matrix, cmap='viridis', vmin=0, vmax=vmax or 1.0, aspect='auto')
    for ticks, setter, rot in ((xticks, ax.set_xticks, 90), (yticks, ax.set_yticks, 0)):
        if ticks is not None:
            setter(range(len(ticks)), ticks, rotation=rot, fontsize=7)
    if title:
        ax.set_title(title, fontsize=9)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return im


def attention(weights, tokens=None, detok=None, title='attention', size=(3.2, 3.0)):
    """Heatmaps of one layer's attention, one panel per head.

    ``weights``: (n_heads, n, n) or (n, n); rows are queries, columns keys.
    """
    weights = np.asarray(weights)
    if weights.ndim == 2:
        weights = weights[None]
    n_heads = len(weights)
    fig = Figure(figsize=(size[0] * n_heads, size[1]), layout='constrained')
    axes = np.atleast_1d(fig.subplots(1, n_heads))
    labels = _labels(tokens, detok)
    for h, ax in enumerate(axes):
        _heatmap(ax, weights[h], title=f'{title}, head {h}' if n_heads > 1 else title,
                 xlabel='key (position:token)', ylabel='query (position:token)' if h == 0 else None,
                 xticks=labels, yticks=labels, symmetric=False,
                 colorbar=h == n_heads - 1)
    return fig


def residual(x, labels=None, tokens=None, detok=None, title='residual stream',
             size=(7.0, 3.2)):
    """Heatmap of a residual stream (n, d_model): positions down, labelled dims across."""
    x = np.asarray(x)
    fig = Figure(figsize=size, layout='constrained')
    ax = fig.subplots()
    _heatmap(ax, x, title=title, xlabel='residual dimension', ylabel='position:token',
             xticks=list(labels) if labels is not None else None, yticks=_labels(tokens, detok))
    return fig


def circle(points, labels=None, title='embeddings', size=(4.0, 4.0)):
    """Points on a circle, each labelled; 3-D points on the LN circle are drawn in its plane."""
    points = np.asarray(points, dtype=float)
    if points.shape[1] == 3:  # coordinates in the plane perpendicular to (1, 1, 1)
        e1 = np.array([1.0, -1.0, 0.0]) / 2 ** 0.5
        e2 = np.array([1.0, 1.0, -2.0]) / 6 ** 0.5
        points = np.stack([points @ e1, points @ e2], axis=1)
    fig = Figure(figsize=size, layout='constrained')
    ax = fig.subplots()
    radius = np.linalg.norm(points, axis=1).max()
    angles = np.linspace(0, 2 * np.pi, 200)
    ax.plot(radius * np.cos(angles), radius * np.sin(angles), color='0.85', lw=1)
    ax.scatter(points[:, 0], points[:, 1], s=25, zorder=3)
    for i, (px, py) in enumerate(points):
        text = labels[i] if labels is not None else str(i)
        ha = 'left' if px > 0.2 * radius else 'right' if px < -0.2 * radius else 'center'
        ax.annotate(text, (px, py), xytext=(1.08 * px, 1.1 * py), ha=ha, va='center', fontsize=8)
    ax.set_aspect('equal')
    lim = 1.3 * radius
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_xlabel('first coordinate in the plane')
    ax.set_ylabel('second coordinate')
    ax.set_title(title, fontsize=10)
    return fig


def bars(names, values, title='', ylabel='', size=(6.0, 3.0), log=False):
    """A labelled bar chart (parameter breakdowns and the like)."""
    fig = Figure(figsize=size, layout='constrained')
    ax = fig.subplots()
    ax.bar(range(len(values)), values)
    ax.set_xticks(range(len(names)), names, rotation=30, ha='right', fontsize=8)
    if log:
        ax.set_yscale('log')
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    return fig


def animate(draw, frames, size=(6.0, 3.5), interval=400):
    """A kernel-free slider: ``draw(fig, frame)`` redraws ``fig`` for each frame value.

    Returns an ``IPython.display.HTML`` player (frames embedded as PNGs), the
    static-book twin of an ipywidgets slider.  Tag its cell ``nbval-ignore-output``
    because the player's element ids are random.
    """
    from IPython.display import HTML
    fig = Figure(figsize=size, layout='constrained')
    frames = list(frames)

    def update(i):
        fig.clear()
        draw(fig, frames[i])
        return []

    anim = FuncAnimation(fig, update, frames=len(frames), interval=interval, blit=False)
    return HTML(anim.to_jshtml(default_mode='once'))
