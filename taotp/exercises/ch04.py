"""Checkers for Chapter 4, Search.

Program answers are builders ``build(vocab_size, block_size, prefix_len) -> params``;
the checkers call them at a few sizes and compare the last prediction (from
``taotp.last_token_argmax``, the one engine's last-position path) with
``taotp.search.search_reference`` on seeded inputs whose query occurs exactly
once.  Those inputs also keep the first ``prefix_len`` tokens out of the query, so
that what a construction does at positions without a full key never matters.
"""
import numpy as np

from ..decoding import last_token_argmax
from ..params import block_size, count_params
from ..programs import CATALOGUE
from ..search import build_search_transformer, random_search_inputs
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed


def search_cases(seed, n, vocab_size, block_size, prefix_len):
    """Seeded inputs (n, block_size) with a unique query that avoids the first prefix_len tokens."""
    rng = np.random.default_rng(seed)
    rows, answers = [], []
    while len(rows) < n:
        X, want = random_search_inputs(rng, 4 * n, vocab_size, block_size, prefix_len)
        for x, w in zip(X, want):
            if not set(x[:prefix_len].tolist()) & set(x[-prefix_len:].tolist()):
                rows.append(x)
                answers.append(w)
    return np.array(rows[:n]), np.array(answers[:n])


def _build(build, sizes, what='your builder'):
    vocab, block, L = sizes
    params = guard.call(build, vocab, block, L, what=what,
                        on=f'vocab_size={vocab}, block_size={block}, prefix_len={L}')
    guard.program(params, what=f'your params for {sizes}')
    if len(params['tok_emb']) < vocab:
        raise Finding(f'{sizes}: tok_emb has {len(params["tok_emb"])} rows; expected at least '
                      f'vocab_size = {vocab}')
    if block_size(params) < block:
        raise Finding(f'{sizes}: pos_emb has {block_size(params)} rows, fewer than block_size = '
                      f'{block}')
    return params


def _accuracy(params, sizes, n, seed, need=1.0, post_ln=False):
    vocab, block, L = sizes
    X, want = search_cases(seed, n, vocab, block, L)
    got = guard.run_program(lambda: last_token_argmax(X, params, post_ln=post_ln),
                            what='your program')
    right = got == want
    if right.mean() < need:
        i = int(np.flatnonzero(~right)[0])
        q = X[i, -L:].tolist()
        raise Finding(f'{sizes}: {int((~right).sum())} of {n} seeded inputs wrong (needed '
                      f'{need:.0%} right); first: an input of {block} tokens ending in the query '
                      f'{q}, expected {int(want[i])}, got {int(got[i])}', X[i].tolist())
    return right.mean()


# ----------------------------------------------------------------------------- 4.2

@checker('4.2')
def check_4_2(build, n=70):
    """``build(vocab_size, block_size, prefix_len)`` that searches on a PostLN transformer."""
    sizes = ((10, 40, 2), (10, 40, 3), (30, 60, 3))
    for k, s in enumerate(sizes):
        _accuracy(_build(build, s), s, n, seed=42 + k, post_ln=True)
    return Passed(f'exact on {n * len(sizes)} seeded inputs with a unique query under the PostLN '
                  f'forward pass (norm after each residual add), at (vocab, block, prefix) = '
                  f'{", ".join(map(str, sizes))}')


# ----------------------------------------------------------------------------- 4.3

def _tables():
    rng = np.random.default_rng(43)
    xor = ([[0, 0], [0, 1], [1, 0], [1, 1]], [0, 1, 1, 0], 2)
    grid = ([[a, b] for a in range(3) for b in range(3)], rng.integers(0, 3, 9).tolist(), 3)
    keys = set()
    while len(keys) < 12:
        keys.add(tuple(rng.integers(0, 10, 3).tolist()))
    rand = ([list(k) for k in sorted(keys)], rng.integers(0, 10, 12).tolist(), 10)
    single = ([[0], [1], [2], [3]], [3, 3, 0, 1], 4)
    return [('XOR table', *xor), ('all 9 keys of length 2 over 3 symbols', *grid),
            ('random table, 12 keys of length 3 over 10 symbols', *rand),
            ('keys of length 1', *single)]


def _prompt(make_prompt, ks, vs, key, vocab):
    out = guard.call(make_prompt, [list(k) for k in ks], list(vs), list(key), vocab,
                     what='your make_prompt', on=f'key {list(key)}')
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise Finding('make_prompt must return (prompt, prefix_len); got '
                      f'{type(out).__name__}')
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


@checker('4.3')
def check_4_3(make_prompt):
    """``make_prompt(keys, values, key, vocab_size) -> (prompt, prefix_len)`` + Search = lookup."""
    checked = 0
    for name, ks, vs, vocab in _tables():
        twin = [(v + 1) % vocab for v in vs]               # same keys, other values
        suffixes = []
        for values in (vs, twin):
            prompts = [_prompt(make_prompt, ks, values, k, vocab) for k in ks]
            for (prompt, L), key, want in zip(prompts, ks, values):
                params = build_search_transformer(vocab + 1, len(prompt), L)
                got = int(last_token_argmax(prompt[None], params)[0])
                if got != want:
                    raise Finding(f'{name}, key {key}: Search on your prompt {prompt.tolist()} '
                                  f'(prefix_len {L}) answered {got}; expected the value {want}',
                                  prompt.tolist())
                checked += 1
            start = _common_prefix([p for p, _ in prompts])
            suffixes.append([p[start:].tolist() for p, _ in prompts])
        if suffixes[0] != suffixes[1]:
            raise Finding(f'{name}: the part of the prompt that differs between keys changes when '
                          f'only the values of the table change ({suffixes[0][0]} vs '
                          f'{suffixes[1][0]}); it must depend on the key alone, the answer has to '
                          f'come from the table part')
    return Passed(f'{checked} lookups right over 8 tables (XOR, all 9 two-token keys over 3 '
                  f'symbols, a random 12-entry table, one-token keys, each also with shifted '
                  f'values); the per-key part of each prompt depends on the key alone')


# ----------------------------------------------------------------------------- 4.4 and 4.5

def _search_sizes_check(build, need, n_small, n_large, budget):
    results = []
    for k, (s, n) in enumerate((((10, 100, 3), n_small), ((1000, 100, 10), n_large))):
        params = _build(build, s)
        d = np.shape(params['tok_emb'])[1]
        total = count_params(params)['n_params']
        problem = budget(s, d, total)
        if problem:
            raise Finding(f'{s}: {problem}')
        acc = _accuracy(params, s, n, seed=7 + k, need=need)
        results.append((s, d, total, acc))
    return results


@checker('4.4')
def check_4_4(build, n_small=150, n_large=40):
    """Search with fewer than 3 dimensions per stored token: d_model < 3 * (prefix_len + 1)."""
    def budget(s, d, total):
        L = s[2]
        if d >= 3 * (L + 1):
            return f'd_model is {d}; the budget is below 3 * (prefix_len + 1) = {3 * (L + 1)}'
    res = _search_sizes_check(build, 1.0, n_small, n_large, budget)
    return Passed('exact on seeded unique-query inputs: ' + '; '.join(
        f'{s}: d_model {d} (book {3 * (s[2] + 1)}), {total:,} parameters, {n} inputs'
        for (s, d, total, _), n in zip(res, (n_small, n_large))))


# the book's totals at the two sizes 4.4 and 4.5 try, read from the catalogue of programs
BOOK_TOTALS = {(10, 100, 3): CATALOGUE['search-10'].source_total,
               (1000, 100, 10): CATALOGUE['search-1000'].source_total}


@checker('4.5')
def check_4_5(build, n_small=150, n_large=40):
    """Hashed keys: at least 99 % right with fewer parameters than the book's construction."""
    def budget(s, d, total):
        if total >= BOOK_TOTALS[s]:
            return (f'{total:,} parameters; the budget is below the book\'s '
                    f'{BOOK_TOTALS[s]:,}')
    res = _search_sizes_check(build, 0.99, n_small, n_large, budget)
    return Passed('>= 99 % right on seeded unique-query inputs with fewer parameters than the '
                  'book: ' + '; '.join(f'{s}: {acc:.1%} right, {total:,} parameters '
                                       f'(book {BOOK_TOTALS[s]:,})' for s, d, total, acc in res)
                  + ' (the checker sees sizes and accuracy, not whether the keys are hashed)')


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

__all__ = ['search_cases', 'PUZZLES']
