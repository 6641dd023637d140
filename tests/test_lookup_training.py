"""taotp.lookup.training: the training model equals the engine, its gradient, the optimiser."""
import io
import sys

import numpy as np
import pytest

import taotp
from taotp.lookup import (fit_hashes, logsumexp, lookup_queries, lookup_scores, loss_and_grad,
                          optimize, random_lookup_table, terminal_progress,
                          wire_lookup_transformer)


def test_logsumexp_is_stable_and_right():
    x = np.array([[1000.0, 1000.0], [-3.0, 2.0]])
    want = np.array([[1000 + np.log(2)], [np.log(np.exp(-3) + np.exp(2))]])
    assert np.allclose(logsumexp(x), want)


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_gradient_matches_finite_differences(seed):
    rng = np.random.default_rng(seed)
    V, t, l, n = 6, 4, 3, 9
    E = rng.normal(size=(V, t))
    M = 0.5 * rng.normal(size=(l, t, t))
    ks, vs = random_lookup_table(n, l, V, rng)
    ks[1, 0] = ks[0, 0] = ks[0, 2] = 2      # repeated tokens: the scatter-add must sum them
    ks = np.unique(ks, axis=0)
    vs = vs[:len(ks)]
    _, (dM, dE) = loss_and_grad(E, M, ks, vs)
    h = 1e-6
    for param, grad in ((E, dE), (M, dM)):
        numeric = np.zeros_like(param)
        for idx in np.ndindex(param.shape):
            old = param[idx]
            param[idx] = old + h
            up = loss_and_grad(E, M, ks, vs)[0]
            param[idx] = old - h
            down = loss_and_grad(E, M, ks, vs)[0]
            param[idx] = old
            numeric[idx] = (up - down) / (2 * h)
        assert np.max(np.abs(numeric - grad)) < 1e-6 * max(1.0, np.max(np.abs(grad)))


def test_training_model_is_the_transformer():
    """lookup_scores (what the optimiser sees) equals the wired program's last logits as the
    engine computes them, behind any prefix."""
    rng = np.random.default_rng(3)
    ks, vs = random_lookup_table(50, 4, 30, rng)
    E, M, _ = fit_hashes(ks, vs, 30, 8, optimization_iters=40, stop_margin=None, rng=rng)
    params = wire_lookup_transformer(E, M, block_size=9)
    want = lookup_scores(E, M, ks)
    got = taotp.transformer_batch(lookup_queries(ks, 5, 30, rng), params)[:, -1]
    assert np.allclose(got, want, atol=1e-6)


def test_optimize_reports_progress_and_stays_quiet(capsys):
    rng = np.random.default_rng(4)
    ks, vs = random_lookup_table(20, 3, 10, rng)
    E, M = rng.normal(0, .1, (10, 5)), rng.normal(0, .1, (3, 5, 5))
    seen = []
    info = optimize(E, M, ks, vs, 250, progress=lambda *a: seen.append(a), progress_every=100,
                    stop_margin=None)
    assert info['iters'] == 250 and [s[0] for s in seen] == [0, 100, 200, 250]
    assert info['losses'][0] > info['losses'][-1]
    out = capsys.readouterr()
    assert out.out == '' and out.err == ''
    assert np.allclose(taotp.layer_norm(E), E)       # E is left normalised


def test_optimize_stops_early_once_every_value_wins():
    ks, vs = random_lookup_table(30, 5, 20, 7)
    E, M, info = fit_hashes(ks, vs, 20, 6, rng=11)
    assert info['accuracy'] == 1.0 and 0 < info['iters'] < 5000
    assert np.array_equal(lookup_scores(E, M, ks).argmax(1), vs)


def test_fit_is_seeded():
    ks, vs = random_lookup_table(30, 5, 20, 7)
    a = fit_hashes(ks, vs, 20, 6, rng=11)
    b = fit_hashes(ks, vs, 20, 6, rng=np.random.default_rng(11))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_terminal_progress_writes_only_to_the_real_stderr(monkeypatch, capsys):
    fake = io.StringIO()
    monkeypatch.setattr(sys, '__stderr__', fake)
    ks, vs = random_lookup_table(10, 3, 8, 0)
    taotp.build_lookup_transformer(ks, vs, 8, 3, 4, optimization_iters=150, stop_margin=None,
                                   progress=terminal_progress)
    assert 'step 150/150' in fake.getvalue() and 'right' in fake.getvalue()
    out = capsys.readouterr()
    assert out.out == '' and out.err == ''


def test_error_paths():
    ks, vs = np.array([[1, 2], [3, 4]]), np.array([0, 1])
    with pytest.raises(ValueError, match=r'fit_hashes: tok_dims must be >= 2 .*; got 1'):
        fit_hashes(ks, vs, 5, 1)
    with pytest.raises(ValueError, match=r'fit_hashes: optimization_iters must be >= 0; got -2'):
        fit_hashes(ks, vs, 5, 3, optimization_iters=-2)
    with pytest.raises(ValueError, match=r'fit_hashes: ks must hold ids in 0\.\.2; got 1\.\.4'):
        fit_hashes(ks, vs, 3, 3)
