# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Solutions, Chapter 7: The Original Encodings
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/solutions/07_encodings.ipynb)
#
# Reference answers for the puzzles of
# [the exercises notebook](https://github.com/taotp/taotp-book/blob/main/exercises/07_encodings.ipynb):
# code that passes the checkers, and worked answers, with computed numbers, for the questions
# that have no checker.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp.exercises import check, keep_progress
keep_progress(False)   # running the reference solutions does not solve your puzzles

# %% [markdown]
# ## Puzzle 7.1 · Why these angles? (open-ended)
#
# Some plausible goals, each with a number from the encoding itself:
#
# - **A spread of scales.** The angles fall geometrically, so the wavelengths $2\pi/\theta_k$ run
#   from $2\pi$ up to almost $2\pi \cdot 10^4$ positions: fast dials tell neighbours apart, slow
#   ones give a coarse sense of where in a long text we are.
# - **Relative position by a fixed linear map.** Each sine/cosine pair is a rotating dial, so
#   moving $\delta$ steps is the same rotation for every position (the paper's stated reason).
# - **Similarity that depends only on distance.** $E_i \cdot E_j = \sum_k \cos((i-j)\theta_k)$ is a
#   function of $i - j$ alone, and it falls off as the distance grows.
# - **Bounded, parameter-free, defined for any length**, so longer inputs than the training ones at
#   least get well-formed vectors.

# %% tags=["nbval-ignore-output"]
# (the last digits printed here depend on the CPU's BLAS/LAPACK kernels; tests do not compare them)
E = taotp.og_embedding(512, 128)
theta = taotp.encodings.og_angles(128)
print(f'wavelengths from {2 * np.pi / theta[0]:.2f} to {2 * np.pi / theta[-1]:,.0f} positions')
F = E @ E.T
print('E_i . E_j for i - j = 0, 1, 2, 5, 10, 50, 200:\n ',
      [round(float(F[300, 300 - g]), 1) for g in (0, 1, 2, 5, 10, 50, 200)])
toeplitz_gap = max(np.ptp(np.diagonal(F, offset=g)) for g in range(0, 200))
print(f'largest spread along any diagonal of E E^T: {toeplitz_gap:.1e} '
      f'(a function of i - j only)')

# %% [markdown]
# ## Puzzle 7.2 · Complex shiftable implies real shiftable (proof)
#
# Write the complex matrix as $T = A + iB$ with real $A, B$ and a row $z = x + iy$. Then
# $zT = (xA - yB) + i(xB + yA)$, which is real-linear in $(x, y)$. In the interleaved real view
# $(x_1, y_1, x_2, y_2, \dots)$ this is multiplication by the real $2n \times 2n$ matrix whose
# $2\times 2$ block in row $r$, column $c$ is $\begin{pmatrix} A_{rc} & B_{rc} \\ -B_{rc} & A_{rc}
# \end{pmatrix}$. Applying it to the real view of $g(j)$ gives the real view of $g(j)T_\delta =
# g(j+\delta)$, so the same $\delta$-shifts exist for the real encoding. (The reversed view only
# permutes coordinates, so it is shiftable too.) A numerical check with a random complex matrix:

# %% tags=["nbval-ignore-output"]
# (the last digits printed here depend on the CPU's BLAS/LAPACK kernels; tests do not compare them)
rng = np.random.default_rng(2)
n = 4
T_c = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
z = rng.standard_normal((5, n)) + 1j * rng.standard_normal((5, n))
T_r = np.zeros((2 * n, 2 * n))
T_r[0::2, 0::2], T_r[0::2, 1::2] = T_c.real, T_c.imag
T_r[1::2, 0::2], T_r[1::2, 1::2] = -T_c.imag, T_c.real
print('max |real view of (z T) - (real view of z) @ T_r| =',
      f'{np.abs((z @ T_c).view(np.float64) - z.view(np.float64) @ T_r).max():.1e}')


# %% [markdown]
# ## Puzzle 7.3 · The shift matrix of the sinusoidal encoding (budget: one (d, d) matrix)
#
# Column pair $(2k, 2k+1)$ holds $(\sin a\theta_k, \cos a\theta_k)$. The angle-addition formulas
# give $\sin(a+\delta)\theta = \sin a\theta\cos\delta\theta + \cos a\theta\sin\delta\theta$ and
# $\cos(a+\delta)\theta = \cos a\theta\cos\delta\theta - \sin a\theta\sin\delta\theta$, so for row
# vectors each pair is multiplied by
# $\begin{pmatrix}\cos\delta\theta & -\sin\delta\theta\\ \sin\delta\theta & \cos\delta\theta\end{pmatrix}$.

# %%
def shift_matrix(delta, d):
    angles = 1.0 / 10_000 ** (np.arange(0, d, 2) / d)
    c, s = np.cos(delta * angles), np.sin(delta * angles)
    T = np.zeros((d, d))
    for k in range(d // 2):
        T[2 * k:2 * k + 2, 2 * k:2 * k + 2] = [[c[k], -s[k]], [s[k], c[k]]]
    return T


result = check('7.3', shift_matrix)
assert result

# %% [markdown]
# ## Puzzle 7.4 · The sinusoidal encoding is a reversed rotation encoding (proof)
#
# With $\theta_k = 10000^{-2k/d}$, the argument $a / 10000^{2k/d}$ in both formulas is exactly
# $a\theta_k$. So column $2k$ is $\sin a\theta_k = \operatorname{Im} e^{ia\theta_k}$ and column
# $2k+1$ is $\cos a\theta_k = \operatorname{Re} e^{ia\theta_k}$: the complex rotation encoding
# with these angles, written imaginary part first. That is the definition of the reversed real
# view, so the two tables are equal entry by entry.

# %%
for q, d in ((64, 128), (300, 6), (1000, 512)):
    gap = np.abs(taotp.encodings.reversed_rotation_encoding(q, taotp.encodings.og_angles(d))
                 - taotp.og_embedding(q, d)).max()
    print(f'q = {q}, d = {d}: max difference {gap:.1e}')

# %% [markdown]
# ## Puzzle 7.5 · Layer norm breaks shiftability (proof)
#
# If a shift matrix $T$ existed for the normalised rows $N_j$, it would solve the linear system
# $N_j T = N_{j+1}$ for all $j$ at once. Least squares finds the best possible $T$; if even that
# one leaves a residual far above rounding error, no $T$ exists. With $d = 4$ the residual is of
# order 1: after centring, the four coordinates of a row satisfy one linear relation (they sum to
# zero), and dividing by a position-dependent standard deviation bends the circle-like orbit of
# each sine/cosine pair so that it is no longer the image of the previous row under one linear map.
# The residual shrinks as $d$ grows but stays far from zero as long as there are more positions
# than dimensions. (With fewer positions than dimensions the rows are typically independent, and
# then *any* re-ordering of them is linear, so the question is only interesting for long blocks.)

# %%
print('256 positions, shift by 1: best residual')
for d in (4, 8, 16, 64):
    N = taotp.layer_norm(taotp.og_embedding(256, d))
    T_best = np.linalg.lstsq(N[:-1], N[1:], rcond=None)[0]
    raw = taotp.og_embedding(256, d)
    T_raw = np.linalg.lstsq(raw[:-1], raw[1:], rcond=None)[0]
    print(f'  d = {d:3d}: after layer norm '
          f'{np.abs(N[:-1] @ T_best - N[1:]).max():.3f}; '
          f'without it {np.abs(raw[:-1] @ T_raw - raw[1:]).max():.0e}')

# %% [markdown]
# ## Puzzle 7.6 · RMSNorm instead of layer norm
#
# Every row of a rotation encoding in $d$ real dims has squared norm $d/2$, so its root mean
# square is $1/\sqrt 2$ for every position. RMSNorm therefore multiplies all rows by the same
# factor ($\sqrt 2$, up to the tiny epsilon), and a scaled rotation encoding is shifted by the very
# same matrices. So yes: with RMSNorm a PreLN model can attend to relative positions through the
# sinusoidal block, **provided** the norm of the whole residual vector does not depend on the
# position. That holds, for example, if the token embeddings use their own coordinates and all
# have the same norm; then the normalisation factor is one constant for every (token, position)
# pair. Layer norm instead also subtracts the row mean, which differs from position to position.
#
# Below, the residual stream is a one-hot token block (scaled to a common norm) next to a
# 16-dim sinusoidal block. The "look one back" score $x_i\,T_{-1}\,x_j^\top$ restricted to the
# position block should depend only on $i - j$; we measure how far it is from that.

# %%
rng = np.random.default_rng(6)
q, vocab, d_pos = 64, 5, 16
tokens = rng.integers(0, vocab, q)
x = np.concatenate([3.0 * np.eye(vocab)[tokens], taotp.og_embedding(q, d_pos)], axis=1)
look_back = np.zeros((vocab + d_pos,) * 2)
look_back[vocab:, vocab:] = taotp.encodings.shift_by_delta(-1, taotp.encodings.og_angles(d_pos),
                                                          reversed=True)
print('score depends on i - j only? largest spread along a diagonal:')
for name, normed in (('raw (PostLN sees this)', x), ('RMSNorm', taotp.rms_norm(x)),
                     ('layer norm', taotp.layer_norm(x))):
    S = normed @ look_back @ normed.T
    spread = max(np.ptp(np.diagonal(S, offset=-g)) for g in range(q - 1))
    print(f'  {name:<24} {spread:.1e}')


# %% [markdown]
# ## Puzzle 7.7 · Attend evenly to the last k positions (budget: one (d, d) matrix)
#
# Take $W$ block diagonal with blocks $\begin{pmatrix} a_m & b_m \\ -b_m & a_m\end{pmatrix}$, one
# per angle. Then the score is $E_i W E_j^\top = \sum_m a_m\cos(\Delta\theta_m) -
# b_m\sin(\Delta\theta_m)$ with $\Delta = i - j$: a function of the distance only. We want it to be
# 0 for $\Delta = 0, \dots, k-1$ and $-1$ for $\Delta = k, \dots, q-1$, times a hardening factor of
# 40 (so keys outside the window get about $e^{-40}$ of the weight). That is a linear system with
# $q$ equations and $2n$ unknowns; with at least as many real dims as positions it is generically
# solvable exactly, and `lstsq` finds the solution.
#
# Why summing shift matrices fails: $E_i\,T_{-s}\,E_j^\top = E_{i-s}\cdot E_j$, so the sum gives
# key $j$ the score $\sum_{s<k} F(i - s - j)$, where $F(\Delta) = \sum_m \cos(\Delta\theta_m)$.
# Unless $F$ is a spike (zero away from 0, i.e. orthogonal rows), those sums differ across the
# window, and after hardening the softmax piles onto the largest of them instead of spreading.

# %%
def window_matrix(k, q, thetas, harden=40.0):
    n = len(thetas)
    lag = np.arange(q)[:, None]
    basis = np.concatenate([np.cos(lag * thetas), -np.sin(lag * thetas)], axis=1)
    target = np.where(np.arange(q) < k, 0.0, -1.0)
    coef = np.linalg.lstsq(basis, target, rcond=None)[0]
    W = np.zeros((2 * n, 2 * n))
    for m in range(n):
        W[2 * m:2 * m + 2, 2 * m:2 * m + 2] = [[coef[m], coef[n + m]], [-coef[n + m], coef[m]]]
    return harden * W


result = check('7.7', window_matrix)
assert result

# %%
thetas = taotp.encodings.random_angles(24, np.random.default_rng(0))
summed = 40 * sum(taotp.encodings.shift_by_delta(-s, thetas) for s in range(4))
fig = taotp.plot.figure((6.0, 2.6))
for ax, W, title in zip(fig.subplots(1, 2), (window_matrix(4, 24, thetas), summed),
                        ('least-squares W, k = 4', 'sum of 4 shift matrices')):
    taotp.plot.heatmap(ax, taotp.encodings.window_attention(W, 24, thetas), title=title,
                       xlabel='key position', ylabel='query position', symmetric=False,
                       colorbar=ax is fig.axes[-1])
fig


# %% [markdown]
# ## Puzzle 7.8 · Evenly spaced angles
#
# With angles $2\pi m/n$, $m < n = d/2$, the entry $F_{ij} = \sum_m \cos(2\pi m (i-j)/n)$ is the real
# part of a sum of all $n$-th roots of unity raised to the power $i - j$: it is $n$ when $n$ divides
# $i - j$ and 0 otherwise. The encoding repeats every $n$ positions, so a position has
# $c = \lceil q/n \rceil$ copies (itself included) in the worst case, and
#
# $$D = \frac{1}{c + (q - c)\,e^{-n}}.$$
#
# For $q = d = 256$: $n = 128$, $c = 2$, so $D = 0.5$; for $d = 128$, $c = 4$ and $D = 0.25$.

# %%
def uniform_distinguishability(q, d):
    n = d // 2
    copies = -(-q // n)
    return 1 / (copies + (q - copies) * np.exp(-n))


print(f'q = 256, d = 256: {uniform_distinguishability(256, 256):.4f}; d = 128: '
      f'{uniform_distinguishability(256, 128):.4f}')
result = check('7.8', uniform_distinguishability)
assert result

# %% [markdown]
# ## Puzzle 7.9 · Which heatmap is which?
#
# - **A, sorted random angles**: the angles grow from left to right, so columns go from slow to
#   fast, fastest near the middle (angles near $\pi$ flip sign every step), and slow again on the
#   right, where an angle just below $2\pi$ behaves like a small negative one.
# - **B, sinusoidal**: fast on the left, then ever slower; the right part is almost constant
#   (the free space of the chapter).
# - **C, evenly spaced**: angles $2\pi m/64$ for 64 positions; the pattern is a discrete Fourier
#   table, symmetric about the middle column pair, and would repeat after 64 rows.
# - **D, random**: no order among the columns at all.

# %% [markdown]
# Row 1 of a rotation encoding holds each dial's turn per step, so the angles behind every
# panel can be read off the table itself: the turn of column pair $m$ is the angle of
# $z_1 / z_0$, where $z_a$ is the pair read as a complex number (its sign says in which
# direction the dial turns; we plot its size).

# %%
from taotp.exercises.ch07 import puzzle_7_9_panels
titles = ['A: sorted random', 'B: sinusoidal', 'C: evenly spaced', 'D: random']
fig = taotp.plot.figure((8.0, 2.2))
for ax, table, title in zip(fig.subplots(1, 4, sharey=True), puzzle_7_9_panels(), titles):
    z = table[:, 0::2] + 1j * table[:, 1::2]
    ax.plot(np.abs(np.angle(z[1] / z[0])), '.', ms=3)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel('column pair m')
fig.axes[0].set_ylabel('turn per step (rad)')
fig

# %%
result = check('7.9', ['sorted', 'og', 'uniform', 'random'])
assert result


# %% [markdown]
# ## Puzzle 7.10 · The padding dimension in any direction
#
# Centre the rows and take their principal directions, quietest first. For $k = 1, 2, \dots$
# project the rows onto the $k$ quietest directions, centre the box around the projections and
# check that every projected row lies within $\varepsilon$ (Euclidean) of that centre; stop at the
# first $k$ that fails. Whatever this returns is achievable (it exhibits a subspace and a point),
# so it never overstates the padding dimension. It is exact when there is a gap: if every
# direction outside the $m$ quiet ones spreads by more than $2\varepsilon$, any $(m+1)$-dimensional
# subspace contains such a direction, so no larger padding exists. Without a gap the problem is a
# search over subspaces and this greedy order can miss the optimum, which may be why the author
# marked the puzzle as hard.

# %%
def padding_dim(encoding, epsilon):
    X = np.asarray(encoding, dtype=float)
    directions = np.linalg.svd(X - X.mean(axis=0))[2][::-1].T   # quietest first
    best = 0
    for k in range(1, X.shape[1] + 1):
        Y = X @ directions[:, :k]
        centre = (Y.max(axis=0) + Y.min(axis=0)) / 2
        if np.linalg.norm(Y - centre, axis=1).max() > epsilon:
            break
        best = k
    return best


result = check('7.10', padding_dim)
assert result
E64 = taotp.og_embedding(64, 128)
print(f'sinusoidal 64 x 128, eps = 1e-3: standard {taotp.padding_dimension(E64)},\n'
      f'  general (this function, Euclidean ball) {padding_dim(E64, 1e-3)}')

# %% [markdown]
# The general number is far larger than the standard one, for a simple reason: 64 rows in 128
# dimensions span at most 63 directions once centred, so at least 65 directions see no variation
# at all, and many more see very little. Any table with fewer positions than dimensions has
# general padding dimension at least $d - q + 1$. (The two notions also differ in the other
# direction: the Euclidean ball is stricter than the per-coordinate box of Lemma 7.2.)

# %% [markdown]
# ## Puzzle 7.11 · Train with both encodings (budget: two PostLN models of the same shape)
#
# **The experiment.** Two PostLN models with one layer (2 heads, $d_{model} = 16$, MLP of 64),
# identical but for the fixed position table, learn to copy the token five places back on rows
# of 32 tokens; the check then measures them on held-out rows of 64. The harness
# `training.reference_run('7.11')` trains both in well under a minute on a CPU (it needs the
# training extra); the programs it produced are stored with the package, so this notebook
# runs without PyTorch. `training.regenerate(['7.11'])` trains them again, with the three-seed
# comparison quoted below.

# %%
import textwrap
from taotp.exercises import training
models, facts = training.stored('7.11', with_facts=True)
settings = ', '.join(f'{k}={v}' for k, v in facts['settings'].items())
print(textwrap.fill(f'settings: {settings}', 86, subsequent_indent='  '))
print(f'{facts["parameters"]:,} parameters each; both trained in {facts["seconds"]:.0f} s with '
      f'one thread')
for encoding in ('og', 'rotation'):
    f = facts[encoding]
    print(f'{encoding:>9}: positions 5-31 {f["inside"]:.1%}, positions 32-63 {f["beyond"]:.1%}')
print('positions 32-63 over three seeds:')
for seed in range(3):
    row = {r['encoding']: r['beyond'] for r in facts['sweep'] if r['seed'] == seed}
    print(f'  seed {seed}: sinusoidal {row["og"]:.1%}, random rotation {row["rotation"]:.1%}')

# %%
answer = {**models, 'better': 'rotation'}
result = check('7.11', answer)
assert result

# %% [markdown]
# **Why.** Where training reached, both are perfect: copying from five places back is a relative
# shift, and for every rotation encoding, the sinusoidal one included, a shift is a linear map
# (the shift matrices of this chapter), so one layer can learn it with either table. Beyond the
# training length the random table does better in all three seeds, though neither
# generalises well. Count the coordinate pairs whose angle completes a full turn within the 32
# training positions: only those have shown the model every value they can take.

# %%
turns = lambda thetas: int(np.sum(np.asarray(thetas) * 31 >= 2 * np.pi))
random_table = models['rotation']['pos_emb']
random_thetas = np.arctan2(random_table[1, 1::2], random_table[1, 0::2]) % (2 * np.pi)
print(f'pairs turning at least once in 32 positions: sinusoidal '
      f'{turns(taotp.encodings.og_angles(16))} of 8, this random table {turns(random_thetas)} '
      f'of 8')

# %% [markdown]
# The sinusoidal table's slow coordinates keep drifting to values never seen in training, so at
# positions 32-63 the model meets new inputs; most random angles have wrapped around within the
# training rows. Neither model is purely relative, because PostLN adds position and token before
# normalising and the learned weights can read both. The NumPy toy of the exercises notebook
# (one positional score trained on the raw encoding) points the same way over 64 positions:

# %%
print(f'{"dims":>4} {"delta":>5}   {"sinusoidal":>10}   {"random rotation":>15}   (weight on the right key after 300 steps)')
for d in (16, 32, 64):
    for delta in (1, 5):
        og = taotp.encodings.train_offset_head(taotp.og_embedding(64, d), delta, steps=300)
        rand = taotp.encodings.train_offset_head(
            taotp.encodings.random_rotation_embedding(64, d, np.random.default_rng(d)), delta,
            steps=300)
        print(f'{d:4d} {delta:5d}   {og[2]:10.3f}   {rand[2]:15.3f}')

# %% [markdown]
# The 2017 paper reports nearly identical results for its sinusoidal encoding and for learned
# position embeddings, and says it chose the sinusoids because they might let a model extrapolate
# to sequences longer than those seen in training. In this small experiment random angles
# extrapolate better than the sinusoids, and neither extrapolates well.
