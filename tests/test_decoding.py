"""Cached, windowed, sampled and batched decoding all agree with the naive loop."""
import numpy as np
import pytest

import taotp
from taotp import ParamsError


def naive_greedy(tokens, params, steps, eos=None):
    """The book's Fig. 1.2 loop, written against taotp.transformer."""
    tokens = np.array(tokens)
    for _ in range(steps):
        nxt = int(np.argmax(taotp.transformer(tokens, **params)[-1]))
        tokens = np.append(tokens, nxt)
        if nxt == eos:
            break
    return tokens


@pytest.mark.parametrize('seed', range(6))
def test_cached_and_naive_decode_give_the_same_tokens(seed):
    rng = np.random.default_rng(seed)
    params = taotp.random_params(rng, vocab_size=6, block_size=30, d_model=8,
                                 n_layers=int(rng.integers(0, 4)), n_heads=int(rng.integers(1, 4)),
                                 d_head=3, d_ff=int(rng.integers(0, 6)))
    prompt = rng.integers(0, 6, size=int(rng.integers(1, 8)))
    eos = int(rng.integers(0, 6)) if seed % 2 else None
    want = naive_greedy(prompt, params, 20, eos)
    np.testing.assert_array_equal(taotp.decode(prompt, params, 20, eos, cache=False), want)
    np.testing.assert_array_equal(taotp.decode(prompt, params, 20, eos, cache=True), want)


def test_cache_logits_match_full_forward(rng):
    params = taotp.random_params(rng, block_size=16)
    tokens = rng.integers(0, 7, size=10)
    cache = taotp.KVCache(params, 16)
    first = cache.extend(tokens[:4])
    rest = [cache.extend(tokens[i:i + 1])[0] for i in range(4, 10)]
    full = taotp.transformer(tokens, **params)
    np.testing.assert_allclose(np.vstack([first, rest]), full, rtol=1e-10, atol=1e-12)


def test_decode_stops_after_eos_and_includes_it(rng):
    params = taotp.base_params(3, 10, 3)
    params['tok_emb'] = params['out_emb'] = taotp.pos_enc_3d_array(3)
    params['pos_emb'] = 1e6 * params['tok_emb'][[1, 2, 2, 2, 2, 2, 2, 2, 2, 2]]
    assert taotp.decode([0], params, max_steps=9, eos=2).tolist() == [0, 1, 2]


def test_window_decoding_runs_past_block_size(rng):
    params = taotp.random_params(rng, block_size=5)
    out = taotp.decode([1, 2], params, max_steps=30, window=True)
    assert len(out) == 32
    for i in range(5, 32):  # every token is the argmax over the previous 5
        window = out[max(0, i - 5):i]
        assert out[i] == np.argmax(taotp.transformer(window, **params)[-1])
    np.testing.assert_array_equal(out, taotp.decode([1, 2], params, 30, window=True, cache=False))


def test_too_long_without_window_is_a_clear_error(rng):
    params = taotp.random_params(rng, block_size=5)
    with pytest.raises(ParamsError, match='needs 6 positions but block_size is 5'):
        taotp.decode([1, 2, 3], params, max_steps=4)
    with pytest.raises(ParamsError, match='has 6 tokens but block_size is 5'):
        taotp.decode([1] * 6, params, max_steps=1)
    assert len(taotp.decode([1, 2, 3], params, max_steps=3)) == 6  # exactly fits


def test_sampling_is_seeded_and_greedy_at_low_temperature(rng):
    params = taotp.random_params(rng, block_size=20, scale=0.5)
    a = taotp.decode([1], params, 15, temperature=1.0, rng=np.random.default_rng(3))
    b = taotp.decode([1], params, 15, temperature=1.0, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        taotp.decode([1], params, 15, temperature=1e-6, rng=np.random.default_rng(0)),
        taotp.decode([1], params, 15))


def test_sampling_follows_the_tempered_softmax():
    rng = np.random.default_rng(5)
    params = taotp.random_params(rng, vocab_size=4, n_layers=0, scale=0.5)
    logits = taotp.transformer([2], **params)[-1]
    for temperature in (0.5, 2.0):
        draws = np.array([taotp.decode([2], params, 1, temperature=temperature, rng=rng)[-1]
                          for _ in range(3000)])
        freq = np.bincount(draws, minlength=4) / 3000
        want = np.exp(logits / temperature) / np.exp(logits / temperature).sum()
        assert np.abs(freq - want).sum() / 2 < 0.04


def test_sampling_arguments_are_checked(rng):
    params = taotp.random_params(rng)
    with pytest.raises(ParamsError, match='needs rng=np.random.default_rng'):
        taotp.decode([1], params, 3, temperature=1.0)
    with pytest.raises(ParamsError, match='temperature must be >= 0'):
        taotp.decode([1], params, 3, temperature=-1, rng=rng)
    with pytest.raises(ParamsError, match='max_steps must be an integer >= 0'):
        taotp.decode([1], params, -2)
    with pytest.raises(ParamsError, match='1-D sequence'):
        taotp.decode([[1, 2]], params, 2)


def test_decode_batch_matches_decode_row_by_row(rng):
    params = taotp.random_params(rng, block_size=12)
    prompts = rng.integers(0, 7, size=(9, 4))
    got = taotp.decode_batch(prompts, params, n_steps=6, chunk=4)
    for row, out in zip(prompts, got):
        np.testing.assert_array_equal(out, taotp.decode(row, params, 6))
    with pytest.raises(ParamsError, match='block_size is 12'):
        taotp.decode_batch(prompts, params, n_steps=10)


def test_custom_positions_are_used_by_cached_and_naive_decoding(rng):
    params = taotp.random_params(rng, block_size=4)
    params['pos_emb'] = [params['pos_emb'], rng.normal(size=(3, 8))]

    def positions(tokens):  # two levels: a repeating counter and a coarser one
        n = len(tokens)
        return np.array([np.arange(n) % 4, (np.arange(n) // 4) % 3])

    cached = taotp.decode([1, 2], params, 9, positions=positions)
    naive = taotp.decode([1, 2], params, 9, positions=positions, cache=False)
    np.testing.assert_array_equal(cached, naive)
    assert len(cached) == 11  # the sequence outgrew pos_emb: ids repeat, which is allowed
