"""Chapter 11, trained side of Chapter 9: a 1-layer 4-head adder learned by gradient descent.

The task and its format are Chapter 9's (``taotp.coupling``): ``$ a_1 + ... + a_m
= b_0 > b_1 > ... > b_m $`` with running sums written units first, every number
zero-padded to the experiments' width, and two levels of coupled position IDs.
As in Cho et al. (2025), training draws ``SA(n, n)`` problems (2 to ``n``
operands; half the time each operand has its own length in 1..n, half the
time all share one) and shifts each level's IDs by a random offset, so every
row of the position tables is trained, including the rows only longer test
problems use.  Tests use offset 1 on ``TA(digits, operands)`` problems (every
operand exactly ``digits`` long) and score exact match of the whole response.

The model is the book's architecture (``taotp.train.Model``: PreLN, one layer,
four heads, a ReLU MLP, two learned position tables summed into the stream).
Everything but ``train_adder`` runs without PyTorch:

    >>> rng = np.random.default_rng(0)
    >>> batch = sa_batch(3, 4, rng=rng, max_pos=(8, 6))
    >>> batch.tokens.shape == batch.targets.shape == batch.positions[0].shape
    True
    >>> ''.join(VOCAB[t] for t in ta_problems(2, 3, 1, rng=rng)[0][0])
    '$010+070+036=000>010>080>611$'
"""
import time
from collections import namedtuple

import numpy as np

from .. import coupling
from ..decoding import teacher_forced_argmax
from ..params import count_params

VOCAB = coupling.VOCAB
EOS_ID = coupling.TOKEN_ID[coupling.EOS]
EQ_ID = coupling.TOKEN_ID['=']


Batch = namedtuple('Batch', 'tokens targets positions')
Batch.__doc__ = """Token ids, targets (-1: no loss) and both levels of position IDs, all (B, n)."""


def sa_operands(n, rng):
    """One problem of the paper's SA(n, n): 2..n operands (2 when n < 2) of 1..n digits."""
    m = int(rng.integers(2, max(n, 2) + 1))
    if rng.random() < 0.5:
        lengths = rng.integers(1, n + 1, size=m)
    else:
        lengths = np.full(m, rng.integers(1, n + 1))
    out = []
    for L in lengths:
        L = int(L)
        low = 0 if L == 1 else 10 ** (L - 1)
        out.append(int(rng.integers(low, 10 ** L)))
    return out


def encode(operands, offsets=(1, 1)):
    """``(token ids, level-1 IDs, level-2 IDs)`` of ``$ query = scratchpad $`` (``$`` gets ID 0)."""
    text = coupling.EOS + coupling.scratchpad_text(operands) + coupling.EOS
    p1, p2 = coupling.coupled_ids(text, offsets)
    return [coupling.TOKEN_ID[c] for c in text], p1, p2


def _stack(rows, targets_from):
    """Pad encoded rows with EOS (ID 0, no loss) into one Batch; loss from ``=`` on."""
    n = max(len(r[0]) for r in rows) - 1
    B = len(rows)
    tokens = np.full((B, n), EOS_ID, dtype=np.int64)
    targets = np.full((B, n), -1, dtype=np.int64)
    p1 = np.zeros((B, n), dtype=np.int64)
    p2 = np.zeros((B, n), dtype=np.int64)
    for b, (tok, q1, q2) in enumerate(rows):
        k = len(tok) - 1
        tokens[b, :k], p1[b, :k], p2[b, :k] = tok[:-1], q1[:-1], q2[:-1]
        start = tok.index(EQ_ID) if targets_from else 0
        targets[b, start:k] = tok[start + 1:]
    return Batch(tokens, targets, [p1, p2])


def sa_batch(n, size, *, rng, max_pos):
    """A training batch of SA(n, n) with random offsets (levels 1 and 2 up to ``max_pos``)."""
    rows = []
    for _ in range(size):
        ops = sa_operands(n, rng)
        s = coupling.random_offsets(coupling.pad_length(ops), len(ops), max_pos, rng=rng)
        rows.append(encode(ops, s))
    return _stack(rows, targets_from=True)


def ta_problems(digits, operands, count, *, rng):
    """``count`` TA(digits, operands) problems at offset 1: ``(sequences (count, n), ids (2, n))``.

    All problems of a cell have the same length and the same IDs.
    """
    rows = [encode(coupling.random_operands(operands, digits, rng=rng)) for _ in range(count)]
    seq = np.array([r[0] for r in rows], dtype=np.int64)
    return seq, np.array(rows[0][1:], dtype=np.int64)


def cell_exact(params, digits, operands, count, *, rng, norm='layer'):
    """Exact-match rate of ``params`` on ``count`` TA(digits, operands) problems (NumPy)."""
    seq, ids = ta_problems(digits, operands, count, rng=rng)
    start = int(np.argmax(seq[0] == EQ_ID)) + 1
    got = teacher_forced_argmax(seq, params, start, positions=[level[:-1] for level in ids],
                                norm=norm)
    return float(np.mean(np.all(got == seq[:, start:], axis=1)))


def wrong_places(params, digits, operands, count, *, seed=0, norm='layer'):
    """Where a model errs on the problems ``exact_grid`` draws for one cell.

    Returns a ``(operands + 1, width + 1)`` array counting wrong tokens of the
    response (teacher-forced): row ``k`` is the partial sum ``b_k``, column
    ``i < width`` its digit of significance ``10**i`` (units first), the last
    column the separator after it (``>`` or the final ``$``).
    """
    seq, ids = ta_problems(digits, operands, count, rng=np.random.default_rng([seed, digits,
                                                                               operands]))
    start = int(np.argmax(seq[0] == EQ_ID)) + 1
    got = teacher_forced_argmax(seq, params, start, positions=[level[:-1] for level in ids],
                                norm=norm)
    wrong = (got != seq[:, start:]).sum(axis=0)
    return wrong.reshape(operands + 1, -1)


def fits(digits, operands, max_pos):
    """True when TA(digits, operands) at offset 1 uses only IDs below ``max_pos`` (each level)."""
    ell = coupling.pad_length([10 ** digits - 1] * operands)
    return 1 + ell <= max_pos[0] and 1 + operands <= max_pos[1]


def exact_grid(params, digit_range, operand_range, count, max_pos, seed=0, norm='layer'):
    """Exact match (%) over (digits, operands), NaN where the IDs exceed the tables.

    Every cell draws its problems from ``default_rng([seed, digits, operands])``,
    so a single cell can be recomputed alone.
    """
    grid = np.full((len(digit_range), len(operand_range)), np.nan)
    for i, d in enumerate(digit_range):
        for j, m in enumerate(operand_range):
            if fits(d, m, max_pos):
                rng = np.random.default_rng([seed, d, m])
                grid[i, j] = 100 * cell_exact(params, d, m, count, rng=rng, norm=norm)
    return grid


# ----------------------------------------------------------------------------- training

SIZES = {
    # the chapter's run: SA(5, 5), tables of 20 IDs per level, ~20 min on one core
    'full': dict(n=5, max_pos=(20, 20), d_model=64, d_ff=256, steps=6000, batch=64,
                 lr=1e-3, warmup=200),
    'n7': dict(n=7, max_pos=(20, 20), d_model=64, d_ff=256, steps=4000, batch=64,
               lr=1e-3, warmup=200),
    'n10': dict(n=10, max_pos=(24, 24), d_model=64, d_ff=256, steps=4000, batch=64,
                lr=1e-3, warmup=200),
    # a seconds-long smoke run (tests)
    'smoke': dict(n=2, max_pos=(8, 6), d_model=16, d_ff=32, steps=30, batch=16,
                  lr=3e-3, warmup=5),
}


def start_params(n, max_pos, d_model, d_ff, seed=0):
    """A random 1-layer 4-head program with two position tables (rows 0..max_pos), untied output."""
    from ..train.init import init_params
    longest = len(encode([10 ** n - 1] * n)[0])
    return init_params(len(VOCAB), longest, d_model, n_layers=1, n_heads=4, d_ff=d_ff,
                       tied=False, position_sizes=[max_pos[0] + 1, max_pos[1] + 1],
                       emb_scale=0.3, rng=np.random.default_rng(seed))


def train_adder(n, max_pos, d_model, d_ff, steps, batch, lr, warmup, seed=0, threads=1,
                progress=None):
    """Train the book's 1-layer 4-head architecture on SA(n, n); returns ``(params, history)``.

    Needs the training extra (PyTorch).  Adam (no weight decay), linear warm-up
    then cosine decay to lr / 10, float32, ``threads`` PyTorch threads.
    """
    from .. import train as T
    torch = T.require_torch('train_adder')
    model = T.Model(start_params(n, max_pos, d_model, d_ff, seed), dtype=torch.float32)
    history = T.train(model, lambda rng: sa_batch(n, batch, rng=rng, max_pos=max_pos), steps,
                      lr=lr, warmup=warmup, schedule='cosine', seed=seed, threads=threads,
                      progress=progress)
    return model.to_params(), history


DIGITS = tuple(range(1, 17))          # the test grid: 1..16 digits x 2..16 operands
OPERANDS = tuple(range(2, 17))
PER_CELL = 50


def run(size='full', out=None, seed=0, threads=1, progress=None, per_cell=None,
        digits=DIGITS, operands=OPERANDS):
    """Train at ``size`` (``SIZES``), score the test grid, and save both under ``out``.

    Writes ``ch11_adder_<size>.npz`` (the trained program, float32: training ran in
    float32, so nothing is lost) and returns the meta dict stored with it:
    settings, wall time, loss curve (every 10th step) and the exact-match grid.
    """
    from ..train.store import save_params
    from pathlib import Path
    if size not in SIZES:
        raise ValueError(f'run: size must be one of {list(SIZES)}; got {size!r}')
    cfg = dict(SIZES[size])
    start, cpu = time.perf_counter(), time.process_time()
    params, history = train_adder(**cfg, seed=seed, threads=threads, progress=progress)
    trained, cpu = time.perf_counter() - start, time.process_time() - cpu
    per_cell = per_cell or (4 if size == 'smoke' else PER_CELL)
    if size == 'smoke':
        digits, operands = digits[:3], operands[:3]
    grid = exact_grid(params, digits, operands, per_cell, cfg['max_pos'], seed=seed)
    meta = {'size': size, 'config': {**cfg, 'max_pos': list(cfg['max_pos'])}, 'seed': seed,
            'threads': threads, 'train_seconds': round(trained, 1),
            'train_cpu_seconds': round(cpu, 1),
            'eval_seconds': round(time.perf_counter() - start - trained, 1),
            'n_params': count_params(params)['n_params'],
            'loss_every_10': [round(float(v), 5) for v in history.losses[::10]],
            'final_loss': float(history.losses[-10:].mean()),
            'digits': list(digits), 'operands': list(operands), 'per_cell': per_cell,
            'exact': [[None if np.isnan(v) else round(float(v), 2) for v in row] for row in grid]}
    meta['construction'] = construction_meta(cfg['n'], digits, operands, seed)
    if out is not None:
        save_params(Path(out) / f'ch11_adder_{size}.npz', params, meta=meta, dtype='float32')
    return params, meta


# ----------------------------------------------------------------------------- the construction

CONSTRUCTION_PER_CELL = 2


def construction_meta(n, digits, operands, seed=0, per_cell=CONSTRUCTION_PER_CELL):
    """The construction built for the training box (n digits, n operands) on the same grid."""
    adder = coupling.build_multi_operand_adder(n, n)
    grid = construction_grid(adder, digits, operands, per_cell, seed)
    return {'built_for': [n, n], 'max_pos': list(adder.max_pos), 'per_cell': per_cell,
            'exact': grid.round(2).tolist()}

def construction_grid(adder, digit_range, operand_range, count, seed=0):
    """Exact match (%) of a ``MultiOperandAdder`` on the problems ``exact_grid`` draws.

    Cells past the adder's tables are run with IDs wrapped around its codes
    (``check_capacity=False``), the only thing hypercube codes can do there.
    """
    grid = np.zeros((len(digit_range), len(operand_range)))
    for i, d in enumerate(digit_range):
        for j, m in enumerate(operand_range):
            rng = np.random.default_rng([seed, d, m])
            ok = 0
            for _ in range(count):
                want, got = adder.teacher_forced(coupling.random_operands(m, d, rng=rng),
                                                 check_capacity=False)
                ok += want == got
            grid[i, j] = 100 * ok / count
    return grid


def capacity(adder, digit_range, operand_range):
    """Boolean (digits, operands): the TA cells whose IDs all fit the adder's tables."""
    return np.array([[adder.fits([10 ** d - 1] * m) for m in operand_range]
                     for d in digit_range])


def box(n, digit_range, operand_range):
    """Boolean (digits, operands): the training box of SA(n, n) (up to n digits, 2..n operands)."""
    return np.array([[d <= n and m <= n for m in operand_range] for d in digit_range])


# ----------------------------------------------------------------------------- attention

def mean_attention(params, digits, operands, count, seed=0, norm='layer', positions=None):
    """Attention of each head averaged over ``count`` TA(digits, operands) problems: (heads, n, n).

    All problems of a cell share their length and IDs, so the maps line up
    (the paper's Fig. 7a averages 1,000 problems of TA(11, 11)).  Returns the
    maps and the tokens of the first problem.
    """
    from ..trace import trace
    seq, ids = ta_problems(digits, operands, count, rng=np.random.default_rng([seed, 7]))
    ids = ids if positions is None else positions(ids)
    maps = sum(trace(s, params, positions=list(ids), norm=norm).attn[0] for s in seq) / count
    return maps, seq[0]


def construction_attention(adder, digits, operands):
    """The four heads of a ``MultiOperandAdder`` on TA(digits, operands), IDs wrapped as it does.

    Its heads match IDs only, so every problem of the cell gives the same maps.
    """
    return mean_attention(adder.params if adder.fits([10 ** digits - 1] * operands)
                          else adder.code_params, digits, operands, 1, norm=adder.variant,
                          positions=lambda ids: [coupling.wrap(ids[0], adder.P1),
                                                 coupling.wrap(ids[1], adder.P2)])



# ----------------------------------------------------------------------------- the paper's claims

MATCH = 0.6       # a trained head "attends like" a construction head: >= 60 % of its weight there
OVER_EVEN = 3.0   # ... and more than three times the share of evenly spread attention
GENERALISES = 90  # "generalises" to a cell: exact match of at least 90 % of its problems


def claims(meta, agreement, even):
    """Cho et al.'s claims about trained adders that Chapter 11 repeats, with our numbers.

    ``meta``: the stored adder (``load_adder()[1]``); ``agreement``: the
    ``(trained heads, construction heads)`` matrix of ``attention.agreement_matrix``
    on response rows; ``even``: per construction head, the share of evenly spread
    attention on its keys.  Rows are ``selective.Claim`` tuples (third item: the state).
    """
    from .attention import best_matching
    from .selective import Claim
    agreement, even = np.asarray(agreement), np.asarray(even)
    rows = []
    pairs = best_matching(agreement)
    good = [(t, c) for t, c in pairs if agreement[t, c] >= MATCH and
            agreement[t, c] > OVER_EVEN * even[c]]
    alone = [c for c in range(agreement.shape[1]) if c not in {c for _, c in good}]
    measured = ', '.join(f'trained {t + 1} -> constr. {c + 1}: {agreement[t, c]:.0%}'
                         for t, c in good)
    if alone:
        measured += '; ' + ', '.join(f'constr. {c + 1}: best {agreement[:, c].max():.0%}'
                                     for c in alone)
    rows.append(Claim(
        'the trained adder\'s heads attend like the construction\'s (paired one to one)',
        measured, 'holds' if len(good) >= 3 else 'not reached',
        f'holds if, paired one to one, at least three trained heads put >= {MATCH:.0%} of '
        f'their response weight on their construction head\'s keys (> {OVER_EVEN:g}x even)',
        '"strikingly similar to our theoretical construction"', 'Sec. 4.3, Fig. 7a',
        'one construction head has no trained counterpart' if alone else ''))
    n, grid = meta['config']['n'], np.array(meta['exact'], dtype=float)
    digits, operands = meta['digits'], meta['operands']
    more_ops = grid[[digits.index(d) for d in range(1, n + 1)], operands.index(n + 1)]
    longer = grid[digits.index(n + 1)]
    longer = longer[np.isfinite(longer)]
    ok = more_ops.min() >= GENERALISES and longer.max() >= GENERALISES
    rows.append(Claim(
        'a 1-layer 4-head model generalises in operand count and in operand length',
        f'{n + 1} operands of 1-{n} digits: {more_ops.min():.0f}-{more_ops.max():.0f} %; '
        f'{n + 1} digits: at most {longer.max():.0f} % (width {meta["config"]["d_model"]}, '
        f'SA({n}, {n}), {meta["per_cell"]} problems per cell)',
        'holds' if ok else 'not reached',
        f'holds if exact match is >= {GENERALISES} % one operand and one digit past the '
        'training box; contradicted only at the paper\'s width (1,024) and training',
        '"the 1-layer 4-head model succeeds"', 'Sec. 4.3, Fig. 10',
        '' if ok else f'our width {meta["config"]["d_model"]} and SA({n}, {n}) are far below '
        'the paper\'s; its Fig. 12 finds width-64 models far behind wider ones'))
    rows.append(Claim(
        'wider models of this shape train better (widths 64 to 512)', '-', 'not run', '-',
        '"larger embedding dimensions are crucial"', 'App. C, Fig. 12',
        'we trained one width (64)'))
    rows.append(Claim(
        '1-layer 2-head models generalise in count but fail on longer operands', '-', 'not run',
        '-', '"they immediately fail for longer digits"', 'Sec. 4.3, Fig. 10',
        'we trained four heads only'))
    return rows
