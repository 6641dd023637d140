"""Puzzle 6.12 (Records chapter): one attention-only layer adds two digits modulo 10.

Every prompt of every base from 2 to 50 (exhaustive), the margins, the role of the
digit-dependent reading (switch it off and the program is additive again, and the
four-prompt cycle of Section 6.1 sums to zero), and the error paths.
"""
import itertools

import numpy as np
import pytest

import taotp
from taotp.addition import build_attention_only_mod_transformer, head_pairs


def all_prompts(base):
    return np.array(list(itertools.product(range(base), repeat=2)))


@pytest.mark.parametrize('base', [2, 3, 4, 5, 7, 10, 11, 16, 23, 50])
def test_every_prompt_every_base(base):
    p = build_attention_only_mod_transformer(base)
    prompts = all_prompts(base)
    logits = taotp.transformer_batch(prompts, p)[:, -1]
    assert np.array_equal(logits.argmax(-1), prompts.sum(1) % base)
    best, second = np.sort(logits, axis=1)[:, -1], np.sort(logits, axis=1)[:, -2]
    assert (best - second).min() > 0.5                      # the answer's 2 against at most 1


def test_shape_attention_only_five_heads_for_base_10():
    p = build_attention_only_mod_transformer()
    cfg = taotp.config(p)
    assert cfg['n_layers'] == 1 and cfg['d_ff'] == [0] and cfg['n_heads'] == [5]
    assert not p['layers'][0]['M1'].size and not p['layers'][0]['b2'].any()
    assert taotp.count_non0_params(p)['n_params'] == 324
    assert len(head_pairs(10)) == 10 and max(max(pair) for pair in head_pairs(10)) == 4


def test_heads_read_the_first_digit_exactly_for_their_pair():
    p = build_attention_only_mod_transformer()
    pairs = head_pairs(10)
    prompts = all_prompts(10)
    weights = np.stack([taotp.trace(row, p).attn[0][:, 1, 0] for row in prompts])  # (100, 5)
    reads = weights > 0.5
    for (i, j), row in zip(prompts, reads):
        assert set(np.flatnonzero(row)) == set(pairs[j]), (i, j)
    assert np.all((weights < 1e-15) | (weights > 1 - 1e-9))


def unscaled_logits(params, prompts):
    """sigma * logits: the final layer norm's division undone (it cannot change an argmax)."""
    t = taotp.trace(prompts, params)
    z = t.final[:, -1]
    z = z - z.mean(axis=1, keepdims=True)
    return z @ np.asarray(params['out_emb']).T


def test_reading_by_position_only_is_additive_and_fails_the_cycle():
    """Section 6.1 holds with the residual: freeze every head on one position (queries no
    longer see the digit) and the unscaled logits are x_i + y_j (the residual's function of j
    included); the four prompts (0,0), (5,5), (0,5), (5,0) then cycle to exactly zero, so
    no additive score answers them all."""
    for frozen in (1.0, -1.0):                    # every head on the first / on the second digit
        p = build_attention_only_mod_transformer()
        layer = p['layers'][0]
        layer['Q'] = np.zeros_like(layer['Q'])
        layer['Q'][:, -2:, 0] = frozen * 1e3       # a constant query from the position block
        prompts = all_prompts(10)
        U = unscaled_logits(p, prompts).reshape(10, 10, 10)
        additive = U[:, :1] + U[:1, :] - U[:1, :1]  # x_i + y_j from the first row and column
        assert np.allclose(U, additive, atol=1e-6 * np.abs(U).max())
        d = U[..., 0] - U[..., 5]                  # prefer 0 over 5
        assert abs(d[0, 0] + d[5, 5] - d[0, 5] - d[5, 0]) < 1e-9 * np.abs(U).max()
        wrong = (U.argmax(-1) != prompts.sum(1).reshape(10, 10) % 10).sum()
        assert wrong > 0


def test_errors_name_the_rule():
    with pytest.raises(ValueError, match='base must be an int in 2..50; got 1'):
        build_attention_only_mod_transformer(1)
    with pytest.raises(ValueError, match='far must be a positive finite number; got -1'):
        build_attention_only_mod_transformer(10, far=-1)
