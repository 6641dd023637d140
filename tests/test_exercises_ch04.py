"""Chapter 4 checkers: what each one calls solved, and the answers that must not pass.

Every answer goes through the real protocol (``tests/checking.py``): pickled, run in a
worker process, judged in the judge process on inputs drawn afresh for each check.

| id | what is checked (solved means) | plausible wrong answers (each a test below) |
|---|---|---|
| 4.1, 4.6 | no checker (reflections; worked answers in the solutions notebook) | - |
| 4.2 | `build(V, B, L)` at (10, 40, 2), (10, 40, 3), (30, 60, 3), (16, 64, 4): the exact last-position answer under the PostLN forward pass on every defined input (query once earlier, not among the first L tokens) of a fresh `ch04.search_inputs(seed, sizes, 60)`: random inputs of full and shorter length, and one of every defined length (round 21: a program right only at the 5 lengths then tried passed), the match right after the first L tokens and right before the query, a query of one repeated token, the vocabulary's first and last tokens, near misses (one in each place of the query), every token in every place of the query and after it, the match at every position | no cleanup heads; keys read one place off; a soft (harden = 1) program |
| 4.3 | `make_prompt(keys, values, key, V)`: the book's Search answers every key of the 7 tables of `ch04.lookup_tables()` and of 3 tables drawn afresh (`ch04.random_tables(seed)`; the third with keys of 6 to 12 tokens: round 16, no key over 5 tokens was tried), each with its values as given, shifted, redrawn and all equal; the per-key part of the prompt and prefix_len stay the same when only the values change, and when the rows are shuffled and a third left out (round 25) | no separator; the value itself in the prompt; a legitimate format (`key SEP value`, sorted rows) passes |
| 4.4 | as 4.2 under PreLN at (10, 100, 3), (1000, 100, 10), (16, 64, 2), exact, with d_model < 3 (L + 1) measured on the submitted arrays; the book's builder switched off (round 26: the book's Search projected onto the span of its streams met the budget) | the book's program (d_model 12); a 2-D program comparing half the key |
| 4.5 | as 4.4 without near misses and without the every-token sweep, at each size >= 99 % right both of 200 random full-length and 100 shorter inputs and of the hand-placed ones (`search_inputs(seed, sizes, 200, adversarial=False)`), with at most 3/4 of the parameters (counted on the submitted arrays, lists included) of the book's program, counted by the judge at check time | the book's program; the book's program with its all-zero head columns dropped (round 12: it fit 'fewer than the book' with 84 to 92 % of the count, no hashing); a soft 2-D program |

Red team (the issue's classes of attack; each row is a test below):

| attack | puzzles | why it fails now |
|---|---|---|
| 1 a table of answers from earlier NOT YET lines: they name fixed inputs and expected tokens | 4.2-4.5 | hidden inputs come from a fresh seed on every check (two checks name different inputs), and a NOT YET line names the input and the answer's token, never the expected one |
| 2 the answer in the source | - | nothing to find: no single-valued answer; the budgets are stated in the exercises, and the book's totals are counted by the judge at check time |
| 3 patch the checker's engine (`ch04.last_token_argmax`), a function's `__code__`, or its tables (`SIZES_4_4`, the book totals via `count_params`) from the builder | 4.4, 4.5 | the builder runs in a worker process; the judge's modules are out of its reach |
| 3 work before `check()`: a thread started in the kernel that keeps patching the package | 4.4 | the answer runs in a fresh worker forked from a clean zygote: no thread of the kernel exists there |
| 3 a Python oracle in ndarray subclasses (reads the tokens, writes the logits) | 4.2, 4.4, 4.5 | the worker sends back plain arrays only (``wire``): the oracle is gone before anything runs |
| 3 a dict subclass that shows the budget check a small fake; list-valued weights; a weight whose ufuncs never return | 4.4, 4.5 | the same: one plain copy is measured and run |
| 6 a program that ignores one place of the key (right wherever the near misses happen not to differ there) | 4.4 | a near miss in each place of the query on every check, once after the match and once before it: a near miss after the match lost the tie to it, so the cheat passed once in a full run (found this session) |
| 6 a per-key part that leaks value - values[0] (invariant under a shift), or a prefix_len capped at 4 | 4.3 | values also redrawn afresh and all equal; 16 binary keys of length 4 |
| 6 a per-key part that names the key's row (a base-V code of `keys.index(key)`, or of its rank among the sorted keys) instead of the key (round 25) | 4.3 | each table again with its rows shuffled and a third left out, drawn afresh: the per-key part of each remaining key's prompt must not change |
| 6 a hash of 10 dims: about 90 % right at prefix 10 (14 dims reach about 99 %, the threshold itself, so the verdict on them is a coin toss) | 4.5 | 300 fresh random inputs at that size |

Hangs inside returned values (a prompt whose `__array__` never returns) end the worker at
the per-call limit.  The contract every checker keeps (the reference passes, garbage is
reported, loops are stopped) is tested once in test_checker_contract.py; the reference
answers come from their one copy, the solutions notebook (``answer``).
"""
import threading
import time

import numpy as np
import pytest

import taotp
from checking import SHORT, NeverArray, fails, verdict
from solutions import answer
from taotp.exercises import ch04, registry, wire
from taotp.programs import CATALOGUE
from taotp.search import search_reference

CHECKED = ['4.2', '4.3', '4.4', '4.5']


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


def derived(factory):
    """Marks an answer made from a reference builder: the test calls ``factory()`` in the
    kernel, so the worker receives the builder itself (not the notebook that defines it)."""
    factory.derived = True
    return factory


def made(answer_or_factory):
    return answer_or_factory() if getattr(answer_or_factory, 'derived', False) \
        else answer_or_factory


def given_book(cheat):
    """``cheat(V, B, L, book)`` handed the book's program, built in the kernel for the three
    sizes of 4.4 and 4.5: the book's builder is switched off where the answer runs (round
    26), and the budgets are still judged on what the cheat makes of it."""
    def factory():
        table = {size: taotp.build_search_transformer(*size)
                 for size in ((10, 100, 3), (1000, 100, 10), (16, 64, 2))}
        return lambda V, B, L: cheat(V, B, L, table[V, B, L])
    factory.derived = True
    factory.__name__ = f'given_book_{getattr(cheat, "__name__", "cheat")}'
    return factory


def trimmed(params):
    """Round 12: a program with the all-zero columns of each head dropped (Q rescaled so that
    the scores stay): the same function, fewer parameters, no hashing."""
    for layer in params['layers']:
        Q, K, V, P = (np.asarray(layer[k]) for k in 'QKVP')
        keep_qk = np.flatnonzero((Q != 0).any(axis=(0, 1)) | (K != 0).any(axis=(0, 1)))
        keep_vp = np.flatnonzero((V != 0).any(axis=(0, 1)) | (P != 0).any(axis=(0, 1)))
        scale = np.sqrt(max(len(keep_qk), 1) / Q.shape[-1])
        layer.update(Q=Q[..., keep_qk] * scale, K=K[..., keep_qk], V=V[..., keep_vp],
                     P=P[..., keep_vp])
    return params


@derived
def soft_2d():
    build = answer('4.4')
    return lambda V, B, L: build(V, B, L, harden=1.0)


def no_separator(keys, values, key, vocab_size):
    table = []
    for k, v in zip(keys, values):
        table += [*k, v]
    return table + list(key), max(2, len(key))


def leaks_value(keys, values, key, vocab_size):
    v = values[keys.index(key)]
    return [v, v, v, v], 2


@derived
def hashed_too_few_dims():            # 2-D slots but only half of the key compared
    build = answer('4.4')

    def builder(V, B, L):
        p = build(V, B, L)
        p['layers'][1]['Q'][0][:, L:] = 0
        return p
    return builder


HIDDEN = 'which is not right; its earlier copy is at position'
WRONG = [
    ('4.2', no_cleanup, '(10, 40, 2): '),
    ('4.2', off_by_one, HIDDEN),
    ('4.2', soft, HIDDEN),
    ('4.3', no_separator, 'XOR table, key [1, 1]: the book\'s Search on your prompt'),
    ('4.3', leaks_value, 'it must depend on the key alone'),
    ('4.4', given_book(lambda V, B, L, book: book), 'vocab_size=10, block_size=100, '
     'prefix_len=3 returned is over the budget: 12 d_model; at most 11 allowed'),
    ('4.4', hashed_too_few_dims, '(10, 100, 3): input '),
    ('4.5', given_book(lambda V, B, L, book: book), 'is over the budget: 4,800 parameters; at '
     'most 3,600 allowed'),
    ('4.5', given_book(lambda V, B, L, book: trimmed(book)),
     'is over the budget: 4,224 parameters; at most 3,600 allowed'),
    ('4.5', soft_2d, 'inputs right, needed 99%; one it missed: input '),
]


@pytest.mark.parametrize('puzzle, wrong, message', WRONG,
                         ids=[f'{p}-{w.__name__}' for p, w, _ in WRONG])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, wrong, message):
    fails(puzzle, made(wrong), message)


def test_a_hidden_input_is_named_with_its_seed_and_not_its_answer():
    """Class 1: the input comes from a fresh seed (two checks, two inputs), the message
    names it so ``search_inputs`` rebuilds it, and never says what was expected."""
    first, second = (fails('4.2', off_by_one, 'of ch04.search_inputs(') for _ in range(2))
    assert first.counterexample != second.counterexample
    assert 'expected' not in first.message
    seed = int(first.message.split('ch04.search_inputs(')[1].split(',')[0])
    index = int(first.message.split(': input ')[1].split(' ')[0])
    size = first.message.split(':')[0]
    assert size == '(10, 40, 2)'
    label, x = ch04.search_inputs(seed, (10, 40, 2), 60)[index]
    assert x.tolist() == first.counterexample


def test_a_visible_table_shows_the_expected_value_a_hidden_one_does_not():
    def right_on_the_books_tables(keys, values, key, vocab_size):
        """The reference format, but a wrong value for every table with 20 keys."""
        sep, table = vocab_size, []
        for k, v in zip(keys, values):
            table += [sep, *k, (v + (len(keys) == 20)) % vocab_size]
        return table + [sep, *key], len(key) + 1
    result = fails('4.3', right_on_the_books_tables, 'random table 1 of ch04.random_tables(',
                   'which is not right')
    assert 'expected' not in result.message
    assert 'expected the value 0' in verdict('4.3', no_separator).message


# ----------------------------------------------------------------------------- red team

def oracle_program(answer_fn, vocab, block, layers=()):
    """A params dict whose ndarray subclasses compute the logits in Python (``answer_fn``)."""

    class Spy(np.ndarray):
        def __getitem__(self, index):
            if isinstance(index, np.ndarray) and index.dtype.kind in 'iu':
                Oracle.tokens = np.array(index)
            return np.asarray(super().__getitem__(index))

    class Oracle(np.ndarray):
        def __array_function__(self, func, types, args, kwargs):
            if func is np.einsum and len(args) == 3 and args[2] is self:
                rows = Oracle.tokens.reshape(-1, Oracle.tokens.shape[-1])
                out = np.zeros(np.shape(args[1])[:-1] + (self.shape[0],))
                flat = out.reshape(len(rows), -1, self.shape[0])
                for b, row in enumerate(rows):
                    for j in range(flat.shape[1]):
                        want = answer_fn(row[:len(row) - flat.shape[1] + j + 1].tolist())
                        if want is not None:
                            flat[b, j, want] = 1.0
                return out
            return super().__array_function__(func, types, args, kwargs)

    p = taotp.base_params(vocab, block, 1)
    p['tok_emb'] = (np.arange(vocab, dtype=float)[:, None] % 7).view(Spy)
    p['out_emb'] = np.ones((vocab, 1)).view(Oracle)
    p['layers'] = list(layers)
    return p


def oracle_search(V, B, L):
    """Python's search_reference dressed as a program of d_model 1 and no layers."""
    return oracle_program(lambda prefix: search_reference(prefix, L), V, B)


class Switch(dict):
    """Shows ``fake`` to anyone who reads a key; ``**params`` unpacking sees the real storage."""

    def __init__(self, real, fake):
        super().__init__(real)
        self.fake = fake

    def __getitem__(self, key):
        return self.fake[key]


def fake_small(V, B, L, book=None):
    """The book's program, but every key read shows a 3L-wide program with one empty layer."""
    fake = taotp.base_params(V, B, 3 * L)
    fake['layers'] = [taotp.base_layer(1, 3 * L, 0, 1)]
    return Switch(book or taotp.build_search_transformer(V, B, L), fake)


def listed(V, B, L, book):
    """The book's program with its attention weights as nested lists."""
    p = book
    for layer in p['layers']:
        for name in 'QKVP':
            layer[name] = layer[name].tolist()
    return p


@derived
def hash_10():
    """The reference, but a hash of 10 dims at prefix 10: about 90 % right there."""
    build = answer('4.5')
    return lambda V, B, L: build(V, B, L, hash_dims=10 if L == 10 else None)


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


def patching_builder(vocab, block, prefix_len):
    """4.4: swaps the checker's engine for the reference answer, returns a 1-dim program."""
    def oracle(X, params, **kwargs):
        return np.array([search_reference(list(x), prefix_len) for x in X])
    ch04.last_token_argmax = oracle
    return taotp.base_params(vocab, block, 1)


def code_swapping_builder(vocab, block, prefix_len):
    """4.4: turns the checker's judging function into one that accepts everything."""
    def fake(params, sizes, n_random, need=1.0, post_ln=False, adversarial=True):
        return 1
    ch04._judge.__code__ = fake.__code__
    return taotp.base_params(vocab, block, 1)


def table_shrinking_builder(vocab, block, prefix_len, book):
    """4.4: empties the checker's list of sizes and its budget table, then returns the book."""
    from taotp.exercises import toolkit
    ch04.SIZES_4_4 = ()
    toolkit.LIMITS.clear()
    return book


def total_lowering_builder(vocab, block, prefix_len, book):
    """4.5: makes the package count the book's program as 10**9 parameters, returns the book."""
    import taotp.params
    taotp.params.count_params = lambda params: {'n_params': 10 ** 9}
    ch04.count_params = taotp.params.count_params
    return book


def never_ufunc_embedding(V, B, L, book):
    return {**book, 'tok_emb': np.zeros((V, 12)).view(NeverUfunc)}


@derived
def ignores_one_place():
    """4.4: the 2-D reference, but at prefix 10 its match head ignores place 5 of the key
    (random inputs over 1,000 tokens almost never hold a near miss)."""
    build = answer('4.4')

    def builder(V, B, L):
        p = build(V, B, L)
        if L == 10:
            p['layers'][1]['Q'][0][:, 10:12] = 0
        return p
    return builder


class NeverUfunc(np.ndarray):
    """An array whose every ufunc (``isfinite``, ``==``, ...) never returns."""

    def __array_ufunc__(self, *args, **kwargs):
        while True:
            time.sleep(0.01)


CHEATS = [
    ('4.2', oracle_search, HIDDEN),
    ('4.3', offset_leak, 'it must depend on the key alone'),
    ('4.3', capped_prefix, 'all 16 binary keys of length 4 (parity), key [0, 0, 1, 1]: the book\'s '
                           'Search on your prompt'),
    ('4.4', oracle_search, HIDDEN),
    ('4.4', given_book(fake_small), 'returned is over the budget: 12 d_model'),
    ('4.4', patching_builder, '(10, 100, 3): input '),
    ('4.4', code_swapping_builder, 'object.__setattr__ is not available'),   # __code__ (round 7)
    ('4.4', given_book(table_shrinking_builder), 'over the budget: 12 d_model; at most 11 '
     'allowed'),
    ('4.4', ignores_one_place, '(1000, 100, 10): input '),
    ('4.4', given_book(never_ufunc_embedding), 'over the budget: 12 d_model'),
    ('4.5', oracle_search, 'needed 99%'),
    ('4.5', given_book(fake_small), 'over the budget: 4,800 parameters'),
    ('4.5', given_book(listed), 'is over the budget: 4,800 parameters; at most 3,600 allowed'),
    ('4.5', given_book(total_lowering_builder), 'is over the budget: 4,800 parameters; at most '
     '3,600 allowed'),
    ('4.4', taotp.build_search_transformer, "the book's Search is switched off here"),
    ('4.5', lambda v, b, p: trimmed(taotp.build_search_transformer(v, b, p)),
     "the book's Search is switched off here"),
    ('4.5', hash_10, '(1000, 100, 10): '),
]


@pytest.mark.parametrize('puzzle, cheat, messages', CHEATS,
                         ids=[f'{p}-{c.__name__}' for p, c, _ in CHEATS])
def test_cheats_do_not_pass(puzzle, cheat, messages):
    fails(puzzle, made(cheat), *((messages,) if isinstance(messages, str) else messages))


def _code(i, vocab_size, width):
    return [(i // vocab_size ** d) % vocab_size for d in reversed(range(width))]


def row_numbers(keys, values, key, vocab_size):
    """Round 25: each key replaced by a base-V code of its row number (found with
    keys.index); no key token in the prompt.  Right on every table whose rows keep their
    order."""
    sep, width = vocab_size, 1
    while vocab_size ** width < len(keys):
        width += 1
    table = []
    for i, v in enumerate(values):
        table += [sep, *_code(i, vocab_size, width), v]
    return table + [sep, *_code(keys.index(key), vocab_size, width)], width + 1


def sorted_ranks(keys, values, key, vocab_size):
    """The same with the rank of the key among the sorted keys: blind to the rows' order,
    not to the other keys."""
    order = sorted(range(len(keys)), key=lambda i: list(keys[i]))
    return row_numbers([keys[i] for i in order], [values[i] for i in order], key, vocab_size)


@pytest.mark.parametrize('cheat', [row_numbers, sorted_ranks])
def test_25_a_per_key_part_that_names_the_row_fails(cheat):
    fails('4.3', cheat, 'only its rows', 'depend on the key alone')


def key_then_separator(keys, values, key, vocab_size):
    """A legitimate variant: the table in sorted order, each entry `k SEP v`, the query
    `key SEP`."""
    sep, table = vocab_size, []
    for k, v in sorted(zip(keys, values)):
        table += [*k, sep, v]
    return table + [*key, sep], len(key) + 1


def test_25_other_honest_formats_still_pass():
    result = verdict('4.3', key_then_separator)
    assert result.passed, result.message


def test_a_thread_started_before_the_check_takes_no_part():
    """Class 3: a kernel thread that keeps putting the reference in place of the checker's
    engine (and would make a 1-dim program pass in-process) does not exist in the worker."""
    stop = threading.Event()

    def keep_patching():
        while not stop.is_set():
            ch04.last_token_argmax = lambda X, params, **k: np.array(
                [search_reference(list(x), 3) for x in X])
            time.sleep(0.001)
    original = ch04.last_token_argmax
    thread = threading.Thread(target=keep_patching, daemon=True)
    thread.start()
    try:
        fails('4.4', lambda V, B, L: taotp.base_params(V, B, 1), '(10, 100, 3): input ')
    finally:
        stop.set()
        thread.join()
        ch04.last_token_argmax = original


def test_the_oracle_is_a_real_cheat_that_the_wire_removes():
    p = oracle_search(10, 40, 3)
    X, want = ch04.search_cases(0, 20, 10, 40, 3)
    assert (taotp.last_token_argmax(X, p) == want).all()
    plain = wire.decode(wire.encode(p, []))
    assert type(plain['out_emb']) is np.ndarray
    assert (taotp.last_token_argmax(X, plain) != want).any()


def test_the_switch_shows_a_fake_to_readers_and_the_wire_sends_the_real_storage():
    p = fake_small(10, 100, 3)
    assert p['tok_emb'].shape == (10, 9)
    assert wire.decode(wire.encode(p, []))['tok_emb'].shape == (10, 12)


def test_values_that_never_return_end_the_worker():
    start = time.perf_counter()
    fails('4.3', lambda *a: (NeverArray(), 2), 'took longer than 0.5 s', call_seconds=SHORT)
    assert time.perf_counter() - start < 15


# ----------------------------------------------------------------------------- the checkers' inputs

def test_the_budgets_stated_in_the_exercises_are_the_books_counts():
    assert CATALOGUE['search-10'].source_total == 4_800
    assert CATALOGUE['search-1000'].source_total == 123_486
    for sizes, total in (((10, 100, 3), 4_800), ((1000, 100, 10), 123_486),
                         ((16, 64, 2), 2_034)):
        assert taotp.count_params(taotp.build_search_transformer(*sizes))['n_params'] == total


def test_search_cases_are_unique_and_avoid_the_first_tokens():
    X, want = ch04.search_cases(0, 50, 10, 60, 3)
    for x, w in zip(X, want):
        assert search_reference(x, 3) == w
        assert not set(x[:3].tolist()) & set(x[-3:].tolist())


@pytest.mark.parametrize('sizes', ch04.SIZES_4_4 + ch04.SIZES_4_2)
def test_every_input_is_defined_and_the_book_answers_it(sizes):
    V, B, L = sizes
    cases = ch04.search_inputs(0, sizes, 20)
    labels = ' '.join(label for label, _ in cases)
    for kind in ('right after the first', 'right before the query', 'one repeated token',
                 'first and last tokens', 'many near misses', 'alternating',
                 'every token in every place', 'the match at every position'):
        assert kind in labels, (kind, labels)
    assert {f'differs from the query in place {j} only' in labels for j in range(L)} == {True}
    # every defined length (round 21: a program right only at the 5 lengths then tried passed)
    assert {len(x) for _, x in cases} == set(range(3 * L + 1, B + 1))
    book = taotp.build_search_transformer(V, B, L)
    for length in {len(x) for _, x in cases}:
        X = np.array([x for _, x in cases if len(x) == length])
        assert all(ch04._defined(x, L) for x in X)
        want = [search_reference(x, L) for x in X]
        assert (taotp.last_token_argmax(X, book) == want).all(), length


def test_the_sweep_reaches_every_token_in_every_place_and_every_position():
    V, B, L = 1000, 100, 10
    cases = ch04.sweep_cases(np.random.default_rng(0), V, B, L)
    short = [x for label, x in cases if 'every place' in label]
    assert len(short) == V
    for j in range(L):
        assert sorted(x[-L + j] for x in short) == list(range(V))
    after = [x[next(s for s in range(len(x) - L) if list(x[s:s + L]) == list(x[-L:])) + L]
             for x in short]
    assert sorted(after) == list(range(V))
    starts = {next(s for s in range(len(x) - L) if list(x[s:s + L]) == list(x[-L:]))
              for label, x in cases if 'every position' in label}
    assert starts == set(range(L, B - 2 * L))


def test_the_lookup_tables_are_what_the_notebook_shows():
    tables = ch04.lookup_tables()
    assert len(tables) == 7
    for name, keys, values, vocab in tables:
        assert len({tuple(k) for k in keys}) == len(keys) == len(values)
        assert all(0 <= t < vocab for k in keys for t in k) and all(0 <= v < vocab
                                                                    for v in values)
    a, b = ch04.random_tables(5), ch04.random_tables(5)
    assert a == b and a != ch04.random_tables(6)
    assert all(6 <= len(ch04.random_tables(s)[2][1][0]) <= 12 for s in range(10))   # round 16


def test_two_d_reference_is_smaller_and_fixed():
    p = answer('4.4')(10, 100, 3)
    assert taotp.config(p)['d_model'] == 9 and taotp.count_params(p)['n_params'] == 2_736
    x = p['tok_emb'][:, None] + p['pos_emb'][None]
    np.testing.assert_allclose(taotp.layer_norm(x), x, atol=1e-9)


def test_hashed_reference_sizes():
    build_search_hashed = answer('4.5')
    assert taotp.count_params(build_search_hashed(1000, 100, 10))['n_params'] == 61_778


def test_kinds():
    table = registry()
    kinds = {k: table[k].kind for k in table if k.startswith('4.')}
    assert kinds == {'4.1': 'reflect', '4.2': 'checked', '4.3': 'checked', '4.4': 'checked',
                     '4.5': 'checked', '4.6': 'reflect'}
    assert sorted(k for k, kind in kinds.items() if kind == 'checked') == CHECKED
