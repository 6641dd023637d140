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
# # Solutions, Chapter 8: The TAOTP Interpreter
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/solutions/08_interpreter.ipynb)
#
# Worked answers to the four puzzles of the
# [exercises notebook](https://github.com/taotp/taotp-book/blob/main/exercises/08_interpreter.ipynb).
# Spoilers, obviously.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp.exercises import check, keep_progress
keep_progress(False)   # running the reference solutions does not solve your puzzles

# %% [markdown]
# ## Puzzle 8.1 · A program of your own, in numbers only (open-ended)
#
# The chapter wrote a counter modulo 3 in three dimensions. Two dimensions are enough for a
# counter modulo 2, and here the collapse that layer norm causes in $\mathbb{R}^2$ is a
# feature: every vector with $x > y$ becomes $(1,-1)$ and every vector with $x < y$ becomes
# $(-1,1)$. Token 0 points along $(1,-1)$, token 1 along $(-1,1)$, and the output rows are
# swapped, so each token predicts the other one. The program alternates forever, whatever
# the prompt ends with. Only 8 numbers are typed (4 in `tok_emb`, 4 in `out_emb`); the
# 20 zeros of `pos_emb` come from `block_size`.

# %%
flip_flop_text = '''
{
    "tok_emb": [[1, -1], [-1, 1]],
    "out_emb": [[-1, 1], [1, -1]],
    "block_size": 10
}
'''
flip_flop = taotp.load_program(flip_flop_text)
for prompt in ([0], [1], [1, 1, 0]):
    print(prompt, '->', taotp.decode(prompt, flip_flop, max_steps=10 - len(prompt)).tolist())
print(taotp.count_params(flip_flop))

# %% [markdown]
# A less trivial one, with a layer: **"was there a 1 in the prompt?"**. After the prompt the
# program prints 1 if the prompt contained a 1, else 0, and keeps printing it. The two tokens
# are the points $t_0=(0,1,-1)$ and $t_1=(1,0,-1)$ of the layer-norm plane, 60° apart, and
# the readout is tied to them.
#
# * Query: the third coordinate with a minus sign, $-10\,x_3$. Both tokens have $x_3=-1$, so
#   the query is the same positive number everywhere. (Had we put the tokens at opposite
#   points, no linear query could be constant: it would change sign with the token.)
# * Key: $100\,(x_1-x_2)$ is $+100$ for $t_1$ and $-100$ for $t_0$, so any 1 in the prompt
#   wins the attention outright; with no 1 the weights spread over the zeros.
# * Value: $x_1$, which is 1 for $t_1$ and 0 for $t_0$; projection: $10^3\,t_1$. A position
#   that saw a 1 receives a huge $t_1$ and reads out 1; otherwise nothing is added and the
#   stream is just $t_0$, which reads out 0.

# %%
seen_one_text = '''
{
    "tok_emb": [[0, 1, -1], [1, 0, -1]],
    "block_size": 8,
    "layers": [{
        "Q": [[0], [0], [-10]],
        "K": [[100], [-100], [0]],
        "V": [[1], [0], [0]],
        "P": [[1000], [0], [-1000]]
    }]
}
'''
seen_one = taotp.load_program(seen_one_text)
import itertools
for n in range(1, 6):
    for prompt in itertools.product([0, 1], repeat=n):
        out = taotp.decode(list(prompt), seen_one, max_steps=8 - n)
        assert set(out[n:].tolist()) == {int(1 in prompt)}, (prompt, out)
for prompt in ([0, 0, 0], [0, 1, 0], [1, 0, 0, 0]):
    print(prompt, '->', taotp.decode(prompt, seen_one, max_steps=4).tolist())
print('checked every prompt of 1 to 5 tokens')

# %% [markdown]
# ## Puzzle 8.2 · Edit the Hello World listing (open-ended)
#
# Three edits, each with the prediction first and then the run.
#
# 1. **Swap two `pos_emb` rows.** Row $i$ holds the symbol printed after position $i$, so
#    swapping rows 9 and 10 (which print `l` and `d`) should give `Hello Wordl!`.
# 2. **Shrink one `pos_emb` row by a factor $10^6$.** The row of position 5 (which prints the
#    space) then has the same size as the token embedding of `o`, the token read there. The
#    stream is the sum of two unit-size vectors, so layer norm points it halfway between
#    `o` and the space; the readout then picks the symbol whose angle is closest to the
#    midpoint, neither `o` nor the space. What comes after is unchanged, because every
#    later position is again dominated by its own $10^6$-sized row.
# 3. **Round every weight to a whole number.** The 11 symbols would land on only a few
#    distinct integer points; we predict a garbled message.

# %%
symbols = taotp.interpreter.FIG_8_2_SYMBOLS
hello = taotp.load_program(taotp.interpreter.book_listing('hello_world'))


def show(params, steps=13):
    out = taotp.decode([9], params, max_steps=steps, eos=10)
    return ''.join(symbols[t] if t < 9 else f'[{symbols[t]}]' for t in out)


swapped = {**hello, 'pos_emb': hello['pos_emb'][[0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 9, 11, 12]]}
print('1. rows 9 and 10 swapped:', show(swapped))
shrunk = {**hello, 'pos_emb': hello['pos_emb'].copy()}
shrunk['pos_emb'][5] /= 1e6
print('2. row 5 divided by 1e6: ', show(shrunk))
rounded = {k: (np.round(v) if isinstance(v, np.ndarray) else v) for k, v in hello.items()}
print('3. every weight rounded:  ', show(rounded))
print('   distinct symbol points after rounding:', len({tuple(r) for r in rounded['tok_emb']}))

# %% [markdown]
# The first prediction holds. In the second the space turns into `W`, which on the circle
# lies between `o` and the space, and the rest of the message is untouched: a position only
# ever sees its own row and the token before it. The third shows how little room the
# construction leaves: with whole numbers the 11 symbols share 8 distinct points, and the
# message collapses after two symbols into `Ho` and an early `<eos>`.
#
# ## Puzzle 8.3 · What does Fig. 8.3 compute?
#
# Reading the listing top to bottom:
#
# * **20 tokens, all on one half-circle.** Each row of `tok_emb` has entries summing to 0
#   and squared length about 3: they are points on the $\sqrt3$-circle that layer norm fixes.
#   Their angles in that plane climb from about 8.6° to 171°, in order of the token id: an
#   ordered half-circle, the Chapter 5 encoding for numbers.
# * **`pos_emb` is zero**: the program ignores positions, so its answer can only depend on
#   which tokens appear (a symmetric function of the prompt).
# * **One head, no MLP.** `Q` maps a token at angle $\theta$ to the single number
#   $10^8\cdot 3\sin\theta$ (its first column is $10^8$ times the point at 90°), positive for
#   every token. `K` maps the token at angle $\phi$ to $3\cos\phi$ (its first column is the
#   point at 0°). The score of key $\phi$ is proportional to $\cos\phi$, which is largest for
#   the **smallest angle, the smallest token id**; with the factor $10^8$ the softmax is a hard
#   maximum.
# * `V` is the identity and `P` multiplies by $10^6$: the head copies the chosen token's point,
#   a million times larger than the current token. After the final layer norm the stream is
#   that point, and the tied readout names it.
#
# So the next token is **the smallest token seen so far**: this is the Min program of
# Chapter 5, `build_min_transformer(20, 8)`, with every weight truncated to one decimal. The
# truncation spoils the readout (the chapter measures about a third of random prompts answered
# off by one), which is why the checker compares with the full-precision program.

# %%
from taotp.exercises.ch08 import CHOICES_8_3
print('c:', CHOICES_8_3['c'])
result = check('8.3', 'c')
assert result
result = check('8.3', lambda tokens: min(tokens))
assert result

# %%
fig83 = taotp.load_program(taotp.interpreter.book_listing('min'))
e1, e2 = np.array([1, -1, 0]) / 2 ** 0.5, np.array([1, 1, -2]) / 6 ** 0.5
angles = np.degrees(np.arctan2(fig83['tok_emb'] @ e2, fig83['tok_emb'] @ e1))
print('token angles (degrees):')
print(np.array2string(angles, max_line_width=72, separator=', ', precision=1,
                      floatmode='fixed'))
print('angles increase with the id:', bool(np.all(np.diff(angles) > 0)))
layer = fig83['layers'][0]
print('query column / 1e8:', layer['Q'][0, :, 0] / 1e8, '| key column:', layer['K'][0, :, 0])

# %% [markdown]
# ## Puzzle 8.4 · A loader for compact programs
#
# `ast.literal_eval` already refuses anything that is not a literal, so it never runs code;
# what the book's loader lacks is defaults and checks. The answer below refuses any value
# that is not a dict, a list or a number (NumPy would read the string `"1.5"` as 1.5, and
# `True` as 1), fills the defaults, reshapes empty arrays, refuses unknown keys and a
# `block_size` that contradicts `pos_emb`, and lets `taotp.validate_params` reject every
# other malformed result. (The package's
# `taotp.load_program` does the same with its own parser, which also reports line numbers; it
# is the book's answer, so the checker switches it off while yours runs.)

# %%
import ast


def numbers_only(value):
    """Raise unless ``value`` holds only dicts, lists and numbers (a bool is not one)."""
    if isinstance(value, dict):
        return [numbers_only(v) for v in value.values()]
    if isinstance(value, list):
        return [numbers_only(v) for v in value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f'{value!r} is not a number')


def my_compile(text):
    """TAOTP text -> params dict, with defaults for omitted fields."""
    tree = ast.literal_eval(text)
    numbers_only(tree)
    if not isinstance(tree, dict) or 'tok_emb' not in tree:
        raise ValueError('a program is a dict with at least "tok_emb"')
    unknown = set(tree) - {'tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf', 'block_size'}
    if unknown:
        raise ValueError(f'unknown keys {sorted(unknown)}')
    tok = np.array(tree['tok_emb'], dtype=np.float64)
    if tok.ndim != 2:
        raise ValueError(f'tok_emb must be a (vocab_size, d_model) table; got shape {tok.shape}')
    d_model = tok.shape[1]
    if 'pos_emb' in tree:
        pos = np.array(tree['pos_emb'], dtype=np.float64)
        if tree.get('block_size', len(pos)) != len(pos):
            raise ValueError(f'block_size is {tree["block_size"]} but pos_emb has {len(pos)} rows')
    else:
        pos = np.zeros((tree['block_size'], d_model))
    params = {
        'tok_emb': tok,
        'out_emb': np.array(tree.get('out_emb', tok), dtype=np.float64),
        'pos_emb': pos,
        'layers': [],
        'lnf': {'gamma': 1.0, 'beta': 0.0, **tree.get('lnf', {})},
    }
    for layer in tree.get('layers', []):
        unknown = set(layer) - {'Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2', 'ln1', 'ln2'}
        if unknown:
            raise ValueError(f'unknown keys in a layer: {sorted(unknown)}')
        out = {'ln1': {'gamma': 1.0, 'beta': 0.0, **layer.get('ln1', {})},
               'ln2': {'gamma': 1.0, 'beta': 0.0, **layer.get('ln2', {})}}
        for key in ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2'):
            out[key] = np.array(layer[key], dtype=np.float64)
        if out['M2'].size == 0:   # "M2": [] is an MLP of width 0
            out['M2'] = out['M2'].reshape(0, d_model)
        params['layers'].append(out)
    return taotp.validate_params(params)


result = check('8.4', my_compile)
assert result

# %% [markdown]
# The same loader on a compact program, next to the package's:

# %%
compact = '{"tok_emb": [[1, -1, 0], [0, 1, -1]], "block_size": 3}'
mine, package = my_compile(compact), taotp.load_program(compact)
print('the same params, bit for bit:', taotp.params_equal(mine, package))
print(taotp.dump_program(mine, compact=True))
