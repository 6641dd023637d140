"""taotp.train: the book's architecture in PyTorch, the training loop, the stored programs."""
import doctest
import importlib

import numpy as np
import pytest

import taotp
from taotp.train.init import init_params
from taotp.train.store import load_meta, load_params, save_params

train = pytest.mark.train


def _torch():
    import torch                      # fails loudly if the extra is missing: never skipped
    return torch


def _agree(model, params, tokens, positions=None, **variant):
    torch = _torch()
    mine = model(torch.tensor(tokens), positions=positions).detach().numpy()
    book = taotp.transformer_batch(tokens, params, positions=positions, **variant)
    return np.abs(mine - book).max()


@train
@pytest.mark.parametrize('norm', ['layer', 'rms', 'none'])
@pytest.mark.parametrize('post_ln', [False, True])
def test_torch_forward_is_the_book_forward(norm, post_ln, rng):
    from taotp.train import Model
    params = init_params(9, 12, 8, n_layers=3, n_heads=[2, 0, 1], d_head=[4, 1, 3],
                         d_ff=[16, 0, 5], tied=False, rng=rng)
    model = Model(params, norm=norm, post_ln=post_ln)
    back = model.to_params()
    assert taotp.params_equal(params, back)
    tokens = rng.integers(0, 9, size=(3, 12))
    assert _agree(model, back, tokens, norm=norm, post_ln=post_ln) < 1e-12


@train
def test_constructed_programs_and_multi_level_positions(rng):
    from taotp.train import Model
    params = taotp.build_sort_transformer(10, 20)        # scalar norms, tied, hand-set
    model = Model(params)
    assert model.tied and taotp.is_tied(model.to_params())
    tokens = np.array([[6, 2, 9, 0, 2, 6]])
    assert _agree(model, params, tokens) <= 1e-9 * np.abs(taotp.transformer(tokens[0],
                                                                            **params)).max()
    multi = init_params(12, 30, 16, n_heads=4, d_ff=32, position_sizes=[40, 12], rng=rng)
    model = Model(multi)
    ids = [rng.integers(0, 40, size=(2, 9)), rng.integers(0, 12, size=(2, 9))]
    assert _agree(model, multi, rng.integers(0, 12, size=(2, 9)), positions=ids) < 1e-12


@train
def test_frozen_entries_come_back_unchanged_and_scalars_stay_scalars():
    from taotp.train import Batch, Model, train as fit
    params = taotp.build_hello_world_transformer()[0]
    model = Model(params, freeze=('pos_emb', '*ln*', 'lnf.*'))
    assert 'pos_emb' not in model.trainable() and 'tok_emb' in model.trainable()
    x = np.arange(12)[None] % 11
    fit(model, Batch(x, np.roll(x, -1)), steps=3, lr=0.1)
    out = model.to_params()
    assert np.array_equal(out['pos_emb'], params['pos_emb'])
    assert out['lnf'] == {'gamma': 1.0, 'beta': 0.0}
    assert not np.array_equal(out['tok_emb'], params['tok_emb'])
    attention_only = Model(init_params(5, 6, 4, d_ff=0))
    assert 'layers.0.b2' not in attention_only.trainable()
    with pytest.raises(ValueError, match=r"freeze names no entry of the program: \['poss'\]"):
        Model(params, freeze='poss')
    with pytest.raises(ValueError, match=r"Model: norm must be one of"):
        Model(params, norm='batch')


@train
def test_training_is_seeded_and_deterministic():
    from taotp.train import Batch, Model, train as fit

    def batches(rng):
        x = rng.integers(0, 6, size=(16, 7))
        y = np.full_like(x, -1)
        y[:, 2:] = x[:, :-2]                # two tokens back; no loss on the first two
        return Batch(x, y)

    runs = []
    for _ in range(2):
        model = Model(init_params(6, 7, 16, n_heads=2, d_ff=32, rng=np.random.default_rng(5)))
        history = fit(model, batches, steps=150, lr=3e-3, seed=11, threads=1)
        runs.append((model.to_params(), history))
    assert taotp.params_equal(runs[0][0], runs[1][0])
    assert np.array_equal(runs[0][1].losses, runs[1][1].losses)
    assert runs[0][1].losses[-1] < 0.5 * runs[0][1].losses[0]
    with pytest.raises(ValueError, match=r'train: steps must be an integer >= 0; got -1'):
        fit(model, batches, steps=-1)
    with pytest.raises(TypeError, match=r'train: batches must give a Batch'):
        fit(model, lambda rng: [1, 2], steps=1)


@train
def test_progress_and_evaluations_are_opt_in(capsys):
    from taotp.train import Batch, Model, progress_bar, train as fit
    model = Model(init_params(4, 3, 4, n_layers=0))
    batch = Batch(np.array([[0, 1, 2]]), np.array([[1, 2, 3]]))
    fit(model, batch, steps=4)
    assert capsys.readouterr() == ('', '')
    seen = []
    history = fit(model, batch, steps=4, progress=progress_bar(width=4),
                  evaluate=lambda m: len(seen.append(1) or seen), eval_every=2)
    assert capsys.readouterr().err.endswith('4/4 loss %.4f\n' % history.losses[-1])
    assert [step for step, _ in history.evals] == [2, 4]


@train
def test_disentangled_model_runs_on_the_chapter_network(rng):
    torch = _torch()
    from taotp.train import DisentangledModel
    model = DisentangledModel(3, 10, heads=(1, 3, 1), rng=rng)
    layers, readout = model.to_blocks()
    net = taotp.selective.DisentangledTransformer(3, 10, layers, readout, output='log')
    x = rng.integers(0, 3, size=(2, 10))
    mine = torch.softmax(model(torch.tensor(x)), -1).detach().numpy()
    assert np.abs(mine - net.next_token_probs(x)).max() < 1e-14
    assert net.widths == model.widths


@train
def test_extras_docstring_examples_run():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    count = 0
    for name in ('train', 'train.init', 'train.model', 'train.loop', 'train.disentangled',
                 'train.store', 'export'):
        module = importlib.import_module(f'taotp.{name}')
        for test in finder.find(module, module.__name__, extraglobs={'taotp': taotp, 'np': np}):
            runner.run(test)
            count += len(test.examples)
    assert count > 20 and runner.failures == 0


# ----------------------------------------------------------------------------- no PyTorch needed

def test_store_round_trip_keeps_tables_scalars_and_ties(tmp_path, rng):
    params = init_params(7, 9, 4, n_layers=2, d_ff=[8, 0], position_sizes=[9, 3], rng=rng)
    params['layers'][0]['ln1'] = {'gamma': 2.0, 'beta': 0.0}
    save_params(tmp_path / 'p.npz', params, meta={'acc': 0.5})
    again, meta = load_params(tmp_path / 'p.npz', with_meta=True)
    assert taotp.params_equal(params, again) and meta == {'acc': 0.5}
    assert again['layers'][0]['ln1'] == {'gamma': 2.0, 'beta': 0.0}
    assert again['out_emb'] is again['tok_emb'] and isinstance(again['pos_emb'], list)
    assert load_meta(tmp_path / 'p.npz') == {'acc': 0.5}
    save_params(tmp_path / 'small.npz', params, dtype='float32')
    small = load_params(tmp_path / 'small.npz')
    assert small['tok_emb'].dtype == np.float64
    assert np.array_equal(small['tok_emb'], params['tok_emb'].astype(np.float32))
    with pytest.raises(taotp.ParamsError, match='missing key'):
        save_params(tmp_path / 'bad.npz', {'tok_emb': 1})


def test_init_params_checks_its_sizes():
    with pytest.raises(ValueError, match=r'init_params: n_heads must have one entry per layer'):
        init_params(5, 5, 4, n_layers=2, n_heads=[1])
    with pytest.raises(ValueError, match=r'init_params: d_model must be an integer >= 1'):
        init_params(5, 5, 0)
    with pytest.raises(ValueError, match=r'init_params: d_head must be >= 1'):
        init_params(5, 5, 2, n_heads=4)
    with pytest.raises(TypeError, match=r'init_params: rng must be a numpy.random.Generator'):
        init_params(5, 5, 4, rng=3)


def test_importing_the_training_package_needs_no_torch():
    import subprocess
    import sys
    code = ('import sys; sys.modules["torch"] = None; import taotp.train as t; t.init_params; '
            't.load_params\ntry:\n    t.Model\nexcept ModuleNotFoundError as e:\n    print(e)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert 'needs PyTorch, part of the optional training extra: pip install "taotp[train]"' \
        in out.stdout
