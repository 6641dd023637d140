"""The AdderBoard entry (Records chapter): the contract the board's check uses, both counts,
the verifier, the counting rules, and every local situation of every column."""
import json
import os
from pathlib import Path

import numpy as np
import pytest

import taotp
from taotp.addition import adderboard as ab


@pytest.fixture(scope='module')
def entry():
    return ab.params()


# ----------------------------------------------------------------------------- the contract

@pytest.mark.parametrize('a, b', [(0, 0), (ab.TOP, ab.TOP), (ab.TOP, 1), (1, ab.TOP),
                                  (1_234_567_890, 987_654_321), (5_000_000_000, 5_000_000_000),
                                  (4_040_404_040, 5_959_595_960), (7, 8)])
def test_the_external_contract(entry, a, b):
    tokens = taotp.decode(np.array(ab.prompt(a, b)), entry, max_steps=12)
    assert ab.read(tokens) == a + b
    assert isinstance(ab.read(tokens), int)


def test_prompt_is_a_list_of_ints_in_the_stated_format():
    p = ab.prompt(9_876_543_210, 12)
    assert p == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert all(type(t) is int for t in p)


@pytest.mark.parametrize('a, b, exc, match', [
    (-1, 0, ValueError, r'prompt: a must be in \[0, 9,999,999,999\]; got -1'),
    (0, 10 ** 10, ValueError, r'prompt: b must be in'),
    (1.5, 0, TypeError, r'prompt: a must be an integer; got float'),
    (True, 0, TypeError, r'prompt: a must be an integer; got bool')])
def test_prompt_refuses_bad_operands(a, b, exc, match):
    with pytest.raises(exc, match=match):
        ab.prompt(a, b)


def test_read_takes_the_answer_from_a_run_or_alone():
    answer = [2, 1] + [0] * 9
    assert ab.read(ab.prompt(5, 7) + answer + [3]) == 12
    assert ab.read(answer) == ab.read(answer + [9]) == 12
    with pytest.raises(ValueError, match='read: tokens must be a decoded sequence'):
        ab.read([1, 2, 3])
    with pytest.raises(ValueError, match='read: answer tokens must be digits'):
        ab.read([1.5] * 11)


def test_batched_verification_decodes_exactly_like_decode(entry):
    rng = np.random.default_rng(3)
    pairs = [tuple(int(x) for x in row) for row in rng.integers(0, ab.TOP + 1, size=(20, 2))]
    prompts = np.array([ab.prompt(a, b) for a, b in pairs])
    batch = taotp.decode_batch(prompts, entry, 12)
    for row, prompt in zip(batch, prompts):
        assert np.array_equal(row, taotp.decode(prompt, entry, max_steps=12))


# ----------------------------------------------------------------------------- counts

def test_both_counts(entry):
    assert ab.entry_counts() == {'total': 352, 'non0': 205, 'non0_no_positions': 107,
                                 'unique': 57}
    census = ab.parameter_census(entry)
    assert census['dense'] == census['norms'] == census['positions'] == 0
    assert len(census['rebuilt']) == 14            # every weight rebuilt from declared tensors
    assert ab.unique_parameters(entry) <= 130      # the best hand-coded entry of the snapshot


def test_shape_of_the_entry(entry):
    cfg = taotp.config(entry)
    assert (cfg['n_layers'], cfg['n_heads'], cfg['d_model'], cfg['d_head'], cfg['d_ff'],
            cfg['vocab_size'], cfg['block_size']) == (1, [2], 5, [2], [2], 10, 33)
    # the book's engine, unchanged: the default layer norm everywhere
    assert all(ln == {'gamma': 1.0, 'beta': 0.0}
               for ln in (entry['lnf'], entry['layers'][0]['ln1'], entry['layers'][0]['ln2']))


def test_a_plain_dict_counts_densely_and_a_tampered_weight_loses_its_credit(entry):
    plain = dict(entry)
    assert ab.unique_parameters(plain) == 187      # 352 less the free position table (165)
    tampered = ab.params()
    tampered['layers'][0]['M1'] = tampered['layers'][0]['M1'].copy()
    tampered['layers'][0]['M1'][3, 0] += 1e-9
    census = ab.parameter_census(tampered)
    assert ('layers', 0, 'M1') not in census['rebuilt'] and census['dense'] == 10
    assert census['unique'] == 57 + 10              # read_scale and write are still used


def test_a_tie_must_hold_only_ones(entry):
    forged = ab.params()
    forged.ties = {'ones': np.array([1.0, 2.0])}    # a 'tie' that carries a number
    assert ab.parameter_census(forged)['dense'] == 10


def test_position_tables_are_free_only_when_sinusoidal(entry):
    i = np.arange(33)
    assert ab.is_sinusoidal(np.cos(2 * np.pi * i / 11)) and ab.is_sinusoidal(np.zeros(33))
    for learned in (np.ones(33), i / 33, 1.1 ** i, (-1.0) ** i, np.cos(i) + 0.1):
        assert not ab.is_sinusoidal(learned)
    assert not ab.is_sinusoidal(np.sin(i[:3]))      # too short to tell
    moved = dict(entry, pos_emb=entry['pos_emb'] + 1.0)
    assert ab.parameter_census(moved)['positions'] == 33 * 5


def test_layer_norms_count_only_when_they_hold_numbers(entry):
    p = dict(entry, lnf={'gamma': np.full(5, 2.0), 'beta': 0.0})
    assert ab.parameter_census(p)['norms'] == 5


def test_the_book_adders_count_densely():
    adder = taotp.build_compact_addition_transformer(10)
    # its position table is no sinusoid of the position (slots, ramps), so all of it counts
    assert ab.unique_parameters(adder) == taotp.count_params(adder)['n_params'] == 1_572


def test_assemble_refuses_a_term_of_the_wrong_size():
    with pytest.raises(ValueError, match=r"assemble: term \('u',\) has 2 numbers; the weight "
                                         r"has shape \(3,\)"):
        ab.assemble({'u': np.ones(2)}, [('u',)], (3,))


# ----------------------------------------------------------------------------- verification

def test_verify_the_entry_like_the_board(entry):
    verdict = ab.verify(entry)
    assert (verdict.right, verdict.total, verdict.edge_right, verdict.edge_total) == \
        (10_000, 10_000, 27, 27)
    assert verdict.accuracy == 1.0 and verdict.qualifies and verdict.failures == []


def test_verify_reports_a_broken_adder(entry):
    broken = ab.params()
    broken['layers'][0]['b1'] = broken['layers'][0]['b1'] + 3.0    # the wrap comes too late
    verdict = ab.verify(broken, n=300)
    assert verdict.accuracy < 0.99 and not verdict.qualifies
    a, b, got = verdict.failures[0]
    assert got != a + b


def test_a_run_that_spells_no_number_counts_as_wrong(entry):
    fmt = ab.Format('answers read as nothing', ab.prompt, lambda tokens: ab.read([1.5]), 12)
    verdict = ab.verify(entry, n=3, fmt=fmt)
    assert verdict.right == 0 and verdict.failures[0][2] is None


def test_verify_runs_the_books_compact_adder_in_its_own_format():
    adder = taotp.build_compact_addition_transformer(10)
    verdict = ab.verify(adder, n=500, fmt=ab.book_format(10))
    assert verdict.accuracy == 1.0 and verdict.edge_right == verdict.edge_total


def test_verify_refuses_a_bad_count():
    with pytest.raises(ValueError, match='verify: n must be an integer >= 1; got 0'):
        ab.verify(ab.params(), n=0)


def test_edge_cases_hold_the_boards_edges():
    cases = ab.edge_cases()
    assert (0, 0) in cases and (ab.TOP, ab.TOP) in cases
    assert all((10 ** k - 1, 1) in cases for k in range(1, 11))


@pytest.mark.slow
def test_every_situation_of_every_column(entry):
    """170,300 pairs: each column k meets every digit of columns k and k - 1 with each carry."""
    pairs = ab.column_cases()
    assert len(pairs) == 170_300
    assert ab.teacher_forced_errors(entry, pairs) == []


def test_the_margins_of_the_wrap_and_the_readout(entry):
    """The MLP's input is 5 y; y sits at most 0.1 below the integer it stands for."""
    pairs = [(a, b) for a in (0, 9, 90, 99, 9_999_999_999) for b in (0, 1, 9, 10, 11)]
    rows = np.array([ab.prompt(a, b) + [int(c) for c in f'{a + b:011d}'[::-1]]
                     for a, b in pairs])
    t = taotp.trace(rows[0], entry)
    assert t.attn[0].shape == (2, 33, 33)
    for row, (a, b) in zip(rows, pairs):
        record = taotp.trace(row[:-1], entry)
        m = record.mlp_in[0][ab.PROMPT_LEN - 1:, :] @ entry['layers'][0]['M1'][:, 0]
        y = m / 5
        total = a + b
        digits = [int(c) for c in f'{total:011d}'[::-1]]
        carries = [0] + [((a % 10 ** k) + (b % 10 ** k)) // 10 ** k for k in range(1, 11)]
        exact = np.array([(a // 10 ** k % 10) + (b // 10 ** k % 10) + c
                          for k, c in enumerate(carries)])
        assert np.all(y <= exact + 1e-6) and np.all(y >= exact - 0.1 - 1e-6)
        assert np.array_equal(record.logits[ab.PROMPT_LEN - 1:].argmax(-1), digits)


STORED = Path(taotp.__file__).parent / 'data' / 'records_adderboard.json'


def _verdict_facts(verdict):
    return {'right': verdict.right, 'total': verdict.total, 'edge_right': verdict.edge_right,
            'edge_total': verdict.edge_total, 'failures': [list(f) for f in verdict.failures]}


@pytest.mark.slow
def test_the_stored_verdict_of_the_books_compact_adder_is_recomputed():
    """The Records chapter runs 1,000 pairs through the 10-digit compact adder and loads the
    board's full check (10,000 pairs) from records_adderboard.json; recomputed here.
    Set TAOTP_WRITE_RECORDS=1 to store a new run."""
    adder = taotp.build_compact_addition_transformer(10)
    fresh = {'compact_10': _verdict_facts(ab.verify(adder, fmt=ab.book_format(10))),
             'unique_compact_10': ab.unique_parameters(adder)}
    if os.environ.get('TAOTP_WRITE_RECORDS'):
        STORED.write_text(json.dumps(fresh, indent=1) + '\n')
    assert json.loads(STORED.read_text()) == fresh
