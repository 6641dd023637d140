"""Checkers of Chapter 8: what each one calls solved, and the answers that must not pass.

Every answer goes through the real protocol (``checking.verdict``): pickled, run in a
worker, judged in the judge.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 8.1, 8.2 | no checker (open-ended; worked answers in the solutions notebook) | - |
| 8.3 | a letter of `CHOICES_8_3` or a function tokens -> next token that agrees with the Fig. 8.3 program at full precision on 776 prompts: every prompt of 1-2 tokens; of 3-8: repeated tokens, runs, the smallest token at every place, the vocabulary's ends, and 300 random ones drawn afresh; messages never say what the program outputs | every wrong letter; predicting the printed one-decimal weights; the minimum of all but the first token (caught by the adversarial prompts); True for token 1; half tokens, text, NaN. a function that runs the listing (printed, or the 2-decimal one: passed in round 7), refused since: the package's forward pass, its pieces and the loop reference are off in the worker. Not preventable: guessing among 6 letters |
| 8.4 | a loader `my_compile(text) -> params`: both printed listings, a dumped random program and 17 compact forms (12 random, drawn afresh: field order, ints, floats and exponent forms such as 1e-05, 2E3, -2.5E+3, at least in 2 of them, width-0 MLPs) equal their full forms bit for bit; 11 malformed texts and 7 drawn afresh (`ch08.malformed_programs`: a random program broken one way each, kept only if the package's loader refuses it; round 17: a string, true, false or null for a number, which a loader that read them as numbers passed; round 18: one break of each field's trailing size and a word for a number in each kind of place, array, lnf, ln1/ln2 and block_size, after a loader that never checked b1 and one that read layer norms with float() passed; round 19: a wrong leading size, head count, depth, an empty field and a layer norm of the wrong shape, after loaders missing each of those checks passed; round 21: a non-finite number, a ragged row and an empty field in every field, not in one drawn at random, after a loader that never checked b2's finiteness passed 9 checks in 10; a layer norm's wrong length never 0, which a loader reading a vector's first number got right by luck; round 25: a layer norm's NaN and a block_size one below len(pos_emb) on every check, after loaders missing those checks passed: 75 texts in all) raise with a message; 11 texts holding code are refused and never run (4 of them drawn afresh from 15 kinds of code hidden in block_size or tok_emb: round 14, a loader that evaluated every text without '*', ' if ', '__' or 'exec(' passed; two end the process that runs them: round 12, a loader that evaluated the text and turned whatever happened into a ValueError passed; one loops forever in C over an iterator found from `object`, holding the GIL: round 13, a loader that also replaced os._exit passed); the package's loader (`ch08.LOADER_PARTS`) is switched off where the loader runs | `taotp.load_program` itself, `compile_TAOTP`, a wrapper, the parser alone, `build(parse(text))` bound before the check; `eval` without builtins; a loader ignoring unknown layer keys or a `block_size` that contradicts `pos_emb`; nested lists instead of arrays; the book's Fig. 8.1 loader; a loader missing each default; one that returns garbage, changes a value, raises with no message, exits (also as a SystemExit named ValueError: round 12, the worker now names a non-Exception by its builtin class) or loops on malformed texts, runs the injected call, evaluates every text behind a ValueError (with or without builtins, with os._exit replaced) |

Red team (issue 17): attacks by class, and why they fail now.

| class | attack | puzzles | why it fails now |
|---|---|---|---|
| 1 oracle | a table of the program's output on every fixed prompt (as a loop of checks could harvest), a guess elsewhere | 8.3 | 300 prompts are drawn afresh; messages never print the program's output |
| 3 before | a thread started before `check` runs the package's loader for the answer (mailbox in a global) | 8.4 | the answer runs in a fresh worker: no thread of the kernel exists there |
| 3 before | `build(parse(text))` bound before the check; the package's `load_program` by name | 8.4 | switched off in the worker, whatever name holds it |
| 3 before | the package's loader run beforehand on every text of the checker (and of guessed seeds), looked up | 8.4 | the dumped and the random programs are drawn afresh |
| 3 before | the answer empties the checker's list of switched-off functions, then calls the package | 8.4 | the switch-off happened before the answer was loaded; the list it edits is the worker's copy |
| 3 before | rewrite the expected programs through the call's frames | 8.4 | the judge's frames are in another process |
| 6 space | a loader that rounds every number to 10 digits (right on every short number of the fixed texts) | 8.4 | random programs with up to 16 decimals, compared bit for bit |
| 6 space | a loader that checks only what the 11 fixed malformed texts break (round 9: NaN, a wrong Q, pos_emb's width, an unknown key in ln1 went through) | 8.4 | 7 malformed texts drawn afresh, one per kind, anywhere in a random program |
| 6 space | a loader that refuses non-finite numbers in arrays only, not in a layer norm (round 11) | 8.4 | a drawn text with a layer norm's gamma or beta at +-1e999 |
| 6 space | round 25: a loader that refuses every number with an exponent (1e-05, 2E3); one that refuses only a block_size above len(pos_emb); one that reads a layer norm's NaN as the default | 8.4 | the first 2 random programs write tok_emb with exponents (any array may, 15 %); a block_size one above and one below, and a NaN and +-1e999 in a layer norm, are drawn on every check |
"""
import ast
import copy
import inspect
import json
import math
import re
import sys
import time

import numpy as np
import pytest

import taotp
from checking import SHORT, fails, passes, verdict
from solutions import answer
from taotp.exercises import ch08, registry
from taotp.exercises.ch08 import CHOICES_8_3


def test_registry_rows():
    rows = {p.id: p for p in registry().values() if p.chapter == 8}
    assert sorted(rows) == ['8.1', '8.2', '8.3', '8.4']
    assert [rows[i].kind for i in sorted(rows)] == ['reflect', 'reflect', 'checked', 'checked']
    assert set(rows['8.4'].refuse) == set(ch08.LOADER_PARTS)


# ----------------------------------------------------------------------------- 8.3

@pytest.mark.parametrize('answer_', [' C ', '(c)', min, lambda s: int(np.min(s))])
def test_8_3_right_answers_in_other_forms(answer_):
    passes('8.3', answer_, '776 prompts')


def test_8_3_reference_is_the_builder():
    """The reference (2-decimal listing) agrees with build_min_transformer(20, 8)."""
    groups = ch08.prompts_8_3(3)
    exact = taotp.build_min_transformer(20, 8)
    for g, want in zip(groups, ch08._reference_8_3(groups)):
        assert np.array_equal(taotp.last_token_argmax(g, exact), want)
        assert np.array_equal(want, g.min(1))
    assert sum(len(g) for g in groups) == 776


@pytest.mark.parametrize('letter, fragment', [
    ('a', "prompt [1, 0]: choice 'a' (it repeats the first token of the prompt) gives 1 there, "
          "which is not what the program (at full precision) outputs"),
    ('b', "prompt [0, 1]: choice 'b'"),
    ('d', "prompt [0, 1]: choice 'd'"),
    ('e', "prompt [19, 19, 0]: choice 'e' (it outputs the most frequent token so far) gives 19"),
    ('f', "prompt [0]: choice 'f'"),
])
def test_8_3_wrong_choices_name_a_prompt(letter, fragment):
    result = fails('8.3', letter, fragment)
    assert result.counterexample is not None
    assert 'outputs 0' not in result.message


@pytest.mark.parametrize('listing', ['min', 'min_2dp'])
def test_8_3_a_function_that_runs_the_listing_is_refused(listing):
    """Running the program, printed (one decimal) or at two decimals (red team, round 7:
    that passed), is not saying what it computes: the forward pass is off in the worker."""
    program = taotp.load_program(taotp.interpreter.book_listing(listing))
    fails('8.3', lambda s: int(taotp.last_token_argmax(np.array([s]), program)[0]),
          'should say what the listing computes, not run it')


@pytest.mark.parametrize('answer_, fragment', [
    ('z', "answer with one letter of CHOICES_8_3 (a, b, c, d, e, f) or a function; got 'z'"),
    (lambda s: 1 / 0, 'your function raised ZeroDivisionError: division by zero on prompt [0]'),
    (lambda s: 'zero', "your function returned 'zero' on prompt [0]; expected a token id"),
    (lambda s: min(s) + 0.5, 'your function returned 0.5 on prompt [0]; expected a token id'),
    (lambda s: float('nan'), 'returned nan on prompt [0]'),
    (lambda s: True if min(s) == 1 else min(s), 'returned True on prompt [1]; expected a token id'),
])
def test_8_3_wrong_kinds_of_answer_are_named(answer_, fragment):
    fails('8.3', answer_, fragment)


def test_8_3_adversarial_prompts_catch_a_rule_right_on_random_ones():
    fails('8.3', lambda s: min(s[1:]) if len(s) == 8 else min(s),
          'prompt [0, 1, 2, 3, 4, 5, 6, 7]: your answer gave 1, which is not right')


def test_choices_are_distinct_behaviours():
    assert len(CHOICES_8_3) == 6 and len(set(CHOICES_8_3.values())) == 6


def test_8_3_a_table_of_every_fixed_prompt_does_not_pass():
    # class 1: the old NOT YET printed the program's output, so a loop of checks could
    # harvest every fixed prompt; even the complete table fails on the prompts drawn afresh
    fixed = ch08.prompts_8_3(0)
    fixed = [g for i, g in enumerate(fixed) if i < 2 or i % 2 == 0]     # not the drawn groups
    table = {tuple(p): int(min(p)) for g in fixed for p in g.tolist()}
    result = fails('8.3', lambda s: table.get(tuple(s), s[-1]), 'which is not right')
    assert 'outputs' not in result.message


# ----------------------------------------------------------------------------- 8.4

@pytest.mark.parametrize('loader', [taotp.load_program, taotp.interpreter.compile_TAOTP,
                                    lambda text: taotp.interpreter.load_program(text),
                                    lambda text: taotp.interpreter.parse.parse(text) and {}])
def test_8_4_the_package_loader_is_switched_off(loader):
    fails('8.4', loader, "is switched off while this puzzle is checked",
          "the package's own answer")
    assert taotp.load_program('{"tok_emb": [[1]], "block_size": 1}')   # and on in the kernel


def test_8_4_reference_passes_with_everything_it_claims():
    passes('8.4', answer('8.4'), '17 compact forms (12 random',
           'raises with a message on 11 malformed texts')


def test_8_4_random_programs_are_valid_and_varied():
    programs = [p for seed in range(4) for p in ch08.random_programs(seed)]
    for text, params in programs:
        assert taotp.params_equal(taotp.load_program(text), params)
    texts = [text for text, _ in programs]
    assert any('block_size' in t for t in texts) and any('"out_emb"' not in t for t in texts)
    assert any('"layers"' not in t for t in texts)
    assert any(layer['M2'].shape[0] == 0 for _, params in programs for layer in params['layers'])
    assert ch08.random_programs(1)[0][0] != ch08.random_programs(2)[0][0]


def _book_loader(text):
    """The book's Fig. 8.1 idea: literal_eval and arrays, with out_emb tied."""
    params = ast.literal_eval(text)
    params.setdefault('out_emb', params['tok_emb'])
    for key in ('tok_emb', 'pos_emb', 'out_emb'):
        params[key] = np.array(params[key])
    for layer in params['layers']:
        for key, value in layer.items():
            layer[key] = np.array(value)
    return params


def _almost(reference, skip):
    """The solution's loader with one default feature disabled (a plausible partial solution)."""
    def loader(text):
        tree = ast.literal_eval(text)
        if skip == 'ln' and ('lnf' not in tree or any('ln1' not in l
                                                       for l in tree.get('layers', []))):
            raise KeyError('ln1')
        if skip == 'block_size' and 'block_size' in tree:
            tree['pos_emb'] = []
            del tree['block_size']
        if skip == 'layers' and 'layers' not in tree:
            return {'tok_emb': np.array(tree['tok_emb'])}
        return reference(repr(tree))
    return loader


def _restricted_eval(reference):
    """eval with no builtins: the side-effect payload fails, but expressions are evaluated."""
    return lambda text: reference(repr(eval(text, {'__builtins__': {}}, {})))


def _eval_behind_a_value_error(reference, scope=None, exit_replaced=False):
    """Round 12: a text the loader refuses is evaluated, and whatever happens then turns
    into a plain ValueError; round 13: os._exit replaced while it is evaluated."""
    def loader(text):
        import os
        try:
            return reference(text)
        except ValueError:
            saved = os._exit
            if exit_replaced:
                os._exit = lambda *a: None
            try:
                eval(text, *([scope, {}] if scope is not None else []))
            except BaseException:       # noqa: B036 (the cheat hides everything)
                pass
            finally:
                os._exit = saved
            raise ValueError('this is not a program') from None
    return loader


def _evaluates_what_a_word_filter_lets_through(reference):
    """Round 14: texts with '*', ' if ', '__' or 'exec(' refused, the rest evaluated."""
    def loader(text):
        if any(word in text for word in ('*', ' if ', '__', 'exec(')):
            raise ValueError('this text holds code')
        return reference(repr(eval(text, {'__builtins__': {}}, {})))
    return loader


def _exits_under_another_name(reference):
    """Round 12: a SystemExit subclass named ValueError (the worker sent only the name)."""
    ValueError = type('ValueError', (SystemExit,), {})      # noqa: N806

    def loader(text):
        try:
            return reference(text)
        except Exception as exc:
            raise ValueError(str(exc)) from None
    return loader


def _lax_layers(reference):
    """The solution's loader without its check for unknown layer keys."""
    def loader(text):
        tree = ast.literal_eval(text)
        if isinstance(tree, dict):
            for layer in tree.get('layers', []):
                for key in set(layer) - {'Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2', 'ln1',
                                         'ln2'}:
                    del layer[key]
        return reference(repr(tree))
    return loader


def _ignores_block_size(reference):
    def loader(text):
        tree = ast.literal_eval(text)
        if isinstance(tree, dict) and 'pos_emb' in tree:
            tree.pop('block_size', None)
        return reference(repr(tree))
    return loader


def _nested_lists(reference):
    def loader(text):
        params = reference(text)
        return {**params, 'tok_emb': params['tok_emb'].tolist()}
    return loader


def _exits_when_malformed(reference):
    def loader(text):
        try:
            return reference(text)
        except Exception:
            sys.exit('bad program')
    return loader


def _loops_when_malformed(reference):
    def loader(text):
        try:
            return reference(text)
        except Exception:
            while True:
                pass
    return loader


def _silent(reference):
    def loader(text):
        try:
            return reference(text)
        except Exception:
            raise ValueError('') from None
    return loader


def _off_by_a_bit(reference):
    def loader(text):
        params = reference(text)
        params['tok_emb'] = params['tok_emb'] + 1e-12
        return params
    return loader


def _rounded(reference):
    """class 6: every number rounded to 10 significant digits (right on short numbers)."""
    def loader(text):
        params = reference(text)
        round10 = lambda a: np.array([float(f'{x:.10g}') for x in np.ravel(a)]).reshape(  # noqa
            np.shape(a))
        for key in ('tok_emb', 'pos_emb', 'out_emb'):
            params[key] = round10(params[key])
        for layer in params['layers']:
            for key in ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2'):
                layer[key] = round10(layer[key])
        return params
    return loader


_KNOWN = ({'tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf', 'block_size'},
          {'Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2', 'ln1', 'ln2'}, {'gamma', 'beta'})


def _fixed_texts_only(ref):
    """Round 9: a loader that refuses what the 11 fixed texts break, and the same fault
    anywhere else not: unknown keys other than theirs are dropped."""
    def drop(tree, level):
        if isinstance(tree, dict):
            return {k: drop(v, 1 if k == 'layers' else 2 if k in ('ln1', 'ln2', 'lnf') else level)
                    for k, v in tree.items() if k in _KNOWN[level] or k in ('tok_embs', 'M3',
                                                                               'gama')}
        return [drop(v, level) for v in tree] if isinstance(tree, list) and level == 1 else tree

    def loader(text):
        try:
            tree = json.loads(text)
        except ValueError:
            return ref(text)
        return ref(json.dumps(drop(tree, 0)) if isinstance(tree, dict) else text)
    return loader


def _finite_arrays_only(ref):
    """Round 11: non-finite numbers refused in arrays, but not in a layer norm."""
    def loader(text):
        try:
            tree = json.loads(text)
        except ValueError:
            return ref(text)
        if isinstance(tree, dict):
            norms = [tree.get('lnf')] + [layer.get(k) for layer in tree.get('layers', [])
                                         if isinstance(layer, dict) for k in ('ln1', 'ln2')]
            for norm in (n for n in norms if isinstance(n, dict)):
                norm.update({k: 1.0 for k, v in norm.items() if v in (float('inf'), -float('inf'))})
            text = json.dumps(tree)
        return ref(text)
    return loader


def _repaired(reference, repair):
    """Round 19: the reference, except that a text it refuses is first repaired one way and
    read again (a loader missing one check): ``repair(tree)`` returns True if it applied."""
    def loader(text):
        try:
            return reference(text)
        except ValueError:
            tree = ast.literal_eval(text)
            if not isinstance(tree, dict) or not repair(tree):
                raise
            return reference(repr(tree))
    return loader


def _same_heads(tree):                    # V and P cut (or repeated) to Q's head count
    for layer in tree.get('layers', []):
        if isinstance(layer, dict) and all(k in layer for k in 'QVP') and \
                len(layer['V']) != len(layer['Q']):
            layer['V'], layer['P'] = ([layer[k][0]] * len(layer['Q']) for k in 'VP')
            return True
    return False


def _untie_rows(tree):                    # out_emb with the wrong rows dropped: tied again
    return tree.pop('out_emb', None) is not None


def _first_of_vectors(tree):              # a vector gamma or beta read as its first number
    norms = [tree.get('lnf', {})] + [layer.get(k, {}) for layer in tree.get('layers', [])
                                     for k in ('ln1', 'ln2')]
    hit = False
    for norm in norms:
        for key in ('gamma', 'beta'):
            if isinstance(norm, dict) and isinstance(norm.get(key), list) and norm[key]:
                norm[key], hit = norm[key][0], True
    return hit


def _flattened(tree):                     # a tok_emb nested too deep read at depth 2
    tok = tree.get('tok_emb')
    if isinstance(tok, list) and tok and isinstance(tok[0], list) and tok[0] and \
            isinstance(tok[0][0], list):
        tree['tok_emb'] = [row for block in tok for row in block]
        return True
    return False


def _reads_words_as_numbers(reference):
    """Round 17: quoted numbers, true, false and null read as the numbers they stand for
    (float('1.5'), 1, 0, 0), as NumPy reads them; no malformed text held one."""
    def loader(text):
        text = re.sub(r'"(-?[0-9][0-9.e+-]*)"', r'\1', text)
        return reference(re.sub(r'\b(true|null|false)\b',
                                lambda m: '1' if m.group(1) == 'true' else '0', text))
    return loader


def _b2_finiteness_unchecked(reference):
    """Round 21: a loader that checks finiteness in every field but b2, where it reads a NaN
    or an infinity as 0 (the non-finite number was put in one field drawn at random)."""
    def loader(text):
        try:
            return reference(text)
        except ValueError:
            tree = json.loads(text)
            layers = tree.get('layers') if isinstance(tree, dict) else None
            bad = [layer for layer in layers or [] if isinstance(layer, dict)
                   and isinstance(layer.get('b2'), list) and not all(
                       isinstance(v, (int, float)) and math.isfinite(v) for v in layer['b2'])]
            if not bad:
                raise
            for layer in bad:
                layer['b2'] = [v if isinstance(v, (int, float)) and math.isfinite(v) else 0.0
                               for v in layer['b2']]
            return reference(json.dumps(tree))
    return loader


def _refuses_exponents(reference):
    """Round 25: a loader that refuses every number written with an exponent (1e-05, 2E3)."""
    def loader(text):
        if re.search(r'\d[eE]', text):
            raise ValueError('no exponents, please')
        return reference(text)
    return loader


def _block_size_shorter_than_pos_emb(tree):   # round 25: only a too-large one was refused
    if 'pos_emb' in tree and tree.get('block_size', len(tree['pos_emb'])) < len(tree['pos_emb']):
        return tree.pop('block_size') is not None
    return False


def _nan_norms_read_as_defaults(reference):
    """Round 25: a loader that refuses +-1e999 in a layer norm but reads its NaN as the
    default (gamma 1, beta 0); no drawn text held a layer norm's NaN."""
    def loader(text):
        try:
            return reference(text)
        except ValueError:
            tree = json.loads(text)
            norms = [tree.get('lnf', {})] + [layer.get(k, {}) for layer in tree.get('layers', [])
                                             for k in ('ln1', 'ln2')]
            nans = [(n, k) for n in norms for k in ('gamma', 'beta') if n.get(k) != n.get(k)]
            if not nans:
                raise
            for norm, key in nans:
                norm[key] = 1.0 if key == 'gamma' else 0.0
            return reference(json.dumps(tree))
    return loader


@pytest.mark.parametrize('make, fragments', [
    (_finite_arrays_only, ['not finite', 'your loader returned a value instead of raising']),
    (_fixed_texts_only, ['an unknown key in', 'your loader returned a value instead of raising']),
    (lambda ref: _book_loader, ["the params your loader made from the book listing 'min': "
                                "layers[0]['M2'] must have 2 dimensions; got shape (0,)"]),
    (lambda ref: _almost(ref, 'ln'), ["your loader raised KeyError: 'ln1' on a program with no "
                                      "layer norms anywhere"]),
    (lambda ref: _almost(ref, 'block_size'), ["'pos_emb' must have 2 dimensions; got shape (0,)",
                                              'a program with block_size instead of pos_emb']),
    (lambda ref: _almost(ref, 'layers'), ['from a program with no "layers" key', 'missing']),
    (lambda ref: lambda t: ref(t) if t.startswith('{') and 'tok_embs' not in t else {},
     ['on an unknown top-level key your loader returned a value instead of raising an error '
      '(the result is invalid: ']),
    (lambda ref: lambda t: eval(t) if 'exec(' in t else ref(t),
     ['on a text holding a function call your loader executed code from the program text']),
    (_restricted_eval, ['on a text holding a list times a number your loader returned a value '
                        'instead of raising an error (it evaluated code; parse the text, never '
                        'eval it)']),
    (_lax_layers, ['on an unknown key in a layer your loader returned a value instead of '
                   'raising']),
    (_ignores_block_size, ['on a block_size that contradicts pos_emb your loader returned a '
                           'value']),
    (_nested_lists, ["the book listing 'hello_world': your program differs from the full form "
                     "at tok_emb: your loader gave a nested list; return NumPy arrays"]),
    (_exits_when_malformed, ['your loader raised SystemExit: bad program on a ragged tok_emb']),
    (_exits_under_another_name, ['your loader raised ValueError (a SystemExit): ']),
    (_eval_behind_a_value_error, ['on a text holding a call of os._exit your loader ended the '
                                  'process running it: it ran the code in']),
    (_evaluates_what_a_word_filter_lets_through, ['ch08.code_programs(', 'your loader returned a '
                                                  'value instead of raising an error']),
    (lambda ref: _eval_behind_a_value_error(ref, {}, exit_replaced=True),
     ['on a text holding a set of an endless iterator your loader did not return: it ran the '
      'code in']),
    (lambda ref: _eval_behind_a_value_error(ref, {'__builtins__': {}}),
     ['on a text holding a call of os._exit reached without builtins your loader ended the '
      'process running it']),
    (_silent, ['on a ragged tok_emb your loader raised ValueError with an empty message']),
    (_off_by_a_bit, ["the book listing 'hello_world': your program differs from the full form "
                     "at tok_emb: your loader gave 1.200000000001 at flat index 0"]),
    (_rounded, ['the dumped random program ch08.dumped_program(',
                'your program differs from the full form at']),
    (_reads_words_as_numbers, ['ch08.malformed_programs(', 'written as',
                               'your loader returned a value instead of raising']),
    (lambda ref: _repaired(ref, _same_heads), [' heads in ', 'returned a value']),
    (lambda ref: _repaired(ref, _untie_rows), ['out_emb', 'returned a value']),
    (lambda ref: _repaired(ref, _first_of_vectors), ['a vector of', 'returned a value']),
    (lambda ref: _repaired(ref, _flattened), ['tok_emb nested one level deeper',
                                              'returned a value']),
    (_b2_finiteness_unchecked, ['.b2 that is not finite', 'returned a value']),
    (_refuses_exponents, ['your loader raised ValueError: no exponents, please on ']),
    (lambda ref: _repaired(ref, _block_size_shorter_than_pos_emb),
     ['ch08.malformed_programs(', 'with a pos_emb of', 'returned a value']),
    (_nan_norms_read_as_defaults, ["'] not finite (ch08.malformed_programs(", 'returned a value']),
], ids=['finite-arrays-only', 'fixed-texts-only', 'book', 'no-ln', 'no-block-size', 'no-layers', 'unknown-key', 'eval-payload',
        'restricted-eval', 'lax-layers', 'ignores-block-size', 'nested-lists', 'exits',
        'exits-as-value-error', 'eval-behind-value-error', 'word-filter', 'eval-with-exit-replaced',
        'eval-without-builtins-behind-value-error',
        'silent',
        'off-by-a-bit', 'rounded', 'words-as-numbers', 'heads-unchecked', 'out-rows-unchecked',
        'norm-vectors-unchecked', 'depth-unchecked', 'b2-finiteness-unchecked',
        'refuses-exponents', 'short-block-size-unchecked', 'nan-norms-unchecked'])
def test_8_4_wrong_loaders_are_caught(make, fragments):
    fails('8.4', make(answer('8.4')), *fragments)


def test_8_4_a_loader_that_hangs_on_a_malformed_text_is_stopped():
    result = verdict('8.4', _loops_when_malformed(answer('8.4')), call_seconds=SHORT)
    assert not result.passed
    assert f'your loader took longer than {SHORT:g} s on a ragged tok_emb' in result.message


def test_8_4_never_names_the_expected_value_of_a_drawn_program():
    reference = answer('8.4')
    fixed = {taotp.interpreter.book_listing(n) for n in ('hello_world', 'min')}
    fixed |= {text for _, text, _ in ch08._COMPACT_CASES}

    def shifted(text):                     # right on every fixed text, off on the drawn ones
        params = reference(text)
        if text not in fixed and text.startswith('{'):
            params['pos_emb'] = params['pos_emb'] + 0.25
        return params
    result = fails('8.4', shifted, 'the dumped random program', 'differs from the full form at '
                   'pos_emb: your loader gave', 'at flat index 0')
    seed = int(re.search(r'dumped_program\((\d+)\)', result.message).group(1))
    want = float(ch08.dumped_program(seed)['pos_emb'].ravel()[0])
    assert repr(want) not in result.message and f'{want:.6g}' not in result.message


EXTRA_GARBAGE = {
    '8.3': {'a letter outside the choices': 'z', 'a list of letters': ['c']},
    '8.4': {'a loader returning a list': lambda text: [1, 2]},
}


# ----------------------------------------------------------------------------- red team

def test_8_4_package_loader_bound_before_the_check():
    from taotp.interpreter.build import build
    from taotp.interpreter.parse import parse
    fails('8.4', lambda text: build(parse(text)), 'package')


def test_8_4_a_thread_started_before_the_check_loads_for_the_answer():
    # class 3: in the reader's kernel a thread serves the package's loader to the answer
    # through a mailbox; the old in-process check watched only the calling thread
    import threading
    inbox, outbox, stop = [], {}, []

    def serve():
        while not stop:
            while inbox:
                text = inbox.pop()
                outbox[text] = taotp.load_program(text)
            time.sleep(0.001)

    def loader(text):
        inbox.append(text)
        for _ in range(2000):
            if text in outbox:
                return outbox[text]
            time.sleep(0.001)
        raise ValueError('nobody answered')

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        fails('8.4', loader, "the book listing 'hello_world'")
    finally:
        stop.append(True)
        thread.join()


def test_8_4_outputs_of_the_package_computed_beforehand_are_looked_up():
    # class 3: every text the checker module holds (and those of twenty seeds) loaded
    # with the package's loader before the check, then looked up
    texts = [taotp.interpreter.book_listing(n) for n in ('hello_world', 'min')]
    texts += [text for _, text, _ in ch08._COMPACT_CASES]
    texts += [text for seed in range(20) for text, _ in ch08.random_programs(seed)]
    texts += [taotp.dump_program(ch08.dumped_program(seed)) for seed in range(20)]
    table = {text: taotp.load_program(text) for text in texts}

    def loader(text):
        if text not in table:
            raise ValueError('not a program I know')
        return copy.deepcopy(table[text])
    fails('8.4', loader, 'the dumped random program', 'not a program I know')


def test_8_4_the_answer_cannot_switch_the_refusal_back_on():
    def loader(text):
        from taotp.exercises import registry as table
        table()['8.4'].refuse.clear()              # the worker's copy of the list
        ch08.LOADER_PARTS = ()
        return taotp.load_program(text)
    fails('8.4', loader, 'is switched off while this puzzle is checked')


def _checker_locals():
    frame = sys._getframe(2)
    while frame is not None:
        yield frame.f_locals
        frame = frame.f_back


def test_8_4_loader_rewrites_the_expected_programs_through_its_frame():
    refuse = {text for _, text in ch08._MALFORMED} | {text for _, text in ch08._EXPRESSIONS}
    program = taotp.load_program('{"tok_emb": [[1.0, -1.0]], "block_size": 2}')

    def rewrite(value):
        if value is program:
            return
        if isinstance(value, dict) and 'tok_emb' in value:
            value.clear()
            value.update(copy.deepcopy(program))
        elif isinstance(value, (list, tuple)):
            for item in value:
                rewrite(item)

    def loader(text):                                  # parses nothing
        if text in refuse or 'exec(' in text:
            raise ValueError('refused')
        for variables in _checker_locals():
            for value in list(variables.values()):
                rewrite(value)
        return copy.deepcopy(program)
    fails('8.4', loader, "the book listing 'hello_world'")


CHECKED_HERE = ['8.3', '8.4']


@pytest.mark.parametrize('puzzle', CHECKED_HERE)
def test_no_checker_takes_options_that_change_the_puzzle(puzzle):
    body = registry()[puzzle].checker
    assert len(inspect.signature(body).parameters) == 1
    assert body.budget == 30


def test_exactly_one_choice_passes():
    # the verdict on each letter comes from the program run at check time
    assert [letter for letter in CHOICES_8_3 if verdict('8.3', letter).passed] == ['c']
