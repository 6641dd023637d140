"""Chapter 10's task at D'Angelo et al.'s own training settings: the runs a GPU is for.

The paper (Sec. 6, Setup) trains with a fresh batch of 256 sequences of 128
tokens each step, Adam at a constant learning rate of 1e-3, no weight decay,
embedding sizes 64 and 128 and ``d_QK = 32``; it does not clip gradients
(PyTorch does not unless asked) and does not say for how many steps.  ``PAPER``
holds these settings, our step budget and the rule that stops a run early:

* **budget**: at most 30,000 steps;
* **flat**: a run is flat at step ``s`` (``s >= 10,000``) when its best
  all-position KL over the evaluations of the last 5,000 steps is not 2 %
  below its best before them; a stack of models stops once every member is
  flat (``early_stop=False`` trains every run to the budget);
* on a GPU, float32 matrix products run in TF32 (``tf32``; recorded per run
  as ``matmul``) and each step is replayed from one CUDA graph.

A *group* is one model shape (kind, heads per layer, ``d_model``) and its
members, ``(lag set, seed)`` pairs; ``taotp.train.train_stack`` trains the
members of a group side by side in one process, each on its own batches
drawn on the device (``taotp.train.sampling``).  ``PARTS`` lists the groups
in the order of what they test, main models first.  ``run_part`` writes two
files per part (few files, as a GPU machine returns at most eight):
``ch11_paper_<part>.json`` (per run: every setting, the evaluations along the
way, the final KL curve on the chapter's 500 evaluation sequences, its
summary, and attention maps for {1,2,3} and {3,5,7}) and
``ch11_paper_<part>.npz`` (the weights of every standard model, float32).
From a shell, on a GPU machine::

    python -m taotp.trained paper OUT_DIR --device cuda --part main --minutes 8

``--part smoke`` runs two tiny groups in seconds on the CPU (the tests do).
Everything but ``run_part`` and ``run_group`` loads without PyTorch.
"""
import json
import time
from pathlib import Path

import numpy as np

from . import selective as TS

PAPER = dict(batch=256, lr=1e-3, schedule='constant', warmup=0, clip=None, weight_decay=0.0,
             betas=list(TS.BETAS), d_head=TS.D_HEAD, length=TS.T, max_steps=30000,
             min_steps=10000, eval_every=1000, window=5000, flat_gain=0.02, dtype='float32',
             tf32=True, cuda_graph=True)
SMOKE = dict(PAPER, batch=4, length=16, max_steps=6, min_steps=2, eval_every=2, window=2,
             d_head=4)

MAIN_HEADS = TS.MAIN_HEADS
SEEDS = (0, 1, 2)


def _main(lag_names, seeds=SEEDS):
    return [(lag_name, seed) for lag_name in lag_names for seed in seeds]


# (kind, heads, d_model, members): each group trains as one stack.  One GPU session of
# about 8 minutes is meant to run one part; 'main' comes first.
PARTS = {
    # the main model of every lag set, three seeds, d_model 64, with the extra models of the
    # heads rows on {1,2,3} (1, 2 and 4 heads in layer 2) and one head for two lags
    'main': [
        ('standard', (1, 3, 1), 64, _main(['{1,2,3}', '{3,5,7}'])),
        ('standard', (1, 4, 1), 64, _main(['{1,3,4}']) + [('{1,2,3}', 0)]),
        ('standard', (1, 5, 1), 64, _main(['{1,...,5}'])),
        ('standard', (1, 2, 1), 64, _main(['{1,3}']) + [('{1,2,3}', 0)]),
        ('standard', (1, 1, 1), 64, [('{1,2,3}', 0), ('{1,3}', 0)]),
    ],
    # the main models again at the paper's other width
    'wide': [
        ('standard', (1, 3, 1), 128, _main(['{1,2,3}', '{3,5,7}'])),
        ('standard', (1, 4, 1), 128, _main(['{1,3,4}'])),
        ('standard', (1, 5, 1), 128, _main(['{1,...,5}'])),
        ('standard', (1, 2, 1), 128, _main(['{1,3}'])),
    ],
    # Fig. 6 left: two layers ([1,3], [3,3], [1,1], [3,1]) and more than three
    'layers': [
        ('standard', (1, 3), 64, [('{1,2,3}', 0)]),
        ('standard', (3, 3), 64, [('{1,2,3}', 0)]),
        ('standard', (1, 1), 64, [('{1,2,3}', 0)]),
        ('standard', (3, 1), 64, [('{1,2,3}', 0)]),
        ('standard', (1, 3, 1, 1), 64, [('{1,2,3}', 0)]),
    ],
    # Fig. 6 right: the heads sweep on {1,...,5} ([1,5,1] is in 'main')
    'heads5': [('standard', (1, h, 1), 64, [('{1,...,5}', 0)]) for h in (1, 2, 3, 4, 6)],
    # the disentangled network of Figs. 4 and 5
    'disentangled': [
        ('disentangled', (1, 3, 1), None, [('{1,2,3}', 0), ('{3,5,7}', 0)]),
        ('disentangled', (1, 1, 1), None, [('{1,2,3}', 0)]),
        ('disentangled', (1, 2, 1), None, [('{1,3}', 0)]),
    ],
    # what a CPU affords at these settings: the main model of {1,2,3}, a few hundred steps
    'cpu': [('standard', (1, 3, 1), 64, [('{1,2,3}', 0)])],
    # seconds on the CPU: every code path of a part (a stack of two, a maps set, weights)
    'smoke': [
        ('standard', (1, 2, 1), 16, [('{1,2,3}', 0), ('{1,3}', 1)]),
        ('disentangled', (1, 1, 1), None, [('{3,5,7}', 0)]),
    ],
}
SUFFIX = {'cpu': ' cpu'}     # run names of a part that repeats models of another part
MAPS_FOR = ('{1,2,3}', '{3,5,7}')


def run_name(kind, lag_name, heads, d_model, seed):
    """``'std {1,2,3} [1,3,1] d64 s0'`` (``'dis ...'`` has no width)."""
    width = '' if kind == 'disentangled' else f' d{d_model}'
    return (f'{"std" if kind == "standard" else "dis"} {lag_name} '
            f'[{",".join(map(str, heads))}]{width} s{seed}')


def part_names(part):
    """Every run name of a part of ``PARTS``, in the order they train."""
    return [run_name(kind, lag_name, heads, d, seed) + SUFFIX.get(part, '')
            for kind, heads, d, members in PARTS[part] for lag_name, seed in members]


def flat_at(evals, min_steps, window, gain):
    """The first evaluation step where the flatness rule holds (``None``: never).

    ``evals``: ``(step, kl)`` pairs.  At step ``s >= min_steps`` the rule holds
    when ``min(kl over steps in (s - window, s]) > (1 - gain) * min(kl over steps
    <= s - window)``: the last ``window`` steps improved the best by less than
    ``gain``.

        >>> flat_at([(1, 1.0), (2, 0.5), (3, 0.499), (4, 0.498)], 2, 2, 0.02)
        4
    """
    for s, _ in evals:
        if s < min_steps:
            continue
        recent = [v for t, v in evals if s - window < t <= s]
        before = [v for t, v in evals if t <= s - window]
        if recent and before and min(recent) > (1 - gain) * min(before):
            return s
    return None


# ----------------------------------------------------------------------------- training

def _evaluator(members, kind, length, n_eval, device):
    """``evaluate(models) -> [all-position KL]`` on each member's evaluation set, on ``device``."""
    import torch
    from .. import selective as sel
    P = TS.task_matrix()
    sets = []
    for lag_name, _ in members:
        lags = TS.LAG_SETS[lag_name]
        X, true = TS.evaluation_set(P, lags, n_eval, length=length)
        truth = sel.true_predictive(P, lags, X, true)
        sets.append((torch.as_tensor(X, device=device),
                     torch.as_tensor(truth, dtype=torch.float32, device=device)))

    @torch.no_grad()
    def evaluate(models):
        out = []
        for model, (X, truth) in zip(models, sets):
            total = 0.0
            for i in range(0, len(X), 100):
                logq = torch.log_softmax(model(X[i:i + 100]).float(), dim=-1)
                p = truth[i:i + 100]
                total += float(torch.where(p > 0, p * (torch.log(p) - logq), 0.0).sum())
            out.append(total / (len(X) * X.shape[1]))
        return out
    return evaluate


def run_group(kind, heads, d_model, members, settings=PAPER, device=None, seed=0, deadline=None,
              early_stop=True, n_eval=TS.EVAL_SEQUENCES, progress=None, threads=None,
              suffix=''):
    """Train one group as a stack; returns ``({name: result}, {name: weights})``.

    ``members``: ``(lag set, seed)`` pairs (the seed gives the starting weights);
    ``seed`` seeds the group's batches; ``deadline`` (``time.perf_counter()``)
    ends training early (the results say ``stopped='time'``).
    """
    import torch
    from .. import train as tr
    from ..train.loop import as_device
    from ..train.sampling import LagChainSampler, next_token_batches
    device = as_device(device, 'run_group')
    s = settings
    if device.type == 'cuda':       # float32 products in TF32 on the GPU (PyTorch's default: off)
        torch.backends.cuda.matmul.allow_tf32 = bool(s.get('tf32', False))
    matmul = 'tf32' if device.type == 'cuda' and s.get('tf32') else 'float32'
    length = s['length']
    P = TS.task_matrix()
    models = [TS.new_model(kind, heads, d_model, s['d_head'], member_seed, length)
              for _, member_seed in members]
    samplers = [LagChainSampler(P, TS.LAG_SETS[lag_name], device) for lag_name, _ in members]
    batches = next_token_batches(samplers, s['batch'], length,
                                 pool=max(1, min(64, 2 ** 23 // (s['batch'] * length))))
    evaluate = _evaluator(members, kind, length, n_eval, device)

    def stop(step, evals):
        return early_stop and all(
            flat_at([(t, v[i]) for t, v in evals], s['min_steps'], s['window'],
                    s['flat_gain']) is not None for i in range(len(members)))

    names = [run_name(kind, lag_name, heads, d_model, member_seed) + suffix
             for lag_name, member_seed in members]
    history = tr.train_stack(models, batches, s['max_steps'], lr=s['lr'],
                             weight_decay=s['weight_decay'], betas=tuple(s['betas']),
                             clip=s['clip'], warmup=s['warmup'], schedule=s['schedule'],
                             seed=seed, threads=threads, device=device, evaluate=evaluate,
                             eval_every=s['eval_every'], stop=stop, deadline=deadline,
                             progress=progress, graph=s.get('cuda_graph', True))
    results, weights = {}, {}
    for i, ((lag_name, member_seed), model, name) in enumerate(zip(members, models, names)):
        w = TS.weights_of(kind, model.cpu())
        lags = TS.LAG_SETS[lag_name]
        X, true = TS.evaluation_set(P, lags, n_eval, length=length)
        curve = TS.model_curve(P, lags, X, true, TS.probs(kind, w, X, length))
        evals = [(t, v[i]) for t, v in history.evals]
        result = {
            'name': name, 'kind': kind, 'lags': list(lags), 'lag_set': lag_name,
            'heads': list(heads), 'd_model': d_model, 'seed': member_seed, 'data_seed': seed,
            **{k: s[k] for k in ('batch', 'lr', 'schedule', 'warmup', 'clip', 'weight_decay',
                                 'betas', 'd_head', 'length', 'max_steps', 'min_steps',
                                 'eval_every', 'window', 'flat_gain', 'dtype')},
            'early_stop': early_stop, 'steps': history.steps, 'stopped': history.stopped,
            'flat_at': flat_at(evals, s['min_steps'], s['window'], s['flat_gain']),
            'device': str(device), 'torch': torch.__version__, 'matmul': matmul,
            'cuda_graph': history.graph,
            'stacked_with': [n for n in names if n != name],
            'train_seconds': round(history.seconds, 1),
            'evals': [[t, round(float(v), 6)] for t, v in evals],
            'loss_every_100': [round(float(v), 5) for v in
                               history.losses[:, i].reshape(-1)[::100]],
            'kl': [float(v) for v in curve], 'summary': TS.summary(curve, min(64, length // 2))}
        if lag_name in MAPS_FOR:
            seq = TS.maps_tokens(P, lag_name, min(48, length))
            result['maps'] = [np.round(m, 4).tolist() for m in
                              TS.attention_maps(kind, w, seq, length)]
        results[name] = result
        if kind == 'standard':
            weights[name] = w
    return results, weights


def _flat_arrays(name, params):
    from ..train.store import _flat
    return {f'{name}|{k}': np.asarray(v, dtype=np.float32) for k, v in _flat(params).items()}


def save_weights(path, weights):
    """Write several standard programs ``{name: params}`` to one ``.npz`` (float32)."""
    arrays = {}
    for name, params in weights.items():
        arrays.update(_flat_arrays(name, params))
    np.savez_compressed(path, **arrays)


def load_weights(path, name):
    """One program of a file written by ``save_weights`` (float64 params dict)."""
    import os
    import tempfile
    from ..params import as_dtype
    from ..train.store import load_params
    with np.load(path, allow_pickle=False) as data:
        mine = {k.split('|', 1)[1]: data[k] for k in data.files if k.split('|', 1)[0] == name}
    if not mine:
        raise ValueError(f'load_weights: no program named {name!r} in {Path(path).name}')
    with tempfile.TemporaryDirectory() as folder:       # reuse the one reader of the format
        single = os.path.join(folder, 'one.npz')
        np.savez(single, **mine)
        return as_dtype(load_params(single), np.float64)


def run_part(part, out, device=None, minutes=None, early_stop=True, max_steps=None,
             settings=None, progress=None, log=None, threads=None):
    """Train every group of ``PARTS[part]`` in order, writing both files after each group.

    ``minutes``: a wall-clock budget for the whole part; the group running when
    it ends stops there (its runs say ``stopped='time'``) and later groups are
    listed as not run.  ``max_steps`` overrides the step budget (a short run
    still records every setting).  Returns the stored dict.
    """
    if part not in PARTS:
        raise ValueError(f'run_part: part must be one of {list(PARTS)}; got {part!r}')
    s = dict(settings or (SMOKE if part == 'smoke' else PAPER))
    if max_steps is not None:
        s['max_steps'] = int(max_steps)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stored = {'part': part, 'settings': s, 'runs': {}, 'not_run': []}
    weights = {}
    start = time.perf_counter()
    deadline = None if minutes is None else start + 60 * minutes
    n_eval = 8 if part == 'smoke' else TS.EVAL_SEQUENCES
    for g, (kind, heads, d_model, members) in enumerate(PARTS[part]):
        if deadline is not None and time.perf_counter() > deadline - 5:
            stored['not_run'] += [run_name(kind, lag, heads, d_model, sd) + SUFFIX.get(part, '')
                                  for lag, sd in members]
            continue
        if log:
            log(f'group {g + 1}/{len(PARTS[part])}: {kind} {list(heads)} d_model {d_model}, '
                f'{len(members)} model(s)')
        results, w = run_group(kind, heads, d_model, members, s, device, seed=g,
                               deadline=deadline, early_stop=early_stop, n_eval=n_eval,
                               progress=progress, threads=threads, suffix=SUFFIX.get(part, ''))
        stored['runs'].update(results)
        weights.update(w)
        stored['seconds'] = round(time.perf_counter() - start, 1)
        (out / f'ch11_paper_{part}.json').write_text(json.dumps(stored, separators=(',', ':')))
        save_weights(out / f'ch11_paper_{part}.npz', weights)
        if log:
            first = next(iter(results.values()))
            log(f'  {first["steps"]} steps in {first["train_seconds"]} s '
                f'({1000 * first["train_seconds"] / max(first["steps"], 1):.1f} ms a step), '
                f'stopped by {first["stopped"]}; CUDA graph {first["cuda_graph"]}, '
                f'matmul {first["matmul"]}; {time.perf_counter() - start:.0f} s so far')
            for name, r in results.items():
                log(f'  {name}: all-position KL {r["summary"]["all"]:.4f}, flat at '
                    f'{r["flat_at"]}')
    return stored
