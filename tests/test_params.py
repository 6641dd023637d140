"""Counting and validating the params format: every error path names its field."""
import numpy as np
import pytest

import taotp
from taotp import ParamsError


@pytest.fixture
def params(rng):
    return taotp.random_params(rng, vocab_size=5, block_size=6, d_model=4, n_layers=2,
                               n_heads=2, d_head=3, d_ff=7)


def test_counts_match_a_hand_count():
    p = taotp.base_params(vocab_size=11, block_size=13, d_model=3)
    p['layers'].append(taotp.base_layer(n_heads=2, d_model=3, d_ff=5, d_head=4))
    counts = taotp.count_params(p)
    layer = 4 * 2 * 3 * 4 + 3 * 5 + 5 + 5 * 3 + 3
    # all-zero tok_emb and out_emb are equal, hence tied and counted once
    assert counts == {'n_params': 33 + 39 + layer, 'tok_emb': 33, 'pos_emb': 39, 'non_emb': layer}
    assert taotp.count_non0_params(p)['n_params'] == 0
    p['out_emb'] = p['out_emb'] + 1
    assert taotp.count_params(p)['out_emb'] == 33
    assert repr(taotp.count_params(p)).startswith('{n_params: 2')


def test_non_zero_count_counts_exact_non_zeros():
    p = taotp.base_params(4, 2, 3)
    p['tok_emb'][0, 0] = 1e-300
    p['pos_emb'][1] = [1, 0, -2]
    assert taotp.count_non0_params(p) == {'n_params': 3, 'tok_emb': 1, 'pos_emb': 2,
                                          'out_emb': 0, 'non_emb': 0}


def test_valid_params_pass(params):
    assert taotp.validate_params(params) is params
    assert taotp.param_problems(params) == []


def test_config_summarises_shapes(params):
    cfg = taotp.config(params)
    assert cfg['n_layers'] == 2 and cfg['n_heads'] == [2, 2] and cfg['d_model'] == 4
    assert cfg['block_size'] == 6 and cfg['vocab_size'] == 5 and cfg['d_ff'] == [7, 7]


BREAKAGES = [
    (lambda p: 'not a dict', 'expected a params dict'),
    (lambda p: p.pop('lnf'), "missing key 'lnf'"),
    (lambda p: p.update(extra=1), r"unknown keys \['extra'\]"),
    (lambda p: p.update(tok_emb=np.zeros(5)), "'tok_emb' must have 2 dimensions; got shape"),
    (lambda p: p.update(tok_emb='abc'), "'tok_emb' must be a NumPy array; got str"),
    (lambda p: p.update(out_emb=np.zeros((5, 3))),
     r"'out_emb' has shape \(5, 3\), expected \(vocab_size, d_model\) = \(5, 4\)"),
    (lambda p: p.update(pos_emb=np.zeros((6, 2))),
     r"'pos_emb' has shape \(6, 2\), expected \(block_size, d_model\) with d_model = 4"),
    (lambda p: p.update(pos_emb=np.zeros((0, 4))), 'no rows'),
    (lambda p: p['layers'][1].update(Q=np.zeros((2, 7, 3))),
     r"layers\[1\]\['Q'\] has shape \(2, 7, 3\), expected \(n_heads, d_model, d_head\) = \(2, 4, 3\)"),
    (lambda p: p['layers'][0].update(K=np.zeros((3, 4, 3))),
     r"layers\[0\]\['K'\] has shape \(3, 4, 3\), expected"),
    (lambda p: p['layers'][0].update(P=np.zeros((2, 4, 5))), r"layers\[0\]\['P'\] has shape"),
    (lambda p: p['layers'][0].update(M1=np.zeros((4, 2))), r"layers\[0\]\['b1'\] has shape \(7,\)"),
    (lambda p: p['layers'][0].update(M2=np.zeros((7, 5))), r"layers\[0\]\['M2'\] has shape"),
    (lambda p: p['layers'][0].update(b2=np.zeros(3)), r"layers\[0\]\['b2'\] has shape \(3,\)"),
    (lambda p: p['layers'][0].pop('ln2'), r"layers\[0\] is missing 'ln2'"),
    (lambda p: p['layers'][0].update(M3=1), r"layers\[0\] has unknown keys \['M3'\]"),
    (lambda p: p['layers'].append('layer'), r"layers\[2\] must be a dict"),
    (lambda p: p.update(layers=None), "'layers' must be a list"),
    (lambda p: p['layers'][0]['V'].__setitem__((0, 0, 0), np.nan),
     r"layers\[0\]\['V'\] holds a non-finite value \(nan\) at index \(0, 0, 0\)"),
    (lambda p: p['pos_emb'].__setitem__((1, 1), np.inf), r"'pos_emb' holds a non-finite value"),
    (lambda p: p.update(lnf={'gamma': np.ones(3)}), r"'lnf'\['gamma'\] has shape \(3,\)"),
    (lambda p: p.update(lnf={'gamma': float('nan')}), r"'lnf'\['gamma'\] is not finite"),
    (lambda p: p.update(lnf={'gamma': 'one'}), r"'lnf'\['gamma'\] must be a number"),
    (lambda p: p.update(lnf={'scale': 1.0}), r"'lnf' has unknown keys \['scale'\]"),
    (lambda p: p['layers'][0].update(ln1=[1, 0]), r"layers\[0\]\['ln1'\] must be a dict"),
    (lambda p: p['layers'][0].update(Q=np.zeros((2, 4, 3), dtype=object)), 'must hold real numbers'),
    (lambda p: p.update(pos_emb=[np.zeros((6, 4)), np.zeros((3, 5))]),
     r"'pos_emb'\[1\] has shape \(3, 5\)"),
]


@pytest.mark.parametrize('breakage, message', BREAKAGES, ids=[m[:30] for _, m in BREAKAGES])
def test_validate_params_names_the_problem(params, breakage, message):
    broken = breakage(params)
    target = broken if isinstance(broken, str) else params
    with pytest.raises(ParamsError, match=message):
        taotp.validate_params(target)


def test_transformer_validates_before_running(params):
    params['layers'][0]['Q'] = np.zeros((2, 9, 3))
    with pytest.raises(ParamsError, match=r"layers\[0\]\['Q'\] has shape \(2, 9, 3\)"):
        taotp.transformer([1, 2], **params)


@pytest.mark.parametrize('tokens, message', [
    ([1, 5], r'token id 5 at index \(1,\), outside the vocabulary 0..4'),
    ([-1], 'token id -1'),
    ([], 'is empty'),
    ([0.5, 1], 'must hold integer token ids'),
    (['a'], 'must hold integer token ids'),
    ([0] * 7, 'has 7 tokens but block_size is 6'),
    ([[1, 2], [3]], 'not an array of token ids'),
])
def test_bad_tokens_get_named_errors(params, tokens, message):
    with pytest.raises(ParamsError, match=message):
        taotp.transformer(tokens, **params)


def test_float_tokens_holding_integers_are_accepted(params):
    np.testing.assert_allclose(taotp.transformer(np.array([1.0, 2.0]), **params),
                               taotp.transformer([1, 2], **params))


def test_positions_are_checked(params):
    with pytest.raises(ParamsError, match='positions has shape'):
        taotp.transformer([1, 2], **params, positions=np.array([0, 1, 2]))
    with pytest.raises(ParamsError, match=r'positions\[0\] holds id 9, outside 0..5'):
        taotp.transformer([1, 2], **params, positions=np.array([0, 9]))
    with pytest.raises(ParamsError, match='must be integer ids'):
        taotp.transformer([1, 2], **params, positions=np.array([0.0, 1.0]))


def test_an_empty_embedding_is_a_problem():
    for shape in ((0, 3), (4, 0)):
        params = taotp.base_params(2, 3, 3)
        params['tok_emb'] = params['out_emb'] = np.zeros(shape)
        with pytest.raises(taotp.ParamsError, match=r"needs vocab_size >= 1 and d_model >= 1"):
            taotp.validate_params(params)


def test_problems_carry_the_path_of_their_field(rng):
    params = taotp.random_params(rng, n_layers=2)
    params['layers'][1]['Q'] = params['layers'][1]['Q'][:, :-1]
    params['lnf'] = {'gamma': np.ones(3)}
    paths = [p.path for p in taotp.param_problems(params)]
    assert ('layers', 1, 'Q') in paths and ('lnf', 'gamma') in paths


def test_params_equal_is_bitwise(rng):
    a = taotp.random_params(rng)
    b = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in a.items()}
    assert taotp.params_equal(a, b)
    b['tok_emb'][0, 0] = -0.0 if a['tok_emb'][0, 0] == 0 else np.nextafter(a['tok_emb'][0, 0], 1)
    assert not taotp.params_equal(a, b)
    assert taotp.params_difference(a, b).startswith("'tok_emb': ")
