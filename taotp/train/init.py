"""Random starting points for training, in the book's params format (NumPy only).

    >>> from taotp.train.init import init_params
    >>> p = init_params(vocab_size=5, block_size=8, d_model=6, n_layers=2, n_heads=[1, 2],
    ...                 d_ff=[12, 0], rng=np.random.default_rng(0))
    >>> taotp.config(p)['n_heads'], taotp.config(p)['d_ff'], taotp.is_tied(p)
    ([1, 2], [12, 0], True)
"""
import numbers

import numpy as np

from ..params import base_layer, base_params


def per_layer(value, n_layers, name, where='init_params'):
    """``value`` repeated for every layer, or checked as one entry per layer."""
    if isinstance(value, (list, tuple)):
        if len(value) != n_layers:
            raise ValueError(f'{where}: {name} must have one entry per layer ({n_layers}); '
                             f'got {list(value)}')
        values = list(value)
    else:
        values = [value] * n_layers
    for v in values:
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral)
                              or v < 0):
            raise ValueError(f'{where}: {name} must be integers >= 0; got {value!r}')
    return values


def init_params(vocab_size, block_size, d_model, n_layers=1, n_heads=1, d_head=None, d_ff=None,
                tied=True, position_sizes=None, emb_scale=1.0, rng=None):
    """A random program of the given shape, ready to train.

    Args:
        vocab_size, block_size, d_model: the sizes of the embeddings.
        n_layers: number of layers (0 gives an embeddings-only model, as in Chapter 2).
        n_heads, d_head, d_ff: per layer, one number or a list with one entry per
            layer.  ``d_head`` defaults to ``d_model // n_heads``; ``d_ff``
            defaults to ``4 * d_model``; ``d_ff = 0`` is an attention-only layer.
        tied: ``out_emb`` is ``tok_emb`` (the book's default); ``False`` draws
            its own ``out_emb``.
        position_sizes: ``None`` for one position table of ``block_size`` rows
            (the book); a list of row counts for several tables summed into
            the stream (the multi-level position ids of Chapter 9).
        emb_scale: standard deviation of the embedding entries.
        rng: a ``numpy.random.Generator`` (default: seed 0).

    Weights are normal with variance ``1 / fan_in``; the output projections
    ``P`` and ``M2`` are further divided by ``sqrt(2 n_layers)``; biases
    start at 0 and layer norms at ``gamma = 1, beta = 0`` (vectors of
    ``d_model`` entries, so they can be trained).
    """
    where = 'init_params'
    rng = np.random.default_rng(0) if rng is None else rng
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'{where}: rng must be a numpy.random.Generator; got {type(rng).__name__}')
    for name, v in (('vocab_size', vocab_size), ('block_size', block_size),
                    ('d_model', d_model)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f'{where}: {name} must be an integer >= 1; got {v!r}')
    if isinstance(n_layers, bool) or not isinstance(n_layers, numbers.Integral) or n_layers < 0:
        raise ValueError(f'{where}: n_layers must be an integer >= 0; got {n_layers!r}')
    heads = per_layer(n_heads, n_layers, 'n_heads')
    d_heads = [d_model // h if h else 0 for h in heads] if d_head is None else \
        per_layer(d_head, n_layers, 'd_head')
    d_ffs = per_layer(4 * d_model if d_ff is None else d_ff, n_layers, 'd_ff')
    for h, dh in zip(heads, d_heads):
        if h and not dh:
            raise ValueError(f'{where}: d_head must be >= 1 for a layer with heads; got '
                             f'n_heads {n_heads!r}, d_head {d_head!r} with d_model {d_model}')
    params = base_params(vocab_size, block_size, d_model)
    params['tok_emb'] = emb_scale * rng.normal(size=(vocab_size, d_model))
    params['out_emb'] = params['tok_emb'] if tied else \
        emb_scale * rng.normal(size=(vocab_size, d_model))
    if position_sizes is None:
        params['pos_emb'] = emb_scale * rng.normal(size=(block_size, d_model))
    else:
        params['pos_emb'] = [emb_scale * rng.normal(size=(int(rows), d_model))
                             for rows in position_sizes]
    depth = np.sqrt(2 * max(n_layers, 1))

    def normal(shape, fan_in, extra=1.0):
        return rng.normal(size=shape) / np.sqrt(max(fan_in, 1)) / extra

    for h, dh, ff in zip(heads, d_heads, d_ffs):
        layer = base_layer(h, d_model, ff, dh)
        for key in ('Q', 'K', 'V'):
            layer[key] = normal(layer[key].shape, d_model)
        layer['P'] = normal(layer['P'].shape, h * dh, depth)
        layer['M1'] = normal(layer['M1'].shape, d_model)
        layer['M2'] = normal(layer['M2'].shape, ff, depth)
        for ln in ('ln1', 'ln2'):
            layer[ln] = {'gamma': np.ones(d_model), 'beta': np.zeros(d_model)}
        params['layers'].append(layer)
    params['lnf'] = {'gamma': np.ones(d_model), 'beta': np.zeros(d_model)}
    return params
