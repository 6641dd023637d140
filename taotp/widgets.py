"""Interactive figures: one draw function, a live widget and its kernel-free twin.

A figure that a reader should explore is written once, as
``draw(fig, **values)``.  ``Explorer`` turns it into both views::

    ex = taotp.widgets.Explorer(draw, size=(6, 3),
                                log10_N=taotp.widgets.slider(0, 4, 0.25, value=1))
    ex.widget()            # live ipywidgets controls (Jupyter, Colab)
    ex.player('log10_N')   # a kernel-free player over the same range (the HTML book)

The player pre-draws the figure for every value of one control (the others
stay at their values), so it shows exactly what the widget would show there.
ipywidgets is imported only when ``widget()`` is called.

The live controls wrap onto as many rows as the notebook's width needs, each wide
enough for its whole name and a slider track of at least ``TRACK_PX`` pixels.  A
log slider stops at round numbers (1, 2, 5, 10, ... or finer), so the values a
text names can be set exactly:

    >>> slider(1, 1000, 0.1, value=500, log=True).values[:9]
    (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
    >>> slider(0.1, 100, 0.5, value=20, log=True, include=(64,)).values
    (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 64.0, 100.0)
"""
from dataclasses import dataclass

import numpy as np

from . import plot


TRACK_PX = 180      # the least width of a slider's track in a live widget
CHAR_PX = 8         # about one character of a control's name
READOUT_PX = 90     # the value shown beside a slider, with the gaps around it
# mantissas of a log slider's round stops, by the slider's step (in log10 units)
ROUND_STOPS = ((1.0, (1,)), (0.3, (1, 2, 5)), (0.0, (1, 1.5, 2, 3, 4, 5, 6, 8)))


@dataclass
class Control:
    """One input of a draw function: a numeric range or a list of choices."""
    kind: str               # 'int', 'float', 'log' or 'choice'
    values: tuple           # the values a player steps through (a log slider's stops)
    value: object           # the starting value
    step: float = None

    def width_px(self, name):
        """Room for the whole name, a track of ``TRACK_PX`` and the readout (or a menu)."""
        label = CHAR_PX * len(name) + 12
        if self.kind == 'choice':
            return label + max(160, CHAR_PX * max(len(str(v)) for v in self.values) + 40)
        return label + TRACK_PX + READOUT_PX

    def make_widget(self, name):
        import ipywidgets as w
        width = f'{self.width_px(name)}px'
        common = dict(description=name, style={'description_width': 'initial'},
                      layout=w.Layout(width=width, min_width=width))
        if self.kind == 'choice':
            return w.Dropdown(options=list(self.values), value=self.value, **common)
        lo, hi = self.values[0], self.values[-1]
        if self.kind == 'int':
            return w.IntSlider(value=self.value, min=lo, max=hi, step=self.step, **common)
        if self.kind == 'log':       # a slider over the round stops, each shown as written
            return w.SelectionSlider(options=[(f'{v:g}', v) for v in self.values],
                                     value=self.value, **common)
        return w.FloatSlider(value=self.value, min=lo, max=hi, step=self.step, **common)


def _round_stops(lo, hi, step, include):
    """The round numbers m * 10**k (m from ``ROUND_STOPS``) in [lo, hi], ends and extras."""
    mantissas = next(m for least, m in ROUND_STOPS if step >= least)
    first, last = int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi)))
    stops = {float(f'{m}e{k}') for k in range(first, last + 1) for m in mantissas}
    stops = {v for v in stops if lo <= v <= hi} | {float(lo), float(hi)}
    return tuple(sorted(stops | {float(v) for v in include}))


def slider(lo, hi, step=1, value=None, log=False, include=()):
    """A slider over ``lo..hi`` in steps of ``step``, starting at ``value`` (default ``lo``).

    With ``log``, the slider stops at round numbers between ``lo`` and ``hi`` instead:
    1, 10, 100 (``step`` >= 1, in log10 units), 1, 2, 5, 10, ... (``step`` >= 0.3) or
    1, 1.5, 2, 3, 4, 5, 6, 8, 10, ... (finer steps), plus ``value`` and any number in
    ``include`` (values a text names).  ``value`` must be one of the slider's values.
    """
    if not lo < hi or step <= 0:
        raise ValueError(f'slider: need lo < hi and step > 0; got {lo}, {hi}, {step}')
    if log:
        if lo <= 0:
            raise ValueError(f'slider: a log slider needs lo > 0; got {lo}')
        extra = tuple(include) + (() if value is None else (value,))
        outside = [v for v in extra if not lo <= v <= hi]
        if outside:
            raise ValueError(f'slider: value and include must lie in [{lo}, {hi}]; got {outside}')
        values, kind = _round_stops(lo, hi, step, extra), 'log'
    elif all(isinstance(v, (int, np.integer)) for v in (lo, hi, step)):
        values, kind = tuple(range(lo, hi + 1, step)), 'int'
    else:
        values = tuple(float(v) for v in np.arange(lo, hi + step / 2, step))
        kind = 'float'
    start = values[0] if value is None else value
    if kind != 'log' and not any(np.isclose(start, v) for v in values):
        raise ValueError(f'slider: value must be one of the steps from {lo} by {step}; '
                         f'got {value}')
    return Control(kind, values, float(start) if kind == 'log' else start, step)


def choice(options, value=None):
    """A dropdown over ``options`` (labels shown as ``str(option)``)."""
    options = tuple(options)
    if not options:
        raise ValueError('choice: needs at least one option')
    return Control('choice', options, options[0] if value is None else value)


class Explorer:
    """A figure ``draw(fig, **values)`` with one control per keyword."""

    def __init__(self, draw, size=(6.0, 3.5), **controls):
        if not controls:
            raise ValueError('Explorer: give at least one control, e.g. n=slider(1, 10)')
        self.draw, self.size, self.controls = draw, size, controls

    def figure(self, **values):
        """The figure at the controls' values, overridden by ``values``."""
        fig = plot.figure(self.size)
        self.draw(fig, **{**{k: c.value for k, c in self.controls.items()}, **values})
        return fig

    def widget(self):
        """Live controls and the figure below them (needs a running kernel)."""
        import ipywidgets as w
        from IPython.display import display
        inputs = {name: c.make_widget(name) for name, c in self.controls.items()}
        out = w.Output()

        def redraw(**values):
            out.clear_output(wait=True)
            with out:
                display(self.figure(**values))
        w.interactive_output(redraw, inputs)
        # the controls wrap onto new rows rather than shrink (a squeezed track cannot be
        # dragged)
        controls = w.HBox(list(inputs.values()), layout=w.Layout(flex_flow='row wrap'))
        return w.VBox([controls, out])

    def player(self, sweep=None, values=None, interval=500):
        """The kernel-free twin: frames for each value of control ``sweep`` (default: the first)."""
        name = sweep or next(iter(self.controls))
        if name not in self.controls:
            raise ValueError(f'Explorer.player: no control named {name!r}; controls are '
                             f'{list(self.controls)}')
        values = self.controls[name].values if values is None else tuple(values)
        fixed = {k: c.value for k, c in self.controls.items() if k != name}
        return plot.animate(lambda fig, v: self.draw(fig, **fixed, **{name: v}), values,
                            size=self.size, interval=interval,
                            label=lambda v: f'{name} = {v:g}' if isinstance(v, float)
                            else f'{name} = {v}')
