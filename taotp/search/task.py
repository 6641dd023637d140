"""The Search task in plain Python: the reference answer and seeded inputs that have one.

The query is the last ``prefix_len`` tokens; the answer is the token right after
its one earlier occurrence, and undefined (``None``) when the query occurs zero
or several times.
"""
import numpy as np

from ..params import check_numbers, check_size

__all__ = ['search_reference', 'random_search_inputs', 'success_rate', 'MIN_SUCCESS_RATE',
           'MAX_FAILED_DRAWS']


def _check_sizes(where, vocab_size, block_size, prefix_len, length_name='block_size'):
    for name, value, low in (('vocab_size', vocab_size, 1), ('prefix_len', prefix_len, 2),
                             (length_name, block_size, 1)):
        check_size(where, name, value, low=None)           # an int, at most MAX_SIZE
        if value < low:
            raise ValueError(f'{where}: {name} must be >= {low}; got {value}')
    if block_size < prefix_len + 2:
        raise ValueError(f'{where}: {length_name} must be >= prefix_len + 2 = {prefix_len + 2} '
                         f'(a key, its next token and the query); got {block_size}')


def search_reference(tokens, prefix_len, as_model=False):
    """Plain-Python Search: the token after the one earlier occurrence of the query.

    The query is the last ``prefix_len`` tokens; an occurrence must start early
    enough that its next token exists.  Returns ``None`` (undefined behaviour) when
    the query occurs zero or several times.  ``as_model=True`` first prepends
    ``prefix_len`` copies of the first token, which is what the transformer sees
    at positions that have fewer than ``prefix_len`` predecessors.

        >>> search_reference([1, 2, 3, 4, 5, 6, 1, 2, 3], 3)
        4
        >>> search_reference([1, 2, 5, 1, 2, 7, 1, 2], 2) is None    # the query occurs twice
        True
    """
    x = [int(t) for t in tokens]
    L = prefix_len
    if len(x) < L + 1:
        return None
    query = x[-L:]
    padded = [x[0]] * L + x if as_model else x
    hits = [s for s in range(len(padded) - L) if padded[s:s + L] == query]
    return padded[hits[0] + L] if len(hits) == 1 else None


MIN_SUCCESS_RATE = 1e-3     # rarer inputs than this are refused up front
MAX_FAILED_DRAWS = 20_000   # consecutive useless draws before giving up (well under a second)


def _unique_occurrence(x, L):
    """Whether both views of ``search_reference`` agree on a defined answer.

    The model's view prepends ``L`` copies of ``x[0]``; its windows start at
    0..length-1 and include every window of the plain view (shifted by ``L``).
    Both answers exist and agree exactly when the model's view has one
    occurrence of the query and it lies in the plain part.
    """
    padded = np.concatenate([np.full(L, x[0]), x])
    windows = np.lib.stride_tricks.sliding_window_view(padded, L)[:len(x)]
    hits = np.flatnonzero((windows == x[-L:]).all(axis=1))
    return len(hits) == 1 and hits[0] >= L


def success_rate(vocab_size, length, prefix_len):
    """About how often one draw of ``random_search_inputs`` gives a usable sequence.

    A draw plants a copy of a random window in front of the query.  A copy that
    does not overlap the query (``length - 2 prefix_len + 1`` of the
    ``length - prefix_len`` starts) always matches it; one that overlaps it by
    ``prefix_len - d`` tokens matches only if the window repeats with period
    ``d`` (chance ``vocab_size ** -(prefix_len - d)``).  The other ``length - 1``
    windows of the model's view must all miss the query, each matching by
    chance ``vocab_size ** -prefix_len``.

        >>> round(success_rate(10, 100, 3), 2)
        0.89
        >>> success_rate(1000, 7, 5) < 1e-8      # length < 2 prefix_len: only overlapping copies
        True
    """
    V, N, L = vocab_size, length, prefix_len
    if V < 2:
        return 0.0
    overlapping = sum(float(V) ** -(L - d) for d in range(1, min(L - 1, N - L) + 1))
    planted = max(0, N - 2 * L + 1) + overlapping
    chance = (N - 1) * float(V) ** -L
    return planted / (N - L) * float(np.exp(-chance))


def random_search_inputs(rng, n, vocab_size, length, prefix_len):
    """``(inputs, answers)``: n seeded sequences whose query occurs exactly once earlier.

    Uniqueness is checked in both views (the plain problem and the model's view
    with the first token repeated in front), so the answer is well defined and
    equal in both.  Returns an int array (n, length) and an int array (n,).

    Sizes at which such sequences are too rare to draw are refused with a
    ``ValueError``: when ``success_rate`` is below ``MIN_SUCCESS_RATE`` (e.g.
    ``length < 2 * prefix_len`` with a large vocabulary, where the only earlier
    copies overlap the query, or a query so short that it recurs by chance),
    and, as a backstop, after ``MAX_FAILED_DRAWS`` useless draws in a row.
    """
    where = 'random_search_inputs'
    _check_sizes(where, vocab_size, length, prefix_len, 'length')
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'{where}: rng must be a numpy Generator; got {type(rng).__name__}')
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f'{where}: n must be an int; got {type(n).__name__}')
    if n < 0:
        raise ValueError(f'{where}: n must be >= 0; got {n}')
    check_size(where, 'n', n, low=None)
    check_numbers(where, n * length, 'the inputs')
    L = prefix_len
    rate = success_rate(vocab_size, length, L)
    if rate < MIN_SUCCESS_RATE:
        if vocab_size < 2:
            why = 'with one token the query occurs at every position'
        elif length < 2 * L:
            why = (f'length < 2 * prefix_len = {2 * L}, so every earlier copy of the query '
                   f'overlaps it')
        else:
            why = (f'the query also occurs by chance about {(length - 1) / vocab_size ** L:.3g} '
                   f'times; use a larger vocab_size or prefix_len or a shorter length')
        raise ValueError(f'{where}: the share of draws whose query occurs exactly once must be '
                         f'>= MIN_SUCCESS_RATE = {MIN_SUCCESS_RATE:g}; got about {rate:.1e} '
                         f'for vocab_size={vocab_size}, length={length}, prefix_len={L} ({why})')
    rows, answers = [], []
    failed = 0
    while len(rows) < n:
        x = rng.integers(0, vocab_size, size=length)
        start = int(rng.integers(0, length - L))         # occurrence x[start:start+L], next exists
        x[length - L:] = x[start:start + L].copy()
        if not _unique_occurrence(x, L):
            failed += 1
            if failed >= MAX_FAILED_DRAWS:
                raise ValueError(
                    f'{where}: a usable sequence must turn up within MAX_FAILED_DRAWS = '
                    f'{MAX_FAILED_DRAWS:,} draws in a row; got none for vocab_size={vocab_size}, '
                    f'length={length}, prefix_len={L} (estimated share {rate:.1e})')
            continue
        failed = 0
        rows.append(x)
        answers.append(int(search_reference(x, L)))
    return (np.array(rows, dtype=np.int64).reshape(n, length),
            np.array(answers, dtype=np.int64))
