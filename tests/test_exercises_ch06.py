"""Chapter 6 checkers: plausible wrong answers fail with a message naming the input.

The reference solutions (read from solutions/06_addition.py), the shared garbage and
endless loops are covered once for every chapter by tests/test_checker_contract.py.
"""
import time

import numpy as np

import taotp
from solutions import answer
from taotp.addition import addition_prompts, fit_lookup_mlp, spike
from taotp.exercises import ch06, check, registry


def fails(checker, answer, *fragments):
    result = checker(answer)
    assert not result.passed, result.message
    for fragment in fragments:
        assert fragment in result.message, result.message
    return result


def _nan_mod_adder():
    params = taotp.build_multi_digit_mod_transformer(2)
    params['layers'][0]['M2'][0, 0] = np.nan
    return params


PARAMS_PUZZLES = ['6.6', '6.7', '6.8', '6.10', '6.11', '6.13', '6.14', '6.15', '6.16', '6.19']
MLP_PUZZLES = ['6.2', '6.3', '6.4']

# garbage particular to Chapter 6's answers: MLP weight tuples and broken adders
EXTRA_GARBAGE = {
    **{pid: {'a short weight tuple': (1, 2, 3),
             'weights whose shapes disagree': (np.ones((1, 2)), np.ones(2), np.ones((3, 1)), 0.0),
             'weights with a NaN': (np.full((1, 2), np.nan), np.ones(2), np.ones((2, 1)), 0)}
       for pid in ['6.4']},
    **{pid: {'a function returning a short tuple': lambda *a: (1, 2, 3),
             'a function returning NaN weights': lambda *a: (np.full((1, 3), np.nan), np.ones(3),
                                                             np.ones((3, 1)), np.zeros(1))}
       for pid in MLP_PUZZLES[:2]},
    **{pid: {'an adder with a NaN': _nan_mod_adder()} for pid in PARAMS_PUZZLES},
}


def test_registry_lists_all_twenty():
    ids = [p.id for p in ch06.PUZZLES]
    assert ids == [f'6.{i}' for i in range(1, 21)]
    checked = [p.id for p in ch06.PUZZLES if p.kind == 'checked']
    assert len(checked) == 16 and {'6.19', '6.20'} <= set(checked)
    assert all(registry()[i].checker is not None for i in checked)


def test_a_nan_program_is_named():
    fails(ch06.check_6_14, _nan_mod_adder(), 'non-finite')


def test_raising_function_names_the_input():
    def raises(*args):
        raise RuntimeError('boom')
    fails(ch06.check_6_2, raises, 'your spike raised RuntimeError: boom on x0=0.0, a0=1.0')


# ----------------------------------------------------------------------------- 6.2-6.5

def test_6_2_wrong():
    fails(ch06.check_6_2, lambda x0, a0: spike(x0, 1.0), 'x0=2.5, a0=-3.0',
          'expected f(x0) = -3.0')
    fails(ch06.check_6_2, lambda x0, a0: spike(x0, a0, width=2.0), 'x0=0.0, a0=1.0',
          'expected 0 at x')


def test_6_3_wrong():
    def fixed_width(xs, ys):  # forgets min_sep: neighbouring spikes overlap
        w = taotp.build_MLP(xs, ys)
        return w[0] * w.min_sep, w[1] + (np.repeat(np.asarray(xs), 3) / w.min_sep
                                          - np.repeat(np.asarray(xs), 3)), w[2], w[3]
    fails(ch06.check_6_3, fixed_width, 'points: at x =', 'expected')

    def too_wide(xs, ys):
        m1, b1, M2, b2 = taotp.build_MLP(xs, ys)
        return np.append(m1, 0.0), np.append(b1, 0.0), np.vstack([M2, 0 * M2[:1]]), b2
    fails(ch06.check_6_3, too_wide, '1 points: at most 3 hidden units allowed; got 4')


def test_6_4_wrong():
    fails(ch06.check_6_4, spike(), 'budget: 2 hidden units', 'got 3 hidden units')
    step = (np.array([[1.0, 1.0]]), np.array([1.0, 0.0]), np.array([[1.0], [-1.0]]), np.zeros(1))
    fails(ch06.check_6_4, step, 'expected f(x) <= 0 for |x| >= 1; got f(1')


def test_6_5_wrong_and_other_correct_forms():
    fails(ch06.check_6_5, lambda b: 58 * b + 50, 'b = 2: expected 165 parameters, got 166')
    fails(ch06.check_6_5, lambda b: 'many', 'b = 2: expected a number, got str')
    build = lambda b: taotp.count_params(
        taotp.build_single_digit_mod_transformer(base=b))['n_params']
    assert ch06.check_6_5(build)                   # counting a built program passes too


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


def test_6_14_wrong_and_a_refit_passes():
    fails(ch06.check_6_14, taotp.build_multi_digit_mod_transformer(2),
          'floor((a + b) / 10) mod 10: prompt [0, 0, 10, 0, 1, 11]: expected [0], got [1]')
    prompts, pairs = addition_prompts(2)
    params, _ = fit_lookup_mlp(taotp.build_multi_digit_mod_transformer(2), prompts,
                               pairs.sum(1) // 10 % 10)
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
    result = ch06.check_6_19(taotp.build_decimal_addition_transformer(3), limit=10)
    assert not result and '0 + 0: prompt [0, 10, 0, 11]: expected [0, 11], got [' in result.message


def test_6_19_reference_passes_on_all_pairs(capsys):
    """The solution notebook's adder, checked on all 10,000 pairs by the shared engine."""
    adder = answer('6.19')
    start = time.perf_counter()
    result = check('6.19', adder)
    seconds = time.perf_counter() - start
    with capsys.disabled():
        print(f'\n6.19 reference: {seconds:.1f} s')
    assert result, result.message
    assert 'all 10,000 pairs' in result.message


def test_6_20_wrong():
    fails(ch06.check_6_20, taotp.build_decimal_addition_transformer,
          '1-digit multiplication: prompt [0, 10, 1, 11]: expected [0, 0], got [0, 1]')
