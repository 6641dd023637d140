"""Chapter 3, Lookup Table: builders, optimiser, counts, precision, error paths."""
import numpy as np
import pytest

import taotp
from taotp.corpus import romeo_and_juliet, words
from taotp.lookup import (build_lookup_transformer, build_untied_transformer, logsumexp,
                          lookup_layout, lookup_precision, lookup_queries, lookup_reference,
                          lookup_scores, loss_and_grad, ngram_table, optimize,
                          precision_sweep, random_lookup_table)

# The book's counts (Section 3.7) hold for vocab 10, block 5, key length 5.
BOOK = {10: (8, 1408, 283), 100: (13, 3588, 733), 1000: (33, 22308, 5033)}
# Our non-zero counts at those sizes (the book's, +3: see the chapter's "How big is it?").
OURS_NON0 = {10: 286, 100: 736, 1000: 5036}


def _hashes(params, tok_dims):
    """Recover (E, M) from a wired tied program (head 0 carries the cleanup -I)."""
    P = params['layers'][0]['P'][:, :tok_dims, :tok_dims].copy()
    P[0] += np.eye(tok_dims)
    return params['tok_emb'][:, :tok_dims], np.stack([P[h].T for h in range(len(P))][::-1])


# ----------------------------------------------------------------------------- optimiser

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


def test_optimiser_model_is_the_transformer():
    """lookup_scores (what the optimiser sees) equals the wired program's last logits."""
    rng = np.random.default_rng(3)
    ks, vs = random_lookup_table(50, 4, 30, rng)
    params = build_lookup_transformer(ks, vs, 30, 9, 8, optimization_iters=40, stop_margin=None,
                                      rng=rng)
    E, M = _hashes(params, 8)
    want = lookup_scores(E, M, ks)
    queries = lookup_queries(ks, 5, 30, rng)
    got = taotp.transformer_batch(queries, params)[:, -1]
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


def test_builder_is_seeded():
    ks, vs = random_lookup_table(30, 5, 20, 7)
    a = build_lookup_transformer(ks, vs, 20, 5, 6, rng=11)
    b = build_lookup_transformer(ks, vs, 20, 5, 6, rng=np.random.default_rng(11))
    assert np.array_equal(a['tok_emb'], b['tok_emb'])
    assert a['out_emb'] is a['tok_emb'] and taotp.is_tied(a)


# ----------------------------------------------------------------------------- the book's numbers

@pytest.mark.parametrize('n', [10, 100, 1000])
def test_book_counts(n):
    d, total, _ = BOOK[n]
    ks, vs = random_lookup_table(n, 5, 10, np.random.default_rng(n))
    iters = 0 if n == 1000 else 5000     # the count does not depend on the fit
    params = build_lookup_transformer(ks, vs, 10, 5, d - 3, optimization_iters=iters)
    assert taotp.config(params)['d_model'] == d
    assert taotp.count_params(params)['n_params'] == total
    assert taotp.count_non0_params(params)['n_params'] == OURS_NON0[n]


@pytest.mark.parametrize('V, B, l, t', [(10, 5, 5, 5), (37, 11, 3, 7), (100, 20, 4, 10)])
def test_count_closed_form(V, B, l, t):
    ks, vs = random_lookup_table(8, l, V, 0)
    d = t + 3
    tied = build_lookup_transformer(ks, vs, V, B, t, optimization_iters=0)
    untied = build_untied_transformer(ks, vs, V, B, l, t)
    assert taotp.count_params(tied)['n_params'] == d * (V + B + 1) + 4 * l * d * d
    assert taotp.count_params(untied)['n_params'] == d * (2 * V + B + 1) + 4 * l * d * d


def test_layout_is_fixed_under_layer_norm():
    ks, vs = random_lookup_table(10, 5, 10, 1)
    params = build_lookup_transformer(ks, vs, 10, 12, 5)
    L = lookup_layout(5)
    x = params['tok_emb'][:, None] + params['pos_emb'][None]
    assert np.allclose(taotp.layer_norm(x), x)
    assert np.all(params['tok_emb'][:, L['pos']] == 0) and np.all(params['pos_emb'][:, L['tok']] == 0)


# ----------------------------------------------------------------------------- precision

@pytest.mark.parametrize('n, vocab', [(10, 10), (10, 100), (10, 1000), (100, 10), (100, 100),
                                      (100, 1000), (1000, 100)])
def test_hundred_percent_at_book_sizes_with_random_prefixes(n, vocab):
    d = BOOK[n][0]
    for seed in range(2 if n * vocab < 10000 else 1):
        rng = np.random.default_rng([n, vocab, seed])
        ks, vs = random_lookup_table(n, 5, vocab, rng)
        params = build_lookup_transformer(ks, vs, vocab, 15, d - 3, rng=rng)
        assert lookup_precision(params, ks, vs, prefix_len=10, rng=rng) == 1.0
        assert lookup_precision(params, ks, vs, prefix_len=7, rng=rng, mode='keys') == 1.0


@pytest.mark.slow
def test_hundred_percent_1000_entries_vocab_1000():
    rng = np.random.default_rng(99)
    ks, vs = random_lookup_table(1000, 5, 1000, rng)
    params = build_lookup_transformer(ks, vs, 1000, 12, 30, rng=rng)
    assert lookup_precision(params, ks, vs, prefix_len=7, rng=rng) == 1.0


def test_agrees_with_plain_python_reference():
    rng = np.random.default_rng(8)
    ks, vs = random_lookup_table(60, 4, 25, rng)
    params = build_lookup_transformer(ks, vs, 25, 10, 8, rng=rng)
    queries = lookup_queries(ks, 6, 25, rng)
    out = taotp.decode_batch(queries, params, 1)[:, -1]
    want = [lookup_reference(q, ks, vs) for q in queries]
    assert out.tolist() == want
    # and one query through the ordinary decoder
    assert taotp.decode(queries[0], params, max_steps=1)[-1] == want[0]


def test_reference_examples():
    ks, vs = np.array([[1, 2, 3], [4, 5, 6]]), np.array([4, 7])
    assert lookup_reference([1, 2, 3, 4, 5, 6], ks, vs) == 7
    assert lookup_reference([9, 1, 2, 3], ks, vs) == 4
    assert lookup_reference([3, 2, 1], ks, vs) is None
    assert lookup_reference([5, 6], ks, vs) is None


@pytest.mark.parametrize('hardening, works', [(1.0, False), (10.0, False), (1e2, True),
                                              (1e4, True), (1e8, True), (1e15, True)])
def test_hardening_margin(hardening, works):
    ks, vs = random_lookup_table(100, 5, 100, 5)
    params = build_lookup_transformer(ks, vs, 100, 15, 10, hardening=hardening)
    precision = lookup_precision(params, ks, vs, 10, np.random.default_rng(1))
    assert (precision == 1.0) == works


def test_untied_precision():
    """Section 3.5.1: 1,000 entries, key length 5, vocab 1,000 -> about 100 % at 100 dims."""
    ks, vs = random_lookup_table(1000, 5, 1000, 2)
    wide = build_untied_transformer(ks, vs, 1000, 10, 5, 100, rng=3)
    narrow = build_untied_transformer(ks, vs, 1000, 10, 5, 10, rng=3)
    assert lookup_precision(wide, ks, vs, 5, 4) >= 0.99
    assert lookup_precision(narrow, ks, vs, 5, 4) < 0.9
    assert not taotp.is_tied(wide)


def test_vocab_10_ceiling():
    """1,000 entries over a 10-token vocabulary stay far from 100 % (puzzle 3.9)."""
    ks, vs = random_lookup_table(1000, 5, 10, 0)
    params = build_lookup_transformer(ks, vs, 10, 5, 30, optimization_iters=300)
    assert 0.15 < lookup_precision(params, ks, vs) < 0.4


def test_precision_sweep_shape_and_nan():
    out = precision_sweep([10, 100], [3, 10], [5, 8], runs=1, key_len=3, optimization_iters=50)
    assert out.shape == (2, 2, 2, 1)
    assert np.isnan(out[1, 0]).all()       # 100 keys of length 3 over 3 tokens do not exist
    assert np.all((out[0] >= 0) & (out[0] <= 1))


# ----------------------------------------------------------------------------- tables and text

def test_random_table_is_distinct_and_seeded():
    ks, vs = random_lookup_table(200, 2, 15, 3)
    assert len(np.unique(ks, axis=0)) == 200 and ks.max() < 15 and vs.max() < 15
    again, _ = random_lookup_table(200, 2, 15, 3)
    assert np.array_equal(ks, again)
    full, _ = random_lookup_table(9, 2, 3, 0)
    assert len(np.unique(full, axis=0)) == 9


def test_queries_adversarial_prefixes_come_from_keys():
    ks, vs = random_lookup_table(20, 3, 50, 0)
    q = lookup_queries(ks, 7, 50, 1, mode='keys')
    assert q.shape == (20, 10) and np.array_equal(q[:, 7:], ks)
    assert set(q[:, :7].ravel()) <= set(ks.ravel())


def test_ngram_table_of_romeo_and_juliet():
    text = [w for w in words(romeo_and_juliet()) if w[0].isalpha()]
    ks, vs, vocab = ngram_table(text, 1000, 5)
    assert ks.shape == (1000, 5) and len(np.unique(ks, axis=0)) == 1000
    assert len(vocab) == 1566                       # the book reports 1,540
    assert [vocab[i] for i in ks[0]] + [vocab[vs[0]]] == text[:6]


def test_ngram_table_skips_repeated_keys():
    text = 'a b c a b d a b c'.split()
    ks, vs, vocab = ngram_table(text, 10, 2)
    assert [[vocab[i] for i in k] for k in ks] == [['a', 'b']]
    assert vocab[vs[0]] == 'c'


# ----------------------------------------------------------------------------- errors

def test_error_paths():
    ks, vs = np.array([[1, 2], [3, 4]]), np.array([0, 1])
    with pytest.raises(ValueError, match=r'build_lookup_transformer: ks must have shape'):
        build_lookup_transformer(np.array([1, 2]), vs, 5, 4, 3)
    with pytest.raises(ValueError, match=r'vs must have shape \(n_entries,\) = \(2,\); got \(3,\)'):
        build_lookup_transformer(ks, np.array([0, 1, 2]), 5, 4, 3)
    with pytest.raises(ValueError, match=r'ks must hold ids in 0\.\.4; got 1\.\.7'):
        build_lookup_transformer(np.array([[1, 2], [3, 7]]), vs, 5, 4, 3)
    with pytest.raises(TypeError, match=r'ks must hold integer token ids; got dtype float64'):
        build_lookup_transformer(ks.astype(float), vs, 5, 4, 3)
    with pytest.raises(ValueError, match=r'keys must be distinct; got 2 keys with 1 repeats'):
        build_lookup_transformer(np.array([[1, 2], [1, 2]]), vs, 5, 4, 3)
    with pytest.raises(ValueError, match=r'block_size must be >= key length 2; got 1'):
        build_lookup_transformer(ks, vs, 5, 1, 3)
    with pytest.raises(ValueError, match=r'tok_dims must be >= 2 .*; got 1'):
        build_lookup_transformer(ks, vs, 5, 4, 1)
    with pytest.raises(ValueError, match=r'optimization_iters must be >= 0; got -1'):
        build_lookup_transformer(ks, vs, 5, 4, 3, optimization_iters=-1)
    with pytest.raises(TypeError, match=r'rng must be None, an int seed or a numpy Generator; '
                                        r'got str'):
        build_lookup_transformer(ks, vs, 5, 4, 3, rng='seed')
    with pytest.raises(ValueError, match=r'build_untied_transformer: prefix_len must equal the '
                                         r'key length 2; got 3'):
        build_untied_transformer(ks, vs, 5, 4, 3, 4)
    with pytest.raises(ValueError, match=r'random_lookup_table: only 9 distinct keys'):
        random_lookup_table(10, 2, 3)
    with pytest.raises(ValueError, match=r'random_lookup_table: n_entries, key_len and '
                                         r'vocab_size must be >= 1; got 0'):
        random_lookup_table(0, 2, 3)
    with pytest.raises(ValueError, match=r"lookup_queries: mode must be 'random' or 'keys'; "
                                         r"got 'evil'"):
        lookup_queries(ks, 2, 5, mode='evil')


def test_terminal_progress_writes_only_to_the_real_stderr(monkeypatch, capsys):
    import io
    import sys
    fake = io.StringIO()
    monkeypatch.setattr(sys, '__stderr__', fake)
    ks, vs = random_lookup_table(10, 3, 8, 0)
    build_lookup_transformer(ks, vs, 8, 3, 4, optimization_iters=150, stop_margin=None,
                             progress=taotp.terminal_progress)
    assert 'step 150/150' in fake.getvalue() and 'right' in fake.getvalue()
    out = capsys.readouterr()
    assert out.out == '' and out.err == ''


def test_hardening_demo_helpers():
    from matplotlib.figure import Figure
    ks, vs = random_lookup_table(30, 4, 20, 1)
    params = build_lookup_transformer(ks, vs, 20, 10, 6)
    query = lookup_queries(ks, 6, 20, 2)[0]
    soft = taotp.with_hardening(params, 1.0)
    assert np.abs(soft['layers'][0]['Q']).max() == 1.0
    assert np.abs(params['layers'][0]['Q']).max() == pytest.approx(1e8)   # original untouched
    fig = taotp.draw_hardening(Figure(), params, ks, vs, query, 1e8)
    assert '100% of the table right' in fig.axes[0].get_title()
    fig = taotp.draw_hardening(Figure(), params, ks, vs, query, 1.0)
    assert '100% of the table right' not in fig.axes[0].get_title()


def test_exhaustive_small_table():
    """Every key of length 2 over 3 tokens (value = the larger token), every input up to the
    block size: the program agrees with the plain-Python reference on all 1,089 inputs."""
    import itertools
    ks = np.array(list(itertools.product(range(3), repeat=2)))
    vs = ks.max(axis=1)
    params = build_lookup_transformer(ks, vs, 3, 6, 4, rng=0)
    checked = 0
    for n in range(2, 7):
        inputs = np.array(list(itertools.product(range(3), repeat=n)))
        got = taotp.transformer_batch(inputs, params)[:, -1].argmax(-1)
        assert got.tolist() == [lookup_reference(x, ks, vs) for x in inputs]
        checked += len(inputs)
    assert checked == 1089
