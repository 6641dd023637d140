"""The catalogue: every program of the book, with the sources' numbers, in one table.

Each ``Program`` says how to build it, what the source states about its size
(``source_total``, ``source_non0``; ``None`` where the source gives none), and
a few worked examples (a prompt and the tokens greedy decoding must produce).
The index page (``book/programs``), the chapters and the tests all read this
table, so a number from a source is typed once.

    >>> from taotp.programs import CATALOGUE
    >>> sort = CATALOGUE['sort-28']
    >>> sort.source_non0, sort.chapter
    (184, 5)
    >>> prompt, want = sort.examples()[0]
    >>> want
    [2, 6, 7, 12, 18]
"""
from dataclasses import dataclass, field

import numpy as np

from . import addition, coupling, hello_world, interpreter, lookup, search, selective, sort
from .addition import adderboard
from .params import base_layer, base_params


@dataclass(frozen=True)
class Program:
    """One row of the catalogue."""
    key: str
    chapter: int
    title: str
    build: object                  # () -> params dict
    source_total: int = None       # parameter count the source states (None: not stated)
    source_non0: int = None        # non-zero count the source states
    cite: str = ''                 # where the source states it
    examples: object = list        # () -> [(prompt, expected continuation, decode kwargs...)]
    note: str = ''
    facts: dict = field(default_factory=dict)   # other numbers the source states about it
    tags: tuple = field(default=())


def _min_total(n):
    return 6 * n + 39


def _lookup_table(n_entries):
    return lookup.random_lookup_table(n_entries, key_len=5, vocab_size=10,
                                      rng=np.random.default_rng(0))


def _lookup(n_entries, tok_dims, iters=5000):
    ks, vs = _lookup_table(n_entries)
    return lookup.build_lookup_transformer(ks, vs, vocab_size=10, block_size=5,
                                           tok_dims=tok_dims, optimization_iters=iters,
                                           rng=np.random.default_rng(1))


def _lookup_examples(n_entries):
    def examples():
        ks, vs = _lookup_table(n_entries)
        return [(list(k), [int(v)]) for k, v in zip(ks[:5], vs[:5])]
    return examples


def _hello_examples(tokenizer):
    def examples():
        tok = hello_world.make_tokenizer(hello_world.HELLO_WORLD, tokenizer)
        return [([tok['<bos>']], hello_world.hello_world_targets(hello_world.HELLO_WORLD,
                                                                 tok).tolist())]
    return examples


def _search_examples(vocab, prefix, count=4):
    def examples():
        rows, answers = search.random_search_inputs(np.random.default_rng(0), count, vocab, 40,
                                                    prefix)
        return [(row.tolist(), [int(a)]) for row, a in zip(rows, answers)]
    return examples


def _min_examples(vocab, largest=False):
    def examples():
        rows = np.random.default_rng(0).integers(0, vocab, size=(4, 8))
        return [(row.tolist(), [int(row.max() if largest else row.min())]) for row in rows]
    return examples


def _sort_examples():
    rng = np.random.default_rng(0)
    out = [([6, 2, 12, 18, 7, 0], [2, 6, 7, 12, 18])]
    for length in (1, 5, 27):
        row = rng.choice(np.arange(1, 28), size=length, replace=False).tolist() + [0]
        out.append((row, sort.sort_reference(row)))
    return out


def _addition_examples(n_digits, mod=False):
    def examples():
        pairs = [[0, 0], [10 ** n_digits - 1, 10 ** n_digits - 1], [10 ** n_digits - 1, 1]]
        prompts, _ = addition.addition_prompts(n_digits, np.array(pairs))
        ref = addition.mod_addition_reference if mod else addition.addition_reference
        return [(p.tolist(), np.atleast_1d(ref(p)).tolist()) for p in prompts]
    return examples


def _single_digit_examples():
    return [([a, b], [(a + b) % 10]) for a, b in ((0, 0), (9, 9), (3, 8), (7, 2))]


def _adder_examples():
    adder = coupling.build_multi_operand_adder(10, 10, norm=True)
    out = []
    for ops in ([57, 48, 96], [9_999_999_999] * 10, [0]):
        prompt = adder.prompt(ops)
        response, _ = adder.generate(ops)
        out.append((prompt, [coupling.VOCAB.index(c) for c in response],
                    {'positions': adder.ids, 'eos': coupling.VOCAB.index(coupling.EOS)}))
    return out


def _fig_8_2_examples():
    """From <bos> the Fig. 8.2 listing prints Hello World! and <eos>."""
    symbols = interpreter.FIG_8_2_SYMBOLS
    return [([symbols.index('<bos>')],
             [symbols.index(c) for c in 'Hello World!'] + [symbols.index('<eos>')])]


_P3 = selective.transition_matrix(3, np.random.default_rng(0))


def _selective_examples():
    """Prompts of the task and the port's next token, computed by the exact formula instead.

    The port's logits are ``sum_k w_k log P[x_{i+1-k}]`` with the network's lag weights
    ``w`` (``construction_weights``); prompts whose two best tokens are closer than 0.01
    are skipped.
    """
    lags, out = (1, 2, 3), []
    for seed in range(8):
        x, _ = selective.sample_sequence(_P3, lags, 63, np.random.default_rng(seed))
        n = 20 + 6 * seed                                  # prompt lengths 20..62
        w = selective.construction_weights(_P3, lags, x[:n], 100.0)[-1]
        rows = selective.candidate_rows(_P3, lags, x[:n])[-1]   # (K, S)
        logits = w @ np.log(rows)
        second, best = np.sort(logits)[-2:]
        if best - second > 0.01:
            out.append((x[:n].tolist(), [int(np.argmax(logits))]))
    return out


def _universal_lookup(n_entries):
    ks, vs = _lookup_table(n_entries)
    return lookup.build_universal_lookup_transformer(ks, vs, vocab_size=10, block_size=5)


def _compact_addition_examples(n_digits):
    """Carry chains: 0 + 0, 9..9 + 9..9, 9..9 + 1, 1 + 9..9 and chains ended at the last column."""
    def examples():
        pairs = addition.carry_chain_pairs(n_digits)
        prompts, answers = addition.long_addition_prompts(n_digits, pairs[:4] + pairs[-6:])
        return [(p.tolist(), a.tolist()) for p, a in zip(prompts, answers)]
    return examples


def _large_sort_examples():
    top = 65_535
    return [([6, 2, 12, 18, 7, 0], [2, 6, 7, 12, 18]),
            ([top, 1, 40_000, 39_999, 2, 0], [1, 2, 39_999, 40_000, top])]


PROGRAMS = [
    Program('hello-world-message', 2, 'Hello World (message tokenizer)',
            lambda: hello_world.build_hello_world_transformer()[0], 72, None,
            'TAOTP ch. 2', _hello_examples('message')),
    Program('hello-world-ascii', 2, 'Hello World (ASCII tokenizer)',
            lambda: hello_world.build_hello_world_transformer(tokenizer='ascii')[0], 807, None,
            'TAOTP ch. 2', _hello_examples('ascii')),
    Program('lookup-10', 3, 'Lookup Table, 10 entries', lambda: _lookup(10, 5), 1_408, 283,
            'TAOTP ch. 3', _lookup_examples(10)),
    Program('lookup-100', 3, 'Lookup Table, 100 entries', lambda: _lookup(100, 10), 3_588, 733,
            'TAOTP ch. 3', _lookup_examples(100)),
    Program('lookup-1000-untrained', 3, 'Lookup Table, 1,000 entries (untrained)',
            lambda: _lookup(1000, 30, iters=0), 22_308, 5_033, 'TAOTP ch. 3',
            note='count only: the embeddings are left at their seeded start'),
    Program('search-10', 4, 'Search, vocab 10, prefix 3',
            lambda: search.build_search_transformer(10, 100, 3), 4_800, 535, 'TAOTP ch. 4',
            _search_examples(10, 3)),
    Program('search-1000', 4, 'Search, vocab 1,000, prefix 10',
            lambda: search.build_search_transformer(1000, 100, 10), 123_486, 30_734,
            'TAOTP ch. 4', _search_examples(1000, 10)),
    Program('min-10', 5, 'Min, n = 10', lambda: sort.build_min_transformer(10, 10),
            _min_total(10), None, 'TAOTP ch. 5 (6n + 39)', _min_examples(10),
            facts={'total': _min_total,            # "6 n + 39 parameters", any n
                   'non0_outside_tok_emb': 11}),   # "only 11 of them are non-zero"
    Program('max-10', 5, 'Max, n = 10', lambda: sort.build_max_transformer(10, 10),
            examples=_min_examples(10, largest=True)),
    Program('sort-28', 5, 'Sort, n = 28', lambda: sort.build_sort_transformer(28, 100),
            None, 184, 'TAOTP ch. 5 (166 in tok_emb + 18)', _sort_examples,
            note='the book prints 166 as the whole count; 166 is tok_emb alone, 18 sit elsewhere',
            facts={'non0_printed': 166, 'non0_outside_tok_emb': 18,
                   'exact_up_to': 28}),            # "robust for up to 28 numbers"
    Program('mod-1-digit', 6, 'Addition mod 10, one digit',
            addition.build_single_digit_mod_transformer, 629, 379, 'TAOTP Fig. 6.2',
            _single_digit_examples),
    Program('mod-1', 6, 'Addition mod 10, 1 digit (multi-digit builder)',
            lambda: addition.build_multi_digit_mod_transformer(1), 1_226, 432, 'TAOTP Fig. 6.3',
            _addition_examples(1, mod=True)),
    Program('mod-2', 6, 'Addition mod 10, 2 digits',
            lambda: addition.build_multi_digit_mod_transformer(2), 9_508, 3_646, 'TAOTP Fig. 6.3',
            _addition_examples(2, mod=True),
            facts={'mlp': (None, 3_522)}),         # MLP (total, non-zero); total not stated
    Program('mod-3', 6, 'Addition mod 10, 3 digits',
            lambda: addition.build_multi_digit_mod_transformer(3), 90_690, 35_542,
            'TAOTP Fig. 6.3', _addition_examples(3, mod=True),
            facts={'mlp': (89_962, 35_382),
                   'min_sep': 1.4e-9}),            # "around 1.4e-9" between the MLP's keys
    Program('addition-1', 6, 'Decimal addition, 1 digit',
            lambda: addition.build_decimal_addition_transformer(1), 2_088, 737, 'TAOTP Fig. 6.4',
            _addition_examples(1),
            facts={'mlp': (1_717, 648), 'mlp_share': 82.2}),
    Program('addition-2', 6, 'Decimal addition, 2 digits',
            lambda: addition.build_decimal_addition_transformer(2), 27_432, 10_440,
            'TAOTP Fig. 6.4', _addition_examples(2),
            facts={'mlp': (26_872, 10_326), 'mlp_share': 98.0}),
    Program('addition-3', 6, 'Decimal addition, 3 digits',
            lambda: addition.build_decimal_addition_transformer(3), 360_576, 139_267,
            'TAOTP Fig. 6.4', _addition_examples(3),
            facts={'mlp': (359_827, 139_128), 'mlp_share': 99.8}),
    Program('listing-hello-world', 8, 'Fig. 8.2 listing (Hello World, as printed)',
            lambda: interpreter.load_program(interpreter.book_listing('hello_world')), 72, None,
            'TAOTP Fig. 8.2', _fig_8_2_examples),
    Program('listing-min', 8, 'Fig. 8.3 listing (Min, as printed)',
            lambda: interpreter.load_program(interpreter.book_listing('min')), 123, None,
            'TAOTP Fig. 8.3 (3V + 3B + 39)', lambda: [([6, 2, 0, 12, 18, 7, 12, 12], [0])],
            note='one decimal: wrong on about a third of inputs; the example is the book\'s'),
    Program('listing-min-2dp', 8, 'Fig. 8.3 program with two decimals',
            lambda: interpreter.load_program(interpreter.book_listing('min_2dp')), 123, None,
            'TAOTP Fig. 8.3 (3V + 3B + 39)', _min_examples(20),
            note='the printed weights to two decimals: right on every input tested'),
    Program('coupling-adder-10x10', 9, 'Multi-operand adder, Pre-LN, 10 x 10',
            lambda: coupling.build_multi_operand_adder(10, 10, norm=True).params,
            examples=_adder_examples,
            note='Cho et al. 2025 give no parameter count'),
    Program('selective-123-T64', 10, 'Selective induction, Pre-LN, lags {1,2,3}, T = 64',
            lambda: selective.book_params(_P3, [1, 2, 3], 64), examples=_selective_examples,
            note="D'Angelo et al. give no parameter count; a predictor, checked in Chapter 10"),
]

# The Records chapter (12): programs that beat a construction of the preprint.  They have no
# source count of their own; facts['book'] names the catalogue row they are measured against.
PROGRAMS += [
    Program('sort-65536', 12, 'Sort, V = 65,536, one layer (record)',
            lambda: sort.build_large_vocab_sort_transformer(65_536, 128),
            examples=_large_sort_examples, note="the book's Sort is exact up to 28 numbers",
            facts={'book': 'sort-28'}),
    Program('sort-28-compact', 12, 'Sort, n = 28, d_model 3 (record)',
            lambda: sort.build_large_vocab_sort_transformer(28, 100), examples=_sort_examples,
            facts={'book': 'sort-28'}),
    Program('lookup-universal-10', 12, 'Lookup Table, every table, 10 entries (record)',
            lambda: _universal_lookup(10), examples=_lookup_examples(10),
            facts={'book': 'lookup-10'}),
    Program('lookup-universal-100', 12, 'Lookup Table, every table, 100 entries (record)',
            lambda: _universal_lookup(100), examples=_lookup_examples(100),
            facts={'book': 'lookup-100'}),
    Program('lookup-universal-1000', 12, 'Lookup Table, every table, 1,000 entries (record)',
            lambda: _universal_lookup(1000), examples=_lookup_examples(1000),
            facts={'book': 'lookup-1000-untrained'}),
    Program('mod-1-digit-attention', 12, 'Addition mod 10, one digit, attention only (6.12)',
            addition.build_attention_only_mod_transformer, examples=_single_digit_examples,
            note='answers puzzle 6.12: no MLP, 5 heads whose reading depends on the digit',
            facts={'book': 'mod-1-digit'}),
]
PROGRAMS += [
    Program('compact-addition-3', 12, 'Decimal addition, 3 digits, 39 n + 1182 (record)',
            lambda: addition.build_compact_addition_transformer(3),
            examples=_compact_addition_examples(3),
            note='carries found by attention: 4 layers, size linear in the digits',
            facts={'book': 'addition-3'}),
    Program('compact-addition-40', 12, 'Decimal addition, 40 digits (record)',
            lambda: addition.build_compact_addition_transformer(40),
            examples=_compact_addition_examples(40),
            note="the book's adder would need about 3.7e43 parameters at 40 digits",
            facts={'book_total': addition.book_addition_size(40)}),
]



def _stored_sparse_sort():
    """The sparsest Sort at 28 the Records chapter's search found (``records_sort.json``).

    The search itself (moves that change no score, from the compact record) runs in
    ``tests/test_large_vocab_sort.py``, which also checks that it finds this program.
    """
    import json
    from pathlib import Path
    stored = json.loads((Path(__file__).parent / 'data' / 'records_sort.json').read_text())
    arrays = {key: np.array(value) for key, value in stored['arrays'].items()}
    params = base_params(len(arrays['tok_emb']), 100, 3)
    params['tok_emb'] = params['out_emb'] = arrays['tok_emb']
    layer = base_layer(1, 3, 0, 3)
    for key in ('Q', 'K', 'V', 'P'):
        layer[key] = arrays[key][None]
    params['layers'] = [layer]
    return params


def _adderboard_examples():
    """The board's edges: 0 + 0, max + max, a carry through every column (11 answer digits)."""
    top = adderboard.TOP
    return [(adderboard.prompt(a, b), [int(ch) for ch in f'{a + b:011d}'[::-1]])
            for a, b in ((0, 0), (top, top), (top, 1), (1_234_567_890, 987_654_321))]


PROGRAMS += [
    Program('sort-28-sparse', 12, 'Sort, n = 28, fewest non-zero (record)',
            _stored_sparse_sort, examples=_sort_examples,
            note='the compact record after moves that change no score, found by a search',
            facts={'book': 'sort-28'}),
    Program('adderboard-entry', 12, 'AdderBoard entry, 10-digit addition (record)',
            adderboard.params, examples=_adderboard_examples,
            note='unique parameters by AdderBoard\'s rules: taotp.addition.adderboard.'
                 'unique_parameters',
            facts={'field': 'AdderBoard: 130 (best hand-coded entry in the public snapshot)',
                   'unique': 57}),
]

CATALOGUE = {p.key: p for p in PROGRAMS}
