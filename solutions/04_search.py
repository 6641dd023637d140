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
# # Solutions 4 · Search
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/solutions/04_search.ipynb)
#
# A reference answer per puzzle, each run through its checker, and worked answers with
# computed numbers for the two reflection prompts.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp import corpus
from taotp.exercises import check, ch04, keep_progress
keep_progress(False)   # running the reference solutions does not solve your puzzles

# %% [markdown]
# ## Puzzle 4.1 · Trained embeddings (reflection)
#
# Search never looks *inside* a token embedding: layer 0 copies the token block verbatim and
# layer 1 only asks whether two copies are identical (a hardened dot product is maximal
# exactly when every block agrees, because all blocks have the same norm). Any token table
# works as long as every row is layer-norm fixed, all rows have the same norm and no two
# rows are too close for the hardening factor. Chapter 3's trained embeddings live in
# `tok_dims` dimensions and are normalised, so they satisfy the first two conditions; the
# slots simply become `tok_dims` wide instead of 3, multiplying $d_{model}$ and every head by
# `tok_dims / 3`.
#
# What changes in the output? Nothing wherever the last two words occur exactly once in the
# window: that copy is exact with any embedding. The embeddings matter only in the undefined
# cases: there the program copies an average of several candidate words and the final layer
# norm picks the word whose embedding is closest to that average. With meaningful embeddings
# that neighbour is a plausible word; with arbitrary ones it is noise. We can measure how
# often that happens and show the effect with a cheap stand-in for trained embeddings: words
# placed around the circle in order of frequency, so that neighbours are equally common
# words, against the chapter's alphabetical placement.

# %%
import textwrap
words = [w for w in corpus.words(corpus.romeo_and_juliet()) if w[0].isalpha()]
vocab_words = sorted(set(words))
word_id = {w: i for i, w in enumerate(vocab_words)}
start = next(i for i in range(len(words)) if words[i:i + 4] == ['too', 'rude', 'too', 'boisterous'])
context = [word_id[w] for w in words[start:start + 100]]

def generate(params, steps=60):
    return taotp.decode(context, params, max_steps=steps, window=True)[100:]

alphabetical = taotp.build_search_transformer(len(vocab_words), 100, 2)
counts = {w: 0 for w in vocab_words}
for w in words:
    counts[w] += 1
rank = sorted(vocab_words, key=lambda w: (-counts[w], w))
by_frequency = taotp.build_search_transformer(len(vocab_words), 100, 2)
circle = taotp.pos_enc_3d_array(len(vocab_words))
by_frequency['tok_emb'][:, :3] = circle[[rank.index(w) for w in vocab_words]]   # tied: out_emb too
lines = []
for name, params in (('alphabetical', alphabetical), ('by frequency', by_frequency)):
    out = generate(params)
    seq = context + out.tolist()
    defined = sum(taotp.search.search_reference(seq[i - 100:i], 2) is not None for i in range(100, 160))
    lines.append(f'{name:>12} ({defined} of 60 steps had a unique match):\n'
                 + textwrap.fill(' '.join(vocab_words[i] for i in out[:30]), 86,
                                 initial_indent='  ', subsequent_indent='  '))
print('\n'.join(lines))

# %% [markdown]
# The two runs part ways at the very first step: the query `heels for` does not occur
# earlier in the window, so each program copies the average of the words after the partial
# matches `... for`, and the two embeddings round that average to different words. From then
# on the windows differ, and so do their numbers of well-defined steps. Only the undefined
# steps feel the embedding; trained embeddings would make those guesses plausible words
# instead of arbitrary neighbours.
#
# ## Puzzle 4.2 · PostLN
#
# The book's program already works on a PostLN transformer, unchanged. Every time a layer
# norm is applied in either arrangement, its input is either layer-norm fixed (the embedding
# sum, and the stream after layer 0, made of fixed 3-D blocks) or, after layer 1, the found
# token followed by zeros, which layer norm only rescales; the empty MLPs add nothing. So
# PreLN and PostLN see the same vectors up to that harmless final scale.

# %%
p = taotp.build_search_transformer(10, 40, 3)
X, want = ch04.search_cases(0, 5, 10, 40, 3)
pre = taotp.last_token_argmax(X, p)
post = taotp.last_token_argmax(X, p, post_ln=True)
print('PreLN', pre.tolist(), '| PostLN', post.tolist(), '| reference', want.tolist())
result = check('4.2', taotp.build_search_transformer)
assert result


# %% [markdown]
# ## Puzzle 4.3 · Any lookup table, by searching
#
# Write the table into the prompt as `SEP k_1 v_1 SEP k_2 v_2 ... SEP key` and search with
# `prefix_len = len(key) + 1`. The separator anchors every key, so `SEP key` occurs exactly
# once (keys are distinct, and `SEP` never appears inside an entry), and the token after it
# is the value. Without the separator a key could also appear across two entries: in the XOR
# table `0 0 0 | 0 1 1 | 1 0 1 | 1 1 0`, the key `1 1` appears twice.
#
# No table is adversarial because Search tests the whole key for equality in one hardened
# dot product: the score of a stored key is its number of agreeing tokens (as cosines), and
# only the identical key reaches the maximum. Chapter 3's construction instead adds up one
# score per key position and value, a linear rule that cannot express tables such as XOR.

# %%
def make_prompt(keys, values, key, vocab_size):
    sep = vocab_size
    table = []
    for k, v in zip(keys, values):
        table += [sep, *k, v]
    return table + [sep, *key], len(key) + 1

keys, values = [[0, 0], [0, 1], [1, 0], [1, 1]], [0, 1, 1, 0]
for key in keys:
    prompt, L = make_prompt(keys, values, key, 2)
    answer = taotp.decode(prompt, taotp.build_search_transformer(3, len(prompt), L), max_steps=1)[-1]
    print(f'XOR {key} -> {answer}   prompt {prompt}')
result = check('4.3', make_prompt)
assert result


# %% [markdown]
# ## Puzzle 4.4 · Fewer than 3 dimensions per token
#
# Store each token as a point on the *2-D* unit circle. A row of $k = L+1$ such points is a
# vector $v\in\mathbb{R}^{2k}$ of squared norm $k$. Map it isometrically into the hyperplane
# of $\mathbb{R}^{2k+1}$ perpendicular to $(1,\dots,1)$ with an orthonormal basis $U$ and
# scale by $\alpha=\sqrt{(2k+1)/k}$: the result $x=\alpha\,Uv$ has mean 0 and squared norm
# $2k+1$, so it is layer-norm fixed. Write the book's construction in the 2-D slot
# coordinates, then conjugate every matrix by the isometry (reading weights $Q, K, V$ become
# $UQ/\alpha$, writing weights $P$ become $\alpha UP$). The shift matrices become 2-D
# rotations. $d_{model} = 2L + 3$ instead of $3L + 3$: 9 instead of 12 at prefix 3, 23 instead
# of 33 at prefix 10, with 2,736 and 65,826 parameters.

# %%
def circle2(n):
    a = 2 * np.pi * np.arange(n) / n
    return np.stack([np.cos(a), np.sin(a)], axis=1)


def rot2(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, s], [-s, c]])


def build_search_2d(vocab_size, block_size, prefix_len, harden=1e8):
    """Search with 2-D token slots: L + 1 unit vectors in the hyperplane of R^(2L+3) ⟂ (1,...,1)."""
    L = prefix_len
    k, D = L + 1, 2 * (L + 1)
    d = D + 1
    U = np.linalg.qr(np.column_stack([np.ones(d), np.eye(d)[:, :D]]))[0][:, 1:]
    alpha = np.sqrt(d / k)
    slot = lambda j: slice(2 * j, 2 * j + 2)
    tok_v = np.zeros((vocab_size, D))
    tok_v[:, slot(0)] = circle2(vocab_size)
    tok_v[:, 2:2 * L:2] = 1.0                      # padding slots: the unit vector (1, 0)
    pos_v = np.zeros((block_size, D))
    pos_v[:, slot(L)] = circle2(block_size)
    p = taotp.base_params(vocab_size, block_size, d)
    p['tok_emb'] = p['out_emb'] = alpha * tok_v @ U.T
    p['pos_emb'] = alpha * pos_v @ U.T
    dh = 2 * L
    Qv, Kv, Vv, Pv = (np.zeros((2, k, D, dh)) for _ in range(4))
    for h in range(k):
        look = np.eye(2) if h == 0 else rot2(-2 * np.pi * h / block_size)   # h places back
        Qv[0, h, slot(L), :2] = harden * look
        Kv[0, h, slot(L), :2] = np.eye(2)
        if h == 0:
            Vv[0, 0, 2:] = np.eye(dh)
            Pv[0, 0, 2:] = -np.eye(dh)
        else:
            Vv[0, h, slot(0), :2] = np.eye(2)
            Pv[0, h, slot(h), :2] = np.eye(2)
    Qv[1, 0, :dh] = harden * np.eye(dh)
    Kv[1, 0, 2:] = np.eye(dh)
    Vv[1, 0, slot(0), :2] = Pv[1, 0, slot(0), :2] = np.eye(2)
    Qv[1, 1, :dh] = harden * np.eye(dh)
    Kv[1, 1, :dh] = Vv[1, 1, :dh] = np.eye(dh)
    Pv[1, 1, :dh] = -np.eye(dh)
    for M, val in ((Qv, harden), (Kv, 1.0), (Vv, 1.0), (Pv, -1.0)):
        M[1, 2, slot(L), :2] = val * np.eye(2)
    layers = [taotp.base_layer(k, d, 0, dh) for _ in range(2)]
    for i, layer in enumerate(layers):
        for name, M in (('Q', Qv), ('K', Kv), ('V', Vv)):
            layer[name] = np.einsum('dD,hDk->hdk', U, M[i]) / alpha
        layer['P'] = alpha * np.einsum('dD,hDk->hdk', U, Pv[i])
    p['layers'] = layers
    return p


for V, B, L in ((10, 100, 3), (1000, 100, 10)):
    p = build_search_2d(V, B, L)
    print(f'({V}, {B}, {L}): d_model {taotp.config(p)["d_model"]}, '
          f'{taotp.count_params(p)["n_params"]:,} parameters')
result = check('4.4', build_search_2d)
assert result


# %% [markdown]
# ## Puzzle 4.5 · Hashed keys
#
# Start from the 2-D slots and make every head narrow. Layer 0: the constant padding is
# removed by layer 0's `b2` (an MLP with no hidden units still adds its bias), so head 0 only
# erases the 2-D position and every head needs 2 dimensions. Layer 1: the cleanup heads go
# (messy cleanup: the copied token is written with a factor `out_scale` $= 10^8$ and swamps
# the rest),
# and the match head compares *hashes*: the query $q$ and key $k$ (both $2L$ long) are both
# multiplied by the same random $2L\times m$ matrix with orthonormal columns, which is a sum
# of one random map per key position, as in Chapter 3. Now $d_{head} = m$.
#
# The exact match still scores $|Hq|^2$, but a different key can now score higher when its
# hash happens to be longer, so the hash must not be too short. At prefix 10 a hash of 14
# dimensions gets about 99 % of random inputs right, right at the puzzle's threshold (a
# sample of a few hundred inputs can land on either side); 18 dimensions get about 99.9 %
# (measured on 2,000), still fewer than the 20 of the unhashed key. At prefix 3 with
# only 10 symbols, near matches (two of three tokens equal) are so common that any
# $m < 2L = 6$ loses accuracy, so the reference keeps $m = \min(2L, L + 8)$.

# %%
def build_search_hashed(vocab_size, block_size, prefix_len, hash_dims=None, harden=1e8,
                        out_scale=1e8, seed=0):
    """2-D slots, padding removed by layer 0's b2, messy cleanup in layer 1, and the
    query/key compared through a seeded random hash of min(2L, L + 8) dimensions."""
    L = prefix_len
    m = hash_dims or min(2 * L, L + 8)
    k, D = L + 1, 2 * (L + 1)
    d = D + 1
    U = np.linalg.qr(np.column_stack([np.ones(d), np.eye(d)[:, :D]]))[0][:, 1:]
    alpha = np.sqrt(d / k)
    slot = lambda j: slice(2 * j, 2 * j + 2)
    pad = np.zeros(D)
    pad[2:2 * L:2] = 1.0
    tok_v = np.zeros((vocab_size, D))
    tok_v[:, slot(0)] = circle2(vocab_size)
    tok_v += pad
    pos_v = np.zeros((block_size, D))
    pos_v[:, slot(L)] = circle2(block_size)
    p = taotp.base_params(vocab_size, block_size, d)
    p['tok_emb'] = p['out_emb'] = alpha * tok_v @ U.T
    p['pos_emb'] = alpha * pos_v @ U.T
    dh = max(m, 2)
    Qv, Kv, Vv, Pv = (np.zeros((2, k, D, dh)) for _ in range(4))
    for h in range(k):
        look = np.eye(2) if h == 0 else rot2(-2 * np.pi * h / block_size)   # h places back
        Qv[0, h, slot(L), :2] = harden * look
        Kv[0, h, slot(L), :2] = np.eye(2)
        src, dst, sign = (slot(L), slot(L), -1.0) if h == 0 else (slot(0), slot(h), 1.0)
        Vv[0, h, src, :2] = np.eye(2)
        Pv[0, h, dst, :2] = sign * np.eye(2)
    H = np.linalg.qr(np.random.default_rng(seed).normal(size=(2 * L, m)))[0]
    Qv[1, 0, :2 * L, :m] = harden * H
    Kv[1, 0, 2:, :m] = H
    Vv[1, 0, slot(0), :2] = np.eye(2)
    Pv[1, 0, slot(0), :2] = out_scale * np.eye(2)
    layers = [taotp.base_layer(k, d, 0, dh) for _ in range(2)]
    for i, layer in enumerate(layers):
        for name, Mx in (('Q', Qv), ('K', Kv), ('V', Vv)):
            layer[name] = np.einsum('dD,hDk->hdk', U, Mx[i]) / alpha
        layer['P'] = alpha * np.einsum('dD,hDk->hdk', U, Pv[i])
    layers[0]['b2'] = -alpha * pad @ U.T
    p['layers'] = layers
    return p


X, want = ch04.search_cases(7, 200, 1000, 100, 10)
lines = ['prefix 10, 200 random inputs:']
for m in (6, 14, 18):
    p = build_search_hashed(1000, 100, 10, hash_dims=m)
    acc = np.mean(taotp.last_token_argmax(X, p) == want)
    lines.append(f'  hash of {m:>2} dims: {acc:6.1%} right, '
                 f'{taotp.count_params(p)["n_params"]:,} parameters (book 123,486)')
print('\n'.join(lines))
result = check('4.5', build_search_hashed)
assert result

# %% [markdown]
# ## Puzzle 4.6 · Undefined inputs (reflection)
#
# **Query twice.** The match head splits its attention evenly between the two matches and
# copies the average of the two following tokens. If they agree, that is the token; if not,
# the average lies inside the circle, in the direction half-way between them, and the tied
# output picks the symbol nearest to that direction.

# %%
p = taotp.build_search_transformer(10, 100, 2)
lines = ['input -> answer; layer-1 attention of the last position']
for x in ([1, 2, 5, 1, 2, 5, 1, 2], [1, 2, 5, 1, 2, 7, 1, 2], [1, 2, 3, 1, 2, 9, 1, 2]):
    t = taotp.trace(x, p)
    lines.append(f'{x} -> {int(t.logits[-1].argmax())}; attention: '
                 f'{np.round(t.attn[1][0, -1], 2).tolist()}')
print('\n'.join(lines))

# %% [markdown]
# The last case: 3 and 9 are four steps apart through 0 (9, 0, 1, 2, 3) and six steps the
# other way, so the average of their points lies towards the middle of the shorter arc,
# symbol 1.
#
# **A close but absent query.** With equally spaced tokens, a key that differs from the query
# in one token scores lower than an exact match by the same amount whichever token it is, so
# among partial matches the one with the most agreeing tokens wins, and ties split the
# attention. Partial matches are ranked by how close their differing tokens are. Below, the
# query `7 3` does not occur; the candidates are `6 3` (followed by 8; 6 is one step from 7)
# and `7 1` (followed by 5; 1 is two steps from 3). With evenly spaced tokens `6 3` is closer
# and wins. Move 1 right next to 3 on the circle and `7 1` becomes an almost exact match: the
# program answers as if the query had been found there.

# %%
close = taotp.build_search_transformer(10, 100, 2)
angles = 2 * np.pi * np.arange(10) / 10
angles[1] = angles[3] - 0.02                       # 1 sits right next to 3
close['tok_emb'][:, :3] = taotp.pos_enc_3d(angles)  # out_emb is the same array (tied)
x = [7, 1, 5, 6, 3, 8, 7, 3]
print(f'{x}: evenly spaced -> {int(taotp.decode(x, p, max_steps=1)[-1])}, '
      f'1 and 3 close -> {int(taotp.decode(x, close, max_steps=1)[-1])}')
