"""Several models of one shape trained side by side in one process, as one stacked model.

Small models leave a GPU mostly idle: each step is a few hundred tiny
launches.  ``train_stack`` stacks the weights of ``M`` models of the same
shape along a new first axis and runs them with ``torch.func.vmap``, so one
launch serves all ``M``; each model gets its own batch, its own loss and its
own Adam state.  Adam works entry by entry and clipping is done per model, so
every model follows the path it would follow alone on the same batches (up to
the rounding of a different summation order)::

    history = train_stack([model_a, model_b], batches, steps, lr=1e-3, clip=None)
    history.losses.shape            # (steps, 2)

``batches(rng)`` returns a ``Batch`` whose arrays have a leading model axis
``(M, B, n)`` (``taotp.train.sampling.next_token_batches`` with a list of
samplers).  The trained weights are copied back into the models at the end.
"""
import copy
import time
from dataclasses import dataclass, field

import numpy as np

from . import require_torch
from .loop import _as_batch, _rate, _tensor, as_device

torch = require_torch('taotp.train.train_stack')


@dataclass
class StackHistory:
    """What a stacked run did: losses ``(steps, models)``, evaluations, time, the stop reason."""
    losses: np.ndarray
    evals: list = field(default_factory=list)      # (step, [value per model]) pairs
    seconds: float = 0.0
    steps: int = 0
    seed: int = 0
    stopped: str = 'steps'                         # 'steps', 'stop rule' or 'time'
    graph: str = 'off'                             # whether a CUDA graph replayed the steps


def _per_model_loss(logits, targets):
    """Mean cross-entropy of each model over its positions with a target >= 0: ``(M,)``."""
    M, V = logits.shape[0], logits.shape[-1]
    flat = torch.nn.functional.cross_entropy(logits.reshape(-1, V), targets.reshape(-1).long(),
                                             ignore_index=-1, reduction='none').reshape(M, -1)
    counted = (targets.reshape(M, -1) >= 0).to(flat.dtype)
    return (flat * counted).sum(1) / counted.sum(1).clamp(min=1)


def train_stack(models, batches, steps, *, lr=1e-3, weight_decay=0.0, betas=(0.9, 0.999),
                clip=None, warmup=0, schedule='constant', seed=0, threads=None, device=None,
                evaluate=None, eval_every=None, stop=None, deadline=None, progress=None,
                graph=True):
    """Train ``models`` (same class and shapes) side by side in place; returns a ``StackHistory``.

    Args:
        models: modules with identical parameter names and shapes (e.g. ``Model``s
            of one shape from different seeds, or for different lag sets).
        batches: ``batches(rng) -> Batch`` with a leading model axis, called once
            per step with a ``numpy.random.Generator`` seeded by ``seed``.
        steps, lr, weight_decay, betas, warmup, schedule, seed, threads: as ``train``.
        clip: per-model gradient-norm clipping (``None``: none, the paper's setting).
        device: where to train (default CPU).
        evaluate: ``evaluate(models) -> [value per model]`` every ``eval_every``
            steps and at the end (no gradients; the models hold the current weights).
        stop: ``stop(step, evals) -> bool``, asked after each evaluation: True ends
            the run there (a stated flatness rule, say).
        deadline: a ``time.perf_counter()`` value; the run ends at the first step
            past it (the history says ``stopped='time'``).
        progress: ``progress(step, steps, mean loss)`` every 1% of the steps.
        graph: on a CUDA device with a constant rate and no warm-up, capture one
            step in a CUDA graph after three eager steps and replay it (one launch
            per step instead of hundreds); if the capture fails the run goes on
            eagerly and ``StackHistory.graph`` says why.  Ignored on the CPU.
    """
    from torch.func import functional_call, stack_module_state, vmap
    if not models:
        raise ValueError('train_stack: models must hold at least one model; got none')
    shapes = [[(n, tuple(p.shape)) for n, p in m.named_parameters()] for m in models]
    if any(s != shapes[0] for s in shapes[1:]) or \
            any(type(m) is not type(models[0]) for m in models):
        raise ValueError('train_stack: models must share their class, parameter names and '
                         'shapes; got differing models')
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f'train_stack: steps must be an integer >= 0; got {steps!r}')
    if schedule not in ('constant', 'cosine'):
        raise ValueError(f"train_stack: schedule must be 'constant' or 'cosine'; got "
                         f"{schedule!r}")
    device = as_device(device, 'train_stack')
    for m in models:
        m.to(device)
    rng = np.random.default_rng(seed)
    previous_threads = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))
    torch.manual_seed(seed)
    params, buffers = stack_module_state(models)
    shell = copy.deepcopy(models[0]).to('meta')

    def one(p, b, tokens):
        return functional_call(shell, (p, b), (tokens,))

    def run_all(p, b, tokens):
        if len(models) == 1:                    # one model: no vmap, the plain forward pass
            return one({k: v[0] for k, v in p.items()}, {k: v[0] for k, v in b.items()},
                       tokens[0])[None]
        return vmap(one)(p, b, tokens)

    leaves = list(params.values())
    M = len(models)
    use_graph = bool(graph) and device.type == 'cuda' and schedule == 'constant' and not warmup
    # a CUDA graph replays a whole step in one launch; its optimiser must keep its state on
    # the device (capturable); the schedule must be constant (the rate is baked in)
    options = {'capturable': True} if use_graph else \
        ({'fused': True} if device.type == 'cuda' else {})
    optimiser = torch.optim.AdamW(leaves, lr=lr, betas=betas, weight_decay=weight_decay,
                                  **options)
    losses, pending, evals = [], [], []
    every = max(1, steps // 100)
    stopped = 'steps'
    graph_note = 'off' if not use_graph else 'on'
    captured = {}

    def read_losses():
        if pending:
            losses.extend(torch.stack(pending).tolist())
            pending.clear()

    def write_back():
        with torch.no_grad():
            for i, m in enumerate(models):
                for name, p in m.named_parameters():
                    p.copy_(params[name][i])

    def one_step(tokens, targets):
        """Forward, backward, per-model clipping and the optimiser step; the losses (M,)."""
        per_model = _per_model_loss(run_all(params, buffers, tokens), targets)
        per_model.sum().backward()                  # the models share no weight: separate grads
        if clip:
            grads = [p.grad for p in leaves if p.grad is not None]
            norms = torch.sqrt(sum((g.reshape(M, -1) ** 2).sum(1) for g in grads))
            scale = (clip / (norms + 1e-6)).clamp(max=1.0)           # as clip_grad_norm_
            for g in grads:
                g.mul_(scale.reshape((M,) + (1,) * (g.dim() - 1)))
        optimiser.step()
        return per_model.detach()

    def eager(tokens, targets):
        optimiser.zero_grad(set_to_none=True)
        if not use_graph:
            return one_step(tokens, targets)
        side = torch.cuda.Stream(device)            # warm-up steps run on a side stream
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            out = one_step(tokens, targets)
        torch.cuda.current_stream(device).wait_stream(side)
        return out

    def replay(tokens, targets):
        nonlocal use_graph, graph_note
        if not captured:
            try:
                torch.cuda.synchronize(device)
                captured['x'], captured['y'] = tokens.clone(), targets.clone()
                optimiser.zero_grad(set_to_none=True)
                captured['graph'] = torch.cuda.CUDAGraph()
                with torch.cuda.graph(captured['graph']):
                    captured['loss'] = one_step(captured['x'], captured['y'])
            except Exception as failure:            # pragma: no cover (needs a GPU)
                use_graph, graph_note = False, f'off ({type(failure).__name__}: {failure})'
                captured.clear()
                torch.cuda.synchronize(device)
                return eager(tokens, targets)
        captured['x'].copy_(tokens)
        captured['y'].copy_(targets)
        captured['graph'].replay()
        return captured['loss'].clone()

    start = time.perf_counter()
    try:
        for step in range(steps):
            batch = _as_batch(batches(rng))
            for group in optimiser.param_groups:
                group['lr'] = _rate(step, steps, lr, warmup, schedule)
            tokens, targets = _tensor(batch.tokens, device), _tensor(batch.targets, device)
            if use_graph and step >= 3:             # three warm-up steps, then one graph
                pending.append(replay(tokens, targets))
            else:
                pending.append(eager(tokens, targets))
            done = step + 1
            if device.type == 'cpu' or done % 100 == 0 or done == steps:
                read_losses()
            if progress and (done % every == 0 or done == steps):
                read_losses()
                progress(done, steps, float(np.mean(losses[-1])))
            last = done == steps
            if deadline is not None and time.perf_counter() > deadline and not last:
                stopped = 'time'
            if evaluate and ((eval_every and done % eval_every == 0) or last or
                             stopped == 'time'):
                write_back()
                with torch.no_grad():
                    evals.append((done, list(evaluate(models))))
                if stop is not None and not last and stopped != 'time' and stop(done, evals):
                    stopped = 'stop rule'
            if stopped != 'steps':
                break
        read_losses()
        write_back()
        if evaluate and (not evals or evals[-1][0] != len(losses)):
            with torch.no_grad():
                evals.append((len(losses), list(evaluate(models))))
    finally:
        torch.set_num_threads(previous_threads)
    return StackHistory(np.array(losses).reshape(-1, M), evals, time.perf_counter() - start,
                        len(losses), seed, stopped, graph_note)
