"""Chapter 1 checkers: plausible wrong answers fail with a message naming the input.

The reference solutions (read from solutions/01_transformer.py), the shared garbage
and endless loops are covered once for every chapter by tests/test_checker_contract.py.
"""

import numpy as np
import pytest

import taotp
from solutions import answer
from submissions import raises
from taotp.exercises import ch01, check
from taotp.exercises.ch01 import rotation_fixing_ones

CHECKED = {'1.3', '1.4', '1.6', '1.7', '1.8'}

# garbage particular to Chapter 1's answers: token lists and logits of the wrong kind
EXTRA_GARBAGE = {pid: {'a function returning a ragged list': lambda *a, **k: [[1, 2], [3]],
                       'a function returning a NaN matrix': lambda *a, **k: np.full((3, 3), np.nan)}
                 for pid in sorted(CHECKED)}


def stale_positions(tokens, params, max_steps, eos):
    """A cache that forgets where it is: from the fourth token on, reads position 0's logits."""
    out = list(tokens)
    for _ in range(max_steps):
        logits = taotp.transformer(np.array(out), **params)
        out.append(int(np.argmax(logits[0 if len(out) > 3 else -1])))
        if out[-1] == eos:
            break
    return out


def no_scale(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    """Forgets the 1/sqrt(d_head) of the scores (the same as scaling every Q by sqrt(d_head))."""
    unscaled = [{**layer, 'Q': layer['Q'] * layer['Q'].shape[-1] ** 0.5} for layer in layers]
    return taotp.transformer(tokens, tok_emb, pos_emb, out_emb, unscaled, lnf)


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


@pytest.mark.parametrize('puzzle, wrong, message', WRONG,
                         ids=[f'{p}-{a.__name__}' for p, a, _ in WRONG])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, wrong, message):
    result = check(puzzle, wrong)
    assert not result
    assert message in result.message, result.message


def test_exception_message_names_the_input_and_hides_traceback():
    result = check('1.3', raises)
    assert 'raised RuntimeError: boom on prompt [' in result.message
    assert 'Traceback' not in result.message
    assert 'Traceback' in check('1.3', raises, verbose=True).message


def test_reflection_puzzles_have_no_checker():
    assert 'reflect puzzle with no checker' in check('1.1', None).message


def test_scramble_transformer_refuses_matrices_that_break_layer_norm(rng):
    scramble_transformer = answer('1.8')
    params = taotp.random_params(rng, d_model=4)
    args = [params[k] for k in ('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf')]
    with pytest.raises(ValueError, match='must be an orthonormal 4x4 matrix'):
        scramble_transformer(*args, 2 * np.eye(4))
    reflection = np.eye(4)
    reflection[0, 0] = -1  # orthonormal, but moves the all-ones direction
    with pytest.raises(ValueError, match=r'must map \(1, ..., 1\) to itself'):
        scramble_transformer(*args, reflection)


def test_rotation_fixes_the_all_ones_direction(rng):
    M = rotation_fixing_ones(6, rng)
    np.testing.assert_allclose(M @ M.T, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(np.ones(6) @ M, np.ones(6), atol=1e-12)


def test_registry_lists_every_chapter_one_puzzle():
    ids = [p.id for p in ch01.PUZZLES]
    assert ids == [f'1.{i}' for i in range(1, 11)]
    assert {p.id for p in ch01.PUZZLES if p.kind == 'checked'} == CHECKED
