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
# # Solutions 9 · Multi-Operand Addition with Position Coupling
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/solutions/09_position_coupling.ipynb)
#
# Reference solutions for [exercises/09_position_coupling.ipynb](https://github.com/taotp/taotp-book/blob/main/exercises/09_position_coupling.ipynb).
# Each one runs its checker and asserts that it passes.

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
import numpy as np
import taotp
from taotp.exercises import check, keep_progress
keep_progress(False)   # running the reference solutions does not solve your puzzles
from taotp import coupling as C


# %% [markdown]
# ## Puzzle 9.1 · Parity scratchpad and coupled IDs
#
# Query bit $k$ and scratchpad bit $k$ both get $s + k$; the `=` gets $s$, so the token that
# writes bit $k$ (bit $k - 1$ of the scratchpad, or `=`) has ID $s + k - 1$ and looks for
# ID one larger.

# %%
def parity_sequence(bits, s):
    running, acc = [], 0
    for b in bits:
        acc ^= int(b)
        running.append(str(acc))
    n = len(bits)
    ids = [s + k for k in range(1, n + 1)]
    return list(bits) + ['='] + running, ids + [s] + ids


result = check('9.1', parity_sequence)
assert result


# %% [markdown]
# ## Puzzle 9.2 · The addition format

# %%
def scratchpad_text(operands):
    longest = max(len(str(a)) for a in operands)
    ell = len(str((10 ** longest - 1) * len(operands)))
    sums, run = [], 0
    for a in [0] + operands:
        run += a
        sums.append(str(run).zfill(ell)[::-1])
    return '+'.join(str(a).zfill(ell) for a in operands) + '=' + '>'.join(sums)


result = check('9.2', scratchpad_text)
assert result


# %% [markdown]
# ## Puzzle 9.3 · Bi-level position IDs
#
# Walk the string once: in the query a digit's level-1 ID counts down from $s_1 + \ell$; in
# the response it counts up from $s_1 + 1$; separators get $s_1$. Level 2 counts numbers,
# with the response restarting at $s_2$ for $b_0$.

# %%
def bilevel_ids(operands, s1, s2):
    text = scratchpad_text(operands)
    ell = text.index('+') if '+' in text else text.index('=')
    p1, p2, number, j, query = [], [], 0, 0, True
    for c in text:
        if c.isdigit():
            p1.append(s1 + ell - j if query else s1 + 1 + j)
            p2.append(s2 + number)
            j += 1
            continue
        if c == '=':
            query, number = False, 0
        elif c == '>':
            number += 1
        p1.append(s1)
        p2.append(s2 + number)
        number += c == '+'
        j = 0
    return p1, p2


result = check('9.3', bilevel_ids)
assert result


# %% [markdown]
# ## Puzzle 9.4 · Multiplication format and tri-level IDs

# %%
def multiplication_sequence(a, b):
    A, B = str(a), str(b)
    M, N = len(A), len(B)
    rows = [(c, 2 + (M - 1 - k), 0, 0) for k, c in enumerate(A)] + [('*', 0, 0, 0)]
    rows += [(c, 0, 1 + (N - 1 - k), 0) for k, c in enumerate(B)]
    for i, bi in enumerate(int(c) for c in reversed(B)):
        rows.append(('=' if i == 0 else '+', 1, 1 + i, 1 + i))
        rows += [(c, 2 + k, 1 + i, 2 + i + k) for k, c in
                 enumerate(str(a * bi).zfill(M + 1)[::-1])]
    run = 0
    for j, bj in enumerate(int(c) for c in reversed(B)):
        run += a * bj * 10 ** j
        rows.append(('=' if j == 0 else '>', 0, 1 + j, 1))
        rows += [(c, 0, 1 + j, 2 + k) for k, c in enumerate(str(run).zfill(M + N)[::-1])]
    text, l1, l2, l3 = zip(*rows)
    return ''.join(text), list(l1), list(l2), list(l3)


print(multiplication_sequence(37, 925)[0])
result = check('9.4', multiplication_sequence)
assert result


# %% [markdown]
# ## Puzzle 9.5 · Which keys?
#
# The token at `index` predicts the next digit; it needs the tokens whose level-1 ID is one
# larger and whose level-2 ID is one smaller.

# %%
def keys(operands, index):
    p1, p2 = bilevel_ids(operands, 1, 1)
    return [i for i in range(index) if p1[i] == p1[index] + 1 and p2[i] == p2[index] - 1]


result = check('9.5', keys)
assert result


# %% [markdown]
# ## Puzzle 9.6 · Hypercube codes

# %%
def cube(D, k):
    return np.array([-1.0 if (k - 1) >> (D - 1 - i) & 1 else 1.0 for i in range(D)])


result = check('9.6', cube)
assert result


# %% [markdown]
# ## Puzzle 9.7 · Head 1
#
# Layout (0-based): 19 token dimensions, then `POS1`, `POS1_NEXT`, `POS2`, `POS2_NEXT`.
# The query reads `POS1_NEXT` and `POS2`, the key `POS1` and `POS2_NEXT`; a last column
# pairs `ONES` (dimension 2) on the query side with `IS_BOS` (dimension 1) on the key side.
# A key whose codes all match scores $\lambda D$, BOS too; the book's attention divides the
# scores by $\sqrt{k}$ ($k = D + 1$ columns), so `Wq` carries an extra $\sqrt{k}$.
# `head(query_blocks, key_blocks)` writes any of the four heads; head 1 is one of them.

# %%
def head(P1, P2, lam, query_blocks, key_blocks):
    """(Wq, Wk): sqrt(lam) on each compared code coordinate, a BOS sink scoring lam * D too."""
    start = {'POS1': 19, 'POS1_NEXT': 19 + P1, 'POS2': 19 + 2 * P1, 'POS2_NEXT': 19 + 2 * P1 + P2}
    width = {'POS1': P1, 'POS1_NEXT': P1, 'POS2': P2, 'POS2_NEXT': P2}
    d, k = 19 + 2 * P1 + 2 * P2, P1 + P2 + 1
    Wq, Wk = np.zeros((d, k)), np.zeros((d, k))
    D = 0                                        # compared coordinates so far
    for q, key in zip(query_blocks, key_blocks):
        for i in range(width[q]):
            Wq[start[q] + i, D], Wk[start[key] + i, D] = (lam * k) ** 0.5, lam ** 0.5
            D += 1
    Wq[2, k - 1], Wk[1, k - 1] = (lam * D * k) ** 0.5, (lam * D) ** 0.5
    return Wq, Wk


def head1(P1, P2, lam):
    return head(P1, P2, lam, ('POS1_NEXT', 'POS2'), ('POS1', 'POS2_NEXT'))


result = check('9.7', head1)
assert result


# %% [markdown]
# ## Puzzle 9.8 · The carry identity

# %%
def carry_out(pair_sum, written_digit):
    return 1 if pair_sum - written_digit >= 9 else 0


result = check('9.8', carry_out)
assert result

# %% [markdown]
# ## Puzzle 9.9 · Flags
#
# `ARROW` needs only head 3; `EOS` needs both: the last digit (head 3 sees only BOS) *and*
# the last running sum (head 4 sees no partner, `PRE_EOS` = 1/2). Two ReLUs do it:
# $u_0 = \sigma(\text{PRE\_ARROW} - 1/2)$, $u_1 = \sigma(\text{PRE\_EOS} - 1/3)$, then
# $\text{ARROW} = 2u_0$ and $\text{EOS} = 2u_0 + 6u_1 - 1$. The $-1$ is the output bias
# `b2`; the chapter's bias-free model spends a third unit on it.

# %%
M1 = np.eye(2)                                # unit 0 reads PRE_ARROW, unit 1 reads PRE_EOS
b1 = np.array([-1 / 2, -1 / 3])
M2 = np.array([[2.0, 2.0],                    # columns: ARROW, EOS
               [0.0, 6.0]])
b2 = np.array([0.0, -1.0])
flag_mlp = (M1, b1, M2, b2)
result = check('9.9', flag_mlp)
assert result


# %% [markdown]
# ## Puzzle 9.10 · The digit MLP
#
# Every unit reads the same number $h = \text{PRE\_SUM} + (\text{PRE\_CARRY} -
# \text{NUM})/10$. Without error $h - (S + c)$ is $0$ or $-0.1$ for the carry $c$; the
# chapter adds 0.21, which keeps only 0.11 of slack below the plateau. Adding 0.30 instead
# centres the two values on the plateau: $h + 0.30$ lands in $[S + c + 0.05, S + c + 0.45]$
# with `PRE_SUM` off by 0.15 either way. Digit $k$ is a double trapezoid, 1 on
# $[k, k + 1/2]$ and on $[k + 10, k + 10\tfrac12]$, 0 outside $(k - 1/2, k + 1)$ and
# $(k + 9\tfrac12, k + 11)$: eight ReLUs with kinks at $k + c_i$ and slopes $\pm 2$, so
# $10 \cdot 8 = 80$ units.

# %%
kinks = (-0.5, 0.0, 0.5, 1.0, 9.5, 10.0, 10.5, 11.0)     # up, flat, down; then again
slopes = (2, -2, -2, 2, 2, -2, -2, 2)
M1 = np.tile([[1.0], [0.1], [-0.1]], 80)                 # every unit reads h
b1 = np.array([0.30 - (k + c) for k in range(10) for c in kinks])
M2 = np.zeros((80, 10))
for k in range(10):
    M2[8 * k:8 * k + 8, k] = slopes
digit_weights = (M1, b1, M2, np.zeros(10))
result = check('9.10', digit_weights)
assert result

# %% [markdown]
# ## Puzzle 9.11 · Assemble the adder
#
# One layer holds the pieces above: the four heads of the chapter's table (all written by
# `head` of 9.7), the 80 digit units of 9.10 and the two flag units of 9.9 (82 ReLUs; the
# flags' $-1$ goes to `b2`), with the code widths of 9.12 and position tables whose row $p$
# holds the codes of $p$ and $p + 1$ (cube of 9.6). The residual stream is the chapter's:
# 19 named dimensions, then `POS1`, `POS1_NEXT`, `POS2`, `POS2_NEXT`.

# %%
import math

NAMES = (['NUM', 'IS_BOS', 'ONES', 'PRE_SUM', 'PRE_CARRY', 'PRE_ARROW', 'PRE_EOS']
         + [f'SUM{k}' for k in range(10)] + ['ARROW', 'EOS'])
AT = {name: i for i, name in enumerate(NAMES)}
HEADS = [(('POS1_NEXT', 'POS2'), ('POS1', 'POS2_NEXT'), 'NUM', 3.0, 'PRE_SUM'),    # digit sum
         (('POS1', 'POS2'), ('POS1', 'POS2_NEXT'), 'NUM', 3.0, 'PRE_CARRY'),       # carry
         (('POS1_NEXT',), ('POS1',), 'IS_BOS', 1.0, 'PRE_ARROW'),                  # separator
         (('POS1', 'POS2'), ('POS1', 'POS2'), 'IS_BOS', 1.0, 'PRE_EOS')]           # EOS


def build(max_digits, max_operands, lam=20.0):
    ell = max_digits + len(str(max_operands))
    P1, P2 = math.ceil(math.log2(ell + 2)), max(1, math.ceil(math.log2(max_operands + 1)))
    d, k = 19 + 2 * P1 + 2 * P2, P1 + P2 + 1
    tok = np.zeros((len(C.VOCAB), d))
    tok[:, AT['ONES']], tok[:10, AT['NUM']] = 1.0, np.arange(10)
    tok[C.TOKEN_ID['$'], AT['IS_BOS']] = 1.0
    tables = []
    for start, D, rows in ((19, P1, ell + 2), (19 + 2 * P1, P2, max_operands + 2)):
        table = np.zeros((rows, d))                        # row 0 (BOS) stays zero
        for p in range(1, rows):
            table[p, start:start + 2 * D] = np.concatenate(
                [cube(D, (p - 1) % 2 ** D + 1), cube(D, p % 2 ** D + 1)])
        tables.append(table)
    Q, K, V, P = (np.zeros((4, d, width)) for width in (k, k, 1, 1))
    for h, (query_blocks, key_blocks, reads, value, writes) in enumerate(HEADS):
        Q[h], K[h] = head(P1, P2, lam, query_blocks, key_blocks)
        V[h, AT[reads], 0], P[h, AT[writes], 0] = value, 1.0
    M1, b1, M2, b2 = np.zeros((d, 82)), np.zeros(82), np.zeros((82, d)), np.zeros(d)
    digits, flags = [AT['PRE_SUM'], AT['PRE_CARRY'], AT['NUM']], [AT['PRE_ARROW'], AT['PRE_EOS']]
    M1[digits, :80], b1[:80], M2[:80, AT['SUM0']:AT['SUM0'] + 10] = digit_weights[:3]
    M1[flags, 80:], b1[80:] = flag_mlp[0], flag_mlp[1]
    M2[80:, [AT['ARROW'], AT['EOS']]], b2[[AT['ARROW'], AT['EOS']]] = flag_mlp[2], flag_mlp[3]
    out = np.zeros((len(C.VOCAB), d))
    out[np.arange(10), AT['SUM0'] + np.arange(10)] = 1.0
    out[C.TOKEN_ID['>'], AT['ARROW']], out[C.TOKEN_ID['$'], AT['EOS']] = 10.0, 100.0
    norm = {'gamma': 1.0, 'beta': 0.0}                     # no layer norm: run with norm='none'
    layer = dict(Q=Q, K=K, V=V, P=P, M1=M1, b1=b1, M2=M2, b2=b2, ln1=norm, ln2=norm)
    return {'tok_emb': tok, 'pos_emb': tables, 'out_emb': out, 'layers': [layer], 'lnf': norm}


print(str(taotp.config(build(8, 8))).replace(" 'vocab_size'", "\n 'vocab_size'"))
result = check('9.11', build)
assert result

# %% [markdown]
# ## Puzzle 9.12 · Size calculator

# %%
import math


def size(n, m):
    ell = n + len(str(m))
    P1, P2 = math.ceil(math.log2(ell + 2)), max(1, math.ceil(math.log2(m + 1)))
    return ell, P1, P2, 19 + 2 * P1 + 2 * P2


result = check('9.12', size)
assert result

# %% [markdown]
# ## Puzzle 9.13 · Find the bug
#
# With $\ell = 3$ the paper's width is $P_1 = 2$: the condition $\ell + 1 \le 2^{P_1}$ holds
# with equality, and the last digit's ID $1 + 3 = 4 = 2^{P_1}$ is the last code, so its *next*
# code wraps around to $v_1$, the separators' code: the worked example itself fails. (Any
# problem padded to an $\ell$ with $\ell + 1$ a power of two does it, e.g. two to nine
# operands of six digits: $\ell = 7$.)

# %%
result = check('9.13', [57, 48, 96])
assert result

# %% [markdown]
# ## Puzzle 9.14 · The smallest exact lambda

# %%
ops = [57, 48, 96]
for lam in np.arange(0.25, 6, 0.25):
    want, got = C.build_multi_operand_adder(2, 3, lam=lam).teacher_forced(ops)
    if want == got:
        break
print('smallest exact lambda', lam, 'bound', round(C.lambda_bound(28), 2))
result = check('9.14', (ops, float(lam)))
assert result


# %% [markdown]
# ## Puzzle 9.15 · Base b
#
# The carry term shifts $g$ by $0$ or $-1/b$, so $g - (S + c)$ takes two values $1/b$
# apart. In base 10 they fit easily on a plateau of width 1/2; in base 2 they are 1/2 apart
# and need a wider plateau, paid for with steeper ramps.

# %%
def shape(b):
    w = max(0.5, 1 / b + 0.25)
    r = 1 - w if w > 0.5 else 0.5
    return w, r, 1 / b + (w - 1 / b) / 2


import pprint
pprint.pp({b: tuple(round(v, 3) for v in shape(b)) for b in (2, 3, 7, 16)}, width=86)
result = check('9.15', shape)
assert result

# %% [markdown]
# ## Puzzle 9.16 · Design your own: parity
#
# One layer and one head suffice. The token with ID $p$ (the `=` or scratchpad bit
# $y_{k-1}$) queries with its `POS_NEXT` code and finds the single query bit with ID
# $p + 1$, plus BOS as a sink; with value $2\cdot$bit the head writes exactly $x_k$, and a
# second value column (IS_BOS) writes 1/2, or 1 at the last bit, where nothing has ID
# $p + 1$. The MLP computes $x_k \oplus y_{k-1} = \sigma(x + y) - 2\sigma(x + y - 1)$ and
# an end flag $4\sigma(\text{END} - 3/4)$. The PreLN tricks are those of the adder's port
# (paired features, $\pm\varepsilon$ head outputs): each feature is a pair $(v, -v)$ and
# every token row has the same norm, so the first layer norm is the constant scale
# `sigma0`, folded into the weights.

# %%
import math
from taotp.coupling import PARITY_VOCAB, position_codes


def parity_program(max_bits=100, lam=20.0, eps=1e-3):
    P = math.ceil(math.log2(max_bits + 3))     # IDs up to 1 + max_bits; the next code must not wrap
    L = taotp.Layout([('BIT', 2), ('IS_BOS', 2), ('ONES', 2), ('FILL', 2), ('POS', 2 * P),
                      ('POS_NEXT', 2 * P), ('X', 2), ('END', 2), ('OUT', 2), ('EOS', 2)])
    d = L.d_model
    plus = lambda name: L[name].start                                    # noqa: E731
    minus = lambda name: L[name].start + (L[name].stop - L[name].start) // 2   # noqa: E731
    bos_id = PARITY_VOCAB.index('$')
    # embeddings: every row has squared norm 6 + 4P (BOS fills in for its missing codes)
    tok = np.zeros((len(PARITY_VOCAB), d))
    for t, c in enumerate(PARITY_VOCAB):
        bit, bos = (1.0 if c == '1' else -1.0), (1.0 if c == '$' else -1.0)
        tok[t, L['BIT']], tok[t, L['IS_BOS']], tok[t, L['ONES']] = [bit, -bit], [bos, -bos], [1, -1]
    tok[bos_id, L['FILL']] = [(2 * P) ** 0.5, -(2 * P) ** 0.5]
    pos = np.zeros((2 ** P, d))
    for p in range(1, 2 ** P):
        cur, nxt = np.split(position_codes(P, p), 2)
        pos[p, L['POS']], pos[p, L['POS_NEXT']] = np.r_[cur, -cur], np.r_[nxt, -nxt]
    sigma0 = ((6 + 4 * P) / d) ** 0.5          # LN(x0) = x0 / sigma0
    # one head: the query's next code meets the key's code; BOS is the sink
    Q, K = np.zeros((1, d, P + 1)), np.zeros((1, d, P + 1))
    V, Pm = np.zeros((1, d, 2)), np.zeros((1, d, 2))
    qs = sigma0 * (P + 1) ** 0.5               # the engine divides scores by sqrt(d_head)
    for i in range(P):
        Q[0, plus('POS_NEXT') + i, i], K[0, plus('POS') + i, i] = lam ** 0.5 * qs, lam ** 0.5 * sigma0
    Q[0, plus('ONES'), P] = (lam * P) ** 0.5 * qs
    K[0, plus('IS_BOS'), P] = K[0, plus('ONES'), P] = (lam * P) ** 0.5 * sigma0 / 2
    V[0, plus('BIT'), 0] = V[0, plus('ONES'), 0] = sigma0                 # 2 * bit
    V[0, plus('IS_BOS'), 1] = V[0, plus('ONES'), 1] = sigma0 / 2          # IS_BOS
    Pm[0, plus('X'), 0], Pm[0, minus('X'), 0] = eps, -eps
    Pm[0, plus('END'), 1], Pm[0, minus('END'), 1] = eps, -eps
    # MLP: x XOR y = relu(x + y) - 2 relu(x + y - 1); end flag relu(END - 3/4)
    gain = sigma0 / (2 * eps)
    M1, b1 = np.zeros((d, 3)), np.array([0.5, -0.5, -0.75])
    for u in (0, 1):
        M1[plus('X'), u], M1[minus('X'), u], M1[plus('BIT'), u] = gain, -gain, sigma0 / 2
    M1[plus('END'), 2], M1[minus('END'), 2] = gain, -gain
    M2, b2 = np.zeros((3, d)), np.zeros(d)
    M2[0, plus('OUT')], M2[0, minus('OUT')] = 1.0, -1.0
    M2[1, plus('OUT')], M2[1, minus('OUT')] = -2.0, 2.0
    M2[2, plus('EOS')], M2[2, minus('EOS')] = 4.0, -4.0
    b2[plus('OUT')], b2[minus('OUT')] = -0.5, 0.5                          # OUT = (z - 1/2, 1/2 - z)
    out = np.zeros((len(PARITY_VOCAB), d))
    out[PARITY_VOCAB.index('1'), plus('OUT')] = out[PARITY_VOCAB.index('0'), minus('OUT')] = 1.0
    out[bos_id, plus('EOS')] = 10.0
    layer = {'Q': Q, 'K': K, 'V': V, 'P': Pm, 'M1': M1, 'b1': b1, 'M2': M2, 'b2': b2,
             'ln1': {'gamma': 1.0, 'beta': 0.0}, 'ln2': {'gamma': 1.0, 'beta': 0.0}}
    return {'tok_emb': tok, 'pos_emb': pos, 'out_emb': out, 'layers': [layer],
            'lnf': {'gamma': 1.0, 'beta': 0.0}}


params = parity_program(max_bits=100)
print(taotp.config(params)['d_model'], 'dimensions,', taotp.count_non0_params(params)['n_params'],
      'non-zero parameters')
result = check('9.16', params)
assert result


# %% [markdown]
# ## Puzzle 9.17 · Without the scratchpad

# %%
def needed(operands, j):
    tokens, pos = C.baseline_sequence(operands)
    eq = tokens.index('=')
    return [i for i in range(eq) if tokens[i].isdigit() and pos[i] == 2 + j]


result = check('9.17', needed)
assert result


# %% [markdown]
# ## Puzzle 9.18 · Count the parameters
#
# Everything follows from the two code widths $P_1, P_2$ (Puzzle 9.12): $d = 19 + 2P_1 + 2P_2$,
# $d_\text{head} = P_1 + P_2 + 1$, position tables of $2^{P_1}$ and $2^{P_2} + 1$ rows, 14
# tokens with an untied readout, four heads whose values and outputs are single columns, and
# the 83-unit MLP. So the total is
# $28d + d\,(2^{P_1} + 2^{P_2} + 1) + 8 d\,d_\text{head} + 8d + 166d + 83 + d$. The non-zero
# entries: every position code of ID $p \geq 1$ is $\pm 1$ in its $2P$ coordinates (current and
# next code), the query and key matrices each hold $4P_1 + 3P_2 + 4$ entries (the compared
# code coordinates of the four heads plus the sink), and the token tables (24 + 12), values
# and outputs (4 + 4) and the MLP (325 + 84) do not depend on the sizes.

# %%
def counts(n, m):
    _, P1, P2, _ = size(n, m)
    d, d_head = 19 + 2 * P1 + 2 * P2, P1 + P2 + 1
    total = d * (28 + 2 ** P1 + 2 ** P2 + 1 + 8 * d_head + 8 + 166 + 1) + 83
    non_zero = (24 + 12 + 4 + 4 + 325 + 84 + 2 * (4 * P1 + 3 * P2 + 4)
                + 2 * P1 * (2 ** P1 - 1) + 2 * P2 * 2 ** P2)
    return total, non_zero


built = C.build_multi_operand_adder(10, 10).params          # the comparison, outside the answer
print(counts(10, 10), (taotp.count_params(built)['n_params'],
                       taotp.count_non0_params(built)['n_params']))
result = check('9.18', counts)
assert result

# %% [markdown]
# ## Puzzle 9.19 · Port to PreLN
#
# The chapter's recipe, applied to the program of 9.11: every feature becomes a pair
# $(v, -v)$ and a filler pair gives every token the same norm (BOS, which has no codes, the
# most), so the first layer norm is the constant scale $\sigma_0$, folded into `Q`, `K`, `V`;
# the heads write $\pm\varepsilon$ pairs that barely move the norm and the MLP reads them
# back with gain $1/\varepsilon$; the MLP writes pairs, so the last layer norm only rescales
# the logits.

# %%
def pair(a, axis):
    """Each feature v as (v, -v), then a zero filler pair, along ``axis``."""
    return np.concatenate([a, -a, 0 * np.take(a, [0, 0], axis=axis)], axis=axis)


def first(a, axis):
    """``a`` on the positive copies only."""
    return np.concatenate([a, 0 * a, 0 * np.take(a, [0, 0], axis=axis)], axis=axis)


def preln(free, eps=1e-3):
    tok, tables, layer = free['tok_emb'], free['pos_emb'], free['layers'][0]
    codes = sum(table[1] @ table[1] for table in tables)    # every row p >= 1, each table
    norms = (tok ** 2).sum(1) + codes * (np.arange(len(tok)) != C.TOKEN_ID['$'])
    tok = pair(tok, 1)
    tok[:, -2], tok[:, -1] = (norms.max() - norms) ** 0.5, -(norms.max() - norms) ** 0.5
    sigma0 = (2 * norms.max() / tok.shape[1]) ** 0.5        # LN(x0) = x0 / sigma0
    gain = np.where(np.any(layer['P'] != 0, axis=(0, 2)), 1 / eps, 1.0)   # heads' outputs
    new = dict(layer, Q=first(layer['Q'] * sigma0, 1), K=first(layer['K'] * sigma0, 1),
               V=first(layer['V'] * sigma0, 1), P=eps * pair(layer['P'], 1),
               M1=first(layer['M1'] * sigma0 * gain[:, None], 0), M2=pair(layer['M2'], 1),
               b2=pair(layer['b2'], 0))
    return dict(free, tok_emb=tok, pos_emb=[pair(t, 1) for t in tables],
                out_emb=first(free['out_emb'], 1), layers=[new])


def port(max_digits, max_operands):
    return preln(build(max_digits, max_operands))


print(taotp.config(port(4, 4))['d_model'], 'dimensions')
result = check('9.19', port)
assert result
