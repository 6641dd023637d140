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
# # 1. The Transformer
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/book/01_transformer.ipynb)
#
# Every program in this book runs on one machine: a standard decoder-only transformer,
# written in about thirty lines of NumPy. This chapter takes that machine apart. We look at
# what goes in (token ids and a dictionary of weights), what comes out (one row of logits
# per position), how generation turns logits back into tokens, and how we will measure the
# size of a program. Nothing here is trained; later chapters choose every weight by hand.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp

# %% [markdown]
# ## The machine we program
#
# We use the model that today's language models descend from, at inference time:
#
# - **decoder-only** with a causal mask: position $t$ only sees positions $0, \dots, t$;
# - **Pre-LN** blocks: layer norm is applied to the *input* of each sub-layer, and the
#   residual stream itself is only normalised once, by the final layer norm `lnf`;
# - **multi-head attention** whose heads each own four matrices `Q K V P` of shape
#   `(d_model, d_head)`, scores scaled by $1/\sqrt{d_\text{head}}$;
# - a **ReLU MLP** `M1 b1 M2 b2` (its width `d_ff` may be 0, which makes it a bias);
# - position embeddings that are ordinary weights (`pos_emb`), set by hand and counted;
# - no dropout (it does nothing at inference).
#
# In equations, with $x$ the residual stream of shape $(n, d_\text{model})$ and
# $\mathrm{LN}$ layer norm, one layer computes
#
# $$
# \begin{aligned}
# x &\leftarrow x + \sum_h \operatorname{softmax}\!\Big(\tfrac{(\mathrm{LN}(x) Q_h)(\mathrm{LN}(x) K_h)^\top}{\sqrt{d_\text{head}}} + \text{mask}\Big)\,\mathrm{LN}(x) V_h\, P_h^\top \\
# x &\leftarrow x + \max\big(0,\ \mathrm{LN}(x) M_1 + b_1\big) M_2 + b_2
# \end{aligned}
# $$
#
# and the logits are $\mathrm{LN}(x)\,\mathrm{out\_emb}^\top$. The code is in
# `taotp/model.py`; here are its pieces, printed straight from the package so the page can
# never drift from what runs.

# %%
import inspect
for fn in (taotp.model.norm, taotp.model.softmax, taotp.model.layer_norm):
    print(inspect.getsource(fn))

# %% [markdown]
# Two details matter for hand-set weights. `layer_norm` adds its $\epsilon = 10^{-10}$ to
# the *standard deviation*, not under the square root, and uses the population variance.
# And `softmax` divides by the sum plus the same $\epsilon$, so a masked entry (score
# $-\infty$) gets weight exactly 0.
#
# Attention and the block are just as short. `attention_scores` is the one place where a
# score is computed (query times key over $\sqrt{d_{head}}$, $-\infty$ where the causal mask
# hides a key), `mix_values` averages the values with the softmax weights and maps each
# head back through $P$, and `transformer_layer` is one block. All of them accept extra
# leading batch axes, which later lets us run a million inputs at once.

# %%
for fn in (taotp.model.attention_scores, taotp.model.mix_values,
           taotp.model.transformer_layer):
    print(inspect.getsource(fn))

# %% [markdown]
# `transformer_layer` already carries the switches that later chapters and puzzles need:
# `post_ln` (the original Post-LN block), `norm_fn` (RMSNorm, or no normalisation at all),
# a `cache` of past keys and values, and `queries` (compute only some rows). They are
# options of this one function, not copies of it: `taotp.model.forward` stacks the
# embeddings, the layers and the final norm, and every way of running a program in the
# package (`transformer`, `decode`, `trace`, the checkers) goes through it.

# %% [markdown]
# ## A program is a dictionary of weights
#
# A program is a plain dict. `base_params` and `base_layer` create one full of zeros;
# thanks to the residual connections an all-zero layer is the identity, so we can add
# layers and fill in only the weights a program needs.

# %%
params = taotp.base_params(vocab_size=5, block_size=8, d_model=3)
params['layers'].append(taotp.base_layer(n_heads=2, d_model=3, d_ff=4, d_head=2))
for name in ('tok_emb', 'pos_emb', 'out_emb'):
    print(f'{name:8} {params[name].shape}')
for name, value in params['layers'][0].items():
    print(f'  layers[0][{name!r:5}] {value if isinstance(value, dict) else value.shape}')
print('lnf', params['lnf'])

# %% [markdown]
# ## Inputs and outputs
#
# `taotp.transformer(tokens, **params)` returns one row of logits per position. Decoding
# reads the last row, appends its argmax and repeats: that is **greedy decoding**, the only
# kind the book's programs use. `taotp.decode(tokens, params, max_steps, eos)` returns
# the prompt followed by everything it generated, stopping right after `eos` if given.
#
# Here is the smallest interesting program we can write without any layers: a counter
# that outputs the successor of its input, modulo 5. Each token gets a point on a circle
# (Chapter 2 explains why these particular points survive layer norm), and the output
# embedding of token $j$ is the input embedding of $j - 1$, so the logit of $j$ is largest
# when the current token is $j-1$.

# %%
counter = taotp.base_params(vocab_size=5, block_size=12, d_model=3)
counter['tok_emb'] = taotp.pos_enc_3d_array(5)
counter['out_emb'] = np.roll(counter['tok_emb'], 1, axis=0)   # row j holds token j - 1
print('logits at the last position:', taotp.transformer([3], **counter)[-1].round(2))
print('decode from [3]:', taotp.decode([3], counter, max_steps=8))

# %%
taotp.plot.circle(counter['tok_emb'], labels=[f'token {i}' for i in range(5)],
                  title='tok_emb of the counter: 5 points on a circle')

# %% [markdown]
# ## Looking inside a run
#
# `taotp.trace` runs the same forward pass and keeps, for every layer, the attention
# scores of each head (before the softmax) and its weights (after it), and the residual
# stream before the layer, after attention and after the MLP. Every attention and residual
# picture in the book comes from it. Here it is on a random two-layer, two-head program:
# the weights are noise, but the structure is the real one (lower-triangular attention
# because of the causal mask; rows summing to 1).

# %%
rng = np.random.default_rng(0)
random_program = taotp.random_params(rng, vocab_size=7, block_size=12, d_model=8,
                                     n_layers=2, n_heads=2, d_head=3, d_ff=5)
run = taotp.trace([0, 3, 1, 4, 1, 5], random_program)
print('attention weights per layer:', [a.shape for a in run.attn])
print('rows sum to 1:', np.allclose(run.attn[0].sum(-1), 1))
taotp.plot.attention(run.attn[0], tokens=run.tokens, title='layer 0')

# %%
labels = [f'd{i}' for i in range(8)]
taotp.plot.residual(run.resid_post[0], labels=labels, tokens=run.tokens,
                    title='residual stream after layer 0')

# %% [markdown]
# ## Does it compute what the equations say?
#
# The vectorised code is easy to get subtly wrong (a transposed head, a missing scale), so
# we check it against a completely separate implementation,
# `taotp.reference.naive_transformer`: plain Python loops over positions, heads and keys,
# sharing no code with the package. We compare on random programs of several shapes,
# including attention-only layers ($d_\text{ff} = 0$) and programs with no layers at all.

# %%
rng = np.random.default_rng(1)
shapes = [dict(n_layers=0), dict(n_layers=1, n_heads=1, d_ff=4),
          dict(n_layers=2, n_heads=3, d_ff=0), dict(n_layers=3, n_heads=2, d_ff=6)]
worst = 0.0
for shape in shapes:
    for _ in range(5):
        p = taotp.random_params(rng, vocab_size=6, block_size=10, d_model=5, d_head=2,
                                **{'n_heads': 1, 'd_ff': 3, **shape})
        tokens = rng.integers(0, 6, size=rng.integers(1, 11))
        fast = taotp.transformer(tokens, **p)
        slow = taotp.reference.naive_transformer(tokens, **p)
        worst = max(worst, np.abs(fast - slow).max() / np.abs(slow).max())
print(f'20 random programs, 4 shapes: largest relative difference below 1e-12: {worst < 1e-12}')
assert worst < 1e-9

# %% [markdown]
# ### One forward pass, every variant
#
# The same check covers each variant of the machine: Pre-LN or Post-LN, layer norm or
# RMSNorm, and the forward pass run all at once or one token at a time through the
# key/value cache (below). The reference computes each variant its own way, with loops.

# %%
rng = np.random.default_rng(5)
p = taotp.random_params(rng, vocab_size=6, block_size=10, d_model=5, n_layers=2, n_heads=2,
                        d_head=2, d_ff=4)
tokens = rng.integers(0, 6, size=10)
print('all at once and one token at a time equal the loop reference to 1e-12:')
for post_ln in (False, True):
    for norm in ('layer', 'rms'):
        slow = taotp.reference.naive_transformer(tokens, **p, norm=norm, post_ln=post_ln)
        whole = taotp.transformer(tokens, **p, norm=norm, post_ln=post_ln)
        cache = taotp.KVCache(p, capacity=len(tokens), norm=norm, post_ln=post_ln)
        stepwise = np.concatenate([cache.extend(tokens[i:i + 1]) for i in range(len(tokens))])
        worst = max(np.abs(whole - slow).max(), np.abs(stepwise - slow).max())
        block = 'Post-LN' if post_ln else 'Pre-LN'
        print(f'  {block:7} {norm:5} norm: {worst < 1e-12}')
        assert worst < 1e-12

# %% [markdown]
# ## How big is a program?
#
# We measure a program by its number of parameters, counted the book's way by
# `count_params`: the token and position embeddings, the output embedding only when it is
# not tied to (equal to) the token embedding, and every array inside the layers. Layer
# norm's gamma and beta are always 1 and 0 here, so they are never counted.
#
# Hand-written programs are mostly zeros: a program may need a wide residual stream for
# scratch space while each weight matrix touches only a few of its dimensions. So we also
# report **non-zero** parameters (`count_non0_params`), a measure of sparse efficiency.

# %%
print('counter, parameters')
print('  all     :', taotp.count_params(counter))
print('  non-zero:', taotp.count_non0_params(counter))

# %% [markdown]
# The counter has 66 parameters: 15 in `tok_emb`, 36 in an all-zero `pos_emb` (counted
# even though it is zero), and 15 in `out_emb`, which is *not* tied here (it is a rotated
# copy). Only 28 are non-zero: `pos_emb` contributes nothing, and the circle point at
# angle 0 has an exact zero coordinate, once in each embedding table. Later chapters
# print both counts beside the numbers their sources report.

# %% tags=["remove-cell"]
assert taotp.count_params(counter)['n_params'] == 15 + 36 + 15
assert taotp.count_non0_params(counter)['n_params'] == 28

# %% [markdown]
# ## Faster decoding: the key/value cache
#
# The book's decoding loop calls the whole transformer once per new token, so position 0
# is recomputed at every step. Nothing about the past changes when a token is appended
# (the mask hides the future), so each position's keys and values can be computed once
# and kept. `taotp.decode` does this by default (`cache=True`, with a `taotp.KVCache`);
# `cache=False` is the naive loop. Both produce the same tokens, in every variant: the
# cached version performs the same arithmetic on fewer rows, and we check that the outputs
# agree token for token.
#
# The timings below are measured when the page is built, on whatever machine builds it,
# so treat them as rough (`benchmarks/decode.py` runs longer ones).

# %%
import time
rng = np.random.default_rng(2)
bench = taotp.random_params(rng, vocab_size=50, block_size=129, d_model=64, n_layers=2,
                            n_heads=4, d_head=16, d_ff=128, scale=0.3)
for steps in (32, 128):
    start = time.perf_counter()
    naive = taotp.decode([1], bench, steps, cache=False)
    t_naive = time.perf_counter() - start
    start = time.perf_counter()
    cached = taotp.decode([1], bench, steps, cache=True)
    t_cached = time.perf_counter() - start
    print(f'{steps:4d} new tokens: naive {t_naive:.3f} s, cached {t_cached:.3f} s, '
          f'{t_naive / t_cached:.1f}x faster, identical tokens: {np.array_equal(naive, cached)}')
    assert np.array_equal(naive, cached)

# %%
same = all(np.array_equal(taotp.decode([1], bench, 40, cache=True, norm=norm, post_ln=post_ln),
                          taotp.decode([1], bench, 40, cache=False, norm=norm, post_ln=post_ln))
           for norm in ('layer', 'rms') for post_ln in (False, True))
print('cached and naive decoding give the same 40 tokens in all four variants:', same)
assert same

# %% [markdown]
# ## Beyond the book's `decode`
#
# Two more options come from the chapter's puzzles and are used later:
#
# - `window=True` keeps decoding past `block_size` by feeding only the last `block_size`
#   tokens (their positions restart at 0, so each such step is a full pass);
# - `temperature > 0` samples from $\operatorname{softmax}(\text{logits}/T)$ with an explicit
#   `numpy.random.Generator`, so a seed makes the result reproducible.

# %%
print('window, 20 steps past block_size 12:', taotp.decode([3], counter, 20, window=True))
print('sampled at T = 2:                   ',
      taotp.decode([0, 3, 1], random_program, 8, temperature=2.0, rng=np.random.default_rng(0)))

# %% [markdown]
# For exhaustive checks, `taotp.decode_batch` runs many prompts of equal length together
# (one batched forward pass per step instead of one per prompt per step):

# %%
prompts = np.arange(5)[:, None]
print(taotp.decode_batch(prompts, counter, n_steps=6))

# %% [markdown]
# ## When a program is malformed
#
# A hand-written program is easy to get wrong by one dimension. Every entry point
# validates the program and the tokens first and names the field, the layer and the
# expected shape, instead of failing deep inside a matrix product.

# %% tags=["raises-exception"]
broken = taotp.random_params(np.random.default_rng(3), d_model=8)
broken['layers'][1]['Q'] = np.zeros((2, 7, 3))
taotp.transformer([1, 2], **broken)

# %% tags=["raises-exception"]
taotp.decode([3, 9], counter, max_steps=2)

# %% tags=["raises-exception"]
taotp.decode([3], counter, max_steps=40)

# %% [markdown]
# ## Summary
#
# - The machine is a Pre-LN decoder in about 30 lines of NumPy, and one forward pass
#   (`taotp.model.forward`) runs every program; it matched an independent loop
#   implementation to within $10^{-12}$ (relative) on 20 random programs, and in each of the
#   four variants (Pre-/Post-LN, layer norm/RMSNorm), all at once and through the cache.
# - A program is a dict: `tok_emb`, `pos_emb`, `out_emb`, `layers` of
#   `Q K V P M1 b1 M2 b2 ln1 ln2`, and `lnf`. An all-zero layer is the identity.
# - Size is counted twice: all parameters (the 0-layer counter has 66) and non-zero ones
#   (28 of them).
# - The key/value cache produces the same tokens as the naive loop and is many times faster,
#   increasingly so as sequences grow (the table above; `benchmarks/decode.py` goes to 1,024
#   new tokens).
#
# ## Puzzles
#
# The puzzles for this chapter are in
# [exercises/01_transformer.ipynb](https://github.com/taotp/taotp-book/blob/main/exercises/01_transformer.ipynb),
# with checkers for 1.3 (cache), 1.4 (`@` instead of einsum), 1.6 (temperature
# sampling), 1.7 (sliding window) and 1.8 (`scramble_transformer`), and reflection prompts
# for the rest. Solutions are in `solutions/01_transformer.ipynb`.
#
# ## References
#
# - Y. Leviathan, *The Art of Transformer Programming*, chapter 1 (the decoder, `decode`,
#   `base_params`, `count_params` and the chapter's puzzles).
# - A. Vaswani et al., *Attention Is All You Need* (2017); R. Xiong et al., *On Layer
#   Normalization in the Transformer Architecture* (2020); O. Press and L. Wolf, *Using the
#   Output Embedding to Improve Language Models* (2017). See {doc}`references`.
