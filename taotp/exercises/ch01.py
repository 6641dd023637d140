"""Checkers for Chapter 1, The Transformer.

Every expected answer comes from the package's one forward pass (``transformer``
and ``decode``, which the tests compare with the independent loop reference).

The package itself holds the book's answers to 1.3, 1.4, 1.6 and 1.7 (its cached,
sampling and windowed decoders and its forward pass), so a submission that hands
the work back to them is told so: ``_own_call`` watches which of the package's
functions a submission enters (``sys.settrace``; helpers such as ``layer_norm``
and ``softmax`` stay allowed).

``guard.frozen`` reads a submitted program once into plain float64 arrays; the
checkers count, check and run that copy only.
"""
import copy
import functools
import sys
import time
import types
from contextlib import contextmanager
from types import MappingProxyType

import numpy as np

from .. import decoding, model, reference
from .. import trace as trace_module
from ..decoding import decode, transformer, transformer_batch
from ..model import attention_weights, causal_mask, layer_norm, mlp, self_attn, softmax
from ..params import base_layer, base_params, params_difference
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed

ALPHA = 1e-6   # the chance that the sampling test of 1.6 fails a right answer, at most


# ----------------------------------------------------------------------------- shared helpers

def _functions(module, skip=()):
    """Code object -> display name of every function and method defined in ``module``."""
    short = module.__name__
    found = {}
    for name, obj in vars(module).items():
        if getattr(obj, '__module__', None) != module.__name__ or name in skip:
            continue
        if isinstance(obj, types.FunctionType):
            found[obj.__code__] = f'{short}.{name}'
        elif isinstance(obj, type):
            for attr, member in vars(obj).items():
                if isinstance(member, types.FunctionType):
                    found[member.__code__] = f'{short}.{name}.{attr}'
    return found


_DECODERS = ('decode', 'decode_batch', 'decode_variant')


def _forbidden(puzzle):
    """The package functions (and np.einsum) a puzzle's submission may not call.

    A new dict each time: a submission that emptied the one it was watched with
    cannot blind the next watch.
    """
    return dict(_forbidden_table(puzzle))


@functools.lru_cache(maxsize=None)
def _forbidden_table(puzzle):
    decoders = {c: n for c, n in _functions(decoding).items()
                if n.split('.')[-1] in _DECODERS}
    if puzzle == '1.3':
        return {**decoders, **{c: n for c, n in _functions(decoding).items()
                               if 'KVCache' in n or '_LayerCache' in n}}
    if puzzle == '1.4':
        helpers = ('norm', 'softmax', 'layer_norm', 'rms_norm', 'no_norm', 'norm_function',
                   'causal_mask')
        return {**_functions(model, skip=helpers), **_functions(decoding),
                **_functions(reference), **_functions(trace_module),
                _einsum_code(): 'np.einsum'}
    if puzzle == '1.6':
        return {**decoders, decoding._next_token.__code__: 'taotp.decoding._next_token'}
    return decoders                                   # 1.7


def _einsum_code():
    implementation = getattr(np.einsum, '_implementation', np.einsum)
    return getattr(implementation, '__code__', None)


HINTS = MappingProxyType({
    '1.3': 'which is the package\'s own decoder: keep the keys and values yourself '
           '(taotp.layer_norm and taotp.softmax are fine to use)',
    '1.4': 'and this puzzle asks you to write the forward pass yourself with @ (np.matmul): '
           'taotp.layer_norm and taotp.softmax are fine to use, einsum and the package\'s '
           'forward pass are not',
    '1.6': 'which already samples (decode(..., temperature=T, rng=rng)): draw each token '
           'yourself from softmax(logits / T); taotp.transformer gives the logits',
    '1.7': 'which already slides the window (decode(..., window=True)): feed the last '
           'block_size tokens to taotp.transformer yourself',
})


def _own_call(puzzle, fn, *args, what, on=None, **kwargs):
    """``guard.call`` that also refuses a submission handing the work to the package."""
    with guard.watching(_forbidden(puzzle)) as seen:
        out = guard.call(fn, *args, what=what, on=on, **kwargs)
    if seen == ['sys.settrace']:
        raise Finding(f'{what} switches off the checker\'s watch (sys.settrace); the check '
                      f'needs to see which functions your code calls', on)
    if seen:
        raise Finding(f'{what} calls {seen[0]}, {HINTS[puzzle]}', on)
    return out


def _tokens_out(value, what):
    arr = guard.array(value, what=what, integer=True)
    if arr.ndim != 1:
        raise Finding(f'{what} must be a flat list of token ids; got shape {arr.shape}')
    return arr.tolist()


def _norm(rng, d, kind):
    if kind == 'vector':
        return {'gamma': 0.5 + rng.random(d), 'beta': 0.5 * rng.normal(size=d)}
    if kind == 'scalar':
        return {'gamma': float(0.5 + rng.random()), 'beta': float(0.5 * rng.normal())}
    return {'gamma': 1.0, 'beta': 0.0}


def random_program(rng, vocab, block, d_model, layers, norms='default', scale=1.0):
    """A random program; ``layers`` holds ``(n_heads, d_head, d_value, d_ff)`` per layer."""
    p = base_params(vocab, block, d_model)
    for key in ('tok_emb', 'pos_emb', 'out_emb'):
        p[key] = scale * rng.normal(size=p[key].shape)
    for n_heads, d_head, d_value, d_ff in layers:
        layer = base_layer(n_heads, d_model, d_ff, d_head)
        layer['V'] = np.zeros((n_heads, d_model, d_value))
        layer['P'] = np.zeros((n_heads, d_model, d_value))
        for key in ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2'):
            layer[key] = scale * rng.normal(size=layer[key].shape)
        layer['ln1'], layer['ln2'] = _norm(rng, d_model, norms), _norm(rng, d_model, norms)
        p['layers'].append(layer)
    p['lnf'] = _norm(rng, d_model, norms)
    return p


SHAPES = (   # (vocab, d_model, layer norms, layers as (n_heads, d_head, d_value, d_ff))
    (7, 8, 'vector', ((2, 3, 3, 5), (2, 3, 3, 5))),
    (5, 6, 'scalar', ((3, 2, 2, 0),) * 3),
    (11, 12, 'default', ((1, 12, 12, 9),)),
    (2, 4, 'vector', ((0, 1, 1, 6), (3, 1, 4, 3))),       # a layer without heads; d_v != d_head
)
SCOPE = ('4 random programs (1 to 3 layers, up to 3 heads, a layer without heads, '
         'd_value != d_head, d_ff = 0, vector and scalar layer norms)')


def _programs(seed, norms=None, block=24):
    """The four shapes of ``SHAPES`` with seeded random weights."""
    rng = np.random.default_rng(seed)
    return [random_program(rng, vocab, block, d, layers, norms or kind)
            for vocab, d, kind, layers in SHAPES]


def _describe(i, params):
    heads = [len(layer['Q']) for layer in params['layers']]
    return f'program {i} ({len(heads)} layers, heads {heads})'


# ----------------------------------------------------------------------------- 1.3

STEPS_1_3 = 200


def _decode_cases(params, rng):
    """Prompts, step counts and eos for one program: boundaries first, then random."""
    vocab, block = len(params['tok_emb']), len(params['pos_emb'])
    full = rng.integers(0, vocab, size=block)
    first = int(decode(full[:2], params, max_steps=1, cache=False)[-1])
    cases = [([vocab - 1], block, None),              # one token in, fills the block
             (full.tolist(), 1, None),                # a full block in, one step
             (full[:3].tolist(), 0, None),            # no steps at all
             (full[:2].tolist(), block - 1, first)]   # eos is the very first token
    for _ in range(4):
        n = int(rng.integers(1, block))
        eos = int(rng.integers(0, vocab)) if rng.random() < 0.5 else None
        cases.append((rng.integers(0, vocab, size=n).tolist(),
                      int(rng.integers(1, block - n + 2)), eos))
    return cases


class _Counted(np.ndarray):
    """A weight that counts the d_model-vectors it is multiplied with (checker 1.3).

    Products (``@``, ``np.dot``, ``np.einsum``, ...) add ``size // d_model`` of
    every other array operand to ``tally[0]``; results are plain arrays.  Copies
    and views keep counting; ``np.asarray`` drops the counter (the count is a
    reason to refuse, never to accept: a decode that converts the weights is
    judged by the speed test alone, and its PASS line says so).
    """

    PRODUCTS = ('dot', 'einsum', 'tensordot', 'inner', 'matmul', 'vdot', 'outer', 'kron')

    def __array_finalize__(self, obj):
        self.tally = getattr(obj, 'tally', None)

    def _count(self, operands):
        if self.tally is None:
            return
        for x in operands:
            if isinstance(x, np.ndarray) and not isinstance(x, _Counted):
                self.tally[0] += x.size // self.tally[1]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc is np.matmul and method == '__call__':
            self._count(inputs)
        if 'out' in kwargs:
            kwargs['out'] = tuple(_plain(x) for x in kwargs['out'])
        return getattr(ufunc, method)(*(_plain(x) for x in inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func.__name__ in self.PRODUCTS:
            self._count([a for a in args if isinstance(a, np.ndarray)])
        return func(*_plain(args), **_plain(kwargs))


def _plain(x):
    if isinstance(x, _Counted):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _counted(params):
    """A copy of ``params`` whose Q, K, V and M1 count their uses; and the tallies."""
    params = copy.deepcopy(params)
    d = params['tok_emb'].shape[1]
    tallies = {}
    for i, layer in enumerate(params['layers']):
        for key in ('Q', 'K', 'V', 'M1'):
            if layer[key].size:
                layer[key] = layer[key].view(_Counted)
                layer[key].tally = tallies[(i, key)] = [0, d]
    return params, tallies


SPEEDUP_1_3 = 3.0   # the naive loop measures 1.2-1.5x slower than a lean naive loop of its own
                    # at this size, and 10-20x slower than a cache (the package's, the reference)
SPEED_SHAPE = dict(vocab=7, prompt=8, d_model=64, layers=((4, 16, 16, 256),) * 2)


def _speed_program(rng):
    """2 layers, 4 heads, d_model 64, d_ff 256: 200 steps take the naive loop a few tenths of a
    second.  Drawn afresh for every check (``rng`` from fresh entropy), with its prompts, so
    that no answer can hold a table of the runs it will be timed on."""
    shape = SPEED_SHAPE
    return random_program(rng, shape['vocab'], STEPS_1_3 + shape['prompt'], shape['d_model'],
                          shape['layers'], 'vector', scale=0.5)


@checker('1.3')
def check_1_3(decode_fast):
    """``decode_fast(tokens, params, max_steps, eos)``: the naive tokens, each position once."""
    cases = 0
    for i, params in enumerate(_programs(3)):
        rng = np.random.default_rng(100 + i)
        for prompt, steps, eos in _decode_cases(params, rng):
            on = f'{_describe(i, params)}, prompt {prompt}, max_steps {steps}, eos {eos}'
            got = _tokens_out(_own_call('1.3', decode_fast, np.array(prompt),
                                        copy.deepcopy(params), steps, eos,
                                        what='your decode', on=on), 'your decode output')
            want = decode(prompt, params, max_steps=steps, eos=eos, cache=False).tolist()
            if got != want:
                raise Finding(f'{on}: expected {want}, got {got}', prompt)
            cases += 1
    # work and speed: a program and prompts nobody can know in advance
    speed_rng = np.random.default_rng()
    params = _speed_program(speed_rng)
    prompts = [speed_rng.integers(0, SPEED_SHAPE['vocab'], size=SPEED_SHAPE['prompt'])
               for _ in range(6)]
    size = f'{STEPS_1_3}-step run (2 layers, 4 heads, d_model {SPEED_SHAPE["d_model"]})'
    # work: how often each weight meets a position, on a long run
    counted, tallies = _counted(params)
    got = _tokens_out(_own_call('1.3', decode_fast, prompts[0].copy(), counted, STEPS_1_3, None,
                                what='your decode'), 'your decode output')
    want = decode(prompts[0], params, max_steps=STEPS_1_3).tolist()
    if got != want:
        k = next((j for j, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        raise Finding(f'a {size}, prompt {prompts[0].tolist()}: first difference at position {k} '
                      f'(expected {len(want)} tokens, got {len(got)}); does your cache keep every '
                      f'position?', prompts[0].tolist())
    needed = len(want) - 1                       # every position but the last one is fed in
    (layer, key), uses = max(((k, t[0]) for k, t in tallies.items()), key=lambda kv: kv[1])
    if uses > 2 * len(want):
        naive = sum(range(len(prompts[0]), len(want)))
        raise Finding(f'tokens right, but to decode {STEPS_1_3} tokens after the '
                      f'{len(prompts[0])}-token prompt your decode multiplied {uses:,} position '
                      f'vectors by layer {layer}\'s {key}; each of the {needed} positions needs it '
                      f'once (the naive loop redoes them all at every step: {naive:,}): keep what '
                      f'earlier positions computed instead of recomputing it')
    counted_note = (f'each weight met at most {uses} position vectors for {needed} positions'
                    if uses >= needed else
                    'work not counted (your decode converts the weights, e.g. with np.asarray, '
                    'which hides the products from the checker: the speed test decides)')
    # speed: fresh prompts (nothing to remember from an earlier call), fresh copies of the program

    def timed(fn, prompt):
        start = time.perf_counter()
        out = fn(prompt)
        return time.perf_counter() - start, out

    naive = min(timed(lambda x: decode(x, params, max_steps=STEPS_1_3, cache=False), p)[0]
                for p in prompts[1:3])
    yours = []
    for prompt in prompts[3:]:
        seconds, out = timed(lambda x: _own_call('1.3', decode_fast, x.copy(),
                                                 copy.deepcopy(params), STEPS_1_3, None,
                                                 what='your decode'), prompt)
        if _tokens_out(out, 'your decode output') != decode(prompt, params,
                                                            max_steps=STEPS_1_3).tolist():
            raise Finding(f'a {size} from prompt {prompt.tolist()} gave different tokens than '
                          f'the naive loop', prompt.tolist())
        yours.append(seconds)
    speedup = naive / max(min(yours), 1e-9)
    if speedup < SPEEDUP_1_3:
        raise Finding(f'tokens right, but a {size} took {min(yours):.3f} s vs {naive:.3f} s for '
                      f'the naive loop ({speedup:.1f}x; at least {SPEEDUP_1_3:.0f}x expected): '
                      f'what else does every step recompute?')
    return Passed(f'the naive loop\'s tokens on {cases} seeded prompts over {SCOPE}, incl. '
                  f'full blocks, 0 steps and an early eos, and on {STEPS_1_3}-step runs of a '
                  f'program and prompts drawn afresh; {counted_note}; about {speedup:.0f}x faster '
                  f'than the naive loop (at least {SPEEDUP_1_3:.0f}x needed)')


# ----------------------------------------------------------------------------- 1.4

@checker('1.4')
def check_1_4(transformer_at):
    """``transformer_at(tokens, tok_emb, pos_emb, out_emb, layers, lnf)``: the logits, to 1e-9."""
    checked = 0
    for i, params in enumerate(_programs(4)):
        rng = np.random.default_rng(200 + i)
        vocab, block = len(params['tok_emb']), len(params['pos_emb'])
        inputs = [np.array([vocab - 1]), rng.integers(0, vocab, size=block),
                  rng.integers(0, vocab, size=int(rng.integers(2, block))),
                  np.arange(block) % vocab]
        for tokens in inputs:
            on = f'{_describe(i, params)}, tokens {tokens.tolist()}'
            got = _own_call('1.4', transformer_at, tokens.copy(), what='your transformer',
                            on=on, **copy.deepcopy(params))
            want = transformer(tokens, **params)     # after the call: not in any frame before
            got = guard.array(got, want.shape, what='your logits')
            err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
            if not err < 1e-9:
                row = int(np.argmax(np.abs(got - want).max(-1)))
                raise Finding(f'{on}: logits differ by {err:.2e} (relative); at position {row} '
                              f'expected {want[row, :3].round(4)}..., got '
                              f'{got[row, :3].round(4)}...', tokens.tolist())
            checked += 1
    return Passed(f'logits equal the book\'s to 1e-9 on {checked} seeded inputs (1 token to a '
                  f'full block) over {SCOPE}; no einsum and no call into the package\'s '
                  f'forward pass')


# ----------------------------------------------------------------------------- 1.6

GREEDY_GAP = 0.05   # logit gap along the greedy checks: P(a non-argmax draw) < 4 exp(-500)


def _greedy_cases():
    """(program, prompt) pairs whose greedy path of 6 steps never has a near tie (copies)."""
    return [(copy.deepcopy(p), prompt.copy()) for p, prompt in _greedy_table()]


@functools.lru_cache(maxsize=1)
def _greedy_table():
    cases = []
    for i, p in enumerate(_programs(6)):
        rng = np.random.default_rng(600 + i)
        for _ in range(200):
            prompt = rng.integers(0, len(p['tok_emb']), size=3)
            seq = decode(prompt, p, max_steps=6, cache=False)
            logits = np.sort(transformer(seq[:-1], **p)[2:], axis=-1)
            if np.min(logits[:, -1] - logits[:, -2]) > GREEDY_GAP:
                cases.append((p, prompt))
                break
    return cases


def _sampling_program():
    """1 layer, vocabulary 4, block 10: a next-token law that depends on the whole context.

    Built anew at each call (cheap), so the program the laws are computed on is
    one no submission has seen.

    Chosen among seeded programs so that the laws are spread (at T = 0.5 the likeliest
    token has about 0.7 on average), vary with the context, and differ between the
    temperatures by more than the test's margin.
    """
    return random_program(np.random.default_rng(29), 4, 10, 8, ((2, 4, 4, 8),), 'vector',
                          scale=0.4)


SAMPLING = MappingProxyType(dict(prompt=(2, 0), steps=8, runs=300,
                                  temperatures=(0.5, 1.0, 2.0)))


def _law_margin(n, tests):
    """Hoeffding-Azuma: a right sampler strays further with probability <= ALPHA / tests."""
    return float(np.sqrt(np.log(2 * tests / ALPHA) / (2 * n)))


@checker('1.6')
def check_1_6(sample_decode):
    """``sample_decode(tokens, params, max_steps, temperature, rng)``: the law at every step."""
    what = 'your sampler'

    def run(prompt, params, steps, temperature, rng, traced=True, on=None):
        args = (np.array(prompt), copy.deepcopy(params), steps, temperature, rng)
        out = (_own_call('1.6', sample_decode, *args, what=what, on=on) if traced else
               guard.call(sample_decode, *args, what=what, on=on))
        out = _tokens_out(out, 'your sampler output')
        vocab = len(params['tok_emb'])
        if len(out) != len(prompt) + steps or out[:len(prompt)] != list(prompt) \
                or not all(0 <= t < vocab for t in out):
            raise Finding(f'prompt {list(prompt)}, max_steps {steps}: expected the prompt '
                          f'followed by {steps} token ids in 0..{vocab - 1}; got {out}',
                          list(prompt))
        return out
    # 1) temperature -> 0 is greedy, along whole runs (no near ties on these paths)
    for p, prompt in _greedy_cases():
        want = decode(prompt, p, max_steps=6, cache=False).tolist()
        got = run(prompt.tolist(), p, 6, 1e-4, np.random.default_rng(0),
                  on=f'prompt {prompt.tolist()} at temperature 1e-4')
        if got != want:
            raise Finding(f'at temperature 1e-4 sampling is greedy: prompt {prompt.tolist()}, '
                          f'expected {want}, got {got}', prompt.tolist())
    # 2) the same seed gives the same tokens (no hidden random state)
    params, prompt, steps = _sampling_program(), list(SAMPLING['prompt']), SAMPLING['steps']
    runs = [run(prompt, params, steps, 1.0, np.random.default_rng(42)) for _ in range(2)]
    if runs[0] != runs[1]:
        raise Finding(f'two runs with rng=np.random.default_rng(42) gave {runs[0]} and '
                      f'{runs[1]}; draw from the rng you are given, not from np.random')
    run(prompt, params, 0, 1.0, np.random.default_rng(0))
    # 3) the law of every step: seeded runs, each token against softmax(logits / T) of its prefix
    n, vocab, temps = SAMPLING['runs'], len(params['tok_emb']), SAMPLING['temperatures']
    tests = len(temps) * (steps + 1) * vocab
    per_step, pooled = _law_margin(n, tests), _law_margin(n * steps, tests)
    start = len(prompt)
    for temperature in temps:
        rng = np.random.default_rng(int(temperature * 100))
        runs = np.array([run(prompt, params, steps, temperature, rng, traced=k == 0)
                         for k in range(n)])
        laws = _sampling_program()                   # the same program, never handed out
        probs = softmax(transformer_batch(runs[:, :-1], laws)[:, start - 1:] / temperature)
        drawn = np.eye(vocab)[runs[:, start:]]                  # (n, steps, vocab) one-hot
        where = f'at temperature {temperature}, {n} seeded runs of {steps} steps from {prompt}'
        margin = ('; a right sampler stays within {:.3f} of that (this test fails a right '
                  f'answer with probability below {ALPHA:g})')
        for s in range(steps):
            gap = drawn[:, s].mean(0) - probs[:, s].mean(0)
            v = int(np.argmax(np.abs(gap)))
            if abs(gap[v]) > per_step:
                raise Finding(f'{where}: at step {s + 1} token {v} came '
                              f'{drawn[:, s, v].mean():.3f} of the time, but softmax(logits / T) '
                              f'of the sequences so far gives it {probs[:, s, v].mean():.3f} on '
                              f'average' + margin.format(per_step))
        gap = drawn.mean((0, 1)) - probs.mean((0, 1))
        v = int(np.argmax(np.abs(gap)))
        if abs(gap[v]) > pooled:
            raise Finding(f'{where}: over all steps token {v} came {drawn[..., v].mean():.3f} of '
                          f'the time, but softmax(logits / T) of the sequences so far gives it '
                          f'{probs[..., v].mean():.3f} on average' + margin.format(pooled))
    return Passed(f'greedy at T = 1e-4 on 4 programs, reproducible with a seeded rng, and at '
                  f'T = 0.5, 1, 2 every one of {steps} steps of {n} runs follows '
                  f'softmax(logits / T) of its own prefix (token frequencies per step within '
                  f'{per_step:.3f}, over all steps within {pooled:.3f}: a right sampler fails '
                  f'with probability < {ALPHA:g})')


# ----------------------------------------------------------------------------- 1.7

BLOCKS_1_7 = (8, 5, 1, 13)


@checker('1.7')
def check_1_7(decode_window):
    """``decode_window(tokens, params, n_steps)``: past block_size with a sliding window."""
    checked = 0
    for i, (params, block) in enumerate(zip(_programs(7), BLOCKS_1_7)):
        params['pos_emb'] = params['pos_emb'][:block]
        rng = np.random.default_rng(300 + i)
        vocab = len(params['tok_emb'])
        cases = [([vocab - 1], 3 * block + 2), (rng.integers(0, vocab, size=block).tolist(), 20),
                 (rng.integers(0, vocab, size=block + 3).tolist(), 2 * block + 1),
                 (rng.integers(0, vocab, size=2).tolist(), 0),
                 (rng.integers(0, vocab, size=int(rng.integers(1, block + 1))).tolist(), 40)]
        for prompt, steps in cases:
            on = f'{_describe(i, params)}, block_size {block}, prompt {prompt}, {steps} steps'
            got = _tokens_out(_own_call('1.7', decode_window, np.array(prompt),
                                        copy.deepcopy(params), steps, what='your decode', on=on),
                              'your decode output')
            want = decode(prompt, params, max_steps=steps, window=True, cache=False).tolist()
            if got != want:
                k = next((j for j, (a, b) in enumerate(zip(got, want)) if a != b),
                         min(len(got), len(want)))
                raise Finding(f'{on}: first difference at position {k}: expected '
                              f'{want[k] if k < len(want) else "end"}, got '
                              f'{got[k] if k < len(got) else "end"} (expected {len(want)} tokens, '
                              f'got {len(got)})', prompt)
            checked += 1
    return Passed(f'{checked} seeded prompts (1 token, a full block, longer than the block, '
                  f'0 steps) at block sizes 1, 5, 8 and 13 over {SCOPE}; every token is the '
                  f'argmax over the last block_size tokens, up to 40 steps')


# ----------------------------------------------------------------------------- 1.8

PIECES = ('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf')


def rotation_fixing_ones(d, rng):
    """A random orthonormal d x d matrix with (1, ..., 1) @ M = (1, ..., 1)."""
    basis = np.linalg.qr(np.column_stack([np.ones(d), rng.normal(size=(d, d - 1))]))[0]
    basis[:, 0] = np.ones(d) / d ** 0.5                    # first column: the all-ones direction
    rotation = np.linalg.qr(rng.normal(size=(d - 1, d - 1)))[0]
    inner = np.eye(d)
    inner[1:, 1:] = rotation
    return basis @ inner @ basis.T


def _matrices(d, rng, program):
    """The M of one program: a random rotation; program 0 also a permutation and a reflection."""
    out = [('a random rotation', rotation_fixing_ones(d, rng))]
    if program == 0:
        out.append(('a permutation', np.eye(d)[rng.permutation(d)]))
        flip = rotation_fixing_ones(d, rng)
        v = flip[:, 1] - flip[:, 1].mean()                 # a direction orthogonal to the ones
        v /= np.linalg.norm(v)
        out.append(('a reflection', np.eye(d) - 2 * np.outer(v, v)))
    return out


def _centred(x):
    return x - x.mean(-1, keepdims=True)     # the all-ones part of the stream never matters


def _differ(a, b, tol=1e-7):
    if np.shape(a) != np.shape(b) or not np.size(b):
        return np.shape(a) != np.shape(b)
    return not np.allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(b)))))


def _diagnose(old, new, M, rng, where):
    """The first piece of the scrambled program that does not turn with the stream."""
    tok_err = np.max(np.abs(new['tok_emb'] - old['tok_emb'] @ M))
    if not tok_err < 1e-9:
        return (f'{where}: new_tok_emb must be tok_emb @ M (each token row turned by M); '
                f'yours differs by up to {tok_err:.2e}')
    if _differ(_centred(new['pos_emb']), _centred(old['pos_emb'] @ M)):
        return (f'{where}: pos_emb: position rows are added to the same stream as the token '
                f'rows, so they must turn with them')
    X = rng.normal(size=(6, M.shape[0]))                    # residual streams of 6 positions
    Xm, mask = X @ M, causal_mask(6)
    for i, (a, b) in enumerate(zip(old['layers'], new['layers'])):
        for key in ('ln1', 'ln2'):
            if params_difference(a[key], b[key]) is not None:
                return (f'{where}: layer {i}: {key} changed from {a[key]} to {b[key]}; layer '
                        f'norm commutes with M (M keeps lengths and the direction (1, ..., 1)), '
                        f'so gamma and beta stay as they are')
        h, hm = layer_norm(X, **a['ln1']), layer_norm(Xm, **b['ln1'])
        if _differ(attention_weights(hm, b['Q'], b['K'], mask),
                   attention_weights(h, a['Q'], a['K'], mask)):
            return (f'{where}: layer {i}: the attention weights changed: queries and keys are '
                    f'computed from the rotated stream, so Q and K must undo the rotation')
        if _differ(_centred(self_attn(hm, b['Q'], b['K'], b['V'], b['P'], mask)),
                   _centred(self_attn(h, a['Q'], a['K'], a['V'], a['P'], mask) @ M)):
            return (f'{where}: layer {i}: the attention weights are right, but what the heads '
                    f'add to the stream is not the rotated update: V reads from the rotated '
                    f'stream and P writes into it')
        h, hm = layer_norm(X, **a['ln2']), layer_norm(Xm, **b['ln2'])
        if _differ(_centred(mlp(hm, b['M1'], b['b1'], b['M2'], b['b2'])),
                   _centred(mlp(h, a['M1'], a['b1'], a['M2'], a['b2']) @ M)):
            return (f'{where}: layer {i}: the MLP\'s update is not the rotated one: M1 reads '
                    f'from the rotated stream, M2 and b2 write into it (b1 lives in the hidden '
                    f'layer, not in the stream)')
    if params_difference(old['lnf'], new['lnf']) is not None:
        return (f'{where}: lnf changed from {old["lnf"]} to {new["lnf"]}; layer norm commutes '
                f'with M, so gamma and beta stay as they are')
    if _differ(layer_norm(Xm, **new['lnf']) @ new['out_emb'].T,
               layer_norm(X, **old['lnf']) @ old['out_emb'].T):
        return (f'{where}: the logits of a rotated stream changed: out_emb compares each '
                f'token with the final stream, which is now rotated')
    return None


@checker('1.8')
def check_1_8(scramble_transformer):
    """``scramble_transformer(tok_emb, pos_emb, out_emb, layers, lnf, M)`` keeps the function."""
    checked, matrices = 0, 0
    for i, params in enumerate(_programs(8, norms='scalar')):
        rng = np.random.default_rng(400 + i)
        d = params['tok_emb'].shape[1]
        for kind, M in _matrices(d, rng, i):
            where = f'{_describe(i, params)}, M {kind}'
            given, M_given = copy.deepcopy([params[k] for k in PIECES]), M.copy()
            out = guard.call(scramble_transformer, *given, M_given,
                             what='your scramble_transformer', on=where)
            changed = params_difference(dict(zip(PIECES, given)), params)
            if changed is not None or not np.array_equal(M_given, M):
                field = changed.split(':')[0] if changed is not None else 'M'
                raise Finding(f'{where}: your function changed its input {field} in place. Return '
                              f'new arrays and new layer dicts and leave the caller\'s untouched: '
                              f'the point is to have two programs computing the same function, '
                              f'and anything else sharing those arrays would change silently')
            if out is None:
                raise Finding('your scramble_transformer returned None (starter code not filled '
                              'in yet?)')
            if not isinstance(out, (tuple, list)) or len(out) != 5:
                raise Finding(f'{where}: expected the 5 rewritten pieces in the input order '
                              f'(tok_emb, pos_emb, out_emb, layers, lnf); got '
                              f'{type(out).__name__}'
                              + (f' of length {len(out)}' if isinstance(out, (tuple, list))
                                 else ''))
            new = guard.frozen(dict(zip(PIECES, out)), what=f'{where}: your scrambled pieces (in '
                               f'the order tok_emb, pos_emb, out_emb, layers, lnf)')
            problem = _diagnose(params, new, M, rng, where)
            if problem:
                raise Finding(problem)
            vocab, block = len(params['tok_emb']), len(params['pos_emb'])
            for tokens in (np.array([0]), rng.integers(0, vocab, size=block),
                           rng.integers(0, vocab, size=int(rng.integers(2, block)))):
                want = transformer(tokens, **params)
                got = guard.run_program(lambda: transformer(tokens, **new),
                                        what='your scrambled program')
                if _differ(got, want):
                    raise Finding(f'{where}, tokens {tokens.tolist()}: the scrambled program\'s '
                                  f'logits differ by up to {np.max(np.abs(got - want)):.2e}',
                                  tokens.tolist())
                checked += 1
            matrices += 1
    return Passed(f'new_tok_emb = tok_emb @ M, the caller\'s weights untouched, and the same '
                  f'logits (1e-7) on {checked} seeded inputs for {matrices} pairs of a program '
                  f'and an M that fixes (1, ..., 1) (random rotations, a permutation, a '
                  f'reflection) over {SCOPE.replace("vector and scalar", "scalar")}')


PUZZLES = [
    Puzzle('1.1', 'How short can the NumPy transformer get?', 'reflect'),
    Puzzle('1.2', 'How does the two-line self_attn2 differ from ours?', 'reflect'),
    Puzzle('1.3', 'Remove the repeated work in decode (KV cache)', 'checked', check_1_3,
           'same tokens, each position once, 3x faster'),
    Puzzle('1.4', 'Rewrite the transformer with @ instead of einsum', 'checked', check_1_4),
    Puzzle('1.5', 'Port the transformer to another language', 'reflect'),
    Puzzle('1.6', 'Temperature sampling', 'checked', check_1_6),
    Puzzle('1.7', 'Decode past block_size with a sliding window', 'checked', check_1_7),
    Puzzle('1.8', 'scramble_transformer: rotate the residual basis, keep the function',
           'checked', check_1_8),
    Puzzle('1.9', 'Guess layers, widths, parameter counts before reading on', 'reflect'),
    Puzzle('1.10', 'How would you improve the architecture?', 'reflect'),
]
