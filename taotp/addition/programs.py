"""The chapter's three adders: attention gathers the digits, the MLP looks the answer up.

One attention layer writes the *number* ``a + b`` into one residual
coordinate; after layer norm that coordinate is a scalar key that differs for
each sum, and an MLP from ``build_MLP`` maps each key to the embedding of the
wanted digit, times ``out_scale`` (messy cleanup).

* ``build_single_digit_mod_transformer`` (Fig. 6.2): ``[i, j] -> (i + j) % 10``;
* ``build_multi_digit_mod_transformer`` (Fig. 6.3): the last digit of a + b;
* ``build_decimal_addition_transformer`` (Fig. 6.4): all n + 1 digits of a + b.

Constants, one name per kind: ``harden`` scales the queries (hard attention),
``out_scale`` the MLP's answer (messy cleanup), and ``value_scale`` the
single-digit head's output, which must drown the token's own embedding
before the MLP reads it.
"""
from itertools import product

import numpy as np

from ..blocks import pos_3d_enc_rotation_matrix, pos_enc_3d_array
from ..model import layer_norm
from ..params import base_layer, base_params
from .data import check_digits
from .mlp import OUT_SCALE, build_MLP

HARDEN = 1e6          # the book's query scale for the multi-digit adders (Figs. 6.3, 6.4)
VALUE_SCALE = 1e4     # the book's value scale of the single-digit adder (Fig. 6.2)
MAX_TABLE_DIGITS = 4  # the MLPs of Figs. 6.3-6.4 hold every sum: 4.5 M parameters at 4 digits


def digit_embedding(base=10, scale=100):
    """Rows ``[x, 1, a, -x - a - 1]`` with ``x = digit / scale`` (Section 6.4's 4-dim format).

    The entries sum to 0 and ``a`` is chosen so the squared norm is 4, so every
    row is a fixed point of layer norm: ``a`` solves a^2 + (x + 1) a + x^2 + x - 3/2 = 0,
    which needs -3x^2 - 2x + 5 >= 0 (so ``base <= scale`` in practice).

    >>> tok = digit_embedding()
    >>> tok.shape, bool(np.allclose(layer_norm(tok), tok))
    ((10, 4), True)
    """
    x = np.arange(base) / scale
    disc = -3 * x ** 2 - 2 * x + 5
    if np.any(disc < 0):
        raise ValueError(f'digit_embedding: digits up to {base - 1} / {scale} leave no real '
                         f'solution for a; need -3x^2 - 2x + 5 >= 0; got {disc.min():.3g}')
    a = (np.sqrt(disc) - x - 1) / 2
    return np.stack([x, np.ones_like(x), a, -x - a - 1], axis=1)


# ----------------------------------------------------------------------------- Fig. 6.2

def build_single_digit_mod_transformer(base=10, value_scale=VALUE_SCALE, out_scale=OUT_SCALE):
    """Add two digits modulo ``base`` (Fig. 6.2): ``[i, j] -> (i + j) % base``.

    Architecture: 1 layer, 1 head, d_model 4, d_head 4, d_ff 3 (2 base - 1);
    no positions (Q = K = 0, so the head averages both tokens).  The head writes
    ``value_scale * [i + j, 1, 0, 0]``, which drowns the token's own residual; the
    MLP reads layer-normed coordinate 0 and outputs ``out_scale`` times the answer's
    embedding.  How the parameter count grows with the base is puzzle 6.5 (the
    book's counts for base 10 are in ``taotp.programs.CATALOGUE``).
    The range of both scales that still works is measured in tests/test_addition.py.

    >>> import taotp
    >>> int(taotp.transformer([7, 8], **build_single_digit_mod_transformer())[-1].argmax())
    5
    """
    if isinstance(base, bool) or not isinstance(base, (int, np.integer)):
        raise TypeError(f'build_single_digit_mod_transformer: base must be an int; '
                        f'got {type(base).__name__} {base!r}')
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

def _adder_embeddings(block_size):
    """Tokens in dims 0-3 (digits; '+' and '=' reuse digit 0), positions in dims 4-6."""
    params = base_params(vocab_size=12, block_size=block_size, d_model=7)
    tok = digit_embedding(10)
    tok = np.vstack([tok, tok[0], tok[0]])
    params['tok_emb'][:, :4] = tok
    params['out_emb'][:, :4] = tok
    params['pos_emb'][:, 4:] = pos_enc_3d_array(block_size)
    return params


def _self_cleanup(layer, harden):
    """Last head: attend to yourself and erase the token's two filler dims (2 and 3)."""
    layer['Q'][-1, 4:, :] = pos_3d_enc_rotation_matrix(0.0) * harden
    layer['K'][-1, 4:, :] = np.eye(3)
    layer['V'][-1, 2:4, :2] = -np.eye(2)
    layer['P'][-1, 2:4, :2] = np.eye(2)


# ----------------------------------------------------------------------------- Fig. 6.3

def build_multi_digit_mod_transformer(n_digits, harden=HARDEN, out_scale=OUT_SCALE):
    """Last digit of a + b for n-digit a, b (Fig. 6.3): ``[a.., 10, b.., 11] -> (a + b) % 10``.

    Architecture: 1 layer, 2 n + 1 heads, d_model 7 (token 4 + position 3),
    d_head 3, d_ff 3 (2 10^n - 1).  Head (number, digit) rotates the query's own
    position back to that digit and writes 10^digit times its value into dim 0,
    so dim 0 ends up holding a + b; the last head cleans dims 2-3 properly.
    Parameters: 189 + 182 n + 15 F with F = 3 (2 10^n - 1) hidden units, so
    ``n_digits`` is at most ``MAX_TABLE_DIGITS`` (4).

    >>> import taotp
    >>> int(taotp.decode([4, 5, 10, 7, 8, 11], build_multi_digit_mod_transformer(2), 1)[-1])
    3
    """
    check_digits('build_multi_digit_mod_transformer', n_digits, MAX_TABLE_DIGITS,
                 'taotp.addition.programs.MAX_TABLE_DIGITS')
    block = 2 * n_digits + 2
    params = _adder_embeddings(block)
    n_sums = 2 * 10 ** n_digits - 1
    layer = base_layer(2 * n_digits + 1, 7, 3 * n_sums, 3)
    # '=' sits at position 2n + 1; the unit digit of b is 1 back, that of a is n + 2 back
    reads = [(first + place, place) for first in (1, n_digits + 2) for place in range(n_digits)]
    for head, (steps_back, place) in enumerate(reads):
        turn = pos_3d_enc_rotation_matrix(-2 * np.pi * steps_back / block)
        layer['Q'][head, 4:, :] = turn * harden
        layer['K'][head, 4:, :] = np.eye(3)
        layer['V'][head, 0, 0] = 100 * 10 ** place     # undo the 1/100 of the embedding
        layer['P'][head, 0, 0] = 1.0
    _self_cleanup(layer, harden)
    # after attention the '=' position holds [a + b, 1, 0, 0, pos]; LN fixes pos's share
    pos = params['pos_emb'][0, 4:]
    keys = [layer_norm(np.concatenate([[k, 1.0, 0.0, 0.0], pos]))[0] for k in range(n_sums)]
    outs = [out_scale * params['tok_emb'][k % 10] for k in range(n_sums)]
    layer['M1'][0], layer['b1'], layer['M2'], layer['b2'] = build_MLP(keys, outs)
    params['layers'].append(layer)
    return params


# ----------------------------------------------------------------------------- Fig. 6.4

def build_decimal_addition_transformer(n_digits, harden=HARDEN, out_scale=OUT_SCALE):
    """Decimal addition (Fig. 6.4): ``[a.., 10, b.., 11] -> n + 1 digits of a + b``.

    Inputs are zero padded to ``n_digits``, most significant digit first; the
    output has n + 1 digits (leading zeros kept).  Architecture: 1 layer,
    2 n + 1 heads, d_model 7, d_head 3, d_ff 3 (n + 1)(2 10^n - 1).

    Digit heads attend to *absolute* positions (the query is the constant
    token dim times the target's position vector), each adding 10^digit / 100
    times its digit to dim 0.  The last head erases the filler dims and swaps
    the current token's value in dim 0 for the first position coordinate, so dim 0
    holds (a + b) / 100 + p_0(t): one key per (sum, output position), which the
    MLP maps to the digit due at that position.  Parameters: 189 + 189 n + 15 F
    with F = 3 (n + 1)(2 10^n - 1) hidden units, so ``n_digits`` is at most
    ``MAX_TABLE_DIGITS`` (4: 4.5 million parameters; 5 would hold 54 million).

    >>> import taotp
    >>> p = build_decimal_addition_transformer(2)
    >>> taotp.decode([4, 5, 10, 7, 8, 11], p, max_steps=3)[-3:].tolist()
    [1, 2, 3]
    """
    check_digits('build_decimal_addition_transformer', n_digits, MAX_TABLE_DIGITS,
                 'taotp.addition.programs.MAX_TABLE_DIGITS')
    n = n_digits
    block = 3 * n + 2
    params = _adder_embeddings(block)
    pos = params['pos_emb'][:, 4:]
    n_sums = 2 * 10 ** n - 1
    layer = base_layer(2 * n + 1, 7, 3 * (n + 1) * n_sums, 3)
    for head, (start, digit) in enumerate(product([0, n + 1], range(n))):
        layer['Q'][head, 1, :] = pos[start + n - 1 - digit] * harden
        layer['K'][head, 4:, :] = np.eye(3)
        layer['V'][head, 0, 0] = 100 * 10 ** digit
        layer['P'][head, 0, 0] = 1 / 100
    _self_cleanup(layer, harden)
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
