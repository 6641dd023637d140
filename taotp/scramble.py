"""Puzzle 1.8: express a program in a rotated residual basis without changing what it computes.

With row vectors, a new basis is ``x -> x @ M``.  Every matrix that *writes* to the
residual stream (the embeddings, each head's ``P``, ``M2`` and ``b2``) is multiplied
by ``M`` on the right; every matrix that *reads* from it (``Q``, ``K``, ``V``, ``M1``)
by ``M.T`` on the left, so ``(x @ M) @ (M.T @ W) == x @ W`` when ``M`` is
orthonormal.  Layer norm is the catch: it subtracts the mean, i.e. removes the
all-ones direction, so it commutes with ``M`` only if ``ones @ M == ones``.
"""
import numpy as np


def scramble_transformer(tok_emb, pos_emb, out_emb, layers, lnf, basis):
    """Return (tok_emb, pos_emb, out_emb, layers, lnf) rewritten in ``basis`` (a matrix M).

    Raises ValueError unless ``M`` is orthonormal and fixes the all-ones vector
    (the layer norms would otherwise change the function).  Inputs are not modified.
    """
    M = np.asarray(basis, dtype=np.float64)
    d = np.shape(tok_emb)[1]
    if M.shape != (d, d) or not np.allclose(M @ M.T, np.eye(d), atol=1e-9):
        raise ValueError(f'scramble_transformer: M must be an orthonormal {d}x{d} matrix')
    if not np.allclose(np.ones(d) @ M, np.ones(d), atol=1e-9):
        raise ValueError('scramble_transformer: M must map (1, ..., 1) to itself, '
                         'otherwise layer norm does not commute with it')
    new_layers = []
    for layer in layers:
        new = dict(layer)
        for key in ('Q', 'K', 'V', 'P'):     # (n_heads, d_model, d_head): rows live in d_model
            new[key] = np.einsum('ed,hek->hdk', M, layer[key])
        new['M1'] = M.T @ layer['M1']
        new['M2'] = layer['M2'] @ M
        new['b2'] = layer['b2'] @ M
        new_layers.append(new)
    return tok_emb @ M, pos_emb @ M, out_emb @ M, new_layers, lnf
