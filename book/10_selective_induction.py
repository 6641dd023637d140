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
# # 10. Selective Induction Heads
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/book/10_selective_induction.ipynb)
#
# An induction head copies the token that followed an earlier match: its copy rule is fixed.
# This chapter programs a transformer whose copy rule is *chosen in context*. The data are
# interleaved Markov chains whose hidden lag decides which earlier token is the parent of the
# next one; a three-layer, attention-only network gathers evidence for every candidate lag,
# picks one, and copies from the right place. The construction comes from D'Angelo, Croce and
# Flammarion [SIH]; the paper ships no code, so this is, as far as we know, its first runnable
# version, checked against the exact formula it computes and run on the book's own
# transformer.

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
# Fix an alphabet of $S$ tokens and one transition matrix $P$ (row $a$ is the law of a child
# whose parent is $a$). A source with **lag** $k$ draws every token from the row of the token
# exactly $k$ places back: $x_t \sim P[x_{t-k}, \cdot]$. So a lag-$k$ sequence is $k$
# independent copies of the same Markov chain, woven together position by position. Each
# sequence draws its lag uniformly from a known set (here $\{1, 2, 3\}$) and hides it. The
# first $\max(\text{lags})$ tokens have no parent in the data-generating process: they are
# i.i.d. from the stationary law $\pi$ of $P$, whatever the lag.
#
# Our matrices are random: each row holds independent Uniform(0, 1) numbers divided by their
# sum. The paper never says how it drew its matrices; this rule reproduces the statistics it
# reports (our choice, stated once here). The chapter's code is `taotp.selective`, one file
# per idea (task, predictors, head designs, construction, network, book port, figures).
# Below, one sequence per lag, coloured by sub-chain.

# %%
sel = taotp.selective
P = sel.transition_matrix(5, np.random.default_rng(0))
lags = (1, 2, 3)
print('P =\n', P.round(3))
print('stationary law pi =', sel.stationary(P).round(3))
fig = taotp.plot.figure((6.0, 2.3))
sel.draw_subchains(fig, P, lags, T=24)
fig

# %% [markdown]
# Given a prefix, what is the law of the next token? Without knowing the lag, the best
# answer averages the three candidate rows $P[x_{t+1-k}]$ with the posterior probability of
# each lag:

# %%
tokens, true_lag = sel.sample_sequence(P, lags, 24, np.random.default_rng(7))
print('tokens  :', tokens.tolist())
print('true lag:', true_lag)
q = sel.bma_predictive(P, lags, tokens)
print('after 24 tokens the Bayes-optimal next-token law is', q[-1].round(3))
print('the true law (row of the parent x_{24+1-k})       ', P[tokens[24 - true_lag]].round(3))

# %% [markdown]
# ```{admonition} Spoiler alert
# :class: warning
# The rest of the chapter builds the network step by step. To design the layer masks and
# the selection block yourself first, try the puzzles in the
# [exercises notebook](https://github.com/taotp/taotp-book/blob/main/exercises/10_selective_induction.ipynb).
# ```
#
# ## Why averaging over lags is optimal
#
# Score a predictor by the expected KL divergence between the true next-token law and its
# prediction, averaged over the lag (uniform on the set) and the sequences. For a fixed
# prefix the true law is $P[x_{t+1-k}]$ with probability equal to the posterior of lag $k$,
# and the prediction that minimises the expected KL against a random target is the mean of
# that target: the **Bayesian model average** (BMA)
#
# $$ \begin{aligned}
#    q_\text{BMA}(\cdot \mid x_{1:t}) &= \sum_{k} w_k(t)\, P[x_{t+1-k}, \cdot], \\
#    w_k(t) &= \operatorname{softmax}_k \ell_k(t), \qquad
#    \ell_k(t) = \sum_{j=k_\max+1}^{t} \log P[x_{j-k}, x_j].
#    \end{aligned} $$
#
# The warm-up factors $\pi(x_1)\cdots\pi(x_{k_\max})$ are the same for every lag and cancel.
# (The paper writes its objective with the lag uniform on $1..k_\max$; it means uniform on the
# lag set, as its data section says.) **Maximum likelihood** (ML) instead copies from the
# single best lag. At $t = k_\max$ all likelihoods tie and the paper gives no rule; ours: tied
# lags (within $10^{-9}$) share the weight equally.
#
# A worked example small enough to check by hand (`taotp.selective.example`): $S = 3$, a
# sticky $P$ (each token most often repeats its parent), lags $\{1, 2, 3\}$, ten tokens.
# Each computed number is printed next to the hand-computed one.

# %%
ex = sel.example
print('P      =', ex.P.tolist())
print('tokens =', ex.TOKENS.tolist())
print(f'{"":25}{"computed":30}by hand')
for label, computed, by_hand in (
        ('log-likelihoods at t=10',
         sel.log_likelihoods(ex.P, lags, ex.TOKENS)[-1].round(4), ex.LOG_LIKELIHOODS),
        ('posterior at t=10',
         sel.lag_posterior(ex.P, lags, ex.TOKENS)[-1].round(4).tolist(), ex.POSTERIOR),
        ('BMA prediction',
         sel.bma_predictive(ex.P, lags, ex.TOKENS)[-1].round(4), ex.BMA),
        ('ML prediction', sel.ml_predictive(ex.P, lags, ex.TOKENS)[-1].round(4),
         '(lag 3 wins: copy row P[x_8])')):
    print(f'{label:25}{str(computed):30}{by_hand}')

# %% [markdown]
# ## The evidence a transformer can average
#
# Multiplying likelihoods along the sequence is not what attention does well; averaging is.
# The construction's evidence is the **normalised transition probability** of each lag at
# each position,
#
# $$ \tilde p_{i,k} = \frac{P[x_{i-k}, x_i]}{\sum_{l} P[x_{i-l}, x_i]}, $$
#
# the posterior over "which offset is the parent of $x_i$" from that one transition alone.
# Claim 1 of the paper says its expectation is largest at the true lag, so its running mean
# separates the lags (the paper proves this for two lags and for independent parents, and
# checks it numerically otherwise). Proposition 1 turns that into a predictor:
#
# $$ \tilde w_k = \operatorname{softmax}_k\Big(\frac{\beta}{T-k_\max}\sum_{i=k_\max+1}^{T}
#    \tilde p_{i,k}\Big), \qquad \text{out}_T = \sum_k \tilde w_k P[x_{T+1-k}, \cdot]. $$
#
# The player follows one sequence of length 48 for two lag sets, {1,2,3} and {3,5,7}: the
# log-likelihoods (what BMA uses), the posterior, and the running mean of $\tilde p$ (what
# the network uses). Its frames are drawn by an explorer, `data`, whose controls you can move
# at the end of the chapter (with a kernel).

# %%
widgets = taotp.widgets
data = widgets.Explorer(lambda fig, **v: sel.draw_data(fig, P, **v), size=(6.4, 3.3),
                        lags=widgets.choice(sel.PRESETS, '{1,2,3}'),
                        true_lag=widgets.choice(['random', 'smallest', 'largest']),
                        T=widgets.slider(16, 128, 8, value=48),
                        seed=widgets.slider(0, 20, 1, value=0))

# %% tags=["nbval-ignore-output"]
data.player('lags', values=['{1,2,3}', '{3,5,7}'], interval=1500)

# %% [markdown]
# A quick Monte-Carlo look at Claim 1 for this $P$: the mean of $\tilde p$ per lag, read at
# position $2k_\max + 5$ (past the warm-up), for sequences of each true lag. The diagonal
# should dominate every row.

# %%
claim = np.zeros((3, 3))
for r, k in enumerate(lags):
    Xc, _ = sel.sample_batch(P, lags, 11, 4000, rng=np.random.default_rng(10 + k), lag=k)
    claim[r] = sel.normalised_transitions(P, lags, Xc)[:, 10].mean(0)
print('rows: true lag 1, 2, 3; columns: E[ptil] for lags 1, 2, 3\n', claim.round(3))
assert all(claim[r].argmax() == r for r in range(3))

# %% [markdown]
# ## Building it
#
# ### The model class: a disentangled transformer
#
# The paper writes its network in the *disentangled* form: the input at position $i$ is the
# concatenation $[e_{x_i}, e_i]$ of a token one-hot and a position one-hot (width $S + T$);
# each head is one square matrix $\tilde A$ with scores $h_i^\top \tilde A h_j$ (causal, no
# value matrix), and instead of adding its output the head *appends* it, so every layer
# multiplies the width by one plus its number of heads. No MLPs, no norms. The output reads
# the last residual through one matrix. `sel.DisentangledTransformer` runs such a network
# with a forward pass of its own, because this is not the book's architecture; later in the
# chapter the same weights run on the book's transformer, and the tests check that the two
# agree.
#
# We use the worked example ($T = 10$, lags $\{1,2,3\}$, $\lambda = 500$, $\beta = 10$). The
# pictures label rows and columns the book's way, `position:token` with positions counted
# from 0; the text counts from 1, so tick `9:2` is position 10 (token 2).

# %%
model = sel.build_selective_induction(ex.P, lags, 10, lam=500.0, beta=10.0)
run = model.run(ex.TOKENS)
print('heads per layer:', model.heads(), '  residual widths:', model.widths)

# %% [markdown]
# ### Layer 1: read off every transition's normalised probability
#
# One head. Its token block is $(\log P)^\top$ and its position block is $+\lambda$ where
# $i - j$ is a lag and $-\lambda$ elsewhere, so the score of key $j = i - k$ is
# $\lambda + \log P[x_{i-k}, x_i]$. With $\lambda$ large the softmax keeps exactly the lag
# keys and gives them weights $\tilde p_{i,k}$. The head copies the keys' position one-hots,
# so position $i$ stores $\tilde p_{i,k}$ in slot $i - k$ of a new block (the paper once
# writes the slot as $S + T - k$; slot $i - k$ is what its picture and formula use). Row 3
# holds $\tilde p_{3,2}, \tilde p_{3,1}$ (the paper's picture prints $\tilde p_{2,1}$ there).

# %%
slots = model.meta['slots']
l1 = run['resid'][1][:, slots['l1']]
ptil = sel.normalised_transitions(ex.P, lags, ex.TOKENS)
print('row i=3, slots 1..2 :', l1[2, :2].round(4), ' = ptil[3, lag 2], ptil[3, lag 1]:',
      ptil[2, [1, 0]].round(4))
print('row i=6, slots 3..5 :', l1[5, 2:5].round(4), ' by hand (lags 3, 2, 1):', ex.PTIL[2][::-1])
taotp.plot.attention(run['attn'][0][0], ex.TOKENS, title='layer 1 (weights = ptil)',
                     size=(3.4, 3.0))

# %%
taotp.plot.residual(l1, labels=[f'slot {s}' for s in range(1, 11)], tokens=ex.TOKENS,
                    title='layer 1 output: ptil[i, k] stored in slot i - k', size=(5.0, 2.8))

# %% [markdown]
# ### Layer 2: average the past without mixing transitions
#
# Averaging the layer-1 blocks of all earlier tokens would blend them: token 9 stores its
# lag-1 entry in slot 8, and token 10 stores its lag-2 entry in slot 8 too. The fix uses $K$
# heads. Head $h$ attends uniformly to the tokens $k_\max < j \le i$ whose distance $i - j$ is
# $h - 1$ modulo $K$ (masks $\pm\lambda$ on the position block only). A stored token writes
# $K$ consecutive slots, and members of one class sit $K$ apart, so their windows tile without
# overlap; the $K$ classes together keep every transition. Each head appends two useful
# blocks: $\hat m_h$, the average of the attended position one-hots, and $\hat p_h$, the
# average of their layer-1 blocks. (Rows with no allowed key fall back to a uniform average
# in a real softmax; the paper draws them empty. This only matters at small positions.) The
# pictures number the heads from 0.

# %%
taotp.plot.attention(run['attn'][1], ex.TOKENS, title='layer 2', size=(2.5, 2.4))

# %%
phat = np.concatenate([run['resid'][2][9, slots[f'phat{h}']] for h in range(3)])[None]
taotp.plot.residual(phat, labels=[f'h{h + 1}:{s}' for h in range(3) for s in range(1, 11)],
                    title='query 10: phat of heads 1, 2, 3 (slots 1-10)', size=(7.0, 1.5))

# %% [markdown]
# At query 10 the classes are $\{4, 7, 10\}$, $\{6, 9\}$ and $\{5, 8\}$: head 1 holds three
# transitions (weights $1/3$), heads 2 and 3 two each.
#
# ### Layer 3: the selective induction head
#
# To predict $x_{i+1}$ under lag $k$ one copies position $i + 1 - k$, so layer 3 has the
# layer-1 band shifted by one ($+\lambda$ where $i - j + 1$ is a lag). On top, for each head,
# a block $B$ from the query's $\hat p_h$ to the key's $\hat m_h$ with
# $B[a, b] = \beta$ when $(a - b) \bmod K = K - 1$. It turns the key's averaged position
# one-hot into the indicator of the slots that hold lag $k = i + 1 - j$ entries, so the
# score of candidate key $i + 1 - k$ is $\lambda + \beta \sum_h \operatorname{mean}_{j \in
# C_h(i)} \tilde p_{j,k}$. The softmax over the $K$ candidates weighs the lags; the head
# copies the candidates' token one-hots and the readout multiplies by $P^\top$. As
# $\beta \to \infty$ it copies one token: the selective induction head.

# %%
hand = ex.NETWORK[10.0]
print('layer-3 scores at query 10 (lag 1, 2, 3) minus lam:',
      (run['scores'][2][0, 9, [9, 8, 7]] - 500).round(3), '\n  by hand:', hand['scores'])
print('weights on keys 10, 9, 8:', run['attn'][2][0, 9, [9, 8, 7]].round(4).tolist(),
      '  by hand:', hand['weights'])
print('network output at query 10:', run['probs'][-1].round(4), '  by hand:', hand['output'])
taotp.plot.attention(run['attn'][2][0], ex.TOKENS, title='layer 3 (selects lag 3)',
                     size=(3.4, 3.0))

# %%
taotp.plot.residual(run['resid'][3][:, slots['copy']], labels=['tok 0', 'tok 1', 'tok 2'],
                    tokens=ex.TOKENS, title='layer 3: copied token mixture', size=(3.2, 2.8))

# %% [markdown]
# ### What the network computes exactly
#
# Proposition 1 averages $\tilde p$ over *all* positions at once, but the network averages
# per class and then adds the class means. So at query $i$ it computes
# $\text{score}_k(i) = \beta \sum_h \operatorname{mean}_{j \in C_h(i)} \tilde p_{j,k}$
# (`sel.construction_predictive`). When $i - k_\max$ is a multiple of $K$ all classes have the
# same size and this *is* Proposition 1 with $\beta_\text{Prop} = K\beta$; otherwise the class
# sizes differ by one and Proposition 1 is only close. On the example, $i - k_\max = 7$:

# %%
print('network weights at 10 (beta = 1)   :',
      sel.construction_weights(ex.P, lags, ex.TOKENS, 1.0)[-1].round(4))
print('Prop. 1 weights at 10 (beta = 3)   :',
      sel.prop1_weights(ex.P, lags, ex.TOKENS, 3.0)[-1].round(4))
print('  by hand                          :', ex.PROP1_BETA3)

# %% [markdown]
# ## Does it work?
#
# The network against the exact formula on seeded sequences: every design of this chapter,
# alphabets of 2 to 7 tokens, lengths up to 128, from the first query where every key's
# layer-2 row is a real average (`exact_from`; for contiguous lags $2k_\max + K - 1$; earlier
# rows read fallback rows). Then the equality with Proposition 1 on balanced positions.

# %%
rng = np.random.default_rng(2024)
checked = 0
for lags_, kw, S, T in [((1, 2, 3), {}, 5, 128), ((1, 2, 3, 4, 5), {}, 3, 64),
                        ((2, 3, 4, 5), {}, 7, 48), ((1, 3), {}, 5, 64), ((1, 3, 4), {}, 4, 64),
                        ((3, 5, 7), {}, 2, 64), ((1, 2, 3), {'heads': 1}, 5, 64),
                        ((2, 5), {'heads': 1}, 4, 64)]:
    Pm = sel.transition_matrix(S, rng)
    for beta in (1.0, 100.0):
        m = sel.build_selective_induction(Pm, lags_, T, lam=500.0, beta=beta, **kw)
        Xs, _ = sel.sample_batch(Pm, lags_, T, 3, rng=rng)
        err = np.abs(m.next_token_probs(Xs) - sel.construction_predictive(
            Pm, lags_, Xs, beta, m.meta['design']))[:, m.meta['exact_from'] - 1:].max()
        assert err < 1e-6, (lags_, kw, beta, err)
        checked += len(Xs)
print(f'{checked} sequences, 8 designs, 2 betas: network = exact formula to 1e-6')

# %%
m = sel.build_selective_induction(P, lags, 64, beta=4.0)
Xs, _ = sel.sample_batch(P, lags, 64, 8, rng=rng)
gap = np.abs(m.next_token_probs(Xs) - sel.prop1_predictive(P, lags, Xs, 12.0))
i = np.arange(1, 65)
balanced = (i >= 8) & ((i - 3) % 3 == 0)
print(f'vs Prop. 1 (beta = 3 x 4): max gap {gap[:, balanced].max():.1e} on balanced rows, '
      f'{gap[:, (i >= 8) & ~balanced].max():.1e} elsewhere')
assert gap[:, balanced].max() < 1e-10

# %% [markdown]
# ## How good is it? KL against sequence length
#
# The paper's Fig. 3 (right) plots, position by position, the mean KL between the true
# next-token law and three kinds of predictor on sequences of length 128 ($S = 5$, lags
# $\{1,2,3\}$): BMA, ML, and Proposition 1 with $\beta \in \{1, 2, 5, 10, 25, 100\}$. We add
# the network (3 heads, $\lambda = 500$, $\beta = 100$) twice: its own forward pass on every
# sequence (`next_token_probs`), and the closed-form function it computes once $\lambda$ is
# infinite (`construction_predictive`, "formula"). We use 500 seeded sequences; the forward
# pass is the slow part, because the residual stream is 2,128 numbers wide at $T = 128$: over
# all 500 it takes about 6 s, more than this page may spend. So the network's two results
# over the 500 sequences, its mean KL per position and its largest gap to the formula, are
# loaded from `taotp/data/ch10_network_kl.json`, stored by a slow test that runs the same
# forward pass again and compares (`tests/test_stored_results.py`). Here the network runs
# on the first 20 sequences, and its KL on them must equal the one stored for them.

# %%
X, true = sel.sample_batch(P, lags, 128, 500, rng=np.random.default_rng(1))
network = sel.build_selective_induction(P, lags, 128, lam=500.0, beta=100.0)
formula = sel.construction_predictive(P, lags, X, 100.0)    # its function at lam = infinity
import json, pathlib
stored = json.loads((pathlib.Path(taotp.__file__).parent / 'data' /
                     'ch10_network_kl.json').read_text())   # the network on all 500
own = network.next_token_probs(X[:20])                      # its forward pass, 20 of them
first = sel.kl_curves(P, lags, X[:20], true[:20], {'network': own})['network']
assert np.allclose(first, stored['kl_curve_first_20'], rtol=1e-9, atol=1e-12)
curves = sel.kl_curves(P, lags, X, true, {
    **{f'Prop. 1, beta={b}': sel.prop1_predictive(P, lags, X, b) for b in (1, 2, 5, 10, 25, 100)},
    'formula (lam = inf)': formula})
curves['network (forward pass)'] = np.array(stored['kl_curve'])
ts = (3, 4, 5, 7, 8, 16, 32, 64, 127)
print('mean KL at t (one row per t): formula at lam = inf, network by its forward pass')
heads = [name.replace('Prop. 1, ', '').split(' (')[0] for name in curves]  # beta=1, ...
widths = [max(8, len(head) + 1) for head in heads]
print(' ' * (5 + sum(widths[:2])) + f'{" Prop. 1 ":-^{sum(widths[2:8])}}')
print(f'{"t":>5}' + ''.join(f'{head:>{w}}' for head, w in zip(heads, widths)))
for t in ts:
    print(f'{t:>5}' + ''.join(f'{max(curve[t - 1], 0):>{w}.1e}'
                              for curve, w in zip(curves.values(), widths)))

# %%
styled = {**curves, 'formula (lam = inf)': (curves['formula (lam = inf)'], 'k:'),
          'network (forward pass)': (curves['network (forward pass)'], 'C9-')}
fig = taotp.plot.figure((5.6, 3.8))
sel.draw_kl(fig, [("lags {1,2,3}, S = 5 (cf. the paper's Fig. 3 right)", 3, styled)])
fig

# %% [markdown]
# The network and its formula agree from $t = 8$ on and differ before. At $t = 3$ the
# network's KL is almost three times the formula's (first row of the table). Layer 3
# scores each candidate parent with two kinds of layer-2 averages: the query's averaged
# evidence and the averaged positions stored at the candidate key. Before query
# $2k_\max + K - 1 = 8$ (`exact_from`) some of those averages have no token to average yet (a
# class $C_h(j)$ is empty), and a softmax row whose keys are all masked alike does not
# return zero: it averages every earlier token, warm-up included. Multiplied by
# $\beta = 100$, that meaningless evidence still makes layer 3 confident. The formula, with
# no evidence at $t = 3$, splits its weight equally, like BMA:

# %%
gap = np.array(stored['gap'])                  # max |network - formula| over the 500 (stored)
start = network.meta['exact_from']
print('largest |network - formula| at t = 3..7:', [f'{g:.2f}' for g in gap[2:start - 1]],
      f'\n  from t = {start} on: {gap[start - 1:].max():.0e}')
layer3 = network.run(X[:, :start])['attn'][2][:, 0]        # (500, t, t): the first 8 queries
evidence = sel.construction_weights(P, lags, X[:, :start], 100.0)
for t in range(3, start + 1):
    w_net = layer3[:, t - 1, [t - k for k in lags]]        # weights on the candidate parents
    print(f't = {t}: mean largest lag weight, network {w_net.max(1).mean():.2f}, '
          f'formula {evidence[:, t - 1].max(1).mean():.2f}')
assert gap[start - 1:].max() < 1e-9
assert curves['network (forward pass)'][2] > 2 * curves['formula (lam = inf)'][2]
early = {name: (curves[name][:16], style) for name, style in (
    ('BMA', 'k-'), ('ML', 'k--'), ('formula (lam = inf)', 'k:'), ('network (forward pass)', 'C9-'))}
fig = taotp.plot.figure((4.2, 3.0))
sel.draw_kl(fig, [('the first 16 tokens', 3, early)], ylim=(1e-2, 1.0))
fig

# %% [markdown]
# **Is BMA best?** In expectation, yes, at every length: given a prefix, the true next-token
# law is candidate row $k$ with the posterior probability of lag $k$, and the mixture with
# those weights minimises the expected KL. A finite sample need not show it. In the table ML
# is ahead of BMA at $t = 64$ and the two tie at $t = 127$ (both 0 to double precision): by
# then ML has picked the true lag on every one of our sequences and pays nothing, while BMA
# keeps a sliver of posterior weight on the other lags. The expectation also counts the rare
# prefixes on which ML picks a wrong lag and pays a large KL; the posterior gives them a tiny
# probability at $t = 64$ (printed below), so drawing none among 500 sequences is no surprise.
# Scoring each sequence against the posterior of its lag, instead of the lag it was drawn
# with, estimates the same expected KL without that luck of the draw, and there BMA is at or
# below ML at every length (to within $10^{-13}$, the rounding error of a KL between two
# nearly equal laws in double precision):

# %%
posterior = sel.lag_posterior(P, lags, X)                  # (500, 128, 3)
rows = sel.candidate_rows(P, lags, X)                      # the true law under each lag
expected = {name: np.nansum(posterior * sel.kl_divergence(rows, q[..., None, :]), -1).mean(0)
            for name, q in (('BMA', sel.bma_predictive(P, lags, X)),
                            ('ML', sel.ml_predictive(P, lags, X)))}
ml_wrong = sel.ml_lags(P, lags, X)[:, 63].argmax(-1) != np.searchsorted(lags, true)
print(f'{"":5}{"sampled lag":>18} | {"posterior-averaged":>20}')
print(f'{"t":>5}{"BMA":>9}{"ML":>9} | {"BMA":>10}{"ML - BMA":>10}')
for t in (16, 64, 127):
    print(f'{t:>5}{max(curves["BMA"][t - 1], 0):>9.1e}{curves["ML"][t - 1]:>9.1e} | '
          f'{expected["BMA"][t - 1]:>10.2e}'
          f'{expected["ML"][t - 1] - expected["BMA"][t - 1]:>+10.1e}')
print(f'ML picks a wrong lag at t = 64 on {ml_wrong.sum()} of 500 sequences;\n'
      f'  the posterior expects a share of {1 - posterior[:, 63].max(-1).mean():.1e}')
assert np.all(expected['BMA'][2:] <= expected['ML'][2:] + 1e-13)

# %% [markdown]
# The paper prints no numbers for Fig. 3, only the curves; the tables above are ours. The
# rest of the picture is the paper's: Proposition 1 with a small $\beta$ stays on a floor
# that never goes away, and a large $\beta$ follows ML. The network, which that figure does
# not show, joins ML once the evidence has piled up.
#
# ## Lag sets with holes
#
# For non-contiguous lags the paper works two examples and gives no recipe. The rule we use
# (ours, checked here by running the network): pick a period and split the residues modulo
# it into classes, one head per class; head $h$ attends to $k_\max < j \le i$ with
# $(i - j) \bmod \text{period}$ in its class. It is **valid** when no two residues $r, r'$ of
# one class (also $r = r'$) differ by the difference of two distinct lags modulo the period;
# then no two stored transitions share a slot and the selection never reads a wrong lag.
# Singleton classes can use the main third layer; classes with several residues use the
# alternative third layer of the paper's App. F, which reads the key's own position one-hot
# ($B_h[a, b] = \beta$ iff $(b - a - 1) \bmod \text{period} \in R_h$; the paper's general
# formula for it is off by one against its own displayed matrix). `sel.plan_heads` searches
# periods for the fewest heads; the "pretend it is contiguous" fallback needs
# $k_\max - k_\min + 1$ heads.

# %%
print(f'{"lags":10}{"design":9}{"period":>6}  {"classes":31}{"heads":>5}  '
      f'{"variant":11}{"exact from":>10}')
for name in sel.PRESETS:
    for row in sel.design_table(name):
        print(f'{name:10}{row[0]:9}{row[1]:>6}  {str(row[2]):31}{row[3]:>5}  '
              f'{row[4]:11}{row[5]:>10}')

# %% [markdown]
# {3, 5, 7} needs only 3 heads (residues 0, 2, 1 modulo 3) instead of the fallback's 5, and
# {1, 3} needs 2 heads that each average two neighbours and skip two. For {1, 3, 4} period 3
# is impossible, because lags 1 and 4 are equal modulo 3; the validity test lists the clashes
# (and `sel.plan_heads` refuses such a design with a `ValueError` naming the first):

# %%
clashes = sel.design_problems((1, 3, 4), 3, [(0,), (1,), (2,)])
print(f'{len(clashes)} clashes, e.g.:', *clashes[:3], sep='\n  ')

# %% [markdown]
# The non-contiguous sets against BMA and ML (500 sequences, $T = 96$, $\beta = 100$). To
# keep the chapter fast, these curves and the next ones are the formula of each design
# (`construction_predictive`), not a forward pass: each design's network equals its formula
# from its `exact_from` on (the test suite runs every design drawn here) and, as above, is
# worse before that.

# %%
panels = []
for lg in ((1, 3), (1, 3, 4), (3, 5, 7)):
    Xn, tn = sel.sample_batch(P, lg, 96, 500, rng=np.random.default_rng(sum(lg)))
    d = sel.plan_heads(lg)
    panels.append((f'lags {set(lg)}', max(lg), sel.kl_curves(P, lg, Xn, tn, {
        f'formula, {len(d.classes)} heads': sel.construction_predictive(P, lg, Xn, 100.0, d)})))
fig = taotp.plot.figure((7.2, 2.9))
sel.draw_kl(fig, panels)
fig

# %% [markdown]
# ### Two lags, one head
#
# For two lags $k_\min < k_\max$ ($D = k_\max - k_\min$) the paper's App. H gets the two-head
# sample complexity from one head: layer 2 attends to runs of $D$ tokens separated by gaps
# of $D$, and layer 3 reads the *key's* stored block through the query's position, with
# $+\beta$ or $-\beta$ entries. The two candidate keys sit $D$ apart, so their runs are
# complementary halves of the past and the comparison uses almost every transition. The
# paper's sign rule uses $(a - b - 1) \bmod 2D < D$; that is right only when
# $k_\min \equiv 1 \pmod D$. The general shift is $2k_\min - 1$. For {2, 5} the paper's rule
# breaks the network:

# %%
Pp = sel.transition_matrix(4, np.random.default_rng(5))
Xp, _ = sel.sample_batch(Pp, (2, 5), 64, 50, rng=np.random.default_rng(6))
for shift, name in ((None, 'corrected (2 kmin - 1)'), (1, "paper's (a - b - 1)")):
    mp = sel.build_selective_induction(Pp, (2, 5), 64, beta=10.0, heads=1, pair_shift=shift)
    err = np.abs(mp.next_token_probs(Xp) - sel.construction_predictive(
        Pp, (2, 5), Xp, 10.0, mp.meta['design']))[:, mp.meta['exact_from'] - 1:].max()
    print(f'{name:24} max distance to the intended predictor: {err:.1e}')
m13a = sel.build_selective_induction(P, (1, 3), 64, heads=1, beta=30.0)
m13b = sel.build_selective_induction(P, (1, 3), 64, beta=30.0)
X13, _ = sel.sample_batch(P, (1, 3), 64, 20, rng=np.random.default_rng(8))
print('lags {1,3}: one pair head vs two heads, max difference from query 6:',
      f'{np.abs(m13a.next_token_probs(X13) - m13b.next_token_probs(X13))[:, 5:].max():.1e}')

# %% [markdown]
# ## One head or K heads: sample complexity
#
# Keeping only some of layer 2's heads gives the same algorithm on fewer transitions: one
# head (offset 0) uses $\lfloor (T - k_\max - 1)/K \rfloor + 1$ of the $T - k_\max$
# transitions (42 of 125 at $T = 128$, $K = 3$). The paper's trained models show the same
# ordering (its Fig. 6, right: more heads help up to $K$, not beyond).

# %%
T, K = 128, 3
print('transitions used by one head at T = 128:', (T - 3 - 1) // K + 1, 'of', T - 3)
panels = []
for lg in ((1, 2, 3), (1, 2, 3, 4, 5)):
    Xh, th = sel.sample_batch(P, lg, 128, 500, rng=np.random.default_rng(len(lg)))
    panels.append((f'lags {set(lg)}', max(lg), sel.kl_curves(P, lg, Xh, th, {
        f'formula, {h} head(s)': sel.construction_predictive(
            P, lg, Xh, 100.0, sel.plan_heads(lg, heads=h, variant='main'))
        for h in range(1, len(lg) + 1)})))
fig = taotp.plot.figure((7.2, 2.9))
sel.draw_kl(fig, panels)
fig

# %% [markdown]
# ## The same program in the book's transformer
#
# The disentangled form is a convenient notation; the book's machine (Chapter 1) adds
# embeddings, has value and output projections, scales scores by $1/\sqrt{d_\text{head}}$,
# and applies PreLN layer norms. The port (`sel.book_params`) keeps one residual stream with
# named blocks (`sel.book_layout`): token and position one-hots, two anchor dimensions, the
# layer-1 slots, then $\hat m_h$ and $\hat p_h$ per head, then the copied token (width
# $2S + 2T + 2 + 2TH$; the token averages the disentangled model carries but never reads are
# dropped). Each head's $Q K^\top$ is the disentangled matrix restricted to the blocks it
# reads, $V$ picks the source block and $P$ writes it into the head's target block; the MLPs
# are zero. The logits are $\sum_k w_k \log P[x_{i+1-k}]$, so the softmax gives the
# *geometric* mixture of the candidate rows; we compare with the disentangled network run
# with that readout (`output='log'`). The two agree with the arithmetic mixture whenever
# layer 3 is one-hot.
#
# First without layer norms: `norm='none'` runs the book's forward pass with identity norms.

# %%
T40 = 40
x40, _ = sel.sample_sequence(P, lags, T40, np.random.default_rng(9))
ref = sel.build_selective_induction(P, lags, T40, output='log').run(x40)
plain = sel.book_params(P, lags, T40, norm='none')
t0 = taotp.trace(x40, plain, norm='none')
print('config:', str({k: v for k, v in taotp.config(plain).items() if k != 'd_ff'})
      .replace(" 'vocab_size'", "\n         'vocab_size'"))
print('no layer norm: max attention gap per layer',
      [f'{np.abs(a - b).max():.1e}' for a, b in zip(t0.attn, ref['attn'])])
output_gap = np.abs(taotp.softmax(t0.logits) - ref['probs']).max()
print(f'               output gap {output_gap:.1e}')

# %% [markdown]
# Now with the PreLN norms. Every block of the stream sums to a known constant at every
# position (one-hots and attention averages), so each layer norm subtracts the same mean
# everywhere; two anchor dimensions holding $+M$ and $-M$ make the standard deviation almost
# the same everywhere (relative variation of order $1/M^2$). Each norm is then an affine map
# $x \mapsto (x - \mu)/\sigma$, and we undo it inside $Q$, $K$, $V$: with
# $G = \sigma\,(I + \tfrac{\mu}{2M}(e_+ - e_-)\mathbf 1^\top)$ we have $x = \mathrm{LN}(x)\,G$,
# because $\mathrm{LN}(x)_+ - \mathrm{LN}(x)_- = 2M/\sigma$ recovers the constant. $M = 10^5$
# (`anchor=`).

# %%
book = sel.book_params(P, lags, T40)
t = taotp.trace(x40, book)
gaps = [np.abs(a - b).max() for a, b in zip(t.attn, ref['attn'])]
out_gap = np.abs(taotp.softmax(t.logits) - ref['probs']).max()
print('PreLN: max attention gap per layer', [f'{g:.1e}' for g in gaps],
      f' output gap {out_gap:.1e}')
assert max(gaps) < 1e-7 and out_gap < 1e-7
taotp.plot.attention(t.attn[1], title='book port, layer 2', size=(2.1, 2.0))

# %% [markdown]
# Tolerance: $10^{-7}$ on every attention weight and output probability (the measured gaps
# above; the book's softmax adds $\epsilon = 10^{-10}$ to its denominator, which is the
# floor of the norm-free port). The catalogue of programs (`taotp.programs`) holds this port
# for $S = 3$, $T = 64$, and decodes it on prompts whose next token the exact formula
# predicts.
#
# ## How big is it?
#
# Non-zero weights of the disentangled network (every $\pm\lambda$ entry counts), next to
# the counts the construction predicts: $S^2 + T^2$ in layer 1, $H T^2$ in layer 2,
# $T^2 + H\,\mathrm{nnz}(B)$ in layer 3 and $S^2$ in the readout; then the book port's
# parameter census.

# %%
for S_, T_, lg in ((5, 10, (1, 2, 3)), (5, 128, (1, 2, 3)), (5, 128, (1, 2, 3, 4, 5))):
    P_ = sel.transition_matrix(S_, np.random.default_rng(0))
    mm = sel.build_selective_induction(P_, lg, T_)
    H = len(lg)
    i, j = np.arange(T_)[:, None], np.arange(T_)[None, :]
    nnz_B = int(np.count_nonzero((i - j) % H == H - 1))
    formula = [S_ ** 2 + T_ ** 2, H * T_ ** 2, T_ ** 2 + H * nnz_B, S_ ** 2]
    print(f'S={S_} T={T_:3} lags {str(set(lg)):16} widths {mm.widths}\n'
          f'  non-zero {list(mm.count_nonzero().values())}  formula {formula}')
print('book port (S=5, T=40, 3 heads), parameters')
counts = {'all': taotp.count_params(book), 'non-zero': taotp.count_non0_params(book)}
print(f'{"":10}' + ''.join(f'{key:>10}' for key in counts['all']))
for label, count in counts.items():
    print(f'  {label:8}' + ''.join(f'{n:>10,}' for n in count.values()))

# %% [markdown]
# ## Limits
#
# Claim 1 is checked by the paper only numerically. With `FULL = True` this cell repeats its
# App. E experiment at full size (12 lags from 1..30, $S = 10$, 1000 sequences per
# matrix and lag); the default is a small version. The statistic is the gap between the
# true lag's mean $\tilde p$ and the best other lag's, read at position $2k_\max + 5$ (past
# the warm-up); the paper's histogram spans roughly 0.020 to 0.035, all positive. The
# default run (2 matrices, 300 sequences per lag) has a standard error near 0.01 per gap,
# so only its sign and rough size are meaningful.

# %%
FULL = False
lags12 = (1, 2, 7, 9, 10, 11, 13, 15, 16, 22, 26, 28)
n_mat, n_seq = (10, 1000) if FULL else (2, 300)
gaps12 = []
for s in range(n_mat):
    Pm = sel.transition_matrix(10, np.random.default_rng(100 + s))
    for k in lags12:
        Xm, _ = sel.sample_batch(Pm, lags12, 61, n_seq, rng=np.random.default_rng(1000 * s + k),
                                 lag=k)
        mean = sel.normalised_transitions(Pm, lags12, Xm)[:, 60].mean(0)
        c = lags12.index(k)
        gaps12.append(mean[c] - np.delete(mean, c).max())
print(f'{len(gaps12)} (matrix, lag) pairs: gap min {min(gaps12):.3f}, median '
      f'{np.median(gaps12):.3f}, max {max(gaps12):.3f}; all positive: {min(gaps12) > 0}')

# %% [markdown]
# Other limits: the construction's widths grow like $T \cdot K$, far beyond what trained
# models use (the paper's standard models reach the same loss with embedding width 64 at
# $T = 128$); exactness starts only at query $2k_\max + K - 1$ (main third layer) or
# $k_\max + 1 + \max_h \min R_h$ (positional one); and the port through PreLN is exact only
# up to the $O(1/M^2)$ drift of the standard deviation.

# %% [markdown]
# ## Play with it
#
# **The data.** Pick a lag set, which lag is true, the length and the seed; the figure shows
# the token strip and the three kinds of evidence. This is the explorer `data`; in the HTML
# book its kernel-free player is the one near the top of the chapter, under "The evidence a
# transformer can average".

# %% tags=["nbval-ignore-output", "remove-output"]
data.widget()

# %% [markdown]
# **The hardening constants.** $\lambda$ turns the soft masks into hard ones and $\beta$
# decides how hard layer 3 selects. A masked key's weight, relative to an allowed one, is at
# most $T e^{-\text{margin}}$ with margins $2\lambda - \log T - \log(p_\max/p_\min)$ (layer 1),
# $2\lambda - \log T$ (layer 2) and $2\lambda - \beta H - \log T$ (layer 3, whose evidence
# term can lift a masked key by up to $\beta H$). The builder refuses constants with a
# non-positive margin (`strict=True`); the explorer builds them anyway (`strict=False`) so
# you can watch the network leak. Its title turns red when a margin is not positive. The
# bound is a guarantee, not a threshold: in our tests (lags {1,2,3}, $T = 40$, $\beta = 20$)
# the network already matches the formula to $10^{-10}$ at $\lambda = 15$, below the bound's
# 31.8. The paper's $\lambda = 500$, $\beta = 100$ leaves a margin of about 700 for 3 heads.

# %%
hardening = widgets.Explorer(
    lambda fig, **v: sel.draw_hardening(fig, P, **v), size=(6.4, 2.9),
    lam=widgets.slider(1, 1000, 0.1, value=500, log=True, include=(64,)),
    beta=widgets.slider(0.1, 1000, 0.1, value=20, log=True),
    lags=widgets.choice(sel.PRESETS, '{1,2,3}'),
    T=widgets.slider(16, 64, 8, value=40),
    seed=widgets.slider(0, 20, 1, value=0))

# %% tags=["nbval-ignore-output", "remove-output"]
hardening.widget()

# %% [markdown]
# Kernel-free twins: $\lambda = 2$ and $64$ at $\beta = 20$ (at 2 layer 1 leaks off its band
# and the network's KL leaves the formula's; with a kernel, try 8: the layer-3 margin is still
# negative, yet the curves already coincide), then $\beta = 1$ and $100$ at $\lambda = 500$
# (soft selection keeps a KL floor; hard selection follows ML).

# %% tags=["nbval-ignore-output"]
hardening.player('lam', values=[2, 64], interval=900)

# %% tags=["nbval-ignore-output"]
hardening.player('beta', values=[1, 100], interval=900)

# %% [markdown]
# ## Summary
#
# - Interleaved Markov chains hide a lag; the optimal predictor is the Bayesian average
#   over lags, which tends to maximum likelihood.
# - Three attention-only layers implement an averaging alternative: layer 1 stores each
#   transition's normalised probability $\tilde p_{i,k}$ (slot $i - k$), layer 2's $K$ heads
#   average them over disjoint residue classes, layer 3 scores the $K$ candidate parents by
#   $\beta\sum_h\operatorname{mean}\tilde p$ and copies the winner.
# - From query `exact_from` on ($2k_\max + K - 1$ for contiguous lags) the network's forward
#   pass equals its exact finite-$T$ formula (to about $10^{-13}$; the tests run every design
#   the chapter draws); before that its layer-2 heads read fallback rows and it does
#   worse (KL 0.46 against 0.17 at $t = 3$). It equals Proposition 1 with
#   $\beta = K\beta_c$ exactly when $(i - k_\max)$ is a multiple of $K$.
# - At $T = 128$ (lags {1,2,3}) its KL is $3 \cdot 10^{-8}$ at $t = 64$ and about $10^{-16}$
#   at 127, next to ML's 0; one head uses 42 of 125 transitions and is still near $10^{-2}$
#   at $t = 64$ ($10^{-4}$ at 127).
# - BMA is the best predictor in expectation at every length; on a sample ML can come out
#   ahead late (here at $t = 64$), because the rare prefixes on which ML picks a wrong lag
#   are missing from it. Averaging over the lag's posterior instead shows BMA ahead.
# - Non-contiguous sets: a period/residue-class rule (validity test in `plan_heads`), 3 heads
#   for {3, 5, 7}, 2 for {1, 3}, 4 for {1, 3, 4}; the two-lag single head needs the shift
#   $2k_\min - 1$, not the paper's 1.
# - The same weights run on the book's PreLN transformer (anchors undo the layer norms),
#   matching to $10^{-7}$.
#
# ## Puzzles
#
# In the [exercises notebook](https://github.com/taotp/taotp-book/blob/main/exercises/10_selective_induction.ipynb):
#
# - **10.1** Lag posterior for every prefix.
# - **10.2** Layer 1's matrix.
# - **10.3** Layer 2's head masks for any contiguous set of lags (first {1, 2, 3, 4}).
# - **10.4** The selection block of layer 3.
# - **10.5** Fewer heads for {3, 5, 7}.
# - **10.6** One head for two lags, {2, 5}.
# - **10.7** How large must $\lambda$ be?
# - **10.8** Counting transitions.
#
# ## References
#
# - [SIH] F. D'Angelo, F. Croce, N. Flammarion. *Selective Induction Heads: How
#   Transformers Select Causal Structures in Context*. ICLR 2025.
#   [arXiv:2509.08184](https://arxiv.org/abs/2509.08184). Proposition 1, Claim 1, Fig. 3,
#   Apps. A, E-H.
# - D. Friedman, A. Wettig, D. Chen. *Learning Transformer Programs*. NeurIPS 2023 (the
#   disentangled transformer).
# - E. Nichani, A. Damian, J. D. Lee. *How Transformers Learn Causal Structure with
#   Gradient Descent*. ICML 2024.
# - C. Olsson et al. *In-context Learning and Induction Heads*. 2022.
# - Errata we corrected, each checked by a cell above: the lag prior of the objective, the
#   layer-1 slot index and picture, the App. F/G selection block (off by one), the App. H
#   sign rule (shift $2k_\min - 1$), the exactness range of Proposition 1.
