"""Figures of Chapter 11, each one ``draw_*(fig, ...)`` function (loads matplotlib).

Each draws into a figure made by ``taotp.plot.figure(size)``; KL curves use
Chapter 10's ``taotp.selective.draw_kl``.
"""
import numpy as np

SMALL = 7


def draw_maps(fig, rows, layers=(0, 1, 2), crop=40, titles=None):
    """A grid of attention maps: one row per model, one column per layer.

    ``rows``: a list of ``(name, maps)`` with ``maps[l]`` an ``(n, n)`` array
    (head-averaged); the first ``crop`` queries and keys are shown, with the
    square root of the weights (faint structure stays visible).
    """
    axes = np.atleast_2d(fig.subplots(len(rows), len(layers)))
    for r, (name, maps) in enumerate(rows):
        for c, layer in enumerate(layers):
            ax = axes[r, c]
            ax.imshow(np.sqrt(np.clip(maps[layer][:crop, :crop], 0, 1)), cmap='viridis',
                      vmin=0, vmax=1, interpolation='nearest')
            ax.set_xticks([0, crop // 2, crop - 1])
            ax.set_yticks([0, crop // 2, crop - 1])
            ax.tick_params(labelsize=SMALL - 1, length=2)
            if r == 0:
                ax.set_title((titles or [f'layer {l + 1}' for l in layers])[c], fontsize=SMALL + 1)
            if c == 0:
                ax.set_ylabel(name, fontsize=SMALL + 1)


def draw_grids(fig, panels, digits, operands, box=None):
    """Exact-match heatmaps (%) side by side: ``panels`` is a list of ``(title, grid, outline)``.

    ``grid`` is (digits, operands) with NaN for cells outside a model's ID
    tables (drawn grey); ``outline`` is ``None`` or a boolean array of the same
    shape whose border is drawn in white (a training box or a capacity).
    """
    axes = np.atleast_1d(fig.subplots(1, len(panels), sharey=True))
    digits, operands = np.asarray(digits), np.asarray(operands)
    extent = (operands[0] - 0.5, operands[-1] + 0.5, digits[0] - 0.5, digits[-1] + 0.5)
    for ax, (title, grid, outline) in zip(axes, panels):
        grid = np.asarray(grid, dtype=float)
        ax.set_facecolor('0.8')
        im = ax.imshow(np.ma.masked_invalid(grid), origin='lower', cmap='viridis', vmin=0,
                       vmax=100, aspect='auto', extent=extent, interpolation='nearest')
        if outline is not None:
            _outline(ax, np.asarray(outline, dtype=bool), digits, operands)
        for i, d in enumerate(digits):
            for j, m in enumerate(operands):
                if np.isfinite(grid[i, j]) and len(digits) * len(operands) <= 260:
                    v = grid[i, j]
                    ax.text(m, d, f'{v:.0f}', ha='center', va='center', fontsize=4.5,
                            color='k' if v > 60 else 'w')
        ax.set_xlabel('operands', fontsize=SMALL + 1)
        ax.set_title(title, fontsize=SMALL + 1)
        ax.tick_params(labelsize=SMALL)
    axes[0].set_ylabel('digits per operand', fontsize=SMALL + 1)
    fig.colorbar(im, ax=list(axes), fraction=0.03, pad=0.02)


def _outline(ax, inside, digits, operands):
    """White border around the True cells of ``inside`` (edges between inside and outside)."""
    n_d, n_o = inside.shape
    pad = np.zeros((n_d + 2, n_o + 2), dtype=bool)
    pad[1:-1, 1:-1] = inside
    for i in range(n_d + 1):
        for j in range(n_o + 1):
            if pad[i, j + 1] != pad[i + 1, j + 1] and 0 <= j < n_o:      # horizontal edge
                y = digits[0] - 0.5 + i
                ax.plot([operands[j] - 0.5, operands[j] + 0.5], [y, y], color='w', lw=1.5)
            if pad[i + 1, j] != pad[i + 1, j + 1] and 0 <= i < n_d:      # vertical edge
                x = operands[0] - 0.5 + j
                ax.plot([x, x], [digits[i] - 0.5, digits[i] + 0.5], color='w', lw=1.5)


def draw_heads(fig, rows, tokens=None, cutoff=0.01):
    """Averaged attention of four heads per row (Fig. 7a style): weights below ``cutoff`` black.

    ``rows``: a list of ``(name, maps (4, n, n))``.
    """
    axes = np.atleast_2d(fig.subplots(len(rows), 4))
    for r, (name, maps) in enumerate(rows):
        for h in range(4):
            ax = axes[r, h]
            shown = np.where(maps[h] >= cutoff, maps[h], np.nan)
            ax.set_facecolor('k')
            ax.imshow(np.ma.masked_invalid(np.sqrt(shown)), cmap='viridis', vmin=0, vmax=1,
                      interpolation='nearest')
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0:
                ax.set_title(f'head {h + 1}', fontsize=SMALL + 1)
            if h == 0:
                ax.set_ylabel(name, fontsize=SMALL + 1)


def draw_losses(fig, curves, title='training loss'):
    """Training-loss curves: ``curves`` maps a name to ``(steps, losses)``."""
    ax = fig.subplots()
    for name, (steps, losses) in curves.items():
        ax.plot(steps, losses, lw=1, label=name)
    ax.set_yscale('log')
    ax.set_xlabel('step', fontsize=SMALL + 1)
    ax.set_title(title, fontsize=SMALL + 1)
    ax.legend(fontsize=SMALL)
    ax.tick_params(labelsize=SMALL)


STYLES = {'BMA': 'k-', 'ML': 'k--', 'construction, 1 head': 'C3:', 'no selection': '-.',
          'eq. (1), beta = 100': 'm--'}


def style(name):
    """A fixed line style per kind of curve, so every panel reads the same way.

    References: black (BMA solid, ML dashed), the construction red (one head
    dotted), the paper's eq. (1) magenta dashes, grey dash-dots for every lag
    weighed equally (``no selection``);
    trained standard models blue (green: four times the steps), disentangled
    orange, one head dotted.
    """
    if name in STYLES:
        return STYLES[name]
    if name.startswith('construction'):
        return 'C3-'
    colour = 'C2' if name.endswith(' x4') else {'std': 'C0', 'dis': 'C1'}[name.split(' ')[1]]
    return colour + (':' if '[1,1,1]' in name else '-')


def draw_kl_grid(fig, panels, ylim=(1e-5, 1.0), cols=2, colour_each=False):
    """KL against position, one panel per lag set, one legend for all.

    ``panels``: a list of ``(title, kmax, {name: curve})``; names starting with
    ``trained`` are trained models, the others references (see ``style``).
    ``colour_each``: give every trained curve its own colour (models of one
    kind compared with each other, as in the paper's Fig. 6).
    """
    trained = iter(f'C{i}' for i in (0, 1, 2, 4, 5, 6, 8, 9))
    rows = -(-len(panels) // cols)
    axes = np.atleast_1d(fig.subplots(rows, cols, sharex=True, sharey=True)).ravel()
    seen = {}
    for ax, (title, kmax, curves) in zip(axes, panels):
        for name, curve in curves.items():
            n = np.arange(1, len(curve) + 1)
            fmt = style(name)
            colour = {'color': '0.55'} if name == 'no selection' else {}
            if colour_each and name.startswith('trained'):
                fmt = '-'
                colour = {'color': seen[name].get_color() if name in seen else next(trained)}
            line, = ax.semilogy(n[kmax - 1:], np.maximum(np.asarray(curve)[kmax - 1:], 1e-12),
                                fmt, lw=1, **colour)
            seen.setdefault(name, line)
        ax.set_ylim(*ylim)
        ax.set_title(title, fontsize=SMALL + 1)
        ax.tick_params(labelsize=SMALL)
    for ax in axes[len(panels):]:
        ax.axis('off')
    for ax in axes[(rows - 1) * cols:]:
        ax.set_xlabel('tokens seen', fontsize=SMALL + 1)
    for ax in axes[::cols]:
        ax.set_ylabel('mean KL', fontsize=SMALL + 1)
    fig.legend(list(seen.values()), list(seen), fontsize=SMALL, loc='outside lower center',
               ncol=4, frameon=False)
