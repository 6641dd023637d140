"""Chapter 2: Hello World on the Simpleformer and on the 0-layer transformer."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import taotp
from taotp.hello_world import (build_hello_world_simpleformer, decode_simpleformer, detokenize,
                               hello_world_targets, message_tokenizer, simpleformer, tokenize)
from taotp.programs import CATALOGUE
from taotp.reference import naive_transformer


def run(message, tokenizer='message', harden=taotp.hello_world.HARDEN):
    params, tok = taotp.build_hello_world_transformer(message, tokenizer, harden=harden)
    out = taotp.decode(tokenize(['<bos>'], tok), params, eos=tok['<eos>'],
                       max_steps=len(message) + 1)
    return out, params, tok


@pytest.mark.parametrize('tokenizer, non0', [('message', 71), ('ascii', 805)])
def test_book_counts(tokenizer, non0):
    out, params, tok = run('Hello World!', tokenizer)
    assert detokenize(out[1:-1], tok) == 'Hello World!' and out[-1] == tok['<eos>']
    assert taotp.count_params(params)['n_params'] == \
        CATALOGUE[f'hello-world-{tokenizer}'].source_total
    # one exact zero in the <bos> row (the symbol at angle 0); with 'ascii' that symbol is
    # also <eos>, which is printed once, so its pos_emb row has the zero too
    assert taotp.count_non0_params(params)['n_params'] == non0
    assert taotp.config(params)['block_size'] == 13


def test_message_tokenizer_has_a_fixed_documented_order():
    tok = message_tokenizer('Hello World!')
    assert list(tok) == ['<bos>', '<eos>', 'H', 'e', 'l', 'o', ' ', 'W', 'r', 'd', '!']
    assert list(tok.values()) == list(range(11))
    assert tokenize('lol', tok).tolist() == [4, 5, 4]
    assert detokenize([0, 2, 3, 1], tok) == '<bos>He<eos>'


def test_ascii_tokenizer():
    tok = taotp.hello_world.ascii_tokenizer()
    assert tok['<bos>'] == tok['<eos>'] == 0 and tok['A'] == 65 and len(set(tok.values())) == 256


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=127), min_size=1, max_size=200),
       st.sampled_from(['message', 'ascii']))
def test_any_ascii_message(message, tokenizer):
    out, params, tok = run(message, tokenizer)
    assert detokenize(out[1:-1], tok) == message
    assert out[-1] == tok['<eos>'] and len(out) == len(message) + 2
    vocab = len(set(message)) + 2 if tokenizer == 'message' else 256
    assert taotp.count_params(params)['n_params'] == 3 * (vocab + len(message) + 1)


def test_seeded_random_messages_lengths_1_to_200(rng):
    """Every length 1..200, characters chr(1)..chr(127), both tokenizers (repeats are common).

    A 0-layer program predicts every position from that position alone, so one
    teacher-forced pass over <bos> + message checks what greedy decoding prints.
    """
    for length in range(1, 201):
        message = ''.join(chr(c) for c in rng.integers(1, 128, size=length))
        for tokenizer in ('message', 'ascii'):
            params, tok = taotp.build_hello_world_transformer(message, tokenizer)
            row = tokenize(['<bos>'] + list(message) + ['<eos>'], tok)[None]
            got = taotp.teacher_forced_argmax(row, params, start=1)
            assert np.array_equal(got[0], hello_world_targets(message, tok)), (length, tokenizer)


def test_repeated_single_character():
    out, params, tok = run('a' * 200)
    assert detokenize(out[1:-1], tok) == 'a' * 200
    assert taotp.count_params(params)['n_params'] == 3 * (3 + 201)


@pytest.mark.parametrize('message', ['Hello World!', 'aaaa', 'x', 'the quick brown fox'])
def test_simpleformer_prints_the_message_in_two_dimensions(message):
    params, tok = build_hello_world_simpleformer(message)
    assert taotp.config(params)['d_model'] == 2 and not np.any(params['tok_emb'])
    out = taotp.decode(tokenize(['<bos>'], tok), params, eos=tok['<eos>'], norm='none')
    assert detokenize(out[1:-1], tok) == message and out[-1] == tok['<eos>']
    # the book's two functions give the same tokens from the two tables
    book = decode_simpleformer([tok['<bos>']], params['pos_emb'], params['out_emb'],
                               eos=tok['<eos>'])
    assert np.array_equal(book, out)


def test_simpleformer_logits_are_position_times_output_embedding():
    params, tok = build_hello_world_simpleformer('Hello World!')
    tokens = np.array([0, 5, 3, 3])        # ignored: only positions matter
    want = params['pos_emb'][:4] @ params['out_emb'].T
    got = simpleformer(tokens, params['pos_emb'], params['out_emb'])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(naive_transformer(tokens, **params, norm='none'), want,
                               rtol=0, atol=1e-12)


def test_simpleformer_stops_without_eos():
    params, _ = build_hello_world_simpleformer('abc')
    out = decode_simpleformer([0], params['pos_emb'], params['out_emb'], eos=99)   # never printed
    assert len(out) == len(params['pos_emb']) + 1


def test_hardening_margin():
    """harden = 1e6 (the book's N) is far more than needed: 5 works for 11 symbols, 500 for 256."""
    message = 'Hello World!'
    for tokenizer, works, fails in (('message', (5.0, 1e6, 1e12), (1.0, 2.0)),
                                    ('ascii', (500.0, 1e6, 1e12), (1.0, 10.0))):
        for harden in works:
            out, _, tok = run(message, tokenizer, harden=harden)
            assert detokenize(out[1:-1], tok) == message, (tokenizer, harden)
        for harden in fails:                  # the input token pulls the output off target
            out, _, tok = run(message, tokenizer, harden=harden)
            assert detokenize(out[1:-1], tok) != message, (tokenizer, harden)


def test_layer_norm_collapses_2d():
    x = np.random.default_rng(0).normal(size=(100, 2))
    y = taotp.layer_norm(x)
    assert set(map(tuple, np.round(y, 6))) <= {(1.0, -1.0), (-1.0, 1.0)}


def test_targets():
    tok = message_tokenizer('ab')
    assert hello_world_targets('ab', tok).tolist() == [2, 3, 1]


@pytest.mark.parametrize('args, error, match', [
    (('',), ValueError,
     r"build_hello_world_transformer: message must have at least 1 character; got ''"),
    ((5,), TypeError, r'build_hello_world_transformer: message must be a str; got int'),
    (('hi', 'utf8'), ValueError, r"make_tokenizer: tokenizer must be 'message' or 'ascii'; got 'utf8'"),
    (('h\0i', 'ascii'), ValueError, r"make_tokenizer: the ascii tokenizer needs characters chr\(1\)..chr\(255\)"),
    (('hé€', 'ascii'), ValueError, r"make_tokenizer: the ascii tokenizer needs characters .*got '€'"),
    (('hi', 'message', 0), ValueError, r'build_hello_world_transformer: harden must be a number > 0; got 0'),
    (('hi', 'message', '1e6'), ValueError, r"harden must be a number > 0; got '1e6'"),
])
def test_errors(args, error, match):
    with pytest.raises(error, match=match):
        taotp.build_hello_world_transformer(*args)


def test_error_unknown_symbols_and_ids():
    tok = message_tokenizer('hi')
    with pytest.raises(ValueError, match=r"tokenize: every symbol must be in the tokenizer; got 'z'"):
        tokenize('hiz', tok)
    with pytest.raises(ValueError, match=r'detokenize: id 7 is not in the tokenizer'):
        detokenize([7], tok)
    with pytest.raises(ValueError, match=r"message_tokenizer: message must have at least 1 character"):
        message_tokenizer('')
