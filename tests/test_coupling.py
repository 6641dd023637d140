"""Chapter 9, the task side: formats and coupled IDs, hypercube codes, sizes, the digit MLP.

The construction itself is tested in ``tests/test_coupling_adder.py``.
"""
import math

import numpy as np
import pytest

from taotp import coupling as C

WORKED = [57, 48, 96]


def s(xs):
    return ''.join(map(str, xs))


# ----------------------------------------------------------------------------- formats

def test_parity_worked_example():
    tokens, pos = C.parity_sequence('0101')
    assert s(tokens) == '0101=0110'
    assert s(pos) == '234512345'
    assert C.parity_sequence([0, 1, 0, 1]) == (tokens, pos)
    tokens, pos = C.parity_sequence('111', offset=5)
    assert s(tokens) == '111=101' and pos == [6, 7, 8, 5, 6, 7, 8]
    assert C.parity_positions([3, 0, 1, 2, 0, 1]).tolist() == [0, 2, 3, 1, 2, 3]


def test_addition_worked_example():
    tokens, p1, p2 = C.addition_sequence(WORKED)
    assert s(tokens) == '057+048+096=000>750>501>102'
    assert s(p1) == '432143214321234123412341234'
    assert s(p2) == '111122223331111222233334444'
    assert all(isinstance(t, str) and len(t) == 1 for t in tokens)
    assert all(isinstance(p, int) for p in p1 + p2)
    # Appendix Table 4 offsets (s1, s2) = (4, 2)
    _, q1, q2 = C.addition_sequence(WORKED, offsets=(4, 2))
    assert s(q1) == '765476547654567456745674567'
    assert s(q2) == '222233334442222333344445555'


def test_padding_rules():
    assert C.pad_length(WORKED) == 3
    assert C.pad_length([99] * 11) == 4            # 99 * 11 = 1089, the paper's example
    assert C.pad_length([99] * 10) == 3            # the experiments: 990
    assert C.theory_pad_length(2, 10) == 4         # the proof: n + 1 + floor(log10 m)
    assert C.scratchpad_text([5]) == '5=0>5'
    assert C.scratchpad_text([7, 8]) == '07+08=00>70>51'
    big = [10 ** 29 + 7] * 30                      # beyond int64: Python integers throughout
    assert C.scratchpad_text(big).endswith(str(sum(big)).zfill(32)[::-1])


def test_baseline_and_multiplication_worked_examples():
    tokens, pos = C.baseline_sequence(WORKED)
    assert s(tokens) == '057+048+096=102'
    assert s(pos) == '432143214321234'
    tokens, p1, p2, p3 = C.multiplication_sequence(37, 925)
    assert s(tokens) == '37*925=581+470+333=58100>52900>52243'
    assert s(p1) == '320000123412341234000000000000000000'
    assert s(p2) == '000321111122223333111111222222333333'
    assert s(p3) == '000000123423453456123456123456123456'


def closed_form(m, ell, s1, s2):
    """The paper's eq. (1)-(2) with 1-based k and BOS at k = 1."""
    L = ell + 1
    N = (2 * m + 1) * L
    p1, p2 = [0] * (N + 1), [0] * (N + 1)
    for i in range(1, m + 1):
        for k in range((i - 1) * L + 2, i * L + 2):
            p1[k] = s1 + (i * L + 1) - k
    for i in range(1, m + 2):
        for k in range((m + i - 1) * L + 1, (m + i) * L + 1):
            p1[k] = s1 + k - ((m + i - 1) * L + 1)
    for k in range(2, m * L + 1):
        p2[k] = s2 + (k - 2) // L
    for k in range(m * L + 1, N + 1):
        p2[k] = s2 + (k - m * L - 1) // L
    return p1[1:], p2[1:]


def test_ids_match_the_closed_form(rng):
    for _ in range(60):
        m, n = int(rng.integers(1, 9)), int(rng.integers(1, 7))
        ops = C.random_operands(m, n, rng=rng)
        ell = C.theory_pad_length(n, m)
        s1, s2 = C.random_offsets(ell, m, rng=rng)
        tokens, p1, p2 = C.addition_sequence(ops, offsets=(s1, s2), ell=ell)
        assert ([0] + p1, [0] + p2) == closed_form(m, ell, s1, s2)
        assert int(s(tokens).split(C.SEP)[-1][::-1]) == sum(ops)
        # a prefix that holds the first operand gets the prefix of the IDs (decoding needs it)
        cut = int(rng.integers(ell + 1, len(tokens) + 1))
        assert C.coupled_ids(tokens[:cut], (s1, s2)) == (p1[:cut], p2[:cut])


def test_random_offsets_cover_their_range(rng):
    seen = {C.random_offsets(3, 3, max_pos=(6, 5), rng=rng) for _ in range(300)}
    assert seen == {(a, b) for a in (1, 2, 3) for b in (1, 2)}


def test_random_operands_have_exactly_n_digits(rng):
    for n in (1, 2, 7):
        ops = C.random_operands(50, n, rng=rng)
        assert all(len(str(a)) == n for a in ops)


def test_read_total():
    assert C.read_total(list('000>750>501>102$')) == 201
    for bad in ('000>750', '000>750$$', '000>$', '000>7a0$'):
        assert C.read_total(bad) is None, bad


def test_keys_for_the_worked_example():
    tokens, _, _ = C.addition_sequence(WORKED)
    # the last separator (index 23, no BOS) predicts the units of b_3: it reads 6 and 5
    assert [tokens[i] for i in C.keys_for(tokens, 23)] == ['6', '5']
    assert C.keys_for(tokens, 23) == [10, 20]


@pytest.mark.parametrize('call, match', [
    (lambda: C.parity_sequence('012'), 'parity_sequence: bits must be'),
    (lambda: C.parity_sequence([]), 'parity_sequence: bits must be'),
    (lambda: C.parity_sequence('01', offset=0), 'parity_sequence: offsets must be integers'),
    (lambda: C.addition_sequence([]), 'addition_sequence: operands must be a non-empty'),
    (lambda: C.addition_sequence([1, -2]), 'addition_sequence: operands must be a non-empty'),
    (lambda: C.addition_sequence(7), 'addition_sequence: operands must be a list'),
    (lambda: C.addition_sequence([1], offsets=(0, 1)), 'addition_sequence: offsets must be'),
    (lambda: C.scratchpad_text([99, 99], ell=2), 'scratchpad_text: ell must be at least 3'),
    (lambda: C.baseline_sequence([True]), 'baseline_sequence: operands must be'),
    (lambda: C.multiplication_sequence(-1, 3), 'multiplication_sequence: operands must be'),
    (lambda: C.random_offsets(40, 2, rng=np.random.default_rng(0)), 'random_offsets: max_pos'),
    (lambda: C.cube_code(2, 5), 'cube_code: k must be in 1..2'),
    (lambda: C.sizes(0, 3), 'sizes: n must be an integer >= 1; got 0'),
    (lambda: C.sizes(3, 2.0), 'sizes: m must be an integer >= 1; got 2.0'),
    (lambda: C.carry_out(5, 9), r'carry_out: pair_sum - written_digit must be in \{-1, 0, 9'),
    (lambda: C.coupled_ids('1*2'), "coupled_ids: tokens must come from .*; got '\\*'"),
])
def test_errors_name_the_function_and_the_rule(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize('call, match', [
    (lambda: C.random_offsets(3, 3, rng=0), 'random_offsets: rng must be a numpy'),
    (lambda: C.random_operands(3, 3, rng=None), 'random_operands: rng must be a numpy'),
])
def test_randomness_needs_a_generator(call, match):
    with pytest.raises(TypeError, match=match):
        call()


# ----------------------------------------------------------------------------- codes and sizes

def test_cube_codes_have_a_gap_of_two():
    for D in range(1, 6):
        codes = np.array([C.cube_code(D, k) for k in range(1, 2 ** D + 1)])
        assert np.all(codes[0] == 1)
        assert np.all((codes ** 2).sum(1) == D)
        gram = codes @ codes.T
        assert np.all(gram[~np.eye(len(codes), dtype=bool)] <= D - 2)
    assert list(C.cube_code(3, 2)) == [1, 1, -1]           # binary of k - 1 = 001
    assert list(C.position_codes(2, 4)[2:]) == [1, 1]      # the next code of 2^D wraps to v_1
    assert not C.position_codes(3, 0).any()
    assert C.wrap(np.array([0, 1, 8, 9, 17]), 3).tolist() == [0, 1, 8, 1, 1]


SIZES = {(2, 3): (3, 3, 2, 29, 27), (10, 10): (12, 4, 4, 35, 35), (13, 13): (15, 5, 4, 37, 35),
         (30, 30): (32, 6, 5, 41, 39), (100, 100): (103, 7, 7, 47, 47)}


@pytest.mark.parametrize('n, m', list(SIZES), ids=[f'{n}x{m}' for n, m in SIZES])
def test_sizes_table(n, m):
    ell, P1, P2, d, d_paper = SIZES[(n, m)]
    got = C.sizes(n, m)
    assert (got['ell'], got['P1'], got['P2'], got['d_model']) == (ell, P1, P2, d)
    assert got['max_pos1'] == 2 ** P1 - 1 >= ell + 1 and got['max_pos2'] == 2 ** P2 >= m + 1
    assert C.sizes(n, m, literal=True)['d_model'] == d_paper
    assert got['d_model_preln'] == 42 + 4 * (P1 + P2)


def test_lambda_bound_numbers():
    assert math.isclose(C.lambda_bound(28), 0.5 * math.log(28000))
    assert round(C.lambda_bound(28), 1) == 5.1                     # the worked example
    assert round(C.lambda_bound((2 * 30 + 1) * (32 + 1)), 1) == 7.3  # 30 operands of 30 digits


# ----------------------------------------------------------------------------- the digit MLP

def test_carry_identity_exhaustive():
    for a in range(10):
        for b in range(10):
            for c in (0, 1):
                assert C.carry_out(a + b, (a + b + c) % 10) == (a + b + c) // 10


def test_digit_mlp_exact_with_margin():
    """Every (pair sum S, lower pair sum, carry into it), g moved by up to 0.099."""
    S, prev, carry_in = np.meshgrid(np.arange(19), np.arange(19), (0, 1), indexing='ij')
    written = (prev + carry_in) % 10
    carry = (prev + carry_in) // 10
    want = np.eye(10)[(S + carry) % 10]
    for delta in (-0.099, 0.0, 0.099):
        assert np.allclose(C.digit_mlp(S + delta, prev, written), want, atol=1e-12)
    # dropping -NUM (the written digit) from g breaks it
    assert not np.allclose(C.digit_mlp(S, prev, 0 * written), want)


def test_hidden_units_are_the_papers_83():
    units = C.hidden_units()
    assert len(units) == 83
    assert sum(1 for _, _, writes in units if any(name == 'SUM' for name, _ in writes)) == 80
    # the 80 digit units reproduce digit_mlp exactly
    g_inputs = {'PRE_SUM': 12.0, 'PRE_CARRY': 7.0, 'NUM': 8.0}
    out = np.zeros(10)
    for reads, const, writes in units[:80]:
        act = max(sum(w * g_inputs[k] for k, w in reads.items()) + const, 0.0)
        for (_, k), w in writes.items():
            out[k] += w * act
    assert np.allclose(out, C.digit_mlp(12.0, 7.0, 8.0))
