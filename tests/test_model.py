"""The vectorised forward pass equals an independent loop implementation of the book."""
import numpy as np
import pytest

import taotp
from taotp.reference import naive_transformer

SHAPES = [  # (vocab, block, d_model, layers, heads, d_head, d_ff)
    dict(vocab_size=5, block_size=9, d_model=4, n_layers=1, n_heads=1, d_head=4, d_ff=3),
    dict(vocab_size=7, block_size=12, d_model=6, n_layers=3, n_heads=2, d_head=3, d_ff=0),
    dict(vocab_size=4, block_size=10, d_model=5, n_layers=2, n_heads=4, d_head=2, d_ff=7),
    dict(vocab_size=9, block_size=6, d_model=3, n_layers=0),
]


@pytest.mark.parametrize('shape', SHAPES, ids=lambda s: f"L{s['n_layers']}-d{s['d_model']}")
def test_forward_matches_independent_implementation(shape, rng):
    for trial in range(3):
        params = taotp.random_params(rng, **shape)
        if trial == 2:  # non-default layer norms too
            params['lnf'] = {'gamma': rng.normal(size=shape['d_model']), 'beta': 0.3}
            for layer in params['layers']:
                layer['ln1'] = {'gamma': 1.5, 'beta': rng.normal(size=shape['d_model'])}
        n = int(rng.integers(1, shape['block_size'] + 1))
        tokens = rng.integers(0, shape['vocab_size'], size=n)
        want = naive_transformer(tokens.tolist(), params['tok_emb'].tolist(),
                                 params['pos_emb'].tolist(), params['out_emb'].tolist(),
                                 params['layers'], params['lnf'])
        got = taotp.transformer(tokens, **params)
        assert got.shape == (n, shape['vocab_size'])
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


def test_layer_norm_places_epsilon_outside_the_square_root():
    x = np.array([1.0, 1.0, 1.0 + 1e-9])
    std = x.std()
    np.testing.assert_allclose(taotp.layer_norm(x), (x - x.mean()) / (std + 1e-10))


def test_layer_norm_fixes_zero_mean_vectors_of_norm_sqrt_d():
    v = taotp.padding_block(5)
    np.testing.assert_allclose(taotp.layer_norm(v), v, atol=1e-9)


def test_softmax_gives_masked_entries_zero_weight():
    w = taotp.softmax(np.array([0.0, -np.inf, 1.0]))
    assert w[1] == 0 and abs(w.sum() - 1) < 1e-9


def test_base_layer_is_the_identity(rng):
    params = taotp.random_params(rng, n_layers=0, d_model=4, vocab_size=6)
    before = taotp.transformer([1, 2, 3], **params)
    params['layers'].append(taotp.base_layer(2, 4, 3, 2))
    np.testing.assert_allclose(taotp.transformer([1, 2, 3], **params), before)


def test_batched_forward_equals_row_by_row(rng):
    params = taotp.random_params(rng)
    batch = rng.integers(0, 7, size=(5, 9))
    got = taotp.transformer_batch(batch, params)
    for row, logits in zip(batch, got):
        np.testing.assert_allclose(logits, taotp.transformer(row, **params), rtol=1e-12)


def test_trace_records_every_sublayer(rng):
    params = taotp.random_params(rng, n_layers=2, n_heads=3)
    t = taotp.trace([1, 2, 3, 4], params)
    assert len(t.attn) == 2 and t.attn[0].shape == (3, 4, 4)
    np.testing.assert_allclose(t.attn[1].sum(-1), 1, atol=1e-9)
    assert np.all(np.triu(t.attn[0][0], 1) == 0)  # causal
    np.testing.assert_allclose(t.resid_post[0], t.resid_pre[1])
    np.testing.assert_allclose(t.logits, taotp.transformer([1, 2, 3, 4], **params))
    np.testing.assert_allclose(t.resid_pre[0] + t.attn_out[0] + t.mlp_out[0], t.resid_post[0])


def test_multi_level_positions_add_one_row_per_table(rng):
    params = taotp.random_params(rng, n_layers=1, block_size=6)
    second = rng.normal(size=(4, 8))
    base = taotp.model.embed([1, 2], params['tok_emb'], params['pos_emb'])
    multi = taotp.model.embed([1, 2], params['tok_emb'], [params['pos_emb'], second],
                              positions=[np.array([3, 5]), np.array([0, 2])])
    np.testing.assert_allclose(multi, params['tok_emb'][[1, 2]] + params['pos_emb'][[3, 5]]
                               + second[[0, 2]])
    params['pos_emb'] = [params['pos_emb'], second]
    logits = taotp.transformer([1, 2], **params, positions=np.array([[3, 5], [0, 2]]))
    assert logits.shape == (2, 7)


def test_post_ln_and_rms_variants_differ_from_pre_ln(rng):
    params = taotp.random_params(rng)
    pre = taotp.transformer([1, 2, 3], **params)
    np.testing.assert_allclose(taotp.transformer_variant([1, 2, 3], params), pre)
    assert not np.allclose(taotp.transformer_variant([1, 2, 3], params, post_ln=True), pre)
    assert not np.allclose(taotp.transformer_variant([1, 2, 3], params, norm='rms'), pre)
    with pytest.raises(taotp.ParamsError, match="norm must be 'layer' or 'rms'"):
        taotp.transformer_variant([1], params, norm='batch')
