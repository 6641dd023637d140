"""Chapter 6 checkers: plausible wrong answers fail with a message naming the input; garbage is reported."""
from itertools import product

import numpy as np
import pytest

import taotp
from taotp.exercises import ch06, registry


def fails(checker, answer, *fragments, **kwargs):
    result = checker(answer, **kwargs)
    assert not result.passed, result.message
    for fragment in fragments:
        assert fragment in result.message, result.message
    return result


def test_registry_lists_all_twenty():
    ids = [p.id for p in ch06.PUZZLES]
    assert ids == [f'6.{i}' for i in range(1, 21)]
    checked = [p.id for p in ch06.PUZZLES if p.kind == 'checked']
    assert len(checked) == 16 and {'6.19', '6.20'} <= set(checked)
    assert all(registry()[i].checker is not None for i in checked)


# ----------------------------------------------------------------------------- 6.2-6.5

def test_6_2_reference_and_wrong():
    assert ch06.check_6_2(taotp.spike)
    fails(ch06.check_6_2, lambda x0, a0: taotp.spike(x0, 1.0), 'x0=2.5, a0=-3.0',
          'expected f(x0) = -3.0')
    fails(ch06.check_6_2, lambda x0, a0: taotp.spike(x0, a0, width=2.0), 'x0=0.0, a0=1.0',
          'expected 0 at x')


def test_6_3_reference_and_wrong():
    assert ch06.check_6_3(taotp.build_MLP)

    def fixed_width(xs, ys):  # forgets min_sep: neighbouring spikes overlap
        w = taotp.build_MLP(xs, ys)
        return w[0] * w.min_sep, w[1] + (np.repeat(np.asarray(xs), 3) / w.min_sep
                                          - np.repeat(np.asarray(xs), 3)), w[2], w[3]
    fails(ch06.check_6_3, fixed_width, 'points: at x =', 'expected')

    def too_wide(xs, ys):
        m1, b1, M2, b2 = taotp.build_MLP(xs, ys)
        return np.append(m1, 0.0), np.append(b1, 0.0), np.vstack([M2, 0 * M2[:1]]), b2
    fails(ch06.check_6_3, too_wide, '1 points: at most 3 hidden units allowed; got 4')


def test_6_4_reference_and_wrong():
    ok = (np.array([[1.0, 1.0]]), np.array([1.0, 0.0]), np.array([[1.0], [-2.0]]), np.zeros(1))
    assert ch06.check_6_4(ok)
    fails(ch06.check_6_4, taotp.spike(), 'budget: 2 hidden units', 'got 3 hidden units')
    step = (np.array([[1.0, 1.0]]), np.array([1.0, 0.0]), np.array([[1.0], [-1.0]]), np.zeros(1))
    fails(ch06.check_6_4, step, 'expected f(x) <= 0 for |x| >= 1; got f(1')


def test_6_5_reference_and_wrong():
    build = lambda b: taotp.count_params(
        taotp.build_single_digit_mod_transformer(base=b))['n_params']
    assert ch06.check_6_5(build)
    fails(ch06.check_6_5, lambda b: 58 * b + 50, 'b = 2: expected 165 parameters, got 166')
    fails(ch06.check_6_5, lambda b: 'many', 'b = 2: expected a number, got str')


def test_6_5_loop_is_reported():
    def forever(b):
        while True:
            pass
    fails(ch06.check_6_5, forever, 'took longer than 1 s on b = 2', seconds=1)


# ----------------------------------------------------------------------------- 6.6-6.8

def test_6_6_wrong():
    fails(ch06.check_6_6, taotp.build_single_digit_mod_transformer(),
          '[0, 0]: expected attention output [1.0, 0.0, 0.0, 0.0]')


def test_6_7_wrong():
    fails(ch06.check_6_7, taotp.build_single_digit_mod_transformer(),
          'budget: d_model must be 3; got 4')


def test_6_8_wrong():
    fails(ch06.check_6_8, taotp.build_single_digit_mod_transformer(),
          '[9, 9]: the residual before the final layer norm should be tok_emb[8]')


# ----------------------------------------------------------------------------- 6.10-6.15

def first_heads(params, k):
    layer = params['layers'][0]
    for name in 'QKVP':
        layer[name] = layer[name][:k]
    return params


def test_6_10_wrong():
    fails(ch06.check_6_10, taotp.build_multi_digit_mod_transformer(2),
          'budget: at most 3 heads; got 5')
    fails(ch06.check_6_10, first_heads(taotp.build_multi_digit_mod_transformer(2), 3),
          '[a, a, +, b, b, =] -> (a + b) mod 10: prompt [', 'expected')


def test_6_11_wrong():
    moved = first_heads(taotp.build_multi_digit_mod_transformer(2), 3)
    moved['pos_emb'] = moved['pos_emb'][::-1].copy()
    fails(ch06.check_6_11, moved, 'pos_emb must keep three columns equal to pos_enc_3d_array(6)')


def test_6_13_wrong():
    fails(ch06.check_6_13, taotp.build_multi_digit_mod_transformer(2),
          'budget: exactly 4 heads; got 5')


def test_6_14_reference_and_wrong():
    fails(ch06.check_6_14, taotp.build_multi_digit_mod_transformer(2),
          'floor((a + b) / 10) mod 10: prompt [0, 0, 10, 0, 1, 11]: expected [0], got [1]')
    params = taotp.build_multi_digit_mod_transformer(2)
    prompts, pairs = taotp.addition_prompts(2)
    params, _ = taotp.fit_lookup_mlp(params, prompts, pairs.sum(1) // 10 % 10)
    assert ch06.check_6_14(params)


def test_6_15_wrong():
    fails(ch06.check_6_15, taotp.build_multi_digit_mod_transformer(3),
          'keys of the 1,999 sums are only 1.37e-09 apart')


# ----------------------------------------------------------------------------- 6.16-6.20

def test_6_16_wrong():
    fails(ch06.check_6_16, taotp.build_decimal_addition_transformer(2),
          'block_size must be at least 14 for this task; got 8')
    absolute = taotp.build_decimal_addition_transformer(2)   # reads absolute positions
    absolute['pos_emb'] = np.vstack([absolute['pos_emb'], absolute['pos_emb'][:6]])
    fails(ch06.check_6_16, absolute, 'prefix of 1 digits: prompt [', 'expected')


def test_6_17_wrong():
    fails(ch06.check_6_17, taotp.build_decimal_addition_transformer,
          '1 digits: right, but the keys of all (sum, answer position) pairs are 0.006 apart; '
          "the book's construction reaches 0.006")


def test_6_19_wrong():
    fails(ch06.check_6_19, taotp.build_decimal_addition_transformer(2),
          'block_size must be at least 9 for this task; got 8')
    fails(ch06.check_6_19, taotp.build_decimal_addition_transformer(3),
          '0 + 0: prompt [0, 10, 0, 11]: expected [0, 11], got [')


def test_6_20_wrong():
    fails(ch06.check_6_20, taotp.build_decimal_addition_transformer,
          '1-digit multiplication: prompt [0, 10, 1, 11]: expected [0, 0], got [0, 1]')


# ----------------------------------------------------------------------------- garbage

PARAMS_CHECKERS = [ch06.check_6_6, ch06.check_6_7, ch06.check_6_8, ch06.check_6_10,
                   ch06.check_6_11, ch06.check_6_13, ch06.check_6_14, ch06.check_6_15,
                   ch06.check_6_16, ch06.check_6_19]
FUNCTION_CHECKERS = [ch06.check_6_2, ch06.check_6_3, ch06.check_6_5, ch06.check_6_17,
                     ch06.check_6_20]


def raises(*args):
    raise RuntimeError('boom')


@pytest.mark.parametrize('checker', PARAMS_CHECKERS, ids=lambda c: c.puzzle_id)
@pytest.mark.parametrize('garbage', [None, 'params', {'tok_emb': np.zeros(3)}, 42],
                         ids=['none', 'string', 'broken-dict', 'number'])
def test_params_garbage_is_reported(checker, garbage):
    result = checker(garbage)
    assert not result.passed and result.message


def test_nan_program_is_reported():
    params = taotp.build_multi_digit_mod_transformer(2)
    params['layers'][0]['M2'][0, 0] = np.nan
    fails(ch06.check_6_14, params, 'non-finite')


@pytest.mark.parametrize('checker', FUNCTION_CHECKERS, ids=lambda c: c.puzzle_id)
@pytest.mark.parametrize('garbage', [None, 'f', raises, lambda *a: None,
                                     lambda *a: np.full((2, 2), np.nan)],
                         ids=['none', 'string', 'raises', 'returns-none', 'returns-nan'])
def test_function_garbage_is_reported(checker, garbage):
    result = checker(garbage)
    assert not result.passed and result.message


@pytest.mark.parametrize('garbage', [None, 'w', (1, 2, 3), (np.ones((1, 2)), np.ones(2),
                                                          np.ones((3, 1)), 0.0),
                                     (np.full((1, 2), np.nan), np.ones(2), np.ones((2, 1)), 0)],
                         ids=['none', 'string', 'short-tuple', 'shapes', 'nan'])
def test_weak_spike_garbage_is_reported(garbage):
    result = ch06.check_6_4(garbage)
    assert not result.passed and result.message


def test_raising_function_names_the_input():
    fails(ch06.check_6_2, raises, 'your spike raised RuntimeError: boom on x0=0.0, a0=1.0')


# ----------------------------------------------------------------------------- 6.19 in full

def build_unpadded_adder():
    """The solutions notebook's reference for 6.19 (a lookup over every state)."""
    block = 9
    p = taotp.base_params(12, block, 7)
    tok = taotp.digit_embedding(12)
    p['tok_emb'][:, :4] = tok
    p['out_emb'][:, :4] = tok
    p['pos_emb'][:, 4:] = taotp.pos_enc_3d_array(block)
    pos = p['pos_emb'][:, 4:]
    layer = taotp.base_layer(block + 1, 7, 0, 3)
    for t in range(block):
        layer['Q'][t, 1, :] = pos[t] * 1e6
        layer['K'][t, 4:, :] = np.eye(3)
        layer['V'][t, 0, 0], layer['V'][t, 1, 0] = 100 * 13.0 ** -t, 13.0 ** -t
        layer['P'][t, 0, 0] = 1.0
    layer['Q'][-1, 4:, :] = 1e6 * np.eye(3)
    layer['K'][-1, 4:, :] = np.eye(3)
    layer['V'][-1, 2:4, :2] = -np.eye(2)
    layer['P'][-1, 2:4, :2] = np.eye(2)
    layer['V'][-1, 0, 2], layer['V'][-1, 4, 2], layer['P'][-1, 0, 2] = -1.0, 1.0, 1.0
    p['layers'].append(layer)
    seqs, targets = [], []
    for a, b in product(range(100), repeat=2):
        prompt = [int(c) for c in str(a)] + [10] + [int(c) for c in str(b)] + [11]
        answer = [int(c) for c in str(a + b)] + [11]
        seq, want = prompt + answer[:-1], [-1] * (len(prompt) - 1) + answer
        seqs.append(seq + [0] * (block - len(seq)))
        targets.append(want + [-1] * (block - len(want)))
    return taotp.fit_lookup_mlp(p, np.array(seqs), np.array(targets), positions=range(block))[0]


@pytest.mark.slow
def test_6_19_reference_passes_on_all_pairs():
    result = ch06.check_6_19(build_unpadded_adder())
    assert result, result.message
    assert 'all 10,000 pairs' in result.message
