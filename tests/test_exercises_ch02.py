"""Chapter 2 checkers: what each one calls solved, and the answers that must not pass.

Every answer goes through the real protocol (``checking.verdict``): pickled, run in a
worker, judged in the judge process.

| id | what is checked (solved means) | wrong answers and cheats tried (each a test below) |
|---|---|---|
| 2.1 | `build(V)` for the notebook's V = 1, 2, 3, 4, 8, 11, 16, 32, 40, 64, 100, 128, 256, 257, 1000, 1001 (7 x 11 x 13, round 18: a circle with a stride of 13 passed), and 512 and 1024 (round 23: every power of two to 1,024, after circles wrong at powers of two from 128, or from 1,002 to 1,024, passed), 2 sizes drawn afresh from 5..1024, one from 1,025..2,048 (a clean clone's run: 1,001..2,048 let a builder right up to 1,024 pass 2.2 once in about 45) and one from 2,049..4,096 (256 of its tokens; round 17: a repeater capped at 2,048 passed), 323, 667, 1,147, 1,763, 2,491 and 3,599 (every prime from 17 to 61 divides one: circles at a stride of 17 or 31 passed most checks, only a drawn size sharing their factor) and a multiple of a prime from 67 to 4,096 drawn afresh: 0 layers, an all-zero pos_emb, at most 3 V other parameters (counted on the plain copy of the arrays, lists included), and every token is repeated (one prompt per token, prompts drawn afresh: with no layers and no positions nothing else reaches the output), also over a windowed decode | tokens on a circle spaced for 64; circles at strides of 7, 11, 13, 17, 31, 53 and 61; one wrong only where a prime from 67 up divides a size not named; an untied out_emb given as lists (6 V); a 2-D circle; a non-zero pos_emb; a zero layer |
| 2.2 | the repeater at the same sizes with at most V non-zeros (`toolkit.budget`), and Hello World printed (message tokenizer, or one giving every symbol its own id) with at most 11 + 13 = 24 non-zeros | a pos_emb whose memory is zero but whose reads hold 143 non-zeros; a tokenizer giving every symbol one id, so that "printing" is 2 2 2 ...; 550 extra non-zeros in list-valued weights; one-hot up to 64 dimensions only; the dense repeater; the book's Hello World |
| 2.3 | a trained (or any) program prints "Hello World!" then <eos> from <bos>; its size is reported; checker in taotp.exercises.training_checks, tested in test_training_puzzles.py | untrained weights |
| 2.4 | pos_emb all zero (one table) and 'Hel Word!' then `<eos>` from `<bos>` | a pos_emb whose memory is zero but whose reads are the book's positions; the book's program; two output rows swapped |
| 2.5 | the same for 'Hello World!' | the same memory/reads cheat; the 2.4 program; the book's program |
| 2.6 | a number equal to the answer (a salted digest; -0.0 and 48.0 are canonicalised), or a program printing Hello World under RMSNorm whose count equals it; no failure message names the answer or says "more" / "fewer" | an int subclass whose == always says yes; 72, 24, 538, 807 and others, each with a hint that does not give the answer; the book's 72-parameter program; the same as lists |
| 2.7 | every array entry of the copy that runs is an integer (layer-norm gamma and beta are not parameters, as in the book's count), and it prints Hello World with a tokenizer that spells it | memory rounded to integers, reads the book's floats; a tokenizer giving every symbol one id; the book's floats; two positions swapped |
| 2.8 | every array entry > 0 (gamma and beta excluded, as stated), and it prints Hello World | memory positive, reads the book's signed floats; a tokenizer giving every symbol one id; the book's program; zeros |

Red team (issue 17's classes of attack; each row is a test that must fail):

| attack | puzzles | why it fails now |
|---|---|---|
| 1 oracle: a builder right only at the sizes the notebook names | 2.1, 2.2 | two vocabulary sizes and every prompt are drawn afresh on each check |
| 1 oracle: bisect the answer with a loop of checks ("too high / too low") | 2.6 | every wrong number gets the same words (or a hint about its own slip), never a direction |
| 2 answer in the source: read 2.6's count from the checker | 2.6 | only a salted digest is stored; no literal or formula of the count is in ch02.py |
| 3 patch the checker in the kernel before the check (`ch02._expect_message`, `REPEATER_SIZES`, `count_params`) | 2.1, 2.4 | the checker runs in the judge, which imports the package afresh |
| 3 patch the checker's helpers from the answer (`count_params`, `toolkit.budget`, `CheckResult.__bool__`) | 2.1 | the answer runs in a worker; the judge's modules are out of its reach |
| 3 raise the judge's own time-up exception from the answer | 2.1 | it is the answer's own exception, reported |
| 3 weights whose reads differ from their memory (array subclass) | 2.2, 2.4, 2.5, 2.7, 2.8 | the worker sends plain arrays; what is counted is what runs |
| 6 probes that look at part of the space | - | none in Chapter 2: every token is put last in 2.1/2.2, every array entry is read in 2.7/2.8, and a Hello World program has one input |
| 4, 5 | - | no training puzzle here (2.3 is judged in training.py), no timing |

The contract every checker keeps (the reference passes, garbage is reported, loops
are stopped) is tested once in test_checker_contract.py; the reference answers come
from their one copy, the solutions notebook (``answer``).  The training harness of
2.3 is tested at the end.
"""
import io
import re
import time
import tokenize
from pathlib import Path

import numpy as np
import pytest

import taotp
from checking import SHORT, NeverArray, fails, never_names, passes, verdict
from solutions import answer
from taotp.exercises import ch02, registry
from taotp.exercises.toolkit import TimeUp
from taotp.hello_world import ascii_tokenizer, hello_world_targets, message_tokenizer

MSG = 'Hello World!'
CHECKED = ['2.1', '2.2', '2.3', '2.4', '2.5', '2.6', '2.7', '2.8']


def book_hello(message=MSG):
    return taotp.build_hello_world_transformer(message)[0]


def _nan_hello():
    p = book_hello()
    p['pos_emb'][0, 0] = np.nan
    return p


# garbage particular to Chapter 2's answers: broken programs and tokenizers
EXTRA_GARBAGE = {pid: {
    'params with a NaN': _nan_hello(),
    '(params with a NaN, tokenizer)': (_nan_hello(), {'<bos>': 0}),
    'a tokenizer with a text id': (book_hello(), {'<bos>': 'a', '<eos>': 1}),
    'a tokenizer with a bool id': (book_hello(), {**message_tokenizer(MSG), '<bos>': True}),
    'a tok_emb that is a number': {'tok_emb': 1},
    'a builder with a 3-D tok_emb': lambda v: {**book_hello(), 'tok_emb': np.zeros((v, 3, 1))},
    'a pos_emb of two tables': {**book_hello(), 'pos_emb': [np.zeros((13, 3)), np.zeros((14, 3))]},
} for pid in CHECKED}


class Masked(np.ndarray):
    """An array whose memory says one thing and whose reads (indexing, as the forward pass
    reads embeddings) say another: counts and checks on ``np.asarray`` see the memory."""

    def __getitem__(self, index):
        return self.shown[index]


def masked(memory, shown):
    m = np.array(memory, dtype=np.float64).view(Masked)
    m.shown = np.array(shown, dtype=np.float64)
    return m


def degenerate(positive=False):
    """Every symbol of Hello World gets id 2: 'printing' it means 2 twelve times, then <eos>."""
    tok = {'<bos>': 0, '<eos>': 1, **{c: 2 for c in MSG}}
    p = taotp.base_params(3, 13, 3)
    p['tok_emb'] = p['out_emb'] = np.eye(3) + (1.0 if positive else 0.0)
    p['pos_emb'] = 1000 * np.eye(3)[hello_world_targets(MSG, tok)] + (1.0 if positive else 0.0)
    return p, tok


def onehot_hello():
    tok = message_tokenizer(MSG)
    p = taotp.base_params(11, 13, 11)
    p['tok_emb'] = p['out_emb'] = np.eye(11)
    p['pos_emb'] = 1000 * np.eye(11)[hello_world_targets(MSG, tok)]
    return p


# ----------------------------------------------------------------------------- 2.1

def repeater_2d(vocab_size):          # layer norm collapses R^2: only 2 outputs possible
    a = 2 * np.pi * np.arange(vocab_size) / vocab_size
    p = taotp.base_params(vocab_size, 4, 2)
    p['tok_emb'] = p['out_emb'] = np.stack([np.cos(a), np.sin(a)], 1)
    return p


def circle_of_64(vocab_size):         # right up to 64 tokens, then tokens t and t + 64 collide
    p = taotp.base_params(vocab_size, 4, 3)
    p['tok_emb'] = p['out_emb'] = taotp.pos_enc_3d_array(64)[np.arange(vocab_size) % 64]
    return p


# Builders made from the reference take it as an argument: a test builder runs in the worker,
# where reading the solutions notebook again would cost the builder's time.

def untied_lists(build):              # works, but 6 V parameters, hidden in lists
    def builder(vocab_size):
        p = build(vocab_size)
        p['out_emb'] = (2 * p['tok_emb']).tolist()
        return p
    return builder


def repeater_with_pos(build):
    def builder(vocab_size):
        p = build(vocab_size)
        p['pos_emb'] = np.ones_like(p['pos_emb'])
        return p
    return builder


def with_zero_layer(build):
    def builder(vocab_size):
        p = build(vocab_size)
        p['layers'] = [taotp.base_layer(1, 3, 0, 1)]
        return p
    return builder


# ----------------------------------------------------------------------------- 2.2

def masked_positions_hello():         # memory: zero pos_emb (11 non-zeros counted); reads: 154
    p = onehot_hello()
    noise = 1e-3 * np.random.default_rng(0).random(p['pos_emb'].shape)
    p['pos_emb'] = masked(np.zeros_like(p['pos_emb']), p['pos_emb'] + noise)
    return p


def list_valued_extras():             # 550 non-zeros in list-valued weights
    p = onehot_hello()
    layer = taotp.base_layer(1, 11, 50, 1)
    layer['M1'] = np.ones((11, 50)).tolist()              # 550 non-zeros that change nothing:
    layer['b1'] = (-1e9 * np.ones(50)).tolist()           # the ReLU never opens
    p['layers'] = [layer]
    return p


def onehot_up_to_64(vocab_size):      # one-hot rows, but at most 64 dimensions
    d = min(vocab_size, 64)
    p = taotp.base_params(vocab_size, 4, d)
    p['tok_emb'] = p['out_emb'] = np.eye(d)[np.arange(vocab_size) % d]
    return p


# ----------------------------------------------------------------------------- 2.4 - 2.8

def masked_book(message=MSG):         # memory: zero pos_emb; reads: the book's positions
    p = book_hello(message)
    p['pos_emb'] = masked(np.zeros_like(p['pos_emb']), p['pos_emb'])
    return p


def swapped_rows():                  # two output rows exchanged: 'o' and 'r' trade places
    p = answer('2.4')
    p = {**p, 'out_emb': p['out_emb'].copy()}
    p['out_emb'][[7, 8]] = p['out_emb'][[8, 7]]
    return p


def swapped_positions():             # integer, but positions 3 and 4 exchanged
    p = answer('2.7')
    p = {**p, 'pos_emb': p['pos_emb'].copy()}
    p['pos_emb'][[3, 4]] = p['pos_emb'][[4, 3]]
    return p


def rounded_memory():                # memory: integers that print nothing; reads: the book's
    p = book_hello()
    tok, pos = p['tok_emb'], p['pos_emb']
    return {**p, 'tok_emb': masked(np.round(tok), tok),
            'pos_emb': masked(np.round(pos / 1e6), pos), 'out_emb': np.round(1000 * tok)}


def positive_memory():               # memory: positive; reads: the book's signed floats
    p = book_hello()
    tok, pos = p['tok_emb'], p['pos_emb']
    return {**p, 'tok_emb': masked(np.abs(tok) + 1, tok), 'pos_emb': masked(np.abs(pos) + 1, pos),
            'out_emb': tok + 2}


class AlwaysEqual(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def rms_program_as_lists():
    p = book_hello()
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in p.items()}


# (puzzle, a function making the answer, a part of the expected message); the answers are
# made when the test runs, so collecting the tests runs no solution notebook
CHEATS = {
    '2.1 circle spaced for 64 tokens': ('2.1', lambda: circle_of_64,
                                        'vocab_size=100, prompt ['),
    '2.1 untied out_emb as lists': ('2.1', lambda: untied_lists(answer('2.1')),
                                    'the budget is 3 * vocab_size'),
    '2.1 a 2-D circle': ('2.1', lambda: repeater_2d, 'vocab_size=3, prompt ['),
    '2.1 non-zero pos_emb': ('2.1', lambda: repeater_with_pos(answer('2.1')),
                             'pos_emb must be all zero'),
    '2.1 a zero layer': ('2.1', lambda: with_zero_layer(answer('2.1')),
                         '1 layers; at most 0 allowed'),
    '2.2 masked positions': ('2.2', lambda: (answer('2.2')[0], masked_positions_hello()),
                             "printed '<bos><bos>"),
    '2.2 one id for every symbol': ('2.2', lambda: (answer('2.2')[0], degenerate()),
                                    'the same id 2'),
    '2.2 550 list-valued extras': ('2.2', lambda: (answer('2.2')[0], list_valued_extras()),
                                   '624 non-zero parameters; at most 24 allowed'),
    '2.2 one-hot up to 64 dimensions': ('2.2', lambda: (onehot_up_to_64, answer('2.2')[1]),
                                        'vocab_size=100, prompt ['),
    '2.2 the dense repeater': ('2.2', lambda: (answer('2.1'), answer('2.7')),
                               'vocab_size=1 returned is over the budget: 2 non-zero '
                               'parameters; at most 1 allowed'),
    '2.2 the book\'s Hello World': ('2.2', lambda: (answer('2.2')[0], book_hello()),
                                    '71 non-zero parameters; at most 24 allowed'),
    '2.4 masked positions': ('2.4', lambda: masked_book('Hel Word!'), "printed '"),
    '2.4 the book\'s program': ('2.4', book_hello, 'pos_emb must be all zero'),
    '2.4 two output rows swapped': ('2.4', swapped_rows,
                                    "expected 'Hel Word!' then <eos> (first difference at output "
                                    "position 5)"),
    '2.5 masked positions': ('2.5', masked_book, "printed '"),
    '2.5 the 2.4 program': ('2.5', lambda: answer('2.4'),
                            "printed 'Helo Wrd!<eos>'; expected 'Hello World!' then <eos>"),
    '2.5 the book\'s program': ('2.5', book_hello, 'pos_emb must be all zero'),
    '2.6 an int that equals everything': ('2.6', lambda: AlwaysEqual(7), '7 is not it'),
    '2.6 72': ('2.6', lambda: 72, 'layer-norm count'),
    '2.6 24': ('2.6', lambda: 24, 'only two symbols'),
    '2.6 538': ('2.6', lambda: 538, 'ASCII tokenizer'),
    '2.6 807': ('2.6', lambda: 807, 'ASCII tokenizer'),
    '2.6 47': ('2.6', lambda: 47, 'smallest d_model'),
    '2.6 text': ('2.6', lambda: '48', 'expected a number of parameters'),
    '2.6 the book\'s program': ('2.6', book_hello, 'with 72 parameters (11 tokens, 13 positions, '
                                                   'd_model 3), which is not the smallest'),
    '2.6 the book\'s program as lists': ('2.6', rms_program_as_lists, 'with 72 parameters'),
    '2.6 the ASCII program': ('2.6', lambda: taotp.build_hello_world_transformer(MSG, 'ascii'),
                              'the question counts with the message tokenizer'),
    '2.7 rounded memory': ('2.7', rounded_memory, "printed '"),
    '2.7 one id for every symbol': ('2.7', degenerate, 'the same id 2'),
    '2.7 the book\'s floats': ('2.7', book_hello, 'tok_emb[0, 0] = 1.22'),
    '2.7 two positions swapped': ('2.7', swapped_positions,
                                  'first difference at output position 3'),
    '2.8 positive memory': ('2.8', positive_memory, "printed '"),
    '2.8 one id for every symbol': ('2.8', lambda: degenerate(positive=True), 'the same id 2'),
    '2.8 the book\'s program': ('2.8', book_hello, 'is not > 0'),
    '2.8 zeros': ('2.8', lambda: answer('2.7'), 'is not > 0 (zeros count as not positive)'),
}


@pytest.mark.parametrize('label', CHEATS)
def test_cheats_and_wrong_answers_fail_with_a_message(label):
    puzzle, make, words = CHEATS[label]
    fails(puzzle, make(), words)


def test_no_failure_message_of_2_6_gives_the_answer():
    for wrong in (72, 24, 538, 807, 47, 49, 96, 0, -1, 47.5, -0.0, float('nan'), True,
                  book_hello()):
        never_names(fails('2.6', wrong), '48')


def test_other_correct_forms_pass():
    passes('2.4', (answer('2.4'), message_tokenizer('Hel Word!')))
    for form in (48, 48.0, np.int64(48), np.float32(48)):
        passes('2.6', form, 'salted digest')
    passes('2.7', (answer('2.7'), message_tokenizer(MSG)))
    p, tok = taotp.build_hello_world_transformer(MSG, 'ascii')     # <bos> and <eos> share id 0
    p['tok_emb'] = p['out_emb'] = p['tok_emb'] + 2
    p['pos_emb'] = p['pos_emb'] + 2e6
    passes('2.8', (p, tok))


def test_wrong_symbol_is_named():
    p, _ = taotp.build_hello_world_transformer('Hello Wxrld!', 'ascii')
    fails('2.7', (np.round(p['tok_emb']), ascii_tokenizer()))
    p, tok = taotp.build_hello_world_transformer('Hellx World!', 'ascii')
    p['tok_emb'] = p['out_emb'] = p['tok_emb'] + 2
    p['pos_emb'] = p['pos_emb'] + 2e6
    fails('2.8', (p, tok), "printed 'Hellx World!<bos>'", 'position 4')


@pytest.mark.parametrize('puzzle', CHECKED)
def test_arrays_that_never_convert_are_stopped(puzzle):
    never = {**book_hello(), 'tok_emb': NeverArray()}
    value = (lambda v: never, never) if puzzle == '2.2' else \
        (lambda v: never) if puzzle == '2.1' else never
    start = time.perf_counter()
    result = verdict(puzzle, value, call_seconds=SHORT)
    assert not result.passed and 'took longer than' in result.message, result.message
    assert time.perf_counter() - start < 5


def test_options_are_refused():
    result = verdict('2.6', 48, per_size=1)
    assert not result.passed and "puzzle 2.6 has no option 'per_size'" in result.message


def test_kinds():
    table = registry()
    kinds = {k: table[k].kind for k in table if k.startswith('2.')}
    assert kinds == {'2.1': 'checked', '2.2': 'checked', '2.3': 'checked', '2.4': 'checked',
                     '2.5': 'checked', '2.6': 'checked', '2.7': 'checked', '2.8': 'checked'}
    assert sorted(k for k, kind in kinds.items() if kind == 'checked') == CHECKED


# ----------------------------------------------------------------------------- red team

def only_the_named_sizes(build):
    """Right at the sizes the notebook names, a 2-D circle (two outputs) everywhere else."""
    def builder(vocab_size):
        if vocab_size in ch02.REPEATER_SIZES + ch02.POWERS_2_1 + ch02.PRIME_PAIRS_2_1:
            return build(vocab_size)
        return repeater_2d(vocab_size)
    return builder


def only_the_named_sparse_sizes(build):
    """Right at the sizes the notebook names; elsewhere the last token shares token 0's row."""
    def builder(vocab_size):
        if vocab_size in ch02.REPEATER_SIZES:
            return build(vocab_size)
        p = taotp.base_params(vocab_size, 4, vocab_size)
        p['tok_emb'] = p['out_emb'] = np.eye(vocab_size)[np.r_[np.arange(vocab_size - 1), 0]]
        return p
    return builder


@pytest.mark.parametrize('puzzle, make', [
    ('2.1', lambda: only_the_named_sizes(answer('2.1'))),
    ('2.2', lambda: (only_the_named_sparse_sizes(answer('2.2')[0]), answer('2.2')[1])),
])
def test_1_a_builder_right_only_at_the_named_sizes_fails(puzzle, make):
    fails(puzzle, make(), 'a size drawn afresh for this check')


def up_to_1024(vocab_size, sparse=False, top=1024):
    """Round 10: right for every vocabulary up to 1,024 tokens (or ``top``), wrong above
    (token t + top shares token t's row): a circle at a fixed step, or one-hot rows of at
    most ``top``."""
    if sparse:
        p = taotp.base_params(vocab_size, 4, min(vocab_size, top))
        p['tok_emb'] = p['out_emb'] = np.eye(min(vocab_size, top))[np.arange(vocab_size) % top]
        return p
    return circle(2 * np.pi / top * np.arange(vocab_size))


def circle(angles):
    """A tied repeater with token t at ``angles[t]`` on the book's circle (``pos_enc_3d``)."""
    p = taotp.base_params(len(angles), 16, 3)
    p['tok_emb'] = p['out_emb'] = taotp.pos_enc_3d(angles)
    return p


def strided(stride):
    """A circle that places token t at angle 2 pi (stride t mod V) / V: right unless the
    stride shares a factor with V, when two tokens share a point."""
    return lambda V: circle(2 * np.pi * (stride * np.arange(V) % V) / V)


@pytest.mark.parametrize('puzzle, make, words', [
    ('2.1', lambda: up_to_1024, 'vocab_size=1147, prompt'),     # 31 x 37, now named
    ('2.2', lambda: (lambda v: up_to_1024(v, sparse=True), answer('2.2')[1]),
     'a size drawn afresh for this check'),
    ('2.1', lambda: lambda v: up_to_1024(v, top=2048),          # round 17: 2,048 was the top
     'vocab_size=2491, prompt'),
])
def test_1_a_builder_right_only_up_to_1024_tokens_fails(puzzle, make, words):
    fails(puzzle, make(), words)


@pytest.mark.parametrize('stride, size', [(1, None), (7, 1001), (11, 11), (13, 1001),
                                          (17, 323), (31, 1147), (53, 2491), (61, 3599)])
def test_1_a_strided_circle_fails_where_its_stride_divides_the_size(stride, size):
    """Round 18: a stride of 13 passed, no size then being a multiple of 13; later strides of
    17 and 31 passed most checks (only a drawn size could share their factor): every prime
    to 61 now divides a named size."""
    if size is None:
        passes('2.1', strided(stride))
    else:
        fails('2.1', strided(stride), f'vocab_size={size}, prompt')


def prime_at_least(low, V):
    """The prime from ``low`` up that divides V (one at most when low * low > V), else 1."""
    return next((p for p in range(low, V + 1) if V % p == 0
                 and all(p % q for q in range(2, int(p ** 0.5) + 1))), 1)


def wrong_past_61_where_unnamed(V):
    """A circle whose stride is V's prime factor from 67 up (its tokens share V / p points)
    at a size the notebook does not name, the right circle elsewhere."""
    named = ch02.REPEATER_SIZES + ch02.POWERS_2_1 + ch02.PRIME_PAIRS_2_1
    return strided(1 if V in named else prime_at_least(67, V))(V)


def test_1_a_circle_wrong_only_where_a_prime_above_61_divides_the_size_fails():
    """One size of each check is a multiple of a prime from 67 up, drawn afresh."""
    fails('2.1', wrong_past_61_where_unnamed, 'a size drawn afresh for this check', 'prompt [')


def test_the_named_and_drawn_sizes_meet_every_prime_to_the_top():
    primes = [p for p in range(2, ch02.LARGE_SIZES[-1] + 1)
              if all(p % q for q in range(2, int(p ** 0.5) + 1))]
    named = ch02.REPEATER_SIZES + ch02.POWERS_2_1 + ch02.PRIME_PAIRS_2_1
    assert all(any(V % p == 0 for V in named) for p in primes if p <= 61)
    sizes = [ch02._prime_multiple(np.random.default_rng(seed)) for seed in range(6000)]
    assert max(sizes) <= ch02.LARGE_SIZES[-1]
    assert {prime_at_least(67, V) for V in sizes} == {p for p in primes if p >= 67}


def test_1_a_circle_wrong_at_powers_of_two_or_just_below_1024_fails():
    """Round 23: pairs of tokens shared a point at every power of two from 128 (or at every
    size from 1,002 to 1,024); no such size was tried or could be drawn."""
    right = strided(1)
    paired = lambda V: circle(2 * np.pi * (np.arange(V) // 2 * 2) / V)    # noqa: E731
    fails('2.1', lambda V: paired(V) if V >= 128 and V & (V - 1) == 0 else right(V),
          'vocab_size=128, prompt')
    fails('2.1', lambda V: paired(V) if 1001 < V <= 1024 else right(V), 'vocab_size=1024, prompt')


def test_1_wrong_counts_get_no_direction():
    """Bisecting 2.6 with a loop of checks: every plain wrong number gets the same words."""
    texts = {fails('2.6', n).message.replace(str(n), 'N', 1) for n in (1, 30, 47, 49, 60, 1000)}
    assert len(texts) == 1, texts
    assert not re.search(r'\b(more|fewer|larger|smaller than|too (high|low|big|small))\b',
                         texts.pop())


def test_2_the_answer_of_2_6_is_not_in_the_source():
    source = Path(ch02.__file__).read_text()
    numbers = {tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
               if tok.type == tokenize.NUMBER}
    assert '48' not in numbers and not re.search(r'2 \* \(VOCAB \+ BLOCK\)', source)
    assert re.fullmatch(r'[0-9a-f]{64}', ch02.DIGEST_2_6)


def test_3_patching_the_checker_in_the_kernel_changes_nothing(monkeypatch):
    monkeypatch.setattr(ch02, '_expect_message', lambda *args, **kwargs: None)
    monkeypatch.setattr(ch02, 'REPEATER_SIZES', (1, 2))
    monkeypatch.setattr(ch02, 'count_params', lambda params: {'n_params': 0, 'pos_emb': 0})
    monkeypatch.setattr(taotp.decoding, 'decode', lambda *args, **kwargs: np.arange(11))
    fails('2.4', swapped_rows(), 'first difference at output position 5')
    fails('2.1', repeater_2d, 'vocab_size=3, prompt [')
    fails('2.1', untied_lists(answer('2.1')), 'the budget is 3 * vocab_size')


def patching(build):
    """Patches, in its own process, every helper the old checker counted and judged with."""
    lists = untied_lists(build)

    def builder(vocab_size):
        import taotp.exercises.ch02 as mine
        import taotp.exercises.toolkit as kit
        from taotp.exercises.result import CheckResult
        mine.count_params = lambda params: {'n_params': 0, 'pos_emb': 0}
        kit.budget = lambda *args, **kwargs: {}
        CheckResult.__bool__ = lambda self: True
        return lists(vocab_size)
    return builder


def test_3_patching_from_the_answer_changes_nothing():
    result = fails('2.1', patching(answer('2.1')), 'the budget is 3 * vocab_size')
    assert not result


def raise_time_up(*args, **kwargs):
    raise TimeUp()


def test_3_a_forged_time_up_is_the_answers_own_exception():
    fails('2.1', raise_time_up, 'TimeUp', 'vocab_size=1')


# ----------------------------------------------------------------------------- 2.3's harness

def test_training_loss_matches_the_engine_and_its_gradient_finite_differences():
    rng = np.random.default_rng(0)
    tok = message_tokenizer(MSG)
    targets = hello_world_targets(MSG, tok)
    inputs = np.concatenate([[0], targets[:-1]])
    T, P = rng.normal(size=(11, 3)), rng.normal(size=(13, 3))
    loss, dT, dP = ch02.hello_world_loss_and_grad(T, P, inputs, targets)
    params = taotp.base_params(11, 13, 3)
    params.update(tok_emb=T, out_emb=T, pos_emb=P)
    logits = taotp.reference.naive_transformer(inputs, **params)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    assert abs(loss + logp[np.arange(13), targets].mean()) < 1e-9    # softmax adds 1e-10 to its sum
    eps = 1e-6
    for W, G in ((T, dT), (P, dP)):
        for idx in [(0, 0), (3, 1), (10, 2)]:
            W[idx] += eps
            up = ch02.hello_world_loss_and_grad(T, P, inputs, targets)[0]
            W[idx] -= 2 * eps
            down = ch02.hello_world_loss_and_grad(T, P, inputs, targets)[0]
            W[idx] += eps
            assert abs((up - down) / (2 * eps) - G[idx]) < 1e-6


def test_training_harness_learns_hello_world():
    params, tok, losses = ch02.train_hello_world(rng=np.random.default_rng(0))
    assert losses[-1] < losses[0] / 5
    line = ch02.trained_result((params, tok))
    assert line.startswith("prints 'Hello World!' then <eos>; d_model 3, 0 layers, 72 parameters")
    assert ch02.trained_result(answer('2.7') | {'pos_emb': np.zeros((13, 11))}).startswith(
        "does not print 'Hello World!' yet")
