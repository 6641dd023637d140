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

# %%
def head1(P1, P2, lam):
    d = 19 + 2 * P1 + 2 * P2
    D = P1 + P2
    Wq, Wk = np.zeros((d, D + 1)), np.zeros((d, D + 1))
    pos1, pos1n, pos2, pos2n = 19, 19 + P1, 19 + 2 * P1, 19 + 2 * P1 + P2
    for i in range(P1):
        Wq[pos1n + i, i] = Wk[pos1 + i, i] = lam ** 0.5
    for i in range(P2):
        Wq[pos2 + i, P1 + i] = Wk[pos2n + i, P1 + i] = lam ** 0.5
    Wq[2, D] = Wk[1, D] = (lam * D) ** 0.5
    return Wq, Wk


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
# $\text{ARROW} = 2u_0$ and $\text{EOS} = 2u_0 + 6u_1 - 1$ (the $-1$ is the output bias).

# %%
M1 = np.eye(2)                                # unit 0 reads PRE_ARROW, unit 1 reads PRE_EOS
b1 = np.array([-1 / 2, -1 / 3])
M2 = np.array([[2.0, 2.0],                    # columns: ARROW, EOS
               [0.0, 6.0]])
b2 = np.array([0.0, -1.0])
result = check('9.9', (M1, b1, M2, b2))
assert result


# %% [markdown]
# ## Puzzle 9.10 · The digit MLP
#
# Every unit reads the same number $g - 0.21 = \text{PRE\_SUM} + (\text{PRE\_CARRY} -
# \text{NUM})/10$, which lands in $[S + c + 0.02, S + c + 0.30]$ for the carry $c$ even with
# `PRE_SUM` off by 0.09. Digit $k$ is a double trapezoid, 1 on $[k, k + 1/2]$ and on
# $[k + 10, k + 10\tfrac12]$, 0 outside $(k - 1/2, k + 1)$ and $(k + 9\tfrac12, k + 11)$: eight
# ReLUs with kinks at $k + c_i$ and slopes $\pm 2$, so $10 \cdot 8 = 80$ units.

# %%
kinks = (-0.5, 0.0, 0.5, 1.0, 9.5, 10.0, 10.5, 11.0)     # up, flat, down; then again
slopes = (2, -2, -2, 2, 2, -2, -2, 2)
M1 = np.tile([[1.0], [0.1], [-0.1]], 80)                 # every unit reads g - 0.21
b1 = np.array([0.21 - (k + c) for k in range(10) for c in kinks])
M2 = np.zeros((80, 10))
for k in range(10):
    M2[8 * k:8 * k + 8, k] = slopes
result = check('9.10', (M1, b1, M2, np.zeros(10)))
assert result

# %% [markdown]
# ## Puzzle 9.11 · Assemble the adder
#
# The chapter's builder puts the pieces above into one layer: head 1 of 9.7, the carry head
# and the two flag heads, the 80 digit units of 9.10 and the 3 flag units of 9.9 (the third
# makes the $-1$, since the adder keeps `b2` for nothing else), with the code widths of 9.12.
# `C.build_adder_params` returns its params dict; the checker confirms the budget and runs it
# without layer norms.

# %%
print(taotp.config(C.build_adder_params(8, 8)))
result = check('9.11', C.build_adder_params)
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


print({b: tuple(round(v, 3) for v in shape(b)) for b in (2, 3, 7, 16)})
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
    P1, P2 = C.sizes(n, m)['P1'], C.sizes(n, m)['P2']
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
# The chapter's recipe: paired features so the first layer norm is a constant scale,
# $\pm\varepsilon$ head outputs read back with gain $1/(2\varepsilon)$, paired MLP outputs,
# an untied readout.

# %%
port = C.build_multi_operand_adder(4, 4, norm=True)
result = check('9.19', port.params)
assert result
