"""An independent, loop-by-loop forward pass written from the book's equations.

It shares no code with the rest of taotp: plain Python loops over positions,
heads and keys (NumPy only converts arrays to lists), so a bug in the vectorised
einsums of ``taotp.model`` cannot hide in both places.  It covers every
variant the engine offers: PreLN (the book) or PostLN, layer norm, RMSNorm or
no normalisation, one position table or several with explicit position ids.
Slow; for checking only.
"""
import math

import numpy as np


def _normalise(v, ln, kind):
    """One row through a norm with its gamma and beta (scalars or vectors)."""
    d = len(v)
    gamma = np.broadcast_to(ln.get('gamma', 1.0), d).tolist()
    beta = np.broadcast_to(ln.get('beta', 0.0), d).tolist()
    if kind == 'none':
        return [b + g * a for a, g, b in zip(v, gamma, beta)]
    if kind == 'rms':
        centre = 0.0
        spread = math.sqrt(sum(a * a for a in v) / d)
    else:
        centre = sum(v) / d
        spread = math.sqrt(sum((a - centre) ** 2 for a in v) / d)
    return [b + g * (a - centre) / (spread + 1e-10) for a, g, b in zip(v, gamma, beta)]


def _matvec(v, M):  # v (d,) times M (d, k)
    return [sum(v[i] * M[i][j] for i in range(len(v))) for j in range(len(M[0]))] if len(M[0]) else []


def _attention(rows, Q, K, V, P):
    """Causal multi-head attention over a list of rows; returns one update per row."""
    n, d = len(rows), len(rows[0])
    update = [[0.0] * d for _ in range(n)]
    for h in range(len(Q)):
        d_head = len(Q[h][0])
        qs = [_matvec(r, Q[h]) for r in rows]
        ks = [_matvec(r, K[h]) for r in rows]
        vs = [_matvec(r, V[h]) for r in rows]
        for t in range(n):
            scores = [sum(a * b for a, b in zip(qs[t], ks[s])) / math.sqrt(d_head)
                      for s in range(t + 1)]
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            total = sum(exps) + 1e-10
            head = [sum(exps[s] / total * vs[s][k] for s in range(t + 1))
                    for k in range(len(vs[0]))]
            for i in range(d):  # P[h] is (d_model, d_value): out_i = sum_k head_k P[i][k]
                update[t][i] += sum(head[k] * P[h][i][k] for k in range(len(head)))
    return update


def _mlp(v, M1, b1, M2, b2):
    hidden = [max(0.0, a + b) for a, b in zip(_matvec(v, M1), b1)] if M1 and M1[0] else []
    out = _matvec(hidden, M2) if hidden else [0.0] * len(v)
    return [o + b for o, b in zip(out, b2)]


def naive_transformer(tokens, tok_emb, pos_emb, out_emb, layers, lnf, positions=None,
                      norm='layer', post_ln=False):
    """Logits (n, vocab) of ``tokens`` computed one number at a time.

    ``pos_emb`` is one table or a list of tables; ``positions`` gives the ids
    (one list per table for a list; default 0..n-1).  ``norm`` is ``'layer'``,
    ``'rms'`` or ``'none'``; ``post_ln`` selects the PostLN block.
    """
    n = len(tokens)
    # several tables: a list of 2-D tables (a single table may itself be a nested list)
    multi = isinstance(pos_emb, (list, tuple)) and len(pos_emb) > 0 and np.ndim(pos_emb[0]) == 2
    tables = list(pos_emb) if multi else [pos_emb]
    if positions is None:
        ids = [list(range(n))] * len(tables)
    else:
        ids = [list(p) for p in positions] if multi else [list(positions)]
    tok_emb = np.asarray(tok_emb).tolist()
    tables = [np.asarray(t).tolist() for t in tables]
    xs = []
    for t in range(n):
        row = list(tok_emb[int(tokens[t])])
        for table, level in zip(tables, ids):
            row = [a + b for a, b in zip(row, table[int(level[t])])]
        xs.append(row)
    for layer in layers:
        Q, K, V, P, M1, M2 = (np.asarray(layer[k]).tolist() for k in ('Q', 'K', 'V', 'P', 'M1', 'M2'))
        b1, b2 = np.asarray(layer['b1']).tolist(), np.asarray(layer['b2']).tolist()
        if post_ln:   # x <- LN1(x + attn(x)); x <- LN2(x + mlp(x))
            upd = _attention(xs, Q, K, V, P)
            xs = [_normalise([a + b for a, b in zip(x, u)], layer['ln1'], norm)
                  for x, u in zip(xs, upd)]
            xs = [_normalise([a + b for a, b in zip(x, _mlp(x, M1, b1, M2, b2))], layer['ln2'],
                             norm) for x in xs]
        else:         # x <- x + attn(LN1(x)); x <- x + mlp(LN2(x))
            upd = _attention([_normalise(x, layer['ln1'], norm) for x in xs], Q, K, V, P)
            xs = [[a + b for a, b in zip(x, u)] for x, u in zip(xs, upd)]
            xs = [[a + b for a, b in zip(x, _mlp(_normalise(x, layer['ln2'], norm), M1, b1, M2, b2))]
                  for x in xs]
    out_emb = np.asarray(out_emb).tolist()
    logits = []
    for x in xs:
        v = _normalise(x, lnf, norm)
        logits.append([sum(a * b for a, b in zip(v, row)) for row in out_emb])
    return np.array(logits)
