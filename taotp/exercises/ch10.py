"""Checkers for Chapter 10, Selective Induction Heads.

The networks here are the paper's disentangled transformers
(``taotp.selective.DisentangledTransformer``): puzzles 10.2-10.6 hand in
matrices of that architecture, and the checkers run them beside the
reference construction.
"""
import numpy as np

from .. import selective as sel
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed


def _package_used(seen, what):
    """The finding for a submission whose right outputs came from the package's own answer."""
    if seen[0] == 'sys.settrace':
        return Finding(f'{what} switched off the check\'s watch (sys.settrace)')
    return Finding(f'{what} gives the right outputs by calling {seen[0]}, the package\'s own '
                   f'answer to this puzzle; write it yourself')


def _P(S, seed):
    return sel.transition_matrix(S, np.random.default_rng(seed))


def _single_layer(S, T, heads):
    """A one-layer disentangled network whose heads act on the position block."""
    pos = np.arange(S, S + T)
    layers = [[[(pos, pos, block) for block in head] for head in heads]]
    return sel.DisentangledTransformer(S, T, layers, (np.arange(S), np.eye(S)))


# ----------------------------------------------------------------------------- 10.1

POSTERIOR_CASES = (((1, 2, 3), 5, 40), ((2, 3, 4), 3, 30), ((1, 3, 4), 4, 64),
                   ((3, 5, 7), 5, 128), ((1, 2), 2, 128), ((1, 2), 5, 1000),
                   ((1,), 3, 20), ((2, 9), 2, 10), ((4, 5, 6, 7, 8), 6, 300))


_POSTERIOR = {sel.lag_posterior.__code__: 'taotp.selective.lag_posterior',     # the answer
              sel.log_likelihoods.__code__: 'taotp.selective.log_likelihoods'}


@checker('10.1')
def check_10_1(lag_posterior):
    """``lag_posterior(P, lags, x)`` -> (T, K) posterior weights after every prefix."""
    n, used = 0, []
    for c, (lags, S, T) in enumerate(POSTERIOR_CASES):
        P = _P(S, 10 + c)
        for s in range(3):
            x, _ = sel.sample_sequence(P, lags, T, np.random.default_rng(100 * c + s))
            with guard.watching(_POSTERIOR) as seen:
                got = guard.call(lag_posterior, P.copy(), lags, x.copy(),
                                 what='your lag_posterior', on=f'lags {list(lags)}, T = {T}')
            used = used or seen[:1]
            P = _P(S, 10 + c)                 # made again after the call: never in reach
            x, _ = sel.sample_sequence(P, lags, T, np.random.default_rng(100 * c + s))
            want = sel.lag_posterior(P, lags, x)
            got = guard.array(got, want.shape, what='your posterior')
            bad = np.argwhere(np.abs(got - want) > 1e-9)
            if len(bad):
                t = int(bad[0][0])
                raise Finding(f'lags {list(lags)}, S = {S}, after {t + 1} tokens: expected '
                              f'{want[t].round(4).tolist()}, got {got[t].round(4).tolist()}'
                              + (' (the sum starts at position kmax + 1 for every lag)'
                                 if t + 1 > max(lags) and np.allclose(got[t].sum(), 1) else ''),
                              x.tolist())
            n += 1
    if used:
        raise _package_used(used, 'your lag_posterior')
    return Passed(f'posterior equal to the reference to 1e-9 after every prefix of {n} seeded '
                  f'sequences ({len(POSTERIOR_CASES)} lag sets: one lag, kmin > 1, T = kmax + 1, '
                  f'T up to 1000, S from 2 to 6)')


# ----------------------------------------------------------------------------- 10.2

LAYER1_CASES = (((1, 2, 3), 3, 12), ((2, 4, 5), 4, 20), ((1, 3), 5, 16), ((2,), 2, 8),
                ((3, 6), 3, 7), ((1, 2, 3, 4, 5), 4, 40))


@checker('10.2')
def check_10_2(layer1_matrix):
    """``layer1_matrix(P, lags, T, lam)`` -> the (S+T, S+T) layer-1 matrix."""
    lam = 50.0
    n = 0
    for c, (lags, S, T) in enumerate(LAYER1_CASES):
        A = guard.call(layer1_matrix, _P(S, 20 + c), lags, T, lam, what='your layer1_matrix',
                       on=f'lags {list(lags)}, S = {S}, T = {T}, lam = {lam}')
        A = guard.array(A, (S + T, S + T), what='your matrix')
        P = _P(S, 20 + c)                   # the check's own copy, made after the call
        d = S + T
        model = sel.DisentangledTransformer(S, T, [[[(np.arange(d), np.arange(d), A)]]],
                                            (np.arange(S), np.eye(S)))
        kmax = max(lags)
        for s in range(4):
            x, _ = sel.sample_sequence(P, lags, T, np.random.default_rng(50 * c + s))
            block = model.run(x)['resid'][1][:, d + S:]
            ptil = sel.normalised_transitions(P, lags, x)
            want = np.zeros((T, T))
            for i in range(kmax + 1, T + 1):
                for col, k in enumerate(lags):
                    want[i - 1, i - k - 1] = ptil[i - 1, col]
            err = np.abs(block - want)[kmax:]
            off = ~(err <= 1e-8)              # NaN counts as wrong (NaN > tol is False)
            if off.any():
                i = int(np.argwhere(off)[0][0]) + kmax + 1
                raise Finding(f'lags {list(lags)}, S = {S}, tokens {x.tolist()}: at position i = '
                              f'{i} the stored slots 1..{T} should be '
                              f'{want[i - 1].round(3).tolist()}, got '
                              f'{block[i - 1].round(3).tolist()} (ptil[i, k] belongs in slot '
                              f'i - k)', x.tolist())
            n += 1
    return Passed(f'layer 1 stores ptil[i, k] in slot i - k for every i > kmax (to 1e-8, '
                  f'lam = {lam:g}) on {n} seeded sequences over {len(LAYER1_CASES)} lag sets (one '
                  f'lag, kmin > 1, T = kmax + 1, T up to 40)')


# ----------------------------------------------------------------------------- 10.3

def _coverage_problem(weights, lags, i):
    """Check the partition and no-collision rules at 1-based query i; None if fine."""
    kmax = max(lags)
    attended = []
    for h, w in enumerate(weights):
        row = w[i - 1, :i]
        on = np.flatnonzero(row > 1e-6)
        if len(on) and (np.any(on + 1 <= kmax) or np.abs(row[on] - 1 / len(on)).max() > 1e-6):
            return (f'at query {i} head {h} attends to positions {(on + 1).tolist()} with weights '
                    f'{row[on].round(3).tolist()}; each head must average tokens kmax < j <= i '
                    f'uniformly')
        for a in on + 1:
            for b in on + 1:
                shared = sorted(set(a - np.array(lags)) & set(b - np.array(lags)))
                if a < b and shared:
                    return (f'at query {i} head {h} averages tokens {a} and {b}, whose stored '
                            f'transitions share slot {shared[0]}')
        attended += list(on + 1)
    missing = sorted(set(range(kmax + 1, i + 1)) - set(attended))
    twice = sorted({j for j in attended if attended.count(j) > 1})
    if missing:
        return f'at query {i} no head attends to token(s) {missing[:5]}'
    if twice:
        return f'at query {i} token(s) {twice[:5]} are attended by more than one head'
    return None


@checker('10.3')
def check_10_3(masks):
    """A list of at most 4 (T x T) sign masks (+1/-1) for layer 2 with lags {1,2,3,4}."""
    T, lags, lam = 40, (1, 2, 3, 4), 500.0
    if masks is None:
        raise Finding('expected a list of (40, 40) arrays of +1/-1; got None')
    try:
        masks = list(masks)
    except TypeError:
        raise Finding(f'expected a list of (40, 40) arrays; got {type(masks).__name__}') from None
    if not 1 <= len(masks) <= 4:
        raise Finding(f'the budget is at most 4 heads; got {len(masks)}')
    arrs = []
    for h, m in enumerate(masks):
        a = guard.array(m, (T, T), what=f'mask {h}')
        if not np.all(np.isin(a, (-1, 1))):
            raise Finding(f'mask {h} must hold only +1 and -1 (times lam); got values '
                          f'{sorted(set(np.unique(a).tolist()))[:5]}')
        arrs.append(a.astype(np.float64))
    S = 3
    model = _single_layer(S, T, [[lam * a] for a in arrs])
    weights = model.run(np.zeros(T, dtype=np.int64))['attn'][0]
    kmax = max(lags)
    for i in range(2 * kmax, T + 1):
        problem = _coverage_problem(weights, lags, i)
        if problem:
            raise Finding(problem)
    return Passed(f'{len(arrs)} head(s): at every query 8..{T} each token after the warm-up is '
                  f'averaged by exactly one head, uniformly, and no head mixes two transitions '
                  f'in one slot')


# ----------------------------------------------------------------------------- 10.4

LAYER3_CASES = (((1, 2, 3), 4, 30), ((2, 3, 4, 5), 3, 36), ((1, 2), 5, 24), ((4, 5, 6), 3, 30),
                ((1, 2, 3, 4, 5, 6), 2, 40))


@checker('10.4')
def check_10_4(layer3_blocks):
    """``layer3_blocks(lags, T, lam, beta)`` -> (band, B), both (T, T)."""
    lam, beta = 500.0, 7.0
    n = 0
    for c, (lags, S, T) in enumerate(LAYER3_CASES):
        out = guard.call(layer3_blocks, lags, T, lam, beta, what='your layer3_blocks',
                         on=f'lags {list(lags)}, T = {T}')
        P = _P(S, 40 + c)                   # made after the call: never in reach
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise Finding(f'expected a pair (band, B); got {type(out).__name__}')
        band = guard.array(out[0], (T, T), what='your band')
        B = guard.array(out[1], (T, T), what='your B')
        ref = sel.build_selective_induction(P, lags, T, lam, beta)
        yours = sel.build_selective_induction(P, lags, T, lam, beta)
        blocks = yours.layers[2][0]
        yours.layers[2][0] = [(blocks[0][0], blocks[0][1], band.astype(float))] + \
            [(r, cc, B.astype(float)) for r, cc, _ in blocks[1:]]
        start = ref.meta['exact_from']
        for s in range(3):
            x, _ = sel.sample_sequence(P, lags, T, np.random.default_rng(70 * c + s))
            want = ref.run(x)
            got = yours.run(x)
            for i in range(start, T + 1):
                keys = [i + 1 - k - 1 for k in lags]
                ws, gs = want['scores'][2][0, i - 1, keys], got['scores'][2][0, i - 1, keys]
                if not np.abs(ws - gs).max() <= 1e-6:       # NaN and inf count as wrong
                    raise Finding(f'lags {list(lags)}, tokens {x.tolist()}: at query {i} the '
                                  f'scores of keys {[k + 1 for k in keys]} (lags {list(lags)}) '
                                  f'should be lam + {(ws - lam).round(4).tolist()}, got lam + '
                                  f'{(gs - lam).round(4).tolist()}', x.tolist())
            off = ~(np.abs(want['probs'] - got['probs'])[start - 1:] <= 1e-6)   # NaN: wrong
            if off.any():
                i = int(np.argwhere(off)[0][0]) + start
                raise Finding(f'lags {list(lags)}, tokens {x.tolist()}: output at query {i} '
                              f'should be {want["probs"][i - 1].round(4).tolist()}, got '
                              f'{got["probs"][i - 1].round(4).tolist()} (a masked key gets '
                              f'weight?)', x.tolist())
            n += 1
    return Passed(f'layer-3 scores equal lam + beta * sum_h mean ptil at every query from '
                  f'2 kmax + K - 1 on, and outputs match the reference, on {n} seeded sequences '
                  f'(lags {{1,2,3}}, {{2,3,4,5}}, {{1,2}}, {{4,5,6}}, {{1,...,6}})')


# ----------------------------------------------------------------------------- 10.5

CHOICES_134 = {
    'A': 'period 3 leaves too few slots per head',
    'B': 'lags 1 and 4 are equal modulo 3, so their entries share slots and the selection '
         'block cannot tell them apart',
    'C': 'three heads can never cover three lags',
    'D': 'layer 1 cannot store a lag as large as 4',
}


@checker('10.5')
def check_10_5(answer):
    """A dict: 'period' and 'classes' for lags {3,5,7} with <= 3 heads; 'choice_134'."""
    T, beta = 48, 20.0
    if not isinstance(answer, dict):
        raise Finding(f"expected a dict with keys 'period', 'classes', 'choice_134'; got "
                      f'{type(answer).__name__}')
    lags = (3, 5, 7)
    period, classes = answer.get('period'), answer.get('classes')
    if isinstance(period, bool) or not isinstance(period, (int, np.integer)) or period < 1:
        raise Finding(f"'period' must be a positive integer; got {period!r}")
    try:
        classes = tuple(tuple(int(r) for r in c) for c in classes)
    except (TypeError, ValueError):
        raise Finding(f"'classes' must be a list of lists of residues; got {classes!r}") from None
    if not 1 <= len(classes) <= 3:
        raise Finding(f'budget: at most 3 heads (the fallback needs 5); got {len(classes)} '
                      f'classes')
    flat = sorted(r for c in classes for r in c)
    if flat != list(range(period)):
        raise Finding(f'the classes must split the residues 0..{period - 1} (each exactly once) '
                      f'so that every token is used; got {classes}')
    problems = sel.design_problems(lags, period, classes)
    if problems:
        raise Finding(f'period {period}, classes {classes}: {problems[0]}, so two stored '
                      f'transitions share a slot')
    design = sel.plan_heads(lags, period=period, classes=classes)
    P = _P(4, 55)
    model = sel.build_selective_induction(P, lags, T, beta=beta, period=period, classes=classes)
    X, _ = sel.sample_batch(P, lags, T, 4, rng=np.random.default_rng(56))
    err = np.abs(model.next_token_probs(X) - sel.construction_predictive(P, lags, X, beta, design))
    if err[:, model.meta['exact_from'] - 1:].max() > 1e-6:
        raise Finding(f'period {period}, classes {classes}: the network leaves the analytic '
                      f'predictor by {err.max():.2e}')
    choice = answer.get('choice_134')
    if isinstance(choice, str):        # read as a plain str: a subclass cannot answer for it
        choice = str.__str__(choice).strip().strip('()').strip().upper()
    if choice != 'B':
        raise Finding(f"your design for {{3,5,7}} works; 'choice_134' should name the reason "
                      f"period 3 fails for {{1,3,4}} (one of {sorted(CHOICES_134)}); "
                      f"got {answer.get('choice_134')!r:.40}")
    return Passed(f'period {period}, {len(classes)} heads: valid by the residue rule, the network '
                  f'equals the analytic predictor on 4 seeded sequences (T = {T}), and the '
                  f'{{1,3,4}} reason is right')


# ----------------------------------------------------------------------------- 10.6

def _scores_at_candidates(run, lags, i):
    return run['scores'][2][0, i - 1, [i - k for k in lags]]


SINGLE_HEAD_CASES = (((2, 5), 4, 40), ((1, 3), 3, 32), ((2, 4), 5, 36), ((3, 4), 3, 30),
                     ((1, 2), 3, 24), ((3, 7), 4, 40), ((1, 6), 2, 40))


@checker('10.6')
def check_10_6(single_head_blocks):
    """``single_head_blocks(lags, T, beta)`` -> (mask2, B): layer 2's mask, layer 3's block."""
    beta, lam = 10.0, 500.0
    n = 0
    for c, (lags, S, T) in enumerate(SINGLE_HEAD_CASES):
        out = guard.call(single_head_blocks, lags, T, beta, what='your single_head_blocks',
                         on=f'lags {list(lags)}, T = {T}')
        P = _P(S, 60 + c)                   # made after the call: never in reach
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise Finding(f'expected a pair (mask2, B); got {type(out).__name__}')
        mask = guard.array(out[0], (T, T), what='your layer-2 mask')
        B = guard.array(out[1], (T, T), what='your B')
        if not np.all(np.isin(mask, (-1, 1))):
            raise Finding('the layer-2 mask must hold only +1 and -1 (times lam)')
        ref = sel.build_selective_induction(P, lags, T, lam, beta, heads=1)
        yours = sel.build_selective_induction(P, lags, T, lam, beta, heads=1)
        r2, c2, _ = yours.layers[1][0][0]
        yours.layers[1][0] = [(r2, c2, lam * mask.astype(float))]
        band, (r3, c3, _) = yours.layers[2][0]
        yours.layers[2][0] = [band, (r3, c3, B.astype(float))]
        start = ref.meta['exact_from']
        for s in range(3):
            x, _ = sel.sample_sequence(P, lags, T, np.random.default_rng(90 * c + s))
            want, got = ref.run(x), yours.run(x)
            for i in range(start, T + 1):
                ws = _scores_at_candidates(want, lags, i)
                gs = _scores_at_candidates(got, lags, i)
                if not np.abs(ws - gs).max() <= 1e-9:       # NaN and inf count as wrong
                    wrong = np.argmax(gs) != np.argmax(ws)
                    raise Finding(f'lags {list(lags)}, tokens {x.tolist()}: at query {i} the '
                                  f'candidate keys (lags {list(lags)}) should score lam + '
                                  f'{(ws - lam).round(4).tolist()}, got lam + '
                                  f'{(gs - lam).round(4).tolist()}'
                                  + (f'; it prefers lag {lags[int(np.argmax(gs))]} instead of '
                                     f'{lags[int(np.argmax(ws))]}' if wrong else ''), x.tolist())
            diff = np.abs(want['probs'] - got['probs'])[start - 1:]
            off = ~(diff <= 1e-9)                          # NaN counts as wrong
            if off.any():
                i = int(np.argwhere(off)[0][0]) + start
                raise Finding(f'lags {list(lags)}: output at query {i} differs from the '
                              f'reference by {np.nanmax(np.where(off, diff, 0)):.2e}'
                              + (' (NaN)' if np.isnan(diff).any() else ''), x.tolist())
            n += 1
    return Passed(f'one head: candidate scores equal beta * mean(ptil_k - ptil_k\') over the '
                  f'key\'s set to 1e-9 from query 2 kmax on, outputs equal the reference, on {n} '
                  f'seeded sequences (lags {{2,5}}, {{1,3}}, {{2,4}}, {{3,4}}, {{1,2}}, {{3,7}}, '
                  f'{{1,6}}: D from 1 to 5)')


# ----------------------------------------------------------------------------- 10.7

def _leak_bound(P, T, lam):
    """Layer 1's bound on a masked key's weight relative to an allowed one."""
    return T * P.max() / P.min() * np.exp(-2.0 * lam)


def _hardness_cases():
    """(S, T, P): the chapter's sizes, then a seeded sweep that repeats T with other P."""
    sizes = [(3, 10), (5, 128), (4, 40), (6, 256), (2, 1000)]
    rng = np.random.default_rng(870)
    sizes += [(int(rng.integers(2, 9)), int(T)) for T in (10, 128, 40, 2, 7, 5000, 100000)]
    return [(S, T, _P(S, 80 + c)) for c, (S, T) in enumerate(sizes)]


@checker('10.7')
def check_10_7(how_hard):
    """``how_hard(P, T)`` -> the smallest integer lam with T (pmax/pmin) e^{-2 lam} < 1e-6."""
    cases = tuple(_hardness_cases())
    for c, (S, T, P) in enumerate(cases):
        got = guard.call(how_hard, P.copy(), T, what='your how_hard', on=f'S = {S}, T = {T}')
        S, T, P = _hardness_cases()[c]       # the check's own copy, made after the call
        want = 0                      # the definition: the first integer below the tolerance
        while _leak_bound(P, T, want) >= 1e-6:
            want += 1
        got = guard.array(got, (), what=f'how_hard at S = {S}, T = {T}')
        if got.dtype.kind == 'b' or float(got) != round(float(got)):
            raise Finding(f'S = {S}, T = {T}: expected an integer; got {got.item()!r}', (S, T))
        if int(got) != want:
            raise Finding(f'S = {S}, T = {T}, pmax/pmin = {P.max() / P.min():.1f}: expected lam = '
                          f'{want}, got {int(got)}', (S, T))
        if c < 5:   # confirm by running layer 1 at that lam: no forbidden key gets the bound
            lags, n = (1, 2), min(T, 128)
            m = sel.build_selective_induction(P, lags, n, lam=float(want), beta=0.0)
            x, _ = sel.sample_sequence(P, lags, n, np.random.default_rng(c))
            w = m.run(x)['attn'][0][0]
            i = np.arange(1, n + 1)[:, None]
            j = np.arange(1, n + 1)[None, :]
            forbidden = (j < i) & ~np.isin(i - j, lags) & (i > 2)
            assert w[forbidden].max(initial=0) < 1e-6
    return Passed(f'the smallest integer lam on {len(cases)} seeded (P, T) pairs (T from 2 to '
                  f'100000, the same T with different P), the first 5 confirmed by running layer '
                  f'1 (leak below 1e-6)')


# ----------------------------------------------------------------------------- 10.8

def _budget_cases():
    """(T, contiguous lags, beta_c): the chapter's example, T at every residue mod K, a sweep."""
    cases = [(128, (1, 2, 3), 100.0), (64, (1, 2, 3, 4, 5), 10.0), (40, (2, 3), 7.0),
             (129, (1, 2, 3), 1.0), (31, (4, 5, 6, 7), 2.5), (130, (1, 2, 3), 100.0),
             (5, (4,), 3.0), (6, (1, 2, 3, 4, 5), 0.5)]
    rng = np.random.default_rng(880)
    for _ in range(12):
        K, kmin = int(rng.integers(1, 7)), int(rng.integers(1, 5))
        lags = tuple(range(kmin, kmin + K))
        cases.append((int(rng.integers(max(lags) + 1, 400)), lags,
                      float(np.round(rng.uniform(0.1, 50), 2))))
    return cases


@checker('10.8')
def check_10_8(one_head_budget):
    """``one_head_budget(T, lags, beta_c)`` -> (transitions used by one head, Prop. 1's beta)."""
    cases = tuple(_budget_cases())
    for T, lags, beta_c in cases:
        got = guard.call(one_head_budget, T, lags, beta_c, what='your one_head_budget',
                         on=f'T = {T}, lags {list(lags)}')
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise Finding(f'expected a pair (transitions, beta); got {type(got).__name__}')
        K, kmax = len(lags), max(lags)
        design = sel.plan_heads(lags, heads=1, variant='main')      # the head of offset 0
        used = len([j for j in range(kmax + 1, T + 1) if (T - j) % design.period == 0])
        try:
            n, b = int(got[0]), float(got[1])
        except (TypeError, ValueError):
            raise Finding(f'T = {T}, lags {list(lags)}: expected two numbers; got {got!r}')
        if n != got[0]:
            raise Finding(f'T = {T}, lags {list(lags)}: the count must be an integer; '
                          f'got {got[0]!r}')
        if n != used:
            raise Finding(f'T = {T}, lags {list(lags)}: one head averages {used} transitions, '
                          f'got {n}', (T, lags))
        if not abs(b - K * beta_c) <= 1e-9:                # NaN counts as wrong
            raise Finding(f'T = {T}, lags {list(lags)}, beta_c = {beta_c}: Prop. 1 needs beta = '
                          f'{K * beta_c:g}, got {b:g}', (T, lags))
    return Passed(f'transition counts and Prop.-1 temperatures right on {len(cases)} cases '
                  f'(incl. T = 128, lags {{1,2,3}}: 42 and 300; T at every residue modulo K, '
                  f'K from 1 to 6, kmin > 1)')


PUZZLES = [
    Puzzle('10.1', 'The lag posterior after every prefix', 'checked', check_10_1),
    Puzzle('10.2', "Layer 1's matrix: store ptil[i, k] in slot i - k", 'checked', check_10_2),
    Puzzle('10.3', 'Layer 2 head masks for lags {1,2,3,4}', 'checked', check_10_3,
           'at most 4 heads'),
    Puzzle('10.4', 'The selection block of layer 3', 'checked', check_10_4),
    Puzzle('10.5', 'Fewer heads for the lag set {3,5,7}', 'checked', check_10_5,
           'at most 3 heads'),
    Puzzle('10.6', 'One head for two lags (corrected App. H)', 'checked', check_10_6, '1 head'),
    Puzzle('10.7', 'How large must lambda be?', 'checked', check_10_7),
    Puzzle('10.8', 'Counting the transitions one head uses', 'checked', check_10_8),
]
