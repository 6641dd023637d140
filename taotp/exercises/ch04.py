"""Checkers for Chapter 4, Search.

Builders ``build(vocab_size, block_size, prefix_len) -> params`` run at a few sizes; the last
prediction must be ``search_reference``'s on *defined* inputs (the query, the last
``prefix_len`` tokens, occurs once earlier and shares no token with the first ``prefix_len``).
Each check draws ``search_inputs`` from a new seed: random inputs of several lengths,
hand-placed boundary ones, and sweeps of every token in every place of the query and of the
match at every position.  A failure names the seed, the input's index and what the program
answered, never the expected token.
"""
import numpy as np

from ..decoding import last_token_argmax
from ..lookup import random_lookup_table
from ..params import count_params
from ..search import build_search_transformer, random_search_inputs, search_reference
from . import toolkit
from .registry import Puzzle, checker
from .toolkit import Finding, Passed


def _defined(x, L):
    x = [int(t) for t in x]
    return search_reference(x, L) is not None and not set(x[:L]) & set(x[-L:])


def search_cases(seed, n, vocab_size, block_size, prefix_len):
    """(inputs (n, block_size), answers) drawn from ``seed`` (an int or a Generator), each with
    a unique query that avoids the first prefix_len tokens."""
    rng, rows, answers = np.random.default_rng(seed), [], []
    while len(rows) < n:
        X, want = random_search_inputs(rng, 4 * n, vocab_size, block_size, prefix_len)
        keep = [not set(x[:prefix_len].tolist()) & set(x[-prefix_len:].tolist()) for x in X]
        rows += list(X[keep])
        answers += list(want[keep])
    return np.array(rows[:n]), np.array(answers[:n])


def _planted(rng, vocab, length, L, query, start, answer=None, near_misses=0, place=None):
    """A defined input of ``length`` tokens (or None): a background free of the query's tokens,
    ``query`` + answer at ``start``, the query last, and ``near_misses`` copies of the query
    with one token changed (at ``place``, else anywhere), each followed by another token."""
    others = np.setdiff1d(np.arange(vocab), query)
    free = [s for s in range(L, length - 2 * L) if s + L < start or s > start + L]
    if len(others) == 0 or (near_misses and not free):
        return None
    for _ in range(50):
        x = rng.choice(others, size=length)
        x[start:start + L] = query
        x[start + L] = rng.integers(0, vocab) if answer is None else answer
        for _ in range(near_misses):
            s = int(rng.choice(free))
            j = int(rng.integers(0, L)) if place is None else place
            x[s:s + L] = query
            x[s + j] = rng.choice(np.setdiff1d(np.arange(vocab), [query[j]]))
            if len(others) > 1:
                x[s + L] = rng.choice(np.setdiff1d(others, [x[start + L]]))
        x[length - L:] = query
        if _defined(x, L):
            return x
    return None


def boundary_cases(rng, vocab, length, L, adversarial=True):
    """Hand-placed defined inputs of ``length`` tokens, as (label, input).  ``adversarial`` adds
    those that defeat approximate (hashed) matching: near misses, one in each place of the
    query, and a query alternating the first and last tokens (neighbours on the token circle)."""
    top = vocab - 1
    q = rng.choice(vocab, size=L, replace=vocab < L)
    ends = q.copy()
    ends[0], ends[-1] = 0, top
    anywhere = lambda: int(rng.integers(L, length - 2 * L))
    specs = [   # label, query, start of the match, answer, near misses (, their place)
        ('the match right after the first prefix_len tokens', q, L, None, 0),
        ('the match right before the query', q, length - 2 * L - 1, None, 0),
        ('a query of one repeated token', np.full(L, q[0]), anywhere(), None, 0),
        ('a query holding the first and last tokens of the vocabulary', ends, anywhere(), top, 0),
        ('the answer token equal to the query\'s first token', q, anywhere(), q[0], 0)]
    if adversarial:
        specs += [('many near misses (the query with one token changed)', q, anywhere(), None,
                   max(2, length // (3 * L))),
                  ('a query alternating the first and last tokens of the vocabulary',
                   np.resize([0, top], L), anywhere(), 0, 0)]
        # one near miss per place, after the match and before it (whichever way a program
        # breaks a tie, a place it ignores makes the near miss win once)
        specs += [(f'a near miss that differs from the query in place {j} only, {where} the '
                   f'match', q, start, None, 1, j) for j in range(L)
                  for where, start in (('after', L), ('before', length - 2 * L - 1))]
    planted = [(label, _planted(rng, vocab, length, L, np.asarray(query), *rest))
               for label, query, *rest in specs]
    return [(label, x) for label, x in planted if x is not None]


def sweep_cases(rng, vocab, block, L, tokens=True):
    """Defined inputs with the match at every position of a full-length input and (``tokens``)
    every token in every place of the query and right after its earlier copy (independent
    permutations, one per place; short inputs of 3 L + 2 tokens)."""
    short = min(block, 3 * L + 2)
    orders = [rng.permutation(vocab) for _ in range(L + 1)]
    planted = [(f'every token in every place ({short} tokens)',
                _planted(rng, vocab, short, L, np.array([order[i] for order in orders[:L]]),
                         L + i % (short - 3 * L), orders[L][i]))
               for i in range(vocab if tokens else 0)]
    planted += [(f'the match at every position ({block} tokens)',
                 _planted(rng, vocab, block, L, rng.choice(vocab, size=L), start))
                for start in range(L, block - 2 * L)]
    return [(label, x) for label, x in planted if x is not None]


def search_inputs(seed, sizes, n_random, adversarial=True):
    """The inputs one check tries at ``sizes`` = (vocab, block, prefix_len), drawn from ``seed``:
    a list of (label, input) with defined answers.  ``adversarial=False`` (for approximate
    programs, 4.5) leaves out the near misses and the sweep of every token in every place."""
    vocab, block, L = sizes
    rng = np.random.default_rng(seed)
    cases = []
    shortest = 3 * L + 1                       # first L tokens, the match and its answer, query
    for length in sorted({block, max(shortest, block // 2), max(shortest, (3 * block) // 4)}):
        X, _ = search_cases(rng, n_random if length == block else max(10, n_random // 4),
                            vocab, length, L)
        cases += [(f'a random input of {length} tokens', x) for x in X]
    for length in range(shortest, block + 1):  # round 21: a program right only at the lengths
        X, _ = search_cases(rng, 1, vocab, length, L)           # above and below passed
        cases += [(f'a random input of {length} tokens', x) for x in X]
    for length in sorted({block, shortest + L}):
        if shortest <= length <= block:
            cases += [(f'{label} ({length} tokens)', x)
                      for label, x in boundary_cases(rng, vocab, length, L, adversarial)]
    return cases + sweep_cases(rng, vocab, block, L, tokens=adversarial)


# ----------------------------------------------------------------------------- judging programs

def _build(build, sizes, **limits):
    """The program ``build`` returns at ``sizes``, within ``limits``, with room for them."""
    params = toolkit.built(build, *sizes, on='vocab_size={}, block_size={}, prefix_len={}'
                           .format(*sizes), **limits)
    toolkit.room(params, *sizes[:2], on=sizes)
    return params


def _judge(params, sizes, n_random, need=1.0, post_ln=False, adversarial=True):
    """Run every input of a fresh ``search_inputs``; a Finding names a wrong one (never its
    answer) when fewer than ``need`` are right."""
    seed = toolkit.fresh_seed()
    cases = search_inputs(seed, sizes, n_random, adversarial)
    got = np.full(len(cases), -1)
    for length in sorted({len(x) for _, x in cases}):
        idx = [i for i, (_, x) in enumerate(cases) if len(x) == length]
        X = np.array([cases[i][1] for i in idx])
        got[idx] = toolkit.run_program(lambda: last_token_argmax(X, params, post_ln=post_ln),
                                       on=f'inputs of {length} tokens')
    want = np.array([search_reference(x, sizes[2]) for _, x in cases])
    bad = np.flatnonzero(got != want)               # one pool: the share is over all inputs
    if len(bad) > (1 - need) * len(cases):
        i, L = int(bad[0]), sizes[2]
        label, x = cases[i]
        where = next(s for s in range(len(x) - L) if list(x[s:s + L]) == list(x[-L:]))
        share = '' if need == 1 else f'{1 - len(bad) / len(cases):.1%} of this check\'s ' \
            f'{len(cases)} random and hand-placed inputs right, needed {need:.0%}; one it missed: '
        rebuild = f'{seed}, {sizes}, {n_random}{"" if adversarial else ", adversarial=False"}'
        raise toolkit.wrong(f'{sizes}: {share}input {i} of ch04.search_inputs({rebuild}) '
                            f'({label}, query {x[-L:].tolist()})', int(got[i]),
                            f'its earlier copy is at position {where}, and the answer is the '
                            f'token right after that copy', x.tolist())


SWEEP = ('random inputs of full and shorter length (one of every length), the match at both '
         'ends, repeated and extreme tokens, near misses in every place of the query, a query '
         'alternating the first and last tokens, every token in every place of the query and '
         'after it, the match at every position, all drawn afresh')


# ----------------------------------------------------------------------------- 4.2

SIZES_4_2 = ((10, 40, 2), (10, 40, 3), (30, 60, 3), (16, 64, 4))


@checker('4.2')
def check_4_2(build):
    """``build(vocab_size, block_size, prefix_len)`` that searches on a PostLN transformer."""
    for sizes in SIZES_4_2:
        _judge(_build(build, sizes), sizes, 60, post_ln=True)
    return Passed(f'exact under the PostLN forward pass (norm after each residual add) at '
                  f'(vocab, block, prefix) = {", ".join(map(str, SIZES_4_2))}: {SWEEP}')


# ----------------------------------------------------------------------------- 4.3

def lookup_tables():
    """The tables 4.3 always tries (shown in the exercise notebook): (name, keys, values, vocab)."""
    xor = ([[0, 0], [0, 1], [1, 0], [1, 1]], [0, 1, 1, 0], 2)
    grid = ([[a, b] for a in range(3) for b in range(3)], [2, 0, 1, 1, 2, 0, 0, 0, 2], 3)
    rand = ([[0, 4, 9], [1, 1, 3], [2, 7, 7], [3, 0, 5], [4, 4, 4], [5, 9, 1], [6, 2, 8],
             [7, 5, 0], [8, 8, 2], [9, 3, 6], [9, 6, 3], [0, 0, 0]],
            [3, 8, 0, 6, 2, 9, 1, 7, 4, 5, 5, 2], 10)
    binary = ([[(k >> i) & 1 for i in (3, 2, 1, 0)] for k in range(16)],
              [bin(k).count('1') % 2 for k in range(16)], 2)
    return [('XOR table', *xor), ('all 9 keys of length 2 over 3 symbols', *grid),
            ('a table of 12 keys of length 3 over 10 symbols', *rand),
            ('keys of length 1', [[0], [1], [2], [3]], [3, 3, 0, 1], 4),
            ('all 16 binary keys of length 4 (parity)', *binary),
            ('keys of repeated tokens, values equal to key tokens',
             [[1, 1, 1], [1, 1, 2], [2, 1, 1], [1, 2, 1], [2, 2, 2]], [1, 1, 2, 2, 2], 3),
            ('a table of one entry', [[4, 2]], [7], 8)]


def random_tables(seed):
    """The three tables one 4.3 check draws from ``seed`` (hidden: new on every check), the
    last with keys of 6 to 12 tokens (round 16: none over 5 was tried)."""
    rng, tables = np.random.default_rng(seed), []
    longest = (12, int(rng.integers(6, 13)), int(rng.integers(3, 21)))
    for number, (n, key_len, vocab) in enumerate(((20, 2, 50), (6, 5, 4), longest), 1):
        ks, vs = random_lookup_table(n, key_len, vocab, rng)
        tables.append((f'random table {number} of ch04.random_tables({seed}) ({n} keys of length '
                       f'{key_len} over {vocab} symbols)', ks.tolist(), vs.tolist(), vocab))
    return tables


MAX_PROMPT = 2000      # tokens: Search runs at block_size = len(prompt)


def _prompt(make_prompt, ks, vs, key, vocab, name):
    """``make_prompt``'s (prompt, prefix_len) for ``key`` of table ``name``, validated."""
    on = f'{name}, key {list(key)}'
    out = toolkit.call(make_prompt, [list(k) for k in ks], list(vs), list(key), vocab,
                       what='your make_prompt', on=on)
    out = toolkit.parts(out, 2, f'{on}: make_prompt must return (prompt, prefix_len)')
    prompt, L = toolkit.tokens(out[0], what=f'{on}: the prompt'), out[1]
    if not 2 <= len(prompt) <= MAX_PROMPT:
        raise Finding(f'{on}: the prompt must have 2 to {MAX_PROMPT:,} tokens; got {len(prompt):,}')
    if min(prompt) < 0 or max(prompt) > vocab:
        raise Finding(f'{on}: prompt ids must lie in 0..{vocab} (vocab_size plus one extra id); '
                      f'got {min(prompt)}..{max(prompt)}')
    if isinstance(L, bool) or not isinstance(L, int) or not 2 <= L <= len(prompt) - 2:
        raise Finding(f'{on}: prefix_len must be an int from 2 to len(prompt) - 2; got '
                      f'{toolkit.short(L)}')
    return prompt, L


def _run_lookups(make_prompt, table, ks, values, vocab, visible):
    """Search on ``make_prompt``'s prompt for every key of one table: the (prompt, prefix_len)
    pairs, in the order of ``ks``."""
    prompts = [_prompt(make_prompt, ks, values, key, vocab, table) for key in ks]
    for (prompt, L), key, want in zip(prompts, ks, values):
        params = build_search_transformer(vocab + 1, len(prompt), L)
        got = int(last_token_argmax(np.array([prompt]), params)[0])
        if got != want:
            on = f'{table}, key {key}: the book\'s Search on your prompt {prompt} ' \
                 f'(prefix_len {L})'
            if visible:
                raise Finding(f'{on} answered {got}; expected the value {want}', prompt)
            raise toolkit.wrong(on, got, 'Search answers the token after the one earlier '
                                'copy of the last prefix_len tokens', prompt)
    return prompts


def _per_key(prompts):
    """The part of each prompt that changes from key to key (what follows the longest start
    all the prompts share), with prefix_len."""
    n = min(len(p) for p, _ in prompts)
    start = next((i for i in range(n) if len({p[i] for p, _ in prompts}) > 1), n)
    return [(p[start:], L) for p, L in prompts]


def _lookups(make_prompt, name, ks, vs, vocab, rng, visible):
    """Every key of one table, with its values as given, shifted by one, redrawn and all
    equal, then with its rows shuffled and a third of them left out (round 25: a prompt that
    named each key by its row number passed); the part of the prompts that changes from key
    to key, and prefix_len, must stay the same.  Returns the number of lookups."""
    variants = [('', vs), (' with its values shifted by one', [(v + 1) % vocab for v in vs]),
                (' with its values redrawn', rng.integers(0, vocab, len(vs)).tolist()),
                (' with all values equal', [int(vs[0])] * len(vs))]
    first = None
    for how, values in variants:
        table = f'{name}{how}' + (f' ({values})' if how and len(values) <= 16 else '')
        signature = _per_key(_run_lookups(make_prompt, table, ks, values, vocab,
                                          visible and not how))
        first = first or signature
        if signature != first:
            i = next(j for j in range(len(ks)) if signature[j] != first[j])
            raise Finding(f'{table}, key {ks[i]}: the part of the prompt that changes from key '
                          f'to key (or prefix_len) is {signature[i]}, but {first[i]} with the '
                          f'values as given; it must depend on the key alone, the answer has '
                          f'to come from the table part')
    rows = rng.permutation(len(ks))[:len(ks) - len(ks) // 3].tolist()   # a third left out
    table = f'{name}, only its rows {rows} in that order'
    prompts = _run_lookups(make_prompt, table, [ks[i] for i in rows], [vs[i] for i in rows],
                           vocab, False)
    for i, (prompt, L) in zip(rows, prompts):
        part, length = first[i]
        tail = prompt[max(0, len(prompt) - len(part)):]
        if L != length or len(prompt) <= len(part) or tail != part:
            raise Finding(f'{table}, key {ks[i]}: your prompt ends {tail} with '
                          f'prefix_len {L}, but {part} with prefix_len {length} when the table '
                          f'held every row in its first order; the part of the prompt that '
                          f'changes from key to key must depend on the key alone, not on where '
                          f'it sits in the table or on the other keys')
    return len(variants) * len(ks) + len(rows)


@checker('4.3')
def check_4_3(make_prompt):
    """``make_prompt(keys, values, key, vocab_size) -> (prompt, prefix_len)`` + Search = lookup."""
    rng = toolkit.fresh_rng()
    count = sum(_lookups(make_prompt, *table, rng, True) for table in lookup_tables())
    count += sum(_lookups(make_prompt, *table, rng, False)
                 for table in random_tables(toolkit.fresh_seed()))
    return Passed(f'{count} lookups right over the 7 tables of ch04.lookup_tables() and 3 random '
                  f'tables drawn for this check (keys of up to 12 tokens), each with its values '
                  f'as given, shifted by one, redrawn and all equal, and with its rows shuffled '
                  f'and a third left out (drawn afresh); the per-key part of each prompt and '
                  f'prefix_len depend on the key alone, not on its row or the other keys')


# ----------------------------------------------------------------------------- 4.4 and 4.5

SIZES_4_4 = ((10, 100, 3), (1000, 100, 10), (16, 64, 2))
RANDOM_4_4 = 40       # random inputs of the full length per size (the sweeps add up to 1,070)
RANDOM_4_5 = 200      # with 100 shorter ones: enough to tell 99.9 % (the reference) from 99 %


@checker('4.4')
def check_4_4(build):
    """Search with fewer than 3 dimensions per stored token: d_model < 3 * (prefix_len + 1)."""
    found = []
    for sizes in SIZES_4_4:
        params = _build(build, sizes, d_model=3 * (sizes[2] + 1) - 1)
        _judge(params, sizes, RANDOM_4_4)
        found.append(f'{sizes}: d_model {params["tok_emb"].shape[1]} (book '
                     f'{3 * (sizes[2] + 1)}), {count_params(params)["n_params"]:,} parameters')
    return Passed('exact on every input, with d_model below 3 * (prefix_len + 1): '
                  + '; '.join(found) + f' ({SWEEP})')


@checker('4.5')
def check_4_5(build):
    """Hashed keys: at least 99 % right with at most 3/4 of the book's parameters."""
    found = []
    for sizes in SIZES_4_4:
        book = count_params(build_search_transformer(*sizes))['n_params']
        params = _build(build, sizes, params=book * 3 // 4)   # round 12: the book's own
        # Search with its all-zero head columns dropped has 84 to 92 % of the book's count
        _judge(params, sizes, RANDOM_4_5, need=0.99, adversarial=False)
        found.append(f'{sizes}: {count_params(params)["n_params"]:,} parameters (book '
                     f'{book:,})')
    return Passed(f'>= 99 % right at every size, of {RANDOM_4_5} random full-length and '
                  f'{2 * (RANDOM_4_5 // 4)} shorter inputs, one of every length, and of the '
                  f'hand-placed ones (the match at both ends and at every position, repeated '
                  f'and extreme tokens; no near misses, which hashing may confuse), all drawn '
                  f'afresh, with at most 3/4 '
                  f'of the book\'s parameters (counted on your arrays): ' + '; '.join(found)
                  + '; the checker sees sizes and accuracy, not whether the keys are hashed')


def _own_search(hint):
    """4.4 and 4.5 ask for a program of one's own (round 26: the book's Search, projected
    onto the span of its streams and its heads trimmed, met both budgets unchanged)."""
    return {'taotp.search.construction.build_search_transformer':
            f'the book\'s Search is switched off here: {hint}'}


PUZZLES = [
    Puzzle('4.1', 'Search with the Romeo-and-Juliet embeddings trained in Chapter 3', 'reflect'),
    Puzzle('4.2', 'Search on a PostLN transformer', 'checked', check_4_2),
    Puzzle('4.3', 'Any lookup table: prepend it to the prompt and search', 'checked', check_4_3),
    Puzzle('4.4', 'Fewer than 3 dimensions per stored token', 'checked', check_4_4,
           budget='d_model < 3 * (prefix_len + 1)',
           refuse=_own_search('lay out the thinner stream yourself')),
    Puzzle('4.5', 'Hash the key tokens instead of concatenating them', 'checked', check_4_5,
           budget='>= 99 % right, fewer parameters than the book',
           refuse=_own_search('build the hashed program yourself')),
    Puzzle('4.6', 'Behaviour in the undefined cases (query twice; only a near match)', 'reflect'),
]
