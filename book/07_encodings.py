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
# # 7. The Original Encodings
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/book/07_encodings.ipynb)
#
# Every program so far paid for its position table: `pos_emb` has `block_size × d_model` entries
# and we set each of them by hand. The 2017 transformer paid nothing: its positions are fixed sines
# and cosines. This chapter takes that sinusoidal encoding apart (we call it the *OG* encoding, as
# the preprint does), rebuilds it as a special case of *rotation encodings*, and measures it with
# two yardsticks, how sharply a position can single itself out and how much room it leaves free.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp

# %% [markdown]
# ## The problem
#
# Position $p$ of the sinusoidal encoding in $d$ dimensions has, for each $i < d/2$,
#
# $$\mathrm{PE}_{p,\,2i} = \sin\!\big(p / 10000^{2i/d}\big), \qquad
#   \mathrm{PE}_{p,\,2i+1} = \cos\!\big(p / 10000^{2i/d}\big).$$
#
# `taotp.og_embedding(block_size, d)` returns that table. Here it is for 64 positions in 128
# dimensions, with the number of learned parameters it would replace.

# %%
E_og = taotp.og_embedding(64, 128)
print('shape', E_og.shape)
print('position 0, first 6 dims:', E_og[0, :6])
print('position 1, first 6 dims:', E_og[1, :6].round(4))
print(f'a learned pos_emb of this size costs {E_og.size:,} parameters; this one costs 0')

# %%
fig = taotp.plot.figure((5.5, 2.6))
taotp.encodings.draw_heatmaps(fig, [E_og], ['sinusoidal (OG) encoding, 64 positions x 128 dims'])
fig

# %% [markdown]
# Low dimensions (left) turn fast with the position; high dimensions (right) hardly move at all.
# Why did the book not use this free encoding for its programs? Before reading on, you may want to
# think about it yourself.
#
# ```{admonition} Spoiler alert
# :class: warning
# The rest of the page answers Puzzles 7.1-7.5. Try them first in the
# [exercises notebook](https://github.com/taotp/taotp-book/blob/main/exercises/07_encodings.ipynb).
# ```

# %% [markdown]
# ## The idea: positions as turning dials
#
# Pick $n$ angles $\theta_1, \dots, \theta_n$. The **complex rotation encoding** gives position
# $a$ the vector in $\mathbb{C}^n$ whose $k$-th coordinate is the unit complex number
# $e^{i\theta_k a}$: each coordinate
# is a dial that turns by its own angle per step. Writing every complex number as two reals gives a
# real encoding in $2n$ dimensions. The usual order puts the real part first,
# $(\cos a\theta_1, \sin a\theta_1, \dots)$ (`rotation_encoding`); the *reversed* order puts the
# imaginary part first, $(\sin a\theta_1, \cos a\theta_1, \dots)$
# (`reversed_rotation_encoding`). These functions, and everything else of this chapter, live in
# `taotp.encodings`.
#
# The sinusoidal encoding is exactly the reversed one, with angles $\theta_k = 10000^{-2k/d}$
# (Theorem 7.3). The preprint states it for $2d$ real dimensions and $d$ angles; `og_angles(d)`
# takes the number of real dimensions, so it returns $d/2$ angles. Same object, different $d$.

# %%
thetas = taotp.encodings.og_angles(128)
R = taotp.encodings.reversed_rotation_encoding(64, thetas)
print(f'{len(thetas)} angles, from {thetas[0]:.3f} down to {thetas[-1]:.2e} radians per step')
print(f'max |reversed rotation encoding - sinusoidal| = {np.abs(R - E_og).max():.1e}')
assert np.abs(R - E_og).max() < 1e-12

# %% [markdown]
# (The preprint's version of `rotation_encoding` views the complex array as `np.float_`, a name
# NumPy 2 removed; the package views it as `np.float64`, which is the same memory layout: real
# part, then imaginary part.)

# %% [markdown]
# ## Building it
#
# ### Step 1: shifting is a rotation
#
# Moving from position $a$ to $a + \delta$ multiplies coordinate $k$ by $e^{i\delta\theta_k}$, a
# diagonal complex matrix (Theorem 7.2). In the real view each dial's pair of coordinates turns by
# the angle $\delta\theta_k$, so the shift matrix is block diagonal with $2\times 2$ rotations.
# `shift_by_delta(delta, thetas, reversed=...)` builds it for any integer $\delta$ (the preprint
# prints only the caption of its version, Figure 7.4); with the sinusoidal angles and the
# reversed layout it shifts the sinusoidal encoding. As everywhere in this book, vectors are
# rows: `E[a] @ T == E[a + delta]`.

# %%
T = taotp.encodings.shift_by_delta(5, thetas, reversed=True)
print('top-left 4 x 4 corner of the shift-by-5 matrix:')
print(T[:4, :4].round(4))
E = taotp.og_embedding(300, 128)
worst = 0.0
for delta in range(-295, 300, 5):
    rows = np.arange(max(0, -delta), min(300, 300 - delta))
    T = taotp.encodings.shift_by_delta(delta, thetas, reversed=True)
    worst = max(worst, np.abs(E[rows] @ T - E[rows + delta]).max())
print(f'shifts -295, -290, ..., 295 on 300 positions: max error {worst:.1e}')

# %% [markdown]
# That is the linear shiftability of {doc}`03_lookup_table`: a query can look $\delta$ places back
# by multiplying its own position vector by a fixed matrix.
#
# So why not use it? Three reasons. It needs at least 4 dimensions (an even number, and 2
# dimensions collapse under layer norm, {doc}`02_hello_world`). Some programs, Hello World among
# them, are easier with a hand-made table. And, most importantly, it is not a fixed point of layer
# norm: every row has squared norm $d/2$ (Theorem 7.1) but its mean is not zero, so a PreLN layer
# sees a distorted copy, and that copy is no longer linearly shiftable (Puzzle 7.5). The 2017 model
# was PostLN, so its attention saw the raw, shiftable vectors.

# %%
sq = (E_og ** 2).sum(axis=1)
print(f'squared norms: min {sq.min():.6f}, max {sq.max():.6f} (d/2 = {128 // 2})')
after = taotp.layer_norm(E_og)
print(f'row means range from {E_og.mean(axis=1).min():.3f} to {E_og.mean(axis=1).max():.3f}')
print(f'layer norm moves the rows by up to {np.abs(after - E_og).max():.2f}')

# %% [markdown]
# ### Step 2: the angles
#
# Only the angles distinguish one rotation encoding from another. The sinusoidal ones fall
# geometrically from 1 radian per step to almost nothing (left, for $d = 1024$, that is 512
# angles); on the right, $e^{i\theta_k}$ for the first ten of them, bunched together near one
# radian.

# %%
fig = taotp.plot.figure((7.0, 2.8))
taotp.encodings.draw_angles(fig, d=1024, shown=10)
fig

# %% [markdown]
# Most of the angles are tiny: those dials barely move over a few hundred positions. An
# alternative is to draw the angles uniformly from $[0, 2\pi)$, a **random rotation encoding**
# (`random_rotation_embedding(q, d, rng)`; Definition 7.5). It is still a rotation encoding, so it
# shifts exactly as well. Side by side, at 64 positions and 128 dimensions:

# %%
rng = np.random.default_rng(7)
E_rand = taotp.encodings.random_rotation_embedding(64, 128, rng)
fig = taotp.plot.figure((7.5, 2.8))
taotp.encodings.draw_heatmaps(fig, [E_og, E_rand], ['sinusoidal (OG)', 'random rotation (seed 7)'])
fig

# %% [markdown]
# ### Step 3: distinguishability
#
# If a query equals the position vector of $i$ and the keys are all position vectors, attention
# without any hardening puts weight $\mathrm{softmax}(FF^\top)_{ii}$ on the right key, where $F$ is
# the table of rows. The **distinguishability** of an encoding is the worst case over positions,
# $D = \min_i \mathrm{softmax}(FF^\top)_{ii}$ (Definition 7.6; no $1/\sqrt{d}$ scaling). A value
# read through such a head is a mix, $D$ of the right value plus $1 - D$ of the others. Hardening
# (multiplying the query by a large factor) sharpens it, at the price of large weights.

# %%
for q, d, book in ((64, 128, 'about 0.77'), (256, 256, '0.94')):
    value = taotp.distinguishability(taotp.og_embedding(q, d))
    print(f'sinusoidal, {q} positions, {d} dims: D = {value:.3f}   (book: {book})')
for q, d in ((64, 128), (256, 256)):
    values = [taotp.distinguishability(
        taotp.encodings.random_rotation_embedding(q, d, np.random.default_rng(s))) for s in range(10)]
    print(f'random rotation, {q} positions, {d} dims: 1 - D is at most {1 - min(values):.0e} '
          f'over 10 seeds')

# %% [markdown]
# How many dimensions does each need? The book's Figure 7.9 plots $D$ against the dimension for
# 256 positions and says the random encoding is above 0.99 from about 10 dimensions on. We measure
# the random curve over 20 seeds per dimension (median and the 10-90 % band).

# %%
curves = taotp.encodings.distinguishability_curves(256, dims_og=np.arange(2, 257, 2),
                                                   dims_random=np.arange(2, 49, 2), seeds=20)
fig = taotp.plot.figure((6.5, 3.0))
taotp.encodings.draw_distinguishability(fig, curves, claim_dims=10)
fig

# %%
dims_og, dims_rand, d_og, d_rand, bound = (curves[k] for k in ('dims_og', 'dims_random', 'og',
                                                               'random', 'bound'))
print(' dims   random median   random 10-90 %     sinusoidal   bound')
for d in (10, 16, 20, 24, 28, 32, 40, 48):
    r = d_rand[dims_rand == d][0]
    print(f'{d:5d}   {np.median(r):13.3f}   {np.percentile(r, 10):.3f} - {np.percentile(r, 90):.3f}'
          f'    {d_og[dims_og == d][0]:10.3f}   {bound[dims_og == d][0]:.3f}')
first = dims_rand[np.argmax(np.median(d_rand, axis=1) > 0.99)]
print(f'random rotation: median first above 0.99 at d = {first}   (book: about 10)')
print(f'sinusoidal at d = 256: {d_og[-1]:.3f}   (book: 0.94)')
print(f'smallest even d whose bound even allows 0.99: {dims_og[np.argmax(bound > 0.99)]}')

# %% [markdown]
# The sinusoidal numbers reproduce (0.947 at 256 dimensions). The random one does not: at 10
# dimensions the median is 0.15, and the median passes 0.99 only at 28 dimensions. This is not bad
# luck with seeds. For **any** table of $q$ rows that all have squared norm $s$ (a rotation encoding
# in $d$ real dims has $s = d/2$), write $D_i = 1 / \big(1 + \sum_{j\ne i} e^{F_{ij} - s}\big)$ with
# $F = EE^\top$. Jensen's inequality bounds the sum below by $(q-1)\,e^{\bar F_i - s}$, where
# $\bar F_i$ is the mean of row $i$ off the diagonal, and because
# $\sum_{i,j} F_{ij} = \lVert\sum_i E_i\rVert^2 \ge 0$ some row has $\bar F_i \ge -s/(q-1)$. So
#
# $$D \;\le\; \frac{1}{1 + (q-1)\,e^{-s\,q/(q-1)}}$$
#
# (`distinguishability_bound`, the dotted line). For $q = 256$ and $d = 10$ it is 0.37, and it
# first admits 0.99 at $d = 22$. The book's Figure 7.9 is not in our copy of the text, so we cannot
# tell whether its axis counted something else; what we can say is that the sentence, read with
# $d$ as real dimensions, cannot hold, while the measured curve and the book's sinusoidal number
# agree. The rough reason the random curve sits near the bound: the off-diagonal entries of $F$
# are sums of $d/2$ cosines of unrelated angles, roughly centred on zero, so each position leaks
# about $e^{-d/2}$ of its weight to every other one.

# %% [markdown]
# Low distinguishability is not the end of the story: hardening multiplies the scores by a
# factor $N$ (`harden` in the code, as in every chapter), which is the same as scaling the
# encoding by $\sqrt N$. The book's example: only 2
# sinusoidal dims (a single dial turning 1 radian per step), 256 positions, no layer norm, and
# $N = 10^6$ already gives practically hard attention. The closest any other position comes is
# 44 steps away (7 turns of the dial are 43.98 radians), where the score drops by $N(1 - \cos 0.018)$.

# %%
E2 = taotp.og_embedding(256, 2)
for harden in (1, 1e2, 1e4, 1e6):
    print(f'harden = {harden:>9,.0f}: D = {taotp.distinguishability(np.sqrt(harden) * E2):.6f}')
gaps = 1 - np.cos(np.arange(1, 256))
print(f'nearest look-alike: {1 + np.argmin(gaps)} steps away, score gap harden x {gaps.min():.2e}')

# %% [markdown]
# ### Step 4: free space
#
# The right half of the sinusoidal heatmap hardly changes with the position, so a program could
# use those coordinates for its own data without position noise. Definition 7.7 calls an encoding
# padded in dimension $k$ with noise $\varepsilon$ if some $k$-dimensional subspace sees every row
# within $\varepsilon$ of one point; *standard* padding asks the subspace to be spanned by
# coordinate axes. Lemma 7.2 counts the coordinates whose range over all positions is at most
# $2\varepsilon$; that is the per-coordinate ($\ell_\infty$) reading of "within $\varepsilon$",
# and `padding_dimension(encoding, epsilon)` follows the lemma. (With the Euclidean ball the
# definition writes, $k$ such coordinates only guarantee a radius of $\varepsilon\sqrt{k}$.)

# %%
eps = 1e-3
print(f'sinusoidal, 64 positions x 128 dims: {taotp.padding_dimension(E_og, eps)}   (book: 16)')
rand_pad = [taotp.padding_dimension(taotp.encodings.random_rotation_embedding(
    64, 128, np.random.default_rng(s)), eps) for s in range(20)]
print(f'random rotation, 64 x 128, 20 seeds: {sorted(set(rand_pad))}   (book: 0)')
print('sinusoidal, 256 positions x 128 dims:',
      taotp.padding_dimension(taotp.og_embedding(256, 128), eps))
spread = E_og.max(axis=0) - E_og.min(axis=0)
print('the padded columns:')
print(np.flatnonzero(spread <= 2 * eps).tolist())

# %% [markdown]
# So each design wins one contest: random angles single out positions far better, while the
# sinusoidal angles leave 16 of 128 coordinates (for 64 positions) as quiet space. The padded
# columns are the cosine slots of the slowest dials: a cosine starts flat, a sine does not.

# %% [markdown]
# ### Step 5: encodings that do not shift
#
# Token embeddings need no shifting, so other families are worth a look (Section 7.3): i.i.d.
# normal entries, i.i.d. random signs, and the $\pm 1$ codewords of the Hamming code with $r = 4$
# parity bits (15 coordinates, 2,048 codewords, any two differing in at least 3 places). The
# Hamming code is lopsided: its early codewords carry more $-1$s than $+1$s. The book also asks
# for an *almost balanced* version, each codeword with as many $+1$s as $-1$s give or take one,
# and shows no code; `balanced_hamming_embedding(r)` keeps the codewords of weight 7 or 8 (870 of
# them), which keeps the minimum distance of 3.

# %%
rng = np.random.default_rng(3)
panels = {
    'random normal': taotp.encodings.random_normal_encoding(64, 15, rng),
    'random sign': taotp.encodings.random_sign_encoding(64, 15, rng),
    'Hamming(15, 4)': taotp.hamming_embedding(4)[:64],
    'almost balanced Hamming': taotp.encodings.balanced_hamming_embedding(4)[:64],
}
print(f'{"encoding (64 x 15)":<25} {"mean":>7} {"min distance":>13} {"D":>7}')
for name, enc in panels.items():
    gram = enc @ enc.T
    sq_dist = np.add.outer(np.diag(gram), np.diag(gram)) - 2 * gram
    np.fill_diagonal(sq_dist, np.inf)
    closest = (sq_dist.min() / 4) if name != 'random normal' else np.sqrt(sq_dist.min())
    print(f'{name:<25} {enc.mean():7.3f} {closest:13.2f} {taotp.distinguishability(enc):7.3f}')
fig = taotp.plot.figure((10.0, 2.6))
taotp.encodings.draw_heatmaps(fig, list(panels.values()), list(panels), ylabel='item')
fig

# %% [markdown]
# For the sign and Hamming rows, "min distance" counts differing coordinates; for the normal rows
# it is the smallest Euclidean distance. Nothing keeps two random sign rows apart (here the
# closest pair differs in 2 places, and a repeated row would cap $D$ at 1/2); the Hamming rows
# never come closer than 3.

# %% [markdown]
# ## Explore
#
# Pick an encoding, the number of positions and the number of dimensions: it is drawn beside the
# sinusoidal encoding of the same size, each titled with its distinguishability and standard
# padding dimension ($\varepsilon = 10^{-3}$).

# %% tags=["nbval-ignore-output", "remove-output"]
explorer = taotp.widgets.Explorer(
    taotp.encodings.draw_explorer, size=(6.5, 2.6),
    encoding=taotp.widgets.choice(list(taotp.encodings.EXPLORER_ENCODINGS), 'random rotation'),
    positions=taotp.widgets.slider(8, 256, 8, value=64),
    dims=taotp.widgets.slider(4, 256, 4, value=32))
explorer.widget()

# %% [markdown]
# Without a kernel (the static book), the same figure as a player: the sinusoidal and random
# rotation encodings of 64 positions as the dimension grows.

# %% tags=["nbval-ignore-output"]
explorer.player('dims', values=[8, 16, 32, 128])

# %% [markdown]
# ## Does it work?
#
# The claims of the chapter, checked beyond the sizes shown: the sinusoidal encoding equals the
# reversed rotation encoding for many sizes, the shift matrices are exact for random angles in
# both layouts, and the chapter's numbers.

# %%
rng = np.random.default_rng(11)
for q, d in ((64, 128), (256, 256), (1000, 1024), (17, 4), (300, 2)):
    assert np.abs(taotp.encodings.reversed_rotation_encoding(q, taotp.encodings.og_angles(d))
                  - taotp.og_embedding(q, d)).max() < 1e-12
checked = 0
for reverse in (False, True):
    build = taotp.encodings.reversed_rotation_encoding if reverse else taotp.rotation_encoding
    for n in (1, 5, 64):
        th = rng.uniform(0, 2 * np.pi, n)
        enc = build(200, th)
        for delta in rng.integers(-199, 200, size=20):
            rows = np.arange(max(0, -delta), min(200, 200 - delta))
            assert np.abs(enc[rows] @ taotp.encodings.shift_by_delta(int(delta), th, reversed=reverse)
                          - enc[rows + delta]).max() < 1e-12
            checked += 1
numbers = {
    'D sinusoidal 64 x 128 (book ~0.77)': taotp.distinguishability(taotp.og_embedding(64, 128)),
    'D sinusoidal 256 x 256 (book 0.94)': taotp.distinguishability(taotp.og_embedding(256, 256)),
    'padding sinusoidal 64 x 128 (book 16)': taotp.padding_dimension(taotp.og_embedding(64, 128)),
    'padding random 64 x 128 (book 0)': taotp.padding_dimension(E_rand),
}
for name, value in numbers.items():
    print(f'{name:<40} {value:.3f}' if isinstance(value, float) else f'{name:<40} {value}')
print(f'{checked} random shift matrices exact to 1e-12')
assert round(numbers['D sinusoidal 64 x 128 (book ~0.77)'], 2) == 0.77
assert abs(numbers['D sinusoidal 256 x 256 (book 0.94)'] - 0.94) < 0.01
assert numbers['padding sinusoidal 64 x 128 (book 16)'] == 16
assert numbers['padding random 64 x 128 (book 0)'] == 0

# %% [markdown]
# ## How big is it?
#
# A fixed encoding has no parameters; a learned (or hand-set) table has `block_size × d_model`.
# Some sizes from this chapter:

# %%
print(f'{"block_size":>10} {"d_model":>8} {"learned pos_emb":>16} {"sinusoidal":>11}')
for q, d in ((64, 128), (256, 256), (256, 1024)):
    print(f'{q:10d} {d:8d} {q * d:16,d} {0:11d}')
collapsed = np.unique(taotp.layer_norm(taotp.og_embedding(64, 2)).round(4), axis=0)
print(f'd = 2: after layer norm the 64 positions become {len(collapsed)} distinct vectors,\n'
      f'so the smallest usable d is 4 (book: 4)')

# %% [markdown]
# ## Limits
#
# The random-rotation curve above uses 20 seeds per dimension. Set `FULL = True` for 200 seeds at
# the dimensions around the 0.99 crossing (about a minute).

# %%
FULL = False
seeds = 200 if FULL else 30
for d in (26, 28, 30):
    values = [taotp.distinguishability(
        taotp.encodings.random_rotation_embedding(256, d, np.random.default_rng(s))) for s in range(seeds)]
    print(f'd = {d}: median {np.median(values):.4f}, share of seeds above 0.99: '
          f'{np.mean(np.array(values) > 0.99):.2f} ({seeds} seeds)')

# %% [markdown]
# ## Summary
#
# - The sinusoidal encoding is the reversed real view of the rotation encoding with angles
#   $10000^{-2k/d}$: equal to within $10^{-14}$ here, and every shift is an exact block-diagonal
#   rotation (`taotp.encodings.shift_by_delta`).
# - It costs no parameters, but it is not fixed by layer norm, so a PreLN model cannot use its
#   shiftability directly.
# - Distinguishability (worst self-attention weight without hardening), 256 positions: sinusoidal
#   0.947 at 256 dims (book 0.94); random angles reach a median of 0.99 at 28 dims, not "about 10"
#   as the book says, and no encoding can do it below 22 dims.
# - Hardening makes up for it: even 2 sinusoidal dims give $D$ of practically 1 for 256 positions
#   once the scores are multiplied by $10^6$, as the book says.
# - Free space: 16 quiet coordinates out of 128 for 64 positions with the sinusoidal angles
#   (book 16), none with random angles (book 0).
# - Random normal, random sign and Hamming encodings do not shift; the Hamming code guarantees a
#   distance of 3 between any two rows, and its almost balanced subset keeps that guarantee.
#
# ## Puzzles
#
# In the [exercises notebook](https://github.com/taotp/taotp-book/blob/main/exercises/07_encodings.ipynb):
#
# - **7.1** Why these angles? (open-ended)
# - **7.2** Complex shiftability implies real shiftability (proof).
# - **7.3** Write the shift matrix of the sinusoidal encoding (checked).
# - **7.4** Prove Theorem 7.3 (proof).
# - **7.5** After layer norm the sinusoidal encoding is not shiftable (proof).
# - **7.6** The sinusoidal encoding under RMSNorm (reflection).
# - **7.7** Attend evenly to the last k positions with one bilinear form (checked).
# - **7.8** Distinguishability with evenly spaced angles (checked).
# - **7.9** Which heatmap is which? (checked)
# - **7.10** The general, not axis-aligned, padding dimension (checked).
# - **7.11** Train with sinusoidal vs random rotation encodings (training).
#
# ## References
#
# - [TAOTP] Chapter 7, The OG Encodings (Definitions 7.1-7.10, Theorems 7.1-7.3, Lemma 7.2,
#   Figures 7.1-7.14).
# - Vaswani et al., *Attention Is All You Need*, 2017 (the sinusoidal encoding; PostLN).
# - Zhang and Sennrich, *Root Mean Square Layer Normalization*, 2019 (Puzzle 7.6).
# - See {doc}`references` for the full list.
