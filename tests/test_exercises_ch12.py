"""Chapter 12 checkers ("beat a record"): what each calls solved, and answers that must not pass.

Every answer goes through the real protocol (``checking.verdict``: pickled, run in a worker,
judged in the judge).  Programs are read as plain arrays; the record's size is rebuilt in the
judge; inputs are drawn afresh on every check, and a NOT YET names the input and what the
program printed, never a count of wrong inputs.

| id | what is checked (solved means) | wrong answers tried (each a test below) |
|---|---|---|
| 12.1 | a program with vocabulary >= 12 and block >= 11, layer norms at their defaults and fewer than the compact record's parameters (3 digits) adds 50,871 pairs of 3-digit numbers in the book's format: every pair of numbers with digits in 0, 1, 8, 9, x + (999 - x), x + (1000 - x), x + 999 and 999 + x for every x, the record's carry chains, and 43,000 pairs drawn afresh; the PASS line adds AdderBoard's unique-parameter count | the book's adder (too large); the record with its final write weakened (wrong carries); a shift hidden in the final layer norm; an extra unused head (too large) |
| 12.2 | a one-layer program with vocabulary >= 65,536, block >= 128, default layer norms and fewer than the record's parameters sorts 88 inputs of up to 64 numbers: both ends, runs of neighbours where the codes part at every position, powers of two, 6 fixed sets, 4 sets and 1,536 distinct numbers drawn afresh | the book's Sort (vocabulary 28); the record with block 130 (48 parameters over); a second layer; heads that no longer outweigh the shallower ones (wrong); a shift in the final layer norm |
| 12.3 | a program with vocabulary >= 28, block >= 54, default layer norms and fewer than the record's non-zero parameters sorts 1,135 inputs over 1..27: every number alone, every ordered pair, the 27 numbers in 6 orders (4 drawn afresh), 400 sets drawn afresh | the book's Sort (184 non-zero); the compact design at 29 (3 over); the query map pushed too far (wrong); a block of 40; arrays given as lists (counted the same) |
| 12.4 | a builder ``build(ks, vs, vocab_size, block_size)`` whose program for Chapter 3's 1,000-entry vocab-10 table at block 16 has fewer than the record's parameters, and whose programs at block 16 answer every key of that table, of XOR, of 50 keys of 12 tokens differing only in the first or only in the last token, and at block 16, and of five random tables of key lengths, vocabularies, sizes and block sizes (up to 32, one at 32) drawn afresh (round 9; round 20: with three tables, the builder at block 16 passed one check in 30 and the one right at four lengths one in 130), alone, behind random prefixes of every length and behind prefixes of other keys (random tables: keys of 1 to 16 tokens, 16 on every check, one over 256 symbols and one over 61 to 255: round 16, a builder wrong over 60 symbols passed; round 25, builders wrong past 200 symbols or at keys of 16 passed 3 checks in 4) | the book's fitted construction; a builder that always returns the 1,000-entry record (wrong on XOR); one that ignores block_size; one that raises; one one size too large; one that scrambles the arrays it is given (harmless: they are the worker's copies); one that always builds at block 16, one wrong for key lengths other than 2, 3, 5 and 12 (round 9) |
| 12.5 | a one-layer program with vocabulary >= 10, MLP off (M1, b1, M2 zero), default layer norms and fewer than the record's non-zero parameters answers all 100 prompts [i, j] with (i + j) % 10 | the book's single-digit adder (MLP on); the record with a head removed (wrong); a second layer; a shift in the final layer norm |

Red team (attacks written from the checker source alone; each must fail):

| class | attack | puzzles | why it fails now |
|---|---|---|---|
| 1 oracle | read the expected digits or how many inputs are wrong off a NOT YET, and fix those | 12.1, 12.2, 12.5 | messages name the input and what the program printed only, and the drawn inputs change on every check |
| 2 source | read a record's size off the checker (or edit its cached sizes) | 12.4 | no size literal in `ch12.py`: sizes are rebuilt from the package in the judge, out of the answer's reach |
| 3 before | patch the record (the catalogue, `record_size`) in the kernel before the check | 12.5 | the judge imports the package clean |
| 3 before | rewrite the check's tables or values from inside the builder (frames, module attributes) | 12.4 | the builder runs in the worker; the judge keeps its own tables |
| 6 probes | a lookup right only with the key alone or behind a full prefix | 12.4 | every prefix length that fits, and prefixes made of other keys |
| 6 probes | a Sort broken on 1 % of the numbers, tuned to the fixed inputs | 12.2 | 1,536 distinct numbers drawn afresh on every check |
| 6 probes | a dict that shows one program and runs another | 12.5 | only plain data crosses: what is counted is what runs |
| 3 before | the record's own program, built by the package (round 4 found that it passed as a tie) | 12.1-12.5 | a tie is a NOT YET that says so: only a smaller program passes, and 12.3 is open (no answer is known to pass) |
| - | the record minus weights no input needs (dead value and query/key columns and hidden units trimmed: 12.1 by 156, 12.2 by 960, 12.4 by 345; 12.5: 50 entries zeroed by a greedy prune) | 12.1, 12.2, 12.4, 12.5 | **passes**, rightly: a smaller program that is right on every input beats the record; these are the references |

Classes 4 (training) and 5 (the KV cache) have no puzzle in this chapter.  References, shared
garbage and the contract are tested for every checker in ``tests/test_checker_contract.py``;
the reference answers come from their one copy, the solutions notebook (``answer``).
"""
import copy
import dataclasses
import inspect
import re

import numpy as np
import pytest
from checking import ShowsAnother, fails, passes

import taotp
from solutions import answer
from taotp.exercises import ch12
from taotp.exercises.ch12 import PUZZLES, adder_pairs, record_size
from taotp.lookup import build_universal_lookup_transformer
from taotp.programs import CATALOGUE

CHECKED = [p.id for p in PUZZLES if p.kind in ('checked', 'open')]
OPEN = [p.id for p in PUZZLES if p.kind == 'open']
COUNTS = re.compile(r'\d+ of (the )?[\d,]+ (inputs|prompts|keys|wrong)')


def with_shift(params):
    p = copy.deepcopy(params)
    p['lnf'] = {'gamma': 1.0, 'beta': np.full(np.shape(p['tok_emb'])[1], 0.5)}
    return p


def wrong_with_the_input_only(puzzle, value, *fragments):
    """Fails, names the input, and shows neither an expected value nor a count."""
    result = fails(puzzle, value, 'input ', 'your answer gave', *fragments)
    assert 'expected' not in result.message and not COUNTS.search(result.message), result.message
    return result


# garbage particular to this chapter's answers
EXTRA_GARBAGE = {
    **{pid: {'a 1-token vocabulary': taotp.base_params(1, 200, 3),
             'params with a NaN': {**taotp.base_params(30, 200, 3),
                                   'tok_emb': np.full((30, 3), np.nan)}}
       for pid in ('12.1', '12.2', '12.3', '12.5')},
    '12.4': {'a builder returning None': lambda *a: None,
             'a builder returning text': lambda *a: 'params',
             'a builder returning a 1-token program': lambda *a: taotp.base_params(1, 20, 3),
             'params instead of a builder': taotp.base_params(10, 5, 3)},
}


def test_puzzle_list():
    assert CHECKED == ['12.1', '12.2', '12.3', '12.4', '12.5']
    assert OPEN == ['12.3']


def test_an_open_records_own_program_is_right_and_a_tie_not_a_pass():
    result = fails('12.3', answer('12.3'), 'is right on all of them', 'a tie')
    assert 'beats' not in result.message


@pytest.mark.slow       # two full checks (5 s); 12.3's tie is in the default tier
def test_the_records_themselves_tie_and_do_not_pass():
    # 12.1 and 12.2: the trimmed references pass in the notebook (nbval)
    fails('12.4', build_universal_lookup_transformer, 'is right on all of them', 'a tie')
    fails('12.1', CATALOGUE['compact-addition-3'].build(), 'a tie')


def test_the_trimmed_references_compute_what_the_records_compute():
    """Trimming drops only columns and units that no input reads: same logits."""
    record = CATALOGUE['compact-addition-3'].build()
    prompts, _ = taotp.addition.addition_prompts(3, [[123, 989], [0, 0], [999, 1]])
    np.testing.assert_allclose(taotp.transformer_batch(prompts, answer('12.1')),
                               taotp.transformer_batch(prompts, record), atol=1e-9)


def test_12_5_the_pruned_record_beats_it():
    passes('12.5', answer('12.5'), '274 non-zero parameters against the record\'s 324',
           'beats the record by 50')
    fails('12.5', taotp.build_attention_only_mod_transformer(), 'a tie')


def test_a_smaller_program_passes_and_says_by_how_much(monkeypatch):
    """The PASS path of an open record, in the judge's code: the record made larger."""
    monkeypatch.setattr(ch12, 'record_size', lambda key: (10 ** 6, 10 ** 6))
    line = ch12._verdict(answer('12.3'), 'non-zero', 'sort-28-sparse', 'checked').message
    assert "against the record's 1,000,000: it beats the record by 999,933" in line, line


def test_record_sizes_are_the_catalogues():
    assert record_size('sort-28-compact')[1] == 97
    assert record_size('mod-1-digit-attention')[1] == 324
    assert record_size('universal-lookup-1000-block-16')[0] == 15_517 + 11 * 7   # 11 more rows


# ----------------------------------------------------------------------------- 12.1

def test_12_1_pairs_cover_every_carry_pattern():
    pairs = adder_pairs()
    assert len(pairs) > 7_000 and len(np.unique(pairs, axis=0)) == len(pairs)
    sums = pairs.sum(axis=1)
    assert sums.max() == 1998 and sums.min() == 0 and (sums == 1000).sum() >= 999
    digit_sums = (pairs[:, :, None] // 10 ** np.arange(3) % 10).sum(axis=1)   # per column
    for column in range(3):
        assert {0, 9, 18} <= set(digit_sums[:, column].tolist())


def test_12_1_the_books_adder_is_too_large():
    fails('12.1', taotp.build_decimal_addition_transformer(3), '360,576 parameters',
          'nothing was run')


def test_12_1_a_broken_carry_is_found_and_the_sum_is_not_printed():
    p = copy.deepcopy(answer('12.1'))
    p['layers'][-1]['M2'][:] = 0                        # the final write switched off
    wrong_with_the_input_only('12.1', p, 'do not spell the sum')


def test_12_1_layer_norm_shift_and_extra_head_are_rejected():
    fails('12.1', with_shift(answer('12.1')), "['beta'] must stay 0")
    p = CATALOGUE['compact-addition-3'].build()            # the record, one head more
    layer = p['layers'][0]
    for name in 'QKVP':
        layer[name] = np.concatenate([layer[name], np.zeros_like(layer[name][:1])])
    fails('12.1', p, 'the record has', 'beat it')


# ----------------------------------------------------------------------------- 12.2

def test_12_2_the_books_sort_has_too_small_a_vocabulary():
    fails('12.2', taotp.build_sort_transformer(28, 128), 'vocab_size >= 65,536')


def test_12_2_larger_block_second_layer_and_shift():
    fails('12.2', taotp.sort.build_bits_sort_transformer(65_536, 130), '1,616,328 parameters')
    p = copy.deepcopy(answer('12.2'))
    p['layers'].append(copy.deepcopy(p['layers'][0]))
    fails('12.2', p, 'over the budget', 'layers')
    fails('12.2', with_shift(answer('12.2')), "lnf['beta'] must stay 0")


def test_12_2_heads_that_no_longer_outweigh_are_wrong():
    p = taotp.sort.build_bits_sort_transformer(65_536, 128, head_weight=1.01)
    layer = p['layers'][0]
    layer['P'] = layer['P'] / 2.0 ** np.arange(20)[:, None, None]   # all heads weigh the same
    wrong_with_the_input_only('12.2', p, 'then the terminator 0), output', 'smallest number')


# ----------------------------------------------------------------------------- 12.3

def test_12_3_the_books_sort_and_the_compact_design_at_29_are_too_large():
    fails('12.3', taotp.build_sort_transformer(28, 54), '184 non-zero', 'the record has 67')
    fails('12.3', taotp.sort.build_compact_sort_transformer(28, 54), '97 non-zero',
          'the record has 67')


def test_12_3_two_swapped_numbers_are_wrong_and_the_message_reads_well():
    p = CATALOGUE['sort-28-sparse'].build()
    swapped = p['tok_emb'].copy()
    swapped[[5, 6]] = swapped[[6, 5]]                  # 5 and 6 trade places on the circle
    result = wrong_with_the_input_only('12.3', {**p, 'tok_emb': swapped, 'out_emb': swapped},
                                       'then the terminator 0), output')
    assert '(1 numbers' not in result.message and 'after the right' not in result.message
    if ', output 1 (' in result.message:
        assert 'right after the terminator 0' in result.message
    else:
        assert re.search(r'output (\d+) \(after outputs? [\d-]+, right and fed back\)',
                         result.message), result.message


def test_12_3_small_block_and_lists():
    fails('12.3', taotp.sort.build_compact_sort_transformer(28, 40), 'block_size must be at '
                                                                      'least 54')
    p = answer('12.3')
    as_lists = {**p, 'tok_emb': p['tok_emb'].tolist(), 'out_emb': p['out_emb'].tolist()}
    fails('12.3', as_lists, '67 non-zero', 'a tie')


# ----------------------------------------------------------------------------- 12.4

def fitted(ks, vs, vocab_size, block_size):
    return taotp.build_lookup_transformer(ks, vs, vocab_size, block_size, tok_dims=4,
                                          optimization_iters=30)


def test_12_4_the_fitted_construction_is_wrong_on_the_big_table():
    wrong_with_the_input_only('12.4', fitted, "Chapter 3's table", 'vs[')


def test_12_4_a_builder_wrong_only_over_60_symbols_fails():
    """Round 16: no random table had more than 60 symbols (nor keys over 8 tokens)."""
    right = answer('12.4')
    fails('12.4', lambda ks, vs, v, b: right(ks, (np.asarray(vs) + 1) % v if v > 60 else vs, v, b),
          'ch12.lookup_tables(')
    lengths = {len(t[1][0]) for seed in range(10) for t in ch12.lookup_tables(seed)[3:]}
    assert max(lengths) > 8 and all(ch12.lookup_tables(s)[3][3] > 60 for s in range(10))


def test_12_4_builders_wrong_only_at_the_tops_fail():
    """Red team, round 24: the one table over 60 symbols was drawn from 61 to 256, so a builder
    wrong past 200 symbols passed 9 checks in 12; keys of 16 tokens were met in 3 checks of
    10.  Every check now has a table over 256 symbols and one with keys of 16 tokens."""
    right = answer('12.4')
    for wrong_at in (lambda v, n: v > 200, lambda v, n: n == 16):
        fails('12.4', lambda ks, vs, v, b, wrong_at=wrong_at: right(
            ks, (np.asarray(vs) + 1) % v if wrong_at(v, len(ks[0])) else vs, v, b),
            'ch12.lookup_tables(')
    for seed in range(20):
        random = ch12.lookup_tables(seed)[3:]
        assert random[0][3] == 256 and 16 in {len(t[1][0]) for t in random}


def test_12_4_a_builder_that_ignores_its_table_or_block():
    table = taotp.lookup.random_lookup_table(1000, 5, 10, rng=0)
    fails('12.4', lambda ks, vs, v, b: build_universal_lookup_transformer(*table, 10, b),
          'XOR', 'your answer gave')
    fails('12.4', lambda ks, vs, v, b: build_universal_lookup_transformer(ks, vs, v, len(ks[0])),
          'block_size must be at least 16')


def test_12_4_raising_larger_and_scrambling_builders():
    def raises(*args):
        raise RuntimeError('boom')
    fails('12.4', raises, 'your builder raised RuntimeError: boom')
    fails('12.4', lambda ks, vs, v, b: build_universal_lookup_transformer(ks, vs, v + 1, b),
          'the record has 15,594')

    def scrambles(ks, vs, v, b):
        params = build_universal_lookup_transformer(ks, vs, v, b)
        ks[:] = 0
        vs[:] = 0
        return params
    fails('12.4', scrambles, 'is right on all of them', 'a tie')


def pruned_lookup(ks, vs, vocab_size, block_size):
    """The record without its hidden units that write nothing: smaller, and right."""
    params = build_universal_lookup_transformer(ks, vs, vocab_size, block_size)
    layer = params['layers'][0]
    keep = np.any(layer['M2'] != 0, axis=1)
    layer.update(M1=layer['M1'][:, keep], b1=layer['b1'][keep], M2=layer['M2'][keep])
    return params


def test_12_4_builders_right_only_on_the_shapes_once_drawn_fail():
    """Round 9: tables and block sizes were fixed but for one random table's values; round 20
    (a run of this test): three random tables all had blocks up to 16 in 3.5 % of checks."""
    def at_block_16(ks, vs, v, b):
        return pruned_lookup(ks, vs, v, 16)

    def only_the_old_key_lengths(ks, vs, v, b):
        params = pruned_lookup(ks, vs, v, b)
        if np.shape(ks)[1] not in (2, 3, 5, 12):
            params['out_emb'] = np.zeros_like(params['tok_emb'])
        return params
    fails('12.4', at_block_16, 'the random table ch12.lookup_tables(')
    fails('12.4', only_the_old_key_lengths, 'the random table ch12.lookup_tables(')


# ----------------------------------------------------------------------------- 12.5

def test_12_5_the_books_adder_uses_its_mlp():
    fails('12.5', taotp.build_single_digit_mod_transformer(), 'the MLP must be off')


def test_12_5_a_missing_head_second_layer_and_shift():
    p = copy.deepcopy(answer('12.5'))
    for name in 'QKVP':
        p['layers'][0][name] = p['layers'][0][name][:4]
    wrong_with_the_input_only('12.5', p, '% 10')
    p = copy.deepcopy(answer('12.5'))
    p['layers'].append(copy.deepcopy(p['layers'][0]))
    fails('12.5', p, 'over the budget')
    fails('12.5', with_shift(answer('12.5')), "lnf['beta'] must stay 0")


# ----------------------------------------------------------------------------- red team

def test_the_checker_module_holds_no_record_size():
    source = inspect.getsource(ch12)
    for literal in ('1,299', '1299', '1616280', '1_616_280', '15594', '15_594', '97', '324'):
        assert not re.search(rf'(?<![\d.]){literal}(?![\d])', source), literal


def test_12_4_a_builder_cannot_reach_the_checks_record_or_tables():
    def bigger_and_patching(ks, vs, vocab, block):
        ch12.record_size = lambda key: (10 ** 9, 10 ** 9)        # the worker's copy only
        ch12.LOOKUP_BLOCK = 1
        taotp.programs.CATALOGUE.clear()
        return build_universal_lookup_transformer(ks, vs, vocab + 1, block)
    fails('12.4', bigger_and_patching, 'the record has 15,594')


def test_12_4_builder_rewrites_the_checks_values_through_its_frames():
    import sys

    def constant(ks, vs, vocab, block):               # always answers token 0...
        frame = sys._getframe(1)                       # ...after zeroing every value it finds
        while frame is not None:
            for value in frame.f_locals.values():
                if isinstance(value, np.ndarray) and value.dtype.kind in 'iu':
                    value[...] = 0
            frame = frame.f_back
        vs[...] = 0
        params = taotp.base_params(vocab, block, 1)
        params['tok_emb'] = np.ones((vocab, 1))
        params['out_emb'] = np.zeros((vocab, 1))
        params['out_emb'][0, 0] = 1.0
        return params
    fails('12.4', constant)


def test_12_5_a_record_patched_in_the_kernel_is_not_the_baseline(monkeypatch):
    bigger = copy.deepcopy(answer('12.5'))
    tok = bigger['tok_emb']
    bigger['tok_emb'] = np.where(tok == 0, 1e-12, tok)   # many more non-zeros, still right
    record = CATALOGUE['mod-1-digit-attention']
    monkeypatch.setitem(CATALOGUE, 'mod-1-digit-attention',
                        dataclasses.replace(record, build=lambda *a, **k: bigger))
    monkeypatch.setattr(ch12, 'record_size', lambda key: (10 ** 9, 10 ** 9))
    fails('12.5', bigger, 'the record has 324')


def test_12_4_builder_right_only_alone_and_behind_a_full_prefix():
    # the universal lookup with the position rows between "key alone" and "key at the end of
    # the block" overwritten: same size, right at prefix lengths 0 and block - l only
    def build(ks, vs, vocab, block):
        params = build_universal_lookup_transformer(ks, vs, vocab, block)
        rows = list(range(ks.shape[1], block - ks.shape[1]))
        params['pos_emb'][rows] = params['pos_emb'][0]
        return params
    fails('12.4', build, 'prefix')


def test_12_2_sort_wrong_on_one_percent_of_the_numbers_tuned_to_the_fixed_inputs():
    # 655 numbers (none of them, nor a neighbour, in the fixed inputs) take their successor's
    # code: wrong on about 28 % of random inputs, right on every fixed one
    params = CATALOGUE['sort-65536'].build()
    fixed = taotp.sort.large_vocab_sort_inputs(ch12.SORT_V, np.random.default_rng(1202),
                                               count=6, length=ch12.SORT_LEN)
    fixed.append(list(range(ch12.SORT_V - 1, ch12.SORT_V - 1 - ch12.SORT_LEN, -1)) + [0])
    seen = {t + s for row in fixed for t in row for s in (-1, 0, 1)}
    free = np.array([t for t in range(2, ch12.SORT_V - 2) if t not in seen])
    broken = np.random.default_rng(5).choice(free, size=655, replace=False)
    tok = params['tok_emb'].copy()
    tok[broken] = tok[broken + 1]
    params['tok_emb'], params['out_emb'] = tok, tok.copy()
    wrong_with_the_input_only('12.2', params)


class ShowsAll(ShowsAnother):
    """``ShowsAnother`` whose ``items`` show the shown program too."""

    def items(self):
        return self.shows.items()


def test_12_5_a_dict_that_shows_one_layer_and_runs_two():
    """Shows a wrong one-layer program (within the budget) and holds a right two-layer one:
    one plain dict crosses, and it is both what is counted and what runs."""
    right = answer('12.5')
    two = copy.deepcopy(right)
    two['layers'].append(copy.deepcopy(right['layers'][0]))
    zeroed = copy.deepcopy(right)
    for key in ('Q', 'K', 'V', 'P'):
        zeroed['layers'][0][key] = np.zeros_like(right['layers'][0][key])
    fails('12.5', ShowsAll(two, zeroed))
    fails('12.5', ShowsAll(zeroed, two))
