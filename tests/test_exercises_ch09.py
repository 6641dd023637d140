"""Chapter 9 checkers: references pass, the spec's plausible wrong answers fail, garbage is reported."""
import math

import numpy as np
import pytest

import taotp
from taotp import coupling as C
from taotp.exercises import ch09
from taotp.exercises.registry import registry
from submissions import loops, raises


def fails(result, *fragments):
    assert not result.passed, result.message
    for fragment in fragments:
        assert fragment in result.message, result.message
    return result


GARBAGE = [None, 'text', 3, raises]


# ----------------------------------------------------------------------------- references

def parity_ref(bits, s):
    return C.parity_sequence(bits, offset=s)


def bilevel_ref(ops, s1, s2):
    return C.addition_sequence(ops, offsets=(s1, s2))[1:]


def mult_ref(a, b):
    t, *levels = C.multiplication_sequence(a, b)
    return (''.join(t), *levels)


def keys_ref(ops, index):
    return C.keys_for(C.addition_sequence(ops)[0], index)


def head1_ref(P1, P2, lam):
    model = C.build_multi_operand_adder(6, 7, lam=lam)
    layer = model.params['layers'][0]
    return layer['Q'][0], layer['K'][0]


def flags_ref(pa, pe):
    arrow = 2 * max(pa - 0.5, 0)
    return arrow, arrow + 6 * max(pe - 1 / 3, 0) - 1


def digit_ref(s, c, n):
    return C.digit_mlp(s, c, n)


def size_ref(n, m):
    z = C.sizes(n, m)
    return z['ell'], z['P1'], z['P2'], z['d_model']


def shape_ref(b):
    w = max(0.5, 1 / b + 0.25)
    return w, (1 - w if w > 0.5 else 0.5), 1 / b + (w - 1 / b) / 2


def needed_ref(ops, j):
    tokens, pos = C.baseline_sequence(ops)
    return [i for i in range(tokens.index('=')) if tokens[i].isdigit() and pos[i] == 2 + j]


def counts_ref(n, m):
    p = C.build_multi_operand_adder(n, m).params
    return taotp.count_params(p)['n_params'], taotp.count_non0_params(p)['n_params']


REFERENCES = {
    '9.1': parity_ref, '9.2': C.addition_text, '9.3': bilevel_ref, '9.4': mult_ref,
    '9.5': keys_ref, '9.6': C.cube_code, '9.7': head1_ref, '9.8': C.carry_out, '9.9': flags_ref,
    '9.10': digit_ref, '9.12': size_ref, '9.13': [57, 48, 96], '9.14': ([57, 48, 96], 2.25),
    '9.15': shape_ref, '9.17': needed_ref, '9.18': counts_ref,
}


@pytest.mark.parametrize('pid', sorted(REFERENCES, key=lambda p: int(p.split('.')[1])))
def test_reference_passes(pid):
    result = registry()[pid].checker(REFERENCES[pid])
    assert result.passed, result.message


def test_builder_references_pass():
    assert ch09.check_9_11(C.build_multi_operand_adder).passed
    assert ch09.check_9_19(C.build_multi_operand_adder(4, 4, norm=True).params).passed
    assert ch09.check_9_16(C.build_parity_program()).passed


def test_registry_lists_all_nineteen():
    ids = [p.id for p in ch09.PUZZLES]
    assert ids == [f'9.{i}' for i in range(1, 20)]
    assert all(p.kind == 'checked' for p in ch09.PUZZLES)


# ----------------------------------------------------------------------------- wrong answers

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


def test_9_2_rejects_the_three_classic_mistakes():
    def no_b0(ops):
        q, r = C.addition_text(ops).split('=')
        return q + '=' + r.split('>', 1)[1] if '>' in r else q + '='

    def reversed_query(ops):
        q, r = C.addition_text(ops).split('=')
        return '+'.join(x[::-1] for x in q.split('+')) + '=' + r

    def operand_padding(ops):
        ell = max(len(str(a)) for a in ops)
        run, sums = 0, []
        for a in [0] + ops:
            run += a
            sums.append(str(run).zfill(ell)[::-1])
        return '+'.join(str(a).zfill(ell) for a in ops) + '=' + '>'.join(sums)

    fails(ch09.check_9_2(no_b0), 'operands [57, 48, 96]', 'expected 057+048+096=000>750')
    fails(ch09.check_9_2(reversed_query), 'operands [57, 48, 96]')
    fails(ch09.check_9_2(operand_padding), 'operands [57, 48, 96]', 'got 57+48+96=')


def test_9_3_rejects_wrong_coupling_pair():
    def same_as_operand(ops, s1, s2):
        p1, p2 = bilevel_ref(ops, s1, s2)
        eq = C.addition_text(ops).index('=')
        return p1, p2[:eq] + [q - 1 if q > s2 else q for q in p2[eq:]]

    fails(ch09.check_9_3(same_as_operand), 'operands [57, 48, 96]', 'level-2 IDs')


def test_9_4_rejects_level3_without_shift():
    def no_shift(a, b):
        text, l1, l2, l3 = mult_ref(a, b)
        second = text.index('=', text.index('=') + 1)
        return text, l1, l2, [z - (l2[k] - 1) if 0 < k < second and z else z
                              for k, z in enumerate(l3)]

    fails(ch09.check_9_4(no_shift), '37 * 925', 'level-3 IDs')


def test_9_5_rejects_same_level2():
    def same_number(ops, index):
        p1, p2 = bilevel_ref(ops, 1, 1)
        return [i for i in range(index) if p1[i] == p1[index] + 1 and p2[i] == p2[index]]

    fails(ch09.check_9_5(same_number), 'operands [57, 48, 96]', 'index 15')


def test_9_6_rejects_binary_of_k():
    def binary_of_k(D, k):
        return np.array([-1.0 if k % 2 ** D >> (D - 1 - i) & 1 else 1.0 for i in range(D)])

    fails(ch09.check_9_6(binary_of_k), 'D = 1, k = 1', 'expected [1]')


def test_9_7_rejects_next_on_the_key_side():
    def next_on_key(P1, P2, lam):
        Wq, Wk = head1_ref(P1, P2, lam)
        Wq2, Wk2 = Wq.copy(), Wk.copy()
        p1, p1n = slice(19, 19 + P1), slice(19 + P1, 19 + 2 * P1)
        Wq2[p1], Wq2[p1n] = Wq[p1n], 0 * Wq[p1n]
        Wk2[p1n], Wk2[p1] = Wk[p1], 0 * Wk[p1]
        return Wq2, Wk2

    fails(ch09.check_9_7(next_on_key), 'operands [57, 48, 96]', 'PRE_SUM should be')
    fails(ch09.check_9_7(lambda P1, P2, lam: (np.zeros((5, 3)), np.zeros((5, 3)))),
          'must both have shape (33, k)')


def test_9_8_rejects_a_naive_carry():
    fails(ch09.check_9_8(lambda s, o: int(s >= 10)), 'digits 0 + 9 with carry in 1',
          'expected carry 1, got 0')


def test_9_9_rejects_eos_from_pre_eos_alone():
    fails(ch09.check_9_9(lambda pa, pe: (2 * max(pa - 0.5, 0), 6 * max(pe - 1 / 3, 0))),
          'operands [57, 48, 96]', 'next token is a digit', 'pick $')


def test_9_10_rejects_dropping_num():
    def no_num(s, c, n):
        return C.digit_mlp(s, c, 0)

    fails(ch09.check_9_10(no_num), 'PRE_SUM 0, PRE_CARRY 3, NUM 3', 'expected one-hot at 0')


def test_9_11_rejects_wrong_generate():
    class Bad:
        def generate(self, ops):
            return list('0$'), 0

    fails(ch09.check_9_11(lambda n, m: Bad()), 'operands', 'expected')
    fails(ch09.check_9_11(lambda n, m: C.build_multi_operand_adder(n, m, lam=0.5)),
          'operands')


def test_9_12_explains_the_paper_formula():
    def paper(n, m):
        ell = n + len(str(m))
        P1, P2 = max(1, math.ceil(math.log2(ell))), max(1, math.ceil(math.log2(m + 1)))
        return ell, P1, P2, 19 + 2 * P1 + 2 * P2

    fails(ch09.check_9_12(paper), 'n = 2, m = 3', "paper's P1", 'ell + 2')


def test_9_13_rejects_inputs_that_work():
    fails(ch09.check_9_13([1234, 5678]), 'operands [1234, 5678]', 'adds them correctly')
    fails(ch09.check_9_13([1] * 30), 'at most 20 operands')


def test_9_14_rejects_lambda_not_smallest_or_not_exact():
    fails(ch09.check_9_14(([57, 48, 96], 4.0)), 'lam = 3.75 is exact too')
    fails(ch09.check_9_14(([57, 48, 96], 1.0)), 'lam = 1.0 is not exact yet')
    fails(ch09.check_9_14(([57, 48, 96], 1.1)), 'grid')
    fails(ch09.check_9_14(([57, 48, 96], float('nan'))), 'lam must be')


def test_9_15_demands_exactly_one_hot():
    base10_shape = lambda b: (0.5, 0.5, 1 / b + 0.11)  # noqa: E731
    fails(ch09.check_9_15(base10_shape), 'base 2', 'not exactly one-hot')
    fails(ch09.check_9_15(lambda b: (0.8, 0.5, 0.3)), 'w + r <= 1')


def test_9_17_rejects_a_single_key():
    fails(ch09.check_9_17(lambda ops, j: needed_ref(ops, j)[:1]), 'operands [57, 48, 96]',
          'digit 0')


def test_9_18_rejects_tied_readout_count():
    def tied(n, m):
        total, nz = counts_ref(n, m)
        return total - 14 * C.sizes(n, m)['d_model'], nz

    fails(ch09.check_9_18(tied), 'n = 2, m = 3', 'expected (total, non-zero) = (7739, 555)')


def test_9_19_rejects_the_norm_free_weights_and_bad_programs():
    free = C.build_multi_operand_adder(4, 4).params
    fails(ch09.check_9_19(free), 'your params')
    bad = C.build_multi_operand_adder(4, 4, norm=True).params
    bad = dict(bad, pos_emb=bad['pos_emb'][0])
    fails(ch09.check_9_19(bad), 'two tables')
    wrong = C.build_multi_operand_adder(4, 4, norm=True).params
    wrong['out_emb'] = wrong['out_emb'].copy()
    wrong['out_emb'][C.TOKEN_ID['>']] *= 0
    fails(ch09.check_9_19(wrong), 'operands', 'teacher-forced predictions')


def test_9_16_rejects_a_program_without_eos_or_with_a_short_table():
    params = C.build_parity_program()
    params['out_emb'] = params['out_emb'].copy()
    params['out_emb'][C.PARITY_VOCAB.index('$')] = 0
    fails(ch09.check_9_16(params), 'bits 1:', 'expected 1$')
    short = C.build_parity_program(max_bits=20)
    fails(ch09.check_9_16(short), 'at least 102 rows')
    fails(ch09.check_9_16(C.build_multi_operand_adder(2, 2, norm=True).params), '4 tokens')


# ----------------------------------------------------------------------------- garbage

@pytest.mark.parametrize('pid', [p.id for p in ch09.PUZZLES if p.kind == 'checked'])
@pytest.mark.parametrize('junk', GARBAGE, ids=['None', 'str', 'int', 'raises'])
def test_garbage_is_reported(pid, junk):
    result = registry()[pid].checker(junk)
    assert not result.passed and result.message


@pytest.mark.parametrize('pid', ['9.1', '9.8'])
def test_endless_loop_is_reported(pid, short_time_limit):
    fails(registry()[pid].checker(loops), 'took longer')


def test_nan_arrays_are_reported():
    fails(ch09.check_9_6(lambda D, k: np.full(D, np.nan)), 'NaN')
    fails(ch09.check_9_10(lambda s, c, n: np.full(10, np.nan)), 'NaN')
