"""taotp.lookup.tables: random tables, the plain meaning, queries, precision, n-gram tables."""
import numpy as np
import pytest

from taotp.corpus import romeo_and_juliet, words
from taotp.lookup import (as_rng, check_table, lookup_queries, lookup_reference, ngram_table,
                          random_lookup_table)


def test_random_table_is_distinct_and_seeded():
    ks, vs = random_lookup_table(200, 2, 15, 3)
    assert len(np.unique(ks, axis=0)) == 200 and ks.max() < 15 and vs.max() < 15
    again, _ = random_lookup_table(200, 2, 15, np.random.default_rng(3))
    assert np.array_equal(ks, again)
    full, _ = random_lookup_table(9, 2, 3, 0)            # every key of the space
    assert len(np.unique(full, axis=0)) == 9


def test_reference_examples():
    ks, vs = np.array([[1, 2, 3], [4, 5, 6]]), np.array([4, 7])
    assert lookup_reference([1, 2, 3, 4, 5, 6], ks, vs) == 7
    assert lookup_reference([9, 1, 2, 3], ks, vs) == 4
    assert lookup_reference([3, 2, 1], ks, vs) is None
    assert lookup_reference([5, 6], ks, vs) is None


def test_queries_put_every_key_behind_a_prefix():
    ks, _ = random_lookup_table(20, 3, 50, 0)
    q = lookup_queries(ks, 7, 50, 1)
    assert q.shape == (20, 10) and np.array_equal(q[:, 7:], ks) and q.max() < 50
    assert np.array_equal(lookup_queries(ks, 0, 50, 1), ks)


def test_adversarial_prefixes_come_from_keys():
    ks, _ = random_lookup_table(20, 3, 50, 0)
    q = lookup_queries(ks, 7, 50, 1, mode='keys')
    assert q.shape == (20, 10) and np.array_equal(q[:, 7:], ks)
    assert set(q[:, :7].ravel()) <= set(ks.ravel())


def test_ngram_table_of_romeo_and_juliet():
    text = [w for w in words(romeo_and_juliet()) if w[0].isalpha()]
    ks, vs, vocab = ngram_table(text, 1000, 5)
    assert ks.shape == (1000, 5) and len(np.unique(ks, axis=0)) == 1000
    assert len(vocab) == 1566                       # the book reports 1,540
    assert [vocab[i] for i in ks[0]] + [vocab[vs[0]]] == text[:6]


def test_ngram_table_skips_repeated_keys():
    ks, vs, vocab = ngram_table('a b c a b d a b c'.split(), 10, 2)
    assert [[vocab[i] for i in k] for k in ks] == [['a', 'b']]
    assert vocab[vs[0]] == 'c'


def test_error_paths():
    ks, vs = np.array([[1, 2], [3, 4]]), np.array([0, 1])
    with pytest.raises(ValueError, match=r'random_lookup_table: only 9 distinct keys'):
        random_lookup_table(10, 2, 3)
    with pytest.raises(ValueError, match=r'random_lookup_table: n_entries, key_len and '
                                         r'vocab_size must be >= 1; got 0'):
        random_lookup_table(0, 2, 3)
    with pytest.raises(ValueError, match=r"lookup_queries: mode must be 'random' or 'keys'; "
                                         r"got 'evil'"):
        lookup_queries(ks, 2, 5, mode='evil')
    with pytest.raises(TypeError, match=r'here: rng must be None, an int seed or a numpy '
                                        r'Generator; got bool'):
        as_rng(True, 'here')
    with pytest.raises(ValueError, match=r'here: vs must have shape \(n_entries,\) = \(2,\); '
                                         r'got \(1,\)'):
        check_table('here', ks, vs[:1], 5)
