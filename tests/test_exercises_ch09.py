"""Chapter 9 checkers: the plausible wrong answers fail, naming their input.

References passing, shared garbage and endless loops are tested once for every
checker in ``tests/test_checker_contract.py``; the references come from
``solutions/09_position_coupling.py`` through ``answer``.
"""
import math

import numpy as np

from solutions import answer
from taotp import coupling as C
from taotp.exercises import ch09


def fails(result, *fragments):
    assert not result.passed, result.message
    for fragment in fragments:
        assert fragment in result.message, result.message
    return result


class _Generates:
    """An object whose ``generate`` returns ``value`` (for 9.11)."""

    def __init__(self, value):
        self.value = value

    def generate(self, operands):
        return self.value


EXTRA_GARBAGE = {
    '9.1': {'tokens without ids': lambda bits, s: (list(bits), None)},
    '9.7': {'vectors instead of matrices': lambda P1, P2, lam: (np.zeros(33), np.zeros(33))},
    '9.11': {'a build returning None': lambda n, m: None,
             'a generate returning text': lambda n, m: _Generates('000>5$'),
             'a generate returning a NaN total': lambda n, m: _Generates((list('0>5$'), np.nan))},
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

    fails(ch09.check_9_2(no_b0), 'operands [57, 48, 96]', 'expected 057+048+096=000>750')
    fails(ch09.check_9_2(reversed_query), 'operands [57, 48, 96]')
    fails(ch09.check_9_2(operand_padding), 'operands [57, 48, 96]', 'got 57+48+96=')


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


def test_9_6_rejects_the_binary_of_k():
    def binary_of_k(D, k):
        return np.array([-1.0 if k % 2 ** D >> (D - 1 - i) & 1 else 1.0 for i in range(D)])

    fails(ch09.check_9_6(binary_of_k), 'D = 1, k = 1', 'expected [1]')
    fails(ch09.check_9_6(lambda D, k: np.full(D, np.nan)), 'NaN')


def test_9_7_rejects_next_on_the_key_side():
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


def test_9_8_rejects_a_naive_carry():
    fails(ch09.check_9_8(lambda s, o: int(s >= 10)), 'digits 0 + 9 with carry in 1',
          'expected carry 1, got 0')


def test_9_9_rejects_eos_from_pre_eos_alone():
    fails(ch09.check_9_9(lambda pa, pe: (2 * max(pa - 0.5, 0), 6 * max(pe - 1 / 3, 0))),
          'operands [57, 48, 96]', 'next token is a digit', 'pick $')


def test_9_10_rejects_dropping_num():
    fails(ch09.check_9_10(lambda s, c, n: C.digit_mlp(s, c, 0)), 'PRE_SUM 0, PRE_CARRY 3, NUM 3',
          'expected one-hot at 0')
    fails(ch09.check_9_10(lambda s, c, n: np.full(10, np.nan)), 'NaN')


def test_9_11_rejects_a_wrong_generate_and_a_blurred_adder():
    fails(ch09.check_9_11(lambda n, m: _Generates((list('0$'), 0))), 'operands', 'expected')
    fails(ch09.check_9_11(lambda n, m: C.build_multi_operand_adder(n, m, lam=0.5)), 'operands')


def test_9_12_explains_the_papers_formula():
    def paper(n, m):
        ell = n + len(str(m))
        P1, P2 = max(1, math.ceil(math.log2(ell))), max(1, math.ceil(math.log2(m + 1)))
        return ell, P1, P2, 19 + 2 * P1 + 2 * P2

    fails(ch09.check_9_12(paper), 'n = 2, m = 3', "paper's P1", 'ell + 2')


def test_9_13_rejects_inputs_that_work_and_big_ones():
    fails(ch09.check_9_13([1234, 5678]), 'operands [1234, 5678]', 'adds them correctly')
    fails(ch09.check_9_13([1] * 30), 'at most 20 operands')


def test_9_13_accepts_operands_whose_ids_do_not_even_fit():
    """With ell a power of two the literal tables are too short: the IDs wrap, and it fails."""
    assert ch09.check_9_13([999, 999, 999]).passed


def test_9_14_rejects_lambda_not_smallest_or_not_exact():
    fails(ch09.check_9_14(([57, 48, 96], 4.0)), 'lam = 3.75 is exact too')
    fails(ch09.check_9_14(([57, 48, 96], 1.0)), 'lam = 1.0 is not exact yet')
    fails(ch09.check_9_14(([57, 48, 96], 1.1)), 'grid')


def test_9_15_demands_exactly_one_hot():
    fails(ch09.check_9_15(lambda b: (0.5, 0.5, 1 / b + 0.11)), 'base 2', 'not exactly one-hot')
    fails(ch09.check_9_15(lambda b: (0.8, 0.5, 0.3)), 'w + r <= 1')


def test_9_16_rejects_no_eos_a_short_table_and_the_adder():
    params = answer('9.16')
    no_eos = {**params, 'out_emb': params['out_emb'].copy()}
    no_eos['out_emb'][C.PARITY_VOCAB.index('$')] = 0
    fails(ch09.check_9_16(no_eos), 'bits 1:', 'expected 1$')
    fails(ch09.check_9_16({**params, 'pos_emb': params['pos_emb'][:21]}), 'at least 102 rows')
    fails(ch09.check_9_16(C.build_multi_operand_adder(2, 2, norm=True).params), '4 tokens')


def test_9_16_reference_decodes_100_bits(rng):
    """The reference also decodes: greedy, KV-cached, with the coupled IDs as positions."""
    import taotp
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


def test_9_18_rejects_a_tied_readout_count():
    counts = answer('9.18')

    def tied(n, m):
        total, nz = counts(n, m)
        return total - 14 * C.sizes(n, m)['d_model'], nz

    fails(ch09.check_9_18(tied), 'n = 2, m = 3', 'expected (total, non-zero) = (7739, 555)')


def test_9_19_rejects_the_norm_free_weights_and_bad_programs():
    free = C.build_multi_operand_adder(4, 4).params
    fails(ch09.check_9_19(free), 'operands', 'teacher-forced predictions')
    port = answer('9.19')
    fails(ch09.check_9_19({**port, 'pos_emb': port['pos_emb'][0]}), 'two tables')
    wrong = {**port, 'out_emb': port['out_emb'].copy()}
    wrong['out_emb'][C.TOKEN_ID['>']] *= 0
    fails(ch09.check_9_19(wrong), 'operands', 'teacher-forced predictions')
