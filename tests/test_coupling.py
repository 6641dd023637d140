"""Chapter 9: formats, position codes and the 1-layer 4-head multi-operand adder."""
import math

import numpy as np
import pytest

import taotp
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


def test_addition_worked_example():
    tokens, p1, p2 = C.addition_sequence(WORKED)
    assert s(tokens) == '057+048+096=000>750>501>102'
    assert s(p1) == '432143214321234123412341234'
    assert s(p2) == '111122223331111222233334444'
    assert all(isinstance(t, str) and len(t) == 1 for t in tokens)
    # Appendix Table 4 offsets (s1, s2) = (4, 2), with BOS prepended
    _, q1, q2 = C.addition_sequence(WORKED, offsets=(4, 2))
    assert s(q1) == '765476547654567456745674567'
    assert s(q2) == '222233334442222333344445555'


def test_padding_rules():
    assert C.pad_length(WORKED) == 3
    assert C.pad_length([99] * 11) == 4            # 99 * 11 = 1089, the paper's example
    assert C.pad_length([99] * 10) == 3            # experiments: 990
    assert C.theory_pad_length(2, 10) == 4         # proof: n + 1 + floor(log10 m)
    assert C.addition_text([5]) == '5=0>5'
    assert C.addition_text([7, 8]) == '07+08=00>70>51'


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


def test_ids_match_closed_form(rng):
    for _ in range(60):
        m, n = int(rng.integers(1, 9)), int(rng.integers(1, 7))
        ops = C.random_operands(rng, m, n)
        ell = C.theory_pad_length(n, m)
        s1, s2 = C.random_offsets(rng, ell, m)
        tokens, p1, p2 = C.addition_sequence(ops, offsets=(s1, s2), ell=ell)
        assert ([0] + p1, [0] + p2) == closed_form(m, ell, s1, s2)
        assert sum(map(int, s(tokens).split(C.SEP)[-1][::-1])) >= 0
        assert int(s(tokens).split(C.SEP)[-1][::-1]) == sum(ops)


def test_random_offsets_range(rng):
    seen = {C.random_offsets(rng, 3, 3, max_pos=(6, 5)) for _ in range(300)}
    assert seen == {(a, b) for a in (1, 2, 3) for b in (1, 2)}


def test_keys_for_worked_example():
    tokens, _, _ = C.addition_sequence(WORKED)
    # the last arrow (index 23 without BOS) predicts the units of b3: it reads 6 and 5
    assert [tokens[i] for i in C.keys_for(tokens, 23)] == ['6', '5']
    assert C.keys_for(tokens, 23) == [10, 20]


@pytest.mark.parametrize('call, match', [
    (lambda: C.parity_sequence('012'), 'parity_sequence: bits must be'),
    (lambda: C.parity_sequence([]), 'parity_sequence: bits must be'),
    (lambda: C.addition_sequence([]), 'addition_text: operands must be'),
    (lambda: C.addition_sequence([1, -2]), 'addition_text: operands must be'),
    (lambda: C.addition_sequence([1], offsets=(0, 1)), 'addition_sequence: offsets must be'),
    (lambda: C.addition_text([99, 99], ell=2), 'addition_text: ell must be at least 3'),
    (lambda: C.multiplication_sequence(-1, 3), 'multiplication_sequence: operands must be'),
    (lambda: C.random_offsets(np.random.default_rng(0), 40, 2), 'random_offsets: max_pos must'),
    (lambda: C.cube_code(2, 5), 'cube_code: k must be in 1..2'),
    (lambda: C.sizes(0, 3), 'sizes: n must be an integer'),
    (lambda: C.carry_out(5, 9), 'carry_out: pair_sum - written_digit'),
    (lambda: C.build_multi_operand_adder(2, 2, lam=-1.0), 'lam must be a positive'),
    (lambda: C.build_multi_operand_adder(2, 3).generate([1] * 9), 'generate: IDs up to'),
    (lambda: C.coupled_ids('1*2'), 'coupled_ids: tokens must come from'),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_random_offsets_needs_generator():
    with pytest.raises(TypeError, match='random_offsets: rng must be'):
        C.random_offsets(0, 3, 3)


# ----------------------------------------------------------------------------- codes and MLP

def test_cube_codes():
    for D in range(1, 6):
        codes = np.array([C.cube_code(D, k) for k in range(1, 2 ** D + 1)])
        assert np.all(codes[0] == 1)
        assert np.all((codes ** 2).sum(1) == D)
        gram = codes @ codes.T
        assert np.all(gram[~np.eye(len(codes), dtype=bool)] <= D - 2)
    assert list(C.cube_code(3, 2)) == [1, 1, -1]          # binary of k - 1 = 001
    assert list(C.position_codes(2, 4)[2:]) == [1, 1]     # next code of 2^D wraps to v_1
    assert not C.position_codes(3, 0).any()


def test_carry_identity_exhaustive():
    for a in range(10):
        for b in range(10):
            for c in (0, 1):
                assert C.carry_out(a + b, (a + b + c) % 10) == (a + b + c) // 10


def test_digit_mlp_exact_with_margin():
    """Every (pair sum S, previous pair sum, previous carry), g perturbed by up to 0.099."""
    S, prev, carry_in = np.meshgrid(np.arange(19), np.arange(19), (0, 1), indexing='ij')
    written = (prev + carry_in) % 10
    carry = (prev + carry_in) // 10
    want = np.eye(10)[(S + carry) % 10]
    for delta in (-0.099, 0.0, 0.099):
        assert np.allclose(C.digit_mlp(S + delta, prev, written), want, atol=1e-12)
    # dropping -NUM (the written digit) from g breaks it
    assert not np.allclose(C.digit_mlp(S, prev, 0 * written), want)


# ----------------------------------------------------------------------------- the construction

@pytest.fixture(scope='module')
def small():
    return C.build_multi_operand_adder(2, 7)


def test_sizes_table():
    want = {(2, 3): (3, 3, 2, 29, 27), (10, 10): (12, 4, 4, 35, 35), (13, 13): (15, 5, 4, 37, 35),
            (30, 30): (32, 6, 5, 41, 39), (100, 100): (103, 7, 7, 47, 47)}
    for (n, m), (ell, P1, P2, d, d_paper) in want.items():
        got = C.sizes(n, m)
        assert (got['ell'], got['P1'], got['P2'], got['d_model']) == (ell, P1, P2, d)
        assert C.sizes(n, m, literal=True)['d_model'] == d_paper
        assert got['d_model_preln'] == 42 + 4 * (P1 + P2)
        assert C.build_multi_operand_adder(n, m).layout.d_model == d


def test_worked_trace_table(small):
    """Spec table 5.9: offsets (4, 2), response positions k = 13..28 (1-based, BOS at 1)."""
    seq = [C.TOKEN_ID['$']] + [C.TOKEN_ID[c] for c in C.addition_text(WORKED)]
    r = small.run(seq, offsets=(4, 2))
    L = small.layout
    mid = r['resid_mid'][12:28]
    # per response position k = 13..28: (digit-pair sum, lower pair sum, keys of head 3,
    # keys of head 4, EOS unit)
    table = [(0, 0, 4, 3, -1), (0, 0, 4, 3, -1), (0, 0, 4, 3, -1), (0, 0, 1, 3, 0),
             (7, 0, 5, 3, -1), (5, 7, 5, 3, -1), (0, 5, 5, 3, -1), (0, 0, 1, 3, 0),
             (15, 0, 6, 2, 0), (9, 15, 6, 3, -1), (0, 9, 6, 3, -1), (0, 0, 1, 3, 0),
             (11, 0, 7, 2, 0), (9, 11, 7, 2, 0), (1, 9, 7, 2, 0), (0, 1, 1, 2, 1)]
    pre_sum, pre_carry, x3, x4, eos = map(list, zip(*table))
    assert np.allclose(mid[:, L['PRE_SUM'].start], pre_sum, atol=1e-12)
    assert np.allclose(mid[:, L['PRE_CARRY'].start], pre_carry, atol=1e-12)
    assert np.allclose(1 / mid[:, L['PRE_ARROW'].start], x3, atol=1e-9)
    assert np.allclose(1 / mid[:, L['PRE_EOS'].start], x4, atol=1e-9)
    post = r['resid_post'][12:28]
    assert np.allclose(post[:, L['EOS'].start], eos, atol=1e-9)
    out = ''.join(C.VOCAB[t] for t in r['logits'][12:28].argmax(-1))
    assert out == '000>750>501>102$'
    # attention sets (1-based keys, equal weights)
    A = r['attn']
    for h, k, keys in [(0, 25, {1, 12, 22}), (1, 26, {1, 12, 22}), (1, 25, {1, 21}),
                       (2, 16, {1}), (2, 13, {1, 4, 8, 12}), (3, 28, {1, 28}),
                       (3, 18, {1, 8, 18})]:
        row = A[h, k - 1]
        got = {i + 1 for i in np.flatnonzero(row > 1e-6)}
        assert got == keys, (h, k, got)
        assert np.allclose(row[[i - 1 for i in keys]], 1 / len(keys), atol=1e-9)


def test_param_counts(small):
    P1, P2 = small.P1, small.P2
    nz = taotp.count_non0_params(small.params)
    assert nz['non_emb'] == 2 * (4 * P1 + 3 * P2 + 4) + 4 + 4 + 325 + 84
    assert nz['tok_emb'] == 24 and nz['out_emb'] == 12
    assert nz['pos_emb'] == 2 * P1 * small.max_pos[0] + 2 * P2 * small.max_pos[1]
    assert small.params['layers'][0]['M1'].shape[1] == 83
    # recorded totals for the worked-example size (n, m) = (2, 3)
    tiny = C.build_multi_operand_adder(2, 3)
    assert dict(taotp.count_params(tiny.params))['n_params'] == 7739
    assert dict(taotp.count_non0_params(tiny.params))['n_params'] == 555
    port = C.build_multi_operand_adder(2, 3, norm=True)
    assert dict(taotp.count_params(port.params))['n_params'] == 16451
    assert dict(taotp.count_non0_params(port.params))['n_params'] == 947


@pytest.mark.parametrize('norm', [False, True])
def test_generate_worked_example(norm):
    model = C.build_multi_operand_adder(2, 3, norm=norm)
    response, total = model.generate(WORKED)
    assert s(response) == '000>750>501>102$' and total == 201


@pytest.mark.parametrize('norm', [False, True])
def test_small_sizes_exact_and_autoregressive(norm, rng):
    model = C.build_multi_operand_adder(4, 6, norm=norm)
    for m in range(1, 7):
        for n in range(1, 5):
            ops = C.random_operands(rng, m, n)
            want, got = model.teacher_forced(ops)
            assert got == want, (ops, want, got)
            offsets = C.random_offsets(rng, C.pad_length(ops), m, model.max_pos)
            response, total = model.generate(ops, offsets=offsets)
            assert s(response) == want and total == sum(ops)
            assert response.count('$') == 1


def test_preln_is_the_book_transformer_and_agrees(rng):
    port = C.build_multi_operand_adder(5, 5, norm=True)
    free = C.build_multi_operand_adder(5, 5)
    taotp.validate_params(port.params)
    L = port.layout
    for _ in range(10):
        ops = [int(x) for x in rng.integers(0, 10 ** 5, size=int(rng.integers(1, 6)))]
        seq = port.prompt(ops) + [C.TOKEN_ID[c] for c in C.addition_text(ops).split('=')[1]]
        ids = port.ids(seq)
        logits = taotp.transformer(seq, **port.params, positions=ids)
        start = len(port.prompt(ops)) - 1          # the '=' onwards: every prediction
        assert (logits[start:].argmax(-1) == free.run(seq)['logits'][start:].argmax(-1)).all()
        # layer norm before attention is a constant scale: every row has mean 0, equal norm
        x0 = port.run(seq)['resid_pre']
        assert np.allclose(x0.mean(1), 0) and np.allclose((x0 ** 2).sum(1), 8 + 4 * (port.P1 + port.P2))
    # cached and uncached decoding agree
    prompt = port.prompt([123, 45, 6])
    pos = lambda t: port.ids(t)  # noqa: E731
    a = taotp.decode(prompt, port.params, 30, eos=13, positions=pos)
    b = taotp.decode(prompt, port.params, 30, eos=13, positions=pos, cache=False)
    assert a.tolist() == b.tolist()
    assert L.d_model == 42 + 4 * (port.P1 + port.P2)


def test_literal_width_never_emits_the_separator():
    literal = C.build_multi_operand_adder(2, 3, literal=True)
    assert literal.P1 == 2 and literal.max_pos[0] == 4
    want, got = literal.teacher_forced(WORKED)
    assert want == '000>750>501>102$' and got != want and '>' not in got
    response, total = literal.generate(WORKED, max_steps=40)
    assert '>' not in response and total is None
    # the fix: one more bit of code width
    fixed = C.build_multi_operand_adder(2, 3)
    assert fixed.P1 == 3 and fixed.generate(WORKED)[1] == 201
    # sized for the paper's 30 x 30, the literal width cannot even hold the IDs of 30 digits
    big = C.build_multi_operand_adder(30, 30, literal=True)
    ops = [10 ** 29 + i for i in range(30)]
    assert not big.fits(ops)
    assert big.generate(ops, check_capacity=False, max_steps=50)[1] is None


def test_smallest_exact_lambda_vs_bound():
    """The bound ln(1000 N)/2 is sufficient; the measured threshold is much lower."""
    model_for = {lam: C.build_multi_operand_adder(2, 3, lam=lam) for lam in
                 np.arange(0.25, 6.01, 0.25)}
    exact = [lam for lam, m in model_for.items() if m.generate(WORKED)[1] == 201 and
             m.teacher_forced(WORKED)[0] == m.teacher_forced(WORKED)[1]]
    smallest = min(exact)
    N = len(C.addition_text(WORKED)) + 1
    assert round(C.lambda_bound(N), 1) == 5.1      # the spec's number for N = 28
    assert smallest <= C.lambda_bound(N)
    # every grid value from the smallest on is exact (monotone), and the one below fails
    assert exact == [lam for lam in model_for if lam >= smallest]
    assert smallest == 2.25   # recorded; the spec reports lambda = 3-4 suffices up to N ~ 7,600


@pytest.mark.slow
def test_full_grid_norm_free():
    """One weight set, 1..30 operands x 1..30 digits, a seeded problem per cell.

    Offsets alternate like a checkerboard: test offsets (1, 1) on half the cells,
    training-style random offsets on the other half (the PreLN test below covers
    every cell at (1, 1) again).
    """
    model = C.build_multi_operand_adder(30, 30)
    rng = np.random.default_rng(2025)
    for m in range(1, 31):
        for n in range(1, 31):
            ops = C.random_operands(rng, m, n)
            offsets = (1, 1) if (m + n) % 2 == 0 else \
                C.random_offsets(rng, C.pad_length(ops), m, model.max_pos)
            want, got = model.teacher_forced(ops, offsets)
            assert got == want and got.count('$') == 1, (m, n, offsets)


@pytest.mark.slow
def test_full_grid_preln():
    """The PreLN port on the book's transformer: one problem per cell of 1..30 x 1..30."""
    model = C.build_multi_operand_adder(30, 30, norm=True)
    rng = np.random.default_rng(7)
    for m in range(1, 31):
        for n in range(1, 31):
            ops = C.random_operands(rng, m, n)
            want, got = model.teacher_forced(ops)
            assert got == want and got.count('$') == 1, (m, n)
    # and autoregressive decoding (KV cache) on big cells, test and random offsets
    for m, n in ((30, 30), (17, 29), (29, 12)):
        ops = C.random_operands(rng, m, n)
        for offsets in ((1, 1), C.random_offsets(rng, C.pad_length(ops), m, model.max_pos)):
            response, total = model.generate(ops, offsets=offsets)
            assert total == sum(ops) and response.count('$') == 1, (m, n, offsets)


def test_lambda_bound_numbers():
    assert math.isclose(C.lambda_bound(28), 0.5 * math.log(28000))
    N = (2 * 30 + 1) * (32 + 1)
    assert round(C.lambda_bound(N), 1) == 7.3


def test_parity_program_exact_up_to_100_bits(rng):
    params = C.build_parity_program(max_bits=100)
    taotp.validate_params(params)
    assert taotp.config(params)['n_layers'] == 1 and taotp.config(params)['n_heads'] == [1]
    for n in (1, 2, 3, 64, 100):
        bits = ''.join(map(str, rng.integers(0, 2, size=n)))
        tokens, _ = C.parity_sequence(bits)
        prompt = [3] + [C.PARITY_VOCAB.index(c) for c in tokens[:n + 1]]
        out = taotp.decode(prompt, params, max_steps=n + 2, eos=3, positions=C.parity_positions)
        assert ''.join(C.PARITY_VOCAB[t] for t in out[len(prompt):]) == ''.join(tokens[n + 1:]) + '$'
    assert C.parity_positions([3, 0, 1, 2, 0, 1]).tolist() == [0, 2, 3, 1, 2, 3]


def test_preln_epsilon_margin(rng):
    """The heads' output scale eps of the port works from 1e-6 to 3e-2 and fails at 0.1."""
    problems = [C.random_operands(rng, m, n) for m, n in ((5, 5), (3, 2), (5, 1), (1, 5), (4, 4))]

    def exact(eps):
        model = C.build_multi_operand_adder(5, 5, norm=True, eps=eps)
        return all(np.equal(*model.teacher_forced(p)) for p in problems)

    assert all(exact(eps) for eps in (1e-6, 1e-3, 3e-2))
    assert not exact(0.1)
