"""Checkers for Chapter 7, The Original Encodings (puzzles 7.1-7.11).

Checked: 7.3 (shift matrix of the sinusoidal encoding), 7.7 (attend evenly to the
last k positions), 7.8 (distinguishability with evenly spaced angles), 7.9 (which
heatmap is which), 7.10 (general padding dimension), 7.11 (a training experiment:
harness and checker in ``taotp.exercises.training``).  The others are proofs or
reflections; their answers are in the solutions notebook.
"""
import re
from collections.abc import Sequence

import numpy as np

from ..encodings import (distinguishability, og_angles, og_embedding, random_angles,
                         rotation_encoding, shift_by_delta, uniform_rotation_embedding,
                         window_attention)
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed
from .training import check_7_11

# ---------------------------------------------------------------- 7.3

def _shift_cases():
    """(delta, d, q): fixed boundary cases, then a seeded sweep; q up to 1000 positions."""
    cases = [(delta, d, 200) for d in (4, 16, 64, 128)
             for delta in (1, -1, 3, -7, 0, 20, -50, 150)]
    cases += [(1, 2, 50), (-1, 2, 50), (5, 6, 300), (-300, 10, 1000), (999, 8, 1000),
              (64, 128, 1000), (-500, 128, 1000), (7, 50, 1000)]
    rng = np.random.default_rng(73)
    for _ in range(10):
        d = 2 * int(rng.integers(1, 80))
        q = int(rng.integers(20, 1001))
        cases.append((int(rng.integers(-q + 1, q)), d, q))
    return cases


_SHIFT_BY_DELTA = {shift_by_delta.__code__: 'taotp.encodings.shift_by_delta'}


@checker('7.3')
def check_7_3(shift_matrix):
    """``shift_matrix(delta, d)`` -> (d, d) T with ``og_embedding(q, d)[j] @ T == row j + delta``."""
    used = []
    for delta, d, q in _shift_cases():
        with guard.watching(_SHIFT_BY_DELTA) as seen:
            T = guard.call(shift_matrix, delta, d, what='your shift_matrix',
                           on=f'delta={delta}, d={d}')
        used = used or seen[:1]
        T = guard.array(T, (d, d), what=f'shift_matrix({delta}, {d})')
        E = og_embedding(q, d)      # made after the call: no table of the check's is ever in reach
        rows = np.arange(max(0, -delta), min(q, q - delta))
        off = np.abs(E[rows] @ T - E[rows + delta]).max(axis=1)
        if not off.max() < 1e-9:
            j, hint = int(rows[np.argmax(off)]), ''
            back = rows[(rows - delta >= 0) & (rows - delta < q)]
            if delta and len(back) and np.abs(E[back] @ T - E[back - delta]).max() < 1e-9:
                j = int(back[np.argmax(off[np.isin(rows, back)])])
                hint = (f'; it lands on row {j - delta} instead: your matrix shifts by '
                        f'-delta (look at the sign of the sine terms, and at which side of '
                        f'T the row vector sits)')
            raise Finding(f'delta={delta}, d={d}: og_embedding({q}, {d})[{j}] @ T should be '
                          f'row {j + delta}, but is off by {off[rows == j][0]:.2e}{hint}',
                          (delta, d))
    if used:     # right, but through the package's own matrix
        raise Finding('your shift_matrix switched off the check\'s watch (sys.settrace)'
                      if used[0] == 'sys.settrace' else 'your shift_matrix gives the right '
                      'matrices by calling taotp.encodings.shift_by_delta, the package\'s own '
                      'answer: build T from the formula of the encoding yourself')
    cases = _shift_cases()
    dims, deltas = [d for _, d, _ in cases], [delta for delta, _, _ in cases]
    return Passed(f'exact to 1e-9 on every valid row of tables of up to 1000 positions for '
                  f'{len(cases)} (delta, d) pairs: d from {min(dims)} to {max(dims)} (powers of '
                  f'two and others), delta from {min(deltas)} to {max(deltas)}, zero included')


# ---------------------------------------------------------------- 7.7

def _window_cases():
    """(k, q, thetas, label): the chapter's kinds of angles, then a seeded sweep (n >= q angles)."""
    rng = np.random.default_rng(77)
    cases = [
        (3, 24, random_angles(24, rng), '24 random angles'),
        (5, 32, random_angles(40, rng), '40 random angles'),
        (1, 16, random_angles(16, rng), '16 random angles'),
        (7, 30, 2 * np.pi * np.arange(32) / 32, '32 evenly spaced angles'),
        (4, 16, og_angles(64), 'the 32 sinusoidal angles of d = 64'),
        (2, 12, np.sort(random_angles(12, rng)), '12 sorted random angles'),
        (12, 12, random_angles(14, rng), '14 random angles, k = q'),
        (16, 32, random_angles(32, rng), '32 random angles, k = q/2'),
    ]
    for _ in range(6):
        q = int(rng.integers(6, 41))
        k, n = int(rng.integers(1, q + 1)), int(rng.integers(q, q + 9))
        cases.append((k, q, random_angles(n, rng), f'{n} random angles'))
    return cases


TOL_7_7 = 1e-3


@checker('7.7')
def check_7_7(window_matrix):
    """``window_matrix(k, q, thetas)`` -> W: attention spreads 1/k over the last k positions."""
    tol = TOL_7_7
    cases = _window_cases()
    for i, (k, q, thetas, label) in enumerate(cases):
        d = 2 * len(thetas)
        W = guard.call(window_matrix, k, q, thetas.copy(), what='your window_matrix',
                       on=f'k={k}, q={q}, {label}')
        W = guard.array(W, (d, d), what=f'window_matrix({k}, {q}, <{label}>)')
        k, q, thetas, label = _window_cases()[i]     # made again: the call never held these
        with np.errstate(over='ignore', invalid='ignore'):
            P = window_attention(W, q, thetas)
        if not np.all(np.isfinite(P)):
            raise Finding(f'k={k}, q={q}, {label}: the attention weights overflow (NaN); '
                          f'keep the scores finite', (k, q))
        for i in range(k - 1, q):
            inside = P[i, i - k + 1:i + 1]
            outside = P[i, :i - k + 1]
            if np.abs(inside - 1 / k).max() > tol:
                j = i - k + 1 + int(np.argmax(np.abs(inside - 1 / k)))
                raise Finding(f'k={k}, q={q}, {label}: query {i} puts weight {P[i, j]:.4f} on '
                              f'key {j}; expected 1/k = {1 / k:.4f} on keys {i - k + 1}..{i}',
                              (k, q, i))
            if len(outside) and outside.max() > tol:
                j = int(np.argmax(outside))
                raise Finding(f'k={k}, q={q}, {label}: query {i} puts weight {P[i, j]:.4f} on '
                              f'key {j}, outside its window {i - k + 1}..{i}; expected < {tol}',
                              (k, q, i))
    ks = sorted({k for k, _, _, _ in cases})
    return Passed(f'every query i >= k - 1 spreads 1/k (within {tol}) over keys i-k+1..i and '
                  f'less than {tol} elsewhere, for {len(cases)} cases: k from {ks[0]} to '
                  f'{ks[-1]} (k = 1 and k = q included), random, sorted, evenly spaced and '
                  f'sinusoidal angles, q up to {max(q for _, q, _, _ in cases)}')


# ---------------------------------------------------------------- 7.8

def _folded_distinguishability(q, d):
    """Definition 7.6 for ``uniform_rotation_embedding(q, d)`` without building the q x q table.

    The angles are multiples of 2 pi / n (n = d / 2), so row i + n equals row i
    and E_i . E_j depends only on (i - j) mod n: position i sees each
    difference t as often as there are j < q with j = i - t (mod n).  Used for
    sizes whose table would not fit in memory; tested against the direct
    computation on small sizes.
    """
    n = d // 2
    first = uniform_rotation_embedding(min(q, n), d)
    gram = first @ first[0]                     # E_t . E_0 for t = 0..min(q, n) - 1
    best = 1.0
    for i in range(min(q, n)):
        r = (i - np.arange(min(q, n))) % n      # residues j = r (mod n) seen with difference t
        seen = (q - 1 - r) // n + 1             # how many j < q have that residue
        best = min(best, 1.0 / float(np.sum(seen * np.exp(gram - gram[0]))))
    return best


def _sizes_7_8():
    """(q, d) pairs: the chapter's sizes, small d (where e^-n matters), a seeded sweep, huge q."""
    sizes = [(256, 256), (256, 128), (100, 64), (64, 128), (300, 48), (90, 32), (33, 64),
             (10, 4), (7, 2), (1, 2), (1, 256), (5, 40), (50, 8), (129, 8), (64, 6)]
    rng = np.random.default_rng(78)
    sizes += [(int(rng.integers(1, 400)), 2 * int(rng.integers(1, 129))) for _ in range(8)]
    return sizes + [(10 ** 12, 256), (10 ** 9 + 7, 64)]


def _want_7_8(q, d):
    if q * q * d <= 10 ** 9:
        return distinguishability(uniform_rotation_embedding(q, d))
    return _folded_distinguishability(q, d)


@checker('7.8')
def check_7_8(answer):
    """A number for q = d = 256, or a callable (q, d) -> distinguishability of uniform angles."""
    if callable(answer):
        sizes = tuple(_sizes_7_8())
        for q, d in sizes:
            try:
                got = guard.call(answer, q, d, what='your formula', on=f'q={q}, d={d}',
                                 seconds=5)
                got = float(guard.array(got, (), what=f'your formula at q={q}, d={d}'))
            except Finding as f:
                if q * d < 10 ** 9:
                    raise
                raise Finding(f'{f.message} (at this size no table fits in memory: a formula '
                              f'in q and d is needed)', (q, d), f.detail) from None
            want = _want_7_8(q, d)
            if not abs(got - want) < 1e-3:
                raise Finding(f'q={q}, d={d}: expected {want:.4f}, got {got:.4f}', (q, d))
        return Passed(f'your formula matches Definition 7.6 (to 1e-3) at {len(sizes)} sizes '
                      f'(q, d): d from 2 to 256 (small d, where the far positions still count, '
                      f'included), q from 1 to 10^12 (too many rows for any table)')
    got = float(guard.array(answer, (), what='your answer'))
    want = distinguishability(uniform_rotation_embedding(256, 256))
    if not abs(got - want) < 1e-3:
        raise Finding(f'q=256, d=256: expected {want:.4f}, got {got:.4f} (hint: when do two '
                      f'positions get the same vector?)', (256, 256))
    return Passed(f'{want:.4f} at 256 positions and 256 dims; for the general case submit a '
                  f'function of (q, d)')


# ---------------------------------------------------------------- 7.9

LABELS_7_9 = ('og', 'random', 'sorted', 'uniform')


_ORDER_7_9 = (2, 0, 3, 1)    # panels A-D show LABELS_7_9 in this fixed, shuffled order


def _tables_7_9(q=64, d=128):
    rng = np.random.default_rng(2024)
    tables = {
        'og': og_embedding(q, d),
        'random': rotation_encoding(q, random_angles(d // 2, rng)),
        'sorted': rotation_encoding(q, np.sort(random_angles(d // 2, rng))),
        'uniform': uniform_rotation_embedding(q, d),
    }
    return [(LABELS_7_9[i], tables[LABELS_7_9[i]]) for i in _ORDER_7_9]


def puzzle_7_9_panels():
    """The four rotation encodings (64 positions x 128 dims) of puzzle 7.9, panels A-D."""
    return [table for _, table in _tables_7_9()]


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
    """The encoding a free-text label names, or None if it names none or several.

    "sorted random angles" is 'sorted'; "unsorted" / "not sorted" is 'random';
    a label naming two kinds ("uniform random") is ambiguous and read as None.
    """
    t = str(text).strip().lower()
    negated = bool(_NEGATED_SORT.search(t))
    words = set(re.findall(r'[a-z0-9]+', _NEGATED_SORT.sub(' unsorted ', t)))
    kinds = {kind for kind, names in _WORDS_7_9.items() if words & set(names)}
    if negated:
        kinds = (kinds - {'sorted'}) | {'random'}
    if 'sorted' in kinds:           # sorted angles are random angles, sorted
        kinds.discard('random')
    return kinds.pop() if len(kinds) == 1 else None


@checker('7.9')
def check_7_9(answer):
    """A list of four labels for panels A-D, from: og, random, sorted, uniform."""
    kinds = "'og', 'random', 'sorted', 'uniform'"
    if isinstance(answer, (str, bytes, dict)) or not isinstance(answer, Sequence) \
            and not isinstance(answer, np.ndarray):
        raise Finding(f'expected a list of 4 labels for panels A, B, C, D (each one of {kinds}); '
                      f'got {type(answer).__name__}')
    answer = list(answer)
    if len(answer) != 4:
        raise Finding(f'expected a list of 4 labels for panels A, B, C, D (each one of {kinds}); '
                      f'got {len(answer)} items')
    texts = [a if isinstance(a, str) else None for a in answer]
    if None in texts:
        bad = answer[texts.index(None)]
        raise Finding(f'each label must be a string ({kinds}); got a {type(bad).__name__}')
    labels = [_label(a) for a in texts]
    if None in labels:
        bad = texts[labels.index(None)]
        raise Finding(f'could not read label {bad[:60]!r} as exactly one of {kinds}')
    if len(set(labels)) != 4:
        raise Finding(f'each encoding appears exactly once; your labels read as {labels}')
    truth = [label for label, _ in _tables_7_9()]
    right = sum(a == b for a, b in zip(labels, truth))
    if right != 4:
        raise Finding(f'{right} of 4 panels right (your labels read as {labels}); look at which '
                      f'columns change slowly and whether the pattern repeats down the rows')
    return Passed(f'all four panels identified (your labels read as {labels})')


# ---------------------------------------------------------------- 7.10

def _orthogonal(d, rng):
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def padded_encoding(q, d, m, rng, eps=1e-3, big=1.0, medium=False, outlier=False):
    """A (q, d) encoding with general padding dimension exactly m (noise eps), hidden by a rotation.

    m coordinates are a constant plus noise of at most eps / (20 sqrt(d)) each
    (so they fit in an eps-ball in both the Euclidean and the per-coordinate
    reading); with ``medium=True`` one of them instead spreads uniformly over
    +-0.4 eps (still inside the ball, but its variance is not tiny).  With
    ``outlier=True`` one more coordinate is just as quiet except for a single
    row 25 eps away (a tiny variance, but no eps-ball holds it).  The other
    coordinates are i.i.d. normal times ``big``, whose spread along every
    direction of their span is far above 2 eps.  Then everything is rotated by
    a random orthogonal matrix and shifted by a random offset.
    """
    noise = eps / (20 * np.sqrt(d))
    extra = int(outlier)
    quiet = rng.uniform(-noise, noise, (q, m + extra)) + rng.standard_normal(m + extra)
    if medium and m:
        quiet[:, 0] += rng.uniform(-0.4 * eps, 0.4 * eps, q)
    if outlier:
        quiet[int(rng.integers(q)), m] += 25 * eps
    X = np.concatenate([big * rng.standard_normal((q, d - m - extra)), quiet], axis=1)
    return X @ _orthogonal(d, rng) + rng.standard_normal(d)


def _padding_cases():
    """(encoding, eps, padding dimension, label): shapes repeat with different answers."""
    rng = np.random.default_rng(710)
    cases = []
    for q, d, m, eps in ((100, 12, 4, 1e-3), (80, 20, 0, 1e-3), (50, 6, 6, 1e-3),
                         (120, 16, 9, 1e-2), (60, 10, 1, 1e-3), (200, 24, 12, 1e-3),
                         (100, 12, 7, 1e-3), (100, 12, 0, 1e-3), (40, 9, 8, 1e-3)):
        cases.append((padded_encoding(q, d, m, rng, eps), eps, m, f'{q} x {d}, eps={eps}'))
    cases.append((padded_encoding(300, 14, 5, rng, 1e-3, medium=True), 1e-3, 5,
                  '300 x 14, eps=0.001, one quiet direction spread over +-0.4 eps'))
    cases.append((padded_encoding(1000, 10, 3, rng, 1e-3, outlier=True), 1e-3, 3,
                  '1000 x 10, eps=0.001, one more direction quiet but for a single row'))
    # a rotated padded rotation encoding: 8 dims of 64 random-angle rows + 5 quiet dims
    E = rotation_encoding(64, random_angles(4, rng))
    quiet = 0.3 + rng.uniform(-1e-5, 1e-5, (64, 5))
    X = np.concatenate([E, quiet], axis=1) @ _orthogonal(13, rng)
    cases.append((X, 1e-3, 5, 'rotated random rotation encoding (64 x 8) + 5 quiet dims'))
    # the same encodings again, rows shuffled, rotated, moved and scaled (eps scaled too)
    for X, eps, m, label in cases[:3] + cases[-3:-1]:
        scale = float(rng.choice([1e-3, 7.0, 1e4]))
        moved = (X[rng.permutation(len(X))] @ _orthogonal(X.shape[1], rng)
                 + rng.standard_normal(X.shape[1])) * scale
        cases.append((moved, eps * scale, m, f'{label} (rows shuffled, rotated, moved, '
                                             f'scaled by {scale:g})'))
    return cases


DRAWN_7_10 = 4     # encodings drawn with a seed taken from the answers to the fixed ones


def _drawn_padding_cases(rng, count=DRAWN_7_10):
    """More encodings like the fixed ones, drawn from ``rng`` (seeded by the answers so far)."""
    cases = []
    for _ in range(count):
        d = int(rng.integers(2, 25))
        m, q = int(rng.integers(0, d + 1)), int(rng.integers(3 * d + 20, 301))
        eps = float(rng.choice([1e-3, 1e-2]))
        scale = float(rng.choice([1e-3, 1.0, 7.0, 1e4]))
        cases.append((padded_encoding(q, d, m, rng, eps) * scale, eps * scale, m,
                      f'{q} x {d}, eps={eps * scale:g}, drawn with a seed taken from your answers'))
    return cases


@checker('7.10')
def check_7_10(padding_dim):
    """``padding_dim(encoding, epsilon)`` -> int, the padding dimension in any (rotated) subspace."""
    cases, answers = tuple(_padding_cases()), []      # a tuple: no entry can be swapped

    def ask(number, X, eps, want, label):
        label = f'encoding {number} ({label})'
        got = guard.call(padding_dim, X.copy(), eps, what='your padding_dim', on=label)
        got = guard.array(got, (), what=f'padding_dim on {label}')
        if got.dtype.kind == 'b' or got.dtype.kind == 'f' and float(got) != round(float(got)):
            raise Finding(f'{label}: expected an integer, got {got.item()!r}', label)
        if int(got) != want:
            raise Finding(f'{label}: expected padding dimension {want}, got {int(got)}', label)
        answers.append(int(got))

    for number, case in enumerate(cases, start=1):
        ask(number, *case)
    # the fixed encodings (and their answers) can be read from this module; these cannot be
    # known before the answers to the fixed ones are given
    for number, case in enumerate(_drawn_padding_cases(guard.submission_rng(710, answers)),
                                  start=len(cases) + 1):
        ask(number, *case)
    return Passed(f'right on {len(cases) + DRAWN_7_10} encodings whose quiet subspace is hidden '
                  f'by a random rotation and offset (padding from 0 to all dims, equal shapes '
                  f'with different answers, a direction quiet but for one row, the same '
                  f'encodings shuffled, rotated and rescaled, and {DRAWN_7_10} drawn with a seed '
                  f'taken from your answers; the quiet part fits in a ball of radius eps / 2 and '
                  f'every other direction spreads over more than 20 eps, so the Euclidean and '
                  f'per-coordinate readings agree)')


PUZZLES = [
    Puzzle('7.1', 'Why might the 2017 authors have chosen the sinusoidal encoding this way?',
           'reflect'),
    Puzzle('7.2', 'Lemma 7.1: a shiftable complex encoding has a shiftable real view (proof)',
           'reflect'),
    Puzzle('7.3', 'The shift matrix of the sinusoidal encoding', 'checked', check_7_3,
           'any (d, d) matrix'),
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
