"""Chapter 1 checkers: what each one calls solved, and the answers that must not pass.

| id | what is checked (solved means) | cheats tried (each a test below) |
|---|---|---|
| 1.1, 1.2, 1.5, 1.9, 1.10 | no checker (reflection; worked answers in the solutions notebook) | - |
| 1.3 | `decode_fast(tokens, params, max_steps, eos)` returns the naive decode's tokens on 32 seeded cases over 4 random programs (a layer without heads, d_value != d_head, d_ff = 0, vector and scalar layer norms; full blocks, 0 steps, eos at the first token) and on 200-step runs of a program and prompts drawn afresh for every check (no table of them can exist); every weight meets each position about once (Q, K, V and M1 count the vectors multiplied with them; a decode that converts the weights is not counted and is told so); at least 3x faster than the naive loop; no call to the package's decoders or KVCache | a naive loop that memoises its outputs (passed before: the same prompt was timed three times); a cache rebuilt every second step (slower than the naive loop; now also refused by the count); a cache that ignores layer-norm gamma/beta (passed before: every program used the defaults); a cache of 32 positions (passed before: runs stayed below 24 positions and the timed run was not compared); value buffers sized by d_head (passed before); `taotp.decode` with its cache (passed before); stale positions; the naive loop |
| 1.4 | `transformer_at(...)` gives the book's logits to 1e-9 on 16 inputs (1 token to a full block) over the same 4 programs; no np.einsum and no call into the package's forward pass | `taotp.transformer` itself (passed before); the loop reference `taotp.reference.naive_transformer` (passed before); a rewrite that still calls np.einsum (passed before); one that ignores layer-norm gamma/beta (passed before); the missing 1/sqrt(d_head) |
| 1.6 | `sample_decode(...)`: greedy at T = 1e-4 along 6-step runs of 4 programs (no near ties: logit gaps > 0.05); the prompt kept and `max_steps` tokens in range; reproducible with a seeded rng; at T = 0.5, 1, 2, 300 seeded runs of 8 steps: the frequency of every token at every step (and over all steps) within a Hoeffding-Azuma margin of the mean of softmax(logits / T) over the sampled prefixes; a right sampler fails with probability < 1e-6; no call to the package's sampler | sample the first token, then greedy (passed before: only one step was measured); greedy after 4 sampled steps (passed before); `taotp.decode(..., temperature=T, rng=rng)` (passed before); the prompt's law reused at every step; T ignored; a fresh global generator; the global generator reseeded on every call; the prompt dropped from the output |
| 1.7 | `decode_window(...)` equals the argmax over the last block_size tokens for 20 prompts (1 token, a full block, longer than the block, 0 steps, up to 40 steps) at block sizes 1, 5, 8, 13 over the 4 programs; no call to the package's decoders | a window hard-coded to 8 tokens (passed before: every program had block_size 8); the first step on the whole prompt (passed before: no prompt was longer than the block); `taotp.decode(..., window=True)` (passed before); a window one token short |
| 1.8 | `scramble_transformer(...)` leaves its inputs (and M) untouched, returns 5 pieces with new_tok_emb = tok_emb @ M, and the same logits (1e-7) on 18 inputs for 6 (program, M) pairs: random rotations, a permutation and a reflection, all fixing (1, ..., 1); failures name the piece that does not turn with the stream | a function that sets M to the identity in place and returns its input (passed before); a correct rewrite that mutates the caller's layers (told "every weight has to change" before; now: changed in place, a failure because the original program must survive); only the embeddings rotated; pos_emb, P or b2 forgotten; M instead of M.T on the reads; the pieces in the wrong order |

Not preventable by a deterministic checker: a table of the checker's own seeded cases (its
code is public); the cases are many and include long runs, so such a table is the whole
answer written out by hand.

Mutating the caller's program in 1.8 is a failure: the puzzle is to produce a
second program computing the same function, and an in-place rewrite destroys the
first (and silently changes anything else sharing its arrays).

The contract every checker keeps (the reference passes, garbage is reported, loops
are stopped) is tested once in test_checker_contract.py; the reference answers come
from their one copy, the solutions notebook (``answer``).
"""
import time

import numpy as np
import pytest

import taotp
from solutions import answer
from submissions import raises
from taotp.exercises import ch01, check, registry
from taotp.exercises.registry import checker
from taotp.model import layer_norm, softmax

CHECKED = {'1.3', '1.4', '1.6', '1.7', '1.8'}


class NeverArray:
    """A value whose conversion to an array never returns."""

    def __array__(self, *args, **kwargs):
        while True:
            time.sleep(0.01)


# garbage particular to Chapter 1's answers: token lists and logits of the wrong kind
EXTRA_GARBAGE = {pid: {'a function returning a ragged list': lambda *a, **k: [[1, 2], [3]],
                       'a function returning a NaN matrix': lambda *a, **k: np.full((3, 3), np.nan),
                       'a function returning a 2-D token array': lambda *a, **k: [[0, 1]]}
                 for pid in sorted(CHECKED)}


def budgeted(puzzle, seconds=0.5):
    """The puzzle's checker body under a short total budget (the real one is 30 s)."""
    return checker(puzzle, budget=seconds)(registry()[puzzle].checker.__wrapped__)


def default_norms(params):
    """The same program with every layer norm back at gamma = 1, beta = 0."""
    layers = [{**layer, 'ln1': {}, 'ln2': {}} for layer in params['layers']]
    return {**params, 'layers': layers, 'lnf': {}}


# ----------------------------------------------------------------------------- 1.3

def wrong_cache(tokens, params, max_steps, eos=None, capacity=None, ignore_norms=False,
                values_like_keys=False):
    """A KV-cache decoder with one of three bugs: a ring of ``capacity`` positions, layer
    norms without their gamma and beta, or value buffers as wide as the keys."""
    out = [int(t) for t in tokens]
    cap = capacity or len(out) + max_steps
    layers = params['layers']
    norm = (lambda x, ln: layer_norm(x)) if ignore_norms else (lambda x, ln: layer_norm(x, **ln))
    keys = [np.zeros((len(l['K']), cap, l['K'].shape[2])) for l in layers]
    values = [np.zeros((len(l['V']), cap, (l['K'] if values_like_keys else l['V']).shape[2]))
              for l in layers]
    seen = 0
    for _ in range(max_steps):
        for t in range(seen, len(out)):
            x = params['tok_emb'][out[t]] + params['pos_emb'][t]
            for layer, K, V in zip(layers, keys, values):
                h = norm(x, layer['ln1'])
                K[:, t % cap], V[:, t % cap] = h @ layer['K'], h @ layer['V']
                q, m = h @ layer['Q'], min(t + 1, cap)
                w = softmax((K[:, :m] @ q[:, :, None])[..., 0] / np.sqrt(layer['Q'].shape[-1]))
                x = x + np.einsum('hk,hdk->d', (w[:, None, :] @ V[:, :m])[:, 0], layer['P'])
                h = norm(x, layer['ln2'])
                x = x + np.maximum(h @ layer['M1'] + layer['b1'], 0) @ layer['M2'] + layer['b2']
        seen = len(out)
        out.append(int(np.argmax(norm(x, params['lnf']) @ params['out_emb'].T)))
        if out[-1] == eos:
            break
    return out


def naive_loop(tokens, params, max_steps, eos=None, plain=False):
    """The book's loop, on the weights as given or on plain copies (which count nothing)."""
    if plain:
        params = {**params, 'layers': [{k: np.asarray(v) if k not in ('ln1', 'ln2') else v
                                        for k, v in layer.items()} for layer in params['layers']]}
    out = list(tokens)
    for _ in range(max_steps):
        out.append(int(np.argmax(taotp.transformer(np.array(out), **params)[-1])))
        if out[-1] == eos:
            break
    return out


def memoised(plain=False):
    """The naive loop, remembering every answer it gave (the issue's cheat)."""
    memo = {}

    def decode_fast(tokens, params, max_steps, eos=None):
        key = (tuple(int(t) for t in tokens), max_steps, eos)
        if key not in memo:
            memo[key] = naive_loop(tokens, params, max_steps, eos, plain)
        return memo[key]
    return decode_fast


def rebuilt_every_second_step(tokens, params, max_steps, eos=None):
    """The reference cache, thrown away after every second token."""
    out = list(tokens)
    while len(out) < len(tokens) + max_steps and (len(out) == len(tokens) or out[-1] != eos):
        steps = min(2, len(tokens) + max_steps - len(out))
        out = list(answer('1.3')(np.array(out), params, steps, eos))
    return out


def stale_positions(tokens, params, max_steps, eos):
    """A cache that forgets where it is: from the fourth token on, reads position 0's logits."""
    out = list(tokens)
    for _ in range(max_steps):
        logits = taotp.transformer(np.array(out), **params)
        out.append(int(np.argmax(logits[0 if len(out) > 3 else -1])))
        if out[-1] == eos:
            break
    return out


CHEATS_1_3 = {
    'memoised naive loop': (memoised, 'multiplied'),
    'memoised naive loop on plain copies': (lambda: memoised(plain=True), 'at least 3x'),
    'cache rebuilt every second step': (lambda: rebuilt_every_second_step, 'multiplied'),
    'cache ignoring layer-norm gamma and beta':
        (lambda: lambda *a: wrong_cache(*a, ignore_norms=True), 'expected ['),
    'a ring of 32 positions': (lambda: lambda *a: wrong_cache(*a, capacity=32),
                               'first difference at position'),
    'values as wide as the keys':
        (lambda: lambda *a: wrong_cache(*a, values_like_keys=True), 'heads [0, 3]'),
    'the package\'s cached decode':
        (lambda: lambda t, p, m, e: taotp.decode(t, p, m, e), 'calls taotp.decoding.decode'),
    'stale positions': (lambda: stale_positions, 'expected ['),
    'the naive loop': (lambda: lambda t, p, m, e: taotp.decode(t, p, m, e, cache=False),
                       'calls taotp.decoding.decode'),
}


@pytest.mark.parametrize('label', CHEATS_1_3)
def test_1_3_cheats_fail(label):
    answer('1.3')                  # read the solutions notebook before any check runs
    make, words = CHEATS_1_3[label]
    result = check('1.3', make())
    assert not result, label
    assert words in result.message, result.message


def test_1_3_naive_loop_is_told_to_keep_earlier_positions():
    result = check('1.3', naive_loop)
    assert not result
    assert 'multiplied 21,500 position vectors' in result.message      # 8 + 9 + ... + 207
    assert 'each of the 207 positions needs it once' in result.message, result.message


def test_1_3_counts_only_what_it_sees():
    """Arrays stripped of the counter count nothing (never a reason to pass)."""
    params, tallies = ch01._counted(ch01._speed_program(np.random.default_rng(0)))
    x = np.ones((5, ch01.SPEED_SHAPE['d_model']))
    _ = x @ params['layers'][0]['K'][0]
    _ = np.einsum('nd,hdk->hnk', x, params['layers'][1]['Q'])
    _ = np.asarray(params['layers'][0]['M1'])
    assert tallies[(0, 'K')][0] == 5 and tallies[(1, 'Q')][0] == 5 and tallies[(0, 'M1')][0] == 0
    assert type(x @ params['layers'][0]['M1']) is np.ndarray


def test_exception_message_names_the_input_and_hides_traceback():
    result = check('1.3', raises)
    assert 'raised RuntimeError: boom on program 0 (2 layers, heads [2, 2]), prompt [' \
        in result.message
    assert 'Traceback' not in result.message
    assert 'Traceback' in check('1.3', raises, verbose=True).message


# ----------------------------------------------------------------------------- 1.4

def no_scale(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    """Forgets the 1/sqrt(d_head) of the scores (the same as scaling every Q by sqrt(d_head))."""
    unscaled = [{**layer, 'Q': layer['Q'] * layer['Q'].shape[-1] ** 0.5} for layer in layers]
    return answer('1.4')(tokens, tok_emb, pos_emb, out_emb, unscaled, lnf)


def still_einsum(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    return np.einsum('nv->nv', answer('1.4')(tokens, tok_emb, pos_emb, out_emb, layers, lnf))


def ignores_norms(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    plain = default_norms(dict(tok_emb=tok_emb, pos_emb=pos_emb, out_emb=out_emb, layers=layers,
                               lnf=lnf))
    return answer('1.4')(tokens, **plain)


CHEATS_1_4 = {
    'taotp.transformer': (lambda: taotp.transformer, 'calls taotp.decoding.transformer'),
    'the loop reference': (lambda: taotp.reference.naive_transformer,
                           'calls taotp.reference.naive_transformer'),
    'a rewrite that calls np.einsum': (lambda: still_einsum, 'calls np.einsum'),
    'layer-norm gamma and beta ignored': (lambda: ignores_norms, 'logits differ'),
    'no 1/sqrt(d_head)': (lambda: no_scale, 'logits differ'),
}


@pytest.mark.parametrize('label', CHEATS_1_4)
def test_1_4_cheats_fail(label):
    answer('1.3')                  # read the solutions notebook before any check runs
    make, words = CHEATS_1_4[label]
    result = check('1.4', make())
    assert not result, label
    assert words in result.message, result.message


# ----------------------------------------------------------------------------- 1.6

def greedy_after(k):
    """Samples ``k`` tokens with the reference sampler, then decodes greedily."""
    def sample_decode(tokens, params, max_steps, temperature, rng):
        out = list(answer('1.6')(tokens, params, min(k, max_steps), temperature, rng))
        for _ in range(max_steps - min(k, max_steps)):
            out.append(int(np.argmax(taotp.transformer(np.array(out), **params)[-1])))
        return out
    return sample_decode


def prompt_law_throughout(tokens, params, max_steps, temperature, rng):
    probs = softmax(taotp.transformer(np.array(tokens), **params)[-1] / temperature)
    return list(tokens) + [int(rng.choice(len(probs), p=probs / probs.sum()))
                           for _ in range(max_steps)]


def no_temperature(tokens, params, max_steps, temperature, rng):
    """Uses T = 1 whatever it is told, except near 0 (so it passes the greedy check)."""
    return answer('1.6')(tokens, params, max_steps, temperature if temperature < 0.01 else 1.0,
                         rng)


def fresh_global_rng(tokens, params, max_steps, temperature, rng):
    return answer('1.6')(tokens, params, max_steps, temperature, np.random.default_rng())


def reseeded(tokens, params, max_steps, temperature, rng):
    return answer('1.6')(tokens, params, max_steps, temperature, np.random.default_rng(0))


def drops_prompt(tokens, params, max_steps, temperature, rng):
    return answer('1.6')(tokens, params, max_steps, temperature, rng)[len(tokens):]


CHEATS_1_6 = {
    'the first token sampled, then greedy': (lambda: greedy_after(1),
                                             'at step 2 token'),
    'greedy after 4 sampled steps': (lambda: greedy_after(4), 'at step 6 token'),
    'taotp.decode with a temperature':
        (lambda: lambda t, p, m, T, r: taotp.decode(t, p, m, temperature=T, rng=r),
         'calls taotp.decoding.decode'),
    'the prompt\'s law at every step': (lambda: prompt_law_throughout,
                                        'at temperature 1e-4 sampling is greedy'),
    'T ignored (except near 0)': (lambda: no_temperature, 'at temperature 0.5'),
    'a fresh global generator': (lambda: fresh_global_rng, 'draw from the rng you are given'),
    'the generator reseeded on every call': (lambda: reseeded, 'at step 1 token'),
    'the prompt dropped': (lambda: drops_prompt, 'expected the prompt followed by 6 token ids'),
}


@pytest.mark.parametrize('label', CHEATS_1_6)
def test_1_6_cheats_fail(label):
    answer('1.3')                  # read the solutions notebook before any check runs
    make, words = CHEATS_1_6[label]
    result = check('1.6', make())
    assert not result, label
    assert words in result.message, result.message


def test_1_6_greedy_paths_have_no_near_ties():
    cases = ch01._greedy_cases()
    assert len(cases) == 4
    for params, prompt in cases:
        seq = taotp.decode(prompt, params, max_steps=6, cache=False)
        top = np.sort(taotp.transformer(seq[:-1], **params)[2:], axis=-1)
        assert np.min(top[:, -1] - top[:, -2]) > ch01.GREEDY_GAP


def test_1_6_sampling_program_has_spread_laws_that_depend_on_the_context_and_on_t():
    params, start = ch01._sampling_program(), len(ch01.SAMPLING['prompt'])
    rng = np.random.default_rng(0)
    means = {}
    for temperature in ch01.SAMPLING['temperatures']:
        runs = np.array([taotp.decode(list(ch01.SAMPLING['prompt']), params, 8,
                                      temperature=temperature, rng=rng) for _ in range(200)])
        probs = softmax(taotp.transformer_batch(runs[:, :-1], params)[:, start - 1:] / temperature)
        assert probs.max(-1).mean() < 0.75            # no token dominates
        assert probs.std(0).mean() > 0.03             # the law moves with the context
        means[temperature] = probs.mean((0, 1))
    pooled = ch01._law_margin(300 * 8, 3 * 9 * 4)
    for temperature in (0.5, 2.0):                  # a sampler ignoring T is caught by the margin
        assert np.abs(means[temperature] - means[1.0]).max() > 1.3 * pooled


def test_1_6_margins_follow_hoeffding():
    assert ch01._law_margin(300, 108) == pytest.approx(np.sqrt(np.log(2 * 108 / 1e-6) / 600))


# ----------------------------------------------------------------------------- 1.7

def window_of(k):
    def decode_window(tokens, params, n_steps):
        out = list(tokens)
        for _ in range(n_steps):
            out.append(int(np.argmax(taotp.transformer(np.array(out[-k:]), **params)[-1])))
        return out
    return decode_window


def whole_prompt_first(tokens, params, n_steps):
    if not n_steps:
        return list(tokens)
    first = int(np.argmax(taotp.transformer(np.array(tokens), **params)[-1]))
    return answer('1.7')(list(tokens) + [first], params, n_steps - 1)


def window_too_short(tokens, params, n_steps):
    return window_of(len(params['pos_emb']) - 1)(tokens, params, n_steps) \
        if len(params['pos_emb']) > 1 else window_of(1)(tokens, params, n_steps + 1)[:-1]


CHEATS_1_7 = {
    'a window of 8 tokens, hard-coded': (lambda: window_of(8), 'block_size 5'),
    'the first step on the whole prompt': (lambda: whole_prompt_first,
                                           'tokens has 11 tokens but block_size is 8'),
    'taotp.decode(window=True)':
        (lambda: lambda t, p, n: taotp.decode(t, p, n, window=True), 'calls taotp.decoding.decode'),
    'a window one token short': (lambda: window_too_short, 'first difference at position'),
}


@pytest.mark.parametrize('label', CHEATS_1_7)
def test_1_7_cheats_fail(label):
    answer('1.3')                  # read the solutions notebook before any check runs
    make, words = CHEATS_1_7[label]
    result = check('1.7', make())
    assert not result, label
    assert words in result.message, result.message


# ----------------------------------------------------------------------------- 1.8

def rewrite(change):
    """The reference scramble, then ``change(new_pieces, old_pieces, M)`` applied to its result."""
    def scramble(tok_emb, pos_emb, out_emb, layers, lnf, M):
        old = [tok_emb, pos_emb, out_emb, layers, lnf]
        new = list(answer('1.8')(tok_emb, pos_emb, out_emb, layers, lnf, M))
        return change(new, old, M)
    return scramble


def in_place(new, old, M):
    for mine, theirs in zip(old[3], new[3]):
        mine.update(theirs)                  # the caller's layer dicts now hold the new weights
    return new[:3] + [old[3], new[4]]


def layers_with(key, value):
    def change(new, old, M):
        new[3] = [{**n, key: value(o, M)} for n, o in zip(new[3], old[3])]
        return new
    return change


def unturned_reads(new, old, M):
    """Q and K multiplied by M (which turns them further) instead of M.T (which undoes it)."""
    for key in ('Q', 'K'):
        new = layers_with(key, lambda o, M: np.einsum('de,hek->hdk', M, o[key]))(new, old, M)
    return new


def identity_in_place(tok_emb, pos_emb, out_emb, layers, lnf, M):
    M[:] = np.eye(len(M))
    return tok_emb, pos_emb, out_emb, layers, lnf


def embeddings_only(tok_emb, pos_emb, out_emb, layers, lnf, M):
    return tok_emb @ M, pos_emb @ M, out_emb @ M, layers, lnf


CHEATS_1_8 = {
    'M set to the identity in place': (lambda: identity_in_place, 'changed its input M in place'),
    'a right rewrite that mutates the caller\'s layers':
        (lambda: rewrite(in_place), "changed its input layers[0]['Q'] in place"),
    'only the embeddings rotated': (lambda: embeddings_only, 'layer 0: the attention weights'),
    'pos_emb forgotten': (lambda: rewrite(lambda n, o, M: [n[0], o[1], *n[2:]]),
                          'pos_emb: position rows'),
    'P forgotten': (lambda: rewrite(layers_with('P', lambda o, M: o['P'])),
                    'what the heads add to the stream'),
    'b2 forgotten': (lambda: rewrite(layers_with('b2', lambda o, M: o['b2'])),
                     "the MLP's update is not the rotated one"),
    'M instead of M.T on Q and K': (lambda: rewrite(unturned_reads), 'Q and K must undo'),
    'out_emb forgotten': (lambda: rewrite(lambda n, o, M: [n[0], n[1], o[2], *n[3:]]),
                          'out_emb compares each token'),
    'the pieces in the wrong order': (lambda: rewrite(lambda n, o, M: [n[0], n[1], n[2], n[4],
                                                                          n[3]]),
                                      'in the order tok_emb, pos_emb, out_emb, layers, lnf'),
}


@pytest.mark.parametrize('label', CHEATS_1_8)
def test_1_8_cheats_fail_with_a_message_about_the_piece(label):
    answer('1.3')                  # read the solutions notebook before any check runs
    make, words = CHEATS_1_8[label]
    result = check('1.8', make())
    assert not result, label
    assert words in result.message, result.message


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


def test_every_matrix_of_1_8_is_orthonormal_and_fixes_the_ones(rng):
    for d in (4, 6, 8):
        for _, M in ch01._matrices(d, rng, 0):
            np.testing.assert_allclose(M @ M.T, np.eye(d), atol=1e-12)
            np.testing.assert_allclose(np.ones(d) @ M, np.ones(d), atol=1e-12)
    assert np.linalg.det(ch01._matrices(6, rng, 0)[2][1]) == pytest.approx(-1)


# ----------------------------------------------------------------------------- shared

@pytest.mark.parametrize('puzzle', sorted(CHECKED))
def test_a_result_that_never_converts_is_stopped_by_the_budget(puzzle):
    start = time.perf_counter()
    result = budgeted(puzzle)(lambda *a, **k: (NeverArray(),) * 5)
    assert not result and 'budget' in result.message
    assert time.perf_counter() - start < 3


def test_options_are_refused():
    answer('1.3')
    for puzzle in sorted(CHECKED):
        result = check(puzzle, answer(puzzle), n_cases=1)
        assert not result and "unexpected keyword argument 'n_cases'" in result.message


def test_reflection_puzzles_have_no_checker():
    assert 'reflect puzzle with no checker' in check('1.1', None).message


def test_registry_lists_every_chapter_one_puzzle():
    ids = [p.id for p in ch01.PUZZLES]
    assert ids == [f'1.{i}' for i in range(1, 11)]
    assert {p.id for p in ch01.PUZZLES if p.kind == 'checked'} == CHECKED
