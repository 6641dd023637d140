"""The params-dict format of Chapter 1: building, counting and validating it.

A program is a dict::

    {'tok_emb': (vocab, d_model), 'pos_emb': (block_size, d_model),
     'out_emb': (vocab, d_model), 'layers': [layer, ...], 'lnf': {'gamma', 'beta'}}

and each layer is ``base_layer(...)``'s dict of ``Q K V P M1 b1 M2 b2 ln1 ln2``.
``pos_emb`` may also be a list of tables (one per position level, used by the
position-coupling chapter); every other chapter uses a single table.

``param_problems`` is the one place where the format's rules live: it returns
every problem as a ``Problem`` (a message that also carries the ``path`` of the
field, e.g. ``('layers', 1, 'Q')``), which ``validate_params``, the checkers and
the program loader of Chapter 8 all use.
"""
from functools import partial
from numbers import Real

import numpy as np

from .model import multi_level, norm_function, position_tables

LAYER_KEYS = ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2', 'ln1', 'ln2')
TOP_KEYS = ('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf')


class ParamsError(ValueError):
    """A malformed program or input; the message names the field and the rule."""


class Problem(str):
    """A problem found in a program: the message, plus ``path`` to the field it is about."""

    def __new__(cls, message, path=()):
        self = super().__new__(cls, message)
        self.path = tuple(path)
        return self


class HumanReadableDict(dict):
    """A dict whose repr prints numbers with thousands separators."""

    def __repr__(self):
        return '{' + ', '.join(f'{k}: {v:,}' for k, v in self.items()) + '}'


MAX_SIZE = 1 << 20         # the largest size a builder accepts: vocabulary, block, width, heads
MAX_NUMBERS = 1 << 27      # the most numbers one program or array of a builder holds (1 GiB)


def check_size(where, name, value, low=1, high=MAX_SIZE, limit='taotp.params.MAX_SIZE'):
    """``value`` as an int in ``low..high``, checked before anything is allocated.

    A TypeError for anything but an int (a bool, float, string or None); a ValueError
    below ``low`` (``None``: the caller checks the low side itself) or above ``high``,
    naming the limit (``limit`` says where it is set).

    >>> check_size('example', 'n', 10**12)
    Traceback (most recent call last):
    ...
    ValueError: example: n must be at most 1,048,576 (taotp.params.MAX_SIZE); got 1000000000000
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f'{where}: {name} must be an int; got {type(value).__name__} {value!r}')
    if low is not None and value < low:
        raise ValueError(f'{where}: {name} must be at least {low}; got {value}')
    if value > high:
        raise ValueError(f'{where}: {name} must be at most {high:,} ({limit}); got {value}')
    return int(value)


def check_numbers(where, count, what='the program'):
    """Refuse to build something of ``count`` numbers above ``MAX_NUMBERS`` (before building it)."""
    if count > MAX_NUMBERS:
        raise ValueError(f'{where}: {what} would hold {count:,} numbers, more than the limit '
                         f'taotp.params.MAX_NUMBERS = {MAX_NUMBERS:,}')
    return count


def base_layer(n_heads, d_model, d_ff, d_head):
    """An all-zero layer; thanks to the residual connections it is the identity.

    Every size is an int in 0..``MAX_SIZE`` and the layer holds at most ``MAX_NUMBERS``
    numbers (a ValueError names the limit before anything is allocated).
    """
    sizes = {name: check_size('base_layer', name, value, low=0) for name, value in
             (('n_heads', n_heads), ('d_model', d_model), ('d_ff', d_ff), ('d_head', d_head))}
    n_heads, d_model, d_ff, d_head = sizes.values()
    check_numbers('base_layer', 4 * n_heads * d_model * d_head + (2 * d_model + 1) * d_ff
                  + d_model, 'the layer')
    layer = {name: np.zeros((n_heads, d_model, d_head)) for name in ('Q', 'K', 'V', 'P')}
    layer['M1'], layer['b1'] = np.zeros((d_model, d_ff)), np.zeros(d_ff)
    layer['M2'], layer['b2'] = np.zeros((d_ff, d_model)), np.zeros(d_model)
    layer['ln1'] = {'gamma': 1.0, 'beta': 0.0}
    layer['ln2'] = {'gamma': 1.0, 'beta': 0.0}
    return layer


def base_params(vocab_size, block_size, d_model):
    """All-zero embeddings, no layers, default final layer norm.

    Every size is an int in 0..``MAX_SIZE`` and the tables hold at most ``MAX_NUMBERS``
    numbers (a ValueError names the limit before anything is allocated).
    """
    vocab_size, block_size, d_model = (
        check_size('base_params', name, value, low=0) for name, value in
        (('vocab_size', vocab_size), ('block_size', block_size), ('d_model', d_model)))
    check_numbers('base_params', (2 * vocab_size + block_size) * d_model, 'the embeddings')

    def table(rows):
        return np.zeros((rows, d_model))
    return {'tok_emb': table(vocab_size), 'out_emb': table(vocab_size),
            'pos_emb': table(block_size), 'layers': [], 'lnf': {'gamma': 1.0, 'beta': 0.0}}


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
            'pos_emb': sum(int(count(np.asarray(t))) for t in position_tables(params['pos_emb']))}
    if not is_tied(params):
        embs['out_emb'] = count(np.asarray(params['out_emb']))
    non_emb = 0
    for layer in params['layers']:
        for value in layer.values():
            if not isinstance(value, dict):   # layer norms are never counted
                non_emb += count(np.asarray(value, dtype=np.float64))
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
    return min(np.shape(t)[0] for t in position_tables(params['pos_emb']))


# ----------------------------------------------------------------------------- validation

def _where(path):
    """How a message names a field: ``('layers', 1, 'Q')`` -> ``layers[1]['Q']``."""
    if not path:
        return 'params'
    head = "'%s'" % path[0] if path[0] != 'layers' or len(path) == 1 else 'layers'
    return head + ''.join(f'[{p!r}]' for p in path[1:])


def _array_problem(path, value, ndim):
    """Return (array, problem) for a field that must be a finite float array of rank ndim."""
    if isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            return None, Problem(f'{_where(path)} is a list that is not a numeric array', path)
    if not isinstance(value, np.ndarray):
        return None, Problem(f'{_where(path)} must be a NumPy array; got '
                             f'{type(value).__name__}', path)
    if value.dtype.kind not in 'biuf':
        return None, Problem(f'{_where(path)} must hold real numbers; got dtype {value.dtype}',
                             path)
    if value.ndim != ndim:
        return None, Problem(f'{_where(path)} must have {ndim} dimensions; got shape '
                             f'{value.shape}', path)
    if value.dtype.kind == 'f' and not np.isfinite(value).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(value))[0])
        return None, Problem(f'{_where(path)} holds a non-finite value ({value[bad]}) at index '
                             f'{bad}', path)
    return value, None


def _shape_problem(path, arr, expected, names):
    if arr is not None and arr.shape != expected:
        return Problem(f'{_where(path)} has shape {arr.shape}, expected ({names}) = {expected}',
                       path)
    return None


def _norm_problems(path, ln, d_model):
    where = _where(path)
    if not isinstance(ln, dict):
        return [Problem(f'{where} must be a dict with gamma and beta; got {type(ln).__name__}',
                        path)]
    problems = []
    extra = set(ln) - {'gamma', 'beta'}
    if extra:
        problems.append(Problem(f'{where} has unknown keys {sorted(extra)}; expected gamma and '
                                f'beta', path))
    for key in ('gamma', 'beta'):
        if key not in ln:
            continue  # layer_norm's defaults apply
        value, at = ln[key], path + (key,)
        if np.ndim(value) == 0:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.ndarray)):
                problems.append(Problem(f'{where}[{key!r}] must be a number; got '
                                        f'{type(value).__name__}', at))
            elif not np.isfinite(float(value)):
                problems.append(Problem(f'{where}[{key!r}] is not finite; got {value}', at))
            continue
        arr, problem = _array_problem(at, value, 1)
        problem = problem or _shape_problem(at, arr, (d_model,), 'd_model')
        if problem:
            problems.append(problem)
    return problems


def param_problems(params):
    """Every problem found in ``params``, as a list of ``Problem`` messages (empty if valid)."""
    if not isinstance(params, dict):
        return [Problem(f'expected a params dict with keys {", ".join(TOP_KEYS)}; '
                        f'got {type(params).__name__}')]
    problems = [Problem(f'missing key {k!r}', (k,)) for k in TOP_KEYS if k not in params]
    extra = sorted(set(params) - set(TOP_KEYS), key=str)
    if extra:
        problems.append(Problem(f'unknown keys {extra}; expected only {", ".join(TOP_KEYS)}',
                                (extra[0],)))
    if problems:
        return problems
    tok, p = _array_problem(('tok_emb',), params['tok_emb'], 2)
    if p:
        return [p]
    vocab, d_model = tok.shape
    if vocab == 0 or d_model == 0:
        return [Problem(f"'tok_emb' has shape {tok.shape}; a program needs vocab_size >= 1 and "
                        f"d_model >= 1", ('tok_emb',))]
    out, p = _array_problem(('out_emb',), params['out_emb'], 2)
    problems += [x for x in (p, _shape_problem(('out_emb',), out, (vocab, d_model),
                                               'vocab_size, d_model')) if x]
    multi = multi_level(params['pos_emb'])
    tables = position_tables(params['pos_emb'])
    if not tables:
        problems.append(Problem("'pos_emb' is an empty list; expected at least one table",
                                ('pos_emb',)))
    for i, table in enumerate(tables):
        path = ('pos_emb', i) if multi else ('pos_emb',)
        arr, p = _array_problem(path, table, 2)
        if p:
            problems.append(p)
        elif arr.shape[1] != d_model:
            problems.append(Problem(f'{_where(path)} has shape {arr.shape}, expected (block_size, '
                                    f'd_model) with d_model = {d_model} (from tok_emb)', path))
        elif arr.shape[0] == 0:
            problems.append(Problem(f'{_where(path)} has no rows; block_size must be at least 1',
                                    path))
    problems += _norm_problems(('lnf',), params['lnf'], d_model)
    layers = params['layers']
    if not isinstance(layers, (list, tuple)):
        return problems + [Problem(f"'layers' must be a list of layer dicts; got "
                                   f"{type(layers).__name__}", ('layers',))]
    for i, layer in enumerate(layers):
        problems += _layer_problems(('layers', i), layer, d_model)
    return problems


LAYER_NDIMS = {'Q': 3, 'K': 3, 'V': 3, 'P': 3, 'M1': 2, 'b1': 1, 'M2': 2, 'b2': 1}


def _layer_problems(path, layer, d_model):
    where = _where(path)
    if not isinstance(layer, dict):
        return [Problem(f'{where} must be a dict of {" ".join(LAYER_KEYS)}; got '
                        f'{type(layer).__name__}', path)]
    problems = [Problem(f'{where} is missing {k!r}', path + (k,))
                for k in LAYER_KEYS if k not in layer]
    extra = sorted(set(layer) - set(LAYER_KEYS), key=str)
    if extra:
        problems.append(Problem(f'{where} has unknown keys {extra}; expected '
                                f'{" ".join(LAYER_KEYS)}', path + (extra[0],)))
    if problems:
        return problems
    arrays = {}
    for key, ndim in LAYER_NDIMS.items():
        arrays[key], p = _array_problem(path + (key,), layer[key], ndim)
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
        p = _shape_problem(path + (key,), arrays[key], shape, names)
        if p:
            problems.append(p)
    if d_head == 0 and n_heads > 0:
        problems.append(Problem(f"{where}['Q'] has d_head = 0; use n_heads = 0 for a layer "
                                f"without attention", path + ('Q',)))
    for key in ('ln1', 'ln2'):
        problems += _norm_problems(path + (key,), layer[key], d_model)
    return problems


def as_arrays(params):
    """The same program with every weight as an ndarray (lists converted; arrays not copied).

    ``validate_params`` accepts list-valued weights; the forward pass needs arrays.
    """
    def arr(value):
        return value if isinstance(value, np.ndarray) else np.asarray(value, dtype=np.float64)
    out = dict(params)
    out['tok_emb'], out['out_emb'] = arr(params['tok_emb']), arr(params['out_emb'])
    out['pos_emb'] = [arr(t) for t in params['pos_emb']] if multi_level(params['pos_emb']) \
        else arr(params['pos_emb'])
    out['layers'] = [{k: v if k in ('ln1', 'ln2') else arr(v) for k, v in layer.items()}
                     for layer in params['layers']]
    return out


def validate_params(params):
    """Raise ``ParamsError`` naming every malformed field; return ``params`` if valid."""
    problems = param_problems(params)
    if problems:
        raise ParamsError('validate_params: ' + '\n  '.join(problems))
    return params


def check_variant(norm, post_ln, where):
    """The forward pass's variant switches as ``forward`` keywords, or a ``ParamsError``.

    ``norm`` names a normalisation (``taotp.model.NORMS``) or is one; ``post_ln``
    is True or False.  Every runner (``transformer``, the decoders, ``trace``)
    checks its switches here, so an unknown variant reads the same everywhere.

    >>> sorted(check_variant('rms', False, 'example'))
    ['norm_fn', 'post_ln']
    """
    try:
        fn = norm_function(norm)
    except ValueError as exc:
        raise ParamsError(f'{where}: {exc}') from None
    if not isinstance(post_ln, (bool, np.bool_)):
        raise ParamsError(f'{where}: post_ln must be True or False; got {post_ln!r}')
    return {'norm_fn': fn, 'post_ln': bool(post_ln)}


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


def params_difference(a, b, path=()):
    """Where two programs first differ (a message naming the field), or None if identical.

    Identical means the same keys, list lengths, array shapes and float64 bits
    (so -0.0 differs from 0.0, as it would in a file written from each).
    """
    where = _where(path)
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)) or set(a) != set(b):
            return f'{where}: keys {sorted(map(str, a)) if isinstance(a, dict) else a!r:.60} ' \
                   f'vs {sorted(map(str, b)) if isinstance(b, dict) else b!r:.60}'
        return next((d for k in a if (d := params_difference(a[k], b[k], path + (k,)))), None)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) \
                or len(a) != len(b):
            return f'{where}: lists of different lengths or types'
        return next((d for i, (x, y) in enumerate(zip(a, b))
                     if (d := params_difference(x, y, path + (i,)))), None)
    try:
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError):
        return f'{where}: not numbers'
    if x.shape != y.shape:
        return f'{where}: shapes {x.shape} vs {y.shape}'
    if x.tobytes() != y.tobytes():
        i = np.flatnonzero(x.view(np.int64).ravel() != y.view(np.int64).ravel())[0]
        return f'{where}: {float(x.ravel()[i])!r} vs {float(y.ravel()[i])!r} at flat index {int(i)}'
    return None


def params_equal(a, b):
    """True when two programs hold exactly the same numbers, bit for bit, in the same places."""
    return params_difference(a, b) is None


def as_dtype(params, dtype=np.float32):
    """A copy of ``params`` with every array (and layer-norm scalar) cast to ``dtype``.

    The forward pass keeps the dtype of its weights, so running the copy
    computes in that precision (float64, used everywhere else, is the default).
    A tied ``out_emb`` stays tied.
    """
    def cast(value):
        if isinstance(value, np.ndarray):
            return value.astype(dtype)
        if isinstance(value, dict):
            return {k: cast(v) for k, v in value.items()}
        if isinstance(value, list):
            return [cast(v) for v in value]
        if isinstance(value, float):
            return dtype(value)
        return value
    out = cast(params)
    if params['out_emb'] is params['tok_emb']:
        out['out_emb'] = out['tok_emb']
    return out


def random_params(rng, vocab_size=7, block_size=12, d_model=8, n_layers=2, n_heads=2,
                  d_head=3, d_ff=5, scale=1.0):
    """A random program of the given shape (for tests, checkers and benchmarks).

    ``d_ff`` may be 0 (an attention-only layer); ``n_layers`` may be 0.  Sizes follow
    ``base_params`` and ``base_layer`` (at most ``MAX_SIZE`` each).
    """
    n_layers = check_size('random_params', 'n_layers', n_layers, low=0)
    p = base_params(vocab_size, block_size, d_model)
    if n_layers:
        base_layer(n_heads, d_model, d_ff, d_head)      # checks the sizes before drawing
    p['tok_emb'] = scale * rng.normal(size=(vocab_size, d_model))
    p['out_emb'] = scale * rng.normal(size=(vocab_size, d_model))
    p['pos_emb'] = scale * rng.normal(size=(block_size, d_model))
    for _ in range(n_layers):
        layer = base_layer(n_heads, d_model, d_ff, d_head)
        for key in ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2'):
            layer[key] = scale * rng.normal(size=layer[key].shape)
        p['layers'].append(layer)
    return p
