"""Checkers for Chapter 3, Lookup Table.

Checked puzzles: 3.2 (untied lookup by concatenation), 3.6 (a better untied
construction), 3.7 (lookup on a PostLN transformer) and 3.11 (a table that no
one-layer hash construction can hold).  3.1 is a training experiment; the rest
are reflection prompts answered in the solutions notebook.

Submitted builders get copies of the table; the program they return is read once
(``guard.frozen``) and that copy is checked and run.  Keys are asked behind
prefixes of every length the block allows (random, and cut from other keys), so
a program that only works at one place in the block fails.
"""
import copy
import functools
from types import MappingProxyType

import numpy as np

from ..decoding import last_token_argmax
from ..lookup import build_untied_transformer, lookup_queries, random_lookup_table
from ..trace import trace
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed
from .training import check_3_1


def _tables(specs):
    """Seeded random tables: (name, ks, vs, vocab, block) per (n, key_len, vocab, seed)."""
    out = []
    for n, key_len, vocab, seed in specs:
        ks, vs = random_lookup_table(n, key_len, vocab, np.random.default_rng(seed))
        out.append((f'{n} entries, keys of {key_len}, vocab {vocab}', ks, vs, vocab,
                    key_len + PREFIX))
    return out


PREFIX = 6    # every table's block holds its keys behind prefixes of 0 to 6 tokens


def _queries(ks, vocab, block, seed, modes=('random', 'keys')):
    """Every key behind a prefix of every length 0..block - key_len; then cut from other keys."""
    rng = np.random.default_rng(seed)
    longest = block - ks.shape[1]
    out = [(f'a random {n}-token prefix', lookup_queries(ks, n, vocab, rng))
           for n in range(longest + 1) if 'random' in modes]
    if 'keys' in modes and longest:
        out.append((f'a {longest}-token prefix cut from other keys',
                    lookup_queries(ks, longest, vocab, rng, mode='keys')))
    return out


def _precision(params, ks, vs, queries, what, post_ln=False):
    """Fraction right over all ``queries`` (label, rows) and the first miss (input, want, got)."""
    right, total, first = 0, 0, None
    for label, rows in queries:
        got = guard.run_program(functools.partial(last_token_argmax, post_ln=post_ln), rows,
                                params, what=what)
        wrong = np.flatnonzero(got != vs)
        right, total = right + len(vs) - len(wrong), total + len(vs)
        if first is None and len(wrong):
            first = (label, rows[wrong[0]].tolist(), int(vs[wrong[0]]), int(got[wrong[0]]))
    return right / total, total, first


def _built(build, args, name, vocab, block, what='your builder'):
    params = guard.frozen(guard.call(build, *args, what=what, on=name), what=f'{what} on {name}')
    if isinstance(params['pos_emb'], list):
        raise Finding(f'{what} on {name}: pos_emb must be one (block_size, d_model) table; got a '
                      f'list of {len(params["pos_emb"])} tables')
    if len(params['tok_emb']) != vocab:
        raise Finding(f'{what} on {name}: tok_emb has {len(params["tok_emb"])} rows, expected '
                      f'vocab_size = {vocab}')
    if len(params['pos_emb']) < block:
        raise Finding(f'{what} on {name}: pos_emb has {len(params["pos_emb"])} rows, expected '
                      f'block_size = {block}')
    return params


# ----------------------------------------------------------------------------- 3.2

TABLES_3_2 = ((50, 3, 50, 320), (100, 5, 100, 321), (30, 1, 40, 322), (60, 2, 64, 323),
              (40, 6, 30, 324))
SEPARATE = 0.1   # the largest cosine allowed between the directions of two key positions


def key_position_overlap(params, key, prefix, vocab, n_tokens=24):
    """How much two key positions share directions of the last position's final stream.

    For each key position p, the token there is replaced by each of ``n_tokens``
    tokens (the rest of the query fixed); the changes of the final stream span a
    subspace U_p.  Returns ``(cosine, p, q)``: the largest cosine of an angle
    between U_p and U_q over all pairs, 0 when they are orthogonal (concatenation:
    each position has dimensions of its own) and far from 0 when a hash sums the
    positions into shared dimensions (random subspaces of 23 dimensions in d
    dimensions meet at cosines near 2 sqrt(23 / d), still 0.3 at d = 1000).
    """
    base = np.concatenate([prefix, key])
    l, start, tokens = len(key), len(prefix), np.arange(min(vocab, n_tokens))
    queries = np.repeat(base[None], l * len(tokens) + 1, axis=0)
    for p in range(l):
        queries[p * len(tokens):(p + 1) * len(tokens), start + p] = tokens
    final = trace(queries, params).final[:, -1]
    spans = []
    for p in range(l):
        change = (final[p * len(tokens):(p + 1) * len(tokens)] - final[-1]).T
        u, sv, _ = np.linalg.svd(change, full_matrices=False)
        spans.append(u[:, sv > 1e-6 * max(sv.max(initial=0.0), 1e-300)])
    worst = (0.0, 0, 1)
    for p in range(l):
        for q in range(p + 1, l):
            if spans[p].size and spans[q].size:
                cosine = float(np.linalg.svd(spans[p].T @ spans[q], compute_uv=False).max())
                worst = max(worst, (cosine, p, q))
    return worst


@checker('3.2')
def check_3_2(build):
    """``build(ks, vs, vocab_size, block_size, prefix_len)`` -> one-layer params, >= 99 % right."""
    report = []
    for i, (name, ks, vs, vocab, block) in enumerate(_tables(TABLES_3_2)):
        params = _built(build, (ks.copy(), vs.copy(), vocab, block, ks.shape[1]), name, vocab,
                        block)
        guard.budget(params, what=f'your program for {name}', layers=1)
        right, total, first = _precision(params, ks, vs, _queries(ks, vocab, block, 32 + i),
                                         'your program')
        if right < 0.99:
            label, q, want, got = first
            raise Finding(f'{name}, every key behind prefixes of 0 to {block - ks.shape[1]} '
                          f'tokens: only {right:.1%} right (need 99%); e.g. behind {label}, '
                          f'input {q}: expected {want}, got {got}', q)
        if ks.shape[1] > 1:
            prefix = np.random.default_rng(42 + i).integers(0, vocab, size=block - ks.shape[1])
            cosine, p, q = guard.run_program(lambda: key_position_overlap(params, ks[0], prefix,
                                                                          vocab),
                                             what='your program')
            if cosine > SEPARATE:
                raise Finding(f'{name}, key {ks[0].tolist()}: changing the token at key position '
                              f'{p} and at key position {q} moves the last position\'s stream in '
                              f'shared directions (cosine {cosine:.2f}); a hash sums the key '
                              f'positions into the same dimensions, concatenation gives each '
                              f'position dimensions of its own')
        report.append(f'{right:.1%}')
    return Passed(f'one layer; every key behind prefixes of every length (random, and cut from '
                  f'other keys) on 5 seeded tables (keys of 1 to 6 tokens, vocabularies 30 to '
                  f'100): {", ".join(report)} right (99% needed); the key positions change the '
                  f'last position\'s stream in separate directions (cosine <= {SEPARATE}), as '
                  f'concatenation does; out_emb may be untied')


# ----------------------------------------------------------------------------- 3.6

SPEC_3_6 = MappingProxyType(dict(n=1000, key_len=5, vocab=1000, tok_dims=30, block=10, prefix=5,
                                  seeds=(0, 1, 2)))
GAIN = 0.02


def _table_3_6():
    """The 3.6 table, a fresh copy each time (a builder could reach the cached one)."""
    return tuple(a.copy() for a in _table_3_6_cached())


@functools.lru_cache(maxsize=1)
def _table_3_6_cached():
    return random_lookup_table(SPEC_3_6['n'], SPEC_3_6['key_len'], SPEC_3_6['vocab'],
                               np.random.default_rng(36))


def _book_3_6(seed):
    """The book's builder on the 3.6 table with ``rng`` seed ``seed``, and its precision.

    The program is a fresh copy each time: a builder that reached the cached one and
    changed it could make any construction look like the book's.
    """
    params, score = _book_3_6_cached(seed)
    return copy.deepcopy(params), score


@functools.lru_cache(maxsize=None)
def _book_3_6_cached(seed):
    spec, (ks, vs) = SPEC_3_6, _table_3_6()
    params = build_untied_transformer(ks, vs, spec['vocab'], spec['block'], spec['key_len'],
                                      spec['tok_dims'], rng=np.random.default_rng(seed))
    queries = lookup_queries(ks, spec['prefix'], spec['vocab'], np.random.default_rng(seed))
    return params, float(np.mean(last_token_argmax(queries, params) == vs))


def _norm_values(ln, d):
    return np.concatenate([np.broadcast_to(np.asarray(ln.get(key, default), float), (d,))
                           for key, default in (('gamma', 1.0), ('beta', 0.0))])


def _kept(yours, book):
    """The first piece of the book's construction that ``yours`` changed, or None."""
    d = book['tok_emb'].shape[1]
    pairs = [(key, yours[key], book[key]) for key in ('tok_emb', 'pos_emb')]
    pairs += [('lnf', _norm_values(yours['lnf'], d), _norm_values(book['lnf'], d))]
    for key, value in book['layers'][0].items():
        theirs = yours['layers'][0][key]
        if isinstance(value, dict):
            theirs, value = _norm_values(theirs, d), _norm_values(value, d)
        pairs.append((f"layers[0]['{key}']", theirs, value))
    for key, theirs, value in pairs:
        if np.shape(theirs) != np.shape(value) or not np.allclose(theirs, value, rtol=1e-9,
                                                                   atol=1e-12):
            return key
    return None


@checker('3.6')
def check_3_6(build):
    """A modified untied builder, the same embeddings and hashes, beats the book's by 2 points."""
    spec, (ks, vs) = SPEC_3_6, _table_3_6()
    name = (f'{spec["n"]} entries, keys of {spec["key_len"]}, vocab {spec["vocab"]}, '
            f'tok_dims {spec["tok_dims"]}')
    yours, book = [], []
    for seed in spec['seeds']:
        where = f'{name}, rng seed {seed}'
        params = _built(build, (ks.copy(), vs.copy(), spec['vocab'], spec['block'],
                                spec['key_len'], spec['tok_dims'], np.random.default_rng(seed)),
                        where, spec['vocab'], spec['block'])
        guard.budget(params, what=f'your program for {where}', layers=1,
                     d_model=spec['tok_dims'] + 3, heads=spec['key_len'], d_ff=0)
        reference, score = _book_3_6(seed)
        changed = _kept(params, reference)
        if changed:
            raise Finding(f'{where}: your {changed} differs from the book\'s; this puzzle keeps '
                          f'the book\'s token embeddings and hash layer (the same draws from rng, '
                          f'as taotp.build_untied_transformer makes them) and changes only how '
                          f'out_emb is made')
        queries = lookup_queries(ks, spec['prefix'], spec['vocab'], np.random.default_rng(seed))
        got = guard.run_program(last_token_argmax, queries, params, what='your program')
        yours.append(float(np.mean(got == vs)))
        book.append(score)
    mine, theirs = float(np.mean(yours)), float(np.mean(book))
    if mine < theirs + GAIN:
        raise Finding(f'{name}, keys behind random {spec["prefix"]}-token prefixes, mean of '
                      f'rng seeds 0, 1, 2: expected at least the book\'s {theirs:.1%} + '
                      f'{GAIN:.0%}, got {mine:.1%}')
    return Passed(f'{name}: the book\'s embeddings and hashes (1 layer, 5 heads, d_model 33, '
                  f'no MLP) with your out_emb decode {mine:.1%} of the keys (mean of 3 seeds, '
                  f'random prefixes) vs {theirs:.1%} for the book\'s out_emb')


# ----------------------------------------------------------------------------- 3.7

TABLES_3_7 = ((100, 5, 100, 370), (30, 3, 12, 371), (30, 1, 40, 372), (60, 2, 64, 373))


@checker('3.7')
def check_3_7(build):
    """``build(ks, vs, vocab_size, block_size)`` -> params that are 100 % right under PostLN."""
    checked = 0
    for i, (name, ks, vs, vocab, block) in enumerate(_tables(TABLES_3_7)):
        params = _built(build, (ks.copy(), vs.copy(), vocab, block), name, vocab, block)
        right, total, first = _precision(params, ks, vs, _queries(ks, vocab, block, 37 + i),
                                         'your program (PostLN)', post_ln=True)
        if first is not None:
            label, q, want, got = first
            raise Finding(f'{name}, PostLN forward, a key behind {label}: {right:.1%} right; '
                          f'input {q}: expected {want}, got {got}', q)
        checked += total
    return Passed(f'PostLN forward (taotp.transformer(..., post_ln=True)): all {checked:,} '
                  f'queries right on 4 seeded tables (keys of 1 to 5 tokens, vocabularies 12 to '
                  f'100), every key behind random prefixes of every length 0 to {PREFIX} and '
                  f'behind a prefix cut from other keys')


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


MAX_VARS = 20000   # key length x vocabulary^2 of the LP of 3.11


@checker('3.11')
def check_3_11(answer):
    """``{'ks': keys, 'vs': values, 'smallest': n}``: an unlearnable table and the least size."""
    if not isinstance(answer, dict):
        raise Finding(f"expected a dict with keys 'ks', 'vs' and 'smallest'; got "
                      f"{type(answer).__name__}")
    answer = dict(answer)                                     # read once
    if not {'ks', 'vs', 'smallest'} <= set(answer):
        raise Finding(f"expected a dict with keys 'ks', 'vs' and 'smallest'; got "
                      f"{sorted(map(str, answer))}")
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
    if ks.shape[1] * vocab * vocab > MAX_VARS:
        raise Finding(f'the table is too large to check (key length x vocab^2 = '
                      f'{ks.shape[1] * vocab * vocab} > {MAX_VARS}); a small one will do')
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
    if not (type(smallest) is int or (isinstance(smallest, np.integer)
                                      and type(smallest).__module__ == 'numpy')):
        raise Finding(f"answer['smallest'] must be a plain int (a number of entries); got "
                      f"{type(smallest).__name__}")
    if smallest < SMALLEST:
        raise Finding(f'your table is adversarial, but is there really one with {smallest} '
                      f'entries? Try to give {smallest} distinct keys any values with scores '
                      f'A_p[v, k_p] by hand, or ask taotp.exercises.ch03.additive_separable '
                      f'about candidates')
    if smallest > SMALLEST:
        raise Finding(f'your table is adversarial, but a table with fewer than {smallest} '
                      f'entries can be too')
    return Passed(f'{table}: no additive score separates it (LP infeasible with margin 1), so '
                  f'no width helps; and the smallest adversarial table has 4 entries')


SMALLEST = 4    # 3 distinct keys are always separable (their one-hot codes are affinely
                # independent); XOR on 2-token keys over {0, 1} is not


PUZZLES = [
    Puzzle('3.1', 'Train a transformer end to end on lookup data; rule out adversarial prefixes',
           'checked', check_3_1, 'none (the size is reported)'),
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
