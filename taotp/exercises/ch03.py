"""Checkers for Chapter 3, Lookup Table.

Checked puzzles: 3.2 (untied lookup by concatenation), 3.6 (a better untied
construction), 3.7 (lookup on a PostLN transformer) and 3.11 (a table that no
one-layer hash construction can hold).  3.1 is a training experiment; the rest
are reflection prompts answered in the solutions notebook.
"""
import functools

import numpy as np

from ..decoding import last_token_argmax
from ..lookup import build_untied_transformer, lookup_queries, random_lookup_table
from ..model import position_tables
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed


def _tables(specs):
    """Seeded random tables: (name, ks, vs, vocab, block, prefix) per spec."""
    out = []
    for n, key_len, vocab, prefix, seed in specs:
        ks, vs = random_lookup_table(n, key_len, vocab, np.random.default_rng(seed))
        out.append((f'{n} entries, keys of {key_len}, vocab {vocab}', ks, vs, vocab,
                    key_len + prefix, prefix))
    return out


def _precision(params, ks, vs, prefix, seed, what, mode='random', post_ln=False):
    """Fraction of the keys (behind prefixes) decoded right, plus the first wrong
    (query, expected, got); the program runs on the engine's last-position argmax."""
    queries = lookup_queries(ks, prefix, len(params['tok_emb']), np.random.default_rng(seed),
                             mode)
    got = guard.run_program(functools.partial(last_token_argmax, post_ln=post_ln), queries,
                            params, what=what)
    wrong = np.flatnonzero(got != vs)
    first = None if not len(wrong) else (queries[wrong[0]].tolist(), int(vs[wrong[0]]),
                                         int(got[wrong[0]]))
    return float(np.mean(got == vs)), first


def _built(build, args, name, vocab, block, what='your builder', seconds=120):
    params = guard.call(build, *args, what=what, on=name, seconds=seconds)
    guard.program(params, what=f'{what} on {name}')
    if np.shape(params['tok_emb'])[0] != vocab:
        raise Finding(f'{what} on {name}: tok_emb has {np.shape(params["tok_emb"])[0]} rows, '
                      f'expected vocab_size = {vocab}')
    rows = min(np.shape(t)[0] for t in position_tables(params['pos_emb']))
    if rows < block:
        raise Finding(f'{what} on {name}: pos_emb has {rows} rows, expected block_size = {block}')
    return params


# ----------------------------------------------------------------------------- 3.2

TABLES_3_2 = ((50, 3, 50, 7, 320), (100, 5, 100, 7, 321))


@checker('3.2')
def check_3_2(build, threshold=0.99, seconds=120):
    """``build(ks, vs, vocab_size, block_size, prefix_len)`` -> one-layer params, >= 99 % right."""
    report = []
    for name, ks, vs, vocab, block, prefix in _tables(TABLES_3_2):
        params = _built(build, (ks.copy(), vs.copy(), vocab, block, ks.shape[1]), name, vocab,
                        block, seconds=seconds)
        if len(params['layers']) != 1:
            raise Finding(f'{name}: the construction uses one layer; your program has '
                          f'{len(params["layers"])}')
        right, first = _precision(params, ks, vs, prefix, 7, 'your program')
        if right < threshold:
            q, want, got = first
            raise Finding(f'{name}, every key behind a random {prefix}-token prefix: only '
                          f'{right:.1%} right (need {threshold:.0%}); e.g. input {q}: expected '
                          f'{want}, got {got}', q)
        report.append(f'{right:.1%}')
    return Passed(f'one layer; keys behind random prefixes decoded right on 2 seeded tables '
                  f'(50 entries / keys of 3 / vocab 50, and 100 / 5 / 100): {", ".join(report)} '
                  f'(threshold {threshold:.0%}; out_emb may be untied; how you store the key '
                  f'is not inspected)')


# ----------------------------------------------------------------------------- 3.6

SPEC_3_6 = dict(n=1000, key_len=5, vocab=1000, tok_dims=30, block=10, prefix=5, seeds=(0, 1, 2))


def _mean_precision(build, spec, what, seconds=120):
    ks, vs = random_lookup_table(spec['n'], spec['key_len'], spec['vocab'],
                                 np.random.default_rng(36))
    name = (f'{spec["n"]} entries, keys of {spec["key_len"]}, vocab {spec["vocab"]}, '
            f'tok_dims {spec["tok_dims"]}')
    scores = []
    for seed in spec['seeds']:
        params = _built(build, (ks.copy(), vs.copy(), spec['vocab'], spec['block'],
                                spec['key_len'], spec['tok_dims'], np.random.default_rng(seed)),
                        f'{name}, rng seed {seed}', spec['vocab'], spec['block'], what, seconds)
        if len(params['layers']) != 1:
            raise Finding(f'{what}: keep the one-layer construction; got '
                          f'{len(params["layers"])} layers')
        scores.append(_precision(params, ks, vs, spec['prefix'], seed, what)[0])
    return float(np.mean(scores)), name


@functools.lru_cache(maxsize=1)
def _reference_3_6():
    return _mean_precision(build_untied_transformer, SPEC_3_6, 'the reference builder')[0]


@checker('3.6')
def check_3_6(build, gain=0.02, seconds=120):
    """A modified untied builder must beat the book's by ``gain`` (mean of 3 seeds)."""
    spec = SPEC_3_6
    yours, name = _mean_precision(build, spec, 'your builder', seconds)
    reference = _reference_3_6()
    if yours < reference + gain:
        raise Finding(f'{name}, keys behind random {spec["prefix"]}-token prefixes, mean of '
                      f'rng seeds 0, 1, 2: expected more than the book\'s {reference:.1%} + '
                      f'{gain:.0%}, got {yours:.1%}')
    return Passed(f'{name}: your builder decodes {yours:.1%} of the keys (mean of 3 seeds, '
                  f'random prefixes) vs {reference:.1%} for the book\'s construction')


# ----------------------------------------------------------------------------- 3.7

TABLES_3_7 = ((100, 5, 100, 10, 370), (30, 3, 12, 6, 371))


@checker('3.7')
def check_3_7(build, seconds=120):
    """``build(ks, vs, vocab_size, block_size)`` -> params that are 100 % right under PostLN."""
    checked = 0
    for name, ks, vs, vocab, block, prefix in _tables(TABLES_3_7):
        params = _built(build, (ks.copy(), vs.copy(), vocab, block), name, vocab, block,
                        seconds=seconds)
        for mode in ('random', 'keys'):
            right, first = _precision(params, ks, vs, prefix, 8, 'your program (PostLN)',
                                      mode, post_ln=True)
            if first is not None:
                q, want, got = first
                kind = 'random' if mode == 'random' else 'other keys as'
                raise Finding(f'{name}, PostLN forward, {kind} {prefix}-token prefixes: '
                              f'{right:.1%} right; input {q}: expected {want}, got {got}', q)
            checked += len(ks)
    return Passed(f'PostLN forward (taotp.transformer(..., post_ln=True)): all {checked} '
                  f'queries right on 2 seeded tables (100 entries / keys of 5 / vocab 100 and '
                  f'30 / 3 / 12), each key behind a random prefix and behind a prefix of other '
                  f'keys')


# ----------------------------------------------------------------------------- 3.11

def additive_separable(ks, vs, vocab_size, margin=1.0):
    """Is there a score ``sum_p A_p[v, k_p]`` that ranks every key's value first by ``margin``?

    The tied and untied constructions of Chapter 3 can only produce such scores
    (the logit of v is linear in the hash, and the hash is a sum over key
    positions), so an infeasible table defeats them at every width.  Solved as
    a linear-programming feasibility problem with ``scipy.optimize.linprog``;
    scipy is imported here, lazily, because it is not a runtime dependency.
    Returns True (separable) or False.
    """
    from scipy.optimize import linprog
    ks, vs = np.asarray(ks), np.asarray(vs)
    n, l = ks.shape
    V = vocab_size
    n_vars = l * V * V                                # A[p, value, token]
    rows = []
    for key, value in zip(ks, vs):
        for other in range(V):
            if other == value:
                continue
            row = np.zeros(n_vars)
            for p, tok in enumerate(key):
                row[(p * V + value) * V + tok] -= 1   # -(A_p[v, k_p] - A_p[u, k_p]) <= -margin
                row[(p * V + other) * V + tok] += 1
            rows.append(row)
    if not rows:
        return True
    res = linprog(np.zeros(n_vars), A_ub=np.array(rows), b_ub=-margin * np.ones(len(rows)),
                  bounds=[(None, None)] * n_vars, method='highs')
    if res.status not in (0, 2):
        raise RuntimeError(f'additive_separable: linprog ended with status {res.status} '
                           f'({res.message})')
    return res.status == 0


@checker('3.11')
def check_3_11(answer, max_vars=20000):
    """``{'ks': keys, 'vs': values, 'smallest': n}``: an unlearnable table and the least size."""
    if not isinstance(answer, dict) or not {'ks', 'vs', 'smallest'} <= set(answer):
        raise Finding(f"expected a dict with keys 'ks', 'vs' and 'smallest'; got "
                      f"{type(answer).__name__ if not isinstance(answer, dict) else sorted(answer)}")
    ks = guard.array(answer['ks'], what="answer['ks']", integer=True)
    if ks.ndim != 2 or ks.shape[0] < 1 or ks.shape[1] < 1:
        raise Finding(f"answer['ks'] must have shape (n_entries, key_len); got {ks.shape}")
    vs = guard.array(answer['vs'], shape=(ks.shape[0],), what="answer['vs']", integer=True)
    if ks.min() < 0 or vs.min() < 0:
        raise Finding('token ids must be >= 0')
    if len(np.unique(ks, axis=0)) != len(ks):
        raise Finding(f'the keys must be distinct (a repeated key makes any table impossible); '
                      f'got {len(ks) - len(np.unique(ks, axis=0))} repeats')
    vocab = int(max(ks.max(), vs.max())) + 1
    if ks.shape[1] * vocab * vocab > max_vars:
        raise Finding(f'the table is too large to check (key length x vocab^2 = '
                      f'{ks.shape[1] * vocab * vocab} > {max_vars}); a small one will do')
    try:
        separable = additive_separable(ks, vs, vocab)
    except ImportError:
        raise Finding('checking 3.11 needs scipy (pip install scipy); it is not a dependency of '
                      'taotp itself') from None
    table = f'{ks.tolist()} -> {vs.tolist()}'
    if separable:
        raise Finding(f'{table}: a per-position additive score sum_p A_p[v, k_p] does rank every '
                      f'value first, so a wide enough construction can hold this table',
                      (ks.tolist(), vs.tolist()))
    smallest = answer['smallest']
    if isinstance(smallest, bool) or not isinstance(smallest, (int, np.integer)):
        raise Finding(f"answer['smallest'] must be an int (a number of entries); got "
                      f"{type(smallest).__name__}")
    if smallest != 4:
        raise Finding(f'your table is adversarial, but the smallest number of entries is not '
                      f'{smallest}: the one-hot codes of 3 distinct keys are affinely independent, '
                      f'so any 3 values can be given the top score, while 4 entries can defeat it')
    return Passed(f'{table}: no additive score separates it (LP infeasible with margin 1), so '
                  f'no width helps; and the smallest adversarial table has 4 entries')


PUZZLES = [
    Puzzle('3.1', 'Train a transformer end to end on lookup data; rule out adversarial prefixes',
           'train'),
    Puzzle('3.2', 'Untied Lookup Table by concatenating the key embeddings', 'checked',
           check_3_2, 'one layer'),
    Puzzle('3.3', 'Layer norm almost fixes a random point of the sqrt(d)-sphere', 'reflect'),
    Puzzle('3.4', 'The same limit for a sum of random sphere points', 'reflect'),
    Puzzle('3.5', 'A coordinate of a random sphere point is a shifted Beta variable', 'reflect'),
    Puzzle('3.6', 'Layer-normalise the hashes of the untied construction', 'checked', check_3_6,
           'one layer'),
    Puzzle('3.7', 'Lookup Table on a PostLN transformer', 'checked', check_3_7),
    Puzzle('3.8', 'More text and longer keys for the Romeo and Juliet generator', 'reflect'),
    Puzzle('3.9', 'Why 1,000 entries over 10 tokens stall near 20 %', 'reflect'),
    Puzzle('3.10', 'A tighter bound on the token dimensions needed', 'reflect'),
    Puzzle('3.11', 'A table no width can memorise, and the smallest one', 'checked', check_3_11),
]
