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
# # 11. Trained vs Constructed
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/book/11_trained.ipynb)
#
# Chapters 9 and 10 set every weight by hand. Half of each paper behind them is about
# models trained by gradient descent on the same tasks. This chapter trains such models on
# a laptop-sized budget, puts them next to the constructions (curves, attention maps,
# exact-match grids), and gives every claim the papers make about trained models one of
# three states: it holds, it is not reached at our budget, or it is contradicted; claims
# we could not test are listed as not run, with the reason. It ends by opening a
# constructed program in TransformerLens.

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
# `coupling` for Chapter 9's, `paper` for Chapter 10's task at the paper's own settings).
# Every model here was trained once, on one CPU thread, and the notebook loads what came
# out: small `.npz` weight files and `.json` metrics in the package's data folder, read
# with NumPy alone. Whatever is cheap is recomputed on this page from the stored weights,
# and the tests recompute the rest.
#
# Two settings of the trainer matter for reading the numbers: **it clips the gradient to
# norm 1.0 unless told otherwise**, and every run in the table below used that default
# except the one marked `noclip`; and the learning rate of those runs rises over 100
# steps to its peak and then falls along a cosine to a tenth of it. The table lists, per
# stored run, the batch, the peak learning rate, the schedule, the clipping norm and the
# seed of its starting weights.

# %%
from taotp import trained
from taotp.trained import attention as TA, coupling as TC, selective as TS, figures as F

RETRAIN = False                     # True: train every CPU model again (CPU hours)
folder = None                       # None: the stored results
if RETRAIN:
    import tempfile
    folder = tempfile.mkdtemp()
    TC.run('full', folder)
    TS.run('full', folder)
stored = trained.load_selective('full', folder)
runs, refs = stored['runs'], stored['references']
paper = trained.load_paper(folder)            # runs at the paper's settings (GPU), if stored
adder, adder_meta = trained.load_adder('full', folder)
print(f'{"experiment":28}{"steps x batch":>14}{"lr":>7}{"schedule":>9}{"clip":>6}{"seed":>5}'
      f'{"CPU min":>9}')
for name, r in runs.items():
    print(f'{name:28}{r["steps"]:>8} x {r["batch"]:<3}{r["lr"]:>7g}{r["schedule"]:>9}'
          f'{str(r["clip"]):>6}{r["seed"]:>5}{r["train_cpu_seconds"] / 60:>9.1f}')
a, c = adder_meta, adder_meta['config']
print(f'{"adder SA(%d, %d)" % (c["n"], c["n"]):28}{c["steps"]:>8} x {c["batch"]:<3}'
      f'{c["lr"]:>7g}{"cosine":>9}{"1.0":>6}{a["seed"]:>5}{a["train_cpu_seconds"] / 60:>9.1f}')
print('runs at the paper\'s settings:' + (' none stored' if paper is None else ''))
for name, r in (paper or {'runs': {}})['runs'].items():
    print(f'  {name}: {r["steps"]} x {r["batch"]}, lr {r["lr"]:g} {r["schedule"]}, clip '
          f'{r["clip"]}, seed {r["seed"]},')
    print(f'  {"":{len(name)}}  on {r["device"]}, {r["train_seconds"] / 60:.1f} wall minutes')

# %% [markdown]
# CPU minutes are the time the training process itself ran (wall time was longer when
# other jobs shared the machine's two cores); for the run at the paper's settings the
# line gives wall minutes. A disentangled run takes 1,000 steps of 16 sequences; every
# other selective-induction run 3,000 steps of 32, four times that for the runs marked
# `x4`, and the standard runs take `d_model = 64` unless marked `d128`.
#
# **The paper's own settings, prepared for a GPU.** D'Angelo et al. draw a fresh
# batch of 256 sequences each step and train with Adam at a constant learning rate of
# $10^{-3}$, no weight decay, at widths 64 and 128; they do not clip gradients and do not
# say for how many steps. A CPU affords about one such step per second: we ran the main
# model for 500 of them (printed under the table, discussed below), and the rest belongs
# on a GPU. `taotp.trained.paper` holds those runs ready. Its preset `PAPER` is the
# paper's settings with a budget of 30,000 steps and a rule that stops a run once it is
# flat (its best KL has improved by less than 2 % over the last 5,000 steps, checked from
# step 10,000 on); the models of one shape train side by side in one process, each on its
# own batches drawn on the GPU, and the metrics and weights come back as two files per
# part. One command runs the first part (the main model of every lag set, three seeds):
#
# ```
# python -m taotp.trained paper OUT_DIR --device cuda --part main --minutes 8
# ```
#
# No GPU was available for this edition, so every row that needs these runs says
# *not run* or *not reached* below; the page reads them as soon as their files are in the
# data folder.
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
# with Adam ($\beta = (0.9, 0.999)$) and no weight decay, as in the paper; the runs of the
# table peak at a learning rate of $3 \cdot 10^{-3}$ and clip at 1.0 (all but one), as it
# says.
#
# **The metric.** Per position, the mean KL divergence between the true next-token law and
# the prediction, on 500 fixed sequences (the same for every model). A warning before
# comparing numbers: on this task BMA, ML and the construction all drive the KL to
# essentially zero once the lag is clear (about $10^{-8}$ at $t = 64$, Chapter 10), so a
# ratio of KLs late in the sequence divides by almost nothing and means nothing. We report
# the **mean over all 128 positions**, which is also the model's excess cross-entropy over
# the data's own entropy (in nats per token), and we quote ratios of those.
#
# **Two references, named.** A ratio needs a denominator, and two candidates are close but
# not equal. *The network* is the book's construction of Chapter 10 with as many heads as
# the lag set needs, as $\lambda$ grows ($\beta = 100$; `construction, K heads` in the
# tables); every ratio on this page divides by it. *Eq. (1)* is the paper's formula for
# the predictor (Proposition 1: one softmax over the mean normalised transitions) at the
# same $\beta = 100$. The network adds one mean per head before its softmax, so it weighs
# the evidence roughly as eq. (1) would with $\beta$ times the number of heads; on these
# sequences eq. (1) at $\beta = 100$ is the better of the two, and a ratio against it is
# larger. Both are drawn in every KL figure below.
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
network, eq1 = table['construction, 3 heads']['all'], table[TS.EQ1]['all']
print(f'{"lags {1,2,3}":30}{"KL, all":>10}{"pos. 64-127":>13}{"/ network":>11}{"/ eq. (1)":>11}')
for name, s in table.items():
    print(f'{name:30}{s["all"]:>10.2e}{s["late"]:>13.2e}{s["all"] / network:>11.2f}'
          f'{s["all"] / eq1:>11.2f}')
print(f'the network: {network:.4f}; eq. (1) at beta = 100: {eq1:.4f}')
# what the text below reads off this table
on_plateau = [table[f'trained dis {{1,2,3}} [1,{h},1]']['all'] / table['no selection']['all']
              for h in (3, 1)]
assert all(0.95 < r < 1.05 for r in on_plateau) and eq1 < network
assert table['trained std {1,2,3} [1,3,1] x4']['all'] < table['trained std {1,2,3} [1,3,1]']['all']

# %% [markdown]
# The stored curves are not taken on trust: the weights of four standard models are stored,
# and the curve of the best one is recomputed here with the book's forward pass (NumPy
# only) over its first 64 positions (the model is causal, so the first 64 tokens of each
# sequence give the same numbers there); `tests/test_trained.py` recomputes every
# position of all four.

# %%
for name in ('std {1,2,3} [1,3,1] x4',):
    params = trained.load_standard(name, folder)
    half = X[:, :64]
    curve = TS.model_curve(P, lags, half, true, TS.probs('standard', params, half))
    print(f'{name}: heads per layer {taotp.config(params)["n_heads"]}, '
          f'{taotp.count_params(params)["n_params"]:,} parameters')
    print(f'mean KL over positions 1-64 recomputed {curve.mean():.6f}, stored '
          f'{np.mean(runs[name]["kl"][:64]):.6f}')
    assert np.allclose(curve, runs[name]['kl'][:64], rtol=1e-9)

# %% [markdown]
# ### KL against position, four lag sets (the paper's Fig. 4)
#
# Each panel starts at the largest lag (before it no predictor has anything to go on).
# Black: BMA (solid) and ML (dashed); red: the network with as many heads as it needs
# (solid) and with one head (dotted); magenta dashes: eq. (1); grey dash-dots: no
# selection; blue: trained standard models (green: four times the steps), orange: trained
# disentangled models (dotted: one head in layer 2).

# %%
fig = taotp.plot.figure((7.6, 5.8))
F.draw_kl_grid(fig, [TS.kl_panel(stored, lag_name, names, {'no selection': plateau[lag_name]})
                     for lag_name, names in [
    ('{1,2,3}', ['std {1,2,3} [1,3,1]', 'std {1,2,3} [1,3,1] x4', 'dis {1,2,3} [1,3,1]',
                 'std {1,2,3} [1,1,1]', 'dis {1,2,3} [1,1,1]']),
    ('{1,3,4}', ['std {1,3,4} [1,4,1]']),
    ('{1,...,5}', ['std {1,...,5} [1,5,1]']),
    ('{1,3}', ['std {1,3} [1,2,1]'])]])
fig

# %% [markdown]
# Every trained standard model uses the context: its KL falls along the sequence and ends
# well below the no-selection plateau. Where the curves end, per lag set (the main model
# of each set, mean KL over positions 64 to 127, where BMA, ML and the network are near
# zero):

# %%
print(f'{"lag set":10}{"main run":26}{"pos. 64-127":>12}{"all":>8}{"/ network":>11}'
      f'{"/ eq. (1)":>11}')
late = {}
for lag_name, name in TS.MAIN_RUNS.items():
    best = name + ' x4' if name + ' x4' in runs else name
    s = runs[best]['summary']
    net = TS.all_kl(stored, (lag_name, TS.construction_key(refs, lag_name)))
    late[lag_name] = s['late']
    print(f'{lag_name:10}{best:26}{s["late"]:>12.3f}{s["all"]:>8.3f}{s["all"] / net:>11.2f}'
          f'{s["all"] / TS.all_kl(stored, (lag_name, TS.EQ1)):>11.2f}')
print(f'the network, positions 64-127, largest over the lag sets: '
      f'{max(TS.summary(refs[k][TS.construction_key(refs, k)])["late"] for k in refs):.1e}')

# %% [markdown]
# The curves do not level off at one value: late in the sequence the best $\{1,2,3\}$
# model sits at 0.010 (after 12,000 steps; 0.022 after 3,000), $\{1,3\}$ at 0.024,
# $\{1,3,4\}$ at 0.051, $\{1,\dots,5\}$ at 0.120 and $\{3,5,7\}$ at 0.147, while the
# network is at most $10^{-6}$ there. The more lags a set has, the further its model is
# from selecting. In one number (the table above): the $[1,3,1]$ model on $\{1,2,3\}$
# ends at 3.55 times the network's all-position KL after 3,000 steps and 2.46 times after
# 12,000 (2.83 and 4.09 times eq. (1)), so four times the compute helps, slowly. Every
# disentangled model sits on the no-selection plateau (0.171 and 0.172 against 0.170): it
# learned to look back at the lags and average them, not to choose among them.
#
# ### Seeds, width and clipping, at our budget
#
# Is the main model's gap a property of one unlucky run, of the width, or of the clipping
# the paper does not use? Four more runs of $[1,3,1]$ on $\{1,2,3\}$ at the same 3,000
# steps of 32 sequences answer at this budget: two more seeds, one without clipping, one
# at $d_\text{model} = 128$. A fifth run takes the paper's settings for as long as a CPU
# affords them (`paper` part `cpu`: 500 steps of 256 sequences, Adam at $10^{-3}$
# constant, no clipping).

# %%
variants = {n: r for n, r in runs.items() if r['experiment'] == 'std {1,2,3} [1,3,1]'}
variants.update({n: r for n, r in (paper or {'runs': {}})['runs'].items()
                 if r['kind'] == 'standard' and r['heads'] == [1, 3, 1] and
                 TS.lag_name(r['lags']) == '{1,2,3}'})
print(f'{"run":32}{"steps x batch":>13}{"lr":>6}{"sched.":>9}{"clip":>6}{"width":>6}'
      f'{"KL":>8}{"/ net.":>8}')
for name, r in variants.items():
    print(f'{name:32}{r["steps"]:>6} x {r["batch"]:<4}{r["lr"]:>6g}{r["schedule"]:>9}'
          f'{str(r["clip"]):>6}{r["d_model"]:>6}{r["summary"]["all"]:>8.4f}'
          f'{r["summary"]["all"] / network:>8.2f}')
seeds = [r['summary']['all'] / network for r in variants.values()
         if (r['steps'], r.get('tag')) == (3000, None)]
print(f'three seeds at 3,000 steps of 32: {min(seeds):.2f} to {max(seeds):.2f} times the network')
for name, r in variants.items():
    if r.get('evals'):
        print(f'{name}, all-position KL by step:')
        print('  ' + ', '.join(f'{step}: {kl:.3f}' for step, kl in r['evals']))

# %% [markdown]
# The seed of the starting weights matters more than anything else we varied: the same
# model, budget and data law end at 3.55, 6.21 and 3.75 times the network. Without
# clipping the model ends at 3.95 times, inside that spread, and at width 128 at 3.24
# times, a little better than every seed of width 64 (one run, so not a measured effect
# of width). At this budget neither clipping nor width closes the gap, and one run of one
# seed says little: a claim about trained models needs several seeds, which is how the
# GPU preset trains the main models.
#
# The run at the paper's settings shows what a CPU can and cannot do with them. After 500
# steps of 256 sequences (128,000 sequences, a third more than 3,000 steps of 32) its KL
# is still falling (0.227 at step 100, 0.180 at step 500) and has not yet come down to
# the no-selection plateau (0.170): 14.2 times the network, where 3,000 smaller steps at
# a higher rate reached 3.6 to 6.2. It says nothing yet about where these settings end;
# that is the GPU's part.
#
# ### Attention maps (the paper's Fig. 5)
#
# The paper compares, layer by layer, the attention of trained models on lags
# $\{3, 5, 7\}$ with the construction's. A comparison of maps says something only for a
# model that has learned the task, so we draw them only for runs within 1.5 times the
# network's KL; the cell below lists the runs and draws whatever qualifies.

# %%
candidates = {n: r for n, r in list(runs.items()) + list((paper or {'runs': {}})['runs'].items())
              if TS.lag_name(r['lags']) in ('{1,2,3}', '{3,5,7}') and r.get('maps')}
learned = {}
for name, r in candidates.items():
    lag_name = TS.lag_name(r['lags'])
    ratio = r['summary']['all'] / TS.all_kl(stored, (lag_name, TS.construction_key(refs, lag_name)))
    print(f'{name:31} KL {r["summary"]["all"]:.3f} = {ratio:4.1f} x the network '
          f'(no selection: {plateau[lag_name].mean():.3f})')
    if ratio <= TS.CLOSE:
        learned.setdefault(lag_name, []).append(name)
for lag_name, names in learned.items():
    seq = TS.maps_tokens(P, lag_name)
    fig = taotp.plot.figure((6.6, 2.2 * (len(names) + 1)))
    F.draw_maps(fig, [(n, [np.array(m) for m in candidates[n]['maps']]) for n in names] +
                [('construction', TS.construction_maps(P, TS.LAG_SETS[lag_name], seq))])
    display(fig)
if not learned:
    print(f'no run within {TS.CLOSE} x the network: no trained maps are drawn')

# %% [markdown]
# No model of ours learned $\{3,5,7\}$: the standard model is a little below the
# no-selection plateau after 12,000 steps, the disentangled one just above it. The three
# rows of Fig. 5 (layers 1 and 3 match the construction, layer 1 weighs keys in proportion
# to $\log P^\star$, layer 2 draws diagonals) are therefore *not reached*: their rules
# (`TS.claims`) are written and tested on the construction's own maps, and they score the
# maps the GPU runs store for $\{1,2,3\}$ and $\{3,5,7\}$.
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
fig = taotp.plot.figure((7.6, 3.4))
F.draw_kl_grid(fig, [('heads in layer 2', *TS.kl_panel(stored, '{1,2,3}', heads_runs)[1:]),
                     ('two layers or three', *TS.kl_panel(stored, '{1,2,3}', layer_runs)[1:])],
               colour_each=True)
fig

# %% [markdown]
# **Heads.** At one budget (3,000 steps of 32 sequences), the all-position KL falls from
# 0.113 with one head in layer 2 to 0.060 with two and 0.045 with three (0.048 as the
# median of three seeds, the number the claims below use), and a fourth head changes
# little (0.043): three lags, three heads, as the construction counts them. The
# paper shows this on $\{1,\dots,5\}$ (Fig. 6 right); we spent our budget on
# $\{1,2,3\}$, and the $\{1,\dots,5\}$ sweep is in the GPU preset.
#
# **Layers.** The paper's claim is that two layers *cannot solve* the task. No model of
# ours solved it, with two layers or three, so the claim is not reached: $[1,3]$ is twice
# as far from the truth as $[1,3,1]$ after 3,000 steps (0.0995 against 0.045), but $[3,3]$,
# with three heads in its first layer too, beats every three-layer model of the same
# budget (0.038) and after 12,000 steps ties $[1,3,1]$ (0.0313 against 0.0312). For the
# first 12,000 steps of 32 sequences, a third layer buys nothing over a wider first layer.
#
# ### Two lags: one head or two (the paper's Fig. 4, last panel)
#
# For two lags the paper builds a one-head construction that is as good as ML, reports
# that trained models are too, and that at short lengths they come closer to BMA than to
# ML. Our $\{1,3\}$ models with one and two heads in layer 2 (3,000 steps each), next to
# BMA, ML, both constructions and eq. (1); the table adds the mean over tokens 4 to 16, the
# short lengths where BMA and ML differ most.

# %%
two_lags = ['std {1,3} [1,1,1]', 'std {1,3} [1,2,1]']
title, kmax, curves = TS.kl_panel(stored, '{1,3}', two_lags)
fig = taotp.plot.figure((5.6, 3.6))
F.draw_kl_grid(fig, [(title, kmax, curves)], cols=1, colour_each=True, ylim=(1e-4, 1.0))
lo, hi = TS.SHORT
print(f'{"lags {1,3}":26}{"all positions":>15}{f"tokens {lo}-{hi}":>14}')
for name, curve in curves.items():
    print(f'{name:26}{np.mean(curve):>15.4f}{np.mean(curve[lo - 1:hi]):>14.4f}')
fig

# %% [markdown]
# With two lags, one head in layer 2 does as well as two at our budget (0.049 against
# 0.047 over all positions), as the paper's one-head construction says it can; on these
# sequences that construction and the two-head one give the same curve (0.0091). Neither
# trained model is near it yet (5.4 and 5.1 times the network), and at short lengths both
# are worse than BMA and ML alike (0.120 and 0.134 over tokens 4 to 16, against 0.038 and
# 0.080). The paper's remark about short lengths describes finished models; ours are not,
# so its row reads *not reached*.
#
# ### What agrees with the paper, and what does not
#
# `TS.claims` gives each message of the paper's Section 6 and its appendix on scaling
# heads and layers a row: the claim with the rule that decides it, our number, the
# paper's words and where it says them. The states follow one rule set:
#
# - **holds**: the number meets the row's rule;
# - **contradicted**: it misses the rule in runs that *finished* at the paper's settings
#   (batch 256, Adam at $10^{-3}$ constant, no clipping, trained until flat or for
#   30,000 steps), so that more training would not change the verdict;
# - **not reached**: it misses the rule and no run finished; the budget, not the claim, is
#   what is open;
# - **not run**: no run of ours tests it; the row says why.
#
# "Matches the construction" means an all-position KL at most 1.5 times the network's
# (the median over seeds, for the runs that decide). Runs at the paper's settings decide a
# row when they are stored; otherwise the CPU runs with the most training decide.

# %%
verdicts = TS.claims(stored, paper)
print(TS.claims_text(verdicts))
counts = {state: sum(r[2] == state for r in verdicts) for state in TS.STATES}
print('D\'Angelo et al.:', ', '.join(f'{n} {state}' for state, n in counts.items()))
assert counts == {'holds': 2, 'not reached': 18, 'contradicted': 0, 'not run': 15}  # the text

# %% [markdown]
# Two rows hold, both comparisons at one budget: each head in layer 2 up to three lowers
# the KL by more than 10 % (0.113, 0.060, then 0.048 as the median of three seeds), and a
# fourth head lowers it by less (0.043). None is contradicted: a contradiction needs runs
# that finished at the paper's settings, and no run of ours did. Eighteen rows are not
# reached, and every comparison with the construction is among them: the closest model,
# $[1,3,1]$ on $\{1,2,3\}$ after 12,000 steps, is at 2.46 times the network (2.83 times
# eq. (1)), and no $\{3,5,7\}$ model learned the task, so the three rows of Fig. 5 are
# not reached either. Fifteen rows are not run: width 128 on four lag sets, the
# disentangled network on three, the heads sweep on $\{1,\dots,5\}$ (two rows), the
# two-layer models $[1,1]$ and $[3,1]$ and four layers, all of them in the GPU preset;
# and three rows that need converged models or the lag set $\{1,2\}$ (the learned
# $\beta$, Figs. 7 and 8).
#
# **The gap, stated plainly.** On $\{1,2,3\}$ our best model ends at 2.46 times the
# network after 12,000 steps of 32 sequences; at 3,000 steps three seeds span 3.6 to 6.2
# times, a model without clipping 3.95 and one of width 128 3.24. Whether the gap closes
# at the paper's settings, with longer training and several seeds, is what the GPU runs
# will say; until they are stored, the paper's claim that trained models match the
# construction is not reached here, and not contradicted.
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
# same as greedy decoding for whole-response exact match), on 50 problems drawn per cell.

# %%
cfg = adder_meta['config']
n = cfg['n']
print(f'SA({n}, {n}), {cfg["steps"]} steps of {cfg["batch"]} fresh problems, '
      f'{adder_meta["train_cpu_seconds"] / 60:.1f} CPU minutes on one thread;')
print(f'{adder_meta["n_params"]:,} parameters; final training loss '
      f'{adder_meta["final_loss"]:.1e}')
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
# Inside the training box (up to 5 digits, up to 5 operands) all 50 sampled problems of
# every cell are right; that is a sample, not every problem of the box. Past it, the two
# axes part ways. More operands of known length degrade slowly: six operands still give
# 74 to 100 %, and some problems with ten or eleven operands come out right. One more
# digit breaks the model at once: with 6 digits it is right on at most a few of the 50
# problems of a cell, whatever the number of operands. The cell below checks these three
# statements on the stored grid.

# %%
box = TC.box(n, digits, operands)
six_operands = grid[[digits.index(d) for d in range(1, n + 1)], operands.index(n + 1)]
longer = grid[digits.index(n + 1):]
print(f'inside the box: {grid[box].min():.0f}-{grid[box].max():.0f} % of the '
      f'{adder_meta["per_cell"]} problems drawn per cell')
print(f'{n + 1} operands of 1-{n} digits: {six_operands.min():.0f}-{six_operands.max():.0f} %; '
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
    where = sorted({(k, 'units' if c == 0 else f'digit {c}') for k, c in zip(rows, cols)})
    print(f'{n + 1} digits, {m} operands: {places.sum():3d} wrong tokens, all in: ' +
          ', '.join(f'{digit} of b_{k}' for k, digit in where))
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
print(f'one problem, {len(tokens)} tokens:')
print(''.join(TC.VOCAB[t] for t in tokens))
fig = taotp.plot.figure((8.0, 4.2))
F.draw_heads(fig, [('trained', trained_maps), ('construction', built_maps)])
fig

# %% [markdown]
# Read the lower half of each map (the response). In the construction, three heads draw
# short anti-diagonals (a digit of the current operand, written most significant first in
# the query) and a long diagonal (the previous partial sum); the fourth head's lattice
# covers the rest. The trained heads 2 to 4 show the same strokes, with extra faint ones;
# head 1 spreads its weight over whole blocks. Two numbers make this precise, both on
# response rows: the share of a trained head's attention that falls on keys *some*
# construction head weighs at least 0.01 (the union of their supports), and, head to head,
# the share on the keys of *one* construction head, a 4 x 4 matrix; the best one-to-one
# pairing of trained and constructed heads is marked with a star.

# %%
start = int(np.argmax(tokens == TC.EQ_ID))
union = TA.mass_on_support(trained_maps, built_maps, start)
agreement = TA.agreement_matrix(trained_maps, built_maps, start)
pairs = dict(TA.best_matching(agreement))
even_union = TA.uniform_share(built_maps, start)
even_each = [TA.uniform_share(built_maps[j:j + 1], start) for j in range(4)]
print(f'{"trained head":14}{"union":>7}   ' +
      ''.join(f'{f"constr. {j + 1}":>11}' for j in range(4)))
for t in range(4):
    print(f'{t + 1:<14}{union[t]:>7.0%}   ' + ''.join(
        f'{agreement[t, j]:>10.0%}{"*" if pairs[t] == j else " "}' for j in range(4)))
print(f'{"even spread":14}{even_union:>7.0%}   ' + ''.join(f'{v:>10.0%} ' for v in even_each))
assert sorted(union)[1] > max(0.6, 3 * even_union)         # the second smallest of four
matched = sorted((agreement[t, c] for t, c in pairs.items()), reverse=True)
print(f'paired one to one: {", ".join(f"{v:.0%}" for v in matched)}; on the keys of '
      f'construction head 4: at most {agreement[:, 3].max():.0%}')

# %% [markdown]
# The union measure flatters: three trained heads put 68 to 82 % of their weight on some
# construction head's keys. Head to head the picture is more specific. Paired one to one,
# three trained heads match a construction head each (73, 68 and 66 %, all several times
# the even share); trained heads 3 and 4 both land mostly on the pattern of construction
# head 3; and construction head 4, the lattice, has no trained counterpart: no trained
# head puts more than 11 % of its weight on its keys. The trained model is right on all
# sampled problems of its box without that head, so it has found a different division of
# labour. The paper's Fig. 7a shows selected heads and makes its point by eye; ours
# agrees for three heads of four.
#
# **What the paper's scale would change.** Cho et al. train on SA(10, 10) for 50,000 steps
# of 400 problems (20 million, drawn from a fixed set of 500,000) with models of width
# 1,024; our adder saw 384,000 fresh problems of SA(5, 5) at width 64 (53,952
# parameters) in 11 CPU minutes. Their embedding-size study (Fig. 12) found
# 1-layer 4-head models of width 64 far behind wider ones and read it as an optimisation
# effect, since the theorem needs only a small width; our model is in that corner. A wider
# box also trains longer widths, so the width-6 limit we hit would move out with it.
#
# ### Cho et al.'s claims, in the same three states

# %%
adder_verdicts = TC.claims(adder_meta, agreement, even_each)
print(TS.claims_text(adder_verdicts))
every = verdicts + adder_verdicts
totals = {state: sum(r[2] == state for r in every) for state in TS.STATES}
print(f'all {len(every)} claims: ' + ', '.join(f'{n} {state}' for state, n in totals.items()))
assert totals == {'holds': 3, 'not reached': 19, 'contradicted': 0, 'not run': 17}  # Summary

# %% [markdown]
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
import textwrap
x_tl, _ = taotp.selective.sample_batch(P, (1, 2, 3), 16, 1, rng=np.random.default_rng(0))
port = taotp.selective.book_params(P, (1, 2, 3), 16)
try:
    from taotp.trained.hooks import hook_names, tl_patterns
    patterns = tl_patterns(port, x_tl[0])            # blocks.{l}.attn.hook_pattern
except ModuleNotFoundError as missing:
    print(missing)
else:
    book = taotp.trace(x_tl[0], port).attn
    print(textwrap.fill('hook points of block 0: ' + ', '.join(hook_names(port)[:6] + ['...']),
                        80, subsequent_indent='  '))
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
# ### Generating with TransformerLens
#
# In TransformerLens one decodes with `model.generate`, whose default keeps a key/value cache
# (`use_past_kv_cache=True`). The exported model's `generate` returns the tokens of
# `taotp.decode`, with the cache or without; the tests check it on every exportable program
# of the catalogue and on random programs of one to three layers. Below are two programs
# on which TransformerLens' unmodified cached loop fails: Chapter 6's 3-digit adder on
# 999 + 999 (a shape error) and Hello World, which has no layers (an `IndexError`; with
# nothing to cache, the exported model runs it without a cache).

# %% tags=["nbval-skip"]
adder_3 = taotp.build_decimal_addition_transformer(3)
hello, hello_ids = taotp.hello_world.build_hello_world_transformer()
tl_runs = [('3-digit adder', adder_3, [9, 9, 9, 10, 9, 9, 9, 11], 4),    # 10 is +, 11 is =
           ('Hello World', hello, [hello_ids['<bos>']], 13)]
try:
    import torch
    from taotp.export import to_hooked_transformer
except ModuleNotFoundError as missing:
    print(missing)
else:
    for label, program, prompt_ids, n_new in tl_runs:
        exported = to_hooked_transformer(program)
        decoded = taotp.decode(prompt_ids, program, max_steps=n_new).tolist()[len(prompt_ids):]
        print(f'{label}, prompt {prompt_ids}')
        print(f'  {"taotp.decode":35}{decoded}')
        for cache in (True, False):
            generated = exported.generate(torch.tensor([prompt_ids]), max_new_tokens=n_new,
                                          do_sample=False, use_past_kv_cache=cache,
                                          stop_at_eos=False, verbose=False)[0, len(prompt_ids):]
            print(f'  generate, use_past_kv_cache={cache!s:5}  {generated.tolist()}')
            assert generated.tolist() == decoded

# %% [markdown]
# The export needs a fix for this. TransformerLens 3.x's cached `generate`, on a model
# without a tokenizer (every exported program), embeds the whole sequence so far with a
# position offset equal to the cache length, so from the second new token on, a sequence
# of $L$ tokens puts its newest token at position $2L-2$ instead of $L-1$; past the end
# of the position table it stops with a shape error. A plain `HookedTransformer` that
# only counts positions shows it, no `taotp` involved: its next token is the last
# token's position plus one.

# %% tags=["nbval-skip"]
try:
    import torch
    from transformer_lens import HookedTransformer, HookedTransformerConfig
except ModuleNotFoundError as missing:
    print(missing)
else:
    import warnings
    with warnings.catch_warnings():      # TransformerLens 3.x points to 4.x's TransformerBridge
        warnings.simplefilter('ignore', DeprecationWarning)
        counter = HookedTransformer(HookedTransformerConfig(
            n_layers=1, d_model=16, n_ctx=16, d_head=4, n_heads=1, d_vocab=17,
            attn_only=True, normalization_type=None))
    with torch.no_grad():
        for weight in counter.parameters():
            weight.zero_()
        counter.W_pos[:] = torch.eye(16)              # position p ...
        counter.W_U[:, 1:] = torch.eye(16)            # ... votes for token p + 1
    for cache in (False, True):
        counted = counter.generate(torch.tensor([[0, 0, 0]]), max_new_tokens=4,
                                   do_sample=False, use_past_kv_cache=cache,
                                   stop_at_eos=False, verbose=False)
        print(f'plain TransformerLens, use_past_kv_cache={cache!s:5}: new tokens',
              counted[0, 3:].tolist())

# %% [markdown]
# The exported model is a `taotp.export.BookHookedTransformer`, a subclass whose
# `generate` runs TransformerLens' own loop and cache and only embeds that sequence at
# positions $0..L-1$. A run that would need more positions than the program's
# `block_size` (the prompt plus every new token but the last) is refused with an
# `ExportError` before anything runs, as `taotp.decode` refuses it; the message says how
# many new tokens fit. Last, the speed of the two loops, on one thread, for a random
# program of two layers (vocabulary 64, width 64, four heads of 16, MLP width 256,
# block 256) generating 120 tokens after a prompt of 8:

# %% tags=["nbval-skip", "nbval-ignore-output"]
import timeit
bench_rng = np.random.default_rng(0)
bench = taotp.random_params(bench_rng, vocab_size=64, block_size=256, d_model=64, n_layers=2,
                            n_heads=4, d_head=16, d_ff=256)
bench_prompt = bench_rng.integers(0, 64, 8).tolist()
try:
    import torch
    from taotp.export import to_hooked_transformer
except ModuleNotFoundError as missing:
    print(missing)
else:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    exported = to_hooked_transformer(bench)
    loops = {'taotp.decode': lambda: taotp.decode(bench_prompt, bench, max_steps=120).tolist(),
             'TransformerLens generate': lambda: exported.generate(
                 torch.tensor([bench_prompt]), max_new_tokens=120, do_sample=False,
                 stop_at_eos=False, verbose=False)[0].tolist()}
    seconds = {label: min(timeit.repeat(loop, number=1, repeat=5))
               for label, loop in loops.items()}
    torch.set_num_threads(threads)
    assert loops['taotp.decode']() == loops['TransformerLens generate']()
    for label, s in seconds.items():
        print(f'{label:25} {1000 * s:5.0f} ms for 120 tokens (key/value cache, 1 thread)')
    ratio = seconds['TransformerLens generate'] / seconds['taotp.decode']
    print(f'TransformerLens takes {ratio:.1f} times as long as taotp.decode on this machine')

# %% [markdown]
# ## Summary
#
# - The book's architecture trains in PyTorch (`taotp.train`) and comes back as a params
#   dict, so a trained model is run, traced, counted and compared with the same functions
#   as a constructed one; every number on this page is recomputed from stored weights or
#   printed from stored runs whose settings (batch, learning rate, schedule, clipping,
#   seed) and CPU times are listed at the top.
# - **The claims.** The two papers' claims about trained models fill 39 rows (35 from D'Angelo
#   et al., 4 from Cho et al.), each with its rule, our number and the paper's words: 3
#   hold, 19 are not reached at our budget, none is contradicted and 17 are not run, each
#   with its reason.
# - **Chapter 9's task.** A 1-layer 4-head model of width 64 learns SA(5, 5) with the
#   scratchpad and bi-level coupling in 11 CPU minutes: right on all 50 sampled problems
#   of every cell of its training box, partly right with more operands (up to eleven),
#   wrong from the first extra digit, and always at one place, the units digit of a new
#   partial sum. Head to head, three of its heads match a construction head each (73, 68
#   and 66 % of their weight on its keys); the construction's fourth head has no trained
#   counterpart (11 % at best).
# - **Chapter 10's task.** At our budget (3,000 steps of 32 sequences; 12,000 for three
#   models) standard models learn to use the context but not to finish the selection: the
#   best ends at 2.46 times the network's all-position KL (2.83 times the paper's eq. (1)),
#   the late KL of the main models runs from 0.010 on $\{1,2,3\}$ to 0.147 on
#   $\{3,5,7\}$, three seeds of one model span 3.6 to 6.2 times the network at 3,000
#   steps, and neither switching clipping off (3.95) nor doubling the width (3.24) closes
#   the gap; the disentangled models stay on the no-selection plateau. The two rows that
#   hold compare heads at one budget (up to K heads help, a fourth adds little); every
#   comparison with the construction is not reached, none is contradicted.
# - **Left for a GPU.** The runs at the paper's own settings (batch 256, Adam at
#   $10^{-3}$ constant, no clipping, widths 64 and 128, three seeds of each lag set's main
#   model, up to 30,000 steps or flat) are prepared in `taotp.trained.paper` and
#   smoke-tested on the CPU; `python -m taotp.trained paper OUT_DIR --device cuda --part
#   main --minutes 8` runs the first part. They decide the rows that say *not reached* or
#   *not run* for want of them.
# - **TransformerLens.** Every program of the book's format except the multi-level adder
#   opens as a float64 `HookedTransformer`, with hook points that agree with `taotp.trace`.
#
# Section 4 of Cho et al. and Section 6 of D'Angelo et al. (with its appendix on heads
# and layers) are the sources of every setting we copied and of every claim we tested.
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
#    to within 1.5 times the network's all-position KL in under an hour of CPU.
# 3. **Fewer heads than lags.** The paper (Fig. 7) reports a layer 2 that superposes
#    several lags in one head, a mechanism it could not interpret. Train $[1,1,1]$ on
#    $\{1,2,3\}$ and read its layer 2 against the construction's.
#
# ## References
#
# - [SIH] F. D'Angelo, F. Croce, N. Flammarion. *Selective Induction Heads: How
#   Transformers Select Causal Structures in Context*. ICLR 2025.
#   [arXiv:2509.08184](https://arxiv.org/abs/2509.08184). Sections 4 and 6, Figs. 4-8.
# - [PC] H. Cho, J. Cha, S. Bhojanapalli, C. Yun. *Arithmetic Transformers Can
#   Length-Generalize in Both Operand Length and Count*. ICLR 2025.
#   [arXiv:2410.15787](https://arxiv.org/abs/2410.15787). Section 4, Figs. 1, 5, 7, 10,
#   12, Table 2.
# - N. Nanda, J. Bloom. *TransformerLens*. 2022.
#   <https://github.com/TransformerLensOrg/TransformerLens>.
# - See also {doc}`09_position_coupling` and {doc}`10_selective_induction`.
