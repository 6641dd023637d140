"""Checkers of Chapter 8: what each one calls solved, and the answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 8.1, 8.2 | no checker (open-ended; worked answers in the solutions notebook) | - |
| 8.3 | a letter of `CHOICES_8_3` or a function tokens -> next token that agrees with the Fig. 8.3 program at full precision on 776 prompts: every prompt of 1-2 tokens; of 3-8: repeated tokens, runs, the smallest token at every place, the vocabulary's ends, seeded random ones | every wrong letter; predicting the printed one-decimal weights; the minimum of all but the first token (caught by the adversarial prompts); True for token 1 (passed before); half tokens, text, NaN. Not preventable: guessing among 6 letters, or running the 2-decimal listing (the statement asks for "ideally" without running it) |
| 8.4 | a loader `my_compile(text) -> params`: both printed listings, a dumped program and 17 compact forms (12 random: field order, ints and floats, width-0 MLPs) equal their full forms bit for bit; 11 malformed texts raise with a message; 4 texts holding code are refused and never run; the package's loader is switched off while the submission runs | `taotp.load_program` itself and a wrapper of it (passed before); `eval` without builtins (passed before: it evaluates `[[1.0, -1.0]] * 2`); a loader ignoring unknown layer keys (the old reference) or a `block_size` that contradicts `pos_emb` (both passed before); nested lists instead of arrays; the book's Fig. 8.1 loader; a loader missing each default; one that returns garbage, changes a value, raises with no message, exits or loops on malformed texts, runs the injected call |

The contract every checker keeps (the reference passes, garbage is reported,
loops are stopped) is tested once in test_checker_contract.py; the references
come from the solutions notebook (``answer``).
"""
import ast
import builtins
import inspect
import re
import sys

import numpy as np
import pytest

import taotp
from solutions import answer
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
    assert '776 prompts' in result.message


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


def test_8_3_adversarial_prompts_catch_a_rule_right_on_random_ones():
    result = ch08.check_8_3(lambda s: min(s[1:]) if len(s) == 8 else min(s))
    assert not result
    assert 'prompt [0, 1, 2, 3, 4, 5, 6, 7]: the program (at full precision) outputs 0' \
        in result.message, result.message


def test_8_3_a_bool_is_not_a_token():
    result = ch08.check_8_3(lambda s: True if min(s) == 1 else min(s))
    assert not result and 'returned True on prompt [1]; expected a token id' in result.message


def test_choices_are_distinct_behaviours():
    assert len(CHOICES_8_3) == 6 and len(set(CHOICES_8_3.values())) == 6


# ----------------------------------------------------------------------------- 8.4

@pytest.mark.parametrize('loader', [taotp.load_program, taotp.interpreter.compile_TAOTP,
                                    lambda text: taotp.interpreter.load_program(text),
                                    lambda text: taotp.interpreter.parse.parse(text) and {}])
def test_8_4_the_package_loader_is_switched_off(loader):
    result = ch08.check_8_4(loader)
    assert not result
    assert "it called taotp.load_program (or its parser), the package's own answer" \
        in result.message, result.message
    assert taotp.load_program('{"tok_emb": [[1]], "block_size": 1}')   # and is back on after


def test_8_4_reference_passes_with_everything_it_claims():
    result = ch08.check_8_4(answer('8.4'))
    assert result, result.message
    assert '17 compact forms (12 random' in result.message
    assert 'raises with a message on 11 malformed texts' in result.message


def test_8_4_random_programs_are_valid_and_varied():
    programs = ch08._random_programs()
    for text, params in programs:
        assert taotp.params_equal(taotp.load_program(text), params)
    texts = [text for text, _ in programs]
    assert any('block_size' in t for t in texts) and any('"out_emb"' not in t for t in texts)
    assert any('"layers"' not in t for t in texts)
    assert any(layer['M2'].shape[0] == 0 for _, params in programs for layer in params['layers'])


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
    """The solution's loader with one default feature disabled (a plausible partial solution)."""
    tree = ast.literal_eval(text)
    if skip == 'ln' and ('lnf' not in tree or any('ln1' not in l for l in tree.get('layers', []))):
        raise KeyError('ln1')
    if skip == 'block_size' and 'block_size' in tree:
        tree['pos_emb'] = []
        del tree['block_size']
    if skip == 'layers' and 'layers' not in tree:
        return {'tok_emb': np.array(tree['tok_emb'])}
    return answer('8.4')(repr(tree))


@pytest.mark.parametrize('loader, pattern', [
    (_book_loader, r"the params your loader made from the book listing 'min': layers\[0\]"
                   r"\['M2'\] must have 2 dimensions; got shape \(0,\)"),
    (lambda t: _almost(t, 'ln'), r"your loader raised KeyError: 'ln1' on a program with no "
                                 r"layer norms anywhere"),
    (lambda t: _almost(t, 'block_size'), r"'pos_emb' must have 2 dimensions; got shape \(0,\) "
                                         r"on a program with block_size instead of pos_emb"),
    (lambda t: _almost(t, 'layers'), r'''from a program with no "layers" key: missing key'''),
    (lambda t: answer('8.4')(t) if t.startswith('{') and 'tok_embs' not in t else {},
     r'on an unknown top-level key your loader returned a value instead of raising an error '
     r'\(the result is invalid: .*\)'),
    (lambda t: answer('8.4')(t) if not t.startswith('__import__') else eval(t),
     r'your loader executed code from the program text'),
])
def test_8_4_wrong_loaders_are_caught(loader, pattern):
    result = ch08.check_8_4(loader)
    assert not result
    assert re.search(pattern, result.message), result.message
    assert not hasattr(builtins, '_taotp_8_4_ran')


def _restricted_eval(text):
    """eval with no builtins: the side-effect payload fails, but expressions are evaluated."""
    tree = eval(text, {'__builtins__': {}}, {})
    return answer('8.4')(repr(tree))


def _lax_layers(text):
    """The solution's loader without its check for unknown layer keys."""
    tree = ast.literal_eval(text)
    if isinstance(tree, dict):
        for layer in tree.get('layers', []):
            for key in set(layer) - {'Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2', 'ln1', 'ln2'}:
                del layer[key]
    return answer('8.4')(repr(tree))


def _ignores_block_size(text):
    tree = ast.literal_eval(text)
    if isinstance(tree, dict) and 'pos_emb' in tree:
        tree.pop('block_size', None)
    return answer('8.4')(repr(tree))


def _nested_lists(text):
    params = answer('8.4')(text)
    return {**params, 'tok_emb': params['tok_emb'].tolist()}


def _exits_when_malformed(text):
    try:
        return answer('8.4')(text)
    except Exception:
        sys.exit('bad program')


def _loops_when_malformed(text):
    try:
        return answer('8.4')(text)
    except Exception:
        while True:
            pass


@pytest.mark.parametrize('loader, pattern', [
    (_restricted_eval, r'on a text holding a list times a number your loader returned a value '
                       r'instead of raising an error \(it evaluated code; parse the text, never '
                       r'eval it\)'),
    (_lax_layers, r'on an unknown key in a layer your loader returned a value instead of raising'),
    (_ignores_block_size, r'on a block_size that contradicts pos_emb your loader returned a value'),
    (_nested_lists, r"book listing 'hello_world': differs from the full form at 'tok_emb': lists "
                    r"of different lengths or types \(return NumPy arrays"),
    (_exits_when_malformed, r'your loader raised SystemExit: bad program on a ragged tok_emb'),
])
def test_8_4_cheats_and_near_misses_are_caught(loader, pattern):
    result = ch08.check_8_4(loader)
    assert not result
    assert re.search(pattern, result.message), result.message


def test_8_4_a_loader_that_hangs_on_a_malformed_text_is_stopped(short_time_limit):
    result = ch08.check_8_4(_loops_when_malformed)
    assert not result
    assert 'your loader took longer than 0.2 s on a ragged tok_emb' in result.message


def test_8_4_calls_the_loader_through_guard_call():
    source = inspect.getsource(ch08)
    assert 'time_limit' not in source and '_TimeUp' not in source


def test_8_4_silent_errors_are_caught():
    def quiet(text):
        try:
            return answer('8.4')(text)
        except Exception:
            raise ValueError('') from None
    result = ch08.check_8_4(quiet)
    assert not result and 'raised ValueError with an empty message' in result.message


def test_8_4_a_loader_that_changes_a_value_is_named():
    def off_by_a_bit(text):
        params = answer('8.4')(text)
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


CHECKED_HERE = ['8.3', '8.4']

@pytest.mark.parametrize('puzzle', CHECKED_HERE)
def test_no_checker_takes_options_that_change_the_puzzle(puzzle):
    body = registry()[puzzle].checker.__wrapped__
    assert len(inspect.signature(body).parameters) == 1
    assert registry()[puzzle].checker.budget == 30
