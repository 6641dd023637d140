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
# # Puzzles for Chapter 9: Multi-Operand Addition with Position Coupling
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/exercises/09_position_coupling.ipynb)
#
# Each checked puzzle ends with `check("9.N", your_answer)`, which prints `PASS` with what
# was checked or `NOT YET` with the first input that broke. Unfinished answers are fine.
# Worked solutions are in `solutions/09_position_coupling.ipynb`.
#
# Each check runs your answer in a fresh process on cases drawn anew every time. Only the
# examples printed in a statement show the expected value when they fail; any other failing
# case shows its input, what your answer gave and the rule it breaks. Where the package
# already holds the answer (`taotp.coupling`), those functions are switched off while your
# answer is checked. If your code raises, the message names the line;
# `check(..., verbose=True)` adds the whole traceback.
# Formats use the chapter's glyphs: `>` between running sums, `*` for multiplication, `$`
# for BOS/EOS (never part of a format string below).

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
# ## Puzzle 9.1 · Parity scratchpad and coupled IDs (budget: none)
#
# Write `parity_sequence(bits, s)` for a bit string like `'0101'` and an offset `s >= 1`.
# Return `(tokens, ids)`: the tokens of `bits = running parities`, one character each, and
# one position ID per token (a list of ints), coupling query bit $k$ with scratchpad bit $k$.
# Example: `parity_sequence('0101', 1)` gives the tokens `0101=0110` and the IDs
# `[2, 3, 4, 5, 1, 2, 3, 4, 5]`. Checked on 40 strings of 1 to 100 bits with offsets up to
# 59.

# %%
def parity_sequence(bits, s):
    return None  # your code here

check('9.1', parity_sequence)


# %% [markdown]
# ## Puzzle 9.2 · The addition format (budget: none)
#
# `scratchpad_text(operands)` returns the whole string, e.g. `[57, 48, 96]` ->
# `057+048+096=000>750>501>102`: every number padded to the digits of
# $(10^L - 1)\cdot m$ ($L$ the longest operand), operands plain, running sums from
# $b_0 = 0$ reversed. Checked on 70 lists of 1 to 101 operands (every padding boundary,
# operands of up to 25 digits, sums past $2^{63}$).

# %%
def scratchpad_text(operands):
    return None  # your code here

check('9.2', scratchpad_text)


# %% [markdown]
# ## Puzzle 9.3 · Bi-level position IDs (budget: none)
#
# `bilevel_ids(operands, s1, s2)` returns `(level1, level2)`, two lists of ints, one ID per
# character of the string of 9.2: significance (separators $s_1$, a digit worth $10^j$ gets
# $s_1 + 1 + j$) and which number ($a_i$ and $b_{i-1}$ share $s_2 + i - 1$). Example:
# `[57, 48, 96]` with offsets (1, 1) gives `432143214321234123412341234` and
# `111122223331111222233334444` (as digit strings). Other offsets go up to 40.

# %%
def bilevel_ids(operands, s1, s2):
    return None  # your code here

check('9.3', bilevel_ids)


# %% [markdown]
# ## Puzzle 9.4 · Multiplication: two-stage scratchpad and tri-level IDs (budget: none)
#
# `multiplication_sequence(a, b)` returns `(text, level1, level2, level3)` (a string and three
# lists of ints) with all offsets 1: `37*925=581+470+333=58100>52900>52243`, levels
# `3200001234...`, `0003211111...`, `0000001234...` (see the chapter). Checked on 42 products,
# 6 of them with factors of up to 12 digits (two with products past $2^{63}$).

# %%
def multiplication_sequence(a, b):
    return None  # your code here

check('9.4', multiplication_sequence)


# %% [markdown]
# ## Puzzle 9.5 · Which keys? (budget: none)
#
# `keys(operands, index)` gets a position (0-based, in the string of 9.2) from the `=` on
# and returns the positions of the two digits the next token needs (offsets 1, 1), as a list
# in any order. Example: `keys([57, 48, 96], 23)` is `[10, 20]` (the `>` before $b_3$ needs
# the units of 96 and of 501). Checked at every such position of 21 problems.

# %%
def keys(operands, index):
    return None  # your code here

check('9.5', keys)


# %% [markdown]
# ## Puzzle 9.6 · Hypercube codes (budget: none)
#
# `cube(D, k)` for $1 \le k \le 2^D$ returns an array of $D$ signs $(-1)^{\beta_i}$ of the
# $D$-bit binary expansion of $k - 1$, most significant bit first; e.g. `cube(3, 2)` is
# `[1, 1, -1]`. Checked on every code up to $D = 6$ and, for every width from 7 to 32, on
# the ends, every code with one bit set or one bit clear, one with each other count of bits
# set and 8 random codes.

# %%
def cube(D, k):
    return None  # your code here

check('9.6', cube)


# %% [markdown]
# ## Puzzle 9.7 · Head 1, the digit-pair sum (budget: one head)
#
# Layout (0-based): `NUM` 0, `IS_BOS` 1, `ONES` 2, then 16 more token dimensions, then
# `POS1` ($P_1$), `POS1_NEXT` ($P_1$), `POS2` ($P_2$), `POS2_NEXT` ($P_2$), so
# $d = 19 + 2P_1 + 2P_2$. Return `(Wq, Wk)`, two arrays of shape `(d, k)` for any `k`. The
# checker runs them as one head of the book's attention (`taotp.model.self_attn`: scores
# `(x Wq)(x Wk)^T / sqrt(k)`, causal softmax) on the adder's embeddings `x`, with value
# `3 NUM`, and compares `PRE_SUM` with the chapter's head 1 (within 0.01) at every response
# position of six problems each for the chapter's example ($P_1 = 3$, $P_2 = 2$, `lam` = 20),
# four sizes and scales drawn afresh (`lam` from 2.5 to 30) and a size with $P_1 = 6$, then of
# two problems (all nines, and one drawn) at sizes with $P_1$ = 7 and 8 and $P_2$ = 7 and 8.

# %%
def head1(P1, P2, lam):
    return None  # your code here

check('9.7', head1)


# %% [markdown]
# ## Puzzle 9.8 · The carry identity (budget: none)
#
# `carry_out(pair_sum, written_digit)` returns 0 or 1: the carry a place sends up, from the
# sum of its two digits and the digit the model wrote there (no access to the incoming
# carry!). Checked on all 38 pairs that can occur.

# %%
def carry_out(pair_sum, written_digit):
    return None  # your code here

check('9.8', carry_out)


# %% [markdown]
# ## Puzzle 9.9 · Flags (budget: at most 2 ReLUs)
#
# Write the flag units as a small ReLU MLP: give its weights `(M1, b1, M2, b2)`, shapes
# `(2, h)`, `(h,)`, `(h, 2)`, `(2,)` with `h <= 2`, so that
# `[ARROW, EOS] = relu([PRE_ARROW, PRE_EOS] @ M1 + b1) @ M2 + b2`. The readout scores a digit
# 1, the separator `10 * ARROW` and EOS `100 * EOS`. The checker feeds the values heads 3 and 4
# produce at every response position of 31 problems (every count of 1 to 12 operands, zeros,
# all nines) and four random ones. The chapter's bias-free model needs a third unit; you have
# `b2`.

# %%
flag_mlp = None  # (M1, b1, M2, b2)

check('9.9', flag_mlp)


# %% [markdown]
# ## Puzzle 9.10 · The digit MLP (budget: at most 80 ReLUs)
#
# Give the weights `(M1, b1, M2, b2)` of a ReLU MLP, shapes `(3, h)`, `(h,)`, `(h, 10)`,
# `(10,)` with `h <= 80`: from `[PRE_SUM, PRE_CARRY, NUM]` it must compute 10 numbers that are
# exactly one-hot (to 1e-6) at the next digit, even when `PRE_SUM` is off by up to 0.15
# either way, for every pair sum, previous pair sum and carry. The chapter's units (offset
# 0.21) allow only 0.11 below the pair sum.

# %%
digit_weights = None  # (M1, b1, M2, b2)

check('9.10', digit_weights)


# %% [markdown]
# ## Puzzle 9.11 · Assemble the adder (budget: 1 layer, 4 heads, 83 ReLUs, d = 19 + 2P1 + 2P2)
#
# `build(max_digits, max_operands)` returns a book-format params dict (vocabulary
# `0123456789+=>$`, `pos_emb` a list of two tables: level 1, level 2) of the paper's model,
# which has no layer norms: the checker runs it with `taotp.transformer(..., norm='none')` and
# the IDs of `taotp.coupling.coupled_ids` (offsets 1, 1). It must write every response token
# after `=`, then `$`, on every problem up to `max_operands` numbers of `max_digits` digits
# (checked for `build(8, 8)`, `build(3, 12)`, `build(1, 1)`, one size up to (7, 12) and one
# up to (30, 30) drawn afresh, and sizes whose padding $\ell$ is 3, 4, 7, 8, 15, 16, 31 and
# 32, where $\ell + 1$ or $\ell$ is a power of two), within the theorem's budget: one layer,
# four heads, 83 ReLUs and the width of 9.12. Assemble it from your pieces: the package's own
# builders are switched off.

# %%
def build(max_digits, max_operands):
    return None  # your params dict here

check('9.11', build)


# %% [markdown]
# ## Puzzle 9.12 · Size calculator (budget: none)
#
# `size(n, m)` returns four ints `(ell, P1, P2, d_model)` for up to `m` operands of up to `n`
# digits, with the proof's padding $\ell = n + 1 + \lfloor\log_{10} m\rfloor$ and a code
# width that works. Its answers for the five sizes of the chapter's table (*How big is it?*)
# are shown when wrong, e.g. `size(2, 3)` is `(3, 3, 2, 29)` and `size(30, 30)` is
# `(32, 6, 5, 41)`; the other sizes (boundaries of both code widths at every power of two up
# to $2^{40}$, `m` next to every power of ten up to $10^{12}$, and random ones up to a
# million) are drawn afresh.

# %%
def size(n, m):
    return None  # your code here

check('9.12', size)

# %% [markdown]
# ## Puzzle 9.13 · Find the bug (budget: at most 20 operands of 20 digits)
#
# Give a list of operands on which the paper's literal code width
# ($P_1 = \lceil\log_2 \ell\rceil$) makes the adder fail, although the paper's own condition
# $\ell + 1 \le 2^{P_1}$ holds ($n$, $m$ and $\ell$ are those of your operands). Where
# $\ell$ is a power of two that condition fails already: a rounding slip, not the bug.

# %%
operands = None  # your answer

check('9.13', operands)

# %% [markdown]
# ## Puzzle 9.14 · The smallest exact lambda (budget: grid step 0.25)
#
# Give `(operands, lam)` such that the adder is exact at `lam` and not at `lam - 0.25`.

# %%
answer = None  # your answer: (operands, lam)

check('9.14', answer)


# %% [markdown]
# ## Puzzle 9.15 · Base b (budget: two trapezoids per digit)
#
# In base $b$ the digit units use $g = S + (\text{PRE\_CARRY} - \text{NUM})/b + c_0$ and
# trapezoids with plateau $[k, k + w]$ (and $[k + b, k + b + w]$), ramps of width $r$.
# `shape(b) -> (w, r, c0)` (three numbers) must give an **exactly** one-hot digit block in
# every base $b \ge 2$, even when the pair sum $S$ is off by up to 0.02 (checked for every
# base from 2 to 16, 20, 36, 60 and two more drawn below 50, then in base 100 and one drawn
# up to 1,000 on sampled sums). (Base 10's shape is not enough for base 2.)

# %%
def shape(b):
    return None  # your code here

check('9.15', shape)

# %% [markdown]
# ## Puzzle 9.16 · Design your own: parity (budget: 1 layer)
#
# Build a book-format program that writes the running parities and then `$`: token ids
# 0 1 2 3 for `0 1 = $`, one position table of at least 102 rows, indexed by the position
# IDs of `taotp.coupling.parity_positions` (`$` gets ID 0, `=` ID 1, bit $k$ of the query and
# of the scratchpad ID $k + 1$). The checker feeds `$ bits = parities` (without the final
# `$`) to `taotp.transformer(seq, **params, positions=ids)`, the book's PreLN model with its
# layer norms (the default `norm='layer'`), and reads the argmax at `=` and at every
# scratchpad bit: each must be the next running parity, and `$` after the last. For `0101`
# that is `0110$`; 107 more strings are tried, a random one of every length from 1 to 100
# among them, drawn afresh. Hint: the token with ID $p$ needs the query bit with ID $p + 1$
# and its own bit.

# %%
params = None  # your program

check('9.16', params)


# %% [markdown]
# ## Puzzle 9.17 · Without the scratchpad, fan-in grows (budget: none)
#
# In the single-level baseline (`taotp.coupling.baseline_sequence`), which query positions
# does answer digit `j` (worth $10^j$) depend on? Return them as a list of ints (0-based
# positions in the baseline's token list, any order). Checked on every digit of 20 problems.

# %%
def needed(operands, j):
    return None  # your code here

check('9.17', needed)


# %% [markdown]
# ## Puzzle 9.18 · Count the parameters (budget: none)
#
# `counts(n, m)` returns two ints `(total, non_zero)`: the parameters of
# `taotp.coupling.build_multi_operand_adder(n, m)` in the book's census, computed by hand
# from the construction's shapes (the code widths of Puzzle 9.12 give all of them), without
# building the program: the package's builders and size functions are switched off while it
# is checked. Example: `counts(2, 3)` is `(7739, 555)`; the other sizes (both code widths'
# boundaries at every power of two up to $2^{40}$, and at `m` next to every power of ten up to
# $10^{12}$) reach a billion operands of a billion digits. Compare with `taotp.count_params` outside your answer.

# %%
def counts(n, m):
    return None  # your code here

check('9.18', counts)

# %% [markdown]
# ## Puzzle 9.19 · Port to PreLN (budget: 1 layer, 4 heads, book format)
#
# `port(max_digits, max_operands)` returns a params dict for the book's `transformer` (PreLN,
# layer norms included) with two position tables (level 1, level 2) that adds up to
# `max_operands` numbers of `max_digits` digits, with one layer and four heads. The checker
# runs it teacher-forced with IDs from `taotp.coupling.coupled_ids` (vocabulary
# `0123456789+=>$`), for `port(4, 4)`, one size up to (3, 3) and one up to (30, 30) drawn
# afresh, and the sizes of 9.11 whose $\ell$ is next to a power of two. The package's own
# port is switched off: start from your adder of 9.11.

# %%
def port(max_digits, max_operands):
    return None  # your params dict here

check('9.19', port)


# %% [markdown]
# ## Your progress
#
# Every verdict above is remembered between sessions (a small file in your data folder),
# so this table also shows what you solved earlier. On the command line:
# `python -m taotp progress 9`.

# %% tags=["nbval-ignore-output"]
progress(9)
