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
    experiments = {e[0]: e for e in TS.EXPERIMENTS}
    assert set(experiments) <= set(RUNS)
    for name, run in RUNS.items():
        _, kind, lag_name, heads = experiments[run['experiment']]
        tagged = run['experiment'] + (f' {run["tag"]}' if run['tag'] else '')
        assert name == TS.seeded_name(tagged, run['seed'])
        assert (run['kind'], tuple(run['lags']), tuple(run['heads'])) == \
            (kind, TS.LAG_SETS[lag_name], heads)
        assert run['size'] == 'full' and len(run['kl']) == TS.T and run['train_seconds'] > 0
        # how it was trained, every run: batch, rate, schedule, clipping, seed and the rest
        for key in ('batch', 'lr', 'schedule', 'clip', 'seed', 'steps', 'warmup',
                    'weight_decay', 'betas', 'dtype', 'device'):
            assert key in run, (name, key)
        assert run['schedule'] in ('constant', 'cosine') and run['clip'] in (None, 1.0)
        assert run['summary'] == pytest.approx(TS.summary(run['kl']), rel=1e-12)
    assert set(REFS) == set(TS.LAG_SETS)
    assert all(TS.EQ1 in curves for curves in REFS.values())


def test_the_two_named_references_are_recomputed():
    """The network (the construction the ratios divide by) and the paper's eq. (1)."""
    P = TS.task_matrix()
    lags = TS.LAG_SETS['{1,2,3}']
    X, true = TS.evaluation_set(P, lags)
    eq1 = TS.model_curve(P, lags, X, true, taotp.selective.prop1_predictive(P, lags, X, TS.BETA))
    assert np.allclose(eq1, REFS['{1,2,3}'][TS.EQ1], rtol=1e-12)
    network = TS.all_kl(STORED, ('{1,2,3}', TS.construction_key(REFS, '{1,2,3}')))
    assert (round(network, 4), round(float(eq1.mean()), 4)) == (0.0127, 0.0110)


@pytest.mark.parametrize('name', TS.KEEP_WEIGHTS)
def test_stored_standard_weights_reproduce_their_kl_curve(name):
    params = trained.load_standard(name)
    lags = TS.LAG_SETS[name.split(' ')[1]]
    P = TS.task_matrix()
    X, true = TS.evaluation_set(P, lags)
    curve = TS.model_curve(P, lags, X, true, TS.probs('standard', params, X))
    assert np.allclose(curve, RUNS[name]['kl'], rtol=1e-9, atol=1e-15)


def test_stored_reference_curves_are_recomputed_exactly():
    """To rounding: a KL of about 0.2 summed in another NumPy's order moves by 1e-17, and a
    step where both laws agree comes out as +-1e-21 instead of 0 (NumPy 2.4.6)."""
    P = TS.task_matrix()
    lags = TS.LAG_SETS['{1,3}']
    X, true = TS.evaluation_set(P, lags)
    curves = TS.reference_curves(P, lags, X, true)
    assert set(curves) == set(REFS['{1,3}'])
    for key, curve in curves.items():
        assert np.allclose(curve, REFS['{1,3}'][key], rtol=1e-12, atol=1e-15), key


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


# ----------------------------------------------------------------------------- three-state claims

def _words(quote):
    return len(quote.strip('"').split())


def test_claims_have_a_state_a_rule_the_papers_words_and_a_reason():
    rows = TS.claims(STORED, trained.load_paper())
    assert len(rows) >= 30
    for row in rows:
        claim, measured, state = row[:3]
        assert state in TS.STATES, row
        assert row.words.startswith('"') and 2 <= _words(row.words) <= 10, row.words
        assert row.source
        if state == 'not run':
            assert row.why and measured == '-'
        else:
            assert row.rule.startswith('holds if') and measured != '-'
        if state == 'not reached':
            assert row.why
    # every lag set has its "matches the construction" row, at both widths
    for lag_name, heads in TS.MAIN_HEADS.items():
        label = f'std {lag_name} [{",".join(map(str, heads))}]'
        for width in ('d64', 'd128'):
            assert any(r.claim == f'trained {label} {width} matches the construction'
                       for r in rows), (label, width)


def _fake(kl_run, run_extra, construction=0.01):
    refs = {name: {'BMA': [0.0] * TS.T, 'ML': [0.0] * TS.T,
                   'construction, 3 heads': [construction] * TS.T,
                   'construction, 1 head': [construction] * TS.T, TS.EQ1: [construction] * TS.T}
            for name in TS.LAG_SETS}
    run = {'kind': 'standard', 'lags': [1, 2, 3], 'heads': [1, 3, 1], 'd_model': 64,
           'seed': 0, 'summary': {'all': kl_run}, 'kl': [kl_run] * TS.T, **run_extra}
    return {'runs': {}, 'references': refs}, {'runs': {'std {1,2,3} [1,3,1] d64 s0': run}}


PAPER_SETTINGS = dict(batch=256, lr=1e-3, schedule='constant', clip=None, weight_decay=0.0)


@pytest.mark.parametrize('kl, extra, state', [
    (0.012, dict(PAPER_SETTINGS, steps=30000, flat_at=None), 'holds'),
    (0.025, dict(PAPER_SETTINGS, steps=30000, flat_at=None), 'contradicted'),
    (0.025, dict(PAPER_SETTINGS, steps=12000, flat_at=11000), 'contradicted'),
    (0.025, dict(PAPER_SETTINGS, steps=7500, flat_at=None), 'not reached'),
    (0.025, dict(PAPER_SETTINGS, clip=1.0, steps=30000, flat_at=None), 'not reached'),
])
def test_the_three_states_follow_their_rules(kl, extra, state):
    stored, paper = _fake(kl, extra)
    row = next(r for r in TS.claims(stored, paper)
               if r.claim == 'trained std {1,2,3} [1,3,1] d64 matches the construction')
    assert row[2] == state, row


def test_two_layer_rows_compare_runs_of_the_same_budget():
    rows = {r.claim: r for r in TS.claims(STORED)}
    row = rows['two layers cannot solve the task: std {1,2,3} [3,3]']
    assert '12,000 steps' in row.measured and row.state == 'not reached'
    assert '3,000 steps' in rows['two layers cannot solve the task: std {1,2,3} [1,3]'].measured


# ----------------------------------------------------------------------------- the GPU preset

def test_the_paper_preset_is_the_papers_settings_and_covers_the_main_rows():
    from taotp.trained import paper as TP
    s = TP.PAPER
    assert (s['batch'], s['lr'], s['schedule'], s['warmup'], s['clip'], s['weight_decay']) == \
        (256, 1e-3, 'constant', 0, None, 0.0)
    assert s['max_steps'] >= 30000 and s['length'] == TS.T and s['d_head'] == 32
    names = [n for part in TP.PARTS for n in TP.part_names(part)]
    assert len(names) == len(set(names))
    for lag_name, heads in TS.MAIN_HEADS.items():
        for part, width in (('main', 64), ('wide', 128)):
            seeds = {sd for n in TP.part_names(part) for sd in range(3)
                     if n == TP.run_name('standard', lag_name, heads, width, sd)}
            assert seeds == {0, 1, 2}, (lag_name, part)


def test_the_flatness_rule():
    from taotp.trained.paper import flat_at
    falling = [(s, 1.0 / s) for s in range(1000, 31000, 1000)]
    assert flat_at(falling, 10000, 5000, 0.02) is None
    plateau = [(s, max(0.03, 1.0 / s)) for s in range(1000, 31000, 1000)]
    assert flat_at(plateau, 10000, 5000, 0.02) == 10000
    assert flat_at([(s, 0.5) for s in range(1000, 9000, 1000)], 10000, 5000, 0.02) is None


def test_paper_results_load_merged_and_without_the_smoke_part(tmp_path):
    assert trained.load_paper(tmp_path) is None
    for part, name in (('main', 'a'), ('wide', 'b'), ('smoke', 'c')):
        (tmp_path / f'ch11_paper_{part}.json').write_text(
            '{"part": "%s", "settings": {}, "runs": {"%s": {}}, "not_run": ["z"]}' % (part, name))
    merged = trained.load_paper(tmp_path)
    assert set(merged['runs']) == {'a', 'b'} and set(merged['parts']) == {'main', 'wide'}
    assert merged['not_run'] == ['z', 'z']


# ------------------------------------------------------------------------ the adder, head to head

def test_agreement_matrix_is_head_to_head_and_below_the_union():
    rng = np.random.default_rng(1)
    n = 10
    maps = np.tril(rng.random((4, n, n)))
    maps /= maps.sum(-1, keepdims=True)
    reference = np.where(maps > 0.2, maps, 0.0)
    A = TA.agreement_matrix(maps, reference, 2, 0.2)
    union = TA.mass_on_support(maps, reference, 2, 0.2)
    assert A.shape == (4, 4) and np.all(A <= union[:, None] + 1e-12)
    own = TA.agreement_matrix(reference, reference, 2, 0.2)
    assert np.allclose(np.diag(own), 1.0)            # a map is all on its own keys
    assert TA.best_matching(own[[2, 0, 3, 1]]) == [(0, 2), (1, 0), (2, 3), (3, 1)]


def test_the_adder_claims_and_the_head_to_head_numbers():
    n = META['config']['n']
    maps, tokens = TC.mean_attention(ADDER, n, n, 40)
    built = taotp.coupling.build_multi_operand_adder(*META['construction']['built_for'])
    cons, _ = TC.construction_attention(built, n, n)
    start = int(np.argmax(tokens == TC.EQ_ID))
    A = TA.agreement_matrix(maps, cons, start)
    even = [TA.uniform_share(cons[j:j + 1], start) for j in range(4)]
    pairs = TA.best_matching(A)
    matched = sorted((A[t, c] for t, c in pairs), reverse=True)
    assert [round(100 * v) for v in matched[:3]] == [73, 68, 66]
    assert round(100 * A[:, 3].max()) == 11            # construction head 4: no counterpart
    rows = TC.claims(META, A, even)
    assert [r[2] for r in rows] == ['holds', 'not reached', 'not run', 'not run']


def test_fig5_rows_score_maps_of_runs_that_learned_the_task():
    P = TS.task_matrix()
    seq = TS.maps_tokens(P, '{3,5,7}')
    cons = [m.tolist() for m in TS.construction_maps(P, (3, 5, 7), seq)]
    stored, paper = _fake(0.012, dict(PAPER_SETTINGS, steps=30000, flat_at=None))
    run = paper['runs'].pop('std {1,2,3} [1,3,1] d64 s0')
    run.update(lags=[3, 5, 7], maps=cons)
    paper['runs']['std {3,5,7} [1,3,1] d64 s0'] = run
    rows = [r for r in TS.claims(stored, paper) if r.source == 'Sec. 6, Fig. 5']
    assert [r[2] for r in rows] == ['holds'] * 3, rows       # the construction's own maps
    assert 'r = 1.00' in rows[1].measured
    run['summary'] = {'all': 0.05}                             # not learned: not compared
    rows = [r for r in TS.claims(stored, paper) if r.source == 'Sec. 6, Fig. 5']
    assert [r[2] for r in rows] == ['not reached'] * 3


def test_finished_paper_runs_of_different_lengths_share_one_budget():
    stored, paper = _fake(0.02, dict(PAPER_SETTINGS, steps=30000, flat_at=None))
    for h, steps, kl in ((1, 14000, 0.08), (2, 21000, 0.04), (4, 12000, 0.0195)):
        paper['runs'][f'std {{1,2,3}} [1,{h},1] d64 s0'] = dict(
            paper['runs']['std {1,2,3} [1,3,1] d64 s0'], heads=[1, h, 1], steps=steps,
            flat_at=steps, summary={'all': kl})
    rows = {r.claim: r for r in TS.claims(stored, paper)}
    assert rows['on {1,2,3}, each head in layer 2 up to K = 3 lowers the KL'].state == 'holds'
    assert rows['on {1,2,3}, heads beyond K = 3 add little'].state == 'holds'


def test_stored_runs_at_the_papers_settings_reproduce_their_curve():
    """One standard run of every stored part (the weights file holds them all)."""
    from taotp.trained import paper as TP
    stored = trained.load_paper()
    assert stored is not None
    P = TS.task_matrix()
    for part in stored['parts']:
        name = next(n for n in TP.part_names(part) if n in stored['runs'] and n.startswith('std'))
        run = stored['runs'][name]
        assert TS.at_paper_settings(run) and run['steps'] <= run['max_steps']
        params = trained.load_paper_weights(name)
        lags = TS.LAG_SETS[run['lag_set']]
        X, true = TS.evaluation_set(P, lags)
        curve = TS.model_curve(P, lags, X, true, TS.probs('standard', params, X))
        assert np.allclose(curve, run['kl'], rtol=1e-9), name
