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
# # Solutions for Chapter 5: Min, Max and Sort
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/solutions/05_sort.ipynb)
#
# One reference answer per puzzle, checked by the same checkers as the exercises, and
# worked answers (with computed numbers) for the reflection puzzles. Try the puzzles in
# `exercises/05_sort.ipynb` first.

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
# ## Puzzle 5.1 · Sort 33 values (budget: 1 layer, d_model ≤ 6)
#
# Two things limit the chapter's Sort: the ratio 1/2 between consecutive gaps and the
# position of the query points. Write $g$ for the gap ratio and look at what the query
# $q_i$ really needs:
#
# - nearer to $p_{i+1}$ than to $p_{i+2}$: $q_i < (p_{i+1} + p_{i+2})/2$ (all later points
#   are then ordered by distance automatically);
# - nearer to the farthest larger point than to $p_i$: $q_i > (p_i + p_{n-1})/2$.
#
# Such a $q_i$ exists when $p_{n-1} - p_{i+2} < p_{i+1} - p_i$, i.e. when the tail after two
# gaps is shorter than one gap: $g^2/(1-g) < 1$, which holds for every $g$ below
# $(\sqrt5 - 1)/2 \approx 0.618$. Slower shrinking means larger gaps at the crowded end,
# so more numbers fit before rounding wins. We take $g = 0.6$ and put $q_i$ in the middle of
# its window; the construction is otherwise the book's.

# %%
def build_sort_33(n=33, block_size=64, ratio=0.6):
    p = np.concatenate(([0.0], np.cumsum(ratio ** np.arange(n - 1))))
    p = taotp.sort.stretch(p, np.pi)
    q = np.empty(n)
    for i in range(n - 2):
        q[i] = ((p[i] + p[-1]) / 2 + (p[i + 1] + p[i + 2]) / 2) / 2   # middle of the window
    q[n - 2], q[n - 1] = p[-1], p[0]                                  # as in nextpoint
    params = taotp.build_sort_transformer(n, block_size)
    params['tok_emb'][:, taotp.sort.SORT_LAYOUT['p']] = taotp.pos_enc_3d(p)
    params['tok_emb'][:, taotp.sort.SORT_LAYOUT['q']] = taotp.pos_enc_3d(q)
    return params

result = check('5.1', build_sort_33())
assert result


# %% [markdown]
# How far does it go? The same sweep as the chapter's, for both choices (float64):

# %%
def sort_limit(builder, sizes):
    for n in sizes:
        params = builder(n)
        prompts = taotp.sort.random_sort_inputs(n, n - 1, 40, rng=np.random.default_rng(n))
        out = taotp.decode_batch(prompts, params, n - 1)[:, n:]
        if (out != np.sort(prompts[:, :-1], axis=1)).any():
            return n - 1
    return sizes[-1]

print('book (gap ratio 1/2, q at a quarter):',
      sort_limit(lambda n: taotp.build_sort_transformer(n, 2 * n), range(26, 32)))
print('gap ratio 0.6, q mid-window:        ',
      sort_limit(lambda n: build_sort_33(n, 2 * n), range(33, 42)))


# %% [markdown]
# ## Puzzle 5.2 · Min for a million values (budget: d_model ≤ 8)
#
# Two weaknesses show up at the ends of the chapter's arc. The query $3\sin\theta$ nearly
# vanishes for tokens near angle 0 or $\pi$, and the key $\cos\theta$ is flat near 0, so
# neighbouring tokens there get scores that differ only at second order. Keep the tokens on
# the middle of the arc, $[\pi/4, 3\pi/4]$: there the query is at least $3/\sqrt2$ and the key
# changes at first order, about $2\cdot10^{-6}$ per token for a million tokens, which the
# query scale $10^8$ turns into a score gap of several hundred. The read-out compares
# neighbouring tokens at second order ($\approx 10^{-12}$), so the copied value must drown the
# query's own token far more completely: `P` goes from $10^6$ to $10^{12}$.

# %%
def build_min_million(vocab_size=1_000_000, block_size=32):
    params = taotp.build_min_transformer(vocab_size, block_size)
    params['tok_emb'] = params['out_emb'] = taotp.pos_enc_3d(
        np.linspace(np.pi / 4, 3 * np.pi / 4, vocab_size))
    params['layers'][0]['P'][0] = np.eye(3) * 1e12
    return params

result = check('5.2', build_min_million())
assert result


# %% [markdown]
# ## Puzzle 5.3 · Make Sort as easy as Min (worked answer)
#
# Sort is "Min over the numbers larger than the last one printed". Attention can already
# take a Min; what it cannot do cheaply is *exclude* keys. So give each head a second,
# cheap bilinear form that acts as a mask: a key takes part only if
# $g_q(x_t)\cdot g_k(x_s) > 0$ (otherwise its score is $-\infty$, as for future positions).
# For Sort the gate needs two numbers per side, $g_q(i) = (1, -(i + \tfrac12))$ and
# $g_k(j) = (j, 1)$, so the gate is $j - i - \tfrac12 > 0$; the score is the Min score. Below,
# a few lines of NumPy run this gated attention on the 5.2 embeddings, for a vocabulary of
# 10,000, with no precision trick at all.

# %%
def gated_sort(prompt, vocab_size=10_000, scale=1e8):
    emb = taotp.pos_enc_3d(np.linspace(np.pi / 4, 3 * np.pi / 4, vocab_size))
    seq = list(prompt)
    for _ in range(len(prompt) - 1):
        keys = np.array(seq)
        last = seq[-1]
        query, key = emb[last] @ taotp.pos_enc_3d(np.pi / 2), emb[keys] @ taotp.pos_enc_3d(0.0)
        score = scale * query * key
        gate = keys * 1.0 - (last + 0.5)                    # (j, 1) . (1, -(i + 1/2))
        weights = taotp.softmax(np.where(gate > 0, score, -np.inf))
        seq.append(int(np.argmax(weights @ emb[keys] @ emb.T)))
    return seq[len(prompt):]

gate_rng = np.random.default_rng(53)
tests = [taotp.sort.random_sort_inputs(10_000, int(k), 1, rng=gate_rng)[0]
         for k in gate_rng.integers(1, 40, 200)]
wrong = sum(gated_sort(t) != sorted(t[:-1].tolist()) for t in tests)
print(f'gated attention sorts {len(tests)} seeded inputs over 1..9,999: {wrong} wrong')
assert wrong == 0


# %% [markdown]
# The same gate is useful far beyond sorting: it is a *filter* followed by an aggregation
# (RASP's select/aggregate), e.g. "the most recent token of a given kind", "the smallest
# value with a given key", or a hard restriction to a window of positions, each without
# spending exponential precision or a dimension per value.
#
# ## Puzzle 5.4 · Sort a large vocabulary (budget: vocabulary ≥ 1,000, d_model ≤ 2,048)
#
# Write $i$ for the last printed number. We want the score of key $j$ to be
#
# $$A\,[j > i] - j/V,$$
#
# so every larger number beats every smaller one, and among the larger ones the smallest
# wins. The indicator $[j > i]$ is a dot product of a one-hot of $i$ (query) with a
# "thermometer" of $j$ (key: a 1 in every slot $k < j$); the linear term needs one more
# dimension. One-hot rows with an extra, always-zero "anchor" dimension make this survive
# layer norm: if every column of `Q`, `K`, `V` sums to zero over the residual dimensions
# (the anchor row balances it), the centring of layer norm cancels and only its constant
# scale remains, which we fold into the weights. The price is about one dimension per value:
# $d_\text{model} = V + 1$, with no precision limit in sight.

# %%
def build_general_sort(vocab_size=1000, block_size=64, out_scale=1e6):
    V, d = vocab_size, vocab_size + 1                      # dims 0..V-1: one-hot, V: anchor
    rows = taotp.layer_norm(np.eye(d)[:V])           # tok_emb: layer-norm fixed one-hots
    sigma = np.sqrt((1 / d) * (1 - 1 / d))                 # their common standard deviation
    hard = 50.0 * V * np.sqrt(d)                           # score gap 1/V becomes 50

    def through_ln(features):                              # W with rows @ W = features
        W = np.zeros((d, features.shape[1]))
        W[:V] = sigma * features
        W[V] = -W[:V].sum(axis=0)                          # columns sum to 0
        return W

    query = np.concatenate([2.0 * np.eye(V), np.ones((V, 1))], axis=1)        # A = 2
    thermo = (np.arange(V)[:, None] > np.arange(V)[None, :]).astype(float)
    key = np.concatenate([thermo, -np.arange(V)[:, None] / V], axis=1)
    params = taotp.base_params(V, block_size, d)
    params['tok_emb'] = params['out_emb'] = rows
    layer = taotp.base_layer(n_heads=1, d_model=d, d_ff=0, d_head=d)
    layer['Q'][0] = through_ln(query) * hard
    layer['K'][0] = through_ln(key)
    layer['V'][0] = np.eye(d)
    layer["P"][0] = np.eye(d) * out_scale                  # messy cleanup, as in Min
    params['layers'].append(layer)
    return params

general = build_general_sort()
print(str(taotp.config(general)).replace(" 'vocab_size'", "\n 'vocab_size'"))
print('parameters:\n ', taotp.count_params(general))
result = check('5.4', general)
assert result

# %% [markdown]
# ## Puzzle 5.5 · Negative numbers (worked answer)
#
# Nothing in the construction cares what the numbers *mean*: token ids are labels, and what
# matters is their order along the powerpoints. Shift every value by an offset so the most
# negative allowed value lands on token 1, keep token 0 as the terminator, and shift the
# output back. With the chapter's 28-token program that covers $-13 \dots 13$:

# %%
sorter = taotp.build_sort_transformer(28, 56)
values = [5, -13, 0, 13, -2, 7, -8]
offset = 14
out = taotp.decode([v + offset for v in values] + [0], sorter, max_steps=len(values))
print(values, '->', [int(t) - offset for t in out[len(values) + 1:]])
assert [int(t) - offset for t in out[len(values) + 1:]] == sorted(values)


# %% [markdown]
# If the terminator must stay the value 0 on the wire, give it its own id and put its
# powerpoint first (smallest); the same relabelling then handles zero as a number.
#
# ## Puzzle 5.6 · Repeated elements
#
# After printing $i$, the program must print $i$ again while the input holds more copies of
# $i$ than have been printed. Two layers do it:
#
# 1. **Layer 0** marks every position from the terminator on: its head attends to a 0 if one
#    is visible and writes a flag. Its MLP splits the token's one-hot into a `pos` block
#    (input positions) and a `neg` block (printed positions), $\mathrm{relu}(e_k + f - 1)$
#    and $e_k - \mathrm{relu}(e_k + f - 1)$.
# 2. **Layer 1** has two heads that both vote for a token. Head 0 is the 5.4 head (the
#    smallest input number above $i$) and votes with weight $a$. Head 1 attends evenly to
#    every copy of $i$ and reads `pos - neg`, i.e.
#    $(c_\text{in} - c_\text{printed}) / (c_\text{in} + c_\text{printed})$, and votes for $i$
#    with weight $b$. That ratio is at least $1/24$ when a copy is left (inputs of at most 12
#    numbers) and exactly 0 otherwise, so $b = 48a$ makes $i$ win exactly when it should.
#
# Every block is a one-hot or a pair, so each residual stream has the same mean and norm at
# every position of a layer; with columns summing to zero (the anchor again) layer norm is
# just a known constant scale.

# %%
def build_sort_with_repeats(vocab_size=16, block_size=32, max_len=12):
    V = vocab_size
    L = taotp.Layout([('tok', V), ('flag', 2), ('pos', V), ('neg', V), ('vote', V), ('anchor', 1)])
    d = L.d_model
    tok, flag, pos, neg, vote = (np.arange(d)[L[name]]
                                 for name in ('tok', 'flag', 'pos', 'neg', 'vote'))
    anchor = L['anchor'].start

    def zero_sum(W):                                  # balance every column on the anchor row
        W[anchor] -= W.sum(axis=0)
        return W

    def std(n_ones):                                  # a residual of n_ones ones and zeros
        return np.sqrt(n_ones / d - (n_ones / d) ** 2)

    s0, s2 = std(2), std(3)                           # entering layer 0 / layer 1
    params = taotp.base_params(V, block_size, d)
    params['tok_emb'][np.arange(V), tok] = 1.0
    params['tok_emb'][:, flag[1]] = 1.0              # the flag pair starts as (0, 1)
    params['out_emb'][np.arange(V), vote] = 1.0      # read the votes

    l0 = taotp.base_layer(n_heads=1, d_model=d, d_ff=2 * V, d_head=1)
    l0['Q'][0][tok, 0] = 40.0 * s0 ** 2               # same query everywhere
    l0['K'][0][tok[0], 0] = 1.0                      # keys: "is the terminator"
    l0['V'][0][tok[0], 0] = 1.0
    for W in (l0['Q'][0], l0['K'][0], l0['V'][0]):
        zero_sum(W)
    l0['P'][0][flag, 0] = s0, -s0                    # flag pair becomes (f, 1 - f)
    l0['M1'][tok, np.arange(V)] = s0                 # relu(e_k + f - 1)
    l0['M1'][flag[0], :V] = s0
    l0['M1'][tok, V + np.arange(V)] = s0             # relu(e_k)
    zero_sum(l0['M1'])
    l0['b1'][:V] = -1.0
    l0['M2'][np.arange(V), neg] = 1.0
    l0['M2'][np.arange(V), pos] = -1.0
    l0['M2'][V + np.arange(V), pos] = 1.0
    params['layers'].append(l0)

    l1 = taotp.base_layer(n_heads=2, d_model=d, d_ff=0, d_head=V + 1)
    qa, ka = l1['Q'][0], l1['K'][0]                   # head 0: smallest input above i
    qa[tok, np.arange(V)], qa[tok, V] = 2.0, 1.0
    ka[tok, :V] = np.arange(V)[:, None] > np.arange(V)[None, :]
    ka[tok, V] = -np.arange(V) / V
    qa *= 40.0 * V * s2 ** 2 * np.sqrt(V + 1)
    l1['V'][0][tok, np.arange(V)] = 1.0
    l1['P'][0][vote, np.arange(V)] = s2               # vote weight a = 1
    l1['Q'][1][tok, np.arange(V)] = 40.0 * s2 ** 2 * np.sqrt(V + 1)   # head 1: copies of i
    l1['K'][1][tok, np.arange(V)] = 1.0
    l1['V'][1][pos, np.arange(V)] = 1.0
    l1['V'][1][neg, np.arange(V)] = -1.0
    l1['P'][1][vote, np.arange(V)] = 4.0 * max_len * s2              # b = 48 a
    for h in range(2):
        for key in ('Q', 'K', 'V'):
            zero_sum(l1[key][h])
    params['layers'].append(l1)
    return params

repeats = build_sort_with_repeats()
print(str(taotp.config(repeats)).replace(" 'vocab_size'", "\n 'vocab_size'"))
print('[5, 2, 5, 2, 0] ->', taotp.decode([5, 2, 5, 2, 0], repeats, max_steps=4)[5:].tolist())
result = check('5.6', repeats)
assert result

# %% [markdown]
# ## Puzzle 5.7 · Numbers of several digits
#
# Write $R$ for the input numbers not yet printed *completely*. The number being printed,
# $N$, is the smallest of $R$, and it can be printed greedily, one digit at a time, without
# ever naming it: its length is the smallest length present in $R$, and its digit number
# $k$ is the smallest digit at index $k$ among the numbers of $R$ with that length and
# with the digits printed so far as prefix. Every one of these is "the smallest present"
# over a handful of values, so counting is enough, and counting is what 5.6 taught us:
# attend evenly to all candidates and let printed copies cancel input copies.
#
# Five layers, all of them reading a residual stream that is laid out as one-hot blocks:
#
# 1. **Layer 0** copies the tokens 1, 2 and 3 places back (one-hot positions, hard
#    attention) and flags the positions from the input's end token on. Its MLP cleans the
#    copies at the first positions and marks "boundary" (a delimiter or the start).
# 2. **Layer 1** (MLP) describes each delimiter: one *key slot* per (length $L$, index $k$,
#    prefix) of its number, the number's digits signed +1 (input) or -1 (printed), its signed
#    length, and a signed 1. At every position it also records how many digits of the current
#    output number are already out ($k = 0..3$).
# 3. **Layer 2** averages the signed lengths over all delimiters (unprinted count per
#    length) and, with a fixed-weight sink at position 0, the signed 1s (is more than one
#    number left?). Its MLP picks $L^*$, the smallest length left.
# 4. **Layer 3** (MLP) turns $(L^*, k, \text{prefix})$ into a *query slot*, or, when $k = L^*$,
#    votes for a comma (numbers left) or the end token.
# 5. **Layer 4** has one head per digit index: it attends evenly to the delimiters whose key
#    slot equals the query slot (or to a sink if none) and sums their signed digit; the MLP
#    votes for the smallest digit with a positive count.
#
# One trick keeps layer norm out of the way: a "ballast" pair $(10^6, -10^6)$ in every
# token embedding dominates the variance, so layer norm divides every position by the same
# number (to about $10^{-10}$); with weight columns summing to zero (the anchor dimension),
# the centring cancels, and every weight below is written for the raw residual stream.

# %%
import itertools

def build_multi_digit_sort(block_size=64, ballast=1e6, H=80.0):
    COMMA, END = 10, 11
    n_tok = 12
    slots = [(L, k, P) for L in (1, 2, 3) for k in range(L)
             for P in itertools.product(range(10), repeat=k)]
    slot_id = {s: i for i, s in enumerate(slots)}
    S = len(slots)
    L_ = taotp.Layout([('tok', n_tok), ('pos', block_size), ('ballast', 2), ('anchor', 1),
                       ('r1', n_tok), ('r2', n_tok), ('r3', n_tok), ('endseen', 1),
                       ('c1', 10), ('c2', 10), ('c3', 10), ('b', 3),
                       ('kslot', S), ('sdig', 30), ('slen', 3), ('sgn', 1), ('qk', 4),
                       ('lencount', 3), ('rcount', 1), ('lstar', 3), ('rflag', 1),
                       ('qslot', S), ('dcount', 10), ('vote', n_tok)])
    d = L_.d_model
    idx = lambda name, i=0: L_[name].start + i
    anchor = idx('anchor')
    # the ballast (B, -B) dominates the variance, so layer norm divides by (almost) a constant
    s = ballast * np.sqrt(2 / d)

    def read(W):
        """Raw weights (rows = residual dims) -> weights on LN(x): scale by s, balance on anchor."""
        W = W * s
        W[anchor] -= W.sum(axis=0)
        return W

    p = taotp.base_params(n_tok, block_size, d)
    p['tok_emb'][np.arange(n_tok), idx('tok') + np.arange(n_tok)] = 1.0
    p['tok_emb'][:, idx('ballast')] = ballast
    p['tok_emb'][:, idx('ballast', 1)] = -ballast
    p['pos_emb'][np.arange(block_size), idx('pos') + np.arange(block_size)] = 1.0
    p['out_emb'][np.arange(n_tok), idx('vote') + np.arange(n_tok)] = 1.0

    def mlp(units, d_ff=None):
        """units: list of (terms {dim: coeff}, bias, outputs {dim: coeff}) -> M1, b1, M2."""
        M1 = np.zeros((d, len(units)))
        b1 = np.zeros(len(units))
        M2 = np.zeros((len(units), d))
        for j, (terms, bias, outs) in enumerate(units):
            for dim, c in terms.items():
                M1[dim, j] += c
            b1[j] = bias
            for dim, c in outs.items():
                M2[j, dim] += c
        return read(M1), b1, M2

    def AND(indicators, outs, negated=()):
        """relu(sum of 0/1 indicators (and 1 - negated ones) - (n - 1))."""
        terms = {}
        for dim in indicators:
            terms[dim] = terms.get(dim, 0) + 1.0
        for dim in negated:
            terms[dim] = terms.get(dim, 0) - 1.0
        n = len(indicators) + len(negated)
        return terms, -(n - 1) + len(negated), outs

    def layer(n_heads, d_head, d_value, units):
        lay = taotp.base_layer(n_heads, d, len(units), d_head)
        lay['V'] = np.zeros((n_heads, d, d_value))
        lay['P'] = np.zeros((n_heads, d, d_value))
        if units:
            lay['M1'], lay['b1'], lay['M2'] = mlp(units)
        return lay

    tok = lambda t: idx('tok', t)
    G = lambda h: [idx('pos', t) for t in range(h)]        # [t < h] = sum of these

    # ---- layer 0: copy the tokens 1, 2, 3 back; flag "END seen"; clean the copies
    units = []
    for h in (1, 2, 3):
        for dg in range(10):
            terms = {idx(f'r{h}', dg): 1.0}
            for g in G(h):
                terms[g] = -1.0
            units.append((terms, 0.0, {idx(f'c{h}', dg): 1.0}))
        units.append(({g: 1.0 for g in G(h)}, 0.0, {idx('b', h - 1): 1.0}))
        terms = {idx(f'r{h}', COMMA): 1.0, idx(f'r{h}', END): 1.0}
        for g in G(h):
            terms[g] = -1.0
        units.append((terms, 0.0, {idx('b', h - 1): 1.0}))
    l0 = layer(4, block_size, n_tok, units)
    for h in (1, 2, 3):
        Q, K = np.zeros((d, block_size)), np.zeros((d, block_size))
        for t in range(h, block_size):
            Q[idx('pos', t), t - h] = H * np.sqrt(block_size)
        K[L_['pos'], :] = np.eye(block_size)
        Vr = np.zeros((d, n_tok))
        Vr[L_['tok'], :] = np.eye(n_tok)
        l0['Q'][h - 1], l0['K'][h - 1], l0['V'][h - 1] = read(Q), read(K), read(Vr)
        l0['P'][h - 1][L_[f'r{h}'], :] = np.eye(n_tok)
    Q, K, Vr = np.zeros((d, block_size)), np.zeros((d, block_size)), np.zeros((d, n_tok))
    Q[L_['tok'], 0] = H * np.sqrt(block_size)              # the same query everywhere
    K[tok(END), 0] = 1.0
    Vr[tok(END), 0] = 1.0
    l0['Q'][3], l0['K'][3], l0['V'][3] = read(Q), read(K), read(Vr)
    l0['P'][3][idx('endseen'), 0] = 1.0
    p['layers'].append(l0)

    # ---- layer 1 (MLP only): describe every delimiter (key slots, signed digits, length)
    #      and every position as a query (how many digits of the current number are out)
    b1, b2, b3 = idx('b', 0), idx('b', 1), idx('b', 2)
    c = lambda h, dg: idx(f'c{h}', dg)
    delim_terms = [tok(COMMA), tok(END)]          # exactly one of them is 1 at a delimiter

    def len_conds(Lx):                            # (indicators, negated) for "number has Lx digits"
        return {1: ([b2], []), 2: ([b3], [b2]), 3: ([], [b2, b3])}[Lx]

    units = []
    for (Lx, k, P) in slots:
        ind, neg = len_conds(Lx)
        digits = [c(Lx - j, P[j]) for j in range(k)]
        terms, bias, outs = AND(ind + digits, {idx('kslot', slot_id[(Lx, k, P)]): 1.0}, neg)
        terms[tok(COMMA)] = terms.get(tok(COMMA), 0) + 1.0   # "is a delimiter" (COMMA or END)
        terms[tok(END)] = terms.get(tok(END), 0) + 1.0
        units.append((terms, bias - 1.0, outs))
    for Lx in (1, 2, 3):
        ind, neg = len_conds(Lx)
        for sign in (+1, -1):
            # input side: 1 - endseen + [END]; output side: endseen - [END]
            side = ({idx('endseen'): -1.0, tok(END): 1.0}, 1.0) if sign > 0 else \
                   ({idx('endseen'): 1.0, tok(END): -1.0}, 0.0)
            base_terms, base_bias, _ = AND(ind, {}, neg)
            def unit(extra, out_dim):
                terms = dict(base_terms)
                for dim, v in list(side[0].items()) + [(tok(COMMA), 1.0), (tok(END), 1.0)] + extra:
                    terms[dim] = terms.get(dim, 0) + v
                return terms, base_bias + side[1] - 2.0 - len(extra), {out_dim: float(sign)}
            units.append(unit([], idx('slen', Lx - 1)))
            for k in range(Lx):
                for dg in range(10):
                    units.append(unit([(c(Lx - k, dg), 1.0)], idx('sdig', 10 * k + dg)))
    for sign in (+1, -1):
        side = ({idx('endseen'): -1.0, tok(END): 1.0}, 1.0) if sign > 0 else \
               ({idx('endseen'): 1.0, tok(END): -1.0}, 0.0)
        terms = dict(side[0])
        terms[tok(COMMA)] = terms.get(tok(COMMA), 0) + 1.0
        terms[tok(END)] = terms.get(tok(END), 0) + 1.0
        units.append((terms, side[1] - 1.0, {idx('sgn'): float(sign)}))
    digit_terms = {tok(dg): 1.0 for dg in range(10)}       # [current token is a digit]
    units.append(({tok(COMMA): 1.0, tok(END): 1.0}, 0.0, {idx('qk', 0): 1.0}))
    units.append(({**digit_terms, b1: 1.0}, -1.0, {idx('qk', 1): 1.0}))
    units.append(({**digit_terms, b1: -1.0, b2: 1.0}, -1.0, {idx('qk', 2): 1.0}))
    units.append(({**digit_terms, b1: -1.0, b2: -1.0}, 0.0, {idx('qk', 3): 1.0}))
    l1 = layer(1, 1, 1, units)
    p['layers'].append(l1)

    # ---- layer 2: count the unprinted numbers of each length, and all unprinted numbers
    units = []
    M, M2 = 16.0, 256.0
    for Lx in (1, 2, 3):
        terms = {idx('lencount', Lx - 1): M}
        for smaller in range(1, Lx):
            terms[idx('lencount', smaller - 1)] = -M2
        units.append((terms, 0.0, {idx('lstar', Lx - 1): 1.0}))
        units.append((terms, -1.0, {idx('lstar', Lx - 1): -1.0}))
    E, Kr = 1000.0, 10.0
    units.append(({idx('rcount'): Kr * E}, -1.45 * Kr, {idx('rflag'): 1.0}))
    units.append(({idx('rcount'): Kr * E}, -1.45 * Kr - 1.0, {idx('rflag'): -1.0}))
    l2 = layer(2, block_size, 3, units)
    Q, K, Vr = np.zeros((d, block_size)), np.zeros((d, block_size)), np.zeros((d, 3))
    Q[L_['tok'], 0] = H * np.sqrt(block_size)
    K[tok(COMMA), 0] = K[tok(END), 0] = 1.0
    Vr[L_['slen'], :] = np.eye(3)
    l2['Q'][0], l2['K'][0], l2['V'][0] = read(Q), read(K), read(Vr)
    l2['P'][0][L_['lencount'], :] = np.eye(3)
    Q, K, Vr = np.zeros((d, block_size)), np.zeros((d, block_size)), np.zeros((d, 3))
    Q[L_['tok'], 0] = np.log(E) * np.sqrt(block_size)
    K[idx('pos', 0), 0] = 1.0
    Vr[idx('sgn'), 0] = 1.0
    l2['Q'][1], l2['K'][1], l2['V'][1] = read(Q), read(K), read(Vr)
    l2['P'][1][idx('rcount'), 0] = 1.0
    p['layers'].append(l2)

    # ---- layer 3 (MLP only): the query slot (L*, k, prefix); votes for COMMA / END
    units = []
    for (Lx, k, P) in slots:
        ind = [idx('lstar', Lx - 1), idx('qk', k)]
        if k == 1:
            ind.append(tok(P[0]))
        if k == 2:
            ind += [c(1, P[0]), tok(P[1])]
        units.append(AND(ind, {idx('qslot', slot_id[(Lx, k, P)]): 1.0}))
    for Lx in (1, 2, 3):
        units.append(AND([idx('lstar', Lx - 1), idx('qk', Lx), idx('rflag')],
                         {idx('vote', COMMA): 10.0}))
        units.append(AND([idx('lstar', Lx - 1), idx('qk', Lx)], {idx('vote', END): 10.0},
                         negated=[idx('rflag')]))
    l3 = layer(1, 1, 1, units)
    p['layers'].append(l3)

    # ---- layer 4: per digit index k, the unprinted numbers matching the query slot vote for
    #      their digit k (signed: input +1, printed -1); the MLP keeps the smallest digit left
    n_k = [sum(1 for s_ in slots if s_[1] == k) for k in range(3)]
    dh = max(n_k) + 1
    units = []
    for dg in range(10):
        units.append(({idx('dcount', dg): 16.0}, 0.0, {idx('vote', dg): 20.0 - dg}))
        units.append(({idx('dcount', dg): 16.0}, -1.0, {idx('vote', dg): -(20.0 - dg)}))
    l4 = layer(3, dh, 10, units)
    for k in range(3):
        Q, K, Vr = np.zeros((d, dh)), np.zeros((d, dh)), np.zeros((d, 10))
        col = 0
        for (Lx, kk, P) in slots:
            if kk == k:
                Q[idx('qslot', slot_id[(Lx, kk, P)]), col] = H * np.sqrt(dh)
                K[idx('kslot', slot_id[(Lx, kk, P)]), col] = 1.0
                col += 1
        Q[L_['tok'], dh - 1] = H / 2 * np.sqrt(dh)             # sink: any non-delimiter
        K[L_['tok'], dh - 1] = 1.0
        K[tok(COMMA), dh - 1] = K[tok(END), dh - 1] = 0.0
        Vr[idx('sdig', 10 * k):idx('sdig', 10 * k) + 10, :] = np.eye(10)
        l4['Q'][k], l4['K'][k], l4['V'][k] = read(Q), read(K), read(Vr)
        l4['P'][k][L_['dcount'], :] = np.eye(10)
    p['layers'].append(l4)
    return p

sorter = build_multi_digit_sort()
print(str(taotp.config(sorter)).replace(" 'd_head'", "\n 'd_head'")
      .replace(" 'vocab_size'", "\n 'vocab_size'"))
counts = taotp.count_params(sorter)
print('parameters:\n' + ''.join(f'{key:>11}' for key in counts) + '\n'
      + ''.join(f'{n:>11,}' for n in counts.values()))
from taotp.exercises.ch05 import encode_numbers
for numbers in ([42, 7, 100], [7, 70, 700, 71, 17]):
    x = encode_numbers(numbers)
    print(numbers, '->', taotp.decode(x, sorter, max_steps=len(x))[len(x):].tolist())
result = check('5.7', sorter)
assert result

# %% [markdown]
# ## Puzzle 5.8 · Train a transformer to sort (held-out accuracy >= 95 %)
#
# **Learning it.** One layer is enough, as for the hand-built program. The reference run
# (`training.reference_run('5.8')`, PyTorch) trains one layer with four heads,
# $d_{model} = 48$ and an MLP of 96 on fresh random prompts of random length (teacher forcing,
# the loss on the answer only), 3,000 steps of 64 prompts with Adam; the program and its
# numbers are stored with the package, so this notebook runs without PyTorch
# (`training.regenerate(['5.8'])` trains it again).

# %%
import textwrap
from taotp.exercises import training
trained, facts = training.stored('5.8', with_facts=True)
settings = ', '.join(f'{k}={v}' for k, v in facts['settings'].items())
print(textwrap.fill(f'settings: {settings}', 100, subsequent_indent='  '))
print(f'{facts["parameters"]:,} parameters (the hand-built Sort of this chapter: '
      f'{taotp.count_params(taotp.build_sort_transformer(28, 56))["n_params"]:,})\n'
      f'trained in {facts["seconds"]:.0f} s with one thread; final loss {facts["loss"]:.1e}')
answer = trained
result = check('5.8', answer)
assert result

# %% [markdown]
# **How it does it.** The hand-built program has one head that, at every output step, looks
# at the number to print next. The trained model spreads that job over its four heads:

# %%
mine = training.attention_on_next(trained)
built = training.attention_on_next(taotp.build_sort_transformer(28, 56))
print('mean attention on the next number, per head:\n  trained',
      [round(w, 2) for w in mine], ' hand-built', [round(w, 3) for w in built])

# %% [markdown]
# **A guarantee?** Counting the inputs shows why a guarantee is the hard part. With 27 possible
# numbers, the number of different Sort inputs is the number of ordered selections of 1..27
# numbers:

# %%
from math import perm
inputs = sum(perm(27, k) for k in range(1, 28))
print(f'distinct inputs for vocabulary 28: {inputs:.3e}')

# %% [markdown]
# No data set or test set comes close, so accuracy on held-out data can only estimate. A
# guarantee needs an argument about the mechanism. For the hand-built program we have one:
# the attention of each step depends only on the set of numbers present and the last one
# printed, not on their order (up to the order of floating-point sums), so checking every
# subset (as the chapter does for small
# vocabularies) covers every input. A trained model gives no such structure unless one proves
# it by inspecting the weights, which is exactly what this book does by hand.
