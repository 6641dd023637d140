"""Checkers of Chapter 8: 8.3 (what Fig. 8.3 computes) and 8.4 (a compact-program loader).

The contract every checker keeps (the reference passes, garbage is reported,
loops are stopped) is tested once in test_checker_contract.py; here are the
answers particular to these puzzles and the messages that name their inputs.
"""
import ast
import builtins
import re

import numpy as np
import pytest

import taotp
from taotp.exercises import ch08, check, registry
from taotp.exercises.ch08 import CHOICES_8_3


def test_registry_rows():
    rows = {p.id: p for p in registry().values() if p.chapter == 8}
    assert sorted(rows) == ['8.1', '8.2', '8.3', '8.4']
    assert [rows[i].kind for i in sorted(rows)] == ['reflect', 'reflect', 'checked', 'checked']


# ----------------------------------------------------------------------------- 8.3

@pytest.mark.parametrize('answer', [' C ', '(c)', min, lambda s: int(np.min(s))])
def test_8_3_right_answers_in_other_forms(answer):
    result = ch08.check_8_3(answer)
    assert result, result.message
    assert '720 prompts' in result.message


def test_8_3_reference_is_the_builder():
    """The reference (2-decimal listing) agrees with build_min_transformer(20, 8)."""
    groups = ch08._inputs_8_3()
    exact = taotp.build_min_transformer(20, 8)
    for g, want in zip(groups, ch08._reference_8_3(groups)):
        assert np.array_equal(taotp.last_token_argmax(g, exact), want)
        assert np.array_equal(want, g.min(1))


@pytest.mark.parametrize('letter, pattern', [
    ('a', r"prompt \[1, 0\]: the program \(at full precision\) outputs 0, choice 'a' "
          r"\(it repeats the first token of the prompt\) says 1"),
    ('b', r"prompt \[0, 1\]: .* outputs 0, choice 'b' .* says 1"),
    ('d', r"prompt \[0, 1\]: .* outputs 0, choice 'd' .* says 1"),
    ('e', r"prompt \[.*\]: .* choice 'e' \(it outputs the most frequent token so far\)"),
    ('f', r"prompt \[0\]: .* outputs 0, choice 'f' .* says 1"),
])
def test_8_3_wrong_choices_name_a_prompt(letter, pattern):
    result = ch08.check_8_3(letter)
    assert not result
    assert result.counterexample is not None
    assert re.search(pattern, result.message), result.message


def test_8_3_the_printed_weights_are_not_the_reference():
    """Predicting the one-decimal listing itself is 'wrong': the puzzle asks for the intent."""
    printed = taotp.load_program(taotp.interpreter.book_listing('min'))
    result = ch08.check_8_3(lambda s: int(taotp.decode(s, printed, max_steps=1)[-1]))
    assert not result and 'the program (at full precision) outputs' in result.message


@pytest.mark.parametrize('answer, pattern', [
    ('z', r"answer with one letter of CHOICES_8_3 \(a, b, c, d, e, f\) or a function; got 'z'"),
    (lambda s: 1 / 0, r'your function raised ZeroDivisionError: division by zero on prompt \[0\]'),
    (lambda s: 'zero', r"your function returned 'zero' on prompt \[0\]; expected a token id"),
    (lambda s: min(s) + 0.5, r'prompt \[0\]: .* outputs 0, your function says 0.5'),
    (lambda s: float('nan'), r'returned nan on prompt \[0\]'),
])
def test_8_3_wrong_kinds_of_answer_are_named(answer, pattern):
    result = ch08.check_8_3(answer)
    assert not result
    assert re.search(pattern, result.message), result.message


def test_choices_are_distinct_behaviours():
    assert len(CHOICES_8_3) == 6 and len(set(CHOICES_8_3.values())) == 6


# ----------------------------------------------------------------------------- 8.4

def test_8_4_the_package_loader_passes_too():
    result = ch08.check_8_4(taotp.load_program)
    assert result, result.message
    assert result.message.startswith('reads both printed listings')
    assert check('8.4', taotp.interpreter.compile_TAOTP)


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


def _almost(text, skip=None):
    """The package loader with one default feature disabled (a plausible partial solution)."""
    tree = ast.literal_eval(text)
    if skip == 'ln' and ('lnf' not in tree or any('ln1' not in l for l in tree.get('layers', []))):
        raise KeyError('ln1')
    if skip == 'block_size' and 'block_size' in tree:
        tree['pos_emb'] = []
        del tree['block_size']
    if skip == 'layers' and 'layers' not in tree:
        return {'tok_emb': np.array(tree['tok_emb'])}
    return taotp.load_program(repr(tree))


@pytest.mark.parametrize('loader, pattern', [
    (_book_loader, r"the params your loader made from the book listing 'min': layers\[0\]"
                   r"\['M2'\] must have 2 dimensions; got shape \(0,\)"),
    (lambda t: _almost(t, 'ln'), r"your loader raised KeyError: 'ln1' on a program with no "
                                 r"layer norms anywhere"),
    (lambda t: _almost(t, 'block_size'), r"'pos_emb' must have 2 dimensions; got shape \(0,\) "
                                         r"on a program with block_size instead of pos_emb"),
    (lambda t: _almost(t, 'layers'), r'''from a program with no "layers" key: missing key'''),
    (lambda t: taotp.load_program(t) if t.startswith('{') and 'tok_embs' not in t else {},
     r'on an unknown top-level key your loader returned a value instead of raising an error '
     r'\(the result is invalid: .*\)'),
    (lambda t: taotp.load_program(t) if not t.startswith('__import__') else eval(t),
     r'your loader executed code from the program text'),
])
def test_8_4_wrong_loaders_are_caught(loader, pattern):
    result = ch08.check_8_4(loader)
    assert not result
    assert re.search(pattern, result.message), result.message
    assert not hasattr(builtins, '_taotp_8_4_ran')


def test_8_4_silent_errors_are_caught():
    def quiet(text):
        try:
            return taotp.load_program(text)
        except ValueError:
            raise ValueError('') from None
    result = ch08.check_8_4(quiet)
    assert not result and 'raised ValueError with an empty message' in result.message


def test_8_4_a_loader_that_changes_a_value_is_named():
    def off_by_a_bit(text):
        params = taotp.load_program(text)
        params['tok_emb'] = params['tok_emb'] + 1e-12
        return params
    result = ch08.check_8_4(off_by_a_bit)
    assert not result
    assert re.search(r"book listing 'hello_world': differs from the full form at 'tok_emb': "
                     r"1\.2 vs 1\.200000000001 at flat index 0", result.message), result.message


EXTRA_GARBAGE = {
    '8.3': {'a letter outside the choices': 'z', 'a list of letters': ['c'],
            'a function returning a string': lambda s: 'zero'},
    '8.4': {'a loader returning a list': lambda text: [1, 2],
            'a loader returning the text': lambda text: text},
}
