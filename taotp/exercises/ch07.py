"""Checkers for Chapter 7, The Original Encodings (puzzles 7.1-7.11; 7.11's harness and checker
are in ``taotp.exercises.training``).

7.3, 7.7, 7.8 and 7.10 draw part of their cases from a fresh seed on every check; a message
about such a case names the seed and the public function that rebuilds the cases
(``shift_cases``, ``far_shift_cases``, ``window_cases``, ``sizes_7_8``, ``padding_cases``),
never the expected value.
"""
import re

import numpy as np

from ..encodings import (distinguishability, og_angles, og_embedding, random_angles,
                         rotation_encoding, uniform_rotation_embedding, window_attention)
from . import toolkit
from .registry import Puzzle, checker
from .toolkit import Finding, Passed
from .training_checks import check_7_11


def _drawn(kind, seed, number):
    return f'drawn for this check: {kind}({seed})[{number}]'


# ---------------------------------------------------------------- 7.3

_FIXED_SHIFTS = ([(delta, d, 200) for d in (4, 16, 64, 128)
                  for delta in (1, -1, 3, -7, 0, 20, -50, 150)]
                 + [(1, 2, 50), (-1, 2, 50), (5, 6, 300), (-300, 10, 1000), (999, 8, 1000),
                    (64, 128, 1000), (-500, 128, 1000), (7, 50, 1000)])
DRAWN_7_3 = 10
LONG_7_3 = 4        # drawn tables longer than any fixed one (round 12: a T fitted on 1000 rows)
FAR_7_3 = 100_000   # then rows of tables up to this long (a T fitted on 4000 rows passed)
FAR_ROWS_7_3 = 1000
FAR_SHIFT_7_3 = (4001, 90_000)  # shifts tried on far rows only (round 25: eye(d) past 4000 passed)


def shift_cases(seed):
    """The (delta, d, q) of one check of 7.3: 40 fixed cases, then 10 drawn from ``seed`` with
    tables of 20 to 1000 rows (two of them with d from 162 to 512) and 4 with tables of 1001
    to 4000 rows, two of them shifted by 1000 rows or more."""
    rng = np.random.default_rng(seed)
    cases = list(_FIXED_SHIFTS)
    for number in range(DRAWN_7_3 + LONG_7_3):
        # the first two d from 162 to 512 (round 13: the identity past d = 160 passed)
        d = 2 * int(rng.integers(81, 257) if number < 2 else rng.integers(1, 81))
        q = int(rng.integers(20, 1001) if number < DRAWN_7_3 else rng.integers(1001, 4001))
        delta = int(rng.integers(-q + 1, q))
        if number >= DRAWN_7_3 and number % 2:          # a shift past 1000 rows
            delta = int(rng.choice([-1, 1]) * rng.integers(1000, q))
        cases.append((delta, d, q))
    return cases


def far_rows(seed, number, q, delta):
    """The rows j that case ``number`` of the check of ``seed`` also tries beyond its own table
    of ``q`` rows: 1000 drawn from [q, 100000 - max(delta, 0)), so that rows j and j + delta
    both lie in a table of at most 100,000 positions."""
    rng = np.random.default_rng([seed, number])
    return np.sort(rng.integers(q, FAR_7_3 - max(delta, 0), size=FAR_ROWS_7_3))


def far_shift_cases(seed):
    """The (delta, d, rows) that a check of ``seed`` tries on rows of long tables only (no table
    is built): one shift of each sign, |delta| from 4,001 to 90,000, the first with d from 400
    to 512, the second from 2 to 512; 1000 rows j drawn so that j and j + delta both lie in
    [0, 100000)."""
    rng = np.random.default_rng([seed, FAR_7_3])
    cases = []
    for number, sign in enumerate(rng.permutation([-1, 1])):
        delta = int(sign) * int(rng.integers(FAR_SHIFT_7_3[0], FAR_SHIFT_7_3[1] + 1))
        d = 2 * int(rng.integers(200, 257) if number == 0 else rng.integers(1, 257))
        rows = rng.integers(max(0, -delta), FAR_7_3 - max(delta, 0), size=FAR_ROWS_7_3)
        cases.append((delta, d, np.sort(rows)))
    return cases


def og_rows(rows, d):
    """Rows ``rows`` of ``og_embedding(q, d)`` (any q past them) by the same formula, without
    building the table: the phase of row j in column pair k is j / 10000 ** (2k / d)."""
    phase = np.asarray(rows, dtype=np.float64)[:, None] / 10_000.0 ** (np.arange(0, d, 2) / d)
    out = np.empty((len(phase), d))
    out[:, 0::2], out[:, 1::2] = np.sin(phase), np.cos(phase)
    return out


def _far_finding(on, T, delta, d, rows, why):
    """The Finding for the worst of ``rows`` (of tables longer than any built) that T does not
    shift to 1e-9, or None; ``why`` ends the message."""
    off = np.abs(og_rows(rows, d) @ T - og_rows(rows + delta, d)).max(axis=1)
    if off.max() < 1e-9:
        return None
    worst = int(np.argmax(off))
    j = int(rows[worst])
    return Finding(f'{on}: og_embedding({max(j, j + delta) + 1}, {d})[{j}] @ T should be row '
                   f'{j + delta}, but is off by {off[worst]:.2e}; {why} (tables of up to '
                   f'{FAR_7_3:,} positions are tried): build T from the formula, for every '
                   f'shift and every length', (delta, d))


@checker('7.3')
def check_7_3(shift_matrix):
    """``shift_matrix(delta, d)`` -> (d, d) T: ``og_embedding(q, d)[j] @ T == row j + delta``."""
    seed = toolkit.fresh_seed()
    cases = shift_cases(seed)
    for number, (delta, d, q) in enumerate(cases):
        on = f'delta={delta}, d={d}' + (f' ({_drawn("ch07.shift_cases", seed, number)})'
                                        if number >= len(_FIXED_SHIFTS) else '')
        T = toolkit.call(shift_matrix, delta, d, what='your shift_matrix', on=on)
        T = toolkit.array(T, (d, d), what=f'shift_matrix({delta}, {d})')
        E = og_embedding(q, d)
        rows = np.arange(max(0, -delta), min(q, q - delta))
        off = np.abs(E[rows] @ T - E[rows + delta]).max(axis=1)
        if off.max() < 1e-9:
            far = _far_finding(on, T, delta, d, far_rows(seed, number, q, delta),
                               'T is right on the case\'s own table but not on a longer one, '
                               'as a T fitted to the rows of one table would be')
            if far is None:
                continue
            raise far
        j, hint = int(rows[np.argmax(off)]), ''
        back = rows[(rows - delta >= 0) & (rows - delta < q)]
        if delta and len(back) and np.abs(E[back] @ T - E[back - delta]).max() < 1e-9:
            j = int(back[np.argmax(off[np.isin(rows, back)])])
            hint = (f'; it lands on row {j - delta} instead: your matrix shifts by -delta (look '
                    f'at the sign of the sine terms, and at which side of T the row vector sits)')
        raise Finding(f'{on}: og_embedding({q}, {d})[{j}] @ T should be row {j + delta}, but '
                      f'is off by {off[rows == j][0]:.2e}{hint}', (delta, d))
    for number, (delta, d, rows) in enumerate(far_shift_cases(seed)):
        on = f'delta={delta}, d={d} ({_drawn("ch07.far_shift_cases", seed, number)})'
        T = toolkit.call(shift_matrix, delta, d, what='your shift_matrix', on=on)
        T = toolkit.array(T, (d, d), what=f'shift_matrix({delta}, {d})')
        far = _far_finding(on, T, delta, d, rows, f'a shift this long is judged on '
                           f'{FAR_ROWS_7_3} rows drawn from the whole table')
        if far is not None:
            raise far
    deltas, dims, _ = zip(*_FIXED_SHIFTS)
    low, high = FAR_SHIFT_7_3
    return Passed(f'exact to 1e-9 on every valid row for {len(cases)} (delta, d) pairs: '
                  f'{len(_FIXED_SHIFTS)} fixed (d from {min(dims)} to {max(dims)}, powers of two '
                  f'and others, delta from {min(deltas)} to {max(deltas)}, zero included, tables '
                  f'of up to 1000 positions) and {DRAWN_7_3 + LONG_7_3} drawn for this check (d '
                  f'up to 512, {LONG_7_3} on tables of 1001 to 4000 positions, shifts of 1000 '
                  f'and more included), each also on {FAR_ROWS_7_3} rows of tables of up to '
                  f'{FAR_7_3:,} positions; then 2 shifts of {low:,} to {high:,} (one of each '
                  f'sign, d up to 512) on {FAR_ROWS_7_3} rows of such tables; '
                  f'taotp.encodings.shift_by_delta was switched off')


# ---------------------------------------------------------------- 7.7

DRAWN_7_7 = 6
TOL_7_7 = 1e-3


def window_cases(seed):
    """The (k, q, thetas, label) of one check of 7.7, all random angles drawn from ``seed``:
    the chapter's kinds of angles (k = 1 and k = q included), then 6 drawn sizes."""
    rng = np.random.default_rng(seed)
    cases = [(3, 24, random_angles(24, rng), '24 random angles'),
             (5, 32, random_angles(40, rng), '40 random angles'),
             (1, 16, random_angles(16, rng), '16 random angles'),
             (7, 30, 2 * np.pi * np.arange(32) / 32, '32 evenly spaced angles'),
             (4, 16, og_angles(64), 'the 32 sinusoidal angles of d = 64'),
             (2, 12, np.sort(random_angles(12, rng)), '12 sorted random angles'),
             (12, 12, random_angles(14, rng), '14 random angles, k = q'),
             (16, 32, random_angles(32, rng), '32 random angles, k = q/2')]
    for _ in range(DRAWN_7_7):
        q = int(rng.integers(6, 41))
        k, n = int(rng.integers(1, q + 1)), int(rng.integers(q, q + 9))
        cases.append((k, q, random_angles(n, rng), f'{n} random angles'))
    return cases


def window_problem(W, k, q, thetas):
    """None if ``W`` spreads every query i >= k - 1 evenly over keys i-k+1..i (to TOL_7_7),
    else (message, query)."""
    with np.errstate(over='ignore', invalid='ignore'):
        P = window_attention(W, q, thetas)
    if not np.all(np.isfinite(P)):
        return 'the attention weights overflow (NaN); keep the scores finite', None
    for i in range(k - 1, q):
        inside, outside = P[i, i - k + 1:i + 1], P[i, :i - k + 1]
        if np.abs(inside - 1 / k).max() > TOL_7_7:
            j = i - k + 1 + int(np.argmax(np.abs(inside - 1 / k)))
            return (f'query {i} puts weight {P[i, j]:.4f} on key {j}; every key of its window '
                    f'{i - k + 1}..{i} should get 1/k = {1 / k:.4f}'), i
        if len(outside) and outside.max() > TOL_7_7:
            j = int(np.argmax(outside))
            return (f'query {i} puts weight {P[i, j]:.4f} on key {j}, outside its window '
                    f'{i - k + 1}..{i}; it should be below {TOL_7_7}'), i
    return None


@checker('7.7')
def check_7_7(window_matrix):
    """``window_matrix(k, q, thetas)`` -> W: attention spreads 1/k over the last k positions."""
    seed = toolkit.fresh_seed()
    cases = window_cases(seed)
    for number, (k, q, thetas, label) in enumerate(cases):
        on = f'k={k}, q={q}, {label} ({_drawn("ch07.window_cases", seed, number)})'
        d = 2 * len(thetas)
        W = toolkit.call(window_matrix, k, q, thetas, what='your window_matrix', on=on)
        W = toolkit.array(W, (d, d), what=f'window_matrix({k}, {q}, <{label}>)')
        problem = window_problem(W, k, q, thetas)
        if problem:
            raise Finding(f'{on}: {problem[0]}', (k, q, problem[1]))
    return Passed(f'every query i >= k - 1 spreads 1/k (within {TOL_7_7}) over keys i-k+1..i '
                  f'and less than {TOL_7_7} elsewhere, for {len(cases)} cases drawn for this '
                  f'check: k = 1 and k = q included, random, sorted, evenly spaced and '
                  f'sinusoidal angles, q up to 40')


# ---------------------------------------------------------------- 7.8

def folded_distinguishability(q, d):
    """Definition 7.6 for ``uniform_rotation_embedding(q, d)`` without the q x q table: rows
    repeat with period n = d / 2, so position i sees each difference t (mod n) as often as
    there are j < q with j = i - t (mod n)."""
    n = d // 2
    first = uniform_rotation_embedding(min(q, n), d)
    gram = first @ first[0]                     # E_t . E_0 for t = 0..min(q, n) - 1
    best = 1.0
    for i in range(min(q, n)):
        r = (i - np.arange(min(q, n))) % n      # residues j = r (mod n) seen with difference t
        seen = (q - 1 - r) // n + 1             # how many j < q have that residue
        best = min(best, 1.0 / float(np.sum(seen * np.exp(gram - gram[0]))))
    return best


BANDS_7_8 = 8       # q from 401 to 10^9 in 8 bands of equal ratio, 3 sizes in each (round 12)


def sizes_7_8(seed):
    """The (q, d) of one check of 7.8: the statement's size, then sizes drawn from ``seed``: small
    d (where the far positions still count), q = 1, any size up to q = 400, three log-uniform
    sizes in each of 8 bands of equal ratio from 401 to 10^9 (wherever a piecewise answer
    switches, some q lands near it; one of them with d up to 2048), and q far beyond any
    table."""
    rng = np.random.default_rng(seed)
    sizes = [(256, 256), (int(rng.integers(3, 61)), 4), (int(rng.integers(4, 121)), 6),
             (int(rng.integers(5, 201)), 8), (1, 2 * int(rng.integers(1, 129)))]
    sizes += [(int(rng.integers(1, 401)), 2 * int(rng.integers(1, 129))) for _ in range(5)]
    edges = np.linspace(np.log(401), np.log(10 ** 9), BANDS_7_8 + 1)
    # in each band, one d up to 2048 (round 13: a constant past d = 256 passed)
    sizes += [(int(np.exp(rng.uniform(edges[band], edges[band + 1]))),
               2 * int(rng.integers(1, 1025 if k == 0 else 129)))
              for band in range(BANDS_7_8) for k in range(3)]
    sizes += [(int(rng.integers(10 ** 9, 10 ** 13)), 2 * int(rng.integers(2, 9))),
              (int(rng.integers(10 ** 9, 10 ** 13)), 2 * int(rng.integers(1, 129)))]
    return sizes


def _want_7_8(q, d):
    if q * q * d <= 256 ** 3:      # the table itself where it is quick; else the same, folded
        return distinguishability(uniform_rotation_embedding(q, d))
    return folded_distinguishability(q, d)


REL_7_8 = 1e-3
_HINT_7_8 = ('when do two positions get the same vector, and what do the others add to the '
             'softmax denominator?')


@checker('7.8')
def check_7_8(answer):
    """A number for q = d = 256, or a callable (q, d) -> distinguishability of uniform angles."""
    if answer is None:
        raise Finding('no answer yet: give a number, or a function of (q, d)')
    if not isinstance(answer, toolkit.Remote):
        got, want = float(toolkit.array(answer, (), what='your answer')), _want_7_8(256, 256)
        if not abs(got - want) <= REL_7_8 * want:
            raise Finding(f'{got!r} is not the distinguishability of '
                          f'uniform_rotation_embedding(256, 256) (to {REL_7_8:.1%}); hint: '
                          f'{_HINT_7_8}', (256, 256))
        return Passed('the distinguishability at 256 positions and 256 dims (to 0.1 %); for '
                      'the general case submit a function of (q, d)')
    seed = toolkit.fresh_seed()
    sizes = sizes_7_8(seed)
    for number, (q, d) in enumerate(sizes):
        on = f'q={q}, d={d}' + (f' ({_drawn("ch07.sizes_7_8", seed, number)})' if number else '')
        try:
            got = toolkit.call(answer, q, d, what='your formula', on=on, seconds=5)
            got = float(toolkit.array(got, (), what=f'your formula at {on}'))
        except Finding as f:
            if q < 10 ** 4 and q * q * d < 10 ** 9:
                raise
            raise Finding(f'{f.message} (at this size the q x q table is too big or too slow: '
                          f'a formula in q and d is needed)', (q, d), f.detail, f.where) from None
        want = _want_7_8(q, d)
        if not abs(got - want) <= REL_7_8 * want:
            raise toolkit.wrong(on, got, f'not within {REL_7_8:.1%} of Definition 7.6; '
                                         f'{_HINT_7_8}', (q, d))
    return Passed(f'your formula matches Definition 7.6 (to {REL_7_8:.1%}) at q = d = 256 and '
                  f'{len(sizes) - 1} sizes drawn for this check: d from 2 to 2048 (small d, where '
                  f'the far positions still count, included), q from 1 to beyond 10^9 (too many '
                  f'rows for any table), {3 * BANDS_7_8} of them spread over every scale from '
                  f'401 to 10^9')


# ---------------------------------------------------------------- 7.9

LABELS_7_9 = ('og', 'random', 'sorted', 'uniform')
_PANELS_SEED = 50          # the panels show the four encodings in the order this seed draws
DIGEST_7_9 = '96c109241bc0791523fd479178c16cfede1b5d73f9270a4c4c6f870ef96383dc'


def puzzle_7_9_panels(q=64, d=128):
    """The four rotation encodings (64 positions x 128 dims) of puzzle 7.9, panels A-D."""
    rng = np.random.default_rng(2024)
    tables = {'og': og_embedding(q, d), 'random': rotation_encoding(q, random_angles(d // 2, rng)),
              'sorted': rotation_encoding(q, np.sort(random_angles(d // 2, rng))),
              'uniform': uniform_rotation_embedding(q, d)}
    order = np.random.default_rng(_PANELS_SEED).permutation(len(LABELS_7_9))
    return [tables[LABELS_7_9[i]] for i in order]


_WORDS_7_9 = {
    'sorted': ('sorted', 'sort', 'ordered', 'increasing', 'ascending'),
    'uniform': ('uniform', 'uniformly', 'even', 'evenly', 'equal', 'equally', 'equispaced',
                'linspace', 'spaced', 'dft', 'fourier'),
    'og': ('og', 'original', 'sinusoidal', 'sinusoid', 'sinus', 'sin', 'sine', 'sines', 'vaswani',
           '2017', 'transformer'),
    'random': ('random', 'rand', 'randomly', 'unsorted', 'shuffled'),
}
_NEGATED_SORT = re.compile(r'\b(?:un|not\s+|non-?\s*)(?:sorted|sort|ordered)\b')


def _label(text):
    """The encoding a free-text label names, or None if it names none or several: "sorted
    random angles" is 'sorted', "unsorted" / "not sorted" 'random', "uniform random" None."""
    t = str(text).strip().lower()
    words = set(re.findall(r'[a-z0-9]+', _NEGATED_SORT.sub(' unsorted ', t)))  # a 'random' word
    kinds = {kind for kind, names in _WORDS_7_9.items() if words & set(names)}
    if _NEGATED_SORT.search(t):
        kinds.discard('sorted')
    if 'sorted' in kinds:           # sorted angles are random angles, sorted
        kinds.discard('random')
    return kinds.pop() if len(kinds) == 1 else None


@checker('7.9')
def check_7_9(answer):
    """A list of four labels for panels A-D, from: og, random, sorted, uniform."""
    kinds = "'og', 'random', 'sorted', 'uniform'"
    listed = isinstance(answer, (list, tuple, np.ndarray))
    if not listed or len(answer) != 4:
        raise Finding(f'expected a list of 4 labels for panels A, B, C, D (each one of {kinds}); '
                      f'got {f"{len(answer)} items" if listed else toolkit.describe(answer)}')
    bad = [a for a in answer if not isinstance(a, str)]
    if bad:
        raise Finding(f'each label must be a string ({kinds}); got {toolkit.describe(bad[0])}')
    labels = [_label(a) for a in answer]
    if None in labels:
        raise Finding(f'could not read label {str(answer[labels.index(None)])[:60]!r} as '
                      f'exactly one of {kinds}')
    if len(set(labels)) != 4:
        raise Finding(f'each encoding appears exactly once; your labels read as {labels}')
    if not toolkit.same_digest('7.9', labels, DIGEST_7_9):
        raise Finding(f'your labels (read as {labels}) are not the right assignment; look at '
                      f'which columns change slowly, in what order, and whether the pattern '
                      f'repeats down the rows')
    return Passed(f'all four panels identified (your labels read as {labels})')


# ---------------------------------------------------------------- 7.10

def _orthogonal(d, rng):
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def padded_encoding(q, d, m, rng, eps=1e-3, medium=False, outlier=0.0, near=False):
    """A (q, d) encoding with general padding dimension m (noise eps), hidden by a random rotation
    and offset: m coordinates are a constant plus noise of at most eps / (20 sqrt(d)) each (with
    ``medium``, one spreads over +-0.4 eps instead; with ``outlier``, one more is as quiet but
    for one row ``outlier`` eps away; with ``near``, one loud coordinate takes two values only
    ``NEAR_LOUD`` apart), the rest standard normal."""
    noise = eps / (20 * np.sqrt(d))
    extra = int(bool(outlier))
    quiet = rng.uniform(-noise, noise, (q, m + extra)) + rng.standard_normal(m + extra)
    if medium and m:
        quiet[:, 0] += rng.uniform(-0.4 * eps, 0.4 * eps, q)
    if outlier:
        quiet[int(rng.integers(q)), m] += outlier * eps
    loud = rng.standard_normal((q, d - m - extra))
    if near and loud.shape[1]:          # two values: its spread is its root mean square
        low = NEAR_LOUD * np.sqrt(m + 1)
        loud[:, 0] = rng.choice([-0.5, 0.5], q) * rng.uniform(low, 2 * low) * eps
    X = np.concatenate([loud, quiet], axis=1)
    return X @ _orthogonal(d, rng) + rng.standard_normal(d)


NEAR_LOUD = 4.5     # x eps sqrt(m + 1): no m + 1 dimensions fit in a box of half-width eps


def has_wide_gap(X, eps, m, outlier=0.0):
    """True when the answer m is unambiguous: the m quietest directions fit in a ball of
    radius eps / 2, and every direction outside them (but for one outlier direction, whose
    range reaches 0.8 ``outlier`` eps) has a root mean square spread over 2.2 eps sqrt(m + 1),
    so no m + 1 dimensions fit in an eps-ball, nor in a box of half-width eps."""
    _, s, Vt = np.linalg.svd(X - X.mean(axis=0))
    quiet, loud = Vt[::-1][:m], Vt[::-1][m:]
    if m:
        Y = X @ quiet.T
        if not np.linalg.norm(Y - (Y.max(0) + Y.min(0)) / 2, axis=1).max() < eps / 2:
            return False
    if outlier:
        y = X @ Vt[::-1][m]
        if not (np.ptp(y) > 0.8 * outlier * eps and np.std(y) < eps):
            return False
        loud = loud[1:]
    # a unit u in the loud span has range >= max |u.x| >= s_min / sqrt(q)
    return not len(loud) or s[:len(loud)].min() / np.sqrt(len(X)) > 2.2 * np.sqrt(m + 1) * eps


def padding_cases(seed):
    """The (encoding, eps, padding dimension, label) of one check of 7.10, drawn from ``seed``:
    padding from 0 to all dims, one shape with three answers, a medium and an outlier direction,
    a rotated rotation encoding, five of these shuffled, rotated, moved and scaled, two of one
    dimension a little over and under 2 eps wide, four with a loud direction only a few eps
    wide, four of drawn sizes, one with an outlier 3 to 6 eps out and four with fewer rows
    than dims (one row, two rows, and two with q one to three below d).  A draw without a
    wide gap (very rare) is redrawn."""
    rng = np.random.default_rng(seed)

    def gapped(draw, eps, m, outlier=0.0):
        while not has_wide_gap(X := draw(), eps, m, outlier):
            pass
        return X

    def case(q, d, m, eps, label='', **kind):
        X = gapped(lambda: padded_encoding(q, d, m, rng, eps, **kind), eps, m,
                   kind.get('outlier', 0.0))
        return X, eps, m, f'{q} x {d}, eps={eps}{label}'

    def rotated():
        E = rotation_encoding(64, random_angles(4, rng))
        quiet = 0.3 + rng.uniform(-1e-5, 1e-5, (64, 5))
        return np.concatenate([E, quiet], axis=1) @ _orthogonal(13, rng)

    cases = [case(100, 12, int(rng.integers(1, 12)), 1e-3), case(80, 20, 0, 1e-3),
             case(50, 6, 6, 1e-3), case(120, 16, int(rng.integers(1, 16)), 1e-2),
             case(60, 10, int(rng.integers(0, 11)), 1e-3),
             case(200, 24, int(rng.integers(1, 24)), 1e-3)]
    cases += [case(100, 12, int(m), 1e-3) for m in rng.choice(13, size=3, replace=False)]
    cases += [case(300, 14, int(rng.integers(1, 14)), 1e-3, ', one quiet direction spread '
                   'over +-0.4 eps', medium=True),
              case(1000, 10, int(rng.integers(0, 9)), 1e-3, ', one more direction quiet but '
                   'for a single row', outlier=25.0),
              (gapped(rotated, 1e-3, 5), 1e-3, 5, 'rotated random rotation encoding (64 x 8) + '
                                                  '5 quiet dims')]
    for number in (0, 1, 2, 9, 10):
        X, eps, m, _ = cases[number]
        scale = float(rng.choice([1e-3, 7.0, 1e4]))
        moved = (X[rng.permutation(len(X))] @ _orthogonal(X.shape[1], rng)
                 + rng.standard_normal(X.shape[1])) * scale
        cases.append((moved, eps * scale, m, f'{len(X)} x {X.shape[1]}, eps={eps * scale:g}: '
                      f'encoding {number} with its rows shuffled, rotated, moved and scaled by '
                      f'{scale:g}'))
    for loud in (True, False):          # one dimension: it fits in an eps-ball iff its range
        r, q = rng.uniform(2.05, 2.6) if loud else rng.uniform(1.5, 1.9), int(rng.integers(20, 301))
        x = rng.choice([-0.5, 0.5], q) if loud else rng.uniform(-0.5, 0.5, q)
        x[:2] = -0.5, 0.5                # is at most 2 eps (round 11: radius taken for diameter)
        cases.append(((x * r * 1e-3 + rng.standard_normal())[:, None], 1e-3, int(not loud),
                      f'{q} x 1, eps=0.001'))
    for _ in range(4):                  # a loud direction just past the threshold (round 10)
        d = int(rng.integers(2, 25))
        cases.append(case(int(rng.integers(3 * d + 20, 301)), d, int(rng.integers(0, min(d, 4))),
                          1e-3, ', one loud direction only a few eps wide', near=True))
    for _ in range(4):
        d = int(rng.integers(2, 25))
        m, q = int(rng.integers(0, d + 1)), int(rng.integers(3 * d + 20, 301))
        eps, scale = float(rng.choice([1e-3, 1e-2])), float(rng.choice([1e-3, 1.0, 7.0, 1e4]))
        X = case(q, d, m, eps)[0]
        cases.append((X * scale, eps * scale, m, f'{q} x {d}, eps={eps * scale:g}'))
    # an outlier only 3 to 6 eps out among 500 to 1,000 rows: its direction's root mean square
    # is below the quiet ones' (round 22: counting by root mean square passed)
    away = round(float(rng.uniform(3, 6)), 1)
    cases.append(case(int(rng.integers(500, 1001)), 10, int(rng.integers(0, 9)), 1e-3,
                      f', one more direction quiet but for a single row {away} eps away',
                      outlier=away))
    # fewer rows than dims: centred, q rows span at most q - 1 directions, so the other d - q + 1
    # are flat; a single row, two rows apart, then q just below d (round 25: the reduced SVD,
    # which returns only min(q, d) directions, passed)
    sizes = [(1, int(rng.integers(2, 25))), (2, int(rng.integers(3, 25)))]
    for d in rng.integers(6, 25, size=2):
        sizes.append((int(d) - int(rng.integers(1, 4)), int(d)))
    for q, d in sizes:
        loud = 0 if q == 1 else 1 if q == 2 else int(rng.integers(1, q))
        eps = float(rng.choice([1e-3, 1e-2]))
        cases.append(case(q, d, d - loud, eps, ', fewer rows than dims'))
    return cases


@checker('7.10')
def check_7_10(padding_dim):
    """``padding_dim(encoding, epsilon)`` -> int, the padding dimension in any subspace."""
    seed = toolkit.fresh_seed()
    cases = padding_cases(seed)
    for number, (X, eps, want, label) in enumerate(cases):
        on = f'encoding {number} ({label}; {_drawn("ch07.padding_cases", seed, number)})'
        got = toolkit.call(padding_dim, X, eps, what='your padding_dim', on=on)
        got = toolkit.array(got, (), what=f'padding_dim on encoding {number} ({label})')
        if got.dtype.kind == 'b' or got.dtype.kind == 'f' and float(got) != round(float(got)):
            raise Finding(f'encoding {number} ({label}): padding_dim must return an integer; '
                          f'got {got.item()!r}', on)
        if int(got) != want:
            raise toolkit.wrong(on, int(got), 'look at the spread of the rows along every '
                                'direction of R^d (those the rows do not span included), not '
                                'only along the axes, and at which directions fit in one eps-ball '
                                'together')
    return Passed(f'right on {len(cases)} encodings drawn for this check, whose quiet subspace is '
                  f'hidden by a random rotation and offset (padding from 0 to all dims, equal '
                  f'shapes with different answers, a direction quiet but for one row 3 to 25 '
                  f'eps out, the same encodings shuffled, rotated and rescaled, a loud direction '
                  f'only a few eps wide, fewer rows than dims down to a single row; the '
                  f'quiet part fits in a ball of radius eps / 2 and no more '
                  f'dimensions fit in a box of half-width eps, so the Euclidean and '
                  f'per-coordinate readings agree)')


PUZZLES = [
    Puzzle('7.1', 'Why might the 2017 authors have chosen the sinusoidal encoding this way?',
           'reflect'),
    Puzzle('7.2', 'Lemma 7.1: a shiftable complex encoding has a shiftable real view (proof)',
           'reflect'),
    Puzzle('7.3', 'The shift matrix of the sinusoidal encoding', 'checked', check_7_3,
           'any (d, d) matrix',
           refuse={'taotp.encodings.shift_by_delta': 'it is the package\'s own answer to this '
                   'puzzle; build T from the formula of the encoding yourself'}),
    Puzzle('7.4', 'Theorem 7.3: the sinusoidal encoding is a reversed rotation encoding (proof)',
           'reflect'),
    Puzzle('7.5', 'After layer norm the sinusoidal encoding is no longer shiftable (proof)',
           'reflect'),
    Puzzle('7.6', 'The sinusoidal encoding under RMSNorm: relative attention in PreLN?',
           'reflect'),
    Puzzle('7.7', 'One bilinear score that attends evenly to the last k positions', 'checked',
           check_7_7, 'one (d, d) matrix'),
    Puzzle('7.8', 'Distinguishability with evenly spaced angles', 'checked', check_7_8),
    Puzzle('7.9', 'Four rotation encodings: which heatmap is which?', 'checked', check_7_9),
    Puzzle('7.10', 'The general (rotated-subspace) padding dimension', 'checked', check_7_10),
    Puzzle('7.11', 'Train with sinusoidal vs random rotation encodings: which is better?',
           'checked', check_7_11, 'two PostLN models of the same shape'),
]
