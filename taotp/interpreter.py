"""Chapter 8: the TAOTP language, a text format for hand-written programs.

A program is one literal: a dict of nested lists of numbers, the same shape as
the params dict of Chapter 1::

    {
        "tok_emb": [[1.2, -1.2, 0.0], ...],      # (vocab_size, d_model)
        "pos_emb": [[...], ...],                 # (block_size, d_model)
        "layers": [
            {"Q": [[[...]]], "K": ..., "V": ..., "P": ..., "M1": ..., "b1": ...,
             "M2": ..., "b2": ..., "ln1": {"gamma": 1.0, "beta": 0.0}, "ln2": ...}
        ],
        "lnf": {"gamma": 1.0, "beta": 0.0}
    }

``load_program(text)`` reads it **without running any code**: the text is
parsed with ``ast`` and only dicts, lists, tuples, numbers (with an optional
sign) and string keys are accepted; a name, a call, an attribute, an operator
or anything else is refused.  JSON is a subset of what it reads, and
``#`` comments are allowed.  Omitted fields get these defaults (the ideas of
puzzle 8.4):

* ``out_emb`` missing: a copy of ``tok_emb`` (a tied output embedding);
* ``lnf``, ``ln1``, ``ln2`` (or their ``gamma``/``beta``) missing: 1 and 0;
* ``layers`` missing: no layers;
* ``pos_emb`` missing and ``"block_size": B`` given: a zero (B, d_model) table;
* ``M1``, ``b1``, ``M2``, ``b2`` all missing, or ``M1``/``M2`` written as
  ``[]``: no MLP (d_ff = 0, correctly shaped empty arrays, ``b2`` zero);
  ``b1``/``b2`` alone missing: zeros;
* ``Q``, ``K``, ``V``, ``P`` all missing: no attention heads; a 2-D ``Q``
  (d_model, d_head) is one head.

Every array is checked for its rank, rectangularity, finiteness and shape; a
problem raises ``ProgramError`` naming the field, the layer, the expected and
actual shapes and the line.  ``dump_program(params)`` writes any valid program
back (floats by ``repr``, so the round trip is exact; the output is also valid
JSON).  ``python -m taotp run|info PROGRAM`` is the command line (``cli``).
"""
import argparse
import ast
import json
import re
import sys
from importlib import resources
from numbers import Integral

import numpy as np

from .params import (ParamsError, count_non0_params, count_params, config, is_tied,
                     param_problems)

__all__ = ['ProgramError', 'load_program', 'dump_program', 'compile_TAOTP', 'read_program',
           'book_listing', 'BOOK_LISTINGS']

LAYER_FIELDS = ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2', 'ln1', 'ln2')
TOP_FIELDS = ('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf', 'block_size')
MAX_DEPTH = 8                  # nesting deeper than this is never a program
MAX_BLOCK_CELLS = 50_000_000   # block_size * d_model for a generated pos_emb

# The book's two printed listings, shipped as data (typed in as printed).
BOOK_LISTINGS = {
    'hello_world': 'hello_world_fig8_2.taotp',   # Fig. 8.2, one decimal
    'min': 'min_fig8_3.taotp',                   # Fig. 8.3, one decimal
    'min_2dp': 'min_fig8_3_2dp.taotp',           # the same program with two decimals
}


class ProgramError(ParamsError):
    """A TAOTP program text that cannot be read; the message names field, layer and line.

    Attributes: ``field`` (e.g. ``"layers[0]['M2']"`` or ``None``), ``line``
    (1-based, or ``None`` when unknown) and ``problems`` (every message found).
    """

    def __init__(self, message, field=None, line=None, problems=None):
        super().__init__(message)
        self.field = field
        self.line = line
        self.problems = list(problems) if problems else [message]


def _fail(what, field=None, line=None):
    where = f'line {line}: ' if line is not None else ''
    raise ProgramError(f'load_program: {where}{what}', field=field, line=line)


# ----------------------------------------------------------------------------- parsing

class _List(list):
    """A list from the text, remembering the line it starts on."""
    line = None


class _Dict(dict):
    """A dict from the text, remembering its line and each key's line."""
    line = None
    key_lines = None


_NODE_NAMES = {
    ast.Name: 'a name', ast.Call: 'a function call', ast.Attribute: 'an attribute',
    ast.BinOp: 'an arithmetic operator', ast.Subscript: 'indexing', ast.Lambda: 'a lambda',
    ast.ListComp: 'a comprehension', ast.GeneratorExp: 'a comprehension',
    ast.DictComp: 'a comprehension', ast.SetComp: 'a comprehension', ast.Set: 'a set',
    ast.JoinedStr: 'an f-string', ast.Compare: 'a comparison', ast.BoolOp: 'a boolean operator',
    ast.IfExp: 'a conditional expression', ast.Starred: 'star-unpacking',
}


def _describe(node):
    name = _NODE_NAMES.get(type(node), type(node).__name__)
    if isinstance(node, ast.Name):
        name = f'the name {node.id!r}'
    elif isinstance(node, ast.Constant):
        name = f'the constant {node.value!r}'[:60]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = f'a call of {node.func.id!r}'
    return name


def _number(node):
    """The value of a (signed) numeric literal, or None if the node is not one."""
    sign = 1
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        if isinstance(node.op, ast.USub):
            sign = -sign
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value = node.value
        if isinstance(value, int):
            return sign * value
        return -value if sign < 0 else value
    return None


def _line(node):
    """The 1-based line of a node in the user's text (the parser saw one extra line)."""
    line = getattr(node, 'lineno', None)
    return None if line is None else max(line - 1, 1)


def _walk(node, depth=0):
    """Turn an ast node into dicts / lists / numbers, refusing every other node type."""
    line = _line(node)
    if depth > MAX_DEPTH:
        _fail(f'the literal is nested more than {MAX_DEPTH} levels deep; a program needs at '
              f'most {MAX_DEPTH}', line=line)
    if isinstance(node, ast.Dict):
        out = _Dict()
        out.line, out.key_lines = line, {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                _fail('star-unpacking (**) is not allowed in a program', line=line)
            if not (isinstance(key, ast.Constant) and type(key.value) is str):
                _fail(f'dict keys must be quoted strings like "tok_emb"; got {_describe(key)}',
                      line=_line(key) or line)
            if key.value in out:
                _fail(f'the key {key.value!r} appears twice in the same dict', field=key.value,
                      line=_line(key))
            out[key.value] = _walk(value, depth + 1)
            out.key_lines[key.value] = _line(key)
        return out
    if isinstance(node, (ast.List, ast.Tuple)):
        out = _List(_walk(e, depth + 1) for e in node.elts)
        out.line = line
        return out
    value = _number(node)
    if value is not None:
        return value
    if isinstance(node, ast.Constant):
        kind = {bool: 'a boolean', str: 'a string', type(None): 'None', complex: 'a complex number',
                bytes: 'bytes', type(...): 'an ellipsis'}.get(type(node.value), 'a constant')
        _fail(f'{kind} ({node.value!r}) is not allowed here; values are numbers, lists and '
              f'dicts (strings only as keys)', line=line)
    _fail(f'{_describe(node)} is not allowed; a program holds only dicts, lists, numbers and '
          f'string keys (no code is ever run)', line=line)


class _NotPlainJSON(Exception):
    """The text is not JSON made of numbers, lists and dicts only (use the full parser)."""


def _json_tree(text):
    """Fast path for JSON texts (such as dump_program's): the same tree, without line numbers.

    Returns None whenever the text is not plain JSON of numbers, lists and string-keyed
    dicts, so that the syntax-tree parser handles it (and reports the problem).
    """
    def pairs(items):
        out = _Dict()
        out.key_lines = {}
        for key, value in items:
            if key in out:
                raise _NotPlainJSON
            out[key] = value
        return out

    def constant(name):  # NaN, Infinity, -Infinity
        raise _NotPlainJSON

    def lists(value, depth):
        if depth > MAX_DEPTH:
            raise _NotPlainJSON
        if isinstance(value, list):
            out = _List(lists(v, depth + 1) for v in value)
            return out
        if isinstance(value, dict):
            for key in value:
                value[key] = lists(value[key], depth + 1)
            return value
        if type(value) in (int, float):
            return value
        raise _NotPlainJSON  # true, false, null or a string value

    try:
        return lists(json.loads(text, object_pairs_hook=pairs, parse_constant=constant), 0)
    except (ValueError, RecursionError, _NotPlainJSON):
        return None


def _parse(text):
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode('utf-8')
        except UnicodeDecodeError as exc:
            _fail(f'the program is not UTF-8 text ({exc.reason} at byte {exc.start})')
    if not isinstance(text, str):
        _fail(f'expected the program text as a str; got {type(text).__name__}')
    if not text.strip():
        _fail('the program text is empty; expected a dict literal { "tok_emb": ... }')
    try:  # inside parentheses indentation is free; the line numbers shift by one
        tree = ast.parse('(\n' + text + '\n)', mode='eval')
    except SyntaxError as exc:
        line = min(max(exc.lineno - 1, 1), text.count('\n') + 1) if exc.lineno else None
        msg = re.sub(r'on line (\d+)', lambda m: f'on line {int(m[1]) - 1}', exc.msg)
        _fail(f'not a dict literal ({msg})', line=line)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        _fail(f'could not parse the text ({type(exc).__name__}: {str(exc)[:80]})')
    try:
        return _walk(tree.body)
    except RecursionError:
        _fail('the literal is nested too deeply')


# ----------------------------------------------------------------------------- building

_SHAPE_NAMES = {
    'tok_emb': 'vocab_size, d_model', 'out_emb': 'vocab_size, d_model',
    'pos_emb': 'block_size, d_model',
    'Q': 'n_heads, d_model, d_head', 'K': 'n_heads, d_model, d_head',
    'V': 'n_heads, d_model, d_head', 'P': 'n_heads, d_model, d_head',
    'M1': 'd_model, d_ff', 'b1': 'd_ff', 'M2': 'd_ff, d_model', 'b2': 'd_model',
    'gamma': 'd_model', 'beta': 'd_model',
}


def _line_of(value, parent=None, key=None):
    if parent is not None and key is not None and getattr(parent, 'key_lines', None):
        return parent.key_lines.get(key, parent.line)
    return getattr(value, 'line', None)


def _shape(value, field, line):
    """Shape of a nested list of numbers; refuses ragged or mixed nesting."""
    if not isinstance(value, list):
        return ()
    if not value:
        return (0,)
    if all(isinstance(v, list) for v in value):
        shapes = [_shape(v, field, line) for v in value]
        for i, s in enumerate(shapes):
            if s != shapes[0]:
                _fail(f'{field} is ragged: entry [{i}] has shape {s} but entry [0] has shape '
                      f'{shapes[0]}; every row must have the same length', field,
                      getattr(value[i], 'line', None) or line)
        return (len(value),) + shapes[0]
    if any(isinstance(v, (list, dict)) for v in value):
        _fail(f'{field} mixes numbers and lists (or dicts) at the same level', field, line)
    return (len(value),)


def _array(value, field, line, ndim, empty_shape=None):
    """A float64 array of rank ``ndim`` from a nested list (with checks)."""
    if isinstance(value, dict):
        _fail(f'{field} must be a {ndim}-D list of numbers; got a dict', field, line)
    if not isinstance(value, list):
        _fail(f'{field} must be a {ndim}-D list of numbers ({_SHAPE_NAMES.get(_field_key(field))})'
              f'; got the number {value!r}', field, line)
    shape = _shape(value, field, line)
    if shape and shape[0] == 0 and empty_shape is not None:
        return np.zeros(empty_shape)
    if len(shape) != ndim:
        names = _SHAPE_NAMES.get(_field_key(field), '')
        _fail(f'{field} must be a {ndim}-D array ({names}); got {len(shape)}-D with shape '
              f'{shape}', field, line)
    try:
        arr = np.array(value, dtype=np.float64)
    except OverflowError:
        _fail(f'{field} holds an integer too large for a float', field, line)
    if not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        _fail(f'{field} holds a non-finite value ({arr[bad]}) at index {bad}; numbers must be '
              f'finite', field, line)
    return arr


def _field_key(field):
    """The last key in a field path like ``layers[0]['M2']`` -> ``M2``."""
    if field.endswith("']"):
        return field[field.rindex("['") + 2:-2]
    return field


def _expect(arr, shape, field, line):
    if arr.shape != tuple(shape):
        names = _SHAPE_NAMES.get(_field_key(field), '')
        _fail(f'{field} must have shape ({names}) = {tuple(shape)}; got {arr.shape}', field, line)
    return arr


def _norm(value, field, line, d_model):
    if value is None:
        return {'gamma': 1.0, 'beta': 0.0}
    if not isinstance(value, dict):
        _fail(f'{field} must be a dict like {{"gamma": 1.0, "beta": 0.0}}; got '
              f'{"a list" if isinstance(value, list) else "a number"}', field, line)
    extra = sorted(set(value) - {'gamma', 'beta'})
    if extra:
        _fail(f'{field} has unknown keys {extra}; expected gamma and beta', field,
              _line_of(value, value, extra[0]))
    out = {}
    for key, default in (('gamma', 1.0), ('beta', 0.0)):
        where = f"{field}['{key}']"
        v = value.get(key, default)
        if isinstance(v, list):
            out[key] = _expect(_array(v, where, _line_of(v, value, key), 1), (d_model,), where,
                               _line_of(v, value, key))
        elif isinstance(v, dict):
            _fail(f'{where} must be a number or a list of d_model numbers; got a dict', where,
                  _line_of(v, value, key))
        else:
            try:
                v = float(v)
            except OverflowError:
                _fail(f'{where} is an integer too large for a float', where, line)
            if not np.isfinite(v):
                _fail(f'{where} must be finite; got {v}', where, _line_of(v, value, key))
            out[key] = v
    return out


def _layer(value, i, d_model, line):
    where = f'layers[{i}]'
    if not isinstance(value, dict):
        _fail(f'{where} must be a dict of {", ".join(LAYER_FIELDS)}; got '
              f'{"a list" if isinstance(value, list) else "a number"}', where, line)
    extra = sorted(set(value) - set(LAYER_FIELDS))
    if extra:
        _fail(f'{where} has unknown keys {extra}; a layer has {" ".join(LAYER_FIELDS)}',
              f"{where}['{extra[0]}']", _line_of(value[extra[0]], value, extra[0]))

    def get(key, ndim, empty_shape=None):
        field = f"{where}['{key}']"
        return _array(value[key], field, _line_of(value[key], value, key), ndim, empty_shape)

    def check(arr, key, shape):
        return _expect(arr, shape, f"{where}['{key}']", _line_of(value.get(key), value, key))

    layer = {}
    # attention: all four matrices, or none (a layer without heads)
    attn = [k for k in 'QKVP' if k in value]
    if attn and len(attn) < 4:
        missing = [k for k in 'QKVP' if k not in value]
        _fail(f'{where} gives {", ".join(attn)} but not {", ".join(missing)}; write all four '
              f'attention matrices or none', f"{where}['{missing[0]}']", value.line)
    if not attn:
        for k in 'QKVP':
            layer[k] = np.zeros((0, d_model, 0))
    else:
        for k in 'QKVP':
            field = f"{where}['{k}']"
            raw = value[k]
            shape = _shape(raw, field, _line_of(raw, value, k)) if isinstance(raw, list) else ()
            if len(shape) == 2:  # one head written as a matrix
                layer[k] = get(k, 2)[None]
            else:
                layer[k] = get(k, 3, empty_shape=(0, d_model, 0))
        n_heads, _, d_head = layer['Q'].shape
        check(layer['Q'], 'Q', (n_heads, d_model, d_head))
        check(layer['K'], 'K', (n_heads, d_model, d_head))
        d_value = layer['V'].shape[2] if layer['V'].ndim == 3 else 0
        check(layer['V'], 'V', (n_heads, d_model, d_value))
        check(layer['P'], 'P', (n_heads, d_model, d_value))
        if n_heads > 0 and d_head == 0:
            _fail(f"{where}['Q'] has d_head = 0; leave out Q, K, V and P for a layer without "
                  f"attention", f"{where}['Q']", _line_of(value['Q'], value, 'Q'))
    # MLP: M1 and M2 together (or neither); biases default to zeros
    mlp = [k for k in ('M1', 'M2') if k in value]
    if len(mlp) == 1:
        other = 'M2' if mlp == ['M1'] else 'M1'
        _fail(f'{where} gives {mlp[0]} but not {other}; write both MLP matrices or neither',
              f"{where}['{other}']", value.line)
    if mlp:
        layer['M1'] = get('M1', 2, empty_shape=(d_model, 0))
        d_ff = layer['M1'].shape[1]
        check(layer['M1'], 'M1', (d_model, d_ff))
        layer['M2'] = check(get('M2', 2, empty_shape=(0, d_model)), 'M2', (d_ff, d_model))
    else:
        d_ff = 0
        layer['M1'], layer['M2'] = np.zeros((d_model, 0)), np.zeros((0, d_model))
    layer['b1'] = check(get('b1', 1, empty_shape=(0,)), 'b1', (d_ff,)) if 'b1' in value \
        else np.zeros(d_ff)
    layer['b2'] = check(get('b2', 1), 'b2', (d_model,)) if 'b2' in value else np.zeros(d_model)
    for k in ('ln1', 'ln2'):
        layer[k] = _norm(value.get(k), f"{where}['{k}']", _line_of(value.get(k), value, k),
                         d_model)
    return {k: layer[k] for k in LAYER_FIELDS}


def _build(tree):
    if not isinstance(tree, dict):
        _fail(f'a program is a dict literal {{"tok_emb": ..., "pos_emb": ..., ...}}; got '
              f'{"a list" if isinstance(tree, list) else "a number"}', line=getattr(tree, 'line', 1))
    extra = sorted(set(tree) - set(TOP_FIELDS))
    if extra:
        _fail(f'unknown key {extra[0]!r}; a program has {", ".join(TOP_FIELDS)}', extra[0],
              _line_of(None, tree, extra[0]))
    if 'tok_emb' not in tree:
        _fail('the program has no "tok_emb" (the token embedding, vocab_size x d_model)',
              'tok_emb', tree.line)
    line = _line_of(None, tree, 'tok_emb')
    tok = _array(tree['tok_emb'], 'tok_emb', line, 2)
    vocab, d_model = tok.shape
    if vocab == 0 or d_model == 0:
        _fail(f'tok_emb must have at least one row and one column; got shape {tok.shape}',
              'tok_emb', line)
    params = {'tok_emb': tok}
    if 'out_emb' in tree:
        line = _line_of(None, tree, 'out_emb')
        params['out_emb'] = _expect(_array(tree['out_emb'], 'out_emb', line, 2),
                                    (vocab, d_model), 'out_emb', line)
    else:
        params['out_emb'] = tok.copy()
    params['pos_emb'] = _pos_emb(tree, d_model)
    layers = tree.get('layers', [])
    line = _line_of(None, tree, 'layers')
    if not isinstance(layers, list):
        _fail(f'layers must be a list of layer dicts; got '
              f'{"a dict" if isinstance(layers, dict) else "a number"}', 'layers', line)
    params['layers'] = [_layer(layer, i, d_model, getattr(layer, 'line', line))
                        for i, layer in enumerate(layers)]
    params['lnf'] = _norm(tree.get('lnf'), 'lnf', _line_of(None, tree, 'lnf'), d_model)
    return {k: params[k] for k in ('tok_emb', 'out_emb', 'pos_emb', 'layers', 'lnf')}


def _pos_emb(tree, d_model):
    block = tree.get('block_size')
    if block is not None:
        line = _line_of(None, tree, 'block_size')
        if not isinstance(block, Integral) or isinstance(block, bool):
            _fail(f'block_size must be a whole number; got {block!r}'[:200], 'block_size', line)
        if not 1 <= block or block * d_model > MAX_BLOCK_CELLS:
            _fail(f'block_size must be between 1 and {MAX_BLOCK_CELLS // d_model:,} for '
                  f'd_model = {d_model}; got {block}'[:200], 'block_size', line)
    if 'pos_emb' not in tree:
        if block is None:
            _fail('the program has neither "pos_emb" nor "block_size"; give one of them '
                  '(block_size B makes a zero (B, d_model) pos_emb)', 'pos_emb', tree.line)
        return np.zeros((block, d_model))
    raw, line = tree['pos_emb'], _line_of(None, tree, 'pos_emb')
    if isinstance(raw, list) and raw and all(isinstance(t, list) and t and isinstance(t[0], list)
                                             for t in raw):
        # a list of tables, one per position level (Chapter 9)
        tables = [_array(t, f'pos_emb[{i}]', getattr(t, 'line', line), 2)
                  for i, t in enumerate(raw)]
        for i, t in enumerate(tables):
            if t.shape[1:] != (d_model,):
                _fail(f'pos_emb[{i}] must have shape (block_size, d_model) with d_model = '
                      f'{d_model}; got {t.shape}', f'pos_emb[{i}]', getattr(raw[i], 'line', line))
        if block is not None and min(len(t) for t in tables) != block:
            _fail(f'block_size is {block} but the shortest pos_emb table has '
                  f'{min(len(t) for t in tables)} rows', 'block_size',
                  _line_of(None, tree, 'block_size'))
        return tables
    pos = _array(raw, 'pos_emb', line, 2)
    if pos.shape[0] == 0:
        _fail('pos_emb has no rows; block_size must be at least 1', 'pos_emb', line)
    _expect(pos, (pos.shape[0], d_model), 'pos_emb', line)
    if block is not None and pos.shape[0] != block:
        _fail(f'block_size is {block} but pos_emb has {pos.shape[0]} rows', 'block_size',
              _line_of(None, tree, 'block_size'))
    return pos


def load_program(text):
    """Read a TAOTP program (the book's dict literal, or JSON) into a params dict.

    No code is executed: only dict / list / number / string-key syntax is
    accepted.  Defaults are filled in (see the module docstring) and the
    result is checked like ``validate_params``.

    Raises:
        ProgramError: with the field, the layer, expected vs actual shape and
            the line of the first problem found.
    """
    params = None
    tree = _json_tree(text) if isinstance(text, str) else None
    if tree is not None:
        try:
            params = _build(tree)
        except ProgramError:  # parse again below, to report the line of the problem
            params = None
    if params is None:
        params = _build(_parse(text))
    problems = param_problems(params)  # a safety net: _build should already catch all
    if problems:
        raise ProgramError('load_program: ' + problems[0], problems=problems)
    return params


compile_TAOTP = load_program  # the book's name (Fig. 8.1), now safe and validated


def read_program(path):
    """``load_program`` on a file's text (the path is named in the error message)."""
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProgramError(f'read_program: cannot read {path}: '
                           f'{getattr(exc, "strerror", None) or exc}') from None
    try:
        return load_program(text)
    except ProgramError as exc:
        raise ProgramError(f'{path}: {exc}', exc.field, exc.line, exc.problems) from None


def book_listing(name):
    """The text of one of the book's printed listings (keys of ``BOOK_LISTINGS``)."""
    if name not in BOOK_LISTINGS:
        raise ValueError(f'book_listing: name must be one of {sorted(BOOK_LISTINGS)}; '
                         f'got {name!r}')
    return resources.files('taotp').joinpath('data', BOOK_LISTINGS[name]).read_text('utf-8')


# ----------------------------------------------------------------------------- writing

def _fmt(x):
    return repr(float(x))


def _lines(arr, indent):
    """An array as list-literal lines: 0/1-D on one line, otherwise one row per line."""
    pad = ' ' * indent
    if arr.ndim == 1:
        return ['[' + ', '.join(_fmt(x) for x in arr) + ']']
    if arr.ndim == 2 and (arr.shape[1] == 0 or arr.shape[0] == 0):
        return ['[' + ', '.join('[]' for _ in range(arr.shape[0])) + ']']
    if arr.shape[0] == 0:
        return ['[]']
    out = ['[']
    for i, sub in enumerate(arr):
        inner = _lines(sub, indent + 4)
        inner[0] = pad + '    ' + inner[0]
        inner[-1] += ',' if i < len(arr) - 1 else ''
        out += inner
    out.append(pad + ']')
    return out


def _value(v, indent):
    if isinstance(v, dict):
        return '{' + ', '.join(f'"{k}": {_value(v[k], indent)}' for k in v) + '}'
    arr = np.asarray(v, dtype=np.float64)
    if arr.ndim == 0:
        return _fmt(arr)
    return '\n'.join(_lines(arr, indent))


def _same_bits(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _default_norm(ln):
    return set(ln) <= {'gamma', 'beta'} and all(
        np.ndim(ln[k]) == 0 and repr(float(ln[k])) == repr(d)
        for k, d in (('gamma', 1.0), ('beta', 0.0)) if k in ln)


def dump_program(params, compact=False):
    """Write a program as TAOTP text that ``load_program`` reads back exactly.

    Floats are written with ``repr`` (the shortest text that parses back to the
    same float64), so ``load_program(dump_program(p))`` equals ``p`` bit for
    bit.  The text is also valid JSON.  With ``compact=True`` fields equal to
    their defaults are left out: a tied ``out_emb``, default layer norms, an
    all-zero ``pos_emb`` (written as ``block_size``) and empty MLPs.

    Raises:
        ParamsError: if ``params`` is not a valid program.
    """
    problems = param_problems(params)
    if problems:
        raise ParamsError('dump_program: ' + '; '.join(problems))
    fields = []

    def add(key, value, indent=4):
        fields.append((' ' * indent, key, _value(value, indent)))

    tok = np.asarray(params['tok_emb'], dtype=np.float64)
    pos = params['pos_emb']
    tables = pos if isinstance(pos, (list, tuple)) else None
    add('tok_emb', tok)
    if tables is not None:
        body = ['[']
        for i, t in enumerate(tables):
            inner = _lines(np.asarray(t, dtype=np.float64), 8)
            inner[0] = ' ' * 8 + inner[0]
            inner[-1] += ',' if i < len(tables) - 1 else ''
            body += inner
        body.append('    ]')
        fields.append(('    ', 'pos_emb', '\n'.join(body)))
    elif compact and not np.any(np.asarray(pos)) and not np.any(np.signbit(pos)):
        fields.append(('    ', 'block_size', str(np.shape(pos)[0])))
    else:
        add('pos_emb', pos)
    if not (compact and _same_bits(params['out_emb'], tok)):
        add('out_emb', params['out_emb'])
    layer_texts = []
    for layer in params['layers']:
        parts = []
        for key in LAYER_FIELDS:
            v = layer[key]
            if compact:
                if key in ('ln1', 'ln2') and _default_norm(v):
                    continue
                if key in ('M1', 'b1', 'M2') and np.shape(layer['M1'])[1] == 0:
                    continue
                if key == 'b2' and np.shape(layer['M1'])[1] == 0 and \
                        _same_bits(v, np.zeros(np.shape(v))):
                    continue
            parts.append(f'            "{key}": {_value(v, 12)}')
        layer_texts.append('        {\n' + ',\n'.join(parts) + '\n        }')
    if layer_texts:
        fields.append(('    ', 'layers', '[\n' + ',\n'.join(layer_texts) + '\n    ]'))
    elif not compact:
        fields.append(('    ', 'layers', '[]'))
    if not (compact and _default_norm(params['lnf'])):
        add('lnf', params['lnf'])
    return '{\n' + ',\n'.join(f'{pad}"{k}": {v}' for pad, k, v in fields) + '\n}\n'


# ----------------------------------------------------------------------------- command line

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line on stderr, exit code 2
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _tokens(text):
    parts = text.replace(',', ' ').split()
    if not parts:
        raise _UsageError('--input is empty; give token ids like --input "9" or "5 3 7"')
    try:
        return [int(p) for p in parts]
    except ValueError:
        bad = next(p for p in parts if not p.lstrip('-').isdigit())
        raise _UsageError(f'--input must be whole-number token ids separated by spaces; '
                          f'got {bad!r}') from None


def _parser():
    p = _Parser(prog='python -m taotp', description='Run or inspect a TAOTP program file.')
    sub = p.add_subparsers(dest='command', required=True)
    run = sub.add_parser('run', help='decode greedily from a prompt and print the token ids')
    run.add_argument('program', help='program file (TAOTP dict literal or JSON; - for stdin)')
    run.add_argument('--input', required=True, help='prompt token ids, e.g. "9" or "5 3 7"')
    run.add_argument('--steps', type=int, default=None,
                     help='tokens to generate (default: fill the block)')
    run.add_argument('--eos', type=int, default=None, help='stop after emitting this id')
    run.add_argument('--window', action='store_true',
                     help='slide over the last block_size tokens to run past the block')
    run.add_argument('--show-attention', action='store_true',
                     help='print every layer\'s attention weights on the last forward pass')
    info = sub.add_parser('info', help='print the shape and parameter counts of a program')
    info.add_argument('program', help='program file (TAOTP dict literal or JSON; - for stdin)')
    for s in (run, info):
        s.error = p.error
    return p


def _read(path):
    if path == '-':
        return load_program(sys.stdin.read())
    return read_program(path)


def _info(params):
    c = config(params)
    total, non0 = count_params(params), count_non0_params(params)
    lines = [
        f'layers: {c["n_layers"]}',
        f'heads: {c["n_heads"]}',
        f'd_model: {c["d_model"]}',
        f'd_head: {c["d_head"]}',
        f'd_ff: {c["d_ff"]}',
        f'vocab_size: {c["vocab_size"]}',
        f'block_size: {c["block_size"]}',
        f'out_emb: {"tied to tok_emb" if is_tied(params) else "separate"}',
        f'params: {total["n_params"]:,} total, {non0["n_params"]:,} non-zero '
        f'(outside the embeddings: {total["non_emb"]:,} total, {non0["non_emb"]:,} non-zero)',
    ]
    return '\n'.join(lines)


def _attention_text(tokens, params):
    from .trace import trace
    t = trace(np.array(tokens), params)
    out = []
    for i, weights in enumerate(t.attn):
        for h, w in enumerate(weights):
            out.append(f'layer {i} head {h} attention (rows: queries, columns: keys):')
            for q, row in enumerate(w):
                out.append(f'  {tokens[q]:>4} | ' + ' '.join(f'{x:.2f}' for x in row[:q + 1]))
    if not out:
        out.append('(no attention heads)')
    return '\n'.join(out)


def _run(args):
    from .decoding import decode
    from .params import block_size
    params = _read(args.program)
    tokens = _tokens(args.input)
    steps = args.steps
    if steps is None:
        steps = max(block_size(params) - len(tokens) + 1, 0)
    if steps < 0:
        raise _UsageError(f'--steps must be >= 0; got {steps}')
    out = decode(tokens, params, max_steps=steps, eos=args.eos, window=args.window).tolist()
    if args.show_attention:
        # the tokens fed to the model for the last step (the final token is never fed)
        fed = (out[:-1] if len(out) > len(tokens) else out)[-block_size(params):]
        print(_attention_text(fed, params))
    print(' '.join(str(t) for t in out))


def cli(argv=None):
    """``python -m taotp run|info PROGRAM ...``; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
        if args.command == 'info':
            print(_info(_read(args.program)))
        else:
            _run(args)
        return 0
    except _UsageError as exc:
        print(f'taotp: error: {exc}', file=sys.stderr)
        return 2
    except (ParamsError, ValueError) as exc:
        print('taotp: error: ' + ' '.join(str(exc).split()), file=sys.stderr)
        return 1
