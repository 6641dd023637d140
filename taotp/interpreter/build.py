"""Turning a parsed TAOTP tree into a params dict, and naming the line of every problem.

The builder does only what is particular to the text format:

* it turns nested lists into float64 arrays, refusing ragged or mixed nesting
  and integers too large for a float (the line of the offending row is named);
* it fills in the fields a text may leave out (the ideas of puzzle 8.4):

  - ``out_emb`` missing: a copy of ``tok_emb`` (a tied output embedding);
  - ``lnf``, ``ln1``, ``ln2`` (or their ``gamma``/``beta``) missing: 1 and 0;
  - ``layers`` missing: no layers;
  - ``pos_emb`` missing and ``"block_size": B`` given: a zero (B, d_model) table;
  - ``M1``, ``b1``, ``M2``, ``b2`` all missing, or ``M1``/``M2`` written as
    ``[]``: no MLP (d_ff = 0, correctly shaped empty arrays, ``b2`` zero);
    ``b1``/``b2`` alone missing: zeros;
  - ``Q``, ``K``, ``V``, ``P`` all missing: no attention heads; a 2-D ``Q``
    (d_model, d_head) is one head;

* it stops sizes that would allocate without bound (``block_size``).

Every rule of the params format itself (ranks, shapes, finite values, keys of
a layer, layer norms) is checked by ``taotp.params.param_problems``, the one
place those rules live.  Each problem it returns carries the ``path`` of its
field, and the builder maps that path to the line of the field in the text.

    >>> params = build(parse('{"tok_emb": [[1, -1], [-1, 1]], "block_size": 3}'))
    >>> params['pos_emb'].shape, params['layers'], params['lnf']
    ((3, 2), [], {'gamma': 1.0, 'beta': 0.0})
"""
from numbers import Integral

import numpy as np

from ..params import LAYER_KEYS, LAYER_NDIMS, TOP_KEYS, param_problems
from .errors import ProgramError, fail
from .parse import parse  # noqa: F401  (the doctest above reads a text)

TOP_FIELDS = TOP_KEYS + ('block_size',)   # a text may give block_size instead of pos_emb
MAX_BLOCK_CELLS = 50_000_000              # block_size * d_model of a generated pos_emb
_NORM_DEFAULTS = {'gamma': 1.0, 'beta': 0.0}


def field_name(path):
    """How the loader names a field: ``('layers', 1, 'Q')`` -> ``layers[1]['Q']``."""
    if not path:
        return None
    return str(path[0]) + ''.join(f'[{p}]' if isinstance(p, int) else f'[{p!r}]'
                                  for p in path[1:])


def _kind(value):
    """How a message names a tree node that is not what it should be."""
    if isinstance(value, dict):
        return 'a dict'
    if isinstance(value, list):
        return 'a list'
    return f'the number {value!r}'[:80]


def _plain(value):
    """A tree node as plain dicts and lists (so that messages name dict and list)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class _Builder:
    """Builds one program, recording the line of every field it meets in ``lines``."""

    def __init__(self, tree):
        self.lines = {(): getattr(tree, 'line', None)}

    def note(self, path, node, key):
        """Record the line of ``node[key]`` (the line of the key) under ``path + (key,)``."""
        line = getattr(node, 'key_lines', {}).get(key) or getattr(node, 'line', None)
        self.lines[path + (key,)] = line or self.line(path)

    def line(self, path):
        """The line of the field at ``path``, or of the closest enclosing field."""
        while path not in self.lines:
            path = path[:-1]
        return self.lines[path]

    # -------------------------------------------------------------------- arrays

    def shape(self, node, path, line):
        """Shape of a nested list of numbers; refuses ragged or mixed nesting."""
        if not isinstance(node, list):
            return ()
        if not node:
            return (0,)
        if all(isinstance(v, list) for v in node):
            shapes = [self.shape(v, path, getattr(v, 'line', None) or line) for v in node]
            for i, s in enumerate(shapes):
                if s != shapes[0]:
                    fail(f'{field_name(path)} is ragged: entry [{i}] has shape {s} but entry [0] '
                         f'has shape {shapes[0]}; every row must have the same length',
                         field_name(path), getattr(node[i], 'line', None) or line)
            return (len(node),) + shapes[0]
        if any(isinstance(v, (list, dict)) for v in node):
            fail(f'{field_name(path)} mixes numbers and lists (or dicts) at the same level',
                 field_name(path), line)
        return (len(node),)

    def array(self, node, path, ndim, empty=None):
        """A float64 array from a nested list; ``[]`` becomes ``np.zeros(empty)`` if given."""
        field, line = field_name(path), self.line(path)
        if not isinstance(node, list):
            fail(f'{field} must be a {ndim}-D list of numbers; got {_kind(node)}', field, line)
        if self.shape(node, path, line) == (0,) and empty is not None:
            return np.zeros(empty)
        try:
            return np.array(node, dtype=np.float64)
        except OverflowError:
            fail(f'{field} holds an integer too large for a float', field, line)

    def number(self, value, path):
        try:
            return float(value)
        except OverflowError:
            fail(f'{field_name(path)} is an integer too large for a float', field_name(path),
                 self.line(path))

    # -------------------------------------------------------------------- fields

    def program(self, tree):
        if not isinstance(tree, dict):
            fail(f'a program is a dict literal {{"tok_emb": ..., "pos_emb": ..., ...}}; got '
                 f'{_kind(tree)}', line=getattr(tree, 'line', None) or 1)
        for key in tree:
            self.note((), tree, key)
        extra = [k for k in tree if k not in TOP_FIELDS]
        if extra:
            fail(f'unknown key {extra[0]!r}; a program has {", ".join(TOP_FIELDS)}', extra[0],
                 self.line((extra[0],)))
        if 'tok_emb' not in tree:
            fail('the program has no "tok_emb" (the token embedding, vocab_size x d_model)',
                 'tok_emb', tree.line)
        tok = self.array(tree['tok_emb'], ('tok_emb',), 2)
        if tok.ndim == 2 and 0 in tok.shape:
            fail(f'tok_emb must have at least one row and one column; got shape {tok.shape}',
                 'tok_emb', self.line(('tok_emb',)))
        d_model = tok.shape[1] if tok.ndim == 2 else 0   # else param_problems names tok_emb
        out = (self.array(tree['out_emb'], ('out_emb',), 2) if 'out_emb' in tree
               else tok.copy())
        return {'tok_emb': tok, 'out_emb': out, 'pos_emb': self.pos_emb(tree, d_model),
                'layers': self.layers(tree.get('layers', []), d_model),
                'lnf': self.norm(tree.get('lnf'), ('lnf',))}

    def pos_emb(self, tree, d_model):
        block = tree.get('block_size')
        if block is not None:
            line = self.line(('block_size',))
            if not isinstance(block, Integral) or isinstance(block, bool):
                fail(f'block_size must be a whole number; got {block!r}'[:200], 'block_size', line)
            if not 1 <= block or block * d_model > MAX_BLOCK_CELLS:
                fail(f'block_size must be between 1 and {MAX_BLOCK_CELLS // max(d_model, 1):,} for '
                     f'd_model = {d_model}; got {block}'[:200], 'block_size', line)
        if 'pos_emb' not in tree:
            if block is None:
                fail('the program has neither "pos_emb" nor "block_size"; give one of them '
                     '(block_size B makes a zero (B, d_model) pos_emb)', 'pos_emb', tree.line)
            self.lines[('pos_emb',)] = self.line(('block_size',))
            return np.zeros((block, d_model))
        raw = tree['pos_emb']
        if isinstance(raw, list) and raw and all(
                isinstance(t, list) and t and isinstance(t[0], list) for t in raw):
            # a list of tables, one per position level (Chapter 9)
            for i, table in enumerate(raw):
                self.lines[('pos_emb', i)] = table.line or self.line(('pos_emb',))
            tables = [self.array(t, ('pos_emb', i), 2) for i, t in enumerate(raw)]
            rows = min(len(t) for t in tables)
            if block is not None and rows != block:
                fail(f'block_size is {block} but the shortest pos_emb table has {rows} rows',
                     'block_size', self.line(('block_size',)))
            return tables
        pos = self.array(raw, ('pos_emb',), 2)
        if block is not None and pos.ndim == 2 and len(pos) != block:
            fail(f'block_size is {block} but pos_emb has {len(pos)} rows', 'block_size',
                 self.line(('block_size',)))
        return pos

    def layers(self, raw, d_model):
        if not isinstance(raw, list):
            return _plain(raw)           # param_problems: 'layers' must be a list
        out = []
        for i, layer in enumerate(raw):
            self.lines[('layers', i)] = getattr(layer, 'line', None) or self.line(('layers',))
            out.append(self.layer(layer, ('layers', i), d_model) if isinstance(layer, dict)
                       else _plain(layer))
        return out

    def layer(self, node, path, d_model):
        for key in node:
            self.note(path, node, key)
        where = field_name(path)
        out = {}
        # attention: all four matrices, or none (a layer without heads)
        given = [k for k in 'QKVP' if k in node]
        if given and len(given) < 4:
            missing = [k for k in 'QKVP' if k not in node]
            fail(f'{where} gives {", ".join(given)} but not {", ".join(missing)}; write all four '
                 f'attention matrices or none', field_name(path + (missing[0],)), node.line)
        for k in 'QKVP':
            if not given:
                out[k] = np.zeros((0, d_model, 0))
                continue
            arr = self.array(node[k], path + (k,), LAYER_NDIMS[k], empty=(0, d_model, 0))
            out[k] = arr[None] if arr.ndim == 2 else arr      # one head written as a matrix
        # MLP: M1 and M2 together (or neither); biases default to zeros
        given = [k for k in ('M1', 'M2') if k in node]
        if len(given) == 1:
            other = 'M2' if given == ['M1'] else 'M1'
            fail(f'{where} gives {given[0]} but not {other}; write both MLP matrices or neither',
                 field_name(path + (other,)), node.line)
        if given:
            out['M1'] = self.array(node['M1'], path + ('M1',), 2, empty=(d_model, 0))
            out['M2'] = self.array(node['M2'], path + ('M2',), 2, empty=(0, d_model))
        else:
            out['M1'], out['M2'] = np.zeros((d_model, 0)), np.zeros((0, d_model))
        d_ff = out['M1'].shape[1] if out['M1'].ndim == 2 else 0
        out['b1'] = (self.array(node['b1'], path + ('b1',), 1, empty=(0,)) if 'b1' in node
                     else np.zeros(d_ff))
        out['b2'] = (self.array(node['b2'], path + ('b2',), 1) if 'b2' in node
                     else np.zeros(d_model))
        for k in ('ln1', 'ln2'):
            out[k] = self.norm(node.get(k), path + (k,))
        extra = {k: _plain(v) for k, v in node.items() if k not in LAYER_KEYS}
        return {k: out[k] for k in LAYER_KEYS} | extra   # param_problems names the extras

    def norm(self, node, path):
        if node is None:
            return dict(_NORM_DEFAULTS)
        if not isinstance(node, dict):
            return _plain(node)          # param_problems: must be a dict with gamma and beta
        for key in node:
            self.note(path, node, key)
        out = {}
        for key, default in _NORM_DEFAULTS.items():
            value = node.get(key, default)
            if isinstance(value, list):
                out[key] = self.array(value, path + (key,), 1)
            elif isinstance(value, dict):
                out[key] = _plain(value)  # param_problems: must be a number
            else:
                out[key] = self.number(value, path + (key,))
        return out | {k: _plain(v) for k, v in node.items() if k not in _NORM_DEFAULTS}


def build(tree):
    """The params dict of a parsed program (see the module docstring for the defaults).

    Raises:
        ProgramError: naming the line and field of the first problem in the
            text (``.problems`` lists all of them, each with its line).
    """
    builder = _Builder(tree)
    params = builder.program(tree)
    problems = param_problems(params)
    if problems:
        located = sorted(((builder.line(p.path) or 0, i, p) for i, p in enumerate(problems)))
        texts = [f'line {line}: {p}' if line else str(p) for line, _, p in located]
        line, _, first = located[0]
        raise ProgramError('load_program: ' + '\n  '.join(texts), field_name(first.path),
                           line or None, texts)
    return params
