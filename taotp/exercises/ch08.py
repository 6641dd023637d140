"""Checkers for Chapter 8, the TAOTP interpreter.

* 8.3 (quiz): what does the Fig. 8.3 listing compute?  Answer with a letter of
  ``CHOICES_8_3`` or with a Python function ``f(tokens) -> next token`` that
  predicts the program.  The reference is the program at full precision (the
  two-decimal listing, which equals ``build_min_transformer(20, 8)`` on every
  input tested), not the printed one-decimal weights, which are wrong on about
  a third of inputs.
* 8.4: a loader ``my_compile(text) -> params`` that accepts compact programs
  (default layer norms, no ``layers`` key, ``block_size`` instead of
  ``pos_emb``, no ``out_emb``, the printed ``"M2": []``), refuses malformed
  texts with an exception and never executes the text.
"""
import builtins
import functools
import itertools
import json
import types
from contextlib import contextmanager

import numpy as np

from ..decoding import last_token_argmax
from ..interpreter import book_listing, dump_program, load_program
from ..interpreter import build as _build_module, load as _load_module, parse as _parse_module
from ..params import params_difference, random_params
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed

CHOICES_8_3 = {
    'a': 'it repeats the first token of the prompt',
    'b': 'it repeats the last token of the prompt',
    'c': 'it outputs the smallest token seen so far',
    'd': 'it outputs the largest token seen so far',
    'e': 'it outputs the most frequent token so far',
    'f': 'it counts: the next token is the last one plus 1',
}

_CHOICE_FUNCTIONS = {
    'a': lambda s: s[0],
    'b': lambda s: s[-1],
    'c': min,
    'd': max,
    'e': lambda s: max(sorted(set(s)), key=list(s).count),
    'f': lambda s: (s[-1] + 1) % 20,
}


def _inputs_8_3(seed=0, n_random=300):
    """Every prompt of 1 or 2 tokens, adversarial ones of 3..8, then seeded random ones of 3..8.

    The adversarial prompts: all tokens equal, increasing and decreasing runs,
    the smallest token at every place of an 8-token prompt, the vocabulary's ends.
    """
    rng = np.random.default_rng(seed)
    groups = [np.array(list(itertools.product(range(20), repeat=n))) for n in (1, 2)]
    for n in range(3, 9):
        special = [[v] * n for v in (0, 7, 19)]
        special += [list(range(19, 19 - n, -1)), list(range(n)), list(range(20 - n, 20)),
                    [19] * (n - 1) + [0], [0] + [19] * (n - 1)]
        if n == 8:
            special += [[13 if j != at else 4 for j in range(8)] for at in range(8)]
        groups.append(np.array(special))
        groups.append(rng.integers(0, 20, size=(n_random // 6, n)))
    return groups


def _reference_8_3(groups):
    program = load_program(book_listing('min_2dp'))
    return [last_token_argmax(g, program) for g in groups]


@checker('8.3')
def check_8_3(answer):
    """A letter of CHOICES_8_3 or a function tokens -> next token, against the exact program."""
    groups = _inputs_8_3()
    # read-only copies (tuples of ints): a function cannot rewrite what it is compared with
    want = tuple(tuple(int(t) for t in w) for w in _reference_8_3(groups))
    groups = tuple(tuple(tuple(int(t) for t in seq) for seq in g) for g in groups)
    if isinstance(answer, str):
        key = answer.strip().lower().strip('()').strip()
        if key not in CHOICES_8_3:
            raise Finding(f'answer with one letter of CHOICES_8_3 ({", ".join(CHOICES_8_3)}) or a '
                          f'function; got {answer!r}')
        answer_fn, what = _CHOICE_FUNCTIONS[key], f'choice {key!r} ({CHOICES_8_3[key]})'
    elif callable(answer):
        answer_fn, what = answer, 'your function'
    elif answer is None:
        raise Finding('no answer yet: give a letter of CHOICES_8_3 or a function tokens -> token')
    else:
        raise Finding(f'expected a letter or a function; got {type(answer).__name__}')
    checked = 0
    for seqs, targets in zip(groups, want):
        for seq, target in zip(seqs, targets):
            prompt = [int(t) for t in seq]
            got = guard.call(answer_fn, list(prompt), what=what, on=f'prompt {prompt}',
                             seconds=5)
            try:
                if isinstance(got, (bool, np.bool_)):
                    raise TypeError('a bool is not a token id')
                got_id = int(got)
            except (TypeError, ValueError, OverflowError):
                raise Finding(f'{what} returned {got!r} on prompt {prompt}; expected a token id',
                              prompt) from None
            if got_id != got or got_id != int(target):
                raise Finding(f'prompt {prompt}: the program (at full precision) outputs '
                              f'{int(target)}, {what} says {got!r}', prompt)
            checked += 1
    return Passed(f'agrees with the Fig. 8.3 program at full precision on {checked} prompts '
                  f'(every prompt of 1-2 tokens; of 3-8 tokens: repeated tokens, runs, the '
                  f'smallest token at every place, the vocabulary\'s ends, and seeded random '
                  f'ones)')


# ----------------------------------------------------------------------------- 8.4

_TOK = '[[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [-1.0, 0.0, 1.0]]'
_LAYER = ('{"Q": [[[2.0], [0.5], [-1.0]]], "K": [[[1.0], [0.0], [-1.0]]], '
          '"V": [[[1.0], [0.0], [0.0]]], "P": [[[3.0], [-1.0], [0.0]]], '
          '"M1": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], "b1": [0.5, -0.5], '
          '"M2": [[1.0, -1.0, 0.5], [0.0, 2.0, -2.0]], "b2": [0.0, 0.1, 0.0]%s}')
_LN = ', "ln1": {"gamma": 1.0, "beta": 0.0}, "ln2": {"gamma": 1.0, "beta": 0.0}'


def _text(layers=True, ln=True, pos=True, out=True, layers_key=True, k_rows=None):
    """A small test program; each flag False leaves one field to its default."""
    fields = [f'"tok_emb": {_TOK}']
    fields.append('"pos_emb": [' + ', '.join(['[0.0, 0.0, 0.0]'] * 4) + ']' if pos
                  else '"block_size": 4')
    if out:
        fields.append(f'"out_emb": {_TOK}')
    layer = _LAYER % (_LN if ln else '')
    if k_rows is not None:
        layer = layer.replace('"K": [[[1.0], [0.0], [-1.0]]]', k_rows)
    if layers_key:
        fields.append('"layers": [' + (layer if layers else '') + ']')
    if ln:
        fields.append('"lnf": {"gamma": 1.0, "beta": 0.0}')
    return '{\n    ' + ',\n    '.join(fields) + '\n}'


# (what is left out, compact text, full text)
_COMPACT_CASES = (
    ('no layer norms anywhere', _text(ln=False), _text()),
    ('no "layers" key', _text(layers_key=False), _text(layers=False)),
    ('block_size instead of pos_emb', _text(pos=False), _text()),
    ('no out_emb (tied to tok_emb)', _text(out=False), _text()),
    ('all of these at once', _text(ln=False, pos=False, out=False, layers_key=False),
     _text(layers=False)),
)

_MALFORMED = (
    ('a ragged tok_emb', '{"tok_emb": [[1.0, -1.0, 0.0], [0.0, 1.0]], "block_size": 2}'),
    ('a K with the wrong d_model', _text(k_rows='"K": [[[1.0], [0.0]]]')),
    ('an unknown top-level key', '{"tok_emb": [[1.0, -1.0]], "block_size": 2, "tok_embs": []}'),
    ('an unknown key in a layer', _text().replace('"b2"', '"M3": [1.0], "b2"')),
    ('an unknown key in a layer norm', '{"tok_emb": [[1.0, -1.0]], "block_size": 2, '
                                       '"lnf": {"gama": 1.0}}'),
    ('no tok_emb', '{"block_size": 2}'),
    ('not a dict', '[1, 2, 3]'),
    ('an infinite number', '{"tok_emb": [[1.0, 1e999]], "block_size": 2}'),
    ('block_size 0', '{"tok_emb": [[1.0, -1.0]], "block_size": 0}'),
    ('a fractional block_size', '{"tok_emb": [[1.0, -1.0]], "block_size": 2.5}'),
    ('a block_size that contradicts pos_emb',
     '{"tok_emb": [[1.0, -1.0]], "pos_emb": [[0.0, 0.0]], "block_size": 2}'),
)

# texts that hold code: evaluated, each would give a valid program, so a loader must refuse them
_EXPRESSIONS = (
    ('a list times a number', '{"tok_emb": [[1.0, -1.0]] * 2, "block_size": 2}'),
    ('a power', '{"tok_emb": [[2 ** 0, -1.0]], "block_size": 2}'),
    ('a conditional expression', '{"tok_emb": [[1.0, -1.0]], "block_size": 2 if 1 else 3}'),
)

_SNEAKY = "__import__('builtins').__dict__.__setitem__('_taotp_8_4_ran', True)"


# ----------------------------------------------------------------------------- random programs

def _table(rng, shape):
    """Small random numbers: whole ones (written as ints) or floats rounded to a random place."""
    if rng.random() < 0.4:
        return rng.integers(-3, 4, size=shape).astype(np.float64), True
    return np.round(rng.standard_normal(shape) * 3, int(rng.integers(1, 17))), False


def _written(value, whole):
    return np.asarray(value).astype(np.int64).tolist() if whole else np.asarray(value).tolist()


def _random_program(rng):
    """(compact text, full params): a random small program and a text that omits defaults.

    Each default the text may leave out (layer norms, ``out_emb`` when tied,
    ``pos_emb`` when zero, ``layers`` when empty) is left out half the time;
    numbers are ints or floats of any length, and an MLP of width 0 is written
    as the book writes it (``"M1": [[], ...]``, ``"b1": []``, ``"M2": []``).
    """
    d, vocab, block = (int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    default = {'gamma': 1.0, 'beta': 0.0}

    def norm():
        if rng.random() < 0.5:
            return dict(default), True
        return {'gamma': float(rng.integers(1, 4)), 'beta': float(np.round(rng.normal(), 3))}, \
            False

    text, params = {}, {}
    tok, whole = _table(rng, (vocab, d))
    text['tok_emb'], params['tok_emb'] = _written(tok, whole), tok
    if rng.random() < 0.5:
        params['pos_emb'] = np.zeros((block, d))
        if rng.random() < 0.5:
            text['block_size'] = block
        else:
            text['pos_emb'] = _written(params['pos_emb'], True)
    else:
        pos, whole = _table(rng, (block, d))
        text['pos_emb'], params['pos_emb'] = _written(pos, whole), pos
    if rng.random() < 0.5:                        # tied: out_emb may be left out
        params['out_emb'] = tok.copy()
        if rng.random() < 0.5:
            text['out_emb'] = _written(tok, whole)
    else:
        out, whole = _table(rng, (vocab, d))
        text['out_emb'], params['out_emb'] = _written(out, whole), out
    params['layers'], layers = [], []
    for _ in range(int(rng.integers(0, 3))):
        heads, d_head, d_ff = (int(rng.integers(1, 3)), int(rng.integers(1, 3)),
                               int(rng.integers(0, 3)))
        shapes = {'Q': (heads, d, d_head), 'K': (heads, d, d_head), 'V': (heads, d, d_head),
                  'P': (heads, d, d_head), 'M1': (d, d_ff), 'b1': (d_ff,), 'M2': (d_ff, d),
                  'b2': (d,)}
        layer_text, layer = {}, {}
        for key, shape in shapes.items():
            value, whole = _table(rng, shape)
            layer_text[key], layer[key] = _written(value, whole), value
        for key in ('ln1', 'ln2'):
            layer[key], is_default = norm()
            if not is_default or rng.random() < 0.5:
                layer_text[key] = layer[key]
        params['layers'].append(layer)
        layers.append(layer_text)
    if layers or rng.random() < 0.5:
        text['layers'] = layers
    params['lnf'], is_default = norm()
    if not is_default or rng.random() < 0.5:
        text['lnf'] = params['lnf']
    keys = list(text)
    rng.shuffle(keys)                             # any order of the fields
    return json.dumps({k: text[k] for k in keys}, indent=int(rng.integers(0, 3)) or None), params


RANDOM_PROGRAMS = 12


def _full_program():
    """The full program 8.4 asks back from its ``dump_program`` text."""
    return random_params(np.random.default_rng(84), vocab_size=4, block_size=5, d_model=3,
                         n_layers=2, n_heads=2, d_head=2, d_ff=3)


def _random_programs(count=RANDOM_PROGRAMS, seed=841):
    rng = np.random.default_rng(seed)
    return [_random_program(rng) for _ in range(count)]


# ----------------------------------------------------------------------------- the check

class _PackageLoader(BaseException):
    """Raised when a submission calls the package's own loader during the check."""


@contextmanager
def _package_loader_refused():
    """While a submitted loader runs, ``taotp.load_program`` and its parts refuse to work."""
    def refuse(*args, **kwargs):
        raise _PackageLoader('it called taotp.load_program (or its parser), the package\'s '
                             'own answer to this puzzle; write the loader yourself')

    patched = [(_load_module, 'build'), (_load_module, 'parse'), (_load_module, 'parse_json'),
               (_parse_module, 'parse'), (_parse_module, 'parse_json'), (_build_module, 'build')]
    saved = [getattr(module, name) for module, name in patched]
    for module, name in patched:
        setattr(module, name, refuse)
    try:
        yield
    finally:
        for (module, name), original in zip(patched, saved):
            setattr(module, name, original)


def _same(want, got, where):
    """Raise a Finding at the first difference between two params dicts (exact, bit for bit)."""
    difference = params_difference(want, got)
    if difference is not None:
        hint = (' (return NumPy arrays, not nested lists: a list of tables as pos_emb means '
                'several position tables)' if 'lists of different' in difference else '')
        raise Finding(f'{where}: differs from the full form at {difference}{hint}')


@functools.lru_cache(maxsize=None)
def _package_loader_code():
    """Code object -> name of every function of the package's loader (parse, build, load).

    A loader that calls any of them, however it got hold of them (``from
    taotp.interpreter.parse import parse`` before the check included), is refused.
    """
    found = {}
    for module in (_parse_module, _build_module, _load_module):
        for name, obj in vars(module).items():
            if isinstance(obj, types.FunctionType) and obj.__module__ == module.__name__:
                found[obj.__code__] = f'{module.__name__}.{name}'
    return types.MappingProxyType(found)


def _watched_call(fn, *args, on, **kwargs):
    """``guard.call`` that also refuses a loader handing the work to the package's loader."""
    with guard.watching(_package_loader_code()) as seen:
        out = guard.call(fn, *args, on=on, **kwargs)
    if seen:
        raise Finding(f'on {on} your loader called {seen[0]}, part of taotp.load_program, the '
                      f'package\'s own answer to this puzzle; write the loader yourself', on)
    return out


def _load(my_compile, text, what):
    params = _watched_call(my_compile, text, what='your loader', on=what, seconds=10)
    return guard.program(params, what=f'the params your loader made from {what}')


def _attempt(my_compile, text, what):
    """``(result, None)`` if the loader returned, ``(None, exception)`` if it raised one.

    Exits, Ctrl-C raised by the loader and time-outs are findings (``guard.call``).
    """
    def attempt():
        try:
            return my_compile(text), None
        except Exception as exc:
            return None, exc
    return _watched_call(attempt, what='your loader', on=what, seconds=10)


def _must_refuse(my_compile, text, what, because):
    out, error = _attempt(my_compile, text, what)
    if error is not None:
        if not str(error).strip():
            raise Finding(f'on {what} your loader raised {type(error).__name__} with an empty '
                          f'message; say what is wrong', text)
        return
    problems = None
    try:
        guard.program(out)
    except Finding as f:
        problems = f.message
    raise Finding(f'on {what} your loader returned a value instead of raising an error'
                  + (f' (the result is invalid: {problems})' if problems else f' ({because})'),
                  text)


@checker('8.4')
def check_8_4(my_compile):
    """``my_compile(text) -> params``: compact forms, the printed listings, errors, no code."""
    if not callable(my_compile):
        raise Finding(f'expected a function text -> params; got {type(my_compile).__name__}')

    def loaded(text, what):                 # the package's loader is off while yours runs
        with _package_loader_refused():
            return _load(my_compile, text, what)

    # every expected program is made after your loader ran, from the texts: your loader never
    # holds a program of the check's (one that rewrote them would make anything pass)
    # 1. the book's listings as printed (Fig. 8.3 has "M2": [] and layer-norm dicts)
    for name in ('hello_world', 'min'):
        got = loaded(book_listing(name), f'the book listing {name!r}')
        _same(load_program(book_listing(name)), got, f'book listing {name!r}')
    # 2. a full program written by dump_program
    got = loaded(dump_program(_full_program()), 'a dumped random program')
    _same(_full_program(), got, 'a dumped random program')
    # 3. compact forms must equal their full forms
    for what, text, full_text in _COMPACT_CASES:
        got = loaded(text, f'a program with {what}')
        _same(load_program(full_text), got, f'with {what}')
    for i in range(RANDOM_PROGRAMS):
        what = f'random compact program {i}'
        got = loaded(_random_programs()[i][0], what)
        text, want = _random_programs()[i]
        _same(want, got, f'{what} ({text[:200]})')
    with _package_loader_refused():
        # 4. malformed texts must raise, not return something
        for what, text in _MALFORMED:
            _must_refuse(my_compile, text, what, 'the text is malformed')
        # 5. the text must never be executed
        for what, text in _EXPRESSIONS:
            _must_refuse(my_compile, text, f'a text holding {what}',
                         'it evaluated code; parse the text, never eval it')
        try:
            _attempt(my_compile, _SNEAKY, 'a text holding a function call')
            if getattr(builtins, '_taotp_8_4_ran', False):
                raise Finding('your loader executed code from the program text (it ran '
                              f'{_SNEAKY!r}); parse the text, never eval it', _SNEAKY)
        finally:
            if hasattr(builtins, '_taotp_8_4_ran'):
                delattr(builtins, '_taotp_8_4_ran')
    return Passed(f'reads both printed listings and a dumped program exactly; '
                  f'{len(_COMPACT_CASES) + RANDOM_PROGRAMS} compact forms ({RANDOM_PROGRAMS} '
                  f'random: any field order, ints and floats, MLPs of width 0) equal their full '
                  f'forms; '
                  f'raises with a message on {len(_MALFORMED)} malformed texts; refuses '
                  f'{len(_EXPRESSIONS) + 1} texts holding code and never runs them; the package\'s '
                  f'own loader was switched off while yours ran')


PUZZLES = [
    Puzzle('8.1', 'Write any meaningful program directly as numbers in the TAOTP language'),
    Puzzle('8.2', 'Change the Fig. 8.2 listing a little: predict, then check'),
    Puzzle('8.3', 'What does the Fig. 8.3 listing compute? (ideally without running it)',
           'checked', check_8_3),
    Puzzle('8.4', 'A loader for compact programs (defaults, block_size, no layers key)',
           'checked', check_8_4),
]
