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
# # Puzzles for Chapter 3: Lookup Table
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/03_lookup_table.ipynb)
#
# Checked puzzles end with `check("3.N", your_answer)`, which prints one line: `PASS` and what
# exactly was verified, or `NOT YET` with the first input that went wrong and what your
# program gave there (if your code raised, the line that raised; `check(..., verbose=True)`
# adds the whole traceback). Unfinished answers are fine; the checkers never crash. Your
# builder runs in a separate, fresh process, on tables drawn afresh on every check: a
# NOT YET names the table as `lookup_case(n_entries, key_len, vocab_size, seed=...)`, and
# `taotp.exercises.ch03.lookup_case` with those arguments rebuilds it, so you can debug on it.
# Puzzle 3.1 asks for a trained model (a harness and a check of the result); the others
# without a checker are questions to think about, with worked answers in
# `solutions/03_lookup_table.ipynb`.

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
# ## Puzzle 3.1 · Learn the table instead of building it (held-out accuracy >= 99 %)
#
# Train a transformer with an ordinary optimiser so that it answers the lookup queries of a
# fixed table, without setting any weight by hand: 100 keys of 5 tokens over a vocabulary of
# 50 (`training.lookup_table()`, the same table every time), each key behind a prefix of up to
# 10 tokens (block size 15). What data do you train on, and how do you convince yourself that
# no prefix, however unlucky, makes it fail?
#
# The check asks for every key behind prefixes of every length 0-10 (1,100 queries of random
# tokens and 1,100 cut from other keys), once on prefixes that are the same for everyone and
# once on prefixes drawn afresh on every check, and wants 99 % right in all four; it also
# runs a short search for bad prefixes and reports what it found (not part of the verdict).
# It judges the result, not how you got it: a program built by hand, or the weights the book
# ships, pass too; the point of the puzzle is to train one.
# `training.lookup_batch` is a data generator (keys planted in streams of random tokens and
# other keys, the value as target where a key ends); `training.train_lookup` trains on it with
# PyTorch, an optional extra (`pip install "taotp[train]"`; Colab has it).

# %%
from taotp.exercises import training
ks, vs = training.lookup_table()
x, y = training.lookup_batch(np.random.default_rng(0), batch=1)
print('a training row:', x[0].tolist())
print('its targets:   ', y[0].tolist())
TRAIN = False   # True: train with PyTorch (the training extra); a minute or two
trained = None  # your trained params here (vocabulary 50, block size >= 15)
if TRAIN:
    trained, history = training.train_lookup(d_model=32, n_heads=4, d_ff=128, steps=3000)
check('3.1', trained)


# %% [markdown]
# ## Puzzle 3.2 · Concatenate instead of hashing (budget: one layer)
#
# Rebuild the untied lookup of Section 3.5 so that the last position keeps a *separate* copy
# of each key token (one slot per relative position) instead of a hash summed into shared
# dimensions. Write `build(ks, vs, vocab_size, block_size, prefix_len)` returning a one-layer
# params dict; `prefix_len` is the key length (the book's name), `block_size` is the key
# length plus 6, and `out_emb` need not equal `tok_emb`. The checker starts with the table
# printed below, then draws seven tables afresh on every check (keys of 1, 2, 3, 4, 5 and 6
# tokens; 20 to 100 entries; vocabularies of 40 to 200; and 40 keys of a length from 1 to 6)
# and a probe table, `ch03.probe_case(vocab_size, seed=...)` (30 to 60 tokens): a key of 6
# tokens and, at each of its positions, four keys that differ from it there only, all with
# different values, so a builder that leaves any key position out confuses some of them. On
# each table it requires at least 99 % of the queries to come out right: every key behind a
# random prefix of each length 0 to 6, and behind a prefix cut from other keys. It also
# checks that the key positions really sit in separate dimensions: putting 40 tokens drawn
# from the whole vocabulary at one key position of a random query must move the last
# position's stream (at every key position), in directions orthogonal to those of any other
# key position (largest cosine 0.01; a random hash would need some 600,000 shared
# dimensions to get below that).

# %%
from taotp.exercises.ch03 import lookup_case
ks, vs = lookup_case(20, 2, 200, seed=32)   # the first table of every check of 3.2
print(f'{len(ks)} keys of {ks.shape[1]} tokens, e.g. {ks[:3].tolist()} -> {vs[:3].tolist()}')


# %%
def build(ks, vs, vocab_size, block_size, prefix_len):
    return None  # your construction here

check('3.2', build)


# %% [markdown]
# ## Puzzle 3.3 · Layer norm nearly fixes a random sphere point (no checker)
#
# Let $v_d$ be a uniformly random point on the sphere of radius $\sqrt d$ in $\mathbb R^d$.
# Show that $v_d \cdot \mathrm{layer\_norm}(v_d)/d \to 1$ as $d \to \infty$.

# %% [markdown]
# ## Puzzle 3.4 · Sums of sphere points (no checker)
#
# Now add up several independent such points, $S = \sum_{i=0}^{k} v_d(i)$, and find the limit
# of $S \cdot \mathrm{layer\_norm}(S)/d$. (The book writes $\sqrt k$; count the terms.) Which
# assumption about the $v_d(i)$ do you need?

# %% [markdown]
# ## Puzzle 3.5 · One coordinate of a sphere point (no checker)
#
# For $x$ uniform on the unit sphere in $\mathbb R^n$, show that $(x_1 + 1)/2$ follows
# $\mathrm{Beta}(\frac{n-1}{2}, \frac{n-1}{2})$, so $x_1$ has mean 0 and variance $1/n$.

# %% [markdown]
# ## Puzzle 3.6 · Normalise the hashes (budget: one layer)
#
# In the untied construction every `out_emb` row is a plain sum of key hashes. Does layer
# normalising each hash before adding it help? What about normalising the finished `out_emb`
# rows instead? Write a modified builder that takes the same arguments as
# `taotp.build_untied_transformer` (table, vocabulary size, block size, key length, token
# dims, rng). Keep the book's token embeddings and hash layer (the same draws from `rng`,
# e.g. by calling `taotp.build_untied_transformer(..., rng=rng)` first) and change only how
# `out_emb` is made: the checker compares your program with the book's for the same seed
# (one layer, five heads, d_model 33, no MLP). It runs both on 1,000-entry tables over 1,000
# tokens at `tok_dims` 30, with keys behind random 5-token prefixes drawn afresh, and yours
# must decode at least 2 points more of the keys: first on `lookup_case(1000, 5, 1000,
# seed=36)` with `rng=np.random.default_rng(0)`, then on a table drawn afresh on every check
# (the mean over three rng seeds drawn afresh).

# %%
def build_better(ks, vs, vocab, block, key_len, tok_dims, rng=None):
    return None  # your construction here

check('3.6', build_better)


# %% [markdown]
# ## Puzzle 3.7 · PostLN (no budget)
#
# The original transformer normalises *after* each residual addition (PostLN):
# $x \leftarrow \mathrm{LN}(x + \mathrm{attn}(x))$, then $x \leftarrow \mathrm{LN}(x +
# \mathrm{MLP}(x))$. Write `build(ks, vs, vocab_size, block_size)` returning a params dict
# whose program solves Lookup Table on that architecture; the checker runs it with
# `taotp.transformer(tokens, **params, post_ln=True)` on `lookup_case(30, 3, 12, seed=37)`,
# then on seven tables drawn afresh on every check (keys of every length from 1 to 6,
# vocabularies 20 to 100, and 40 keys of a length from 1 to 6; `block_size` is the key
# length plus 6) and on a probe table as in 3.2 (keys of 6 tokens that differ at one
# position only), and wants every key right, behind random prefixes of every length 0 to 6
# and behind prefixes made of other keys. The chapter's builders may be used: the question
# is what, if anything, has to change under PostLN, and why (Chapter 12's universal builder
# is switched off).

# %%
def build_postln(ks, vs, vocab_size, block_size):
    return None  # your construction here

check('3.7', build_postln)

# %% [markdown]
# ## Puzzle 3.8 · More text, longer keys (experiment; no checker)
#
# Redo the *Romeo and Juliet* generation of the chapter with many more n-grams and longer
# keys (`taotp.lookup.ngram_table(words, n_entries, key_len)`). Does the output read better?

# %% [markdown]
# ## Puzzle 3.9 · The 20 % ceiling (no checker)
#
# With 1,000 entries over a vocabulary of only 10 tokens, the tied construction stalls near
# 20-25 % however wide the model is. Explain why. (The book's author asks to be told.)

# %% [markdown]
# ## Puzzle 3.10 · A tighter width bound (no checker)
#
# Section 3.5.1 argues that the untied construction works once $d \gg n l^2 / |V|$. Derive a
# sharper estimate, and test it.

# %% [markdown]
# ## Puzzle 3.11 · An unlearnable table
#
# Find a table that the construction cannot store at *any* width (hint: Chapter 6 shows what a
# single attention layer cannot add up), and say how many entries the smallest such table has.
# Answer with a dict `{'ks': keys, 'vs': values, 'smallest': number_of_entries}` (a plain
# `int`). The checker proves your table impossible with a small linear program (it needs
# `scipy`); `taotp.exercises.ch03.additive_separable(ks, vs, vocab_size)` runs the same test
# on any candidate. It keeps only a salted digest of the least size: it says whether yours is
# right, never whether the right one is larger or smaller.

# %%
answer = None   # e.g. {'ks': [[...], ...], 'vs': [...], 'smallest': ...}

check('3.11', answer)


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 3`.

# %% tags=["nbval-ignore-output"]
progress(3)
