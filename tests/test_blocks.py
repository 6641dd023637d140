"""Property tests for the layer-norm-fixed building blocks of Chapters 2-4."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import taotp
from taotp import layer_norm

angles = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@given(angles)
def test_pos_enc_3d_point_is_fixed_under_layer_norm(t):
    p = taotp.pos_enc_3d(t)
    assert p.shape == (3,)
    assert abs(p.sum()) < 1e-12 and abs((p ** 2).sum() - 3) < 1e-12
    np.testing.assert_allclose(layer_norm(p), p, atol=1e-9)


@given(st.integers(1, 300))
def test_pos_enc_3d_array_rows_are_fixed_and_evenly_spaced(n):
    rows = taotp.pos_enc_3d_array(n)
    assert rows.shape == (n, 3)
    np.testing.assert_allclose(layer_norm(rows), rows, atol=1e-9)
    if n > 1:  # neighbours all at the same angle 2 pi / n, so the same dot product
        dots = (rows * np.roll(rows, -1, axis=0)).sum(1)
        np.testing.assert_allclose(dots, 3 * np.cos(2 * np.pi / n), atol=1e-12)


@settings(max_examples=200)
@given(st.integers(1, 400), st.data())
def test_shift_matrix_is_exact_for_every_delta_and_block(n, data):
    delta = data.draw(st.integers(-n, n))
    rows = taotp.pos_enc_3d_array(n)
    R = taotp.shift_matrix(delta, n)
    lo, hi = max(0, -delta), min(n, n - delta)
    if lo < hi:
        np.testing.assert_allclose(rows[lo:hi] @ R, rows[lo + delta:hi + delta], atol=1e-12)
    # it is a rotation about (1, 1, 1): orthogonal, fixes the axis
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(np.ones(3) @ R, np.ones(3), atol=1e-12)


@given(st.integers(2, 2000))
def test_padding_block_is_fixed_for_every_d(d):
    p = taotp.padding_block(d)
    assert p.shape == (d,)
    np.testing.assert_allclose(layer_norm(p), p, atol=1e-9)


@given(st.integers(2, 40), st.integers(2, 40), angles)
def test_concatenated_fixed_blocks_are_fixed(d1, d2, t):
    v = np.concatenate([taotp.pos_enc_3d(t), taotp.padding_block(d1), taotp.padding_block(d2)])
    np.testing.assert_allclose(layer_norm(v), v, atol=1e-9)


@pytest.mark.parametrize('d', [1, 0, -3])
def test_padding_block_rejects_small_d(d):
    with pytest.raises(ValueError, match=rf'padding_block: a padding block needs d >= 2 dimensions; got {d}'):
        taotp.padding_block(d)


def test_harden_and_messy_cleanup_scale():
    np.testing.assert_array_equal(taotp.blocks.harden(np.eye(2), 10.0), 10 * np.eye(2))
    np.testing.assert_array_equal(taotp.blocks.messy_cleanup([1.0, -2.0], 1e3), [1e3, -2e3])


def test_proper_cleanup_erases_a_fixed_block():
    L = taotp.Layout([('keep', 3), ('junk', 3)])
    p = taotp.base_params(7, 9, L.d_model)
    p['tok_emb'][:, L['keep']] = taotp.pos_enc_3d_array(7)
    p['pos_emb'][:, L['junk']] = taotp.pos_enc_3d_array(9)
    p['out_emb'] = p['tok_emb']
    layer = taotp.base_layer(1, L.d_model, 0, 3)
    assert taotp.blocks.proper_cleanup(layer, 0, L['junk']) is layer
    p['layers'] = [layer]
    tokens = np.random.default_rng(0).integers(0, 7, size=9)
    final = taotp.residual_stream(tokens, p)
    np.testing.assert_allclose(final[:, L['junk']], 0, atol=1e-9)
    np.testing.assert_allclose(final[:, L['keep']], taotp.pos_enc_3d_array(7)[tokens], atol=1e-12)


def test_proper_cleanup_needs_a_wide_enough_head():
    layer = taotp.base_layer(1, 8, 0, 2)
    with pytest.raises(ValueError, match=r'proper_cleanup: the block must fit in one head '
                                         r'\(width <= d_head = 2\); got width 3'):
        taotp.blocks.proper_cleanup(layer, 0, slice(0, 3))
