"""Checkers for Chapter 3, Lookup Table (3.1 is a training puzzle, ``training_checks``).

Each checker first runs the table the exercises notebook shows (``VISIBLE_3_2``, ...);
every other table is drawn from a new seed, which a NOT YET names (``lookup_case`` rebuilds
it), and so are the prefixes, the separation probe of 3.2 and the rng seeds of 3.6.  3.2
and 3.7 end with a probe table (``probe_case``: keys that differ at one position only,
which catches a builder that leaves a key position out).  Keys are asked behind prefixes of
every length the block allows (random, and cut from other keys).  The least size asked for
in 3.11 is stored as a salted digest.
"""
import itertools

import numpy as np

from ..decoding import last_token_argmax
from ..lookup import build_untied_transformer, lookup_queries, random_lookup_table
from ..trace import trace
from . import toolkit
from .registry import Puzzle, checker
from .result import Finding, Passed
from .training_checks import check_3_1

PREFIX = 6    # 3.2 and 3.7: every key is asked behind prefixes of 0 to 6 tokens
PROBE_LEN, PROBE_NEIGHBOURS = 6, 4   # the probe table: 25 keys of 6 tokens (probe_case)


def lookup_case(n_entries, key_len, vocab_size, seed):
    """The table ``(ks, vs)`` of a checked case: ``random_lookup_table`` drawn with
    ``np.random.default_rng(seed)`` (a NOT YET names the seed of the table that broke)."""
    return random_lookup_table(n_entries, key_len, vocab_size, np.random.default_rng(seed))


_PROBE = (f'a key of {PROBE_LEN} tokens and, at each of its positions, {PROBE_NEIGHBOURS} '
          f'keys that differ from it there only; all values distinct, vocabularies 30 to 60')


def _scope(specs):
    """'keys of 1 to 6 tokens, vocabularies 40 to 200' for a list of (n, key_len, vocab)."""
    _, lengths, vocabs = zip(*specs)
    return (f'keys of {min(lengths)} to {max(lengths)} tokens, vocabularies {min(vocabs)} to '
            f'{max(vocabs)}')


def probe_case(vocab_size, seed):
    """The probe table of a check (3.2 and 3.7), drawn from ``np.random.default_rng(seed)``:
    a base key of ``PROBE_LEN`` tokens and, at each of its positions, ``PROBE_NEIGHBOURS``
    keys that differ from it there and nowhere else; every value differs from every other
    (``vocab_size`` >= 1 + PROBE_LEN * PROBE_NEIGHBOURS).  A builder that leaves out any key
    position confuses some of these keys (round 25: one reading only the last three tokens
    passed, since random keys almost never agree on their last three)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, vocab_size, size=PROBE_LEN)
    rows = [base]
    for p in range(PROBE_LEN):
        for token in rng.choice(np.setdiff1d(np.arange(vocab_size), [base[p]]),
                                size=PROBE_NEIGHBOURS, replace=False):
            rows.append(base.copy())
            rows[-1][p] = token
    ks = np.array(rows, dtype=np.int64)[rng.permutation(len(rows))]
    return ks, rng.choice(vocab_size, size=len(ks), replace=False).astype(np.int64)


def _cases(visible, specs, rng):
    """(name, ks, vs, vocab, block): the notebook's table ``visible`` (n, key_len, vocab,
    seed), then one table per (n, key_len, vocab) of ``specs`` and one of 40 keys of 1 to 6
    tokens over 40 to 160 (round 16: key lengths 4 and 6 were never tried), each from a
    fresh seed, and last a ``probe_case`` over 30 to 60 tokens from a fresh seed."""
    drawn = (40, int(rng.integers(1, 7)), int(rng.integers(40, 161)))
    tables = [('the notebook\'s table', *visible)]
    tables += [('table', *spec, int(rng.integers(2 ** 31))) for spec in specs + (drawn,)]
    for label, n, key_len, vocab, seed in tables:
        yield (f'{label} lookup_case({n}, {key_len}, {vocab}, seed={seed})',
               *lookup_case(n, key_len, vocab, seed), vocab, key_len + PREFIX)
    vocab, seed = int(rng.integers(30, 61)), int(rng.integers(2 ** 31))
    yield (f'probe table probe_case({vocab}, seed={seed})', *probe_case(vocab, seed), vocab,
           PROBE_LEN + PREFIX)


def _precision(params, ks, vs, vocab, rng, on, post_ln=False):
    """Every key behind a prefix of every length 0..PREFIX, then one cut from other keys: the
    fraction right, the number of queries and the first miss (label, input, got)."""
    queries = [(f'a random {n}-token prefix', lookup_queries(ks, n, vocab, rng))
               for n in range(PREFIX + 1)]
    queries.append((f'a {PREFIX}-token prefix cut from other keys',
                    lookup_queries(ks, PREFIX, vocab, rng, mode='keys')))
    right, total, first = 0, 0, None
    for label, rows in queries:
        got = toolkit.run_program(lambda: last_token_argmax(rows, params, post_ln=post_ln), on=on)
        wrong = np.flatnonzero(got != vs)
        right, total = right + len(vs) - len(wrong), total + len(vs)
        if first is None and len(wrong):
            first = (label, rows[wrong[0]].tolist(), int(got[wrong[0]]))
    return right / total, total, first


def _miss(name, first, right, need=''):
    label, query, got = first
    return toolkit.wrong(f'{name}, the key behind {label}, input {query} ({right:.1%} of the '
                         f'queries right{need})', got, 'the last position must predict that '
                         'key\'s value in the table your builder was given', query)


def _built(build, args, name, vocab, block, **limits):
    params = toolkit.built(build, *args, what='your builder', on=name, **limits)
    if isinstance(params['pos_emb'], list):
        raise Finding(f'your builder on {name}: pos_emb must be one (block_size, d_model) table; '
                      f'got a list of {len(params["pos_emb"])} tables')
    if len(params['tok_emb']) != vocab:
        raise Finding(f'your builder on {name}: tok_emb has {len(params["tok_emb"])} rows, '
                      f'expected vocab_size = {vocab}')
    if len(params['pos_emb']) < block:
        raise Finding(f'your builder on {name}: pos_emb has {len(params["pos_emb"])} rows, '
                      f'expected block_size = {block}')
    return params


# ----------------------------------------------------------------------------- 3.2

VISIBLE_3_2 = (20, 2, 200, 32)     # the table the exercises notebook shows
SPECS_3_2 = ((30, 1, 40), (20, 2, 200), (40, 3, 160), (40, 4, 80), (100, 5, 150), (40, 6, 60))
SEPARATE = 0.01  # the largest cosine allowed between the directions of two key positions:
# concatenation gives 1e-16 (a leak of 1 % from finite hardening fits); round 18 kept a random
# hash in 20,000 shared dimensions under 0.1 (its cosines fall as 1 / sqrt(width): under 0.01
# it needs some 600,000, past what one check can send or run)
PROBE_TOKENS = 40   # tokens tried at each key position, drawn afresh from the whole vocabulary


def key_position_spans(params, key, prefix, tokens):
    """The directions in which each key position moves the last position's final stream.

    Replacing the token at key position p of ``prefix + key`` by each of ``tokens`` moves
    the final stream within a subspace U_p; returns an orthonormal basis of each U_p (one
    (d, rank) array per key position), keeping directions whose move exceeds 1e-6 of the
    largest move of any position: a position the program ignores gets an empty basis.
    """
    base = np.concatenate([prefix, key]).astype(np.int64)
    tokens = np.asarray(tokens, dtype=np.int64)
    l, start, k = len(key), len(prefix), len(tokens)
    queries = np.repeat(base[None], l * k + 1, axis=0)
    for p in range(l):
        queries[p * k:(p + 1) * k, start + p] = tokens
    final = trace(queries, params).final[:, -1]
    moves = (final[:-1] - final[-1]).reshape(l, k, -1).transpose(0, 2, 1)   # (p, d, token)
    u, sv, _ = np.linalg.svd(moves, full_matrices=False)
    floor = 1e-6 * max(float(sv.max(initial=0.0)), 1e-300)
    return [u_p[:, s_p > floor] for u_p, s_p in zip(u, sv)]


def key_position_overlap(params, key, prefix, tokens, spans=None):
    """``(cosine, p, q)``: the largest cosine between the subspaces U_p and U_q of two key
    positions (``key_position_spans``, or ``spans`` already computed): 0 for concatenation,
    far from 0 when a hash sums the positions.  Positions with an empty span are skipped
    here; the checker of 3.2 refuses them first."""
    if spans is None:
        spans = key_position_spans(params, key, prefix, tokens)
    cosines = [(float(np.linalg.svd(spans[p].T @ spans[q], compute_uv=False).max()), p, q)
               for p, q in itertools.combinations(range(len(spans)), 2)
               if spans[p].size and spans[q].size]
    return max(cosines, default=(0.0, 0, 1))


def _separate(params, ks, vocab, block, name, rng):
    """The separation probe of 3.2 on a random key behind a random prefix: every key
    position must move the last position's stream (round 25), each in directions of its own."""
    row = int(rng.integers(len(ks)))
    prefix = rng.integers(0, vocab, size=block - ks.shape[1])
    tokens = rng.choice(vocab, size=min(vocab, PROBE_TOKENS), replace=False)
    spans = toolkit.run_program(lambda: key_position_spans(params, ks[row], prefix, tokens),
                                on=name)
    query = np.concatenate([prefix, ks[row]]).tolist()
    still = [p for p, span in enumerate(spans) if not span.size]
    if still:
        raise Finding(f'{name}, query {query}: changing the token at key position {still[0]} '
                      f'({len(tokens)} tokens from the whole vocabulary) does not move the '
                      f'last position\'s stream; concatenation keeps a copy of every key '
                      f'token, so every key position must move it, in dimensions of its own')
    cosine, p, q = key_position_overlap(params, ks[row], prefix, tokens, spans)
    if cosine > SEPARATE:
        raise Finding(f'{name}, query {query}: changing the token at key position {p} and at '
                      f'key position {q} moves the last position\'s stream in shared directions '
                      f'(cosine {cosine:.2f}; at most {SEPARATE} allowed); a hash sums the key '
                      f'positions into the same dimensions, concatenation gives each position '
                      f'dimensions of its own')


@checker('3.2')
def check_3_2(build):
    """``build(ks, vs, vocab_size, block_size, prefix_len)`` -> one-layer params, >= 99 % right."""
    rng = toolkit.fresh_rng()
    for name, ks, vs, vocab, block in _cases(VISIBLE_3_2, SPECS_3_2, rng):
        key_len = ks.shape[1]
        params = _built(build, (ks, vs, vocab, block, key_len), name, vocab, block, layers=1)
        right, total, first = _precision(params, ks, vs, vocab, rng, name)
        if right < 0.99:
            raise _miss(name, first, right, '; 99% needed')
        if key_len > 1:
            _separate(params, ks, vocab, block, name, rng)
    return Passed(f'one layer; on the notebook\'s table, {len(SPECS_3_2) + 1} tables drawn '
                  f'afresh ({_scope(SPECS_3_2)}, and 40 keys of 1 to 6 tokens) and a probe '
                  f'table drawn afresh ({_PROBE}), at least 99% of the keys right behind '
                  f'prefixes of every length (random, and cut from other keys); every key '
                  f'position moves the last position\'s stream, each in directions of its own '
                  f'(cosine <= {SEPARATE}, {PROBE_TOKENS} tokens from the whole vocabulary at '
                  f'each key position), as concatenation does; out_emb may be untied')


# ----------------------------------------------------------------------------- 3.6

SPEC_3_6 = dict(n=1000, key_len=5, vocab=1000, tok_dims=30, block=10, prefix=5, runs=3)
VISIBLE_3_6 = 36      # the seed of the table the exercises notebook shows (rng seed 0)
GAIN = 0.02


def _norm_values(ln, d):
    return np.concatenate([np.broadcast_to(np.asarray(ln.get(key, default), float), (d,))
                           for key, default in (('gamma', 1.0), ('beta', 0.0))])


def _kept(yours, book):
    """The first piece of the book's construction that ``yours`` changed, or None."""
    d = book['tok_emb'].shape[1]
    pairs = [(key, yours[key], book[key]) for key in ('tok_emb', 'pos_emb', 'lnf')]
    pairs += [(f"layers[0]['{key}']", yours['layers'][0][key], value)
              for key, value in book['layers'][0].items()]
    for key, theirs, value in pairs:
        if isinstance(value, dict):           # a layer norm: its gamma and beta, d of each
            theirs, value = _norm_values(theirs, d), _norm_values(value, d)
        if np.shape(theirs) != np.shape(value) or \
                not np.allclose(theirs, value, rtol=1e-9, atol=1e-12):
            return key
    return None


def _runs_3_6(build, table_seed, rng_seeds, label, rng):
    """Your builder and the book's on one table, for each rng seed: the mean precisions."""
    spec = SPEC_3_6
    ks, vs = lookup_case(spec['n'], spec['key_len'], spec['vocab'], table_seed)
    name = (f'{label} lookup_case({spec["n"]}, {spec["key_len"]}, {spec["vocab"]}, '
            f'seed={table_seed}), tok_dims {spec["tok_dims"]}')
    args = (ks, vs, spec['vocab'], spec['block'], spec['key_len'], spec['tok_dims'])
    yours, book = [], []
    for seed in rng_seeds:
        where = f'{name}, rng np.random.default_rng({seed})'
        params = _built(build, (*args, np.random.default_rng(seed)), where, spec['vocab'],
                        spec['block'], layers=1, d_model=spec['tok_dims'] + 3,
                        heads=spec['key_len'], d_ff=0)
        reference = build_untied_transformer(*args, rng=np.random.default_rng(seed))
        if changed := _kept(params, reference):
            raise Finding(f'{where}: your {changed} differs from the book\'s; this puzzle keeps '
                          f'the book\'s token embeddings and hash layer (the same draws from rng, '
                          f'as taotp.build_untied_transformer makes them) and changes only how '
                          f'out_emb is made')
        queries = lookup_queries(ks, spec['prefix'], spec['vocab'], rng)
        got = toolkit.run_program(lambda: last_token_argmax(queries, params), on=where)
        yours.append(float(np.mean(got == vs)))
        book.append(float(np.mean(last_token_argmax(queries, reference) == vs)))
    mine, theirs = float(np.mean(yours)), float(np.mean(book))
    if mine < theirs + GAIN:
        seeds = f'mean of {len(rng_seeds)} rng seeds' if len(rng_seeds) > 1 else \
            f'rng seed {rng_seeds[0]}'
        raise Finding(f'{name}, keys behind random {spec["prefix"]}-token prefixes ({seeds}): '
                      f'your out_emb decodes {mine:.1%} of the keys, the book\'s {theirs:.1%} on '
                      f'the same queries; at least {GAIN:.0%} more is needed')


@checker('3.6')
def check_3_6(build):
    """A modified untied builder, the same embeddings and hashes, beats the book's by 2 points."""
    spec, rng = SPEC_3_6, toolkit.fresh_rng()
    _runs_3_6(build, VISIBLE_3_6, [0], 'the notebook\'s table', rng)
    _runs_3_6(build, int(rng.integers(2 ** 31)), rng.integers(2 ** 31, size=spec['runs']).tolist(),
              'table', rng)
    return Passed(f'the book\'s embeddings and hashes (1 layer, {spec["key_len"]} heads, d_model '
                  f'{spec["tok_dims"] + 3}, no MLP) with your out_emb decode at least {GAIN:.0%} '
                  f'more keys behind random prefixes than with the book\'s out_emb: on the '
                  f'notebook\'s table (rng seed 0) and on a table drawn afresh (mean of '
                  f'{spec["runs"]} rng seeds); {spec["n"]:,} entries, keys of {spec["key_len"]}, '
                  f'vocab {spec["vocab"]:,}, tok_dims {spec["tok_dims"]}')


# ----------------------------------------------------------------------------- 3.7

VISIBLE_3_7 = (30, 3, 12, 37)      # the table the exercises notebook shows
SPECS_3_7 = ((100, 5, 100), (30, 3, 24), (30, 1, 40), (60, 2, 64), (40, 4, 30), (30, 6, 20))
# every key length from 1 to 6 (round 23: a builder wrong at length 4, which only the one
# drawn table could reach, passed 5 checks in 6; 3.2 likewise)


@checker('3.7')
def check_3_7(build):
    """``build(ks, vs, vocab_size, block_size)`` -> params that are 100 % right under PostLN."""
    rng = toolkit.fresh_rng()
    checked = 0
    for name, ks, vs, vocab, block in _cases(VISIBLE_3_7, SPECS_3_7, rng):
        params = _built(build, (ks, vs, vocab, block), name, vocab, block)
        right, total, first = _precision(params, ks, vs, vocab, rng, f'{name} (PostLN)',
                                         post_ln=True)
        if first is not None:
            raise _miss(f'{name}, PostLN forward', first, right)
        checked += total
    return Passed(f'PostLN forward (taotp.transformer(..., post_ln=True)): all {checked:,} '
                  f'queries right on the notebook\'s table and {len(SPECS_3_7) + 1} tables '
                  f'drawn afresh ({_scope(SPECS_3_7)}, and 40 keys of 1 to 6 tokens) and a '
                  f'probe table drawn afresh ({_PROBE}), every key behind random prefixes of '
                  f'every length 0 to {PREFIX} and behind a prefix cut from other keys')


# ----------------------------------------------------------------------------- 3.11

def additive_separable(ks, vs, vocab_size, margin=1.0):
    """Is there a score ``sum_p A_p[v, k_p]`` that ranks every key's value first by ``margin``?

    Chapter 3's constructions can only produce such scores, so an infeasible table defeats
    them at every width.  An LP feasibility problem (``scipy.optimize.linprog``, imported
    lazily: scipy is not a runtime dependency); True when separable.
    """
    from scipy.optimize import linprog
    ks, vs = np.asarray(ks), np.asarray(vs)
    V, n_vars = vocab_size, ks.shape[1] * vocab_size ** 2     # A[p, value, token]
    entry, other = np.nonzero(np.arange(V) != vs[:, None])     # a row per entry and other value
    if not len(entry):
        return True
    rows, each = np.zeros((len(entry), n_vars)), np.arange(len(entry))
    for p in range(ks.shape[1]):          # -(A_p[v, k_p] - A_p[u, k_p]) <= -margin
        rows[each, (p * V + vs[entry]) * V + ks[entry, p]] = -1
        rows[each, (p * V + other) * V + ks[entry, p]] = 1
    res = linprog(np.zeros(n_vars), A_ub=rows, b_ub=-margin * np.ones(len(rows)),
                  bounds=[(None, None)] * n_vars, method='highs')
    if res.status not in (0, 2):
        raise RuntimeError(f'additive_separable: linprog ended with status {res.status} '
                           f'({res.message})')
    return res.status == 0


MAX_VARS = 20000   # key length x vocabulary^2 of the LP of 3.11
DIGEST_3_11 = '4e1026decdce5e95270ae9d8702ca28775091038b5c73ef7bee6cb9a86b92b42'   # the least size


@checker('3.11')
def check_3_11(answer):
    """``{'ks': keys, 'vs': values, 'smallest': n}``: an unlearnable table and the least size."""
    if not isinstance(answer, dict) or not {'ks', 'vs', 'smallest'} <= set(answer):
        got = sorted(map(str, answer)) if isinstance(answer, dict) else toolkit.describe(answer)
        raise Finding(f"expected a dict with keys 'ks', 'vs' and 'smallest'; got {got}")
    ks = toolkit.array(answer['ks'], what="answer['ks']", integer=True)
    if ks.ndim != 2 or ks.shape[0] < 1 or ks.shape[1] < 1:
        raise Finding(f"answer['ks'] must have shape (n_entries, key_len); got {ks.shape}")
    vs = toolkit.array(answer['vs'], shape=(ks.shape[0],), what="answer['vs']", integer=True)
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
    if type(smallest) is not int:
        raise Finding(f"answer['smallest'] must be a plain int (a number of entries); got "
                      f"{toolkit.describe(smallest)}")
    if not toolkit.same_digest('3.11', smallest, DIGEST_3_11):
        raise Finding(f'your table is adversarial, but {smallest} is not the least number of '
                      f'entries such a table can have; find the size at which one first exists, '
                      f'and why no smaller table can be one (try candidates with '
                      f'taotp.exercises.ch03.additive_separable)')
    return Passed(f'{table}: no additive score separates it (LP infeasible with margin 1), so '
                  f'no width helps; and {smallest} entries is the least such a table can have '
                  f'(compared with a salted digest of the answer)')


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
    Puzzle('3.7', 'Lookup Table on a PostLN transformer', 'checked', check_3_7,
           refuse=dict.fromkeys([f'taotp.lookup.universal.{name}' for name in (
               'build_universal_lookup_transformer', 'universal_hash_layer', 'interpolating_mlp')],
                                'the puzzle asks about the chapter\'s construction; the universal '
                                'builder is Chapter 12\'s record')),
    Puzzle('3.8', 'More text and longer keys for the Romeo and Juliet generator', 'reflect'),
    Puzzle('3.9', 'Why 1,000 entries over 10 tokens stall near 20 %', 'reflect'),
    Puzzle('3.10', 'A tighter bound on the token dimensions needed', 'reflect'),
    Puzzle('3.11', 'A table no width can memorise, and the smallest one', 'checked', check_3_11),
]
