"""Checkers for Chapter 6, Decimal Addition.

Token format for every program puzzle (as in the chapter): digits 0-9, '+' = 10,
'=' = 11.  Operands are zero padded and most significant digit first unless the
puzzle says otherwise (6.19 drops the padding).

Submitted programs are read once into plain float64 arrays (``ch04.frozen``) and
every stated budget is enforced on them with ``guard.budget``.  Where the task is
small the check is exhaustive (all 100 digit pairs, all 10,000 pairs of 2-digit
numbers, every pair under 100 without padding); otherwise a seeded sample is drawn
with a seed taken from the submission (``ch04.submission_rng``), plus boundary
pairs with carries everywhere.  Key separations are measured on the keys of every
checked prompt, and keys of different sums may not come closer than stated.
"""
import functools
import types
from types import MappingProxyType

import numpy as np

from ..addition import (EQUALS, PLUS, addition_prompts, answer_digits,
                        build_decimal_addition_transformer, build_multi_digit_mod_transformer,
                        min_sep, mlp_inputs, mlp_keys)
from ..addition import mlp as addition_mlp
from ..addition import programs as addition_programs
from ..blocks import pos_enc_3d_array
from ..decoding import decode_batch, teacher_forced_argmax
from ..model import DistinctRows
from ..params import block_size, config, count_params
from ..trace import trace
from . import guard
from .ch04 import frozen, submission_rng
from .registry import Puzzle, checker
from .result import Finding, Passed

SEED_NOTE = 'drawn with a seed taken from your program'


@functools.lru_cache(maxsize=None)
def _book_sep(kind, n):
    """The key separation of the book's own construction (1.37e-9 for the 3-digit mod adder)."""
    build = build_multi_digit_mod_transformer if kind == 'mod' else \
        build_decimal_addition_transformer
    return min_sep(mlp_keys(build(n)))


# ----------------------------------------------------------------------------- helpers

def _package_functions(module):
    """Code object -> name of every function (and method) defined in a package module."""
    found = {}
    for name, obj in vars(module).items():
        if getattr(obj, '__module__', None) != module.__name__:
            continue
        members = vars(obj).items() if isinstance(obj, type) else [(None, obj)]
        for attr, f in members:
            if isinstance(f, types.FunctionType):
                found[f.__code__] = f'{module.__name__}.{name}' + (f'.{attr}' if attr else '')
    return found


def _watched_call(forbidden, used, fn, *args, what, on):
    """``guard.call`` that notes in ``used`` the first of the package's ``forbidden`` functions
    the answer calls; ``_not_handed_back`` refuses it once the outputs are right (so a wrong
    answer built on the package still gets its counterexample)."""
    with guard.watching(forbidden) as seen:
        out = guard.call(fn, *args, what=what, on=on)
    if seen and not used:
        used.append((seen[0], on))
    return out


def _not_handed_back(used, what, hint):
    if not used:
        return
    name, on = used[0]
    if name == 'sys.settrace':
        raise Finding(f'{what} switches off the checker\'s watch (sys.settrace) on {on}; the '
                      f'check needs to see which functions your code calls', on)
    raise Finding(f'right, but {what} calls {name} (on {on}), {hint}', on)


MLP_HINT = ('the package\'s own answer to this puzzle: build the hidden units yourself (each '
            'ReLU is one kink of a piecewise-linear function)')
COUNT_HINT = ('which builds the construction: the puzzle asks for the count as a formula in b '
              '(build it outside your function to test the formula)')

def _vec(value, size, what):
    """Any array with ``size`` entries, as a flat float vector (no silent broadcasting)."""
    arr = guard.array(value, what=what)
    if arr.size != size:
        raise Finding(f'{what} has shape {arr.shape}; expected {size} entries')
    return np.array(arr, dtype=np.float64).ravel()


def _mlp_tuple(answer, d_in, what='your MLP'):
    """Unpack (M1, b1, M2, b2) for a 1-input MLP; returns flat m1, b1, M2 (k, d), b2 (d,).

    Each part is read once and copied, so later changes to the answer change nothing.
    """
    if not isinstance(answer, (tuple, list)):
        raise Finding(f'{what} must be a tuple (M1, b1, M2, b2); got {type(answer).__name__}')
    parts = list(answer)
    if len(parts) != 4:
        raise Finding(f'{what} must be a tuple (M1, b1, M2, b2); got {len(parts)} parts')
    b1 = np.array(guard.array(parts[1], what=f'{what}: b1'), dtype=np.float64).ravel()
    k = b1.size
    m1 = _vec(parts[0], k * d_in, f'{what}: M1')
    M2 = np.array(guard.array(parts[2], what=f'{what}: M2'), dtype=np.float64)
    if M2.ndim == 1:
        M2 = M2[:, None]
    if M2.ndim != 2 or M2.shape[0] != k:
        raise Finding(f'{what}: M2 has shape {M2.shape}; expected ({k}, d) to match b1')
    b2 = np.array(guard.array(parts[3], what=f'{what}: b2'), dtype=np.float64)
    b2 = np.full(M2.shape[1], float(b2)) if b2.ndim == 0 else _vec(b2, M2.shape[1],
                                                                    f'{what}: b2')
    return m1, b1, M2, b2


def _eval(m1, b1, M2, b2, x):
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all='ignore'):       # huge weights overflow: judged, not warned about
        return np.maximum(x[:, None] * m1 + b1, 0) @ M2 + b2


def _off(values):
    """``|values|`` with NaN as infinitely far off (``NaN > tol`` is False: never let it pass)."""
    return np.where(np.isnan(values), np.inf, np.abs(values))


def _kinks(m1, b1):
    """Where the hidden units switch on or off (units with m1 = 0 never do)."""
    return -b1[m1 != 0] / m1[m1 != 0]


def _program(params, **limits):
    """The submission as plain arrays, within the stated budget (``guard.budget`` limits).

    ``layers=1`` means a one-layer program here: exactly one.
    """
    params = frozen(params)
    if limits:
        guard.budget(params, **limits)
    cfg = config(params)
    if limits.get('layers') == 1 and cfg['n_layers'] != 1:
        raise Finding(f'expected a one-layer program; got {cfg["n_layers"]} layers')
    return params, cfg


def _need(params, vocab, length):
    cfg = config(params)
    if cfg['vocab_size'] < vocab:
        raise Finding(f'the program needs a vocabulary of at least {vocab} tokens; got '
                      f'{cfg["vocab_size"]}')
    if block_size(params) < length:
        raise Finding(f'block_size must be at least {length} for this task; got '
                      f'{block_size(params)}')


def _decode_check(params, prompts, want, label):
    """Is greedy decoding right on every prompt?  First wrong prompt -> Finding.

    Greedy decoding is right exactly when, fed the right answer so far, every
    answer position predicts the next right token; so one teacher-forced pass
    replaces the step-by-step loop.  A failure is then decoded for real, so the
    message shows what greedy decoding actually produces.
    """
    prompts, want = np.asarray(prompts), np.asarray(want).reshape(len(prompts), -1)
    n_prompt, n_out = prompts.shape[1], want.shape[1]
    if block_size(params) < n_prompt + n_out - 1:
        raise Finding(f'block_size must be at least {n_prompt + n_out - 1} for this task; got '
                      f'{block_size(params)}')
    seqs = np.concatenate([prompts, want], axis=1)
    pred = guard.run_program(lambda: teacher_forced_argmax(seqs, params, n_prompt,
                                                           mlp_rows='distinct'),
                             on='the prompts')
    bad = np.flatnonzero((pred != want).any(1))
    if len(bad):
        i = bad[0]
        got = guard.run_program(decode_batch, prompts[i:i + 1], params, n_out, 1)[0, n_prompt:]
        raise Finding(f'{label}: prompt {prompts[i].tolist()}: expected {want[i].tolist()}, '
                      f'got {got.tolist()} ({len(bad)} of {len(prompts)} wrong)',
                      prompts[i].tolist())
    return len(prompts)


def _mlp_row(params):
    """The single residual coordinate the (only) MLP reads; a Finding otherwise."""
    M1 = params['layers'][0]['M1']
    rows = np.flatnonzero(np.any(M1 != 0, axis=1))
    if len(rows) != 1:
        raise Finding(f'to measure a key separation the MLP must read one residual coordinate '
                      f'(one non-zero row of M1); yours reads rows {rows.tolist()}')
    return int(rows[0])


def _keys(params, seqs, at, row):
    """The layer-normed MLP input coordinate ``row`` at positions ``at`` of each sequence.

    Measured before ln2's gamma and beta: a gain there stretches the keys and their
    rounding errors alike (and the MLP can undo it), so it widens no separation.
    """
    first = dict(params['layers'][0], ln2={'gamma': 1.0, 'beta': 0.0})
    plain = dict(params, layers=[first] + list(params['layers'][1:]))
    return guard.run_program(lambda: mlp_inputs(plain, seqs, 0, at, row))


def _separation(keys, labels):
    """The smallest gap between two keys that belong to different labels (inf if none).

    Keys of one label (one sum, or one sum and answer position) may differ among
    themselves; what an MLP cannot survive is keys of different labels close together.
    Returns (gap, label_a, label_b).
    """
    keys, labels = np.asarray(keys, dtype=np.float64).ravel(), np.asarray(labels).ravel()
    order = np.argsort(keys, kind='stable')
    keys, labels = keys[order], labels[order]
    differ = labels[1:] != labels[:-1]
    if not differ.any():
        return float('inf'), None, None
    gaps = np.where(differ, np.diff(keys), np.inf)
    i = int(np.argmin(gaps))
    return float(gaps[i]), labels[i], labels[i + 1]


def _single_pairs():
    return np.stack(np.divmod(np.arange(100), 10), axis=1)


def _carry_pairs(n):
    """Boundary pairs of n-digit numbers: carries everywhere, zeros, the largest, halves."""
    top = 10 ** n - 1
    half = 5 * 10 ** (n - 1)
    nines = [[top, 1], [1, top], [top, top], [top, 0], [0, top], [0, 0], [half, half],
             [half - 1, half + 1], [top // 9 * 5, top // 9 * 5], [top // 9 * 4, top // 9 * 5 + 1]]
    nines += [[10 ** k, top - 10 ** k + 1] for k in range(n)]          # every carry chain
    nines += [[2 ** k % (top + 1), top - 2 ** k % (top + 1)] for k in range(4 * n)]
    return np.unique(np.array(nines, dtype=np.int64), axis=0)


def _attention_at(params, prompts, query):
    """Attention weights (batch, heads, n) of layer 0 at position ``query``."""
    return guard.run_program(lambda: trace(prompts, params).attn[0][:, :, query])


def _layer0_at(params, prompts, query):
    """Layer 0 at position ``query``: attention weights (batch, heads, n) and the MLP's input."""
    seen = guard.run_program(lambda: trace(prompts, params))
    return seen.attn[0][:, :, query], seen.mlp_in[0][:, query]


def _sees_whole_sum(mlp_in, sums):
    """Prompts whose sums differ must reach the MLP with different inputs (to 1e-9, relative)."""
    scale = max(float(np.abs(mlp_in).max()), 1e-300)
    _, group = np.unique(np.round(mlp_in / scale, 9), axis=0, return_inverse=True)
    group = group.ravel()
    order = np.lexsort((sums, group))
    clash = np.flatnonzero((group[order][1:] == group[order][:-1])
                           & (sums[order][1:] != sums[order][:-1]))
    if len(clash):
        s1, s2 = sums[order][clash[0]], sums[order][clash[0] + 1]
        raise Finding(f'all pairs right, but at "=" the MLP gets the same input for a sum of '
                      f'{s1} and a sum of {s2}: every digit place must reach the MLP, whose key '
                      f'is a + b, not just the units')


def _reads(weights, positions, share=0.45):
    """Heads that put at least ``share`` of their attention on each of ``positions``, always."""
    return [h for h in range(weights.shape[1])
            if all(weights[:, h, p].min() >= share for p in positions)]


# ----------------------------------------------------------------------------- 6.2-6.5

def _spike_cases():
    cases = [(0.0, 1.0), (2.5, -3.0), (-7.0, 0.25), (1e3, 42.0), (0.3, 0.0), (123.456, -7.89),
             (-1e4, 1e4), (1e-3, 1e-6), (0.999, -1.0)]
    rng = np.random.default_rng(62)
    signs = rng.choice([-1.0, 1.0], size=(40, 2))
    mags = 10.0 ** rng.uniform(-3, 4, size=(40, 2))
    return cases + [tuple(float(v) for v in row) for row in signs * mags]


@checker('6.2')
def check_6_2(spike):
    """``spike(x0, a0)`` -> (M1 (1, 3), b1 (3,), M2 (3, 1), b2 (1,)).

    Height a0 at x0 and 0 outside (x0 - 1, x0 + 1).
    """
    cases, package, used = _spike_cases(), _package_functions(addition_mlp), []
    for x0, a0 in cases:
        out = _watched_call(package, used, spike, x0, a0,
                        what='your spike', on=f'x0={x0}, a0={a0}')
        m1, b1, M2, b2 = _mlp_tuple(out, 1, 'your spike')
        if len(b1) != 3 or M2.shape[1] != 1:
            raise Finding(f'x0={x0}, a0={a0}: budget: 3 hidden units and 1 output; got '
                          f'{len(b1)} hidden units and {M2.shape[1]} outputs')
        kinks = _kinks(m1, b1)
        outside = [k for k in kinks if abs(k - x0) >= 1]
        beyond = [max([x0 + 1] + outside) + 1, min([x0 - 1] + outside) - 1]
        far = np.concatenate([x0 + np.linspace(1, 50, 400), x0 - np.linspace(1, 50, 400),
                              [x0 + 1e6, x0 - 1e6], outside, beyond])
        top = _eval(m1, b1, M2, b2, [x0])[0, 0]
        tol = 1e-9 * max(1.0, abs(a0), abs(x0))
        if not abs(top - a0) <= tol:
            raise Finding(f'x0={x0}, a0={a0}: expected f(x0) = {a0}, got {top}', (x0, a0))
        vals = _eval(m1, b1, M2, b2, far)[:, 0]
        worst = np.argmax(_off(vals))
        if not _off(vals)[worst] <= tol:
            raise Finding(f'x0={x0}, a0={a0}: expected 0 at x = {far[worst]} (|x - x0| >= 1), '
                          f'got {vals[worst]}', (x0, a0))
    _not_handed_back(used, 'your spike', MLP_HINT)
    return Passed(f'{len(cases)} (x0, a0) pairs (9 hand-made, 40 seeded with |x0| and |a0| from '
                  f'1e-3 to 1e4, both signs): 3 hidden units, f(x0) = a0 and f = 0 on a dense '
                  f'grid with |x - x0| >= 1, at every kink there and beyond the last one (so '
                  f'everywhere: f is piecewise linear)')


def _mlp_sets():
    """(xs, ys, what) for 6.3: random sets, close points far apart in the list, and edge cases."""
    rng = np.random.default_rng(63)
    sets = []
    for n, d in ((1, 1), (1, 3), (2, 1), (5, 1), (17, 4), (40, 2), (120, 7), (200, 3)):
        xs = rng.normal(size=n) * 10 ** rng.uniform(-2, 2)
        if n > 3:
            i, j = 0, n - 1                                 # the two closest, not neighbours
            xs[j] = xs[i] + 1e-6 * max(1.0, abs(xs[i]))
        ys = rng.normal(size=(n, d)) * 10 ** rng.uniform(-1, 3)
        sets.append((xs, ys, f'{n} random points'))
    sets.append((np.arange(30.0), rng.normal(size=(30, 2)), 'the points 0, 1, ..., 29'))
    sets.append((np.arange(20.0)[::-1] * -3.5, rng.normal(size=(20, 1)),
                 '20 evenly spaced negative points, decreasing'))
    sets.append((1e6 + np.arange(10.0), rng.normal(size=(10, 1)), '10 points near 1e6'))
    sets.append((rng.normal(size=12), np.full((12, 2), 3.0), '12 points, all outputs equal'))
    sets.append((rng.normal(size=8), np.zeros((8, 1)), '8 points, all outputs 0'))
    return sets


@checker('6.3')
def check_6_3(build_MLP):
    """``build_MLP(xs, ys)`` -> (m1, b1, M2, b2) exact on S with at most 3|S| hidden units."""
    checked, package, used = 0, _package_functions(addition_mlp), []
    sets = _mlp_sets()
    for xs, ys, what in sets:
        n, d = ys.shape
        out = _watched_call(package, used, build_MLP, xs.copy(), ys.copy(),
                        what='your build_MLP', on=f'{what}, {d}-dim outputs')
        m1, b1, M2, b2 = _mlp_tuple(out, 1, 'your build_MLP')
        if len(b1) > 3 * n:
            raise Finding(f'{what}: budget: at most {3 * n} hidden units; got {len(b1)}')
        if M2.shape[1] != d:
            raise Finding(f'{what} with {d}-dim outputs: M2 has {M2.shape[1]} columns')
        got = _eval(m1, b1, M2, b2, xs)
        err = _off(got - ys).max(1)
        scale = np.abs(ys).max() * 1e-6 + 1e-9
        if not err.max() <= scale:
            i = int(np.argmax(err))
            raise Finding(f'{what}: at x = {float(xs[i])!r} expected {ys[i].round(6).tolist()}, '
                          f'got {got[i].round(6).tolist()}', xs[i])
        checked += n
    _not_handed_back(used, 'your build_MLP', MLP_HINT)
    return Passed(f'exact (1e-6 of the largest output) on {checked} points over {len(sets)} sets: '
                  f'1-200 random points with outputs of 1-7 dims, the two closest 1e-6 apart and '
                  f'far apart in the list, evenly spaced, decreasing and large inputs, constant '
                  f'and zero outputs; budget kept: at most 3|S| hidden units')


@checker('6.4')
def check_6_4(weights):
    """(M1 (1, 2), b1 (2,), M2 (2, 1), b2 (1,)): f(0) = 1 and f(x) <= 0 for |x| >= 1."""
    m1, b1, M2, b2 = _mlp_tuple(weights, 1, 'your weak spike')
    if len(b1) != 2 or M2.shape[1] != 1:
        raise Finding(f'budget: 2 hidden units and one output; got {len(b1)} hidden units and '
                      f'{M2.shape[1]} outputs')
    if not abs(_eval(m1, b1, M2, b2, [0.0])[0, 0] - 1) < 1e-9:
        raise Finding(f'expected f(0) = 1; got {_eval(m1, b1, M2, b2, [0.0])[0, 0]}')
    kinks = _kinks(m1, b1)
    reach = max(2.0, np.abs(kinks).max(initial=0) + 1)
    xs = np.concatenate([[1, -1, reach, -reach, 1e6, -1e6], kinks[np.abs(kinks) >= 1],
                         np.linspace(1, reach, 300), -np.linspace(1, reach, 300)])
    vals = _eval(m1, b1, M2, b2, xs)[:, 0]
    worst = int(np.argmax(np.where(np.isnan(vals), np.inf, vals)))
    if not vals[worst] <= 1e-9:
        raise Finding(f'expected f(x) <= 0 for |x| >= 1; got f({xs[worst]}) = {vals[worst]}',
                      xs[worst])
    return Passed('2 hidden units; f(0) = 1 and f <= 0 at +-1, at every kink beyond, on a grid '
                  'and beyond the last kink (+-1e6); f is piecewise linear, so that covers it')


BASES_6_5 = tuple(range(2, 101))


@checker('6.5')
def check_6_5(count_for_base):
    """A function ``b -> total parameter count`` of the single-digit adder in base b."""
    package, used = _package_functions(addition_programs), []
    for b in BASES_6_5:
        got = _watched_call(package, used, count_for_base, b, what='your formula', on=f'b = {b}')
        if isinstance(got, (tuple, list)) and len(got):
            got = got[0]
        want = 58 * b + 49
        try:
            value = float(got)
        except (TypeError, ValueError, OverflowError):
            raise Finding(f'b = {b}: expected a number, got {type(got).__name__}') from None
        if value != want:
            side = 'more' if value > want else 'fewer'
            raise Finding(f'b = {b}: your formula gives {got}, {side} than count_params counts '
                          f'for the construction of Fig. 6.2 in base {b} (build it with '
                          f'taotp.build_single_digit_mod_transformer(base={b}) and count)', b)
    _not_handed_back(used, 'your formula', COUNT_HINT)
    return Passed('the total count is right for every base b = 2..100 (the bases the '
                  'construction of Fig. 6.2 is defined for)')


# ----------------------------------------------------------------------------- 6.6-6.8

@checker('6.6')
def check_6_6(params):
    """Attention-only layer: its output at position 1 of [i, j] is (1 - k, k, 0, ...), k = i + j."""
    params, cfg = _program(params, layers=1)
    _need(params, 10, 2)
    pairs = _single_pairs()
    attn_out = guard.run_program(lambda: trace(pairs, params).attn_out[0][:, 1])
    k = pairs.sum(1)
    want = np.zeros_like(attn_out)
    want[:, 0], want[:, 1] = 1 - k, k
    err = _off(attn_out - want).max(1)
    if not err.max() <= 1e-6:
        i = int(np.argmax(err > 1e-6))
        raise Finding(f'[{pairs[i, 0]}, {pairs[i, 1]}]: expected attention output '
                      f'{want[i, :4].tolist()}..., got {attn_out[i, :4].round(6).tolist()}...',
                      pairs[i].tolist())
    return Passed(f'all 100 digit pairs: the attention output at the second position is '
                  f'(1 - k, k, 0, ...) to 1e-6 (one layer, d_model {cfg["d_model"]})')


@checker('6.7')
def check_6_7(params):
    """Single-digit addition mod 10 with d_model = 3: all 100 pairs."""
    params, cfg = _program(params, d_model=3)
    _need(params, 10, 2)
    pairs = _single_pairs()
    _decode_check(params, pairs, pairs.sum(1) % 10, '[i, j] -> (i + j) mod 10')
    return Passed(f'all 100 pairs right; budget kept: d_model {cfg["d_model"]} <= 3; '
                  f'{count_params(params)["n_params"]:,} parameters (the 4-dim book version '
                  f'has 629)')


@checker('6.8')
def check_6_8(params):
    """Single-digit addition with proper cleanup: nothing but the answer's embedding is left."""
    params, _ = _program(params)
    _need(params, 10, 2)
    pairs = _single_pairs()
    answers = pairs.sum(1) % 10
    _decode_check(params, pairs, answers, '[i, j] -> (i + j) mod 10')
    final = guard.run_program(lambda: trace(pairs, params).final[:, 1])
    digits = params['tok_emb'][:10]
    gap = np.abs(digits[:, None] - digits[None]).max(-1)[~np.eye(10, dtype=bool)].min()
    want = params['tok_emb'][answers]
    err = _off(final - want).max(1)
    if not err.max() <= 1e-6 * gap:
        i = int(np.argmax(err))
        raise Finding(f'[{pairs[i, 0]}, {pairs[i, 1]}]: the residual before the final layer norm '
                      f'should be tok_emb[{answers[i]}] = {want[i].round(4).tolist()}; got '
                      f'{final[i].round(4).tolist()}, off by {err[i]:.3g}, which is '
                      f'{err[i] / gap:.3g} of the smallest gap between two digits\' embeddings '
                      f'(at most 1e-6 allowed)', pairs[i].tolist())
    return Passed('all 100 pairs right, and the residual stream before the final layer norm at '
                  'the answer position equals tok_emb of the answer to 1e-6 of the smallest gap '
                  'between two digits\' embeddings (so scaling the program down cannot hide a '
                  'leftover)')


# ----------------------------------------------------------------------------- 6.10-6.15

PLACES_2 = MappingProxyType({'units': (1, 4), 'tens': (0, 3)})   # a's and b's digit in [a a + b b =]


def _mod2(params, label, target=lambda s: s % 10):
    _need(params, 12, 6)
    prompts, pairs = addition_prompts(2)
    n = _decode_check(params, prompts, target(pairs.sum(1)), label)
    return n, prompts, pairs.sum(1)


def _one_head_per_place(params, prompts, sums):
    """For each place, a head that splits its attention at '=' between a's and b's digit;
    and the whole sum reaches the MLP."""
    weights, mlp_in = _layer0_at(params, prompts, 5)
    for place, positions in PLACES_2.items():
        if not _reads(weights, positions):
            raise Finding(f'all pairs right, but no head reads both {place} digits: at the "=" '
                          f'position, one head must put at least 45 % of its attention on each '
                          f'of positions {positions[0]} (a) and {positions[1]} (b), for every '
                          f'prompt; one head per digit place is the point of the puzzle')
    _sees_whole_sum(mlp_in, sums)


@checker('6.10')
def check_6_10(params):
    """2-digit addition mod 10 with one head per digit place (<= 3 heads, one layer)."""
    params, _ = _program(params, layers=1, heads=3)
    n, prompts, sums = _mod2(params, '[a, a, +, b, b, =] -> (a + b) mod 10')
    _one_head_per_place(params, prompts, sums)
    return Passed(f'all {n:,} pairs of 2-digit numbers right; for each digit place a head splits '
                  f'its attention between a\'s and b\'s digit, and the MLP tells every sum a + b '
                  f'apart; budget kept: one layer, at most 3 heads')


@checker('6.11')
def check_6_11(params):
    """As 6.10, keeping the standard position circle pos_enc_3d_array(block_size) in pos_emb."""
    params, cfg = _program(params, layers=1, heads=3)
    pos = params['pos_emb']
    if isinstance(pos, list):
        raise Finding('pos_emb must be one table that keeps the standard position circle; got a '
                      'list of tables')
    circle = pos_enc_3d_array(len(pos))
    if not any(np.allclose(pos[:, c:c + 3], circle, atol=1e-9) for c in range(pos.shape[1] - 2)):
        raise Finding(f'pos_emb must keep three columns equal to pos_enc_3d_array({len(pos)}) '
                      f'(the standard encoding); none of its columns match')
    n, prompts, sums = _mod2(params, '[a, a, +, b, b, =] -> (a + b) mod 10')
    _one_head_per_place(params, prompts, sums)
    return Passed(f'all {n:,} pairs right with the standard position circle kept; for each digit '
                  f'place a head splits its attention between a\'s and b\'s digit, and the MLP '
                  f'tells every sum apart; budget kept: one layer, at most 3 heads; d_model '
                  f'{cfg["d_model"]} (the book uses 7)')


@checker('6.13')
def check_6_13(params):
    """The 2-digit mod-10 adder without the cleanup head: exactly 4 heads."""
    params, cfg = _program(params, layers=1, heads=4)
    if cfg['n_heads'][0] != 4:
        raise Finding(f'budget: exactly 4 heads (2 n_digits, no cleanup head); got '
                      f'{cfg["n_heads"][0]}')
    n, prompts, sums = _mod2(params, '[a, a, +, b, b, =] -> (a + b) mod 10')
    weights, mlp_in = _layer0_at(params, prompts, 5)
    for position, digit in ((0, "a's tens"), (1, "a's units"), (3, "b's tens"), (4, "b's units")):
        if not _reads(weights, (position,)):
            raise Finding(f'all pairs right, but no head reads {digit} digit: at the "=" position '
                          f'one head must put at least 45 % of its attention on position '
                          f'{position}, for every prompt (the four heads read the four digits)')
    own = [h for h in range(4) if weights[:, h, 5].max() > 0.5]
    if own:
        raise Finding(f'head {own[0]} attends mostly to the "=" position itself: that is a '
                      f'cleanup head, which this puzzle removes')
    _sees_whole_sum(mlp_in, sums)
    return Passed(f'all {n:,} pairs right; each of the four digits is read by a head, the MLP '
                  f'tells every sum apart, and no head attends to itself (no cleanup head); '
                  f'budget kept: one layer, exactly 4 heads; '
                  f'{count_params(params)["n_params"]:,} parameters (the book\'s 5-head version '
                  f'has 9,508)')


@checker('6.14')
def check_6_14(params):
    """Output the tens digit of a + b (mod 10) for 2-digit a, b."""
    params, _ = _program(params)
    n, _, _ = _mod2(params, '[a, a, +, b, b, =] -> floor((a + b) / 10) mod 10',
                 target=lambda s: s // 10 % 10)
    return Passed(f'all {n:,} pairs of 2-digit numbers: the tens digit of the sum is right')


@checker('6.15')
def check_6_15(params):
    """3-digit mod-10 adder whose MLP keys are >= 100x farther apart than the book's (1.37e-9)."""
    n_pairs = 3000
    params, _ = _program(params, layers=1)
    _need(params, 12, 8)
    row = _mlp_row(params)
    rng = submission_rng(615, params)
    sums = np.arange(1999)
    a = np.minimum(sums, 999)
    pairs = np.vstack([np.stack([a, sums - a], axis=1), _carry_pairs(3),
                       rng.integers(0, 1000, (n_pairs, 2))])
    prompts, pairs = addition_prompts(3, pairs)
    n = _decode_check(params, prompts, pairs.sum(1) % 10, '3-digit (a + b) mod 10')
    keys = _keys(params, prompts, [7], row)[:, 0]
    sep, s1, s2 = _separation(keys, pairs.sum(1))
    book = _book_sep('mod', 3)
    if not sep >= 100 * book:
        raise Finding(f'right on all {n:,} prompts, but the MLP keys of the sums {s1} and {s2} '
                      f'are only {sep:.3g} apart; need >= {100 * book:.3g} (100x the book\'s '
                      f'{book:.3g})')
    return Passed(f'right on {n:,} 3-digit pairs (one for every sum, carries everywhere, and '
                  f'{n_pairs:,} random ones {SEED_NOTE}); keys of different sums are at least '
                  f'{sep:.3g} apart ({sep / book:,.0f}x the book\'s {book:.3g}); one layer, the '
                  f'MLP reads one coordinate')


# ----------------------------------------------------------------------------- 6.16, 6.17

@checker('6.16')
def check_6_16(params):
    """2-digit decimal addition after an ignored prefix of 0-6 random digits."""
    max_prefix = 6
    params, _ = _program(params)
    _need(params, 12, max_prefix + 8)
    rng = submission_rng(616, params)
    prompts, pairs = addition_prompts(2)
    lengths = np.arange(len(pairs)) % (max_prefix + 1)
    rng.shuffle(lengths)
    edge_prompts, edge_pairs = addition_prompts(2, _carry_pairs(2))
    operands = edge_prompts[:, [0, 1, 3, 4]]
    checked = 0
    for length in range(max_prefix + 1):
        mine = lengths == length
        prefixes = [rng.integers(0, 10, size=(mine.sum(), length))]
        if length:       # the pairs with carries after prefixes of nines, of zeros, of the operands
            prefixes += [np.full((len(edge_prompts), length), 9),
                         np.zeros((len(edge_prompts), length), dtype=np.int64),
                         np.resize(operands, (len(edge_prompts), length))]
        base = [prompts[mine]] + [edge_prompts] * (len(prefixes) - 1)
        sums = [pairs[mine].sum(1)] + [edge_pairs.sum(1)] * (len(prefixes) - 1)
        full = np.concatenate([np.vstack(prefixes), np.vstack(base)], axis=1)
        checked += _decode_check(params, full, answer_digits(np.concatenate(sums), 3),
                                 f'prefix of {length} digits')
    return Passed(f'{checked:,} prompts right: all 10,000 pairs of 2-digit numbers, each after a '
                  f'random prefix of 0-{max_prefix} digits ({SEED_NOTE}), and pairs with carries '
                  f'everywhere after prefixes of every length made of nines, of zeros, and of '
                  f'copies of their operands')


def _decimal_seqs(n, pairs):
    """Teacher-forced sequences (prompt + right answer digits but the last) and the answers."""
    prompts, pairs = addition_prompts(n, pairs)
    digits = answer_digits(pairs.sum(1), n + 1)
    return prompts, pairs, digits, np.concatenate([prompts, digits[:, :-1]], axis=1)


@checker('6.17')
def check_6_17(build):
    """``build(n_digits)`` -> decimal adder whose key separation beats the book's construction."""
    notes = []
    for n in (1, 2):
        params = guard.call(build, n, what='your builder', on=f'n_digits={n}')
        params, _ = _program(params, layers=1)
        _need(params, 12, 3 * n + 2)
        prompts, pairs, digits, seqs = _decimal_seqs(n, None)          # every pair
        _decode_check(params, prompts, digits, f'{n} digits')
        at = list(range(2 * n + 1, 3 * n + 2))
        keys = _keys(params, seqs, at, _mlp_row(params))
        labels = pairs.sum(1)[:, None] * 10 + np.arange(n + 1)[None]   # (sum, answer position)
        sep, l1, l2 = _separation(keys, labels)
        ref = _book_sep('decimal', n)                                     # 6.0e-3, 9.9e-4
        if not sep > 1.01 * ref:
            where = (f' (sum {l1 // 10} at answer digit {l1 % 10} and sum {l2 // 10} at answer '
                     f'digit {l2 % 10})' if l1 is not None else '')
            raise Finding(f'{n} digits: right, but the keys of all (sum, answer position) pairs '
                          f'are {sep:.3g} apart{where}; the book\'s construction reaches '
                          f'{ref:.3g} (beat it by at least 1%)')
        notes.append(f'{n} digit(s) {sep:.3g} (book {ref:.2g})')
    return Passed('right on every pair (100 of 1 digit, 10,000 of 2 digits), one layer, and '
                  'wider key separation, measured on the keys of every pair and answer '
                  'position: ' + ', '.join(notes))


# ----------------------------------------------------------------------------- 6.19, 6.20

def _unpadded(a, b):
    return [int(c) for c in str(a)] + [PLUS] + [int(c) for c in str(b)] + [EQUALS]


@checker('6.19')
def check_6_19(params):
    """Addition without padding: ``[a, +, b, =] -> digits of a + b, then '='`` for a, b < 100.

    Every pair is checked: one teacher-forced pass per (prompt length, answer
    length) group, the MLP run once per distinct input across all groups.
    """
    limit = 100
    params, _ = _program(params)
    longest = 2 * len(str(limit - 1)) + 2 + len(str(2 * (limit - 1)))  # prompt + digits + '='
    _need(params, 12, longest)
    groups = {}
    for a in range(limit):
        for b in range(limit):
            answer = [int(c) for c in str(a + b)] + [EQUALS]
            prompt = _unpadded(a, b)
            groups.setdefault((len(prompt), len(answer)), []).append((a, b, prompt, answer))
    memo, wrong = DistinctRows(), []
    for (n_prompt, _), rows in sorted(groups.items()):
        seqs = np.array([prompt + answer for _, _, prompt, answer in rows])
        pred = guard.run_program(lambda: teacher_forced_argmax(seqs, params, n_prompt,
                                                               mlp_rows=memo),
                                 on=f'the prompts of {n_prompt} tokens')
        wrong += [rows[i] for i in np.flatnonzero((pred != seqs[:, n_prompt:]).any(1))]
    if wrong:
        a, b, prompt, want = min(wrong)
        got = guard.run_program(decode_batch, np.array([prompt]), params, len(want), 1)
        raise Finding(f'{a} + {b}: prompt {prompt}: expected {want}, got '
                      f'{got[0, len(prompt):].tolist()} ({len(wrong):,} of {limit ** 2:,} pairs '
                      f'wrong)', prompt)
    return Passed(f'all {limit ** 2:,} pairs a, b in 0..{limit - 1} written without padding: the '
                  f'sum without leading zeros, then "=" (11) as the end mark')


def _product_pairs(rng, count):
    special = [[99, 99], [10, 10], [0, 57], [57, 0], [0, 0], [1, 99], [99, 1], [50, 50],
               [11, 11], [64, 16], [32, 32], [25, 4], [98, 99], [12, 34], [90, 90], [1, 1]]
    return np.vstack([special, rng.integers(0, 100, size=(count, 2))])


@checker('6.20')
def check_6_20(build):
    """``build(n_digits)`` -> multiplier: ``[a.., +, b.., =] -> 2n digits of a * b``."""
    n_seeded, notes = 250, []
    for n in (1, 2):
        params = guard.call(build, n, what='your builder', on=f'n_digits={n}')
        params, _ = _program(params)
        _need(params, 12, 4 * n + 1)
        pairs = None if n == 1 else _product_pairs(submission_rng(620, params), n_seeded)
        prompts, pairs = addition_prompts(n, pairs)
        notes.append(_decode_check(params, prompts, answer_digits(pairs[:, 0] * pairs[:, 1], 2 * n),
                                   f'{n}-digit multiplication'))
    return Passed(f'all {notes[0]} 1-digit products and {notes[1]} 2-digit products (2n digits, '
                  f'zero padded) right: zeros, ones, 99 x 99, powers of two, and {n_seeded} '
                  f'random pairs {SEED_NOTE}; the operator token is 10')


PUZZLES = [
    Puzzle('6.1', 'The sums v_i + u_j span at most n + m - 1 dimensions', 'reflect'),
    Puzzle('6.2', 'A spike of any height anywhere (Corollary 6.1)', 'checked', check_6_2,
           '3 hidden units'),
    Puzzle('6.3', 'Theorem 6.1: build_MLP', 'checked', check_6_3, '<= 3|S| hidden units'),
    Puzzle('6.4', 'A weak spike from two ReLUs', 'checked', check_6_4, '2 hidden units'),
    Puzzle('6.5', 'Parameter count of the single-digit adder in base b', 'checked', check_6_5),
    Puzzle('6.6', 'Attention that outputs (1 - k, k, 0, ...)', 'checked', check_6_6,
           'one layer'),
    Puzzle('6.7', 'Single-digit addition with 3 model dimensions', 'checked', check_6_7,
           'd_model 3'),
    Puzzle('6.8', 'Single-digit addition with proper cleanup', 'checked', check_6_8),
    Puzzle('6.9', 'The matrix cos(alpha |i - j|) has rank at most 2', 'reflect'),
    Puzzle('6.10', 'One head per digit place by changing pos_emb', 'checked', check_6_10,
           'one layer, <= n_digits + 1 heads'),
    Puzzle('6.11', 'One head per digit place, standard positions kept', 'checked', check_6_11,
           'one layer, <= n_digits + 1 heads'),
    Puzzle('6.12', 'Does the impossibility proof survive the residual connection?', 'reflect'),
    Puzzle('6.13', 'The mod-10 adder without its cleanup head', 'checked', check_6_13,
           'one layer, 2 n_digits heads'),
    Puzzle('6.14', 'Output the tens digit', 'checked', check_6_14),
    Puzzle('6.15', 'Key separation 100x wider for 3 digits', 'checked', check_6_15,
           'one layer'),
    Puzzle('6.16', 'Decimal addition after an ignored prefix', 'checked', check_6_16),
    Puzzle('6.17', 'Scale value and position to widen the keys', 'checked', check_6_17,
           'one layer'),
    Puzzle('6.18', 'Which position coordinate should go into the key?', 'reflect'),
    Puzzle('6.19', 'Addition without zero padding', 'checked', check_6_19),
    Puzzle('6.20', 'Decimal multiplication', 'checked', check_6_20),
]
