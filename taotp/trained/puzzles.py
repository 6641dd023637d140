"""The training puzzles' harnesses (2.3, 3.1, 5.8, 7.11) and their reference runs.

Each harness trains the book's architecture with ``taotp.train`` on the task of
``taotp.trained.tasks`` and returns ``(params, history)``; it needs the
optional training extra (``pip install "taotp[train]"``, PyTorch) and says so
if it is missing.  ``reference_run`` runs a harness with the settings behind
the programs the solutions notebooks load (``size='full'``; ``'smoke'`` is a
seconds-long run of the same code for the tests); ``regenerate`` rewrites them.
"""
import numpy as np

from .. import encodings, hello_world
from ..params import count_params
from .tasks import (LOOKUP, OFFSET, SORT_N, _stored_path, hello_world_output, hello_world_task,
                    lookup_batch, lookup_table, measure, offset_batch, sort_batch)


def _train():
    """``taotp.train`` with PyTorch loaded (a clear message if the extra is missing)."""
    from .. import train
    train.require_torch('this training harness')
    return train


def train_hello_world_torch(d_model=3, n_layers=0, steps=600, lr=0.05, seed=0, message=None,
                      **model):
    """Train a tied model to print "Hello World!" (message tokenizer); ``(params, history)``.

    ``n_layers = 0`` is the embeddings-only shape of Chapter 2 (``(11 + 13) * d_model``
    parameters).  Extra keywords go to ``init_params`` (``n_heads``, ``d_ff``, ...).
    """
    train = _train()
    tokens, targets, tok = hello_world_task(message or hello_world.HELLO_WORLD)
    params = train.init_params(len(tok), tokens.shape[1], d_model, n_layers=n_layers,
                               rng=np.random.default_rng(seed), **model)
    net = train.Model(params, freeze=('*ln*', 'lnf.*'))      # the book's plain norms
    history = train.train(net, train.Batch(tokens, targets), steps, lr=lr, seed=seed,
                          stop_loss=1e-3)
    return net.to_params(), history


def train_lookup(d_model=64, n_layers=1, n_heads=4, d_ff=256, steps=4000, lr=3e-3, batch=64,
                 seed=0, threads=None, progress=None, mix_keys=True, **model):
    """Train a model to answer the puzzle's table behind any prefix; ``(params, history)``."""
    train = _train()
    import torch
    ks, vs = lookup_table()
    params = train.init_params(LOOKUP['vocab_size'], LOOKUP['prefix'] + ks.shape[1], d_model,
                               n_layers=n_layers, n_heads=n_heads, d_ff=d_ff,
                               rng=np.random.default_rng(seed), **model)
    net = train.Model(params, dtype=torch.float32)
    history = train.train(net, lambda rng: lookup_batch(rng, batch, ks, vs, mix_keys), steps,
                          lr=lr,
                          warmup=100, schedule='cosine', seed=seed, threads=threads,
                          progress=progress)
    return net.to_params(), history


def train_sorter(d_model=64, n_layers=2, n_heads=4, d_ff=128, steps=6000, lr=2e-3, batch=64,
                 seed=0, threads=None, progress=None, n=SORT_N, **model):
    """Train a model to sort (Chapter 5's format, numbers below ``n``); ``(params, history)``."""
    train = _train()
    import torch
    params = train.init_params(n, 2 * (n - 1), d_model, n_layers=n_layers, n_heads=n_heads,
                               d_ff=d_ff, rng=np.random.default_rng(seed), **model)
    net = train.Model(params, dtype=torch.float32)
    history = train.train(net, lambda rng: sort_batch(rng, batch, n), steps, lr=lr, warmup=100,
                          schedule='cosine', seed=seed, threads=threads, progress=progress)
    return net.to_params(), history


def position_table(encoding, block_size=None, d_model=None, seed=0):
    """The fixed position table of puzzle 7.11: ``'og'`` (sinusoidal) or ``'rotation'`` (random)."""
    q = block_size or OFFSET['block_size']
    d = d_model or OFFSET['d_model']
    if encoding == 'og':
        return encodings.og_embedding(q, d)
    if encoding == 'rotation':
        return encodings.random_rotation_embedding(q, d, np.random.default_rng(seed))
    raise ValueError(f"position_table: encoding must be 'og' or 'rotation'; got {encoding!r}")


def train_offset(encoding, delta=5, d_model=None, n_layers=1, n_heads=2, d_ff=64, steps=2000,
                 lr=3e-3, batch=64, seed=0, threads=None, progress=None, length=None, **model):
    """Train a PostLN model with a fixed position table to copy the token ``delta`` back.

    ``encoding``: ``'og'`` (sinusoidal) or ``'rotation'`` (random angles, seeded);
    the table is frozen, everything else trains.  Returns ``(params, history)``.
    """
    train = _train()
    import torch
    d = d_model or OFFSET['d_model']
    q = OFFSET['block_size']
    params = train.init_params(OFFSET['vocab_size'], q, d, n_layers=n_layers, n_heads=n_heads,
                               d_ff=d_ff, rng=np.random.default_rng(seed), **model)
    params['pos_emb'] = position_table(encoding, q, d, seed)
    net = train.Model(params, post_ln=True, freeze='pos_emb', dtype=torch.float32)
    history = train.train(net, lambda rng: offset_batch(rng, batch, delta, length), steps, lr=lr,
                          warmup=100, schedule='cosine', seed=seed, threads=threads,
                          progress=progress)
    return net.to_params(), history


REFERENCE = {     # the harness settings behind the stored programs of the solutions notebook
    '2.3': {'d_model': 3, 'n_layers': 0, 'steps': 1000, 'lr': 0.05, 'seed': 0},
    '3.1': {'d_model': 32, 'n_layers': 1, 'n_heads': 4, 'd_ff': 128, 'steps': 3000,
            'lr': 3e-3, 'seed': 0},
    '5.8': {'d_model': 48, 'n_layers': 1, 'n_heads': 4, 'd_ff': 96, 'steps': 3000,
            'lr': 2e-3, 'seed': 0},
    '7.11': {'delta': 5, 'd_model': 16, 'n_layers': 1, 'n_heads': 2, 'd_ff': 64, 'steps': 1000,
             'lr': 3e-3, 'length': 32, 'seed': 0},
}
SMOKE = {'2.3': {'steps': 30}, '3.1': {'steps': 10, 'd_model': 8, 'd_ff': 16},
         '5.8': {'steps': 10, 'd_model': 8, 'd_ff': 16},
         '7.11': {'steps': 10, 'd_model': 8, 'd_ff': 16}}
SWEEPS = {'2.3': {'d_model': (2, 3, 4), 'seed': range(5)}, '3.1': {'mix_keys': (False,)},
          '7.11': {'seed': range(3)}}


STORE_DTYPE = {'2.3': None, '3.1': 'float32', '5.8': 'float32', '7.11': 'float32'}


def as_stored(params, dtype):
    """``params`` rounded as ``save_params(..., dtype=dtype)`` stores them (float64 again).

    Facts are measured on this form, so they hold for the stored program exactly
    (a frozen float64 position table, e.g., loses its last digits in float32).
    """
    if dtype is None:
        return params
    import io

    from ..train.store import load_params, save_params
    buffer = io.BytesIO()
    save_params(buffer, params, dtype=dtype)
    buffer.seek(0)
    return load_params(buffer)


def reference_run(puzzle_id, size='full', threads=1, progress=None):
    """Run the harness of a training puzzle with the reference settings.

    ``size='full'``: the settings of ``REFERENCE`` (the stored programs; minutes on
    a laptop CPU); ``'smoke'``: a seconds-long run of the same code (``SMOKE``),
    for tests.  Returns ``(answer, facts)``: what the solution passes to
    ``check`` (without 7.11's verdict) and the measured numbers.
    """
    import time
    if size not in ('full', 'smoke'):
        raise ValueError(f"reference_run: size must be 'full' or 'smoke'; got {size!r}")
    settings = {**REFERENCE[puzzle_id], **(SMOKE[puzzle_id] if size == 'smoke' else {})}
    harness = {'2.3': train_hello_world_torch, '3.1': train_lookup, '5.8': train_sorter}
    start = time.perf_counter()
    if puzzle_id == '7.11':
        answer, facts = {}, {}
        for encoding in ('og', 'rotation'):
            params, history = train_offset(encoding, threads=threads, progress=progress,
                                           **settings)
            answer[encoding] = as_stored(params, STORE_DTYPE[puzzle_id])
            facts[f'{encoding}_loss'] = float(history.losses[-1])
        facts.update(measure('7.11', answer))
    else:
        extra = {} if puzzle_id == '2.3' else {'threads': threads, 'progress': progress}
        answer, history = harness[puzzle_id](**settings, **extra)
        answer = as_stored(answer, STORE_DTYPE[puzzle_id])
        facts = {'loss': float(history.losses[-1]), 'steps': history.steps}
        facts.update(measure(puzzle_id, answer))
    facts.update(settings=settings, seconds=round(time.perf_counter() - start, 1),
                 parameters=count_params(answer['og'] if puzzle_id == '7.11' else answer)
                 ['n_params'])
    return answer, facts


def sweep(puzzle_id, threads=1):
    """The small experiments the solutions notebook quotes (``SWEEPS``), as a list of dicts."""
    rows = []
    if puzzle_id == '2.3':
        for d in SWEEPS['2.3']['d_model']:
            for seed in SWEEPS['2.3']['seed']:
                params, history = train_hello_world_torch(**{**REFERENCE['2.3'], 'd_model': d,
                                                       'seed': seed})
                rows.append({'d_model': d, 'seed': seed, 'loss': float(history.losses[-1]),
                             'steps': history.steps, 'printed': hello_world_output(params),
                             'parameters': count_params(params)['n_params']})
    elif puzzle_id == '3.1':
        for mix in SWEEPS['3.1']['mix_keys']:
            params, _ = train_lookup(**REFERENCE['3.1'], mix_keys=mix, threads=threads)
            params = as_stored(params, STORE_DTYPE['3.1'])
            rows.append({'mix_keys': mix, **measure('3.1', params)})
    elif puzzle_id == '7.11':
        for seed in SWEEPS['7.11']['seed']:
            pair = {encoding: as_stored(train_offset(encoding, threads=threads,
                                                     **{**REFERENCE['7.11'], 'seed': seed})[0],
                                        STORE_DTYPE['7.11'])
                    for encoding in ('og', 'rotation')}
            scores = measure('7.11', pair)
            rows += [{'encoding': k, 'seed': seed, **scores[k]} for k in pair]
    return rows


def regenerate(puzzle_ids=('2.3', '3.1', '5.8', '7.11'), threads=1, progress=None):
    """Re-run the full reference experiments and rewrite the stored programs (needs the extra).

    Weights are stored as float32 (the harnesses of 3.1, 5.8 and 7.11 train in
    float32, so nothing is lost; 2.3 trains in float64 and is stored as such).
    """
    import torch
    from ..train.store import save_params
    for pid in puzzle_ids:
        answer, facts = reference_run(pid, 'full', threads, progress)
        facts['torch'] = torch.__version__
        if pid in SWEEPS:
            facts['sweep'] = sweep(pid, threads)
        if pid == '7.11':
            for encoding, params in answer.items():
                save_params(_stored_path(pid, f'_{encoding}'), params, facts,
                            dtype=STORE_DTYPE[pid])
        else:
            save_params(_stored_path(pid), answer, facts, dtype=STORE_DTYPE[pid])


def attention_on_next(params, lengths=(5, 12, 27), rows=50, seed=1):
    """Per head: mean attention weight that each output step of Sort puts on the next number.

    Teacher-forced rows of ``sort_batch``; at every answer position the weight on
    the prompt position holding the number to print next, averaged.  The
    hand-built Sort of Chapter 5 has one head that puts nearly all its weight
    there; a trained model may share the work among heads.
    """
    from ..trace import trace
    rng = np.random.default_rng(seed)
    total, steps = 0.0, 0
    for k in lengths:
        tokens, targets = sort_batch(rng, rows, length=k)
        attn = trace(tokens, params).attn[-1]                     # (rows, heads, n, n)
        for t in range(k, 2 * k):
            here = tokens[:, :k] == targets[:, t, None]          # (rows, k)
            total = total + (attn[:, :, t, :k] * here[:, None, :]).sum(-1).sum(0)
            steps += rows
    return (np.asarray(total) / steps).tolist()
