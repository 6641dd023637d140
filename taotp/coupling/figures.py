"""The figures of Chapter 9, each one ``draw_*(fig, ...)`` function (they load matplotlib).

``heads_explorer()`` and ``step_explorer()`` turn two of them into a live
widget and its kernel-free twin (``taotp.widgets.Explorer``).
"""
import numpy as np
from matplotlib.patches import Rectangle

from .. import plot
from ..widgets import Explorer, slider
from .adder import HEADS, build_multi_operand_adder
from .digit_mlp import trapezoid
from .formats import TOKEN_ID, VOCAB, random_operands

WORKED = (57, 48, 96)


def draw_ids(fig, tokens, levels, names=None, title='coupled position IDs'):
    """The ID table: one row per level, one column per token, equal colours for equal IDs."""
    levels = np.asarray(levels, dtype=float).reshape(len(levels), -1)
    names = names or [f'level {i + 1}' for i in range(len(levels))]
    ax = fig.subplots()
    ax.imshow(levels, cmap='tab20', vmin=0, vmax=20, aspect='auto', interpolation='nearest')
    for (r, c), v in np.ndenumerate(levels):
        ax.text(c, r, str(int(v)), ha='center', va='center', fontsize=7)
    ax.set_xticks(range(len(tokens)), list(tokens), fontsize=8)
    ax.set_yticks(range(len(levels)), names, fontsize=8)
    ax.set_title(title, fontsize=9)


def plot_ids(tokens, levels, names=None, title='coupled position IDs'):
    """``draw_ids`` on a new figure sized to the sequence."""
    fig = plot.figure((0.3 * len(tokens) + 1.2, 0.45 * len(levels) + 0.9))
    draw_ids(fig, tokens, levels, names, title)
    return fig


def draw_trapezoids(fig):
    """The ten digit units f_k(g), with the bands where g can land shaded."""
    g = np.linspace(-1, 21, 881)
    ax = fig.subplots()
    for k in range(10):
        ax.plot(g, trapezoid(k, g), lw=1.2, label=f'$f_{k}$')
    for v in range(20):        # g lies in [S + c + 0.11, S + c + 0.21]
        ax.axvspan(v + 0.11, v + 0.21, color='0.75', lw=0)
    ax.set_xlabel('g')
    ax.set_ylabel('SUM_k')
    ax.set_ylim(-0.05, 1.35)
    ax.legend(ncol=10, fontsize=7, loc='upper center')
    ax.set_title('digit units: exactly one is 1 on every grey band (where g can land)',
                 fontsize=9)


def draw_attention(fig, weights, tokens=None, sqrt=False, title=None):
    """The four heads' weights (4, n, n), one panel each: rows are queries, columns keys.

    ``tokens`` (one character each) label both axes; ``sqrt`` shows the square
    roots of the weights, so faint ones show.
    """
    axes = fig.subplots(1, len(weights))
    for h, ax in enumerate(axes):
        shown = np.sqrt(weights[h]) if sqrt else weights[h]
        ax.imshow(shown, cmap='viridis', vmin=0, vmax=1,   # long sequences: average pixels
                  interpolation='nearest' if len(shown) <= 100 else 'antialiased')
        ax.set_title(f'{h + 1}: {HEADS[h]}', fontsize=8)
        if tokens is None:
            ax.set_xticks([])
            ax.set_yticks([])
        else:
            ax.set_xticks(range(len(tokens)), tokens, fontsize=5)
            ax.set_yticks(range(len(tokens)), tokens, fontsize=5)
            ax.tick_params(length=0, pad=1)
    if title:
        fig.suptitle(title, fontsize=9)


def draw_heads(fig, operands=3, digits=2, lam=20.0):
    """The four heads (square-rooted weights) of an adder on a seeded random problem.

    The adder is sized for the problem and built with ``lam``; the title says
    whether the teacher-forced response is exact.
    """
    model = build_multi_operand_adder(max(digits, 1), max(operands, 1), lam=lam)
    ops = random_operands(operands, digits, rng=np.random.default_rng(100 * operands + digits))
    want, got = model.teacher_forced(ops)
    shown = '+'.join(map(str, ops)) if len(ops) <= 4 else f'{len(ops)} operands'
    draw_attention(fig, model.trace(model.tokens(ops)[:-1]).attn[0], sqrt=True,
                   title=f'{shown}, lambda = {lam:g}: '
                         f'{"exact" if got == want else "wrong: " + got}')


def heads_explorer():
    """Sliders for the operand count, the digits and lambda; the player sweeps lambda."""
    return Explorer(draw_heads, size=(6.4, 1.9), operands=slider(1, 12, value=3),
                    digits=slider(1, 12, value=2), lam=slider(0.5, 6.0, 0.5, value=4.0))


def draw_step(fig, step, operands=WORKED):
    """Step ``step`` of the generation: each head's weights for the query that writes the next token.

    One row per head, one column per token of the whole sequence (later tokens
    are masked, so their weight is 0); the query's column is outlined.
    """
    model = build_multi_operand_adder(max(len(str(a)) for a in operands), len(operands))
    seq = model.tokens(operands)[:-1]
    run = model.trace(seq)
    q = seq.index(TOKEN_ID['=']) + step
    ax = fig.subplots()
    ax.imshow(run.attn[0][:, q, :], cmap='viridis', vmin=0, vmax=1, aspect='auto',
              interpolation='nearest')
    ax.add_patch(Rectangle((q - 0.5, -0.5), 1, 4, fill=False, ec='r', lw=1.5))
    ax.set_xticks(range(len(seq)), [VOCAB[t] for t in seq], fontsize=7)
    ax.set_yticks(range(4), [f'{h + 1} {name}' for h, name in enumerate(HEADS)], fontsize=7)
    ax.set_title(f'step {step}: query {VOCAB[seq[q]]!r} at position {q} writes '
                 f'{VOCAB[int(run.logits[q].argmax())]!r}', fontsize=9)


def step_explorer(operands=WORKED):
    """A slider over the steps of the generation of ``operands``."""
    model = build_multi_operand_adder(max(len(str(a)) for a in operands), len(operands))
    steps = len(model.tokens(operands)) - len(model.prompt(operands))
    return Explorer(lambda fig, step: draw_step(fig, step, operands), size=(6.4, 1.5),
                    step=slider(0, steps - 1))


def draw_lambda_sweep(fig, lams, exact, labels, bounds):
    """Fraction of exact problems against lambda, one line per size, its bound dotted."""
    ax = fig.subplots()
    for row, label, bound in zip(exact, labels, bounds):
        line, = ax.plot(lams, row, marker='o', ms=3, label=label)
        ax.axvline(bound, color=line.get_color(), ls=':', lw=1)
    ax.set_xlim(min(lams) - 0.1, max(max(bounds), max(lams)) + 0.2)
    ax.set_xlabel('lambda')
    ax.set_ylabel('fraction exact')
    ax.legend(fontsize=7)
    ax.set_title('exactness vs lambda (dotted: the sufficient bound ln(1000 N)/2)', fontsize=9)


def draw_growth(fig, ns, widths, one_hot_widths, non_zero, counts):
    """Width (hypercube codes vs one-hot IDs) and non-zero parameters against the digits n."""
    ax1, ax2 = fig.subplots(1, 2)
    for m in counts:
        line, = ax1.plot(ns, widths[m], marker='.', label=f'{m} operands')
        ax1.plot(ns, one_hot_widths[m], ls='--', lw=1, color=line.get_color())
        ax2.plot(ns, non_zero[m], marker='.', label=f'{m} operands')
    ax1.set_xscale('log')
    ax1.set_yscale('log')
    ax1.set_xlabel('digits n')
    ax1.set_ylabel('d_model')
    ax1.legend(fontsize=7)
    ax1.set_title('width: hypercube codes (solid) vs one-hot IDs (dashed)', fontsize=8)
    ax2.set_xscale('log')
    ax2.set_xlabel('digits n')
    ax2.set_ylabel('non-zero parameters')
    ax2.set_title('non-zero parameters (norm-free)', fontsize=8)


def draw_capacity(fig, exact, inside, counts, lengths, title):
    """Exact-match percentage over (operand count, digits), the ID capacity outlined in white."""
    ax = fig.subplots()
    extent = (counts[0] - 0.5, counts[-1] + 0.5, lengths[0] - 0.5, lengths[-1] + 0.5)
    im = ax.imshow(exact, origin='lower', cmap='viridis', vmin=0, vmax=100, aspect='auto',
                   extent=extent, interpolation='nearest')
    edge = np.array([lengths[inside[:, j]].max() if inside[:, j].any() else lengths[0] - 1
                     for j in range(len(counts))])
    ax.step(np.r_[counts - 0.5, counts[-1] + 0.5], np.r_[edge, edge[-1]] + 0.5, where='post',
            color='w', lw=2)
    ax.set_xlabel('number of operands')
    ax.set_ylabel('digits per operand')
    ax.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax)
