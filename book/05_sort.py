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
# # 5. Min, Max and Sort
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/book/05_sort.ipynb)
#
# Three order problems, each solved by one attention head and nothing else: no MLP, no
# positions. Min and Max need three residual dimensions and a handful of non-zero weights
# besides the token table. Sort needs six dimensions and leans on a geometric trick whose
# points crowd together exponentially fast, so it is exact only for a small vocabulary:
# we measure exactly how small, in float64 and in float32.

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
# **Sort.** The input is a list of *distinct* positive numbers, one token each, closed by a
# terminator, for which we reuse the number 0. The program is asked for exactly one output
# token per number and must produce the numbers in increasing order. "Vocabulary size"
# means the largest allowed number plus one (room for the 0).
#
# **Min and Max.** The input is any list of numbers (repeats allowed); the answer is its
# smallest (largest) element. Because the model is causal, every position in fact answers
# for the prefix that ends there: it computes the *minimum so far*.
#
# All three answers ignore the order of the input, so every program of this chapter leaves
# `pos_emb` at zero. Here are the finished programs on the two examples of the chapter:

# %%
min_program = taotp.build_min_transformer(vocab_size=19, block_size=8)
sort_program = taotp.build_sort_transformer(n=19, block_size=16)
example = [6, 2, 0, 12, 18, 7, 12, 12]
print('Min of', example, '->', taotp.decode(example, min_program, max_steps=1)[-1])
print('Sort of [6, 2, 12, 18, 7, 0] ->',
      taotp.decode([6, 2, 12, 18, 7, 0], sort_program, max_steps=5)[6:].tolist())
print('plain-Python references:', taotp.sort.min_so_far(example)[-1],
      taotp.sort.sort_reference([6, 2, 12, 18, 7, 0]))

# %% [markdown]
# ```{admonition} Spoilers ahead
# :class: warning
# Try Min, and then Sort, yourself before reading on. The
# [exercise notebook](https://github.com/taotp/taotp-book/blob/main/exercises/05_sort.ipynb)
# has checkers for the puzzles of this chapter (a bigger Sort vocabulary, Min for millions
# of values, Sort for a large vocabulary, repeated elements, multi-token numbers).
# ```
#
# ## The idea behind Min
#
# Attention with a hard softmax already *is* an arg-max: every query picks the key with
# the highest score. So we only need a score that, for every query, grows as the key's
# number shrinks. Put token $t$ of a vocabulary of $V$ on the layer-norm circle of
# Chapter 3 at angle
#
# $$\theta_t = \frac{2\pi\,(t+1)}{2V+2} \in (0, \pi),$$
#
# the upper half of the circle, so smaller numbers sit closer to angle 0. Points on that
# circle are fixed by layer norm and satisfy $e(a)\cdot e(b) = 3\cos(a-b)$. Let the key of
# every token read its component along $e(0)$, i.e. $3\cos\theta_s$, which *decreases* as
# $s$ grows. Let the query of every token read its component along $e(\pi/2)$, i.e.
# $3\sin\theta_t$, which is *positive* on the whole upper half. Their product
#
# $$\text{score}(t, s) = \frac{N}{\sqrt 3}\; 3\sin\theta_t\; 3\cos\theta_s$$
#
# is, for every query $t$, a positive multiple of a decreasing function of $s$. With a large
# $N$ the softmax becomes a hard arg-max that lands on the smallest number seen so far. The
# value copies that token's point, scaled so that it drowns the query's own embedding
# ("messy cleanup"), and the tied output embedding reads it back. Max is the same program
# with the key direction turned around to $e(\pi)$.

# %%
small = taotp.build_min_transformer(vocab_size=10, block_size=10)
taotp.plot.circle(small['tok_emb'], labels=[str(t) for t in range(10)],
                  title='Min: tokens 0-9 on the upper half of the sqrt(3)-circle')

# %% [markdown]
# ## Building Min
#
# The whole program is one layer with one head of width 3 and no MLP. Only four weight
# matrices are non-zero, and of the query and key matrices only the first column:

# %%
layer = min_program['layers'][0]
np.set_printoptions(precision=4, suppress=True)
harden, out_scale = taotp.sort.minmax.HARDEN, taotp.sort.minmax.OUT_SCALE   # the book's 1e8, 1e6
print('Q[0][:, 0] =', layer['Q'][0, :, 0], f' (e(pi/2) times harden = {harden:g})')
print('K[0][:, 0] =', layer['K'][0, :, 0], ' (e(0))')
print(f'V[0] = identity, P[0] = out_scale * identity ({out_scale:g}):',
      np.array_equal(layer['V'][0], np.eye(3)),
      np.array_equal(layer['P'][0], out_scale * np.eye(3)))
print('Max differs only in K:', taotp.build_max_transformer(19, 8)['layers'][0]['K'][0, :, 0])

# %% [markdown]
# Tracing the example shows the mechanism: each row (a query) puts all of its weight on
# the position of the smallest number it can see. Before the 0 arrives that is the 2 at
# position 1; from position 2 on it is the 0.

# %%
trace = taotp.trace(example, min_program)
print('min so far, model:    ', trace.logits.argmax(-1).tolist())
print('min so far, reference:', taotp.sort.min_so_far(example))
taotp.plot.attention(trace.attn[0], tokens=example, title='Min: attention of the only head')

# %% [markdown]
# ## Does Min work?
#
# Exhaustively on a small vocabulary (every sequence of length 5 over 5 tokens, every
# prefix checked), then on seeded inputs at vocabulary 2,000 (inside the limit that the *Limits* section
# measures). Half of the values of the
# seeded inputs come from the 20 smallest and 20 largest tokens: those sit at the ends of
# the arc, where the construction is weakest (see *Limits*).

# %%
import itertools
every = np.array(list(itertools.product(range(5), repeat=5)))
for name, builder, reference in (('Min', taotp.build_min_transformer, taotp.sort.min_so_far),
                                 ('Max', taotp.build_max_transformer, taotp.sort.max_so_far)):
    got = taotp.transformer_batch(every, builder(5, 5)).argmax(-1)
    want = np.array([reference(row) for row in every])
    report = taotp.verify_batch(got, want, every, scope=f'{name}: all 5^5 sequences, every prefix')
    print(report)
    assert report.ok
seeded = taotp.sort.random_min_inputs(2000, 32, 500, rng=np.random.default_rng(5))
for name, builder, pick in (('Min', taotp.build_min_transformer, np.min),
                            ('Max', taotp.build_max_transformer, np.max)):
    got = taotp.last_token_argmax(seeded, builder(2000, 32))
    report = taotp.verify_batch(got, pick(seeded, axis=1), seeded,
                                scope=f'{name}: vocabulary 2,000, length 32, seeded')
    print(report)
    assert report.ok

# %% [markdown]
# ## Sort as repeated Min
#
# Sorting is Min applied over and over, each time to the numbers not yet printed. The last
# printed number $i$ is the query; we want the smallest number in the input that is larger
# than $i$. A query–key score is a single dot product, so we need an arrangement in space
# where, seen from a point attached to $i$, the nearest number is $i+1$, the next nearest
# $i+2$, and so on, with all numbers $\le i$ farther away than any larger number.
#
# ### Powerpoints
#
# On a line this is easy if the gaps halve: $p_0 = 0$ and $p_{i+1} = p_i + 2^{-i}$, so
# $p = 0, 1, 1.5, 1.75, \dots$ Everything to the right of $p_{i+1}$ fits into a gap
# smaller than the one to the left of it. The query point of $i$ is
#
# $$q_i = \tfrac{3}{4}p_{i+1} + \tfrac14 p_{i+2},$$
#
# a quarter of the way from $p_{i+1}$ to $p_{i+2}$: closest to $p_{i+1}$, then to
# $p_{i+2}, p_{i+3}, \dots$, and only after all of them to $p_i, p_{i-1}, \dots$ The two
# last query points are special: the second-largest number looks at $p_{n-1}$ itself and the
# largest looks back at 0. `taotp.sort.powerpoints(n)` stretches the points to $[0, \pi]$ and
# `taotp.sort.nextpoint` computes the $q_i$; on the circle, distance becomes angle, and a
# smaller angle means a larger dot product $3\cos(\theta_q - \theta_p)$.

# %%
n_show = 8
p, q = taotp.sort.powerpoints(n_show), taotp.sort.nextpoint(taotp.sort.powerpoints(n_show))
print('p:', p.round(4).tolist())
print('q:', q.round(4).tolist())
fig = taotp.plot.figure((8, 1.8))
taotp.sort.draw_powerpoints(fig, n_show)
fig

# %% [markdown]
# In two dimensions the same numbers become angles on the upper half of a circle; we draw
# them in the plane of the layer-norm circle, where the Sort program really puts them.
# The points beyond 5 are already too close together to tell apart by eye.

# %%
points = taotp.pos_enc_3d(np.concatenate([p, q[:-2]]))
labels = [f'p{i}' for i in range(n_show)] + [f'q{i}' for i in range(n_show - 2)]
taotp.plot.circle(points, labels=labels, size=(5, 5),
                  title='Powerpoints in 2-D: p_i and q_i on the LN circle (n = 8)')

# %% [markdown]
# ### The construction
#
# The residual stream holds two circles side by side: `p` (where the token is) and `q`
# (where it looks next); both are fixed by layer norm, so their concatenation is too. The
# query matrix copies the `q` block, the key matrix the `p` block, both into the same three
# head dimensions; the score of query $i$ against key $j$ is
# $10^{20}\cdot 3\cos(\theta_{q_i} - \theta_{p_j})/\sqrt 6$. The value is the identity
# times $10^{20}$, so the copied token overwhelms the query's own embedding, and the tied
# output embedding reads it back.
#
# ```{note}
# The book's listing writes `Q[3:, :3]` and `K[:3, :3]` and forgets the head axis of the
# `(n_heads, d_model, d_head)` arrays; as printed it fails with a shape error. The intended
# code, used here, is `Q[0, 3:, :3]` and `K[0, :3, :3]`.
# ```

# %%
program = taotp.build_sort_transformer(n=28, block_size=100)
L = taotp.sort.SORT_LAYOUT
print(L, '| labels:', L.labels())
layer = program['layers'][0]
print('Q[0] non-zero rows:', np.flatnonzero(layer['Q'][0].any(axis=1)).tolist(),
      '| K[0] non-zero rows:', np.flatnonzero(layer['K'][0].any(axis=1)).tolist())
taotp.plot.residual(program['tok_emb'], labels=L.labels(), size=(5, 5),
                    tokens=np.arange(28), title='Sort (n = 28): tok_emb = [p | q]')

# %% [markdown]
# ### Sorting, step by step
#
# We decode one input and look at the attention of the whole run. The rows below the
# terminator are the output steps: each puts all its weight on the input position of the
# next number.

# %%
rng = np.random.default_rng(3)
prompt = rng.permutation(np.arange(1, 28))[:9].tolist() + [0]
run = taotp.decode(prompt, program, max_steps=len(prompt) - 1)
print('input :', prompt)
print('output:', run[len(prompt):].tolist())
steps = taotp.trace(run[:-1], program)
taotp.plot.attention(steps.attn[0], tokens=run[:-1], size=(5.5, 5),
                     title='Sort: who each position attends to')

# %% [markdown]
# Move the slider to change how many numbers are sorted (needs a live kernel); the player
# below it is the same picture, one frame per length, and works in the static book.

# %% tags=["nbval-ignore-output", "remove-output"]
explorer = taotp.widgets.Explorer(taotp.sort.draw_sort_run, size=(4.5, 4.5),
                                  length=taotp.widgets.slider(1, 12, value=6))
explorer.widget()

# %% tags=["nbval-ignore-output"]
explorer.player('length')

# %% [markdown]
# ## Does Sort work?
#
# First every non-empty subset of $\{1,\dots,n-1\}$ for small vocabularies, each subset in
# a random order and in decreasing order; then seeded random permutations of every length
# for every vocabulary up to the book's 28, with `taotp.decode_batch` running all inputs of
# a length at once.

# %%
check_rng = np.random.default_rng(0)
n_subsets = n_wrong = 0
for n in (4, 6, 8, 10):
    sorter = taotp.build_sort_transformer(n, 2 * n)
    for size in range(1, n):
        rows = np.array(list(itertools.combinations(range(1, n), size)))
        for order in (np.array([check_rng.permutation(r) for r in rows]), rows[:, ::-1]):
            prompts = np.concatenate([order, np.zeros((len(order), 1), np.int64)], axis=1)
            got = taotp.decode_batch(prompts, sorter, size)[:, size + 1:]
            n_subsets += len(rows)
            n_wrong += int((got != rows).any(axis=1).sum())   # combinations come sorted
print(f'all subsets for n = 4, 6, 8, 10 (two orders each): {n_subsets:,} inputs, {n_wrong} wrong')
assert n_wrong == 0

# %%
n_seeded = n_wrong = 0
for n in range(3, 29):
    sorter = taotp.build_sort_transformer(n, 2 * n)
    for length in sorted({1, (n - 1) // 2 or 1, n - 1}):
        prompts = taotp.sort.random_sort_inputs(n, length, 10, rng=check_rng)
        got = taotp.decode_batch(prompts, sorter, length)[:, length + 1:]
        n_seeded += len(prompts)
        n_wrong += int((got != np.sort(prompts[:, :-1], axis=1)).any(axis=1).sum())
print(f'seeded permutations, n = 3..28, three lengths each: {n_seeded} inputs, {n_wrong} wrong')
assert n_wrong == 0

# %% [markdown]
# ## How big is it?
#
# With $V$ tokens and block size $B$, Min has $3V + 3B + 39$ parameters ($6n + 39$ when
# $V = B = n$, as the book states it) and Sort $6V + 6B + 150$. Layer norms are not counted
# and the tied output table is counted once.

# %%
book_min = taotp.programs.CATALOGUE['min-10'].facts    # what the book states (any n)
book_sort = taotp.programs.CATALOGUE['sort-28'].facts
rows = []
for v in (10, 19, 100):
    counts = taotp.count_params(taotp.build_min_transformer(v, v))
    non0 = taotp.count_non0_params(taotp.build_min_transformer(v, v))
    rows.append((f'Min, n = {v}', counts['n_params'], book_min['total'](v),
                 non0['n_params'] - non0['tok_emb'], book_min['non0_outside_tok_emb']))
counts, non0 = taotp.count_params(program), taotp.count_non0_params(program)
rows.append(('Sort, n = 28, block 100', counts['n_params'], '(not stated)',
             non0['n_params'] - non0['tok_emb'], book_sort['non0_outside_tok_emb']))
print(f'{"program":24} {"total":>6} {"book total":>14} {"non-zero outside tok_emb":>25} '
      f'{"book":>5}')
for name, total, book_total, outside, book_outside in rows:
    print(f'{name:24} {total:>6} {book_total:>14} {outside:>25} {book_outside:>5}')
print('\nSort n = 28, non-zero by table:', non0)

# %% [markdown]
# The book says Sort for 28 numbers "requires only 166 non-zero parameters" and 18 outside
# the token table. The 18 match (3 in `Q`, 3 in `K`, 6 in `V`, 6 in `P`), but 166 is the
# count of the token table alone: 28 rows of 6 numbers minus two exact zeros (the third
# coordinate of $e(0)$, which is both $p_0$ and $q_{27}$). The whole program has
# $166 + 18 = 184$ non-zero parameters.

# %%
zeros = np.argwhere(program['tok_emb'] == 0).tolist()
print('tok_emb: 28 x 6 =', 28 * 6, 'entries; exact zeros at (row, column):', zeros)
print('non-zero: tok_emb', non0['tok_emb'], '+ outside', non0['non_emb'], '=', non0['n_params'],
      f'(the book prints {book_sort["non0_printed"]})')

# %% [markdown]
# ## Limits
#
# Every number below is measured by the cell that prints it, on seeded inputs
# (`taotp.sort.sort_errors`, `taotp.sort.min_errors`). NumPy computes in **float64** unless asked
# otherwise; the book attributes its limits to "NumPy's default fp32", but NumPy's default
# is float64, and the book's numbers reproduce in float64. For float32 we cast every
# weight with `taotp.as_dtype(params, np.float32)`; the forward pass then stays in float32.
# Set `FULL = True` for the larger sweeps (the tests run them too).

# %% tags=["nbval-ignore-output"]
# (the last digits printed here depend on the CPU's BLAS/LAPACK kernels; tests do not compare them)
FULL = False
sort_sizes = range(20, 34) if FULL else range(26, 31)
last_ok, first_bad = taotp.first_failure(sort_sizes, taotp.sort.sort_errors)
print(f'Sort, float64: exact up to n = {last_ok}, first failure at n = {first_bad} '
      f'[book: {book_sort["exact_up_to"]}]\n'
      f'  ({taotp.sort.sort_errors(first_bad)} of 50 full permutations wrong)')
float32_book = [taotp.sort.sort_errors(n, dtype=np.float32) for n in range(3, 29, 5)]
print(f'Sort, float32, book constants: sizes n = 3, 8, ..., 28 with errors: '
      f'{sum(e > 0 for e in float32_book)} of {len(float32_book)} sizes')
last_ok, first_bad = taotp.first_failure(range(8, 20), lambda n: taotp.sort.sort_errors(
    n, dtype=np.float32, out_scale=1e8))
print(f'Sort, float32, out_scale = 1e8: exact up to n = {last_ok}, '
      f'first failure at n = {first_bad}')

# %% [markdown]
# Why 28? The score of the right key and of its nearest rival differ by
# $3(\cos\frac{\delta}{4} - \cos\frac{3\delta}{4}) \approx \frac{3}{4}\delta^2$, where
# $\delta \approx \pi\, 2^{-n+2}/2$ is the smallest gap between powerpoints. The dot
# product that computes it carries a rounding error of about $10^{-16}$ in float64, so we
# need $\delta^2 \gtrsim 10^{-16}$, i.e. $n \lesssim 28$; float32 (rounding $6\cdot10^{-8}$)
# allows only about half as many points. No hardening constant helps: it multiplies the
# rounding error as much as the margin. In float32 the book's $10^{20}$ value scale also
# overflows: layer norm squares the residual ($10^{40} > 3.4\cdot10^{38}$), every output
# becomes the same token, and the program fails at every size; with the value scale cut to
# $10^8$ float32 sorts up to 15 numbers.

# %%
print('smallest gap between powerpoints, squared:')
for n in (15, 16, 28, 29):
    print(f'  n = {n}: {np.diff(taotp.sort.powerpoints(n)).min() ** 2:.1e}')

# %% [markdown]
# The squares above show where each precision's rounding sits: float64 still resolves
# $5.5\cdot10^{-16}$ (n = 28) and not $1.4\cdot10^{-16}$ (n = 29); float32 resolves
# $3.7\cdot10^{-8}$ (n = 15) and not $9.2\cdot10^{-9}$ (n = 16).
#
# Min breaks for a different reason. At the two ends of the arc the query $3\sin\theta_t$
# is tiny and the keys' $\cos\theta_s$ is flat, so two neighbouring tokens get almost the
# same score and the softmax stops being hard. Inputs whose last token sits near 0 (or
# $V-1$) and that contain both of the two smallest values are the first to fail.

# %%
sweeps = {np.float64: [1000, 2000, 3000, 4000, 5000], np.float32: [1000, 2000, 3000, 8000]}
for dtype, sizes in sweeps.items():
    for largest in (False, True):
        last_ok, first_bad = taotp.first_failure(
            sizes, lambda v: taotp.sort.min_errors(v, dtype=dtype, largest=largest))
        print(f'{"Max" if largest else "Min"}, {dtype.__name__}, hard inputs, sizes {sizes}:\n'
              f'  no error up to V = {last_ok:,}, first error at V = {first_bad:,}')
uniform = [10000, 30000, 100000, 300000] if FULL else [10000, 30000]
for v in uniform:
    e64 = taotp.sort.min_errors(v, hard=False, length=63)
    e32 = taotp.sort.min_errors(v, hard=False, length=63, dtype=np.float32)
    print(f'Min, 300 uniform inputs of length 63, V = {v:,}:\n  float64 {e64} wrong; '
          f'float32 {"more than" if e32 > 100 else "at most"} 100 wrong')


# %% [markdown]
# The book reports Min "robust up to tens of thousands of numbers" with occasional
# off-by-one errors at hundreds of thousands. On inputs drawn uniformly we see no error in
# float64 up to that range either; on inputs that put the query and the two smallest values
# at the end of the arc the first errors appear at a few thousand.
#
# ### How much hardening is enough?
#
# Each program has two constants: `harden`, the query scale (how hard the softmax is), and
# `out_scale`, the scale of the copied value (how completely it drowns the query's own token).
# We sweep powers of ten and keep those with no error.

# %%
def span(exps):
    return f'1e{exps[0]} .. 1e{exps[-1]}' if exps else 'none'


q_exps = [12, 14, 15, 16, 17, 20, 100, 300]
v_exps = [0, 1, 2, 3, 20, 100, 150, 155]
for name, module, errors, h_exps in [
        ('Sort n = 28', taotp.sort.sorting, lambda **k: taotp.sort.sort_errors(28, **k), q_exps),
        ('Min V = 1,000', taotp.sort.minmax, lambda **k: taotp.sort.min_errors(1000, **k),
         [5, 6, 7, 8, 20, 100, 300])]:
    print(f'{name} (book: harden {module.HARDEN:g}, out_scale {module.OUT_SCALE:g})')
    print('  harden:   ', span(taotp.tolerated_exponents(lambda s: errors(harden=s), h_exps)))
    print('  out_scale:', span(taotp.tolerated_exponents(lambda s: errors(out_scale=s), v_exps)))

# %% [markdown]
# Both programs tolerate a huge range upward: the query scale can go to $10^{300}$, the
# value scale until its square overflows float64 near $10^{154}$. Downward, Sort needs a
# query scale of about $10^{16}$ (the margin $\frac34\delta^2\cdot\frac{3}{\sqrt6}$ is about
# $10^{-16}$ at $n = 28$), and Min about $10^{7}$.
#
# ## Summary
#
# - Min and Max: 1 layer, 1 head, $d_\text{model} = 3$, no MLP, no positions; $3V + 3B + 39$
#   parameters ($6n + 39$), 11 non-zero outside the token table, as in the book.
# - Sort: 1 layer, 1 head, $d_\text{model} = 6$; for $n = 28$ 918 parameters, 184 non-zero,
#   of which 18 outside the token table (the book's 166 counts only the token table).
# - Sort is exact up to $n = 28$ in float64 and fails at 29 (the book: 28); in float32 the
#   book's constants overflow, and with a smaller value scale it reaches 15.
# - Min is exact on uniform inputs far beyond 10,000 values in float64, but inputs at the ends
#   of the arc break it from about 4,000.
# - Checked exhaustively where small (all 3,125 Min and Max inputs of length 5 over 5 tokens;
#   every subset for n = 4, 6, 8, 10, in two orders) and on 760 seeded Sort inputs for every
#   n from 3 to 28.
# - Hardening: Sort works for `harden` from about $10^{16}$ and `out_scale` from $10$; Min for
#   `harden` from $10^7$ and `out_scale` from $10^3$; all up to overflow.
# - {doc}`12_records` sorts a vocabulary of 65,536 on one layer (a head per bit) and beats the
#   non-zero count at $n = 28$ with a 3-dimension design.
#
# ## Puzzles
#
# In the [exercise notebook](https://github.com/taotp/taotp-book/blob/main/exercises/05_sort.ipynb):
#
# - **5.1** Sort a vocabulary of 33 with a slight change (checked).
# - **5.2** Make Min exact for a million values (checked).
# - **5.3** An architectural change that makes Sort as easy as Min (reflection).
# - **5.4** Sort a large vocabulary (reconstructed; checked).
# - **5.5** Negative numbers (reflection).
# - **5.6** Repeated elements (checked).
# - **5.7** Numbers written with several digit tokens (checked).
# - **5.8** Train a transformer to sort (training experiment).
#
# ## References
#
# - [TAOTP] Y. Leviathan, *The Art of Transformer Programming*, Chapter 5 (Min, Max, Sort,
#   powerpoints). See {doc}`references`.
# - D. E. Knuth, *The Art of Computer Programming, Volume 3: Sorting and Searching*, 2nd ed.,
#   1998.
