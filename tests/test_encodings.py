"""Chapter 7: rotation and sinusoidal encodings, shift matrices, and the chapter's numbers."""
import math
import time

import numpy as np
import pytest

import taotp
from taotp.encodings import (all_bit_strings, balanced_hamming_embedding,
                             complex_rotation_encoding, distinguishability,
                             distinguishability_bound, distinguishability_curves,
                             hamming_embedding, og_angles, og_embedding, padding_dimension,
                             positional_attention, random_angles, random_normal_encoding,
                             random_rotation_embedding, random_sign_encoding,
                             reversed_rotation_encoding, rotation_encoding, shift_by_delta,
                             train_offset_head, uniform_rotation_embedding, window_attention)
from taotp.encodings.codes import MAX_TABLE_BYTES


# ---------------------------------------------------------------- plain-Python references

def og_reference(q, d):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(same), entry by entry."""
    return np.array([[math.sin(pos / 10000 ** (2 * (k // 2) / d)) if k % 2 == 0
                      else math.cos(pos / 10000 ** (2 * (k // 2) / d)) for k in range(d)]
                     for pos in range(q)])


def distinguishability_reference(E):
    best = 1.0
    for i in range(len(E)):
        scores = [sum(a * b for a, b in zip(E[i], E[j])) for j in range(len(E))]
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        best = min(best, weights[i] / sum(weights))
    return best


# ---------------------------------------------------------------- definitions

def test_api_names():
    for name in ('og_embedding', 'rotation_encoding', 'distinguishability', 'padding_dimension',
                 'hamming_embedding'):
        assert getattr(taotp, name) is getattr(taotp.encodings, name)
    assert not hasattr(taotp.encodings, 'og_shift_matrix')   # the answer to puzzle 7.3


@pytest.mark.parametrize('q,d', [(1, 2), (7, 4), (64, 128), (33, 18), (300, 10)])
def test_og_embedding_matches_the_formula(q, d):
    np.testing.assert_allclose(og_embedding(q, d), og_reference(q, d), rtol=0, atol=1e-12)


def test_og_angles_values():
    np.testing.assert_allclose(og_angles(8), [1, 10000 ** -0.25, 10000 ** -0.5, 10000 ** -0.75],
                               rtol=1e-15)
    assert og_angles(1024).shape == (512,)
    assert og_angles(1024)[0] == 1.0 and og_angles(1024)[-1] > 1e-4


@pytest.mark.parametrize('q,d', [(64, 128), (256, 256), (512, 1024), (10, 4), (1000, 2), (97, 66)])
def test_theorem_7_3_sinusoidal_is_reversed_rotation(q, d):
    assert np.abs(reversed_rotation_encoding(q, og_angles(d)) - og_embedding(q, d)).max() < 1e-12


def test_real_views_of_the_complex_encoding(rng):
    thetas = rng.uniform(0, 2 * np.pi, 9)
    z = complex_rotation_encoding(20, thetas)
    assert z.dtype == np.complex128 and z.shape == (20, 9)
    real = rotation_encoding(20, thetas)
    rev = reversed_rotation_encoding(20, thetas)
    assert real.dtype == np.float64 and real.shape == (20, 18)
    np.testing.assert_array_equal(real[:, 0::2], z.real)
    np.testing.assert_array_equal(real[:, 1::2], z.imag)
    np.testing.assert_array_equal(rev[:, 0::2], z.imag)
    np.testing.assert_array_equal(rev[:, 1::2], z.real)
    # row 0 is (1, 0, 1, 0, ...) and row 1 is the angles themselves
    np.testing.assert_array_equal(real[0], np.tile([1.0, 0.0], 9))
    np.testing.assert_allclose(real[1, 0::2] + 1j * real[1, 1::2], np.exp(1j * thetas), atol=1e-15)


@pytest.mark.parametrize('d', [4, 16, 128, 1024])
def test_theorem_7_1_squared_norm_is_half_the_dims(d, rng):
    for enc in (og_embedding(50, d), random_rotation_embedding(50, d, rng),
                uniform_rotation_embedding(50, d)):
        np.testing.assert_allclose((enc ** 2).sum(axis=1), d / 2, rtol=1e-12)


# ---------------------------------------------------------------- shift matrices

@pytest.mark.parametrize('d', [2, 4, 6, 16, 64, 128, 256])
def test_sinusoidal_shifts_exact_for_many_deltas(d):
    q = 300
    E = og_embedding(q, d)
    for delta in list(range(-12, 13)) + [-299, -150, 77, 150, 299]:
        T = shift_by_delta(delta, og_angles(d), reversed=True)
        rows = np.arange(max(0, -delta), min(q, q - delta))
        assert np.abs(E[rows] @ T - E[rows + delta]).max() < 1e-12, (d, delta)


@pytest.mark.parametrize('reversed_', [False, True])
def test_shift_by_delta_any_angles(reversed_, rng):
    build = reversed_rotation_encoding if reversed_ else rotation_encoding
    for n in (1, 3, 10, 64):
        thetas = rng.uniform(0, 2 * np.pi, n)
        E = build(120, thetas)
        for delta in rng.integers(-119, 120, size=15):
            T = shift_by_delta(int(delta), thetas, reversed=reversed_)
            rows = np.arange(max(0, -delta), min(120, 120 - delta))
            assert np.abs(E[rows] @ T - E[rows + delta]).max() < 1e-12


def test_shift_matrices_are_rotations_that_compose(rng):
    thetas = rng.uniform(0, 2 * np.pi, 7)
    T3, T5 = shift_by_delta(3, thetas), shift_by_delta(5, thetas)
    np.testing.assert_allclose(T3 @ T3.T, np.eye(14), atol=1e-14)
    np.testing.assert_allclose(T3 @ T5, shift_by_delta(8, thetas), atol=1e-13)
    np.testing.assert_allclose(shift_by_delta(-3, thetas), T3.T, atol=1e-15)
    np.testing.assert_array_equal(shift_by_delta(0, thetas), np.eye(14))


def test_shift_is_the_complex_diagonal(rng):
    thetas = rng.uniform(0, 2 * np.pi, 5)
    z = complex_rotation_encoding(30, thetas)
    shifted = z[:25] * np.exp(1j * 5 * thetas)        # diag(exp(i delta theta)) of Theorem 7.2
    np.testing.assert_allclose(shifted, z[5:], atol=1e-13)
    np.testing.assert_allclose(rotation_encoding(30, thetas)[:25] @ shift_by_delta(5, thetas),
                               shifted.view(np.float64), atol=1e-13)


# ---------------------------------------------------------------- random and uniform encodings

def test_random_rotation_is_seeded_and_in_range():
    a = random_rotation_embedding(40, 12, np.random.default_rng(5))
    b = random_rotation_embedding(40, 12, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    thetas = random_angles(1000, np.random.default_rng(0))
    assert thetas.min() >= 0 and thetas.max() < 2 * np.pi
    np.testing.assert_allclose(rotation_encoding(40, random_angles(6, np.random.default_rng(5))), a)


def test_uniform_rotation_repeats_every_half_d_positions():
    E = uniform_rotation_embedding(100, 16)
    np.testing.assert_allclose(E[8:], E[:-8], atol=1e-12)
    assert not np.allclose(E[1:], E[:-1])


def test_random_normal_and_sign(rng):
    N = random_normal_encoding(2000, 15, rng)
    S = random_sign_encoding(2000, 15, rng)
    assert N.shape == S.shape == (2000, 15) and N.dtype == S.dtype == np.float64
    assert abs(N.mean()) < 0.05 and abs(N.std() - 1) < 0.05
    assert set(np.unique(S)) == {-1.0, 1.0} and abs(S.mean()) < 0.05


# ---------------------------------------------------------------- Hamming codes

def test_all_bit_strings():
    assert all_bit_strings(0) == [()]
    assert all_bit_strings(2) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert len(all_bit_strings(11)) == 2048


def _min_distance(E):
    bits = E > 0
    dist = (bits[:, None, :] != bits[None, :, :]).sum(-1)
    np.fill_diagonal(dist, bits.shape[1] + 1)
    return dist.min()


@pytest.mark.parametrize('r', [2, 3, 4])
def test_hamming_code_is_a_perfect_code(r):
    H = hamming_embedding(r)
    n, k = 2 ** r - 1, 2 ** r - 1 - r
    assert H.shape == (2 ** k, n)
    assert set(np.unique(H)) == {-1.0, 1.0}
    assert len({tuple(row) for row in H}) == 2 ** k
    assert _min_distance(H) == 3
    # perfect: the radius-1 balls around codewords cover all 2^n words exactly once
    assert 2 ** k * (n + 1) == 2 ** n
    # first k coordinates carry the message bits in lexicographic order
    np.testing.assert_array_equal((H[:, :k] > 0).astype(int), np.array(all_bit_strings(k)))


def test_hamming_15_4_numbers():
    H = hamming_embedding(4)
    assert H.shape == (2048, 15)
    assert H[:64].mean() == pytest.approx(-1 / 3)          # the book: -1/3, "highly unbalanced"
    weights = (H > 0).sum(axis=1)
    assert np.bincount(weights).tolist()[7:9] == [435, 435]


def test_balanced_hamming():
    B = balanced_hamming_embedding(4)
    assert B.shape == (870, 15)
    assert set(np.abs(B.sum(axis=1)).tolist()) == {1.0}
    assert _min_distance(B) >= 3
    assert abs(B[:64].mean()) < 0.05
    assert balanced_hamming_embedding(3).shape == (14, 7)


# ---------------------------------------------------------------- distinguishability

def test_distinguishability_matches_reference(rng):
    for E in (og_embedding(12, 6), random_rotation_embedding(9, 8, rng),
              random_normal_encoding(10, 3, rng), np.ones((4, 2))):
        assert distinguishability(E) == pytest.approx(distinguishability_reference(E.tolist()),
                                                      abs=1e-9)   # the book's softmax adds 1e-10
    assert distinguishability(np.ones((4, 2))) == pytest.approx(0.25)


def test_book_numbers_og():
    assert distinguishability(og_embedding(64, 128)) == pytest.approx(0.769, abs=5e-4)   # book ~0.77
    assert distinguishability(og_embedding(256, 256)) == pytest.approx(0.947, abs=5e-4)  # book 0.94
    assert distinguishability(og_embedding(256, 512)) == pytest.approx(0.998, abs=5e-4)


def test_uniform_angles_exercise_7_8():
    assert distinguishability(uniform_rotation_embedding(256, 256)) == pytest.approx(0.5, abs=1e-9)
    assert distinguishability(uniform_rotation_embedding(256, 128)) == pytest.approx(0.25, abs=1e-9)


def test_random_rotation_threshold_is_about_28_dims_not_10():
    """The book says > 0.99 from about 10 dims for 256 positions; medians over 30 seeds say ~28."""
    def median(d):
        return np.median([distinguishability(random_rotation_embedding(
            256, d, np.random.default_rng(s))) for s in range(30)])
    assert median(10) < 0.2
    assert 0.85 < median(20) < 0.92
    assert 0.99 < median(28) < 0.996
    assert median(26) < 0.99


def test_bound_rules_out_the_book_claim(rng):
    # any encoding with rows of squared norm d/2 and 256 rows: D <= bound
    assert distinguishability_bound(256, 10 / 2) < 0.4
    assert distinguishability_bound(256, 20 / 2) < 0.99 < distinguishability_bound(256, 22 / 2)
    for d in (6, 10, 20, 40):
        for seed in range(5):
            E = random_rotation_embedding(256, d, np.random.default_rng(seed))
            assert distinguishability(E) <= distinguishability_bound(256, d / 2)
    assert distinguishability(og_embedding(256, 20)) <= distinguishability_bound(256, 10)
    assert distinguishability_bound(1, 3.0) == 1.0


# ---------------------------------------------------------------- padding dimension

def test_padding_dimension_book_numbers():
    assert padding_dimension(og_embedding(64, 128)) == 16            # book 16
    assert padding_dimension(og_embedding(256, 128)) == 6
    for seed in range(5):                                             # book 0
        assert padding_dimension(random_rotation_embedding(64, 128, np.random.default_rng(seed))) == 0


def test_padding_dimension_counts_narrow_columns():
    E = np.array([[0.0, 5.0, 1.0], [0.002, 5.0, -1.0], [0.001, 5.0005, 0.0]])
    assert padding_dimension(E, 1e-3) == 2
    assert padding_dimension(E, 0.99e-3) == 1
    assert padding_dimension(E, 1.0) == 3
    assert isinstance(padding_dimension(E), int)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize('call,match', [
    (lambda: og_angles(7), r'og_angles: d must be even and at least 2; got 7'),
    (lambda: og_embedding(10, 0), r'og_embedding: d must be even and at least 2; got 0'),
    (lambda: og_embedding(0, 4), r'og_embedding: block_size must be at least 1; got 0'),
    (lambda: rotation_encoding(5, np.zeros((2, 2))), r'rotation_encoding: thetas must be a non-empty'),
    (lambda: rotation_encoding(5, []), r'rotation_encoding: thetas must be a non-empty'),
    (lambda: hamming_embedding(1), r'hamming_embedding: r must be >= 2 .*; got 1'),
    (lambda: distinguishability(np.zeros(5)), r'distinguishability: encoding must be a non-empty'),
    (lambda: padding_dimension(np.zeros((3, 2)), -1), r'padding_dimension: epsilon must be'),
    (lambda: all_bit_strings(-1), r'all_bit_strings: n must be >= 0; got -1'),
])
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize('call,match', [
    (lambda: og_embedding(10.5, 4), r'og_embedding: block_size must be an int; got float'),
    (lambda: og_angles('8'), r'og_angles: d must be an int; got str'),
    (lambda: shift_by_delta('1', [0.1]), r'shift_by_delta: delta must be a number; got str'),
    (lambda: random_angles(4, 3), r'random_angles: rng must be a numpy Generator; got int'),
    (lambda: hamming_embedding(4.0), r'hamming_embedding: r must be an int; got float'),
])
def test_type_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize('r, need', [(5, r'15\.5 GiB \(2 \*\* 26 x 31 entries\)'),
                                     (6, r'6\.76e\+10 GiB'), (7, r'1\.26e\+30 GiB'),
                                     (64, r'more than 2 \*\* 240 bytes')])
@pytest.mark.parametrize('fn', [hamming_embedding, balanced_hamming_embedding])
def test_hamming_tables_past_the_memory_limit_are_refused_at_once(fn, r, need):
    """r = 5 would allocate 2 ** 26 rows of 31 float64 (15.5 GiB): refused before any allocation."""
    assert MAX_TABLE_BYTES == 2 ** 30 and 2 ** 11 * 15 * 8 <= MAX_TABLE_BYTES < 2 ** 26 * 31 * 8
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf'{fn.__name__}: the table .* must fit in MAX_TABLE_BYTES '
                                         rf'= 1,073,741,824 bytes \(1 GiB\), so r <= 4; '
                                         rf'got r = {r}: {need}'):
        fn(r)
    assert time.perf_counter() - start < 1


# ---------------------------------------------------------------- positional attention

def test_positional_attention_is_causal_softmax_of_the_bilinear_score(rng):
    E, W = rng.normal(size=(7, 4)), rng.normal(size=(4, 4))
    P = positional_attention(E, W)
    for i in range(7):
        scores = [E[i] @ W @ E[j] for j in range(i + 1)]
        want = np.exp(np.array(scores) - max(scores))
        np.testing.assert_allclose(P[i, :i + 1], want / want.sum(), rtol=1e-9)  # the book's 1e-10
        assert not P[i, i + 1:].any()
    thetas = rng.uniform(0, 2 * np.pi, 3)
    np.testing.assert_array_equal(window_attention(np.eye(6), 5, thetas),
                                  positional_attention(rotation_encoding(5, thetas), np.eye(6)))


def test_train_offset_head_prefers_random_angles():
    og = og_embedding(64, 32)
    rand = random_rotation_embedding(64, 32, np.random.default_rng(0))
    _, losses_og, weight_og = train_offset_head(og, 3, steps=150)
    _, losses_rand, weight_rand = train_offset_head(rand, 3, steps=150)
    assert losses_og[-1] < losses_og[0] and losses_rand[-1] < losses_rand[0]
    assert weight_rand > 0.99 > weight_og > 0.5
    with pytest.raises(ValueError, match=r'train_offset_head: delta must be in 1..63; got 0'):
        train_offset_head(og, 0)


def test_distinguishability_curves():
    curves = distinguishability_curves(40, [4, 8], [6], seeds=3)
    assert curves['og'].tolist() == [distinguishability(og_embedding(40, d)) for d in (4, 8)]
    assert curves['random'].shape == (1, 3)
    assert curves['random'][0, 2] == distinguishability(
        random_rotation_embedding(40, 6, np.random.default_rng(2)))
    assert curves['bound'].tolist() == [distinguishability_bound(40, d / 2) for d in (4, 8)]


# ---------------------------------------------------------------- figures

def test_figures_draw_and_load_matplotlib_only_when_asked():
    import subprocess
    import sys
    code = ('import sys, taotp.encodings as e; e.og_embedding(4, 4); '
            'print("matplotlib" in sys.modules); e.draw_heatmaps; print("matplotlib" in sys.modules)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ['False', 'True']
    from taotp.encodings import figures
    fig = taotp.plot.figure((6, 3))
    figures.draw_heatmaps(fig, [og_embedding(8, 6), np.zeros((8, 6)), np.ones((4, 3))],
                          ['a', 'b', 'c'], cols=2)
    assert len(fig.axes) >= 4 and [ax.get_title() for ax in fig.axes[:2]] == ['a', 'b']
    fig = taotp.plot.figure((6, 3))
    figures.draw_explorer(fig, 'random sign', positions=16, dims=8)
    assert fig.axes[1].get_title().startswith('random sign, d = 8: D = ')
    for draw, args in ((figures.draw_angles, (64, 5)),
                       (figures.draw_distinguishability,
                        (distinguishability_curves(16, [2, 4], [2, 4], 2),))):
        fig = taotp.plot.figure((6, 3))
        draw(fig, *args)
        assert fig.axes
