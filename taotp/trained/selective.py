"""Chapter 11, trained side of Chapter 10: selective induction heads learned by gradient descent.

The task is Chapter 10's (``taotp.selective``) at the paper's sizes: an
alphabet of ``S = 5`` tokens, sequences of ``T = 128``, one transition matrix
``P`` for the whole task (Chapter 10's, drawn from ``default_rng(0)``), a lag
drawn per sequence from a lag set.  Two model classes, as in D'Angelo et al.:

* ``standard``: the book's architecture (``taotp.train.Model``), attention
  only (``d_ff = 0``), PreLN with the book's layer norm, learned token and
  position embeddings, ``d_model = 64``, ``d_head = 32``, heads per layer
  e.g. ``(1, 3, 1)``, an untied output embedding;
* ``disentangled``: the concatenating network of Chapter 10
  (``taotp.train.DisentangledModel``), one square matrix per head.

Training samples a fresh batch every step (cross-entropy on every next
token); evaluation computes, per position, the mean KL divergence between
the true next-token law and each predictor on a fixed seeded set of
sequences, next to BMA, ML and the construction (its exact formula with
``beta = 100``).  Everything but the ``train_*`` functions runs without PyTorch:

    >>> P = task_matrix()
    >>> X, y = next_token_batch(P, (1, 2, 3), 4, rng=np.random.default_rng(0))
    >>> X.shape, y.shape, bool((X[:, 1:] == y[:, :-1]).all())
    ((4, 128), (4, 128), True)
"""
import time

import numpy as np

from .. import selective as sel
from ..model import softmax
from ..decoding import transformer
from ..trace import trace

S, T = 5, 128
LAG_SETS = {'{1,2,3}': (1, 2, 3), '{1,3,4}': (1, 3, 4), '{1,...,5}': (1, 2, 3, 4, 5),
            '{1,3}': (1, 3), '{3,5,7}': (3, 5, 7)}
D_MODEL, D_HEAD = 64, 32
EVAL_SEQUENCES, EVAL_SEED = 500, 1
BETA = 100.0


def task_matrix():
    """Chapter 10's transition matrix (S = 5, normalised Uniform(0, 1) rows, seed 0)."""
    return sel.transition_matrix(S, np.random.default_rng(0))


def next_token_batch(P, lags, size, *, rng, length=T):
    """``(inputs, targets)``, both ``(size, length)``: ``length + 1`` tokens, shifted by one."""
    X, _ = sel.sample_batch(P, lags, length + 1, size, rng=rng)
    return X[:, :-1], X[:, 1:]


def evaluation_set(P, lags, n=EVAL_SEQUENCES, seed=EVAL_SEED, length=T):
    """The fixed evaluation sequences ``(tokens (n, length), true lags (n,))``."""
    return sel.sample_batch(P, lags, length, n, rng=np.random.default_rng(seed))


# ----------------------------------------------------------------------------- the models

def standard_start(heads, d_model=D_MODEL, d_head=D_HEAD, seed=0, length=T):
    """A random attention-only program (the book's architecture), ``heads[l]`` heads in layer l."""
    from ..train.init import init_params
    return init_params(S, length, d_model, n_layers=len(heads), n_heads=list(heads),
                       d_head=d_head, d_ff=0, tied=False, emb_scale=d_model ** -0.5,
                       rng=np.random.default_rng(seed))


def standard_probs(params, X):
    """``(n, T, S)`` next-token laws of a book-format program on sequences ``X`` (NumPy)."""
    return softmax(transformer(np.asarray(X), **params), axis=-1)


def disentangled_probs(layers, readout, X, length=T):
    """``(n, T, S)`` next-token laws of a disentangled network given by its blocks (NumPy)."""
    net = sel.DisentangledTransformer(S, length, layers, readout, output='log')
    return net.next_token_probs(np.asarray(X))


def blocks_from_arrays(matrices, readout):
    """Chapter 10's ``(layers, readout)`` blocks from dense per-layer ``(H, d, d)`` matrices."""
    layers = []
    for A in matrices:
        full = np.arange(A.shape[-1])
        layers.append([[(full, full, a)] for a in A])
    return layers, (np.arange(readout.shape[0]), readout)


def train_model(kind, lags, heads, steps, batch=32, lr=1e-3, seed=0, threads=1, length=T,
                d_model=D_MODEL, d_head=D_HEAD, progress=None, schedule='cosine', warmup=100):
    """Train a ``'standard'`` or ``'disentangled'`` model on the lag set; needs PyTorch.

    Returns ``(weights, history)``: a params dict (standard) or
    ``{'A': [(H, d, d) arrays], 'readout': (d, S)}`` (disentangled), float64.
    Adam without weight decay, float32, a fresh batch of ``batch`` sequences
    of ``length`` tokens every step.
    """
    from .. import train as tr
    torch = tr.require_torch('train_model')
    P = task_matrix()
    if kind == 'standard':
        model = tr.Model(standard_start(heads, d_model, d_head, seed, length),
                         dtype=torch.float32)
    elif kind == 'disentangled':
        model = tr.DisentangledModel(S, length, tuple(heads), rng=np.random.default_rng(seed),
                                     dtype=torch.float32)
    else:
        raise ValueError(f"train_model: kind must be 'standard' or 'disentangled'; got {kind!r}")
    history = tr.train(model, lambda rng: next_token_batch(P, lags, batch, rng=rng,
                                                           length=length),
                       steps, lr=lr, betas=(0.9, 0.999), warmup=warmup, schedule=schedule,
                       seed=seed, threads=threads, progress=progress)
    if kind == 'standard':
        return model.to_params(), history
    weights = {'A': [a.detach().double().numpy() for a in model.A],
               'readout': model.readout.detach().double().numpy()}
    return weights, history


def probs(kind, weights, X, length=T):
    """Next-token laws of trained ``weights`` of either kind (NumPy, chunked)."""
    X = np.asarray(X)
    if kind == 'standard':
        return np.concatenate([standard_probs(weights, X[i:i + 100])
                               for i in range(0, len(X), 100)])
    layers, readout = blocks_from_arrays(weights['A'], weights['readout'])
    return disentangled_probs(layers, readout, X, length)


# ----------------------------------------------------------------------------- evaluation

def reference_curves(P, lags, X, true):
    """KL curves of BMA, ML and the construction with K heads and with 1 head (beta = 100)."""
    one = sel.plan_heads(lags, heads=1)
    full = sel.plan_heads(lags)
    return sel.kl_curves(P, lags, X, true, {
        f'construction, {len(full.classes)} heads': sel.construction_predictive(
            P, lags, X, BETA, full),
        'construction, 1 head': sel.construction_predictive(P, lags, X, BETA, one)})


def kl_panel(stored, lag_name, names, extra=None):
    """``(title, kmax, curves)`` of one lag set: the stored references, ``extra`` curves
    (a dict, e.g. ``{'no selection': unselected_curve(...)}``) and the runs ``names``."""
    curves = dict(stored['references'][lag_name])
    curves.update(extra or {})
    curves.update({f'trained {name}': stored['runs'][name]['kl'] for name in names})
    return f'lags {lag_name}', max(LAG_SETS[lag_name]), curves


def model_curve(P, lags, X, true, predicted):
    """The mean KL(truth || predicted) at every position."""
    return sel.kl_curve(sel.true_predictive(P, lags, X, true), predicted)


def unselected_curve(P, lags, X, true):
    """The KL curve of the mixture that weighs every lag equally: it looks back, never selects."""
    from ..selective.predictors import mix
    truth = sel.true_predictive(P, lags, X, true)
    weights = np.full(np.shape(X) + (len(lags),), 1 / len(lags))
    return sel.kl_curve(truth, mix(P, lags, X, weights))


def summary(curve, late=64):
    """``{'all': mean over every position, 'late': mean over positions >= late}`` of a KL curve."""
    curve = np.asarray(curve)
    return {'all': float(curve.mean()), 'late': float(curve[late:].mean())}


def attention_maps(kind, weights, tokens, length=T):
    """Per layer, the head-averaged attention ``(n, n)`` of trained weights on one sequence."""
    tokens = np.asarray(tokens)
    if kind == 'standard':
        return [a.mean(0) for a in trace(tokens, weights).attn]
    layers, readout = blocks_from_arrays(weights['A'], weights['readout'])
    run = sel.DisentangledTransformer(S, length, layers, readout, output='log').run(tokens)
    return [a.mean(0) for a in run['attn']]


def construction_maps(P, lags, tokens, length=T):
    """Per layer, the head-averaged attention of the construction (lam 500, beta 100)."""
    net = sel.build_selective_induction(P, lags, length, lam=500.0, beta=BETA)
    return [a.mean(0) for a in net.run(np.asarray(tokens))['attn']]


def fig5_sequence(P, n=48, seed=3):
    """A sequence for the attention maps: lags {3, 5, 7}, true lag 3, ``n`` tokens."""
    X, _ = sel.sample_batch(P, (3, 5, 7), n, 1, rng=np.random.default_rng(seed), lag=3)
    return X[0]


# ----------------------------------------------------------------------------- the experiments

# (name, kind, lag set, heads per layer): the paper's Fig. 4 (every lag set, K heads in
# layer 2, standard and disentangled, plus one head), Fig. 5 ({3,5,7}) and Fig. 6
# ({1,2,3}: [1,h,1] and two layers)
EXPERIMENTS = (
    ('std {1,2,3} [1,3,1]', 'standard', '{1,2,3}', (1, 3, 1)),
    ('dis {1,2,3} [1,3,1]', 'disentangled', '{1,2,3}', (1, 3, 1)),
    ('std {1,2,3} [1,1,1]', 'standard', '{1,2,3}', (1, 1, 1)),
    ('dis {1,2,3} [1,1,1]', 'disentangled', '{1,2,3}', (1, 1, 1)),
    ('std {1,2,3} [1,2,1]', 'standard', '{1,2,3}', (1, 2, 1)),
    ('std {1,2,3} [1,4,1]', 'standard', '{1,2,3}', (1, 4, 1)),
    ('std {1,2,3} [1,3]', 'standard', '{1,2,3}', (1, 3)),
    ('std {1,2,3} [3,3]', 'standard', '{1,2,3}', (3, 3)),
    ('std {1,3,4} [1,4,1]', 'standard', '{1,3,4}', (1, 4, 1)),
    ('std {1,...,5} [1,5,1]', 'standard', '{1,...,5}', (1, 5, 1)),
    ('std {1,3} [1,2,1]', 'standard', '{1,3}', (1, 2, 1)),
    ('std {3,5,7} [1,3,1]', 'standard', '{3,5,7}', (1, 3, 1)),
    ('dis {3,5,7} [1,3,1]', 'disentangled', '{3,5,7}', (1, 3, 1)),
    # the main model again with four times the steps: how far does more compute go?
    ('std {1,2,3} [1,3,1] x4', 'standard', '{1,2,3}', (1, 3, 1)),
    ('std {3,5,7} [1,3,1] x4', 'standard', '{3,5,7}', (1, 3, 1)),
    ('std {1,2,3} [3,3] x4', 'standard', '{1,2,3}', (3, 3)),
)
LONGER = {name: 4 for name, *_ in EXPERIMENTS if name.endswith(' x4')}   # step multipliers (full)
# weights small enough to commit (standard models; a disentangled [1,3,1] network at T = 128
# has 1.4 million entries, so only its curves and attention maps are kept)
KEEP_WEIGHTS = ('std {1,2,3} [1,3,1]', 'std {1,2,3} [1,3,1] x4', 'std {3,5,7} [1,3,1]',
                'std {3,5,7} [1,3,1] x4')

SIZES = {
    'full': dict(standard=dict(steps=3000, batch=32, lr=3e-3, warmup=100),
                 disentangled=dict(steps=1000, batch=16, lr=3e-3, warmup=100),
                 length=T, n_eval=EVAL_SEQUENCES),
    'smoke': dict(standard=dict(steps=3, batch=4, lr=3e-3, warmup=1),
                  disentangled=dict(steps=2, batch=2, lr=3e-3, warmup=1), length=16, n_eval=8),
}


def file_name(name):
    """``'std {1,2,3} [1,3,1]'`` -> ``'std_123_131'`` (a file stem)."""
    kind, lags, heads = name.split(' ')[:3]
    suffix = ''.join('_' + part for part in name.split(' ')[3:])
    digits = ''.join(c for c in lags if c.isdigit()) if '...' not in lags else '1to5'
    return f'{kind}_{digits}_{"".join(c for c in heads if c.isdigit())}{suffix}'


def run_one(name, size='full', out=None, seed=0, threads=1, progress=None):
    """Train and evaluate one experiment of ``EXPERIMENTS``; returns its result dict.

    The result holds the settings, the wall time, the training loss (every
    10th step), the KL curve on the evaluation set and its summaries; for
    {3,5,7} also the attention maps on ``fig5_sequence``.  Standard models of
    ``KEEP_WEIGHTS`` are saved to ``out/ch11_<file_name>.npz`` (float32).
    """
    known = {e[0]: e for e in EXPERIMENTS}
    if name not in known:
        raise ValueError(f'run_one: no experiment named {name!r}; known: {list(known)}')
    if size not in SIZES:
        raise ValueError(f'run_one: size must be one of {list(SIZES)}; got {size!r}')
    _, kind, lag_name, heads = known[name]
    lags, cfg = LAG_SETS[lag_name], SIZES[size]
    length = cfg['length']
    settings = dict(cfg[kind])
    if size == 'full':
        settings['steps'] *= LONGER.get(name, 1)
    start, cpu = time.perf_counter(), time.process_time()
    weights, history = train_model(kind, lags, heads, seed=seed, threads=threads,
                                   length=length, progress=progress, **settings)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    P = task_matrix()
    X, true = evaluation_set(P, lags, cfg['n_eval'], length=length)
    curve = model_curve(P, lags, X, true, probs(kind, weights, X, length))
    result = {'name': name, 'kind': kind, 'lags': list(lags), 'heads': list(heads),
              'size': size, 'seed': seed, 'threads': threads, 'train_seconds': round(seconds, 1),
              'train_cpu_seconds': round(cpu, 1),
              **settings, 'length': length,
              'loss_every_10': [round(float(v), 5) for v in history.losses[::10]],
              'kl': [float(v) for v in curve], 'summary': summary(curve, min(64, length // 2))}
    if lag_name == '{3,5,7}':
        seq = fig5_sequence(P, min(48, length))
        result['maps'] = [np.round(m, 4).tolist() for m in
                          attention_maps(kind, weights, seq, length)]
    if out is not None and kind == 'standard' and (name in KEEP_WEIGHTS or size != 'full'):
        from ..train.store import save_params
        from pathlib import Path
        save_params(Path(out) / f'ch11_{file_name(name)}.npz', weights,
                    meta={'name': name, 'size': size}, dtype='float32')
    return result


def references(size='full'):
    """Per lag set, the KL curves of BMA, ML and the construction on the evaluation set."""
    cfg = SIZES[size]
    P = task_matrix()
    out = {}
    for lag_name, lags in LAG_SETS.items():
        X, true = evaluation_set(P, lags, cfg['n_eval'], length=cfg['length'])
        out[lag_name] = {k: [float(v) for v in c]
                         for k, c in reference_curves(P, lags, X, true).items()}
    return out


def run(size='full', out=None, names=None, seed=0, threads=1, progress=None, file=None):
    """Run the experiments ``names`` (default: all), adding each result to ``out/<file>``.

    ``file`` defaults to ``ch11_selective_<size>.json``; results already in it are
    kept.  The file also holds the reference curves (``references``).
    """
    import json
    from pathlib import Path
    stored = {'runs': {}}
    path = None if out is None else Path(out) / (file or f'ch11_selective_{size}.json')
    if path is not None and path.exists():
        stored = json.loads(path.read_text())
    if 'references' not in stored:
        stored['references'] = references(size)
    for name in names or [e[0] for e in EXPERIMENTS]:
        stored['runs'][name] = run_one(name, size, out, seed, threads, progress)
        if path is not None:
            path.write_text(json.dumps(stored, separators=(',', ':')))
    return stored


# ----------------------------------------------------------------------------- the paper's claims

CLOSE = 1.5     # "matches the construction": all-position KL at most 1.5 times the construction's

# per lag set, the standard model with the construction's number of heads in layer 2
MAIN_RUNS = {'{1,2,3}': 'std {1,2,3} [1,3,1]', '{1,3,4}': 'std {1,3,4} [1,4,1]',
             '{1,...,5}': 'std {1,...,5} [1,5,1]', '{1,3}': 'std {1,3} [1,2,1]',
             '{3,5,7}': 'std {3,5,7} [1,3,1]'}


def construction_key(references, lag_name):
    """The name of the K-head construction's curve among a lag set's references."""
    return next(k for k in references[lag_name] if k.startswith('construction')
                and k != 'construction, 1 head')


def all_kl(stored, name):
    """All-position KL of a stored run, or of a reference curve ``(lag_name, key)``."""
    if isinstance(name, tuple):
        return summary(stored['references'][name[0]][name[1]])['all']
    return stored['runs'][name]['summary']['all']


def claims(stored):
    """The paper's messages of Figs. 4 and 6 next to what the stored runs measure.

    Rows ``(claim, measured, holds)``; ``holds`` is True or False, decided by the
    rule the claim states (``CLOSE`` for "matches").  KLs are all-position means.
    """
    runs, refs = stored['runs'], stored['references']
    rows = []
    for lag_name, name in MAIN_RUNS.items():
        for run in (name, name + ' x4', name.replace('std', 'dis')):
            if run not in runs:
                continue
            ratio = all_kl(stored, run) / all_kl(stored, (lag_name, construction_key(refs,
                                                                                       lag_name)))
            rows.append((f'trained {run} matches the construction (ratio <= {CLOSE})',
                         f'{ratio:.2f} x the construction', ratio <= CLOSE))
    one = all_kl(stored, ('{1,2,3}', 'construction, 1 head'))
    for run in ('std {1,2,3} [1,1,1]', 'dis {1,2,3} [1,1,1]'):
        kl = all_kl(stored, run)
        rows.append((f'with one head, trained {run} beats the one-head construction',
                     f'{kl:.4f} vs {one:.4f}', kl < one))
    for run in ('std {1,2,3} [1,3]', 'std {1,2,3} [3,3]', 'std {1,2,3} [3,3] x4'):
        three = 'std {1,2,3} [1,3,1]' + (' x4' if run.endswith(' x4') else '')
        kl, kl3 = all_kl(stored, run), all_kl(stored, three)
        rows.append((f'two layers do worse than three (by > 10 %): {run} vs [1,3,1], '
                     'same steps', f'{kl:.4f} vs {kl3:.4f}', kl > 1.1 * kl3))
    by_heads = [all_kl(stored, f'std {{1,2,3}} [1,{h},1]') for h in (1, 2, 3, 4)]
    rows.append(('more heads in layer 2 help up to K = 3 heads ([1,h,1], h = 1..3)',
                 ' > '.join(f'{v:.4f}' for v in by_heads[:3]),
                 by_heads[0] > by_heads[1] > by_heads[2]))
    rows.append(('a fourth head adds little (within 1.5 x of three heads)',
                 f'{by_heads[3]:.4f} vs {by_heads[2]:.4f}',
                 by_heads[3] <= CLOSE * by_heads[2] and by_heads[2] <= CLOSE * by_heads[3]))
    return rows
