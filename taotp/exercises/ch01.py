"""Checkers for Chapter 1, The Transformer.

Every expected answer comes from the package's one forward pass (``transformer``
and ``decode``, which the tests compare with the independent loop reference).
"""
import time

import numpy as np

from ..decoding import decode, transformer
from ..params import random_params
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed


def _programs(seed=0):
    """A few seeded random programs: several layers and heads, one with d_ff = 0."""
    rng = np.random.default_rng(seed)
    return [
        random_params(rng, vocab_size=7, block_size=24, d_model=8, n_layers=2, n_heads=2,
                      d_head=3, d_ff=5),
        random_params(rng, vocab_size=5, block_size=24, d_model=6, n_layers=3, n_heads=3,
                      d_head=2, d_ff=0),
        random_params(rng, vocab_size=11, block_size=24, d_model=12, n_layers=1, n_heads=1,
                      d_head=12, d_ff=9),
    ]


def _tokens_out(value, what):
    return guard.array(value, what=what, integer=True).ravel().tolist()


@checker('1.3')
def check_1_3(decode_fast, n_prompts=5, max_steps=18):
    """``decode_fast(tokens, params, max_steps, eos)`` must match the naive decode and be faster."""
    cases = 0
    for i, params in enumerate(_programs(3)):
        rng = np.random.default_rng(100 + i)
        vocab = len(params['tok_emb'])
        for _ in range(n_prompts):
            prompt = rng.integers(0, vocab, size=rng.integers(1, 6))
            eos = int(rng.integers(0, vocab)) if rng.random() < 0.5 else None
            want = decode(prompt, params, max_steps=max_steps, eos=eos, cache=False).tolist()
            got = guard.call(decode_fast, prompt.copy(), params, max_steps, eos,
                             what='your decode', on=f'prompt {prompt.tolist()}')
            got = _tokens_out(got, 'your decode output')
            if got != want:
                raise Finding(f'program {i}, prompt {prompt.tolist()}, eos {eos}: expected '
                              f'{want}, got {got}', prompt.tolist())
            cases += 1
    # speed: 160 new tokens on a 2-layer program; the naive loop redoes all earlier positions
    params = random_params(np.random.default_rng(7), vocab_size=7, block_size=164, d_model=32,
                           n_layers=2, n_heads=4, d_head=8, d_ff=64, scale=0.5)
    prompt = np.array([1, 2, 3])

    def best_of(fn, repeats):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return min(times)

    naive = best_of(lambda: decode(prompt, params, max_steps=160, cache=False), 2)
    yours = best_of(lambda: guard.call(decode_fast, prompt.copy(), params, 160, None,
                                       what='your decode'), 3)
    speedup = naive / max(yours, 1e-9)
    if speedup < 1.5:
        raise Finding(f'tokens match on {cases} seeded prompts, but 160 steps took {yours:.3f} s vs '
                      f'{naive:.3f} s for the naive loop ({speedup:.1f}x); cache the keys and '
                      f'values of earlier positions')
    return Passed(f'same tokens as the naive loop on {cases} seeded prompts over 3 random '
                  f'programs; about {speedup:.0f}x faster on 160 steps')


@checker('1.4')
def check_1_4(transformer_at, n_cases=4):
    """``transformer_at(tokens, tok_emb, pos_emb, out_emb, layers, lnf)`` equal to the book's to 1e-9."""
    checked = 0
    for i, params in enumerate(_programs(4)):
        rng = np.random.default_rng(200 + i)
        for _ in range(n_cases):
            tokens = rng.integers(0, len(params['tok_emb']), size=rng.integers(1, 12))
            want = transformer(tokens, **params)
            got = guard.call(transformer_at, tokens.copy(), **params, what='your transformer',
                             on=f'tokens {tokens.tolist()}')
            got = guard.array(got, want.shape, what='your logits')
            err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
            if not err < 1e-9:
                raise Finding(f'program {i} (layers {len(params["layers"])}, heads '
                              f'{params["layers"][0]["Q"].shape[0]}), tokens {tokens.tolist()}: '
                              f'logits differ by {err:.2e} (relative); expected {want[-1, :3].round(4)}'
                              f'... in the last row, got {got[-1, :3].round(4)}...', tokens.tolist())
            checked += 1
    return Passed(f'logits equal the book\'s to 1e-9 on {checked} seeded inputs over 3 random '
                  f'programs (multi-head, multi-layer, one with d_ff = 0)')


def _sampling_program():
    """A 0-layer program whose next-token law is spread out (no token dominates)."""
    rng = np.random.default_rng(11)
    return random_params(rng, vocab_size=5, block_size=8, d_model=6, n_layers=0, scale=0.5)


@checker('1.6')
def check_1_6(sample_decode, n_draws=4000):
    """``sample_decode(tokens, params, max_steps, temperature, rng)``: right law, seeded, greedy limit."""
    params = _sampling_program()
    prompt = np.array([2, 4])
    logits = transformer(prompt, **params)[-1]
    # 1) temperature -> 0 is greedy
    for i, p in enumerate(_programs(6)):
        start = np.random.default_rng(i).integers(0, len(p['tok_emb']), size=3)
        want = decode(start, p, max_steps=6, cache=False).tolist()
        got = guard.call(sample_decode, start.copy(), p, 6, 1e-4, np.random.default_rng(0),
                         what='your sampler', on=f'prompt {start.tolist()} at temperature 1e-4')
        got = _tokens_out(got, 'your sampler output')
        if got != want:
            raise Finding(f'at temperature 1e-4 sampling should be greedy: prompt '
                          f'{start.tolist()}, expected {want}, got {got}', start.tolist())
    # 2) the same seed gives the same tokens (no hidden global random state)
    runs = [_tokens_out(guard.call(sample_decode, prompt.copy(), params, 5, 1.0,
                                   np.random.default_rng(42), what='your sampler'), 'output')
            for _ in range(2)]
    if runs[0] != runs[1]:
        raise Finding(f'two runs with rng=np.random.default_rng(42) gave {runs[0]} and {runs[1]}; '
                      f'draw from the rng you are given, not from np.random')
    # 3) the empirical law of the next token matches softmax(logits / T)
    for temperature in (1.0, 2.0, 0.5):
        rng = np.random.default_rng(int(temperature * 10))
        counts = np.zeros(len(logits))
        for _ in range(n_draws):
            out = _tokens_out(guard.call(sample_decode, prompt.copy(), params, 1, temperature, rng,
                                         what='your sampler'), 'your sampler output')
            if len(out) != len(prompt) + 1 or not 0 <= out[-1] < len(logits):
                raise Finding(f'with max_steps=1 expected prompt + one token id in 0..'
                              f'{len(logits) - 1}; got {out}')
            counts[out[-1]] += 1
        want = np.exp((logits - logits.max()) / temperature)
        want /= want.sum()
        got = counts / n_draws
        tv = 0.5 * np.abs(got - want).sum()
        if tv > 0.05:
            raise Finding(f'at temperature {temperature} the next-token frequencies over {n_draws} '
                          f'draws are {got.round(3).tolist()}, expected about '
                          f'{want.round(3).tolist()} (softmax(logits / T))')
    return Passed(f'greedy as T -> 0 on 3 programs, reproducible with a seeded rng, and the '
                  f'next-token law matches softmax(logits / T) at T = 0.5, 1, 2 '
                  f'({n_draws} draws each, total variation <= 0.05)')


@checker('1.7')
def check_1_7(decode_window, n_steps=40):
    """``decode_window(tokens, params, n_steps)`` keeps going past block_size with a sliding window."""
    checked = 0
    for i, params in enumerate(_programs(7)):
        params['pos_emb'] = params['pos_emb'][:8]  # block_size 8, far below n_steps
        rng = np.random.default_rng(300 + i)
        for _ in range(3):
            prompt = rng.integers(0, len(params['tok_emb']), size=rng.integers(1, 8))
            want = decode(prompt, params, max_steps=n_steps, window=True, cache=False).tolist()
            got = guard.call(decode_window, prompt.copy(), params, n_steps,
                             what='your decode', on=f'prompt {prompt.tolist()}')
            got = _tokens_out(got, 'your decode output')
            if got != want:
                k = next((j for j, (a, b) in enumerate(zip(got, want)) if a != b),
                         min(len(got), len(want)))
                raise Finding(f'program {i}, prompt {prompt.tolist()}, block_size 8, {n_steps} '
                              f'steps: first difference at position {k}: expected '
                              f'{want[k] if k < len(want) else "end"}, got '
                              f'{got[k] if k < len(got) else "end"} (expected {len(want)} tokens, '
                              f'got {len(got)})', prompt.tolist())
            checked += 1
    return Passed(f'{checked} seeded prompts decoded {n_steps} steps with block_size 8; every token '
                  f'is the argmax over the last 8 tokens')


def rotation_fixing_ones(d, rng):
    """A random orthonormal d x d matrix with (1, ..., 1) @ M = (1, ..., 1)."""
    basis = np.linalg.qr(np.column_stack([np.ones(d), rng.normal(size=(d, d - 1))]))[0]
    basis[:, 0] = np.ones(d) / d ** 0.5                    # first column: the all-ones direction
    rotation = np.linalg.qr(rng.normal(size=(d - 1, d - 1)))[0]
    inner = np.eye(d)
    inner[1:, 1:] = rotation
    return basis @ inner @ basis.T


@checker('1.8')
def check_1_8(scramble_transformer, n_cases=4):
    """``scramble_transformer(tok_emb, pos_emb, out_emb, layers, lnf, M)`` keeps the function."""
    checked = 0
    for i, params in enumerate(_programs(8)):
        rng = np.random.default_rng(400 + i)
        d = params['tok_emb'].shape[1]
        M = rotation_fixing_ones(d, rng)
        before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in params.items()}
        out = guard.call(scramble_transformer, params['tok_emb'], params['pos_emb'],
                         params['out_emb'], params['layers'], params['lnf'], M,
                         what='your scramble_transformer', on=f'program {i}')
        if not isinstance(out, (tuple, list)) or len(out) != 5:
            raise Finding('expected a tuple of 5 rewritten pieces in the input order (tok_emb, '
                          f'pos_emb, out_emb, layers, lnf); got {type(out).__name__}')
        if not np.array_equal(params['tok_emb'], before['tok_emb']):
            raise Finding('your function changed the input tok_emb in place; return new arrays')
        new = dict(zip(('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf'), out))
        guard.program(new, what='your scrambled params')
        if not np.allclose(new['tok_emb'], params['tok_emb'] @ M, atol=1e-9):
            raise Finding(f'program {i}: new_tok_emb should equal tok_emb @ M')
        for _ in range(n_cases):
            tokens = rng.integers(0, len(params['tok_emb']), size=rng.integers(1, 12))
            want = transformer(tokens, **params)
            got = guard.run_program(lambda: transformer(tokens, **new), what='your scrambled params')
            if not np.allclose(got, want, rtol=1e-7, atol=1e-7):
                err = np.max(np.abs(got - want))
                raise Finding(f'program {i} (layers {len(params["layers"])}), tokens '
                              f'{tokens.tolist()}: the scrambled model\'s logits differ by up to '
                              f'{err:.2e}; every weight that reads from or writes to the residual '
                              f'stream has to change', tokens.tolist())
            checked += 1
    return Passed(f'new_tok_emb = tok_emb @ M and identical logits (1e-7) on {checked} seeded inputs '
                  f'over 3 random programs, with random M that fix the all-ones direction')


PUZZLES = [
    Puzzle('1.1', 'How short can the NumPy transformer get?', 'reflect'),
    Puzzle('1.2', 'How does the two-line self_attn2 differ from ours?', 'reflect'),
    Puzzle('1.3', 'Remove the repeated work in decode (KV cache)', 'checked', check_1_3),
    Puzzle('1.4', 'Rewrite the transformer with @ instead of einsum', 'checked', check_1_4),
    Puzzle('1.5', 'Port the transformer to another language', 'reflect'),
    Puzzle('1.6', 'Temperature sampling', 'checked', check_1_6),
    Puzzle('1.7', 'Decode past block_size with a sliding window', 'checked', check_1_7),
    Puzzle('1.8', 'scramble_transformer: rotate the residual basis, keep the function',
           'checked', check_1_8),
    Puzzle('1.9', 'Guess layers, widths, parameter counts before reading on', 'reflect'),
    Puzzle('1.10', 'How would you improve the architecture?', 'reflect'),
]
