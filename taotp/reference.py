"""An independent, loop-by-loop forward pass written from the book's equations.

It shares no code with the rest of taotp: plain Python loops over positions,
heads and keys (NumPy only converts arrays to lists), so a bug in the vectorised
einsums of ``taotp.model`` cannot hide in both places.  Slow; for checking only.
"""
import math

import numpy as np


def _layer_norm(v, ln):
    gamma, beta = ln.get('gamma', 1.0), ln.get('beta', 0.0)
    mean = sum(v) / len(v)
    var = sum((a - mean) ** 2 for a in v) / len(v)
    std = math.sqrt(var)
    return [beta_i + gamma_i * (a - mean) / (std + 1e-10)
            for a, gamma_i, beta_i in zip(v, np.broadcast_to(gamma, len(v)),
                                          np.broadcast_to(beta, len(v)))]


def _matvec(v, M):  # v (d,) times M (d, k)
    return [sum(v[i] * M[i][j] for i in range(len(v))) for j in range(len(M[0]))] if len(M[0]) else []


def naive_transformer(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    n = len(tokens)
    d = len(tok_emb[0])
    xs = [[tok_emb[tokens[t]][i] + pos_emb[t][i] for i in range(d)] for t in range(n)]
    for layer in layers:
        Q, K, V, P = (np.asarray(layer[k]).tolist() for k in 'QKVP')
        normed = [_layer_norm(x, layer['ln1']) for x in xs]
        new = [list(x) for x in xs]
        for h in range(len(Q)):
            d_head = len(Q[h][0])
            qs = [_matvec(v, Q[h]) for v in normed]
            ks = [_matvec(v, K[h]) for v in normed]
            vs = [_matvec(v, V[h]) for v in normed]
            for t in range(n):
                scores = [sum(a * b for a, b in zip(qs[t], ks[s])) / math.sqrt(d_head)
                          for s in range(t + 1)]
                top = max(scores)
                exps = [math.exp(s - top) for s in scores]
                total = sum(exps) + 1e-10
                head = [sum(exps[s] / total * vs[s][k] for s in range(t + 1))
                        for k in range(len(vs[0]))]
                for i in range(d):  # P[h] is (d_model, d_value): out_i = sum_k head_k P[i][k]
                    new[t][i] += sum(head[k] * P[h][i][k] for k in range(len(head)))
        xs = new
        M1, M2 = np.asarray(layer['M1']).tolist(), np.asarray(layer['M2']).tolist()
        b1, b2 = list(layer['b1']), list(layer['b2'])
        for t in range(n):
            v = _layer_norm(xs[t], layer['ln2'])
            hidden = [max(0.0, a + b) for a, b in zip(_matvec(v, M1), b1)] if M1 and M1[0] else []
            out = _matvec(hidden, M2) if hidden else [0.0] * d
            xs[t] = [xs[t][i] + out[i] + b2[i] for i in range(d)]
    logits = []
    for t in range(n):
        v = _layer_norm(xs[t], lnf)
        logits.append([sum(a * b for a, b in zip(v, row)) for row in out_emb])
    return np.array(logits)
