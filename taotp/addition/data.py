"""The addition task: token format, prompts, plain-Python references, error counts.

Token format, as in the book::

    digits 0-9, '+' = 10, '=' = 11
    2 digits:  [4, 5, 10, 7, 8, 11] -> [1, 2, 3]
    (zero padded, most significant digit first; n + 1 output digits)
"""
import numpy as np

from ..decoding import teacher_forced_argmax
from ..params import MAX_SIZE

PLUS, EQUALS = 10, 11
SYMBOLS = tuple('0123456789+=')   # token id -> printed symbol


def addition_text(tokens, sep=' '):
    """Print tokens as symbols: one token gives one symbol.

    >>> addition_text([4, 5, 10, 7, 8, 11])
    '4 5 + 7 8 ='
    >>> addition_text(11)
    '='
    """
    if np.ndim(tokens) == 0:
        return SYMBOLS[int(tokens)]
    return sep.join(SYMBOLS[int(t)] for t in tokens)


MAX_DIGITS = (MAX_SIZE - 2) // 3     # prompt and answer fill 3 n + 2 positions <= MAX_SIZE


def check_digits(name, n_digits, high=MAX_DIGITS, limit='taotp.addition.data.MAX_DIGITS'):
    """``n_digits`` must be an integer in 1..``high`` (the message names the caller ``name``).

    ``high`` defaults to ``MAX_DIGITS``, the most digits whose prompt and answer fit in
    ``taotp.params.MAX_SIZE`` positions; builders whose size grows faster pass their own.
    """
    if isinstance(n_digits, bool) or not isinstance(n_digits, (int, np.integer)) \
            or n_digits < 1:
        raise ValueError(f'{name}: n_digits must be an integer >= 1; got {n_digits!r}')
    if n_digits > high:
        raise ValueError(f'{name}: n_digits must be at most {high:,} ({limit}); got {n_digits}')


def answer_digits(values, n):
    """The ``n`` decimal digits of each value, most significant first: shape (len, n).

    >>> answer_digits([123, 7], 3).tolist()
    [[1, 2, 3], [0, 0, 7]]
    """
    values = np.asarray(values, dtype=np.int64)
    return values[:, None] // 10 ** np.arange(n - 1, -1, -1) % 10


def addition_prompts(n_digits, pairs=None):
    """Prompts ``[a digits, 10, b digits, 11]`` for all (a, b) (default) or the given pairs.

    Returns ``(prompts (N, 2n + 2) int array, pairs (N, 2) int array)``.

    >>> addition_prompts(2, [[45, 78]])[0].tolist()
    [[4, 5, 10, 7, 8, 11]]
    """
    check_digits('addition_prompts', n_digits)
    n = n_digits
    if pairs is None:
        a, b = np.divmod(np.arange(10 ** (2 * n)), 10 ** n)
        pairs = np.stack([a, b], axis=1)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if pairs.size and (pairs.min() < 0 or pairs.max() >= 10 ** n):
        raise ValueError(f'addition_prompts: numbers must be in 0..{10 ** n - 1} for '
                         f'{n} digits; got {pairs.min()}..{pairs.max()}')
    digits = answer_digits(pairs.ravel(), n).reshape(len(pairs), 2, n)
    col = np.ones((len(pairs), 1), dtype=np.int64)
    prompts = np.concatenate([digits[:, 0], PLUS * col, digits[:, 1], EQUALS * col], axis=1)
    return prompts, pairs


def _parse(tokens):
    tokens = [int(t) for t in tokens]
    if tokens.count(PLUS) != 1 or not tokens or tokens[-1] != EQUALS:
        raise ValueError(f'addition_reference: expected [a digits, 10, b digits, 11]; '
                         f'got {tokens}')
    cut = tokens.index(PLUS)
    a, b = tokens[:cut], tokens[cut + 1:-1]
    if not a or len(a) != len(b) or any(not 0 <= t <= 9 for t in a + b):
        raise ValueError(f'addition_reference: expected two digit strings of one length; '
                         f'got {tokens}')
    return int(''.join(map(str, a))), int(''.join(map(str, b))), len(a)


def addition_reference(tokens):
    """Plain Python: the n + 1 output digits of ``[a.., 10, b.., 11]``, most significant first.

    >>> addition_reference([4, 5, 10, 7, 8, 11])
    [1, 2, 3]
    """
    a, b, n = _parse(tokens)
    return answer_digits([a + b], n + 1)[0].tolist()


def mod_addition_reference(tokens):
    """Plain Python: the last digit of a + b for ``[a.., 10, b.., 11]`` (or ``[i, j]``).

    >>> mod_addition_reference([7, 8]), mod_addition_reference([1, 2, 10, 3, 3, 11])
    (5, 5)
    """
    tokens = [int(t) for t in tokens]
    if len(tokens) == 2 and PLUS not in tokens:
        return (tokens[0] + tokens[1]) % 10
    a, b, _ = _parse(tokens)
    return (a + b) % 10


def addition_errors(params, n_digits, pairs=None, task='decimal', chunk=None):
    """How many prompts a program gets wrong under greedy decoding: ``(n_wrong, n_checked)``.

    ``task='decimal'``: n + 1 output digits; ``'mod'``: one digit, (a + b) % 10;
    ``'single'``: prompts ``[i, j]`` (all 100 by default), one digit.  ``pairs``
    defaults to every pair.  Greedy decoding reproduces an answer exactly when,
    fed the right answer so far, every answer position predicts the next right
    token, so one teacher-forced pass of the shared engine
    (``taotp.teacher_forced_argmax``, memory-bounded chunks of ``chunk`` rows,
    the MLP run once per distinct input) decides every prompt.
    """
    if task == 'single':
        prompts = np.stack(np.divmod(np.arange(100), 10), axis=1) if pairs is None \
            else np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        want = prompts.sum(1, keepdims=True) % 10
    elif task in ('decimal', 'mod'):
        prompts, pairs = addition_prompts(n_digits, pairs)
        total = pairs.sum(1)
        want = total[:, None] % 10 if task == 'mod' else answer_digits(total, n_digits + 1)
    else:
        raise ValueError(f"addition_errors: task must be 'decimal', 'mod' or 'single'; "
                         f"got {task!r}")
    seqs = np.concatenate([prompts, want], axis=1)
    got = teacher_forced_argmax(seqs, params, prompts.shape[1], chunk=chunk, mlp_rows='distinct')
    return int((got != want).any(1).sum()), len(prompts)
