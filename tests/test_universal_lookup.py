"""The Records chapter's Lookup Table that holds every table (taotp.lookup.universal).

Exhaustive where small (every table over the full key space of 2 binary tokens,
every value assignment of 3-bit keys), adversarial tables (XOR, the 1,000-entry
vocabulary-10 table Chapter 3 cannot learn, keys sharing long prefixes or
differing only in their farthest token), seeded random tables behind random and
adversarial prefixes, the parameter counts beside the book's, and error paths.
"""
import itertools

import numpy as np
import pytest

import taotp
import taotp.lookup.universal as universal
from taotp.lookup import (build_universal_lookup_transformer, interpolating_mlp,
                          lookup_precision, lookup_queries, random_lookup_table,
                          universal_layout, universal_lookup_size)
from taotp.programs import CATALOGUE


def right(params, ks, vs, prefix_len=0, mode='random', seed=0):
    """Every key, behind a prefix, is answered with its value (fraction right)."""
    return lookup_precision(params, ks, vs, prefix_len=prefix_len, rng=seed, mode=mode)


def universal_total(vocab_size, block_size, key_len, n_entries):
    return universal_lookup_size(n_entries, key_len, vocab_size, block_size)


# ----------------------------------------------------------------------------- exhaustive, small

def test_every_table_over_two_binary_tokens():
    """All 16 value tables on the 4 keys of length 2 over {0, 1}: XOR among them."""
    ks = np.array(list(itertools.product(range(2), repeat=2)))
    for values in itertools.product(range(2), repeat=4):
        vs = np.array(values)
        p = build_universal_lookup_transformer(ks, vs, 2, 6)
        assert right(p, ks, vs) == 1.0 and right(p, ks, vs, 3, 'keys') == 1.0, values


def test_three_bit_keys_structured_and_seeded_tables():
    """The 8 keys of length 3 over {0, 1}: values by XOR, AND, OR, 2a + b of two key bits,
    the 3-bit parity, and 40 seeded tables over 3 tokens."""
    ks = np.array(list(itertools.product(range(2), repeat=3)))
    functions = (lambda a, b: a ^ b, lambda a, b: a & b, lambda a, b: a | b,
                 lambda a, b: 2 * a + b)
    tables = [np.array([f(a, b) for a, b, _ in ks]) for f in functions]
    tables.append(ks.sum(axis=1) % 2)
    rng = np.random.default_rng(8)
    tables += [rng.integers(0, 3, size=8) for _ in range(40)]
    for vs in tables:
        p = build_universal_lookup_transformer(ks, vs % 3, 3, 8)
        assert right(p, ks, vs % 3, 5) == 1.0


# ----------------------------------------------------------------------------- adversarial

def test_xor_the_table_chapter_3_cannot_hold():
    ks, vs = np.array([[0, 0], [0, 1], [1, 0], [1, 1]]), np.array([0, 1, 1, 0])
    p = build_universal_lookup_transformer(ks, vs, 2, 40)
    for mode in ('random', 'keys'):
        assert right(p, ks, vs, 30, mode) == 1.0


def test_the_3_9_table_1000_entries_over_10_tokens():
    """Chapter 3's fitted construction stalls near 20 % here; this one is exact."""
    ks, vs = random_lookup_table(1000, 5, 10, rng=0)
    p = build_universal_lookup_transformer(ks, vs, 10, 5)
    assert right(p, ks, vs) == 1.0
    assert taotp.count_params(p)['n_params'] == universal_total(10, 5, 5, 1000) == 15_517
    assert 7 * 10 + 7 * 5 + 84 * 5 + 15 * 999 + 7 == 15_517        # the formula, spelled out
    assert taotp.count_non0_params(p)['n_params'] < CATALOGUE['lookup-1000-untrained'].source_non0


@pytest.mark.parametrize('where', ['last', 'first'])
def test_keys_sharing_long_prefixes_or_suffixes(where):
    """12-token keys equal everywhere but one position (the nearest or the farthest head)."""
    rng = np.random.default_rng(12)
    base = rng.integers(0, 50, size=12)
    ks = np.tile(base, (50, 1))
    ks[:, -1 if where == 'last' else 0] = np.arange(50)
    vs = rng.permutation(50)
    p = build_universal_lookup_transformer(ks, vs, 50, 40)
    for mode in ('random', 'keys'):
        assert right(p, ks, vs, 20, mode) == 1.0


def test_two_families_of_shared_prefixes_and_one_token_changes():
    """Keys in pairs that differ in one token (at every position), with opposite values."""
    rng = np.random.default_rng(5)
    rows, values = [], []
    for pos in range(6):
        for _ in range(10):
            key = rng.integers(0, 7, size=6)
            twin = key.copy()
            twin[pos] = (key[pos] + 1) % 7
            rows += [key, twin]
            values += [0, 1]
    ks, keep = np.unique(np.array(rows), axis=0, return_index=True)
    vs = np.array(values)[keep]
    p = build_universal_lookup_transformer(ks, vs, 7, 16)
    assert right(p, ks, vs, 10, 'keys') == 1.0


# ----------------------------------------------------------------------------- seeded, random

@pytest.mark.parametrize('n, l, vocab', [(10, 5, 10), (100, 5, 10), (300, 3, 1000),
                                         (2000, 6, 4), (500, 1, 1000)])
def test_seeded_random_tables_behind_prefixes(n, l, vocab):
    ks, vs = random_lookup_table(n, l, vocab, rng=n + l)
    p = build_universal_lookup_transformer(ks, vs, vocab, l + 30, rng=1)
    assert right(p, ks, vs) == 1.0
    assert right(p, ks, vs, 30, 'random', seed=2) == 1.0
    assert right(p, ks, vs, 30, 'keys', seed=3) == 1.0


def test_deterministic_and_seeded():
    ks, vs = random_lookup_table(50, 4, 10, rng=0)
    a = build_universal_lookup_transformer(ks, vs, 10, 8)
    b = build_universal_lookup_transformer(ks, vs, 10, 8, rng=0)
    c = build_universal_lookup_transformer(ks, vs, 10, 8, rng=1)
    assert taotp.params_equal(a, b) and not taotp.params_equal(a, c)


# ----------------------------------------------------------------------------- sizes and pieces

@pytest.mark.parametrize('key, n', [('lookup-10', 10), ('lookup-100', 100),
                                    ('lookup-1000-untrained', 1000)])
def test_smaller_than_the_book_at_its_sizes(key, n):
    """Vocab 10, block 5, keys of 5 (the book's Fig. 3.8 setting): fewer parameters in all and
    fewer non-zeros, for a construction that holds every table."""
    ks, vs = random_lookup_table(n, 5, 10, rng=0)
    p = build_universal_lookup_transformer(ks, vs, 10, 5)
    book = CATALOGUE[key]
    total, non0 = taotp.count_params(p)['n_params'], taotp.count_non0_params(p)['n_params']
    assert total == universal_total(10, 5, 5, n) < book.source_total
    assert non0 < book.source_non0
    cfg = taotp.config(p)
    assert cfg['n_layers'] == 1 and cfg['n_heads'] == [5] and cfg['d_model'] == 7
    assert cfg['d_ff'] == [n - 1] and taotp.is_tied(p)


def test_layout_and_layer_norm_fixed_rows():
    L = universal_layout()
    ks, vs = random_lookup_table(20, 3, 9, rng=0)
    p = build_universal_lookup_transformer(ks, vs, 9, 7)
    rows = p['tok_emb'][:, None, :] + p['pos_emb'][None, :, :]
    assert np.allclose(taotp.layer_norm(rows), rows)
    assert not p['tok_emb'][:, L['pos']].any() and not p['pos_emb'][:, L['tok']].any()


def test_interpolating_mlp_hits_every_point():
    rng = np.random.default_rng(0)
    g = rng.normal(size=30)
    Y = rng.normal(size=(30, 3)) * 1e6
    M1, b1, M2, b2 = interpolating_mlp(g, Y, 7, slice(0, 3))
    x = np.zeros((30, 7))
    x[:, -1] = g
    out = np.maximum(x @ M1 + b1, 0) @ M2 + b2
    shift = (Y - out[:, :3])                       # equal up to a multiple of (1, 1, 1)
    assert np.allclose(shift - shift[:, :1], 0, atol=1e-3)
    assert M1.shape == (7, 29) and np.count_nonzero(M2) <= 2 * 29


def test_queries_at_every_position_of_a_long_block():
    """A key at the end of prompts of every length up to block_size (the heads read back)."""
    ks, vs = random_lookup_table(30, 4, 12, rng=3)
    p = build_universal_lookup_transformer(ks, vs, 12, 64)
    for prefix in (0, 1, 17, 59, 60):
        q = lookup_queries(ks, prefix, 12, rng=prefix)
        assert np.array_equal(taotp.last_token_argmax(q, p), vs)


# ----------------------------------------------------------------------------- errors

def test_errors_name_the_rule(monkeypatch):
    ks, vs = np.array([[1, 2], [3, 4]]), np.array([5, 6])
    build = build_universal_lookup_transformer
    with pytest.raises(ValueError, match='block_size must be an int >= the key length 2; got 1'):
        build(ks, vs, 8, 1)
    with pytest.raises(ValueError, match=r'vs must hold ids in 0..4; got 5..6'):
        build(ks, vs, 5, 4)
    with pytest.raises(ValueError, match='keys must be distinct; got 2 keys with 1 repeats'):
        build(np.array([[1, 2], [1, 2]]), vs, 8, 4)
    with pytest.raises(TypeError, match='rng must be None, an int seed or a numpy Generator'):
        build(ks, vs, 8, 4, rng='seed')
    monkeypatch.setattr(universal, 'MIN_GAP', 10.0)
    with pytest.raises(ValueError, match=r'no hash of 16 candidates separates the keys; '
                                         r'smallest gap .* < 1e\+01'):
        build(ks, vs, 8, 4)
