"""Chapter 11's experiments, seconds long: each training pipeline runs end to end (needs the extra).

Marked ``train``: run by ``.ci/run`` (``pytest -m "e2e or train" tests``) after the
training extra is installed; they fail loudly, never skip, when PyTorch is missing.
"""
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
