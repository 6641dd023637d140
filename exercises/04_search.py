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
# # Exercises 4 · Search
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/04_search.ipynb)
#
# Fill in each starter cell and run the `check` line below it. Program answers are builders
# `build(vocab_size, block_size, prefix_len)` that return a params dict; the checkers call
# them at a few sizes and compare the prediction at the last position with
# `taotp.search.search_reference`. Every input they try is *defined*: its query (the last
# `prefix_len` tokens) occurs exactly once earlier, and not among the first `prefix_len`
# tokens.
#
# The inputs are drawn anew on every check, from a fresh seed: random ones of the full
# length and shorter (one of every length an input can have), hand-placed ones (the match as early and as late as it can be, a query
# of one repeated token, the first and last tokens of the vocabulary, near misses, one per
# place of the query), every token of the vocabulary in every place of the query and right
# after its earlier copy, and the match at every position. A `NOT YET` line names the seed and
# the input's index, so `ch04.search_inputs(seed, sizes, n)` gives you the very same list
# (label, tokens) to debug with; it says what your program predicted, never the expected
# token. `ch04.search_cases(seed, n, vocab_size, length, prefix_len)` draws random inputs
# with their answers for your own tests. Every budget is measured on the arrays your builder
# returns. An answer that raises is reported with its line; `check(..., verbose=True)` adds
# the whole traceback.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp.exercises import check, ch04, progress


# %% [markdown]
# ## Puzzle 4.1 · Trained embeddings (reflection, no checker)
#
# Swap the arbitrary token embeddings of Search for the ones trained for *Romeo and Juliet*
# in Chapter 3 and redo the text generation. What has to change in the construction when
# the trained embeddings are not points on the $\sqrt3$-circle? Does the generated text get
# better, and where?

# %% [markdown]
# ## Puzzle 4.2 · PostLN (budget: none)
#
# Build Search for a PostLN transformer: each sub-layer's output is added to the stream and
# the sum is normalised, `x = LN(x + attn(x))`, `x = LN(x + mlp(x))`. Your builder returns a
# params dict; the checker runs it with `taotp.transformer(tokens, **params, post_ln=True)`
# at (vocab_size, block_size, prefix_len) = (10, 40, 2), (10, 40, 3), (30, 60, 3) and
# (16, 64, 4), on 60 random full-length inputs per size and all the kinds listed above, and
# needs every answer right. The package's builders may be used.

# %%
def build_postln_search(vocab_size, block_size, prefix_len):
    return None   # your program here


# %%
check('4.2', build_postln_search)


# %% [markdown]
# ## Puzzle 4.3 · Any lookup table, by searching
#
# Chapter 3's lookup construction fails on some tables. Write
# `make_prompt(keys, values, key, vocab_size)` returning a pair `(prompt, prefix_len)` (a
# list of at most 2,000 token ids and an int) such that the book's Search program,
# `build_search_transformer(vocab_size + 1, len(prompt), prefix_len)`, answers
# `values[keys.index(key)]` at the end of the prompt. You may use one extra token id,
# `vocab_size`. The part of the prompt that changes from key to key may depend on the key
# only: the checker also runs every table with its values shifted by one, redrawn and all
# equal, and with its rows shuffled and a third of them left out (drawn afresh), and that
# part of the prompt (and `prefix_len`) must stay the same for each key, wherever its row
# sits and whatever the other keys are. It tries every key
# of the seven tables printed below (a failure there shows the expected value) and of three
# tables drawn afresh on every check, `ch04.random_tables(seed)` (20 keys of length 2 over 50
# symbols, 6 keys of length 5 over 4 symbols, and 12 keys of 6 to 12 tokens over 3 to 20
# symbols). Then explain why no table is adversarial
# for this approach.

# %%
import textwrap
for name, keys, values, vocab in ch04.lookup_tables():
    entries = ' '.join(f'({",".join(map(str, k))})->{v}' for k, v in zip(keys, values))
    print(f'{name} (vocab_size {vocab}):')
    print(textwrap.fill(entries, 86, initial_indent='    ', subsequent_indent='    '))

# %%
def make_prompt(keys, values, key, vocab_size):
    return None   # (prompt, prefix_len)


# %%
check('4.3', make_prompt)


# %% [markdown]
# ## Puzzle 4.4 · Fewer than 3 dimensions per token (budget: d_model < 3 · (prefix_len + 1))
#
# The book stores each of the $L+1$ tokens in 3 dimensions because a single 3-D block is the
# smallest layer-norm-fixed circle. A row of several tokens does not need that much. Build
# Search with `d_model < 3 * (prefix_len + 1)` (measured on the arrays your builder
# returns); the checker tries (10, 100, 3), (1000, 100, 10) and (16, 64, 2), with 40 random
# full-length inputs per size and all the kinds listed at the top, and needs every answer
# right. The book's `build_search_transformer` is switched off while it is checked.

# %%
def build_thin_search(vocab_size, block_size, prefix_len):
    return None   # your program here


# %%
check('4.4', build_thin_search)


# %% [markdown]
# ## Puzzle 4.5 · Hashed keys (budget: >= 99 % right, at most 3/4 of the book's parameters)
#
# Compare hashes of the key tokens (as the lookup table of Chapter 3 does) instead of the
# concatenated tokens. At each of (10, 100, 3), (1000, 100, 10) and (16, 64, 2) the checker
# needs at least 99 % right, both of 200 random full-length inputs with 100 shorter ones (and
# one of every length) and
# of the hand-placed ones (the match at every position among them), with at most three
# quarters of the book's 4,800, 123,486 and 2,034 parameters (3,600, 92,614 and 1,525: the
# book's program with its unused columns dropped does not fit, a hash of the keys does
# easily). There are no near misses here, which hashing may
# confuse, and no sweep of every token. The book's `build_search_transformer` is switched off
# while it is checked. It judges the result, not how you got it: it cannot see whether you
# hash (a program compressed from the book's some other way can fit too), so that part is
# on your honour.

# %%
def build_hashed_search(vocab_size, block_size, prefix_len):
    return None   # your program here


# %%
check('4.5', build_hashed_search)

# %% [markdown]
# ## Puzzle 4.6 · Undefined inputs (reflection, no checker)
#
# What does the program do (1) when the query occurs twice, and (2) when it does not occur,
# but a sequence close to it does, with some tokens embedded closer together than the rest?
# Predict first, then try it with `taotp.decode` and a modified `tok_emb`.


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 4`.

# %% tags=["nbval-ignore-output"]
progress(4)
