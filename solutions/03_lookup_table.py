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
# # Solutions for Chapter 3: Lookup Table
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/solutions/03_lookup_table.ipynb)
#
# Reference answers for every puzzle of [Chapter 3](https://github.com/taotp/taotp-book/blob/main/book/03_lookup_table.ipynb)'s exercises:
# each checked puzzle ends in `assert result`; the questions get a worked answer with the
# numbers computed here.

# %%
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
# ## Puzzle 3.1 · Learn the table instead of building it (held-out accuracy >= 99 %)
#
# **Data.** A training row (`training.lookup_batch`) is 15 tokens: keys planted at random
# places in a stream of random tokens, each key's value as the target where that key ends, no
# target elsewhere. Keys then end at every position of the block, so every relative offset is
# trained, and they often follow another key or a piece of one: the adversarial prefix, where
# the model must not answer for the key that ends one position early.
#
# **Training.** The reference run (`training.reference_run('3.1')`, PyTorch) trains one layer
# with four heads, $d_{model} = 32$ and an MLP of 128 for 3,000 steps of 64 rows with Adam. The
# program and its numbers are stored with the package, so this notebook runs without PyTorch
# (`training.regenerate(['3.1'])` trains it again, with the comparison quoted below).

# %%
import textwrap
from taotp.exercises import training
trained, facts = training.stored('3.1', with_facts=True)
settings = ', '.join(f'{k}={v}' for k, v in facts['settings'].items())
print(textwrap.fill(f'settings: {settings}', 86, subsequent_indent='  '))
print(f'{facts["parameters"]:,} parameters, trained in {facts["seconds"]:.0f} s with one thread')
answer = trained
result = check('3.1', answer)
assert result

# %% [markdown]
# **Guarantee.** Sampling prefixes can only find failures, never prove there are none, and
# here it finds none in 2,200 queries. A search does better: `training.prefix_attack` starts
# from a random prefix for every key and, one position at a time, puts there the token that
# most lowers the margin of the right value. One pass already finds a prefix that makes the
# trained model answer wrong:

# %%
attack = facts['attack']
query = np.array(attack['query'])
ks, vs = training.lookup_table()
print('query:', query.tolist())
print('  right value:', taotp.lookup.lookup_reference(query, ks, vs),
      ' the trained model says:', taotp.last_token_argmax(query[None], trained)[0])
naive = facts['sweep'][0]
print(f'trained on random prefixes only (mix_keys=False):\n'
      f'  {naive["random"]:.1%} and {naive["keys"]:.1%} on the sampled queries,\n'
      f'  {naive["attack"]["wrong"]} keys broken by the search '
      f'(the reference: {attack["wrong"]})')

# %% [markdown]
# Mixing keys into the training prefixes helps, but only a property of the weights gives a
# guarantee: if the last position's attention puts (numerically) zero weight on everything
# older than $l - 1$ positions back, the prefix cannot change the answer, and checking each key
# once is a proof. The hand-built program of the chapter has that property; the trained model
# puts a large share of its attention on prefix tokens:

# %%
rng = np.random.default_rng(31)
ks, vs = taotp.lookup.random_lookup_table(100, 5, 50, rng)
built = taotp.build_lookup_transformer(ks, vs, 50, 15, tok_dims=10, rng=rng)
for mode in ('random', 'keys'):
    right = taotp.lookup.lookup_precision(built, ks, vs, 10, np.random.default_rng(1), mode=mode)
    print(f'prefixes: {mode:>6}: {right:.1%} right')
queries = taotp.lookup.lookup_queries(ks, 10, 50, np.random.default_rng(2))
leak = taotp.trace(queries, built).attn[0][..., -1, :-5].max()    # every head, every query
print('largest attention weight of the last position outside the last 5 tokens:', leak)
print(f'the same for the trained model: {facts["leak"]:.2f}')


# %% [markdown]
# ## Puzzle 3.2 · Concatenate instead of hashing (budget: one layer)
#
# Give each relative position its own slot of `vocab_size` dimensions: the token embedding
# (a layer-normalised one-hot row) lives in slot 0, head $h$ (for $h \ge 1$) reads $h$
# positions back with the hardened rotation of Chapter 3 and copies slot 0 of that position
# into slot $h$. Head 0 is not needed, since slot 0 already holds the current token, and the
# heads need only 3 query dimensions (the position circle) while their values are a whole
# slot wide. Then run every key through the model and let `out_emb[v]` be the sum of the
# layer-normalised final vectors of the keys with value $v$, with the position block zeroed
# so the prefix length cannot matter. Two normalised one-hot rows have dot product
# $V$ when equal and $-V/(V-1) \approx -1$ otherwise, so the score of a value counts, over
# its keys, the positions they share with the query: $l$ for the query's own key. That plain
# sum is not always enough: in a table of 40 keys of 2 tokens over some 50 tokens, two keys
# of one rival value may each share one position with the query, $(a, x)$ and $(y, b)$ for
# the key $(a, b)$, and then the rival ties with the right value (in about one such table
# in twenty). Since the last position's final vector depends on the key alone, the fix is a
# few rounds of the perceptron rule on the keys themselves: wherever the right value does
# not lead its strongest rival by $V/2$ (half a shared position), add the key's vector to
# the right row of `out_emb` and subtract it from the rival's. When some scores of this
# one-term-per-position form rank every key's value first (random tables of these sizes
# almost always admit them; Puzzle 3.11 builds one that does not), the perceptron rule is
# sure to stop, here after a handful of rounds. (Random slot contents of a fixed width would
# add noise to every count; with 32 dimensions that cost a few keys in a hundred.)

# %%
def build(ks, vs, vocab_size, block_size, prefix_len):
    L = taotp.Layout([(f'slot{p}', vocab_size) for p in range(prefix_len)] + [('pos', 3)])
    d = L.d_model
    params = taotp.base_params(vocab_size, block_size, d)
    params['pos_emb'][:, L['pos']] = taotp.pos_enc_3d_array(block_size)
    params['tok_emb'][:, L['slot0']] = taotp.layer_norm(np.eye(vocab_size))
    layer = taotp.base_layer(prefix_len, d, 0, 3)             # queries and keys: 3 dimensions
    layer['V'] = np.zeros((prefix_len, d, vocab_size))        # values: one slot
    layer['P'] = np.zeros((prefix_len, d, vocab_size))
    for h in range(1, prefix_len):
        layer['Q'][h, L['pos']] = taotp.blocks.harden(taotp.shift_matrix(-h, block_size))
        layer['K'][h, L['pos']] = np.eye(3)
        layer['V'][h, L['slot0']] = np.eye(vocab_size)
        layer['P'][h, L[f'slot{h}']] = np.eye(vocab_size)
    params['layers'].append(layer)
    final = taotp.layer_norm(taotp.trace(ks, params).final[:, -1])    # every key, one run
    final[:, L['pos']] = 0
    out = np.zeros((vocab_size, d))
    np.add.at(out, vs, final)
    rows = np.arange(len(vs))
    for _ in range(100):                      # perceptron rounds: a margin of half a position
        scores = final @ out.T
        own = scores[rows, vs].copy()
        scores[rows, vs] = -np.inf
        rival = scores.argmax(axis=1)
        short = own - scores[rows, rival] < vocab_size / 2
        if not short.any():
            break
        np.add.at(out, vs[short], final[short])
        np.subtract.at(out, rival[short], final[short])
    params['out_emb'] = out
    return params

result = check('3.2', build)
assert result

# %% [markdown]
# The price is width: $l \cdot |V| + 3$ dimensions (503 for keys of 5 over 100 tokens)
# where the hash shares one block among all positions.
#
# ## Puzzle 3.3 · Layer norm nearly fixes a random sphere point (no checker)
#
# Write $m$ for the mean of the coordinates of $v$ (with $|v|^2 = d$). Layer norm subtracts $m$
# and divides by the standard deviation $s = \sqrt{|v|^2/d - m^2} = \sqrt{1 - m^2}$ (ignoring
# the tiny epsilon). Since $v \cdot \mathbf 1 = dm$,
#
# $$\frac{v\cdot \mathrm{layer\_norm}(v)}{d} = \frac{|v|^2 - d m^2}{d\,s} = \sqrt{1 - m^2}.$$
#
# By symmetry $E[v_i v_j] = 0$ for $i \ne j$ and $E[v_i^2] = 1$, so $E[m^2] = 1/d \to 0$, hence
# $m \to 0$ in probability and the ratio tends to 1. Numerically (500 points per $d$):

# %%
rng = np.random.default_rng(33)
for d in (3, 10, 100, 1000, 10000):
    v = rng.normal(size=(500, d))
    v *= np.sqrt(d) / np.linalg.norm(v, axis=1, keepdims=True)
    ratio = (v * taotp.layer_norm(v)).sum(axis=1) / d
    print(f'd = {d:>5}: mean {ratio.mean():.5f}, smallest {ratio.min():.5f}')

# %% [markdown]
# ## Puzzle 3.4 · Sums of sphere points (no checker)
#
# The same algebra for any vector $S$ gives $S \cdot \mathrm{layer\_norm}(S)/d = \sqrt{|S|^2/d
# - m_S^2}$. For $S = \sum_{i=0}^{k} v_d(i)$ with the $v_d(i)$ *independent*, the cross terms
# $v(i)\cdot v(j)/d$ vanish as $d$ grows, so $|S|^2/d \to k + 1$, while $m_S \to 0$. The limit is
# $\sqrt{k+1}$: the book's $\sqrt k$ counts one term too few (its sum starts at $i = 0$).
# Independence is the assumption that matters: if all the $v_d(i)$ were the same point, $|S|^2
# = (k+1)^2 d$ and the limit would be $k + 1$.

# %%
rng = np.random.default_rng(34)
d = 20000
for k in range(5):
    v = rng.normal(size=(k + 1, d))
    v *= np.sqrt(d) / np.linalg.norm(v, axis=1, keepdims=True)
    S = v.sum(axis=0)
    same = (k + 1) * v[0]
    print(f'k = {k}: independent {S @ taotp.layer_norm(S) / d:.3f} '
          f'(sqrt(k+1) = {np.sqrt(k + 1):.3f}); all equal {same @ taotp.layer_norm(same) / d:.3f}')

# %% [markdown]
# ## Puzzle 3.5 · One coordinate of a sphere point (no checker)
#
# The slice of the unit sphere at $x_1 = x$ is a sphere of radius $\sqrt{1 - x^2}$ in one
# dimension less, with area $\propto (1-x^2)^{(n-2)/2}$, and the surface meets the slice at a
# slant that contributes a factor $(1 - x^2)^{-1/2}$. So the density of $x_1$ is
# $\propto (1-x^2)^{(n-3)/2}$ on $[-1, 1]$. With $u = (x+1)/2$, $1 - x^2 = 4u(1-u)$ and the
# density of $u$ is $\propto u^{(n-3)/2}(1-u)^{(n-3)/2}$: exactly
# $\mathrm{Beta}(\frac{n-1}{2}, \frac{n-1}{2})$, not just approximately. Its variance
# $\frac{1}{4n}$ gives $\mathrm{Var}(x_1) = 1/n$, the $1/d$ used in Section 3.5.1. Comparing
# moments on 200,000 samples:

# %%
rng = np.random.default_rng(35)
for n in (3, 10, 50):
    x = rng.normal(size=(200_000, n))
    x1 = x[:, 0] / np.linalg.norm(x, axis=1)
    a = (n - 1) / 2
    var_beta = a * a / ((2 * a) ** 2 * (2 * a + 1))                   # Var(u), u ~ Beta(a, a)
    print(f'n = {n:>2}: Var(x1) {x1.var():.5f} vs 4 Var(u) = {4 * var_beta:.5f}; '
          f'E[x1^4] {np.mean(x1 ** 4):.5f} vs 3/(n(n+2)) = {3 / (n * (n + 2)):.5f}')


# %% [markdown]
# ## Puzzle 3.6 · Normalise the hashes (budget: one layer)
#
# Both help. Without normalisation a value that collects several keys gets a long `out_emb`
# row, which wins too often against keys that are not its own. Normalising each key's hash
# before summing removes the spread among hashes; normalising each finished row also removes
# the advantage of values with many keys, and helps much more. The reference answer
# normalises the rows at the end:

# %%
def build_better(ks, vs, vocab, block, key_len, tok_dims, rng=None):
    params = taotp.build_untied_transformer(ks, vs, vocab, block, key_len, tok_dims, rng=rng)
    params['out_emb'] = taotp.layer_norm(params['out_emb'])
    return params

result = check('3.6', build_better)
assert result


# %% [markdown]
# And the other option, one seed, same table size (the book's construction first):

# %%
def build_each_hash_normed(ks, vs, vocab, block, key_len, tok_dims, rng=None):
    params = taotp.build_untied_transformer(ks, vs, vocab, block, key_len, tok_dims, rng=rng)
    hashes = taotp.trace(ks, params).final[:, -1]           # each key's hash, one run
    params['out_emb'] = np.zeros_like(params['tok_emb'])
    np.add.at(params['out_emb'], vs, taotp.layer_norm(hashes))
    return params

ks, vs = taotp.lookup.random_lookup_table(1000, 5, 1000, np.random.default_rng(36))
for name, builder in (('book', taotp.build_untied_transformer),
                      ('normalise each hash', build_each_hash_normed),
                      ('normalise the rows', build_better)):
    params = builder(ks, vs, 1000, 10, 5, 30, rng=np.random.default_rng(0))
    print(f'{name:>20}: {taotp.lookup.lookup_precision(params, ks, vs, 5, 0):.1%}')


# %% [markdown]
# ## Puzzle 3.7 · PostLN (no budget)
#
# Nothing needs to change. The tied program's inputs are already fixed points of layer norm,
# so attention sees the same vectors whether or not a norm comes first. After the layer the
# stream holds the hash; PostLN normalises it (twice: the MLP adds nothing) and the final norm
# once more, and layer norm applied to an already normalised vector changes nothing. Same
# argmax, same table. (We fit it at `tok_dims` 20 rather than 10: on small random tables the
# fit at 10 now and then leaves one key short of its margin, under PreLN as much as PostLN.)

# %%
def build_postln(ks, vs, vocab_size, block_size):
    return taotp.build_lookup_transformer(ks, vs, vocab_size, block_size, tok_dims=20)

result = check('3.7', build_postln)
assert result

# %% [markdown]
# ## Puzzle 3.8 · More text, longer keys (experiment; no checker)
#
# An experiment with 400 grams whose keys have 7 words (the first 3,200 words of the play),
# at $d_{model}$ 23. Longer keys make more grams distinct and the recalled stretches longer,
# but between recalled stretches the program still emits whatever word the hash of an unseen
# key lands on: a lookup table has no notion of similar contexts, so more text mostly buys
# more memorised quotations, not better prose.

# %%
from taotp.corpus import romeo_and_juliet, words
play = [w for w in words(romeo_and_juliet()) if w[0].isalpha()]
ks, vs, vocab = taotp.lookup.ngram_table(play, 400, 7)
poem = taotp.build_lookup_transformer(ks, vs, len(vocab), 7, 20, rng=0)
print(f'{len(ks)} grams, {len(vocab)} words, recalled {taotp.lookup.lookup_precision(poem, ks, vs):.0%}')
ids = {w: i for i, w in enumerate(vocab)}
for start in (0, 805, 2003):     # a long answer continues on the next line, under its start
    prompt = play[start:start + 7]
    out = taotp.decode([ids[w] for w in prompt], poem, max_steps=10, window=True)
    shown = ' '.join(prompt) + ' | '
    print(textwrap.fill(shown + ' '.join(vocab[t] for t in out[7:]), 86,
                        subsequent_indent=' ' * len(shown)))

# %% [markdown]
# ## Puzzle 3.9 · The 20 % ceiling (no checker)
#
# **The scores are additive.** Every token row of the tied program has zero mean, so the
# centring inside the final layer norm changes no dot product with it, and the division by the
# standard deviation scales all logits of a query alike. The argmax is therefore the argmax of
# $E_v \cdot \mathrm{hash}(k) = \sum_p A_p[v, k_p]$ with $A_p = E M_p^\top E^\top$, one
# $V \times V$ table per key position, whatever $d_{model}$ is. With $V = 10$ and $l = 5$ that is
# at most $5 \cdot 10 \cdot 10 = 500$ numbers (fewer that matter, since shifting a column of an
# $A_p$ changes no argmax), and they must pick the right one of 10 values for 1,000 random keys,
# about $1000 \log_2 10 \approx 3{,}300$ bits of labels. A widening model cannot help: once
# $t > V$ the matrices $A_p$ are already arbitrary.
#
# **Measured.** (1) The additive form reproduces the program's answers. (2) Fitting the 500
# numbers directly (a convex softmax regression on one-hot position features, no transformer
# at all) reaches about the same accuracy as the construction. (3) Widening the model past
# $t > V$ changes nothing ($d_{model}$ 13 has $t = 10 = V$ and does a little worse). (4) With vocab 100 the same count is 50,000 numbers for 1,000 keys, and every cell
# of the book's figure reaches 100 %.

# %%
ks, vs = taotp.lookup.random_lookup_table(1000, 5, 10, np.random.default_rng(0))
params = taotp.build_lookup_transformer(ks, vs, 10, 5, 30, optimization_iters=300)
t = 30
E = params['tok_emb'][:, :t]
P = params['layers'][0]['P'][:, :t, :t].copy()
P[0] += np.eye(t)                                       # undo the cleanup to read G_0
M = np.stack([P[h].T for h in range(5)][::-1])          # M[p] for key position p
A = np.einsum('vt,pot,uo->pvu', E, M, E)                # A_p[v, u] = E_v . (E_u M_p)
additive = sum(A[p][:, ks[:, p]] for p in range(5)).T   # (1000, 10)
program = taotp.transformer_batch(ks, params)[:, -1]
print('additive argmax == program argmax:', np.array_equal(additive.argmax(1), program.argmax(1)))
print(f'construction at d_model 33: {np.mean(program.argmax(1) == vs):.1%} right')

X = np.zeros((1000, 50))
X[np.arange(1000)[:, None], np.arange(5) * 10 + ks] = 1        # one-hot token per position
W = np.zeros((50, 10))
for _ in range(5000):
    Z = X @ W
    W -= 0.5 * X.T @ (taotp.softmax(Z) - np.eye(10)[vs]) / 1000
print(f'best additive scorer found directly (500 numbers): {np.mean((X @ W).argmax(1) == vs):.1%}')
print(f'always answering the most common value: {np.bincount(vs).max() / 1000:.1%}')
for width in (13, 63):
    wide = taotp.build_lookup_transformer(ks, vs, 10, 5, width - 3, optimization_iters=300)
    print(f'd_model {width}: {taotp.lookup.lookup_precision(wide, ks, vs):.1%}')

# %% [markdown]
# ## Puzzle 3.10 · A tighter width bound (no checker)
#
# Redo Section 3.5.1's count with the signal in view. For $l$ independent hashed tokens of
# squared length $s$, the right value's score contains $|\mathrm{hash}(k)|^2 \approx l s$, while
# each of the $c \approx n/|V|$ keys of a competing value adds $l^2$ cross dot products of
# variance $s^2/d$ each, a standard deviation of $l s \sqrt{c/d}$. The signal-to-noise ratio is
# $\sqrt{d/c}$: **the key length cancels**. Requiring it to beat the largest of about $|V|$
# competitors for all $n$ keys (a union bound over Gaussian tails) gives
# $d \gtrsim 2\,(n/|V|)\ln(n|V|)$ up to a constant set by how far the random hash matrices are
# from orthogonal, instead of $d \gg n l^2/|V|$. The measurement agrees on the part that
# matters: at fixed width, longer keys do not hurt (they help a little).

# %%
for l in (2, 5, 8):
    ks, vs = taotp.lookup.random_lookup_table(1000, l, 1000, np.random.default_rng(l))
    untied = taotp.build_untied_transformer(ks, vs, 1000, l + 2, l, 40, rng=1)
    print(f'keys of {l}: {taotp.lookup.lookup_precision(untied, ks, vs, 2, 0):.1%} right at tok_dims 40 '
          f'(book\'s n l^2/|V| = {l * l})')

# %% [markdown]
# ## Puzzle 3.11 · An unlearnable table
#
# By 3.9, whatever the width, the program's answer is the argmax of an additive score
# $\sum_p A_p[v, k_p]$ (the untied construction is also linear in the hash, so it is no
# different). XOR on two-token keys defeats every such score: with $D(k) = $ score of 1 minus
# score of 0 $= a[k_0] + b[k_1]$, we would need $a_0 + b_1 > 0$ and $a_1 + b_0 > 0$ but
# $a_0 + b_0 < 0$ and $a_1 + b_1 < 0$; the first two add up to the same number as the last two.
#
# **Smallest.** Four entries. With three or fewer, the one-hot codes of distinct keys (one
# block per position) are affinely independent: if $x_3 = \alpha x_1 + (1-\alpha) x_2$, look at a
# coordinate where $x_1$ is 1 and $x_2$ is 0; it forces $\alpha \in \{0, 1\}$, so $x_3$ would
# repeat a key. Affinely independent points can be sent to any score vectors by a linear map
# (the constant term is free, because each block of a one-hot code sums to 1), so every
# table with three entries is separable.

# %%
xor = {'ks': [[0, 0], [0, 1], [1, 0], [1, 1]], 'vs': [0, 1, 1, 0], 'smallest': 4}
result = check('3.11', xor)
assert result
ks, vs = np.array(xor['ks']), np.array(xor['vs'])
wide = taotp.build_lookup_transformer(ks, vs, 2, 2, 30, optimization_iters=2000)
print(f'the tied builder at d_model 33 on XOR: {taotp.lookup.lookup_precision(wide, ks, vs):.0%} right')

