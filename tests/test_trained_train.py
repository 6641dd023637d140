"""Chapter 11's experiments, seconds long: each training pipeline runs end to end (needs the extra).

Marked ``train``: run by ``.ci/run`` (``pytest -m "e2e or train" tests``) after the
training extra is installed; they fail loudly, never skip, when PyTorch is missing.
"""
import json
import subprocess
import sys

import numpy as np
import pytest

import taotp
from taotp import trained
from taotp.trained import coupling as TC
from taotp.trained import selective as TS

pytestmark = pytest.mark.train


def test_adder_smoke_run_is_stored_loaded_and_deterministic(tmp_path):
    import torch  # noqa: F401  (fails loudly without the extra)
    params, meta = TC.run('smoke', out=tmp_path)
    again, meta2 = trained.load_adder('smoke', folder=tmp_path)
    assert taotp.params_equal(taotp.as_dtype(params, np.float32), taotp.as_dtype(again, np.float32))
    assert meta2['exact'] == meta['exact'] and len(meta['exact']) == 3
    assert meta['construction']['built_for'] == [2, 2]
    # the stored program runs through the package like a constructed one
    seq, ids = TC.ta_problems(2, 2, 1, rng=np.random.default_rng(0))
    logits = taotp.transformer(seq[0], **again, positions=list(ids))
    assert logits.shape == (seq.shape[1], len(TC.VOCAB))
    same, _ = TC.train_adder(**TC.SIZES['smoke'])
    assert taotp.params_equal(params, same)          # seeded: bit for bit


@pytest.mark.parametrize('name', ['std {1,2,3} [1,3,1]', 'dis {3,5,7} [1,3,1]'])
def test_selective_smoke_runs(name, tmp_path):
    result = TS.run_one(name, 'smoke', out=tmp_path)
    assert len(result['kl']) == TS.SIZES['smoke']['length'] and np.isfinite(result['kl']).all()
    assert result['summary']['all'] > 0
    if name.startswith('std'):
        params = trained.load_standard(name, folder=tmp_path)
        assert taotp.config(params)['n_heads'] == [1, 3, 1]
        assert taotp.config(params)['d_ff'] == [0, 0, 0]
    else:
        assert [np.shape(m) for m in result['maps']] == [(16, 16)] * 3


def test_disentangled_training_matches_the_chapter_forward_pass():
    weights, history = TS.train_model('disentangled', (1, 2), (1, 2, 1), steps=2, batch=2,
                                      length=8, warmup=1)
    assert history.steps == 2
    from taotp.train import DisentangledModel
    import torch
    model = DisentangledModel(TS.S, 8, (1, 2, 1))
    with torch.no_grad():
        for p, a in zip(model.A, weights['A']):
            p.copy_(torch.tensor(a))
        model.readout.copy_(torch.tensor(weights['readout']))
        x = np.array([[0, 3, 1, 1, 4, 2, 0, 2]])
        theirs = torch.softmax(model(torch.tensor(x)), -1).numpy()
    assert np.allclose(TS.probs('disentangled', weights, x, 8), theirs, atol=1e-12)


def test_transformer_lens_hook_patterns_equal_the_books_trace():
    from taotp.trained import hooks
    sel = taotp.selective
    P = TS.task_matrix()
    params = sel.book_params(P, (1, 2, 3), 12)
    x, _ = sel.sample_batch(P, (1, 2, 3), 12, 1, rng=np.random.default_rng(0))
    for mine, book in zip(hooks.tl_patterns(params, x[0]), taotp.trace(x[0], params).attn):
        assert mine.shape == book.shape and np.abs(mine - book).max() < 1e-8
    assert 'blocks.0.attn.hook_pattern' in hooks.hook_names(params)


# ---------------------------------------------------------------------- the GPU path, on the CPU

def test_the_torch_sampler_draws_the_law_of_the_numpy_sampler():
    """Goodness of fit: lags, warm-up tokens, transitions, and a two-sample test of pairs."""
    import torch
    from scipy import stats
    from taotp.train.sampling import LagChainSampler, stationary_law
    P, lags, n, length = TS.task_matrix(), (1, 3, 4), 20000, 12
    sampler = LagChainSampler(P, lags, device='cpu')
    X, lag = (t.numpy() for t in sampler.draw(n, length, torch.Generator().manual_seed(0)))
    Y, _ = taotp.selective.sample_batch(P, lags, length, n, rng=np.random.default_rng(0))
    S, kmax = len(P), max(lags)
    p_values = {}
    p_values['lags'] = stats.chisquare([np.sum(lag == k) for k in lags]).pvalue
    first = np.bincount(X[:, :kmax].ravel(), minlength=S)
    p_values['warm-up'] = stats.chisquare(first, first.sum() * stationary_law(P)).pvalue
    chi2, df = 0.0, 0
    for parent in range(S):
        counts = np.zeros(S)
        for k in lags:
            rows = X[lag == k]
            hit = rows[:, kmax - k:length - k] == parent
            counts += np.bincount(rows[:, kmax:][hit], minlength=S)
        expected = counts.sum() * P[parent]
        chi2 += ((counts - expected) ** 2 / expected).sum()
        df += S - 1
    p_values['transitions'] = stats.chi2.sf(chi2, df)
    for a, b in ((4, 5), (2, 9), (0, 11)):            # joint laws of token pairs, both samplers
        table = np.array([np.bincount(Z[:, a] * S + Z[:, b], minlength=S * S) for Z in (X, Y)])
        p_values[f'pair {a},{b}'] = stats.chi2_contingency(table[:, table.sum(0) > 0]).pvalue
    assert min(p_values.values()) > 1e-3, p_values
    assert X.dtype == np.int64 and X.min() >= 0 and X.max() < S


def test_the_torch_sampler_is_seeded_and_checks_its_arguments():
    import torch
    from taotp.train.sampling import LagChainSampler, next_token_batches
    P = TS.task_matrix()
    s = LagChainSampler(P, (1, 2, 3))
    a = s.draw(5, 9, torch.Generator().manual_seed(4))[0]
    assert torch.equal(a, s.draw(5, 9, torch.Generator().manual_seed(4))[0])
    batches = next_token_batches([s, LagChainSampler(P, (3, 5, 7))], 3, 10, pool=2)
    b = batches(np.random.default_rng(0))
    assert b.tokens.shape == b.targets.shape == (2, 3, 10)
    assert torch.equal(b.tokens[..., 1:], b.targets[..., :-1])
    with pytest.raises(ValueError, match='LagChainSampler: lags must be distinct integers'):
        LagChainSampler(P, (0, 1))
    with pytest.raises(ValueError, match=r'LagChainSampler.draw: length must be > max\(lags\)'):
        s.draw(2, 3, torch.Generator())
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="LagChainSampler: device 'cuda' needs a CUDA GPU"):
            LagChainSampler(P, (1, 2), device='cuda')


def test_train_on_an_explicit_cpu_device_is_the_default_bit_for_bit():
    from taotp.train import train
    P = TS.task_matrix()
    out = []
    for device in (None, 'cpu'):
        model = TS.new_model('standard', (1, 2, 1), d_model=16, d_head=4, length=10)
        train(model, lambda rng: TS.next_token_batch(P, (1, 2), 4, rng=rng, length=10), 5,
              threads=1, device=device)
        out.append(model.to_params())
    assert taotp.params_equal(*out)
    with pytest.raises(ValueError, match='train: device must name a torch device'):
        train(model, lambda rng: None, 1, device='nowhere')


@pytest.mark.parametrize('clip', [None, 0.5])
def test_a_stack_trains_each_model_as_it_would_train_alone(clip):
    import torch
    from taotp.train import Batch, Model, train, train_stack
    P = TS.task_matrix()

    def fresh(seed):
        return Model(TS.standard_start((1, 2, 1), d_model=16, d_head=4, seed=seed, length=12),
                     dtype=torch.float64)
    data = [TS.next_token_batch(P, (1, 2, 3), 6, rng=np.random.default_rng(s), length=12)
            for s in range(3)]
    alone = []
    for s in range(3):
        model = fresh(s)
        train(model, Batch(*data[s]), 15, lr=1e-2, betas=(0.9, 0.999), clip=clip, threads=1)
        alone.append(model.to_params())
    stack = [fresh(s) for s in range(3)]
    batch = Batch(np.stack([d[0] for d in data]), np.stack([d[1] for d in data]))
    history = train_stack(stack, lambda rng: batch, 15, lr=1e-2, clip=clip, threads=1)
    assert history.losses.shape == (15, 3) and history.stopped == 'steps'
    for mine, theirs in zip(stack, alone):
        a, b = mine.to_params(), theirs
        assert max(np.abs(x - y).max() for x, y in
                   ((a['tok_emb'], b['tok_emb']), (a['layers'][1]['Q'], b['layers'][1]['Q']),
                    (a['out_emb'], b['out_emb']))) < 1e-10
    with pytest.raises(ValueError, match='train_stack: models must share their class'):
        train_stack([fresh(0), TS.new_model('standard', (1, 1, 1), d_model=16, d_head=4,
                                            length=12)], lambda rng: batch, 1)


def test_a_stack_stops_on_its_rule_or_its_deadline():
    import time
    from taotp.train import train_stack
    from taotp.train.sampling import LagChainSampler, next_token_batches
    P = TS.task_matrix()
    models = [TS.new_model('standard', (1, 1, 1), d_model=8, d_head=4, length=8)]
    batches = next_token_batches([LagChainSampler(P, (1, 2))], 2, 8, pool=3)
    h = train_stack(models, batches, 50, evaluate=lambda ms: [0.5], eval_every=5,
                    stop=lambda step, evals: step >= 10)
    assert (h.steps, h.stopped, [s for s, _ in h.evals]) == (10, 'stop rule', [5, 10])
    h = train_stack(models, batches, 50, deadline=time.perf_counter() - 1,
                    evaluate=lambda ms: [0.5])
    assert (h.steps, h.stopped, h.evals[-1][0]) == (1, 'time', 1)


def test_the_paper_preset_runs_at_smoke_size_and_stores_settings_and_weights(tmp_path):
    from taotp.trained import paper as TP
    out = subprocess.run([sys.executable, '-m', 'taotp.trained', 'paper', str(tmp_path),
                          '--part', 'smoke'], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    stored = json.loads((tmp_path / 'ch11_paper_smoke.json').read_text())
    assert set(stored['runs']) == set(TP.part_names('smoke'))
    P = TS.task_matrix()
    for name, run in stored['runs'].items():
        for key in ('batch', 'lr', 'schedule', 'clip', 'seed', 'weight_decay', 'steps',
                    'max_steps', 'stopped', 'flat_at', 'evals', 'matmul', 'stacked_with'):
            assert key in run, (name, key)
        assert (run['lr'], run['schedule'], run['clip']) == (1e-3, 'constant', None)
        assert run['steps'] == TP.SMOKE['max_steps'] and len(run['kl']) == TP.SMOKE['length']
        if run['kind'] == 'standard':        # the kept weights give back the stored curve
            params = TP.load_weights(tmp_path / 'ch11_paper_smoke.npz', name)
            lags = TS.LAG_SETS[run['lag_set']]
            X, true = TS.evaluation_set(P, lags, 8, length=TP.SMOKE['length'])
            curve = TS.model_curve(P, lags, X, true, TS.probs('standard', params, X,
                                                              TP.SMOKE['length']))
            assert np.allclose(curve, run['kl'], rtol=1e-9)
        else:
            assert len(run['maps']) == 3
    assert trained.load_paper(tmp_path) is None          # the smoke part is never read back


def test_run_one_records_how_it_trained_and_names_seeds_and_changes():
    result = TS.run_one('std {1,2,3} [1,3,1]', 'smoke', seed=2, settings={'clip': None},
                        tag='noclip')
    assert result['name'] == 'std {1,2,3} [1,3,1] noclip s2'
    assert (result['experiment'], result['seed'], result['clip'], result['schedule']) == \
        ('std {1,2,3} [1,3,1]', 2, None, 'cosine')
    assert {'batch', 'lr', 'warmup', 'weight_decay', 'betas', 'device'} <= set(result)
    with pytest.raises(ValueError, match=r"run_one: settings keys must be among"):
        TS.run_one('std {1,2,3} [1,3,1]', 'smoke', settings={'momentum': 0.9})


def test_the_gpu_modules_docstring_examples_run():
    import doctest
    import importlib
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    count = 0
    for name in ('taotp.train.sampling', 'taotp.train.stack'):
        module = importlib.import_module(name)
        for test in finder.find(module, name, extraglobs={'taotp': taotp, 'np': np}):
            runner.run(test)
            count += len(test.examples)
    assert count >= 3 and runner.failures == 0


def test_the_command_line_asks_for_a_gpu_it_does_not_have():
    import torch
    if torch.cuda.is_available():
        pytest.skip('this machine has a GPU: the message is for machines without one')
    out = subprocess.run([sys.executable, '-m', 'taotp.trained', 'paper', 'unused', '--device',
                          'cuda', '--part', 'smoke'], capture_output=True, text=True)
    assert out.returncode == 2 and "device 'cuda' needs a CUDA GPU" in out.stderr


def test_the_command_line_prints_its_usage():
    out = subprocess.run([sys.executable, '-m', 'taotp.trained'], capture_output=True,
                         text=True)
    assert out.returncode == 2 and 'smoke' in out.stdout


def test_the_command_line_names_an_unknown_experiment():
    out = subprocess.run([sys.executable, '-m', 'taotp.trained', 'smoke', 'unused', 'std x'],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "unknown experiment(s) ['std x']" in out.stderr
    with pytest.raises(ValueError, match='no experiment named'):
        TS.run_one('nope', 'smoke')
