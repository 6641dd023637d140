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
# # Puzzles, Chapter 7: The Original Encodings
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/07_encodings.ipynb)
#
# Eleven puzzles about rotation encodings and the sinusoidal encoding of the 2017 transformer.
# Six have a checker: fill in the starter cell and run `check(...)`, which prints `PASS` or
# `NOT YET` with the first input that went wrong. The others are questions to think through; the
# [solutions notebook](https://github.com/taotp/taotp-book/blob/main/solutions/07_encodings.ipynb)
# discusses them. Conventions as in the chapter: encodings are arrays of shape (positions, dims),
# vectors are rows, so a shift matrix `T` acts as `x @ T`.
#
# Your answer runs in a separate process, on test cases that are partly drawn afresh on every
# check. A `NOT YET` about a drawn case names the input, what your code gave and a call that
# rebuilds the case, such as `ch07.padding_cases(1234)[5]` (import `taotp.exercises.ch07`);
# it never prints the expected answer. If your code raises, the message shows the line;
# `check(..., verbose=True)` adds the whole traceback.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp.exercises import check, progress


# %% [markdown]
# ## Puzzle 7.1 · Why these angles? (open-ended)
#
# Look at the sinusoidal encoding again: sines and cosines, angles falling geometrically from 1 to
# $10^{-4}$ radians per position. What might its authors have wanted from it? Think about the range
# of wavelengths, about what a model can compute from two positions, and about sequences longer
# than those seen in training.
#
# (no checker)

# %% [markdown]
# ## Puzzle 7.2 · Complex shiftable implies real shiftable (proof)
#
# Prove Lemma 7.1: if a complex encoding $g: \mathbb{Z}_q \to \mathbb{C}^n$ is linearly shiftable
# (for every $\delta$ there is a complex matrix $T_\delta$ with $g(j)\,T_\delta = g(j+\delta)$
# whenever both positions exist), then so is its real view in $\mathbb{R}^{2n}$.
#
# (no checker)

# %% [markdown]
# ## Puzzle 7.3 · The shift matrix of the sinusoidal encoding (budget: one (d, d) matrix)
#
# Write `shift_matrix(delta, d)` returning a real (d, d) NumPy array `T` such that
# `taotp.og_embedding(q, d)[j] @ T` equals row `j + delta` (to 1e-9) for every `j` with
# `0 <= j + delta < q`, for any table length `q`. It must work for negative `delta` and for
# every even `d`. The checker tries 40 fixed pairs (delta, d), with d = 2 and sizes that are not
# powers of two, tables of up to 1000 positions and shifts of several hundred, then 14 pairs
# drawn afresh on every check (d up to 512), 4 of them on tables of 1001 to 4000 positions
# (shifts of 1000 and more included); every pair is then also tried on 1000 rows drawn from
# tables of up to 100,000 positions, and two more drawn shifts of 4,001 to 90,000 (one of each
# sign, d up to 512) are tried on such rows only. Build `T` yourself from the formula of the
# encoding: `taotp.encodings.shift_by_delta` is switched off while your function is checked.

# %%
def shift_matrix(delta, d):
    """(d, d) matrix T with og_embedding(q, d)[j] @ T == og_embedding(q, d)[j + delta]."""
    return None  # your code here


check('7.3', shift_matrix)


# %% [markdown]
# ## Puzzle 7.4 · The sinusoidal encoding is a reversed rotation encoding (proof)
#
# Prove Theorem 7.3: `og_embedding(q, d)` equals `reversed_rotation_encoding(q, og_angles(d))`
# (the chapter only checks it numerically).
#
# (no checker)

# %% [markdown]
# ## Puzzle 7.5 · Layer norm breaks shiftability (proof)
#
# Show that once layer norm is applied row by row, the sinusoidal encoding is no longer linearly
# shiftable: for some $\delta$ no matrix maps every normalised row $j$ to normalised row
# $j + \delta$. (Hint: a numerical argument is fine if it is exact enough, e.g. a least-squares
# residual that cannot be rounding.)
#
# (no checker)

# %% [markdown]
# ## Puzzle 7.6 · RMSNorm instead of layer norm
#
# What does RMSNorm (divide by the root mean square, no centring) do to the rows of a rotation
# encoding? Could a PreLN transformer with RMSNorm use the sinusoidal encoding to attend to
# relative positions? What does that require of the token embeddings added to it?
#
# (no checker)

# %% [markdown]
# ## Puzzle 7.7 · Attend evenly to the last k positions (budget: one (d, d) matrix)
#
# The keys are the rotation encodings `E = taotp.rotation_encoding(q, thetas)` of positions
# `0..q-1` (real part first), and query `i` scores key `j <= i` with `E[i] @ W @ E[j]` (no other
# factor), then takes the softmax over `j <= i`. Write `window_matrix(k, q, thetas)` returning
# `W`, a (2n, 2n) NumPy array for n = `len(thetas)`, so that every query `i >= k - 1` puts
# weight within `1e-3` of `1/k` on each of the keys `i-k+1, ..., i`, and less than `1e-3` on
# every earlier key. The checker tries 14 cases, `k` from 1 up to `q` (`q` up to 40), with
# random, sorted, evenly spaced and sinusoidal angles, always at least as many angles as
# positions (`len(thetas) >= q`); the random angles and sizes are drawn afresh on every check.
# Adding up the matrices
# `taotp.encodings.shift_by_delta(-s, thetas)` for `s < k` does not do it: why?
#
# `taotp.encodings.window_attention(W, q, thetas)` returns the weights, for plotting.

# %%
def window_matrix(k, q, thetas):
    """(2n, 2n) matrix W, n = len(thetas): query i spreads its attention over keys i-k+1..i."""
    return None  # your code here


check('7.7', window_matrix)

# %% [markdown]
# ## Puzzle 7.8 · Evenly spaced angles
#
# `taotp.encodings.uniform_rotation_embedding(q, d)` uses the $d/2$ angles $2\pi k/(d/2)$. What is its
# distinguishability (Definition 7.6) for $q = 256$ positions and $d = 256$ dimensions? Answer
# with a number, or better, with a function `(q, d) -> number` that works for any size, within
# 0.1 % of the true value (relative). The function is checked at $q = d = 256$ and at 35 sizes
# drawn afresh on every check: small `d` (where far positions still matter), $q = 1$, $q$ up to
# 400, 24 from 401 to $10^9$ (three in each of eight bands of equal ratio, so every scale is
# tried, one of each three with $d$ up to 2048), and $q$ beyond $10^9$, far more rows than any
# table could hold.

# %%
answer_7_8 = None  # a number, or a function of (q, d)
check('7.8', answer_7_8)

# %% [markdown]
# ## Puzzle 7.9 · Which heatmap is which?
#
# Below are four rotation encodings of 64 positions in 128 dims: the sinusoidal one, a random
# rotation encoding, a random rotation encoding whose angles were sorted, and the evenly spaced
# one, in some order. Label panels A-D (`'og'`, `'random'`, `'sorted'`, `'uniform'`; free text
# is fine if it names exactly one of them) and explain the patterns you see. The check says only
# whether all four labels are right.

# %%
from taotp.exercises.ch07 import puzzle_7_9_panels
fig = taotp.plot.figure((8.5, 2.4))
taotp.encodings.draw_heatmaps(fig, puzzle_7_9_panels(), ['A', 'B', 'C', 'D'])
fig

# %%
answer_7_9 = None  # e.g. ['og', 'random', 'sorted', 'uniform'] for panels A, B, C, D
check('7.9', answer_7_9)


# %% [markdown]
# ## Puzzle 7.10 · The padding dimension in any direction
#
# `taotp.padding_dimension` counts quiet *coordinates* (standard padding). Write
# `padding_dim(encoding, epsilon)` returning an integer for the general definition: the
# largest $k$ such that some $k$-dimensional subspace, not necessarily spanned by axes,
# sees every row within $\varepsilon$ of one point. The checker draws 32 encodings
# afresh on every check (up to 1000 rows and 24 dims; four have fewer rows than dims, down
# to a single row), hides their quiet subspace with a random rotation (and shows some of
# them again shuffled, moved and rescaled), and keeps a gap around the threshold so that
# the Euclidean and per-coordinate readings of "within $\varepsilon$" give the same answer:
# the quiet part fits in a ball of radius $\varepsilon/2$, and one more dimension would not
# fit in a box of half-width $\varepsilon$ (some loud directions are only a few
# $\varepsilon$ wide, one is quiet but for a single row 3 to 6 $\varepsilon$ out, and two
# encodings of one dimension are a little under and over $2\varepsilon$ wide).

# %%
def padding_dim(encoding, epsilon):
    """Largest k: some k-dim subspace sees all rows within epsilon of one point."""
    return None  # your code here


check('7.10', padding_dim)

# %% [markdown]
# ## Puzzle 7.11 · Train with both encodings (budget: two PostLN models of the same shape)
#
# Train two small PostLN transformers (`post_ln=True`) that differ only in their position table,
# kept fixed while training: the sinusoidal encoding `taotp.og_embedding(64, d)` and a random
# rotation encoding (`taotp.encodings.random_rotation_embedding`). Which one is better, and why?
# The random table must be another encoding, not the sinusoidal one in disguise: at most half
# of its angles may lie within 0.05 rad of a sinusoidal angle (`og_angles(d)`, one each, up to
# sign, a half turn and order: theta, -theta and theta + pi count as one angle), which random
# angles almost always meet.
#
# The task (`training.offset_batch`): rows of 64 tokens from a vocabulary of 16; at every
# position $i \ge 5$ the target is the token at $i - 5$. Train on rows of 32 tokens only: the
# check measures held-out rows of 64, so positions 32-63 are ones training never showed.
# Answer `{'og': params, 'rotation': params, 'better': 'og' | 'rotation' | 'tie'}`. The check
# runs both programs (PostLN) on 200 held-out rows that are the same for everyone and on 200
# drawn afresh, wants each model at 90 % or more on positions 5-31 (trained), and compares
# your verdict with their accuracy over positions 5-63 (closer than 2 points: a tie). It
# judges the two programs, not how you got them: the weights the book ships pass too; the
# point of the puzzle is to train both and see.
#
# The harness `training.train_offset` trains with PyTorch, an optional extra
# (`pip install "taotp[train]"`; Colab has it). Without it, `taotp.encodings.train_offset_head`
# trains a single positional score in NumPy: a toy version of the same question.

# %%
from taotp.exercises import training
TRAIN = False   # True: train both models (needs the training extra; about a minute)
answer_7_11 = None
if TRAIN:
    og, _ = training.train_offset('og', delta=5, d_model=16, steps=1000, length=32)
    rotation, _ = training.train_offset('rotation', delta=5, d_model=16, steps=1000, length=32)
    print('sinusoidal:', training.offset_accuracy(og))
    print('rotation:  ', training.offset_accuracy(rotation))
    answer_7_11 = {'og': og, 'rotation': rotation, 'better': None}   # your verdict here
check('7.11', answer_7_11)

# %%
E = taotp.og_embedding(64, 32)
W, losses, weight = taotp.encodings.train_offset_head(E, delta=3, steps=50)
print(f'sinusoidal, 50 steps: loss {losses[0]:.2f} -> {losses[-1]:.2f}, weight on the right key {weight:.3f}')


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 7`.

# %% tags=["nbval-ignore-output"]
progress(7)
