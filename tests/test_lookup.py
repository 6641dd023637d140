"""Chapter 3, the programs: the book's counts and widths, precision, margins, error paths.

The sources' numbers come from ``taotp.programs.CATALOGUE`` (rows ``lookup-*``).
"""
import itertools

import numpy as np
import pytest

import taotp
from taotp.lookup import (build_lookup_transformer, build_untied_transformer, fit_hashes,
                          lookup_layout, lookup_precision, lookup_queries, lookup_reference,
                          precision_sweep, random_lookup_table, wire_lookup_transformer,
                          with_hardening)
from taotp.programs import CATALOGUE

ROWS = {10: 'lookup-10', 100: 'lookup-100', 1000: 'lookup-1000-untrained'}
# Our non-zero counts are the source's + 3 (exact zeros of the rotations; see the chapter).
NON0_OFFSET = 3


@pytest.fixture(scope='module')
def book():
    """entries -> (d_model, params) of the catalogue's programs of the source's sizes."""
    out = {}
    for n, key in ROWS.items():
        params = CATALOGUE[key].build()
        out[n] = (taotp.config(params)['d_model'], params)
    return out


# ----------------------------------------------------------------------------- the book's numbers

@pytest.mark.parametrize('n', ROWS, ids=ROWS.values())
def test_book_counts(n, book):
    d, params = book[n]
    row = CATALOGUE[ROWS[n]]
    vocab, block, l = 10, 5, 5
    assert taotp.count_params(params)['n_params'] == row.source_total
    assert row.source_total == d * (vocab + block + 1) + 4 * l * d * d
    assert taotp.count_non0_params(params)['n_params'] == row.source_non0 + NON0_OFFSET


@pytest.mark.parametrize('V, B, l, t', [(10, 5, 5, 5), (37, 11, 3, 7), (100, 20, 4, 10)])
def test_count_closed_form(V, B, l, t):
    ks, vs = random_lookup_table(8, l, V, 0)
    d = t + 3
    tied = build_lookup_transformer(ks, vs, V, B, t, optimization_iters=0)
    untied = build_untied_transformer(ks, vs, V, B, l, t)
    assert taotp.count_params(tied)['n_params'] == d * (V + B + 1) + 4 * l * d * d
    assert taotp.count_params(untied)['n_params'] == d * (2 * V + B + 1) + 4 * l * d * d


def test_layout_is_fixed_under_layer_norm():
    ks, vs = random_lookup_table(10, 5, 10, 1)
    params = build_lookup_transformer(ks, vs, 10, 12, 5)
    L = lookup_layout(5)
    x = params['tok_emb'][:, None] + params['pos_emb'][None]
    assert np.allclose(taotp.layer_norm(x), x)
    assert np.all(params['tok_emb'][:, L['pos']] == 0)
    assert np.all(params['pos_emb'][:, L['tok']] == 0)


def test_builder_is_fit_then_wire_and_seeded():
    ks, vs = random_lookup_table(30, 5, 20, 7)
    a = build_lookup_transformer(ks, vs, 20, 5, 6, rng=11)
    b = build_lookup_transformer(ks, vs, 20, 5, 6, rng=np.random.default_rng(11))
    E, M, _ = fit_hashes(ks, vs, 20, 6, rng=11)
    assert taotp.params_equal(a, b) and taotp.params_equal(a, wire_lookup_transformer(E, M, 5))
    assert a['out_emb'] is a['tok_emb'] and taotp.is_tied(a)


# ----------------------------------------------------------------------------- precision

@pytest.mark.parametrize('n, vocab', [(10, 10), (10, 100), (10, 1000), (100, 10), (100, 100),
                                      (100, 1000), (1000, 100)])
def test_hundred_percent_at_book_sizes_with_random_prefixes(n, vocab, book):
    d = book[n][0]
    for seed in range(2 if n * vocab < 10000 else 1):
        rng = np.random.default_rng([n, vocab, seed])
        ks, vs = random_lookup_table(n, 5, vocab, rng)
        params = build_lookup_transformer(ks, vs, vocab, 15, d - 3, rng=rng)
        assert lookup_precision(params, ks, vs, prefix_len=10, rng=rng) == 1.0
        assert lookup_precision(params, ks, vs, prefix_len=7, rng=rng, mode='keys') == 1.0


@pytest.mark.slow
def test_hundred_percent_1000_entries_vocab_1000(book):
    rng = np.random.default_rng(99)
    ks, vs = random_lookup_table(1000, 5, 1000, rng)
    params = build_lookup_transformer(ks, vs, 1000, 12, book[1000][0] - 3, rng=rng)
    assert lookup_precision(params, ks, vs, prefix_len=7, rng=rng) == 1.0


def test_agrees_with_plain_python_reference():
    rng = np.random.default_rng(8)
    ks, vs = random_lookup_table(60, 4, 25, rng)
    params = build_lookup_transformer(ks, vs, 25, 10, 8, rng=rng)
    queries = lookup_queries(ks, 6, 25, rng)
    out = taotp.decode_batch(queries, params, 1)[:, -1]
    want = [lookup_reference(q, ks, vs) for q in queries]
    assert out.tolist() == want
    assert taotp.decode(queries[0], params, max_steps=1)[-1] == want[0]


def test_exhaustive_small_table():
    """Every key of length 2 over 3 tokens (value = the larger token), every input up to the
    block size: the program agrees with the plain-Python reference on all 1,089 inputs."""
    ks = np.array(list(itertools.product(range(3), repeat=2)))
    vs = ks.max(axis=1)
    params = build_lookup_transformer(ks, vs, 3, 6, 4, rng=0)
    checked = 0
    for n in range(2, 7):
        inputs = np.array(list(itertools.product(range(3), repeat=n)))
        got = taotp.last_token_argmax(inputs, params)
        assert got.tolist() == [lookup_reference(x, ks, vs) for x in inputs]
        checked += len(inputs)
    assert checked == 1089


@pytest.mark.parametrize('harden, works', [(1.0, False), (10.0, False), (1e2, True),
                                           (1e4, True), (1e8, True), (1e15, True)])
def test_hardening_margin(harden, works):
    ks, vs = random_lookup_table(100, 5, 100, 5)
    params = build_lookup_transformer(ks, vs, 100, 15, 10, harden=harden)
    precision = lookup_precision(params, ks, vs, 10, np.random.default_rng(1))
    assert (precision == 1.0) == works


def test_with_hardening_equals_building_with_that_factor():
    ks, vs = random_lookup_table(30, 4, 20, 1)
    params = build_lookup_transformer(ks, vs, 20, 10, 6)
    soft = with_hardening(params, 10.0)
    assert np.allclose(soft['layers'][0]['Q'],
                       build_lookup_transformer(ks, vs, 20, 10, 6, harden=10.0)['layers'][0]['Q'])
    assert np.abs(params['layers'][0]['Q']).max() == pytest.approx(taotp.blocks.HARDEN)


def test_untied_precision():
    """Section 3.5.1: 1,000 entries, key length 5, vocab 1,000 -> about 100 % at 100 dims."""
    ks, vs = random_lookup_table(1000, 5, 1000, 2)
    wide = build_untied_transformer(ks, vs, 1000, 10, 5, 100, rng=3)
    narrow = build_untied_transformer(ks, vs, 1000, 10, 5, 10, rng=3)
    assert lookup_precision(wide, ks, vs, 5, 4) >= 0.99
    assert lookup_precision(narrow, ks, vs, 5, 4) < 0.9
    assert not taotp.is_tied(wide)


def test_untied_out_emb_sums_the_hashes_of_each_values_keys():
    ks, vs = np.array([[0, 1], [1, 0], [2, 2]]), np.array([3, 3, 1])
    params = build_untied_transformer(ks, vs, 4, 4, 2, 5, rng=0)
    hashes = [taotp.trace(k, params).final[-1] for k in ks]      # one key at a time
    assert np.allclose(params['out_emb'][3], hashes[0] + hashes[1])
    assert np.allclose(params['out_emb'][1], hashes[2])
    assert not params['out_emb'][[0, 2]].any()


def test_vocab_10_ceiling():
    """1,000 entries over a 10-token vocabulary stay far from 100 % (puzzle 3.9)."""
    ks, vs = random_lookup_table(1000, 5, 10, 0)
    params = build_lookup_transformer(ks, vs, 10, 5, 30, optimization_iters=300)
    assert 0.15 < lookup_precision(params, ks, vs) < 0.4


def test_precision_sweep_shape_and_nan():
    out = precision_sweep([10, 100], [3, 10], [5, 8], runs=1, key_len=3, optimization_iters=50)
    assert out.shape == (2, 2, 2, 1)
    assert np.isnan(out[1, 0]).all()       # 100 keys of length 3 over 3 tokens do not exist
    assert np.all((out[0] >= 0) & (out[0] <= 1))


def test_postln_variant_gives_the_same_answers():
    """Puzzle 3.7's claim, through the engine's PostLN switch."""
    ks, vs = random_lookup_table(40, 4, 30, 2)
    params = build_lookup_transformer(ks, vs, 30, 10, 8)
    assert lookup_precision(params, ks, vs, 6, 3, post_ln=True) == 1.0


# ----------------------------------------------------------------------------- errors

def test_error_paths():
    ks, vs = np.array([[1, 2], [3, 4]]), np.array([0, 1])
    with pytest.raises(ValueError, match=r'build_lookup_transformer: ks must have shape'):
        build_lookup_transformer(np.array([1, 2]), vs, 5, 4, 3)
    with pytest.raises(ValueError, match=r'vs must have shape \(n_entries,\) = \(2,\); got \(3,\)'):
        build_lookup_transformer(ks, np.array([0, 1, 2]), 5, 4, 3)
    with pytest.raises(ValueError, match=r'ks must hold ids in 0\.\.4; got 1\.\.7'):
        build_lookup_transformer(np.array([[1, 2], [3, 7]]), vs, 5, 4, 3)
    with pytest.raises(TypeError, match=r'ks must hold integer token ids; got dtype float64'):
        build_lookup_transformer(ks.astype(float), vs, 5, 4, 3)
    with pytest.raises(ValueError, match=r'keys must be distinct; got 2 keys with 1 repeats'):
        build_lookup_transformer(np.array([[1, 2], [1, 2]]), vs, 5, 4, 3)
    with pytest.raises(ValueError, match=r'block_size must be >= key length 2; got 1'):
        build_lookup_transformer(ks, vs, 5, 1, 3)
    with pytest.raises(ValueError, match=r'build_lookup_transformer: tok_dims must be >= 2 .*; '
                                         r'got 1'):
        build_lookup_transformer(ks, vs, 5, 4, 1)
    with pytest.raises(ValueError, match=r'optimization_iters must be >= 0; got -1'):
        build_lookup_transformer(ks, vs, 5, 4, 3, optimization_iters=-1)
    with pytest.raises(TypeError, match=r'build_lookup_transformer: rng must be None, an int seed '
                                        r'or a numpy Generator; got str'):
        build_lookup_transformer(ks, vs, 5, 4, 3, rng='seed')
    with pytest.raises(ValueError, match=r'build_untied_transformer: prefix_len must equal the '
                                         r'key length 2; got 3'):
        build_untied_transformer(ks, vs, 5, 4, 3, 4)
    with pytest.raises(ValueError, match=r'build_untied_transformer: tok_dims must be >= 2'):
        build_untied_transformer(ks, vs, 5, 4, 2, 1)
