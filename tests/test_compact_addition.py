"""The linear-size decimal adder (Records chapter): sizes, every pair up to 3 digits,
carry chains and random pairs up to 64 digits, each layer against plain Python."""
import time

import numpy as np
import pytest

import taotp
from taotp.addition import (addition_prompts, answer_digits, book_addition_size,
                            build_compact_addition_transformer, carry_chain_pairs, carry_plan,
                            compact_addition_internals, compact_addition_record,
                            compact_addition_size, compact_addition_table, long_addition_errors,
                            long_addition_prompts, random_pairs)
from taotp.addition.compact import LAYOUT, interval_product, slots
from taotp.programs import CATALOGUE
from taotp.reference import naive_transformer


@pytest.fixture(scope='module')
def adders():
    cache = {}

    def get(n):
        if n not in cache:
            cache[n] = build_compact_addition_transformer(n)
        return cache[n]
    return get


# ----------------------------------------------------------------------------- sizes

@pytest.mark.parametrize('n, total, non0, target', [(3, 1_299, 236, 2_000),
                                                    (40, 2_742, 791, 10_000)])
def test_the_record_sizes(adders, n, total, non0, target):
    params = adders(n)
    assert taotp.count_params(params)['n_params'] == total <= target
    assert taotp.count_non0_params(params)['n_params'] == non0


def test_size_is_39n_plus_1182_for_every_n_up_to_64():
    table = compact_addition_table(64)
    assert [row[0] for row in table] == list(range(1, 65))
    assert all(total == compact_addition_size(n) == 39 * n + 1182 for n, total, _, _ in table)
    assert all(book == book_addition_size(n) for n, _, _, book in table)


def test_the_books_size_formula_reproduces_the_preprint():
    for n in (1, 2, 3):
        assert book_addition_size(n) == CATALOGUE[f'addition-{n}'].source_total
    assert CATALOGUE['compact-addition-40'].facts['book_total'] == book_addition_size(40)


def test_shape_and_format(adders):
    params = adders(5)
    taotp.validate_params(params)
    cfg = taotp.config(params)
    assert (cfg['n_layers'], cfg['n_heads'], cfg['d_model'], cfg['d_head'], cfg['d_ff'],
            cfg['vocab_size'], cfg['block_size']) == (4, [3, 1, 1, 1], 13, [2] * 4,
                                                      [9, 0, 0, 3], 12, 3 * 5 + 2)
    assert taotp.is_tied(params)
    assert all(np.asarray(a).dtype == np.float64 for a in
               [params['tok_emb'], params['pos_emb']] +
               [layer[k] for layer in params['layers'] for k in 'QKVP'])
    lns = [params['lnf']] + [layer[k] for layer in params['layers'] for k in ('ln1', 'ln2')]
    assert all(ln == {'gamma': 1.0, 'beta': 0.0} for ln in lns)


def test_layout_and_circle_slots_are_distinct():
    assert LAYOUT.d_model == 13
    for n in (1, 3, 64):
        s = slots(n)
        assert len(set(s.tolist())) == len(s) and s.max() < 4 * n + 4


# ----------------------------------------------------------------------------- exhaustive

def all_pairs_wrong(params, n, chunk=1000):
    prompts, pairs = addition_prompts(n)
    want = answer_digits(pairs.sum(1), n + 1)
    got = taotp.teacher_forced_argmax(np.concatenate([prompts, want], axis=1), params,
                                      prompts.shape[1], chunk=chunk)
    return prompts, np.flatnonzero((got != want).any(axis=1))


@pytest.mark.parametrize('n', [1, 2])
def test_every_pair_up_to_two_digits(adders, n):
    prompts, wrong = all_pairs_wrong(adders(n), n)
    assert len(prompts) == 100 ** n and len(wrong) == 0


@pytest.mark.slow
def test_every_pair_of_three_digit_numbers(adders, capsys):
    """All 10^6 pairs through the shared engine, 1,000 rows a chunk (about 25 s of CPU)."""
    start = time.process_time()
    prompts, wrong = all_pairs_wrong(adders(3), 3)
    seconds = time.process_time() - start
    with capsys.disabled():
        print(f'\ncompact adder, 3 digits: {len(prompts):,} pairs, {len(wrong)} wrong, '
              f'{seconds:.0f} s of CPU')
    assert len(prompts) == 10 ** 6
    assert len(wrong) == 0, f'first wrong prompt: {prompts[wrong[0]].tolist()}'


# ----------------------------------------------------------------------------- long numbers

@pytest.mark.parametrize('n', [4, 9, 19, 40, pytest.param(64, marks=pytest.mark.slow)])
def test_carry_chains_and_random_pairs(adders, n):
    pairs = carry_chain_pairs(n) + random_pairs(n, 60, np.random.default_rng(n))
    assert long_addition_errors(adders(n), n, pairs) == (0, len(pairs), None)


def test_carry_chain_pairs_cover_every_column():
    n = 12
    pairs = carry_chain_pairs(n)
    assert len(pairs) == 5 * n + 11 == len(set(pairs))
    M = 10 ** n - 1
    assert {(0, 0), (M, M), (M, 1), (1, M)} <= set(pairs)
    assert sum(a + b == 10 ** n for a, b in pairs) >= 5
    for e in range(n):          # a generate and a kill end a run over every column before e
        ends = {carry_plan(a, b, n)['kinds'][e] for a, b in pairs
                if set(carry_plan(a, b, n)['kinds'][:e]) <= {'P'}}
        assert {'G', 'K'} <= ends


def test_decoding_matches_teacher_forcing(adders):
    n = 6
    pairs = carry_chain_pairs(n)[:12]
    prompts, answers = long_addition_prompts(n, pairs)
    assert np.array_equal(taotp.decode_batch(prompts, adders(n), n + 1)[:, -(n + 1):], answers)


def test_the_independent_reference_picks_the_same_tokens(adders):
    n = 3
    prompts, answers = long_addition_prompts(n, [(999, 1), (457, 548)])
    for prompt, answer in zip(prompts, answers):
        tokens = np.concatenate([prompt, answer[:-1]])
        got = taotp.transformer(tokens, **adders(n))[2 * n + 1:].argmax(-1)
        ref = naive_transformer(tokens, **adders(n))[2 * n + 1:].argmax(-1)
        assert got.tolist() == ref.tolist() == answer.tolist()


# ----------------------------------------------------------------------------- each layer

@pytest.mark.parametrize('n', [3, 64])
def test_each_layer_computes_what_the_plan_says(adders, n):
    """Layer by layer, read back from the stream: the measured precision is pinned here."""
    rng = np.random.default_rng(7)
    for a, b in random_pairs(n, 3, rng) + carry_chain_pairs(n)[-3:]:
        plan, got = carry_plan(a, b, n), compact_addition_internals(adders(n), a, b, n)
        i, p = np.arange(n + 1), np.array(plan['left'])
        non_p = np.array([k != 'P' for k in plan['kinds']])
        generate = np.array([k == 'G' for k in plan['kinds']])
        assert np.abs(got['sums'] - plan['sums']).max() < 1e-8
        assert np.abs(got['Z'] - non_p - generate * (got['Z'] - 1).max()).max() < 1e-8
        assert np.abs(got['left'] - p).max() < 1e-7
        assert np.abs(got['product'] - (i + 0.5) * (p + 0.5)).max() < 1e-5
        assert np.abs(got['carries'] - plan['carries']).max() < 1e-4
        assert got['digits'].tolist() == [int(c) for c in str(a + b).zfill(n + 1)]


def test_interval_product_identity():
    for i in range(0, 70):
        for p in range(-1, i):
            want, got = interval_product(i, p)
            assert got == pytest.approx(want, abs=1e-9)


def test_carry_plan_explains_the_digits():
    rng = np.random.default_rng(3)
    for a, b in random_pairs(20, 20, rng) + carry_chain_pairs(20):
        plan = carry_plan(a, b, 20)
        digits = [int(c) for c in str(a + b).zfill(21)]
        assert digits[0] == plan['carries'][0]
        assert digits[1:] == [(t + c) % 10 for t, c in zip(plan['sums'], plan['carries'][1:])]


def test_record_summary():
    r = compact_addition_record(40, n_random=10)
    assert (r['total'], r['wrong'], r['layers'], r['d_model']) == (2_742, 0, 4, 13)
    assert r['checked'] == 5 * 40 + 11 + 10 and r['book'] > 10 ** 43


# ----------------------------------------------------------------------------- errors

@pytest.mark.parametrize('bad', [0, -3, 2.5, True, '3', None])
def test_builder_rejects_bad_digit_counts(bad):
    with pytest.raises(ValueError, match=r'build_compact_addition_transformer: n_digits must '
                                         r'be an integer >= 1; got'):
        build_compact_addition_transformer(bad)


@pytest.mark.parametrize('fn', [compact_addition_size, book_addition_size, carry_chain_pairs,
                                compact_addition_table])
def test_helpers_reject_bad_digit_counts(fn):
    with pytest.raises(ValueError, match=fr'{fn.__name__}: n_digits must be an integer >= 1'):
        fn(0)


def test_pairs_out_of_range_or_malformed():
    with pytest.raises(ValueError, match=r'long_addition_prompts: numbers must be in 0\.\.99 '
                                         r'for 2 digits; got \(100, 1\)'):
        long_addition_prompts(2, [(1, 2), (100, 1)])
    with pytest.raises(ValueError, match=r'long_addition_errors: numbers must be in 0\.\.9 '):
        long_addition_errors(build_compact_addition_transformer(1), 1, [(-1, 0)])
    with pytest.raises(ValueError, match=r'long_addition_prompts: pairs must be \(a, b\) '
                                         r'integer pairs'):
        long_addition_prompts(2, [(1, 'x')])
    with pytest.raises(ValueError, match=r'carry_plan: numbers must be in 0\.\.999'):
        carry_plan(1000, 0, 3)
