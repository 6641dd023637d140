"""Every figure of the book, at a fixed size, with labelled axes.

Functions return a ``matplotlib.figure.Figure`` built without pyplot, so a cell
that ends with ``taotp.plot.attention(...)`` shows the picture exactly once and
its stored text (``<Figure size ...>``) never changes.  Inside a Jupyter kernel,
importing this module registers a PNG display for such figures (no backend
switch, no magic): palette PNGs of ``COLOURS`` colours at ``DPI`` pixels per
inch, shown ``SCALE`` CSS pixels per inch wide, so a HiDPI screen gets a pixel
of its own for every pixel it shows while the stored notebooks stay small.
``animate`` turns a parameter sweep into a kernel-free HTML player for the
static book (frames at ``FRAME_DPI``, shown ``FRAME_SCALE`` pixels per inch
wide, never wider than the book's text column, so that 7-point text is at
least 10 px high in figures up to 6.5 inches wide; frames are one and a half
times the display scale, not two, to keep the notebooks within their budget).

In a kernel started with ``TAOTP_IMAGES=skip`` (the test suite sets it for the
notebooks nbval runs: nbval compares text, never pictures) figures and player
frames are built in full but not rasterized: each picture is a 1-pixel
stand-in, and a player keeps its frame count, labels and sizes.
"""
import base64
import functools
import hashlib
import io
import json
import os

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.text import Text

CMAP = 'RdBu_r'
DPI = 160           # pixels per inch of a stored figure
SCALE = 80          # CSS pixels per inch it is shown at: DPI / SCALE = 2 (HiDPI)
FRAME_DPI = 156     # pixels per inch of a player's frames: 1.5 * FRAME_SCALE (budget)
FRAME_SCALE = 104   # CSS pixels per inch a player is shown at: 7-point text is 10 px
COLUMN_PX = 676     # the book's text column at 1280 px: nothing is shown wider
COLOURS = 32        # palette size of the stored PNGs (edges drawn without antialiasing)


def figure(size=(6.0, 3.5), dpi=None):
    """A new constrained-layout figure of ``size`` inches (no pyplot involved).

    Its own ``dpi`` is the display scale (so its text, ``<Figure size WxH ...>``, gives
    the size it is shown at); ``png`` renders it at ``DPI``.
    """
    return Figure(figsize=size, layout='constrained', dpi=dpi or SCALE)


def _palette_image(fig, dpi):
    """The figure drawn without antialiasing at ``dpi``, quantized to ``COLOURS`` colours.

    At twice the display scale a HiDPI screen shows every pixel as drawn, and an
    ordinary screen shrinks the picture by two, which smooths it again; edges without
    antialiasing need few colours and compress well, so a figure at ``DPI = 2 * SCALE``
    takes about as many bytes as an antialiased one at ``SCALE``.
    """
    from PIL import Image
    buffer = io.BytesIO()
    artists = fig.findobj(lambda a: hasattr(a, 'set_antialiased') and hasattr(a, 'get_antialiased'))
    before = [a.get_antialiased() for a in artists]
    try:
        for a in artists:
            a.set_antialiased(False)
        with rc_context({'text.antialiased': False, 'lines.antialiased': False,
                         'patch.antialiased': False}):
            fig.savefig(buffer, format='png', dpi=dpi, facecolor='white')
    finally:
        for a, aa in zip(artists, before):
            a.set_antialiased(aa)
    image = Image.open(io.BytesIO(buffer.getvalue())).convert('RGB')
    return image.quantize(COLOURS, method=Image.Quantize.MEDIANCUT)


@functools.lru_cache(maxsize=1)
def _stand_in():
    """A 1-pixel white PNG: what a picture is in a kernel that skips images."""
    from PIL import Image
    out = io.BytesIO()
    Image.new('L', (1, 1), 255).save(out, format='png')
    return out.getvalue()


_SKIP_IMAGES = [False]      # set when the display is registered in a kernel (module doc)


def png(fig, dpi=None):
    """The figure as palette-PNG bytes at ``dpi`` (default ``DPI``), see ``_palette_image``."""
    if _SKIP_IMAGES[0]:
        return _stand_in()
    out = io.BytesIO()
    _palette_image(fig, dpi or DPI).save(out, format='png', optimize=True)
    return out.getvalue()


def frame(fig):
    """A player's frame at ``FRAME_DPI``: ``(mime type, bytes)``, lossless WebP if Pillow can.

    WebP keeps every pixel of the palette image in about two thirds of the bytes of a
    PNG; players show frames in an ``<img>``, which every current browser decodes.
    """
    if _SKIP_IMAGES[0]:
        return 'image/png', _stand_in()
    from PIL import features
    image, out = _palette_image(fig, FRAME_DPI), io.BytesIO()
    if features.check('webp'):
        image.save(out, format='webp', lossless=True, method=4)
        return 'image/webp', out.getvalue()
    image.save(out, format='png', optimize=True)
    return 'image/png', out.getvalue()


def display_width(fig, scale=None):
    """The CSS width (px) a figure is shown at: ``scale`` px per inch, at most the column."""
    return int(min(round(fig.get_figwidth() * (scale or SCALE)), COLUMN_PX))


def _png_with_size(fig):
    """What Jupyter displays for a ``Figure``: the PNG and the width to show it at."""
    return png(fig), {'width': display_width(fig)}


def smallest_text_pt(fig):
    """The smallest font size (points) of any visible text of a drawn figure."""
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=None)


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
        shell.display_formatter.formatters['image/png'].for_type(Figure, _png_with_size)
        _SKIP_IMAGES[0] = os.environ.get('TAOTP_IMAGES') == 'skip'


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


PLAYER_NOTE = ('Kernel-free player: frames drawn when the notebook was run. It steps in '
               'the HTML book, on Colab, and in Jupyter once the notebook is trusted or this '
               'cell is run again; the live widget (every control) needs a running kernel.')


class Player:
    """A kernel-free slider over pre-drawn frames; displays as HTML in Jupyter and the book.

    ``frames``: ``(mime type, image bytes)`` pairs, as ``frame`` makes them.

    ``width_in`` is the figures' width in inches and ``text_pt`` their smallest font
    size: the player is shown ``FRAME_SCALE`` px per inch wide (at most ``COLUMN_PX``),
    and the page can tell how large its smallest text is.
    """

    def __init__(self, frames, labels, interval, width_in=6.0, text_pt=None):
        self.frames, self.labels, self.interval = frames, labels, interval
        self.width_in, self.text_pt = width_in, text_pt

    def _repr_html_(self):
        images = [f'data:{mime};base64,' + base64.b64encode(data).decode()
                  for mime, data in self.frames]
        uid = 'taotp-player-' + hashlib.sha1(''.join(images).encode()).hexdigest()[:12]
        data = json.dumps([None] + images[1:])       # frame 0 is stored once, in the <img>
        width = int(min(round(self.width_in * FRAME_SCALE), COLUMN_PX))
        return _PLAYER.format(uid=uid, data=data, labels=json.dumps(self.labels),
                              last=len(self.frames) - 1, first=self.labels[0],
                              interval=int(self.interval), src=images[0], note=PLAYER_NOTE,
                              width=width, width_in=f'{self.width_in:g}',
                              text_pt=f'{self.text_pt:g}' if self.text_pt else '')

    def __repr__(self):
        return f'<kernel-free player: {len(self.frames)} frames>'


_PLAYER = '''<p class="taotp-player-note">{note}</p>
<div class="taotp-player" id="{uid}" data-width-in="{width_in}" data-text-pt="{text_pt}">
<img alt="frame" width="{width}" style="max-width:100%;height:auto" src="{src}">
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
    images, smallest = [], []
    for value in frames:
        fig = figure(size, dpi=FRAME_SCALE)
        draw(fig, value)
        images.append(frame(fig))
        smallest.append(smallest_text_pt(fig))
    text_pt = min((t for t in smallest if t), default=None)
    return Player(images, [label(v) if label else str(v) for v in frames], interval,
                  width_in=size[0], text_pt=text_pt)
