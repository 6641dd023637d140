"""Chapter 1 checkers: the package's reference passes, plausible wrong answers fail
with a message naming the input, and garbage is reported instead of raised."""

import numpy as np
import pytest

import taotp
from taotp.exercises import ch01, check
from taotp.exercises.ch01 import rotation_fixing_ones
from submissions import loops, raises


def cached(tokens, params, max_steps, eos):
    return taotp.decode(tokens, params, max_steps, eos, cache=True)


def at_transformer(tokens, **params):
    return taotp.transformer(tokens, **params)


def sampler(tokens, params, max_steps, temperature, rng):
    return taotp.decode(tokens, params, max_steps, temperature=temperature, rng=rng)


def window(tokens, params, n_steps):
    return taotp.decode(tokens, params, n_steps, window=True)


REFERENCES = {'1.3': cached, '1.4': at_transformer, '1.6': sampler, '1.7': window,
              '1.8': taotp.scramble_transformer}


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
def test_reference_passes(puzzle, capsys):
    result = check(puzzle, REFERENCES[puzzle])
    assert result, result.message
    assert capsys.readouterr().out.startswith(f'PASS {puzzle} · ')


def stale_positions(tokens, params, max_steps, eos):
    """A cache that forgets where it is: every new token gets position 0."""
    out = list(tokens)
    for _ in range(max_steps):
        logits = taotp.transformer(np.array(out), **params)
        out.append(int(np.argmax(logits[0 if len(out) > 3 else -1])))
        if out[-1] == eos:
            break
    return out


def no_scale(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    """@-style rewrite that drops the 1/sqrt(d_head) scaling."""
    x = tok_emb[tokens] + pos_emb[:len(tokens)]
    mask = np.tril(np.ones((len(x), len(x)), bool))
    for L in layers:
        h = taotp.layer_norm(x, **L['ln1'])
        for q, k, v, p in zip(L['Q'], L['K'], L['V'], L['P']):
            w = taotp.softmax(np.where(mask, (h @ q) @ (h @ k).T, -np.inf))
            x = x + (w @ (h @ v)) @ p.T
        x = x + np.maximum(taotp.layer_norm(x, **L['ln2']) @ L['M1'] + L['b1'], 0) @ L['M2'] + L['b2']
    return taotp.layer_norm(x, **lnf) @ out_emb.T


def no_temperature(tokens, params, max_steps, temperature, rng):
    return taotp.decode(tokens, params, max_steps, temperature=1.0, rng=rng)


def global_rng(tokens, params, max_steps, temperature, rng):
    return taotp.decode(tokens, params, max_steps, temperature=temperature,
                        rng=np.random.default_rng())


def window_too_short(tokens, params, n_steps):
    out = list(tokens)
    block = len(params['pos_emb'])
    for _ in range(n_steps):
        seq = np.array(out[-(block - 1):])
        out.append(int(np.argmax(taotp.transformer(seq, **params)[-1])))
    return out


def scramble_embeddings_only(tok_emb, pos_emb, out_emb, layers, lnf, M):
    return tok_emb @ M, pos_emb @ M, out_emb @ M, layers, lnf


WRONG = [
    ('1.3', stale_positions, 'expected'),
    ('1.3', lambda t, p, m, e: taotp.decode(t, p, m, e, cache=False), 'naive loop'),
    ('1.4', no_scale, 'logits differ'),
    ('1.6', no_temperature, 'at temperature'),
    ('1.6', global_rng, 'draw from the rng you are given'),
    ('1.7', window_too_short, 'first difference at position'),
    ('1.8', scramble_embeddings_only, 'tokens ['),
]


@pytest.mark.parametrize('puzzle, answer, message', WRONG,
                         ids=[f'{p}-{a.__name__}' for p, a, _ in WRONG])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, answer, message):
    result = check(puzzle, answer)
    assert not result
    assert message in result.message


GARBAGE = [None, 'decode', 42, raises, lambda *a, **k: None, lambda *a, **k: 'tokens',
           lambda *a, **k: np.full((3, 3), np.nan), lambda *a, **k: [[1, 2], [3]]]


@pytest.mark.parametrize('puzzle', sorted(REFERENCES))
@pytest.mark.parametrize('answer', GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_is_reported_not_raised(puzzle, answer):
    result = check(puzzle, answer)
    assert not result and result.message


def test_endless_loops_hit_the_time_limit(short_time_limit):
    result = check('1.7', loops)
    assert not result and 'took longer than 0.5 s' in result.message


def test_exception_message_names_the_input_and_hides_traceback():
    result = check('1.3', raises)
    assert 'raised RuntimeError: boom on prompt [' in result.message
    assert 'Traceback' not in result.message
    assert 'Traceback' in check('1.3', raises, verbose=True).message


def test_unknown_and_reflection_puzzles():
    assert 'there is no puzzle' in check('1.99', None).message
    assert 'reflect puzzle with no checker' in check('1.1', None).message


def test_scramble_transformer_refuses_matrices_that_break_layer_norm(rng):
    params = taotp.random_params(rng, d_model=4)
    args = [params[k] for k in ('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf')]
    with pytest.raises(ValueError, match='must be an orthonormal 4x4 matrix'):
        taotp.scramble_transformer(*args, 2 * np.eye(4))
    reflection = np.eye(4)
    reflection[0, 0] = -1  # orthonormal, but moves the all-ones direction
    with pytest.raises(ValueError, match=r'must map \(1, ..., 1\) to itself'):
        taotp.scramble_transformer(*args, reflection)


def test_rotation_fixes_the_all_ones_direction(rng):
    M = rotation_fixing_ones(6, rng)
    np.testing.assert_allclose(M @ M.T, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(np.ones(6) @ M, np.ones(6), atol=1e-12)


def test_registry_lists_every_chapter_one_puzzle():
    ids = [p.id for p in ch01.PUZZLES]
    assert ids == [f'1.{i}' for i in range(1, 11)]
    assert {p.id for p in ch01.PUZZLES if p.kind == 'checked'} == set(REFERENCES)
