"""Rotation encodings: positions as dials that each turn by their own angle (Section 7.1).

With n angles ``thetas`` the complex rotation encoding sends position a to
``exp(1j * a * thetas)`` in C^n.  Its real view interleaves real and imaginary
parts, ``(cos a t_1, sin a t_1, cos a t_2, ...)``; the *reversed* view puts
the imaginary (sine) part first.  Every rotation encoding is linearly
shiftable: ``shift_by_delta`` is the exact block-diagonal rotation T with
``enc[a] @ T == enc[a + delta]`` (vectors are rows, as everywhere in the book).

    >>> E = rotation_encoding(10, [0.3, 1.1])
    >>> E.shape
    (10, 4)
    >>> bool(np.allclose(E[2] @ shift_by_delta(5, [0.3, 1.1]), E[7]))
    True
"""
import numpy as np

from ._args import angles as _angles, count as _count, even_dims as _even_dims, \
    generator as _generator, table as _table


def complex_rotation_encoding(q, thetas):
    """The complex encoding a -> exp(i a thetas): shape (q, len(thetas)), dtype complex128.

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.
    """
    q = _count(q, 'complex_rotation_encoding')
    thetas = _angles(thetas, 'complex_rotation_encoding')
    _table(q, 2 * len(thetas), 'complex_rotation_encoding')
    return np.exp(1j * np.arange(q, dtype=np.float64)[:, None] * thetas)


def rotation_encoding(q, thetas):
    """Real view of the rotation encoding: columns (cos a t_1, sin a t_1, cos a t_2, ...).

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.

    Shape (q, 2 * len(thetas)).  The same memory as the complex encoding viewed
    as float64 (NumPy stores a complex number as its real part, then its
    imaginary part).
    """
    q, thetas = _count(q, 'rotation_encoding'), _angles(thetas, 'rotation_encoding')
    _table(q, 2 * len(thetas), 'rotation_encoding')
    z = complex_rotation_encoding(q, thetas)
    return np.ascontiguousarray(z).view(np.float64).copy()


def reversed_rotation_encoding(q, thetas):
    """Real view with the imaginary part first: columns (sin a t_1, cos a t_1, sin a t_2, ...).

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.
    """
    q, thetas = _count(q, 'reversed_rotation_encoding'), _angles(thetas,
                                                                 'reversed_rotation_encoding')
    _table(q, 2 * len(thetas), 'reversed_rotation_encoding')
    z = complex_rotation_encoding(q, thetas)
    out = np.zeros((z.shape[0], 2 * z.shape[1]))
    out[:, 0::2], out[:, 1::2] = z.imag, z.real
    return out


def shift_by_delta(delta, thetas, reversed=False):
    """The (2n, 2n) matrix T with ``enc[a] @ T == enc[a + delta]`` for a rotation encoding.

    ``enc`` is ``rotation_encoding(q, thetas)``, or the reversed view when
    ``reversed=True``.  T is block diagonal, one 2x2 rotation by delta * t_k
    per angle: the real form of the complex diagonal matrix
    diag(exp(i delta t_k)) of Theorem 7.2.  Any delta works, negative ones
    included, and the identity holds for every a, not only 0 <= a + delta < q.
    """
    if isinstance(delta, bool) or not isinstance(delta, (int, np.integer, float, np.floating)):
        raise TypeError(f'shift_by_delta: delta must be a number; got {type(delta).__name__}')
    thetas = _angles(thetas, 'shift_by_delta')
    c, s = np.cos(delta * thetas), np.sin(delta * thetas)
    n = len(thetas)
    T = np.zeros((2 * n, 2 * n))
    even, odd = np.arange(0, 2 * n, 2), np.arange(1, 2 * n, 2)
    T[even, even] = T[odd, odd] = c
    # (cos, sin) rows turn by +angle: the cosine slot feeds +sin into the sine slot;
    # in the reversed (sin, cos) layout the roles of the two slots swap.
    sign = -1.0 if reversed else 1.0
    T[even, odd] = sign * s
    T[odd, even] = -sign * s
    return T


def random_angles(n, rng):
    """n angles drawn independently and uniformly from [0, 2 pi)."""
    n = _count(n, 'random_angles', 'n')
    return _generator(rng, 'random_angles').uniform(0.0, 2 * np.pi, size=n)


def random_rotation_embedding(q, d, rng):
    """Rotation encoding (q, d) with d/2 angles uniform on [0, 2 pi) (Definition 7.5).

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.
    """
    d = _even_dims(d, 'random_rotation_embedding')
    _table(_count(q, 'random_rotation_embedding'), d, 'random_rotation_embedding')
    return rotation_encoding(q, random_angles(d // 2, rng))


def uniform_rotation_embedding(q, d):
    """Rotation encoding (q, d) whose d/2 angles are evenly spaced: 2 pi k / (d/2), k < d/2.

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.
    """
    d = _even_dims(d, 'uniform_rotation_embedding')
    _table(_count(q, 'uniform_rotation_embedding'), d, 'uniform_rotation_embedding')
    return rotation_encoding(q, 2 * np.pi * np.arange(d // 2) / (d // 2))
