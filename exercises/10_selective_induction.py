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
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 10. Selective Induction Heads: Exercises
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/10_selective_induction.ipynb)
#
# Eight puzzles on the selective-induction construction of the chapter. Each has a starter cell;
# `check` runs your answer and prints PASS or NOT YET with the first input that broke.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp import selective as sel
from taotp.exercises import check, progress

# Positions in every mask below are 1-based: row i = query, column j = key.
def grid(T):
    return np.arange(1, T + 1)[:, None], np.arange(1, T + 1)[None, :]


# %% [markdown]
# ## Puzzle 10.1 · The lag posterior after every prefix (budget: none)
#
# Write `lag_posterior(P, lags, x)` returning an array of shape `(T, K)`: row `t` holds the
# posterior probability of each lag (in increasing order) after the first `t + 1` tokens,
# with a uniform prior. Every lag's log-likelihood sums `log P[x[j-k], x[j]]` over the same
# positions, those after the warm-up (0-based `j >= kmax`). The checker compares with the
# reference to 1e-9 on seeded sequences, lag sets with `kmin > 1`, and lengths up to 1000
# (multiplying probabilities instead of adding logs will not survive that).

# %%
def lag_posterior(P, lags, x):
    return None   # your code here


check('10.1', lag_posterior)


# %% [markdown]
# ## Puzzle 10.2 · Layer 1's matrix: store ptil[i, k] in slot i - k (budget: none)
#
# Write `layer1_matrix(P, lags, T, lam)` returning the `(S + T, S + T)` matrix of layer 1 of
# the disentangled network (inputs `[onehot(token), onehot(position)]`, scores
# `h_i^T A h_j`). After the layer, the positional half of the head's output at position
# `i > kmax` must hold `ptil[i, k]` in slot `i - k` (1-based) and zeros elsewhere. Checked
# at `lam = 50` to 1e-8 on seeded sequences over six lag sets (one lag, `kmin > 1`,
# `T = kmax + 1`).

# %%
def layer1_matrix(P, lags, T, lam):
    return None   # your code here


check('10.2', layer1_matrix)

# %% [markdown]
# ## Puzzle 10.3 · Layer 2 head masks for lags {1,2,3,4} (budget: at most 4 heads)
#
# For lags {1, 2, 3, 4} and `T = 40`, give a list of at most 4 sign masks (`(40, 40)` arrays
# of +1 and -1; the checker multiplies them by `lam = 500` and puts them on the position
# block of layer 2). At every query from 8 to 40, every token `4 < j <= i` must be averaged
# uniformly by exactly one head, no head may attend to the warm-up, and no head may
# average two tokens whose stored transitions (slots `j - k`) overlap.

# %%
masks = None   # a list of (40, 40) arrays of +1 / -1

check('10.3', masks)


# %% [markdown]
# ## Puzzle 10.4 · The selection block of layer 3 (budget: none)
#
# Layers 1 and 2 are given (the contiguous construction with `K` heads). Write
# `layer3_blocks(lags, T, lam, beta)` returning `(band, B)`, both `(T, T)`: `band` acts on
# the position block (query and key), `B` goes between each head's `phat` (rows, query side)
# and its `mhat` (columns, key side). The checker compares layer 3's scores at the candidate
# keys `i + 1 - k` with `lam + beta * sum_h mean ptil` from query `2 kmax + K - 1` on, and the
# outputs with the reference.

# %%
def layer3_blocks(lags, T, lam, beta):
    return None   # (band, B)


check('10.4', layer3_blocks)

# %% [markdown]
# ## Puzzle 10.5 · Fewer heads for the lag set {3,5,7} (budget: at most 3 heads)
#
# The fallback for a lag set with holes pretends it is contiguous and uses
# `kmax - kmin + 1 = 5` heads for {3, 5, 7}. Find a period and residue classes with at
# most 3 heads that pass the validity rule (no two residues of one class, also equal ones,
# differ by a difference of two distinct lags modulo the period) and split all residues.
# Also say why period 3 with three singleton classes fails for {1, 3, 4}: choose a letter
# from `sel_choices` below. Answer with a dict `{'period': ..., 'classes': [...],
# 'choice_134': ...}`.

# %%
from taotp.exercises.ch10 import CHOICES_134 as sel_choices
for letter, text in sel_choices.items():
    print(letter, '-', text)
answer = None   # {'period': ..., 'classes': [...], 'choice_134': ...}

check('10.5', answer)


# %% [markdown]
# ## Puzzle 10.6 · One head for two lags (corrected App. H) (budget: 1 head)
#
# For two lags `kmin < kmax` (`D = kmax - kmin`) one layer-2 head can do the work of two:
# write `single_head_blocks(lags, T, beta)` returning `(mask2, B)`: the `(T, T)` sign mask of
# the one layer-2 head (runs of `D` tokens then gaps of `D`, after the warm-up) and the
# `(T, T)` layer-3 block whose rows are the query's position and columns the key's `phat`
# slots, entries `0`, `+beta` or `-beta`. Checked on {2, 5}, {1, 3}, {2, 4}, {3, 4}, {1, 2},
# {3, 7} and {1, 6}: the paper's rule with `(a - b - 1)` is not general.

# %%
def single_head_blocks(lags, T, beta):
    return None   # (mask2, B)


check('10.6', single_head_blocks)


# %% [markdown]
# ## Puzzle 10.7 · How large must lambda be? (budget: none)
#
# Layer 1 leaks at most `T * (pmax / pmin) * exp(-2 lam)` of weight onto a masked key,
# relative to an allowed one. Write `how_hard(P, T)` returning the smallest integer `lam`
# for which this bound is below `1e-6`.

# %%
def how_hard(P, T):
    return None   # your code here


check('10.7', how_hard)


# %% [markdown]
# ## Puzzle 10.8 · Counting the transitions one head uses (budget: none)
#
# With contiguous lags and only the first layer-2 head (offset 0 modulo `K`), how many
# transitions does the network average at query `T`? And which temperature `beta` of
# Proposition 1 equals the `K`-head network with `beta_c` on balanced positions? Write
# `one_head_budget(T, lags, beta_c)` returning `(count, beta)`; for `T = 128`, lags
# {1, 2, 3}, `beta_c = 100` it is the chapter's example.

# %%
def one_head_budget(T, lags, beta_c):
    return None   # (count, beta)


check('10.8', one_head_budget)


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 10`.

# %% tags=["nbval-ignore-output"]
progress(10)
