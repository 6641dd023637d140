"""Checkers for Chapter 1, The Transformer.

Expected answers come from the package's forward pass (``decode``, ``transformer``).  Each
check draws a program of each shape in ``SHAPES`` from a new seed, and three hard ones
(sharp attention, a faint stream, tied logits; 1.7 runs the last only); a message names
the seed, and ``case_programs(seed)`` rebuilds them.  Puzzles 1.3, 1.4, 1.6 and 1.7 ask for what the
package already does; while they are checked, those functions are switched off (``refuse``).
"""
import numpy as np

from .. import model, reference
from ..decoding import decode, transformer, transformer_batch
from ..model import causal_mask, layer_norm, mlp, self_attn, softmax
from ..params import params_difference
from . import toolkit as tk
# the programs the checkers run; the notebooks name them as taotp.exercises.ch01.<name>
from .ch01_programs import (COLD_VOCABS, DEEP, FRESH_VOCABS, SCOPE, SHAPES,  # noqa: F401
                            HARD_SCOPE, LONG_BLOCK, TIED, TOP_BLOCK, case_programs,
                            decode_cases, deep_temperatures, fresh_sampling_program, long_program,
                            random_program, sampling_program, token_copier)
from .draws import ALPHA, BINS, freedman_margin, hoeffding_margin, martingales, tests_for
from .registry import Puzzle, checker
from .result import Finding, Passed

# ----------------------------------------------------------------------------- programs

HARD_KINDS = ('', ', sharp attention', ', a faint stream', ', tied logits')   # by program


def _fresh_cases(offset, norms=None, seed=None, hard=True):
    """(name, params, rng) per program i of ``case_programs(seed)`` (a fresh seed by default):
    its name for messages, and ``rng``, seeded ``[seed, offset + i]``, for its inputs."""
    seed = tk.fresh_seed() if seed is None else seed
    for i, params in enumerate(case_programs(seed, norms, hard)):
        heads = [len(layer['Q']) for layer in params['layers']]
        yield (f'program {i} of case_programs({seed}) ({len(heads)} layers, heads {heads}'
               f'{HARD_KINDS[max(0, i - len(SHAPES) + 1)]})',
               params, np.random.default_rng([seed, offset + i]))


def _first_difference(got, want):
    k = next((j for j, (a, b) in enumerate(zip(got, want)) if a != b), None)
    if k is None:
        return f'your output has {len(got)} tokens where {len(want)} are due'
    return f'your token at position {k} ({got[k]}) is not the argmax there'


def _same_tokens(decoder, on, prompt, params, args, hint='', naive=True, **options):
    """``decoder(prompt, params, *args)`` must give the tokens of the naive
    ``decode(prompt, params, **options)`` (the package's cache where ``naive`` is False: long
    runs), computed after the answer returned.  ``on`` names the case; a long prompt is the
    result's ``.counterexample``."""
    got = tk.tokens(tk.call(decoder, np.array(prompt), params, *args, what='your decode', on=on),
                    'your decode output')
    want = decode(prompt, params, cache=not naive, **options).tolist()
    if got != want:
        if not np.any(params['out_emb']):          # the tied program (round 26)
            hint += '; where logits tie, the argmax is the first of them, as np.argmax gives'
        on, shown = (on, got) if len(prompt) <= 64 else \
            (f'{on}; after the prompt', got[len(prompt):])
        raise tk.wrong(on, shown, _first_difference(got, want) + hint, list(prompt))


# ----------------------------------------------------------------------------- 1.3

WORK_SHAPE = (7, 8, 128, ((4, 32, 32, 512),) * 2)   # vocab, prompt length, d_model, layers
WORK_STEPS = (500, 601)    # the long run's length, drawn afresh: a naive loop redoes ~T/2
                           # positions per token, 12x or more the work of a cache at this length
WORK_RATIO = 5.0           # CPU time at most this many times the package's own cache
CALL_LIMIT = 20            # seconds: the judge's limit on one call (judge.CALL_SECONDS)
LONG_1_3 = (700, 2048, 660, 5)   # the long copiers: a block from 700 to 2,048, read 660 or
                                 # more back; a block of 2,048, read before position 5


def _long_prompt_case(decode_fast, rng, block=64, length=(40, 61), back=32, first=None):
    """A prompt of 40 to 60 tokens on the copier of a position from 1 to 32 or more before its
    end (round 13: a cache that kept position 0 and the last 31 passed the copier of 0); or
    of a ``length`` drawn from that range, ``back`` or more before its end, or, given
    ``first``, at a position from 1 to ``first - 1``."""
    vocab, length = int(rng.integers(3, 9)), int(rng.integers(*length))
    position, token = int(rng.integers(1, first or length - back)), int(rng.integers(0, vocab))
    prompt = rng.choice(np.delete(np.arange(vocab), token), length)   # the token once only
    prompt[position] = token
    prompt = prompt.tolist()
    shown = f'prompt {prompt}' if length <= 64 else f'a prompt of {length} tokens'
    on = (f'token_copier({vocab}, {block}, {position}) (it repeats the token at position '
          f'{position}), {shown}, max_steps {block - length}')
    _same_tokens(decode_fast, on, prompt, token_copier(vocab, block, position),
                 (block - length, None), '; does your cache keep every position?',
                 naive=length <= 64, max_steps=block - length)


def _work_run(decode_fast, rng):
    """One long run of a fresh length on a fresh 2-layer program (d_model 128): the answer's
    CPU time (the least of two runs when it is quick) and the package cache's (least of two)."""
    vocab, length, d_model, layers = WORK_SHAPE
    steps = int(rng.integers(*WORK_STEPS))
    params = random_program(rng, vocab, length + steps + 1, d_model, layers, 'vector', scale=0.5)
    on = f'a fresh {steps}-step run (2 layers, 4 heads, d_model 128)'
    session, yours, cache = decode_fast.session, [], []
    while len(yours) < 2 and (not yours or yours[0] < 1.0):   # a quick run is measured twice
        prompt = rng.integers(0, vocab, size=length)
        start = tk.cpu_clock()
        want = decode(prompt, params, max_steps=steps).tolist()
        cache.append(tk.cpu_clock() - start)
        limit = min(CALL_LIMIT, max(4.0, 12 * min(cache)))   # a naive loop needs 12x or more
        try:
            got = tk.tokens(tk.call(decode_fast, prompt, params, steps, None,
                                    what='your decode', on=on, seconds=limit),
                            'your decode output')
        except Finding as f:
            if 'took longer than' not in f.message:
                raise
            raise Finding(f'tokens right on the short cases, but {on} took your decode more '
                          f'than {limit:.0f} s of wall time, where the package\'s cache takes '
                          f'{min(cache):.2f} s: keep what earlier positions computed instead of '
                          f'recomputing it') from None
        yours.append(session.last_cpu if session.last_cpu is not None else session.last_wall)
        if got != want:
            raise tk.wrong(on + f' from prompt {prompt.tolist()}', got[len(prompt):],
                           _first_difference(got, want) + '; does your cache keep every position?')
    return steps, min(yours), min(cache)


EXTRAS_OFF = dict.fromkeys(('taotp.train.*', 'taotp.export.*', 'taotp.interop.*'),
                           'the PyTorch, TransformerLens and tracr models of the package are '
                           'switched off here (each runs a forward pass)')
REFERENCE_OFF = {f'taotp.reference.{name}': 'the loop reference is switched off here'
                 for name, f in vars(reference).items()      # its parts too (round 7)
                 if callable(f) and getattr(f, '__module__', '') == reference.__name__}
REFUSE_1_3 = EXTRAS_OFF | REFERENCE_OFF | dict.fromkeys(
    ('taotp.decoding.decode', 'taotp.decoding.decode_batch', 'taotp.decoding.decode_variant',
     'taotp.decoding.KVCache', 'taotp.decoding.transformer', 'taotp.decoding.transformer_batch',
     'taotp.model.forward', 'taotp.model.transformer_layer'),
    'keep the keys and values yourself (taotp.layer_norm and taotp.softmax are fine to use)')


@checker('1.3')
def check_1_3(decode_fast):
    """``decode_fast(tokens, params, max_steps, eos)``: the naive tokens, each position once."""
    cases = 0
    for name, params, rng in _fresh_cases(0):
        for prompt, steps, eos in decode_cases(params, rng):
            on = f'{name}, prompt {prompt}, max_steps {steps}, eos {eos}'
            _same_tokens(decode_fast, on, prompt, params, (steps, eos), max_steps=steps, eos=eos)
            cases += 1
    rng = tk.fresh_rng()
    _long_prompt_case(decode_fast, rng)
    low, top, back, first = LONG_1_3                     # round 17: a ring of 640 passed
    block = int(10 ** rng.uniform(np.log10(low), np.log10(top)))
    _long_prompt_case(decode_fast, rng, block, (block - 16, block - 7), back)
    # round 25: a ring of 1,000 positions passed 7 checks in 12: the top block, read near its start
    _long_prompt_case(decode_fast, rng, top, (top - 16, top - 7), first=first)
    steps, yours, cache = _work_run(decode_fast, rng)
    if yours > WORK_RATIO * cache + 0.05:
        raise Finding(f'tokens right, but a fresh {steps}-step run took your decode {yours:.2f} s '
                      f'of CPU time and the package\'s cache {cache:.2f} s: more than '
                      f'{WORK_RATIO:g}x the work of a cache. Keep what earlier positions '
                      f'computed instead of recomputing it')
    return Passed(f'the naive loop\'s tokens on {cases} cases over {HARD_SCOPE}, incl. full '
                  f'blocks, 0 steps and an early eos, and on a prompt of 40 to 60 tokens whose '
                  f'token at a position drawn 32 or more before its end is read at every step, '
                  f'and the same 8 to 16 tokens short of a block of 700 to 2,048 with the '
                  f'position 660 or more before the end, and of a block of 2,048 with the '
                  f'position among the first five (1 to 4, so a cache that keeps fewer than '
                  f'2,043 positions fails); a run of 500 to 600 steps on a fresh program with '
                  f'd_model 128 took at most {WORK_RATIO:g}x the CPU time of the package\'s own '
                  f'cache; no call to the package\'s decoders or forward pass')


# ----------------------------------------------------------------------------- 1.4

HELPERS = ('norm', 'softmax', 'layer_norm', 'rms_norm', 'no_norm', 'norm_function', 'causal_mask')
REFUSE_1_4 = {**EXTRAS_OFF,
              **{f'taotp.model.{name}': 'this puzzle asks you to write the forward pass '
                 'yourself with @ (np.matmul); taotp.layer_norm and taotp.softmax are fine'
                 for name, f in vars(model).items()
                 if callable(f) and getattr(f, '__module__', '') == model.__name__
                 and name not in HELPERS and not name.startswith('_')},
              **{f'taotp.decoding.{name}': 'the package\'s forward pass is switched off here'
                 for name in ('transformer', 'transformer_batch', 'transformer_variant',
                              'decode', 'KVCache')},
              **REFERENCE_OFF,
              'taotp.trace.trace': 'the package\'s forward pass is switched off here',
              'numpy.einsum': 'this puzzle is about writing it with @ instead of einsum'}
# other array libraries' einsum (round 26: torch.einsum passed 8 checks in 10): their packages
# cannot be imported while 1.4 is checked.  Kept apart from REFUSE_1_4, which 8.3 reuses.
OTHER_EINSUMS_OFF = dict.fromkeys(('torch.*', 'jax.*', 'tensorflow.*', 'opt_einsum.*'),
                                  'this puzzle is about writing the products with @; other '
                                  'libraries\' einsum is switched off too')


@checker('1.4')
def check_1_4(transformer_at):
    """``transformer_at(tokens, tok_emb, pos_emb, out_emb, layers, lnf)``: the logits, to 1e-9."""
    checked, seed = 0, tk.fresh_seed()
    # round 25: a causal mask made once at 256 x 256 passed 6 checks in 10: the top block
    # (a full block of it only: each pass is long) is tried on every check
    long = [(f'long_program({seed}) (a block of {LONG_BLOCK[0]} to {LONG_BLOCK[1]})',
             long_program(seed), np.random.default_rng([seed, 1])),
            (f'long_program({seed}, {TOP_BLOCK}) (a block of {TOP_BLOCK:,})',
             long_program(seed, TOP_BLOCK), np.random.default_rng([seed, 2]))]
    for name, params, rng in [*_fresh_cases(0, seed=seed), *long]:
        vocab, block = len(params['tok_emb']), len(params['pos_emb'])
        full = rng.integers(0, vocab, size=block)
        inputs = [full] if block == TOP_BLOCK else [      # at the top, a full block only
            np.array([vocab - 1]), full, rng.integers(0, vocab, size=int(rng.integers(2, block))),
            np.arange(block) % vocab]
        for tokens in inputs:
            on = f'{name}, tokens {tk.short(tokens.tolist(), 200)}'
            got = tk.call(transformer_at, tokens, what='your transformer', on=on, **params)
            if got is None:
                raise Finding('your transformer returned None (starter code not filled in yet?)')
            want = transformer(tokens, **params)
            got = tk.array(got, want.shape, what=f'your logits on {on}')
            err = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
            if not err < 1e-9:
                row = int(np.argmax(np.abs(got - want).max(-1)))
                raise tk.wrong(on, got[row, :3].round(4), f'row {row} of your logits is off '
                               f'by {err:.1e} (relative); compare layer by layer with '
                               f'taotp.trace on {name.split(" (")[0]}')
            checked += 1
    return Passed(f'logits equal the book\'s to 1e-9 on {checked} inputs (1 token to a full '
                  f'block) over {HARD_SCOPE} and one of block {LONG_BLOCK[0]} to {LONG_BLOCK[1]}, '
                  f'and on {TOP_BLOCK:,} tokens for one of block {TOP_BLOCK:,}, the largest '
                  f'tried; no einsum (NumPy\'s or another library\'s) and no call into the '
                  f'package\'s forward pass')


# ----------------------------------------------------------------------------- 1.6

GREEDY_GAP = 0.05   # logit gaps along greedy paths: at T <= 1e-3 a non-argmax draw < 4 e^-50


def _greedy_cases(seed):
    """(name, program, prompt) triples whose greedy path of 6 steps has no near tie."""
    cases = []
    for name, p, rng in _fresh_cases(600, seed=seed, hard=False):
        for _ in range(200):
            prompt = rng.integers(0, len(p['tok_emb']), size=3)
            seq = decode(prompt, p, max_steps=6, cache=False)
            logits = np.sort(transformer(seq[:-1], **p)[2:], axis=-1)
            if np.min(logits[:, -1] - logits[:, -2]) > GREEDY_GAP:
                cases.append((name, p, prompt))
                break
    return cases


REPLAYED = 3                                # runs of each law drawn again with the same seed
SAMPLING = dict(prompt=(2, 0), steps=8, runs=300, temperatures=((0.2, 0.5), (0.5, 2.0)),
                band=(1e-3, 0.2), cold_runs=100,    # runs at the greedy check's T
                deep=(300, 2.5))    # the deep case's runs, and the T its program is made for
REFUSE_1_6 = {**EXTRAS_OFF,
              'taotp.decoding.decode': 'which already samples (decode(..., temperature=T, '
                                       'rng=rng)): draw each token yourself from softmax(logits '
                                       '/ T); taotp.transformer gives the logits',
              'taotp.decoding._next_token': 'the package\'s sampler is switched off here'}


def _e(t):
    return f'{t:.0e}'.replace('e-0', 'e-').replace('e+', 'e')    # 1e-300, 1e-3, 5e299


def _sampled(sample_decode, prompt, params, steps, temperature, seed, on=None):
    out = tk.tokens(tk.call(sample_decode, np.array(prompt), params, steps, temperature,
                            np.random.default_rng(seed), what='your sampler', on=on),
                    'your sampler output')
    vocab = len(params['tok_emb'])
    if len(out) != len(prompt) + steps or out[:len(prompt)] != list(prompt) \
            or not all(0 <= t < vocab for t in out):
        raise Finding(f'prompt {list(prompt)}, max_steps {steps}: expected the prompt followed '
                      f'by {steps} token ids in 0..{vocab - 1}; got {tk.short(out)}', list(prompt))
    return out


@checker('1.6')
def check_1_6(sample_decode):
    """``sample_decode(tokens, params, max_steps, temperature, rng)``: the law at every step."""
    seed, rng = tk.fresh_seed(), tk.fresh_rng()
    # temperatures drawn afresh: near 0 (greedy), one from 0.2 to 0.5 and one from 0.5 to 2
    # on the shown program (round 7: no T between 1e-3 and 0.5 was tried; round 18: the
    # named T = 0.5 gave its place to a second scaled program, whose T is 1e-3 to 0.2)
    cold = float(f'{10 ** rng.uniform(-5, -3):.2g}')
    temps = [round(float(10 ** rng.uniform(*np.log10(span))), 2)
             for span in SAMPLING['temperatures']]
    for name, p, prompt in _greedy_cases(seed):                # 1) T -> 0 is greedy
        on = f'{name}, prompt {prompt.tolist()} at temperature {cold:g}'
        got = _sampled(sample_decode, prompt.tolist(), p, 6, cold, 0, on)
        want = decode(prompt, p, max_steps=6, cache=False).tolist()
        if got != want:
            raise tk.wrong(on, got, f'at temperature {cold:g} sampling is greedy (the logit '
                                    f'gaps along this path exceed {GREEDY_GAP})')
    params, prompt, steps = sampling_program(), list(SAMPLING['prompt']), SAMPLING['steps']
    _sampled(sample_decode, prompt, params, 0, 1.0, 0)
    n = SAMPLING['runs']
    # the notebook's program at each temperature, then one drawn afresh at its own T (a
    # sampler right only on the program, prompt, length or temperatures it was shown is
    # wrong there)
    program_seed = tk.fresh_seed()
    band = float(f'{10 ** rng.uniform(*np.log10(SAMPLING["band"])):.2g}')
    offset = float(f'{10 ** rng.uniform(3.5, 5):.3g}')      # every logit shifted by it
    fresh = ((None, FRESH_VOCABS, n), (band, COLD_VOCABS, n),
             (cold, COLD_VOCABS, SAMPLING['cold_runs']), (SAMPLING['deep'][1], COLD_VOCABS, 0))
    cases = [('taotp.exercises.ch01.sampling_program()', params, prompt, steps, t, n)
             for t in temps] + [
        (f'taotp.exercises.ch01.fresh_sampling_program({program_seed + k}' +
         (f', offset={offset:g})' if T is None else f', T={T:g}, vocab={vocab})') +
         ('' if runs else ' with out_emb times each run\'s T'),
         *fresh_sampling_program(program_seed + k, T, vocab, 0.0 if T else offset), runs)
        for k, (T, vocab, runs) in enumerate(fresh)]
    # (scaled ones at a T from 1e-3 to 0.2, where one right only below 1e-3 is wrong, at the
    # greedy check's T, where a sampler greedy below any T above it is wrong: round 18, and
    # the deep case, marked by 0 runs: its law is its program's at T = 1 (made for T = 2.5:
    # sharper than the others, so that greedy and flat draws both stray far), each run gets
    # its own T from ``deep_temperatures`` and out_emb times that T, from the statement's
    # smallest T to its largest); 3) the law of every step; 4) calibration and the score of T
    deep = deep_temperatures(rng, SAMPLING['deep'][0])
    tests = tests_for(len(cases), 12, COLD_VOCABS[1])          # the most a fresh one has
    sums = []
    for name, params, prompt, steps, temperature, n in cases:
        given = [(params, temperature)] * n if n else \
            [({**params, 'out_emb': params['out_emb'] * t}, t) for t in deep]
        temperature = temperature if n else 1.0
        at = f'temperature {temperature}' if n else \
            f'a T per run from {_e(DEEP[0])} to {_e(DEEP[-1])}'
        n = len(given)
        vocab, pooled = len(params['tok_emb']), hoeffding_margin(n * steps, tests)
        per_step = hoeffding_margin(n, tests)
        runs = tk.tokens_many(tk.call_many(
            sample_decode, [(np.array(prompt), p, steps, t, np.random.default_rng([seed, k]))
                            for k, (p, t) in enumerate(given)],
            what='your sampler', on=f'{n} runs at {at}'),
            len(prompt) + steps, vocab, 'your sampler output')
        if np.any(runs[:, :len(prompt)] != prompt):
            raise Finding(f'prompt {prompt}, max_steps {steps}: your sampler\'s output does not '
                          f'start with the prompt')
        for k in range(REPLAYED):                                # 2) no hidden random state
            again = _sampled(sample_decode, prompt, given[k][0], steps, given[k][1], [seed, k])
            if again != runs[k].tolist():
                raise Finding(f'{name}, prompt {prompt} at {at}: two runs '
                              f'with rng=np.random.default_rng([{seed}, {k}]) gave '
                              f'{runs[k].tolist()} and {again}; draw from the rng you are '
                              f'given, not from np.random or a generator of your own')
        logits = transformer_batch(runs[:, :-1], params)[:, len(prompt) - 1:]
        probs = softmax(logits / temperature)
        seen = np.eye(vocab)[runs[:, len(prompt):]].mean(0)          # (steps, vocab)
        rows = [(f'at step {s + 1}', seen[s], probs[:, s].mean(0), per_step) for s in range(steps)]
        rows.append(('over all steps', seen.mean(0), probs.mean((0, 1)), pooled))
        where = f'at {at}, {n} runs of {steps} steps from {prompt}'
        for label, freq, law, margin in rows:
            gap = freq - law
            v = int(np.argmax(np.abs(gap)))
            if abs(gap[v]) > margin:
                raise Finding(f'{where} ({name}): {label} '
                              f'token {v} came {freq[v]:.3f} of the time, {abs(gap[v]):.3f} away '
                              f'from what softmax(logits / T) of the sampled prefixes gives it '
                              f'on average; a right sampler stays within {margin:.3f} (this '
                              f'test fails one with probability below {ALPHA:g})')
        sums.append((f'{where} ({name})', *martingales(logits, probs, runs[:, len(prompt):])))
    sums.append((f'over all {len(cases)} temperatures and programs',
                 *np.sum([row[1:] for row in sums], axis=0)))
    for where, total, variance, count, mass in sums:
        margin = np.array([freedman_margin(v, c, tests) for v, c in zip(variance, count)])
        b = int(np.argmax(np.abs(total) - margin))
        if abs(total[b]) <= margin[b]:
            continue
        if b == BINS:
            raise Finding(f'{where}: your draws are too {"flat" if total[b] < 0 else "sharp"} '
                          f'for T (the score of T, logits / T at the drawn tokens minus their '
                          f'mean under softmax(logits / T), summed over its range per step: '
                          f'{total[b]:+.1f}, where a right sampler stays within {margin[b]:.1f}); '
                          f'divide the logits by T once, and sample every step')
        if b > BINS:
            what = ('step by step, your draws land on the likeliest and the unlikeliest tokens '
                    f'{"more" if total[b] > 0 else "less"} often than the law says (as when '
                    f'sharper and flatter draws are mixed)' if b == BINS + 1 else
                    f'your runs differ from each other {"more" if total[b] > 0 else "less"} '
                    f'than runs of one law do (as when T changes from run to run)')
            raise Finding(f'{where}: {what}: {total[b]:+.1f} where a right sampler stays within '
                          f'{margin[b]:.1f}; draw every step from softmax(logits / T) itself')
        raise Finding(f'{where}: tokens to which softmax(logits / T) gives {b / BINS:.1f} to '
                      f'{(b + 1) / BINS:.1f} were drawn {(mass[b] + total[b]) / count[b]:.3f} of '
                      f'the time, where the law gives them {mass[b] / count[b]:.3f} on average '
                      f'({int(count[b]):,} chances; a right sampler stays within '
                      f'{margin[b] / count[b]:.3f}): draw every step from the whole law')
    runs, cold_runs, (deep_runs, made) = SAMPLING['runs'], SAMPLING['cold_runs'], SAMPLING['deep']
    return Passed(f'greedy at a fresh T from 1e-5 to 1e-3 on {len(SHAPES)} fresh programs, '
                  f'and at fresh Ts from 0.2 to 0.5 and 0.5 to 2 on the notebook\'s program and '
                  f'on four drawn afresh, their vocabulary, prompt and length new too: one at '
                  f'T from 2 to 3 with 10^3.5 to 10^5 added to every logit, and three with 24 to '
                  f'64 tokens and their logits scaled down, to be as spread as there at a T from '
                  f'1e-3 to 0.2 and at the greedy check\'s ({cold_runs} runs), and as at T = '
                  f'{2 / made:g} to {3 / made:g} at a T of its own for each of {deep_runs} runs '
                  f'(out_emb times that T): a third from {_e(DEEP[0])}, the smallest T allowed, to '
                  f'{_e(DEEP[1])}, a third from {_e(DEEP[2])} to {_e(DEEP[3])}, the largest, the '
                  f'others one in each of {deep_runs - 2 * (deep_runs // 3)} equal slices of the '
                  f'decades between; runs are reproducible with their seeded rng, '
                  f'and every step of {runs} runs follows softmax(logits / T) of its own prefix '
                  f'(token frequencies per step within {hoeffding_margin(runs, tests):.3f}, over '
                  f'all steps within {hoeffding_margin(runs * SAMPLING["steps"], tests):.3f} on '
                  f'the notebook\'s program), tokens are drawn as often as the law says in each '
                  f'tenth of p, and the score of T, its square and its spread between runs stay '
                  f'near 0, per temperature and over all (a right sampler fails with '
                  f'probability < {ALPHA:g})')


# ----------------------------------------------------------------------------- 1.7

BLOCKS_1_7 = (8, 5, 1, 24, 3, 4)    # round 13: a window capped at 16 passed 13 at the most;
                                    # the last is the tied program's (round 26)
COPIER_1_7 = (65, 300, 1024)        # the copier's drawn block, from and to, and its top
REFUSE_1_7 = {**EXTRAS_OFF,
              'taotp.decoding.decode': 'which already slides the window (decode(..., '
                                       'window=True)): feed the last block_size tokens to '
                                       'taotp.transformer yourself'}


@checker('1.7')
def check_1_7(decode_window):
    """``decode_window(tokens, params, n_steps)``: past block_size with a sliding window."""
    checked, programs = 0, list(_fresh_cases(300))
    # the programs of SHAPES, then the one whose logits all tie (round 26: a decoder that broke
    # ties by the last index passed, no two logits ever being equal)
    for (name, params, rng), block in zip(programs[:len(SHAPES)] + programs[-1:], BLOCKS_1_7):
        params['pos_emb'] = params['pos_emb'][:block]
        vocab = len(params['tok_emb'])
        cases = [([vocab - 1], 3 * block + 2), (rng.integers(0, vocab, size=block).tolist(), 20),
                 (rng.integers(0, vocab, size=block + 3).tolist(), 2 * block + 1),
                 (rng.integers(0, vocab, size=2).tolist(), 0),
                 (rng.integers(0, vocab, size=int(rng.integers(1, block + 1))).tolist(),
                  int(rng.integers(40, 121)))]         # round 12: never more than 41 steps
        for prompt, steps in cases:
            on = f'{name} cut to block_size {block}, prompt {prompt}, {steps} steps'
            _same_tokens(decode_window, on, prompt, params, (steps,), f' over the last {block} '
                         f'tokens (the prompt and then {steps} new tokens are due)',
                         max_steps=steps, window=True)
            checked += 1
    # the copier of the window's oldest token (round 13: a window capped at 16 passed; round
    # 17: at 64; round 25: at 300, the drawn block's top, passed every check): at a block drawn
    # from 65 up (64 let a cap at 64 pass), then at the top, in fewer steps (each a long pass;
    # a capped window reads another random prompt token, the same one 1 time in 8)
    low, high, top = COPIER_1_7
    drawn = int(10 ** rng.uniform(np.log10(low), np.log10(high + 1)))
    for block, steps in ((drawn, 100), (top, 10)):
        prompt = rng.integers(0, 8, size=int(rng.integers(block, block + 9))).tolist()
        _same_tokens(decode_window, f'token_copier(8, {block}) (it repeats the oldest token of '
                     f'its window), a prompt of {len(prompt)} tokens, {steps} steps', prompt,
                     token_copier(8, block), (steps,), f' over the last {block} tokens',
                     max_steps=steps, window=True)
    return Passed(f'{checked} prompts (1 token, a full block, longer than the block, 0 steps) at '
                  f'block sizes 1, 3, 5, 8 and 24 over {SCOPE}, at block size 4 on a sixth '
                  f'{TIED}, and a prompt longer than the block for a program that reads the '
                  f'oldest token of its window, at a block '
                  f'size from {low} to {high} (100 steps) and at {top:,} (10 steps), the largest '
                  f'tried; every token is the argmax over the last block_size tokens, up to 120 '
                  f'steps')


# ----------------------------------------------------------------------------- 1.8

PIECES = ('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf')


def rotation_fixing_ones(d, rng):
    """A random orthonormal d x d matrix with (1, ..., 1) @ M = (1, ..., 1)."""
    basis = np.linalg.qr(np.column_stack([np.ones(d), rng.normal(size=(d, d - 1))]))[0]
    basis[:, 0] = np.ones(d) / d ** 0.5                    # first column: the all-ones direction
    inner = np.eye(d)
    inner[1:, 1:] = np.linalg.qr(rng.normal(size=(d - 1, d - 1)))[0]   # turns the rest
    return basis @ inner @ basis.T


def _matrices(d, rng, program):
    """The M of one program: a random rotation; program 0 also a permutation and a reflection."""
    out = [('a random rotation', rotation_fixing_ones(d, rng))]
    if program == 0:
        out.append(('a permutation', np.eye(d)[rng.permutation(d)]))
        v = _centred(rng.normal(size=d))                   # a direction orthogonal to the ones
        out.append(('a reflection', np.eye(d) - 2 * np.outer(v, v) / (v @ v)))
    return out


def _centred(x):
    return x - x.mean(-1, keepdims=True)     # the all-ones part of the stream never matters


def _differ(a, b, tol=1e-7):
    if np.shape(a) != np.shape(b) or not np.size(b):
        return np.shape(a) != np.shape(b)
    return not np.allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(b)))))


def _diagnose(old, new, M, rng, where):
    """Raise the Finding for the first scrambled piece that does not turn with the stream."""
    tok_err = np.max(np.abs(new['tok_emb'] - old['tok_emb'] @ M))
    if not tok_err < 1e-9:
        raise Finding(f'{where}: new_tok_emb must be tok_emb @ M (each token row turned by M); '
                      f'yours differs by up to {tok_err:.2e}')
    if _differ(_centred(new['pos_emb']), _centred(old['pos_emb'] @ M)):
        raise Finding(f'{where}: pos_emb: position rows are added to the same stream as the '
                      f'token rows, so they must turn with them')
    layers = list(enumerate(zip(old['layers'], new['layers'])))
    norms = [(f'layer {i}: {k}', a[k], b[k]) for i, (a, b) in layers for k in ('ln1', 'ln2')]
    for name, before, after in norms + [('lnf', old['lnf'], new['lnf'])]:
        if params_difference(before, after) is not None:
            raise Finding(f'{where}: {name} changed from {before} to {after}; layer norm commutes '
                          f'with M (M keeps lengths and the direction (1, ..., 1)), so gamma and '
                          f'beta stay as they are')
    X = rng.normal(size=(6, M.shape[0]))                    # residual streams of 6 positions
    Xm, mask = X @ M, causal_mask(6)
    for i, (a, b) in layers:
        h, hm = layer_norm(X, **a['ln1']), layer_norm(Xm, **b['ln1'])
        turned, weights = self_attn(hm, b['Q'], b['K'], b['V'], b['P'], mask, True)
        update, weights_before = self_attn(h, a['Q'], a['K'], a['V'], a['P'], mask, True)
        if _differ(weights, weights_before):
            raise Finding(f'{where}: layer {i}: the attention weights changed: queries and keys '
                          f'are computed from the rotated stream, so Q and K must undo the '
                          f'rotation')
        if _differ(_centred(turned), _centred(update @ M)):
            raise Finding(f'{where}: layer {i}: the attention weights are right, but what the '
                          f'heads add to the stream is not the rotated update: V reads from the '
                          f'rotated stream and P writes into it')
        h, hm = layer_norm(X, **a['ln2']), layer_norm(Xm, **b['ln2'])
        if _differ(_centred(mlp(hm, b['M1'], b['b1'], b['M2'], b['b2'])),
                   _centred(mlp(h, a['M1'], a['b1'], a['M2'], a['b2']) @ M)):
            raise Finding(f'{where}: layer {i}: the MLP\'s update is not the rotated one: M1 '
                          f'reads from the rotated stream, M2 and b2 write into it (b1 lives in '
                          f'the hidden layer, not in the stream)')
    if _differ(layer_norm(Xm, **new['lnf']) @ new['out_emb'].T,
               layer_norm(X, **old['lnf']) @ old['out_emb'].T):
        raise Finding(f'{where}: the logits of a rotated stream changed: out_emb compares each '
                      f'token with the final stream, which is now rotated')


@checker('1.8')
def check_1_8(scramble_transformer):
    """``scramble_transformer(tok_emb, pos_emb, out_emb, layers, lnf, M)`` keeps the function."""
    checked, matrices = 0, 0
    for i, (name, params, rng) in enumerate(_fresh_cases(400, norms='scalar', hard=False)):
        for kind, M in _matrices(params['tok_emb'].shape[1], rng, i):
            where = f'{name} (scalar layer norms), M {kind}'
            out, given, _ = tk.call(scramble_transformer, *[params[k] for k in PIECES], M,
                                    what='your scramble_transformer', on=where, echo=True)
            changed = params_difference(dict(zip(PIECES, given[:5])), params)
            if changed is not None or _differ(given[5], M, 0):
                field = changed.split(':')[0] if changed is not None else 'M'
                raise Finding(f'{where}: your function changed its input {field} in place. '
                              f'Return new arrays and new layer dicts and leave the caller\'s '
                              f'untouched: the point is two programs computing the same '
                              f'function, and anything sharing those arrays would change too')
            if out is None:
                raise Finding('your scramble_transformer returned None (starter code not filled '
                              'in yet?)')
            listed = isinstance(out, (tuple, list))
            if not listed or len(out) != 5:
                raise Finding(f'{where}: expected the 5 rewritten pieces in the input order '
                              f'(tok_emb, pos_emb, out_emb, layers, lnf); got {tk.describe(out)}'
                              f'{f" of length {len(out)}" if listed else ""}')
            new = tk.program(dict(zip(PIECES, out)), what=f'{where}: your scrambled pieces (in '
                             f'the order tok_emb, pos_emb, out_emb, layers, lnf)')
            _diagnose(params, new, M, rng, where)
            vocab, block = len(params['tok_emb']), len(params['pos_emb'])
            for tokens in (np.array([0]), rng.integers(0, vocab, size=block),
                           rng.integers(0, vocab, size=int(rng.integers(2, block)))):
                want = transformer(tokens, **params)
                got = tk.run_program(lambda: transformer(tokens, **new),
                                     what='your scrambled program')
                if _differ(got, want):
                    raise Finding(f'{where}, tokens {tokens.tolist()}: the scrambled program\'s '
                                  f'logits differ by up to {np.max(np.abs(got - want)):.2e}',
                                  tokens.tolist())
                checked += 1
            matrices += 1
    return Passed(f'new_tok_emb = tok_emb @ M and the same logits (1e-7) on {checked} inputs '
                  f'for {matrices} pairs of a program and an M that fixes (1, ..., 1) (random '
                  f'rotations, a permutation, a reflection) over '
                  f'{SCOPE.replace("vector and scalar", "scalar")}')


PUZZLES = [
    Puzzle('1.1', 'How short can the NumPy transformer get?', 'reflect'),
    Puzzle('1.2', 'How does the two-line self_attn2 differ from ours?', 'reflect'),
    Puzzle('1.3', 'Remove the repeated work in decode (KV cache)', 'checked', check_1_3,
           'same tokens; a long run within 5x the CPU time of a cache', refuse=REFUSE_1_3),
    Puzzle('1.4', 'Rewrite the transformer with @ instead of einsum', 'checked', check_1_4,
           refuse=REFUSE_1_4 | OTHER_EINSUMS_OFF),
    Puzzle('1.5', 'Port the transformer to another language', 'reflect'),
    Puzzle('1.6', 'Temperature sampling', 'checked', check_1_6, refuse=REFUSE_1_6),
    Puzzle('1.7', 'Decode past block_size with a sliding window', 'checked', check_1_7,
           refuse=REFUSE_1_7),
    Puzzle('1.8', 'scramble_transformer: rotate the residual basis, keep the function',
           'checked', check_1_8),
    Puzzle('1.9', 'Guess layers, widths, parameter counts before reading on', 'reflect'),
    Puzzle('1.10', 'How would you improve the architecture?', 'reflect'),
]
