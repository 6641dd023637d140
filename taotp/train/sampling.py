"""Chapter 10's task drawn with PyTorch, on the device that trains (a GPU when there is one).

The law is the one ``taotp.selective.sample_batch`` draws with NumPy: a lag
uniform over the lag set for each sequence, the first ``max(lags)`` tokens
independent from the stationary law of ``P``, then each token from row
``x[t - lag]`` of ``P``.  Both draw each token by inverting a cumulative sum
with one uniform number; the generators differ, so the draws do too (the
tests compare the two laws, not the draws).

    >>> import torch
    >>> P = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> sampler = LagChainSampler(P, (1, 2), device='cpu')
    >>> tokens, lags = sampler.draw(3, 6, torch.Generator().manual_seed(0))
    >>> tokens.shape, tokens.dtype, sorted(set(lags.tolist())) <= [1, 2]
    (torch.Size([3, 6]), torch.int64, True)

For training, ``next_token_batches`` wraps a sampler into the ``batches(rng)``
callable that ``train`` and ``train_stack`` take: its generator is seeded from
the first NumPy number it is given, so ``train(seed=...)`` still fixes every
draw, and it draws ``pool`` steps' worth of sequences at a time (one pass over
the positions serves many steps: fewer, larger GPU launches).
"""
import numpy as np

from . import require_torch
from .loop import Batch, as_device

torch = require_torch('taotp.train.sampling')


def stationary_law(P):
    """The stationary distribution of the row-stochastic matrix ``P`` (float64 NumPy)."""
    P = np.asarray(P, dtype=np.float64)
    S = len(P)
    system = np.vstack([(P - np.eye(S)).T, np.ones((1, S))])
    rhs = np.zeros(S + 1)
    rhs[-1] = 1.0
    pi = np.maximum(np.linalg.lstsq(system, rhs, rcond=None)[0], 0.0)
    return pi / pi.sum()


class LagChainSampler:
    """Sequences of the interleaved-chain task of Chapter 10 drawn with PyTorch.

    Args:
        P: ``(S, S)`` row-stochastic transition matrix.
        lags: the lag set (integers >= 1); each sequence draws one uniformly.
        device: where the draws are made and kept (``'cpu'`` or ``'cuda'``).
    """

    def __init__(self, P, lags, device=None):
        P = np.asarray(P, dtype=np.float64)
        if P.ndim != 2 or P.shape[0] != P.shape[1] or np.any(P < 0) or \
                not np.allclose(P.sum(1), 1.0):
            raise ValueError(f'LagChainSampler: P must be a square row-stochastic matrix; got '
                             f'shape {P.shape}')
        lags = tuple(sorted(int(k) for k in lags))
        if not lags or lags[0] < 1 or len(set(lags)) != len(lags):
            raise ValueError(f'LagChainSampler: lags must be distinct integers >= 1; got '
                             f'{list(lags)}')
        self.device = as_device(device, 'LagChainSampler')
        self.S, self.lags = len(P), lags
        cdf = np.cumsum(P, axis=1)
        cdf[:, -1] = 1.0
        first = np.cumsum(stationary_law(P))
        first[-1] = 1.0
        # float64 tables, as NumPy's: the same uniform number gives the same token
        self.cdf = torch.tensor(cdf, dtype=torch.float64, device=self.device)
        self.first = torch.tensor(first, dtype=torch.float64, device=self.device)
        self.lag_values = torch.tensor(lags, dtype=torch.int64, device=self.device)

    def draw(self, n, length, generator):
        """``(tokens (n, length) int64, lags (n,))`` on the sampler's device."""
        kmax = self.lags[-1]
        if length <= kmax:
            raise ValueError(f'LagChainSampler.draw: length must be > max(lags) = {kmax}; '
                             f'got {length}')
        d = self.device
        pick = torch.randint(len(self.lags), (n,), generator=generator, device=d)
        lag = self.lag_values[pick]
        u = torch.rand((length, n), generator=generator, device=d, dtype=torch.float64)
        tokens = torch.empty((length, n), dtype=torch.int64, device=d)     # position first
        tokens[:kmax] = torch.searchsorted(self.first, u[:kmax].contiguous(), right=True)
        rows = torch.arange(n, device=d)
        for t in range(kmax, length):
            parent = tokens[t - lag, rows]                                   # (n,)
            tokens[t] = torch.searchsorted(self.cdf[parent], u[t, :, None], right=True)[:, 0]
        return tokens.T.clamp(max=self.S - 1).contiguous(), lag


def next_token_batches(samplers, batch, length, pool=16):
    """``batches(rng)`` for ``train`` (one sampler) or ``train_stack`` (a list, one per model).

    Each step gets ``length + 1`` tokens per sequence, cut into inputs and
    next-token targets (``Batch``); with a list of samplers the batch has a
    leading model axis ``(models, batch, length)``.  Draws ``pool`` steps at once.
    """
    stacked = isinstance(samplers, (list, tuple))
    group = list(samplers) if stacked else [samplers]
    state = {'generator': None, 'queue': []}

    def batches(rng):
        if state['generator'] is None:
            seed = int(rng.integers(2 ** 62))
            state['generator'] = torch.Generator(device=group[0].device).manual_seed(seed)
        if not state['queue']:
            draws = [s.draw(pool * batch, length + 1, state['generator'])[0] for s in group]
            block = torch.stack(draws).reshape(len(group), pool, batch, length + 1)
            state['queue'] = list(torch.unbind(block, dim=1))[::-1]
        tokens = state['queue'].pop()
        if not stacked:
            tokens = tokens[0]
        return Batch(tokens[..., :-1], tokens[..., 1:])
    return batches
