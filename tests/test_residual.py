import re
import numpy as np
import pytest

import taotp
from taotp import Layout


def test_layout_keeps_declaration_order_and_labels():
    L = Layout([('tok', 3), ('pos', 3), ('ones', 1), ('pad', 2)])
    assert L.d_model == 9 and L['pos'] == slice(3, 6) and L['ones'] == slice(6, 7)
    assert L.labels() == ['tok:0', 'tok:1', 'tok:2', 'pos:0', 'pos:1', 'pos:2', 'ones',
                          'pad:0', 'pad:1']
    assert 'pad' in L and 'carry' not in L
    assert repr(L) == 'Layout(tok=3, pos=3, ones=1, pad=2; d_model=9)'


def test_layout_errors_name_the_block():
    with pytest.raises(ValueError, match="block name 'tok' is used twice"):
        Layout([('tok', 3), ('tok', 1)])
    with pytest.raises(ValueError, match="block 'pad' must have width >= 1; got 0"):
        Layout([('pad', 0)])
    with pytest.raises(KeyError, match="Layout has no block 'sum'"):
        Layout([('tok', 3)])['sum']


def test_verify_reports_first_failure_and_scope():
    report = taotp.verify(lambda x: x * 2 if x != 3 else 0, lambda x: x * 2, range(5),
                          scope='five numbers')
    assert not report.ok and report.n_wrong == 1 and report.first_failure == (3, 6, 0)
    assert str(report).startswith('checked 5 inputs (five numbers): 1 wrong; first failure: input 3')
    assert taotp.verify(abs, abs, [], scope='nothing').ok is False  # an empty check is no pass


def test_verify_batch_compares_rows():
    inputs = np.arange(6).reshape(3, 2)
    report = taotp.verify_batch([[1], [2], [9]], [[1], [2], [3]], inputs, scope='rows')
    assert report.n_wrong == 1 and report.first_failure == ([4, 5], [3], [9])


def test_plot_helpers_have_fixed_sizes(rng):
    fig = taotp.plot.attention(rng.random((2, 4, 4)), tokens=[0, 1, 2, 3])
    assert tuple(fig.get_size_inches()) == (6.4, 3.0)
    fig = taotp.plot.residual(rng.normal(size=(4, 9)),
                              labels=Layout([('tok', 3), ('pos', 6)]).labels())
    assert tuple(fig.get_size_inches()) == (7.0, 3.2)
    assert tuple(taotp.plot.circle(taotp.pos_enc_3d_array(5)).get_size_inches()) == (4.0, 4.0)
    assert tuple(taotp.plot.bars(['a', 'b'], [1, 2]).get_size_inches()) == (6.0, 3.0)


def test_animate_returns_a_kernel_free_player():
    player = taotp.plot.animate(lambda fig, k: fig.subplots().plot([0, k]), [1, 2], size=(2, 2))
    html = player._repr_html_()
    assert 'taotp-player' in html and len(re.findall(r'data:image/(?:png|webp);base64,', html)) >= 2
    assert repr(player) == '<kernel-free player: 2 frames>'
