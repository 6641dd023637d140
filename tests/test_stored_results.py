"""Results that a page loads instead of computing them, each recomputed by a slow test.

A book notebook runs in at most 10 s under nbval (CONTRIBUTING, "Tests and budgets").  A
number in its prose whose computation would take longer is stored in ``taotp/data/`` (small
JSON), the page loads it and says so next to it, and here

* a ``slow`` test recomputes the whole result with the package's own functions and compares
  it with the stored file (``TAOTP_WRITE_RECORDS=1`` stores a fresh one instead; then
  re-execute the chapter);
* a default test recomputes a cheap part of it (a row, a few sequences) and compares, so a
  change to the package that moves the result fails at once, not only in the slow tier.

| file | page | what is stored | cheap part checked by default |
|---|---|---|---|
| ``ch03_precision_sweep.json`` | Ch. 3, *Limits* | ``lookup.precision_sweep`` on the page's slice | the 10-entry, vocab-10 row |
| ``ch03_lookup_1000.json`` | Ch. 3, *Does it work?* | the 1,000-entry, vocab-100 table's fit and its two precisions | the fit's first 10 steps (its loss) |
| ``ch10_network_kl.json`` | Ch. 10, *KL against sequence length* | the network's mean KL per position over 500 sequences, and its largest gap to the formula | the first 20 sequences |
"""
import json
import os
from pathlib import Path

import numpy as np
import pytest

import taotp
from taotp.programs import CATALOGUE

DATA = Path(taotp.__file__).parent / 'data'
WRITE = bool(os.environ.get('TAOTP_WRITE_RECORDS'))


def stored(name):
    return json.loads((DATA / name).read_text())


def store(name, record):
    (DATA / name).write_text(json.dumps(record, indent=1) + '\n')


# ----------------------------------------------------------------------------- Chapter 3

SWEEP = 'ch03_precision_sweep.json'
SWEEP_ARGUMENTS = {'entries': [10, 100], 'vocab_sizes': [10, 100], 'd_models': [5, 6, 8, 10, 13],
                   'runs': 1, 'optimization_iters': 1000}
# The fits run through BLAS/LAPACK: on another CPU a width at the edge of success may get
# one more or one fewer key right.  Allowed: 1 key of a 10-entry table, 2 of 100.
SWEEP_TOLERANCE = 0.1


def precision_sweep(**arguments):
    return taotp.lookup.precision_sweep(arguments['entries'], arguments['vocab_sizes'],
                                        arguments['d_models'], runs=arguments['runs'],
                                        optimization_iters=arguments['optimization_iters'])


def as_array(precision):
    return np.array(precision, dtype=float)          # None (an impossible cell) -> nan


def test_ch03_the_stored_sweep_is_the_pages_slice():
    record = stored(SWEEP)
    assert record['arguments'] == SWEEP_ARGUMENTS
    sweep = as_array(record['precision'])
    assert sweep.shape == (2, 2, 5, 1) and np.all((sweep >= 0) & (sweep <= 1))
    assert np.all(sweep[:, :, -1] == 1.0)         # every table fits at the widest d_model


def test_ch03_the_first_row_of_the_sweep_is_recomputed():
    row = precision_sweep(**{**SWEEP_ARGUMENTS, 'entries': [10], 'vocab_sizes': [10]})
    np.testing.assert_allclose(row[0, 0], as_array(stored(SWEEP)['precision'])[0, 0],
                               atol=SWEEP_TOLERANCE)


@pytest.mark.slow
def test_ch03_the_stored_sweep_is_recomputed():
    fresh = precision_sweep(**SWEEP_ARGUMENTS)
    if WRITE:
        store(SWEEP, {'page': 'book/03_lookup_table.py, Limits',
                      'computed_by': 'taotp.lookup.precision_sweep(**arguments)',
                      'recomputed_by': 'tests/test_stored_results.py (slow tier)',
                      'arguments': SWEEP_ARGUMENTS,
                      'precision': np.where(np.isnan(fresh), None, fresh).tolist()})
    np.testing.assert_allclose(fresh, as_array(stored(SWEEP)['precision']), atol=SWEEP_TOLERANCE)


LOOKUP_1000 = 'ch03_lookup_1000.json'
LOOKUP_ARGUMENTS = {'entries': 1000, 'vocab_size': 100, 'key_len': 5, 'd_model': 33,
                    'block_size': 15, 'prefix_len': 10, 'seed': [1000, 100, 0]}
EARLY = 10          # gradient steps the default tier runs (and compares the loss after)


def lookup_table_1000(a=LOOKUP_ARGUMENTS):
    """The page's table and the rng right after drawing it (the fit continues from there)."""
    rng = np.random.default_rng(a['seed'])
    ks, vs = taotp.lookup.random_lookup_table(a['entries'], a['key_len'], a['vocab_size'], rng)
    return ks, vs, rng


def early_loss(a=LOOKUP_ARGUMENTS):
    ks, vs, rng = lookup_table_1000(a)
    info = taotp.lookup.fit_hashes(ks, vs, a['vocab_size'], a['d_model'] - 3,
                                   optimization_iters=EARLY, rng=rng, stop_margin=None)[2]
    return info['loss']


def test_ch03_the_stored_1000_entry_row_is_the_pages_case():
    record = stored(LOOKUP_1000)
    assert record['arguments'] == LOOKUP_ARGUMENTS
    book = CATALOGUE['lookup-1000-untrained'].build()        # the page reads its width here
    assert LOOKUP_ARGUMENTS['d_model'] == taotp.config(book)['d_model']
    assert 0 < record['iters'] < 5000 and record['accuracy'] == 1.0
    assert all(0 <= p <= 1 for p in record['precision'])


def test_ch03_the_first_steps_of_the_1000_entry_fit_are_recomputed():
    np.testing.assert_allclose(early_loss(), stored(LOOKUP_1000)[f'loss_after_{EARLY}_steps'],
                               rtol=1e-9)


@pytest.mark.slow
def test_ch03_the_stored_1000_entry_row_is_recomputed():
    a = LOOKUP_ARGUMENTS
    ks, vs, rng = lookup_table_1000(a)              # the page's loop body, for this case
    E, M, info = taotp.lookup.fit_hashes(ks, vs, a['vocab_size'], a['d_model'] - 3, rng=rng)
    params = taotp.lookup.wire_lookup_transformer(E, M, a['block_size'])
    precision = [taotp.lookup.lookup_precision(params, ks, vs, a['prefix_len'], rng),
                 taotp.lookup.lookup_precision(params, ks, vs, a['prefix_len'], rng, mode='keys')]
    fresh = {'iters': info['iters'], 'accuracy': info['accuracy'], 'precision': precision,
             f'loss_after_{EARLY}_steps': early_loss(a)}
    if WRITE:
        store(LOOKUP_1000, {'page': 'book/03_lookup_table.py, Does it work?',
                            'computed_by': 'build_lookup_transformer (fit_hashes, then '
                                           'wire_lookup_transformer); lookup_precision with random '
                                           'and with key prefixes',
                            'recomputed_by': 'tests/test_stored_results.py (slow tier)',
                            'arguments': a, **fresh})
    record = stored(LOOKUP_1000)
    assert record['iters'] == fresh['iters'] and record['accuracy'] == fresh['accuracy']
    assert record['precision'] == fresh['precision']
    np.testing.assert_allclose(fresh[f'loss_after_{EARLY}_steps'],
                               record[f'loss_after_{EARLY}_steps'], rtol=1e-9)


# ----------------------------------------------------------------------------- Chapter 10

NETWORK_KL = 'ch10_network_kl.json'
KL_ARGUMENTS = {'S': 5, 'P_seed': 0, 'lags': [1, 2, 3], 'T': 128, 'sequences': 500,
                'X_seed': 1, 'lam': 500.0, 'beta': 100.0}
FIRST = 20          # sequences the default tier (and the page) run through the network


def kl_inputs(a=KL_ARGUMENTS):
    """What the page computes before the forward pass: P, X, the true laws, the network, the formula."""
    sel = taotp.selective
    P = sel.transition_matrix(a['S'], np.random.default_rng(a['P_seed']))
    lags = tuple(a['lags'])
    X, true = sel.sample_batch(P, lags, a['T'], a['sequences'], rng=np.random.default_rng(a['X_seed']))
    network = sel.build_selective_induction(P, lags, a['T'], lam=a['lam'], beta=a['beta'])
    formula = sel.construction_predictive(P, lags, X, a['beta'])
    return P, lags, X, true, network, formula


def network_kl(P, lags, X, true, own, formula):
    """The network's mean KL per position, and its largest gap to the formula per position."""
    curve = taotp.selective.kl_curves(P, lags, X, true, {'network': own})['network']
    return curve, np.abs(own - formula).max(axis=(0, 2))


def test_ch10_the_stored_curve_is_the_pages_experiment():
    record = stored(NETWORK_KL)
    assert record['arguments'] == KL_ARGUMENTS
    for key in ('kl_curve', 'gap', f'kl_curve_first_{FIRST}', f'gap_first_{FIRST}'):
        assert len(record[key]) == KL_ARGUMENTS['T'], key
    assert np.all(np.array(record[f'gap_first_{FIRST}']) <= np.array(record['gap']))


def test_ch10_the_first_sequences_are_recomputed():
    P, lags, X, true, network, formula = kl_inputs()
    own = network.next_token_probs(X[:FIRST])
    curve, gap = network_kl(P, lags, X[:FIRST], true[:FIRST], own, formula[:FIRST])
    record = stored(NETWORK_KL)
    np.testing.assert_allclose(curve, record[f'kl_curve_first_{FIRST}'], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gap, record[f'gap_first_{FIRST}'], rtol=1e-6, atol=1e-9)


@pytest.mark.slow
def test_ch10_the_stored_curve_is_recomputed():
    P, lags, X, true, network, formula = kl_inputs()
    own = network.next_token_probs(X)
    curve, gap = network_kl(P, lags, X, true, own, formula)
    first_curve, first_gap = network_kl(P, lags, X[:FIRST], true[:FIRST], own[:FIRST],
                                        formula[:FIRST])
    if WRITE:
        store(NETWORK_KL, {'page': 'book/10_selective_induction.py, KL against sequence length',
                           'computed_by': 'the network forward pass (next_token_probs) over the '
                                          'sampled batch; kl_curves; |network - formula|',
                           'recomputed_by': 'tests/test_stored_results.py (slow tier)',
                           'arguments': KL_ARGUMENTS, 'kl_curve': curve.tolist(),
                           'gap': gap.tolist(), f'kl_curve_first_{FIRST}': first_curve.tolist(),
                           f'gap_first_{FIRST}': first_gap.tolist()})
    record = stored(NETWORK_KL)
    np.testing.assert_allclose(curve, record['kl_curve'], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gap, record['gap'], rtol=1e-6, atol=1e-9)
