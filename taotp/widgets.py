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
"""
from dataclasses import dataclass

import numpy as np

from . import plot


@dataclass
class Control:
    """One input of a draw function: a numeric range or a list of choices."""
    kind: str               # 'int', 'float', 'log' or 'choice'
    values: tuple           # the values a player steps through
    value: object           # the starting value
    step: float = None

    def make_widget(self, name):
        import ipywidgets as w
        if self.kind == 'choice':
            return w.Dropdown(options=list(self.values), value=self.value, description=name)
        lo, hi = self.values[0], self.values[-1]
        if self.kind == 'int':
            return w.IntSlider(value=self.value, min=lo, max=hi, step=self.step, description=name)
        if self.kind == 'log':
            return w.FloatLogSlider(value=self.value, base=10, min=np.log10(lo),
                                    max=np.log10(hi), step=self.step, description=name)
        return w.FloatSlider(value=self.value, min=lo, max=hi, step=self.step, description=name)


def slider(lo, hi, step=1, value=None, log=False):
    """A slider over ``lo..hi`` in steps of ``step`` (a step in log10 units when ``log``)."""
    if not lo < hi or step <= 0:
        raise ValueError(f'slider: need lo < hi and step > 0; got {lo}, {hi}, {step}')
    if log:
        if lo <= 0:
            raise ValueError(f'slider: a log slider needs lo > 0; got {lo}')
        exps = np.arange(np.log10(lo), np.log10(hi) + step / 2, step)
        values = tuple(float(10 ** e) for e in exps)
        kind = 'log'
    elif all(isinstance(v, (int, np.integer)) for v in (lo, hi, step)):
        values, kind = tuple(range(lo, hi + 1, step)), 'int'
    else:
        values = tuple(float(v) for v in np.arange(lo, hi + step / 2, step))
        kind = 'float'
    start = values[0] if value is None else value
    return Control(kind, values, start, step)


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
        return w.VBox([w.HBox(list(inputs.values())), out])

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
