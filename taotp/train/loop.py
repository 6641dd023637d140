"""A seeded training loop for ``Model`` (and any module giving logits), deterministic on the CPU.

    >>> import numpy as np
    >>> from taotp.train import Batch, Model, init_params, train
    >>> model = Model(init_params(5, 6, 8, n_layers=1, n_heads=2, d_ff=16))
    >>> def copy_task(rng):                  # predict the previous token
    ...     x = rng.integers(0, 5, size=(32, 6))
    ...     y = np.full_like(x, -1)          # -1: no loss at this position
    ...     y[:, 1:] = x[:, :-1]
    ...     return Batch(x, y)
    >>> history = train(model, copy_task, steps=200, lr=1e-2, seed=0, threads=1)
    >>> bool(history.losses[0] > 1.0 > 0.1 > history.losses[-1])
    True

The data come from ``batches(rng)``, called once per step with a NumPy
generator seeded by ``seed``; the model's starting weights come from the
params dict it was built from (seed them with ``init_params(rng=...)``).  With
the same seed, data, starting point and number of threads, every run gives
the same weights bit for bit; a different thread count may change the last
bits (sums are split differently).  ``device='cuda'`` trains on a GPU: the model
and every batch move there (a sampler may also draw its batches there, as
``taotp.train.sampling`` does), the loss is read back every 100 steps instead
of every step, and the result is seeded but not bit-for-bit reproducible.
"""
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from . import require_torch

torch = require_torch('taotp.train.train')


@dataclass
class Batch:
    """One batch: ``tokens`` (B, n), ``targets`` (B, n) with -1 where no loss is taken,
    and optional ``positions`` (ids (B, n), or a list of them for several tables)."""
    tokens: object
    targets: object
    positions: object = None


@dataclass
class History:
    """What a run did: the loss of every step, the evaluations, the time it took."""
    losses: np.ndarray
    evals: list = field(default_factory=list)      # (step, value) pairs
    seconds: float = 0.0
    steps: int = 0
    seed: int = 0
    threads: int = 0

    def __repr__(self):
        last = f'{self.losses[-1]:.4g}' if len(self.losses) else '-'
        return (f'History({self.steps} steps, loss {self.losses[0]:.4g} -> {last}, '
                f'{self.seconds:.1f} s on {self.threads} thread(s), seed {self.seed})'
                if len(self.losses) else 'History(no steps)')


def cross_entropy(logits, targets):
    """Mean cross-entropy over the positions whose target is >= 0."""
    targets = torch.as_tensor(np.asarray(targets)) if not torch.is_tensor(targets) else targets
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             targets.reshape(-1).long(), ignore_index=-1)


def progress_bar(width=30, stream=None):
    """A progress callback for ``train``: one line on stderr, redrawn in place.

    ``train`` is silent unless given ``progress=``; notebooks that store their
    outputs leave it out (or pass their own callback).
    """
    def show(step, steps, loss):
        out = stream or sys.stderr
        done = int(width * step / max(steps, 1))
        out.write(f'\r[{"#" * done}{"." * (width - done)}] {step}/{steps} loss {loss:.4f}')
        if step >= steps:
            out.write('\n')
        out.flush()
    return show


def _as_batch(item):
    if isinstance(item, Batch):
        return item
    if isinstance(item, tuple) and len(item) in (2, 3):
        return Batch(*item)
    raise TypeError(f'train: batches must give a Batch or a (tokens, targets[, positions]) '
                    f'tuple; got {type(item).__name__}')


def _tensor(x, device=None):
    if x is None:
        return x
    if isinstance(x, (list, tuple)):
        return [_tensor(v, device) for v in x]
    x = x if torch.is_tensor(x) else torch.as_tensor(np.asarray(x))
    return x if device is None else x.to(device)


def as_device(device, where='train'):
    """``torch.device`` of ``device`` (``None``: the CPU); a CUDA device must be available."""
    try:
        device = torch.device('cpu' if device is None else device)
    except (RuntimeError, TypeError):
        raise ValueError(f"{where}: device must name a torch device ('cpu', 'cuda', 'cuda:0'); "
                         f"got {device!r}") from None
    if device.type == 'cuda' and not torch.cuda.is_available():
        raise ValueError(f'{where}: device {str(device)!r} needs a CUDA GPU and none is '
                         f'available here; got {str(device)!r}')
    return device


def _rate(step, steps, lr, warmup, schedule):
    if warmup and step < warmup:
        return lr * (step + 1) / warmup
    if schedule == 'cosine':
        t = (step - warmup) / max(1, steps - warmup)
        return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))
    return lr


def train(model, batches, steps, *, lr=1e-3, weight_decay=0.0, betas=(0.9, 0.98), clip=1.0,
          warmup=0, schedule='constant', seed=0, threads=None, progress=None,
          progress_every=None, evaluate=None, eval_every=None, stop_loss=None, loss_fn=None,
          device=None):
    """Train ``model`` in place with AdamW; returns a ``History``.

    Args:
        model: a ``Model`` (or any module ``model(tokens, positions=...)`` -> logits).
        batches: ``batches(rng) -> Batch`` (called once per step with a seeded
            ``numpy.random.Generator``), or one fixed ``Batch`` (full-batch training).
        steps: number of optimiser steps.
        lr, weight_decay, betas: AdamW's settings.  ``clip``: gradient-norm
            clipping (``None`` for none).
        warmup, schedule: linear warm-up steps, then ``'constant'`` or
            ``'cosine'`` (down to lr / 10).
        seed: seeds the data generator and ``torch.manual_seed``.
        threads: PyTorch threads during the run (restored afterwards); 1 gives
            the same bits on every machine with the same PyTorch build.
        progress: ``progress(step, steps, loss)`` every ``progress_every`` steps
            (e.g. ``progress_bar()``); silent by default.
        evaluate: ``evaluate(model) -> value`` (no gradients), every
            ``eval_every`` steps and at the end, kept in ``History.evals``.
        stop_loss: stop early once the step's loss is below this value.
        loss_fn: ``loss_fn(logits, targets)``; default ``cross_entropy``.
        device: where to train (``'cpu'``, the default, or ``'cuda'``); the model
            is moved there and stays there (``model.cpu()`` brings it back).
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f'train: steps must be an integer >= 0; got {steps!r}')
    if schedule not in ('constant', 'cosine'):
        raise ValueError(f"train: schedule must be 'constant' or 'cosine'; got {schedule!r}")
    loss_fn = loss_fn or cross_entropy
    device = as_device(device)
    model.to(device)
    fixed = None if callable(batches) else _as_batch(batches)
    rng = np.random.default_rng(seed)
    previous_threads = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))
    torch.manual_seed(seed)
    params = [p for p in model.parameters() if p.requires_grad]
    fused = {'fused': True} if device.type == 'cuda' else {}
    optimiser = torch.optim.AdamW(params, lr=lr, betas=betas, weight_decay=weight_decay, **fused)
    every = progress_every or max(1, steps // 100)
    on_cpu = device.type == 'cpu'
    losses, pending, evals = [], [], []

    def read_losses():                          # a GPU is read back in blocks, not every step
        if pending:
            losses.extend(torch.stack(pending).tolist())
            pending.clear()

    start = time.perf_counter()
    try:
        for step in range(steps):
            batch = fixed or _as_batch(batches(rng))
            for group in optimiser.param_groups:
                group['lr'] = _rate(step, steps, lr, warmup, schedule)
            logits = model(_tensor(batch.tokens, device),
                           positions=_tensor(batch.positions, device))
            loss = loss_fn(logits, _tensor(batch.targets, device))
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            if clip:
                torch.nn.utils.clip_grad_norm_(params, clip)
            optimiser.step()
            pending.append(loss.detach())
            done = step + 1
            if on_cpu or stop_loss is not None or done % 100 == 0 or done == steps or \
                    (progress and done % every == 0):
                read_losses()
            if progress and (done % every == 0 or done == steps):
                progress(done, steps, losses[-1])
            if evaluate and eval_every and done % eval_every == 0 and done < steps:
                with torch.no_grad():
                    evals.append((done, evaluate(model)))
            if stop_loss is not None and losses[-1] < stop_loss:
                break
        read_losses()
        if evaluate:
            with torch.no_grad():
                evals.append((len(losses), evaluate(model)))
    finally:
        torch.set_num_threads(previous_threads)
    return History(np.array(losses), evals, time.perf_counter() - start, len(losses), seed,
                   int(threads or previous_threads))
