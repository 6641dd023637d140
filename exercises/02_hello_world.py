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
# # Exercises 2 · Hello World
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/02_hello_world.ipynb)
#
# Fill in each starter cell and run the `check` line below it. A checker prints `PASS` with
# what it verified, or `NOT YET` with the first input that went wrong and what your answer
# gave there (if your code raised, the line that raised; `check(..., verbose=True)` adds the
# whole traceback). Your answer runs in a separate, fresh process, so only the answer itself
# counts, and the repeater puzzles are tried on cases drawn afresh on every check. Token ids
# for Hello World come from `taotp.hello_world.message_tokenizer(message)` (`<bos>` = 0,
# `<eos>` = 1, then the characters in order of first appearance); you may instead pass
# `(params, tokenizer)`, with a tokenizer that gives every symbol of the message its own id
# (only `<bos>` and `<eos>` may share one). Parameters are counted on the arrays you pass,
# Python lists included, and the checkers run exactly what they counted.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp.exercises import check, ch02, progress


# %% [markdown]
# ## Puzzle 2.1 · Repeat the last token (budget: 0 layers, at most 3 · vocab_size parameters)
#
# Write `build(vocab_size)` returning a params dict: a 0-layer program that, after any
# prompt, keeps printing the prompt's last token forever, for any `vocab_size`. Apart from an
# all-zero `pos_emb` (any `block_size`), it may use at most `3 * vocab_size` parameters as
# counted by `taotp.count_params` (a tied `out_emb` is counted once). The checker builds it
# for `vocab_size` 1, 2, 3, 4, 8, 11, 16, 32, 40, 64, 100, 128, 256, 257, 512, 1,000,
# 1,001 and 1,024, for 323, 667, 1,147, 1,763, 2,491 and 3,599 (each prime from 17 to 61
# divides one of them), and for sizes drawn afresh on every check: two between 5 and 1,024,
# one between 1,025 and 2,048, one between 2,049 and 4,096 and one that is a multiple of a
# prime from 67 to 4,096; at each size it puts every token last in a random prompt once (256
# of them past 2,048) and decodes a few prompts for up to 32 steps.

# %%
def build_repeater(vocab_size):
    return None   # your program here


# %%
check('2.1', build_repeater)


# %% [markdown]
# ## Puzzle 2.2 · Sparse versions (budget: V resp. V + B non-zero parameters)
#
# (1) The repeater again, now with at most `vocab_size` non-zero parameters (checked at the
# sizes of 2.1 up to 2,048 but 512 and 1,024, three of them drawn afresh). (2) Hello World
# with at most `vocab_size + block_size` = 11 + 13 = 24 non-zero parameters. (3) How many
# parameters, zeros included, do your two programs have? (The checker prints them, at sizes
# 11 and 1,000.) Answer with the pair `(build_sparse_repeater, hello_params)`.

# %%
def build_sparse_repeater(vocab_size):
    return None   # your program here

sparse_hello = None   # a params dict (or (params, tokenizer)) printing Hello World

# %%
check('2.2', (build_sparse_repeater, sparse_hello))

# %% [markdown]
# ## Puzzle 2.3 · Train it (no size limit: how small can it be?)
#
# Instead of setting the weights, learn them: train a transformer with gradient descent to
# print "Hello World!" from `<bos>`, with the message tokenizer (11 symbols, 13 positions).
# How small can it be and still learn? The check runs your params dict from `<bos>`, wants
# "Hello World!" then `<eos>`, and reports its size; it judges the result, not how you got it.
#
# Two harnesses: `taotp.hello_world.train_hello_world` trains the tied 0-layer model in
# NumPy (gradients worked out by hand); `training.train_hello_world_torch(d_model, n_layers,
# steps, lr, seed)` trains the book's architecture at any size with PyTorch, an optional
# extra (`pip install "taotp[train]"`; Colab has it).

# %%
from taotp.exercises import training
TRAIN = False   # True: train with PyTorch (the training extra); about a second
trained = None  # your trained params here
if TRAIN:
    trained, history = training.train_hello_world_torch(d_model=3, n_layers=0, steps=1000,
                                                        lr=0.05)
    print(history, '->', training.hello_world_output(trained))
check('2.3', trained)

# %% [markdown]
# ## Puzzle 2.4 · No position embedding (budget: pos_emb all zero)
#
# With `pos_emb` all zero, print `Hel Word!` (the symbols H, e, l, ␣, W, o, r, d, ! never
# repeat) then `<eos>`. You may untie `out_emb` from `tok_emb`. Use
# `taotp.hello_world.message_tokenizer('Hel Word!')` for the ids.

# %%
hel_word = None   # your params here

# %%
check('2.4', hel_word)

# %% [markdown]
# ## Puzzle 2.5 · No position embedding, repeated symbols (budget: pos_emb all zero)
#
# Now the full "Hello World!" with an all-zero `pos_emb`. The symbol `l` is followed by `l`,
# `o` and `d` at different places, so the current token alone cannot decide; you will need
# at least one layer to work out where you are.

# %%
hello_no_pos = None   # your params here

# %%
check('2.5', hello_no_pos)

# %% [markdown]
# ## Puzzle 2.6 · RMSNorm (answer: a number, or a program)
#
# If the model used RMSNorm (no centring) instead of layer norm, one dimension would be
# freed. How many parameters would Hello World need then (message tokenizer: 11 symbols, 13
# positions)? Answer with the number (a plain `int`), or with a program that prints Hello
# World under `taotp.decode(..., norm='rms')` using that many parameters. The checker keeps
# only a salted digest of the answer: it says whether yours is right, with a hint for a few
# common slips, and never whether the right count is larger or smaller.

# %%
rms_answer = None   # a number or a params dict

# %%
check('2.6', rms_answer)

# %% [markdown]
# ## Puzzle 2.7 · Integer parameters only
#
# Print "Hello World!" with every entry of every embedding and layer an integer (layer-norm
# gamma and beta are not parameters here, as in the book's count).

# %%
hello_int = None   # your params here

# %%
check('2.7', hello_int)

# %% [markdown]
# ## Puzzle 2.8 · Positive parameters only
#
# Print "Hello World!" with every entry of every embedding and layer strictly positive
# (layer-norm gamma and beta are not parameters here).

# %%
hello_pos = None   # your params here

# %%
check('2.8', hello_pos)


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 2`.

# %% tags=["nbval-ignore-output"]
progress(2)
