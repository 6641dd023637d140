"""Chapter 6, Decimal Addition: attention gathers the digits, the MLP looks up the answer.

One attention layer reads every digit and writes the *number* ``a + b`` into
one residual coordinate; after layer norm that coordinate is a scalar key
that differs for each sum, and a ReLU MLP built by ``build_MLP`` (Theorem 6.1)
maps each key to the embedding of the wanted digit, times a huge constant
(messy cleanup).  Token format, as in the book::

    digits 0-9, '+' = 10, '=' = 11
    decimal addition, 2 digits:  [4, 5, 10, 7, 8, 11] -> [1, 2, 3]
    (zero padded, most significant digit first; n + 1 output digits)

Programs: ``build_single_digit_mod_transformer`` (Fig. 6.2),
``build_multi_digit_mod_transformer`` (Fig. 6.3) and
``build_decimal_addition_transformer`` (Fig. 6.4).  The book's ``build_MLP``
listing (Fig. 6.1) is missing from the preprint; ours follows the spike lemma
(three ReLUs per point) and reproduces every parameter count of the chapter.
"""
from itertools import product

import numpy as np

from .blocks import pos_3d_enc_rotation_matrix, pos_enc_3d_array
from .model import layer_norm
from .params import base_layer, base_params
from .trace import trace

__all__ = ['PLUS', 'EQUALS', 'SYMBOLS', 'addition_text', 'digit_embedding', 'spike', 'min_sep', 'MLPWeights', 'build_MLP',
           'mlp_apply', 'mlp_keys', 'additive_fit',
           'build_single_digit_mod_transformer', 'build_multi_digit_mod_transformer',
           'build_decimal_addition_transformer', 'addition_prompts', 'addition_reference',
           'mod_addition_reference', 'fit_lookup_mlp', 'addition_errors']

PLUS, EQUALS = 10, 11
SYMBOLS = tuple('0123456789+=')   # token id -> printed symbol


def addition_text(tokens, sep=' '):
    """``[4, 5, 10, 7, 8, 11] -> '4 5 + 7 8 ='``; one token gives one symbol."""
    if np.ndim(tokens) == 0:
        return SYMBOLS[int(tokens)]
    return sep.join(SYMBOLS[int(t)] for t in tokens)


# ----------------------------------------------------------------------------- digits

def digit_embedding(base=10, scale=100):
    """Rows ``[x, 1, a, -x - a - 1]`` with ``x = digit / scale`` (Section 6.4's 4-dim format).

    The entries sum to 0 and ``a`` is chosen so the squared norm is 4, so every
    row is a fixed point of layer norm: ``a`` solves a^2 + (x + 1) a + x^2 + x - 3/2 = 0,
    which needs -3x^2 - 2x + 5 >= 0 (so ``base <= scale`` in practice).
    """
    x = np.arange(base) / scale
    disc = -3 * x ** 2 - 2 * x + 5
    if np.any(disc < 0):
        raise ValueError(f'digit_embedding: digits up to {base - 1} / {scale} leave no real '
                         f'solution for a; need -3x^2 - 2x + 5 >= 0; got {disc.min():.3g}')
    a = (np.sqrt(disc) - x - 1) / 2
    return np.stack([x, np.ones_like(x), a, -x - a - 1], axis=1)


# ----------------------------------------------------------------------------- Theorem 6.1

def spike(x0=0.0, a0=1.0, width=1.0):
    """Three ReLUs whose sum is a spike of height ``a0`` at ``x0``, zero beyond ``width``.

    Lemma 6.1 with width 1: relu(t + 1) - 2 relu(t) + relu(t - 1), t = (x - x0) / width.
    Returns ``(M1 (1, 3), b1 (3,), M2 (3, 1), b2 (1,))`` for ``relu(x M1 + b1) M2 + b2``.
    """
    if not width > 0:
        raise ValueError(f'spike: width must be > 0; got {width}')
    M1 = np.full((1, 3), 1.0 / width)
    b1 = -x0 / width + np.array([1.0, 0.0, -1.0])
    M2 = a0 * np.array([[1.0], [-2.0], [1.0]])
    return M1, b1, M2, np.zeros(1)


def min_sep(xs):
    """Smallest gap between two of the values ``xs`` (inf for fewer than two values)."""
    xs = np.sort(np.asarray(xs, dtype=np.float64).ravel())
    return float(np.diff(xs).min()) if len(xs) > 1 else float('inf')


class MLPWeights(tuple):
    """``(m1, b1, M2, b2)`` from ``build_MLP``; also carries ``.min_sep`` and ``.xs``."""

    def __new__(cls, m1, b1, M2, b2, min_sep, xs):
        self = super().__new__(cls, (m1, b1, M2, b2))
        self.min_sep, self.xs = min_sep, xs
        return self

    @property
    def d_ff(self):
        return len(self[1])


def build_MLP(xs, ys):
    """A one-hidden-layer ReLU MLP with MLP(xs[i]) = ys[i] exactly (Theorem 6.1).

    Each point gets a spike (three hidden units) of height ys[i] centred on xs[i],
    as wide as the smallest gap ``min_sep`` between the points, so no spike
    reaches a neighbour: input weight 1 / min_sep, biases -x_i / min_sep + (1, 0, -1),
    output rows y_i, -2 y_i, y_i, and b2 = 0.

    Args:
        xs: n distinct real numbers (the scalar MLP inputs).
        ys: n outputs, scalars or vectors of one length d.
    Returns:
        ``MLPWeights`` unpacking to ``(m1 (3n,), b1 (3n,), M2 (3n, d), b2 (d,))``, the
        weights of the input row, with ``.min_sep`` (the spike width) attached.
    Raises:
        ValueError: empty, mismatched, non-finite or repeated inputs.
    """
    xs = np.asarray(xs, dtype=np.float64)
    ys = np.asarray(ys, dtype=np.float64)
    if xs.ndim != 1 or len(xs) == 0:
        raise ValueError(f'build_MLP: xs must be a non-empty 1-D list of numbers; got shape '
                         f'{xs.shape}')
    if ys.ndim == 1:
        ys = ys[:, None]
    if ys.ndim != 2 or len(ys) != len(xs):
        raise ValueError(f'build_MLP: ys must hold one output per x ({len(xs)}); got shape '
                         f'{ys.shape}')
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ys))):
        raise ValueError('build_MLP: xs and ys must be finite; got NaN or infinity')
    sep = min_sep(xs)
    if sep == 0:
        order = np.sort(xs)
        dup = order[np.flatnonzero(np.diff(order) == 0)[0]]
        raise ValueError(f'build_MLP: xs must be distinct; got {float(dup)!r} more than once')
    if not np.isfinite(sep):
        sep = 1.0  # a single point: any width works
    n = len(xs)
    m1 = np.full(3 * n, 1.0 / sep)
    b1 = (-xs[:, None] / sep + np.array([1.0, 0.0, -1.0])).ravel()
    M2 = (ys[:, None, :] * np.array([1.0, -2.0, 1.0])[None, :, None]).reshape(3 * n, -1)
    return MLPWeights(m1, b1, M2, np.zeros(ys.shape[1]), sep, xs)


def mlp_apply(weights, x):
    """Evaluate ``(m1, b1, M2, b2)`` at scalar inputs ``x``: shape (*x.shape, d)."""
    m1, b1, M2, b2 = weights
    x = np.asarray(x, dtype=np.float64)
    return np.maximum(x[..., None] * m1 + b1, 0) @ M2 + b2


def mlp_keys(params, layer=0, row=0):
    """The MLP input values a built adder was made for, recovered from its weights.

    ``build_MLP`` puts the middle unit of each spike at bias -x_i / min_sep, so
    x_i = -b1[3i + 1] / M1[row, 3i + 1].  Sorted, one per spike.
    """
    lay = params['layers'][layer]
    w, b = lay['M1'][row, 1::3], lay['b1'][1::3]
    return np.sort(-b / w)


def additive_fit(targets):
    """Best attention-only answer to a 10 x 10 table: fit x_i + y_j to targets[i, j] by least squares.

    ``targets`` has shape (n, m, d).  Every output of the form x_i + y_j lies in a
    space of dimension n + m - 1 (Exercise 6.1).  Returns a dict with ``rank`` (rank
    of the design, i.e. of the reachable tables), ``fit`` (n, m, d), ``residual``
    (root-mean-square error) and ``accuracy`` (share of cells whose argmax is right).
    """
    targets = np.asarray(targets, dtype=np.float64)
    n, m, d = targets.shape
    design = np.zeros((n * m, n + m))
    cells = np.arange(n * m)
    design[cells, cells // m] = 1.0
    design[cells, n + cells % m] = 1.0
    coef, *_ = np.linalg.lstsq(design, targets.reshape(n * m, d), rcond=None)
    fit = (design @ coef).reshape(n, m, d)
    right = fit.argmax(-1) == targets.argmax(-1)
    return {'rank': int(np.linalg.matrix_rank(design)), 'fit': fit,
            'residual': float(np.sqrt(np.mean((fit - targets) ** 2))),
            'accuracy': float(right.mean())}


# ----------------------------------------------------------------------------- Fig. 6.2

def build_single_digit_mod_transformer(base=10, value_scale=1e4, out_scale=1e10):
    """Add two digits modulo ``base`` (Fig. 6.2): ``[i, j] -> (i + j) % base``.

    Architecture: 1 layer, 1 head, d_model 4, d_head 4, d_ff 3 (2 base - 1);
    no positions (Q = K = 0, so the head averages both tokens).  The head writes
    ``value_scale * [i + j, 1, 0, 0]``, which drowns the token's own residual; the
    MLP reads layer-normed coordinate 0 and outputs ``out_scale`` times the answer's
    embedding (messy cleanup).  Book count (base 10): 629 total, 379 non-zero;
    in general 58 base + 49 and 40 base - 21.

    ``value_scale=1e4`` and ``out_scale=1e10`` are the book's hardening constants;
    the range that still works is measured in tests/test_addition.py.
    """
    if not 2 <= base <= 100:
        raise ValueError(f'build_single_digit_mod_transformer: base must be in 2..100; '
                         f'got {base}')
    tok = digit_embedding(base)
    params = base_params(vocab_size=base, block_size=2, d_model=4)
    params['tok_emb'] = tok
    params['out_emb'] = tok.copy()
    n_sums = 2 * base - 1
    layer = base_layer(n_heads=1, d_model=4, d_ff=3 * n_sums, d_head=4)
    # the average of x_i, x_j is (i + j) / 200: times 200 recovers i + j
    layer['V'][0, :2, :2] = value_scale * np.diag([200.0, 1.0])
    layer['P'][0, :2, :2] = np.eye(2)
    keys = [layer_norm(value_scale * np.array([k, 1.0, 0.0, 0.0]))[0] for k in range(n_sums)]
    outs = [out_scale * tok[k % base] for k in range(n_sums)]
    layer['M1'][0], layer['b1'], layer['M2'], layer['b2'] = build_MLP(keys, outs)
    params['layers'].append(layer)
    return params


# ----------------------------------------------------------------------------- shared pieces

def _adder_embeddings(n_digits, block_size):
    """Tokens in dims 0-3 (digits; '+' and '=' reuse digit 0), positions in dims 4-6."""
    params = base_params(vocab_size=12, block_size=block_size, d_model=7)
    tok = digit_embedding(10)
    tok = np.vstack([tok, tok[0], tok[0]])
    params['tok_emb'][:, :4] = tok
    params['out_emb'][:, :4] = tok
    params['pos_emb'][:, 4:] = pos_enc_3d_array(block_size)
    return params


def _self_cleanup(layer, query_scale):
    """Last head: attend to yourself and erase the token's two filler dims (2 and 3)."""
    layer['Q'][-1, 4:, :] = pos_3d_enc_rotation_matrix(0.0) * query_scale
    layer['K'][-1, 4:, :] = np.eye(3)
    layer['V'][-1, 2:4, :2] = -np.eye(2)
    layer['P'][-1, 2:4, :2] = np.eye(2)


def _check_digits(name, n_digits):
    if isinstance(n_digits, bool) or not isinstance(n_digits, (int, np.integer)) \
            or n_digits < 1:
        raise ValueError(f'{name}: n_digits must be an integer >= 1; got {n_digits!r}')


# ----------------------------------------------------------------------------- Fig. 6.3

def build_multi_digit_mod_transformer(n_digits, query_scale=1e6, out_scale=1e10):
    """Last digit of a + b for n-digit a, b (Fig. 6.3): ``[a.., 10, b.., 11] -> (a + b) % 10``.

    Architecture: 1 layer, 2 n + 1 heads, d_model 7 (token 4 + position 3),
    d_head 3, d_ff 3 (2 10^n - 1).  Head (number, digit) rotates the query's own
    position back to that digit and writes 10^digit times its value into dim 0,
    so dim 0 ends up holding a + b; the last head cleans dims 2-3 properly.
    Book counts: 1,226 / 432 (n=1), 9,508 / 3,646 (n=2), 90,690 / 35,542 (n=3);
    closed form 189 + 182 n + 15 F with F = 3 (2 10^n - 1).
    """
    _check_digits('build_multi_digit_mod_transformer', n_digits)
    block = 2 * n_digits + 2
    params = _adder_embeddings(n_digits, block)
    n_sums = 2 * 10 ** n_digits - 1
    layer = base_layer(2 * n_digits + 1, 7, 3 * n_sums, 3)
    # '=' sits at position 2n + 1; the unit digit of b is 1 back, that of a is n + 2 back
    reads = [(first + place, place) for first in (1, n_digits + 2) for place in range(n_digits)]
    for head, (steps_back, place) in enumerate(reads):
        turn = pos_3d_enc_rotation_matrix(-2 * np.pi * steps_back / block)
        layer['Q'][head, 4:, :] = turn * query_scale
        layer['K'][head, 4:, :] = np.eye(3)
        layer['V'][head, 0, 0] = 100 * 10 ** place     # undo the 1/100 of the embedding
        layer['P'][head, 0, 0] = 1.0
    _self_cleanup(layer, query_scale)
    # after attention the '=' position holds [a + b, 1, 0, 0, pos]; LN fixes pos's share
    pos = params['pos_emb'][0, 4:]
    keys = [layer_norm(np.concatenate([[k, 1.0, 0.0, 0.0], pos]))[0] for k in range(n_sums)]
    outs = [out_scale * params['tok_emb'][k % 10] for k in range(n_sums)]
    layer['M1'][0], layer['b1'], layer['M2'], layer['b2'] = build_MLP(keys, outs)
    params['layers'].append(layer)
    return params


# ----------------------------------------------------------------------------- Fig. 6.4

def build_decimal_addition_transformer(n_digits, query_scale=1e6, out_scale=1e10):
    """Decimal addition (Fig. 6.4): ``[a.., 10, b.., 11] -> n + 1 digits of a + b``.

    Inputs are zero padded to ``n_digits``, most significant digit first; the
    output has n + 1 digits (leading zeros kept).  Architecture: 1 layer,
    2 n + 1 heads, d_model 7, d_head 3, d_ff 3 (n + 1)(2 10^n - 1).

    Digit heads attend to *absolute* positions (the query is the constant
    token dim times the target's position vector), each adding 10^digit / 100
    times its digit to dim 0.  The last head erases the filler dims and swaps
    the current token's value in dim 0 for the first position coordinate, so dim 0
    holds (a + b) / 100 + p_0(t): one key per (sum, output position), which the
    MLP maps to the digit due at that position.  Book counts: 2,088 / 737,
    27,432 / 10,440, 360,576 / 139,267; closed form 189 + 189 n + 15 F with
    F = 3 (n + 1)(2 10^n - 1).
    """
    _check_digits('build_decimal_addition_transformer', n_digits)
    n = n_digits
    block = 3 * n + 2
    params = _adder_embeddings(n, block)
    pos = params['pos_emb'][:, 4:]
    n_sums = 2 * 10 ** n - 1
    layer = base_layer(2 * n + 1, 7, 3 * (n + 1) * n_sums, 3)
    for head, (start, digit) in enumerate(product([0, n + 1], range(n))):
        layer['Q'][head, 1, :] = pos[start + n - 1 - digit] * query_scale
        layer['K'][head, 4:, :] = np.eye(3)
        layer['V'][head, 0, 0] = 100 * 10 ** digit
        layer['P'][head, 0, 0] = 1 / 100
    _self_cleanup(layer, query_scale)
    layer['V'][-1, 0, 2] = -1.0   # minus the token's own value ...
    layer['V'][-1, 4, 2] = 1.0    # ... plus the first coordinate of its position
    layer['P'][-1, 0, 2] = 1.0
    keys, outs = [], []
    for k in range(n_sums):
        for place, p in zip(range(n, -1, -1), pos[-n - 1:]):
            keys.append(layer_norm(np.concatenate([[k / 100 + p[0], 1.0, 0.0, 0.0], p]))[0])
            outs.append(out_scale * params['tok_emb'][k // 10 ** place % 10])
    layer['M1'][0], layer['b1'], layer['M2'], layer['b2'] = build_MLP(keys, outs)
    params['layers'].append(layer)
    return params


# ----------------------------------------------------------------------------- references

def _digits(value, n):
    return [value // 10 ** p % 10 for p in range(n - 1, -1, -1)]


def addition_prompts(n_digits, pairs=None):
    """Prompts ``[a digits, 10, b digits, 11]`` for all (a, b) (default) or the given pairs.

    Returns ``(prompts (N, 2n + 2) int array, pairs (N, 2) int array)``.
    """
    _check_digits('addition_prompts', n_digits)
    n = n_digits
    if pairs is None:
        a, b = np.divmod(np.arange(10 ** (2 * n)), 10 ** n)
        pairs = np.stack([a, b], axis=1)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if pairs.size and (pairs.min() < 0 or pairs.max() >= 10 ** n):
        raise ValueError(f'addition_prompts: numbers must be in 0..{10 ** n - 1} for '
                         f'{n} digits; got {pairs.min()}..{pairs.max()}')
    places = 10 ** np.arange(n - 1, -1, -1)
    digits = pairs[:, :, None] // places % 10                      # (N, 2, n)
    col = lambda v: np.full((len(pairs), 1), v)
    prompts = np.concatenate([digits[:, 0], col(PLUS), digits[:, 1], col(EQUALS)], axis=1)
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
    """Plain Python: the n + 1 output digits of ``[a.., 10, b.., 11]``, most significant first."""
    a, b, n = _parse(tokens)
    return _digits(a + b, n + 1)


def mod_addition_reference(tokens):
    """Plain Python: the last digit of a + b for ``[a.., 10, b.., 11]`` (or ``[i, j]``)."""
    tokens = [int(t) for t in tokens]
    if len(tokens) == 2 and PLUS not in tokens:
        return (tokens[0] + tokens[1]) % 10
    a, b, _ = _parse(tokens)
    return (a + b) % 10


# ----------------------------------------------------------------------------- puzzles' helper

def fit_lookup_mlp(params, prompts, targets, layer=0, row=0, out_scale=1e10, positions=None,
                   tol=1e-12):
    """Replace a layer's MLP by a lookup built from the keys it actually sees.

    Runs ``prompts`` (N, T) with the layer's MLP switched off, reads the layer-normed
    coordinate ``row`` at ``positions`` (default: the last one) as the key, and
    builds an MLP (``build_MLP``) that maps each key to ``out_scale`` times the
    out-embedding of ``targets`` (N, len(positions)) there.  Keys closer than ``tol``
    (rounding noise: the same sum reached through different digits) form one
    cluster, represented by its midpoint; a cluster must want a single token.
    A target of -1 means "no answer due here" and skips that key.
    Returns ``(params, min_sep)``; ``params`` is modified in place.
    """
    prompts = np.asarray(prompts)
    targets = np.asarray(targets).reshape(len(prompts), -1)
    positions = [prompts.shape[1] - 1] if positions is None else list(positions)
    lay = params['layers'][layer]
    # the layer's MLP input does not depend on its MLP: run the layers up to it, MLP silenced
    silent = dict(lay, M1=np.zeros((lay['M1'].shape[0], 0)), b1=np.zeros(0),
                  M2=np.zeros((0, lay['M2'].shape[1])))
    upto = dict(params, layers=params['layers'][:layer] + [silent])
    keys = trace(prompts, upto).mlp_in[layer][:, positions, row].ravel()
    want = targets.ravel()
    keys, want = keys[want >= 0], want[want >= 0]
    order = np.argsort(keys, kind='stable')
    keys, want = keys[order], want[order]
    cluster = np.concatenate([[0], np.cumsum(np.diff(keys) > tol)])
    starts = np.flatnonzero(np.diff(cluster, prepend=-1))
    clash = np.flatnonzero(want != want[starts][cluster])
    if len(clash):
        i = clash[0]
        raise ValueError(f'fit_lookup_mlp: key {float(keys[i])!r} must give token {want[i]} and '
                         f'{want[starts][cluster][i]}; the attention does not separate them')
    ends = np.append(starts[1:], len(keys)) - 1
    centres = (keys[starts] + keys[ends]) / 2
    weights = build_MLP(centres, out_scale * params['out_emb'][want[starts]])
    d_model = params['tok_emb'].shape[1]
    lay['M1'] = np.zeros((d_model, weights.d_ff))
    lay['M1'][row] = weights[0]
    lay['b1'], lay['M2'], lay['b2'] = weights[1], weights[2], weights[3]
    return params, weights.min_sep


def addition_errors(params, n_digits, pairs=None, task='decimal', chunk=None):
    """How many prompts a program gets wrong, by greedy batched decoding (``decode_batch``).

    ``task='decimal'``: n + 1 output digits; ``'mod'``: one digit, (a + b) % 10;
    ``'single'``: prompts ``[i, j]`` (all 100 by default), one digit.  ``pairs``
    defaults to every pair; ``chunk`` (rows per forward pass) defaults to a
    memory-bounded size.  Returns ``(n_wrong, n_checked)``.
    """
    from .decoding import decode_batch
    if task == 'single':
        pairs = np.stack(np.divmod(np.arange(100), 10), axis=1) if pairs is None \
            else np.asarray(pairs).reshape(-1, 2)
        got = decode_batch(pairs, params, 1, chunk=chunk)[:, -1]
        return int((got != pairs.sum(1) % 10).sum()), len(pairs)
    if task not in ('decimal', 'mod'):
        raise ValueError(f"addition_errors: task must be 'decimal', 'mod' or 'single'; "
                         f"got {task!r}")
    prompts, pairs = addition_prompts(n_digits, pairs)
    total = pairs.sum(1)
    if task == 'mod':
        got = decode_batch(prompts, params, 1, chunk=chunk)[:, -1]
        return int((got != total % 10).sum()), len(pairs)
    places = 10 ** np.arange(n_digits, -1, -1)
    got = decode_batch(prompts, params, n_digits + 1, chunk=chunk)[:, -n_digits - 1:]
    return int((got != total[:, None] // places % 10).any(1).sum()), len(pairs)
