"""tracr next to the book: the import (taotp.interop.from_tracr) and the stored measurements.

The base package never needs JAX: ``import taotp`` and ``import taotp.interop`` load none
of it.  With the optional extra (``pip install -e ".[tracr]"``) the slow tests compile
tracr's programs, recompute every number of ``taotp/data/records_tracr.json`` and show
that an imported causal model prints what tracr's own forward pass prints.
"""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import taotp
from taotp.interop import from_tracr

STORED = Path(taotp.__file__).parent / 'data' / 'records_tracr.json'
HAVE_TRACR = importlib.util.find_spec('tracr') is not None
needs_tracr = pytest.mark.skipif(not HAVE_TRACR, reason='tracr is not installed: '
                                 'pip install -e ".[tracr]" (tracr-pypi, JAX) to run this')


def test_importing_the_package_and_interop_loads_no_jax():
    code = ('import sys, taotp, taotp.interop, taotp.interop.tracr_tasks; '
            'print(sorted(m for m in ("jax", "haiku", "tracr") if m in sys.modules))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == '[]', out.stdout


def _fake_model(causal=True, layer_norm=False, numerical=False, bias=0.0):
    """Just enough of an assembled tracr model for the checks that come before any JAX."""
    config = SimpleNamespace(causal=causal, layer_norm=layer_norm, num_heads=1, key_size=1,
                             num_layers=1, activation_function=SimpleNamespace(__name__='relu'))
    output = SimpleNamespace() if numerical else SimpleNamespace(encoding_map={1: 0})
    params = {'token_embed': {'embeddings': np.zeros((3, 2))},
              'transformer/layer_0/mlp/linear_1': {'w': np.zeros((2, 1)), 'b': np.full(1, bias)}}
    return SimpleNamespace(model_config=config, output_encoder=output, params=params,
                           input_encoder=SimpleNamespace(encoding_map={1: 0, 'BOS': 1}))


@pytest.mark.parametrize('kwargs, match', [
    ({'causal': False}, r"from_tracr: this model cannot be imported: it is not causal"),
    ({'layer_norm': True}, r'it uses layer norm'),
    ({'numerical': True}, r'its output is numerical'),
    ({'bias': 1.0}, r'transformer/layer_0/mlp/linear_1 has a non-zero bias')])
def test_what_cannot_be_imported_is_refused_with_the_reason(kwargs, match):
    with pytest.raises(ValueError, match=match):
        from_tracr(_fake_model(**kwargs))


def test_the_stored_measurements_are_complete():
    stored = json.loads(STORED.read_text())
    runs = {(r['task'], r['causal'], r['mlp_exactness']): r for r in stored['runs']}
    assert set(runs) == {('sort', False, 100), ('sort', False, 1000), ('lookup', True, 100),
                         ('reverse', False, 100), ('hist', False, 100), ('length', False, 100),
                         ('hist', True, 100), ('length', True, 100)}
    sort = runs['sort', False, 100]
    assert (sort['total'], sort['non0']) == (58_707, 799)      # the count the issue reports
    assert runs['sort', False, 1000]['right'] == runs['sort', False, 1000]['checked']
    for key in (('lookup', True, 100), ('hist', True, 100), ('length', True, 100)):
        assert runs[key]['imported'] == runs[key]['checked']
        assert runs[key]['imported_max_diff'] < 1e-5


@needs_tracr
@pytest.mark.slow
def test_an_imported_causal_model_prints_what_tracr_prints():
    from taotp.interop import tracr_tasks, tracr_vocabulary
    model = tracr_tasks.compile_task('hist', causal=True)
    params = from_tracr(model)
    vocab = tracr_vocabulary(model)
    inputs = tracr_tasks.task_inputs('hist')
    decoded, scores = tracr_tasks.run(model, inputs)
    for x, theirs, score in zip(inputs, decoded, scores):
        ids = [vocab.index(t) for t in ['BOS'] + x]
        logits = taotp.transformer(ids, norm='none', **params)[1:]
        assert [vocab[i] for i in logits.argmax(-1)] == theirs
        assert theirs == [x[:i + 1].count(t) for i, t in enumerate(x)]   # a running histogram
    with pytest.raises(ValueError, match='not causal'):
        from_tracr(tracr_tasks.compile_task('reverse'))


@needs_tracr
@pytest.mark.slow
def test_craft_size_counts_what_assembling_allocates():
    from taotp.interop import tracr_size, tracr_tasks
    from taotp.lookup import random_lookup_table
    ks, vs = random_lookup_table(100, 2, 10, rng=0)
    model = tracr_tasks.compile_task('lookup', causal=True, keys=ks, values=vs)
    assert tracr_tasks.craft_size('lookup', ks, vs)[0] == tracr_size(model)[0]
    assert tracr_tasks.craft_size('hist')[0] == tracr_size(tracr_tasks.compile_task('hist'))[0]


@needs_tracr
@pytest.mark.slow
def test_the_stored_tracr_numbers_are_recomputed():
    """Every number the Records chapter loads, compiled again here (a few minutes).

    Set TAOTP_WRITE_RECORDS=1 to store a new run instead (then re-execute the chapter).
    """
    from taotp.interop import tracr_tasks
    fresh = tracr_tasks.measure_all()
    if os.environ.get('TAOTP_WRITE_RECORDS'):
        STORED.write_text(json.dumps(fresh, indent=1) + '\n')
    stored = json.loads(STORED.read_text())

    def comparable(record):
        runs = [{k: v for k, v in r.items() if k != 'imported_max_diff'} for r in record['runs']]
        return {**record, 'runs': runs}
    assert comparable(fresh) == comparable(stored), (
        'tracr numbers differ from taotp/data/records_tracr.json (another tracr or JAX '
        'version?); re-run with TAOTP_WRITE_RECORDS=1 and re-execute book/12_records.py')
    assert all(r.get('imported_max_diff', 0) < 1e-5 for r in fresh['runs'])
