"""The params-dict format of Chapter 1: building, counting and validating it.

A program is a dict::

    {'tok_emb': (vocab, d_model), 'pos_emb': (block_size, d_model),
     'out_emb': (vocab, d_model), 'layers': [layer, ...], 'lnf': {'gamma', 'beta'}}

and each layer is ``base_layer(...)``'s dict of ``Q K V P M1 b1 M2 b2 ln1 ln2``.
``pos_emb`` may also be a list of tables (one per position level, used by the
position-coupling chapter); every other chapter uses a single table.
"""
from functools import partial
from numbers import Real

import numpy as np

LAYER_KEYS = ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2', 'ln1', 'ln2')
TOP_KEYS = ('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf')


class ParamsError(ValueError):
    """A malformed program or input; the message names the field and the rule."""


class HumanReadableDict(dict):
    """A dict whose repr prints numbers with thousands separators."""

    def __repr__(self):
        return '{' + ', '.join(f'{k}: {v:,}' for k, v in self.items()) + '}'


def base_layer(n_heads, d_model, d_ff, d_head):
    """An all-zero layer; thanks to the residual connections it is the identity."""
    layer = {name: np.zeros((n_heads, d_model, d_head)) for name in ('Q', 'K', 'V', 'P')}
    layer['M1'], layer['b1'] = np.zeros((d_model, d_ff)), np.zeros(d_ff)
    layer['M2'], layer['b2'] = np.zeros((d_ff, d_model)), np.zeros(d_model)
    layer['ln1'] = {'gamma': 1.0, 'beta': 0.0}
    layer['ln2'] = {'gamma': 1.0, 'beta': 0.0}
    return layer


def base_params(vocab_size, block_size, d_model):
    """All-zero embeddings, no layers, default final layer norm."""
    def table(rows):
        return np.zeros((rows, d_model))
    return {'tok_emb': table(vocab_size), 'out_emb': table(vocab_size),
            'pos_emb': table(block_size), 'layers': [], 'lnf': {'gamma': 1.0, 'beta': 0.0}}


def _tables(pos_emb):
    return list(pos_emb) if isinstance(pos_emb, (list, tuple)) else [pos_emb]


def is_tied(params):
    """True when out_emb is element-wise equal to tok_emb (then counted once)."""
    tok, out = params['tok_emb'], params['out_emb']
    return np.shape(tok) == np.shape(out) and bool(np.all(tok == out))


def count_params(params, count=lambda x: x.size):
    """The book's parameter census: total, each embedding, and the layers.

    Layer norms are never counted; ``out_emb`` is counted only when it is not
    tied to ``tok_emb``.  ``count_non0_params`` is the same census of non-zeros.
    """
    embs = {'tok_emb': count(np.asarray(params['tok_emb'])),
            'pos_emb': sum(int(count(np.asarray(t))) for t in _tables(params['pos_emb']))}
    if not is_tied(params):
        embs['out_emb'] = count(np.asarray(params['out_emb']))
    non_emb = 0
    for layer in params['layers']:
        for value in layer.values():
            if isinstance(value, np.ndarray):
                non_emb += count(value)
    embs = {k: int(v) for k, v in embs.items()}
    return HumanReadableDict({'n_params': sum(embs.values()) + int(non_emb)}
                             | embs | {'non_emb': int(non_emb)})


count_non0_params = partial(count_params, count=lambda x: int((x != 0).sum()))


def config(params):
    """Shape summary: layers, heads, d_model, d_head, d_ff, vocab, block size."""
    layers = params['layers']
    return {
        'n_layers': len(layers),
        'n_heads': [np.shape(l['Q'])[0] for l in layers],
        'd_model': np.shape(params['tok_emb'])[1],
        'd_head': [np.shape(l['Q'])[2] for l in layers],
        'd_ff': [np.shape(l['M1'])[1] for l in layers],
        'vocab_size': np.shape(params['tok_emb'])[0],
        'block_size': block_size(params),
    }


def block_size(params):
    """Longest sequence the program accepts: rows of its (smallest) pos_emb."""
    return min(np.shape(t)[0] for t in _tables(params['pos_emb']))


# ----------------------------------------------------------------------------- validation

def _array_problem(where, value, ndim):
    """Return (array, problem) for a field that must be a finite float array of rank ndim."""
    if isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return None, f'{where} is a list that is not a numeric array'
    if not isinstance(value, np.ndarray):
        return None, f'{where} must be a NumPy array; got {type(value).__name__}'
    if value.dtype.kind not in 'biuf':
        return None, f'{where} must hold real numbers; got dtype {value.dtype}'
    if value.ndim != ndim:
        return None, f'{where} must have {ndim} dimensions; got shape {value.shape}'
    if value.dtype.kind == 'f' and not np.all(np.isfinite(value)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(value))[0])
        return None, f'{where} holds a non-finite value ({value[bad]}) at index {bad}'
    return value, None


def _shape_problem(where, arr, expected, names):
    if arr is not None and arr.shape != expected:
        return f'{where} has shape {arr.shape}, expected ({names}) = {expected}'
    return None


def _norm_problems(where, ln, d_model):
    if not isinstance(ln, dict):
        return [f'{where} must be a dict with gamma and beta; got {type(ln).__name__}']
    problems = []
    extra = set(ln) - {'gamma', 'beta'}
    if extra:
        problems.append(f'{where} has unknown keys {sorted(extra)}; expected gamma and beta')
    for key in ('gamma', 'beta'):
        if key not in ln:
            continue  # layer_norm's defaults apply
        value = ln[key]
        if np.ndim(value) == 0:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.ndarray)):
                problems.append(f'{where}[{key!r}] must be a number; got {type(value).__name__}')
            elif not np.isfinite(float(value)):
                problems.append(f'{where}[{key!r}] is not finite; got {value}')
            continue
        arr, problem = _array_problem(f'{where}[{key!r}]', value, 1)
        problem = problem or _shape_problem(f'{where}[{key!r}]', arr, (d_model,), 'd_model')
        if problem:
            problems.append(problem)
    return problems


def param_problems(params):
    """Every problem found in ``params``, as a list of messages (empty if valid)."""
    if not isinstance(params, dict):
        return [f'expected a params dict with keys {", ".join(TOP_KEYS)}; '
                f'got {type(params).__name__}']
    problems = [f'missing key {k!r}' for k in TOP_KEYS if k not in params]
    extra = sorted(set(params) - set(TOP_KEYS))
    if extra:
        problems.append(f'unknown keys {extra}; expected only {", ".join(TOP_KEYS)}')
    if problems:
        return problems
    tok, p = _array_problem("'tok_emb'", params['tok_emb'], 2)
    if p:
        return [p]
    vocab, d_model = tok.shape
    out, p = _array_problem("'out_emb'", params['out_emb'], 2)
    problems += [x for x in (p, _shape_problem("'out_emb'", out, (vocab, d_model),
                                               'vocab_size, d_model')) if x]
    tables = _tables(params['pos_emb'])
    if not tables:
        problems.append("'pos_emb' is an empty list; expected at least one table")
    for i, table in enumerate(tables):
        where = "'pos_emb'" if len(tables) == 1 and not isinstance(params['pos_emb'], list) \
            else f"'pos_emb'[{i}]"
        arr, p = _array_problem(where, table, 2)
        if p:
            problems.append(p)
        elif arr.shape[1] != d_model:
            problems.append(f'{where} has shape {arr.shape}, expected (block_size, d_model) '
                            f'with d_model = {d_model} (from tok_emb)')
        elif arr.shape[0] == 0:
            problems.append(f'{where} has no rows; block_size must be at least 1')
    problems += _norm_problems("'lnf'", params['lnf'], d_model)
    layers = params['layers']
    if not isinstance(layers, (list, tuple)):
        return problems + [f"'layers' must be a list of layer dicts; got {type(layers).__name__}"]
    for i, layer in enumerate(layers):
        problems += _layer_problems(f'layers[{i}]', layer, d_model)
    return problems


def _layer_problems(where, layer, d_model):
    if not isinstance(layer, dict):
        return [f'{where} must be a dict of {" ".join(LAYER_KEYS)}; got {type(layer).__name__}']
    problems = [f'{where} is missing {k!r}' for k in LAYER_KEYS if k not in layer]
    extra = sorted(set(layer) - set(LAYER_KEYS))
    if extra:
        problems.append(f'{where} has unknown keys {extra}; expected {" ".join(LAYER_KEYS)}')
    if problems:
        return problems
    arrays = {}
    for key, ndim in (('Q', 3), ('K', 3), ('V', 3), ('P', 3), ('M1', 2), ('b1', 1), ('M2', 2),
                      ('b2', 1)):
        arrays[key], p = _array_problem(f'{where}[{key!r}]', layer[key], ndim)
        if p:
            problems.append(p)
    if problems:
        return problems
    n_heads, _, d_head = arrays['Q'].shape
    d_value = arrays['V'].shape[2]
    d_ff = arrays['M1'].shape[1]
    expected = {
        'Q': ((n_heads, d_model, d_head), 'n_heads, d_model, d_head'),
        'K': ((n_heads, d_model, d_head), 'n_heads, d_model, d_head'),
        'V': ((n_heads, d_model, d_value), 'n_heads, d_model, d_head'),
        'P': ((n_heads, d_model, d_value), 'n_heads, d_model, d_head'),
        'M1': ((d_model, d_ff), 'd_model, d_ff'),
        'b1': ((d_ff,), 'd_ff'),
        'M2': ((d_ff, d_model), 'd_ff, d_model'),
        'b2': ((d_model,), 'd_model'),
    }
    for key, (shape, names) in expected.items():
        p = _shape_problem(f'{where}[{key!r}]', arrays[key], shape, names)
        if p:
            problems.append(p)
    if d_head == 0 and n_heads > 0:
        problems.append(f"{where}['Q'] has d_head = 0; use n_heads = 0 for a layer without attention")
    for key in ('ln1', 'ln2'):
        problems += _norm_problems(f'{where}[{key!r}]', layer[key], d_model)
    return problems


def validate_params(params):
    """Raise ``ParamsError`` naming every malformed field; return ``params`` if valid."""
    problems = param_problems(params)
    if problems:
        raise ParamsError('validate_params: ' + '\n  '.join(problems))
    return params


def check_tokens(tokens, params, name='tokens', allow_batch=True, window=False):
    """Return ``tokens`` as an int array after checking ids and length against ``params``."""
    try:
        arr = np.asarray(tokens)
    except Exception as exc:  # ragged lists and the like
        raise ParamsError(f'{name} is not an array of token ids ({exc})') from None
    if arr.dtype == bool or arr.dtype.kind not in 'iuf':
        raise ParamsError(f'{name} must hold integer token ids; got dtype {arr.dtype}')
    if arr.dtype.kind == 'f':
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ParamsError(f'{name} must hold integer token ids; got non-integer values')
    arr = arr.astype(np.int64)
    if arr.ndim == 0 or (arr.ndim > 1 and not allow_batch):
        raise ParamsError(f'{name} must be a 1-D sequence of token ids; got shape {arr.shape}')
    if arr.shape[-1] == 0:
        raise ParamsError(f'{name} is empty; a prompt needs at least one token (e.g. <bos>)')
    vocab = np.shape(params['tok_emb'])[0]
    bad = (arr < 0) | (arr >= vocab)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ParamsError(f'{name} holds token id {arr[idx]} at index {idx}, outside the '
                          f'vocabulary 0..{vocab - 1} (rows of tok_emb)')
    limit = block_size(params)
    if arr.shape[-1] > limit and not window:
        raise ParamsError(f'{name} has {arr.shape[-1]} tokens but block_size is {limit} '
                          f'(rows of pos_emb); shorten it or decode with window=True')
    return arr


def random_params(rng, vocab_size=7, block_size=12, d_model=8, n_layers=2, n_heads=2,
                  d_head=3, d_ff=5, scale=1.0):
    """A random program of the given shape (for tests, checkers and benchmarks).

    ``d_ff`` may be 0 (an attention-only layer); ``n_layers`` may be 0.
    """
    p = base_params(vocab_size, block_size, d_model)
    p['tok_emb'] = scale * rng.normal(size=(vocab_size, d_model))
    p['out_emb'] = scale * rng.normal(size=(vocab_size, d_model))
    p['pos_emb'] = scale * rng.normal(size=(block_size, d_model))
    for _ in range(n_layers):
        layer = base_layer(n_heads, d_model, d_ff, d_head)
        for key in ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2'):
            layer[key] = scale * rng.normal(size=layer[key].shape)
        p['layers'].append(layer)
    return p
