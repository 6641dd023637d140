"""Chapter 2 checkers: plausible wrong answers fail by name; the training harness of 2.3.

The reference solutions (read from solutions/02_hello_world.py), the shared garbage
and endless loops are covered once for every chapter by tests/test_checker_contract.py.
"""

import numpy as np
import pytest

import taotp
from solutions import answer
from taotp.exercises import ch02, check, registry
from taotp.hello_world import ascii_tokenizer, hello_world_targets, message_tokenizer

MSG = 'Hello World!'
CHECKED = ['2.1', '2.2', '2.4', '2.5', '2.6', '2.7', '2.8']


def book_hello():
    return taotp.build_hello_world_transformer(MSG)[0]


def _nan_hello():
    p = book_hello()
    p['pos_emb'][0, 0] = np.nan
    return p


# garbage particular to Chapter 2's answers: broken programs and tokenizers
EXTRA_GARBAGE = {pid: {
    'params with a NaN': _nan_hello(),
    '(params with a NaN, tokenizer)': (_nan_hello(), {'<bos>': 0}),
    'a tokenizer with a text id': (book_hello(), {'<bos>': 'a', '<eos>': 1}),
    'a tok_emb that is a number': {'tok_emb': 1},
    'a builder with a 3-D tok_emb': lambda v: {**book_hello(), 'tok_emb': np.zeros((v, 3, 1))},
} for pid in CHECKED}


def test_other_correct_forms_pass():
    assert check('2.4', (answer('2.4'), message_tokenizer('Hel Word!')))
    assert check('2.6', 48)                      # the number, besides the program
    assert check('2.7', (answer('2.7'), message_tokenizer(MSG)))

def repeater_2d(vocab_size):          # layer norm collapses R^2: only 2 outputs possible
    a = 2 * np.pi * np.arange(vocab_size) / vocab_size
    p = taotp.base_params(vocab_size, 4, 2)
    p['tok_emb'] = p['out_emb'] = np.stack([np.cos(a), np.sin(a)], 1)
    return p


def repeater_untied(vocab_size):      # works, but 6 V parameters
    p = answer('2.1')(vocab_size)
    p['out_emb'] = p['tok_emb'] * 2
    return p


def repeater_with_pos(vocab_size):
    p = answer('2.1')(vocab_size)
    p['pos_emb'] = np.ones_like(p['pos_emb'])
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


# (puzzle, a function making the wrong answer, a part of the expected message); the
# answers are made when the test runs, so collecting the tests runs no solution notebook
WRONG = [
    ('2.1', lambda: repeater_2d, 'vocab_size=3, prompt ['),
    ('2.1', lambda: repeater_untied, 'the budget is 3 * vocab_size = 9'),
    ('2.1', lambda: repeater_with_pos, 'pos_emb must be all zero'),
    ('2.2', lambda: (answer('2.1'), answer('2.7')),
     'repeater, vocab_size=3: 8 non-zero parameters; the budget is vocab_size = 3'),
    ('2.2', lambda: (answer('2.2')[0], book_hello()),
     'non-zero parameters; the budget is vocab_size + block_size = 11 + 13 = 24'),
    ('2.4', book_hello, 'pos_emb must be all zero'),
    ('2.4', swapped_rows, "printed 'Hel W"),
    ('2.4', swapped_rows, "expected 'Hel Word!' then <eos> (first difference at output position 5)"),
    ('2.5', lambda: answer('2.4'),
     "printed 'Helo Wrd!<eos>'; expected 'Hello World!' then <eos>"),
    ('2.5', book_hello, 'pos_emb must be all zero'),
    ('2.6', lambda: 72, '72 is the layer-norm count'),
    ('2.6', lambda: 538, 'ASCII tokenizer'),
    ('2.6', book_hello, 'under RMSNorm but has 72 parameters'),
    ('2.7', book_hello, 'tok_emb[0, 0] = 1.22'),
    ('2.7', swapped_positions, 'first difference at output position 3'),
    ('2.8', book_hello, 'is not > 0'),
    ('2.8', lambda: answer('2.7'), 'is not > 0 (zeros count as not positive)'),
]


@pytest.mark.parametrize('puzzle, make, message', WRONG,
                         ids=[f'{p}-{i}' for i, (p, _, _) in enumerate(WRONG)])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, make, message):
    result = check(puzzle, make())
    assert not result
    assert message in result.message, result.message


def test_wrong_symbol_is_named():
    p, _ = taotp.build_hello_world_transformer('Hello Wxrld!', 'ascii')
    result = check('2.7', (np.round(p['tok_emb']), ascii_tokenizer()))
    assert not result
    p, tok = taotp.build_hello_world_transformer('Hellx World!', 'ascii')
    p['tok_emb'] = p['out_emb'] = p['tok_emb'] + 2
    p['pos_emb'] = p['pos_emb'] + 2e6
    result = check('2.8', (p, tok))
    assert not result and "printed 'Hellx World!<bos>'" in result.message and 'position 4' in result.message


def test_kinds():
    table = registry()
    kinds = {k: table[k].kind for k in table if k.startswith('2.')}
    assert kinds == {'2.1': 'checked', '2.2': 'checked', '2.3': 'train', '2.4': 'checked',
                     '2.5': 'checked', '2.6': 'checked', '2.7': 'checked', '2.8': 'checked'}
    assert sorted(k for k, kind in kinds.items() if kind == 'checked') == CHECKED


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
