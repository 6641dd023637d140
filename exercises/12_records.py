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
# # Puzzles for Chapter 12: Records
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/12_records.ipynb)
#
# One puzzle per row of the chapter's table: build a program for the same task that is
# *smaller* than the record. Your answer is sent to a separate process, which reads its
# arrays as plain numbers, measures the size that counts for that row (all parameters, or
# the non-zero ones, with the book's census: layer norms not counted, an untied `out_emb`
# counted), refuses a program larger than the record before running anything, and then runs
# it with the package's own forward pass on the inputs the record is verified on, plus
# inputs drawn afresh on every check. A correct program with fewer parameters passes, and
# the line says by how much it beats the record. A correct program of exactly the record's
# size gets a NOT YET that says it ties: the record's own program, which the package
# builds, does that much, so a tie proves nothing new. A NOT YET for a wrong program names
# the first input that broke and what your program printed there.
#
# Puzzle 12.3 is **open**: nobody has beaten its record yet (the solutions notebook shows
# it tying itself), so a PASS there is a new record for the book. The other four records
# can be beaten, and their solutions show one way each.
#
# Two rules hold for every puzzle: the architecture is the book's, unmodified, and every
# layer norm stays at $\gamma = 1$, $\beta = 0$ (they are not counted, so weights hidden
# there would dodge the count). Run `progress(12)` at the end for a summary.

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
# ## Puzzle 12.1 · Beat the compact decimal adder (budget: fewer than the record's parameters)
#
# Add two 3-digit numbers in the book's format: the prompt is `[a digits, 10, b digits,
# 11]`, most significant digit first and zero padded, and greedy decoding prints the four
# digits of the sum. The record is `taotp.build_compact_addition_transformer(3)`; your
# program must have fewer parameters in all. The checker tries every pair of
# numbers whose digits are 0, 1, 8 or 9 (every way a carry is born, passed on and
# stopped), x + (999 - x), x + (1000 - x), x + 999 and 999 + x for every x, the record's
# carry chains, and 43,000 pairs drawn afresh on every check. The PASS line also gives your
# program's count by AdderBoard's rules (`taotp.addition.adderboard.unique_parameters`).

# %%
def build_adder():
    return None  # your code here: a params dict (vocab_size >= 12, block_size >= 11)

check('12.1', build_adder())


# %% [markdown]
# ## Puzzle 12.2 · Beat the Sort record at V = 65,536 (budget: 1 layer, fewer than the record's parameters)
#
# Sort distinct numbers from 1 to 65,535 followed by the terminator 0, as in Chapter 5,
# with one layer (any number of heads, MLP allowed) and fewer parameters than
# `taotp.build_large_vocab_sort_transformer(65_536, 128)`. Use a block size of at least
# 128: the checker sorts up to 64 numbers, among them both ends of the range, runs of
# neighbours placed where the record finds its decisions hardest, powers of two and six
# fixed random sets, then four sets and 24 inputs of 64 distinct numbers drawn afresh on
# every check (1,536 numbers of the range each time).
#
# *Hint:* nearly all of the record's parameters are its token table.

# %%
def build_big_sort():
    return None  # your code here: a params dict with vocab_size >= 65,536

check('12.2', build_big_sort())


# %% [markdown]
# ## Puzzle 12.3 · Beat the Sort record at n = 28 (budget: fewer than the record's non-zero parameters)
#
# Sort distinct numbers from 1 to 27 followed by 0, with fewer non-zero parameters than
# the record (`from taotp.programs import CATALOGUE`, then
# `CATALOGUE['sort-28-sparse'].build()`: Chapter 12 found it by searching moves that change
# no score; the book's own Sort of Chapter 5 needs 184). Any shape is allowed; use a block
# size of at least 54. The checker sorts every number alone, every ordered pair, all 27
# numbers increasing, decreasing and in four orders drawn afresh, and 400 sets drawn
# afresh on every check.

# %%
def build_small_sort():
    return None  # your code here: a params dict with vocab_size >= 28

check('12.3', build_small_sort())


# %% [markdown]
# ## Puzzle 12.4 · Beat the universal Lookup Table (budget: fewer than the record's parameters at 1,000 entries)
#
# Write a *builder* `build(ks, vs, vocab_size, block_size) -> params` with the prompt and
# answer convention of Chapter 3 (a prompt ending in a key is answered with the key's
# value, whatever comes before the key) that is right for **every** table, and whose
# program for Chapter 3's 1,000-entry table (keys of 5 tokens over a vocabulary of 10,
# `taotp.lookup.random_lookup_table(1000, 5, 10, rng=0)`) at block size 16 has fewer
# parameters than the record's at the same size. Every key is asked alone, behind random
# prefixes and behind prefixes made of other keys; the checker also builds programs, at
# block size 16, for XOR and for keys of 12 tokens that differ only in the first (or only
# in the last) token, and for five random tables (keys of five lengths from 1 to 16
# tokens, 16 always among them; one table over 256 symbols, one over 61 to 255 and three
# over 2 to 60, up to 300 keys each, at a block size from the key's length to 32, one of
# them at 32), and asks their keys the same way. The random tables and the prefixes are
# drawn afresh on every check; a NOT YET on a random table names the seed and the table's index i, and
# `taotp.exercises.ch12.lookup_tables(seed)[i]` rebuilds it.

# %%
def build_lookup(ks, vs, vocab_size, block_size):
    return None  # your code here

check('12.4', build_lookup)


# %% [markdown]
# ## Puzzle 12.5 · Beat the attention-only adder of puzzle 6.12 (budget: 1 layer, no MLP, fewer than the record's non-zero parameters)
#
# Answer `[i, j]` with `(i + j) % 10` for all 100 pairs of digits, at the last position,
# with one layer whose MLP is off (`M1`, `b1`, `M2` all zero; `b2` may stay), and fewer
# non-zero parameters than `taotp.build_attention_only_mod_transformer()`.

# %%
def build_attention_adder():
    return None  # your code here: a params dict with vocab_size >= 10, block_size >= 2

check('12.5', build_attention_adder())


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 12`.

# %% tags=["nbval-ignore-output"]
progress(12)
