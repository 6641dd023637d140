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
    dict(vocab_size=6, block_size=7, d_model=4, n_layers=2, n_heads=0, d_head=2, d_ff=3),
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
    multi = taotp.model.embed([1, 2], params['tok_emb'], [params['pos_emb'], second],
                              positions=[np.array([3, 5]), np.array([0, 2])])
    np.testing.assert_allclose(multi, params['tok_emb'][[1, 2]] + params['pos_emb'][[3, 5]]
                               + second[[0, 2]])
    params['pos_emb'] = [params['pos_emb'], second]
    logits = taotp.transformer([1, 2], **params, positions=np.array([[3, 5], [0, 2]]))
    assert logits.shape == (2, 7)


# ----------------------------------------------------------------------------- every path vs the reference

VARIANTS = [dict(norm=n, post_ln=p) for n in ('layer', 'rms', 'none') for p in (False, True)]
VARIANT_IDS = [f"{v['norm']}-{'post' if v['post_ln'] else 'pre'}" for v in VARIANTS]


def reference_logits(tokens, params, positions=None, **variant):
    return naive_transformer(list(tokens), params['tok_emb'], params['pos_emb'], params['out_emb'],
                             params['layers'], params['lnf'], positions=positions, **variant)


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


def variant_params(rng, variant, **shape):
    """Random params whose scale keeps the norm-free variant from overflowing."""
    scale = 0.5 if variant['norm'] == 'none' else 1.0
    params = taotp.random_params(rng, scale=scale, **shape)
    params['lnf'] = {'gamma': rng.normal(size=params['tok_emb'].shape[1]), 'beta': 0.2}
    if params['layers']:
        params['layers'][0]['ln2'] = {'gamma': 1.3, 'beta': rng.normal(size=params['tok_emb'].shape[1])}
    return params


@pytest.mark.parametrize('variant', VARIANTS, ids=VARIANT_IDS)
def test_every_variant_matches_the_reference(variant, rng):
    for shape in SHAPES:
        params = variant_params(rng, variant, **shape)
        tokens = rng.integers(0, shape['vocab_size'], size=shape['block_size'])
        close(taotp.transformer(tokens, **params, **variant),
              reference_logits(tokens, params, **variant))


@pytest.mark.parametrize('variant', VARIANTS, ids=VARIANT_IDS)
def test_cached_logits_match_the_reference(variant, rng):
    params = variant_params(rng, variant, block_size=14, n_layers=2, n_heads=3)
    tokens = rng.integers(0, 7, size=14)
    cache = taotp.KVCache(params, 14, **variant)
    pieces = [cache.extend(tokens[:5])] + [cache.extend(tokens[i:i + 3]) for i in (5, 8, 11)]
    close(np.vstack(pieces), reference_logits(tokens, params, **variant))


@pytest.mark.parametrize('variant', VARIANTS, ids=VARIANT_IDS)
def test_batched_last_position_and_teacher_forced_paths_match_the_reference(variant, rng):
    params = variant_params(rng, variant, block_size=9, n_layers=2, n_heads=2, d_ff=6)
    batch = rng.integers(0, 7, size=(6, 9))
    want = np.stack([reference_logits(row, params, **variant) for row in batch])
    close(taotp.transformer_batch(batch, params, **variant), want)
    close(taotp.model.forward(batch, logits_at=-1, **taotp.params.check_variant(
        variant['norm'], variant['post_ln'], 'test'), **params)[:, 0], want[:, -1])
    np.testing.assert_array_equal(taotp.last_token_argmax(batch, params, chunk=4, **variant),
                                  want[:, -1].argmax(-1))
    np.testing.assert_array_equal(
        taotp.teacher_forced_argmax(batch, params, 4, chunk=5, **variant),
        want[:, 3:8].argmax(-1))
    full = np.concatenate([batch, batch[:, :1]], axis=1)      # the last token is never fed
    np.testing.assert_array_equal(
        taotp.teacher_forced_argmax(full, params, 9, **variant), want[:, 8:].argmax(-1))


@pytest.mark.parametrize('variant', VARIANTS, ids=VARIANT_IDS)
def test_multi_level_positions_match_the_reference(variant, rng):
    params = variant_params(rng, variant, block_size=5, n_layers=1, n_heads=2)
    second = rng.normal(size=(4, 8))
    params['pos_emb'] = [params['pos_emb'], second]
    tokens = rng.integers(0, 7, size=7)   # longer than either table: ids repeat
    ids = [np.array([0, 1, 2, 3, 4, 1, 2]), np.array([0, 0, 1, 1, 2, 3, 3])]
    want = reference_logits(tokens, params, positions=ids, **variant)
    close(taotp.transformer(tokens, **params, positions=np.array(ids), **variant), want)
    cache = taotp.KVCache(params, 7, **variant)
    got = np.vstack([cache.extend(tokens[:3], [i[:3] for i in ids]),
                     cache.extend(tokens[3:], [i[3:] for i in ids])])
    close(got, want)


@pytest.mark.parametrize('variant', VARIANTS, ids=VARIANT_IDS)
def test_decoders_follow_the_reference_argmax(variant, rng):
    """Greedy, cached, uncached, windowed and batched decoding pick the reference's argmax."""
    params = variant_params(rng, variant, block_size=6, n_layers=2, n_heads=2)
    prompt = [1, 4]
    out = taotp.decode(prompt, params, 10, window=True, **variant)
    for i in range(len(prompt), len(out)):
        window = out[max(0, i - 6):i]
        assert out[i] == reference_logits(window, params, **variant)[-1].argmax()
    for cache in (True, False):
        np.testing.assert_array_equal(
            taotp.decode(prompt, params, 10, window=True, cache=cache, **variant), out)
        np.testing.assert_array_equal(taotp.decode(prompt, params, 4, cache=cache, **variant),
                                      out[:6])
    batch = np.array([prompt, [3, 3], [0, 6]])
    got = taotp.decode_batch(batch, params, 4, chunk=2, **variant)
    for row, decoded in zip(batch, got):
        np.testing.assert_array_equal(decoded, taotp.decode(row, params, 4, **variant))


def test_trace_records_the_mlp_input_of_every_variant(rng):
    params = taotp.random_params(rng, n_layers=2)
    for variant in VARIANTS[:2]:
        t = taotp.trace([1, 2, 3], params, **variant)
        fn = taotp.model.norm_function(variant['norm'])
        ln2 = params['layers'][0]['ln2']
        want = t.resid_mid[0] if variant['post_ln'] else fn(t.resid_mid[0], **ln2)
        np.testing.assert_allclose(t.mlp_in[0], want)


def test_distinct_mlp_rows_give_the_same_numbers(rng):
    M1 = np.zeros((5, 40))
    M1[2] = rng.normal(size=40)
    b1, M2, b2 = rng.normal(size=40), rng.normal(size=(40, 5)), rng.normal(size=5)
    x = rng.normal(size=(300, 5))
    x[:, 2] = rng.integers(0, 7, size=300)        # few distinct values in the coordinate read
    # the same numbers up to the last bits: a BLAS kernel may round a product of 7 rows
    # and one of 300 rows differently (seen on an AMD EPYC with OpenBLAS 0.3.31)
    np.testing.assert_allclose(taotp.model.mlp(x, M1, b1, M2, b2, rows='distinct'),
                               taotp.model.mlp(x, M1, b1, M2, b2), rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match="rows must be 'all' or 'distinct'"):
        taotp.model.mlp(x, M1, b1, M2, b2, rows='unique')


def test_mlp_runs_in_blocks_with_the_same_result(rng, monkeypatch):
    M1, b1 = rng.normal(size=(4, 30)), rng.normal(size=30)
    M2, b2 = rng.normal(size=(30, 4)), rng.normal(size=4)
    x = rng.normal(size=(2, 50, 4))
    whole = taotp.model.mlp(x, M1, b1, M2, b2)
    monkeypatch.setattr(taotp.model, 'MLP_BLOCK', 64)       # two rows at a time
    np.testing.assert_allclose(taotp.model.mlp(x, M1, b1, M2, b2), whole, rtol=1e-14)


def test_unknown_variants_are_named(rng):
    params = taotp.random_params(rng)
    with pytest.raises(taotp.ParamsError, match="norm must be one of 'layer', 'rms', 'none'; got 'batch'"):
        taotp.transformer_variant([1], params, norm='batch')
    with pytest.raises(taotp.ParamsError, match='post_ln must be True or False'):
        taotp.decode([1], params, 2, post_ln='yes')


def test_list_valued_weights_run_like_arrays(rng):
    """validate_params accepts lists (they are counted too); every path runs them."""
    params = taotp.random_params(rng, n_layers=2)
    listed = {**params, 'tok_emb': params['tok_emb'].tolist(), 'pos_emb': params['pos_emb'].tolist(),
              'layers': [{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in layer.items()}
                         for layer in params['layers']]}
    tokens = [1, 2, 3, 4]
    np.testing.assert_array_equal(taotp.transformer(tokens, **listed), taotp.transformer(tokens, **params))
    np.testing.assert_array_equal(taotp.decode(tokens, listed, 3), taotp.decode(tokens, params, 3))
    np.testing.assert_array_equal(taotp.trace(tokens, listed).logits, taotp.trace(tokens, params).logits)
    assert taotp.count_params(listed) == taotp.count_params(params)


# ----------------------------------------------------------------------------- one score path

def test_trace_records_the_scores_the_softmax_turns_into_weights(rng):
    params = taotp.random_params(rng, n_layers=2, n_heads=2)
    run = taotp.trace([0, 3, 1, 4, 1], params)
    for scores, weights in zip(run.scores, run.attn):
        assert scores.shape == weights.shape == (2, 5, 5)
        assert np.all(np.isneginf(scores[:, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]]))
        np.testing.assert_array_equal(taotp.softmax(scores), weights)
    layer, x = params['layers'][0], taotp.layer_norm(run.resid_pre[0])
    q, k = taotp.model.heads(x, layer['Q']), taotp.model.heads(x, layer['K'])
    np.testing.assert_array_equal(
        taotp.model.attention_scores(q, k, taotp.model.causal_mask(5)), run.scores[0])
    want = np.einsum('hnk,hmk->hnm', q, k) / np.sqrt(3)
    np.testing.assert_allclose(np.where(np.isinf(run.scores[0]), 0, run.scores[0]),
                               np.tril(want), rtol=1e-12, atol=1e-12)
    batch = taotp.trace(np.array([[0, 3, 1], [2, 2, 2]]), params)
    assert batch.scores[1].shape == (2, 2, 3, 3)


def test_attention_scores_scale_and_the_scalar_mlp(rng):
    q, k = rng.normal(size=(1, 3, 4)), rng.normal(size=(1, 3, 4))
    mask = taotp.model.causal_mask(3)
    np.testing.assert_array_equal(taotp.model.attention_scores(q, k, mask, scale=1.0),
                                  np.where(mask, q @ k.swapaxes(-1, -2), -np.inf))
    m1, b1, M2, b2 = rng.normal(size=5), rng.normal(size=5), rng.normal(size=(5, 2)), \
        rng.normal(size=2)
    xs = rng.normal(size=(4, 3))
    got = taotp.model.scalar_mlp(xs, m1, b1, M2, b2)
    assert got.shape == (4, 3, 2)
    np.testing.assert_allclose(got, np.maximum(xs[..., None] * m1 + b1, 0) @ M2 + b2,
                               rtol=1e-12)
    assert taotp.model.scalar_mlp(0.5, m1, b1, M2, b2).shape == (2,)


MIRRORS = ('model.py', 'reference.py', 'train/', 'export.py', 'selective/network.py',
           'selective/predictors.py')     # CONTRIBUTING: "Mirrors on purpose"
BY_HAND = {
    'a softmax of its own': r'^\s*def \w*softmax\w*\(',
    'an MLP evaluated by hand': r'maximum\([^\n]*@',
    'attention scores by hand': r'(swapaxes\(|\.T\b)[^\n]*/\s*(np\.)?sqrt\('
                                r'|/\s*\w+\.shape\[-1\]\s*\*\*\s*0\.5',
}


def test_scores_softmax_and_mlps_are_computed_by_the_engine_only():
    """Outside the engine and its documented mirrors nothing recomputes them by hand."""
    import re
    from pathlib import Path
    package = Path(taotp.__file__).parent
    found = []
    for path in sorted(package.rglob('*.py')):
        where = path.relative_to(package).as_posix()
        if where.startswith(MIRRORS):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found += [f'{where}:{number}: {what}: {line.strip()}'
                      for what, pattern in BY_HAND.items() if re.search(pattern, line)]
    assert not found, '\n'.join(found)
