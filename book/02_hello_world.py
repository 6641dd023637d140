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
# # 2. Hello World
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/book/02_hello_world.ipynb)
#
# Our first program reads nothing but the start token and prints a fixed message. It needs
# no layers at all: everything lives in the embedding tables. Along the way we meet the two
# obstacles every later chapter has to get around, the final layer norm and the tied input
# embedding, and the tool that beats the first one: points on a circle that layer norm
# cannot move.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp

# %% [markdown]
# ## The problem
#
# Given the single token `<bos>`, produce `H e l l o ␣ W o r l d !` and then `<eos>`.
# Here is the finished program doing it:

# %%
hw = taotp.hello_world               # the chapter's helpers: tokenizers and the Simpleformer
params, tok = taotp.build_hello_world_transformer('Hello World!')
out = taotp.decode(hw.tokenize(['<bos>'], tok), params, eos=tok['<eos>'])
print(out.tolist())
print(hw.detokenize(out, tok))

# %% [markdown]
# ```{admonition} Spoiler ahead
# :class: warning
# The rest of the chapter shows how those weights are chosen. If you would like to find a
# construction yourself first, the puzzles of this chapter are in the
# [exercises notebook](https://github.com/taotp/taotp-book/blob/main/exercises/02_hello_world.ipynb).
# ```
#
# The token ids come from a *message tokenizer*: `<bos>` is 0, `<eos>` is 1, and the
# distinct characters of the message follow in order of first appearance. (The book builds
# the table from a Python `set`, so its ids change from one interpreter run to the next; a
# fixed order makes every figure and count below reproducible.)

# %%
pairs = [f'{k!r}: {v}' for k, v in tok.items()]       # the dict, printed on two lines
print('{' + ', '.join(pairs[:6]) + ',\n ' + ', '.join(pairs[6:]) + '}')

# %% [markdown]
# ## The idea
#
# The output at position $i$ depends on $i$ alone: position 0 prints `H`, position 1 prints
# `e`, and so on. A transformer with no layers computes a function of the current token and
# the current position, which is more than enough. So we store, at every position, the
# symbol that has to come out there.
#
# ## Building it
#
# ### Step 1: a toy model without layer norm
#
# Strip the model down to a *Simpleformer*: the residual stream is just `pos_emb[i]` and the
# logits are its dot products with the rows of `out_emb`. If every output row $o_j$ satisfies
# $o_j\cdot o_j > o_j\cdot o_k$ for $k\ne j$, then putting $o_{t_{i+1}}$ at position $i$
# prints $t_{i+1}$. Distinct points on the unit circle have exactly that property (the dot
# product is the cosine of the angle between them), so two dimensions do the job. As in the
# book, the 11 symbols sit at angles `linspace(0, 6, 11)`.
#
# The Simpleformer needs no code of its own: it is our 0-layer transformer with an all-zero
# `tok_emb` and the normalisation switched off. With `norm='none'` the final norm keeps only
# its affine part, $\beta + \gamma x$, which is $x$ itself.

# %%
simple, tok2 = taotp.build_hello_world_simpleformer('Hello World!')
names = [hw.detokenize([i], tok2).replace(' ', 'space') for i in range(len(simple['out_emb']))]
taotp.plot.circle(simple['out_emb'], labels=names, title='Simpleformer: symbols on the unit circle')

# %%
res = taotp.decode(hw.tokenize(['<bos>'], tok2), simple, eos=tok2['<eos>'], norm='none')
print(hw.detokenize(res, tok2), '| pos_emb shape', simple['pos_emb'].shape,
      '| tok_emb all zero:', not simple['tok_emb'].any())

# %% [markdown]
# ### Step 2: the obstacle, layer norm
#
# The real model passes the residual stream through a final layer norm before the logits.
# Layer norm subtracts the mean and divides by the standard deviation, so it removes two
# degrees of freedom. In $\mathbb{R}^2$ nothing is left: every point with $x\ne y$ lands
# on $(1,-1)$ or $(-1,1)$. In $\mathbb{R}^3$ one degree survives: every point lands on the
# circle of radius $\sqrt 3$ in the plane perpendicular to $(1,1,1)$. The figure shows random
# points before (grey) and after (red) layer norm.

# %% tags=["hide-input"]
cloud = np.random.default_rng(0)
fig = taotp.plot.figure((8.0, 3.8))
ax2 = fig.add_subplot(1, 2, 1)
pts2 = cloud.normal(size=(300, 2))
ax2.scatter(*pts2.T, s=6, color='0.6', label='random points')
ax2.scatter(*taotp.layer_norm(pts2).T, s=60, color='tab:red', label='after layer norm')
ax2.set_aspect('equal')
ax2.set_title('R^2: everything collapses to 2 points', fontsize=9)
ax2.legend(fontsize=7, loc='lower left')
ax3 = fig.add_subplot(1, 2, 2, projection='3d')
pts3 = cloud.normal(size=(300, 3))
ax3.scatter(*pts3.T, s=4, color='0.6')
ax3.scatter(*taotp.layer_norm(pts3).T, s=6, color='tab:red')
ax3.set_title('R^3: everything lands on the sqrt(3)-circle', fontsize=9)
fig

# %%
print('distinct points after layer norm in R^2:',
      sorted(set(map(tuple, np.round(taotp.layer_norm(pts2), 6).tolist()))))
after3 = taotp.layer_norm(pts3)
print('in R^3: every mean is 0 and every squared norm is 3:',
      np.allclose(after3.mean(1), 0, atol=1e-12) and np.allclose((after3 ** 2).sum(1), 3))

# %% [markdown]
# ### Step 3: three dimensions, on the circle layer norm leaves alone
#
# A vector $v\in\mathbb{R}^d$ is a fixed point of layer norm when its entries sum to 0 and
# its squared norm is $d$. In three dimensions those points form the $\sqrt3$-circle above.
# `taotp.pos_enc_3d(t)` returns the point at angle $t$ on it and `pos_enc_3d_array(n)` spaces
# $n$ points evenly, which keeps the symbols as far apart as possible. (The "position" in
# the name will make sense in Chapter 3, where the same points encode positions.)

# %%
symbols3 = taotp.pos_enc_3d_array(len(tok))
print('fixed under layer norm:', np.allclose(taotp.layer_norm(symbols3), symbols3, atol=1e-12))
taotp.plot.circle(symbols3, labels=[s.replace(' ', 'space') for s in tok],
                  title='11 symbols on the sqrt(3)-circle in R^3')

# %% [markdown]
# ### Step 4: drown out the input token
#
# The model also adds `tok_emb` of the current input token, and we keep the book's tied
# embeddings (`out_emb` is `tok_emb`), so we cannot simply zero `tok_emb`. Instead we make
# the position term huge: `pos_emb[i] = harden * tok_emb[t_{i+1}]`, with `harden` the
# book's $N = 10^6$. Then $x_i = T_{t_i} + N\,T_{t_{i+1}}$ points almost exactly at
# $T_{t_{i+1}}$, layer norm scales it back onto the circle, and the largest logit is the
# one of $t_{i+1}$. This trick of
# overwriting by scale is the *messy cleanup* of Chapter 3.
#
# The residual stream is a single 3-wide block, so its layout is just `symbol`. Each row
# below is a position; after the final layer norm it equals the embedding of the symbol to
# print.

# %%
layout = taotp.Layout([('symbol', 3)])
prompt = hw.hello_world_targets('Hello World!', tok)[:-1]      # the tokens fed while decoding
prompt = np.concatenate([[tok['<bos>']], prompt])
t = taotp.trace(prompt, params)
shown = taotp.layer_norm(t.final)
detok = lambda i: hw.detokenize([i], tok).replace(' ', 'space')
taotp.plot.residual(shown, labels=layout.labels(), tokens=prompt, detok=detok,
                    title='after the final layer norm (rows: input token at each position)',
                    size=(5.0, 3.6))

# %%
print('layer-normed stream equals tok_emb of the next symbol:',
      np.allclose(shown, params['tok_emb'][hw.hello_world_targets('Hello World!', tok)],
                  atol=1e-5))

# %% [markdown]
# How large must $N$ be? The input token tilts $x_i$ by an angle of about $1/N$, which must
# stay below half the gap between neighbouring symbols. With 11 symbols the gap is wide and
# $N=5$ already works; with the 256 symbols of the ASCII tokenizer (below) the gap is 23
# times narrower.

# %%
print(f'{"harden":>9}   {"message tokenizer":<25} ascii tokenizer')
for harden in (1, 2, 5, 100, 1e6):
    row = []
    for kind in ('message', 'ascii'):
        p, tk = taotp.build_hello_world_transformer('Hello World!', kind, harden=harden)
        o = taotp.decode(hw.tokenize(['<bos>'], tk), p, eos=tk['<eos>'], max_steps=13)
        text = hw.detokenize(o[1:-1] if o[-1] == tk['<eos>'] else o[1:], tk)
        row.append(f'{text!r:<17} {"right" if text == "Hello World!" else "wrong"}')
    print(f'{harden:>9,.0f}   {row[0]:<25} {row[1]}')

# %% [markdown]
# ### A general-purpose tokenizer
#
# The message tokenizer is tailored to one message. With a fixed ASCII tokenizer (all 256
# byte values, `'\0'` doubling as `<bos>` and `<eos>`) the same builder prints any message.

# %%
params_ascii, tok_ascii = taotp.build_hello_world_transformer('Hello World!', tokenizer='ascii')
o = taotp.decode(hw.tokenize(['<bos>'], tok_ascii), params_ascii, eos=tok_ascii['<eos>'])
print(o.tolist())
print(repr(hw.detokenize(o[1:-1], tok_ascii)))

# %% [markdown]
# ## Does it work?
#
# For every length from 1 to 200 we draw a random message of ASCII characters 1..127
# (repeated characters are the norm) and build it with both tokenizers. One forward pass
# over `<bos>` + message + `<eos>` gives the greedy prediction of every symbol from the true
# symbols before it (`taotp.teacher_forced_argmax`); if all of them are right, greedy
# decoding follows exactly this path. A few full `decode` runs confirm it.

# %%
rng = np.random.default_rng(2024)
checked = wrong = 0
for length in range(1, 201):
    message = ''.join(chr(c) for c in rng.integers(1, 128, size=length))
    for kind in ('message', 'ascii'):
        p, tk = taotp.build_hello_world_transformer(message, kind)
        answer = hw.tokenize(['<bos>'] + list(message) + ['<eos>'], tk)
        predicted = taotp.teacher_forced_argmax(answer[None], p, start=1)[0]
        wrong += not np.array_equal(predicted, answer[1:])
        checked += 1
for message in ('a', 'aaaaaaaaaa', 'mississippi', 'Hello World!' * 16):
    p, tk = taotp.build_hello_world_transformer(message)
    o = taotp.decode(hw.tokenize(['<bos>'], tk), p, eos=tk['<eos>'])
    wrong += hw.detokenize(o[1:-1], tk) != message
    checked += 1
print(f'{checked} programs checked, {wrong} wrong')
assert wrong == 0

# %% [markdown]
# ## How big is it?
#
# The model has `block_size = len(message) + 1` positions and 3 numbers per position and per
# symbol; the tied `out_emb` is counted once and layer norm parameters are not counted, so the
# total is $3\,(V + B)$.

# %%
for kind in ('message', 'ascii'):
    book = taotp.programs.CATALOGUE[f'hello-world-{kind}'].source_total
    p, tk = taotp.build_hello_world_transformer('Hello World!', kind)
    total, non0 = taotp.count_params(p), taotp.count_non0_params(p)
    print(f'{kind:>7} tokenizer: {total["n_params"]:>3} parameters (book: {book}); '
          f'{non0["n_params"]} non-zero\n  {total}')
    assert total['n_params'] == book

# %% [markdown]
# Both totals match the book. The non-zero counts fall short by exact zeros: the symbol at
# angle 0 is $\sqrt3\,(1/\sqrt2, -1/\sqrt2, 0)$, whose third entry is exactly 0. With the
# message tokenizer that symbol is `<bos>`, which is never printed, so only its `tok_emb`
# row has the zero: 71. With the ASCII tokenizer it is `'\0'`, which is also printed once
# (as `<eos>`), so the zero appears in `tok_emb` and in one `pos_emb` row: 805. The book
# prints no non-zero count for Hello World; with its set-based ids the symbol at angle 0,
# and hence the count, changes from run to run.
#
# For long messages the position table dominates: about $3\cdot|\text{message}|$ parameters.

# %%
for length in (12, 100, 1000):
    p, _ = taotp.build_hello_world_transformer('x' * length, 'ascii')
    print(f'message of {length:>4} characters, ASCII tokenizer: '
          f'{taotp.count_params(p)["n_params"]:>5,} parameters = 3 * ({length} + 1 + 256)')

# %% [markdown]
# ## Summary
#
# - A 0-layer transformer prints a fixed message: `pos_emb[i]` stores the symbol due at
#   position $i$.
# - Layer norm collapses $\mathbb{R}^2$ to two points but keeps the $\sqrt3$-circle in
#   $\mathbb{R}^3$ fixed; symbols evenly spaced on it need 3 dimensions.
# - Tied embeddings add the input token to the stream; scaling the position term by
#   `harden` $=10^6$ drowns it (5 is already enough for 11 symbols, a few hundred for 256).
# - The Simpleformer is the same forward pass with `tok_emb = 0` and `norm='none'`: 2
#   dimensions, no code of its own.
# - Size: 72 parameters with the message tokenizer, 807 with ASCII, as in the book
#   (71 and 805 non-zero); works for any message of 1 to 200 characters we tried.
#
# ## Puzzles
#
# | id | puzzle |
# | --- | --- |
# | 2.1 | Repeat the last input token forever, with at most 3 parameters per vocabulary entry |
# | 2.2 | Sparse versions: the repeater with $V$ non-zeros, Hello World with $V + B$ |
# | 2.3 | Train a transformer to print "Hello World!" (training harness) |
# | 2.4 | Print a message without repeated symbols with an all-zero `pos_emb` |
# | 2.5 | Print "Hello World!" itself with an all-zero `pos_emb` |
# | 2.6 | How many parameters with RMSNorm instead of layer norm? |
# | 2.7 | Hello World with integer parameters only |
# | 2.8 | Hello World with positive parameters only |
#
# Work on them in the
# [exercises notebook](https://github.com/taotp/taotp-book/blob/main/exercises/02_hello_world.ipynb).
#
# ## References
#
# - Y. Leviathan, *The Art of Transformer Programming*, Chapter 2.
# - O. Press and L. Wolf, *Using the Output Embedding to Improve Language Models*, 2017 (tied embeddings).
# - R. Xiong et al., *On Layer Normalization in the Transformer Architecture*, 2020 (PreLN).
