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
BETAS = (0.9, 0.999)         # Adam's, every run


def lag_name(lags):
    """The name of a lag set in ``LAG_SETS``: ``(1, 2, 3)`` -> ``'{1,2,3}'``."""
    lags = tuple(int(k) for k in lags)
    for name, value in LAG_SETS.items():
        if value == lags:
            return name
    raise ValueError(f'lag_name: lags must be one of {list(LAG_SETS.values())}; got {list(lags)}')


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
                d_model=D_MODEL, d_head=D_HEAD, progress=None, schedule='cosine', warmup=100,
                clip=1.0, weight_decay=0.0, device=None):
    """Train a ``'standard'`` or ``'disentangled'`` model on the lag set; needs PyTorch.

    Returns ``(weights, history)``: a params dict (standard) or
    ``{'A': [(H, d, d) arrays], 'readout': (d, S)}`` (disentangled), float64.
    Adam (betas 0.9, 0.999; ``weight_decay`` 0 by default), float32, a fresh
    batch of ``batch`` sequences of ``length`` tokens every step, gradients
    clipped to norm ``clip`` (``None``: no clipping), on ``device`` (default CPU;
    the batches are drawn with NumPy there and moved).
    """
    from .. import train as tr
    torch = tr.require_torch('train_model')
    P = task_matrix()
    model = new_model(kind, heads, d_model, d_head, seed, length)
    history = tr.train(model, lambda rng: next_token_batch(P, lags, batch, rng=rng,
                                                           length=length),
                       steps, lr=lr, betas=BETAS, warmup=warmup, schedule=schedule, clip=clip,
                       weight_decay=weight_decay, seed=seed, threads=threads,
                       progress=progress, device=device)
    return weights_of(kind, model.cpu()), history


def new_model(kind, heads, d_model=D_MODEL, d_head=D_HEAD, seed=0, length=T):
    """A float32 PyTorch model of either kind at its seeded starting point; needs PyTorch."""
    from .. import train as tr
    torch = tr.require_torch('new_model')
    if kind == 'standard':
        return tr.Model(standard_start(heads, d_model, d_head, seed, length), dtype=torch.float32)
    if kind == 'disentangled':
        return tr.DisentangledModel(S, length, tuple(heads), rng=np.random.default_rng(seed),
                                    dtype=torch.float32)
    raise ValueError(f"new_model: kind must be 'standard' or 'disentangled'; got {kind!r}")


def weights_of(kind, model):
    """The trained weights of a model made by ``new_model`` (float64 NumPy, on the CPU)."""
    if kind == 'standard':
        return model.to_params()
    return {'A': [a.detach().cpu().double().numpy() for a in model.A],
            'readout': model.readout.detach().cpu().double().numpy()}


def probs(kind, weights, X, length=T):
    """Next-token laws of trained ``weights`` of either kind (NumPy, chunked)."""
    X = np.asarray(X)
    if kind == 'standard':
        return np.concatenate([standard_probs(weights, X[i:i + 100])
                               for i in range(0, len(X), 100)])
    layers, readout = blocks_from_arrays(weights['A'], weights['readout'])
    return disentangled_probs(layers, readout, X, length)


# ----------------------------------------------------------------------------- evaluation

EQ1 = 'eq. (1), beta = 100'      # the name of the paper's formula among the references


def reference_curves(P, lags, X, true):
    """KL curves of BMA, ML, the construction with K heads and with 1 head, and eq. (1).

    "construction" is the book's network (Chapter 10's three layers as ``lam``
    grows, ``construction_predictive``) with beta = 100; ``EQ1`` is the paper's
    formula (Proposition 1: one softmax over the mean normalised transitions,
    ``prop1_predictive``) at the same beta.  The network sums one mean per
    head, so it weighs the evidence as eq. (1) would at about heads x beta.
    """
    one = sel.plan_heads(lags, heads=1)
    full = sel.plan_heads(lags)
    return sel.kl_curves(P, lags, X, true, {
        f'construction, {len(full.classes)} heads': sel.construction_predictive(
            P, lags, X, BETA, full),
        'construction, 1 head': sel.construction_predictive(P, lags, X, BETA, one),
        EQ1: sel.prop1_predictive(P, lags, X, BETA)})


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
    ('std {1,3} [1,1,1]', 'standard', '{1,3}', (1, 1, 1)),
    ('std {3,5,7} [1,3,1]', 'standard', '{3,5,7}', (1, 3, 1)),
    ('dis {3,5,7} [1,3,1]', 'disentangled', '{3,5,7}', (1, 3, 1)),
    # the main model again with four times the steps: how far does more compute go?
    ('std {1,2,3} [1,3,1] x4', 'standard', '{1,2,3}', (1, 3, 1)),
    ('std {3,5,7} [1,3,1] x4', 'standard', '{3,5,7}', (1, 3, 1)),
    ('std {1,2,3} [3,3] x4', 'standard', '{1,2,3}', (3, 3)),
)
LONGER = {name: 4 for name, *_ in EXPERIMENTS if name.endswith(' x4')}   # step multipliers (full)
# the main model of {1,2,3} again at the same budget: two more seeds, no clipping, width 128
# (experiment, seed, settings, tag); ``run`` trains them after ``EXPERIMENTS``
VARIANTS = (('std {1,2,3} [1,3,1]', 1, None, None), ('std {1,2,3} [1,3,1]', 2, None, None),
            ('std {1,2,3} [1,3,1]', 0, {'clip': None}, 'noclip'),
            ('std {1,2,3} [1,3,1]', 0, {'d_model': 128}, 'd128'))
# weights small enough to commit (standard models; a disentangled [1,3,1] network at T = 128
# has 1.4 million entries, so only its curves and attention maps are kept)
KEEP_WEIGHTS = ('std {1,2,3} [1,3,1]', 'std {1,2,3} [1,3,1] x4', 'std {3,5,7} [1,3,1]',
                'std {3,5,7} [1,3,1] x4')

SIZES = {
    'full': dict(standard=dict(steps=3000, batch=32, lr=3e-3, warmup=100, schedule='cosine',
                               clip=1.0),
                 disentangled=dict(steps=1000, batch=16, lr=3e-3, warmup=100, schedule='cosine',
                                   clip=1.0),
                 length=T, n_eval=EVAL_SEQUENCES),
    'smoke': dict(standard=dict(steps=3, batch=4, lr=3e-3, warmup=1, schedule='cosine', clip=1.0),
                  disentangled=dict(steps=2, batch=2, lr=3e-3, warmup=1, schedule='cosine',
                                    clip=1.0),
                  length=16, n_eval=8),
}
# the keywords of ``train_model`` a ``settings`` dict may override
SETTINGS = ('steps', 'batch', 'lr', 'warmup', 'schedule', 'clip', 'weight_decay', 'd_model')


def file_name(name):
    """``'std {1,2,3} [1,3,1]'`` -> ``'std_123_131'``, a file stem (later words: ``_word``)."""
    kind, lags, heads = name.split(' ')[:3]
    suffix = ''.join('_' + part for part in name.split(' ')[3:])
    digits = ''.join(c for c in lags if c.isdigit()) if '...' not in lags else '1to5'
    return f'{kind}_{digits}_{"".join(c for c in heads if c.isdigit())}{suffix}'


def seeded_name(name, seed):
    """The stored name of experiment ``name`` trained from ``seed``: seed 0 keeps the name."""
    return name if seed == 0 else f'{name} s{seed}'


def base_name(stored_name):
    """The experiment behind a stored name (``'std {1,2,3} [1,3,1] s1'``: seed suffix off)."""
    words = stored_name.split(' ')
    if len(words) > 3 and words[-1][:1] == 's' and words[-1][1:].isdigit():
        return ' '.join(words[:-1])
    return stored_name


def run_one(name, size='full', out=None, seed=0, threads=1, progress=None, *, device=None,
            settings=None, tag=None):
    """Train and evaluate one experiment of ``EXPERIMENTS``; returns its result dict.

    The result holds the settings (``steps``, ``batch``, ``lr``, ``schedule``,
    ``warmup``, ``clip``, ``weight_decay``, ``seed``, ...), the CPU and wall time, the
    training loss (every 10th step), the KL curve on the evaluation set and its
    summaries; for {3,5,7} also the attention maps on ``fig5_sequence``.
    ``settings`` overrides the size's training settings (keys in ``SETTINGS``)
    and ``tag`` names the change (``'d128'``, ``'noclip'``); the result's
    ``name`` is ``seeded_name(name + ' ' + tag, seed)``, its ``experiment`` the
    plain ``name``.  ``device`` is where it trains (default CPU).  Standard models of
    ``KEEP_WEIGHTS`` (any size but ``full``: all) are saved to
    ``out/ch11_<file_name>.npz`` (float32).
    """
    known = {e[0]: e for e in EXPERIMENTS}
    if name not in known:
        raise ValueError(f'run_one: no experiment named {name!r}; known: {list(known)}')
    if size not in SIZES:
        raise ValueError(f'run_one: size must be one of {list(SIZES)}; got {size!r}')
    unknown = sorted(set(settings or {}) - set(SETTINGS))
    if unknown:
        raise ValueError(f'run_one: settings keys must be among {list(SETTINGS)}; got {unknown}')
    _, kind, lag_name, heads = known[name]
    lags, cfg = LAG_SETS[lag_name], SIZES[size]
    length = cfg['length']
    chosen = dict(cfg[kind])
    if size == 'full':
        chosen['steps'] *= LONGER.get(name, 1)
    chosen.update(settings or {})
    chosen.setdefault('weight_decay', 0.0)
    if kind == 'standard':
        chosen.setdefault('d_model', D_MODEL)
    start, cpu = time.perf_counter(), time.process_time()
    weights, history = train_model(kind, lags, heads, seed=seed, threads=threads, length=length,
                                   progress=progress, device=device, **chosen)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    P = task_matrix()
    X, true = evaluation_set(P, lags, cfg['n_eval'], length=length)
    curve = model_curve(P, lags, X, true, probs(kind, weights, X, length))
    stored_name = seeded_name(f'{name} {tag}' if tag else name, seed)
    result = {'name': stored_name, 'experiment': name, 'tag': tag, 'kind': kind,
              'lags': list(lags),
              'heads': list(heads), 'size': size, 'seed': seed, 'threads': threads,
              'device': str(device or 'cpu'), 'train_seconds': round(seconds, 1),
              'train_cpu_seconds': round(cpu, 1), **chosen, 'betas': list(BETAS),
              'dtype': 'float32', 'length': length,
              'loss_every_10': [round(float(v), 5) for v in history.losses[::10]],
              'kl': [float(v) for v in curve], 'summary': summary(curve, min(64, length // 2))}
    if lag_name == '{3,5,7}':
        seq = fig5_sequence(P, min(48, length))
        result['maps'] = [np.round(m, 4).tolist() for m in
                          attention_maps(kind, weights, seq, length)]
    if out is not None and kind == 'standard' and (name in KEEP_WEIGHTS or size != 'full'):
        from ..train.store import save_params
        from pathlib import Path
        save_params(Path(out) / f'ch11_{file_name(stored_name)}.npz', weights,
                    meta={'name': stored_name, 'size': size}, dtype='float32')
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


def run(size='full', out=None, names=None, seed=0, threads=1, progress=None, file=None, *,
        device=None, settings=None, tag=None):
    """Run the experiments ``names`` (default: all, then ``VARIANTS``), adding each result to
    ``out/<file>``.

    ``file`` defaults to ``ch11_selective_<size>.json``; results already in it are
    kept (a run of seed ``s > 0`` is stored as ``seeded_name(name, s)``); ``device``,
    ``settings`` and ``tag`` go to ``run_one``.  The file also holds the reference
    curves (``references``).
    """
    import json
    from pathlib import Path
    stored = {'runs': {}}
    path = None if out is None else Path(out) / (file or f'ch11_selective_{size}.json')
    if path is not None and path.exists():
        stored = json.loads(path.read_text())
    if 'references' not in stored:
        stored['references'] = references(size)
    todo = [(name, seed, settings, tag) for name in names] if names else \
        [(e[0], seed, settings, tag) for e in EXPERIMENTS] + list(VARIANTS)
    for name, run_seed, run_settings, run_tag in todo:
        result = run_one(name, size, out, run_seed, threads, progress, device=device,
                         settings=run_settings, tag=run_tag)
        stored['runs'][result['name']] = result
        if path is not None:
            path.write_text(json.dumps(stored, separators=(',', ':')))
    return stored


# ----------------------------------------------------------------------------- the paper's claims

# The rules of the three states, written once and quoted in every row:
#   holds         the measured number meets the claim's rule;
#   contradicted  it misses the rule in runs that finished training at the paper's settings
#                 (batch 256, Adam at 1e-3 constant, no clipping, trained until flat or
#                 30,000 steps; ``finished``), so more training would not change it;
#   not reached   it misses the rule and no run finished: the budget, not the claim, is open;
#   not run       no run of ours tests it (the row says why).
STATES = ('holds', 'not reached', 'contradicted', 'not run')
CLOSE = 1.5      # "matches the construction": all-position KL at most 1.5 times the construction's
GAIN = 0.10      # "helps" / "adds little": the all-position KL changes by 10 % or more / less
SHORT = (4, 16)  # "short sequence lengths" of the two-lag claim: tokens seen 4 to 16

# per lag set, the heads of the main model (the construction's number in layer 2) and its run
MAIN_HEADS = {'{1,2,3}': (1, 3, 1), '{1,3,4}': (1, 4, 1), '{1,...,5}': (1, 5, 1),
              '{1,3}': (1, 2, 1), '{3,5,7}': (1, 3, 1)}
MAIN_RUNS = {'{1,2,3}': 'std {1,2,3} [1,3,1]', '{1,3,4}': 'std {1,3,4} [1,4,1]',
             '{1,...,5}': 'std {1,...,5} [1,5,1]', '{1,3}': 'std {1,3} [1,2,1]',
             '{3,5,7}': 'std {3,5,7} [1,3,1]'}

D_ANGELO, CHO = "D'Angelo et al.", 'Cho et al.'


class Claim(tuple):
    """One row: ``(claim, measured, state, rule, words, source, why)``; the third is the state."""
    __slots__ = ()
    fields = ('claim', 'measured', 'state', 'rule', 'words', 'source', 'why')

    def __new__(cls, claim, measured, state, rule, words, source, why=''):
        if state not in STATES:
            raise ValueError(f'Claim: state must be one of {STATES}; got {state!r}')
        return super().__new__(cls, (claim, measured, state, rule, words, source, why))

    def __getattr__(self, name):
        if name in Claim.fields:
            return self[Claim.fields.index(name)]
        raise AttributeError(name)

    def with_why(self, why):
        """The same row with another ``why``."""
        return Claim(*self[:6], why)


def construction_key(references, lag_name):
    """The name of the K-head construction's curve among a lag set's references."""
    return next(k for k in references[lag_name] if k.startswith('construction')
                and k != 'construction, 1 head')


def all_kl(stored, name):
    """All-position KL of a stored run, or of a reference curve ``(lag_name, key)``."""
    if isinstance(name, tuple):
        return summary(stored['references'][name[0]][name[1]])['all']
    return stored['runs'][name]['summary']['all']


def at_paper_settings(run):
    """True for a run at the paper's optimiser settings (batch 256, Adam 1e-3 constant, no
    clipping, no weight decay)."""
    return (run.get('batch') == 256 and run.get('lr') == 1e-3 and
            run.get('schedule') == 'constant' and run.get('clip') is None and
            not run.get('weight_decay'))


def finished(run):
    """True for a run at the paper's settings that trained until flat or for 30,000 steps."""
    return at_paper_settings(run) and (run.get('flat_at') is not None or
                                       run.get('steps', 0) >= 30000)


def model_runs(stored, paper, kind, lag_name, heads, d_model=D_MODEL):
    """``(deciding, others)``: the runs of one model (kind, lag set, heads, width).

    Runs that finished at the paper's settings decide when there are any;
    otherwise the runs with the most training sequences (steps x batch) decide,
    CPU runs and unfinished runs at the paper's settings alike.
    """
    def same(r):
        return (r['kind'] == kind and list(r['heads']) == list(heads) and
                tuple(r['lags']) == LAG_SETS[lag_name] and
                (kind != 'standard' or r.get('d_model', D_MODEL) == d_model))
    mine = [(n, r) for n, r in stored['runs'].items() if same(r)]
    mine += [(n, r) for n, r in ((paper or {}).get('runs') or {}).items() if same(r)]
    if not mine:
        return [], []
    done = [(n, r) for n, r in mine if finished(r)]
    if done:
        deciding = done
    else:
        most = max(r['steps'] * r['batch'] for _, r in mine)
        deciding = [(n, r) for n, r in mine if r['steps'] * r['batch'] == most]
    return deciding, [(n, r) for n, r in mine if (n, r) not in deciding]


def _budget_key(run):
    """Runs that finished at the paper's settings share one budget (each trained until flat
    or 30,000 steps); any other run's budget is its steps, batch, rate, schedule, clipping."""
    if finished(run):
        return ('paper settings, finished',)
    return (run['steps'], run['batch'], run['lr'], run['schedule'], run['clip'])


def common_budget(groups):
    """The training budget every group of runs was trained at, and each group's runs at it.

    ``groups``: lists of ``(name, run)``.  Among the budgets shared by all groups
    (``_budget_key``), finished runs at the paper's settings come first, then the
    most sequences; returns ``None`` when the groups share none.
    """
    shared = set.intersection(*[{_budget_key(r) for _, r in g} for g in groups]) if groups \
        else set()
    if not shared:
        return None
    best = max(shared, key=lambda k: (len(k) == 1, k[0] * k[1] if len(k) > 1 else 0))
    return [[(n, r) for n, r in g if _budget_key(r) == best] for g in groups]


def _every_run(stored, paper, kind, lag_name, heads, d_model=D_MODEL):
    deciding, others = model_runs(stored, paper, kind, lag_name, heads, d_model)
    return deciding + others


def _budget(runs):
    r = runs[0][1]
    where = 'paper settings' if at_paper_settings(r) else \
        f'lr {r["lr"]:g} {r["schedule"]}, clip {r["clip"]}'
    seeds = sorted(r['seed'] for _, r in runs)
    return (f'{r["steps"]:,} steps x {r["batch"]}, {where}, seed{"s" if len(seeds) > 1 else ""} '
            f'{",".join(map(str, seeds))}')


def _state(ok, runs):
    """'holds' when ``ok``; else 'contradicted' if every deciding run finished, 'not reached'."""
    if ok:
        return 'holds'
    return 'contradicted' if runs and all(finished(r) for _, r in runs) else 'not reached'


def _why(state, runs):
    if state == 'not reached':
        r = runs[0][1]
        return (f'no run finished: {r["steps"]:,} steps of {r["batch"]} sequences' +
                ('' if at_paper_settings(r) else ", not the paper's settings"))
    if state == 'contradicted':
        return 'every deciding run finished at the paper\'s settings and misses the rule'
    return ''


def _kl(run):
    return run['summary']['all']


def _median(values):
    return float(np.median(values))


def _not_run(claim, words, source, why):
    return Claim(claim, '-', 'not run', '-', words, source, why)


def _match_row(stored, paper, kind, lag_name, heads, d_model, words, source):
    """A "matches the construction" row: the median over the deciding runs' seeds of
    all-position KL / the construction's, at most ``CLOSE``."""
    refs = stored['references'][lag_name]
    net = summary(refs[construction_key(stored['references'], lag_name)])['all']
    eq1 = summary(refs[EQ1])['all'] if EQ1 in refs else float('nan')
    label = ('std' if kind == 'standard' else 'dis') + f' {lag_name} ' + \
        f'[{",".join(map(str, heads))}]' + (f' d{d_model}' if kind == 'standard' else '')
    claim = f'trained {label} matches the construction'
    rule = (f'holds if the median over seeds of (all-position KL / the network\'s) is '
            f'<= {CLOSE}')
    deciding, others = model_runs(stored, paper, kind, lag_name, heads, d_model)
    if not deciding:
        return _not_run(claim, words, source, 'no run of this model')
    ratio = _median([_kl(r) for _, r in deciding]) / net
    state = _state(ratio <= CLOSE, deciding)
    measured = (f'{ratio:.2f}x the network ({net:.4f}), {ratio * net / eq1:.2f}x eq. (1) '
                f'({eq1:.4f}) at {_budget(deciding)}')
    if others:
        measured += '; also ' + ', '.join(
            f'{_kl(r) / net:.2f}x ({r["steps"]:,} x {r["batch"]}'
            f'{", paper settings" if at_paper_settings(r) else ""}, seed {r["seed"]}'
            f'{", " + r["tag"] if r.get("tag") else ""})' for _, r in others)
    return Claim(claim, measured, state, rule, words, source, _why(state, deciding))


def _sweep_rows(stored, paper, lag_name, hs):
    """Two rows of the heads sweep ``[1,h,1]`` on a lag set, compared at one budget: up to K
    heads, and beyond K."""
    K = len(LAG_SETS[lag_name])
    source, words = 'App., Fig. 6 right', '"closer to the maximum likelihood"'
    found = {h: _every_run(stored, paper, 'standard', lag_name, (1, h, 1)) for h in hs}
    up, beyond = [h for h in hs if h <= K], [h for h in hs if h > K]
    rows = []
    claim_up = f'on {lag_name}, each head in layer 2 up to K = {K} lowers the KL'
    rule_up = (f'holds if each added head up to K lowers the all-position KL by >= {GAIN:.0%}'
               f' (same budget); contradicted if one raises it by >= {GAIN:.0%} after '
               f'finished runs')
    same = common_budget([found[h] for h in up]) if all(found[h] for h in up) else None
    if same:
        kls = [_median([_kl(r) for _, r in g]) for g in same]
        runs = [x for g in same for x in g]
        ok = all(b <= (1 - GAIN) * a for a, b in zip(kls, kls[1:]))
        bad = any(b >= (1 + GAIN) * a for a, b in zip(kls, kls[1:]))
        state = 'holds' if ok else ('contradicted' if bad and all(finished(r) for _, r in runs)
                                    else 'not reached')
        rows.append(Claim(claim_up, ' > '.join(f'{v:.4f}' for v in kls) +
                          f' (h = {", ".join(map(str, up))}; {_budget(same[-1])})',
                          state, rule_up, words, source,
                          '' if state == 'holds' else _why(state, same[-1])))
    else:
        rows.append(_not_run(claim_up, words, source, 'not every [1,h,1] run exists at one '
                             'budget: the GPU preset trains them'))
    claim_more = f'on {lag_name}, heads beyond K = {K} add little'
    words_more = '"adding more heads does not improve performance"'
    same = common_budget([found[h] for h in [K] + beyond]) if beyond and \
        all(found[h] for h in [K] + beyond) else None
    if same:
        kK = _median([_kl(r) for _, r in same[0]])
        extra = [_median([_kl(r) for _, r in g]) for g in same[1:]]
        runs = [x for g in same[1:] for x in g]
        state = _state(all(v > (1 - GAIN) * kK for v in extra), runs)
        rows.append(Claim(claim_more, ', '.join(f'[1,{h},1] {v:.4f}' for h, v in
                                                zip(beyond, extra)) + f' vs [1,{K},1] {kK:.4f}'
                          f' ({_budget(same[0])})', state,
                          f'holds if no run beyond K is {GAIN:.0%} below K heads (same budget)',
                          words_more, source, _why(state, runs)))
    else:
        rows.append(_not_run(claim_more, words_more, source, 'not every [1,h,1] run exists at '
                             'one budget: the GPU preset trains them'))
    return rows


MAP_SHARE = 0.6   # a trained layer "matches": >= 60 % of its weight on the construction's keys
MAP_R = 0.9       # layer 1 "proportional to log P*": correlation of at least 0.9


def logp_correlation(layer1, tokens, P, lags):
    """Pearson r between a layer-1 map's log weights on the keys ``q - k`` (k in ``lags``) and
    ``log P[x_{q-k}, x_q]``, both centred per query (queries whose lag keys all hold >= 1e-3).

    The construction's layer 1 weighs key ``q - k`` in proportion to ``P[x_{q-k}, x_q]``,
    so its r is 1.
    """
    P, layer1, tokens = np.asarray(P), np.asarray(layer1), np.asarray(tokens)
    xs, ys = [], []
    for q in range(max(lags), len(tokens)):
        keys = [q - k for k in lags]
        w = layer1[q, keys]
        if (w >= 1e-3).all():
            lp = np.log(P[tokens[keys], tokens[q]])
            xs += list(np.log(w) - np.log(w).mean())
            ys += list(lp - lp.mean())
    return float(np.corrcoef(xs, ys)[0, 1]) if len(xs) > 2 else float('nan')


def map_scores(maps, P, lag_name, tokens):
    """Per layer, the share of a run's map on the construction's keys (queries from ``max(lags)``
    on) and the share of evenly spread attention, and layer 1's ``logp_correlation``."""
    from .attention import mass_on_support, uniform_share
    lags = LAG_SETS[lag_name]
    cons = construction_maps(P, lags, tokens, len(tokens))
    start = max(lags)
    return {'share': [float(mass_on_support(np.asarray(m)[None], c[None], start)[0])
                      for m, c in zip(maps, cons)],
            'even': [uniform_share(c[None], start) for c in cons],
            'r_logp': logp_correlation(maps[0], tokens, P, lags)}


def _map_rows(stored, paper):
    """The rows of Fig. 5 ({3,5,7}): maps are compared only on runs within ``CLOSE`` of the
    construction; the others say 'not reached'."""
    lag_name = '{3,5,7}'
    net = summary(stored['references'][lag_name][construction_key(stored['references'],
                                                                    lag_name)])['all']
    runs = [(n, r) for kind, d in (('standard', D_MODEL), ('disentangled', None))
            for n, r in _every_run(stored, paper, kind, lag_name, (1, 3, 1), d)]
    learned = [(n, r) for n, r in runs if _kl(r) <= CLOSE * net and r.get('maps')]
    P = task_matrix()
    source = 'Sec. 6, Fig. 5'
    specs = [
        ('layers 1 and 3 of trained models on {3,5,7} match the construction',
         '"nearly identical between the trained and theoretical models"',
         f'holds if layers 1 and 3 put >= {MAP_SHARE:.0%} of their weight on the '
         f'construction\'s keys (> 3x even) in every run within {CLOSE}x',
         lambda sc: sc['share'][0] >= MAP_SHARE and sc['share'][2] >= MAP_SHARE and
         sc['share'][0] > 3 * sc['even'][0] and sc['share'][2] > 3 * sc['even'][2],
         lambda sc: f'layer 1 {sc["share"][0]:.0%}, layer 3 {sc["share"][2]:.0%}'),
        ('trained layer-1 attention is proportional to log P*', '"proportional to log P*"',
         f'holds if the centred log weights on the lag keys correlate with log P* at '
         f'r >= {MAP_R} in every run within {CLOSE}x',
         lambda sc: sc['r_logp'] >= MAP_R, lambda sc: f'r = {sc["r_logp"]:.2f}'),
        ('trained layer 2 shows the construction\'s diagonals',
         '"a clear diagonal pattern emerges"',
         f'holds if layer 2 closes half the gap from the even share to all of its weight on '
         f'the construction\'s keys, in every run within {CLOSE}x',
         lambda sc: sc['share'][1] >= (1 + sc['even'][1]) / 2,
         lambda sc: f'layer 2 {sc["share"][1]:.0%} (even {sc["even"][1]:.0%})')]
    rows = []
    for claim, words, rule, ok, show in specs:
        if not learned:
            best = min((_kl(r) / net for _, r in runs), default=float('nan'))
            rows.append(Claim(claim, f'no {lag_name} run within {CLOSE}x of the construction '
                              f'(best {best:.2f}x)', 'not reached', rule, words, source,
                              f'the trained {lag_name} models did not learn the task, so '
                              'their maps are not compared'))
            continue
        scores = [(n, r, map_scores(r['maps'], P, lag_name, maps_tokens(P, lag_name,
                                                                        len(r['maps'][0]))))
                  for n, r in learned]
        good = all(ok(sc) for _, _, sc in scores)
        state = _state(good, [(n, r) for n, r, _ in scores])
        rows.append(Claim(claim, '; '.join(f'{n}: {show(sc)}' for n, _, sc in scores), state,
                          rule, words, source, _why(state, [(n, r) for n, r, _ in scores])))
    return rows


def maps_tokens(P, lag_name, n=48):
    """The sequence the stored maps of a lag set are drawn on: ``fig5_sequence`` for {3,5,7},
    else a sequence whose true lag is the set's middle lag (seed 3)."""
    if lag_name == '{3,5,7}':
        return fig5_sequence(P, n)
    lags = LAG_SETS[lag_name]
    X, _ = sel.sample_batch(P, lags, n, 1, rng=np.random.default_rng(3),
                            lag=lags[len(lags) // 2])
    return X[0]


def claims(stored, paper=None):
    """D'Angelo et al.'s claims about trained models next to what our runs measure.

    Rows are ``Claim`` tuples ``(claim, measured, state, rule, words, source, why)``:
    the state is one of ``STATES`` (see the rules above), ``rule`` the test of the
    row, ``words`` a short quotation of the paper and ``source`` where it says so.
    ``stored``: ``load_selective()``; ``paper``: runs at the paper's settings
    (``load_paper()``), which decide a row when they exist.  KLs are all-position
    means; ratios divide by the book's network (the construction with K heads);
    eq. (1) at beta = 100 is printed beside it.
    """
    rows = []
    sec6 = 'Sec. 6, Fig. 4'
    words = '"match the performance of the theoretical construction"'
    for lag_name, heads in MAIN_HEADS.items():
        rows.append(_match_row(stored, paper, 'standard', lag_name, heads, 64, words, sec6))
    for lag_name, heads in (('{1,2,3}', (1, 3, 1)), ('{3,5,7}', (1, 3, 1))):
        rows.append(_match_row(stored, paper, 'disentangled', lag_name, heads, None, words,
                               sec6))
    for lag_name, heads in (('{1,3,4}', (1, 4, 1)), ('{1,...,5}', (1, 5, 1)),
                            ('{1,3}', (1, 2, 1))):
        row = _match_row(stored, paper, 'disentangled', lag_name, heads, None, words, sec6)
        rows.append(row if row.state != 'not run' else row.with_why(
            'not trained: a disentangled network of this size costs too much on a CPU'))
    width = '"we tested embedding sizes of 64 and 128"'
    for lag_name, heads in MAIN_HEADS.items():
        row = _match_row(stored, paper, 'standard', lag_name, heads, 128, width, 'Sec. 6, Setup')
        rows.append(row if row.state != 'not run' else row.with_why(
            'not trained at width 128 on a CPU (the GPU preset has it)'))

    # one head: better than the one-head construction
    one = summary(stored['references']['{1,2,3}']['construction, 1 head'])['all']
    for kind in ('standard', 'disentangled'):
        label = f'{"std" if kind == "standard" else "dis"} {{1,2,3}} [1,1,1]'
        claim = f'with one head, trained {label} beats the one-head construction'
        deciding, _ = model_runs(stored, paper, kind, '{1,2,3}', (1, 1, 1))
        if not deciding:
            rows.append(_not_run(claim, '"perform better than the construction"', 'Sec. 6',
                                 'no run of this model'))
            continue
        kl = _median([_kl(r) for _, r in deciding])
        state = _state(kl < one, deciding)
        rows.append(Claim(claim, f'{kl:.4f} vs {one:.4f} at {_budget(deciding)}', state,
                          'holds if its all-position KL is below the one-head construction\'s',
                          '"perform better than the construction"', 'Sec. 6',
                          _why(state, deciding)))

    # two lags: one head is enough; closer to BMA than to ML at short lengths
    refs13 = stored['references']['{1,3}']
    net13 = summary(refs13[construction_key(stored['references'], '{1,3}')])['all']
    deciding, _ = model_runs(stored, paper, 'standard', '{1,3}', (1, 1, 1))
    claim = 'on {1,3}, one head is enough: trained std {1,3} [1,1,1] matches the construction'
    words13 = '"one head is enough for two lags"'
    if deciding:
        ratio = _median([_kl(r) for _, r in deciding]) / net13
        two, _ = model_runs(stored, paper, 'standard', '{1,3}', (1, 2, 1))
        extra = f'; two heads {_median([_kl(r) for _, r in two]) / net13:.2f}x' if two else ''
        state = _state(ratio <= CLOSE, deciding)
        rows.append(Claim(claim, f'{ratio:.2f}x the network ({net13:.4f}) at '
                          f'{_budget(deciding)}{extra}', state,
                          f'holds if its all-position KL is at most {CLOSE} x the network\'s',
                          words13, 'Fig. 4 (caption)', _why(state, deciding)))
    else:
        rows.append(_not_run(claim, words13, 'Fig. 4 (caption)', 'no run of this model'))
    lo, hi = SHORT
    bma, ml = (float(np.mean(refs13[k][lo - 1:hi])) for k in ('BMA', 'ML'))
    for heads in ((1, 1, 1), (1, 2, 1)):
        label = f'std {{1,3}} [{",".join(map(str, heads))}]'
        claim = f'on {{1,3}}, trained {label} is closer to BMA than to ML at short lengths'
        deciding, _ = model_runs(stored, paper, 'standard', '{1,3}', heads)
        if not deciding:
            rows.append(_not_run(claim, '"closer to the BMA rather than the ML"', 'Sec. 6',
                                 'no run of this model'))
            continue
        mine = _median([float(np.mean(r['kl'][lo - 1:hi])) for _, r in deciding])
        state = _state(mine < (bma + ml) / 2, deciding)
        rows.append(Claim(claim, f'{mine:.4f}; BMA {bma:.4f}, ML {ml:.4f} (tokens {lo}-{hi}) '
                          f'at {_budget(deciding)}', state,
                          f'holds if its mean KL over tokens {lo}-{hi} is below the midpoint '
                          'of BMA\'s and ML\'s', '"closer to the BMA rather than the ML"',
                          'Sec. 6', _why(state, deciding)))

    # heads in layer 2 (Fig. 6 right, on {1,...,5}; our CPU sweep is on {1,2,3})
    rows += _sweep_rows(stored, paper, '{1,2,3}', (1, 2, 3, 4))
    rows += _sweep_rows(stored, paper, '{1,...,5}', (1, 2, 3, 4, 5, 6))

    # layers (Fig. 6 left): each two-layer model against [1,3,1] trained at the same budget
    words_l = '"transformers with 2 layers can\'t solve the task"'
    net123 = summary(stored['references']['{1,2,3}'][
        construction_key(stored['references'], '{1,2,3}')])['all']
    threes = _every_run(stored, paper, 'standard', '{1,2,3}', (1, 3, 1))
    for heads in ((1, 3), (3, 3), (1, 1), (3, 1)):
        label = f'std {{1,2,3}} [{heads[0]},{heads[1]}]'
        claim = f'two layers cannot solve the task: {label}'
        twos = _every_run(stored, paper, 'standard', '{1,2,3}', heads)
        same = common_budget([twos, threes]) if twos else None
        if not same:
            rows.append(_not_run(claim, words_l, 'App., Fig. 6 left',
                                 'not trained on a CPU (the GPU preset has it)'))
            continue
        two, three = (_median([_kl(r) for _, r in g]) / net123 for g in same)
        if two <= CLOSE:
            state, why = 'contradicted', f'a two-layer model came within {CLOSE}x'
        elif three <= CLOSE and all(finished(r) for _, r in same[0]):
            state, why = 'holds', ''
        elif three <= CLOSE:
            state, why = 'not reached', 'the two-layer run did not finish training'
        else:
            state, why = 'not reached', (f'neither comes within {CLOSE}x: no model of this '
                                         'budget solved the task')
        rows.append(Claim(claim, f'{two:.2f}x the network vs [1,3,1] {three:.2f}x at '
                          f'{_budget(same[0])}', state,
                          f'holds if, trained to the end, it stays above {CLOSE}x the network '
                          f'while [1,3,1] trained alike comes within; contradicted if it '
                          f'comes within', words_l, 'App., Fig. 6 left', why))
    claim = 'more than three layers do as well as three: std {1,2,3} [1,3,1,1]'
    words_4 = '"beyond 3 does not change the performance"'
    fours = _every_run(stored, paper, 'standard', '{1,2,3}', (1, 3, 1, 1))
    same = common_budget([fours, threes]) if fours else None
    if same:
        four, three = (_median([_kl(r) for _, r in g]) for g in same)
        close = abs(four - three) <= GAIN * three
        state = 'holds' if close else _state(False, same[0] + same[1])
        rows.append(Claim(claim, f'{four:.4f} vs [1,3,1] {three:.4f} at {_budget(same[0])}',
                          state, f'holds if the two all-position KLs differ by at most '
                          f'{GAIN:.0%} (same budget)', words_4, 'App., Fig. 6 left',
                          _why(state, same[0])))
    else:
        rows.append(_not_run(claim, words_4, 'App., Fig. 6 left',
                             'not trained on a CPU (the GPU preset has [1,3,1,1])'))

    # attention maps (Fig. 5): scored only on runs that learned the task
    rows += _map_rows(stored, paper)
    rows.append(_not_run('trained models learn a large beta (layer 3 near a hardmax)',
                         '"trained models learn large values of beta"', 'Sec. 4',
                         'needs converged models'))
    rows.append(_not_run('with fewer heads than lags, layers keep the construction\'s pattern',
                         '"the layers remain consistent with our theoretical construction"',
                         'App., Fig. 7', 'needs converged [1,h,1] models on {1,...,5}'))
    rows.append(_not_run('one head per layer on {1,2}: maps like the construction\'s',
                         '"a remarkable similarity between the attention maps"', 'App., Fig. 8',
                         'lag set {1,2} not trained'))
    return rows


def claims_text(rows, width=88):
    """The rows of ``claims`` as text of at most ``width`` columns: per row the state and
    the claim, then our number, the paper's words, the rule (when it differs from the row
    above) and the reason for a state other than 'holds'."""
    import textwrap
    lines, previous = [], None
    for claim, measured, state, rule, words, source, why in rows:
        lines.append(textwrap.fill(claim, width, initial_indent=f'{state:13}',
                                   subsequent_indent=' ' * 13))
        for label, text in (('measured', measured), ('paper', f'{words} ({source})'),
                            ('rule', rule if rule != previous else ''), ('why', why)):
            if text and text != '-':
                lines.append(textwrap.fill(text, width, initial_indent=f'{"":13}{label:9}',
                                           subsequent_indent=' ' * 22))
        previous = rule
    return '\n'.join(lines)
