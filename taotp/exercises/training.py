"""The training puzzles (2.3, 3.1, 5.8, 7.11): tasks, harnesses and result checkers.

Each puzzle asks for a transformer *trained* by gradient descent.  This module
gives, per puzzle,

* the task as seeded NumPy data (``hello_world_task``, ``lookup_batch``,
  ``sort_batch``, ``offset_batch``), the same for training and for checking;
* a harness (``train_hello_world``, ``train_lookup``, ``train_sorter``,
  ``train_offset``) that trains the book's architecture with ``taotp.train``
  and returns ``(params, history)``: it needs the optional training extra
  (``pip install "taotp[train]"``, PyTorch), and says so if it is missing;
* a checker (``check('2.3', params)`` ...) that runs the submitted params dict
  through the package on held-out seeded inputs and reports the accuracy and
  the parameter count.  The checkers need no PyTorch: they judge the trained
  program, not how it was obtained (a hand-built program passes too).

``stored(puzzle_id)`` loads the programs the harness produced for the
solutions notebook (small ``.npz`` files in ``taotp/data``), so the notebooks
run without PyTorch; ``size='full'`` in the harnesses re-runs the full
experiments, the default ``'smoke'`` a seconds-long run for the tests.
"""
from pathlib import Path
from types import MappingProxyType

import numpy as np

from .. import encodings, hello_world, lookup, sort
from ..decoding import decode, decode_batch, last_token_argmax
from ..params import config, count_non0_params, count_params
from . import guard
from .registry import checker
from .result import Finding, Passed

DATA = Path(__file__).resolve().parent.parent / 'data'


def _train():
    """``taotp.train`` with PyTorch loaded (a clear message if the extra is missing)."""
    from .. import train
    train.require_torch('this training harness')
    return train


# ----------------------------------------------------------------------------- 2.3 Hello World

def hello_world_task(message=hello_world.HELLO_WORLD):
    """``(tokens, targets, tokenizer)``: from <bos>, print the message then <eos> (one row)."""
    tok = hello_world.message_tokenizer(message)
    targets = hello_world.hello_world_targets(message, tok)
    tokens = np.concatenate([[tok['<bos>']], targets[:-1]])
    return tokens[None], targets[None], tok


def train_hello_world(d_model=3, n_layers=0, steps=600, lr=0.05, seed=0, message=None,
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


# ----------------------------------------------------------------------------- 3.1 Lookup

LOOKUP = MappingProxyType({'n_entries': 100, 'key_len': 5, 'vocab_size': 50, 'seed': 31,
                           'prefix': 10})


def lookup_table():
    """The puzzle's table: 100 keys of 5 tokens over a vocabulary of 50 (seed 31)."""
    return lookup.random_lookup_table(LOOKUP['n_entries'], LOOKUP['key_len'],
                                      LOOKUP['vocab_size'], np.random.default_rng(LOOKUP['seed']))


def lookup_batch(rng, batch=64, ks=None, vs=None, mix_keys=True):
    """Training rows of ``prefix + key_len`` tokens with keys planted at random places.

    Each row is a stream of keys and random tokens; the target is a key's value at
    the position where that key ends (-1 elsewhere).  Keys end at every position,
    follow random tokens and other keys, so every relative offset and the
    adversarial "prefix cut from other keys" both appear in training.
    ``mix_keys=False`` plants one key per row behind random tokens only (the
    naive data set, for comparison).
    """
    if ks is None:
        ks, vs = lookup_table()
    l, vocab = ks.shape[1], LOOKUP['vocab_size']
    n = LOOKUP['prefix'] + l
    tokens = rng.integers(0, vocab, size=(batch, n))
    targets = np.full((batch, n), -1)
    if not mix_keys:
        for row in range(batch):
            end, k = int(rng.integers(l - 1, n)), int(rng.integers(0, len(ks)))
            tokens[row, end - l + 1:end + 1] = ks[k]
            targets[row, end] = vs[k]
        return tokens, targets
    for row in range(batch):
        at = int(rng.integers(0, l))          # where the first planted key starts (or earlier)
        at -= int(rng.integers(0, 2)) * at
        while at + l <= n:
            k = int(rng.integers(0, len(ks)))
            tokens[row, at:at + l] = ks[k]
            targets[row, at + l - 1] = vs[k]
            at += l + int(rng.choice([0, 0, 1, 2, 3]))
    return tokens, targets


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


# ----------------------------------------------------------------------------- 5.8 Sort

SORT_N = 28          # numbers 1..27 and the separator 0, as the hand-built Sort of Chapter 5


def sort_batch(rng, batch=64, n=SORT_N, length=None):
    """Rows ``prompt + sorted[:-1]`` for one length k (random unless given), targets on the answer.

    A prompt is ``k`` distinct numbers from 1..n-1 then 0; the model must then
    print them in increasing order.  ``targets`` are -1 on the prompt's numbers
    and the sorted numbers from the separator on (teacher forcing).
    """
    k = int(rng.integers(1, n)) if length is None else length
    prompts = sort.random_sort_inputs(n, k, batch, rng=rng)
    answer = np.sort(prompts[:, :-1], axis=1)
    tokens = np.concatenate([prompts, answer[:, :-1]], axis=1)
    targets = np.full(tokens.shape, -1)
    targets[:, k:] = answer
    return tokens, targets


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


# ----------------------------------------------------------------------------- 7.11 encodings

OFFSET = MappingProxyType({'block_size': 64, 'vocab_size': 16, 'd_model': 16})


def position_table(encoding, block_size=None, d_model=None, seed=0):
    """The fixed position table of puzzle 7.11: ``'og'`` (sinusoidal) or ``'rotation'`` (random)."""
    q = block_size or OFFSET['block_size']
    d = d_model or OFFSET['d_model']
    if encoding == 'og':
        return encodings.og_embedding(q, d)
    if encoding == 'rotation':
        return encodings.random_rotation_embedding(q, d, np.random.default_rng(seed))
    raise ValueError(f"position_table: encoding must be 'og' or 'rotation'; got {encoding!r}")


def offset_batch(rng, batch=64, delta=5, block_size=None, vocab_size=None):
    """Random rows of ``block_size`` tokens; at position i >= delta the target is token i-delta."""
    q = block_size or OFFSET['block_size']
    tokens = rng.integers(0, vocab_size or OFFSET['vocab_size'], size=(batch, q))
    targets = np.full(tokens.shape, -1)
    targets[:, delta:] = tokens[:, :-delta]
    return tokens, targets


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


# ----------------------------------------------------------------------------- measuring results
# (NumPy only: the checkers and the notebooks use these on any params dict)

def _counts(params):
    c = config(params)
    return (f'{c["n_layers"]} layer(s), d_model {c["d_model"]}, '
            f'{count_params(params)["n_params"]:,} parameters '
            f'({count_non0_params(params)["n_params"]:,} non-zero)')


def hello_world_output(params, message=hello_world.HELLO_WORLD):
    """What greedy decoding from <bos> prints (at most len(message) + 1 symbols), as a string."""
    tokens, targets, tok = hello_world_task(message)
    out = decode(tokens[0, :1], params, max_steps=targets.shape[1], eos=tok['<eos>'])
    names = {i: s for s, i in tok.items()}
    return ''.join(names.get(int(i), f'<{int(i)}>') for i in out[1:])


def _rng(rng, seed):
    return np.random.default_rng(seed) if rng is None else rng


def lookup_accuracy(params, rng=None):
    """Held-out accuracy on the puzzle's table behind every prefix length 0..10.

    Returns ``{'random': share, 'keys': share, 'leak': w}``: prefixes of random
    tokens, prefixes cut from other keys (drawn from ``rng``; the checker seeds
    it from the submission), and the largest attention weight the last position
    puts on a token before the key (over queries with 10-token prefixes; 0 would
    prove that prefixes cannot matter).
    """
    from ..trace import trace
    rng = _rng(rng, 3100)
    ks, vs = lookup_table()
    vocab = LOOKUP['vocab_size']
    out = {}
    for mode in ('random', 'keys'):
        right = 0
        for p in range(LOOKUP['prefix'] + 1):
            queries = lookup.lookup_queries(ks, p, vocab, rng, mode)
            right += int((last_token_argmax(queries, params) == vs).sum())
        out[mode] = right / (len(vs) * (LOOKUP['prefix'] + 1))
    queries = lookup.lookup_queries(ks, LOOKUP['prefix'], vocab, rng)
    attn = trace(queries, params).attn
    out['leak'] = float(max(a[..., -1, :LOOKUP['prefix']].max() for a in attn)) if attn else 0.0
    return out


ATTACK_SECONDS = 8   # the bad-prefix search of 3.1 stops here (it is reported, not judged)


def prefix_attack(params, sweeps=1, rng=None, seconds=None):
    """Search for 10-token prefixes that make the program answer a key of the table wrong.

    Greedy coordinate search: start from a random prefix per key (``rng``), then, one
    prefix position at a time, put there the token (of all 50) that most lowers
    the margin of the right value over the best other one; ``sweeps`` passes.
    Returns ``{'wrong': keys answered wrong, 'margin': smallest margin found,
    'query': one failing query (or None), 'steps': prefix positions searched,
    'of': positions there were to search}``.  Sampling prefixes can only miss such
    inputs; this search looks for them.  ``seconds`` stops it early (wide programs).
    """
    import time
    start = time.perf_counter()
    from ..model import forward
    ks, vs = lookup_table()
    vocab, p = LOOKUP['vocab_size'], LOOKUP['prefix']
    prefix = _rng(rng, 0).integers(0, vocab, size=(len(ks), p))

    def margins(queries, values):
        logits = forward(queries, **params, logits_at=-1)[:, -1]
        rows = np.arange(len(queries))
        right = logits[rows, values]
        logits[rows, values] = -np.inf
        return right - logits.max(-1)

    steps = 0
    for _ in range(sweeps):
        for pos in range(p):
            if seconds is not None and time.perf_counter() - start > seconds:
                break
            steps += 1
            trial = np.repeat(prefix[:, None], vocab, axis=1)         # (keys, vocab, p)
            trial[:, :, pos] = np.arange(vocab)
            queries = np.concatenate([trial.reshape(-1, p), np.repeat(ks, vocab, 0)], axis=1)
            m = margins(queries, np.repeat(vs, vocab)).reshape(len(ks), vocab)
            prefix[:, pos] = m.argmin(1)
    final = margins(np.concatenate([prefix, ks], axis=1), vs)
    bad = np.flatnonzero(final < 0)
    query = np.concatenate([prefix[bad[0]], ks[bad[0]]]).tolist() if len(bad) else None
    return {'wrong': int(len(bad)), 'margin': float(final.min()), 'query': query,
            'steps': steps, 'of': sweeps * p}


def sort_accuracy(params, per_length=20, n=SORT_N, rng=None):
    """Share of held-out prompts (``per_length`` of every length 1..n-1) printed exactly sorted.

    Returns ``(share, by_length)`` with ``by_length[k]`` the share at length k; the
    prompts come from ``rng`` (the checker seeds it from the submission).
    """
    rng = _rng(rng, 5800)
    by_length = {}
    for k in range(1, n):
        prompts = sort.random_sort_inputs(n, k, per_length, rng=rng)
        out = decode_batch(prompts, params, k)[:, k + 1:]
        by_length[k] = float((out == np.sort(prompts[:, :-1], axis=1)).all(axis=1).mean())
    return float(np.mean(list(by_length.values()))), by_length


def offset_accuracy(params, delta=5, rows=200, rng=None):
    """Held-out accuracy of a PostLN model copying the token ``delta`` back, on rows of 64.

    Returns ``{'inside': positions delta..31, 'beyond': positions 32..63, 'all': delta..63}``
    over ``rows`` rows drawn from ``rng``.
    """
    from ..decoding import transformer_batch
    tokens, targets = offset_batch(_rng(rng, 7110), rows, delta)
    right = transformer_batch(tokens, params, post_ln=True).argmax(-1) == targets
    half = OFFSET['block_size'] // 2
    return {'inside': float(right[:, delta:half].mean()), 'beyond': float(right[:, half:].mean()),
            'all': float(right[:, delta:].mean())}


# ----------------------------------------------------------------------------- checkers

# the held-out inputs are drawn with these seeds and a hash of the answer
SEEDS = MappingProxyType({'3.1': 31, '5.8': 58, '7.11': 711})


def measure(puzzle_id, answer):
    """What the checker measures on an answer (a params dict; 7.11: the dict of both models).

    The held-out inputs are drawn with ``guard.submission_rng``: a fixed seed and a
    hash of the submitted weights, so they cannot be known before the weights are.
    """
    if puzzle_id == '2.3':
        return {'printed': hello_world_output(answer)}
    if puzzle_id == '7.11':
        models = (answer['og'], answer['rotation'])
        return {k: offset_accuracy(answer[k], rng=guard.submission_rng(SEEDS['7.11'], *models))
                for k in ('og', 'rotation')}       # the same rows for both
    rng = guard.submission_rng(SEEDS[puzzle_id], answer)
    if puzzle_id == '3.1':
        return {**lookup_accuracy(answer, rng),
                'attack': prefix_attack(answer, rng=rng, seconds=ATTACK_SECONDS)}
    share, by_length = sort_accuracy(answer, rng=rng)
    return {'accuracy': share, 'by_length': by_length}


@checker('2.3')
def check_2_3(answer):
    """A trained (or any) program that prints "Hello World!" then <eos> from <bos>."""
    tokens, targets, tok = hello_world_task()
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], dict):
        if dict(answer[1]) != tok:           # (params, tokenizer), as the builder returns
            raise Finding(f'puzzle 2.3 uses the message tokenizer {tok}; got the tokenizer '
                          f'{dict(answer[1])}')
        answer = answer[0]
    params = guard.frozen(answer)
    if np.shape(params['tok_emb'])[0] < len(tok):
        raise Finding(f'tok_emb has {np.shape(params["tok_emb"])[0]} rows; the message '
                      f'tokenizer needs {len(tok)} (message_tokenizer("Hello World!"))')
    printed = guard.run_program(lambda: measure('2.3', params)['printed'], on='<bos>')
    want = hello_world.HELLO_WORLD + '<eos>'
    if printed != want:
        raise Finding(f'<bos>: expected {want!r}, got {printed!r}', printed)
    return Passed(f'prints "Hello World!" then <eos> from <bos> (message tokenizer); '
                  f'{_counts(params)}; the hand-built program of Chapter 2 has 72')


@checker('3.1')
def check_3_1(answer):
    """Answers the puzzle's table (100 keys) behind held-out prefixes: >= 99 % in both modes."""
    params = guard.frozen(answer)
    vocab = np.shape(params['tok_emb'])[0]
    if vocab != LOOKUP['vocab_size']:
        raise Finding(f'tok_emb has {vocab} rows; the table uses a vocabulary of '
                      f'{LOOKUP["vocab_size"]}')
    result = guard.run_program(lambda: measure('3.1', params))
    for mode, what in (('random', 'random tokens'), ('keys', 'tokens cut from other keys')):
        if result[mode] < 0.99:
            raise Finding(f'keys behind prefixes of {what} (0-10 tokens, 1,100 held-out '
                          f'queries): expected >= 99 % right, got {result[mode]:.1%}')
    attack = result['attack']
    searched = 'one pass' if attack['steps'] == attack['of'] else \
        f'{attack["steps"]} of {attack["of"]} positions within {ATTACK_SECONDS} s'
    return Passed(f'1,100 held-out queries per kind: {result["random"]:.1%} right behind random '
                  f'prefixes, {result["keys"]:.1%} behind prefixes cut from other keys; largest '
                  f'attention on a prefix token {result["leak"]:.2g}; a greedy search for bad '
                  f'prefixes ({searched}; not part of the verdict) made {attack["wrong"]} of 100 '
                  f'keys come out wrong; {_counts(params)}')


@checker('5.8')
def check_5_8(answer):
    """Sorts held-out prompts of every length 1..27 (20 each): >= 95 % exactly right."""
    params = guard.frozen(answer)
    vocab = np.shape(params['tok_emb'])[0]
    if vocab != SORT_N:
        raise Finding(f'tok_emb has {vocab} rows; the task uses 0 (separator) and 1..27, a '
                      f'vocabulary of {SORT_N}')
    result = guard.run_program(lambda: measure('5.8', params))
    share, by_length = result['accuracy'], result['by_length']
    worst = min(by_length, key=by_length.get)
    if share < 0.95:
        raise Finding(f'540 held-out prompts (20 of each length 1..27): expected >= 95 % sorted '
                      f'exactly, got {share:.1%} (worst at length {worst}: '
                      f'{by_length[worst]:.0%})', by_length)
    worst = 'every length 100 %' if by_length[worst] == 1 else \
        f'worst length {worst}: {by_length[worst]:.0%}'
    return Passed(f'{share:.1%} of 540 held-out prompts (20 of each length 1..27) sorted exactly '
                  f'({worst}); {_counts(params)}')


VERDICTS = ('og', 'rotation', 'tie')
TIE = 0.02     # accuracies closer than 2 points are a tie
TABLE_TOL = 1e-5   # position tables must match their encoding to float32 precision


def _rotation_problem(table):
    """None if ``table`` is a rotation encoding (cos, sin per angle), else what is wrong."""
    table = np.asarray(table, dtype=np.float64)
    if table.shape[1] % 2:
        return f'it has {table.shape[1]} columns; a rotation encoding has pairs'
    thetas = np.arctan2(table[1, 1::2], table[1, 0::2]) % (2 * np.pi)
    expected = encodings.rotation_encoding(len(table), thetas)
    if not np.allclose(table, expected, atol=TABLE_TOL):
        row, col = np.argwhere(~np.isclose(table, expected, atol=TABLE_TOL))[0]
        return (f'row {row}, column {col} is {table[row, col]:.6g}; a rotation encoding with '
                f'the angles of row 1 has {expected[row, col]:.6g}')
    return None


@checker('7.11')
def check_7_11(answer):
    """Two PostLN models (sinusoidal, random rotation) and a verdict matching their accuracies."""
    if isinstance(answer, dict):
        answer = {k: answer[k] for k in list(answer)}        # read once
    if not isinstance(answer, dict) or set(answer) != {'og', 'rotation', 'better'}:
        raise Finding(f"expected a dict {{'og': params, 'rotation': params, 'better': "
                      f"'og' | 'rotation' | 'tie'}}; got {type(answer).__name__}"
                      + (f' with keys {sorted(map(str, answer))}' if isinstance(answer, dict)
                         else ''))
    verdict = answer['better']
    if type(verdict) is not str or verdict not in VERDICTS:
        raise Finding(f"'better' must be one of {VERDICTS} (a plain str); got {verdict!r}")
    models = {k: guard.frozen(answer[k], what=f'your {k!r} params') for k in ('og', 'rotation')}
    shapes = {k: config(p) for k, p in models.items()}
    for k, c in shapes.items():
        if (c['vocab_size'], c['block_size']) != (OFFSET['vocab_size'], OFFSET['block_size']):
            raise Finding(f'your {k!r} model has vocab_size {c["vocab_size"]} and block_size '
                          f'{c["block_size"]}; the task needs {OFFSET["vocab_size"]} and '
                          f'{OFFSET["block_size"]}')
    if shapes['og'] != shapes['rotation']:
        raise Finding(f'the two models differ in shape ({shapes["og"]} vs {shapes["rotation"]}); '
                      f'a fair comparison changes only the position table')
    q, d = OFFSET['block_size'], shapes['og']['d_model']
    og = np.asarray(models['og']['pos_emb'])
    if d % 2 or not np.allclose(og, encodings.og_embedding(q, d), atol=TABLE_TOL):
        raise Finding(f"your 'og' pos_emb is not the sinusoidal encoding og_embedding({q}, {d}) "
                      f"(keep the table fixed while training)")
    table = np.asarray(models['rotation']['pos_emb'])
    problem = _rotation_problem(table)
    if problem:
        raise Finding(f"your 'rotation' pos_emb is not a rotation encoding: {problem}")
    angles = np.sort(np.arctan2(table[1, 1::2], table[1, 0::2]) % (2 * np.pi))
    if np.allclose(angles, np.sort(encodings.og_angles(d) % (2 * np.pi)), atol=1e-6):
        raise Finding("your 'rotation' pos_emb uses the sinusoidal encoding's own angles; the "
                      "puzzle compares the sinusoidal table with a rotation table of random angles")
    scores = guard.run_program(lambda: measure('7.11', models))
    for k in ('og', 'rotation'):       # a fair comparison: both trained on the task
        if scores[k]['inside'] < 0.9:
            raise Finding(f'positions 5-31 of 200 held-out rows (the training length): expected '
                          f'each model >= 90 % right once trained; your {k!r} model gets '
                          f'{scores[k]["inside"]:.1%}')
    gap = scores['rotation']['all'] - scores['og']['all']
    measured = 'tie' if abs(gap) < TIE else ('rotation' if gap > 0 else 'og')
    summary = (f'og {scores["og"]["inside"]:.1%} / {scores["og"]["beyond"]:.1%}, rotation '
               f'{scores["rotation"]["inside"]:.1%} / {scores["rotation"]["beyond"]:.1%} '
               f'(positions 5-31 / 32-63)')
    if verdict != measured:
        raise Finding(f"verdict {verdict!r} does not match what your two models do on held-out "
                      f"positions 5-63 (a gap under {TIE:.0%} is a tie): measure both yourself "
                      f"(taotp.exercises.training.measure('7.11', models)) and compare")
    return Passed(f'both PostLN, same shape ({_counts(models["og"])}), fixed tables; held-out '
                  f'accuracy copying the token 5 back: {summary}; verdict {measured!r}')


# ----------------------------------------------------------------------------- the reference runs

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


def _stored_path(puzzle_id, part=''):
    return DATA / f'trained_{puzzle_id.replace(".", "_")}{part}.npz'


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
    harness = {'2.3': train_hello_world, '3.1': train_lookup, '5.8': train_sorter}
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
                params, history = train_hello_world(**{**REFERENCE['2.3'], 'd_model': d,
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


def stored(puzzle_id, with_facts=False):
    """The program(s) the reference run produced (no PyTorch needed), and its facts if asked.

    7.11 gives ``{'og': params, 'rotation': params}``; the others one params dict.
    """
    from ..train.store import load_params
    if puzzle_id == '7.11':
        both = {k: load_params(_stored_path(puzzle_id, f'_{k}'), with_meta=True)
                for k in ('og', 'rotation')}
        answer, facts = {k: v[0] for k, v in both.items()}, both['og'][1]
    else:
        answer, facts = load_params(_stored_path(puzzle_id), with_meta=True)
    return (answer, facts) if with_facts else answer


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
