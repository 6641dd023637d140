"""Where Min and Sort stop being exact: seeded inputs and error counts.

``sort_errors`` and ``min_errors`` build a program, optionally cast it to
float32 (``taotp.params.as_dtype``; the forward pass then stays in float32),
run a seeded batch through the shared engine and count the wrong answers.
Overflow inside a float32 run (the book's 1e20 squared in the layer-norm
variance) is part of what is measured, so those warnings are silenced here.
"""
import numpy as np

from ..decoding import decode_batch, last_token_argmax
from ..params import as_dtype
from ._args import check_int
from .minmax import build_max_transformer, build_min_transformer
from .sorting import build_sort_transformer


def random_sort_inputs(n, length, count, *, rng):
    """``count`` rows: ``length`` distinct numbers from 1..n-1 in random order, then 0.

    >>> random_sort_inputs(10, 3, 2, rng=np.random.default_rng(0)).shape
    (2, 4)
    """
    check_int('random_sort_inputs', 'length', length, 1)
    if length > n - 1:
        raise ValueError(f'random_sort_inputs: length must be <= n - 1 = {n - 1}; got {length}')
    rows = [rng.permutation(np.arange(1, n))[:length] for _ in range(count)]
    return np.concatenate([np.array(rows, dtype=np.int64).reshape(count, length),
                           np.zeros((count, 1), dtype=np.int64)], axis=1)


def random_min_inputs(vocab_size, length, count, *, rng, near_ends=True):
    """Seeded Min inputs; with ``near_ends`` half of the values sit near 0 and V-1.

    The hardest cases for the circle construction are neighbouring tokens at the
    ends of the arc, so the rows mix uniform values with values from the 20
    smallest and 20 largest tokens.
    """
    rows = rng.integers(0, vocab_size, size=(count, length))
    if near_ends:
        ends = np.concatenate([np.arange(min(20, vocab_size)),
                               np.arange(max(0, vocab_size - 20), vocab_size)])
        mask = rng.random((count, length)) < 0.5
        rows = np.where(mask, rng.choice(ends, size=(count, length)), rows)
    return rows.astype(np.int64)


def sort_errors(n, count=50, seed=0, dtype=np.float64, length=None, **scales):
    """How many of ``count`` seeded inputs (``length`` numbers, default n-1) Sort gets wrong.

    ``scales`` (``harden``, ``out_scale``) go to ``build_sort_transformer``.
    """
    length = n - 1 if length is None else length
    params = build_sort_transformer(n, length + max(length, 1), **scales)
    params = params if dtype == np.float64 else as_dtype(params, dtype)
    inputs = random_sort_inputs(n, length, count, rng=np.random.default_rng([seed, n]))
    with np.errstate(over='ignore', invalid='ignore', divide='ignore'):
        out = decode_batch(inputs, params, length)[:, length + 1:]
    return int((out != np.sort(inputs[:, :-1], axis=1)).any(axis=1).sum())


def min_errors(vocab_size, count=300, length=16, seed=0, dtype=np.float64, hard=True,
               largest=False, **scales):
    """How many of ``count`` seeded Min (or Max) inputs the program gets wrong, last position.

    ``hard=True`` draws half of the values from the 20 smallest and 20 largest
    tokens (``random_min_inputs``), where the circle construction is weakest;
    ``largest=True`` measures Max.  ``scales`` (``harden``, ``out_scale``) go to
    the builder.
    """
    builder = build_max_transformer if largest else build_min_transformer
    params = builder(vocab_size, length, **scales)
    params = params if dtype == np.float64 else as_dtype(params, dtype)
    inputs = random_min_inputs(vocab_size, length, count,
                               rng=np.random.default_rng([seed, vocab_size]), near_ends=hard)
    with np.errstate(over='ignore', invalid='ignore', divide='ignore'):
        got = last_token_argmax(inputs, params)
    want = inputs.max(axis=1) if largest else inputs.min(axis=1)
    return int((got != want).sum())
