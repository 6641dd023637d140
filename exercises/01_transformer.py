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
# # Puzzles for Chapter 1: The Transformer
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/01_transformer.ipynb)
#
# Each checked puzzle ends with `check("1.N", your_answer)`. It prints one line: `PASS`
# with what exactly was checked, or `NOT YET` with the input that broke and what your
# answer gave there (and the line of your code when it raised; `verbose=True` adds the
# traceback). Your answer runs in a separate process on cases drawn anew for every check:
# the random programs come from a fresh seed, which a NOT YET names, and
# `taotp.exercises.ch01.case_programs(seed)` rebuilds them so you can study the case.
# Unfinished answers are fine: the checkers report, they never crash. Reflection puzzles
# have no checker; their discussion is in `solutions/01_transformer.ipynb`. Run
# `progress()` at the end for a summary.

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
# ## Puzzle 1.1 · How short can it get? (open-ended, no checker)
#
# The forward pass in `taotp/model.py` is about thirty readable lines. How far can you
# shrink it while it still computes the same logits? How far if you stop caring about
# readability? (You can test a candidate against `taotp.transformer` on
# `taotp.random_params(np.random.default_rng(0))`.)

# %% [markdown]
# ## Puzzle 1.2 · A two-line attention (no checker)
#
# Here is a compact alternative to `self_attn`, with its parentheses repaired (the printed
# version puts `axis=1` inside the wrong call):
#
# ```python
# def attn_two_lines(x, Q, K, V, P, mask):
#     a = softmax(np.where(mask[..., None], np.einsum('ia,jb,hac,hbc->ijh', x, x, Q, K), -1e20), axis=1)
#     return np.einsum('ijh,jb,hbc,hdc', a, x, V, P)
# ```
#
# (We renamed the einsum letters; the book calls this function `self_attn2`.)
#
# List every way in which it differs from ours. Try it before reading the solution.

# %% [markdown]
# ## Puzzle 1.3 · Stop recomputing the past (budget: same tokens; a long run within 5x the CPU time of a cache)
#
# The naive decoding loop runs the whole transformer on the whole sequence for every new
# token. Write `decode_fast(tokens, params, max_steps, eos)` that returns exactly what
# `taotp.decode(tokens, params, max_steps, eos, cache=False)` returns (the prompt and
# the new tokens, as a list of ints), without repeating work for positions it has
# already processed. The checker compares tokens on eight random programs (up to full
# blocks, with and without `eos`; one attends as sharply as the book's hardened
# programs, one has a stream that spreads only $10^{-8}$ to $10^{-6}$, and one has
# `out_emb` all zeros, so that every logit ties: where logits tie, the new token is the
# first of them, as `np.argmax` picks), and on a program
# that repeats, at every step, the token at one position of its prompt: a prompt of 40 to
# 60 tokens with that position at least 32 before its end, then prompts 8 to 16 tokens
# short of a full block, at a block of 700 to 2,048 with the position 660 or more before
# the end, and at a block of 2,048 (the largest tried) with the position among the first
# five, so a cache must keep every position. Then it runs your decoder for 500 to 600
# steps on a fresh program with `d_model` 128 and measures its CPU time (the time of its
# own process, so other work on the machine counts little): at most 5x what the package's
# own cache takes for the same run. At that length the naive loop redoes about 300
# positions per token, 12x the work of a cache or more. `taotp.layer_norm` and
# `taotp.softmax` are yours to use; the package's decoders and forward pass
# (`taotp.decode`, `taotp.KVCache`, `taotp.transformer`) are switched off while this
# puzzle is checked.

# %%
def decode_fast(tokens, params, max_steps, eos=None):
    return None  # your code here

check('1.3', decode_fast)


# %% [markdown]
# ## Puzzle 1.4 · Matrix products instead of einsum
#
# Re-implement `transformer(tokens, tok_emb, pos_emb, out_emb, layers, lnf)` using `@`
# wherever you can (everywhere: the checker refuses `np.einsum`, and the packages of
# other libraries with an einsum: `torch`, `jax`, `tensorflow`, `opt_einsum`). It must
# return the same logits as `taotp.transformer` to 1e-9, on programs with several layers
# and heads, layer norms with vector gamma and beta, even a layer without heads, attention
# scores as large as the book's hardened programs have ($10^3$ to $10^{20}$), and a stream
# that spreads only $10^{-8}$ to $10^{-6}$, where the layer norm's $10^{-10}$ counts. Inputs
# run from 1 token to a full block, at blocks of 24, of 65 to 400 and of 1,024 (the
# largest tried).
# `taotp.layer_norm` and `taotp.softmax` are yours to use; the package's forward pass,
# `np.einsum` and those packages are switched off while this puzzle is checked.

# %%
def transformer_at(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    return None  # your code here

check('1.4', transformer_at)


# %% [markdown]
# ## Puzzle 1.5 · Another language (no checker)
#
# Port the forward pass to another language (C, Rust, JavaScript, ...). How short and how
# fast can you make it?

# %% [markdown]
# ## Puzzle 1.6 · Temperature sampling
#
# Write `sample_decode(tokens, params, max_steps, temperature, rng)` that returns the
# prompt followed by `max_steps` tokens, each sampled from
# $\operatorname{softmax}(\text{logits}/T)$ of the sequence so far, using the
# `numpy.random.Generator` it is given (no global random state), for any $T$ from
# $10^{-300}$ to $10^{300}$. Near $T = 0$ it must agree with greedy decoding (checked at a
# $T$ drawn from $10^{-5}$ to $10^{-3}$). The checker samples 300 seeded runs of 8 steps at
# a $T$ drawn from 0.2 to 0.5 and at one drawn from 0.5 to 2 on the program
# `taotp.exercises.ch01.sampling_program()`, then on four of its family drawn afresh with a
# new vocabulary, prompt and length: one at a $T$ from 2 to 3 with $10^{3.5}$ to $10^5$ added
# to every logit (the law is the same; a softmax that does not subtract the max overflows),
# and three with 24 to 64 tokens, their logits scaled down so that their laws are as spread
# as there: one at a $T$ from $10^{-3}$ to 0.2, one (100 runs) at the $T$ of the greedy
# check, and one whose 300 runs each get a $T$ of their own, with `out_emb` multiplied by
# that $T$ so that every run has one law (its law at $T = 1$, sharper than the others: it
# is scaled for $T = 2.5$): a third from $10^{-300}$ to $2 \cdot 10^{-300}$, a third from
# $5 \cdot 10^{299}$ to $10^{300}$, the rest one in each hundredth of the decades between
# (`fresh_sampling_program(seed, offset=...)` and
# `fresh_sampling_program(seed, T, vocab)` return the program, prompt, steps and $T$). It
# replays a few runs of each with the same seed to see that your sampler draws from its rng
# alone. It compares the frequency of every
# token at every step with the laws your sampler should have used, how often tokens of
# each probability are drawn, and whether your draws are too flat or too sharp for $T$; a
# right sampler fails with probability below $10^{-6}$.
# The package's own sampler (`taotp.decode(..., temperature=T)`) is switched off while this
# puzzle is checked; `taotp.transformer` gives you the logits.

# %%
def sample_decode(tokens, params, max_steps, temperature, rng):
    return None  # your code here

check('1.6', sample_decode)


# %% [markdown]
# ## Puzzle 1.7 · Decoding past the block size
#
# `taotp.decode` refuses to go beyond `block_size` positions. Write
# `decode_window(tokens, params, n_steps)` that always feeds the transformer the last
# `block_size` tokens (positions 0 to `block_size - 1`) and so can run for any number of
# steps, from any prompt (even one longer than the block). It returns the prompt followed
# by `n_steps` new tokens, as a list of ints. Build it on `taotp.transformer`;
# `taotp.decode(..., window=True)` already does this, so it is switched off while this
# puzzle is checked. The checker tries block sizes 1, 3, 5, 8 and 24, up to 120 steps, and
# block size 4 on a program whose logits all tie (`out_emb` all zeros: the argmax is the
# first of tied tokens, as `np.argmax` picks), and, on a program that repeats the oldest
# token of its window, a block size drawn from 65 to 300 (100 steps) and block size 1,024,
# the largest it tries (10 steps).

# %%
def decode_window(tokens, params, n_steps):
    return None  # your code here

check('1.7', decode_window)


# %% [markdown]
# ## Puzzle 1.8 · Scrambling the residual basis
#
# Write a function `scramble_transformer` that takes a program's five pieces (`tok_emb`,
# `pos_emb`, `out_emb`, `layers`, `lnf`) and a matrix `M`, and returns the five pieces
# rewritten, in the same order, so that the new token embedding is `tok_emb @ M` and the
# logits stay exactly the same. Return new arrays and leave the ones you were given
# untouched: the original program must still work afterwards. Which weights have to
# change? The checker uses orthonormal matrices `M` that also map $(1, \dots, 1)$ to
# itself, and programs whose layer norms have scalar gamma and beta. Why does `M` have to
# fix $(1, \dots, 1)$? What goes wrong for a general orthonormal `M`, or for one that is not
# orthonormal at all?

# %%
def scramble_transformer(tok_emb, pos_emb, out_emb, layers, lnf, basis):
    return None  # your code here

check('1.8', scramble_transformer)

# %% [markdown]
# ## Puzzle 1.9 · Place your bets (no checker)
#
# Before reading on, guess: how many layers will the book's programs use on average? How
# wide will the residual stream be? How many parameters, and what fraction of them zero?
# Attention or MLP, which gets used more? Write your guesses down and compare them with the
# index of programs at the end of the book.

# %% [markdown]
# ## Puzzle 1.10 · A better architecture? (open-ended, no checker)
#
# What would you change in the transformer to make it better? Answer now, and again after
# the last chapter.


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 1`.

# %% tags=["nbval-ignore-output"]
progress(1)
