"""The task: tables of keys and values, their plain meaning, queries and precision.

A table holds ``n`` keys of ``l`` tokens (``ks``, shape (n, l)) and one value
token per key (``vs``, shape (n,)).  A query is any token sequence; its answer
is the value of the key that its last ``l`` tokens spell.

    >>> ks, vs = np.array([[1, 2, 3], [4, 5, 6]]), np.array([4, 7])
    >>> lookup_reference([1, 2, 3, 4, 5, 6], ks, vs)
    7
"""
import numpy as np

from ..decoding import last_token_argmax
from ..params import check_numbers, check_size


def as_rng(rng, where):
    """``rng`` as a numpy Generator: None means seed 0, an int is a seed.

    Raises:
        TypeError: for anything else, naming the calling function ``where``.
    """
    if rng is None:
        return np.random.default_rng(0)
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise TypeError(f'{where}: rng must be None, an int seed or a numpy Generator; '
                    f'got {type(rng).__name__}')


def check_table(where, ks, vs, vocab_size):
    """Validate a table and return it as int64 arrays ``(ks, vs)``.

    Raises:
        ValueError: wrong shapes, ids outside ``0..vocab_size - 1``, repeated keys, or a
            vocab_size outside 1..``taotp.params.MAX_SIZE``.
        TypeError: ids or a vocab_size that are not integers.
    """
    vocab_size = check_size(where, 'vocab_size', vocab_size)
    ks, vs = np.asarray(ks), np.asarray(vs)
    if ks.ndim != 2 or ks.shape[1] < 1 or ks.shape[0] < 1:
        raise ValueError(f'{where}: ks must have shape (n_entries, key_len) with both >= 1; '
                         f'got {ks.shape}')
    if vs.shape != (ks.shape[0],):
        raise ValueError(f'{where}: vs must have shape (n_entries,) = ({ks.shape[0]},); '
                         f'got {vs.shape}')
    for name, arr in (('ks', ks), ('vs', vs)):
        if arr.dtype.kind not in 'iu':
            raise TypeError(f'{where}: {name} must hold integer token ids; got dtype {arr.dtype}')
        if arr.min() < 0 or arr.max() >= vocab_size:
            raise ValueError(f'{where}: {name} must hold ids in 0..{vocab_size - 1}; got '
                             f'{int(arr.min())}..{int(arr.max())}')
    repeats = len(ks) - len(np.unique(ks, axis=0))
    if repeats:
        raise ValueError(f'{where}: keys must be distinct; got {len(ks)} keys with {repeats} '
                         f'repeats')
    return ks.astype(np.int64), vs.astype(np.int64)


def random_lookup_table(n_entries, key_len, vocab_size, rng=None):
    """``n_entries`` distinct random keys of ``key_len`` tokens, and random values.

    Args:
        n_entries, key_len, vocab_size: the table's size (all >= 1 and at most
            ``taotp.params.MAX_SIZE``).
        rng: None (seed 0), an int seed or a numpy Generator.

    Returns:
        ``(ks, vs)``, int64 arrays of shapes (n_entries, key_len) and (n_entries,).

    >>> ks, vs = random_lookup_table(4, 2, 3, rng=0)
    >>> ks.shape, vs.shape, len(np.unique(ks, axis=0))
    ((4, 2), (4,), 4)
    """
    rng = as_rng(rng, 'random_lookup_table')
    for name, value in (('n_entries', n_entries), ('key_len', key_len), ('vocab_size', vocab_size)):
        check_size('random_lookup_table', name, value, low=None)     # ints, at most MAX_SIZE
    check_numbers('random_lookup_table', n_entries * key_len, 'the table')
    if n_entries < 1 or key_len < 1 or vocab_size < 1:
        raise ValueError(f'random_lookup_table: n_entries, key_len and vocab_size must be >= 1; '
                         f'got {n_entries}, {key_len}, {vocab_size}')
    space = vocab_size ** min(key_len, 64)       # 64 >= log2(MAX_SIZE): enough to compare
    if n_entries > space:
        raise ValueError(f'random_lookup_table: only {space} distinct keys of length {key_len} '
                         f'exist over {vocab_size} tokens; got n_entries = {n_entries}')
    ks = np.zeros((0, key_len), dtype=np.int64)
    while len(ks) < n_entries:         # draw extra rows, keep the first of each distinct key
        more = rng.integers(0, vocab_size, size=(2 * (n_entries - len(ks)) + 8, key_len))
        both = np.concatenate([ks, more])
        _, first = np.unique(both, axis=0, return_index=True)
        ks = both[np.sort(first)][:n_entries]
    vs = rng.integers(0, vocab_size, size=n_entries)
    return ks.astype(np.int64), vs.astype(np.int64)


def lookup_reference(tokens, ks, vs):
    """The plain-Python meaning of a lookup program: the value of the key ending ``tokens``.

    Returns None when the last ``l`` tokens are no key (the book leaves that case
    undefined, so any answer of a program is acceptable there).

    >>> lookup_reference([9, 1, 2, 3], [[1, 2, 3]], [4]), lookup_reference([3, 2, 1], [[1, 2, 3]], [4])
    (4, None)
    """
    tokens = [int(t) for t in tokens]
    for key, value in zip(np.asarray(ks).tolist(), np.asarray(vs).tolist()):
        if len(tokens) >= len(key) and tokens[len(tokens) - len(key):] == key:
            return value
    return None


def lookup_queries(ks, prefix_len, vocab_size, rng=None, mode='random'):
    """Every key behind a prefix of ``prefix_len`` tokens: shape (n, prefix_len + l).

    Args:
        mode: ``'random'`` draws each prefix uniformly from the vocabulary;
            ``'keys'`` cuts it from the tokens of other keys (an adversarial
            choice: the prefix itself looks like table entries).
        rng: None (seed 0), an int seed or a numpy Generator.

    >>> lookup_queries(np.array([[7, 8]]), 3, 10, rng=0).shape
    (1, 5)
    """
    rng = as_rng(rng, 'lookup_queries')
    ks = np.asarray(ks, dtype=np.int64)
    n, l = ks.shape
    if mode == 'random':
        prefix = rng.integers(0, vocab_size, size=(n, prefix_len))
    elif mode == 'keys':
        reps = -(-prefix_len // l) if prefix_len else 0
        rows = rng.integers(0, n, size=(n, reps))
        prefix = ks[rows].reshape(n, reps * l)[:, reps * l - prefix_len:]
    else:
        raise ValueError(f"lookup_queries: mode must be 'random' or 'keys'; got {mode!r}")
    return np.concatenate([prefix.astype(np.int64), ks], axis=1)


def lookup_precision(params, ks, vs, prefix_len=0, rng=None, mode='random', norm='layer',
                     post_ln=False):
    """Fraction of keys, each behind a prefix (see ``lookup_queries``), decoded to their value.

    The program runs through ``taotp.last_token_argmax`` (only the last
    position's logits, in memory-bounded chunks); ``norm`` and ``post_ln``
    select a variant of the architecture (puzzle 3.7 uses ``post_ln=True``).
    """
    vocab = np.shape(params['tok_emb'])[0]
    queries = lookup_queries(ks, prefix_len, vocab, rng, mode)
    got = last_token_argmax(queries, params, norm=norm, post_ln=post_ln)
    return float(np.mean(got == np.asarray(vs)))


def ngram_table(words, n_entries=1000, key_len=5):
    """Non-overlapping (key_len + 1)-grams from the start of ``words`` as a lookup table.

    Gram i is ``words[i*(l+1) : (i+1)*(l+1)]``: its first ``l`` words are the key,
    the last one the value.  A key seen before is skipped (keys must be
    distinct), so the table holds the first ``n_entries`` grams with new keys.

    Returns:
        ``(ks, vs, vocab)``; the ids index ``vocab``, the sorted list of the words used.

    >>> ks, vs, vocab = ngram_table('a b c a b d a b c'.split(), 10, 2)
    >>> [vocab[i] for i in ks[0]], vocab[vs[0]], len(ks)
    (['a', 'b'], 'c', 1)
    """
    words = list(words)
    size = key_len + 1
    grams, seen = [], set()
    for start in range(0, len(words) - size + 1, size):
        gram = tuple(words[start:start + size])
        if gram[:-1] in seen:
            continue
        seen.add(gram[:-1])
        grams.append(gram)
        if len(grams) == n_entries:
            break
    vocab = sorted({w for gram in grams for w in gram})
    ids = {w: i for i, w in enumerate(vocab)}
    table = np.array([[ids[w] for w in gram] for gram in grams], dtype=np.int64)
    return table[:, :-1], table[:, -1], vocab
