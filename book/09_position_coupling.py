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
# # 9. Multi-Operand Addition with Position Coupling
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/book/09_position_coupling.ipynb)
#
# A transformer that adds numbers should keep adding correctly when the numbers get longer
# or when there are more of them. Trained models usually do not. This chapter follows
# Cho, Cha, Bhojanapalli and Yun [PC], who combine two tricks, a *scratchpad* and
# *multi-level position coupling*. Their Theorem 4.1 proves that one layer with four heads
# is then enough for any bounds you fix in advance: for up to $m$ operands of up to $n$
# digits there is such a model, and its width needs to grow only like
# $\log_2(m + 1) + \log_2(n + 1)$. One weight set covers one box of sizes; a bigger box
# costs a few more dimensions (*How big is it?*), and past its box a weight set refuses
# or fails (*Limits*). We write that proof's weights down, run them, and check every token
# on a grid of up to 30 operands of 30 digits.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp

# %%
from taotp import coupling as C

# %% [markdown]
# ## The problem
#
# Input: `m` non-negative integers. Output: their sum, produced token by token by greedy
# decoding. The model we build here prints the running sums on its way, least significant
# digit first, separated by `>`:

# %%
adder = C.build_multi_operand_adder(max_digits=30, max_operands=30)
response, total = adder.generate([57, 48, 96])
print('prompt   ', ''.join(C.VOCAB[t] for t in adder.prompt([57, 48, 96])))
print('response ', ''.join(response), '->', total)

# %% [markdown]
# ```{admonition} Try it yourself first
# :class: tip
# The puzzles of this chapter walk through the same construction one piece at a time:
# [exercises/09_position_coupling.ipynb](https://github.com/taotp/taotp-book/blob/main/exercises/09_position_coupling.ipynb).
# ```
#
# ## Why length generalisation fails
#
# Two things stand in the way of a model that must work beyond the lengths it has seen.
#
# 1. **Fan-in grows with the input.** Without a scratchpad, the units digit of
#    `a_1 + ... + a_m` depends on the units digit of *every* operand (and on carries that
#    come from everywhere). One attention step would have to gather `m` tokens, and `m` is
#    not bounded.
# 2. **Positions are absolute.** With ordinary position indices 0, 1, 2, ... the tokens that
#    must meet sit at distances that change with the lengths, and an embedding row that was
#    never seen in training (position 700, say) means nothing to the model.
#
# The baseline format without a scratchpad (still with coupled IDs, introduced below) shows
# the first problem. Count how many query tokens share the significance of the answer's
# units digit:

# %%
for m in (3, 11, 30):
    tokens, pos = C.baseline_sequence([7] * m)
    answer_start = tokens.index('=') + 1
    need = [i for i in range(answer_start) if tokens[i].isdigit() and pos[i] == pos[answer_start]]
    print(f'{m:2} operands: the units digit of the sum must read {len(need)} tokens')
print(''.join(C.baseline_sequence([57, 48, 96])[0]), '(no scratchpad; answer reversed)')

# %% [markdown]
# ## The idea: a scratchpad, then coupled position IDs
#
# **Scratchpad.** Make the model write intermediate results that turn every step into a
# step with a fixed number of inputs. For parity the intermediate results are the running
# parities; for addition they are the running sums `b_j = a_1 + ... + a_j`, starting from
# an all-zero `b_0`. Each running sum is written reversed (units first), so the digit being
# written only needs one digit of the next operand, one digit of the previous running sum,
# and a carry. All numbers are zero-padded to the width `ell` of the largest possible sum.
#
# **Position coupling.** Replace the position index 0, 1, 2, ... by IDs that encode the
# task's structure, so that tokens that must interact get equal IDs (or IDs one apart).
# For addition each token gets two IDs:
#
# - level 1, *significance*: a digit worth $10^j$ gets $s_1 + 1 + j$ wherever it sits;
#   every separator (`+`, `=`, `>`) gets $s_1$;
# - level 2, *which number*: operand $a_i$ and the `+` after it get $s_2 + i - 1$; running
#   sum $b_i$ and the separator in front of it get $s_2 + i$. So $a_i$ and $b_{i-1}$,
#   exactly the two numbers added to form $b_i$, share a level-2 ID.
#
# Each level has its own embedding table; both rows are added to the token embedding.
# During training the offsets $s_1, s_2$ are drawn at random, so every table row gets
# trained; at test time they are 1. Here is parity first (one level), then the worked
# addition example of the paper:

# %%
tokens, pos = C.parity_sequence('0101')
print(''.join(tokens), ''.join(map(str, pos)))
tokens, p1, p2 = C.addition_sequence([57, 48, 96])
print(''.join(tokens))
print(''.join(map(str, p1)), '(level 1, paper: 432143214321234123412341234)')
print(''.join(map(str, p2)), '(level 2, paper: 111122223331111222233334444)')

# %%
C.plot_ids(tokens, [p1, p2], ['significance', 'which number'],
           title='57+48+96: coupled IDs (equal colours = equal IDs within a level)')

# %% [markdown]
# The separator glyph is `>`. The paper prints an arrow, which does not survive being
# copied out of a PDF; the authors' released code uses `>`; and it is a single ASCII
# character that reads naturally as "then". `$` is both the start and the end token.
#
# Multiplication uses the same idea with a two-stage scratchpad (partial products, then
# shifted running sums) and three ID levels. We only build its format here; the paper
# gives no construction for it.

# %%
tokens_x, *levels_x = C.multiplication_sequence(37, 925)
print(''.join(tokens_x))
C.plot_ids(tokens_x, levels_x, ['level 1', 'level 2', 'level 3'], title='37*925: three levels')

# %% [markdown]
# Training-style data uses random offsets, for example with the paper's `max_pos = 40`
# per level:

# %%
rng = np.random.default_rng(0)
for _ in range(3):
    offsets = C.random_offsets(ell=3, m=3, max_pos=(40, 40), rng=rng)
    _, q1, q2 = C.addition_sequence([57, 48, 96], offsets=offsets)
    print(offsets, q1[:8], q2[:8])

# %% [markdown]
# ## Building it
#
# ### Step 1: position codes on a hypercube
#
# The construction needs position embeddings in which "same ID" is easy to test with a
# dot product, in few dimensions. The code of ID $k$ is the binary expansion of $k-1$
# written with signs: $v_k \in \{+1,-1\}^D$. Every code has squared norm $D$; two different
# codes differ in at least one sign, so their dot product is at most $D - 2$. A gap of 2
# between "equal" and "different" is all attention needs.

# %%
codes = np.array([C.cube_code(3, k) for k in range(1, 9)])
print(codes.astype(int))
print('Gram matrix:\n', (codes @ codes.T).astype(int))

# %% [markdown]
# Codes cannot be shifted by a linear map, yet the heads must also find "ID + 1". The trick
# is to store, next to each token's code, the code of the *next* ID. A level therefore
# occupies $2P$ dimensions: `POS` $= v_p$ and `POS_NEXT` $= v_{p+1}$; BOS (ID 0) gets zeros.
#
# ### Step 2: the residual stream
#
# Nineteen named dimensions plus the codes, $d = 19 + 2P_1 + 2P_2$:

# %%
import textwrap
print(textwrap.fill(repr(adder.layout), 86, subsequent_indent=' ' * 7))
print('d_model =', adder.layout.d_model, '= 19 + 2 P1 + 2 P2 with P1, P2 =', adder.P1, adder.P2)

# %% [markdown]
# ### Step 3: four matching heads
#
# Every head uses one pattern. The query reads some code blocks of the query token, the key
# reads the matching blocks of the key token, both scaled by $\sqrt\lambda$, so a key whose
# codes all match scores exactly $\lambda D$ and any other key at most $\lambda(D-2)$. One
# extra coordinate gives BOS the same score $\lambda D$: it is an attention sink, so "no key
# matches" still has a well-defined answer, and BOS's share $1/x$ of the attention counts the
# matches. With $\lambda$ large, each head averages uniformly over BOS and its matches.
# (The book's engine divides every score by $\sqrt{d_\text{head}}$ and the paper's model does
# not, so the program's `Q` carries an extra factor $\sqrt{d_\text{head}}$; that is the only
# change needed to run the paper's weights on `taotp`'s forward pass, with `norm='none'`,
# the identity in place of each layer norm.)
#
# | head | query block | key block | finds | value | writes |
# |---|---|---|---|---|---|
# | 1 digit sum | `POS1_NEXT`, `POS2` | `POS1`, `POS2_NEXT` | ID1 + 1, ID2 - 1 | 3 NUM | `PRE_SUM` |
# | 2 carry | `POS1`, `POS2` | `POS1`, `POS2_NEXT` | same ID1, ID2 - 1 | 3 NUM | `PRE_CARRY` |
# | 3 arrow | `POS1_NEXT` | `POS1` | ID1 + 1 | IS_BOS | `PRE_ARROW` |
# | 4 EOS | `POS1`, `POS2` | `POS1`, `POS2` | same IDs | IS_BOS | `PRE_EOS` |
#
# Head 1 finds two keys (a digit of $a_i$ and one of $b_{i-1}$) plus BOS, which is why its
# value is three times the digit: the average of three becomes the pair sum. Head 2 looks
# one place lower for the carry. Head 3 sees only BOS exactly when no token has a larger
# significance, i.e. at the last digit of a number: time for a separator. Head 4 sees BOS,
# the token itself and one partner except in the last running sum, which has no partner.
#
# The maps below use the worked example at the test offsets $(s_1, s_2) = (1, 1)$; each
# row is a query, each column a key.

# %%
seq = adder.tokens([57, 48, 96])[:-1]      # $ query = scratchpad (the last EOS is never fed)
labels = [C.VOCAB[t] for t in seq]
run = adder.trace(seq)                     # taotp.trace with the coupled IDs and norm='none'
fig = taotp.plot.figure((10, 2.8))
C.draw_attention(fig, run.attn[0], labels, title='57+48+96')
fig

# %% [markdown]
# On an instance of 11 operands of 11 digits, the setting of the paper's trained-model
# figure, the same four patterns appear at scale: heads 1 and 2 have one short
# anti-diagonal into the query (the current operand, written plainly) and one long diagonal
# into the previous running sum; head 3 fans out over all digits of the next significance.

# %%
ops11 = C.random_operands(11, 11, rng=np.random.default_rng(11))
seq11 = adder.tokens(ops11)[:-1]
attn11 = adder.trace(seq11).attn[0]
print(len(seq11), 'tokens; the sum is', sum(ops11))
fig = taotp.plot.figure((9, 2.6))
C.draw_attention(fig, attn11, sqrt=True, title='11 x 11 (square roots of the weights)')
fig

# %% [markdown]
# ### Step 4: the feed-forward layer (83 ReLUs)
#
# After attention, each response token holds the pair sum $S$ of the place it must write
# (`PRE_SUM`), the pair sum of the place below (`PRE_CARRY`) and the digit it wrote there
# (`NUM`). The carry into the current place is hidden in those two: the lower place sent a
# carry exactly when its pair sum exceeds its written digit by 9 or 10 (0 or -1 otherwise).
# So $g = \text{PRE\_SUM} + (\text{PRE\_CARRY} - \text{NUM})/10 + 0.21$ equals $S + c$
# plus 0.11 or 0.21. Ten double trapezoids, eight ReLUs each, turn $g$ into a one-hot
# digit: $f_k$ is exactly 1 on $[k, k + 0.5] \cup [k + 10, k + 10.5]$ and 0 away from them.
# Three more units make the flags: `ARROW` fires when `PRE_ARROW` is 1, and `EOS` when in
# addition `PRE_EOS` is 1/2 (the last running sum).

# %%
fig = taotp.plot.figure((6.5, 2.2))
C.draw_trapezoids(fig)
fig

# %%
H = adder.params['layers'][0]['M1']
print('hidden units:', H.shape[1], ' (80 digit units + ARROW + EOS + constant)')
S, prev, cin = np.meshgrid(np.arange(19), np.arange(19), (0, 1), indexing='ij')
out = C.digit_mlp(S + 0.099, prev, (prev + cin) % 10)
assert np.array_equal(out.argmax(-1), (S + (prev + cin) // 10) % 10) and np.allclose(out.max(-1), 1)
print('one-hot and correct on all', S.size, 'cases, even with g shifted by 0.099')

# %% [markdown]
# ### Step 5: readout, and the residual stream over the response
#
# The readout gives digit $k$ the logit `SUM_k`, the separator 10·`ARROW` and EOS
# 100·`EOS`, so a flag overrides the digit whenever it fires. Here is everything the layer
# wrote, one row per response token:

# %%
L = adder.layout
start = seq.index(C.TOKEN_ID['='])
written = slice(L['PRE_SUM'].start, L['EOS'].stop)
shown = run.resid_post[0][start:, written].copy()
shown[:, :2] /= 10                      # pair sums go up to 18; the rest lives in [-1, 1]
names = ['PRE_SUM/10', 'PRE_CARRY/10'] + L.labels()[written][2:]
taotp.plot.residual(shown, names, tokens=labels[start:],
                    title='57+48+96: what the layer writes, one row per response token')

# %% [markdown]
# ## Does it work?
#
# One weight set, sized for 30 operands of 30 digits ($P_1 = 6$, $P_2 = 5$, $d = 41$),
# checked teacher-forced (every scratchpad digit, every separator and the single EOS) on a
# grid of operand counts and lengths with one seeded problem per cell and test offsets
# (1, 1), plus one more problem per cell with random offsets. Teacher forcing is enough: if
# every prediction matches the true next token, greedy decoding writes the same sequence.
# The full 30 × 30 grid, for both this model and the PreLN port below, runs in
# `tests/test_coupling_adder.py`; set `FULL = True` to run it here.

# %%
FULL = False
counts = range(1, 31) if FULL else (1, 2, 3, 5, 8, 13)
lengths = range(1, 31) if FULL else (1, 2, 4, 7, 12, 20)
rng = np.random.default_rng(9)
checked = 0
for m in counts:
    for n in lengths:
        ops = C.random_operands(m, n, rng=rng)
        for offsets in ((1, 1), C.random_offsets(C.pad_length(ops), m, adder.max_pos, rng=rng)):
            want, got = adder.teacher_forced(ops, offsets)
            assert got == want and got.count('$') == 1, (ops, offsets)
            checked += 1
big = C.random_operands(30, 30, rng=rng)
resp, total = adder.generate(big)
assert total == sum(big)
print(f'{checked} problems exact; 30 x 30 decoded greedily: {len(resp)} tokens, total correct')

# %% [markdown]
# ## The PreLN port
#
# The paper's model has no normalisation. The book's transformer normalises before
# attention, before the MLP and before the readout, divides scores by $\sqrt{d_\text{head}}$
# and has biases. The construction survives with three changes: every feature is stored as
# a pair $(v, -v)$ and every row gets the same norm (digits as $(a, -a, r, -r)$ with
# $a^2 + r^2 = 2$; BOS, which has no codes, gets a filler pair), so the first layer norm is
# one fixed scale that we fold into `Q`, `K`, `V`; the heads write $\pm\varepsilon$ pairs
# ($\varepsilon = 10^{-3}$) that barely move the norm, and the MLP reads them back with gain
# $1/(2\varepsilon)$; the MLP's outputs are pairs too, so the last layer norm only rescales
# the logits. The port runs on `taotp.transformer` with two position tables.

# %%
port = C.build_multi_operand_adder(30, 30, norm=True)
taotp.validate_params(port.params)
print('d_model', port.layout.d_model, '(42 + 4(P1 + P2) = 86)')
rng = np.random.default_rng(3)
for m, n in ((3, 2), (7, 12), (15, 9), (30, 30)):
    ops = C.random_operands(m, n, rng=rng)
    a, b = adder.teacher_forced(ops), port.teacher_forced(ops)
    assert a == b and a[0] == a[1]
resp_port, total_port = port.generate([57, 48, 96])
print(''.join(resp_port), total_port, '(KV-cached taotp.decode with the coupled IDs as positions)')

# %% [markdown]
# ### The same tricks for parity
#
# Parity with the running-parity scratchpad needs even less: one head whose query reads
# `POS_NEXT` finds the query bit with the next ID, the MLP XORs it with the token's own bit
# using two ReLUs, and the sink's share of the attention flags the last bit. With the same
# PreLN pairing this is a one-layer, one-head program for the book's transformer; building
# it is puzzle 9.16, and the checker runs it with the IDs of `C.parity_positions`:

# %%
tokens_p, _ = C.parity_sequence('0110')
prompt_p = [C.PARITY_VOCAB.index(c) for c in ['$'] + tokens_p[:5]]
print(''.join(tokens_p), '| IDs of the prompt $0110=:', C.parity_positions(prompt_p).tolist())

# %% [markdown]
# ## How exact is "exact"? The role of $\lambda$
#
# Soft attention leaks a little weight to non-matching keys: at most about $N e^{-2\lambda}$
# for $N$ tokens. The trapezoids tolerate an error of 0.11 in $g$ and the flags similar
# slack, which gives the sufficient condition $\lambda \ge \tfrac12 \ln(1000 N)$. Measured
# thresholds are much lower, and grow only slowly with $N$:

# %%
lams = np.arange(1.5, 3.51, 0.25)   # every lambda above the range is exact as well
sizes_lam = [(3, 2), (5, 5), (10, 10), (20, 20)]
rng = np.random.default_rng(5)
problems = {mn: [C.random_operands(*mn, rng=rng) for _ in range(2)] for mn in sizes_lam}
frac = np.zeros((len(sizes_lam), len(lams)))
for j, lam in enumerate(lams):
    model = C.build_multi_operand_adder(20, 20, lam=lam)
    for i, mn in enumerate(sizes_lam):
        frac[i, j] = np.mean([np.equal(*model.teacher_forced(p)) for p in problems[mn]])
Ns = [len(C.scratchpad_text(problems[mn][0])) + 1 for mn in sizes_lam]
for (m, n), N, row in zip(sizes_lam, Ns, frac):
    print(f'{m:2} operands x {n:2} digits, N = {N:4}: smallest exact lambda '
          f'{lams[np.argmax(row == 1)]:.2f}, bound {C.lambda_bound(N):.2f}')
fig = taotp.plot.figure((7, 3))
C.draw_lambda_sweep(fig, lams, frac, [f'{m} operands x {n} digits, N = {N}'
                                      for (m, n), N in zip(sizes_lam, Ns)],
                    [C.lambda_bound(N) for N in Ns])
fig

# %% [markdown]
# ## How big is it?
#
# Only the position tables and the code width depend on the problem size; heads, MLP and
# readout are the same for every size. The width grows with the logarithm of the
# lengths and counts. With the corrected rule $2^{P_1} \ge \ell + 2$, $P_2 = \lceil\log_2(m+1)\rceil$:

# %%
print(f'{"n":>4} {"m":>4} {"ell":>4} {"P1":>3} {"P2":>3} {"d":>4} {"d paper":>8} {"d PreLN":>8}'
      f' {"total":>7} {"non-zero":>8}')
for n, m in ((2, 3), (10, 10), (13, 13), (30, 30), (100, 100)):
    z = C.sizes(n, m)
    model = C.build_multi_operand_adder(n, m)
    tot = taotp.count_params(model.params)['n_params']
    nz = taotp.count_non0_params(model.params)['n_params']
    print(f'{n:4} {m:4} {z["ell"]:4} {z["P1"]:3} {z["P2"]:3} {z["d_model"]:4} '
          f'{C.sizes(n, m, literal=True)["d_model"]:8} {z["d_model_preln"]:8} {tot:7,} {nz:8,}')

# %% [markdown]
# The paper's formula ("d paper") is one code bit short in some rows; see *Limits* below.
# Counts use the book's census (`count_params`, `count_non0_params`): the untied readout is
# counted, both position tables are counted. Counting the bias-free weights by hand ($Q$
# and $K$ hold $4P_1 + 3P_2 + 4$ non-zeros each, the MLP $325 + 84$, the readout 12, the
# token table 24) and using the smallest tables that hold every ID ($\ell + 1$ and $m + 1$
# rows) gives about 700 for $n = m = 10$; the next cell counts ours.

# %%
model10 = C.build_multi_operand_adder(10, 10)
nz10 = taotp.count_non0_params(model10.params)
print(nz10)
print(taotp.count_non0_params(C.build_multi_operand_adder(10, 10, norm=True).params), '(PreLN)')
# the smallest tables hold IDs up to (ell + 1, m + 1) = (13, 11)
smallest_tables = 2 * model10.P1 * 13 + 2 * model10.P2 * 11
print('with the smallest tables:', nz10['n_params'] - nz10['pos_emb'] + smallest_tables,
      '(the hand count: about 700)')

# %%
ns = np.unique(np.logspace(0, 3, 25).astype(int)).tolist()
counts_m = (2, 10, 100)
widths = {m: [C.sizes(n, m)['d_model'] for n in ns] for m in counts_m}
one_hot = {m: [19 + 2 * (C.sizes(n, m)['ell'] + 2) + 2 * (m + 1) for n in ns] for m in counts_m}
non_zero = {m: [taotp.count_non0_params(C.build_adder_params(n, m))['n_params'] if n <= 200
                else np.nan for n in ns] for m in counts_m}
fig = taotp.plot.figure((8, 3))
C.draw_growth(fig, ns, widths, one_hot, non_zero, counts_m)
fig

# %% [markdown]
# ## Limits
#
# ### Capacity: a heatmap in the style of the paper's Figure 1
#
# A fixed weight set only knows the IDs its tables hold. Take $P_1 = 4$, $P_2 = 3$ (built
# for up to 7 operands of 12 digits): level-1 IDs go up to 15 and level-2 IDs up to 8. We
# evaluate it beyond, letting IDs wrap around the hypercube (the only thing the codes can
# do; by default the adder refuses such problems with a `ValueError` naming its capacity,
# and `check_capacity=False` lets them wrap). Inside the box the adder is exact; outside,
# the codes collide and it fails on every cell we tried.

# %%
small = C.build_multi_operand_adder(12, 7)
print('P1, P2 =', small.P1, small.P2, ' max IDs =', small.max_pos)
PER_CELL = 2 if FULL else 1
grid_m, grid_n = np.arange(1, 13), np.arange(1, 17)
acc = np.zeros((len(grid_n), len(grid_m)))
rng = np.random.default_rng(1)
for i, n in enumerate(grid_n):
    for j, m in enumerate(grid_m):
        ok = 0
        for _ in range(PER_CELL):
            ops = C.random_operands(int(m), int(n), rng=rng)
            want, got = small.teacher_forced(ops, check_capacity=False)
            ok += want == got
        acc[i, j] = 100 * ok / PER_CELL
inside = np.array([[small.fits(C.random_operands(int(m), int(n), rng=rng)) for m in grid_m]
                   for n in grid_n])
assert np.all(acc[inside] == 100) and np.all(acc[~inside] == 0)
fig = taotp.plot.figure((6, 4))
C.draw_capacity(fig, acc, inside, grid_m, grid_n,
                'exact match (%), one weight set with P1 = 4, P2 = 3; white: ID capacity')
fig

# %% [markdown]
# The paper's Figure 1 looks alike but shows something else. Its red box is the range the
# models were *trained* on (2 to 10 operands of 1 to 10 digits), not a capacity: their
# position-ID tables hold 40 IDs per level (Table 2), and the trained 6-layer 8-head models
# with scratchpad and bi-level coupling keep working far outside the box, all the way to
# 30 operands of 30 digits, where a response is 1,023 tokens long (Section 4.3).
# The architecture study of Section 4.3 (heatmaps in Figure 10, Appendix C) gives numbers
# for the whole test grid of 1 to 30 digits and 2 to 30 operands: the 2-layer 2-head models
# reach at least 90.0 % exact match in every cell (median over 6 trials), the 6-layer
# 8-head models at least 67.8 %. A trained model generalises past the sizes it saw, with
# some errors; this hand-set weight set is exact up to the IDs its tables hold and refuses
# anything past them:

# %%
try:
    small.teacher_forced(C.random_operands(8, 3, rng=rng))
except ValueError as err:
    print(textwrap.fill(str(err), 86))

# %% [markdown]
# ### The off-by-one in the code width
#
# The paper sizes the level-1 codes with $P_1 = \lceil\log_2 \ell\rceil$ and tables of
# $2^{P_1}$ IDs. For the worked example that is $P_1 = 2$: the last digit of every number
# gets ID $4 = 2^{P_1}$, whose *next* code wraps around to $v_1$, the code of the
# separators. Head 3 then finds matching keys where it should find none, `PRE_ARROW` never
# reaches 1 and the separator is never written. One more bit ($2^{P_1} \ge \ell + 2$)
# fixes it:

# %%
literal = C.build_multi_operand_adder(2, 3, literal=True)
want, got = literal.teacher_forced([57, 48, 96])
print('literal width P1 =', literal.P1, ': wanted', want, ' got', got)
resp_lit, total_lit = literal.generate([57, 48, 96], max_steps=24)
print('greedy decoding:', ''.join(resp_lit), '-> total', total_lit)
fixed = C.build_multi_operand_adder(2, 3)
print('corrected P1 =', fixed.P1, ':', ''.join(fixed.generate([57, 48, 96])[0]))

# %% [markdown]
# ### Notes on the sources
#
# Where this chapter departs from the paper, and why:
#
# - **Code width.** We use $2^{P_1} \ge \ell + 2$ (shown above by computation). The
#   paper's sufficient width (App. D.4.2: $P_1 = \lceil\log_2 \ell\rceil$, so
#   $d = 2\lceil\log_2 \ell\rceil + 2\lceil\log_2(m + 1)\rceil + 19$ with
#   $\ell = n + 1 + \lfloor\log_{10} m\rfloor$; the column "d paper" of our sizes table) is
#   one bit short whenever $\ell$ or $\ell + 1$ is a power of two. The line before it asks for
#   $\ell + 1 \le 2^{P_1}$, which is still one ID short.
# - **Padding.** The experiments pad every number of an example to the digits of
#   $(10^L - 1)\,m$; the proof pads to $n + 1 + \lfloor\log_{10} m\rfloor$. Our formats use
#   the experiments' rule (it gives the paper's strings); the weight set is sized by the
#   proof's rule, which bounds every instance. The construction works for either.
# - **Head 4 at two response positions.** The appendix's residual tables disagree with each
#   other about `PRE_EOS` at the `=` and at the separator before the second-to-last running
#   sum. The run gives 1/3 and 1/2 (below), matching the head's definition; the EOS unit is
#   $-1$ and $0$ there, and no prediction changes.
# - **Glyphs.** `>` for the arrow, `*` for the multiplication sign, `$` for BOS/EOS.

# %%
adder7 = C.build_multi_operand_adder(2, 7)
r_pos = adder7.trace(adder7.tokens([57, 48, 96])[:-1], offsets=(4, 2))
L7 = adder7.layout
for k, what in ((13, "'='"), (21, "'>' before 501")):
    pe = r_pos.resid_mid[0][k - 1, L7['PRE_EOS'].start]
    eos = r_pos.resid_post[0][k - 1, L7['EOS'].start]
    print(f'k = {k} ({what}): PRE_EOS = {round(pe, 4) + 0.0:.4f}, '
          f'EOS unit = {round(eos, 3) + 0.0:+.3f}')

# %% [markdown]
# ## Play with it
#
# Choose the size of a random problem and $\lambda$: the figure shows the four heads'
# attention (square-rooted, so faint weights show) and whether the teacher-forced response
# is exact. The player below it is the same figure without a kernel: $\lambda$ sweeps from
# 0.5 to 4 on a 3-operand, 2-digit problem; below about 2 the heads blur and the output
# goes wrong.

# %% tags=["nbval-ignore-output", "remove-output"]
heads = C.heads_explorer()
heads.widget()

# %% tags=["nbval-ignore-output"]
heads.player('lam', values=(0.5, 1.0, 1.5, 2.0, 2.5, 4.0))

# %% [markdown]
# Step through the generation of the worked example: at step $t$ the model has written
# $t$ response tokens; each row shows one head's weights for the query (outlined) that
# writes the next one. (The player shows the last eight steps: $b_2$, $b_3$ and EOS.)

# %% tags=["nbval-ignore-output", "remove-output"]
steps = C.step_explorer([57, 48, 96])
steps.widget()

# %% tags=["nbval-ignore-output"]
steps.player('step', values=range(8, 16))

# %% [markdown]
# ## Summary
#
# - A scratchpad of reversed running sums turns $m$-operand addition into $m$ two-operand
#   additions; each written digit needs 2 digits and a carry, whatever $m$ and $n$ are.
# - Bi-level coupled IDs (significance, which number) put those two digits at fixed ID
#   offsets from the writing token: $(+1, -1)$.
# - One layer, four heads and 83 ReLUs suffice (Theorem 4.1), with width
#   $d = 19 + 2P_1 + 2P_2$: 29 for the worked example, 41 for 30 operands of 30 digits.
# - One weight set is exact on every cell of the 30 × 30 grid, norm-free and ported to
#   the book's PreLN transformer ($d = 86$); measured exact from $\lambda \approx 2.25$ on
#   the worked example, below the sufficient $\tfrac12\ln(1000N) = 5.12$.
# - The paper's code width is one bit short: with $2^{P_1} = \ell + 1$ the separator is
#   never written. Use $2^{P_1} \ge \ell + 2$.
# - The same ingredients give a one-layer, one-head parity program (puzzle 9.16).
#
# ## Puzzles
#
# In [exercises/09_position_coupling.ipynb](https://github.com/taotp/taotp-book/blob/main/exercises/09_position_coupling.ipynb):

# %%
from taotp.exercises import registry
for p in registry().values():
    if p.chapter == 9:
        print(f'{p.id:5} {p.kind:8} {p.title}')

# %% [markdown]
# ## References
#
# - [PC] H. Cho, J. Cha, S. Bhojanapalli, C. Yun. *Arithmetic Transformers Can
#   Length-Generalize in Both Operand Length and Count*. ICLR 2025.
#   [arXiv:2410.15787](https://arxiv.org/abs/2410.15787),
#   [OpenReview](https://openreview.net/forum?id=eIgGesYKLG); the authors' code:
#   <https://github.com/HanseulJo/position-coupling>. Theorem 4.1 and its Appendix D are the
#   construction built here; Figures 1, 7 and 10, Table 2 and Section 4.3 are quoted above.
# - H. Cho et al. *Position Coupling: Improving Length Generalization of Arithmetic
#   Transformers Using Task Structure*. NeurIPS 2024,
#   [arXiv:2405.20671](https://arxiv.org/abs/2405.20671) (the carry identity and MLP shapes).
# - S. McLeish et al. *Transformers Can Do Arithmetic with the Right Embeddings*. 2024
#   (Abacus embeddings, a close relative of coupling).
# - M. Nye et al. *Show Your Work: Scratchpads for Intermediate Computation*. 2021;
#   C. Anil et al. *Exploring Length Generalization in Large Language Models*. 2022.
# - See also the book's {doc}`06_addition` for two-operand addition without coupling.
