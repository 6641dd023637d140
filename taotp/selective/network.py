"""The paper's network: a disentangled, attention-only transformer, and the construction in it.

The *disentangled* transformer (Friedman et al. 2023; Nichani et al. 2024) is
the notation of the selective-induction paper, not the book's machine:

* the input at position ``i`` is the concatenation ``[onehot(x_i, S), onehot(i, T)]``;
* a head is one square matrix ``A`` (the product ``Q K^T``; no value matrix):
  its scores are ``h_i A h_j / temperature`` (causal), and it *appends* the
  attention average of whole residual vectors, so a layer with ``H`` heads
  multiplies the width by ``1 + H``;
* no MLPs and no norms; one readout matrix at the end.

``DisentangledTransformer`` keeps its own small forward pass for this reason.
The book's architecture has one implementation, ``taotp.model.forward``: the
same construction in the book's params format is ``taotp.selective.book_params``,
and the tests check that both give the same attention and outputs.
"""
import numpy as np

from .construction import layer_matrices
from .design import check_constants, exact_from, plan_heads, safety_margins
from .predictors import exact_softmax
from .task import check_length, check_lags, check_transition_matrix

OUTPUTS = ('mixture', 'log')


class DisentangledTransformer:
    """An attention-only transformer whose layers append to the residual stream.

    The paper's architecture, not the book's: ``run`` is its own small forward
    pass (one-hot inputs, concatenated residual, one matrix per head).  The
    tests check it against ``book_params`` run by ``taotp.trace`` and by the
    loop reference ``taotp.reference``.

    Args:
        S, T: alphabet size and number of positions; the input width is ``S + T``.
        layers: per layer, per head, a list of blocks ``(rows, cols, matrix)``;
            the head's matrix ``A`` is their sum placed at ``A[rows][:, cols]``.
        readout: ``(rows, matrix)``; the output is ``h[:, rows] @ matrix``.
        temperature: the scores are divided by it (the paper's alpha).
        output: 'mixture' (the readout gives probabilities) or 'log' (a
            softmax follows the readout).
        meta: anything the builder wants to remember (design, constants, ...).
    """

    def __init__(self, S, T, layers, readout, temperature=1.0, output='mixture', meta=None):
        if output not in OUTPUTS:
            raise ValueError(f'DisentangledTransformer: output must be one of {OUTPUTS}; '
                             f'got {output!r}')
        self.S, self.T, self.layers, self.readout = int(S), int(T), layers, readout
        self.temperature, self.output = float(temperature), output
        self.meta = dict(meta or {})
        self.widths = [self.S + self.T]
        for heads in layers:
            self.widths.append(self.widths[-1] * (1 + len(heads)))

    def heads(self):
        """Heads per layer, e.g. ``[1, 3, 1]``."""
        return [len(h) for h in self.layers]

    def matrix(self, layer, head):
        """The dense ``(d, d)`` matrix of one head (d = the width entering that layer)."""
        d = self.widths[layer]
        A = np.zeros((d, d))
        for rows, cols, block in self.layers[layer][head]:
            A[np.ix_(rows, cols)] += block
        return A

    def count_nonzero(self):
        """Non-zero weights per layer and in the readout (every ``+-lam`` entry counts)."""
        counts = {f'layer{l + 1}': int(sum(np.count_nonzero(self.matrix(l, h))
                                           for h in range(len(heads))))
                  for l, heads in enumerate(self.layers)}
        counts['readout'] = int(np.count_nonzero(self.readout[1]))
        return counts

    def _tokens(self, tokens):
        tokens = np.asarray(tokens)
        if tokens.dtype.kind not in 'iu' or tokens.ndim < 1:
            raise TypeError(f'DisentangledTransformer: tokens must be an integer array; '
                            f'got dtype {tokens.dtype}, shape {tokens.shape}')
        n = tokens.shape[-1]
        if not 1 <= n <= self.T:
            raise ValueError(f'DisentangledTransformer: sequence length must be in '
                             f'1..{self.T}; got {n}')
        if tokens.min() < 0 or tokens.max() >= self.S:
            raise ValueError(f'DisentangledTransformer: tokens must lie in 0..{self.S - 1}; '
                             f'got {int(tokens.min())}..{int(tokens.max())}')
        return tokens

    def run(self, tokens):
        """Run on ``tokens`` (n,) or a batch (..., n).

        Returns a dict: ``resid`` (per layer boundary, (..., n, width)),
        ``attn`` (per layer, (..., H, n, n)), ``scores`` (the same before the
        softmax; masked entries -inf) and ``probs`` ((..., n, S)).
        """
        tokens = self._tokens(tokens)
        n = tokens.shape[-1]
        h = np.concatenate([np.eye(self.S)[tokens],
                            np.broadcast_to(np.eye(self.T)[:n], tokens.shape + (self.T,))],
                           axis=-1)
        causal = np.tril(np.ones((n, n), dtype=bool))
        resid, attn, scores = [h], [], []
        for heads in self.layers:
            zs = []
            for blocks in heads:
                z = sum((h[..., rows] @ block) @ np.swapaxes(h[..., cols], -1, -2)
                        for rows, cols, block in blocks)
                zs.append(np.where(causal, z / self.temperature, -np.inf))
            z = np.stack(zs, axis=-3)                                    # (..., H, n, n)
            w = exact_softmax(z)
            h = np.concatenate([h] + [w[..., k, :, :] @ h for k in range(len(heads))], axis=-1)
            resid.append(h)
            attn.append(w)
            scores.append(z)
        rows, matrix = self.readout
        out = h[..., rows] @ matrix
        return {'resid': resid, 'attn': attn, 'scores': scores,
                'probs': exact_softmax(out) if self.output == 'log' else out}

    def next_token_probs(self, tokens, chunk=None):
        """``(..., n, S)``: row t is the predicted law of the token after the first ``t + 1``.

        The same forward pass as ``run``, over a batch in blocks of ``chunk``
        sequences (default: as many as keep one block's residual streams near
        16 MB), keeping only the outputs; the width grows ``(1 + H)``-fold per
        layer, so a whole batch at ``T = 128`` would need gigabytes.
        """
        tokens = self._tokens(tokens)
        lead, n = tokens.shape[:-1], tokens.shape[-1]
        rows = tokens.reshape(-1, n)
        if chunk is None:
            chunk = max(1, (16 << 20) // (8 * n * sum(self.widths)))
        elif isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            raise ValueError(f'DisentangledTransformer: chunk must be a positive int; got {chunk!r}')
        out = [self.run(rows[i:i + chunk])['probs'] for i in range(0, len(rows), chunk)]
        return np.concatenate(out).reshape(lead + (n, self.S))


def disentangled_slots(S, T, H):
    """Column indices of each named block in the disentangled residual stream (H layer-2 heads).

    Layer 1 appends ``[token mixture (S), l1 (T)]``; layer-2 head h appends a
    copy of that wider stream, whose position and ``l1`` parts are ``mhat{h}``
    and ``phat{h}``; layer 3 appends one more, whose token part is ``copy``.
    """
    d0 = S + T
    d1 = 2 * d0
    slots = {'tok': np.arange(S), 'pos': np.arange(S, d0), 'l1': np.arange(d0 + S, d1)}
    for h in range(H):
        base = (h + 1) * d1
        slots[f'mhat{h}'] = np.arange(base + S, base + d0)
        slots[f'phat{h}'] = np.arange(base + d0 + S, base + d1)
    d2 = (1 + H) * d1
    slots['copy'] = np.arange(d2, d2 + S)
    return slots


def build_selective_induction(P, lags, T, lam=500.0, beta=100.0, heads=None, variant=None,
                              period=None, classes=None, temperature=1.0, output='mixture',
                              strict=True, pair_shift=None):
    """The three-layer selective-induction network, as a ``DisentangledTransformer``.

    Layer 1 stores each token's normalised transition probabilities in its
    position slots ``i - k``; layer 2 (one head per residue class of
    ``plan_heads``) averages them over disjoint sets of earlier tokens; layer 3
    scores the candidate parents ``i + 1 - k`` by that evidence and copies the
    winner's token, which the readout maps through ``P``.

    Args:
        P, lags, T: the task (strictly positive ``P``; the largest lag < T; T at most
            ``taotp.selective.task.MAX_LENGTH`` = 4,096).
        lam: mask hardening (the paper's 500).
        beta: selection strength (the paper's 100).
        heads, variant, period, classes: the layer-2 design (``plan_heads``).
        temperature: the attention temperature; the weights are multiplied by
            it, so the function does not change.
        output: 'mixture' (readout ``P``: the arithmetic mixture of the
            candidate rows) or 'log' (readout ``log P`` and a softmax: the
            geometric mixture, as in the book-format port).
        strict: refuse constants whose masks can leak (``check_constants``);
            ``False`` builds soft networks for demonstrations.
        pair_shift: replace the pair design's shift (to show the paper's).

    Returns:
        a ``DisentangledTransformer`` whose ``meta`` holds ``design``, ``lam``,
        ``beta``, ``margins``, ``exact_from``, ``P`` and ``slots``.

    >>> P = np.array([[.7, .2, .1], [.1, .7, .2], [.2, .1, .7]])
    >>> model = build_selective_induction(P, (1, 2, 3), 10, beta=10.0)
    >>> model.heads(), model.widths
    ([1, 3, 1], [13, 26, 104, 208])
    >>> x = np.array([2, 0, 1, 2, 0, 0, 2, 1, 1, 2])
    >>> model.next_token_probs(x)[-1].round(4).tolist()
    [0.1032, 0.6807, 0.2161]
    """
    where = 'build_selective_induction'
    P = check_transition_matrix(P, where)
    T = check_length(T, where)
    lags = check_lags(lags, T, where)
    if not np.isfinite(temperature) or temperature <= 0:
        raise ValueError(f'{where}: temperature must be > 0; got {temperature!r}')
    if output not in OUTPUTS:
        raise ValueError(f'{where}: output must be one of {OUTPUTS}; got {output!r}')
    design = plan_heads(lags, heads, variant, period, classes)
    H = len(design.classes)
    margins = (check_constants if strict else safety_margins)(P, T, lam, beta, H, design.variant)
    S = len(P)
    slots = disentangled_slots(S, T, H)
    layers = [[[(slots[q], slots[k], temperature * m) for q, k, m in blocks]
               for blocks, _ in layer]
              for layer in layer_matrices(P, T, lam, beta, design, pair_shift)]
    readout = (slots['copy'], np.log(P) if output == 'log' else P.copy())
    meta = {'design': design, 'lam': float(lam), 'beta': float(beta), 'margins': margins,
            'exact_from': exact_from(design), 'P': P, 'slots': slots}
    return DisentangledTransformer(S, T, layers, readout, temperature, output, meta)
