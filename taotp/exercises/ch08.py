"""Checkers for Chapter 8, the TAOTP interpreter.

8.3: a letter of ``CHOICES_8_3`` or a function ``f(tokens) -> next token``, judged on
``prompts_8_3`` against the Fig. 8.3 program at full precision (the two-decimal listing;
the printed one-decimal weights are wrong on about a third of inputs).  8.4: a loader
``my_compile(text) -> params`` for compact programs that refuses malformed texts and never
executes the text; the package's loader (``LOADER_PARTS``) is switched off.  Cases are
partly drawn afresh; messages never show the expected value.
"""
import itertools
import json

import numpy as np

from ..decoding import last_token_argmax
from ..interpreter import book_listing, dump_program, load_program
from ..params import random_params
from . import toolkit
from .ch01 import REFUSE_1_4
from .judge import AnswerRaised, WorkerTimeout
from .registry import Puzzle, checker
from .toolkit import Finding, Passed

_CHOICES = {   # letter: (the claim, what it predicts on a prompt s)
    'a': ('it repeats the first token of the prompt', lambda s: s[0]),
    'b': ('it repeats the last token of the prompt', lambda s: s[-1]),
    'c': ('it outputs the smallest token seen so far', min),
    'd': ('it outputs the largest token seen so far', max),
    'e': ('it outputs the most frequent token so far',
          lambda s: max(sorted(set(s)), key=list(s).count)),
    'f': ('it counts: the next token is the last one plus 1', lambda s: (s[-1] + 1) % 20),
}
CHOICES_8_3 = {letter: claim for letter, (claim, _) in _CHOICES.items()}


# ----------------------------------------------------------------------------- 8.3

DRAWN_8_3 = 300


def prompts_8_3(seed):
    """The prompts of one check of 8.3, in groups of equal length: every prompt of 1 or 2
    tokens; of 3..8 tokens: all tokens equal, increasing and decreasing runs, the
    vocabulary's ends, the smallest token at every place (8 tokens), and 300 random ones
    drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    groups = [np.array(list(itertools.product(range(20), repeat=n))) for n in (1, 2)]
    for n in range(3, 9):
        special = [[v] * n for v in (0, 7, 19)]
        special += [list(range(19, 19 - n, -1)), list(range(n)), list(range(20 - n, 20)),
                    [19] * (n - 1) + [0], [0] + [19] * (n - 1)]
        if n == 8:
            special += [[13 if j != at else 4 for j in range(8)] for at in range(8)]
        groups += [np.array(special), rng.integers(0, 20, size=(DRAWN_8_3 // 6, n))]
    return groups


def _reference_8_3(groups):
    program = load_program(book_listing('min_2dp'))
    return [last_token_argmax(g, program) for g in groups]


_HINT_8_3 = ('read the listing again: which key wins the attention (look at Q and K), and '
             'what does the head copy?')


def _token(got, what, prompt):
    try:
        token = int(got)
        if token != got or isinstance(got, bool):
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise Finding(f'{what} returned {toolkit.short(got)} on prompt {prompt}; expected a '
                      f'token id (a whole number)', prompt) from None
    return token


# the package's forward pass, its pieces and its loop reference, off while 8.3's function runs
REFUSE_8_3 = dict.fromkeys(
    (name for name in REFUSE_1_4 if name != 'numpy.einsum'),
    'your function should say what the listing computes, not run it (the package\'s forward '
    'pass is switched off here)')


@checker('8.3')
def check_8_3(answer):
    """A letter of CHOICES_8_3 or a function tokens -> next token, against the exact program."""
    choice, what = None, 'your function'
    if isinstance(answer, str):
        key = answer.strip().lower().strip('()').strip()
        if key not in CHOICES_8_3:
            raise Finding(f'answer with one letter of CHOICES_8_3 ({", ".join(CHOICES_8_3)}) or a '
                          f'function; got {answer[:40]!r}')
        choice, what = _CHOICES[key][1], f'choice {key!r} ({CHOICES_8_3[key]})'
    elif not isinstance(answer, toolkit.Remote):
        raise Finding(f'expected a letter of CHOICES_8_3 or a function tokens -> next token; got '
                      f'{toolkit.describe(answer)}')
    groups = prompts_8_3(toolkit.fresh_seed())
    for seqs, targets in zip(groups, _reference_8_3(groups)):
        for seq, target in zip(seqs.tolist(), targets.tolist()):
            on = f'prompt {seq}'
            got = choice(seq) if choice else toolkit.call(answer, seq, what=what, on=on, seconds=5)
            if _token(got, what, seq) != target:
                if not choice:
                    raise toolkit.wrong(on, got, _HINT_8_3, seq)
                raise Finding(f'{on}: {what} gives {got} there, which is not what the program '
                              f'(at full precision) outputs', seq)
    return Passed(f'agrees with the Fig. 8.3 program at full precision on '
                  f'{sum(map(len, groups))} prompts (every prompt of 1-2 tokens; of 3-8 tokens: '
                  f'repeated tokens, runs, the smallest token at every place, the vocabulary\'s '
                  f'ends, and {DRAWN_8_3} random ones drawn for this check)')


# ----------------------------------------------------------------------------- 8.4 cases

_TOK = '[[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [-1.0, 0.0, 1.0]]'
_LAYER = ('{"Q": [[[2.0], [0.5], [-1.0]]], "K": [[[1.0], [0.0], [-1.0]]], '
          '"V": [[[1.0], [0.0], [0.0]]], "P": [[[3.0], [-1.0], [0.0]]], '
          '"M1": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], "b1": [0.5, -0.5], '
          '"M2": [[1.0, -1.0, 0.5], [0.0, 2.0, -2.0]], "b2": [0.0, 0.1, 0.0]%s}')
_LN = ', "ln1": {"gamma": 1.0, "beta": 0.0}, "ln2": {"gamma": 1.0, "beta": 0.0}'


def _text(layers=True, ln=True, pos=True, out=True, layers_key=True):
    """A small test program; each flag False leaves one field to its default."""
    fields = [f'"tok_emb": {_TOK}']
    fields.append('"pos_emb": [' + ', '.join(['[0.0, 0.0, 0.0]'] * 4) + ']' if pos
                  else '"block_size": 4')
    if out:
        fields.append(f'"out_emb": {_TOK}')
    if layers_key:
        fields.append('"layers": [' + (_LAYER % (_LN if ln else '') if layers else '') + ']')
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
    ('a K with the wrong d_model', _text().replace('"K": [[[1.0], [0.0], [-1.0]]]',
                                                   '"K": [[[1.0], [0.0]]]')),
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

# kinds of code a number can hide in, each giving back the int v it is built from (round 14:
# a loader that refused texts with '*', ' if ', '__' or 'exec(' and evaluated the rest passed)
CODE_KINDS = (
    ('a difference', '{} - 0'), ('a sum', '0 + {}'), ('a product', '{} * 1'),
    ('a floor division', '{} // 1'), ('a remainder', '{} % 1000'), ('a power', '{} ** 1'),
    ('a subscript', '[{}, 0][0]'), ('a conditional', '{} if 1 else 0'),
    ('a boolean operation', '0 or {}'), ('a call', 'abs({})'), ('a lambda', '(lambda: {})()'),
    ('an attribute', '({}).real'), ('a comprehension', '[{} for _ in [0]][0]'),
    ('a comparison', '{} * (0 < 1)'), ('a bit operation', '{} | 0'))
CODE_DRAWN = 4


def code_programs(seed):
    """The ``CODE_DRAWN`` texts holding code of one 8.4 check, ``(what, text)``: a kind each,
    in block_size or in an entry of tok_emb; evaluated, each gives a valid program."""
    rng = np.random.default_rng(seed)
    out = []
    for k in rng.choice(len(CODE_KINDS), size=CODE_DRAWN, replace=False):
        kind, form = CODE_KINDS[k]
        code, v = form.format(int(rng.integers(2, 10))), int(rng.integers(-3, 4))
        out.append((f'{kind} in block_size', f'{{"tok_emb": [[1.0, {v}]], "block_size": {code}}}')
                   if rng.random() < 0.5 else
                   (f'{kind} in tok_emb', f'{{"tok_emb": [[{code}, {v}]], "block_size": 2}}'))
    return out


# a text whose code, once run, raises an error that carries PAYLOAD_MARK
PAYLOAD_MARK = 'taotp-8.4: code from the program text ran'
_PAYLOAD = ('{"tok_emb": [[1.0, -1.0]], "block_size": '
            f'exec("raise RuntimeError(\'{PAYLOAD_MARK}\')")}}')

# texts whose code, once run, ends the process running it or never returns (round 12: a
# loader that evaluated the text and turned whatever happened into a plain ValueError passed;
# round 13: one that also replaced os._exit while it evaluated): tried last.  The last one
# loops in C over itertools.repeat, found from object itself: nothing an answer can replace,
# and it never lets another thread run
_TRIPWIRES = (
    ('a call of os._exit', '{"tok_emb": [[1.0, -1.0]], "block_size": __import__("os")._exit(0)}'),
    ('a call of os._exit reached without builtins',
     '{"tok_emb": [[1.0, -1.0]], "block_size": [c for c in ().__class__.__base__.__subclasses__'
     '() if c.__name__ == "_wrap_close"][0].__init__.__globals__["_exit"](0)}'),
    ('a set of an endless iterator', '{"tok_emb": [[1.0, -1.0]], "block_size": {*[c for c in ()'
     '.__class__.__base__.__subclasses__() if c.__name__ == "repeat"][0](0)}}'))


# ----------------------------------------------------------------------------- random programs

def _random_program(rng, exponents=False):
    """(compact text, full params) of a random small program: each default (layer norms, a tied
    ``out_emb``, a zero ``pos_emb``, no layers) is left out half the time; numbers are ints, floats
    of any length or exponent forms (tok_emb if ``exponents``); ``"M2": []`` is an empty MLP."""
    d, vocab, block = (int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(1, 6)))

    def exponent_form():          # 1e-05 as repr(float) writes it; 2E3, -2.5E+3 as others do
        mark = rng.choice(['e', 'E', 'e+', 'E+', 'e-', 'E-']) + '0' * int(rng.integers(2))
        return f'{rng.integers(-9999, 10000) / 1000:g}{mark}{rng.integers(13)}'

    def put(text, params, key, shape):            # ints, rounded floats, or exponent forms
        if exponents and key == 'tok_emb' or rng.random() < 0.15:      # (round 25: none drawn)
            forms = np.array([exponent_form() for _ in np.empty(shape).flat], object).reshape(shape)
            params[key], text[key] = forms.astype(np.float64), ('~' + forms + '~').tolist()
        elif rng.random() < 0.4:
            params[key] = rng.integers(-3, 4, size=shape).astype(np.float64)
            text[key] = params[key].astype(np.int64).tolist()
        else:
            params[key] = np.round(rng.standard_normal(shape) * 3, int(rng.integers(1, 17)))
            text[key] = params[key].tolist()

    def norm(text, params, key):                  # the default is written half the time
        default = rng.random() < 0.5
        params[key] = {'gamma': 1.0, 'beta': 0.0} if default else \
            {'gamma': float(rng.integers(1, 4)), 'beta': float(np.round(rng.normal(), 3))}
        if not default or rng.random() < 0.5:
            text[key] = params[key]

    text, params = {}, {}
    put(text, params, 'tok_emb', (vocab, d))
    if rng.random() < 0.5:                        # zero positions: pos_emb or block_size
        params['pos_emb'] = np.zeros((block, d))
        if rng.random() < 0.5:
            text['block_size'] = block
        else:
            text['pos_emb'] = np.zeros((block, d), dtype=np.int64).tolist()
    else:
        put(text, params, 'pos_emb', (block, d))
    if rng.random() < 0.5:                        # tied: out_emb may be left out
        params['out_emb'] = params['tok_emb'].copy()
        if rng.random() < 0.5:
            text['out_emb'] = text['tok_emb']
    else:
        put(text, params, 'out_emb', (vocab, d))
    params['layers'], layers = [], []
    for _ in range(int(rng.integers(0, 3))):
        heads, d_head, d_ff = (int(rng.integers(low, 3)) for low in (1, 1, 0))
        shapes = {**dict.fromkeys('QKVP', (heads, d, d_head)), 'M1': (d, d_ff), 'b1': (d_ff,),
                  'M2': (d_ff, d), 'b2': (d,)}
        layers.append({})
        params['layers'].append({})
        for key, shape in shapes.items():
            put(layers[-1], params['layers'][-1], key, shape)
        for key in ('ln1', 'ln2'):
            norm(layers[-1], params['layers'][-1], key)
    if layers or rng.random() < 0.5:
        text['layers'] = layers
    norm(text, params, 'lnf')
    keys = list(text)
    rng.shuffle(keys)                             # any order of the fields
    text = json.dumps({k: text[k] for k in keys}, indent=int(rng.integers(0, 3)) or None)
    return text.replace('"~', '').replace('~"', ''), params


RANDOM_PROGRAMS = 12


def random_programs(seed, count=RANDOM_PROGRAMS):
    """(compact text, full params) of the random programs of one check of 8.4."""
    rng = np.random.default_rng(seed)
    return [_random_program(rng, exponents=i < 2) for i in range(count)]


def dumped_program(seed):
    """The full random program whose ``dump_program`` text one check of 8.4 reads."""
    return random_params(np.random.default_rng(seed), vocab_size=4, block_size=5, d_model=3,
                         n_layers=2, n_heads=2, d_head=2, d_ff=3)


ARRAY_FIELDS = ('tok_emb', 'pos_emb', 'out_emb', 'Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2')
# Every check breaks a fresh random program in each of these ways (round 18: one field broken
# at random let a loader that never checked b1, and one that read a layer norm's "0.5" as a
# number, pass; round 19: leading sizes, head counts, depth, empty fields and the shape of a
# layer norm were never broken; round 21: a non-finite number, a ragged row and an empty
# field were each put in one field drawn at random; round 25: a norm's NaN, len(pos_emb) - 1)
MALFORMED_KINDS = (
    'norm:nan', 'norm:inf', 'key', 'block', 'contradicts:less', 'contradicts:more', 'zero width',
    'depth:less', 'heads:QK', 'heads:VP',
    *(f'{kind}:{field}' for kind in ('trailing', 'finite', 'empty') for field in ARRAY_FIELDS),
    *(f'ragged:{field}' for field in ARRAY_FIELDS if field not in ('b1', 'b2')),
    *(f'leading:{field}' for field in ('out_emb', 'Q', 'K', 'V', 'P', 'M1', 'M2')),
    *(f'depth:{field}' for field in ARRAY_FIELDS if field != 'pos_emb'),  # (a list of tables
    *(f'not a number:{place}' for place in ('array', 'lnf', 'ln', 'block_size')),  # is one:
    *(f'norm shape:{place}' for place in ('lnf', 'ln')))                           # Ch. 9)
MALFORMED_DRAWN = len(MALFORMED_KINDS)


def malformed_programs(seed):
    """(what, text) of the malformed texts one check of 8.4 draws: random compact programs,
    each broken one way, once per entry of ``MALFORMED_KINDS`` (a wrong trailing size, and a
    wrong depth, in each field; a wrong leading size or head count; a ragged row; an empty
    field, d_model 0; NaN or +-1e999 in an array, both in a layer norm; a layer norm's vector
    of the wrong length; an unknown key at some level; a block_size that is not a positive
    whole number, or one more and one less than pos_emb's rows; a string, true, false or null
    where a number belongs); only texts the package's own loader refuses are kept."""
    rng = np.random.default_rng([seed, 84])
    out, kinds, tries = [], list(MALFORMED_KINDS), 0
    while kinds:
        tries += 1
        if tries > 100 * len(MALFORMED_KINDS):
            raise RuntimeError(f'malformed_programs: no text of kind {kinds[0]!r} was refused')
        tree = json.loads(_random_program(rng)[0])
        made = _break(tree, kinds[0], rng)
        if made is None:
            continue
        what, text = made
        try:
            load_program(text)
            continue                              # still a program: try another draw
        except Exception:                         # noqa: BLE001 (refused: malformed)
            out.append((f'{what} (ch08.malformed_programs({seed})[{len(out)}])', text))
            kinds.pop(0)
    return out


def _arrays(tree):
    """(where, parent, key) of every array field of a compact program."""
    found = [(k, tree, k) for k in ('tok_emb', 'pos_emb', 'out_emb') if k in tree]
    for i, layer in enumerate(tree.get('layers', [])):
        found += [(f'layers[{i}].{k}', layer, k) for k in layer if k not in ('ln1', 'ln2')]
    return found


def _rows(value):
    """Every innermost list of a nested list."""
    if value and isinstance(value[0], list):
        return [row for v in value for row in _rows(v)]
    return [value]


def _norms(tree, which=('lnf', 'ln')):
    """(where, dict) of the layer norms of ``tree`` named in ``which`` ('lnf' the final one,
    'ln' every layer's ln1 and ln2), each added empty where the text leaves it out."""
    found = [('lnf', tree.setdefault('lnf', {}))] if 'lnf' in which else []
    if 'ln' in which:
        found += [(f'layers[{i}].{k}', layer.setdefault(k, {}))
                  for i, layer in enumerate(tree.get('layers', [])) for k in ('ln1', 'ln2')]
    return found


def _break(tree, kind, rng):
    """``tree`` broken one way, as (what, text), or None when this program cannot be; a
    ``kind:target`` names the field (or place) to break."""
    kind, _, target = kind.partition(':')
    if kind in ('trailing', 'ragged', 'finite'):
        fields = [(w, p, k) for w, p, k in _arrays(tree) if any(_rows(p[k]))
                  and target in ('', k)]
        if not fields:
            return None
        where, parent, key = fields[int(rng.integers(len(fields)))]
        rows = [r for r in _rows(parent[key]) if r]
        if kind == 'trailing':
            for row in _rows(parent[key]):
                row.append(0.0)
            what = f'one more number at the end of every row of {where}'
        elif kind == 'ragged':
            if len(rows) < 2:
                return None
            rows[int(rng.integers(len(rows)))].pop()
            what = f'a ragged {where} (one row a number short)'
        else:
            row = rows[int(rng.integers(len(rows)))]
            row[int(rng.integers(len(row)))] = float(rng.choice([np.nan, np.inf, -np.inf]))
            what = f'a number in {where} that is not finite'
    elif kind == 'heads':                          # one head fewer (or more) in Q and K, or V
        layers = [(i, layer) for i, layer in enumerate(tree.get('layers', []))]   # and P
        if not layers:
            return None
        i, layer = layers[int(rng.integers(len(layers)))]
        for key in target:
            layer[key] = layer[key][:-1] if len(layer[key]) > 1 else layer[key] * 2
        what = f'layers[{i}] with {len(layer[target[0]])} heads in {target[0]} and {target[1]}'
    elif kind == 'zero width':                    # d_model 0
        tree = {'tok_emb': [[] for _ in tree['tok_emb']], 'block_size': 2}
        what = 'a tok_emb of rows with no numbers (d_model 0)'
    elif kind in ('leading', 'depth', 'empty'):
        fields = [(w, p, k) for w, p, k in _arrays(tree)      # (an empty MLP, "M2": [], is
                  if p[k] and target in ('', 'less', k)]           # left alone)
        if not fields:
            return None
        where, parent, key = fields[int(rng.integers(len(fields)))]
        value = parent[key]
        if key == 'tok_emb':                      # tied, so out_emb cannot give it away
            tree.pop('out_emb', None)
        if kind == 'leading':                     # one row (or head) fewer, or one more
            parent[key] = value[:-1] if len(value) > 1 else value + value[:1]
            what = f'{where} with {len(parent[key])} rows (or heads) instead of {len(value)}'
        elif kind == 'empty':
            parent[key] = []
            what = f'{where} empty'
        elif target != 'less':
            parent[key] = [value]
            what = f'{where} nested one level deeper'
        else:
            if not value:
                return None
            parent[key] = value[0]
            what = f'{where} one level shallower'
    elif kind == 'norm shape':                    # a vector gamma or beta of the wrong size
        norms = _norms(tree, (target,))
        if not norms:
            return None
        where, norm = norms[int(rng.integers(len(norms)))]
        d = len(tree['tok_emb'][0])              # never 0 numbers (an empty field is 'empty'; a
        d += 1 if d == 1 else int(rng.choice([-1, 1]))   # loader reading a vector's first passed)
        key = str(rng.choice(['gamma', 'beta']))
        norm[key] = [1.0] * d
        what = f'{where}[{key!r}] a vector of {d} numbers'
    elif kind == 'norm':                          # a layer norm's gamma or beta not finite
        norms = _norms(tree)
        where, norm = norms[int(rng.integers(len(norms)))]
        key = str(rng.choice(['gamma', 'beta']))
        norm[key] = np.nan if target == 'nan' else float(rng.choice([np.inf, -np.inf]))  # 1e999
        what = f'{where}[{key!r}] not finite'
    elif kind == 'key':
        places = [('the top level', tree)] + [(f'layers[{i}]', layer) for i, layer in
                                              enumerate(tree.get('layers', []))]
        places += [(f'layers[{i}].{k}', layer.setdefault(k, {'gamma': 1.0, 'beta': 0.0}))
                   for i, layer in enumerate(tree.get('layers', [])) for k in ('ln1', 'ln2')]
        places.append(('lnf', tree.setdefault('lnf', {'gamma': 1.0, 'beta': 0.0})))
        where, place = places[int(rng.integers(len(places)))]
        name = ''.join(rng.choice(list('abcdefgqkvpm_'), size=int(rng.integers(1, 8))))
        place[name + '_x'] = 1.0
        what = f'an unknown key in {where}'
    elif kind == 'block':
        tree.pop('pos_emb', None)
        tree['block_size'] = float(rng.choice([0, -int(rng.integers(1, 5)),
                                               int(rng.integers(1, 5)) + 0.5]))
        what = f'block_size {tree["block_size"]:g}'
    elif kind == 'not a number':                  # round 17: strings and booleans were read
        if target == 'array':                     # as numbers
            places = [(f'a number in {w}', row, int(rng.integers(len(row))))
                      for w, p, k in _arrays(tree) for row in _rows(p[k]) if row]
        elif target == 'block_size':
            tree['block_size'] = len(tree.pop('pos_emb', [0])) or 1
            places = [('block_size', tree, 'block_size')]
        else:
            places = [(f'{w}[{k!r}]', norm, k) for w, norm in _norms(tree, (target,))
                      for k in ('gamma', 'beta')]
        if not places:
            return None
        where, parent, key = places[int(rng.integers(len(places)))]
        number = parent.get(key, 1.0) if isinstance(parent, dict) else parent[key]
        parent[key] = [str(number), True, False, None][int(rng.integers(4))]
        what = f'{where} written as {json.dumps(parent[key])}'
    else:
        if len(tree.get('pos_emb', [])) < (2 if target == 'less' else 1):   # never block_size 0
            return None
        tree['block_size'] = len(tree['pos_emb']) + (1 if target == 'more' else -1)
        what = f'block_size {tree["block_size"]} with a pos_emb of {len(tree["pos_emb"])} rows'
    return what, json.dumps(tree).replace('Infinity', '1e999')   # NaN stays a name


# ----------------------------------------------------------------------------- 8.4 check

LOADER_PARTS = ('taotp.interpreter.load.load_program', 'taotp.interpreter.parse.parse',
                'taotp.interpreter.parse.parse_json', 'taotp.interpreter.parse._walk',
                'taotp.interpreter.build.build', 'taotp.interpreter.build._Builder')
_LOADER_HINT = ('it is part of taotp.load_program, the package\'s own answer to this puzzle; '
                'write the loader yourself')
_NOT_A_REFUSAL = ('SystemExit', 'KeyboardInterrupt', 'GeneratorExit', 'BaseException', 'Refused')


def _difference(want, got, path=()):
    """(field, what ``got`` holds there) where ``got`` first differs from ``want`` bit for
    bit, or None; never ``want``'s value."""
    where = (str(path[0]) + ''.join(f'[{p!r}]' for p in path[1:])) if path else 'the top level'
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return where, (f'the keys {sorted(map(str, got))}' if isinstance(got, dict) else
                           toolkit.describe(got))
        return next((d for k in want if (d := _difference(want[k], got[k], path + (k,)))), None)
    if isinstance(want, list):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return where, f'{len(got)} entries' if isinstance(got, list) else toolkit.describe(got)
        return next((d for i, (w, g) in enumerate(zip(want, got))
                     if (d := _difference(w, g, path + (i,)))), None)
    if isinstance(got, (list, tuple)):
        return where, 'a nested list; return NumPy arrays (as taotp.load_program does)'
    x, y = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if x.shape != y.shape:
        return where, f'shape {x.shape}, which is not the shape of the full form'
    if x.tobytes() != y.tobytes():
        i = int(np.flatnonzero(x.view(np.int64).ravel() != y.view(np.int64).ravel())[0])
        return where, f'{float(x.ravel()[i])!r} at flat index {i}, which is not the full form\'s'
    return None


def _loaded(loader, text, what, want):
    """Run the loader on a valid text and compare its program with ``want``, bit for bit."""
    raw = toolkit.call(loader, text, what='your loader', on=what, seconds=10)
    if raw is None:
        raise Finding(f'your loader returned None on {what} (starter code not filled in yet?)')
    toolkit.program(raw, what=f'the params your loader made from {what}')
    if difference := _difference(want, raw):
        raise Finding(f'{what}: your program differs from the full form at {difference[0]}: '
                      f'your loader gave {difference[1]}', what)


def _must_refuse(loader, text, what, because):
    """The loader must raise an error with a message on ``text``, without running its code."""
    tripwire = text in dict(_TRIPWIRES).values()
    try:
        out = toolkit.call(loader, text, what='your loader', on=what, seconds=3 if tripwire else 10)
    except Finding as f:
        raised = f.__context__                      # what toolkit.call turned into the finding
        if not isinstance(raised, AnswerRaised):
            if tripwire:
                ended = ('did not return' if isinstance(raised, WorkerTimeout) else
                         'ended the process running it')
                raise Finding(f'on {what} your loader {ended}: it ran the code in {text!r}; '
                              f'parse the text, never eval it', what) from None
            raise                                   # a time-out or a crash
        if PAYLOAD_MARK in raised.text or PAYLOAD_MARK in raised.detail:
            raise Finding(f'on {what} your loader executed code from the program text (it ran '
                          f'the call in {text!r}); parse the text, never eval it', what) from None
        if raised.kind.split()[-1].strip('()') in _NOT_A_REFUSAL:    # 'X (a SystemExit)' too
            raise
        if not raised.text.strip():
            raise Finding(f'on {what} your loader raised {raised.kind} with an empty message; '
                          f'say what is wrong', what) from None
        return
    try:
        toolkit.program(out)
    except Finding as f:
        because = f'the result is invalid: {f.message}'
    raise Finding(f'on {what} your loader returned a value instead of raising an error '
                  f'({because})', what)


@checker('8.4')
def check_8_4(my_compile):
    """``my_compile(text) -> params``: compact forms, the printed listings, errors, no code."""
    if not isinstance(my_compile, toolkit.Remote):
        raise Finding(f'expected a function text -> params; got {toolkit.describe(my_compile)}')
    seed = toolkit.fresh_seed()
    for name in ('hello_world', 'min'):     # as printed: Fig. 8.3 has "M2": [] and norm dicts
        _loaded(my_compile, book_listing(name), f'the book listing {name!r}',
                load_program(book_listing(name)))
    _loaded(my_compile, dump_program(dumped_program(seed)),
            f'the dumped random program ch08.dumped_program({seed})', dumped_program(seed))
    for what, text, full_text in _COMPACT_CASES:
        _loaded(my_compile, text, f'a program with {what}', load_program(full_text))
    for i, (text, want) in enumerate(random_programs(seed)):
        _loaded(my_compile, text, f'random compact program {i} of ch08.random_programs({seed}) '
                                  f'({text[:200]})', want)
    for what, text in _MALFORMED + tuple(malformed_programs(seed)):
        _must_refuse(my_compile, text, what, 'the text is malformed')
    drawn = tuple((f'{what} (ch08.code_programs({seed})[{i}])', text)
                  for i, (what, text) in enumerate(code_programs(seed)))
    for what, text in _EXPRESSIONS + drawn + (('a function call', _PAYLOAD),) + _TRIPWIRES:
        _must_refuse(my_compile, text, f'a text holding {what}',
                     'it evaluated code; parse the text, never eval it')
    return Passed(f'reads both printed listings and a dumped random program exactly; '
                  f'{len(_COMPACT_CASES) + RANDOM_PROGRAMS} compact forms ({RANDOM_PROGRAMS} '
                  f'random, drawn for this check: any field order, ints, floats and exponent '
                  f'forms, MLPs of width 0) equal their full forms; raises with a message on '
                  f'{len(_MALFORMED)} malformed texts and {MALFORMED_DRAWN} drawn for this check; '
                  f'refuses {len(_EXPRESSIONS) + 1 + len(_TRIPWIRES) + CODE_DRAWN} texts holding '
                  f'code ({CODE_DRAWN} drawn for this check, of {len(CODE_KINDS)} kinds) and '
                  f'never runs them; the package\'s own loader was switched off')


PUZZLES = [
    Puzzle('8.1', 'Write any meaningful program directly as numbers in the TAOTP language'),
    Puzzle('8.2', 'Change the Fig. 8.2 listing a little: predict, then check'),
    Puzzle('8.3', 'What does the Fig. 8.3 listing compute? (ideally without running it)',
           'checked', check_8_3, refuse=REFUSE_8_3),
    Puzzle('8.4', 'A loader for compact programs (defaults, block_size, no layers key)',
           'checked', check_8_4, refuse={name: _LOADER_HINT for name in LOADER_PARTS}),
]
