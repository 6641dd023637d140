"""Chapter 7: rotation encodings, the sinusoidal ("OG") encoding, and how to compare encodings.

An *encoding* of q items into d real dimensions is an array of shape (q, d): row a
is the vector given to item (or position) a.

* A complex rotation encoding with angles ``thetas`` (n of them) sends a to
  ``exp(1j * a * thetas)`` in C^n.  Its real view interleaves real and imaginary
  parts, ``(cos a t_1, sin a t_1, cos a t_2, ...)``; the *reversed* view puts the
  imaginary (sine) part first.  The sinusoidal encoding of the 2017 transformer is
  the reversed view with angles ``og_angles(d)`` (Theorem 7.3).
* Every rotation encoding is linearly shiftable: ``shift_by_delta`` returns the
  exact block-diagonal rotation T with ``enc[a] @ T == enc[a + delta]``.
* ``distinguishability`` (Definition 7.6) and ``padding_dimension`` (Lemma 7.2)
  are the two yardsticks the chapter uses to compare angle choices.
* Random normal, random sign and Hamming-code encodings are the non-shiftable
  examples of Section 7.3.

Conventions: float64 everywhere, row vectors (``x @ T``), and randomness only
through an ``rng: np.random.Generator`` argument.
"""
import itertools

import numpy as np

from .model import softmax

__all__ = [
    'og_angles', 'og_embedding', 'complex_rotation_encoding', 'rotation_encoding',
    'reversed_rotation_encoding', 'shift_by_delta', 'og_shift_matrix', 'random_angles',
    'random_rotation_embedding', 'uniform_rotation_embedding', 'random_normal_encoding',
    'random_sign_encoding', 'all_bit_strings', 'hamming_embedding',
    'balanced_hamming_embedding', 'distinguishability', 'distinguishability_bound',
    'padding_dimension', 'encoding_heatmaps',
]


def _even_dims(d, who, minimum=2):
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f'{who}: d must be an int; got {type(d).__name__}')
    if d < minimum or d % 2:
        raise ValueError(f'{who}: d must be even and at least {minimum}; got {d}')
    return int(d)


def _count(q, who, name='q'):
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)):
        raise TypeError(f'{who}: {name} must be an int; got {type(q).__name__}')
    if q < 1:
        raise ValueError(f'{who}: {name} must be at least 1; got {q}')
    return int(q)


def _angles(thetas, who):
    thetas = np.asarray(thetas, dtype=np.float64)
    if thetas.ndim != 1 or len(thetas) == 0:
        raise ValueError(f'{who}: thetas must be a non-empty 1-D array of angles; '
                         f'got shape {thetas.shape}')
    return thetas


def og_angles(d):
    """The n = d/2 angles of the sinusoidal encoding in d dims: 10000 ** (-2i/d), i < d/2.

    The book's Theorem 7.3 counts 2d dims and d angles; this function (like the
    book's code) takes the number of *real* dims.
    """
    d = _even_dims(d, 'og_angles')
    return 1.0 / 10_000.0 ** (2.0 * np.arange(d // 2) / d)


def og_embedding(block_size, d):
    """The sinusoidal position encoding (block_size, d): sines in even columns, cosines in odd."""
    q = _count(block_size, 'og_embedding', 'block_size')
    d = _even_dims(d, 'og_embedding')
    phase = np.arange(q, dtype=np.float64)[:, None] / 10_000.0 ** (np.arange(0, d, 2) / d)
    out = np.zeros((q, d))
    out[:, 0::2], out[:, 1::2] = np.sin(phase), np.cos(phase)
    return out


def complex_rotation_encoding(q, thetas):
    """The complex encoding a -> exp(i a thetas), shape (q, len(thetas)), dtype complex128."""
    q = _count(q, 'complex_rotation_encoding')
    thetas = _angles(thetas, 'complex_rotation_encoding')
    return np.exp(1j * np.arange(q, dtype=np.float64)[:, None] * thetas)


def rotation_encoding(q, thetas):
    """Real view of the rotation encoding: columns (cos a t_1, sin a t_1, cos a t_2, ...).

    Shape (q, 2 * len(thetas)).  Equal to the complex encoding viewed as float64
    (NumPy stores a complex number as its real part followed by its imaginary part).
    """
    z = complex_rotation_encoding(_count(q, 'rotation_encoding'),
                                  _angles(thetas, 'rotation_encoding'))
    return np.ascontiguousarray(z).view(np.float64).copy()


def reversed_rotation_encoding(q, thetas):
    """Real view with the imaginary part first: columns (sin a t_1, cos a t_1, sin a t_2, ...)."""
    z = complex_rotation_encoding(_count(q, 'reversed_rotation_encoding'),
                                  _angles(thetas, 'reversed_rotation_encoding'))
    out = np.zeros((z.shape[0], 2 * z.shape[1]))
    out[:, 0::2], out[:, 1::2] = z.imag, z.real
    return out


def shift_by_delta(delta, thetas, reversed=False):
    """The (2n, 2n) matrix T with ``enc[a] @ T == enc[a + delta]`` for a rotation encoding.

    ``enc`` is ``rotation_encoding(q, thetas)`` (or the reversed view when
    ``reversed=True``).  T is block diagonal: one 2x2 rotation by delta * t_k per
    angle, i.e. the real form of the complex diagonal matrix diag(exp(i delta t_k))
    of Theorem 7.2.  Any integer delta works, negative ones included, and the
    identity holds for every a (not just 0 <= a + delta < q).
    """
    if isinstance(delta, bool) or not isinstance(delta, (int, np.integer, float, np.floating)):
        raise TypeError(f'shift_by_delta: delta must be a number; got {type(delta).__name__}')
    thetas = _angles(thetas, 'shift_by_delta')
    c, s = np.cos(delta * thetas), np.sin(delta * thetas)
    n = len(thetas)
    T = np.zeros((2 * n, 2 * n))
    even, odd = np.arange(0, 2 * n, 2), np.arange(1, 2 * n, 2)
    T[even, even] = c
    T[odd, odd] = c
    # (cos, sin) rows turn by +angle: the cosine slot feeds +sin into the sine slot.
    sign = -1.0 if reversed else 1.0
    T[even, odd] = sign * s
    T[odd, even] = -sign * s
    return T


def og_shift_matrix(delta, d):
    """The shift matrix of the sinusoidal encoding: ``og_embedding(q, d)[a] @ T == row a + delta``."""
    return shift_by_delta(delta, og_angles(_even_dims(d, 'og_shift_matrix')), reversed=True)


def random_angles(n, rng):
    """n angles drawn independently and uniformly from [0, 2 pi)."""
    n = _count(n, 'random_angles', 'n')
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'random_angles: rng must be a numpy Generator; got {type(rng).__name__}')
    return rng.uniform(0.0, 2 * np.pi, size=n)


def random_rotation_embedding(q, d, rng):
    """Rotation encoding (q, d) with d/2 angles uniform on [0, 2 pi) (Definition 7.5)."""
    d = _even_dims(d, 'random_rotation_embedding')
    return rotation_encoding(q, random_angles(d // 2, rng))


def uniform_rotation_embedding(q, d):
    """Rotation encoding (q, d) whose d/2 angles are evenly spaced: 2 pi k / (d/2), k < d/2."""
    d = _even_dims(d, 'uniform_rotation_embedding')
    return rotation_encoding(q, 2 * np.pi * np.arange(d // 2) / (d // 2))


def random_normal_encoding(q, d, rng):
    """(q, d) entries i.i.d. standard normal (Definition 7.8)."""
    q, d = _count(q, 'random_normal_encoding'), _count(d, 'random_normal_encoding', 'd')
    return rng.standard_normal((q, d))


def random_sign_encoding(q, d, rng):
    """(q, d) entries i.i.d. +1 or -1 with probability 1/2 each (Definition 7.9)."""
    q, d = _count(q, 'random_sign_encoding'), _count(d, 'random_sign_encoding', 'd')
    return 2.0 * rng.integers(0, 2, size=(q, d)) - 1.0


def all_bit_strings(n):
    """Every 0/1 tuple of length n, in lexicographic order (2 ** n of them)."""
    n = int(n)
    if n < 0:
        raise ValueError(f'all_bit_strings: n must be >= 0; got {n}')
    return list(itertools.product((0, 1), repeat=n))


def _hamming_codewords(r):
    """All 2 ** (2^r - 1 - r) codewords (0/1 rows) of the Hamming code with r parity bits.

    Parity-check matrix H in standard form: its columns are the non-zero r-bit
    strings, the r unit vectors first (so H = [I_r | A]); then the generator is
    G = [I_k | A^T] and the codewords are m G mod 2 for every message m of k bits.
    """
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 2 <= r <= 5:
        raise ValueError(f'hamming_embedding: r must be an int from 2 to 5; got {r!r}')
    n = 2 ** r - 1
    k = n - r
    columns = [bits for bits in all_bit_strings(r) if any(bits)][::-1]
    columns.sort(key=sum)                       # stable: unit vectors come first, as e_1..e_r
    A = np.array(columns, dtype=np.int64).T[:, r:]          # (r, k)
    G = np.concatenate([np.eye(k, dtype=np.int64), A.T], axis=1)   # (k, n)
    messages = np.array(all_bit_strings(k), dtype=np.int64)
    return messages @ G % 2


def hamming_embedding(r):
    """The Hamming(2^r - 1, r) code as a +-1 encoding: shape (2 ** k, 2^r - 1), k = 2^r - 1 - r.

    Bit 1 becomes +1 and bit 0 becomes -1.  Any two rows differ in at least 3
    coordinates, so their dot product is at most n - 6.  Rows come in the order of
    their k message bits (lexicographic), as in the book's Figure 7.14.
    """
    return 2.0 * _hamming_codewords(r) - 1.0


def balanced_hamming_embedding(r):
    """The almost-balanced Hamming encoding: the codewords with (n - 1)/2 or (n + 1)/2 ones.

    The book describes this variant only in words (the +1s and -1s of each row
    differ in number by at most one) and gives no code; this is our reading.
    Taking a subset of the code keeps the minimum distance 3.  For r = 4 there are
    435 + 435 = 870 such codewords (rows, in message order), each summing to +-1.
    """
    words = _hamming_codewords(r)
    n = words.shape[1]
    weight = words.sum(axis=1)
    keep = np.abs(2 * weight - n) <= 1
    return 2.0 * words[keep] - 1.0


def _encoding(encoding, who):
    arr = np.asarray(encoding)
    if arr.dtype.kind not in 'biuf' or arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(f'{who}: encoding must be a non-empty real 2-D array (q, d); '
                         f'got shape {arr.shape} and dtype {arr.dtype}')
    return arr.astype(np.float64)


def distinguishability(encoding):
    """Definition 7.6: D = min_i softmax(E E^T)[i, i] for an encoding E of shape (q, d).

    Row i of softmax(E E^T) is the attention a query equal to E[i] pays to keys
    E[0..q-1] with no hardening factor and no 1/sqrt(d) scaling (the matrix is
    symmetric, so rows or columns give the same diagonal).  D near 1 means every
    position can pick itself out sharply; D = 1/c when c rows are identical.
    """
    E = _encoding(encoding, 'distinguishability')
    gram = np.einsum('id,jd->ij', E, E)     # plain loop: faster than threaded BLAS at these sizes
    return float(np.min(np.diag(softmax(gram, axis=-1))))


def distinguishability_bound(q, sq_norm):
    """An upper bound on the distinguishability of *any* q-row encoding with rows of squared norm sq_norm.

    With F = E E^T, D_i = 1 / (1 + sum_{j != i} exp(F_ij - sq_norm)).  By
    Jensen the sum is at least (q - 1) exp(mean_j F_ij - sq_norm), and some row
    has mean_{j != i} F_ij >= -sq_norm / (q - 1) because sum_{i,j} F_ij =
    |sum_i E_i|^2 >= 0.  Hence D <= 1 / (1 + (q - 1) exp(-sq_norm q / (q - 1))).
    For a rotation encoding in d real dims sq_norm = d / 2.
    """
    q = _count(q, 'distinguishability_bound')
    if q == 1:
        return 1.0
    return float(1.0 / (1.0 + (q - 1) * np.exp(-sq_norm * q / (q - 1))))


def padding_dimension(encoding, epsilon=1e-3):
    """The *standard* padding dimension (Lemma 7.2): columns whose range is at most 2 epsilon.

    A column with max - min <= 2 epsilon stays within epsilon of its midpoint for
    every row, so those coordinates can serve as (almost) position-free space.
    This is the per-coordinate (l-infinity) reading of Definition 7.7, the one
    Lemma 7.2 computes; with the Euclidean ball of the definition, k such
    coordinates only guarantee a radius of epsilon * sqrt(k).
    """
    E = _encoding(encoding, 'padding_dimension')
    if not np.isfinite(epsilon) or epsilon < 0:
        raise ValueError(f'padding_dimension: epsilon must be a finite number >= 0; got {epsilon}')
    spread = E.max(axis=0) - E.min(axis=0)
    return int(np.sum(spread <= 2 * epsilon))


def encoding_heatmaps(encodings, titles=None, size=None, ylabel='position', cols=None):
    """Side-by-side heatmaps of encodings (each (q, d)): rows are items, columns dims.

    Returns a matplotlib Figure built without pyplot (shown once at the end of a cell).
    """
    from matplotlib.ticker import MaxNLocator
    encodings = [np.asarray(e, dtype=float) for e in encodings]
    cols = cols or len(encodings)
    rows = -(-len(encodings) // cols)
    size = size or (3.4 * cols, 2.9 * rows)
    scales = [float(np.abs(e).max()) or 1.0 for e in encodings]
    shared = len(set(scales)) == 1           # one colour bar per row is enough
    from matplotlib.figure import Figure
    fig = Figure(figsize=size, layout='constrained')
    axes = np.atleast_1d(fig.subplots(rows, cols)).ravel()
    for i, ax in enumerate(axes):
        if i >= len(encodings):
            ax.set_axis_off()
            continue
        im = ax.imshow(encodings[i], cmap='RdBu_r', vmin=-scales[i], vmax=scales[i],
                       aspect='auto', interpolation='nearest')
        ax.set_title(titles[i] if titles else f'encoding {i}', fontsize=9)
        ax.set_xlabel('dimension', fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if i % cols == 0:
            ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        if not shared or i % cols == cols - 1 or i == len(encodings) - 1:
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
    return fig
