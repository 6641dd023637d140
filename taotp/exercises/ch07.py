"""Checkers for Chapter 7, The Original Encodings (puzzles 7.1-7.11).

Checked: 7.3 (shift matrix of the sinusoidal encoding), 7.7 (attend evenly to the
last k positions), 7.8 (distinguishability with evenly spaced angles), 7.9 (which
heatmap is which), 7.10 (general padding dimension).  The others are proofs,
reflections or a training experiment (7.11's harness is
``taotp.encodings.train_offset_head``); their answers are in the solutions notebook.
"""
import numpy as np

from ..encodings import (distinguishability, og_angles, og_embedding, random_angles,
                         rotation_encoding, uniform_rotation_embedding, window_attention)
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed

# ---------------------------------------------------------------- 7.3


@checker('7.3')
def check_7_3(shift_matrix, q=200):
    """``shift_matrix(delta, d)`` -> (d, d) T with ``og_embedding(q, d)[j] @ T == row j + delta``."""
    cases = 0
    for d in (4, 16, 64, 128):
        E = og_embedding(q, d)
        for delta in (1, -1, 3, -7, 0, 20, -50, 150):
            T = guard.call(shift_matrix, delta, d, what='your shift_matrix',
                           on=f'delta={delta}, d={d}')
            T = guard.array(T, (d, d), what=f'shift_matrix({delta}, {d})')
            rows = np.arange(max(0, -delta), min(q, q - delta))
            err = np.abs(E[rows] @ T - E[rows + delta]).max()
            if not err < 1e-9:
                hint = ''
                if np.abs(E[rows] @ T.T - E[rows + delta]).max() < 1e-9:
                    hint = ('; your matrix works on column vectors (T @ x), but this book '
                            'multiplies row vectors (x @ T): return its transpose')
                j = int(rows[np.argmax(np.abs(E[rows] @ T - E[rows + delta]).max(axis=1))])
                raise Finding(f'delta={delta}, d={d}: og_embedding({q}, {d})[{j}] @ T should be '
                              f'row {j + delta}, but is off by {err:.2e}{hint}', (delta, d))
            cases += 1
    return Passed(f'exact to 1e-9 on all rows of a {q}-position table for {cases} (delta, d) '
                  f'pairs: d in 4, 16, 64, 128; delta from -50 to 150, zero included')


# ---------------------------------------------------------------- 7.7

def _window_cases():
    rng = np.random.default_rng(77)
    return [
        (3, 24, random_angles(24, rng), '24 random angles'),
        (5, 32, random_angles(40, rng), '40 random angles'),
        (1, 16, random_angles(16, rng), '16 random angles'),
        (7, 30, 2 * np.pi * np.arange(32) / 32, '32 evenly spaced angles'),
        (4, 16, og_angles(64), 'the 32 sinusoidal angles of d = 64'),
    ]


@checker('7.7')
def check_7_7(window_matrix, tol=1e-3):
    """``window_matrix(k, q, thetas)`` -> W: attention spreads 1/k over the last k positions."""
    for k, q, thetas, label in _window_cases():
        d = 2 * len(thetas)
        W = guard.call(window_matrix, k, q, thetas.copy(), what='your window_matrix',
                       on=f'k={k}, q={q}, {label}')
        W = guard.array(W, (d, d), what=f'window_matrix({k}, {q}, <{label}>)')
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
    return Passed(f'every query i >= k - 1 spreads 1/k (within {tol}) over keys i-k+1..i and '
                  f'less than {tol} elsewhere, for 5 cases: k in 1, 3, 4, 5, 7 with random, '
                  f'evenly spaced and sinusoidal angles, q up to 32')


# ---------------------------------------------------------------- 7.8

_CASES_7_8 = ((256, 256), (256, 128), (100, 64), (64, 128), (300, 48), (90, 32), (33, 64))


@checker('7.8')
def check_7_8(answer):
    """A number for q = d = 256, or a callable (q, d) -> distinguishability of uniform angles."""
    if callable(answer):
        for q, d in _CASES_7_8:
            want = distinguishability(uniform_rotation_embedding(q, d))
            got = guard.call(answer, q, d, what='your formula', on=f'q={q}, d={d}')
            got = guard.array(got, (), what=f'your formula at q={q}, d={d}')
            if not abs(float(got) - want) < 1e-3:
                raise Finding(f'q={q}, d={d}: expected {want:.4f}, got {float(got):.4f}', (q, d))
        return Passed(f'your formula matches the computed distinguishability (to 1e-3) at '
                      f'{len(_CASES_7_8)} sizes (q, d): {", ".join(map(str, _CASES_7_8))}')
    got = guard.array(answer, (), what='your answer')
    want = distinguishability(uniform_rotation_embedding(256, 256))
    if not abs(float(got) - want) < 1e-3:
        raise Finding(f'q=256, d=256: expected {want:.4f}, got {float(got):.4f} (hint: when do '
                      f'two positions get the same vector?)', (256, 256))
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


def _label(text):
    t = str(text).strip().lower()
    if 'sort' in t:
        return 'sorted'
    if 'unif' in t or 'even' in t or 'linspace' in t:
        return 'uniform'
    if t in ('og', 'original', 'sin', 'sine') or 'sinus' in t or t.startswith('og'):
        return 'og'
    if 'rand' in t:
        return 'random'
    return None


@checker('7.9')
def check_7_9(answer):
    """A list of four labels for panels A-D, from: og, random, sorted, uniform."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, '__len__') or len(answer) != 4:
        raise Finding(f'expected a list of 4 labels for panels A, B, C, D (each one of '
                      f"'og', 'random', 'sorted', 'uniform'); got {answer!r}")
    labels = [_label(a) for a in answer]
    if None in labels:
        bad = answer[labels.index(None)]
        raise Finding(f"could not read label {bad!r}; use 'og', 'random', 'sorted' or 'uniform'")
    if len(set(labels)) != 4:
        raise Finding(f'each encoding appears exactly once; your labels read as {labels}')
    truth = [label for label, _ in _tables_7_9()]
    right = sum(a == b for a, b in zip(labels, truth))
    if right != 4:
        raise Finding(f'{right} of 4 panels right (your labels read as {labels}); look at which '
                      f'columns change slowly and whether the pattern repeats down the rows')
    return Passed('all four panels identified')


# ---------------------------------------------------------------- 7.10

def _orthogonal(d, rng):
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def padded_encoding(q, d, m, rng, eps=1e-3, big=1.0, medium=False):
    """A (q, d) encoding with general padding dimension exactly m (noise eps), hidden by a rotation.

    m coordinates are a constant plus noise of at most eps / (20 sqrt(d)) each
    (so they fit in an eps-ball in both the Euclidean and the per-coordinate
    reading); with ``medium=True`` one of them instead spreads uniformly over
    +-0.4 eps (still inside the ball, but its variance is not tiny).  The other
    d - m are i.i.d. normal times ``big``, whose spread along every direction of
    their span is far above 2 eps.  Then everything is rotated by a random
    orthogonal matrix and shifted by a random offset.
    """
    noise = eps / (20 * np.sqrt(d))
    quiet = rng.uniform(-noise, noise, (q, m)) + rng.standard_normal(m)
    if medium and m:
        quiet[:, 0] += rng.uniform(-0.4 * eps, 0.4 * eps, q)
    X = np.concatenate([big * rng.standard_normal((q, d - m)), quiet], axis=1)
    return X @ _orthogonal(d, rng) + rng.standard_normal(d)


def _padding_cases():
    rng = np.random.default_rng(710)
    cases = []
    for q, d, m, eps in ((100, 12, 4, 1e-3), (80, 20, 0, 1e-3), (50, 6, 6, 1e-3),
                         (120, 16, 9, 1e-2), (60, 10, 1, 1e-3), (200, 24, 12, 1e-3)):
        cases.append((padded_encoding(q, d, m, rng, eps), eps, m, f'{q} x {d}, eps={eps}'))
    cases.append((padded_encoding(300, 14, 5, rng, 1e-3, medium=True), 1e-3, 5,
                  '300 x 14, eps=0.001, one quiet direction spread over +-0.4 eps'))
    # a rotated padded rotation encoding: 8 dims of 64 random-angle rows + 5 quiet dims
    E = rotation_encoding(64, random_angles(4, rng))
    quiet = 0.3 + rng.uniform(-1e-5, 1e-5, (64, 5))
    X = np.concatenate([E, quiet], axis=1) @ _orthogonal(13, rng)
    cases.append((X, 1e-3, 5, 'rotated random rotation encoding (64 x 8) + 5 quiet dims'))
    return cases


@checker('7.10')
def check_7_10(padding_dim):
    """``padding_dim(encoding, epsilon)`` -> int, the padding dimension in any (rotated) subspace."""
    cases = _padding_cases()
    for X, eps, want, label in cases:
        got = guard.call(padding_dim, X.copy(), eps, what='your padding_dim', on=label)
        got = guard.array(got, (), what=f'padding_dim on {label}')
        if got.dtype.kind == 'f' and float(got) != round(float(got)):
            raise Finding(f'{label}: expected an integer, got {float(got)}', label)
        if int(got) != want:
            raise Finding(f'{label}: expected padding dimension {want}, got {int(got)}', label)
    return Passed(f'right on {len(cases)} encodings whose quiet subspace is hidden by a random '
                  f'rotation and offset (padding from 0 to all dims; the quiet part fits in a '
                  f'ball of radius eps / 2 and every other direction spreads over more than '
                  f'20 eps, so the Euclidean and per-coordinate readings agree)')


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
           'train'),
]
