"""Trained programs on disk: a params dict as a small ``.npz`` file (NumPy only, no PyTorch).

    >>> import tempfile, os
    >>> from taotp.train.store import load_params, save_params
    >>> params = taotp.random_params(np.random.default_rng(0), n_layers=1)
    >>> path = os.path.join(tempfile.mkdtemp(), 'tiny.npz')
    >>> save_params(path, params, meta={'steps': 10})
    >>> again, meta = load_params(path, with_meta=True)
    >>> taotp.params_equal(params, again), meta
    (True, {'steps': 10})

Arrays are stored as float64 by default (the loaded program computes the same
logits bit for bit); ``dtype='float32'`` halves the file and rounds each weight
to about 7 digits (nothing is lost for a model trained in float32).  Loading
always gives float64 arrays, the book's format.  A tied ``out_emb`` is stored
once; scalar layer-norm entries stay scalars.  ``meta`` is any JSON-able dict
(settings, metrics).
"""
import json

import numpy as np

from ..params import is_tied, validate_params

_LAYER = ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2')


def _flat(params):
    out = {'tok_emb': params['tok_emb']}
    if not is_tied(params):
        out['out_emb'] = params['out_emb']
    tables = params['pos_emb']
    if isinstance(tables, (list, tuple)):
        out.update({f'pos_emb.{i}': t for i, t in enumerate(tables)})
    else:
        out['pos_emb'] = tables
    for i, layer in enumerate(params['layers']):
        out.update({f'layers.{i}.{k}': layer[k] for k in _LAYER})
        for ln in ('ln1', 'ln2'):
            out.update({f'layers.{i}.{ln}.{k}': v for k, v in layer[ln].items()})
    out.update({f'lnf.{k}': v for k, v in params['lnf'].items()})
    return out


def save_params(path, params, meta=None, dtype=None):
    """Write ``params`` (validated) and an optional JSON-able ``meta`` dict to ``path`` (.npz)."""
    validate_params(params)
    arrays = {k: np.asarray(v) if dtype is None else np.asarray(v, dtype=dtype)
              for k, v in _flat(params).items()}
    arrays['__meta__'] = np.array(json.dumps(meta or {}, sort_keys=True))
    np.savez_compressed(path, **arrays)


def _value(arr):
    return float(arr) if arr.ndim == 0 else np.array(arr, dtype=np.float64)


def load_params(path, with_meta=False):
    """The params dict saved by ``save_params`` (and its ``meta`` if ``with_meta``)."""
    with np.load(path, allow_pickle=False) as data:
        items = {k: data[k] for k in data.files}
    meta = json.loads(str(items.pop('__meta__'))) if '__meta__' in items else {}
    params = {'tok_emb': _value(items['tok_emb']), 'layers': [], 'lnf': {}}
    params['out_emb'] = _value(items['out_emb']) if 'out_emb' in items else params['tok_emb']
    if 'pos_emb' in items:
        params['pos_emb'] = _value(items['pos_emb'])
    else:
        n = sum(k.startswith('pos_emb.') for k in items)
        params['pos_emb'] = [_value(items[f'pos_emb.{i}']) for i in range(n)]
    i = 0
    while f'layers.{i}.Q' in items:
        layer = {k: _value(items[f'layers.{i}.{k}']) for k in _LAYER}
        for ln in ('ln1', 'ln2'):
            layer[ln] = {k: _value(items[f'layers.{i}.{ln}.{k}']) for k in ('gamma', 'beta')
                         if f'layers.{i}.{ln}.{k}' in items}
        params['layers'].append(layer)
        i += 1
    params['lnf'] = {k: _value(items[f'lnf.{k}']) for k in ('gamma', 'beta')
                     if f'lnf.{k}' in items}
    validate_params(params)
    return (params, meta) if with_meta else params


def load_meta(path):
    """Only the ``meta`` dict of a saved program."""
    with np.load(path, allow_pickle=False) as data:
        return json.loads(str(data['__meta__'])) if '__meta__' in data.files else {}
