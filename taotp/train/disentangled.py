"""The disentangled attention-only network of Chapter 10, trainable.

The network of D'Angelo et al. (after Friedman et al. 2023 and Nichani et al.
2024): the input at position ``i`` is ``[onehot(x_i, S), onehot(i, T)]``; each
head is one square matrix ``A`` with scores ``h_i A h_j`` (causal, exact
softmax) and *appends* the attention average of the whole stream, so a layer
with ``H`` heads multiplies the width by ``1 + H``; no MLPs, no norms; a
readout matrix gives the logits of the next token.  ``to_blocks()`` returns the
weights in the form ``taotp.selective.DisentangledTransformer`` takes, so a
trained network runs on the chapter's own forward pass::

    layers, readout = model.to_blocks()
    net = taotp.selective.DisentangledTransformer(S, T, layers, readout, output='log')

    >>> import torch
    >>> from taotp.train import DisentangledModel
    >>> model = DisentangledModel(S=3, T=10, heads=(1, 3, 1), rng=np.random.default_rng(0))
    >>> model.widths
    [13, 26, 104, 208]
    >>> model(torch.tensor([[0, 2, 1, 1]])).shape
    torch.Size([1, 4, 3])
"""
import numpy as np

from . import require_torch

torch = require_torch('taotp.train.DisentangledModel')


class DisentangledModel(torch.nn.Module):
    """Heads ``heads[l]`` per layer over an alphabet of ``S`` tokens and ``T`` positions.

    Args:
        S, T: alphabet size and number of positions.
        heads: heads per layer (the paper's three-layer model: ``(1, 3, 1)``).
        init_scale: the head matrices start normal with standard deviation
            ``init_scale / sqrt(width)``; the readout with ``1 / sqrt(width)``.
        rng: a ``numpy.random.Generator`` for the starting weights (default seed 0).
        dtype: ``torch.float64`` (default) or ``torch.float32``.
    """

    def __init__(self, S, T, heads=(1, 3, 1), init_scale=1.0, rng=None, dtype=torch.float64):
        super().__init__()
        rng = np.random.default_rng(0) if rng is None else rng
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f'DisentangledModel: rng must be a numpy.random.Generator; got '
                            f'{type(rng).__name__}')
        if S < 1 or T < 1 or not heads or any(h < 1 for h in heads):
            raise ValueError(f'DisentangledModel: S, T and every head count must be >= 1; got '
                             f'S={S}, T={T}, heads={tuple(heads)}')
        self.S, self.T, self.heads = int(S), int(T), tuple(int(h) for h in heads)
        self.widths = [self.S + self.T]
        for h in self.heads:
            self.widths.append(self.widths[-1] * (1 + h))
        self.A = torch.nn.ParameterList(
            torch.nn.Parameter(torch.tensor(
                rng.normal(size=(h, d, d)) * init_scale / np.sqrt(d), dtype=dtype))
            for h, d in zip(self.heads, self.widths))
        d = self.widths[-1]
        self.readout = torch.nn.Parameter(torch.tensor(rng.normal(size=(d, self.S)) / np.sqrt(d),
                                                       dtype=dtype))

    def forward(self, tokens, positions=None, record=None):
        """Next-token logits ``(..., n, S)``; ``record`` (a list) gets each layer's attention."""
        device = self.readout.device
        tokens = (tokens if torch.is_tensor(tokens) else torch.as_tensor(np.asarray(tokens))
                  ).to(device)
        n = tokens.shape[-1]
        if n > self.T:
            raise ValueError(f'DisentangledModel: sequence length must be <= T = {self.T}; '
                             f'got {n}')
        dtype = self.readout.dtype
        x = torch.eye(self.S, dtype=dtype, device=device)[tokens.long()]     # one-hot, no sync
        pos = torch.eye(self.T, dtype=dtype, device=device)[:n].expand(x.shape[:-1] + (self.T,))
        h = torch.cat([x, pos], dim=-1)
        mask = torch.ones(n, n, dtype=torch.bool, device=device).tril()
        for A in self.A:
            scores = torch.einsum('...nd,hde,...me->...hnm', h, A, h)
            weights = torch.softmax(scores.masked_fill(~mask, float('-inf')), dim=-1)
            if record is not None:
                record.append({'attn': weights})
            h = torch.cat([h] + list(torch.unbind(weights @ h.unsqueeze(-3), dim=-3)), dim=-1)
        return h @ self.readout

    def to_blocks(self):
        """``(layers, readout)`` for ``taotp.selective.DisentangledTransformer`` (float64 NumPy)."""
        layers = []
        for A, d in zip(self.A, self.widths):
            full = np.arange(d)
            layers.append([[(full, full, a)] for a in A.detach().cpu().to(torch.float64).numpy()])
        readout = self.readout.detach().cpu().to(torch.float64).numpy()
        return layers, (np.arange(self.widths[-1]), readout)

    def extra_repr(self):
        return (f'S={self.S}, T={self.T}, heads={list(self.heads)}, widths={self.widths}, '
                f'parameters={sum(p.numel() for p in self.parameters()):,}')
