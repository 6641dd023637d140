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
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 11. Trained vs Constructed
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/book/11_trained.ipynb)
#
# Chapters 9 and 10 set every weight by hand. Half of each paper behind them is about
# models trained by gradient descent on the same tasks. This chapter trains such models on
# a laptop-sized budget, puts them next to the constructions (curves, attention maps,
# exact-match grids), and says where the small runs agree with the papers and where they
# do not. It ends by opening a constructed program in TransformerLens.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp

# %% [markdown]
# ## How the results were made
#
# Training needs PyTorch, part of the optional extra (`pip install "taotp[train]"`; Colab
# has PyTorch already). The trainer, `taotp.train`, is the book's architecture written in
# PyTorch: a params dict goes in, a params dict comes out, so a trained model runs through
# `taotp.transformer`, `taotp.trace` and `taotp.decode` like any constructed one. This
# chapter's experiments live in `taotp.trained` (`selective` for Chapter 10's task,
# `coupling` for Chapter 9's). Every model was trained once, on one CPU thread, and the
# notebook loads what came out: small `.npz` weight files and `.json` metrics in the
# package's data folder, read with NumPy alone. Whatever is cheap is recomputed on this
# page from the stored weights, and the tests recompute the rest.
#
# To re-run everything, set `RETRAIN = True` below (the CPU times are printed under it), or
# use the shell: `python -m taotp.trained full OUT_DIR` (add experiment names to run a
# few; `smoke` instead of `full` runs every pipeline end to end on tiny settings in
# seconds). The page then reads the new results.

# %%
from taotp import trained
from taotp.trained import attention as TA, coupling as TC, selective as TS, figures as F

RETRAIN = False                     # True: train every model again (CPU hours)
folder = None                       # None: the stored results
if RETRAIN:
    import tempfile
    folder = tempfile.mkdtemp()
    TC.run('full', folder)
    TS.run('full', folder)
stored = trained.load_selective('full', folder)
runs, refs = stored['runs'], stored['references']
adder, adder_meta = trained.load_adder('full', folder)
print(f'{"experiment":26}{"steps x batch":>15}{"CPU min":>9}{"wall min":>10}')
for name, r in runs.items():
    print(f'{name:26}{r["steps"]:>8} x {r["batch"]:<4}{r["train_cpu_seconds"] / 60:>9.1f}'
          f'{r["train_seconds"] / 60:>10.1f}')
a = adder_meta
print(f'{"adder SA(%d, %d)" % (a["config"]["n"], a["config"]["n"]):26}'
      f'{a["config"]["steps"]:>8} x {a["config"]["batch"]:<4}{a["train_cpu_seconds"] / 60:>9.1f}'
      f'{a["train_seconds"] / 60:>10.1f}')

# %% [markdown]
# CPU minutes are the time the training process itself ran; wall minutes are longer when
# other jobs shared the two cores of the machine.
#
# ## Selective induction heads, trained
#
# The task is Chapter 10's at the paper's sizes: $S = 5$ tokens, sequences of $T = 128$,
# Chapter 10's transition matrix $P$, a lag drawn per sequence from a lag set. Two model
# classes, as in the paper:
#
# - **standard**: the book's architecture with attention only ($d_\text{ff} = 0$), PreLN
#   with the book's layer norm, learned token and position embeddings, $d_\text{model} =
#   64$, $d_\text{head} = 32$ (the paper's $d_{QK}$), an untied output embedding, heads per
#   layer written $[1, h, 1]$;
# - **disentangled**: Chapter 10's concatenating network, one square matrix per head, no
#   norms, trained from random matrices (`taotp.train.DisentangledModel`).
#
# Each step draws a fresh batch and the loss is the cross-entropy of every next token,
# with Adam and no weight decay, as in the paper. The paper uses 256 sequences per step and
# a constant learning rate of $10^{-3}$, and does not say for how many steps. On two CPU
# cores we afford far less: 3,000 steps of 32 sequences for a standard model (4 to 8 CPU
# minutes each), 1,000 steps of 16 for a disentangled one (its $[1,3,1]$ network at $T =
# 128$ has 1.4 million weights), a learning rate warmed up to $3 \cdot 10^{-3}$ and decayed
# along a cosine, and for two models (lags $\{1,2,3\}$ and $\{3,5,7\}$, heads
# $[1,3,1]$) a second run with four times as many steps, marked `x4`, to see what more
# compute buys.
#
# **The metric.** Per position, the mean KL divergence between the true next-token law and
# the prediction, on 500 fixed sequences (the same for every model). A warning before
# comparing numbers: on this task BMA, ML and the construction all drive the KL to
# essentially zero once the lag is clear (about $10^{-8}$ at $t = 64$, Chapter 10), so a
# ratio of KLs late in the sequence divides by almost nothing and means nothing. We report
# the **mean over all 128 positions**, which is also the model's excess cross-entropy over
# the data's own entropy (in nats per token), and we quote ratios of those.
#
# One more reference helps to read the trained models: **no selection**, the prediction
# that looks back at every lag of the set and weighs them equally, the same mixture at
# every position (`TS.unselected_curve`). A model that has learned to copy the tokens one,
# two and three steps back, but not to tell which lag the sequence uses, sits on it.

# %%
lags = (1, 2, 3)
P = TS.task_matrix()
X, true = TS.evaluation_set(P, lags)
plateau = {name: TS.unselected_curve(P, TS.LAG_SETS[name], *TS.evaluation_set(
    P, TS.LAG_SETS[name])) for name in TS.LAG_SETS}
table = {name: TS.summary(curve) for name, curve in refs['{1,2,3}'].items()}
table['no selection'] = TS.summary(plateau['{1,2,3}'])
table.update({'trained ' + name: runs[name]['summary'] for name in (
    'std {1,2,3} [1,3,1]', 'std {1,2,3} [1,3,1] x4', 'dis {1,2,3} [1,3,1]',
    'std {1,2,3} [1,1,1]', 'dis {1,2,3} [1,1,1]')})
construction = table['construction, 3 heads']['all']
print(f'{"lags {1,2,3}":30}{"KL, all positions":>18}{"positions 64-127":>18}{"/ constr.":>11}')
for name, s in table.items():
    print(f'{name:30}{s["all"]:>18.2e}{s["late"]:>18.2e}{s["all"] / construction:>11.2f}')
# what the text below reads off this table
on_plateau = [table[f'trained dis {{1,2,3}} [1,{h},1]']['all'] / table['no selection']['all']
              for h in (3, 1)]
assert all(0.95 < r < 1.05 for r in on_plateau)
assert table['trained std {1,2,3} [1,3,1] x4']['all'] < table['trained std {1,2,3} [1,3,1]']['all']

# %% [markdown]
# The stored curves are not taken on trust: the weights of four standard models are stored,
# and the curve of the best one is recomputed here with the book's forward pass (NumPy
# only); `tests/test_trained.py` recomputes the other three.

# %%
for name in ('std {1,2,3} [1,3,1] x4',):
    params = trained.load_standard(name, folder)
    curve = TS.model_curve(P, lags, X, true, TS.probs('standard', params, X))
    print(f'{name}: heads per layer {taotp.config(params)["n_heads"]}, '
          f'{taotp.count_params(params)["n_params"]:,} parameters, all-position KL '
          f'recomputed {curve.mean():.6f}, stored {runs[name]["summary"]["all"]:.6f}')
    assert np.allclose(curve, runs[name]['kl'], rtol=1e-9)

# %% [markdown]
# ### KL against position, four lag sets (the paper's Fig. 4)
#
# Each panel starts at the largest lag (before it no predictor has anything to go on).
# Black: BMA (solid) and ML (dashed); red: the construction with as many heads as it needs
# (solid) and with one head (dotted); grey dash-dots: no selection; blue: trained standard
# models (green: four times the steps), orange: trained disentangled models (dotted: one
# head in layer 2).

# %%
fig = taotp.plot.figure((7.6, 5.6))
F.draw_kl_grid(fig, [TS.kl_panel(stored, lag_name, names, {'no selection': plateau[lag_name]})
                     for lag_name, names in [
    ('{1,2,3}', ['std {1,2,3} [1,3,1]', 'std {1,2,3} [1,3,1] x4', 'dis {1,2,3} [1,3,1]',
                 'std {1,2,3} [1,1,1]', 'dis {1,2,3} [1,1,1]']),
    ('{1,3,4}', ['std {1,3,4} [1,4,1]']),
    ('{1,...,5}', ['std {1,...,5} [1,5,1]']),
    ('{1,3}', ['std {1,3} [1,2,1]'])]])
fig

# %% [markdown]
# At our budget the paper's first message does not reproduce, and the no-selection line
# shows how far the models got. Every trained standard model uses the context: its KL
# falls along the sequence and ends well below the plateau. But it levels off near
# $10^{-2}$, where BMA, ML and the construction go to zero. In one number (the table
# above): the $[1,3,1]$ model on $\{1,2,3\}$ ends at 3.55 times the construction's
# all-position KL after 3,000 steps and 2.46 times after 12,000, so four times the compute
# helps, slowly. Every disentangled model sits on the no-selection plateau (0.171 and
# 0.172 against 0.170): it learned to look back at the lags and average them, not to
# choose among them. The paper's batch is 8 times ours (16 times for the disentangled
# model) and it does not give its number of steps; we read these curves as training that
# has not finished, not as evidence against the paper.
#
# ### Attention maps: trained and constructed, lags {3, 5, 7} (the paper's Fig. 5)
#
# One sequence with lags $\{3, 5, 7\}$ and true lag 3, the first 40 positions; each
# layer's attention averaged over its heads (square-rooted, so faint weights show). Rows:
# the trained standard model of four times the steps (recomputed from its stored weights),
# the trained disentangled model (its 1.4 million weights are not stored, its maps are),
# and the construction of Chapter 10 ($\lambda = 500$, $\beta = 100$).

# %%
seq = TS.fig5_sequence(P)
std357 = trained.load_standard('std {3,5,7} [1,3,1] x4', folder)
maps = {'trained standard': TS.attention_maps('standard', std357, seq),
        'trained disentangled': [np.array(m) for m in runs['dis {3,5,7} [1,3,1]']['maps']],
        'construction': TS.construction_maps(P, (3, 5, 7), seq)}
assert all(np.abs(np.array(s) - m).max() < 1e-4
           for s, m in zip(runs['std {3,5,7} [1,3,1] x4']['maps'], maps['trained standard']))
fig = taotp.plot.figure((6.6, 6.4))
F.draw_maps(fig, list(maps.items()))
fig

# %% [markdown]
# The same measure as for the adder below: per layer, the share of a trained model's
# attention (queries from position 7 on, where every lag can be seen) that falls on keys
# the construction weighs at least 0.01, next to the share of attention spread evenly.

# %%
cons = maps['construction']
share = {name: [TA.mass_on_support(maps[name][l][None], cons[l][None], 6)[0] for l in range(3)]
         for name in ('trained standard', 'trained disentangled')}
share['evenly spread'] = [TA.uniform_share(cons[l][None], 6) for l in range(3)]
print(f'{"":22}' + ''.join(f'{f"layer {l + 1}":>10}' for l in range(3)))
for name, values in share.items():
    print(f'{name:22}' + ''.join(f'{v:>10.0%}' for v in values))
for lag_name, name in (('{3,5,7}', 'std {3,5,7} [1,3,1] x4'), ('{3,5,7}', 'dis {3,5,7} [1,3,1]')):
    print(f'{name}: all-position KL {runs[name]["summary"]["all"]:.3f}, no selection '
          f'{plateau[lag_name].mean():.3f}, construction '
          f'{TS.all_kl(stored, (lag_name, TS.construction_key(refs, lag_name))):.3f}')
even = share['evenly spread']
assert share['trained standard'][0] < even[0] and share['trained disentangled'][2] > 3 * even[2]
assert runs['std {3,5,7} [1,3,1] x4']['summary']['all'] < plateau['{3,5,7}'].mean() < \
    runs['dis {3,5,7} [1,3,1]']['summary']['all']

# %% [markdown]
# Neither model learned the $\{3,5,7\}$ task at our budget: the standard model is a
# little below the no-selection plateau after 12,000 steps, the disentangled one just
# above it. So
# this figure cannot test the paper's message that trained layers 1 and 3 match the
# construction; it shows what an unfinished model looks like. Layer 1 of the trained
# standard model attends mostly to the current token and puts less weight where the
# construction's layer 1 looks than evenly spread attention would. The disentangled
# model's later layers draw diagonals at fixed distances, the looking back its plateau
# needs, and its layer 3 puts several times the even share where the construction's does.
# Layer 2's numbers say little: the construction's layer 2 spreads over most of the past,
# so even attention already scores high there.
#
# ### Heads and layers (the paper's Fig. 6)
#
# Standard models on lags $\{1,2,3\}$: 1 to 4 heads in layer 2 (left), and two layers
# against three at both budgets (right): $[1,3]$ and $[3,3]$ with 3,000 steps, $[3,3]$
# again with 12,000 steps, next to $[1,3,1]$ with 3,000 and 12,000.

# %%
heads_runs = [f'std {{1,2,3}} [1,{h},1]' for h in (1, 2, 3, 4)]
layer_runs = ['std {1,2,3} [1,3]', 'std {1,2,3} [3,3]', 'std {1,2,3} [3,3] x4',
              'std {1,2,3} [1,3,1]', 'std {1,2,3} [1,3,1] x4']
for name in heads_runs + layer_runs[:3]:
    s = runs[name]['summary']
    print(f'{name:22} {runs[name]["steps"]:>6} steps  all-position KL {s["all"]:.4f}  '
          f'positions 64-127 {s["late"]:.4f}')
fig = taotp.plot.figure((7.6, 3.2))
F.draw_kl_grid(fig, [('heads in layer 2', *TS.kl_panel(stored, '{1,2,3}', heads_runs)[1:]),
                     ('two layers or three', *TS.kl_panel(stored, '{1,2,3}', layer_runs)[1:])],
               colour_each=True)
fig

# %% [markdown]
# **Heads: the paper's message reproduces.** The all-position KL falls from 0.113 with one
# head in layer 2 to 0.060 with two and 0.045 with three, and a fourth head changes little
# (0.043): three lags, three heads, as the construction counts them. (The paper shows this
# on $\{1,\dots,5\}$, Fig. 6 right; we used our budget on $\{1,2,3\}$.)
#
# **Layers: it does not, at this budget.** $[1,3]$ is twice as far from the truth as
# $[1,3,1]$ after 3,000 steps (0.0995 against 0.045), as the paper would predict. But
# $[3,3]$, with three heads in its first layer too, beats every three-layer model of the
# same budget (0.038), and after 12,000 steps it ties $[1,3,1]$ (0.0313 against 0.0312).
# The paper's claim is about the end of training: two layers cannot reach the optimum. No
# model of ours reached it either, so the claim is neither confirmed nor contradicted here;
# what we can say is that for the first 12,000 steps of 32 sequences a third layer buys
# nothing over a wider first layer.
#
# ### What agrees with the paper, and what does not
#
# `TS.claims` puts each message of the paper's Figs. 4 and 6 next to the number that tests
# it in our runs, with the rule written into the claim ("matches" means an all-position
# KL at most 1.5 times the construction's).

# %%
verdicts = TS.claims(stored)
for claim, measured, holds in verdicts:
    print(f'{"yes" if holds else "no":>3}  {claim}\n     measured: {measured}')

# %% [markdown]
# Three of the paper's messages hold in our runs: more heads in layer 2 help up to as many
# heads as lags, a fourth head adds little, and a two-layer model with a single head in its
# first layer does worse than three layers. The rest fail, and all for one visible reason:
# no model of ours finished learning the selection. None comes within 1.5 times the
# construction (the closest, $[1,3,1]$ on $\{1,2,3\}$ after 12,000 steps, is at 2.46);
# the one-head models are far from the one-head construction instead of beating it; and a
# two-layer model with three heads in its first layer keeps pace with three layers.
#
# Reproducing the paper's figures needs longer training than two CPU cores give in an
# afternoon: the paper's batch of 256 sequences is 8 times ours, every step costs about
# 0.13 s here, and each x4 run (half an hour) did better than its 3,000-step twin.
# `python -m taotp.trained full OUT_DIR` with larger `SIZES` in `taotp.trained.selective`
# re-runs everything on a bigger machine.
#
# ## A trained adder
#
# The task is Chapter 9's: `$ a_1 + ... + a_m = b_0 > b_1 > ... > b_m $` with running sums
# written units first, every number zero-padded to the width of the largest possible sum,
# and two levels of coupled position IDs (significance, which number). As in the paper,
# each training problem is drawn from $\mathrm{SA}(n, n)$ (2 to $n$ operands; half the time
# each operand has its own length in $1..n$, half the time all share one length) and each
# level of IDs is shifted by a random offset, so that every row of the two position tables
# is trained, including the rows that only longer test problems use. The model is the
# paper's shape on the book's architecture: one layer, four heads, a ReLU MLP, PreLN,
# $d_\text{model} = 64$, two learned position tables of 21 rows (IDs 0 to 20) summed into
# the stream. The loss covers the response and the final EOS. Tests use offset 1 and
# $\mathrm{TA}(\text{digits}, \text{operands})$ problems (every operand exactly that long)
# and score exact match of the whole response, scratchpad included, teacher-forced (the
# same as greedy decoding for whole-response exact match).

# %%
cfg = adder_meta['config']
n = cfg['n']
print(f'SA({n}, {n}), {cfg["steps"]} steps of {cfg["batch"]} fresh problems, '
      f'{adder_meta["train_cpu_seconds"] / 60:.1f} CPU minutes on one thread; '
      f'{adder_meta["n_params"]:,} parameters; final training loss {adder_meta["final_loss"]:.1e}')
digits, operands = adder_meta['digits'], adder_meta['operands']
grid = np.array(adder_meta['exact'], dtype=float)
print(f'exact match (%), {adder_meta["per_cell"]} problems per cell; '
      'rows: digits per operand, columns: operands')
print('   ' + ''.join(f'{m:>4}' for m in operands))
for i, d in enumerate(digits[:8]):
    print(f'{d:>3}' + ''.join(f'{v:>4.0f}' for v in grid[i]))
print(f'{digits[8]}-{digits[-1]}: at most {np.nanmax(grid[8:]):.0f} % in any cell')
i, j = digits.index(n), operands.index(n)
check = 100 * TC.cell_exact(adder, n, n, adder_meta['per_cell'],
                            rng=np.random.default_rng([adder_meta['seed'], n, n]))
assert check == grid[i, j]                          # one cell recomputed from the weights

# %% [markdown]
# Inside the training box (up to 5 digits, up to 5 operands) every problem is right. Past
# it, the two axes part ways. More operands of known length degrade slowly: six operands
# still give 74 to 100 %, and some problems with ten or eleven operands come out right.
# One more digit breaks the model at once: with 6 digits it is right on at most a few
# problems in 50, whatever the number of operands. The cell below checks these three
# statements on the stored grid.

# %%
box = TC.box(n, digits, operands)
six_operands = grid[[digits.index(d) for d in range(1, n + 1)], operands.index(n + 1)]
longer = grid[digits.index(n + 1):]
print(f'inside the box: {grid[box].min():.0f}-{grid[box].max():.0f} %; '
      f'{n + 1} operands of 1-{n} digits: {six_operands.min():.0f}-{six_operands.max():.0f} %; '
      f'{n + 1} or more digits: at most {np.nanmax(longer):.0f} %')
assert grid[box].min() == 100 and six_operands.min() >= 70 and np.nanmax(longer) <= 5

# %% [markdown]
# Where exactly does a longer problem go wrong? `TC.wrong_places` counts the wrong tokens
# of the teacher-forced response by place: which partial sum $b_k$, which digit. For
# 6-digit operands every error sits in one place: the units digit of $b_2, b_3, \dots$,
# the token predicted at the separator `>` that starts a new partial sum. All other
# digits, including every carry, are right.

# %%
for m in (2, 3, 4, 5):
    places = TC.wrong_places(adder, n + 1, m, adder_meta['per_cell'], seed=adder_meta['seed'])
    rows, cols = np.nonzero(places)
    print(f'{n + 1} digits, {m} operands: {places.sum():3d} wrong tokens, all in '
          f'{sorted({(f"b_{k}", "units" if c == 0 else f"digit {c}") for k, c in zip(rows, cols)})}')
    assert set(cols) <= {0} and set(rows) <= set(range(2, m + 1))

# %% [markdown]
# At that separator the query carries level-1 ID 1 (units) and the level-2 ID of the next
# operand, the same pair for every width, so a model that matched IDs alone would not care
# about the width. This one does: in training a number was at most 6 tokens wide, and
# whatever the heads use to start a new sum evidently depends on it. We have not traced the
# mechanism (`taotp.trace` hands over every intermediate array of the model; it is the
# first open problem at the end of this chapter). The paper saw a
# related pattern in its architecture study (Section 4.3, Fig. 10): 1-layer 2-head models
# generalise in the number of operands and fail as soon as operands are longer than in
# training, while 1-layer 4-head models (of width 1,024) generalise in both.
#
# The construction, built for 5 digits and 5 operands (its tables hold 7 and 8 IDs),
# is exact wherever its tables reach and, by design, nowhere else: its hypercube codes
# wrap around past the last ID.

# %%
cons = adder_meta['construction']
built = taotp.coupling.build_multi_operand_adder(*cons['built_for'])
inside = TC.capacity(built, digits, operands)
assert np.all(np.array(cons['exact'])[inside] == 100)
fig = taotp.plot.figure((8.4, 3.6))
F.draw_grids(fig, [(f'trained on SA({n}, {n}); white: training box', grid, box),
                   (f'construction built for {n} x {n}; white: its capacity',
                    np.array(cons['exact']), inside)], digits, operands)
fig

# %% [markdown]
# ### What the four heads do (the paper's Fig. 7a)
#
# Each head's attention averaged over 40 problems of $\mathrm{TA}(5, 5)$ (all have the
# same length and IDs, so the maps line up; the paper averages 1,000 problems of TA(11, 11)
# for its model trained on SA(10, 10)); weights below 0.01 are black. The construction's
# heads attend by IDs alone, so one problem shows them.

# %%
trained_maps, tokens = TC.mean_attention(adder, n, n, 40)
built_maps, _ = TC.construction_attention(built, n, n)
print('sequence length', len(tokens), ':', ''.join(TC.VOCAB[t] for t in tokens))
fig = taotp.plot.figure((8.0, 4.2))
F.draw_heads(fig, [('trained', trained_maps), ('construction', built_maps)])
fig

# %% [markdown]
# Read the lower half of each map (the response). In the construction, three heads draw
# short anti-diagonals (a digit of the current operand, written most significant first in
# the query) and a long diagonal (the previous partial sum); the fourth head's lattice
# covers the rest. The trained heads 2 to 4 show the same strokes, with extra faint ones;
# head 1 spreads its weight over whole blocks. To put a number on it: the share of each
# trained head's attention, on response rows, that lands on a key some construction head
# attends to (weight at least 0.01), next to the share for attention spread evenly over
# the past.

# %%
start = int(np.argmax(tokens == TC.EQ_ID))
shares = TA.mass_on_support(trained_maps, built_maps, start)
even = TA.uniform_share(built_maps, start)
print('trained head:        ' + ''.join(f'{h + 1:>7}' for h in range(4)))
print('share on its keys:   ' + ''.join(f'{v:>7.0%}' for v in shares))
print(f'evenly spread attention: {even:.0%}')
assert sorted(shares)[1] > max(0.6, 3 * even)      # the second smallest of four

# %% [markdown]
# Three of the four trained heads put two thirds or more of their weight where the
# construction looks, more than three times the even share; the paper's Fig. 7a makes the
# same point by eye for its model trained on SA(10, 10).
#
# **What the paper's scale would change.** Cho et al. train on SA(10, 10) for 50,000 steps
# of 400 problems (20 million, drawn from a fixed set of 500,000) with models of width
# 1,024; our adder saw 384,000 fresh problems of SA(5, 5) at width 64 (53,952
# parameters) in 11 CPU minutes. Their embedding-size study (Fig. 12) found
# 1-layer 4-head models of width 64 far behind wider ones and read it as an optimisation
# effect, since the theorem needs only a small width; our model is in that corner. A wider
# box also trains longer widths, so the width-6 limit we hit would move out with it.
#
# ## A constructed program in TransformerLens
#
# `taotp.export.to_hooked_transformer(params)` turns any program of the book's format into a
# float64 `HookedTransformer` of TransformerLens (version 3), the library much of the
# interpretability field works in: every activation has a named hook point. The export
# reproduces the book's layer norm (epsilon added to the standard deviation) and softmax
# exactly, so hand-built programs with tiny margins keep their answers. Below, Chapter 10's
# construction in the book's format (lags {1,2,3}, $T = 16$) is exported and its attention
# read from the `hook_pattern` hook points, then compared with `taotp.trace`. The cell needs
# the training extra; without it, it prints how to install it (and the test suite runs the
# same code).

# %% tags=["nbval-skip"]
x_tl, _ = taotp.selective.sample_batch(P, (1, 2, 3), 16, 1, rng=np.random.default_rng(0))
port = taotp.selective.book_params(P, (1, 2, 3), 16)
try:
    from taotp.trained.hooks import hook_names, tl_patterns
    patterns = tl_patterns(port, x_tl[0])            # blocks.{l}.attn.hook_pattern
except ModuleNotFoundError as missing:
    print(missing)
else:
    book = taotp.trace(x_tl[0], port).attn
    print('hook points of block 0:', ', '.join(hook_names(port)[:6]), '...')
    print('largest |TransformerLens - taotp.trace| per layer:',
          [f'{np.abs(p - b).max():.0e}' for p, b in zip(patterns, book)])
    fig = taotp.plot.figure((6.6, 2.4))
    F.draw_maps(fig, [('hook_pattern', [p.mean(0) for p in patterns])], crop=16)
    display(fig)

# %% [markdown]
# The Chapter 9 adder is the one program of the book that does not export: TransformerLens
# has one position table indexed $0..n-1$, the adder two tables indexed by coupled IDs
# (`taotp.export.exportable` says so). Trained models of the book's architecture go the
# other way too: `taotp.export.from_hooked_transformer(model)` returns a params dict.
#
# ## Summary
#
# - The book's architecture trains in PyTorch (`taotp.train`) and comes back as a params
#   dict, so a trained model is run, traced, counted and compared with the same functions
#   as a constructed one; every number on this page is recomputed from stored weights or
#   printed from stored runs whose settings and CPU times are listed at the top.
# - **Chapter 9's task.** A 1-layer 4-head model of width 64 learns SA(5, 5) with the
#   scratchpad and bi-level coupling in 11 CPU minutes: exact inside its training box,
#   partly right with more operands (up to eleven), wrong from the first extra digit, and
#   always at one place, the units digit of a new partial sum. Three of its heads put most
#   of their weight where the construction's heads look.
# - **Chapter 10's task.** At our budget (3,000 steps of 32 sequences; 12,000 for three
#   models) standard models learn to use the context but not to finish the selection:
#   the best ends at 2.46 times the construction's KL, the disentangled models stay on
#   the no-selection plateau. The heads message of the paper holds (KL falls up to three
#   heads for three lags, then flattens); the others cannot be tested before training
#   converges, and one (two layers are worse) fails for a first layer of three heads.
# - **TransformerLens.** Every program of the book's format except the multi-level adder
#   opens as a float64 `HookedTransformer`, with hook points that agree with `taotp.trace`.
#
# Section 4 of Cho et al. and Section 6 of D'Angelo et al. are the sources of every
# setting we copied and of every claim we tested.
#
# ## Puzzles and open problems
#
# This chapter has no checked puzzles of its own: the book's training puzzles (2.3, 3.1,
# 5.8 and 7.11, in the exercises of Chapters 2, 3, 5 and 7) use the same trainer and are
# checked there. Three open problems, unchecked, for readers with a few CPU hours:
#
# 1. **Why width 7?** Find what the trained adder's heads read at the separator `>` that
#    makes the units digit of $b_2$ wrong once numbers are 7 tokens wide
#    (`taotp.trace(tokens, adder, positions=...)` returns every attention map and
#    residual stream). Then change the training so that it stops happening.
# 2. **Close the gap on a laptop.** Train a standard $[1,3,1]$ model on lags $\{3,5,7\}$
#    to within 1.5 times the construction's all-position KL in under an hour of CPU.
# 3. **Fewer heads than lags.** The paper (Fig. 7) reports a layer 2 that superposes
#    several lags in one head, a mechanism it could not interpret. Train $[1,1,1]$ on
#    $\{1,2,3\}$ and read its layer 2 against the construction's.
#
# ## References
#
# - [SIH] F. D'Angelo, F. Croce, N. Flammarion. *Selective Induction Heads: How
#   Transformers Select Causal Structures in Context*. ICLR 2025.
#   [arXiv:2509.08184](https://arxiv.org/abs/2509.08184). Section 6, Figs. 4-6.
# - [PC] H. Cho, J. Cha, S. Bhojanapalli, C. Yun. *Arithmetic Transformers Can
#   Length-Generalize in Both Operand Length and Count*. ICLR 2025.
#   [arXiv:2410.15787](https://arxiv.org/abs/2410.15787). Section 4, Figs. 1, 5, 7, 10,
#   Table 2.
# - N. Nanda, J. Bloom. *TransformerLens*. 2022.
#   <https://github.com/TransformerLensOrg/TransformerLens>.
# - See also {doc}`09_position_coupling` and {doc}`10_selective_induction`.
