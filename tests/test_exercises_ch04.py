"""Chapter 4 checkers: references pass, plausible wrong answers fail by name, garbage is reported."""

import numpy as np
import pytest

import taotp
from taotp.exercises import ch04, check, registry
from submissions import loops, raises


def circle2(n):
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([np.cos(a), np.sin(a)], axis=1)


def rot2(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s], [-s, c]])


def build_search_2d(vocab_size, block_size, prefix_len, N=1e8):
    """Search with 2-D token slots: L + 1 unit vectors in the hyperplane of R^(2L+3) ⟂ (1,...,1)."""
    L = prefix_len
    k, D = L + 1, 2 * (L + 1)
    d = D + 1
    U = np.linalg.qr(np.column_stack([np.ones(d), np.eye(d)[:, :D]]))[0][:, 1:]
    alpha = np.sqrt(d / k)
    slot = lambda j: slice(2 * j, 2 * j + 2)
    tok_v = np.zeros((vocab_size, D))
    tok_v[:, slot(0)] = circle2(vocab_size)
    tok_v[:, 2:2 * L:2] = 1.0                      # padding slots: the unit vector (1, 0)
    pos_v = np.zeros((block_size, D))
    pos_v[:, slot(L)] = circle2(block_size)
    p = taotp.base_params(vocab_size, block_size, d)
    p['tok_emb'] = p['out_emb'] = alpha * tok_v @ U.T
    p['pos_emb'] = alpha * pos_v @ U.T
    dh = 2 * L
    Qv, Kv, Vv, Pv = (np.zeros((2, k, D, dh)) for _ in range(4))
    for h in range(k):
        Qv[0, h, slot(L), :2] = N * (np.eye(2) if h == 0 else rot2(-2 * np.pi * h / block_size))
        Kv[0, h, slot(L), :2] = np.eye(2)
        if h == 0:
            Vv[0, 0, 2:] = np.eye(dh)
            Pv[0, 0, 2:] = -np.eye(dh)
        else:
            Vv[0, h, slot(0), :2] = np.eye(2)
            Pv[0, h, slot(h), :2] = np.eye(2)
    Qv[1, 0, :dh] = N * np.eye(dh)
    Kv[1, 0, 2:] = np.eye(dh)
    Vv[1, 0, slot(0), :2] = Pv[1, 0, slot(0), :2] = np.eye(2)
    Qv[1, 1, :dh] = N * np.eye(dh)
    Kv[1, 1, :dh] = Vv[1, 1, :dh] = np.eye(dh)
    Pv[1, 1, :dh] = -np.eye(dh)
    for M, val in ((Qv, N), (Kv, 1.0), (Vv, 1.0), (Pv, -1.0)):
        M[1, 2, slot(L), :2] = val * np.eye(2)
    layers = [taotp.base_layer(k, d, 0, dh) for _ in range(2)]
    for i, layer in enumerate(layers):
        for name, M in (('Q', Qv), ('K', Kv), ('V', Vv)):
            layer[name] = np.einsum('dD,hDk->hdk', U, M[i]) / alpha
        layer['P'] = alpha * np.einsum('dD,hDk->hdk', U, Pv[i])
    p['layers'] = layers
    return p


def build_search_hashed(vocab_size, block_size, prefix_len, hash_dims=None, N=1e8, M=1e8, seed=0):
    """2-D slots, padding removed by layer 0's b2, messy cleanup in layer 1, and the
    query/key compared through a seeded random hash of min(2L, L + 4) dimensions."""
    L = prefix_len
    m = hash_dims or min(2 * L, L + 4)
    k, D = L + 1, 2 * (L + 1)
    d = D + 1
    U = np.linalg.qr(np.column_stack([np.ones(d), np.eye(d)[:, :D]]))[0][:, 1:]
    alpha = np.sqrt(d / k)
    slot = lambda j: slice(2 * j, 2 * j + 2)
    pad = np.zeros(D)
    pad[2:2 * L:2] = 1.0
    tok_v = np.zeros((vocab_size, D))
    tok_v[:, slot(0)] = circle2(vocab_size)
    tok_v += pad
    pos_v = np.zeros((block_size, D))
    pos_v[:, slot(L)] = circle2(block_size)
    p = taotp.base_params(vocab_size, block_size, d)
    p['tok_emb'] = p['out_emb'] = alpha * tok_v @ U.T
    p['pos_emb'] = alpha * pos_v @ U.T
    dh = max(m, 2)
    Qv, Kv, Vv, Pv = (np.zeros((2, k, D, dh)) for _ in range(4))
    for h in range(k):
        Qv[0, h, slot(L), :2] = N * (np.eye(2) if h == 0 else rot2(-2 * np.pi * h / block_size))
        Kv[0, h, slot(L), :2] = np.eye(2)
        src, dst, sign = (slot(L), slot(L), -1.0) if h == 0 else (slot(0), slot(h), 1.0)
        Vv[0, h, src, :2] = np.eye(2)
        Pv[0, h, dst, :2] = sign * np.eye(2)
    H = np.linalg.qr(np.random.default_rng(seed).normal(size=(2 * L, m)))[0]
    Qv[1, 0, :2 * L, :m] = N * H
    Kv[1, 0, 2:, :m] = H
    Vv[1, 0, slot(0), :2] = np.eye(2)
    Pv[1, 0, slot(0), :2] = M * np.eye(2)
    layers = [taotp.base_layer(k, d, 0, dh) for _ in range(2)]
    for i, layer in enumerate(layers):
        for name, Mx in (('Q', Qv), ('K', Kv), ('V', Vv)):
            layer[name] = np.einsum('dD,hDk->hdk', U, Mx[i]) / alpha
        layer['P'] = alpha * np.einsum('dD,hDk->hdk', U, Pv[i])
    layers[0]['b2'] = -alpha * pad @ U.T
    p['layers'] = layers
    return p


def make_prompt(keys, values, key, vocab_size):
    sep = vocab_size
    table = []
    for k, v in zip(keys, values):
        table += [sep, *k, v]
    return table + [sep, *key], len(key) + 1


REFERENCES = {
    '4.2': taotp.build_search_transformer,
    '4.3': make_prompt,
    '4.4': build_search_2d,
    '4.5': build_search_hashed,
}


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
def test_references_pass(puzzle):
    result = check(puzzle, REFERENCES[puzzle])
    assert result, result.message


def no_cleanup(V, B, L):
    p = taotp.build_search_transformer(V, B, L)
    for h in (1, 2):
        for c in 'QKVP':
            p['layers'][1][c][h] = 0
    return p


def off_by_one(V, B, L):              # layer-1 key reads t0..t_{L-1} instead of t1..t_L
    p = taotp.build_search_transformer(V, B, L)
    K = p['layers'][1]['K']
    K[0] = 0
    K[0, :3 * L] = np.eye(3 * L)
    return p


def soft(V, B, L):
    return taotp.build_search_transformer(V, B, L, N=1.0)


def soft_2d(V, B, L):
    return build_search_2d(V, B, L, N=1.0)


def no_separator(keys, values, key, vocab_size):
    table = []
    for k, v in zip(keys, values):
        table += [*k, v]
    return table + list(key), max(2, len(key))


def leaks_value(keys, values, key, vocab_size):
    v = values[keys.index(key)]
    return [v, v, v, v], 2


def hashed_too_few_dims(V, B, L):     # 2-D slots but only half of the key compared
    p = build_search_2d(V, B, L)
    p['layers'][1]['Q'][0][:, L:] = 0
    return p


WRONG = [
    ('4.2', no_cleanup, '(10, 40, 2): '),
    ('4.2', off_by_one, 'seeded inputs wrong (needed 100% right); first: an input of 40 tokens ending in the query'),
    ('4.2', soft, 'expected'),
    ('4.3', no_separator, 'XOR table, key [1, 1]: Search on your prompt'),
    ('4.3', leaks_value, 'it must depend on the key alone'),
    ('4.4', taotp.build_search_transformer, 'd_model is 12; the budget is below 3 * (prefix_len + 1) = 12'),
    ('4.4', hashed_too_few_dims, '(10, 100, 3): '),
    ('4.5', taotp.build_search_transformer, "4,800 parameters; the budget is below the book's 4,800"),
    ('4.5', soft_2d, 'needed 99% right'),
]


@pytest.mark.parametrize('puzzle, answer, message', WRONG, ids=[f'{p}-{i}' for i, (p, _, _) in enumerate(WRONG)])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, answer, message):
    result = check(puzzle, answer)
    assert not result
    assert message in result.message, result.message


def with_nan(V, B, L):
    p = taotp.build_search_transformer(V, B, L)
    p['layers'][0]['Q'][0, 0, 0] = np.nan
    return p


GARBAGE = [None, 'search', 42, raises, lambda *a: None, lambda *a: 'x', lambda *a: ([1, 2], 'x'),
           lambda *a: (np.full(5, np.nan), 2), lambda *a: ([[1, 2], [3]], 2), lambda *a: ([], 2),
           lambda *a: ([1, 2, 3], True), lambda *a: ([-1, 2, 3, 4], 2), with_nan,
           lambda V, B, L: taotp.base_params(V, 2, 3),
           lambda V, B, L: {**taotp.build_search_transformer(V, B, L), 'layers': 'x'}]


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
@pytest.mark.parametrize('answer', GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_is_reported_not_raised(puzzle, answer):
    result = check(puzzle, answer)
    assert not result and result.message


def test_endless_loops_hit_the_time_limit(short_time_limit):
    result = check('4.3', loops)
    assert not result and 'took longer than 0.5 s' in result.message


def test_search_cases_are_unique_and_avoid_the_first_tokens():
    X, want = ch04.search_cases(0, 50, 10, 60, 3)
    for x, w in zip(X, want):
        assert taotp.search_reference(x, 3) == w
        assert not set(x[:3].tolist()) & set(x[-3:].tolist())


def test_two_d_reference_is_smaller_and_fixed():
    p = build_search_2d(10, 100, 3)
    assert taotp.config(p)['d_model'] == 9 and taotp.count_params(p)['n_params'] == 2_736
    x = p['tok_emb'][:, None] + p['pos_emb'][None]
    np.testing.assert_allclose(taotp.layer_norm(x), x, atol=1e-9)


def test_hashed_reference_sizes():
    assert taotp.count_params(build_search_hashed(1000, 100, 10))['n_params'] == 53_682
    assert check('4.5', build_search_2d)      # the checker sees sizes and accuracy only
    assert not check('4.5', lambda V, B, L: build_search_hashed(V, B, L, hash_dims=L))


def test_kinds():
    table = registry()
    kinds = {k: table[k].kind for k in table if k.startswith('4.')}
    assert kinds == {'4.1': 'reflect', '4.2': 'checked', '4.3': 'checked', '4.4': 'checked',
                     '4.5': 'checked', '4.6': 'reflect'}
