"""Every figure of the book, at a fixed size, with labelled axes.

Functions return a ``matplotlib.figure.Figure`` built without pyplot, so a cell
that ends with ``taotp.plot.attention(...)`` shows the picture exactly once and
its stored text (``<Figure size ...>``) never changes.  Inside a Jupyter kernel,
importing this module registers a PNG display for such figures (no backend
switch, no magic); the images are palette PNGs at ``DPI`` dots per inch, which
keeps the stored notebooks small.  ``animate`` turns a parameter sweep into a
kernel-free HTML player for the static book.
"""
import base64
import hashlib
import io
import json

import numpy as np
from matplotlib.figure import Figure

CMAP = 'RdBu_r'
DPI = 80            # figures in notebooks and in the HTML book
FRAME_DPI = 64      # frames of kernel-free players
COLOURS = 192       # palette size of the stored PNGs


def figure(size=(6.0, 3.5), dpi=DPI):
    """A new constrained-layout figure of ``size`` inches (no pyplot involved)."""
    return Figure(figsize=size, layout='constrained', dpi=dpi)


def png(fig, dpi=DPI):
    """The figure as palette-PNG bytes (a quarter of the size of a full-colour PNG)."""
    from PIL import Image
    buffer = io.BytesIO()
    fig.savefig(buffer, format='png', dpi=dpi, facecolor='white')
    image = Image.open(io.BytesIO(buffer.getvalue())).convert('RGB')
    out = io.BytesIO()
    image.quantize(COLOURS, method=Image.Quantize.MEDIANCUT).save(out, format='png', optimize=True)
    return out.getvalue()


def _register_png_display():
    """Inside a Jupyter kernel, display ``Figure`` objects as (palette) PNG images."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and 'IPKernelApp' in shell.config:
        try:   # ipywidgets imports this later, and it would install its own PNG formatter
            import matplotlib_inline.backend_inline  # noqa: F401
        except ImportError:
            pass
        shell.display_formatter.formatters['image/png'].for_type(Figure, png)


_register_png_display()


def _labels(tokens, detok=None):
    """Tick labels 'position:token' (the token decoded by ``detok`` if given)."""
    if tokens is None:
        return None
    return [f'{i}:{detok(t) if detok else t}' for i, t in enumerate(np.asarray(tokens).tolist())]


def heatmap(ax, matrix, title=None, xlabel=None, ylabel=None, xticks=None, yticks=None,
            symmetric=True, colorbar=True, vmax=None):
    """Draw ``matrix`` on ``ax``: a red-blue map around 0, or viridis on [0, vmax]."""
    matrix = np.asarray(matrix, dtype=float)
    if symmetric:
        vmax = vmax or (np.abs(matrix).max() or 1.0)
        im = ax.imshow(matrix, cmap=CMAP, vmin=-vmax, vmax=vmax, aspect='auto',
                       interpolation='nearest')
    else:
        im = ax.imshow(matrix, cmap='viridis', vmin=0, vmax=vmax or 1.0, aspect='auto',
                       interpolation='nearest')
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
    fig = figure((size[0] * n_heads, size[1]))
    axes = np.atleast_1d(fig.subplots(1, n_heads))
    labels = _labels(tokens, detok)
    for h, ax in enumerate(axes):
        heatmap(ax, weights[h], title=f'{title}, head {h}' if n_heads > 1 else title,
                xlabel='key (position:token)', ylabel='query (position:token)' if h == 0 else None,
                xticks=labels, yticks=labels, symmetric=False, colorbar=h == n_heads - 1)
    return fig


def residual(x, labels=None, tokens=None, detok=None, title='residual stream',
             size=(7.0, 3.2)):
    """Heatmap of a residual stream (n, d_model): positions down, labelled dims across."""
    fig = figure(size)
    heatmap(fig.subplots(), np.asarray(x), title=title, xlabel='residual dimension',
            ylabel='position:token', xticks=list(labels) if labels is not None else None,
            yticks=_labels(tokens, detok))
    return fig


def circle(points, labels=None, title='embeddings', size=(4.0, 4.0)):
    """Points on a circle, each labelled; 3-D points on the LN circle are drawn in its plane."""
    points = np.asarray(points, dtype=float)
    if points.shape[1] == 3:  # coordinates in the plane perpendicular to (1, 1, 1)
        e1 = np.array([1.0, -1.0, 0.0]) / 2 ** 0.5
        e2 = np.array([1.0, 1.0, -2.0]) / 6 ** 0.5
        points = np.stack([points @ e1, points @ e2], axis=1)
    fig = figure(size)
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
    fig = figure(size)
    ax = fig.subplots()
    ax.bar(range(len(values)), values)
    ax.set_xticks(range(len(names)), names, rotation=30, ha='right', fontsize=8)
    if log:
        ax.set_yscale('log')
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    return fig


class Player:
    """A kernel-free slider over pre-drawn frames; displays as HTML in Jupyter and the book."""

    def __init__(self, frames, labels, interval):
        self.frames, self.labels, self.interval = frames, labels, interval

    def _repr_html_(self):
        images = ['data:image/png;base64,' + base64.b64encode(f).decode() for f in self.frames]
        uid = 'taotp-player-' + hashlib.sha1(''.join(images).encode()).hexdigest()[:12]
        data = json.dumps([None] + images[1:])       # frame 0 is stored once, in the <img>
        return _PLAYER.format(uid=uid, data=data, labels=json.dumps(self.labels),
                              last=len(self.frames) - 1, first=self.labels[0],
                              interval=int(self.interval), src=images[0])

    def __repr__(self):
        return f'<kernel-free player: {len(self.frames)} frames>'


_PLAYER = '''<div class="taotp-player" id="{uid}">
<img alt="frame" style="max-width:100%" src="{src}">
<div style="display:flex;align-items:center;gap:0.5em;font-family:sans-serif;font-size:90%">
<button type="button" data-step="-1" title="previous frame">&#9664;</button>
<input type="range" min="0" max="{last}" value="0" style="flex:1" aria-label="frame">
<button type="button" data-step="1" title="next frame">&#9654;</button>
<button type="button" data-play="1" title="play or pause">play</button>
<span class="taotp-label">{first}</span></div>
<script>(function() {{
  const root = document.getElementById("{uid}"), frames = {data}, labels = {labels};
  const img = root.querySelector("img"), range = root.querySelector("input");
  frames[0] = img.src;
  const label = root.querySelector(".taotp-label"), play = root.querySelector("[data-play]");
  let timer = null;
  function show(i) {{
    i = (i + frames.length) % frames.length;
    img.src = frames[i]; range.value = i; label.textContent = labels[i];
  }}
  range.addEventListener("input", () => show(+range.value));
  root.querySelectorAll("[data-step]").forEach(b => b.addEventListener("click",
    () => show(+range.value + +b.dataset.step)));
  play.addEventListener("click", () => {{
    if (timer) {{ clearInterval(timer); timer = null; play.textContent = "play"; return; }}
    play.textContent = "pause";
    timer = setInterval(() => show(+range.value + 1), {interval});
  }});
  root.taotpShow = show;
}})();</script>
</div>'''


def animate(draw, frames, size=(6.0, 3.5), interval=400, label=None):
    """A kernel-free slider: ``draw(fig, frame)`` redraws a figure for each frame value.

    Returns a ``Player`` that shows as an HTML image player (frames embedded as
    small PNGs, a slider and buttons; no kernel, no network), the static-book
    twin of an ipywidgets slider.  ``label(frame)`` gives the text beside the
    slider (default ``str(frame)``).
    """
    frames = list(frames)
    images = []
    for value in frames:
        fig = figure(size, dpi=FRAME_DPI)
        draw(fig, value)
        images.append(png(fig, dpi=FRAME_DPI))
    return Player(images, [label(v) if label else str(v) for v in frames], interval)
