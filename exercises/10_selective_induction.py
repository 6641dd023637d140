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
# # 10. Selective Induction Heads: Exercises
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/10_selective_induction.ipynb)
#
# Eight puzzles on the selective-induction construction of the chapter. Each has a starter cell;
# `check` runs your answer and prints PASS with what was checked, or NOT YET with the first
# input that broke and what your answer gave there.
#
# Your answer runs in a separate process. Each function puzzle tries one case you can see
# first (the chapter's worked example, `sel.example`, or the case its statement names), then
# cases drawn afresh on every check. A NOT YET about a drawn case names it, e.g. `case 2 of
# ch10.posterior_cases(SEED)`: `from taotp.exercises import ch10` and that call rebuild it,
# so you can compare your function with the chapter's in your own kernel. Messages never show
# the value that was due. While a puzzle is checked, the package functions that already
# solve it (`sel.lag_posterior`, the construction's builders, ...) are switched off where
# your answer runs. If your code raises, the message names the line;
# `check(..., verbose=True)` adds the whole traceback.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp import selective as sel
from taotp.exercises import check, ch10, progress

# Positions in every mask below are 1-based: row i = query, column j = key.
def grid(T):
    return np.arange(1, T + 1)[:, None], np.arange(1, T + 1)[None, :]


# %% [markdown]
# ## Puzzle 10.1 · The lag posterior after every prefix (budget: none)
#
# Write `lag_posterior(P, lags, x)` returning an array of shape `(T, K)`: row `t` holds the
# posterior probability of each lag (in increasing order) after the first `t + 1` tokens,
# with a uniform prior. Every lag's log-likelihood sums `log P[x[j-k], x[j]]` over the
# same positions, those after the warm-up (0-based `j >= kmax`). The checker compares
# with the reference to 1e-9 on the worked example (`sel.example.P`, lags {1, 2, 3},
# `sel.example.TOKENS`) and 14 sequences drawn afresh: one lag, `kmin > 1`,
# `T = kmax + 1`, `T = 1000` (multiplying probabilities instead of adding logs will not
# survive that), lags up to 16, and one of 3,000 tokens whose lags' log-likelihoods lie
# more than 750 apart.

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
# `i > kmax` must hold `ptil[i, k]` in slot `i - k` (1-based) and zeros elsewhere. Score as
# the chapter does: position block `+lam` where `i - j` is a lag, `-lam` elsewhere. Checked
# to 1e-8 against the chapter's layer at `lam = 50` on the worked example (`T = 10`) and on
# three sequences each of five lag sets drawn afresh (one lag, `kmin > 1`, `T = kmax + 1`,
# `T` up to 40), each at a `lam` from 2 to 12, where the layer still leaks a little.

# %%
def layer1_matrix(P, lags, T, lam):
    return None   # your code here


check('10.2', layer1_matrix)

# %% [markdown]
# ## Puzzle 10.3 · Layer 2 head masks for contiguous lags (budget: at most K heads)
#
# Write `layer2_masks(lags, T)` for a contiguous lag set (`kmin, kmin + 1, ..., kmax`, `K` lags)
# returning a list of at most `K` sign masks, `(T, T)` arrays of +1 and -1; the checker
# multiplies them by `lam = 500` and puts them on the position block of layer 2. At every query
# from `2 kmax` to `T`, every token `kmax < j <= i` must be averaged uniformly by exactly one
# head, no head may attend to the warm-up, and no head may average two tokens whose stored
# transitions (slots `j - k`) overlap. The first case is lags {1, 2, 3, 4} at `T = 40`; six
# more contiguous sets are drawn afresh on every check, one of each size `K` from 1 to 6 (a
# single lag included), the last with `T` from 150 to 300.
# The package's construction is switched off while this puzzle is checked.

# %%
def layer2_masks(lags, T):
    return None   # a list of at most len(lags) (T, T) arrays of +1 / -1


check('10.3', layer2_masks)


# %% [markdown]
# ## Puzzle 10.4 · The selection block of layer 3 (budget: none)
#
# Layers 1 and 2 are given (the contiguous construction with `K` heads). Write
# `layer3_blocks(lags, T, lam, beta)` returning `(band, B)`, both `(T, T)`: `band` acts on
# the position block (query and key), `B` goes between each head's `phat` (rows, query side)
# and its `mhat` (columns, key side). The checker compares layer 3's scores at the candidate
# keys `i + 1 - k` with `lam + beta * sum_h mean ptil` from query `2 kmax + K - 1` on, and the
# outputs with the reference, on the worked example (`lam = 500`, `beta = 7`) and on two
# sequences each of six contiguous lag sets drawn afresh, one of each size `K` from 1 to 6
# (a single lag included), the last with `T` from 150 to 300, each with its own `lam` (100
# to 1,000) and `beta` (1 to 20).
# The package's construction is switched off while this puzzle is checked.

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
# 'choice_134': ...}`. The check judges the design you give (the rule and the budget), not
# how you found it.

# %%
import textwrap
from taotp.exercises.ch10 import CHOICES_134 as sel_choices
for letter, text in sel_choices.items():     # a long choice continues on the next line
    print(textwrap.fill(f'{letter} - {text}', 86, subsequent_indent='    '))
answer = None   # {'period': ..., 'classes': [...], 'choice_134': ...}

check('10.5', answer)


# %% [markdown]
# ## Puzzle 10.6 · One head for two lags (corrected App. H) (budget: 1 head)
#
# For two lags `kmin < kmax` (`D = kmax - kmin`) one layer-2 head can do the work of two:
# write `single_head_blocks(lags, T, beta)` returning `(mask2, B)`: the `(T, T)` sign mask of
# the one layer-2 head (runs of `D` tokens then gaps of `D`, after the warm-up) and the
# `(T, T)` layer-3 block whose rows are the query's position and columns the key's `phat`
# slots, entries `0`, `+beta` or `-beta`. Checked on lags {2, 5} at `T = 40` (`beta = 10`),
# then on fifteen pairs drawn afresh, one for each `D` from 1 to 5 and each remainder of
# `kmin` divided by `D` (`kmin` up to `2 D`), and two more with `T` from 45 to 149 and from
# 150 to 300, each with a `beta` from 1 to 30: the paper's rule with `(a - b - 1)` is not
# general.

# %%
def single_head_blocks(lags, T, beta):
    return None   # (mask2, B)


check('10.6', single_head_blocks)


# %% [markdown]
# ## Puzzle 10.7 · How large must lambda be? (budget: none)
#
# Layer 1 leaks at most `T * (pmax / pmin) * exp(-2 lam)` of weight onto a masked key,
# relative to an allowed one. Write `how_hard(P, T)` returning the smallest integer `lam`
# for which this bound is below `1e-6`. Checked first on
# `P = sel.transition_matrix(5, np.random.default_rng(0))` with `T = 128`, then on thirteen
# pairs drawn afresh (`T` from 2 to 100000, one `T` twice with different `P`). Six of them
# are chosen so that the bound crosses `1e-6` within `1e-5` of an integer `lam`, three on
# each side, with `pmax` and `pmin` (over the whole of `P`) in different rows: a rounded
# constant or a per-row ratio does not pass.

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
# `one_head_budget(T, lags, beta_c)` returning `(count, beta)`, an integer and a number;
# for `T = 128`, lags {1, 2, 3}, `beta_c = 100` it is the chapter's example, checked first,
# then eight cases drawn afresh (four consecutive `T` for one lag set, so every residue
# modulo `K`). The checker tests `beta` by running Proposition 1 beside the network; the
# package's `plan_heads`, `construction_weights` and `prop1_weights` are switched off.

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
