"""Red team, chapters 1-6: attacks that passed a checker (or escaped it) before, now refused.

Written by attacking the checkers of ``taotp/exercises/ch01.py`` ... ``ch06.py`` from their
code alone (no tests, no solutions read first).  Each test is one attack that used to
PASS a puzzle without solving it, or to escape ``check``; it must now be refused with a
message that says why.

| attack | puzzles it fooled | fix |
|---|---|---|
| raise ``guard._TimeUp()`` from the answer | every checker (escaped ``check``) | a time-up of no running limit is the answer's own exception (``guard.live``) |
| the answer swaps the checker's helper (``ch04.last_token_argmax``, ``ch05.teacher_forced_argmax``, a function's ``__code__``), from a builder or from a params value's ``__array__`` | every checker | ``guard.module_state``/``restore_modules`` around every check: refused and put back |
| ``sys.settrace(None)`` or a thread, then the package's own decoder | 1.3, 1.4, 1.7 | ``guard.watching`` watches threads and records a switched-off watch |
| the package's decoder only in the calls nobody watched (work count, timing) | 1.3 | every call of the submission is watched |
| a lean naive loop that converts the weights (``np.asarray`` hides the products from the count) | 1.3 | 200 steps at d_model 64 and >= 3x (a lean naive loop measures 1.2-1.7x, a cache 10-20x); the PASS line says when the work was not counted |
| a table of the timed runs (program seed 7, prompt seed 8 were fixed) | 1.3 | program and prompts drawn from fresh entropy per check |
| read ``want`` from the checker's frame | 1.3, 1.4, 1.7 | the expected answer is computed after the call |
| make the cached sampling program degenerate, then decode greedily | 1.6 | the laws are computed on a program built after the runs |
| empty the cached forbidden-function table | 1.3, 1.4, 1.6, 1.7 | a fresh table for every watch |
| poison the cached 3.6 table (values all 0) after caching the book's score | 3.6 | the caches hand out copies |
| raise ``ch04.BOOK_TOTALS`` (the book's own construction passes 4.5) | 4.5 | read-only mapping (also ``SPEC_3_6``, ``PLACES_2``, ``SAMPLING``, ``HINTS``) |
| NaN far from x0 from finite weights (an overflowing hidden unit times 0) | 6.2, 6.3, 6.4 | NaN counts as infinitely wrong |
| NaN attention output from huge Q, K | 6.6 (and 6.8's residual test) | the same |
| the book's adder with ln2's gamma x1000 and M1 / 1000 | 6.15 (6.17 with x2) | keys measured before ln2's gamma and beta |
| hand the puzzle back to the package (``taotp.addition.spike``, ``taotp.build_MLP``, build the Fig. 6.2 program and count it) | 6.2, 6.3, 6.5 | the call is watched for the package's functions (the solutions now write their own) |
"""
import sys
import threading
import warnings

import numpy as np
import pytest

import taotp
from taotp.exercises import check, guard
from taotp.exercises import ch01, ch03, ch04, ch05, ch06
from taotp.params import base_layer, base_params

MAX = np.finfo(float).max


# ----------------------------------------------------------------------------- the framework

def raise_time_up(*args, **kwargs):
    raise guard._TimeUp()


class TimeUpArray:
    def __array__(self, dtype=None, copy=None):
        raise guard._TimeUp()


@pytest.mark.parametrize('puzzle, answer', [
    ('1.4', raise_time_up), ('2.1', raise_time_up),
    ('5.6', {**base_params(16, 24, 2), 'tok_emb': TimeUpArray()}),
])
def test_a_forged_time_up_is_the_answers_own_exception(puzzle, answer):
    result = check(puzzle, answer)                # used to escape check() as _TimeUp
    assert not result and '_TimeUp' in result.message, result.message


def patching_builder(vocab, block, prefix_len):
    """4.4: swaps the checker's engine for the reference answer, returns a 1-dim program."""
    def oracle(X, params, **kwargs):
        return np.array([taotp.search.search_reference(list(x), prefix_len) for x in X])
    ch04.last_token_argmax = oracle
    return base_params(vocab, block, 1)


def test_a_builder_that_swaps_the_checkers_helper_is_refused_and_undone():
    original = ch04.last_token_argmax
    result = check('4.4', patching_builder)
    assert not result and 'changed taotp.exercises.ch04.last_token_argmax' in result.message
    assert ch04.last_token_argmax is original


class PatchOnRead:
    """A weight whose conversion to an array swaps 5.6's engine for a sorting oracle."""

    def __init__(self, value):
        self.value = value

    def __array__(self, dtype=None, copy=None):
        def oracle(seqs, params, n_prompt, **kwargs):
            return np.sort(seqs[:, :n_prompt - 1], axis=1)[:, :seqs.shape[1] - n_prompt]
        ch05.teacher_forced_argmax = oracle
        return np.asarray(self.value, dtype=dtype)


def test_a_params_value_that_swaps_the_engine_when_read_is_refused():
    original = ch05.teacher_forced_argmax
    answer = {**base_params(16, 24, 2), 'tok_emb': PatchOnRead(np.eye(16, 2))}
    result = check('5.6', answer)
    assert not result and 'changed taotp.exercises.ch05.teacher_forced_argmax' in result.message
    assert ch05.teacher_forced_argmax is original


def test_a_swapped_function_code_is_refused_and_put_back():
    code = ch04._accuracy.__code__

    def fake(params, sizes, groups, need=1.0, post_ln=False):
        return 1.0, 1

    def builder(vocab, block, prefix_len):
        ch04._accuracy.__code__ = fake.__code__
        return base_params(vocab, block, 1)
    result = check('4.4', builder)
    assert not result and 'ch04._accuracy.__code__' in result.message, result.message
    assert ch04._accuracy.__code__ is code


# ----------------------------------------------------------------------------- Chapter 1

def package_decode_unwatched(tokens, params, max_steps, eos=None):
    sys.settrace(None)
    return taotp.decode(tokens, params, max_steps=max_steps, eos=eos)


def package_decode_watch_restored(tokens, params, max_steps, eos=None):
    trace = sys.gettrace()
    sys.settrace(None)
    try:
        return taotp.decode(tokens, params, max_steps=max_steps, eos=eos)
    finally:
        sys.settrace(trace)


def package_decode_in_a_thread(tokens, params, max_steps, eos=None):
    out = []
    worker = threading.Thread(target=lambda: out.append(
        taotp.decode(tokens, params, max_steps=max_steps, eos=eos)))
    worker.start()
    worker.join()
    return out[0]


def window_unwatched(tokens, params, n_steps):
    sys.settrace(None)
    return taotp.decode(tokens, params, max_steps=n_steps, window=True)


def window_forbidden_table_emptied(tokens, params, n_steps):
    ch01._forbidden('1.7').clear()
    return taotp.decode(tokens, params, max_steps=n_steps, window=True)


def transformer_unwatched(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    sys.settrace(None)
    return taotp.transformer(tokens, tok_emb, pos_emb, out_emb, layers, lnf)


@pytest.mark.parametrize('puzzle, answer, words', [
    ('1.3', package_decode_unwatched, "switches off the checker's watch"),
    ('1.3', package_decode_watch_restored, "switches off the checker's watch"),
    ('1.3', package_decode_in_a_thread, 'calls taotp.decoding.decode'),
    ('1.4', transformer_unwatched, "switches off the checker's watch"),
    ('1.7', window_unwatched, "switches off the checker's watch"),
    ('1.7', window_forbidden_table_emptied, 'calls taotp.decoding.decode'),
])
def test_the_package_cannot_be_called_behind_the_watchs_back(puzzle, answer, words):
    result = check(puzzle, answer)
    assert not result and words in result.message, result.message
    assert sys.settrace.__name__ == 'settrace'           # the real one is back


def naive_loop(tokens, params, max_steps, eos=None):
    out = [int(t) for t in tokens]
    for _ in range(max_steps):
        out.append(int(np.argmax(taotp.transformer(np.array(out), **params)[-1])))
        if out[-1] == eos:
            break
    return out


def package_decode_where_unwatched(tokens, params, max_steps, eos=None):
    """The naive loop while watched, the package's cached decoder whenever nobody watches."""
    if sys.gettrace() is None:
        return taotp.decode(tokens, params, max_steps=max_steps, eos=eos)
    return naive_loop(tokens, params, max_steps, eos)


def _layer_norm(x, gamma=1.0, beta=0.0):
    c = x - x.mean(-1, keepdims=True)
    return beta + gamma * c / (np.sqrt((c * c).mean(-1, keepdims=True)) + 1e-10)


def lean_naive_loop(tokens, params, max_steps, eos=None):
    """No cache at all: every step reruns every position, on weights converted by np.asarray
    (which hides the products from the checker's count), with few NumPy calls per step."""
    tok, pos, out_emb = (np.asarray(params[k]) for k in ('tok_emb', 'pos_emb', 'out_emb'))
    d = tok.shape[1]
    layers = []
    for layer in params['layers']:
        Q, K, V, P = (np.asarray(layer[k]) for k in 'QKVP')
        h, dh, dv = Q.shape[0], Q.shape[2], V.shape[2]
        fuse = lambda W, k: W.transpose(1, 0, 2).reshape(d, h * k)
        layers.append((h, dh, dv, fuse(Q, dh), fuse(K, dh), fuse(V, dv),
                       P.transpose(0, 2, 1).reshape(h * dv, d), np.asarray(layer['M1']),
                       np.asarray(layer['b1']), np.asarray(layer['M2']), np.asarray(layer['b2']),
                       layer['ln1'], layer['ln2']))
    seq = [int(t) for t in tokens]
    for _ in range(max_steps):
        m = len(seq)
        x = tok[seq] + pos[:m]
        future = np.triu(np.full((m, m), -np.inf), 1)
        for h, dh, dv, Q, K, V, P, M1, b1, M2, b2, ln1, ln2 in layers:
            a = _layer_norm(x, **ln1)
            if h:
                q = (a @ Q).reshape(m, h, dh).transpose(1, 0, 2)
                k = (a @ K).reshape(m, h, dh).transpose(1, 2, 0)
                v = (a @ V).reshape(m, h, dv).transpose(1, 0, 2)
                w = q @ k / dh ** 0.5 + future
                w = np.exp(w - w.max(-1, keepdims=True))
                w /= w.sum(-1, keepdims=True) + 1e-10
                x = x + (w @ v).transpose(1, 0, 2).reshape(m, h * dv) @ P
            hidden = _layer_norm(x, **ln2) @ M1 + b1
            x = x + (hidden * (hidden > 0)) @ M2 + b2
        seq.append(int(np.argmax(_layer_norm(x[-1], **params['lnf']) @ out_emb.T)))
        if seq[-1] == eos:
            break
    return seq


def test_1_3_the_package_decoder_in_the_unwatched_calls_is_seen():
    result = check('1.3', package_decode_where_unwatched)
    assert not result and 'multiplied' in result.message, result.message


def test_1_3_a_lean_naive_loop_on_converted_weights_is_too_slow():
    result = check('1.3', lean_naive_loop)       # passed: "met at most 0 position vectors", 2x
    assert not result and 'at least 3x expected' in result.message, result.message


def test_1_3_the_timed_program_and_prompts_are_new_each_time():
    a, b = (ch01._speed_program(np.random.default_rng()) for _ in range(2))
    assert not np.array_equal(a['tok_emb'], b['tok_emb'])


def frame_reader(*args, **kwargs):
    """Returns the checker's expected answer, read from its frame."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name.startswith('check_') and 'want' in frame.f_locals:
            return frame.f_locals['want']
        frame = frame.f_back
    return None


@pytest.mark.parametrize('puzzle', ['1.4', '1.7'])
def test_the_expected_answer_is_not_in_a_frame_during_the_call(puzzle):
    result = check(puzzle, frame_reader)
    assert not result and 'is None' in result.message, result.message


def greedy_after_poisoning_the_sampling_program(tokens, params, max_steps, temperature, rng):
    shared = ch01._sampling_program()
    shared['out_emb'] *= 1e6                        # used to be the cached program: laws one-hot
    out = [int(t) for t in tokens]
    for _ in range(max_steps):
        out.append(int(np.argmax(taotp.transformer(np.array(out), **params)[-1])))
    return out


def test_1_6_the_laws_come_from_a_program_no_answer_has_seen():
    result = check('1.6', greedy_after_poisoning_the_sampling_program)
    assert not result and 'softmax(logits / T)' in result.message, result.message


# ----------------------------------------------------------------------------- Chapters 3 and 4

def poison_3_6(ks, vs, vocab, block, key_len, tok_dims, rng=None):
    """Caches the book's scores, then sets every value of the cached table to 0 and answers 0."""
    for seed in ch03.SPEC_3_6['seeds']:
        ch03._book_3_6(seed)
    ch03._table_3_6()[1][:] = 0
    ch03._book_3_6(0)[0]['layers'][0]['Q'][:] = 0
    params = taotp.build_untied_transformer(ks, vs, vocab, block, key_len, tok_dims, rng=rng)
    params['out_emb'] = np.zeros_like(params['out_emb'])
    return params


def test_3_6_the_cached_table_and_reference_cannot_be_poisoned():
    result = check('3.6', poison_3_6)
    assert not result and 'expected at least the book' in result.message, result.message
    assert ch03._table_3_6()[1].any() and ch03._book_3_6(0)[0]['layers'][0]['Q'].any()


@pytest.mark.parametrize('table, key', [
    (ch04.BOOK_TOTALS, (10, 100, 3)), (ch03.SPEC_3_6, 'seeds'), (ch06.PLACES_2, 'units'),
    (ch01.SAMPLING, 'runs'), (ch01.HINTS, '1.3'),
])
def test_the_checkers_tables_are_read_only(table, key):
    with pytest.raises(TypeError):
        table[key] = 0


def book_search_with_raised_totals(vocab, block, prefix_len):
    ch04.BOOK_TOTALS[(vocab, block, prefix_len)] = 10 ** 9
    return taotp.build_search_transformer(vocab, block, prefix_len)


def test_4_5_the_book_totals_cannot_be_raised():
    result = check('4.5', book_search_with_raised_totals)
    assert not result and 'does not support item assignment' in result.message, result.message


# ----------------------------------------------------------------------------- Chapter 6: NaN

def overflow_unit(x0, side):
    """(m, b) of a hidden unit finite at x0 whose pre-activation overflows to +inf once
    side * (x - x0) >= 1; with output weight 0 it makes f NaN there (inf * 0)."""
    if side < 0:
        m, b = overflow_unit(-x0, 1)
        return -m, b
    if x0 >= 1:
        m, top = 0.9 * MAX / x0, MAX * (1 - 1 / (2 * x0))
    else:
        m, top = 0.9 * MAX, 0.5 * MAX
    return m, top - m * x0


def nan_spike(x0, a0):
    """a0 at x0, a ramp to 0 on one side, NaN on the other (no spike at all)."""
    side = 1 if x0 >= 0 else -1
    m, b = overflow_unit(x0, side)
    return (np.array([[m, side, 0.0]]), np.array([b, 1 - side * x0, 0.0]),
            np.array([[0.0], [a0], [0.0]]), np.array([0.0]))


def nan_mlp(xs, ys):
    """NaN at every point but 0 (two units overflow on either side, output weights 0)."""
    zero = np.flatnonzero(xs == 0)
    d = ys.shape[1]
    if len(xs) == 1:
        return np.zeros(1), np.zeros(1), np.zeros((1, d)), ys[0]
    return (np.array([MAX, -MAX]), np.array([MAX, MAX]), np.zeros((2, d)),
            ys[zero[0]] if len(zero) else ys[0])


def nan_weak_spike():
    m, b = overflow_unit(0.0, 1)
    return np.array([[m, 1.0]]), np.array([b, 1.0]), np.array([[0.0], [1.0]]), np.array([0.0])


def nan_attention():
    p = base_params(10, 2, 4)
    rng = np.random.default_rng(0)
    p['tok_emb'] = p['out_emb'] = rng.normal(size=(10, 4))
    p['pos_emb'] = rng.normal(size=(2, 4))
    layer = base_layer(1, 4, 0, 4)
    layer['Q'][0] = layer['K'][0] = 1e200 * np.eye(4)      # scores overflow: softmax of inf - inf
    p['layers'] = [layer]
    return p


@pytest.mark.parametrize('puzzle, answer', [
    ('6.2', nan_spike), ('6.3', nan_mlp), ('6.4', nan_weak_spike()), ('6.6', nan_attention()),
])
def test_6_nan_is_wrong_not_close(puzzle, answer):
    with warnings.catch_warnings():              # as in a notebook: overflow only warns there
        warnings.simplefilter('ignore', RuntimeWarning)
        result = check(puzzle, answer)
    assert not result and 'nan' in result.message, result.message


def gamma_scaled(params, gain):
    """The same function: ln2's gamma (and beta) times ``gain``, M1 divided by it."""
    layer = params['layers'][0]
    layer['ln2'] = {'gamma': gain * np.asarray(layer['ln2']['gamma'], float),
                    'beta': gain * np.asarray(layer['ln2']['beta'], float)}
    layer['M1'] = layer['M1'] / gain
    return params


def test_6_15_a_gain_in_ln2_widens_no_key_separation():
    book = taotp.addition.build_multi_digit_mod_transformer(3)
    result = check('6.15', gamma_scaled(book, 1000.0))
    assert not result and 'only 1.37e-09 apart' in result.message, result.message


def test_6_17_a_gain_in_ln2_widens_no_key_separation():
    result = check('6.17', lambda n: gamma_scaled(
        taotp.addition.build_decimal_addition_transformer(n), 2.0))
    assert not result and 'beat it by at least 1%' in result.message, result.message


@pytest.mark.parametrize('puzzle, answer, words', [
    ('6.2', lambda x0, a0: tuple(taotp.addition.spike(x0, a0)), 'calls taotp.addition.mlp.spike'),
    ('6.2', lambda x0, a0: tuple(taotp.build_MLP([x0], [[a0]])), 'calls taotp.addition.mlp.build_MLP'),
    ('6.3', lambda xs, ys: tuple(taotp.build_MLP(xs, ys)), 'calls taotp.addition.mlp.build_MLP'),
    ('6.5', lambda b: taotp.count_params(taotp.build_single_digit_mod_transformer(base=b))[
        'n_params'], 'calls taotp.addition.programs.build_single_digit_mod_transformer'),
])
def test_6_the_packages_own_answer_is_refused(puzzle, answer, words):
    result = check(puzzle, answer)
    assert not result and words in result.message, result.message


def test_a_swapped_method_of_a_package_class_is_refused_and_put_back():
    from taotp.exercises.result import CheckResult
    original = CheckResult.__bool__

    def builder(vocab):
        CheckResult.__bool__ = lambda self: True         # every verdict truthy
        return None
    result = check('2.1', builder)
    assert CheckResult.__bool__ is original
    assert not result and 'changed taotp.exercises.result.CheckResult.__bool__' in result.message
