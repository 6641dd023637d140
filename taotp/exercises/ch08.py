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
import itertools

import numpy as np

from ..decoding import last_token_argmax
from ..interpreter import book_listing, dump_program, load_program
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
    """Every prompt of 1 or 2 tokens, then seeded random prompts of 3..8 tokens."""
    rng = np.random.default_rng(seed)
    groups = [np.array(list(itertools.product(range(20), repeat=n))) for n in (1, 2)]
    for n in range(3, 9):
        groups.append(rng.integers(0, 20, size=(n_random // 6, n)))
    return groups


def _reference_8_3(groups):
    program = load_program(book_listing('min_2dp'))
    return [last_token_argmax(g, program) for g in groups]


@checker('8.3')
def check_8_3(answer):
    """A letter of CHOICES_8_3 or a function tokens -> next token, against the exact program."""
    groups = _inputs_8_3()
    want = _reference_8_3(groups)
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
                got_id = int(got)
            except (TypeError, ValueError, OverflowError):
                raise Finding(f'{what} returned {got!r} on prompt {prompt}; expected a token id',
                              prompt) from None
            if got_id != got or got_id != int(target):
                raise Finding(f'prompt {prompt}: the program (at full precision) outputs '
                              f'{int(target)}, {what} says {got!r}', prompt)
            checked += 1
    return Passed(f'agrees with the Fig. 8.3 program at full precision on {checked} prompts '
                  f'(every prompt of 1-2 tokens, seeded random ones of 3-8)')


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
_COMPACT_CASES = [
    ('no layer norms anywhere', _text(ln=False), _text()),
    ('no "layers" key', _text(layers_key=False), _text(layers=False)),
    ('block_size instead of pos_emb', _text(pos=False), _text()),
    ('no out_emb (tied to tok_emb)', _text(out=False), _text()),
    ('all of these at once', _text(ln=False, pos=False, out=False, layers_key=False),
     _text(layers=False)),
]

_MALFORMED = [
    ('a ragged tok_emb', '{"tok_emb": [[1.0, -1.0, 0.0], [0.0, 1.0]], "block_size": 2}'),
    ('a K with the wrong d_model', _text(k_rows='"K": [[[1.0], [0.0]]]')),
    ('an unknown top-level key', '{"tok_emb": [[1.0, -1.0]], "block_size": 2, "tok_embs": []}'),
    ('no tok_emb', '{"block_size": 2}'),
    ('not a dict', '[1, 2, 3]'),
]

_SNEAKY = "__import__('builtins').__dict__.__setitem__('_taotp_8_4_ran', True)"


def _same(want, got, where):
    """Raise a Finding at the first difference between two params dicts (exact, bit for bit)."""
    difference = params_difference(want, got)
    if difference is not None:
        raise Finding(f'{where}: differs from the full form at {difference}')


def _load(my_compile, text, what):
    params = guard.call(my_compile, text, what='your loader', on=what, seconds=10)
    return guard.program(params, what=f'the params your loader made from {what}')


@checker('8.4')
def check_8_4(my_compile):
    """``my_compile(text) -> params``: compact forms, the printed listings, errors, no code."""
    if not callable(my_compile):
        raise Finding(f'expected a function text -> params; got {type(my_compile).__name__}')
    # 1. the book's listings as printed (Fig. 8.3 has "M2": [] and layer-norm dicts)
    for name in ('hello_world', 'min'):
        text = book_listing(name)
        got = _load(my_compile, text, f'the book listing {name!r}')
        _same(load_program(text), got, f'book listing {name!r}')
    # 2. a full program written by dump_program
    rng = np.random.default_rng(84)
    full = random_params(rng, vocab_size=4, block_size=5, d_model=3, n_layers=2, n_heads=2,
                         d_head=2, d_ff=3)
    _same(full, _load(my_compile, dump_program(full), 'a dumped random program'),
          'a dumped random program')
    # 3. compact forms must equal their full forms
    for what, compact, full_text in _COMPACT_CASES:
        want = load_program(full_text)
        _same(want, _load(my_compile, compact, f'a program with {what}'), f'with {what}')
    # 4. malformed texts must raise, not return something
    for what, text in _MALFORMED:
        try:
            with guard.time_limit(10):
                out = my_compile(text)
        except guard._TimeUp:
            raise Finding(f'your loader took longer than 10 s on {what}') from None
        except Exception as exc:
            if not str(exc).strip():
                raise Finding(f'on {what} your loader raised {type(exc).__name__} with an empty '
                              f'message; say what is wrong') from None
            continue
        problems = None
        try:
            guard.program(out)
        except Finding as f:
            problems = f.message
        raise Finding(f'on {what} your loader returned a value instead of raising an error'
                      + (f' (the result is invalid: {problems})' if problems else ''), text)
    # 5. the text must never be executed
    try:
        try:
            with guard.time_limit(10):
                my_compile(_SNEAKY)
        except (Exception, guard._TimeUp):  # any refusal is fine here
            pass
        if getattr(builtins, '_taotp_8_4_ran', False):
            raise Finding('your loader executed code from the program text (it ran '
                          f'{_SNEAKY!r}); parse the text, never eval it', _SNEAKY)
    finally:
        if hasattr(builtins, '_taotp_8_4_ran'):
            delattr(builtins, '_taotp_8_4_ran')
    return Passed(f'reads both printed listings and a dumped program exactly; {len(_COMPACT_CASES)} '
                  f'compact forms equal their full forms; raises on {len(_MALFORMED)} malformed '
                  f'texts; did not execute an injected expression')


PUZZLES = [
    Puzzle('8.1', 'Write any meaningful program directly as numbers in the TAOTP language'),
    Puzzle('8.2', 'Change the Fig. 8.2 listing a little: predict, then check'),
    Puzzle('8.3', 'What does the Fig. 8.3 listing compute? (ideally without running it)',
           'checked', check_8_3),
    Puzzle('8.4', 'A loader for compact programs (defaults, block_size, no layers key)',
           'checked', check_8_4),
]
