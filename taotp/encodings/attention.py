"""Attention on positions alone: one bilinear score E[i] @ W @ E[j] over an encoding E.

This is the part of a head that looks at positions, as a PostLN model sees
them (the raw encoding, no layer norm, no 1/sqrt(d) factor).  Puzzle 7.7 asks
for a W that spreads query i evenly over the last k keys; puzzle 7.11 trains
W by gradient descent to look ``delta`` positions back, for different
encodings.

    >>> from taotp.encodings import og_embedding
    >>> P = positional_attention(og_embedding(6, 4), np.zeros((4, 4)))
    >>> P[3].round(2).tolist()                 # W = 0: evenly over keys 0..3
    [0.25, 0.25, 0.25, 0.25, 0.0, 0.0]
"""
import numpy as np

from ..model import attention_scores, causal_mask, softmax
from ._args import encoding as _encoding
from .rotation import rotation_encoding


def positional_attention(encoding, W):
    """Causal attention weights (q, q) when query i scores key j <= i as E[i] @ W @ E[j]."""
    E = _encoding(encoding, 'positional_attention')
    scores = attention_scores(E @ W, E, causal_mask(len(E)), scale=1.0)   # no 1/sqrt(d) here
    return softmax(scores, axis=-1)


def window_attention(W, q, thetas):
    """``positional_attention`` on ``rotation_encoding(q, thetas)`` (the keys of puzzle 7.7)."""
    return positional_attention(rotation_encoding(q, thetas), W)


def train_offset_head(encoding, delta, steps=300, lr=0.5, scale=1.0):
    """Train W (d x d) by gradient descent so that query i attends to key i - delta.

    The loss is the mean of -log(weight on key i - delta) over the queries
    i >= delta of ``positional_attention(scale * encoding, W)``, starting from
    W = 0.  A toy for puzzle 7.11 (which encoding learns relative attention
    more easily?).

    Returns:
        ``(W, losses, weight)``: the trained matrix, the loss before each step
        and the final mean weight on the target key.
    """
    E = scale * _encoding(encoding, 'train_offset_head')
    q, d = E.shape
    if not 0 < delta < q:
        raise ValueError(f'train_offset_head: delta must be in 1..{q - 1}; got {delta}')
    queries = np.arange(delta, q)
    target = np.zeros((q, q))
    target[queries, queries - delta] = 1.0
    W = np.zeros((d, d))
    losses = []
    for _ in range(steps):
        P = positional_attention(E, W)
        losses.append(float(-np.mean(np.log(P[queries, queries - delta] + 1e-30))))
        grad_scores = np.zeros((q, q))              # d loss / d scores, row by row
        grad_scores[queries] = (P - target)[queries] / len(queries)
        W -= lr * E.T @ grad_scores @ E
    P = positional_attention(E, W)
    return W, np.array(losses), float(P[queries, queries - delta].mean())
