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
# # Solutions for Chapter 1: The Transformer
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/solutions/01_transformer.ipynb)
#
# Reference solutions for every checked puzzle (each cell ends with the checker's verdict
# and an `assert`), and worked answers for the reflection prompts. Try the puzzles in
# `exercises/01_transformer.ipynb` first.

# %%
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import inspect
import numpy as np
import taotp
from taotp.exercises import check, keep_progress
keep_progress(False)   # running the reference solutions does not solve your puzzles
from taotp import layer_norm, softmax


# %% [markdown]
# ## Puzzle 1.1 · How short can it get?
#
# Dropping docstrings, names and the batch axis, and folding attention into one einsum per
# head group, leaves this (it is not meant to be read):

# %%
def tiny(t, tok_emb, pos_emb, out_emb, layers, lnf):
    L = lambda x, gamma=1., beta=0.: beta + gamma * (x - x.mean(-1, keepdims=1)) / (x.std(-1, keepdims=1) + 1e-10)
    x, n = tok_emb[t] + pos_emb[:len(t)], len(t)
    for l in layers:
        h = L(x, **l['ln1']); s = np.einsum('nd,hdk,me,hek->hnm', h, l['Q'], h, l['K']) / l['Q'].shape[-1] ** .5
        s = np.where(np.tri(n, dtype=bool), s, -np.inf); w = np.exp(s - s.max(-1, keepdims=1)); w /= w.sum(-1, keepdims=1) + 1e-10
        x = x + np.einsum('hnm,me,hek,hdk->nd', w, h, l['V'], l['P']); x = x + np.maximum(L(x, **l['ln2']) @ l['M1'] + l['b1'], 0) @ l['M2'] + l['b2']
    return L(x, **lnf) @ out_emb.T

rng = np.random.default_rng(0)
p = taotp.random_params(rng, n_layers=3, n_heads=2)
tokens = rng.integers(0, 7, size=10)
print('same logits as taotp.transformer (to 1e-12):', np.allclose(tiny(tokens, **p), taotp.transformer(tokens, **p), rtol=0, atol=1e-12))
print('lines:', len(inspect.getsource(tiny).strip().split('\n')))


# %% [markdown]
# Eight lines, at the cost of everything that makes the original pleasant. Two subtleties
# survive any golfing. The row maximum subtracted before `exp` must be taken *after*
# masking: with the unmasked maximum, a row whose visible scores sit far below a hidden
# one underflows to all zeros (a first draft of this cell did exactly that and was off by
# 0.94). And $\epsilon$ must stay on the standard deviation to reproduce the book's layer
# norm.

# %% [markdown]
# ## Puzzle 1.2 · A two-line attention
#
# Three differences, all visible by running it:
#
# 1. no $1/\sqrt{d_\text{head}}$ scaling of the scores;
# 2. masked scores are set to $-10^{20}$ rather than $-\infty$ (the weights still come out
#    as exact zeros after `exp`, so this one is harmless in float64);
# 3. the final einsum has no explicit output, so NumPy orders the free indices
#    alphabetically: the result is `(d_model, n)`, the transpose of what we need.

# %%
def attn_two_lines(x, Q, K, V, P, mask):
    a = softmax(np.where(mask[..., None], np.einsum('ia,jb,hac,hbc->ijh', x, x, Q, K), -1e20), axis=1)
    return np.einsum('ijh,jb,hbc,hdc', a, x, V, P)

rng = np.random.default_rng(1)
x = rng.normal(size=(5, 6))
Q, K, V, P = (rng.normal(size=(2, 6, 4)) for _ in range(4))
mask = taotp.model.causal_mask(5)
ours = taotp.self_attn(x, Q, K, V, P, mask)
theirs = attn_two_lines(x, Q, K, V, P, mask)
print('shapes:', ours.shape, theirs.shape)
rescaled = attn_two_lines(x, Q / 4 ** 0.5, K, V, P, mask).T  # add the scale, transpose
print('equal after adding the scale and transposing (to 1e-12):', np.allclose(rescaled, ours, rtol=0, atol=1e-12))

# %% [markdown]
# ## Puzzle 1.3 · Stop recomputing the past
#
# Keep, per layer, the keys and values of every position processed so far. A position's
# keys and values never change once computed (the causal mask hides everything after it),
# so a new token needs one query per head and one row of attention scores, instead of a
# full $n \times n$ pass. Below, each position goes through the layers as a single vector,
# and `keys[l][:, t]`, `values[l][:, t]` hold what position `t` offers the heads of layer
# `l` (arrays allocated once, for the longest sequence the call can reach).

# %%
def decode_fast(tokens, params, max_steps, eos=None):
    out = [int(t) for t in tokens]
    n = len(out) + max_steps
    keys = [np.zeros((len(l['K']), n, l['K'].shape[2])) for l in params['layers']]
    values = [np.zeros((len(l['V']), n, l['V'].shape[2])) for l in params['layers']]
    seen = 0                                   # positions already run through the layers
    for _ in range(max_steps):
        for t in range(seen, len(out)):        # only the positions not seen yet
            x = params['tok_emb'][out[t]] + params['pos_emb'][t]
            for layer, K, V in zip(params['layers'], keys, values):
                h = layer_norm(x, **layer['ln1'])
                K[:, t], V[:, t] = h @ layer['K'], h @ layer['V']    # (n_heads, d_head)
                q = h @ layer['Q']
                scores = (K[:, :t + 1] @ q[:, :, None])[..., 0] / q.shape[-1] ** 0.5
                heads = (softmax(scores)[:, None, :] @ V[:, :t + 1])[:, 0]
                x = x + np.einsum('hk,hdk->d', heads, layer['P'])
                h = layer_norm(x, **layer['ln2'])
                x = x + np.maximum(h @ layer['M1'] + layer['b1'], 0) @ layer['M2'] + layer['b2']
        seen = len(out)
        out.append(int(np.argmax(layer_norm(x, **params['lnf']) @ params['out_emb'].T)))
        if out[-1] == eos:
            break
    return out

result = check('1.3', decode_fast)
assert result

# %% [markdown]
# The package's decoder keeps the same cache in `taotp.KVCache`, and it runs the one
# forward pass of `taotp/model.py` on the new positions only: `extend` takes the next
# tokens and returns their logits, reading the cached keys and values of everything before.

# %%
rng = np.random.default_rng(3)
p = taotp.random_params(rng, n_layers=2, n_heads=2)
cache = taotp.KVCache(p, capacity=6)
first = cache.extend([1, 2, 3])          # the prompt: three positions at once
nxt = cache.extend([4])                  # one more: only its query is new
whole = taotp.transformer([1, 2, 3, 4], **p)
print('cached logits equal the full pass (to 1e-12):',
      np.allclose(np.concatenate([first, nxt]), whole, rtol=0, atol=1e-12))


# %% [markdown]
# ## Puzzle 1.4 · Matrix products instead of einsum
#
# Loop over heads so each projection is an ordinary matrix product; only the per-head
# loop remains.

# %%
def transformer_at(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    x = tok_emb[tokens] + pos_emb[:len(tokens)]
    mask = np.tril(np.ones((len(x), len(x)), dtype=bool))
    for layer in layers:
        h = layer_norm(x, **layer['ln1'])
        update = np.zeros_like(x)
        for Q, K, V, P in zip(layer['Q'], layer['K'], layer['V'], layer['P']):
            scores = (h @ Q) @ (h @ K).T / Q.shape[-1] ** 0.5
            weights = softmax(np.where(mask, scores, -np.inf))
            update += weights @ (h @ V) @ P.T
        x = x + update
        h = layer_norm(x, **layer['ln2'])
        x = x + np.maximum(h @ layer['M1'] + layer['b1'], 0) @ layer['M2'] + layer['b2']
    return layer_norm(x, **lnf) @ out_emb.T

result = check('1.4', transformer_at)
assert result

# %% [markdown]
# ## Puzzle 1.5 · Another language
#
# Nothing here needs more than loops and floating point, so a C port is a direct
# transliteration of `taotp.reference.naive_transformer` (the loop version used to check
# the package). The points that decide speed are the same as in NumPy: keep the per-layer
# keys and values (puzzle 1.3), store matrices row-major in the order you read them, and
# avoid recomputing layer norms. A port is easy to validate: dump a program with random
# weights and compare logits to about $10^{-12}$.

# %% [markdown]
# ## Puzzle 1.6 · Temperature sampling
#
# Divide the last row of logits by $T$, take the softmax, and draw with the generator you
# were given. As $T \to 0$ the largest logit takes all the probability, which is greedy
# decoding. (`taotp.decode(..., temperature=T, rng=rng)` does the same.)

# %%
def sample_decode(tokens, params, max_steps, temperature, rng):
    out = [int(t) for t in tokens]
    for _ in range(max_steps):
        probs = softmax(taotp.transformer(out, **params)[-1] / temperature)
        out.append(int(rng.choice(len(probs), p=probs / probs.sum())))
    return out

result = check('1.6', sample_decode)
assert result


# %% [markdown]
# ## Puzzle 1.7 · Decoding past the block size
#
# Feed only the last `block_size` tokens. Their positions restart at 0 in every window,
# which is what a model trained on windows expects, and which is also why no cache can be
# reused once the window starts sliding.

# %%
def decode_window(tokens, params, n_steps):
    out = list(tokens)
    block = len(params['pos_emb'])
    for _ in range(n_steps):
        window = np.array(out[-block:])
        out.append(int(np.argmax(taotp.transformer(window, **params)[-1])))
    return out

result = check('1.7', decode_window)
assert result

# %% [markdown]
# ## Puzzle 1.8 · Scrambling the residual basis
#
# Everything that *writes* to the residual stream is multiplied by `M` on the right
# (`tok_emb`, `pos_emb`, `out_emb`, each head's `P`, `M2`, `b2`); everything that *reads*
# from it by `M.T` on the left (`Q`, `K`, `V`, `M1`). `b1` and the layer norms' gamma and
# beta stay (they are scalars here).

# %%
def scramble_transformer(tok_emb, pos_emb, out_emb, layers, lnf, basis):
    M = np.asarray(basis, dtype=np.float64)
    d = np.shape(tok_emb)[1]
    if M.shape != (d, d) or not np.allclose(M @ M.T, np.eye(d), atol=1e-9):
        raise ValueError(f'scramble_transformer: M must be an orthonormal {d}x{d} matrix')
    if not np.allclose(np.ones(d) @ M, np.ones(d), atol=1e-9):
        raise ValueError('scramble_transformer: M must map (1, ..., 1) to itself, '
                         'otherwise layer norm does not commute with it')
    new_layers = []
    for layer in layers:
        new = dict(layer)                    # a copy: the caller's layers stay as they were
        for key in ('Q', 'K', 'V', 'P'):     # (n_heads, d_model, d_head): rows live in d_model
            new[key] = np.einsum('ed,hek->hdk', M, layer[key])
        new['M1'] = M.T @ layer['M1']        # reads the stream
        new['M2'] = layer['M2'] @ M          # writes to it
        new['b2'] = layer['b2'] @ M
        new_layers.append(new)
    return tok_emb @ M, pos_emb @ M, out_emb @ M, new_layers, lnf

result = check('1.8', scramble_transformer)
assert result

# %% [markdown]
# Why must `M` fix $(1, \dots, 1)$? Layer norm subtracts each vector's mean, which is the
# projection onto the all-ones direction; afterwards it rescales. Rotating first and
# normalising after gives the same result only if the rotation maps the all-ones
# direction to itself. For a general orthonormal `M` information along $M^\top \mathbf{1}$
# is removed that the original model kept, and the function changes. If `M` is not
# orthonormal, norms change too, so layer norm's rescaling no longer commutes, and the
# attention scores $q \cdot k$ change as well. Measured on a random program:

# %%
rng = np.random.default_rng(2)
p = taotp.random_params(rng, d_model=6)
tokens = rng.integers(0, 7, size=8)
before = taotp.transformer(tokens, **p)
args = [p[k] for k in ('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf')]
good = taotp.exercises.ch01.rotation_fixing_ones(6, rng)
generic = np.linalg.qr(rng.normal(size=(6, 6)))[0]
new = dict(zip(('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf'),
               scramble_transformer(*args, good)))
print('M fixes the ones vector: logits unchanged (to 1e-9):', np.allclose(taotp.transformer(tokens, **new), before, rtol=0, atol=1e-9))
new_layers = []
for layer in p['layers']:  # the same rewrite with a generic orthonormal M
    layer = dict(layer)
    for key in 'QKVP':
        layer[key] = np.einsum('ed,hek->hdk', generic, layer[key])
    layer['M1'], layer['M2'], layer['b2'] = generic.T @ layer['M1'], layer['M2'] @ generic, layer['b2'] @ generic
    new_layers.append(layer)
bad = dict(tok_emb=p['tok_emb'] @ generic, pos_emb=p['pos_emb'] @ generic,
           out_emb=p['out_emb'] @ generic, layers=new_layers, lnf=p['lnf'])
print(f'generic orthonormal M: logits change by up to {np.abs(taotp.transformer(tokens, **bad) - before).max():.1f}')

# %% [markdown]
# ## Puzzle 1.9 · Place your bets
#
# The answers are in the index of programs at the end of the book, which lists every
# program's layers, width, and total and non-zero parameter counts. (Spoiler: one or two
# layers almost everywhere, residual streams from 3 to a few dozen dimensions, and very
# sparse weights.)
#
# ## Puzzle 1.10 · A better architecture?
#
# An open question. Two changes the later chapters keep wishing for: attention that can
# take an exact maximum or an exact average without hardening constants (chapter 5), and
# an MLP that is not forced to route everything through one layer-normalised input
# (chapter 6). Revisit your answer after reading them.
