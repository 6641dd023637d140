"""Chapter 2: Hello World on the Simpleformer and on the 0-layer transformer."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import taotp
from taotp.hello_world import (build_hello_world_simpleformer, decode_simpleformer,
                               hello_world_targets, message_tokenizer)


def run(message, tokenizer='message', N=1e6):
    params, tok = taotp.build_hello_world_transformer(message, tokenizer, N=N)
    out = taotp.decode(taotp.tokenize(['<bos>'], tok), params, eos=tok['<eos>'],
                       max_steps=len(message) + 1)
    return out, params, tok


def test_book_numbers():
    out, params, tok = run('Hello World!')
    assert taotp.detokenize(out[1:-1], tok) == 'Hello World!' and out[-1] == tok['<eos>']
    assert taotp.count_params(params)['n_params'] == 72             # book: 72
    assert taotp.count_non0_params(params)['n_params'] == 71        # <bos> (id 0) has one 0 entry
    assert taotp.config(params)['block_size'] == 13
    out, params, tok = run('Hello World!', 'ascii')
    assert taotp.detokenize(out[1:-1], tok) == 'Hello World!'
    assert taotp.count_params(params)['n_params'] == 807            # book: 807
    assert taotp.count_non0_params(params)['n_params'] == 805       # '\0' row, and its pos row


def test_message_tokenizer_has_a_fixed_documented_order():
    tok = message_tokenizer('Hello World!')
    assert list(tok) == ['<bos>', '<eos>', 'H', 'e', 'l', 'o', ' ', 'W', 'r', 'd', '!']
    assert list(tok.values()) == list(range(11))
    assert taotp.tokenize('lol', tok).tolist() == [4, 5, 4]
    assert taotp.detokenize([0, 2, 3, 1], tok) == '<bos>He<eos>'


def test_ascii_tokenizer():
    tok = taotp.ascii_tokenizer()
    assert tok['<bos>'] == tok['<eos>'] == 0 and tok['A'] == 65 and len(set(tok.values())) == 256


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=127), min_size=1, max_size=200),
       st.sampled_from(['message', 'ascii']))
def test_any_ascii_message(message, tokenizer):
    out, params, tok = run(message, tokenizer)
    assert taotp.detokenize(out[1:-1], tok) == message
    assert out[-1] == tok['<eos>'] and len(out) == len(message) + 2
    vocab = len(set(message)) + 2 if tokenizer == 'message' else 256
    assert taotp.count_params(params)['n_params'] == 3 * (vocab + len(message) + 1)


def test_seeded_random_messages_lengths_1_to_200(rng):
    """Every length 1..200, characters chr(1)..chr(127), both tokenizers (repeats are common)."""
    for length in range(1, 201):
        message = ''.join(chr(c) for c in rng.integers(1, 128, size=length))
        for tokenizer in ('message', 'ascii'):
            out, _, tok = run(message, tokenizer)
            assert taotp.detokenize(out[1:-1], tok) == message, (length, tokenizer)


def test_repeated_single_character():
    out, params, tok = run('a' * 200)
    assert taotp.detokenize(out[1:-1], tok) == 'a' * 200
    assert taotp.count_params(params)['n_params'] == 3 * (3 + 201)


@pytest.mark.parametrize('message', ['Hello World!', 'aaaa', 'x', 'the quick brown fox'])
def test_simpleformer(message):
    pos_emb, out_emb, tok = build_hello_world_simpleformer(message)
    assert pos_emb.shape[1] == 2
    out = decode_simpleformer(taotp.tokenize(['<bos>'], tok), pos_emb, out_emb, eos=tok['<eos>'])
    assert taotp.detokenize(out[1:-1], tok) == message and out[-1] == tok['<eos>']


def test_simpleformer_stops_without_eos():
    pos_emb, out_emb, tok = build_hello_world_simpleformer('abc')
    out = decode_simpleformer([0], pos_emb, out_emb, eos=99)   # eos never produced
    assert len(out) == len(pos_emb) + 1


def test_hardening_margin():
    """N = 1e6 is far more than needed: 5 suffices for 11 symbols, a few hundred for 256."""
    message = 'Hello World!'
    for tokenizer, works, fails in (('message', (5.0, 1e6, 1e12), (1.0, 2.0)),
                                    ('ascii', (500.0, 1e6, 1e12), (1.0, 10.0))):
        for N in works:
            out, _, tok = run(message, tokenizer, N=N)
            assert taotp.detokenize(out[1:-1], tok) == message, (tokenizer, N)
        for N in fails:                       # the input token pulls the output off target
            out, _, tok = run(message, tokenizer, N=N)
            assert taotp.detokenize(out[1:-1], tok) != message, (tokenizer, N)


def test_layer_norm_collapses_2d():
    x = np.random.default_rng(0).normal(size=(100, 2))
    y = taotp.layer_norm(x)
    assert set(map(tuple, np.round(y, 6))) <= {(1.0, -1.0), (-1.0, 1.0)}


def test_targets():
    tok = message_tokenizer('ab')
    assert hello_world_targets('ab', tok).tolist() == [2, 3, 1]


@pytest.mark.parametrize('args, error, match', [
    (('',), ValueError, r"build_hello_world_transformer|make_tokenizer: message must have at least 1 character; got ''"),
    ((5,), TypeError, r'make_tokenizer: message must be a str; got int'),
    (('hi', 'utf8'), ValueError, r"make_tokenizer: tokenizer must be 'message' or 'ascii'; got 'utf8'"),
    (('h\0i', 'ascii'), ValueError, r"make_tokenizer: the ascii tokenizer needs characters chr\(1\)..chr\(255\)"),
    (('hé€', 'ascii'), ValueError, r"make_tokenizer: the ascii tokenizer needs characters .*got '€'"),
])
def test_errors(args, error, match):
    with pytest.raises(error, match=match):
        taotp.build_hello_world_transformer(*args)


def test_error_bad_N_and_symbols():
    with pytest.raises(ValueError, match=r'build_hello_world_transformer: N must be > 0; got 0'):
        taotp.build_hello_world_transformer('hi', N=0)
    tok = message_tokenizer('hi')
    with pytest.raises(ValueError, match=r"tokenize: every symbol must be in the tokenizer; got 'z'"):
        taotp.tokenize('hiz', tok)
    with pytest.raises(ValueError, match=r'detokenize: id 7 is not in the tokenizer'):
        taotp.detokenize([7], tok)
