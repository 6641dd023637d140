"""Chapter 4 checkers: plausible wrong answers fail by name; the seeded test inputs.

The reference solutions (read from solutions/04_search.py), the shared garbage and
endless loops are covered once for every chapter by tests/test_checker_contract.py.
"""

import numpy as np
import pytest

import taotp
from solutions import answer
from taotp.exercises import ch04, check, registry
from taotp.programs import CATALOGUE
from taotp.search import search_reference

CHECKED = ['4.2', '4.3', '4.4', '4.5']


def with_nan(V, B, L):
    p = taotp.build_search_transformer(V, B, L)
    p['layers'][0]['Q'][0, 0, 0] = np.nan
    return p


# garbage particular to Chapter 4's answers: broken builders and broken prompts
EXTRA_GARBAGE = {pid: {
    'a builder with a NaN weight': with_nan,
    'a builder with too short a pos_emb': lambda V, B, L: taotp.base_params(V, 2, 3),
    'a builder whose layers are text': lambda V, B, L: {
        **taotp.build_search_transformer(V, B, L), 'layers': 'x'},
    'a prompt with a text prefix_len': lambda *a: ([1, 2], 'x'),
    'a NaN prompt': lambda *a: (np.full(5, np.nan), 2),
    'a ragged prompt': lambda *a: ([[1, 2], [3]], 2),
    'an empty prompt': lambda *a: ([], 2),
    'a bool prefix_len': lambda *a: ([1, 2, 3], True),
    'a negative token id': lambda *a: ([-1, 2, 3, 4], 2),
} for pid in CHECKED}


def no_cleanup(V, B, L):
    p = taotp.build_search_transformer(V, B, L)
    for h in (1, 2):
        for c in 'QKVP':
            p['layers'][1][c][h] = 0
    return p


def off_by_one(V, B, L):              # layer-1 key reads t0..t_{L-1} instead of t1..t_L
    p = taotp.build_search_transformer(V, B, L)
    K = p['layers'][1]['K']
    K[0] = 0
    K[0, :3 * L] = np.eye(3 * L)
    return p


def soft(V, B, L):
    return taotp.build_search_transformer(V, B, L, harden=1.0)


def soft_2d(V, B, L):
    return answer('4.4')(V, B, L, harden=1.0)


def no_separator(keys, values, key, vocab_size):
    table = []
    for k, v in zip(keys, values):
        table += [*k, v]
    return table + list(key), max(2, len(key))


def leaks_value(keys, values, key, vocab_size):
    v = values[keys.index(key)]
    return [v, v, v, v], 2


def hashed_too_few_dims(V, B, L):     # 2-D slots but only half of the key compared
    p = answer('4.4')(V, B, L)
    p['layers'][1]['Q'][0][:, L:] = 0
    return p


WRONG = [
    ('4.2', no_cleanup, '(10, 40, 2): '),
    ('4.2', off_by_one, 'seeded inputs wrong (needed 100% right); first: an input of 40 tokens '
                        'ending in the query'),
    ('4.2', soft, 'expected'),
    ('4.3', no_separator, 'XOR table, key [1, 1]: Search on your prompt'),
    ('4.3', leaks_value, 'it must depend on the key alone'),
    ('4.4', taotp.build_search_transformer,
     'd_model is 12; the budget is below 3 * (prefix_len + 1) = 12'),
    ('4.4', hashed_too_few_dims, '(10, 100, 3): '),
    ('4.5', taotp.build_search_transformer,
     "4,800 parameters; the budget is below the book's 4,800"),
    ('4.5', soft_2d, 'needed 99% right'),
]


@pytest.mark.parametrize('puzzle, wrong, message', WRONG,
                         ids=[f'{p}-{w.__name__}' for p, w, _ in WRONG])
def test_plausible_wrong_answers_fail_with_a_message(puzzle, wrong, message):
    result = check(puzzle, wrong)
    assert not result
    assert message in result.message, result.message


def test_book_totals_come_from_the_catalogue():
    assert ch04.BOOK_TOTALS == {(10, 100, 3): CATALOGUE['search-10'].source_total,
                                (1000, 100, 10): CATALOGUE['search-1000'].source_total}
    for sizes, total in ch04.BOOK_TOTALS.items():
        assert taotp.count_params(taotp.build_search_transformer(*sizes))['n_params'] == total


def test_search_cases_are_unique_and_avoid_the_first_tokens():
    X, want = ch04.search_cases(0, 50, 10, 60, 3)
    for x, w in zip(X, want):
        assert search_reference(x, 3) == w
        assert not set(x[:3].tolist()) & set(x[-3:].tolist())


def test_two_d_reference_is_smaller_and_fixed():
    p = answer('4.4')(10, 100, 3)
    assert taotp.config(p)['d_model'] == 9 and taotp.count_params(p)['n_params'] == 2_736
    x = p['tok_emb'][:, None] + p['pos_emb'][None]
    np.testing.assert_allclose(taotp.layer_norm(x), x, atol=1e-9)


def test_hashed_reference_sizes():
    build_search_hashed = answer('4.5')
    assert taotp.count_params(build_search_hashed(1000, 100, 10))['n_params'] == 53_682
    assert check('4.5', answer('4.4'))      # the checker sees sizes and accuracy only
    assert not check('4.5', lambda V, B, L: build_search_hashed(V, B, L, hash_dims=L))


def test_kinds():
    table = registry()
    kinds = {k: table[k].kind for k in table if k.startswith('4.')}
    assert kinds == {'4.1': 'reflect', '4.2': 'checked', '4.3': 'checked', '4.4': 'checked',
                     '4.5': 'checked', '4.6': 'reflect'}
    assert sorted(k for k, kind in kinds.items() if kind == 'checked') == CHECKED
