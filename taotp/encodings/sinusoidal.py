"""The sinusoidal position encoding of the 2017 transformer (the "OG" encoding).

Position p in d dims has, for each i < d/2, ``sin(p / 10000 ** (2i/d))`` in
column 2i and ``cos`` of the same in column 2i + 1.  It is the reversed
rotation encoding with the angles ``og_angles(d)`` (Theorem 7.3), so it
shifts exactly like every rotation encoding:

    >>> from taotp.encodings import reversed_rotation_encoding, shift_by_delta
    >>> E = og_embedding(50, 8)
    >>> bool(np.abs(reversed_rotation_encoding(50, og_angles(8)) - E).max() < 1e-12)
    True
    >>> T = shift_by_delta(3, og_angles(8), reversed=True)
    >>> bool(np.abs(E[:47] @ T - E[3:]).max() < 1e-12)
    True
"""
import numpy as np

from ._args import count as _count, even_dims as _even_dims, table as _table


def og_angles(d):
    """The d/2 angles of the sinusoidal encoding in d real dims: 10000 ** (-2i/d), i < d/2.

    The book's Theorem 7.3 counts 2d dims and d angles; this function (like the
    book's code) takes the number of *real* dims.
    """
    d = _even_dims(d, 'og_angles')
    return 1.0 / 10_000.0 ** (2.0 * np.arange(d // 2) / d)


def og_embedding(block_size, d):
    """The sinusoidal position encoding (block_size, d): sines in even columns, cosines in odd.

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.
    """
    q = _count(block_size, 'og_embedding', 'block_size')
    d = _even_dims(d, 'og_embedding')
    _table(q, d, 'og_embedding')
    phase = np.arange(q, dtype=np.float64)[:, None] / 10_000.0 ** (np.arange(0, d, 2) / d)
    out = np.zeros((q, d))
    out[:, 0::2], out[:, 1::2] = np.sin(phase), np.cos(phase)
    return out
