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
# # Puzzles for Chapter 5: Min, Max and Sort
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/05_sort.ipynb)
#
# Each checked puzzle ends with `check("5.N", your_program)`, where the program is a params
# dict like the ones `taotp.build_sort_transformer` returns. The checker measures every
# budget on your arrays, runs them with the package's own forward pass and greedy decoding,
# and prints one line: `PASS` with what exactly was checked, or `NOT YET` with the first input
# that broke, the step at which the output went wrong (step k prints the k-th number of the
# answer) and the token your program printed there.
#
# Each checker tries two kinds of input. The *visible* ones are printed below each puzzle
# (`ch05.visible_cases('5.N')`); a `NOT YET` on one of them also says which token was
# expected. The *hidden* ones are drawn anew on every check: random inputs, and sweeps that
# reach every number (and every pair of neighbouring numbers) of the range; a `NOT YET` on
# one of them names the input and what your program printed, with a hint, but not the
# expected token. Unfinished answers are fine: the checkers report, they never crash.
# Reflection puzzles have no checker; their discussion is in `solutions/05_sort.ipynb`. Run
# `progress(5)` at the end for a summary.
#
# Sort inputs follow the chapter: numbers, one token each, then the terminator 0; the
# program is decoded for one step per number and must print the numbers in ascending order.
# The Sorts that Chapter 12 adds to the package (`taotp.sort`'s compact and bits designs)
# are recognised and refused: these puzzles ask for constructions of your own.

# %%
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import textwrap
import numpy as np
import taotp
from taotp.exercises import check, ch05, progress


# %% [markdown]
# ## Puzzle 5.1 · Sort 33 values (budget: 1 layer, d_model ≤ 6)
#
# The chapter's Sort is exact for vocabularies up to 28 in float64 and fails at 29. Change
# the construction a little (same shape: one layer, at most six residual dimensions) so that
# it sorts any set of distinct numbers from 1 to 32. The answer is a params dict with a
# vocabulary of at least 33 and a block size of at least 64. The checker sorts the visible
# inputs below, the full set shuffled, the 16 largest numbers, every ordered pair and 1,500
# random subsets of every size. It judges what your program does: Chapter 12's compact Sort
# is refused as the package builds it, at any settings, but a disguised copy of it is not
# something the checker can always tell, so that part is on your honour.
#
# *Hint:* where exactly must each query point $q_i$ lie, and do the gaps really have to
# halve?

# %%
for label, numbers in ch05.visible_cases('5.1'):
    print(textwrap.fill(f'{label}: {numbers + [0]}', 86, subsequent_indent='    '))

# %%
def build_sort_33():
    return None  # your code here: a params dict with vocab_size >= 33

check('5.1', build_sort_33())


# %% [markdown]
# ## Puzzle 5.2 · Min for a million values (budget: d_model ≤ 8)
#
# The Min program of the chapter starts to err at a few thousand values when the query
# and the two smallest values sit at the ends of the arc. Build a Min program (a params dict)
# for a vocabulary of at least 1,000,000 tokens (block size at least 32) that is always
# right: its prediction at the last position is the smallest token of the input. All inputs
# are drawn anew on every check, 406 of them, of every length from 1 to 32. At lengths 1, 2,
# 3, 5, 8, 16, 31 and 32: all equal, the minimum first or last, neighbouring tokens at both
# ends and in the middle, powers of two, the minimum next to its successor in each sixteenth
# of the vocabulary, and random rows half of whose values come from the 20 smallest and 20
# largest tokens; at the other lengths, the minimum first, last and two random rows. A `NOT YET`
# prints the start of the input; all of it is in the result's `.counterexample`.

# %%
def build_min_million():
    return None  # your code here

check('5.2', build_min_million())


# %% [markdown]
# ## Puzzle 5.3 · Make Sort as easy as Min (no checker)
#
# The hard part of Sort is making attention ignore the numbers that were already printed.
# Propose a small change to the transformer itself that makes this easy, so that Sort
# becomes a construction as simple and robust as Min. Would the change help elsewhere?

# %% [markdown]
# ## Puzzle 5.4 · Sort a large vocabulary (budget: vocabulary ≥ 1,000, d_model ≤ 2,048)
#
# *The plain-text copy of the preprint that this edition works from lost this puzzle's
# statement; we reconstructed it from the chapter's prose, which promises "the full
# construction" for large vocabularies as an exercise.*
#
# Build a program (a params dict) on the standard transformer that sorts up to 30 distinct
# numbers from 1..999 (vocabulary at least 1,000, block size at least 64), any number of
# layers and heads. Besides the visible inputs below, every check draws runs of 30
# neighbouring numbers (shuffled) that together hold every number and every pair of
# neighbours of 1..999, and two random inputs of every length from 1 to 30. Powerpoints
# cannot reach that far; think about what a query has to compare. The checker judges what
# your program does: it refuses Chapter 12's bits Sort as the package builds it (any code
# length, rotated or rescaled), but not every disguise of it, so that part is on your honour.

# %%
for label, numbers in ch05.visible_cases('5.4'):
    print(textwrap.fill(f'{label}: {numbers + [0]}', 86, subsequent_indent='    '))

# %%
def build_general_sort():
    return None  # your code here

check('5.4', build_general_sort())


# %% [markdown]
# ## Puzzle 5.5 · Negative numbers (no checker)
#
# How would you change Sort so that it accepts negative numbers as well?

# %% [markdown]
# ## Puzzle 5.6 · Repeated elements (budget: none)
#
# Sort lists in which numbers may repeat: `[5, 2, 5, 2, 0]` must give `[2, 2, 5, 5]`.
# The answer is a params dict with a vocabulary of at least 16 (numbers 1..15 and the
# terminator) and a block size of at least 24, for inputs of up to 12 numbers. Besides the
# visible inputs below, every check draws every number 1..15 with every count of copies from
# 1 to 12 (among other numbers), an input of every length from 1 to 12 with every count of
# distinct numbers (from all equal to all distinct), and 600 random multisets.

# %%
for label, numbers in ch05.visible_cases('5.6'):
    print(f'{label}: {numbers + [0]}')

# %%
def build_sort_with_repeats():
    return None  # your code here

check('5.6', build_sort_with_repeats())

# %% [markdown]
# ## Puzzle 5.7 · Numbers of several digits (budget: none)
#
# Now a number is written in base 10 with one token per digit. Token format (fixed by the
# checker, `taotp.exercises.ch05`): tokens 0-9 are digits, `10` is a comma between numbers
# and `11` ends the list; numbers have no leading zeros. The answer is the same numbers in
# ascending order in the same format, the final `11` included, so it has as many tokens as
# the input:

# %%
from taotp.exercises.ch05 import encode_numbers
print('42, 7, 100  ->', encode_numbers([42, 7, 100]))
print('sorted      ->', encode_numbers([7, 42, 100]))


# %% [markdown]
# Build a program (a params dict, vocabulary at least 12, block size at least 64) that sorts
# up to 8 distinct numbers below 1,000. Besides the visible lists below, every check draws
# runs of 8 neighbouring numbers (shuffled) that together hold every number and every pair of
# neighbours of 0..999, a random list of every length from 2 to 32 tokens, and 40 random
# lists of mixed widths. A step is one output token. The chapter hints at Chapter 6 for
# reading numbers digit by digit.

# %%
for label, numbers in ch05.visible_cases('5.7'):
    print(f'{label}: {", ".join(map(str, numbers))}')

# %%
def build_multi_digit_sort():
    return None  # your code here

check('5.7', build_multi_digit_sort())

# %% [markdown]
# ## Puzzle 5.8 · Train a transformer to sort (held-out accuracy >= 95 %)
#
# Can a transformer *learn* Sort from examples with a standard optimiser? Same format as the
# chapter: up to 27 distinct numbers from 1..27, then 0, after which the model prints them in
# increasing order (vocabulary 28, block size at least 54). How much data, how big a model?
# Can you guarantee it is right on every input?
#
# The check decodes 540 held-out prompts that are the same for everyone (20 of every
# length 1..27) and 540 drawn afresh on every check, and wants at least 95 % of each sorted
# exactly; it reports the size of your model. It judges the result, not how you got it: a
# program built by hand, or the weights the book ships, pass too. `training.sort_batch` makes
# training rows (prompt plus answer, targets on the answer only); `training.train_sorter`
# trains on them with PyTorch, an optional extra (`pip install "taotp[train]"`; Colab has
# it).

# %%
from taotp.exercises import training
x, y = training.sort_batch(np.random.default_rng(0), batch=1, length=4)
print('a training row:', x[0].tolist(), '  targets:', y[0].tolist())
TRAIN = False   # True: train with PyTorch (the training extra); a few minutes
trained = None  # your trained params here
if TRAIN:
    trained, history = training.train_sorter(d_model=48, n_layers=1, n_heads=4, d_ff=96,
                                             steps=3000)
check('5.8', trained)


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 5`.

# %% tags=["nbval-ignore-output"]
progress(5)
