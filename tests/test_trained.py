"""Chapter 11's stored results load without PyTorch and reproduce the numbers the chapter prints.

The training itself needs the extra and is smoke-tested in ``tests/test_trained_train.py``
(marker ``train``).  Here every stored artefact is checked against a recomputation
from the stored weights (or from the task, for the reference curves) with the
package's own forward pass.
"""
import numpy as np
import pytest

import taotp
from taotp import trained
from taotp.trained import attention as TA
from taotp.trained import coupling as TC
from taotp.trained import selective as TS

STORED = trained.load_selective()
RUNS, REFS = STORED['runs'], STORED['references']


def test_every_experiment_is_stored_with_its_settings_and_curve():
    assert set(RUNS) == {e[0] for e in TS.EXPERIMENTS}
    for name, kind, lag_name, heads in TS.EXPERIMENTS:
        run = RUNS[name]
        assert (run['kind'], tuple(run['lags']), tuple(run['heads'])) == \
            (kind, TS.LAG_SETS[lag_name], heads)
        assert run['size'] == 'full' and len(run['kl']) == TS.T and run['train_seconds'] > 0
        assert run['summary'] == pytest.approx(TS.summary(run['kl']), rel=1e-12)
    assert set(REFS) == set(TS.LAG_SETS)


@pytest.mark.parametrize('name', TS.KEEP_WEIGHTS)
def test_stored_standard_weights_reproduce_their_kl_curve(name):
    params = trained.load_standard(name)
    lags = TS.LAG_SETS[name.split(' ')[1]]
    P = TS.task_matrix()
    X, true = TS.evaluation_set(P, lags)
    curve = TS.model_curve(P, lags, X, true, TS.probs('standard', params, X))
    assert np.allclose(curve, RUNS[name]['kl'], rtol=1e-9, atol=1e-15)


def test_stored_reference_curves_are_recomputed_exactly():
    P = TS.task_matrix()
    lags = TS.LAG_SETS['{1,3}']
    X, true = TS.evaluation_set(P, lags)
    for key, curve in TS.reference_curves(P, lags, X, true).items():
        assert np.allclose(curve, REFS['{1,3}'][key], rtol=1e-12, atol=1e-300), key


def test_stored_attention_maps_of_the_standard_model_are_its_own():
    name = 'std {3,5,7} [1,3,1]'
    maps = TS.attention_maps('standard', trained.load_standard(name),
                             TS.fig5_sequence(TS.task_matrix()))
    for mine, stored in zip(maps, RUNS[name]['maps']):
        assert np.abs(mine - np.array(stored)).max() <= 5e-5       # stored to 4 decimals


ADDER, META = trained.load_adder()


def test_stored_adder_reproduces_cells_of_its_grid():
    cfg = META['config']
    digits, operands = META['digits'], META['operands']
    for d, m in ((cfg['n'], cfg['n']), (cfg['n'] + 1, 2), (1, cfg['n'] + 2)):
        i, j = digits.index(d), operands.index(m)
        rng = np.random.default_rng([META['seed'], d, m])
        got = 100 * TC.cell_exact(ADDER, d, m, META['per_cell'], rng=rng)
        assert got == META['exact'][i][j], (d, m)


def test_the_trained_adder_is_the_books_architecture():
    cfg = taotp.config(ADDER)
    assert (cfg['n_layers'], cfg['n_heads'], cfg['d_model']) == (1, [4], META['config']['d_model'])
    assert [len(t) for t in ADDER['pos_emb']] == [p + 1 for p in META['config']['max_pos']]
    assert taotp.count_params(ADDER)['n_params'] == META['n_params']


def test_stored_construction_grid_is_recomputed_on_sample_cells():
    adder = taotp.coupling.build_multi_operand_adder(*META['construction']['built_for'])
    digits, operands = META['digits'], META['operands']
    stored = np.array(META['construction']['exact'])
    for d, m in ((1, 2), (META['config']['n'], META['config']['n']), (digits[-1], operands[-1])):
        i, j = digits.index(d), operands.index(m)
        got = TC.construction_grid(adder, [d], [m], META['construction']['per_cell'],
                                   seed=META['seed'])
        assert got[0, 0] == stored[i, j], (d, m)
    inside = TC.capacity(adder, digits, operands)
    assert np.all(stored[inside] == 100) and np.all(stored[~inside] == 0)


def test_batches_follow_the_format_and_the_loss_starts_after_the_equals_sign():
    rng = np.random.default_rng(0)
    batch = TC.sa_batch(4, 8, rng=rng, max_pos=(12, 10))
    for tokens, targets, p1 in zip(batch.tokens, batch.targets, batch.positions[0]):
        eq = int(np.argmax(tokens == TC.EQ_ID))
        assert np.all(targets[:eq] == -1) and targets[eq] >= 0
        assert p1.max() <= 12 and tokens[0] == TC.EOS_ID and p1[0] == 0
        text = ''.join(TC.VOCAB[t] for t in tokens[1:][targets[1:] >= 0]) + \
            TC.VOCAB[targets[targets >= 0][-1]]
        assert text.endswith('$')
    assert TC.fits(15, 16, (20, 20)) and not TC.fits(16, 16, (18, 20))


def test_selective_batches_are_next_token_pairs():
    X, y = TS.next_token_batch(TS.task_matrix(), (1, 3), 3, rng=np.random.default_rng(0))
    assert X.shape == y.shape == (3, TS.T) and np.all(X[:, 1:] == y[:, :-1])
    assert TS.file_name('std {1,...,5} [1,5,1]') == 'std_1to5_151'


def test_wrong_places_agree_with_the_grid():
    n = META['config']['n']
    for d, m in ((n, n), (n + 1, 2)):
        i, j = META['digits'].index(d), META['operands'].index(m)
        places = TC.wrong_places(ADDER, d, m, META['per_cell'], seed=META['seed'])
        assert places.shape == (m + 1, TC.coupling.pad_length([10 ** d - 1] * m) + 1)
        wrong_problems = META['per_cell'] * (1 - META['exact'][i][j] / 100)
        assert (places.sum() == 0) == (wrong_problems == 0)
        assert places.sum() >= round(wrong_problems)


def test_mass_on_support_is_one_on_its_own_maps_and_the_even_share_for_uniform():
    rng = np.random.default_rng(0)
    n = 12
    maps = np.tril(rng.random((4, n, n)))
    maps /= maps.sum(-1, keepdims=True)
    reference = np.where(maps > 0.15, maps, 0.0)
    assert np.allclose(TA.mass_on_support(reference, reference, 3), 1.0)
    causal = np.tril(np.ones((n, n)))
    uniform = (causal / causal.sum(1, keepdims=True))[None]
    assert TA.mass_on_support(uniform, reference, 3, 0.15)[0] == \
        pytest.approx(TA.uniform_share(reference, 3, 0.15))
    assert 0 < TA.uniform_share(reference, 3, 0.15) < 1
