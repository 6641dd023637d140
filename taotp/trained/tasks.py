"""The training puzzles' tasks (2.3, 3.1, 5.8, 7.11) and what is measured on a result.

Per puzzle: the task as seeded NumPy data (``hello_world_task``, ``lookup_batch``,
``sort_batch``, ``offset_batch``), the same for training and checking, and what the
checkers (``taotp.exercises.training_checks``) measure on any params dict (``measure``); no
PyTorch needed.  ``stored(puzzle_id)`` loads the reference runs' programs (``taotp/data``);
the PyTorch harnesses that produce them are in ``puzzles``.  The exercise notebooks reach
both under one name, ``taotp.exercises.training``.
"""
from pathlib import Path

import numpy as np

from .. import hello_world, lookup, sort
from ..decoding import decode, decode_batch, last_token_argmax, transformer_batch
from ..model import forward
from ..params import config
from ..trace import trace
from ..train.store import load_params

DATA = Path(__file__).resolve().parent.parent / 'data'


# ----------------------------------------------------------------------------- 2.3 Hello World

def hello_world_task(message=hello_world.HELLO_WORLD):
    """``(tokens, targets, tokenizer)``: from <bos>, print the message then <eos> (one row)."""
    tok = hello_world.message_tokenizer(message)
    targets = hello_world.hello_world_targets(message, tok)
    tokens = np.concatenate([[tok['<bos>']], targets[:-1]])
    return tokens[None], targets[None], tok


# ----------------------------------------------------------------------------- 3.1 Lookup

LOOKUP = {'n_entries': 100, 'key_len': 5, 'vocab_size': 50, 'seed': 31, 'prefix': 10}


def lookup_table():
    """The puzzle's table: 100 keys of 5 tokens over a vocabulary of 50 (seed 31)."""
    return lookup.random_lookup_table(LOOKUP['n_entries'], LOOKUP['key_len'],
                                      LOOKUP['vocab_size'], np.random.default_rng(LOOKUP['seed']))


def lookup_batch(rng, batch=64, ks=None, vs=None, mix_keys=True):
    """Training rows of ``prefix + key_len`` tokens: a stream of keys (ending at every
    position, behind random tokens and other keys) and random tokens; the target is a key's
    value where that key ends, -1 elsewhere.  ``mix_keys=False`` plants one key per row
    behind random tokens only (the naive data set, for comparison)."""
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


# ----------------------------------------------------------------------------- 5.8 Sort

SORT_N = 28          # numbers 1..27 and the separator 0, as the hand-built Sort of Chapter 5


def sort_batch(rng, batch=64, n=SORT_N, length=None):
    """Rows ``prompt + sorted[:-1]`` for one length k (random unless given): a prompt is k
    distinct numbers from 1..n-1 then 0; targets are -1 on its numbers, then the sorted ones."""
    k = int(rng.integers(1, n)) if length is None else length
    prompts = sort.random_sort_inputs(n, k, batch, rng=rng)
    answer = np.sort(prompts[:, :-1], axis=1)
    tokens = np.concatenate([prompts, answer[:, :-1]], axis=1)
    targets = np.full(tokens.shape, -1)
    targets[:, k:] = answer
    return tokens, targets


# ----------------------------------------------------------------------------- 7.11 encodings

OFFSET = {'block_size': 64, 'vocab_size': 16, 'd_model': 16}


def offset_batch(rng, batch=64, delta=5, block_size=None, vocab_size=None):
    """Random rows of ``block_size`` tokens; at position i >= delta the target is token i-delta."""
    q = block_size or OFFSET['block_size']
    tokens = rng.integers(0, vocab_size or OFFSET['vocab_size'], size=(batch, q))
    targets = np.full(tokens.shape, -1)
    targets[:, delta:] = tokens[:, :-delta]
    return tokens, targets


# ----------------------------------------------------------------------------- measuring results

def hello_world_output(params, message=hello_world.HELLO_WORLD):
    """What greedy decoding from <bos> prints (at most len(message) + 1 symbols), as a string."""
    tokens, targets, tok = hello_world_task(message)
    out = decode(tokens[0, :1], params, max_steps=targets.shape[1], eos=tok['<eos>'])
    names = {i: s for s, i in tok.items()}
    return ''.join(names.get(int(i), f'<{int(i)}>') for i in out[1:])


def _rng(rng, seed):
    return np.random.default_rng(seed) if rng is None else rng


def lookup_accuracy(params, rng=None):
    """Held-out accuracy on the puzzle's table behind every prefix length 0..10:
    ``{'random': share, 'keys': share, 'leak': w}`` for prefixes of random tokens and cut
    from other keys (drawn from ``rng``), and the largest attention weight the last position
    puts before the key (10-token prefixes; 0 would prove that prefixes cannot matter)."""
    rng, (ks, vs) = _rng(rng, 3100), lookup_table()
    vocab, out = LOOKUP['vocab_size'], {}
    for mode in ('random', 'keys'):
        right = [last_token_argmax(lookup.lookup_queries(ks, p, vocab, rng, mode), params) == vs
                 for p in range(LOOKUP['prefix'] + 1)]
        out[mode] = float(np.mean(right))
    queries = lookup.lookup_queries(ks, LOOKUP['prefix'], vocab, rng)
    attn = trace(queries, params).attn
    out['leak'] = float(max(a[..., -1, :LOOKUP['prefix']].max() for a in attn)) if attn else 0.0
    return out


ATTACK_WIDTH = 512   # the bad-prefix search of 3.1 runs on programs up to this d_model


def prefix_attack(params, sweeps=1, rng=None):
    """Greedy search for 10-token prefixes that make the program answer a key wrong: from a
    random prefix per key, each position in turn takes the token that most lowers the right
    value's margin (``sweeps`` passes).  ``{'wrong': keys wrong, 'margin': the smallest,
    'query': one failing query or None}``, or None above ``ATTACK_WIDTH`` (too slow)."""
    if config(params)['d_model'] > ATTACK_WIDTH:
        return None
    ks, vs = lookup_table()
    vocab, p = LOOKUP['vocab_size'], LOOKUP['prefix']
    prefix = _rng(rng, 0).integers(0, vocab, size=(len(ks), p))

    def margins(queries, values):
        logits = forward(queries, **params, logits_at=-1)[:, -1]
        rows = np.arange(len(queries))
        right = logits[rows, values]
        logits[rows, values] = -np.inf
        return right - logits.max(-1)

    for _ in range(sweeps):
        for pos in range(p):
            trial = np.repeat(prefix[:, None], vocab, axis=1)         # (keys, vocab, p)
            trial[:, :, pos] = np.arange(vocab)
            queries = np.concatenate([trial.reshape(-1, p), np.repeat(ks, vocab, 0)], axis=1)
            m = margins(queries, np.repeat(vs, vocab)).reshape(len(ks), vocab)
            prefix[:, pos] = m.argmin(1)
    final = margins(np.concatenate([prefix, ks], axis=1), vs)
    bad = np.flatnonzero(final < 0)
    query = np.concatenate([prefix[bad[0]], ks[bad[0]]]).tolist() if len(bad) else None
    return {'wrong': int(len(bad)), 'margin': float(final.min()), 'query': query}


def sort_accuracy(params, per_length=20, n=SORT_N, rng=None):
    """``(share, by_length)`` of held-out prompts from ``rng`` (``per_length`` of every
    length 1..n-1) printed exactly sorted, overall and at each length k."""
    rng = _rng(rng, 5800)
    by_length = {}
    for k in range(1, n):
        prompts = sort.random_sort_inputs(n, k, per_length, rng=rng)
        out = decode_batch(prompts, params, k)[:, k + 1:]
        by_length[k] = float((out == np.sort(prompts[:, :-1], axis=1)).all(axis=1).mean())
    return float(np.mean(list(by_length.values()))), by_length


def offset_accuracy(params, delta=5, rows=200, rng=None):
    """Held-out accuracy of a PostLN model copying the token ``delta`` back, on ``rows`` rows
    of 64 from ``rng`` (or given ``(tokens, targets)``): ``{'inside': positions delta..31,
    'beyond': 32..63, 'all': delta..63}``."""
    tokens, targets = rows if isinstance(rows, tuple) else offset_batch(_rng(rng, 7110), rows,
                                                                         delta)
    right = transformer_batch(tokens, params, post_ln=True).argmax(-1) == targets
    half = OFFSET['block_size'] // 2
    return {'inside': float(right[:, delta:half].mean()), 'beyond': float(right[:, half:].mean()),
            'all': float(right[:, delta:].mean())}


# ----------------------------------------------------------------------------- what is measured

SEEDS = {'3.1': 31, '5.8': 58, '7.11': 711}   # the visible held-out inputs (fresh ones too)


def measure(puzzle_id, answer, rng=None):
    """What the checker measures on an answer (a params dict; 7.11: the dict of both models);
    ``rng=None`` draws the *visible* held-out inputs (seeded: the PASS lines report them)."""
    if puzzle_id == '2.3':
        return {'printed': hello_world_output(answer)}
    rng = np.random.default_rng(SEEDS[puzzle_id]) if rng is None else rng
    if puzzle_id == '7.11':
        tokens = offset_batch(rng, 200)                      # the same rows for both models
        return {k: offset_accuracy(answer[k], rows=tokens) for k in ('og', 'rotation')}
    if puzzle_id == '3.1':
        return {**lookup_accuracy(answer, rng), 'attack': prefix_attack(answer, rng=rng)}
    share, by_length = sort_accuracy(answer, rng=rng)
    return {'accuracy': share, 'by_length': by_length}


# ----------------------------------------------------------------------------- the reference runs

def _stored_path(puzzle_id, part=''):
    return DATA / f'trained_{puzzle_id.replace(".", "_")}{part}.npz'


def stored(puzzle_id, with_facts=False):
    """The program(s) the reference run produced (7.11: ``{'og': params, 'rotation':
    params}``), and its facts if asked; no PyTorch needed."""
    if puzzle_id == '7.11':
        both = {k: load_params(_stored_path(puzzle_id, f'_{k}'), with_meta=True)
                for k in ('og', 'rotation')}
        answer, facts = {k: v[0] for k, v in both.items()}, both['og'][1]
    else:
        answer, facts = load_params(_stored_path(puzzle_id), with_meta=True)
    return (answer, facts) if with_facts else answer

