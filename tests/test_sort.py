"""Chapter 5: Min, Max and Sort against plain-Python references, counts, limits, margins."""
import itertools

import numpy as np
import pytest

import taotp
from taotp import as_dtype, first_failure, last_token_argmax, tolerated_exponents
from taotp.programs import CATALOGUE
from taotp.sort import (build_max_transformer, build_min_transformer,
                        build_sort_transformer, max_so_far, min_angles, min_errors, min_so_far,
                        nextpoint, powerpoints, random_min_inputs, random_sort_inputs,
                        sort_errors, sort_reference, stretch)
from taotp.sort.sorting import HARDEN as SORT_HARDEN


# ----------------------------------------------------------------------------- references

def test_references_on_examples():
    assert min_so_far([6, 2, 0, 12, 18, 7, 12, 12]) == [6, 2, 0, 0, 0, 0, 0, 0]
    assert max_so_far([6, 2, 0, 12, 18, 7, 12, 12]) == [6, 6, 6, 12, 18, 18, 18, 18]
    assert sort_reference([6, 2, 12, 18, 7, 0]) == [2, 6, 7, 12, 18]
    with pytest.raises(ValueError, match='must end with the terminator 0'):
        sort_reference([3, 1])


def test_book_examples():
    p = build_min_transformer(19, 8)
    assert taotp.decode([6, 2, 0, 12, 18, 7, 12, 12], p, max_steps=1)[-1] == 0
    p = build_sort_transformer(19, 16)
    assert taotp.decode([6, 2, 12, 18, 7, 0], p, max_steps=5)[6:].tolist() == [2, 6, 7, 12, 18]


# ----------------------------------------------------------------------------- Min and Max

def test_min_tokens_on_upper_half_circle():
    p = build_min_transformer(10, 4)
    angles = min_angles(10)
    assert np.all((angles > 0) & (angles < np.pi))
    assert np.allclose(p['tok_emb'], taotp.pos_enc_3d(angles))
    assert p['out_emb'] is p['tok_emb'] and not p['pos_emb'].any()


@pytest.mark.parametrize('builder, reference', [(build_min_transformer, min_so_far),
                                                (build_max_transformer, max_so_far)],
                         ids=['min', 'max'])
def test_min_max_exhaustive_small(builder, reference):
    """Every sequence of length 5 over 5 tokens; every prefix's answer is checked."""
    params = builder(5, 5)
    inputs = np.array(list(itertools.product(range(5), repeat=5)))
    got = taotp.transformer_batch(inputs, params).argmax(-1)
    want = np.array([reference(row) for row in inputs])
    assert np.array_equal(got, want)


@pytest.mark.parametrize('builder, pick', [(build_min_transformer, np.min),
                                           (build_max_transformer, np.max)], ids=['min', 'max'])
@pytest.mark.parametrize('vocab_size', [100, 1000, 2000])
def test_min_max_seeded_up_to_the_limit(builder, pick, vocab_size, rng):
    params = builder(vocab_size, 32)
    inputs = random_min_inputs(vocab_size, 32, 300, rng=rng)
    assert np.array_equal(last_token_argmax(inputs, params), pick(inputs, axis=1))


def test_min_decode_batch_all_prefixes(rng):
    params = build_min_transformer(50, 12)
    inputs = rng.integers(0, 50, size=(200, 12))
    got = taotp.transformer_batch(inputs, params).argmax(-1)
    assert np.array_equal(got, np.minimum.accumulate(inputs, axis=1))


def test_min_breaking_size_float64_and_float32():
    """Pinned measurements (seeded): hard inputs break at 4,000 in float64 (the wrong logit
    wins by ~1e-8, far above rounding); float32 is swept coarsely because its first errors
    are exact ties."""
    sizes = [1000, 2000, 3000, 4000, 5000]
    assert first_failure(sizes, min_errors) == (3000, 4000)
    assert first_failure(sizes, lambda v: min_errors(v, largest=True)) == (3000, 4000)
    coarse = [1000, 2000, 3000, 8000]
    assert first_failure(coarse, lambda v: min_errors(v, dtype=np.float32)) == (3000, 8000)
    assert first_failure(coarse, lambda v: min_errors(v, dtype=np.float32, largest=True)) \
        == (3000, 8000)
    # uniform inputs: float32 already fails at 10,000, float64 does not
    assert min_errors(10000, hard=False, dtype=np.float32, length=63) > 100
    assert min_errors(10000, hard=False, length=63) == 0


@pytest.mark.slow
def test_min_uniform_inputs_float64_up_to_300k():
    for v in (30000, 100000, 300000):
        assert min_errors(v, hard=False, length=63) == 0


def test_min_hardening_ranges():
    exps = list(range(0, 12)) + [20, 100, 300]
    q_ok = tolerated_exponents(lambda q: min_errors(1000, harden=q), exps)
    assert q_ok[0] == 7 and 300 in q_ok
    p_ok = tolerated_exponents(lambda s: min_errors(1000, out_scale=s),
                               list(range(0, 8)) + [150, 160])
    assert p_ok == [3, 4, 5, 6, 7, 150]     # 1e160 squared overflows the layer-norm variance


@pytest.mark.parametrize('count', [('tiny', 10, 10), ('book', 19, 8), ('big', 100, 64)],
                         ids=lambda c: c[0])
def test_min_counts(count):
    _, vocab, block = count
    for builder in (build_min_transformer, build_max_transformer):
        p = builder(vocab, block)
        total, non0 = taotp.count_params(p), taotp.count_non0_params(p)
        assert total['n_params'] == 3 * vocab + 3 * block + 39     # 6n + 39 when vocab = block
        assert non0['non_emb'] == CATALOGUE['min-10'].facts['non0_outside_tok_emb'] and non0['pos_emb'] == 0
    assert taotp.count_params(build_min_transformer(10, 10))['n_params'] \
        == CATALOGUE['min-10'].source_total


# ----------------------------------------------------------------------------- powerpoints

def test_stretch_and_powerpoints():
    assert stretch(np.array([0.0, 1.0, 2.0]), 4.0).tolist() == [0.0, 2.0, 4.0]
    assert powerpoints(4, mx=1.75).tolist() == [0.0, 1.0, 1.5, 1.75]
    pts = powerpoints(28)
    assert pts[0] == 0 and pts[-1] == np.pi and np.all(np.diff(pts) > 0)
    assert np.allclose(np.diff(pts)[1:] / np.diff(pts)[:-1], 0.5)


@pytest.mark.parametrize('n', [5, 12, 28])
def test_nextpoint_orders_by_distance(n):
    """q_i is nearest to p_{i+1}, then p_{i+2}, ..., and only then to p_i, p_{i-1}, ..."""
    p = powerpoints(n)
    q = nextpoint(p)
    for i in range(n - 2):
        order = np.argsort(np.abs(q[i] - p), kind='stable').tolist()
        assert order == list(range(i + 1, n)) + list(range(i, -1, -1))
    assert q[n - 2] == np.pi and q[n - 1] == 0.0


def test_powerpoint_errors():
    with pytest.raises(ValueError, match='n must be >= 2; got 1'):
        powerpoints(1)
    with pytest.raises(TypeError, match='n must be an int; got float'):
        powerpoints(3.0)
    with pytest.raises(ValueError, match='at least 2 points; got shape'):
        nextpoint(np.array([1.0]))


# ----------------------------------------------------------------------------- Sort

def test_sort_counts_book():
    p = build_sort_transformer(28, 100)
    total, non0 = taotp.count_params(p), taotp.count_non0_params(p)
    assert total['n_params'] == 918 == 6 * 28 + 6 * 100 + 150
    # the book prints 166 as the whole count: that is tok_emb alone
    assert non0['n_params'] == CATALOGUE['sort-28'].source_non0
    assert non0['tok_emb'] == CATALOGUE['sort-28'].facts['non0_printed']
    assert non0['non_emb'] == CATALOGUE['sort-28'].facts['non0_outside_tok_emb'] and non0['pos_emb'] == 0
    cfg = taotp.config(p)
    assert (cfg['n_layers'], cfg['n_heads'], cfg['d_model'], cfg['d_ff']) == (1, [1], 6, [0])


def test_sort_head_index_fixed():
    layer = build_sort_transformer(10, 20)['layers'][0]
    assert np.array_equal(layer['Q'][0, 3:, :3], np.eye(3) * SORT_HARDEN)
    assert np.array_equal(layer['K'][0, :3, :3], np.eye(3))
    assert not layer['Q'][0, :3].any() and not layer['K'][0, 3:].any()


@pytest.mark.parametrize('n', [4, 6, 8])
def test_sort_all_subsets_small_vocab(n, rng):
    """Every non-empty subset of 1..n-1, each in a random order and in reversed sorted order."""
    params = build_sort_transformer(n, 2 * n)
    for size in range(1, n):
        subsets = np.array(list(itertools.combinations(range(1, n), size)))
        shuffled = np.array([rng.permutation(s) for s in subsets])
        for rows in (shuffled, subsets[:, ::-1]):
            prompts = np.concatenate([rows, np.zeros((len(rows), 1), np.int64)], axis=1)
            got = taotp.decode_batch(prompts, params, size)[:, size + 1:]
            assert np.array_equal(got, np.sort(rows, axis=1)), (n, size)


def test_sort_every_order_n6():
    params = build_sort_transformer(6, 12)
    for size in range(1, 6):
        rows = np.array(list(itertools.permutations(range(1, 6), size)))
        prompts = np.concatenate([rows, np.zeros((len(rows), 1), np.int64)], axis=1)
        got = taotp.decode_batch(prompts, params, size)[:, size + 1:]
        assert np.array_equal(got, np.sort(rows, axis=1))


@pytest.mark.parametrize('n', [9, 16, 20, 24, 27, 28])
def test_sort_seeded_permutations_up_to_28(n, rng):
    params = build_sort_transformer(n, 2 * n)
    for length in sorted({1, n // 2, n - 1}):
        prompts = random_sort_inputs(n, length, 20, rng=rng)
        got = taotp.decode_batch(prompts, params, length)[:, length + 1:]
        assert [list(r) for r in got] == [sort_reference(r) for r in prompts]


def test_sort_limit_float64():
    """Exact up to 28 (the book's number), every input wrong at 29 (full permutations)."""
    limit = CATALOGUE['sort-28'].facts['exact_up_to']
    assert first_failure(range(24, 31), sort_errors) == (limit, limit + 1)
    assert sort_errors(limit + 1) == 50


def test_sort_limit_float32():
    """With the book's constants float32 overflows (1e20 squared > 3.4e38): every n fails.
    With out_scale = 1e8 it is exact up to 15 and fails at 16 on one machine, exact up to
    14 on another (float32 rounding inside the BLAS kernel decides the last size)."""
    assert first_failure(range(4, 10), lambda n: sort_errors(n, dtype=np.float32)) == (None, 4)
    assert first_failure(range(8, 20), lambda n: sort_errors(n, dtype=np.float32,
                                                             out_scale=1e8)) in {(14, 15),
                                                                                 (15, 16)}


def test_as_dtype_keeps_float32_through_the_forward_pass():
    p32 = as_dtype(build_sort_transformer(8, 16, out_scale=1e8))
    assert p32['out_emb'] is p32['tok_emb']
    t = taotp.trace([3, 1, 0], p32)
    assert t.logits.dtype == np.float32 and t.attn[0].dtype == np.float32
    assert build_sort_transformer(8, 16)['tok_emb'].dtype == np.float64


def test_sort_hardening_ranges():
    q_ok = tolerated_exponents(lambda q: sort_errors(28, harden=q), [14, 15, 16, 20, 100, 307])
    assert q_ok == [16, 20, 100, 307]
    v_ok = tolerated_exponents(lambda v: sort_errors(28, out_scale=v), [0, 1, 2, 20, 150, 160])
    assert v_ok == [1, 2, 20, 150]


# ----------------------------------------------------------------------------- errors

@pytest.mark.parametrize('call, kind, message', [
    (lambda: build_min_transformer(1, 4), ValueError, 'vocab_size must be >= 2; got 1'),
    (lambda: build_min_transformer(10, 0), ValueError, 'block_size must be >= 1; got 0'),
    (lambda: build_max_transformer('10', 4), TypeError, 'vocab_size must be an int; got str'),
    (lambda: build_min_transformer(10, 4, harden=-1.0), ValueError,
     'build_min_transformer: harden must be a positive finite number; got -1.0'),
    (lambda: build_sort_transformer(2, 4), ValueError, r'build_sort_transformer: n must be >= 3'),
    (lambda: build_sort_transformer(10, 4, out_scale=np.inf), ValueError,
     'build_sort_transformer: out_scale must be a positive finite number; got inf'),
    (lambda: random_sort_inputs(5, 5, 3, rng=np.random.default_rng(0)), ValueError,
     'length must be <= n - 1 = 4; got 5'),
    (lambda: last_token_argmax(np.array([1, 2]), build_min_transformer(4, 4)), ValueError,
     r'tokens must have shape \(batch, n\)'),
])
def test_error_messages(call, kind, message):
    with pytest.raises(kind, match=message):
        call()
