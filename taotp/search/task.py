"""The Search task in plain Python: the reference answer and seeded inputs that have one.

The query is the last ``prefix_len`` tokens; the answer is the token right after
its one earlier occurrence, and undefined (``None``) when the query occurs zero
or several times.
"""
import numpy as np

__all__ = ['search_reference', 'random_search_inputs']


def _check_sizes(where, vocab_size, block_size, prefix_len):
    for name, value, low in (('vocab_size', vocab_size, 1), ('prefix_len', prefix_len, 2),
                             ('block_size', block_size, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f'{where}: {name} must be an int; got {type(value).__name__}')
        if value < low:
            raise ValueError(f'{where}: {name} must be >= {low}; got {value}')
    if block_size < prefix_len + 2:
        raise ValueError(f'{where}: block_size must be >= prefix_len + 2 = {prefix_len + 2} '
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


def random_search_inputs(rng, n, vocab_size, length, prefix_len):
    """``(inputs, answers)``: n seeded sequences whose query occurs exactly once earlier.

    Uniqueness is checked in both views (the plain problem and the model's view
    with the first token repeated in front), so the answer is well defined and
    equal in both.  Returns an int array (n, length) and an int array (n,).
    """
    _check_sizes('random_search_inputs', vocab_size, length, prefix_len)
    L = prefix_len
    rows, answers = [], []
    while len(rows) < n:
        x = rng.integers(0, vocab_size, size=length)
        start = int(rng.integers(0, length - L))         # occurrence x[start:start+L], next exists
        x[length - L:] = x[start:start + L].copy()
        want = search_reference(x, L)
        if want is None or search_reference(x, L, as_model=True) != want:
            continue
        rows.append(x)
        answers.append(want)
    return np.array(rows, dtype=np.int64), np.array(answers, dtype=np.int64)
