"""Encodings that do not shift (Section 7.3): random normal, random sign and Hamming codes.

Token embeddings need no shifting, so any table whose rows stay apart will do.
The Hamming code with r parity bits gives 2 ** k rows of n = 2^r - 1 signs
(k = n - r), any two differing in at least 3 places:

    >>> H = hamming_embedding(3)
    >>> H.shape, sorted(set(H.ravel().tolist()))
    ((16, 7), [-1.0, 1.0])
"""
import itertools

import numpy as np

from ._args import count as _count, generator as _generator, table as _table


def random_normal_encoding(q, d, rng):
    """(q, d) entries i.i.d. standard normal (Definition 7.8).

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.
    """
    q, d = _count(q, 'random_normal_encoding'), _count(d, 'random_normal_encoding', 'd')
    _table(q, d, 'random_normal_encoding')
    return _generator(rng, 'random_normal_encoding').standard_normal((q, d))


def random_sign_encoding(q, d, rng):
    """(q, d) entries i.i.d. +1 or -1 with probability 1/2 each (Definition 7.9).

    Sizes are ints of at most ``taotp.params.MAX_SIZE``; a program or table past
    ``MAX_NUMBERS`` numbers is refused before anything is built.
    """
    q, d = _count(q, 'random_sign_encoding'), _count(d, 'random_sign_encoding', 'd')
    _table(q, d, 'random_sign_encoding')
    return 2.0 * _generator(rng, 'random_sign_encoding').integers(0, 2, size=(q, d)) - 1.0


def all_bit_strings(n):
    """Every 0/1 tuple of length n, in lexicographic order (2 ** n of them)."""
    n = int(n)
    if n < 0:
        raise ValueError(f'all_bit_strings: n must be >= 0; got {n}')
    return list(itertools.product((0, 1), repeat=n))


MAX_TABLE_BYTES = 1 << 30     # 1 GiB: r = 4 needs 240 KiB, r = 5 would need 15.5 GiB


def _table_bytes(r):
    """Bytes of the float64 table for r parity bits: 2 ** k rows of n = 2^r - 1 entries."""
    if r >= 8:                   # more than 2 ** 240 bytes; never compute 2 ** r for a huge r
        return None
    n = 2 ** r - 1
    return (1 << (n - r)) * n * 8


def _hamming_codewords(r, who='hamming_embedding'):
    """All 2 ** k codewords (0/1 rows, k = 2^r - 1 - r) of the Hamming code with r parity bits.

    The parity-check matrix H in standard form has the non-zero r-bit strings
    as its columns, the r unit vectors first (H = [I_r | A]); the generator is
    then G = [I_k | A^T] and the codewords are m G mod 2 for every message m
    of k bits, in lexicographic order of m.  Tables larger than
    ``MAX_TABLE_BYTES`` (as float64) are refused before anything is allocated.
    """
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
        raise TypeError(f'{who}: r must be an int; got {type(r).__name__}')
    r = int(r)
    if r < 2:
        raise ValueError(f'{who}: r must be >= 2 (r parity bits, codewords of 2^r - 1 bits); '
                         f'got {r}')
    size = _table_bytes(r)
    if size is None or size > MAX_TABLE_BYTES:
        top = max(q for q in range(2, 8) if _table_bytes(q) <= MAX_TABLE_BYTES)
        need = f'{size / 2 ** 30:.3g} GiB' if size is not None else 'more than 2 ** 240 bytes'
        shape = f' (2 ** {2 ** r - 1 - r} x {2 ** r - 1} entries)' if size is not None else ''
        raise ValueError(f'{who}: the table (2 ** k rows of n = 2^r - 1 float64, k = n - r) must '
                         f'fit in MAX_TABLE_BYTES = {MAX_TABLE_BYTES:,} bytes (1 GiB), so r <= '
                         f'{top}; got r = {r}: {need}{shape}')
    n = 2 ** r - 1
    k = n - r
    columns = [bits for bits in all_bit_strings(r) if any(bits)][::-1]
    columns.sort(key=sum)                       # stable: the unit vectors come first
    A = np.array(columns, dtype=np.int64).T[:, r:]                 # (r, k)
    G = np.concatenate([np.eye(k, dtype=np.int64), A.T], axis=1)   # (k, n)
    return np.array(all_bit_strings(k), dtype=np.int64) @ G % 2


def hamming_embedding(r):
    """The Hamming(2^r - 1, 2^r - 1 - r) code as a +-1 encoding, shape (2 ** k, 2^r - 1).

    Bit 1 becomes +1 and bit 0 becomes -1.  Any two rows differ in at least 3
    coordinates, so their dot product is at most n - 6.  Rows come in the
    order of their k message bits (lexicographic), as in the book's Fig. 7.14.
    The table grows like 2 ** (2^r): r = 2, 3, 4 give 2, 16 and 2,048 rows; r = 5
    would need 2 ** 26 rows (15.5 GiB) and is refused (``MAX_TABLE_BYTES``).
    """
    return 2.0 * _hamming_codewords(r) - 1.0


def balanced_hamming_embedding(r):
    """The almost balanced Hamming encoding: the codewords with (n - 1)/2 or (n + 1)/2 ones.

    The book describes this variant in words only (the +1s and -1s of each row
    differ in number by at most one); this is our reading.  A subset of the
    code keeps the minimum distance 3.  For r = 4 there are 435 + 435 = 870
    such codewords (rows, in message order), each summing to +-1.
    """
    words = _hamming_codewords(r, 'balanced_hamming_embedding')
    keep = np.abs(2 * words.sum(axis=1) - words.shape[1]) <= 1
    return 2.0 * words[keep] - 1.0
