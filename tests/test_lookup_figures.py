"""taotp.lookup.figures: every draw function draws, the explorer's two views agree."""
import pytest

import taotp
from taotp.lookup import (build_lookup_transformer, lookup_queries, precision_sweep,
                          random_lookup_table)


@pytest.fixture(scope='module')
def demo():
    ks, vs = random_lookup_table(30, 4, 20, 1)
    params = build_lookup_transformer(ks, vs, 20, 10, 6)
    return params, ks, vs, lookup_queries(ks, 6, 20, 2)[0]


def test_hardening_figure_reports_the_switch(demo):
    params, ks, vs, query = demo
    hard = taotp.lookup.draw_hardening(taotp.plot.figure(), params, ks, vs, query, 1e8)
    assert '100% of the table right' in hard.axes[0].get_title()
    assert hard.axes[0].get_title().startswith('harden = 1e+08')
    soft = taotp.lookup.draw_hardening(taotp.plot.figure(), params, ks, vs, query, 1.0)
    assert '100% of the table right' not in soft.axes[0].get_title()


def test_hardening_explorer_player_uses_the_same_draw(demo):
    explorer = taotp.lookup.hardening_explorer(*demo)
    assert explorer.controls['harden'].values[0] == 1.0
    assert explorer.controls['harden'].values[-1] == pytest.approx(1e4)
    title = explorer.figure(harden=1e4).axes[0].get_title()
    assert title.startswith('harden = 1e+04') and '100% of the table right' in title
    player = explorer.player('harden', values=[1.0, 1e4])
    assert len(player.frames) == 2 and player.labels == ['harden = 1', 'harden = 10000']


def test_precision_sweep_and_word_histogram_draw():
    entries, vocabs, widths = [10], [4, 10], [5, 8]
    result = precision_sweep(entries, vocabs, widths, key_len=2, optimization_iters=100)
    fig = taotp.lookup.draw_precision_sweep(taotp.plot.figure(), result, entries, vocabs, widths)
    assert [line.get_label() for line in fig.axes[0].lines] == ['vocab 4', 'vocab 10']
    fig = taotp.lookup.draw_word_histogram(taotp.plot.figure(), 'b a b c b a'.split(), top=2)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ['b', 'a']
    assert [p.get_height() for p in fig.axes[0].patches] == [3, 2]


def test_figures_are_loaded_lazily():
    import subprocess
    import sys
    code = ('import sys, taotp.lookup; a = "matplotlib" in sys.modules; '
            'taotp.lookup.draw_word_histogram; print(a, "matplotlib" in sys.modules)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ['False', 'True']
