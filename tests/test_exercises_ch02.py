"""Chapter 2 checkers: references pass, plausible wrong answers fail by name, garbage is reported."""

import numpy as np
import pytest

import taotp
from taotp.exercises import ch02, check, registry
from submissions import loops, raises

MSG = 'Hello World!'


def repeater(vocab_size):
    p = taotp.base_params(vocab_size, 4, 3)
    p['tok_emb'] = p['out_emb'] = taotp.pos_enc_3d_array(vocab_size)
    return p


def sparse_repeater(vocab_size):
    p = taotp.base_params(vocab_size, 4, vocab_size)
    p['tok_emb'] = p['out_emb'] = np.eye(vocab_size)
    return p


def onehot_hello(scale=1000.0):
    tok = taotp.message_tokenizer(MSG)
    targets = taotp.hello_world_targets(MSG, tok)
    p = taotp.base_params(len(tok), len(targets), len(tok))
    p['tok_emb'] = p['out_emb'] = np.eye(len(tok))
    p['pos_emb'] = scale * np.eye(len(tok))[targets]
    return p


def untied_no_pos(message):
    tok = taotp.message_tokenizer(message)
    p = taotp.base_params(len(tok), len(message) + 1, 3)
    p['tok_emb'] = taotp.pos_enc_3d_array(len(tok))
    for a, b in zip(['<bos>'] + list(message), list(message) + ['<eos>']):
        p['out_emb'][tok[b]] = p['tok_emb'][tok[a]]
    return p


def hello_without_positions(message=MSG, N=1e6):
    """One layer: uniform attention averages a <bos> flag; MLP spikes map it to the next symbol."""
    tok = taotp.message_tokenizer(message)
    targets = taotp.hello_world_targets(message, tok)
    V, B, d = len(tok), len(targets), 6
    p = taotp.base_params(V, B, d)
    p['tok_emb'][:, :3] = taotp.pos_enc_3d_array(V)
    flag = np.where(np.arange(V) == tok['<bos>'], 1.0, -1.0)
    p['tok_emb'][:, 3], p['tok_emb'][:, 4] = flag, -flag
    p['out_emb'] = p['tok_emb']
    layer = taotp.base_layer(1, d, 3 * B, 1)
    layer['V'][0, 3, 0] = layer['P'][0, 5, 0] = 1.0
    p['layers'] = [layer]
    fed = np.concatenate([[tok['<bos>']], targets[:-1]])
    f = taotp.layer_norm(taotp.trace(fed, p).resid_mid[0])[:, 5]
    k = 1.0 / np.min(np.diff(np.sort(f)))
    for i in range(B):
        cols = slice(3 * i, 3 * i + 3)
        layer['M1'][5, cols] = k
        layer['b1'][cols] = -k * f[i] + np.array([1.0, 0.0, -1.0])
        layer['M2'][cols, :3] = N * np.outer([1.0, -2.0, 1.0], p['tok_emb'][targets[i], :3])
    return p, tok


def rms_hello():
    tok = taotp.message_tokenizer(MSG)
    targets = taotp.hello_world_targets(MSG, tok)
    a = 2 * np.pi * np.arange(len(tok)) / len(tok)
    p = taotp.base_params(len(tok), len(targets), 2)
    p['tok_emb'] = p['out_emb'] = np.sqrt(2) * np.stack([np.cos(a), np.sin(a)], 1)
    p['pos_emb'] = 1e6 * p['tok_emb'][targets]
    return p


def positive_hello():
    p, _ = taotp.build_hello_world_transformer(MSG)
    p['tok_emb'] = p['out_emb'] = p['tok_emb'] + 2
    p['pos_emb'] = p['pos_emb'] + 2e6
    return p


REFERENCES = {
    '2.1': repeater,
    '2.2': (sparse_repeater, onehot_hello()),
    '2.4': untied_no_pos('Hel Word!'),
    '2.5': hello_without_positions(),
    '2.6': 48,
    '2.7': onehot_hello(),
    '2.8': positive_hello(),
}


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
def test_references_pass(puzzle):
    result = check(puzzle, REFERENCES[puzzle])
    assert result, result.message


def test_other_correct_forms_pass():
    assert check('2.4', (untied_no_pos('Hel Word!'), taotp.message_tokenizer('Hel Word!')))
    assert check('2.5', hello_without_positions('Hello World!'))
    assert check('2.6', rms_hello())
    

def repeater_2d(vocab_size):          # layer norm collapses R^2: only 2 outputs possible
    a = 2 * np.pi * np.arange(vocab_size) / vocab_size
    p = taotp.base_params(vocab_size, 4, 2)
    p['tok_emb'] = p['out_emb'] = np.stack([np.cos(a), np.sin(a)], 1)
    return p


def repeater_untied(vocab_size):      # works, but 6 V parameters
    p = repeater(vocab_size)
    p['out_emb'] = p['tok_emb'] * 2
    return p


def repeater_with_pos(vocab_size):
    p = repeater(vocab_size)
    p['pos_emb'] = np.ones_like(p['pos_emb'])
    return p


def swapped_rows():                  # two output rows exchanged: 'o' and 'r' trade places
    p = untied_no_pos('Hel Word!')
    p['out_emb'][[7, 8]] = p['out_emb'][[8, 7]]
    return p


def book_hello():
    return taotp.build_hello_world_transformer(MSG)[0]


def swapped_positions():             # integer, but positions 3 and 4 exchanged
    p = onehot_hello()
    p['pos_emb'][[3, 4]] = p['pos_emb'][[4, 3]]
    return p


WRONG = [
    ('2.1', repeater_2d, 'vocab_size=3, prompt ['),
    ('2.1', repeater_untied, 'the budget is 3 * vocab_size = 9'),
    ('2.1', repeater_with_pos, 'pos_emb must be all zero'),
    ('2.2', (repeater, onehot_hello()), 'repeater, vocab_size=3: 8 non-zero parameters; the budget is vocab_size = 3'),
    ('2.2', (sparse_repeater, book_hello()), 'non-zero parameters; the budget is vocab_size + block_size = 11 + 13 = 24'),
    ('2.4', book_hello(), 'pos_emb must be all zero'),
    ('2.4', swapped_rows(), "printed 'Hel W"),
    ('2.4', swapped_rows(), "expected 'Hel Word!' then <eos> (first difference at output position 5)"),
    ('2.5', untied_no_pos('Hel Word!'), "printed 'Helo Wrd!<eos>'; expected 'Hello World!' then <eos>"),
    ('2.5', book_hello(), 'pos_emb must be all zero'),
    ('2.6', 72, '72 is the layer-norm count'),
    ('2.6', 538, 'ASCII tokenizer'),
    ('2.6', book_hello(), 'under RMSNorm but has 72 parameters'),
    ('2.7', book_hello(), 'tok_emb[0, 0] = 1.22'),
    ('2.7', swapped_positions(), 'first difference at output position 3'),
    ('2.8', book_hello(), 'is not > 0'),
    ('2.8', onehot_hello(), 'is not > 0 (zeros count as not positive)'),
]


@pytest.mark.parametrize('puzzle, answer, message', WRONG, ids=[f'{p}-{i}' for i, (p, _, _) in enumerate(WRONG)])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, answer, message):
    result = check(puzzle, answer)
    assert not result
    assert message in result.message, result.message


def test_wrong_symbol_is_named():
    p, _ = taotp.build_hello_world_transformer('Hello Wxrld!', 'ascii')
    result = check('2.7', (np.round(p['tok_emb']), taotp.ascii_tokenizer()))
    assert not result
    p, tok = taotp.build_hello_world_transformer('Hellx World!', 'ascii')
    p['tok_emb'] = p['out_emb'] = p['tok_emb'] + 2
    p['pos_emb'] = p['pos_emb'] + 2e6
    result = check('2.8', (p, tok))
    assert not result and "printed 'Hellx World!<bos>'" in result.message and 'position 4' in result.message


NAN = onehot_hello()
NAN['pos_emb'][0, 0] = np.nan
GARBAGE = [None, 'params', 42, 3.5, raises, lambda *a: None, lambda *a: 'x', (None, None),
           {'tok_emb': 1}, NAN, (NAN, {'<bos>': 0}), (onehot_hello(), {'<bos>': 'a', '<eos>': 1}),
           lambda v: {**repeater(v), 'tok_emb': np.zeros((v, 3, 1))}]


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
@pytest.mark.parametrize('answer', GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_is_reported_not_raised(puzzle, answer):
    result = check(puzzle, answer)
    assert not result and result.message


def test_endless_loops_hit_the_time_limit(short_time_limit):
    result = check('2.1', loops)
    assert not result and 'took longer than 0.5 s' in result.message


def test_kinds():
    table = registry()
    kinds = {k: table[k].kind for k in table if k.startswith('2.')}
    assert kinds == {'2.1': 'checked', '2.2': 'checked', '2.3': 'train', '2.4': 'checked',
                     '2.5': 'checked', '2.6': 'checked', '2.7': 'checked', '2.8': 'checked'}


def test_training_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    tok = taotp.message_tokenizer(MSG)
    targets = taotp.hello_world_targets(MSG, tok)
    inputs = np.concatenate([[0], targets[:-1]])
    T, P = rng.normal(size=(11, 3)), rng.normal(size=(13, 3))
    loss, dT, dP = ch02.hello_world_loss_and_grad(T, P, inputs, targets)
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
    assert ch02.trained_result(onehot_hello() | {'pos_emb': np.zeros((13, 11))}).startswith(
        "does not print 'Hello World!' yet")
