"""Checkers for Chapter 4, Search.

Program answers are builders ``build(vocab_size, block_size, prefix_len) -> params``;
the checkers call them at a few sizes and compare the last prediction (from
``taotp.last_token_argmax``, the one engine's last-position path) with
``taotp.search.search_reference``.  An input is *defined* when its query (the last
``prefix_len`` tokens) occurs exactly once earlier and shares no token with the
first ``prefix_len`` tokens, so that what a construction does at positions
without a full key never matters.  Each size is tried on seeded random inputs of
the full length and of shorter lengths, plus hand-placed boundary inputs: the
match as early and as late as it can be, a query of one repeated token, the
first and last tokens of the vocabulary, and (for the exact puzzles) many near
misses that differ from the query in one token.

Two helpers here are shared by the checkers of Chapters 5 and 6:

* ``frozen(params)``: the submission read once into plain dicts, lists and
  float64 arrays; everything a checker measures and runs is that copy.
* ``submission_rng(base, *values)``: the random inputs are drawn with a seed
  mixed from the submission itself, so they are deterministic for a given answer
  but cannot be known before the answer is fixed (no answer can be tailored to
  them).
"""
import hashlib
from types import MappingProxyType

import numpy as np

from ..decoding import last_token_argmax
from ..params import block_size, count_params
from ..programs import CATALOGUE
from ..search import build_search_transformer, random_search_inputs, search_reference
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed


# ----------------------------------------------------------------------------- shared helpers

frozen, submission_rng = guard.frozen, guard.submission_rng   # (also used by Ch. 5, 6, 12)


# ----------------------------------------------------------------------------- inputs

def _defined(x, L):
    x = [int(t) for t in x]
    return search_reference(x, L) is not None and not set(x[:L]) & set(x[-L:])


def search_cases(seed, n, vocab_size, block_size, prefix_len):
    """Seeded inputs (n, block_size) with a unique query that avoids the first prefix_len tokens.

    ``seed`` is an int or a ``numpy.random.Generator``.
    """
    rng = np.random.default_rng(seed)
    rows, answers = [], []
    while len(rows) < n:
        X, want = random_search_inputs(rng, 4 * n, vocab_size, block_size, prefix_len)
        for x, w in zip(X, want):
            if not set(x[:prefix_len].tolist()) & set(x[-prefix_len:].tolist()):
                rows.append(x)
                answers.append(w)
    return np.array(rows[:n]), np.array(answers[:n])


def _planted(rng, vocab, length, L, query, start, answer=None, near_misses=0):
    """An input of ``length`` tokens: background, ``query`` + answer at ``start``, the query last.

    The background avoids the query's tokens (so it cannot match by chance);
    ``near_misses`` copies of the query with one token changed are planted too.
    Returns None when the constraints leave no defined input.
    """
    others = np.setdiff1d(np.arange(vocab), query)
    if len(others) == 0:
        return None
    for _ in range(50):
        x = rng.choice(others, size=length)
        for _ in range(near_misses):
            s = int(rng.integers(L, length - 2 * L))
            near = np.array(query)
            j = int(rng.integers(0, L))
            near[j] = rng.choice(np.setdiff1d(np.arange(vocab), [query[j]]))
            x[s:s + L] = near
        x[start:start + L] = query
        x[start + L] = rng.integers(0, vocab) if answer is None else answer
        x[length - L:] = query
        if _defined(x, L):
            return x
    return None


def boundary_cases(rng, vocab, length, L, adversarial=True):
    """Hand-placed defined inputs of ``length`` tokens, each with a label.

    ``adversarial`` adds the two inputs that defeat approximate (hashed) matching:
    many near misses, and a query alternating the first and last tokens of the
    vocabulary (neighbours on the token circle), whose shifted copies almost match.
    """
    cases = []
    top = vocab - 1
    q = rng.choice(vocab, size=L, replace=vocab < L)
    ends = q.copy()
    ends[0], ends[-1] = 0, top
    anywhere = lambda: int(rng.integers(L, length - 2 * L))
    specs = [
        ('the match right after the first prefix_len tokens', q, L, None, 0),
        ('the match right before the query', q, length - 2 * L - 1, None, 0),
        ('a query of one repeated token', np.full(L, q[0]), anywhere(), None, 0),
        ('a query holding the first and last tokens of the vocabulary', ends, anywhere(), top, 0),
        ('the answer token equal to the query\'s first token', q, anywhere(), q[0], 0),
    ]
    if adversarial:
        specs += [('many near misses (the query with one token changed)', q, anywhere(), None,
                   max(2, length // (3 * L))),
                  ('a query alternating the first and last tokens of the vocabulary',
                   np.resize([0, top], L), anywhere(), 0, 0)]
    for label, query, start, answer, near in specs:
        x = _planted(rng, vocab, length, L, np.asarray(query), start, answer, near)
        if x is not None:
            cases.append((label, x))
    return cases


def _inputs(rng, sizes, n_random, adversarial=True):
    """Groups of equal-length inputs: [(label, X (n, length), want (n,))]."""
    vocab, block, L = sizes
    groups = []
    shortest = 3 * L + 1                       # first L tokens, the match and its answer, query
    lengths = sorted({block, max(shortest, block // 2), max(shortest, (3 * block) // 4)})
    for length in lengths:
        n = n_random if length == block else max(10, n_random // 4)
        X, want = search_cases(rng, n, vocab, length, L)
        groups.append((f'a random input of {length} tokens', X, want))
    for length in sorted({block, shortest + L}):
        if length < shortest or length > block:
            continue
        for label, x in boundary_cases(rng, vocab, length, L, adversarial):
            groups.append((f'{label} ({length} tokens)', x[None],
                           np.array([search_reference(x, L)])))
    return groups


def _build(build, sizes, what='your builder'):
    vocab, block, L = sizes
    params = guard.call(build, vocab, block, L, what=what,
                        on=f'vocab_size={vocab}, block_size={block}, prefix_len={L}')
    params = frozen(params, what=f'your params for {sizes}')
    if len(params['tok_emb']) < vocab:
        raise Finding(f'{sizes}: tok_emb has {len(params["tok_emb"])} rows; expected at least '
                      f'vocab_size = {vocab}')
    if block_size(params) < block:
        raise Finding(f'{sizes}: pos_emb has {block_size(params)} rows, fewer than block_size = '
                      f'{block}')
    return params


def _accuracy(params, sizes, groups, need=1.0, post_ln=False):
    """Share of all inputs answered right; a Finding names the first wrong one if below need."""
    wrong, total, first = 0, 0, None
    for label, X, want in groups:
        got = guard.run_program(lambda: last_token_argmax(X, params, post_ln=post_ln),
                                what='your program')
        bad = np.flatnonzero(got != want)
        wrong, total = wrong + len(bad), total + len(X)
        if len(bad) and first is None:
            i = int(bad[0])
            first = (label, X[i], int(want[i]), int(got[i]))
    if total and (total - wrong) / total < need:
        label, x, want, got = first
        L = sizes[2]
        raise Finding(f'{sizes}: {wrong} of {total} inputs wrong (needed {need:.0%} right); '
                      f'first: {label}, ending in the query {x[-L:].tolist()}: expected {want}, '
                      f'got {got}', x.tolist())
    return (total - wrong) / total, total


SEED_NOTE = 'random inputs drawn with a seed taken from your program'


# ----------------------------------------------------------------------------- 4.2

SIZES_4_2 = ((10, 40, 2), (10, 40, 3), (30, 60, 3), (16, 64, 4))


@checker('4.2')
def check_4_2(build):
    """``build(vocab_size, block_size, prefix_len)`` that searches on a PostLN transformer."""
    total = 0
    for s in SIZES_4_2:
        params = _build(build, s)
        _, n = _accuracy(params, s, _inputs(submission_rng(42, params), s, 80), post_ln=True)
        total += n
    return Passed(f'exact on {total} defined inputs under the PostLN forward pass (norm after '
                  f'each residual add) at (vocab, block, prefix) = '
                  f'{", ".join(map(str, SIZES_4_2))}: full-length and shorter inputs, the match '
                  f'at both ends, repeated and extreme tokens, near misses, a query alternating '
                  f'the first and last tokens; {SEED_NOTE}')


# ----------------------------------------------------------------------------- 4.3

def _fixed_tables():
    rng = np.random.default_rng(43)
    xor = ([[0, 0], [0, 1], [1, 0], [1, 1]], [0, 1, 1, 0], 2)
    grid = ([[a, b] for a in range(3) for b in range(3)], rng.integers(0, 3, 9).tolist(), 3)
    keys = set()
    while len(keys) < 12:
        keys.add(tuple(rng.integers(0, 10, 3).tolist()))
    rand = ([list(k) for k in sorted(keys)], rng.integers(0, 10, 12).tolist(), 10)
    single = ([[0], [1], [2], [3]], [3, 3, 0, 1], 4)
    binary = ([[(k >> i) & 1 for i in (3, 2, 1, 0)] for k in range(16)],
              [bin(k).count('1') % 2 for k in range(16)], 2)
    repeats = ([[1, 1, 1], [1, 1, 2], [2, 1, 1], [1, 2, 1], [2, 2, 2]], [1, 1, 2, 2, 0], 3)
    return [('XOR table', *xor), ('all 9 keys of length 2 over 3 symbols', *grid),
            ('random table, 12 keys of length 3 over 10 symbols', *rand),
            ('keys of length 1', *single), ('all 16 binary keys of length 4 (parity)', *binary),
            ('keys of repeated tokens, values equal to key tokens', *repeats),
            ('a table of one entry', [[4, 2]], [7], 8)]


def _random_table(rng, n, key_len, vocab):
    keys = set()
    while len(keys) < n:
        keys.add(tuple(rng.integers(0, vocab, key_len).tolist()))
    return [list(k) for k in sorted(keys)], rng.integers(0, vocab, n).tolist(), vocab


def _prompt(make_prompt, ks, vs, key, vocab):
    out = guard.call(make_prompt, [list(k) for k in ks], list(vs), list(key), vocab,
                     what='your make_prompt', on=f'key {list(key)}')
    if not isinstance(out, (tuple, list)):
        raise Finding('make_prompt must return (prompt, prefix_len); got '
                      f'{type(out).__name__}')
    out = list(out)
    if len(out) != 2:
        raise Finding(f'make_prompt must return (prompt, prefix_len); got {len(out)} values')
    prompt = guard.array(out[0], what='the prompt', integer=True)
    if prompt.ndim != 1 or len(prompt) < 2:
        raise Finding(f'the prompt must be a 1-D list of token ids; got shape {prompt.shape}')
    if prompt.min() < 0 or prompt.max() > vocab:
        raise Finding(f'prompt ids must lie in 0..{vocab} (vocab_size plus one extra id); got '
                      f'{int(prompt.min())}..{int(prompt.max())}')
    L = out[1]
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or not 2 <= L <= len(prompt) - 2:
        raise Finding(f'prefix_len must be an int from 2 to len(prompt) - 2; got {L!r}')
    return prompt, int(L)


def _common_prefix(rows):
    n = min(len(r) for r in rows)
    for i in range(n):
        if len({int(r[i]) for r in rows}) > 1:
            return i
    return n


def _value_variants(rng, vs, vocab):
    """Other values for the same keys: shifted by one, redrawn at random, all equal."""
    return [[(v + 1) % vocab for v in vs], rng.integers(0, vocab, len(vs)).tolist(),
            [int(vs[0])] * len(vs)]


def _lookups(make_prompt, name, ks, vs, vocab, rng):
    """Every key of one table, with its values as given and three variants; returns the prompts.

    The part of the prompts that changes from key to key, and prefix_len, must be
    the same for every variant of the values.
    """
    first, prompts_seen = None, []
    for values in [vs] + _value_variants(rng, vs, vocab):
        prompts = [_prompt(make_prompt, ks, values, key, vocab) for key in ks]
        for (prompt, L), key, want in zip(prompts, ks, values):
            params = build_search_transformer(vocab + 1, len(prompt), L)
            got = int(last_token_argmax(prompt[None], params)[0])
            if got != want:
                raise Finding(f'{name}, key {key}: Search on your prompt {prompt.tolist()} '
                              f'(prefix_len {L}) answered {got}; expected the value {want}',
                              prompt.tolist())
        prompts_seen += [p.tolist() for p, _ in prompts]
        start = _common_prefix([p for p, _ in prompts])
        signature = [(p[start:].tolist(), L) for p, L in prompts]
        if first is None:
            first = (values, signature)
        elif signature != first[1]:
            i = next(j for j in range(len(ks)) if signature[j] != first[1][j])
            raise Finding(f'{name}, key {ks[i]}: the part of the prompt that changes from key to '
                          f'key (or prefix_len) changed when only the table\'s values changed '
                          f'({first[1][i]} with values {first[0]}, {signature[i]} with values '
                          f'{values}); it must depend on the key alone, the answer has to come '
                          f'from the table part')
    return prompts_seen


@checker('4.3')
def check_4_3(make_prompt):
    """``make_prompt(keys, values, key, vocab_size) -> (prompt, prefix_len)`` + Search = lookup."""
    tables, seen = _fixed_tables(), []
    for k, (name, ks, vs, vocab) in enumerate(tables):
        seen += _lookups(make_prompt, name, ks, vs, vocab, np.random.default_rng(4300 + k))
    rng = submission_rng(43, seen)           # two more tables, drawn after your fixed answers
    extra = [('a random table of 20 keys of length 2 over 50 symbols',
              *_random_table(rng, 20, 2, 50)),
             ('a random table of 6 keys of length 5 over 4 symbols', *_random_table(rng, 6, 5, 4))]
    for k, (name, ks, vs, vocab) in enumerate(extra):
        seen += _lookups(make_prompt, name, ks, vs, vocab, rng)
    return Passed(f'{len(seen)} lookups right over {len(tables) + len(extra)} tables (XOR, all 9 '
                  f'two-token keys over 3 symbols, 16 binary keys, repeated-token keys, one-token '
                  f'keys, a one-entry table, three random tables), each with its values as given, '
                  f'shifted, redrawn and all equal; the per-key part of each prompt and '
                  f'prefix_len depend on the key alone')


# ----------------------------------------------------------------------------- 4.4 and 4.5

SIZES_4_4 = ((10, 100, 3), (1000, 100, 10), (16, 64, 2))


def _search_sizes_check(build, need, limits, adversarial, n_random=250):
    results = []
    for s in SIZES_4_4:
        params = _build(build, s)
        measured = guard.budget(params, what=f'your program for {s}', **limits(s))
        total = count_params(params)['n_params']
        d = params['tok_emb'].shape[1]
        acc, n = _accuracy(params, s, _inputs(submission_rng(44, params), s, n_random,
                                              adversarial), need=need)
        results.append((s, d, total, acc, n, measured))
    return results


@checker('4.4')
def check_4_4(build):
    """Search with fewer than 3 dimensions per stored token: d_model < 3 * (prefix_len + 1)."""
    res = _search_sizes_check(build, 1.0, lambda s: {'d_model': 3 * (s[2] + 1) - 1}, True)
    return Passed('exact on every input, with d_model below 3 * (prefix_len + 1): ' + '; '.join(
        f'{s}: d_model {d} (book {3 * (s[2] + 1)}), {total:,} parameters, {n} inputs'
        for s, d, total, _, n, _ in res) + f' (full-length and shorter inputs, the match at '
        f'both ends, repeated and extreme tokens, near misses, a query alternating the first and '
        f'last tokens; {SEED_NOTE})')


def _book_total(sizes):
    return count_params(build_search_transformer(*sizes))['n_params']


# the book's totals at the sizes 4.4 and 4.5 try (the first two are the catalogue's numbers)
BOOK_TOTALS = MappingProxyType({(10, 100, 3): CATALOGUE['search-10'].source_total,
                                (1000, 100, 10): CATALOGUE['search-1000'].source_total,
                                (16, 64, 2): _book_total((16, 64, 2))})   # read-only


@checker('4.5')
def check_4_5(build):
    """Hashed keys: at least 99 % right with fewer parameters than the book's construction."""
    res = _search_sizes_check(build, 0.99, lambda s: {'params': BOOK_TOTALS[s] - 1}, False)
    return Passed('>= 99 % right with fewer parameters than the book (counted on your arrays): '
                  + '; '.join(f'{s}: {acc:.1%} of {n} inputs right, {total:,} parameters '
                              f'(book {BOOK_TOTALS[s]:,})' for s, d, total, acc, n, _ in res)
                  + f' (random inputs of full and shorter length, the match at both ends, repeated '
                  f'and extreme tokens; no near misses, which hashing may confuse; {SEED_NOTE}; '
                  f'the checker sees sizes and accuracy, not whether the keys are hashed)')


PUZZLES = [
    Puzzle('4.1', 'Search with the Romeo-and-Juliet embeddings trained in Chapter 3', 'reflect'),
    Puzzle('4.2', 'Search on a PostLN transformer', 'checked', check_4_2),
    Puzzle('4.3', 'Any lookup table: prepend it to the prompt and search', 'checked', check_4_3),
    Puzzle('4.4', 'Fewer than 3 dimensions per stored token', 'checked', check_4_4,
           budget='d_model < 3 * (prefix_len + 1)'),
    Puzzle('4.5', 'Hash the key tokens instead of concatenating them', 'checked', check_4_5,
           budget='>= 99 % right, fewer parameters than the book'),
    Puzzle('4.6', 'Behaviour in the undefined cases (query twice; only a near match)', 'reflect'),
]

__all__ = ['search_cases', 'boundary_cases', 'frozen', 'submission_rng', 'PUZZLES']
