# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Index of programs
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/taotp/taotp-book/blob/main/book/programs.ipynb)
#
# Every program the book builds, rebuilt on this page from the package, with its shape
# and its size counted both ways: all parameters (`count_params`) and the non-zero ones
# (`count_non0_params`). Where a source states a number it is printed beside ours; a
# dash means the source gives none. The chapters verify each program; this page only
# measures them, and it also answers puzzle 1.9 ("place your bets").

# %% tags=["hide-input"]
# On Colab, install the book's package first; anywhere else this does nothing.
import sys, subprocess
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q',
                    'taotp @ git+https://github.com/taotp/taotp-book'], check=True)
import numpy as np
import taotp


# %% [markdown]
# A few programs need choices the sources leave open. The lookup tables use seeded random
# tables of the book's sizes (vocabulary 10, block 5, keys of 5 tokens); the 1,000-entry
# table is built here with its embeddings left at their seeded starting point (its
# parameter *count* does not depend on training, and Chapter 3 shows the trained one
# reaching 100%), so its non-zero count is that of the initial weights. The multi-operand
# adder is the Pre-LN port sized for up to 10 operands of up to 10 digits; the selective
# induction head is the Pre-LN port for lags {1, 2, 3} over 3 symbols and 64 positions.

# %%
def lookup(n_entries, tok_dims, iters=5000):
    ks, vs = taotp.random_lookup_table(n_entries, key_len=5, vocab_size=10,
                                       rng=np.random.default_rng(0))
    return taotp.build_lookup_transformer(ks, vs, vocab_size=10, block_size=5,
                                          tok_dims=tok_dims, optimization_iters=iters,
                                          rng=np.random.default_rng(1))

P3 = taotp.selective.transition_matrix(3, np.random.default_rng(0))
PROGRAMS = [  # (chapter, program, builder, book total, book non-zero)
    (2, 'Hello World (message tokenizer)', lambda: taotp.build_hello_world_transformer()[0], 72, None),
    (2, 'Hello World (ASCII tokenizer)',
     lambda: taotp.build_hello_world_transformer(tokenizer='ascii')[0], 807, None),
    (3, 'Lookup Table, 10 entries', lambda: lookup(10, 5), 1_408, 283),
    (3, 'Lookup Table, 100 entries', lambda: lookup(100, 10), 3_588, 733),
    (3, 'Lookup Table, 1,000 entries (untrained)', lambda: lookup(1000, 30, iters=0), 22_308, 5_033),
    (4, 'Search, vocab 10, prefix 3', lambda: taotp.build_search_transformer(10, 100, 3), 4_800, 535),
    (4, 'Search, vocab 1,000, prefix 10',
     lambda: taotp.build_search_transformer(1000, 100, 10), 123_486, 30_734),
    (5, 'Min, n = 10', lambda: taotp.build_min_transformer(10, 10), 6 * 10 + 39, None),
    (5, 'Max, n = 10', lambda: taotp.build_max_transformer(10, 10), None, None),
    (5, 'Sort, n = 28', lambda: taotp.build_sort_transformer(28, 100), None, 184),
    (6, 'Addition mod 10, one digit', taotp.build_single_digit_mod_transformer, 629, 379),
    (6, 'Addition mod 10, 1 digit (multi-digit builder)',
     lambda: taotp.build_multi_digit_mod_transformer(1), 1_226, 432),
    (6, 'Addition mod 10, 2 digits', lambda: taotp.build_multi_digit_mod_transformer(2), 9_508, 3_646),
    (6, 'Addition mod 10, 3 digits', lambda: taotp.build_multi_digit_mod_transformer(3), 90_690, 35_542),
    (6, 'Decimal addition, 1 digit', lambda: taotp.build_decimal_addition_transformer(1), 2_088, 737),
    (6, 'Decimal addition, 2 digits', lambda: taotp.build_decimal_addition_transformer(2), 27_432, 10_440),
    (6, 'Decimal addition, 3 digits',
     lambda: taotp.build_decimal_addition_transformer(3), 360_576, 139_267),
    (8, 'Fig. 8.2 listing (Hello World, as printed)',
     lambda: taotp.load_program(taotp.book_listing('hello_world')), 72, None),
    (8, 'Fig. 8.3 listing (Min, as printed)', lambda: taotp.load_program(taotp.book_listing('min')), 123, None),
    (9, 'Multi-operand adder, Pre-LN, 10 x 10',
     lambda: taotp.coupling.build_multi_operand_adder(10, 10, norm=True).params, None, None),
    (10, 'Selective induction, Pre-LN, lags {1,2,3}, T = 64',
     lambda: taotp.selective.book_params(P3, [1, 2, 3], 64), None, None),
]

# %%
rows = []
for chapter, name, build, book_total, book_non0 in PROGRAMS:
    params = build()
    shape = taotp.config(params)
    rows.append(dict(chapter=chapter, name=name, layers=shape['n_layers'],
                     heads=sum(shape['n_heads']), d_model=shape['d_model'],
                     mlp=any(d > 0 for d in shape['d_ff']),
                     total=taotp.count_params(params)['n_params'],
                     non0=taotp.count_non0_params(params)['n_params'],
                     book_total=book_total, book_non0=book_non0))

def show(n):
    return '-' if n is None else f'{n:,}'

print(f'{"ch":>2}  {"program":<50} {"L":>2} {"H":>2} {"d":>4} {"MLP":>3} '
      f'{"total":>10} {"book":>9} {"non-zero":>9} {"book":>8}')
for r in rows:
    print(f'{r["chapter"]:>2}  {r["name"]:<50} {r["layers"]:>2} {r["heads"]:>2} {r["d_model"]:>4} '
          f'{"yes" if r["mlp"] else "-":>3} {show(r["total"]):>10} {show(r["book_total"]):>9} '
          f'{show(r["non0"]):>9} {show(r["book_non0"]):>8}')

# %% [markdown]
# (L: layers, H: attention heads over all layers, d: `d_model`. The book's non-zero counts
# differ from ours by a few where its rotation matrices come from a singularly
# conditioned solve, and Sort's 184 is the book's 166 in `tok_emb` plus 18 elsewhere;
# each chapter explains its own case.)
#
# Every total the book states is reproduced exactly:

# %%
mismatches = [r['name'] for r in rows if r['book_total'] is not None and r['total'] != r['book_total']]
print('totals that differ from the book:', mismatches or 'none')
assert not mismatches

# %% [markdown]
# ## Sizes at a glance

# %%
from matplotlib.figure import Figure
fig = Figure(figsize=(8, 5.5), layout='constrained')
ax = fig.subplots()
y = np.arange(len(rows))[::-1]
ax.barh(y + 0.2, [r['total'] for r in rows], height=0.4, label='all parameters')
ax.barh(y - 0.2, [max(r['non0'], 1) for r in rows], height=0.4, label='non-zero parameters')
ax.set_yticks(y, [f'{r["chapter"]}: {r["name"]}' for r in rows], fontsize=7)
ax.set_xscale('log')
ax.set_xlabel('parameters (log scale)')
ax.legend(loc='lower right', fontsize=8)
ax.set_title('Every program in the book, by size', fontsize=10)
fig

# %% [markdown]
# ## Puzzle 1.9: how did your guesses do?

# %%
layers = np.array([r['layers'] for r in rows])
widths = np.array([r['d_model'] for r in rows])
zero_share = 1 - np.array([r['non0'] for r in rows]) / np.array([r['total'] for r in rows])
print(f'layers: mean {layers.mean():.1f}, most programs have {np.bincount(layers).argmax()}')
print(f'd_model: median {np.median(widths):.0f}, from {widths.min()} to {widths.max()}')
print(f'parameters: median {np.median([r["total"] for r in rows]):,.0f}')
print(f'share of zero parameters: median {np.median(zero_share):.0%}, '
      f'from {zero_share.min():.0%} to {zero_share.max():.0%}')
uses_attention = sum(r['heads'] > 0 for r in rows)
uses_mlp = sum(r['mlp'] for r in rows)
print(f'programs using attention: {uses_attention} of {len(rows)}; using an MLP: {uses_mlp} of {len(rows)}')
