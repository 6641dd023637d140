"""Chapter 4 checkers: what each one calls solved, and the answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 4.1, 4.6 | no checker (reflections; worked answers in the solutions notebook) | - |
| 4.2 | `build(V, B, L)` at (10, 40, 2), (10, 40, 3), (30, 60, 3), (16, 64, 4): exact last-position answer under the PostLN forward pass on every defined input (query once earlier, not among the first L tokens): random inputs of full and shorter length, the match right after the first L tokens and right before the query, a query of one repeated token, the vocabulary's first and last tokens, near misses; random inputs drawn with a seed taken from the program | a Python oracle in ndarray subclasses (reads the tokens, writes the logits; passed before); no cleanup heads; keys read one place off; a soft (harden = 1) program |
| 4.3 | `make_prompt(keys, values, key, V)`: the book's Search answers every key of 9 tables (XOR, 9 two-token keys over 3 symbols, 16 binary keys of length 4, repeated-token keys, one-token keys, one entry, 3 random tables, 2 of them drawn from the answer's own prompts); the per-key part of the prompt and prefix_len stay the same when only the values change (shifted, redrawn, all equal) | a per-key part that leaks value - values[0], invariant under the old shift-by-one test (passed before); prefix_len capped at 4 (passed before: no key was longer than 3); no separator; the value itself in the prompt |
| 4.4 | as 4.2 under PreLN at (10, 100, 3), (1000, 100, 10), (16, 64, 2), exact, with d_model < 3 (L + 1) measured on the submitted arrays | the oracle (passed before); a dict subclass that shows the budget check a small fake and runs the book's program (passed before); the book's program (d_model 12); a 2-D program comparing half the key |
| 4.5 | as 4.4 without near misses, >= 99 % right, with fewer parameters (counted on the submitted arrays, lists included) than the book's program at each size | the oracle and the dict subclass (passed before); the book's program with list-valued weights (the issue's budget dodge; the core now counts lists); a hash of 14 dims, right on about 99 % (passed before on 40 inputs; the reference now uses 18); a soft 2-D program; the book's program |

Hangs inside returned values (a prompt whose `__array__` never returns, a weight whose ufuncs
never return) are stopped by the checker's total budget (tested with a short one).  The contract every checker keeps (the reference passes, garbage is reported,
loops are stopped) is tested once in test_checker_contract.py; the reference answers come
from their one copy, the solutions notebook (``answer``).

The cheat machinery here (``oracle_program``, ``Switch``, ``NeverArray``, ``NeverUfunc``,
``budgeted``) is shared with the tests of Chapters 5 and 6.
"""
import time

import numpy as np
import pytest

import taotp
from solutions import answer
from taotp.exercises import ch04, check, registry
from taotp.exercises.registry import checker
from taotp.programs import CATALOGUE
from taotp.search import search_reference

CHECKED = ['4.2', '4.3', '4.4', '4.5']


# ----------------------------------------------------------------------------- cheat machinery

_seen = {}


class Spy(np.ndarray):
    """A tok_emb that remembers the token ids it is indexed with."""

    def __getitem__(self, index):
        if isinstance(index, np.ndarray) and index.dtype.kind in 'iu':
            _seen['tokens'] = np.array(index)
        return np.asarray(super().__getitem__(index))


class Oracle(np.ndarray):
    """An out_emb that answers the final einsum itself: the next token comes from ``answer``."""

    def __array_function__(self, func, types, args, kwargs):
        if func is np.einsum and len(args) == 3 and args[2] is self:
            x = np.asarray(args[1])
            tokens = _seen['tokens'].reshape(-1, _seen['tokens'].shape[-1])
            n_q = x.shape[-2]
            out = np.zeros(x.shape[:-1] + (self.shape[0],))
            flat = out.reshape(-1, n_q, self.shape[0])
            for b, row in enumerate(tokens):
                for j in range(n_q):
                    want = self.answer(row[:len(row) - n_q + j + 1].tolist())
                    if want is not None and 0 <= want < self.shape[0]:
                        flat[b, j, want] = 1.0
            return out
        return super().__array_function__(func, types, args, kwargs)


def oracle_program(answer_fn, vocab, block, d_model=1, layers=()):
    """A valid-looking params dict whose logits are computed by ``answer_fn(prefix)`` in Python."""
    p = taotp.base_params(vocab, block, d_model)
    p['tok_emb'] = (np.arange(vocab * d_model, dtype=float).reshape(vocab, d_model) % 7).view(Spy)
    out = np.ones((vocab, d_model)).view(Oracle)
    out.answer = answer_fn
    p['out_emb'] = out
    p['layers'] = list(layers)
    return p


class Switch(dict):
    """Shows ``fake`` to anyone who reads a key; ``**params`` unpacking sees the real storage."""

    def __init__(self, real, fake):
        super().__init__(real)
        self.fake = fake

    def __getitem__(self, key):
        return self.fake[key]


def forever(*args):
    while True:
        time.sleep(0.01)


class NeverArray:
    """A value whose conversion to an array never returns."""

    def __array__(self, *args, **kwargs):
        forever()


class NeverUfunc(np.ndarray):
    """An array whose every ufunc (``isfinite``, ``==``, ...) never returns."""

    def __array_ufunc__(self, *args, **kwargs):
        forever()


def budgeted(puzzle, seconds=0.5):
    """The puzzle's checker body under a short total budget (the real one is 30 s)."""
    return checker(puzzle, budget=seconds)(registry()[puzzle].checker.__wrapped__)


# ----------------------------------------------------------------------------- garbage

def with_nan(V, B, L):
    p = taotp.build_search_transformer(V, B, L)
    p['layers'][0]['Q'][0, 0, 0] = np.nan
    return p


# garbage particular to Chapter 4's answers: broken builders and broken prompts
EXTRA_GARBAGE = {pid: {
    'a builder with a NaN weight': with_nan,
    'a builder with too short a pos_emb': lambda V, B, L: taotp.base_params(V, 2, 3),
    'a builder whose layers are text': lambda V, B, L: {
        **taotp.build_search_transformer(V, B, L), 'layers': 'x'},
    'a prompt with a text prefix_len': lambda *a: ([1, 2], 'x'),
    'a NaN prompt': lambda *a: (np.full(5, np.nan), 2),
    'a ragged prompt': lambda *a: ([[1, 2], [3]], 2),
    'an empty prompt': lambda *a: ([], 2),
    'a bool prefix_len': lambda *a: ([1, 2, 3], True),
    'a negative token id': lambda *a: ([-1, 2, 3, 4], 2),
    'a prompt and prefix_len in a set': lambda *a: {1, 2},
} for pid in CHECKED}


# ----------------------------------------------------------------------------- wrong answers

def no_cleanup(V, B, L):
    p = taotp.build_search_transformer(V, B, L)
    for h in (1, 2):
        for c in 'QKVP':
            p['layers'][1][c][h] = 0
    return p


def off_by_one(V, B, L):              # layer-1 key reads t0..t_{L-1} instead of t1..t_L
    p = taotp.build_search_transformer(V, B, L)
    K = p['layers'][1]['K']
    K[0] = 0
    K[0, :3 * L] = np.eye(3 * L)
    return p


def soft(V, B, L):
    return taotp.build_search_transformer(V, B, L, harden=1.0)


def soft_2d(V, B, L):
    return answer('4.4')(V, B, L, harden=1.0)


def no_separator(keys, values, key, vocab_size):
    table = []
    for k, v in zip(keys, values):
        table += [*k, v]
    return table + list(key), max(2, len(key))


def leaks_value(keys, values, key, vocab_size):
    v = values[keys.index(key)]
    return [v, v, v, v], 2


def hashed_too_few_dims(V, B, L):     # 2-D slots but only half of the key compared
    p = answer('4.4')(V, B, L)
    p['layers'][1]['Q'][0][:, L:] = 0
    return p


WRONG = [
    ('4.2', no_cleanup, '(10, 40, 2): '),
    ('4.2', off_by_one, 'inputs wrong (needed 100% right); first: '),
    ('4.2', soft, 'expected'),
    ('4.3', no_separator, 'XOR table, key [1, 1]: Search on your prompt'),
    ('4.3', leaks_value, 'it must depend on the key alone'),
    ('4.4', taotp.build_search_transformer,
     'your program for (10, 100, 3) is over the budget: 12 d_model; at most 11 allowed'),
    ('4.4', hashed_too_few_dims, '(10, 100, 3): '),
    ('4.5', taotp.build_search_transformer,
     'your program for (10, 100, 3) is over the budget: 4,800 parameters; at most 4,799 allowed'),
    ('4.5', soft_2d, 'needed 99% right'),
]


@pytest.mark.parametrize('puzzle, wrong, message', WRONG,
                         ids=[f'{p}-{w.__name__}' for p, w, _ in WRONG])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, wrong, message):
    answer('4.4')                       # read the solutions once, outside the builder's time limit
    result = check(puzzle, wrong)
    assert not result
    assert message in result.message, result.message


# ----------------------------------------------------------------------------- cheats

def oracle_search(V, B, L):
    """Python's search_reference dressed as a program of d_model 1 and no layers."""
    return oracle_program(lambda prefix: search_reference(prefix, L), V, B)


def fake_small(V, B, L):
    """The book's program, but every key read shows a 3L-wide program with one empty layer."""
    fake = taotp.base_params(V, B, 3 * L)
    fake['layers'] = [taotp.base_layer(1, 3 * L, 0, 1)]
    return Switch(taotp.build_search_transformer(V, B, L), fake)


def listed(V, B, L):
    """The book's program with its attention weights as nested lists."""
    p = taotp.build_search_transformer(V, B, L)
    for layer in p['layers']:
        for name in 'QKVP':
            layer[name] = layer[name].tolist()
    return p


def hash_14(V, B, L):
    """The old reference: a hash of min(2L, L + 4) dims, about 99 % right at prefix 10."""
    return answer('4.5')(V, B, L, hash_dims=min(2 * L, L + 4))


def offset_leak(keys, values, key, vocab_size):
    """The per-key part holds (value - values[0]): unchanged when every value shifts by one."""
    sep, offset = vocab_size, values[0]
    table = []
    for d in range(vocab_size):
        table += [sep, d, (offset + d) % vocab_size]
    return table + [sep, (values[keys.index(key)] - offset) % vocab_size], 2


def capped_prefix(keys, values, key, vocab_size):
    """The reference format, but prefix_len capped at 4: keys of length 4 lose their separator."""
    sep, table = vocab_size, []
    for k, v in zip(keys, values):
        table += [sep, *k, v]
    return table + [sep, *key], min(len(key) + 1, 4)


CHEATS = [
    ('4.2', oracle_search, 'inputs wrong (needed 100% right)'),
    ('4.3', offset_leak, 'changed when only the table\'s values changed'),
    ('4.3', capped_prefix, 'all 16 binary keys of length 4 (parity), key [0, 0, 1, 1]: Search on '
                           'your prompt'),
    ('4.4', oracle_search, 'inputs wrong (needed 100% right)'),
    ('4.4', fake_small, '(10, 100, 3): '),
    ('4.5', oracle_search, 'inputs wrong (needed 99% right)'),
    ('4.5', fake_small, '(10, 100, 3): '),
    ('4.5', listed, 'is over the budget: 4,800 parameters; at most 4,799 allowed'),
    ('4.5', hash_14, '(1000, 100, 10): '),
]


@pytest.mark.parametrize('puzzle, cheat, message', CHEATS,
                         ids=[f'{p}-{c.__name__}' for p, c, _ in CHEATS])
def test_cheats_do_not_pass(puzzle, cheat, message):
    answer('4.5')                       # read the solutions once, outside the builder's time limit
    result = registry()[puzzle].checker(cheat)
    assert not result, f'{cheat.__name__} passed {puzzle}: {result.message}'
    assert message in result.message, result.message


def test_the_oracle_really_answers_search():
    """The oracle cheat is a real cheat: run directly it is right, the frozen copy is not."""
    p = oracle_search(10, 40, 3)
    X, want = ch04.search_cases(0, 20, 10, 40, 3)
    assert (taotp.last_token_argmax(X, p) == want).all()
    assert (taotp.last_token_argmax(X, ch04.frozen(p)) != want).any()


def test_the_switch_shows_a_fake_to_readers():
    p = fake_small(10, 100, 3)
    assert p['tok_emb'].shape == (10, 9) and dict.__getitem__(p, 'tok_emb').shape == (10, 12)
    assert ch04.frozen(p)['tok_emb'].shape == (10, 9)


def test_values_that_never_return_are_stopped_by_the_budget():
    start = time.perf_counter()
    result = budgeted('4.3')(lambda *a: (NeverArray(), 2))
    assert not result and 'did not finish within its 0.5 s budget' in result.message
    assert time.perf_counter() - start < 3


def test_a_weight_whose_ufuncs_never_return_is_read_once_and_never_runs_them():
    """guard.frozen copies the numbers without calling the subclass's ufuncs: the program is
    judged (here: over the budget) instead of hanging the check."""
    start = time.perf_counter()
    result = budgeted('4.4')(lambda V, B, L: {**taotp.build_search_transformer(V, B, L),
                                              'tok_emb': np.zeros((V, 12)).view(NeverUfunc)})
    assert not result and 'budget' in result.message and 'did not finish' not in result.message
    assert time.perf_counter() - start < 3


# ----------------------------------------------------------------------------- the checkers' inputs

def test_book_totals_come_from_the_catalogue():
    assert ch04.BOOK_TOTALS[(10, 100, 3)] == CATALOGUE['search-10'].source_total
    assert ch04.BOOK_TOTALS[(1000, 100, 10)] == CATALOGUE['search-1000'].source_total
    for sizes, total in ch04.BOOK_TOTALS.items():
        assert taotp.count_params(taotp.build_search_transformer(*sizes))['n_params'] == total


def test_search_cases_are_unique_and_avoid_the_first_tokens():
    X, want = ch04.search_cases(0, 50, 10, 60, 3)
    for x, w in zip(X, want):
        assert search_reference(x, 3) == w
        assert not set(x[:3].tolist()) & set(x[-3:].tolist())


@pytest.mark.parametrize('sizes', ch04.SIZES_4_4 + ch04.SIZES_4_2)
def test_every_input_is_defined_and_the_book_answers_it(sizes):
    V, B, L = sizes
    groups = ch04._inputs(np.random.default_rng(0), sizes, 20)
    labels = ' '.join(label for label, _, _ in groups)
    for kind in ('right after the first', 'right before the query', 'one repeated token',
                 'first and last tokens', 'near misses', 'alternating'):
        assert kind in labels, (kind, labels)
    assert len({X.shape[1] for _, X, _ in groups}) >= 3           # full length and shorter
    book = taotp.build_search_transformer(V, B, L)
    for label, X, want in groups:
        assert all(ch04._defined(x, L) and search_reference(x, L) == w for x, w in zip(X, want))
        assert (taotp.last_token_argmax(X, book) == want).all(), label


def test_two_d_reference_is_smaller_and_fixed():
    p = answer('4.4')(10, 100, 3)
    assert taotp.config(p)['d_model'] == 9 and taotp.count_params(p)['n_params'] == 2_736
    x = p['tok_emb'][:, None] + p['pos_emb'][None]
    np.testing.assert_allclose(taotp.layer_norm(x), x, atol=1e-9)


def test_hashed_reference_sizes():
    build_search_hashed = answer('4.5')
    assert taotp.count_params(build_search_hashed(1000, 100, 10))['n_params'] == 61_778
    assert check('4.5', answer('4.4'))      # the checker sees sizes and accuracy only


def test_kinds():
    table = registry()
    kinds = {k: table[k].kind for k in table if k.startswith('4.')}
    assert kinds == {'4.1': 'reflect', '4.2': 'checked', '4.3': 'checked', '4.4': 'checked',
                     '4.5': 'checked', '4.6': 'reflect'}
    assert sorted(k for k, kind in kinds.items() if kind == 'checked') == CHECKED
