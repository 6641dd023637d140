"""Puzzle 6.12 (Records chapter): one attention-only layer adds two digits modulo 10.

Every prompt of every base from 2 to 50 (exhaustive), the margins, the role of the
digit-dependent reading (switch it off and the program is additive again, and the
four-prompt cycle of Section 6.1 sums to zero), and the error paths.
"""
import itertools

import numpy as np
import pytest

import taotp
from taotp.addition import (build_attention_only_mod_transformer, four_prompt_cycle, head_pairs,
                            reading_by_position, unscaled_logits)


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


def test_reading_by_position_only_is_additive_and_fails_the_cycle():
    """Section 6.1 holds with the residual: with every head frozen on one position (the
    queries no longer see the digit) the unscaled logits are x_i + y_j (the residual's
    function of j included), and the four prompts (0,0), (5,5), (0,5), (5,0) cycle to
    exactly zero, so no argmax answers them all.  The record's cycle is far from zero."""
    prompts = all_prompts(10)
    for digit in ('first', 'second'):
        p = reading_by_position(build_attention_only_mod_transformer(), digit)
        U = unscaled_logits(p, prompts).reshape(10, 10, 10)
        additive = U[:, :1] + U[:1, :] - U[:1, :1]      # x_i + y_j from the first row and column
        assert np.allclose(U, additive, atol=1e-9 * np.abs(U).max())
        cycle, right = four_prompt_cycle(p)
        assert abs(cycle) < 1e-9 * np.abs(U).max() and not right
    cycle, right = four_prompt_cycle(build_attention_only_mod_transformer())
    assert right and cycle > 1000
    with pytest.raises(ValueError, match="digit must be 'first' or 'second'; got 'third'"):
        reading_by_position(build_attention_only_mod_transformer(), 'third')


def test_errors_name_the_rule():
    with pytest.raises(ValueError, match='base must be an int in 2..50; got 1'):
        build_attention_only_mod_transformer(1)
    with pytest.raises(ValueError, match='far must be a positive finite number; got -1'):
        build_attention_only_mod_transformer(10, far=-1)


# ----------------------------------------------------------------------------- fewest heads

def heads_reading_by_j_lp(patterns, base=10, margin=1.0):
    """Tables B[h][i] (scores per answer) with argmax sum_{h in patterns[j]} B[h][i] = i + j.

    Inactive heads write (almost) nothing in this design, so the answer's scores are the
    sum over the heads that read i.  A linear feasibility problem (scipy, a test
    dependency); returns the tables or None.
    """
    from scipy.optimize import linprog
    H = 1 + max(max(p) for p in patterns)
    rows = []
    for j in range(base):
        for i in range(base):
            t = (i + j) % base
            for k in range(base):
                if k == t:
                    continue
                r = np.zeros(H * base * base)
                for h in patterns[j]:
                    r[(h * base + i) * base + k] += 1
                    r[(h * base + i) * base + t] -= 1
                rows.append(r)
    res = linprog(np.zeros(H * base * base), A_ub=np.array(rows),
                  b_ub=-margin * np.ones(len(rows)), bounds=[(-50, 50)] * (H * base * base),
                  method='highs')
    return res.x.reshape(H, base, base) if res.status == 0 else None


def test_four_heads_that_choose_by_j_suffice():
    """Patterns = the binary digits of j + 1 (ten distinct non-empty sets of 4 heads): a
    linear program finds the tables, and the transformer built from them is exact."""
    patterns = [{h for h in range(4) if (j + 1) >> h & 1} for j in range(10)]
    tables = heads_reading_by_j_lp(patterns)
    assert tables is not None
    p = build_attention_only_mod_transformer(patterns=patterns, tables=tables)
    assert taotp.config(p)['n_heads'] == [4]
    prompts = all_prompts(10)
    assert np.array_equal(taotp.last_token_argmax(prompts, p), prompts.sum(1) % 10)


def test_two_digits_cannot_share_a_pattern():
    """Why 3 heads that choose by j alone cannot: two digits with the same readers would
    need argmax(C_j + B(i)) = i + j and argmax(C_j' + B(i)) = i + j', whose inequalities sum
    to 0 > 0 (the linear program agrees for every pair of digits with one shared pattern)."""
    from scipy.optimize import linprog
    for j2 in (1, 2, 5):
        rows = []
        for j, c in ((0, 0), (j2, 1)):
            for i in range(10):
                t = (i + j) % 10
                for k in range(10):
                    if k != t:
                        r = np.zeros(300)                  # C_0, C_j2, B (10 x 10)
                        r[c * 10 + k] += 1
                        r[c * 10 + t] -= 1
                        r[100 + i * 10 + k] += 1
                        r[100 + i * 10 + t] -= 1
                        rows.append(r)
        res = linprog(np.zeros(300), A_ub=np.array(rows), b_ub=-np.ones(len(rows)),
                      bounds=[(None, None)] * 300, method='highs')
        assert res.status == 2, j2                        # infeasible


def test_custom_pattern_errors():
    with pytest.raises(ValueError, match='patterns must give a set of heads for each of the 10'):
        build_attention_only_mod_transformer(patterns=[{0}] * 9)
    with pytest.raises(ValueError, match=r'tables must have shape \(heads, base, base\) = '
                                         r'\(1, 10, 10\); got \(2, 10, 10\)'):
        build_attention_only_mod_transformer(patterns=[{0}] * 10, tables=np.zeros((2, 10, 10)))
