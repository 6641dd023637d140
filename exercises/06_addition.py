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
# # Puzzles for Chapter 6: Decimal Addition
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/06_addition.ipynb)
#
# Each checked puzzle ends with `check("6.N", your_answer)`. It prints one line: `PASS` with what
# exactly was checked, or `NOT YET` with the first input that broke and what your answer gave.
# Unfinished answers are fine: the checkers report, they never crash. If your code raises, the line
# names the line of your code; `check(..., verbose=True)` adds the whole traceback. Reflection
# puzzles have no checker; their discussion is in `solutions/06_addition.ipynb`.
#
# Your answer runs in a separate process, and a program is read there once into plain arrays; every
# budget is measured on those. Where a task is small every input is tried (these are the *visible*
# cases: a NOT YET shows what was due and how many of them failed). Elsewhere the checker adds
# *hidden* cases, drawn afresh on every check, beside hand-made ones (carries everywhere, zeros, the
# largest numbers): a NOT YET about one names the input and your output, not the answer due.
#
# Token format for every program puzzle: digits 0-9, '+' = 10, '=' = 11; operands zero padded, most
# significant digit first (6.19 drops the padding). Useful helpers: `taotp.build_MLP`, the three
# builders of the chapter, and in `taotp.addition`: `spike`, `digit_embedding`, `addition_prompts`,
# `mlp_inputs` (what an MLP reads) and `fit_lookup_mlp` (replace an MLP by a lookup of those keys).
# Where a helper *is* the puzzle's answer (the spike and `build_MLP` in 6.2 and 6.3, the Fig. 6.2
# builder in 6.5), it is switched off while that puzzle's answer runs, and calling it is reported.

# %%
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp.exercises import check, progress


# %% [markdown]
# ## Puzzle 6.1 · Sums of two sets (proof, no checker)
#
# Show that for vectors $v_1, \dots, v_n$ and $u_1, \dots, u_m$ in $\mathbb{R}^d$ the $nm$ sums
# $v_i + u_j$ span a space of dimension at most $n + m - 1$.
#
# ## Puzzle 6.2 · A spike anywhere (budget: 3 hidden units)
#
# Write `spike(x0, a0)` returning `(M1, b1, M2, b2)` with shapes (1, 3), (3,), (3, 1), (1,) such that
# $f(x) = \mathrm{relu}(x M_1 + b_1) M_2 + b_2$ equals `a0` at `x0` and 0 whenever $|x - x_0| \ge 1$.
# The checker tries the 9 pairs `(x0, a0)` below and 40 more drawn afresh on every check, with
# $|x_0|$ and $|a_0|$ from $10^{-3}$ to $10^4$ and both signs; a NOT YET about one of those prints a
# seed, and `taotp.exercises.ch06.spike_cases(seed)` lists them. "Equals" means to within
# rounding: $10^{-12} |a_0|$ plus 4 units in the last place of what your units add up at
# $x$, $|b_2| + \sum_i |M_{2,i}| (|x M_{1,i}| + |b_{1,i}|)$ over the units active there, and
# never more than $10^{-9} |a_0| \max(1, |x_0|, |x|)$ (so a tail that grows with $x$ is seen,
# however gently it grows). It wants your own units: the
# package's `taotp.addition.spike`, `taotp.build_MLP` and `taotp.lookup.universal.interpolating_mlp`
# are switched off while your function runs.

# %%
from taotp.exercises import ch06
print('the visible (x0, a0):', *ch06.SPIKES_SHOWN[:5])
print('                     ', *ch06.SPIKES_SHOWN[5:])

def spike(x0, a0):
    return None  # your weights here

check('6.2', spike)


# %% [markdown]
# ## Puzzle 6.3 · Theorem 6.1: build_MLP (budget: at most 3|S| hidden units)
#
# Write `build_MLP(xs, ys)`: for distinct reals `xs` (n of them) and outputs `ys` of shape (n, d),
# return `(m1, b1, M2, b2)` with shapes (k,), (k,), (k, d), (d,), $k \le 3n$, such that
# $\mathrm{relu}(x\, m_1 + b_1) M_2 + b_2$ equals `ys[i]` at `xs[i]` (to a millionth of the largest
# output). The checker tries the set printed below, then 15 sets drawn afresh on every check:
# random ones of 1 to 400 points (1 to 20 outputs) whose two closest points are $10^{-6}$ apart
# but far apart in the list, evenly spaced, decreasing and large inputs, constant and zero outputs; a NOT YET names the
# set and prints the seed that rebuilds them all (`taotp.exercises.ch06.mlp_sets(seed)`). The
# chapter uses the package's `taotp.build_MLP`; here it is switched off, with
# `taotp.addition.spike` and `interpolating_mlp`.

# %%
xs_shown, ys_shown, _ = ch06.MLP_SHOWN
print('the visible set: xs =', xs_shown.tolist(), ' ys =', ys_shown.tolist())

def build_MLP(xs, ys):
    return None

check('6.3', build_MLP)

# %% [markdown]
# ## Puzzle 6.4 · A weak spike (budget: 2 hidden units)
#
# A weak spike is 1 at 0 and $\le 0$ for $|x| \ge 1$ (it may be negative far away). Give the weights
# `(M1 (1, 2), b1 (2,), M2 (2, 1), b2 (1,))` of one that uses two hidden units.

# %%
weak_spike = None

check('6.4', weak_spike)


# %% [markdown]
# ## Puzzle 6.5 · The single-digit adder in base b
#
# How many parameters (total, as `count_params` counts them) does the construction of Fig. 6.2
# need in base $b$? Answer with a function of `b` returning that number (a formula: the builder
# is switched off while it runs; build the program outside it to test your formula). The checker
# compares with the built construction for every $b$ from 2 to 100, at 101 and at 6 larger
# bases drawn afresh on every check (up to $10^4$, $10^8$, $10^{12}$, $10^{15}$ and $10^{18}$,
# and one from $2 \cdot 10^{17}$ to $10^{18}$; a float is compared to within its own
# rounding), where the construction's shapes keep growing as they do up to 100 (its digit
# embedding stops at 100; a formula holds for every base).

# %%
def count_for_base(b):
    return None

check('6.5', count_for_base)

# %% [markdown]
# ## Puzzle 6.6 · Attention that outputs (1 − k, k, 0, …)
#
# Build a one-layer program for the prompts `[i, j]` (two digits, block size 2) whose *attention*
# output at the second position is $(1 - k, k, 0, \dots, 0)$ with $k = i + j$ (the construction at
# the end of Section 6.1). The MLP may stay empty.

# %%
params_6_6 = None

check('6.6', params_6_6)

# %% [markdown]
# ## Puzzle 6.7 · Single-digit addition in 3 dimensions (budget: d_model 3)
#
# Prompts `[i, j]`, answer $(i + j) \bmod 10$, as in Fig. 6.2 but with only 3 model dimensions.
# What happens to the parameter count?

# %%
params_6_7 = None

check('6.7', params_6_7)

# %% [markdown]
# ## Puzzle 6.8 · Proper cleanup
#
# Same task as Fig. 6.2, but with proper cleanup instead of huge constants: at the answer position the
# residual stream before the final layer norm must equal the answer's `tok_emb` row, to a millionth
# of the smallest distance between two digits' embeddings.

# %%
params_6_8 = None

check('6.8', params_6_8)

# %% [markdown]
# ## Puzzle 6.9 · A rank-2 matrix (proof, no checker)
#
# Show that the $n \times n$ matrix with entries $\cos(\alpha |i - j|)$ has rank at most 2. (Hint:
# something much more general is true.)
#
# ## Puzzle 6.10 · One head per digit place, by changing pos_emb (budget: n_digits + 1 heads)
#
# For 2-digit addition mod 10 (`[a1, a2, +, b1, b2, =]` → last digit of $a + b$) use one head per
# decimal place that reads *both* operands' digits of that place, plus at most one more head. You may
# change the position embeddings (hint: what if two positions share one?). One layer, at most 3 heads.
# Besides all 10,000 answers the checker looks at the attention at '=': for each digit place one head
# must put at least 45 % of its weight on each of the two digits of that place, and prompts with
# different sums $a + b$ must reach the MLP's hidden units (what its `M1` reads) differently: every
# place is read, not only the units that the answer needs. That head must also be the one that
# brings its place to the MLP: give a prompt the head's output at '=' from a prompt that differs
# only in that place's digits, and the MLP's hidden units must get the other prompt's input (to
# 0.1 % of the distance between the two), so no other head or position may carry those digits.

# %%
params_6_10 = None

check('6.10', params_6_10)

# %% [markdown]
# ## Puzzle 6.11 · The same, keeping the standard positions (budget: n_digits + 1 heads)
#
# As 6.10 (the same attention test too), but `pos_emb` must keep three columns equal to
# `taotp.pos_enc_3d_array(6)`. How many more model dimensions do you need?

# %%
params_6_11 = None

check('6.11', params_6_11)

# %% [markdown]
# ## Puzzle 6.12 · The residual connection (open, no checker)
#
# Section 6.1 ignores the residual connection. Does the impossibility argument still hold with it?
#
# ## Puzzle 6.13 · No cleanup head (budget: 2 n_digits heads)
#
# Make the 2-digit mod-10 adder of Fig. 6.3 work with exactly 4 heads (no cleanup head). How many
# parameters do you need compared with 9,508? The checker wants each of the four digits read by its
# own head (at least 90 % of its attention at '=') that alone brings that digit to the MLP (the
# swap test of 6.10), different sums reaching the MLP's hidden units differently, and no head
# attending mostly to '=' itself.

# %%
params_6_13 = None

check('6.13', params_6_13)

# %% [markdown]
# ## Puzzle 6.14 · The tens digit
#
# Change the 2-digit construction of Fig. 6.3 (one line suffices) so it outputs
# $\lfloor (a + b) / 10 \rfloor \bmod 10$ instead of the last digit.

# %%
params_6_14 = None

check('6.14', params_6_14)

# %% [markdown]
# ## Puzzle 6.15 · Wider keys for 3 digits
#
# The 3-digit mod-10 adder's MLP keys are only 1.37e-9 apart. Build a 3-digit mod-10 adder whose MLP
# reads one residual coordinate and whose keys for the 1,999 sums are at least 100 times farther
# apart. The checker runs one pair per sum and carry chains (visible), and 3,000 random pairs drawn
# afresh on every check (hidden), and measures the separation between the keys of different sums
# over all of them. Keys are read before `ln2`'s gamma and beta (a gain there stretches keys and
# rounding errors alike) and at the book's width: times $\sqrt{7 / d_\text{model}}$, since layer
# norm alone stretches a coordinate when zero dimensions are appended. What is the separation for 5
# digits? What did it cost in parameters?

# %%
params_6_15 = None

check('6.15', params_6_15)

# %% [markdown]
# ## Puzzle 6.16 · An ignored prefix
#
# Decimal addition of 2-digit numbers where the prompt may start with up to 6 arbitrary digits that
# must be ignored: attend to relative instead of absolute positions. The program prints the 3 digits
# of $a + b$. Budget: none (any number of layers, heads and dimensions; the reference uses two
# layers); the block size must be at least 14, so that 6 digits, the prompt and the answer fit. The
# checker first runs 19 pairs with carries everywhere after prefixes of every length 1-6 made of nines,
# of zeros and of copies of their own digits (visible: a NOT YET says which prefix, the pair, and
# the digits due), then all 10,000 pairs, each after a random prefix of 0-6 digits drawn afresh
# (hidden: a NOT YET names the prefix length, the pair and your output).

# %%
params_6_16 = None

check('6.16', params_6_16)


# %% [markdown]
# ## Puzzle 6.17 · Maximise the key separation
#
# Add multiplicative constants to the value and the position terms of Fig. 6.4 so that the MLP keys
# of all (sum, answer position) pairs are farther apart than in the book (6.0e-3 for 1 digit, 9.9e-4
# for 2) by at least 1 %. Answer with a function `build(n_digits)` returning a one-layer program. The
# checker builds both sizes, runs every pair, and measures the keys of every pair and answer position,
# as in 6.15 before `ln2`'s gain and at the book's width.

# %%
def build_6_17(n_digits):
    return None

check('6.17', build_6_17)

# %% [markdown]
# ## Puzzle 6.18 · Which position coordinate? (experiment, no checker)
#
# Fig. 6.4 adds the first coordinate of the position embedding to the key. What happens with the
# third? Is there a better linear combination? Measure the key separation for each choice.
#
# ## Puzzle 6.19 · Addition without zero padding
#
# Prompts `[a digits, +, b digits, =]` with no leading zeros (0 is written `0`); the program writes
# the digits of $a + b$ without leading zeros and then '=' (11) as an end mark. The checker tries all
# $a, b < 100$; the block size must be at least 9.

# %%
params_6_19 = None

check('6.19', params_6_19)


# %% [markdown]
# ## Puzzle 6.20 · Decimal multiplication
#
# Prompts `[a digits, 10, b digits, 11]` (n digits each, zero padded; token 10 now means "times"),
# answer: the $2n$ digits of $a \cdot b$, zero padded. Answer with `build(n_digits)` returning the
# program; the checker tries every 1-digit pair and 16 hand-made 2-digit pairs (zeros, ones, 99 · 99,
# powers of two; visible), then 1,500 of the 10,000 2-digit pairs drawn afresh on every check (hidden).

# %%
def build_6_20(n_digits):
    return None

check('6.20', build_6_20)


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 6`.

# %% tags=["nbval-ignore-output"]
progress(6)
