"""Figures of Chapter 10, each one ``draw_*(fig, ...)`` function.

Every function draws into a figure it is given (``taotp.plot.figure(size)``),
so one function serves a static cell, a live ``taotp.widgets.Explorer`` and
its kernel-free player.  Lag sets may be given as tuples or by the names of
``PRESETS`` (what the widgets' menus show).  This module loads matplotlib;
``taotp.selective`` imports it only when a figure is asked for.
"""
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.transforms import offset_copy

from .network import build_selective_induction
from .predictors import (construction_predictive, kl_curve, lag_posterior, log_likelihoods,
                         normalised_transitions, true_predictive, bma_predictive, ml_predictive)
from .task import PRESETS, check_lags, sample_batch, sample_sequence

SMALL = 7     # font size of ticks and legends
LINES = {'lw': 1, 'antialiased': False}   # crisp 1-pixel curves: a third of the PNG bytes


def _lags(lags):
    return check_lags(PRESETS.get(lags, lags), where='figures')


def _title(lags):
    return '{' + ','.join(map(str, lags)) + '}'


def _strip(ax, tokens, lag, title, S=None):
    """The tokens in a row of cells coloured by sub-chain (position mod lag).

    Up to 32 tokens are written in their cells; a longer sequence gets a second
    row whose grey level is the token instead (``S`` = alphabet size).
    """
    T = len(tokens)
    chains = ListedColormap([f'C{c % 10}' for c in range(lag)])
    rows = 1 if T <= 32 else 2
    ax.imshow((np.arange(T) % lag)[None, :], cmap=chains, vmin=-0.5, vmax=lag - 0.5,
              aspect='auto', alpha=0.55, extent=(-0.5, T - 0.5, rows - 0.5, rows - 1.5),
              interpolation='nearest')
    if rows == 1:
        for t, s in enumerate(tokens):
            ax.text(t, 0, str(s), ha='center', va='center', fontsize=7)
        ax.set_yticks([])
    else:
        ax.imshow(np.asarray(tokens)[None, :], cmap='Greys', vmin=-1, vmax=S or max(tokens) + 1,
                  aspect='auto', extent=(-0.5, T - 0.5, 0.5, -0.5), interpolation='nearest')
        ax.set_ylim(1.5, -0.5)
        ax.set_yticks([0, 1], ['token', 'chain'], fontsize=SMALL)
    step = 1 if T <= 16 else 5 if T <= 64 else 10
    ticks = [t for t in range(T) if (t + 1) % step == 0 or t == 0]
    ax.set_xticks(ticks, [str(t + 1) for t in ticks], fontsize=SMALL)
    ax.set_title(title, fontsize=8)


def draw_subchains(fig, P, lags=(1, 2, 3), T=32, seed=0):
    """One sequence per lag of ``lags`` (forced lag k, seed ``seed + k``), coloured by sub-chain."""
    lags = _lags(lags)
    axes = np.atleast_1d(fig.subplots(len(lags), 1))
    for ax, k in zip(axes, lags):
        tokens, _ = sample_sequence(P, lags, T, np.random.default_rng(seed + k), lag=k)
        _strip(ax, tokens, k, f'lag {k}: ' + ('one chain' if k == 1 else f'{k} interleaved chains'))
    axes[-1].set_xlabel('position (colour: position mod lag)', fontsize=8)


def draw_data(fig, P, lags='{1,2,3}', true_lag='random', T=48, seed=0):
    """The data explorer: one sequence and the evidence for each lag as tokens arrive.

    Top: the tokens, coloured by sub-chain of the true lag.  Below: every lag's
    log-likelihood (what the Bayes average uses), the posterior, and the
    running mean of ``ptil`` (what the network averages).

    Args:
        P: the transition matrix.
        lags: a lag set or a ``PRESETS`` name.
        true_lag: 'random' (drawn with the sequence), 'smallest', 'largest' or a lag.
        T, seed: the length and the seed of the sequence.
    """
    lags = _lags(lags)
    lag = {'random': None, 'smallest': lags[0], 'largest': lags[-1]}.get(true_lag, true_lag)
    tokens, lag = sample_sequence(P, lags, T, np.random.default_rng(seed), lag=lag)
    kmax, n = lags[-1], np.arange(1, T + 1)
    grid = fig.add_gridspec(2, 3, height_ratios=[1, 3])
    _strip(fig.add_subplot(grid[0, :]), tokens, lag,
           f'lags {_title(lags)}, true lag {lag}, T = {T} (chain colour: position mod {lag})',
           S=len(P))
    ptil = normalised_transitions(P, lags, tokens)
    ptil[:kmax] = 0
    panels = ((log_likelihoods(P, lags, tokens), 'log-likelihood per lag', kmax - 1),
              (lag_posterior(P, lags, tokens), 'posterior (BMA weights)', kmax - 1),
              (np.cumsum(ptil, axis=0) / np.maximum(n - kmax, 1)[:, None],
               'running mean of ptil', kmax))
    for c, (values, title, start) in enumerate(panels):
        ax = fig.add_subplot(grid[1, c])
        for col, k in enumerate(lags):
            ax.plot(n[start:], values[start:, col], label=f'lag {k}', color=f'C{col}', **LINES)
        ax.set_title(title, fontsize=8)
        ax.tick_params(labelsize=SMALL)
        if c == 0:
            ax.legend(fontsize=SMALL)
        if c == 1:
            ax.set_xlabel('tokens seen', fontsize=8)


def _kl_panel(ax, curves, kmax, title, ylim):
    """KL (log axis) against the number of tokens seen, from ``kmax`` on."""
    fixed = {'BMA': 'k-', 'ML': 'k--'}
    colour = 0
    for name, curve in curves.items():
        if isinstance(curve, tuple):
            curve, style = curve
        elif name in fixed:
            style = fixed[name]
        else:
            style, colour = f'C{colour}-', colour + 1
        n = np.arange(1, len(curve) + 1)
        ax.semilogy(n[kmax - 1:], np.maximum(curve[kmax - 1:], 1e-12), style, label=name,
                    **LINES)
    ax.set_ylim(*ylim)
    ax.set_xlabel('tokens seen', fontsize=8)
    ax.set_ylabel('mean KL(truth || prediction)', fontsize=8)
    ax.tick_params(labelsize=SMALL)
    ax.set_title(title, fontsize=8)
    if curves:      # below the panel, under its x label: the curves fill the panel
        below = offset_copy(ax.transAxes, fig=ax.figure, y=-30, units='points')
        ax.legend(fontsize=SMALL, ncol=2, loc='upper center', bbox_to_anchor=(0.5, 0),
                  bbox_transform=below, frameon=False, handlelength=1.6, columnspacing=1.0)


def draw_kl(fig, panels, ylim=(1e-8, 1.0)):
    """KL-against-length panels side by side.

    ``panels``: a list of ``(title, kmax, curves)``; ``curves`` maps a name to
    a ``(T,)`` curve (``kl_curve``) or to ``(curve, style)``.  'BMA' and 'ML'
    are drawn in black (solid, dashed), the others in colour, in order.
    """
    axes = np.atleast_1d(fig.subplots(1, len(panels), sharey=True))
    for ax, (title, kmax, curves) in zip(axes, panels):
        _kl_panel(ax, curves, kmax, title, ylim)
    for ax in axes[1:]:
        ax.set_ylabel(None)


def margin_readout(margins):
    """One line: the log-margins of the three masks, with the leaking ones flagged."""
    parts = [f'{k} {v:+.1f}' + (' (leaks)' if v <= 0 else '') for k, v in margins.items()]
    return 'mask margins: ' + ', '.join(parts)


def draw_hardening(fig, P, lam=500.0, beta=20.0, lags='{1,2,3}', T=40, seed=0, n=24):
    """The hardening explorer: a network built with ``lam`` and ``beta`` (even leaky ones).

    Left: layer 1's and layer 3's attention on one sequence.  Right: the mean
    KL of the network over ``n`` sequences, against BMA, ML and the exact
    formula (``lam`` without bound).  The title gives the mask margins, red
    when one is not positive (a masked key may then get visible weight).
    """
    lags = _lags(lags)
    X, true = sample_batch(P, lags, T, n, rng=np.random.default_rng(seed))
    model = build_selective_induction(P, lags, T, lam=lam, beta=beta, strict=False)
    run = model.run(X)
    truth = true_predictive(P, lags, X, true)
    formula = construction_predictive(P, lags, X, beta, model.meta['design'])
    curves = {'BMA': kl_curve(truth, bma_predictive(P, lags, X)),
              'ML': kl_curve(truth, ml_predictive(P, lags, X)),
              'formula (lam = inf)': (kl_curve(truth, formula), 'C1:'),
              'network': (kl_curve(truth, run['probs']), 'C0-')}
    axes = fig.subplots(1, 3, width_ratios=[1, 1, 1.4])
    for ax, layer in ((axes[0], 0), (axes[1], 2)):
        ax.imshow(run['attn'][layer][0, 0], cmap='viridis', vmin=0, vmax=1, aspect='auto',
                  interpolation='nearest', extent=(0.5, T + 0.5, T + 0.5, 0.5))
        ax.set_title(f'layer {layer + 1} attention', fontsize=8)
        ax.set_xticks([1, T], [1, T], fontsize=SMALL)
        ax.set_yticks([1, T], [1, T], fontsize=SMALL)
        ax.set_xlabel('key position', fontsize=SMALL)
    axes[0].set_ylabel('query position', fontsize=SMALL)
    _kl_panel(axes[2], curves, lags[-1], f'lam = {lam:g}, beta = {beta:g}', (1e-6, 2.0))
    leaks = min(model.meta['margins'].values()) <= 0
    fig.suptitle(margin_readout(model.meta['margins']), fontsize=8,
                 color='red' if leaks else 'black')
