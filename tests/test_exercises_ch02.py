"""Chapter 2 checkers: what each one calls solved, and the answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 2.1 | `build(V)` for V = 1, 2, 3, 4, 11, 40, 64, 100, 257, 1000: 0 layers, an all-zero pos_emb, at most 3 V other parameters (counted on a float64 copy of the arrays as given, lists included), and every token is repeated (decided by one prompt per token: with no layers and no positions nothing else reaches the output), also over a windowed decode | tokens on a circle spaced for 64 (passed before: the sizes stopped at 40); an untied out_emb given as lists (6 V); a 2-D circle; a non-zero pos_emb; a zero layer |
| 2.2 | the repeater at the same sizes with at most V non-zeros (`guard.budget`), and Hello World printed (message tokenizer, or one giving every symbol its own id) with at most 11 + 13 = 24 non-zeros, counted on a float64 copy that is also what runs | a pos_emb whose memory is zero but whose reads hold 143 non-zeros (passed before); a tokenizer giving every symbol one id, so that "printing" is 2 2 2 ... (passed before); 550 extra non-zeros in list-valued weights (the issue's cheat; the core counts lists since the framework change); one-hot up to 64 dimensions only (passed before); the dense repeater; the book's Hello World |
| 2.3 | a trained (or any) program prints "Hello World!" then <eos> from <bos>; its size is reported; checker in taotp.exercises.training, tested in test_training_puzzles.py | untrained weights |
| 2.4 | pos_emb all zero (one table, on the copy that runs) and 'Hel Word!' then `<eos>` from `<bos>` | a pos_emb whose memory is zero but whose reads are the book's positions (passed before); the book's program; two output rows swapped |
| 2.5 | the same for 'Hello World!' | the same memory/reads cheat (passed before); the 2.4 program; the book's program |
| 2.6 | the number 48 (a plain int or float, no subclass), or a program printing Hello World under RMSNorm with at most 48 parameters (`guard.budget`); no failure message names 48 | an int subclass whose == always says yes (passed before); 72, 24, 538, 807 and others, each with a hint that does not give the answer (the program path said "gives 48" before); the book's 72-parameter program; the same as lists |
| 2.7 | every array entry of the copy that runs is an integer (layer-norm gamma and beta are not parameters, as in the book's count), and it prints Hello World with a tokenizer that spells it | memory rounded to integers, reads the book's floats (passed before); a tokenizer giving every symbol one id (passed before); the book's floats; two positions swapped |
| 2.8 | every array entry > 0 (gamma and beta excluded, as stated), and it prints Hello World | memory positive, reads the book's signed floats (passed before); a tokenizer giving every symbol one id (passed before); the book's program; zeros |

The contract every checker keeps (the reference passes, garbage is reported, loops
are stopped) is tested once in test_checker_contract.py; the reference answers come
from their one copy, the solutions notebook (``answer``).  The training harness of
2.3 is tested at the end.
"""
import time

import numpy as np
import pytest

import taotp
from solutions import answer
from taotp.exercises import ch02, check, registry
from taotp.exercises.registry import checker
from taotp.hello_world import ascii_tokenizer, hello_world_targets, message_tokenizer

MSG = 'Hello World!'
CHECKED = ['2.1', '2.2', '2.3', '2.4', '2.5', '2.6', '2.7', '2.8']


def book_hello(message=MSG):
    return taotp.build_hello_world_transformer(message)[0]


def _nan_hello():
    p = book_hello()
    p['pos_emb'][0, 0] = np.nan
    return p


class NeverArray:
    def __array__(self, *args, **kwargs):
        while True:
            time.sleep(0.01)


# garbage particular to Chapter 2's answers: broken programs and tokenizers
EXTRA_GARBAGE = {pid: {
    'params with a NaN': _nan_hello(),
    '(params with a NaN, tokenizer)': (_nan_hello(), {'<bos>': 0}),
    'a tokenizer with a text id': (book_hello(), {'<bos>': 'a', '<eos>': 1}),
    'a tok_emb that is a number': {'tok_emb': 1},
    'a builder with a 3-D tok_emb': lambda v: {**book_hello(), 'tok_emb': np.zeros((v, 3, 1))},
    'a pos_emb of two tables': {**book_hello(), 'pos_emb': [np.zeros((13, 3)), np.zeros((14, 3))]},
} for pid in CHECKED}


def budgeted(puzzle, seconds=0.5):
    """The puzzle's checker body under a short total budget (the real one is 30 s)."""
    return checker(puzzle, budget=seconds)(registry()[puzzle].checker.__wrapped__)


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


def untied_lists(vocab_size):         # works, but 6 V parameters, hidden in lists
    p = answer('2.1')(vocab_size)
    p['out_emb'] = (2 * p['tok_emb']).tolist()
    return p


def repeater_with_pos(vocab_size):
    p = answer('2.1')(vocab_size)
    p['pos_emb'] = np.ones_like(p['pos_emb'])
    return p


def with_zero_layer(vocab_size):
    p = answer('2.1')(vocab_size)
    p['layers'] = [taotp.base_layer(1, 3, 0, 1)]
    return p


# ----------------------------------------------------------------------------- 2.2

def masked_positions_hello():         # memory: zero pos_emb (11 non-zeros counted); reads: 154
    p = onehot_hello()
    noise = 1e-3 * np.random.default_rng(0).random(p['pos_emb'].shape)
    p['pos_emb'] = masked(np.zeros_like(p['pos_emb']), p['pos_emb'] + noise)
    return p


def list_valued_extras():             # the cheat: 550 non-zeros in list-valued weights
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
    '2.1 untied out_emb as lists': ('2.1', lambda: untied_lists, 'the budget is 3 * vocab_size'),
    '2.1 a 2-D circle': ('2.1', lambda: repeater_2d, 'vocab_size=3, prompt ['),
    '2.1 non-zero pos_emb': ('2.1', lambda: repeater_with_pos, 'pos_emb must be all zero'),
    '2.1 a zero layer': ('2.1', lambda: with_zero_layer, '1 layers; at most 0 allowed'),
    '2.2 masked positions': ('2.2', lambda: (answer('2.2')[0], masked_positions_hello()),
                             "printed '<bos><bos>"),
    '2.2 one id for every symbol': ('2.2', lambda: (answer('2.2')[0], degenerate()),
                                    'the same id 2'),
    '2.2 550 list-valued extras': ('2.2', lambda: (answer('2.2')[0], list_valued_extras()),
                                   '624 non-zero parameters; at most 24 allowed'),
    '2.2 one-hot up to 64 dimensions': ('2.2', lambda: (onehot_up_to_64, answer('2.2')[1]),
                                        'vocab_size=100, prompt ['),
    '2.2 the dense repeater': ('2.2', lambda: (answer('2.1'), answer('2.7')),
                               'vocab_size=1 is over the budget: 2 non-zero parameters; at most '
                               '1 allowed'),
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
    '2.6 an int that equals everything': ('2.6', lambda: AlwaysEqual(7), 'got AlwaysEqual'),
    '2.6 72': ('2.6', lambda: 72, 'layer-norm count'),
    '2.6 24': ('2.6', lambda: 24, 'only two symbols'),
    '2.6 538': ('2.6', lambda: 538, 'ASCII tokenizer'),
    '2.6 807': ('2.6', lambda: 807, 'ASCII tokenizer'),
    '2.6 47': ('2.6', lambda: 47, 'smallest d_model'),
    '2.6 the book\'s program': ('2.6', book_hello, 'but has 72 parameters (d_model 3)'),
    '2.6 the book\'s program as lists': ('2.6', rms_program_as_lists, 'but has 72 parameters'),
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
    result = check(puzzle, make())
    assert not result, label
    assert words in result.message, result.message


def test_no_failure_message_of_2_6_gives_the_answer():
    for wrong in (72, 24, 538, 807, 47, 49, 96, 0, -1, 47.5, book_hello()):
        result = check('2.6', wrong)
        assert not result and '48' not in result.message, (wrong, result.message)


def test_other_correct_forms_pass():
    assert check('2.4', (answer('2.4'), message_tokenizer('Hel Word!')))
    assert check('2.6', 48) and check('2.6', 48.0) and check('2.6', np.int64(48))
    assert check('2.7', (answer('2.7'), message_tokenizer(MSG)))
    p, tok = taotp.build_hello_world_transformer(MSG, 'ascii')     # <bos> and <eos> share id 0
    p['tok_emb'] = p['out_emb'] = p['tok_emb'] + 2
    p['pos_emb'] = p['pos_emb'] + 2e6
    assert check('2.8', (p, tok))


def test_wrong_symbol_is_named():
    p, _ = taotp.build_hello_world_transformer('Hello Wxrld!', 'ascii')
    result = check('2.7', (np.round(p['tok_emb']), ascii_tokenizer()))
    assert not result
    p, tok = taotp.build_hello_world_transformer('Hellx World!', 'ascii')
    p['tok_emb'] = p['out_emb'] = p['tok_emb'] + 2
    p['pos_emb'] = p['pos_emb'] + 2e6
    result = check('2.8', (p, tok))
    assert not result and "printed 'Hellx World!<bos>'" in result.message \
        and 'position 4' in result.message


@pytest.mark.parametrize('puzzle', CHECKED)
def test_arrays_that_never_convert_are_stopped_by_the_budget(puzzle):
    never = {**book_hello(), 'tok_emb': NeverArray()}
    value = (lambda v: never, never) if puzzle == '2.2' else \
        (lambda v: never) if puzzle == '2.1' else never
    start = time.perf_counter()
    result = budgeted(puzzle)(value)
    assert not result and 'budget' in result.message
    assert time.perf_counter() - start < 3


def test_options_are_refused():
    result = check('2.6', 48, per_size=1)
    assert not result and "unexpected keyword argument 'per_size'" in result.message


def test_kinds():
    table = registry()
    kinds = {k: table[k].kind for k in table if k.startswith('2.')}
    assert kinds == {'2.1': 'checked', '2.2': 'checked', '2.3': 'checked', '2.4': 'checked',
                     '2.5': 'checked', '2.6': 'checked', '2.7': 'checked', '2.8': 'checked'}
    assert sorted(k for k, kind in kinds.items() if kind == 'checked') == CHECKED


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
