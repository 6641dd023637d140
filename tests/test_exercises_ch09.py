"""Chapter 9 checkers: what each one calls solved, and the answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 9.1 | `parity_sequence(bits, s)`: tokens (one character each) and IDs equal the reference on 47 bit strings of 1-100 bits (all zeros, all ones, alternating, random), offsets 1-50 | tokens as multi-character strings (passed before); `=` given s + 1; the scratchpad shifted by one |
| 9.2 | `scratchpad_text(operands)` equals the reference on 54 lists: every padding boundary (m = 1, 9, 10, 11, 100), all nines, zeros, ragged | no b_0; reversed query digits; padding the operands only; padding to the actual sum; the proof's padding n + 1 + floor(log10 m) |
| 9.3 | `bilevel_ids(operands, s1, s2)` equals the reference on the same 54 problems, offsets (1, 1) and random | the response coupled with the same number instead of the previous one |
| 9.4 | `multiplication_sequence(a, b)`: text and three levels on 40 products (zeros, ones, zeros inside a factor, all nines, powers of ten) | level 3 without the shift |
| 9.5 | `keys(operands, index)`: the two keys at 370 response positions (2-11 operands) | the same level-2 ID instead of one smaller |
| 9.6 | `cube(D, k)` for every k with D <= 6, and up to D = 16 | the binary expansion of k instead of k - 1; NaN |
| 9.7 | `head1(P1, P2, lam)`: PRE_SUM within 0.01 of the reference at 1194 response positions for (P1, P2) = (4, 3), (3, 2), (5, 6) at lam = 20 and (4, 3) at lam = 3 | NEXT on the key side; matrices for P1 = 4, P2 = 3 whatever is asked (passed before); a fixed scale instead of lam (passed before); wrong shapes |
| 9.8 | `carry_out(pair_sum, written)`: all 200 cases, the result read as a number first | carry = pair sum >= 10; a value whose `__array__` (budget) or `__ne__` (refused unread) never returns |
| 9.9 | weights (M1, b1, M2, b2) of at most 3 ReLUs: the readout picks digit / separator / EOS right at all 209 response positions of 9 problems | a Python function with `if`s (passed before: no ReLU budget); 4 ReLUs; EOS from PRE_EOS alone |
| 9.10 | weights of at most 80 ReLUs: exactly one-hot (1e-6) digit for every pair sum, previous pair sum and carry, PRE_SUM off by up to 0.09 (4332 inputs) | a Python function that rounds (passed before); 81 ReLUs; NUM dropped; trapezoids too narrow for the 0.09 error |
| 9.11 | `build(n, m)` -> a norm-free params dict within 1 layer, 4 heads, 83 ReLUs, d = 19 + 2 P1 + 2 P2, exact (teacher-forced, EOS once) on 42 problems for build(8, 8), build(3, 12), build(1, 1) | an object whose `generate` formats the sum in Python (passed before); the package's model object; an extra layer, a fifth head, a wider residual stream, an 84th ReLU; the (8, 8) weights for every size; lam = 0.5; the literal code width; the PreLN port without its norms. Accepted by design: the chapter's own builder |
| 9.12 | `size(n, m)` on 130 sizes: every power-of-two boundary of m + 1 and ell + 2, every power-of-ten boundary of m, random | the paper's P1 (hint, no answer given); P2 = ceil(log2 m) (passed before); a lookup of the old 8 sizes (passed before) |
| 9.13 | operands (<= 20 of <= 20 digits) for which the paper's condition ell + 1 <= 2^P1 holds and its literal width still fails, the corrected width is exact | [5], [1, 2, 3], [999, 999, 999]: ell a power of two, the condition fails (passed before); operands that work; too many |
| 9.14 | (operands, lam): exact at lam, not at lam - 0.25, lam on the 0.25 grid | lam not the smallest; not exact; off the grid; a bool |
| 9.15 | `shape(b)`: exactly one-hot digit blocks in every base 2-16, 20, 36, 60, pair sum off by up to 0.02 | the base-10 shape with a fix for bases 2 and 3 only (passed before); a lookup of the old 5 bases (passed before); overlapping trapezoids; plateaus off centre |
| 9.16 | a 1-layer program (the budget), exact teacher-forced parities and EOS on 27 strings of 1-100 bits (all zeros, all ones, alternating, a lone 1 at either end) | a second (empty) layer; no EOS; a short table; the adder |
| 9.17 | `needed(operands, j)`: the m positions digit j reads, on 87 digits | one key only |
| 9.18 | `counts(n, m)`: total and non-zero counts on 16 sizes up to 1000 x 1000, computed without building the program | the readout counted as tied; a lookup of the old 4 sizes (passed before); `count_params` on the package's builder (passed before; the statement asks for the counts by hand) |
| 9.19 | a PreLN params dict within 1 layer, 4 heads: exact teacher-forced response on 22 problems up to 4 x 4 | an extra layer and a fifth head (both passed before); the norm-free weights; one position table; a broken readout |

References passing, shared garbage and endless loops are tested once for every
checker in ``tests/test_checker_contract.py``; the references come from
``solutions/09_position_coupling.py`` through ``answer``.
"""
import copy
import inspect
import math
import time

import numpy as np
import pytest

import taotp
from solutions import answer
from taotp import coupling as C
from taotp.exercises import ch09, registry
from taotp.exercises.registry import checker


def fails(result, *fragments):
    assert not result.passed, result.message
    for fragment in fragments:
        assert fragment in result.message, result.message
    return result


def budgeted(puzzle, seconds=0.3):
    """The puzzle's checker body under a short total budget (the real one is 30 s)."""
    return checker(puzzle, budget=seconds)(registry()[puzzle].checker.__wrapped__)


def forever(*args, **kwargs):
    while True:
        time.sleep(0.01)


class NeverArray:
    def __array__(self, *args, **kwargs):
        forever()


class NeverCompared:
    __eq__ = __ne__ = forever


class _Generates:
    """An object whose ``generate`` returns ``value`` (the old 9.11 interface)."""

    def __init__(self, value):
        self.value = value

    def generate(self, operands):
        return self.value


class _PythonAdder:
    """No transformer at all: ``generate`` formats the scratchpad and the sum in Python."""

    def generate(self, operands):
        return list(C.scratchpad_text(operands).split('=', 1)[1] + '$'), sum(operands)


def _with_layer(params, extra):
    out = copy.deepcopy(params)
    out['layers'] = out['layers'] + [extra]
    return out


def _empty_layer(params):
    layer = params['layers'][0]
    return {k: (np.zeros_like(v) if not isinstance(v, dict) else dict(v)) for k, v in layer.items()}


def _extra_head(params):
    out = copy.deepcopy(params)
    layer = out['layers'][0]
    for key in 'QKVP':
        layer[key] = np.concatenate([layer[key], np.zeros_like(layer[key][:1])])
    return out


def _wider(params):
    """One more (unused) residual dimension everywhere."""
    pad = lambda a, axis: np.concatenate(                                  # noqa: E731
        [a, np.zeros(a.shape[:axis] + (1,) + a.shape[axis + 1:])], axis=axis)
    out = copy.deepcopy(params)
    out['tok_emb'], out['out_emb'] = pad(out['tok_emb'], 1), pad(out['out_emb'], 1)
    out['pos_emb'] = [pad(t, 1) for t in out['pos_emb']]
    layer = out['layers'][0]
    for key in 'QKVP':
        layer[key] = pad(layer[key], 1)
    layer['M1'], layer['M2'], layer['b2'] = (pad(layer['M1'], 0), pad(layer['M2'], 1),
                                             pad(layer['b2'], 0))
    return out


def _one_more_relu(params):
    out = copy.deepcopy(params)
    layer = out['layers'][0]
    layer['M1'] = np.concatenate([layer['M1'], np.zeros((layer['M1'].shape[0], 1))], axis=1)
    layer['b1'] = np.concatenate([layer['b1'], [0.0]])
    layer['M2'] = np.concatenate([layer['M2'], np.zeros((1, layer['M2'].shape[1]))])
    return out


EXTRA_GARBAGE = {
    '9.1': {'tokens without ids': lambda bits, s: (list(bits), None)},
    '9.7': {'vectors instead of matrices': lambda P1, P2, lam: (np.zeros(33), np.zeros(33))},
    '9.9': {'a function': lambda pa, pe: (pa, pe), 'three arrays': (np.eye(2), np.zeros(2),
                                                                     np.eye(2)),
            'NaN weights': (np.full((2, 2), np.nan), np.zeros(2), np.eye(2), np.zeros(2))},
    '9.10': {'a function': lambda s, c, n: np.eye(10)[0],
             'M1 of the wrong height': (np.zeros((2, 5)), np.zeros(5), np.zeros((5, 10)),
                                        np.zeros(10))},
    '9.11': {'a build returning None': lambda n, m: None,
             'a generate returning text': lambda n, m: _Generates('000>5$'),
             'a generate returning a NaN total': lambda n, m: _Generates((list('0>5$'), np.nan)),
             'a build returning the PreLN port object': lambda n, m:
             C.build_multi_operand_adder(n, m, norm=True)},
    '9.13': {'a list of strings': ['57', '48'], 'negative operands': [-1, 2]},
    '9.14': {'a NaN lambda': ([57, 48, 96], float('nan')), 'a bare lambda': 2.25},
    '9.16': {'two position tables': {**C.build_multi_operand_adder(2, 2, norm=True).params}},
    '9.19': {'one position table': {**C.build_multi_operand_adder(2, 2, norm=True).params,
                                    'pos_emb': np.zeros((8, 70))}},
}


def test_registry_lists_all_nineteen():
    ids = [p.id for p in ch09.PUZZLES]
    assert ids == [f'9.{i}' for i in range(1, 20)]
    assert all(p.kind == 'checked' for p in ch09.PUZZLES)


# ----------------------------------------------------------------------------- 9.1 - 9.5 formats

def test_9_1_rejects_shifted_equals_and_scratchpad():
    def eq_plus_one(bits, s):
        t, p = C.parity_sequence(bits, offset=s)
        p[len(bits)] = s + 1
        return t, p

    def shifted(bits, s):
        t, p = C.parity_sequence(bits, offset=s)
        return t, p[:len(bits) + 1] + [q - 1 for q in p[len(bits) + 1:]]

    fails(ch09.check_9_1(eq_plus_one), "bits '0101'", 'expected IDs [2, 3, 4, 5, 1')
    fails(ch09.check_9_1(shifted), "bits '0101'", 'expected IDs')


def test_9_1_wants_one_character_per_token():
    def glued(bits, s):
        t, p = C.parity_sequence(bits, offset=s)
        return [bits, '=', ''.join(t[len(bits) + 1:])], p

    fails(ch09.check_9_1(glued), 'tokens must be a string or a list of one-character strings')


def test_9_2_rejects_the_classic_mistakes():
    def no_b0(ops):
        q, r = C.scratchpad_text(ops).split('=')
        return q + '=' + r.split('>', 1)[1] if '>' in r else q + '='

    def reversed_query(ops):
        q, r = C.scratchpad_text(ops).split('=')
        return '+'.join(x[::-1] for x in q.split('+')) + '=' + r

    def operand_padding(ops):
        ell = max(len(str(a)) for a in ops)
        run, sums = 0, []
        for a in [0] + ops:
            run += a
            sums.append(str(run).zfill(ell)[::-1])
        return '+'.join(str(a).zfill(ell) for a in ops) + '=' + '>'.join(sums)

    def total_padding(ops):             # pads to the sum actually reached, not the largest one
        ell = max(len(str(max(ops))), len(str(sum(ops))))
        run, sums = 0, []
        for a in [0] + ops:
            run += a
            sums.append(str(run).zfill(ell)[::-1])
        return '+'.join(str(a).zfill(ell) for a in ops) + '=' + '>'.join(sums)

    def proof_padding(ops):
        return C.scratchpad_text(ops, ell=C.theory_pad_length(max(len(str(a)) for a in ops),
                                                              len(ops)))

    fails(ch09.check_9_2(no_b0), 'operands [57, 48, 96]', 'expected 057+048+096=000>750')
    fails(ch09.check_9_2(reversed_query), 'operands [57, 48, 96]')
    fails(ch09.check_9_2(operand_padding), 'operands [57, 48, 96]', 'got 57+48+96=')
    fails(ch09.check_9_2(total_padding), 'operands [0, 0]: expected 00+00=00>00>00, got 0+0=')
    fails(ch09.check_9_2(proof_padding), 'operands [5]: expected 5=0>5, got 05=00>50')


def test_9_3_rejects_the_wrong_coupling_pair():
    bilevel_ids = answer('9.3')

    def same_as_operand(ops, s1, s2):
        p1, p2 = bilevel_ids(ops, s1, s2)
        eq = C.scratchpad_text(ops).index('=')
        return p1, p2[:eq] + [q - 1 if q > s2 else q for q in p2[eq:]]

    fails(ch09.check_9_3(same_as_operand), 'operands [57, 48, 96]', 'level-2 IDs')


def test_9_4_rejects_level3_without_the_shift():
    reference = answer('9.4')

    def no_shift(a, b):
        text, l1, l2, l3 = reference(a, b)
        second = text.index('=', text.index('=') + 1)
        return text, l1, l2, [z - (l2[k] - 1) if 0 < k < second and z else z
                              for k, z in enumerate(l3)]

    fails(ch09.check_9_4(no_shift), '37 * 925', 'level-3 IDs')


def test_9_5_rejects_the_same_level_2():
    bilevel_ids = answer('9.3')

    def same_number(ops, index):
        p1, p2 = bilevel_ids(ops, 1, 1)
        return [i for i in range(index) if p1[i] == p1[index] + 1 and p2[i] == p2[index]]

    fails(ch09.check_9_5(same_number), 'operands [57, 48, 96]', 'index 15')


# ----------------------------------------------------------------------------- 9.6 - 9.10 pieces

def test_9_6_rejects_the_binary_of_k():
    def binary_of_k(D, k):
        return np.array([-1.0 if k % 2 ** D >> (D - 1 - i) & 1 else 1.0 for i in range(D)])

    fails(ch09.check_9_6(binary_of_k), 'D = 1, k = 1', 'expected [1]')
    fails(ch09.check_9_6(lambda D, k: np.full(D, np.nan)), 'NaN')


def test_9_7_rejects_next_on_the_key_side_and_fixed_sizes_or_scales():
    head1 = answer('9.7')

    def next_on_key(P1, P2, lam):
        Wq, Wk = head1(P1, P2, lam)
        Wq2, Wk2 = Wq.copy(), Wk.copy()
        p1, p1n = slice(19, 19 + P1), slice(19 + P1, 19 + 2 * P1)
        Wq2[p1], Wq2[p1n] = Wq[p1n], 0 * Wq[p1n]
        Wk2[p1n], Wk2[p1] = Wk[p1], 0 * Wk[p1]
        return Wq2, Wk2

    fails(ch09.check_9_7(next_on_key), 'operands [57, 48, 96]', 'PRE_SUM should be')
    fails(ch09.check_9_7(lambda P1, P2, lam: (np.zeros((5, 3)), np.zeros((5, 3)))),
          'must both have shape (33, k)')
    fails(ch09.check_9_7(lambda P1, P2, lam: head1(4, 3, lam)),        # the sizes of one case
          'must both have shape (29, k) for P1 = 3, P2 = 2, lam = 20')
    fails(ch09.check_9_7(lambda P1, P2, lam: head1(P1, P2, 50.0)),     # not the asked scale
          'P1 = 4, P2 = 3, lam = 3, operands [57, 48, 96]', 'PRE_SUM should be 0.11')


def test_9_8_rejects_a_naive_carry():
    fails(ch09.check_9_8(lambda s, o: int(s >= 10)), 'digits 0 + 9 with carry in 1',
          'expected carry 1, got 0')


def test_9_8_results_that_never_finish_are_stopped_or_never_read():
    start = time.perf_counter()
    fails(budgeted('9.8')(lambda s, o: NeverArray()), 'did not finish within its 0.3 s budget')
    fails(budgeted('9.8')(lambda s, o: NeverCompared()), 'must be numeric')
    assert time.perf_counter() - start < 3


def _flag_weights():
    return answer('9.9')


def test_9_9_wants_weights_within_the_budget():
    def if_flags(pa, pe):                     # right on every input, but no ReLU budget
        return (1.0 if pa > 0.75 else 0.0, 1.0 if (pa > 0.75 and pe > 0.4) else 0.0)

    fails(ch09.check_9_9(if_flags), 'expected the weights (M1, b1, M2, b2) of a ReLU MLP',
          'not a function')
    M1, b1, M2, b2 = _flag_weights()
    four = (np.concatenate([M1, np.zeros((2, 2))], 1), np.concatenate([b1, [0, 0]]),
            np.concatenate([M2, np.zeros((2, 2))]), b2)
    fails(ch09.check_9_9(four), 'over the budget: 4 ReLUs; at most 3 allowed')


def test_9_9_rejects_eos_from_pre_eos_alone():
    eos_alone = (np.eye(2), np.array([-0.5, -1 / 3]), np.array([[2.0, 0.0], [0.0, 6.0]]),
                 np.zeros(2))
    fails(ch09.check_9_9(eos_alone), 'operands [57, 48, 96]', "the next token is 'digit'",
          "pick '$'")


def test_9_10_wants_weights_within_the_budget():
    fails(ch09.check_9_10(lambda s, c, n: np.eye(10)[int(round(s + (c - n >= 9))) % 10]),
          'expected the weights (M1, b1, M2, b2)')
    M1, b1, M2, b2 = answer('9.10')
    more = (np.concatenate([M1, np.zeros((3, 1))], 1), np.concatenate([b1, [0.0]]),
            np.concatenate([M2, np.zeros((1, 10))]), b2)
    fails(ch09.check_9_10(more), 'over the budget: 81 ReLUs; at most 80 allowed')


def test_9_10_rejects_dropping_num_and_narrow_plateaus():
    M1, b1, M2, b2 = answer('9.10')
    no_num = (M1 * [[1.0], [1.0], [0.0]], b1, M2, b2)
    fails(ch09.check_9_10(no_num), 'PRE_SUM -0.09, PRE_CARRY 4, NUM 4 (carry in 0)',
          'expected exactly one-hot at 0')
    narrow = (M1, b1 - 0.11, M2, b2)          # plateaus moved off the 0.09 error band
    fails(ch09.check_9_10(narrow), 'expected exactly one-hot')
    fails(ch09.check_9_10((M1, b1, M2 * np.nan, b2)), 'NaN')


# ----------------------------------------------------------------------------- 9.11 - 9.14

def test_9_11_a_python_adder_or_a_model_object_is_not_a_program():
    fails(ch09.check_9_11(lambda n, m: _PythonAdder()),
          'build(8, 8): expected a params dict', 'got _PythonAdder')
    fails(ch09.check_9_11(C.build_multi_operand_adder), 'got MultiOperandAdder')


@pytest.mark.parametrize('change, message', [
    (lambda p: _with_layer(p, _empty_layer(p)), 'over the budget: 2 layers; at most 1'),
    (_extra_head, 'over the budget: 5 heads in a layer; at most 4'),
    (_wider, 'over the budget: 36 d_model; at most 35'),
    (_one_more_relu, 'over the budget: 84 MLP width (d_ff) in a layer; at most 83'),
])
def test_9_11_the_budget_is_enforced_on_the_program(change, message):
    fails(ch09.check_9_11(lambda n, m: change(C.build_adder_params(n, m))), 'build(8, 8)',
          message)


def test_9_11_list_weights_count_too():
    def listed(n, m):
        params = _extra_head(C.build_adder_params(n, m))
        params['layers'][0] = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                               for k, v in params['layers'][0].items()}
        return params

    fails(ch09.check_9_11(listed), 'over the budget: 5 heads in a layer')


def test_9_11_rejects_wrong_adders():
    fails(ch09.check_9_11(lambda n, m: C.build_adder_params(8, 8)),     # one size for all
          'build(3, 12) is over the budget: 35 d_model; at most 33')
    fails(ch09.check_9_11(lambda n, m: C.build_adder_params(n, m, lam=0.5)),
          'operands [99999999, 99999999', 'the first wrong token is number')
    fails(ch09.check_9_11(lambda n, m: C.build_adder_params(n, m, literal=True)),  # ell = 2
          "operands [9]: build(1, 1) predicts 0090 (teacher-forced), expected 0>9$; the first "
          "wrong token is number 2 of the response ('0' instead of '>')")
    fails(ch09.check_9_11(lambda n, m: C.build_adder_params(n, m, norm=True)),   # PreLN weights
          'over the budget')


def test_9_12_explains_the_papers_formula_without_the_answer():
    def paper(n, m):
        ell = n + len(str(m))
        P1, P2 = max(1, math.ceil(math.log2(ell))), max(1, math.ceil(math.log2(m + 1)))
        return ell, P1, P2, 19 + 2 * P1 + 2 * P2

    result = fails(ch09.check_9_12(paper), "paper's P1", 'wraps')
    assert 'ell + 2' not in result.message


def test_9_12_catches_formulas_right_on_the_old_sizes():
    size = answer('9.12')

    def p2_of_m(n, m):
        ell, P1, _, _ = size(n, m)
        P2 = max(1, math.ceil(math.log2(m)))
        return ell, P1, P2, 19 + 2 * P1 + 2 * P2

    old = {nm: size(*nm) for nm in ((2, 3), (10, 10), (13, 13), (30, 30), (100, 100), (1, 1),
                                    (6, 7), (5, 99))}
    fails(ch09.check_9_12(p2_of_m), 'm = 2: expected (ell, P1, P2, d)')
    fails(ch09.check_9_12(lambda n, m: old.get((n, m), (0, 0, 0, 0))), 'expected (ell, P1')


@pytest.mark.parametrize('ops, ell', [([5], 2), ([1, 2, 3], 2), ([999, 999, 999], 4)])
def test_9_13_rejects_widths_where_the_papers_own_condition_fails(ops, ell):
    fails(ch09.check_9_13(ops), f'the padding is ell = {ell}', 'a rounding slip, not the bug')


def test_9_13_rejects_inputs_that_work_and_big_ones():
    fails(ch09.check_9_13([1234, 5678]), 'operands [1234, 5678]', 'adds them correctly')
    fails(ch09.check_9_13([123456]), 'adds them correctly')      # padded to 6, not 7
    fails(ch09.check_9_13([1] * 30), 'at most 20 operands')


def test_9_13_accepts_the_wrap_wherever_it_happens():
    assert ch09.check_9_13([123456, 654321]).passed          # ell = 7
    assert ch09.check_9_13([999999] * 9).passed


def test_9_14_rejects_lambda_not_smallest_or_not_exact():
    fails(ch09.check_9_14(([57, 48, 96], 4.0)), 'lam = 3.75 is exact too')
    fails(ch09.check_9_14(([57, 48, 96], 1.0)), 'lam = 1.0 is not exact yet')
    fails(ch09.check_9_14(([57, 48, 96], 1.1)), 'grid')
    fails(ch09.check_9_14(([57, 48, 96], True)), 'lam must be a number')
    assert ch09.check_9_14(([57, 48, 96], np.int64(2) + 0.25)).passed


# ----------------------------------------------------------------------------- 9.15 - 9.19

def test_9_15_demands_exactly_one_hot_in_every_base():
    shape = answer('9.15')
    fails(ch09.check_9_15(lambda b: (0.5, 0.5, 1 / b + 0.11)), 'base 2', 'not exactly one-hot')
    fails(ch09.check_9_15(lambda b: (0.8, 0.5, 0.3)), 'w + r <= 1')
    old = {b: shape(b) for b in (2, 3, 7, 10, 16)}
    fails(ch09.check_9_15(lambda b: old[b]), 'raised KeyError: 4 on base 4')
    fails(ch09.check_9_15(lambda b: shape(b) if b in (2, 3) else (0.5, 0.5, 0.21)),
          'base 4, pair sum 0, carry in 0', 'not exactly one-hot')


def test_9_16_rejects_no_eos_a_short_table_a_second_layer_and_the_adder():
    params = answer('9.16')
    no_eos = {**params, 'out_emb': params['out_emb'].copy()}
    no_eos['out_emb'][C.PARITY_VOCAB.index('$')] = 0
    fails(ch09.check_9_16(no_eos), 'bits 0:', 'expected 0$')
    fails(ch09.check_9_16({**params, 'pos_emb': params['pos_emb'][:21]}), 'at least 102 rows')
    fails(ch09.check_9_16(_with_layer(params, _empty_layer(params))),
          'over the budget: 2 layers; at most 1')
    fails(ch09.check_9_16(C.build_multi_operand_adder(2, 2, norm=True).params), '4 tokens')


def test_9_16_reference_decodes_100_bits(rng):
    """The reference also decodes: greedy, KV-cached, with the coupled IDs as positions."""
    params = answer('9.16')
    assert taotp.config(params)['n_layers'] == 1 and taotp.config(params)['n_heads'] == [1]
    for n in (1, 2, 3, 64, 100):
        bits = ''.join(map(str, rng.integers(0, 2, size=n)))
        tokens, _ = C.parity_sequence(bits)
        prompt = [3] + [C.PARITY_VOCAB.index(c) for c in tokens[:n + 1]]
        out = taotp.decode(prompt, params, max_steps=n + 2, eos=3, positions=C.parity_positions)
        assert ''.join(C.PARITY_VOCAB[t] for t in out[len(prompt):]) == \
            ''.join(tokens[n + 1:]) + '$'


def test_9_17_rejects_a_single_key():
    needed = answer('9.17')
    fails(ch09.check_9_17(lambda ops, j: needed(ops, j)[:1]), 'operands [57, 48, 96]', 'digit 0')


def test_9_18_refuses_counting_the_packages_own_build():
    def by_building(n, m):
        params = taotp.coupling.build_multi_operand_adder(n, m).params
        return (taotp.count_params(params)['n_params'], taotp.count_non0_params(params)['n_params'])
    fails(ch09.check_9_18(by_building), 'calling taotp.coupling.build_adder_params')


def test_9_18_rejects_a_tied_readout_count_and_an_old_lookup():
    counts = answer('9.18')

    def tied(n, m):
        total, nz = counts(n, m)
        return total - 14 * C.sizes(n, m)['d_model'], nz

    fails(ch09.check_9_18(tied), 'n = 2, m = 3', 'expected (total, non-zero) = (7739, 555)')
    old = {nm: counts(*nm) for nm in ((2, 3), (10, 10), (30, 30), (4, 1))}
    fails(ch09.check_9_18(lambda n, m: old.get((n, m), (0, 0))), 'n = 1, m = 1')


def test_9_19_rejects_the_norm_free_weights_bad_programs_and_budget_dodges():
    free = C.build_multi_operand_adder(4, 4).params
    fails(ch09.check_9_19(free), 'operands', 'your program predicts')
    port = answer('9.19')
    fails(ch09.check_9_19({**port, 'pos_emb': port['pos_emb'][0]}), 'two tables')
    wrong = {**port, 'out_emb': port['out_emb'].copy()}
    wrong['out_emb'][C.TOKEN_ID['>']] *= 0
    fails(ch09.check_9_19(wrong), 'operands', 'the first wrong token is number')
    fails(ch09.check_9_19(_with_layer(port, _empty_layer(port))),
          'over the budget: 2 layers; at most 1')
    fails(ch09.check_9_19(_extra_head(port)), 'over the budget: 5 heads in a layer; at most 4')


def test_adder_problems_reach_the_maxima():
    problems = ch09._adder_problems(8, 8, 0, 3)
    assert [99999999] * 8 in problems and [0] in problems
    assert all(len(ops) <= 8 and max(ops) < 10 ** 8 for ops in problems)


CHECKED_HERE = [f'9.{i}' for i in range(1, 20)]

@pytest.mark.parametrize('puzzle', CHECKED_HERE)
def test_no_checker_takes_options_that_change_the_puzzle(puzzle):
    body = registry()[puzzle].checker.__wrapped__
    assert len(inspect.signature(body).parameters) == 1
    assert registry()[puzzle].checker.budget == 30
