"""Checkers for Chapter 6, Decimal Addition (tokens: digits 0-9, '+' = 10, '=' = 11; operands
zero padded, most significant digit first, except in 6.19).

Small tasks are checked exhaustively (visible cases: a message may show what was due); else
hidden cases are drawn afresh on every check beside hand-made ones, and a message names the
input and the answer's output only (6.2's and 6.3's: a fresh seed, printed, rebuilds them with
``spike_cases`` / ``mlp_sets``).  How keys are measured: ``_keys``; 6.5's counts: ``_counts``.
"""
import functools

import numpy as np

from ..addition import (EQUALS, PLUS, addition_prompts, answer_digits,
                        build_decimal_addition_transformer, build_multi_digit_mod_transformer,
                        build_single_digit_mod_transformer, min_sep, mlp_inputs, mlp_keys)
from ..blocks import pos_enc_3d_array
from ..decoding import decode_batch, teacher_forced_argmax
from ..model import DistinctRows, scalar_mlp
from ..params import config, count_params
from ..trace import trace
from . import toolkit
from .ch06_programs import _separation, _tells_sums_apart, carried_by, no_carrier
from .registry import Puzzle, checker
from .toolkit import Finding, Passed


# ----------------------------------------------------------------------------- 6.2-6.5: MLPs

def _weights(value, what, units=None):
    """A one-input MLP ``(M1, b1, M2, b2)`` as float64 M1 (1, k), b1 (k,), M2 (k, d), b2 (d,),
    with exactly ``units`` hidden units and one output if ``units`` is given."""
    if not isinstance(value, (tuple, list)) or len(value) != 4:
        got = f'{len(value)} parts' if isinstance(value, (tuple, list)) else toolkit.describe(value)
        raise Finding(f'{what} must be a tuple (M1, b1, M2, b2); got {got}')
    M1, b1, M2, b2 = (np.array(toolkit.array(v, what=f'{what}: {name}'), dtype=np.float64)
                      for name, v in zip(('M1', 'b1', 'M2', 'b2'), value))
    b1, M2 = b1.ravel(), (M2[:, None] if M2.ndim == 1 else M2)
    if M1.size != b1.size or M2.ndim != 2 or M2.shape[0] != b1.size:
        raise Finding(f'{what}: shapes M1 {M1.shape}, b1 {b1.shape}, M2 {M2.shape} do not '
                      f'agree; expected (1, k), (k,), (k, d)')
    if b2.size != M2.shape[1] and b2.ndim:
        raise Finding(f'{what}: b2 has shape {b2.shape}; expected ({M2.shape[1]},) to match M2')
    if units and (b1.size != units or M2.shape[1] != 1):
        raise Finding(f'{what}: budget: {units} hidden units and 1 output; got {b1.size} hidden '
                      f'units and {M2.shape[1]} outputs')
    return M1.reshape(1, -1), b1, M2, np.broadcast_to(b2.ravel(), (M2.shape[1],))


def _at(weights, xs):
    """The MLP at scalar inputs ``xs``, shape (len(xs), d), run by the engine (``scalar_mlp``).
    A NaN in it is its largest value for ``np.argmax`` and fails every ``not err <= tol``."""
    with np.errstate(all='ignore'):       # huge weights overflow: judged, not warned about
        return scalar_mlp(xs, *weights)


def _outside(weights, x0, size=lambda vals, xs: np.abs(vals)):
    """(x, f(x)) where |x - x0| >= 1 and ``size(f, x)`` is largest (NaN first) among a grid,
    +-1e6, every kink there and one beyond the last (f is piecewise linear: that covers every
    x there)."""
    m1, b1 = weights[0][0], weights[1]
    kinks = [k for k in -b1[m1 != 0] / m1[m1 != 0] if abs(k - x0) >= 1]
    ends = [x0 + 1e6, x0 - 1e6, max([x0 + 1] + kinks) + 1, min([x0 - 1] + kinks) - 1]
    xs = np.concatenate([x0 + np.linspace(1, 50, 400), x0 - np.linspace(1, 50, 400), kinks, ends])
    vals = _at(weights, xs)[:, 0]
    j = int(np.argmax(size(vals, xs)))
    return float(xs[j]), vals[j]


def _rounding(weights, x0, a0, xs):
    """What rounding can leave of f at ``xs``: 1e-12 |a0| plus 4 ulps of the terms f adds
    there, |M2_i| (|x M1_i| + |b1_i|) over its active units and |b2| (round 12: a tolerance
    1e-9 |a0| max(1, |x0|, |x|) hid a tail of slope 3e-10 a0), but never more than that old
    tolerance (so huge weights cannot make any value "rounding"; a dead unit adds nothing)."""
    (m1,), b1, M2, b2 = weights
    with np.errstate(all='ignore'):
        xs = np.asarray(xs, dtype=float).reshape(-1, 1)
        size = np.abs(xs * m1) + np.abs(b1)
        active = xs * m1 + b1 >= -4 * np.finfo(float).eps * size
        terms = np.where(active, size, 0.0) @ np.abs(M2[:, 0]) + np.abs(b2[0])
        cap = 1e-9 * abs(a0) * np.maximum(1.0, np.maximum(abs(x0), np.abs(xs[:, 0])))
        return 1e-12 * abs(a0) + np.minimum(4 * np.finfo(float).eps * terms, cap)


SPIKES_SHOWN = [(0.0, 1.0), (2.5, -3.0), (-7.0, 0.25), (1e3, 42.0), (0.3, 0.0),
                (123.456, -7.89), (-1e4, 1e4), (1e-3, 1e-6), (0.999, -1.0)]


def spike_cases(seed):
    """The 40 hidden (x0, a0) pairs of 6.2 for ``seed``: |x0|, |a0| in 1e-3..1e4, both signs."""
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(40, 2))
    return [tuple(float(v) for v in row) for row in signs * 10.0 ** rng.uniform(-3, 4, (40, 2))]


@checker('6.2')
def check_6_2(spike):
    """``spike(x0, a0)`` -> (M1 (1, 3), b1, M2, b2): a0 at x0, 0 where |x - x0| >= 1."""
    seed = toolkit.fresh_seed()
    for i, (x0, a0) in enumerate(SPIKES_SHOWN + spike_cases(seed)):
        on = f'x0={x0}, a0={a0}' + (f' (from ch06.spike_cases({seed}))'
                                    if i >= len(SPIKES_SHOWN) else '')
        w = _weights(toolkit.call(spike, x0, a0, what='your spike', on=on), f'your spike for {on}',
                     units=3)
        tol = functools.partial(_rounding, w, x0, a0)
        top = _at(w, [x0])[0, 0]
        if not abs(top - a0) <= tol([x0])[0]:
            raise Finding(f'{on}: f(x0) should be a0 = {a0}; got {top}', (x0, a0))
        far, val = _outside(w, x0, lambda vals, xs: np.abs(vals) / np.maximum(tol(xs), 1e-300))
        if not abs(val) <= tol([far])[0]:
            raise Finding(f'{on}: f should be 0 where |x - x0| >= 1; got {val} at x = {far}',
                          (x0, a0))
    return Passed(f'{len(SPIKES_SHOWN)} (x0, a0) pairs shown in the notebook, 40 drawn afresh: 3 '
                  f'hidden units, f(x0) = a0, f = 0 where |x - x0| >= 1 (a grid, +-1e6, every '
                  f'kink and beyond the last: everywhere, f being piecewise linear)')


MLP_SHOWN = (np.array([0.0, 1.0, 3.0]), np.array([[5.0], [-2.0], [7.0]]), 'the 3 points shown')


def mlp_sets(seed):
    """The 15 sets (xs, ys, what) 6.3 tries for ``seed``: random ones (1 or 2 points, then
    sizes drawn in bands up to 400 with 1 to 7 output dims, and one with 8 to 20; the two
    closest points far apart in the list), evenly spaced, decreasing, large, constant and
    zero outputs (round 15: sizes were fixed, none from 41 to 119; round 22: no set had over
    200 points or 7 outputs, and an MLP that dropped the rest passed)."""
    rng = np.random.default_rng(seed)
    bands = ((3, 10), (10, 41), (41, 121), (121, 201), (121, 201), (201, 401))
    sizes = [(1, 1), (1, 3), (2, 1)] + [(int(rng.integers(*band)), int(rng.integers(1, 8)))
                                        for band in bands]
    sizes.append((int(rng.integers(3, 121)), int(rng.integers(8, 21))))
    sets = []
    for n, d in sizes:
        xs = rng.normal(size=n) * 10 ** rng.uniform(-2, 2)
        if n > 3:
            xs[-1] = xs[0] + 1e-6 * max(1.0, abs(xs[0]))
        sets.append((xs, rng.normal(size=(n, d)) * 10 ** rng.uniform(-1, 3), f'{n} random points'))
    return sets + [
        (np.arange(30.0) + rng.uniform(-5, 5), rng.normal(size=(30, 2)), '30 evenly spaced points'),
        (np.arange(20.0)[::-1] * -rng.uniform(1, 5), rng.normal(size=(20, 1)),
         '20 evenly spaced negative points, decreasing'),
        (1e6 + rng.permutation(10), rng.normal(size=(10, 1)), '10 points near 1e6'),
        (rng.normal(size=12), np.full((12, 2), rng.normal()), '12 points, all outputs equal'),
        (rng.normal(size=8), np.zeros((8, 1)), '8 points, all outputs 0')]


@checker('6.3')
def check_6_3(build_MLP):
    """``build_MLP(xs, ys)`` -> (m1, b1, M2, b2) exact on S with at most 3|S| hidden units."""
    seed = toolkit.fresh_seed()
    sets = [MLP_SHOWN] + mlp_sets(seed)
    for i, (xs, ys, what) in enumerate(sets):
        (n, d), on = ys.shape, f'{what} with {ys.shape[1]}-dim outputs' + (
            f' (set {i - 1} of ch06.mlp_sets({seed}))' if i else '')
        w = _weights(toolkit.call(build_MLP, xs, ys, what='your build_MLP', on=on),
                     f'your build_MLP on {on}')
        if len(w[1]) > 3 * n or w[2].shape[1] != d:
            raise Finding(f'{on}: budget: at most {3 * n} hidden units and {d} output columns; '
                          f'got {len(w[1])} hidden units and {w[2].shape[1]} output columns')
        got = _at(w, xs)
        err = np.abs(got - ys).max(1)
        if not err.max() <= np.abs(ys).max() * 1e-6 + 1e-9:
            j = int(np.argmax(err))
            raise Finding(f'{on}: at x = {float(xs[j])!r} your MLP gives '
                          f'{got[j].round(6).tolist()}; ys there is {ys[j].round(6).tolist()}',
                          float(xs[j]))
    return Passed(f'exact (1e-6 of the largest output) on the set shown and the {len(sets) - 1} '
                  f'sets of mlp_sets drawn afresh (1 to 400 points, 1 to 20 outputs); budget kept: '
                  f'at most 3|S| hidden units')


@checker('6.4')
def check_6_4(answer):
    """(M1 (1, 2), b1 (2,), M2 (2, 1), b2 (1,)): f(0) = 1 and f(x) <= 0 for |x| >= 1."""
    w = _weights(answer, 'your weak spike', units=2)
    if not abs(_at(w, [0.0])[0, 0] - 1) < 1e-9:
        raise Finding(f'f(0) should be 1; got {_at(w, [0.0])[0, 0]}')
    x, val = _outside(w, 0.0, size=lambda vals, xs: vals)      # the highest f
    if not val <= 1e-9:
        raise Finding(f'f(x) should be <= 0 for |x| >= 1; got f({x}) = {val}', x)
    return Passed('2 hidden units; f(0) = 1 and f <= 0 where |x| >= 1 (a grid, +-1e6, every kink '
                  'and beyond the last: everywhere, f being piecewise linear)')


@functools.lru_cache(maxsize=None)
def _counts():
    """count_params of Fig. 6.2's construction, built, for b = 2..100, and its growth per base
    (None if uneven), by which the shapes grow on past 100, where the digit embedding stops."""
    counts = {b: count_params(build_single_digit_mod_transformer(base=b))['n_params']
              for b in range(2, 101)}
    steps = {counts[b + 1] - counts[b] for b in range(2, 100)}
    return counts, steps.pop() if len(steps) == 1 else None


@checker('6.5')
def check_6_5(count_for_base):
    """A function ``b -> total parameter count`` of Fig. 6.2's single-digit adder in base b."""
    # a base drawn in each band up to 10^18 (round 12: a formula right only below 10^6 passed;
    # round 17: the bases stopped at 10^12; a float is judged to its own rounding)
    rng = toolkit.fresh_rng()
    drawn = [int(10 ** rng.uniform(lo, hi)) + int(rng.integers(10 ** 6)) * (lo >= 12)
             for lo, hi in ((2.01, 4), (4, 8), (8, 12), (12, 15), (15, 18))]
    drawn.append(int(rng.integers(2 * 10 ** 17, 10 ** 18)))   # round 22: int64 wrapped there
    for b in list(range(2, 102)) + drawn:      # round 20: 101 was never tried
        got = toolkit.call(count_for_base, b, what='your formula', on=f'b = {b}')
        value = got[0] if isinstance(got, (tuple, list)) and got else got
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Finding(f'b = {b}: your formula should give a number; got '
                          f'{toolkit.describe(value)}', b)
        counts, step = _counts()
        want = counts[b] if b <= 100 else None if step is None else counts[100] + (b - 100) * step
        if want is not None and value != want and not (     # a float: to its own rounding
                isinstance(value, float) and abs(value - want) <= 4 * np.spacing(float(want))):
            hint = (f'build it with taotp.build_single_digit_mod_transformer(base={b}) outside '
                    f'your function and count it with taotp.count_params' if b <= 100 else
                    'a formula holds for every base, and this one was drawn afresh')
            raise Finding(f'b = {b}: your formula gives {toolkit.short(value)}, which is not the '
                          f'count of Fig. 6.2\'s construction in base {b}; {hint}', b)
    return Passed('the total count is right for every base b = 2..100 (where Fig. 6.2\'s '
                  'construction is built and counted), at 101 and at 6 larger bases drawn afresh, '
                  'from 10^2 to 10^4, 10^4 to 10^8, 10^8 to 10^12, 10^12 to 10^15 and 10^15 to '
                  '10^18, and one from 2 x 10^17 to 10^18')


# ----------------------------------------------------------------------------- programs: 6.6-6.20

def _program(params, what='your program', vocab=0, block=0, **limits):
    """A submitted program as float64 arrays within ``limits`` (``toolkit.LIMITS`` keywords;
    ``layers=1`` means exactly one layer here), taking ``vocab`` tokens and ``block`` positions."""
    params = toolkit.program(params, what=what)
    toolkit.budget(params, what=what, **limits)
    if limits.get('layers') == 1 and config(params)['n_layers'] != 1:
        raise Finding(f'expected a one-layer program; got {config(params)["n_layers"]} layers')
    toolkit.room(params, vocab, block, block_why='for this task')
    return params


def _built(build, n, **limits):
    params = toolkit.call(build, n, what='your builder', on=f'n_digits={n}')
    return _program(params, f'the program your builder returned for n_digits={n}', **limits)


def _decode_check(params, prompts, want, label, pairs=None, hidden=False, mlp_rows='distinct',
                  op='+'):
    """Greedy decoding right on every prompt (one teacher-forced pass), or a Finding that names
    the first wrong input, decodes it for real and, for visible cases only, says what was due."""
    prompts, want = np.asarray(prompts), np.asarray(want).reshape(len(prompts), -1)
    n_prompt, n_out = prompts.shape[1], want.shape[1]
    toolkit.room(params, 12 if prompts.max() > 9 else 10, n_prompt + n_out - 1,
                 block_why='for this task')
    seqs = np.concatenate([prompts, want], axis=1)
    pred = toolkit.run_program(lambda: teacher_forced_argmax(seqs, params, n_prompt,
                                                             mlp_rows=mlp_rows), on=label)
    bad = np.flatnonzero((pred != want).any(1))
    if not len(bad):
        return
    i = bad[0]
    got = toolkit.run_program(decode_batch, prompts[i:i + 1], params, n_out, 1,
                              on=label)[0, n_prompt:].tolist()
    on = f'{label}: ' + (f'{pairs[i][0]} {op} {pairs[i][1]}: ' if pairs is not None else '') + \
        f'prompt {prompts[i].tolist()}'
    if hidden:
        raise toolkit.wrong(on, got, 'greedy decoding must print the digits due after "="',
                            prompts[i].tolist())
    raise Finding(f'{on}: expected {want[i].tolist()}, got {got} ({len(bad):,} of these '
                  f'{len(prompts):,} prompts wrong)', prompts[i].tolist())


def _carry_pairs(n):
    """Boundary pairs of n-digit numbers: carries everywhere, zeros, the largest, halves."""
    top, half = 10 ** n - 1, 5 * 10 ** (n - 1)
    pairs = [[top, 1], [1, top], [top, top], [top, 0], [0, top], [0, 0], [half, half],
             [half - 1, half + 1], [top // 9 * 5, top // 9 * 5], [top // 9 * 4, top // 9 * 5 + 1]]
    pairs += [[10 ** k, top - 10 ** k + 1] for k in range(n)]          # every carry chain
    pairs += [[2 ** k % (top + 1), top - 2 ** k % (top + 1)] for k in range(4 * n)]
    return np.unique(np.array(pairs, dtype=np.int64), axis=0)


SINGLE = np.stack(np.divmod(np.arange(100), 10), axis=1)      # every [i, j]


@checker('6.6')
def check_6_6(params):
    """One layer whose attention output at position 1 of [i, j] is (1 - k, k, 0, ...), k = i + j."""
    params = _program(params, vocab=10, block=2, layers=1)
    out = toolkit.run_program(lambda: trace(SINGLE, params).attn_out[0][:, 1])
    want = np.zeros_like(out)
    want[:, 0], want[:, 1] = 1 - SINGLE.sum(1), SINGLE.sum(1)
    wrong = toolkit.off(out, want, 1e-6).any(1)
    if wrong.any():
        i = int(np.argmax(wrong))
        raise Finding(f'{SINGLE[i].tolist()}: the attention output should be '
                      f'{want[i, :4].tolist()}...; got {out[i, :4].round(6).tolist()}...',
                      SINGLE[i].tolist())
    return Passed(f'all 100 digit pairs: the attention output at the second position is '
                  f'(1 - k, k, 0, ...) to 1e-6 (one layer, d_model {config(params)["d_model"]})')


@checker('6.7')
def check_6_7(params):
    """Single-digit addition mod 10 with d_model = 3: all 100 pairs."""
    params = _program(params, d_model=3)
    _decode_check(params, SINGLE, SINGLE.sum(1) % 10, '[i, j] -> (i + j) mod 10')
    book = count_params(build_single_digit_mod_transformer())['n_params']
    return Passed(f'all 100 pairs right; budget kept: d_model <= 3; '
                  f'{count_params(params)["n_params"]:,} parameters (the book\'s 4 dims: {book:,})')


@checker('6.8')
def check_6_8(params):
    """Single-digit addition with proper cleanup: nothing but the answer's embedding is left."""
    params = _program(params)
    answers = SINGLE.sum(1) % 10
    _decode_check(params, SINGLE, answers, '[i, j] -> (i + j) mod 10')
    final = toolkit.run_program(lambda: trace(SINGLE, params).final[:, 1])
    digits, want = params['tok_emb'][:10], params['tok_emb'][answers]
    gap = np.abs(digits[:, None] - digits[None]).max(-1)[~np.eye(10, dtype=bool)].min()
    err = np.abs(final - want).max(1)
    if not err.max() <= 1e-6 * gap:
        i = int(np.argmax(err))
        raise Finding(f'{SINGLE[i].tolist()}: the residual before the final layer norm should be '
                      f'tok_emb[{answers[i]}] = {want[i].round(4).tolist()}; got '
                      f'{final[i].round(4).tolist()}, off by {err[i] / gap:.3g} of the smallest '
                      f'gap between two digits\' embeddings (1e-6 allowed)', SINGLE[i].tolist())
    return Passed('all 100 pairs right, and the residual before the final layer norm at the answer '
                  'position equals tok_emb of the answer to 1e-6 of the smallest gap between two '
                  'digits\' embeddings (so scaling the program down hides no leftover)')


def _mod2(params, target=lambda s: s % 10, label='[a, a, +, b, b, =] -> (a + b) mod 10'):
    """All 10,000 pairs of 2-digit numbers; returns (attention at '=', MLP input there, sums)."""
    prompts, pairs = addition_prompts(2)
    _decode_check(params, prompts, target(pairs.sum(1)), label)
    seen = toolkit.run_program(lambda: trace(prompts, params))
    return seen.attn[0][:, :, 5], seen.mlp_in[0][:, 5], pairs.sum(1)


PLACES = {'both units digits': (1, 4), 'both tens digits': (0, 3)}     # positions in [a a + b b =]
SCOPE = ('all 10,000 pairs right; for each digit place a head splits its attention between a\'s '
         'and b\'s digit and alone brings them to the MLP (its output swapped in from a prompt '
         'with other digits there, the MLP\'s hidden units get that prompt\'s input), and they '
         'tell every sum a + b apart; budget kept: one layer, at most 3 heads')
DIGITS = {"a's tens digit": (0,), "a's units digit": (1,), "b's tens digit": (3,),
          "b's units digit": (4,)}


def _structure(params, wanted, cleanup=True, share=0.45):
    """All 10,000 pairs right; for each of ``wanted`` (name -> positions) a head putting >=
    ``share`` of its attention at '=' on each of those positions, for every prompt, that alone
    carries their digits to the MLP (``carried_by``); no head mostly on '=' itself unless
    ``cleanup``; the MLP's hidden units tell every sum apart."""
    weights, mlp_in, sums = _mod2(params)
    found = {}
    for name, positions in wanted.items():
        found[name] = np.flatnonzero(weights[:, :, list(positions)].min(axis=(0, 2)) >= share)
        if not len(found[name]):
            raise Finding(f'all pairs right, but no head reads {name}: at the "=" position one '
                          f'head must put at least {share * 100:.0f} % of its attention on each '
                          f'of positions {list(positions)}, for every prompt')
    own = [h for h in range(weights.shape[1]) if weights[:, h, 5].max() > 0.5]
    if own and not cleanup:
        raise Finding(f'head {own[0]} attends mostly to the "=" position itself: that is a '
                      f'cleanup head, which this puzzle removes')
    _tells_sums_apart(params, mlp_in, sums)
    prompts, pairs = addition_prompts(2)
    for name, positions in wanted.items():
        head, miss = carried_by(params, prompts, pairs, positions, found[name])
        if head is None:
            raise no_carrier(name, positions, miss)


@checker('6.10')
def check_6_10(params):
    """2-digit addition mod 10 with one head per digit place (<= 3 heads, one layer)."""
    _structure(_program(params, layers=1, heads=3), PLACES)
    return Passed(SCOPE)


@checker('6.11')
def check_6_11(params):
    """As 6.10, keeping the standard position circle pos_enc_3d_array(block_size) in pos_emb."""
    params = _program(params, layers=1, heads=3)
    pos = params['pos_emb']
    if isinstance(pos, list) or not any(
            np.allclose(pos[:, c:c + 3], pos_enc_3d_array(len(pos)), atol=1e-9)
            for c in range(pos.shape[1] - 2)):
        raise Finding(f'pos_emb must be one table with three columns equal to '
                      f'pos_enc_3d_array({len(pos)}) (the standard encoding); none match')
    _structure(params, PLACES)
    return Passed(f'{SCOPE}; the standard position circle kept, d_model '
                  f'{config(params)["d_model"]} (the book uses 7)')


@checker('6.13')
def check_6_13(params):
    """The 2-digit mod-10 adder without the cleanup head: exactly 4 heads."""
    params = _program(params, layers=1, heads=4)
    if config(params)['n_heads'][0] != 4:
        raise Finding(f'budget: exactly 4 heads (2 n_digits, no cleanup head); got '
                      f'{config(params)["n_heads"][0]}')
    _structure(params, DIGITS, cleanup=False, share=0.9)
    book = count_params(build_multi_digit_mod_transformer(2))['n_params']
    return Passed(f'all 10,000 pairs right; each digit read by its own head (>= 90 % of its '
                  f'attention) that alone brings it to the MLP (its output swapped in from a '
                  f'prompt with another digit there, the MLP\'s hidden units get that prompt\'s '
                  f'input), none mostly on itself (no cleanup), the hidden units tell every sum '
                  f'apart; one layer, 4 heads, '
                  f'{count_params(params)["n_params"]:,} parameters (book, 5 heads: {book:,})')


@checker('6.14')
def check_6_14(params):
    """Output the tens digit of a + b (mod 10) for 2-digit a, b."""
    _mod2(_program(params), lambda s: s // 10 % 10,
          '[a, a, +, b, b, =] -> floor((a + b) / 10) mod 10')
    return Passed('all 10,000 pairs of 2-digit numbers: the tens digit of the sum is right')


@functools.lru_cache(maxsize=None)
def _book_sep(kind, n):
    """The key separation of the book's own construction (1.37e-9 for the 3-digit mod adder)."""
    build = build_multi_digit_mod_transformer if kind == 'mod' else \
        build_decimal_addition_transformer
    return min_sep(mlp_keys(build(n)))


def _keys(params, seqs, at):
    """The MLP keys at positions ``at`` (the one coordinate the MLP reads, layer-normed), before
    ln2's gamma and beta (a gain stretches keys and rounding alike; M1 can undo it) and at the
    book's width (appended zero dimensions stretch a normed coordinate by sqrt(d_model / 7))."""
    layer = params['layers'][0]
    rows = np.flatnonzero(np.any(layer['M1'] != 0, axis=1))
    if len(rows) != 1:
        raise Finding(f'to measure a key separation the MLP must read one residual coordinate '
                      f'(one non-zero row of M1); yours reads rows {rows.tolist()}')
    plain = dict(params, layers=[dict(layer, ln2={'gamma': 1.0, 'beta': 0.0})])
    keys = toolkit.run_program(lambda: mlp_inputs(plain, seqs, 0, at, int(rows[0])))
    return keys * np.sqrt(7 / config(params)['d_model'])       # the book's d_model is 7


@checker('6.15')
def check_6_15(params):
    """3-digit mod-10 adder whose MLP keys are >= 100x farther apart than the book's (1.37e-9)."""
    params = _program(params, layers=1)
    sums = np.arange(1999)
    shown, shown_pairs = addition_prompts(3, np.vstack([
        np.stack([np.minimum(sums, 999), sums - np.minimum(sums, 999)], axis=1), _carry_pairs(3)]))
    _decode_check(params, shown, shown_pairs.sum(1) % 10, '3-digit (a + b) mod 10')
    drawn, pairs = addition_prompts(3, toolkit.fresh_rng().integers(0, 1000, (3000, 2)))
    _decode_check(params, drawn, pairs.sum(1) % 10, '3-digit (a + b) mod 10, random pair',
                  pairs, hidden=True)
    prompts, pairs = np.vstack([shown, drawn]), np.vstack([shown_pairs, pairs])
    sep, s1, s2 = _separation(_keys(params, prompts, [7])[:, 0], pairs.sum(1))
    book = _book_sep('mod', 3)
    if not sep >= 100 * book:
        raise Finding(f'right on all {len(prompts):,} prompts, but the MLP keys of the sums {s1} '
                      f'and {s2} are only {sep:.3g} apart; need >= {100 * book:.3g} (100x the '
                      f'book\'s {book:.3g})')
    return Passed(f'right on {len(prompts):,} 3-digit pairs (one per sum, carry chains, 3,000 '
                  f'random ones drawn afresh); keys of different sums at least {100 * book:.3g} '
                  f'apart (100x the book\'s), at the book\'s width before ln2\'s gain; one layer')


@checker('6.16')
def check_6_16(params):
    """2-digit decimal addition after an ignored prefix of 0-6 digits (no size budget)."""
    params = _program(params, vocab=12, block=14)      # a prefix of 6 digits, then 5 + 3 tokens
    edge, edge_pairs = addition_prompts(2, _carry_pairs(2))
    for length in range(1, 7):      # carries after nines, zeros, their own digits
        for kind, prefix in (('nines', np.full((len(edge), length), 9)),
                             ('zeros', np.zeros((len(edge), length), dtype=np.int64)),
                             ('own digits', np.resize(edge[:, [0, 1, 3, 4]], (len(edge), length)))):
            _decode_check(params, np.hstack([prefix, edge]), answer_digits(edge_pairs.sum(1), 3),
                          f'a prefix of {length} {kind}', edge_pairs)
    rng = toolkit.fresh_rng()
    prompts, pairs = addition_prompts(2)
    lengths = rng.permutation(np.arange(len(pairs)) % 7)
    for length in range(7):
        mine = lengths == length
        full = np.hstack([rng.integers(0, 10, size=(mine.sum(), length)), prompts[mine]])
        _decode_check(params, full, answer_digits(pairs[mine].sum(1), 3),
                      f'a random prefix of {length} digit{"s" * (length != 1)}',
                      pairs[mine], hidden=True)
    return Passed(f'the 3 digits of the sum right for all 10,000 pairs, each after 0-6 random '
                  f'digits drawn afresh, and for {len(edge)} carry pairs after prefixes of every '
                  f'length made of nines, of zeros and of their own digits')


@checker('6.17')
def check_6_17(build):
    """``build(n_digits)`` -> decimal adder whose key separation beats the book's construction."""
    notes = []
    for n in (1, 2):
        params = _built(build, n, layers=1)
        prompts, pairs = addition_prompts(n)
        digits = answer_digits(pairs.sum(1), n + 1)
        _decode_check(params, prompts, digits, f'{n}-digit addition')
        keys = _keys(params, np.hstack([prompts, digits[:, :-1]]), range(2 * n + 1, 3 * n + 2))
        labels = pairs.sum(1)[:, None] * 10 + np.arange(n + 1)[None]   # (sum, answer position)
        sep, l1, l2 = _separation(keys, labels)
        book = _book_sep('decimal', n)
        if not sep > 1.01 * book:
            raise Finding(f'n_digits={n}: right, but the keys of all (sum, answer position) pairs '
                          f'are only {sep:.3g} apart (sum {l1 // 10} at answer digit {l1 % 10} '
                          f'and sum {l2 // 10} at answer digit {l2 % 10}); the book\'s '
                          f'construction reaches {book:.3g} (beat it by at least 1%)')
        notes.append(f'{n} digit(s) {sep:.3g} (book {book:.2g})')
    return Passed('every pair right (100 of 1 digit, 10,000 of 2), one layer; keys of all pairs '
                  'and answer positions (book\'s width, before ln2): ' + ', '.join(notes))


@checker('6.19')
def check_6_19(params):
    """``[a, +, b, =] -> digits of a + b, then '='`` for all a, b < 100 written without padding."""
    params = _program(params, vocab=12, block=9)
    digits, groups, memo = lambda x: [int(c) for c in str(x)], {}, DistinctRows()
    for a, b in ((a, b) for a in range(100) for b in range(100)):
        case = (digits(a) + [PLUS] + digits(b) + [EQUALS], digits(a + b) + [EQUALS], [a, b])
        groups.setdefault((len(case[0]), len(case[1])), []).append(case)
    for rows in groups.values():
        prompts, want, pairs = (np.array(part) for part in zip(*rows))
        _decode_check(params, prompts, want, 'without padding', pairs, mlp_rows=memo)
    return Passed('all 10,000 pairs a, b in 0..99 written without padding: the sum without '
                  'leading zeros, then "=" (11) as the end mark')


MULTIPLIED = 1_500


@checker('6.20')
def check_6_20(build):
    """``build(n_digits)`` -> multiplier: ``[a.., +, b.., =] -> 2n digits of a * b``."""
    special = [[99, 99], [10, 10], [0, 57], [57, 0], [0, 0], [1, 99], [99, 1], [50, 50],
               [11, 11], [64, 16], [32, 32], [25, 4], [98, 99], [12, 34], [90, 90], [1, 1]]
    # 1,500 of the 10,000 pairs, fresh on each check (all of them take 30 s: the MLP of a
    # memorising multiplier is wide); a program wrong on 1 % of the pairs passes 3 in 10^7
    drawn = np.stack(np.divmod(toolkit.fresh_rng().choice(10_000, MULTIPLIED, replace=False),
                               100), axis=1)
    for n in (1, 2):
        params = _built(build, n)
        for pairs, hidden in ((None, False),) if n == 1 else ((special, False), (drawn, True)):
            prompts, pairs = addition_prompts(n, pairs)
            _decode_check(params, prompts, answer_digits(pairs[:, 0] * pairs[:, 1], 2 * n),
                          f'{n}-digit multiplication', pairs if n == 2 else None, hidden, op='x')
    return Passed(f'all 100 1-digit products and {len(special) + MULTIPLIED:,} 2-digit ones (2n '
                  f'digits, zero padded): zeros, ones, 99 x 99, powers of two, and {MULTIPLIED:,} '
                  f'of the 10,000 pairs drawn afresh')


SPIKES_OFF = dict.fromkeys(['taotp.addition.spike', 'taotp.build_MLP',
                            'taotp.lookup.universal.interpolating_mlp'],
                           'build the hidden units yourself (each ReLU is one kink of f)')

PUZZLES = [
    Puzzle('6.1', 'The sums v_i + u_j span at most n + m - 1 dimensions', 'reflect'),
    Puzzle('6.2', 'A spike of any height anywhere (Corollary 6.1)', 'checked', check_6_2,
           '3 hidden units', refuse=SPIKES_OFF),
    Puzzle('6.3', 'Theorem 6.1: build_MLP', 'checked', check_6_3, '<= 3|S| hidden units',
           refuse=SPIKES_OFF),
    Puzzle('6.4', 'A weak spike from two ReLUs', 'checked', check_6_4, '2 hidden units'),
    Puzzle('6.5', 'Parameter count of the single-digit adder in base b', 'checked', check_6_5,
           refuse={'taotp.build_single_digit_mod_transformer':
                   'build the construction outside your function to test your formula'}),
    Puzzle('6.6', 'Attention that outputs (1 - k, k, 0, ...)', 'checked', check_6_6, 'one layer'),
    Puzzle('6.7', 'Single-digit addition in 3 model dimensions', 'checked', check_6_7, 'd_model 3'),
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
    Puzzle('6.15', 'Key separation 100x wider for 3 digits', 'checked', check_6_15, 'one layer'),
    Puzzle('6.16', 'Decimal addition after an ignored prefix', 'checked', check_6_16,
           'none (block size >= 14)'),
    Puzzle('6.17', 'Scale value and position to widen keys', 'checked', check_6_17, 'one layer'),
    Puzzle('6.18', 'Which position coordinate should go into the key?', 'reflect'),
    Puzzle('6.19', 'Addition without zero padding', 'checked', check_6_19),
    Puzzle('6.20', 'Decimal multiplication', 'checked', check_6_20),
]
