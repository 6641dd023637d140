"""taotp.widgets: live controls a reader can use, and the values a text names are reachable.

The browser side (tracks at least 150 px in JupyterLab, labels not cut, a moved control
redraws) is ``tests/test_jupyterlab.py`` (marker ``e2e``); here the controls themselves.
"""
import ipywidgets
import pytest

from taotp import widgets
from taotp.widgets import TRACK_PX, Explorer, choice, slider


def test_a_log_slider_stops_at_round_numbers_and_at_the_values_it_is_given():
    lam = slider(1, 1000, 0.1, value=500, log=True, include=(64,))
    assert {1, 2, 8, 15, 64, 500, 1000} <= set(lam.values)
    assert lam.value == 500 and lam.values == tuple(sorted(lam.values))
    assert slider(0.1, 1000, 0.1, value=20, log=True).values[:4] == (0.1, 0.15, 0.2, 0.3)
    assert slider(1, 1e4, 1.0, log=True).values == (1, 10, 100, 1000, 10000)
    assert slider(1, 1000, 0.5, log=True).values == (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def test_the_start_value_is_one_of_the_steps():
    assert slider(16, 64, 8, value=40).value == 40
    assert slider(0.5, 6.0, 0.5, value=4.0).value == 4.0
    with pytest.raises(ValueError, match=r'slider: value must be one of the steps .*got 41'):
        slider(16, 64, 8, value=41)
    with pytest.raises(ValueError, match=r'slider: value and include must lie in \[1, 1000\]'):
        slider(1, 1000, 0.1, value=2000, log=True)
    with pytest.raises(ValueError, match='slider: a log slider needs lo > 0; got 0'):
        slider(0, 10, 1, log=True)


def test_live_controls_show_their_whole_name_and_a_wide_track():
    for name, control in (('lam', slider(1, 1000, 0.1, value=500, log=True)),
                          ('log10_harden', slider(0, 8, 1, value=0)),
                          ('T', slider(16, 64, 8, value=40)),
                          ('step', slider(0.5, 6.0, 0.5, value=4.0))):
        live = control.make_widget(name)
        assert live.description == name and live.style.description_width == 'initial'
        assert live.layout.width == live.layout.min_width == f'{control.width_px(name)}px'
        assert control.width_px(name) >= TRACK_PX + len(name) * widgets.CHAR_PX
    lam = slider(1, 1000, 0.1, value=500, log=True).make_widget('lam')
    assert isinstance(lam, ipywidgets.SelectionSlider)
    assert (lam.value, lam.label) == (500.0, '500')          # the readout shows 500, not 501.187
    menu = choice(['{1,2,3}', '{3,5,7}']).make_widget('lags')
    assert isinstance(menu, ipywidgets.Dropdown) and menu.style.description_width == 'initial'


def test_the_controls_wrap_onto_rows_instead_of_shrinking():
    explorer = Explorer(lambda fig, **v: fig.subplots(), size=(2, 1),
                        a=slider(1, 10), b=slider(1, 10), c=slider(1, 10), d=choice('xyz'),
                        e=slider(1, 1000, 0.1, value=500, log=True))
    view = explorer.widget()
    controls = view.children[0]
    assert controls.layout.flex_flow == 'row wrap'
    assert [c.description for c in controls.children] == ['a', 'b', 'c', 'd', 'e']


def test_figures_are_stored_at_twice_their_display_width():
    from PIL import Image
    import io
    from taotp import plot
    fig = plot.figure((5.0, 2.0))
    fig.subplots().plot([0, 1, 4], label='squares')
    data, meta = plot._png_with_size(fig)
    image = Image.open(io.BytesIO(data))
    assert image.format == 'PNG' and image.mode == 'P'
    assert image.size[0] == 5 * plot.DPI and meta == {'width': 5 * plot.SCALE}
    assert plot.DPI == 2 * plot.SCALE
    assert str(fig) == 'Figure(400x160)'            # the figure's text is its display size
    assert plot.display_width(plot.figure((10.0, 2.0))) == plot.COLUMN_PX


def test_a_player_says_where_it_steps_and_how_small_its_text_is():
    from taotp import plot
    player = plot.animate(lambda fig, n: fig.subplots().plot(range(n)), [2, 3], size=(6.0, 2.0))
    html = player._repr_html_()
    assert html.startswith('<p class="taotp-player-note">') and 'trusted' in html
    assert 'data-width-in="6"' in html and f'data-text-pt="{player.text_pt:g}"' in html
    assert f'width="{round(6.0 * plot.FRAME_SCALE)}"' in html
    assert all(mime in ('image/webp', 'image/png') for mime, _ in player.frames)
    # shown FRAME_SCALE px per inch, 7-point text is at least 10 px high
    assert 7 / 72 * plot.FRAME_SCALE >= 10
