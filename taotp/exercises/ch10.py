"""Checkers for Chapter 10, Selective Induction Heads.

10.2, 10.3, 10.4 and 10.6 hand in blocks of the paper's disentangled transformer, run beside the
reference construction.  Each puzzle tries one visible case (the chapter's example), then cases
drawn from a fresh seed, named as case ``c`` of ``ch10.<name>_cases(seed)`` (which rebuilds it);
a message never shows what was due.  The package functions that answer a puzzle are switched off
(``refuse``).  10.5's design is judged as given, its letter by a digest.
"""
import itertools

import numpy as np

from .. import selective as sel
from . import toolkit as tk
from .registry import Puzzle, checker
from .result import Finding, Passed

SEL = 'taotp.selective.'
BUILDERS = {SEL + name: 'the package\'s construction is switched off here: build the blocks '
            'yourself with NumPy' for name in ('build_selective_induction', 'layer_matrices',
                                               'book_params')}
LAM_1, LAM, BETA_4, BETA_6, TOLERANCE_7 = 50.0, 500.0, 7.0, 10.0, 1e-6


def _lag_set(rng, kind):
    """A lag set of one kind: a tuple (taken as it is), 'one lag', 'kmin > 1' or 'any' (1 to 5
    lags below 9; 'far lags': below 17), 'contiguous' (1 to 6 lags from kmin <= 4), or an int
    D: two lags D apart, kmin from 1 to 2 D (every residue modulo D, twice)."""
    if isinstance(kind, tuple):
        return kind
    if isinstance(kind, int):
        kmin = int(rng.integers(1, 2 * kind + 1))
        return kmin, kmin + kind
    if kind == 'contiguous':
        kmin = int(rng.integers(1, 5))
        return tuple(range(kmin, kmin + int(rng.integers(1, 7))))
    if kind == 'one lag':
        return int(rng.integers(1, 6)),
    top = 17 if kind == 'far lags' else 9
    return tuple(sorted(int(k) for k in rng.choice(np.arange(2 if kind == 'kmin > 1' else 1, top),
                                                   int(rng.integers(1, 6)), replace=False)))


def _every_k(seed):
    """Six contiguous lag sets, one for each K from 1 to 6 in a random order, kmin from 1 to 4
    (round 25: a check drew no single lag about one time in three)."""
    rng = np.random.default_rng([seed, 5])
    return [tuple(range(kmin, kmin + int(K))) for K in rng.permutation(np.arange(1, 7))
            for kmin in [int(rng.integers(1, 5))]]


def _draw(seed, kinds, T_top, S_top=5, n_seq=2, T_low=lambda lags: lags[-1] + 1):
    """Drawn cases ``(P, lags, T, xs)``: per kind a lag set, a length T (kmax + 1 or 1000 for
    the kinds named so), a P with S up to ``S_top`` and ``n_seq`` sequences of length T."""
    rng, cases = np.random.default_rng(seed), []
    for kind in kinds:
        lags = _lag_set(rng, kind)
        T = {'T = kmax + 1': lags[-1] + 1, 'T = 1000': 1000}.get(kind) or \
            int(rng.integers(T_low(lags), T_top + 1))
        S = S_top if kind == 'T = 1000' else int(rng.integers(2, S_top + 1))  # long: underflows
        P = sel.transition_matrix(S, rng)                     # a product of probabilities
        cases.append((P, lags, T, [sel.sample_sequence(P, lags, T, rng)[0] for _ in range(n_seq)]))
    return cases


EXAMPLE = (sel.example.P, sel.example.LAGS, 10, [sel.example.TOKENS])
FACTS = lambda P, lags, T, xs: dict(lags=lags, S=len(P), T=T)  # noqa: E731
_HARDENED = lambda P, lags, T, xs, lam, beta: dict(lags=lags, S=len(P), T=T, lam=lam,  # noqa
                                                   beta=beta)


def _ask(fn, what, visible, drawn, args, facts=FACTS):
    """Call ``fn`` on the visible cases, then on those ``drawn(seed)`` makes from a fresh seed;
    returns ``(cases, values, labels)``.  None is reported before any label with a seed is
    printed (so the starter code's line is always the same)."""
    seed = tk.fresh_seed()
    cases, labels = visible + drawn(seed), []
    for c, case in enumerate(cases):
        shown = ', '.join(f'{k} = {list(v) if isinstance(v, tuple) else v}'
                          for k, v in facts(*case).items())
        where = 'the example case' if c < len(visible) else \
            f'case {c - len(visible)} of ch10.{drawn.__name__}({seed})'
        labels.append(f'{where} ({shown})')
    values = tk.call_many(fn, [args(*case) for case in cases], what=what, on=labels)
    for value, label in zip(values, labels):
        if value is None:
            where = '' if label is labels[0] else f' on {label}'
            raise Finding(f'{what} returned None{where} (starter code not filled in yet, or a '
                          f'missing return?)')
    return cases, values, labels


def _pair(value, names, shape, what, on, finite=True):
    """A returned pair of arrays of ``shape``, read with ``tk.array``."""
    pair = tk.parts(value, 2, f'{on}: {what} must return a pair ({names[0]}, {names[1]})')
    return [tk.array(v, shape, what=f'your {n} on {on}', finite=finite)
            for v, n in zip(pair, names)]


def _signs(mask, on, name):
    if not np.all(np.isin(mask, (-1, 1))):
        raise Finding(f'{on}: {name} must hold only +1 and -1 (the check multiplies it by lam = '
                      f'{LAM:g}); got values {sorted(set(np.unique(mask).tolist()))[:5]}')


# ----------------------------------------------------------------------------- 10.1 and 10.2

def posterior_cases(seed):
    """The drawn cases of one 10.1 check: 14 tuples ``(P, lags, T, [x])``, two of each kind
    (one lag; kmin > 1; T = kmax + 1; T = 1000; any lag set, twice; T up to 200, S up to 6),
    then lags below 17 at T from 201 to 999 (round 15: neither was tried), then one of 3,000
    tokens whose last lag leads the mean log-likelihood by more than 750 (round 22: weights
    exp(ll - ll of the first lag) overflow past 709, which the others reached 1 check in 200)."""
    kinds = ('one lag', 'kmin > 1', 'T = kmax + 1', 'T = 1000', 'any', 'any')
    rng = np.random.default_rng([seed, 3])
    while True:
        lags = tuple(sorted(int(k) for k in rng.choice(np.arange(1, 9), int(rng.integers(2, 6)),
                                                       replace=False)))
        P = sel.transition_matrix(6, rng)
        x = sel.sample_sequence(P, lags, 3000, rng, lag=lags[-1])[0]
        ll = sel.log_likelihoods(P, lags, x)[-1]
        if ll.max() - max(ll.mean(), ll[0]) > 750:
            break
    return _draw(seed, [k for k in kinds for _ in range(2)], 200, S_top=6, n_seq=1) + \
        _draw([seed, 2], ['far lags'], 999, S_top=6, n_seq=1, T_low=lambda lags: 201) + \
        [(P, lags, 3000, [x])]


@checker('10.1')
def check_10_1(lag_posterior):
    """``lag_posterior(P, lags, x)`` -> (T, K) posterior weights after every prefix."""
    cases, values, labels = _ask(lag_posterior, 'your lag_posterior', [EXAMPLE],
                                 posterior_cases, lambda P, lags, T, xs: (P, lags, xs[0]))
    for (P, lags, T, (x,)), value, on in zip(cases, values, labels):
        want = sel.lag_posterior(P, lags, x)
        got = tk.array(value, want.shape, what=f'your posterior on {on}')
        bad = np.argwhere(tk.off(got, want, 1e-9))
        if len(bad):
            t = int(bad[0][0])
            hint = ('each row is a distribution over the lags: it sums to 1'
                    if not abs(got[t].sum() - 1) <= 1e-9 else
                    'every lag\'s log-likelihood sums log P[x[j-k], x[j]] over the same '
                    'positions j >= kmax (0-based), on top of a uniform prior')
            raise tk.wrong(f'{on}, after {t + 1} tokens', got[t].round(4).tolist(), hint,
                           x.tolist())
    return Passed(f'the posterior equals the reference to 1e-9 after every prefix of '
                  f'{len(cases)} sequences: the chapter\'s example and {len(cases) - 1} drawn '
                  f'afresh (one lag, kmin > 1, T = kmax + 1, T = 1000, S from 2 to 6, lags '
                  f'up to 16 at T from 201 to 999, and T = 3,000 with log-likelihoods more '
                  f'than 750 apart)')


def _with(cases, seed, **draw):
    """``cases`` with the hardening constants of each appended: ``draw`` maps a name to a
    function of a generator (seeded by ``[seed, 7]``, so the seed rebuilds them too)."""
    rng = np.random.default_rng([seed, 7])
    return [(*case, *(float(f(rng)) for f in draw.values())) for case in cases]


def layer1_cases(seed):
    """The drawn cases of one 10.2 check: 5 tuples ``(P, lags, T, xs, lam)``, 3 sequences each
    (one lag; kmin > 1; T = kmax + 1; any lag set, twice; T up to 40, S from 2 to 5), each at
    a lam from 2 to 12, where the layer still leaks (round 17: lam was always 50)."""
    return _with(_draw(seed, ('one lag', 'kmin > 1', 'T = kmax + 1', 'any', 'any'), 40, n_seq=3),
                 seed, lam=lambda rng: round(rng.uniform(2, 12), 2))


def _layer1(P, lags, T, lam):
    """The chapter's layer-1 matrix: (log P)^T on the tokens, +lam where i - j is a lag and
    -lam elsewhere on the positions."""
    S, gap = len(P), np.subtract.outer(np.arange(T), np.arange(T))
    A = np.zeros((S + T, S + T))
    A[:S, :S], A[S:, S:] = np.log(P).T, np.where(np.isin(gap, lags), lam, -lam)
    return A


@checker('10.2')
def check_10_2(layer1_matrix):
    """``layer1_matrix(P, lags, T, lam)`` -> the (S+T, S+T) layer-1 matrix."""
    cases, values, labels = _ask(layer1_matrix, 'your layer1_matrix', [(*EXAMPLE, LAM_1)],
                                 layer1_cases, lambda P, lags, T, xs, lam: (P, lags, T, lam),
                                 lambda P, lags, T, xs, lam: dict(lags=lags, S=len(P), T=T,
                                                                  lam=lam))
    for (P, lags, T, xs, lam), value, on in zip(cases, values, labels):
        S, d, kmax = len(P), len(P) + T, lags[-1]
        A = tk.array(value, (d, d), what=f'your matrix on {on}')
        yours, book = (sel.DisentangledTransformer(S, T, [[[(np.arange(d), np.arange(d), M)]]],
                                                   (np.arange(S), np.eye(S)))
                       for M in (A, _layer1(P, lags, T, lam)))
        for x in xs:
            with np.errstate(all='ignore'):
                block, want = (m.run(x)['resid'][1][:, d + S:] for m in (yours, book))
            off = tk.off(block, want, 1e-8)[kmax:]
            if off.any():
                i = int(np.argwhere(off)[0][0]) + kmax + 1
                raise tk.wrong(f'{on}, tokens {x.tolist()}: at position i = {i} your layer '
                               f'stores in slots 1..{T}', block[i - 1].round(3).tolist(),
                               'ptil[i, k] belongs in slot i - k (1-based); the token block '
                               'scores log P[x_j, x_i], the position block +lam where i - j '
                               'is a lag and -lam elsewhere (at a small lam the layer leaks '
                               'onto other slots, as the chapter\'s does)', x.tolist())
    return Passed(f'layer 1 equals the chapter\'s to 1e-8 at every i > kmax (ptil[i, k] in slot '
                  f'i - k at lam = {LAM_1:g}, and the same leak at lams drawn from 2 to 12) on '
                  f'{sum(len(c[3]) for c in cases)} sequences over {len(cases)} lag sets: the '
                  f'chapter\'s example and {len(cases) - 1} drawn afresh (one lag, kmin > 1, '
                  f'T = kmax + 1, T up to 40)')


# ----------------------------------------------------------------------------- 10.3

def mask_cases(seed):
    """The drawn cases of one 10.3 check: 6 tuples ``(P, lags, T, [])``: contiguous lags, one
    set for each K from 1 to 6 (``_every_k``), T from 2 kmax + 2 to 48, one from 49 to 149
    (round 15: none was tried), then one from 150 to 300 (too many masks to tabulate); P is
    not used."""
    sets = _every_k(seed)
    return _draw(seed, sets[:4], 48, n_seq=0, T_low=lambda lags: 2 * lags[-1] + 2) \
        + _draw([seed, 2], sets[4:5], 149, n_seq=0, T_low=lambda lags: 49) \
        + _draw([seed, 1], sets[5:], 300, n_seq=0, T_low=lambda lags: 150)


def _suspect_queries(weights, lags):
    """The 1-based queries from 2 kmax on where ``_coverage_problem`` may find a broken rule,
    all rules tested at once on every row (it then names the first one it finds)."""
    T, kmax = weights.shape[-1], lags[-1]
    on = np.tril(weights > 1e-6)                                    # (heads, T, T)
    count = on.sum(-1, keepdims=True)
    bad = on[..., :kmax].any(-1) | (on & (np.abs(weights - 1 / np.maximum(count, 1)) > 1e-6)
                                    ).any(-1)
    for d in {abs(a - b) for a in lags for b in lags if a != b}:       # a shared slot
        bad |= (on[..., :-d] & on[..., d:]).any(-1)
    cover = on.sum(0)[:, kmax:] != 1                                # once, by one head
    cover &= np.arange(kmax, T)[None] < np.arange(1, T + 1)[:, None]
    rows = bad.any(0) | cover.any(-1)
    return [i for i in range(2 * kmax, T + 1) if rows[i - 1]]


def _coverage_problem(weights, lags, i):
    """The first rule broken at 1-based query i (each head a uniform average of tokens after
    the warm-up, no slot shared in a head, every token in exactly one head); None if none."""
    attended = []
    for h, w in enumerate(weights):
        row = w[i - 1, :i]
        on = np.flatnonzero(row > 1e-6) + 1                  # 1-based keys the head reads
        if len(on) and (on.min() <= lags[-1] or np.abs(row[on - 1] - 1 / len(on)).max() > 1e-6):
            return (f'at query {i} head {h} attends to positions {on.tolist()} with weights '
                    f'{row[on - 1].round(3).tolist()}; each head must average tokens '
                    f'kmax < j <= i uniformly')
        for a, b in itertools.combinations(on.tolist(), 2):
            shared = {a - k for k in lags} & {b - k for k in lags}
            if shared:
                return (f'at query {i} head {h} averages tokens {a} and {b}, whose stored '
                        f'transitions share slot {min(shared)}')
        attended += on.tolist()
    missing = sorted(set(range(lags[-1] + 1, i + 1)) - set(attended))
    twice = sorted({j for j in attended if attended.count(j) > 1})
    return (f'at query {i} no head attends to token(s) {missing[:5]}' if missing else
            f'at query {i} token(s) {twice[:5]} are attended by more than one head' if twice
            else None)


@checker('10.3')
def check_10_3(layer2_masks):
    """``layer2_masks(lags, T)`` -> at most K (T, T) sign masks for contiguous lags."""
    cases, values, labels = _ask(layer2_masks, 'your layer2_masks', [(None, (1, 2, 3, 4), 40, [])],
                                 mask_cases, lambda P, lags, T, xs: (lags, T),
                                 lambda P, lags, T, xs: dict(lags=lags, T=T))
    for (_, lags, T, _), masks, on in zip(cases, values, labels):
        if not isinstance(masks, (list, tuple)) or not 1 <= len(masks) <= len(lags):
            raise Finding(f'{on}: the answer must be a list of 1 to {len(lags)} masks (the '
                          f'budget: one head per lag); got {tk.describe(masks)}' +
                          (f' of {len(masks)}' if isinstance(masks, (list, tuple)) else ''))
        arrays = [tk.array(m, (T, T), what=f'mask {h} on {on}') for h, m in enumerate(masks)]
        for h, mask in enumerate(arrays):
            _signs(mask, on, f'mask {h}')
        pos = np.arange(3, 3 + T)
        model = sel.DisentangledTransformer(3, T, [[[(pos, pos, LAM * a)] for a in arrays]],
                                            (np.arange(3), np.eye(3)))
        weights = model.run(np.zeros(T, dtype=np.int64))['attn'][0]
        for i in _suspect_queries(np.asarray(weights), lags):
            problem = _coverage_problem(weights, lags, i)
            if problem:
                raise Finding(f'{on}: {problem}')
    return Passed(f'{len(cases)} lag sets (lags {{1,2,3,4}} at T = 40 and {len(cases) - 1} '
                  f'contiguous sets drawn afresh, one for each K from 1 to 6, one at T from 49 '
                  f'to 149, the last from 150 to 300) with at most K heads each: at every '
                  f'query from 2 kmax on each token after the warm-up is averaged by exactly '
                  f'one head, uniformly, and no head mixes two transitions in one slot')


# ----------------------------------------------------------------------------- 10.4 and 10.6

def _blocks_judged(case, on, lam, beta, B, band=None, mask2=None, heads=None, hint='',
                   tol=1e-9):
    """The reference construction at ``lam``, ``beta`` with blocks replaced (layer 3's band
    and B; the pair design's layer-2 mask, as signs), run beside the reference: layer 3's
    scores at the candidate keys, then the outputs, from ``exact_from`` on."""
    P, lags, T, xs = case[:4]
    ref, yours = (sel.build_selective_induction(P, lags, T, lam, beta, heads=heads)
                  for _ in range(2))
    if mask2 is not None:
        rows, cols, _ = yours.layers[1][0][0]
        yours.layers[1][0] = [(rows, cols, lam * mask2)]
    first, *rest = yours.layers[2][0]
    first = first if band is None else (first[0], first[1], band)
    yours.layers[2][0] = [first] + [(rows, cols, B) for rows, cols, _ in rest]
    start = ref.meta['exact_from']
    for x in xs:
        want, got = ref.run(x), yours.run(x)
        for i in range(start, len(x) + 1):
            keys = [i - k for k in lags]                      # 0-based index of key i + 1 - k
            gs = got['scores'][2][0, i - 1, keys]
            if tk.off(gs, want['scores'][2][0, i - 1, keys], tol).any():
                raise tk.wrong(f'{on}, tokens {x.tolist()}: at query {i} the candidate keys '
                               f'{[k + 1 for k in keys]} (lags {list(lags)}) score lam +',
                               (gs - lam).round(4).tolist(), hint, x.tolist())
        off = tk.off(got['probs'], want['probs'], tol)[start - 1:]
        if off.any():
            i = int(np.argwhere(off)[0][0]) + start
            raise tk.wrong(f'{on}, tokens {x.tolist()}: the output at query {i}',
                           got['probs'][i - 1].round(4).tolist(), 'does a masked key get '
                           'weight?', x.tolist())


def selection_cases(seed):
    """The drawn cases of one 10.4 check: 6 tuples ``(P, lags, T, xs, lam, beta)``:
    contiguous lags, one set for each K from 1 to 6 (``_every_k``), T up to 40, one from 41 to
    149, then one from 150 to 300 (too many blocks to tabulate), S from 2 to 5, 2 sequences
    each; lam from 100 to 1,000 and beta from 1 to 20 (round 17: they were always 500 and 7)."""
    sets = _every_k(seed)
    cases = _draw(seed, sets[:4], 40, T_low=lambda lags: 2 * lags[-1] + len(lags) + 2) \
        + _draw([seed, 2], sets[4:5], 149, T_low=lambda lags: 41) \
        + _draw([seed, 1], sets[5:], 300, T_low=lambda lags: 150)
    return _with(cases, seed, lam=lambda rng: round(10 ** rng.uniform(2, 3)),
                 beta=lambda rng: round(rng.uniform(1, 20), 2))


@checker('10.4')
def check_10_4(layer3_blocks):
    """``layer3_blocks(lags, T, lam, beta)`` -> (band, B), both (T, T)."""
    cases, values, labels = _ask(layer3_blocks, 'your layer3_blocks', [(*EXAMPLE, LAM, BETA_4)],
                                 selection_cases, lambda P, lags, T, xs, lam, beta:
                                 (lags, T, lam, beta), _HARDENED)
    for case, value, on in zip(cases, values, labels):
        band, B = _pair(value, ('band', 'B'), (case[2],) * 2, 'your layer3_blocks', on)
        _blocks_judged(case, on, *case[4:], B, band=band, tol=1e-6,
                       hint='the candidate i + 1 - k should score lam + beta * sum over heads '
                            'of the mean ptil of lag k')
    return Passed(f'layer-3 scores equal lam + beta * sum_h mean ptil at the candidate keys from '
                  f'query 2 kmax + K - 1 on, and the outputs equal the reference, on '
                  f'{sum(len(c[3]) for c in cases)} sequences: the chapter\'s example and '
                  f'{len(cases) - 1} contiguous lag sets drawn afresh, one for each K from 1 '
                  f'to 6, one at T from 41 to 149, the last from 150 to 300 (lam = {LAM:g} and '
                  f'beta = {BETA_4:g} on the example, then lam from 100 to 1,000 and beta from '
                  f'1 to 20)')


def pair_cases(seed):
    """The drawn cases of one 10.6 check: 17 tuples ``(P, lags, T, xs, beta)``: two lags D
    apart, 15 with T up to 44, one for each D from 1 to 5 and each residue of kmin modulo D
    (kmin from 1 to 2 D; the right shift 2 kmin - 1 turns on it: round 25, odd kmin at D = 2
    and kmin = 5 at D = 5 were never drawn), in a random order, then one with T from 45 to 149
    and one from 150 to 300 (too many blocks to tabulate); beta from 1 to 30 (round 17: it
    was always 10)."""
    rng = np.random.default_rng([seed, 6])
    Ds = [int(D) for D in rng.permutation(np.arange(1, 6))]
    pairs = [(kmin, kmin + D) for D in range(1, 6) for rho in range(D)
             for kmin in [rho + D * (int(rng.integers(0, 2)) + (rho == 0))]]
    cases = _draw(seed, [pairs[i] for i in rng.permutation(len(pairs))], 44,
                  T_low=lambda lags: 2 * lags[-1] + 4) \
        + _draw([seed, 2], Ds[1:2], 149, T_low=lambda lags: 45) \
        + _draw([seed, 1], Ds[:1], 300, T_low=lambda lags: 150)
    return _with(cases, seed, beta=lambda rng: round(rng.uniform(1, 30), 2))


@checker('10.6')
def check_10_6(single_head_blocks):
    """``single_head_blocks(lags, T, beta)`` -> (mask2, B): layer 2's mask, layer 3's block."""
    x = sel.sample_sequence(sel.example.P, (2, 5), 40, np.random.default_rng(0))[0]
    cases, values, labels = _ask(single_head_blocks, 'your single_head_blocks',
                                 [(sel.example.P, (2, 5), 40, [x], BETA_6)], pair_cases,
                                 lambda P, lags, T, xs, beta: (lags, T, beta),
                                 lambda P, lags, T, xs, beta: dict(lags=lags, S=len(P), T=T,
                                                                   beta=beta))
    for case, value, on in zip(cases, values, labels):
        mask, B = _pair(value, ('mask2', 'B'), (case[2],) * 2, 'your single_head_blocks', on)
        _signs(mask, on, 'the layer-2 mask')
        _blocks_judged(case, on, LAM, case[4], B, mask2=mask.astype(float), heads=1,
                       hint='the candidate of lag kmin should score +beta, that of kmax -beta, '
                            'times the mean of ptil_kmin - ptil_kmax over its key\'s set')
    return Passed(f'one head: candidate scores equal +-beta * mean(ptil_kmin - ptil_kmax) over '
                  f'the key\'s set to 1e-9 from query 2 kmax on, and the outputs equal the '
                  f'reference, on {sum(len(c[3]) for c in cases)} sequences: lags {{2,5}} and '
                  f'{len(cases) - 1} pairs drawn afresh, one for each D from 1 to 5 and each '
                  f'residue of kmin modulo D (kmin from 1 to 2 D), and two more at T from 45 '
                  f'to 149 and from 150 to 300 (beta = {BETA_6:g} on {{2,5}}, '
                  f'then drawn from 1 to 30)')


# ----------------------------------------------------------------------------- 10.5

CHOICES_134 = {
    'A': 'period 3 leaves too few slots per head',
    'B': 'lags 1 and 4 are equal modulo 3, so their entries share slots and the selection '
         'block cannot tell them apart',
    'C': 'three heads can never cover three lags',
    'D': 'layer 1 cannot store a lag as large as 4',
}
DIGEST_10_5 = '09793d2b4004dde57f3b4d056c938d2d79f6857bcd4fed05913f73a25384bee7'


@checker('10.5')
def check_10_5(answer):
    """A dict: 'period' and 'classes' for lags {3,5,7} with <= 3 heads; 'choice_134'."""
    if not isinstance(answer, dict):
        raise Finding(f"expected a dict with keys 'period', 'classes', 'choice_134'; got "
                      f'{tk.describe(answer)}')
    period, classes, choice = (answer.get(k) for k in ('period', 'classes', 'choice_134'))
    if isinstance(period, bool) or not isinstance(period, int) or not 1 <= period <= 100:
        raise Finding(f"'period' must be an integer from 1 to 100; got {tk.short(period)}")
    try:
        classes = tuple(tuple(int(r) for r in c) for c in classes)
    except (TypeError, ValueError):
        raise Finding(f"'classes' must be a list of lists of residues; got "
                      f'{tk.short(classes)}') from None
    if not 1 <= len(classes) <= 3:
        raise Finding(f'budget: at most 3 heads (the fallback needs 5); got {len(classes)} classes')
    if sorted(r for c in classes for r in c) != list(range(period)):
        raise Finding(f'the classes must split the residues 0..{period - 1} (each exactly once) '
                      f'so that every token is used; got {classes}')
    problems = sel.design_problems((3, 5, 7), period, classes)
    if problems:
        raise Finding(f'period {period}, classes {classes}: {problems[0]}, so two stored '
                      f'transitions share a slot')
    letter = choice.strip().strip('()').strip().upper() if isinstance(choice, str) else None
    if letter is None or not tk.same_digest('10.5', letter, DIGEST_10_5):
        raise Finding(f"your design for {{3,5,7}} works; 'choice_134' is not the reason period 3 "
                      f"fails for {{1,3,4}}: give one letter of {sorted(CHOICES_134)} (got "
                      f"{tk.short(choice, 40)})")
    return Passed(f'period {period}, {len(classes)} heads: they split every residue and no two '
                  f'residues of a class differ by a difference of two lags (so no two stored '
                  f'transitions share a slot), and the {{1,3,4}} reason is right (the design '
                  f'is judged as given, not how it was found)')


# ----------------------------------------------------------------------------- 10.7 and 10.8

def _near_integer(rng, side):
    """``(S, T, P)`` with x = log(T pmax / pmin 1e6) / 2 between 1e-8 and 1e-5 above (side
    +1) or below (-1) an integer, T from about 100 to 99,000 (pmax raised, another entry of its
    row lowered as much), pmax and pmin in different rows, so each row's own ratio is less."""
    while True:
        S = int(rng.integers(2, 17))
        P = sel.transition_matrix(S, rng)
        low, (b, d) = P.argmin(), np.unravel_index(P.argmax(), P.shape)
        r = P.max() / P.min()
        n = int(rng.integers(np.ceil(np.log(1e8 * r) / 2), np.log(9.9e10 * r) / 2 + 1))
        goal = n + side * 10 ** rng.uniform(-8, -5)
        T = int(np.exp(2 * goal) / (r * 1e6))                # at T + 1, x is past the goal
        top = P.min() * np.exp(2 * goal) / (T * 1e6)
        e = max((c for c in range(S) if c != d), key=lambda c: P[b, c])
        if low // S == b or P[b, e] - (top - P[b, d]) <= 1.001 * P.min():
            continue
        P[b, e], P[b, d] = P[b, e] - (top - P[b, d]), top
        x = np.log(T * P.max() / P.min() * 1e6) / 2
        if 1e-9 < side * (x - n) < 2e-5 and (P.max(1) / P.min(1)).max() < P.max() / P.min():
            return S, T, P


def hardness_cases(seed):
    """The drawn cases of one 10.7 check: 13 tuples ``(S, T, P)``: T = 2, T up to 20, 500,
    5000 and 100000, two cases repeating an earlier T with another P, then six with x (the
    lam of the bound's equality) just above an integer, three times, and just below, three
    times (``_near_integer``; round 25: with x never near one, ln(1e6) / 2 rounded to 6.9,
    7 in its place, or the largest ratio within a row passed most checks)."""
    rng = np.random.default_rng(seed)
    Ts = [2] + [int(rng.integers(low, high)) for low, high in
                ((3, 21), (21, 501), (501, 5001), (5001, 100_001))]
    Ts += [Ts[int(rng.integers(1, 5))], Ts[int(rng.integers(1, 5))]]
    return [(S, T, sel.transition_matrix(S, rng))              # round 15: S up to 8 only
            for T in Ts for S in [int(rng.integers(2, 17))]] + \
        [_near_integer(rng, side) for side in (1, -1) * 3]


@checker('10.7')
def check_10_7(how_hard):
    """``how_hard(P, T)`` -> the smallest integer lam with T (pmax/pmin) e^{-2 lam} < 1e-6."""
    cases, values, labels = _ask(how_hard, 'your how_hard',
                                 [(5, 128, sel.transition_matrix(5, np.random.default_rng(0)))],
                                 hardness_cases, lambda S, T, P: (P, T),
                                 lambda S, T, P: {'S': S, 'T': T,
                                                  'pmax/pmin': f'{P.max() / P.min():.4g}'})
    for (S, T, P), value, on in zip(cases, values, labels):
        got = tk.array(value, (), what=f'your how_hard on {on}')
        if got.dtype.kind == 'b' or float(got) != round(float(got)):
            raise Finding(f'{on}: lam must be an integer; got {tk.short(got.item())}')
        lam = 0                   # the definition, counted up: the first integer below tolerance
        while T * P.max() / P.min() * np.exp(-2.0 * lam) >= TOLERANCE_7:
            lam += 1
        if int(got) != lam:
            raise tk.wrong(on, int(got), f'the smallest integer lam with T (pmax / pmin) '
                           f'exp(-2 lam) < {TOLERANCE_7:g}')
    return Passed(f'the smallest integer lam of the definition on {len(cases)} (P, T) pairs: '
                  f'S = 5, T = 128 and {len(cases) - 1} drawn afresh (T from 2 to 100000, S '
                  f'from 2 to 16, the same T with different P, and six where ln(T pmax / pmin '
                  f'/ 1e-6) / 2 lies within 1e-5 of an integer, three above and three below, '
                  f'with pmax and pmin in different rows of P)')


def budget_cases(seed):
    """The drawn cases of one 10.8 check: 8 tuples ``(T, lags, beta_c)``: a contiguous set of
    2 to 4 lags with kmin > 1 at 4 consecutive T (every residue modulo K), one lag alone, and
    3 more contiguous sets."""
    rng = np.random.default_rng(seed)
    beta = lambda: float(np.round(rng.uniform(0.1, 50), 2))  # noqa: E731
    kmin = int(rng.integers(2, 9))                 # round 15: kmin up to 4 only
    lags = tuple(range(kmin, kmin + int(rng.integers(2, 5))))
    T0 = int(rng.integers(lags[-1] + 1, 380))
    sets = [_lag_set(rng, 'one lag')] + [_lag_set(rng, 'contiguous') for _ in range(3)]
    return [(T0 + r, lags, beta()) for r in range(4)] + \
        [(int(rng.integers(more[-1] + 1, 400)), more, beta()) for more in sets]


def _prop1_mismatch(lags, beta_c, beta, rng):
    """The first balanced query where Proposition 1 with ``beta`` and the K-head network with
    ``beta_c`` give different lag weights, compared as logarithms (None if they agree)."""
    K, kmax = len(lags), lags[-1]
    P = sel.transition_matrix(4, rng)
    x, _ = sel.sample_sequence(P, lags, kmax + 4 * K + 1, rng)
    with np.errstate(all='ignore'):
        network = np.log(sel.construction_weights(P, lags, x, beta_c))
        prop1 = np.log(sel.prop1_weights(P, lags, x, beta))
    for i in range(kmax + K, len(x) + 1, K):          # i - kmax a multiple of K: balanced
        if tk.off(prop1[i - 1], network[i - 1], 1e-9 * (1 + np.abs(network[i - 1]))).any():
            return i
    return None


@checker('10.8')
def check_10_8(one_head_budget):
    """``one_head_budget(T, lags, beta_c)`` -> (transitions used by one head, Prop. 1's beta)."""
    cases, values, labels = _ask(one_head_budget, 'your one_head_budget',
                                 [(128, (1, 2, 3), 100.0)], budget_cases, lambda *case: case,
                                 lambda T, lags, beta_c: dict(T=T, lags=lags, beta_c=beta_c))
    rng = tk.fresh_rng()
    for (T, lags, beta_c), value, on in zip(cases, values, labels):
        count, beta = _pair(value, ('count', 'beta'), (), 'your one_head_budget', on, False)
        if count.dtype.kind == 'b' or float(count) % 1 != 0:        # NaN and inf too
            raise Finding(f'{on}: the count must be an integer; got {tk.short(count.item())}')
        design = sel.plan_heads(lags, heads=1, variant='main')      # the head of offset 0
        used = sum((T - j) % design.period in design.classes[0]
                   for j in range(lags[-1] + 1, T + 1))
        if int(count) != used:
            raise tk.wrong(f'{on}: the count', int(count), 'the first head averages the '
                           'tokens kmax < j <= T whose distance T - j is 0 modulo K')
        if beta.dtype.kind == 'b' or not np.isfinite(float(beta)):
            raise Finding(f'{on}: beta must be a finite number; got {tk.short(beta.item())}')
        i = _prop1_mismatch(lags, beta_c, float(beta), rng)
        if i is not None:
            raise tk.wrong(f'{on}: beta', float(beta), f'with it Proposition 1\'s lag weights '
                           f'differ from the {len(lags)}-head network\'s at the balanced query '
                           f'i = {i} of a fresh sequence (every head averages the same number '
                           f'of tokens there)')
    return Passed(f'transition counts and Proposition-1 temperatures right on {len(cases)} cases: '
                  f'the chapter\'s example and {len(cases) - 1} drawn afresh (T at every residue '
                  f'modulo K, K from 1 to 6, kmin from 2 to 8); each beta checked against the '
                  f'K-head '
                  f'network at balanced queries')


PUZZLES = [
    Puzzle('10.1', 'The lag posterior after every prefix', 'checked', check_10_1,
           refuse={SEL + name: 'sum the log-probabilities yourself'
                   for name in ('lag_posterior', 'log_likelihoods', 'transition_logprobs')}),
    Puzzle('10.2', "Layer 1's matrix: store ptil[i, k] in slot i - k", 'checked', check_10_2,
           refuse=BUILDERS),
    Puzzle('10.3', 'Layer 2 head masks for contiguous lags', 'checked', check_10_3,
           'at most K heads', refuse={**BUILDERS, SEL + 'plan_heads': 'choose the classes '
                                      'yourself'}),
    Puzzle('10.4', 'The selection block of layer 3', 'checked', check_10_4, refuse=BUILDERS),
    Puzzle('10.5', 'Fewer heads for the lag set {3,5,7}', 'checked', check_10_5, 'at most 3 heads'),
    Puzzle('10.6', 'One head for two lags (corrected App. H)', 'checked', check_10_6, '1 head',
           refuse={**BUILDERS, SEL + 'plan_heads': 'choose the mask yourself',
                   SEL + 'pair_evidence_block': 'build the layer-3 block yourself'}),
    Puzzle('10.7', 'How large must lambda be?', 'checked', check_10_7,
           refuse={SEL + name: 'solve the inequality yourself'
                   for name in ('safety_margins', 'check_constants')}),
    Puzzle('10.8', 'Counting the transitions one head uses', 'checked', check_10_8,
           refuse={SEL + 'plan_heads': 'count the distances T - j yourself',
                   SEL + 'construction_weights': 'derive beta from the heads\' averages',
                   SEL + 'prop1_weights': 'derive beta from the heads\' averages'}),
]
