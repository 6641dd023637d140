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
# # Puzzles, Chapter 8: The TAOTP Interpreter
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/08_interpreter.ipynb)
#
# Four puzzles about programs written as bare numbers. Two have a checker: fill in the starter
# cell and run `check(...)`, which prints `PASS` or `NOT YET` with the first input that went
# wrong. The other two are experiments; the
# [solutions notebook](https://github.com/taotp/taotp-book/blob/main/solutions/08_interpreter.ipynb)
# shows worked answers. `taotp.load_program(text)` reads a program text and
# `taotp.interpreter.book_listing(name)` returns the book's printed listings (`'hello_world'`
# is Fig. 8.2, `'min'` is Fig. 8.3).
#
# Your answer runs in a separate process, on test cases that are partly drawn afresh on every
# check. A `NOT YET` names the input and what your code gave, never the expected answer; if
# your code raises, it shows the line, and `check(..., verbose=True)` adds the traceback.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp.exercises import check, progress

# %% [markdown]
# ## Puzzle 8.1 · A program of your own, in numbers only (open-ended)
#
# Write any program that does something you can describe in one sentence, directly as a TAOTP
# text: numbers typed by hand, no Python computing them. Load it with `taotp.load_program`
# and decode a few prompts to show that it does what you said.
#
# (no checker)

# %%
my_program_text = '''
{
    "tok_emb": [[1, -1]],
    "block_size": 4
}
'''
my_program = taotp.load_program(my_program_text)   # replace the text with yours
print(taotp.decode([0], my_program, max_steps=3).tolist())

# %% [markdown]
# ## Puzzle 8.2 · Edit the Hello World listing (open-ended)
#
# Take the printed Hello World program (below) and change it a little: a number, a row, the
# order of two rows. Before running it, write down what you expect it to print. Were you
# right? The token ids of this listing are l, H, space, r, W, !, d, o, e, `<bos>`, `<eos>`
# (0 to 10).
#
# (no checker)

# %%
symbols = taotp.interpreter.FIG_8_2_SYMBOLS
text = taotp.interpreter.book_listing('hello_world')
edited = text  # your edit here, e.g. text.replace('...', '...')
out = taotp.decode([9], taotp.load_program(edited), max_steps=13, eos=10)
print(''.join(symbols[t] if t < 9 else f'[{symbols[t]}]' for t in out))

# %% [markdown]
# ## Puzzle 8.3 · What does Fig. 8.3 compute? (budget: none)
#
# Here is the second listing of the chapter. Read the numbers and work out what the program
# does for any prompt of up to 8 tokens from 0..19, ideally **without running it**. Then
# answer with one letter of `CHOICES_8_3`, or with a Python function `f(tokens) -> token` that
# takes a list of token ids and returns the next token id (an int). The checker compares your
# answer with the program at full precision (the weights are printed to one decimal, which
# makes the printed program misbehave on some inputs) on 776 prompts: every prompt of 1 or 2
# tokens, 56 chosen ones of 3 to 8 tokens, and 300 random ones drawn afresh on every check.
# While your function is checked the package's forward pass is switched off: it has to say
# what the listing computes, not run it.

# %%
print(taotp.interpreter.book_listing('min'))

# %%
from taotp.exercises.ch08 import CHOICES_8_3
for letter, behaviour in CHOICES_8_3.items():
    print(letter, behaviour)

# %%
answer = None  # a letter such as 'a', or a function tokens -> next token

check('8.3', answer)


# %% [markdown]
# ## Puzzle 8.4 · A loader for compact programs (budget: none)
#
# The book's loader (Fig. 8.1) needs every field spelled out, and it even trips over its own
# second listing. Write `my_compile(text)` that returns a params dict (NumPy float64 arrays,
# as `taotp.load_program` returns) and
#
# * reads both printed listings (Fig. 8.2 has no `out_emb`: tie it to `tok_emb`; Fig. 8.3 has
#   layer-norm dicts and an empty MLP written as `"M2": []`, which must become shape
#   `(0, d_model)`);
# * fills in defaults: missing `ln1`, `ln2`, `lnf` mean gamma 1, beta 0; a missing `layers`
#   key means no layers; `"block_size": B` instead of `pos_emb` means a zero (B, d_model)
#   table;
# * reads a number in any form JSON allows, with an exponent too (`1e-05`, as `repr` writes
#   small floats, or `2E3`, `-2.5E+3`);
# * raises an exception (an `Exception`, not `SystemExit`) with a message on malformed texts
#   (ragged rows, wrong shapes, unknown keys, numbers that are not finite, a string, `true`,
#   `false` or `null` where a number belongs, a `block_size` that is not a positive whole
#   number or contradicts `pos_emb`) instead of returning something broken;
# * never executes the text: a text holding code (`[[1.0, -1.0]] * 2`, a call) is refused.
#
# The checker compares your params with the full forms, bit for bit, on the two listings, on
# five compact forms of one small program, and on a dumped random program and 12 random compact
# programs drawn afresh on every check, with ints, floats and numbers with an exponent (a
# `NOT YET` names a call that rebuilds them, such as `ch08.random_programs(1234)`); then it
# feeds 11 malformed texts, 75 more drawn afresh (random programs broken one way each, among
# them a wrong trailing size and a wrong depth in each field, a wrong leading size or head
# count, an empty field, a layer norm of the wrong shape, a NaN and an infinity in a layer
# norm, a `block_size` one above and one below the rows of `pos_emb`, and a word for a number
# in each kind of place: `ch08.malformed_programs(seed)`) and 11 texts holding code
# (4 drawn afresh: `ch08.code_programs(seed)`; three end the process that runs them or never
# return, so running one is seen however it is hidden).
# (`taotp.load_program` is the package's answer, not yours: it and its parser are switched off
# while your loader is checked.)

# %%
def my_compile(text):
    """TAOTP text -> params dict, with defaults for omitted fields."""
    return None  # your code here


check('8.4', my_compile)


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 8`.

# %% tags=["nbval-ignore-output"]
progress(8)
