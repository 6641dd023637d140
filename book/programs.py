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
#     display_name: Python 3 (ipykernel)
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
import os, subprocess, sys
if 'google.colab' in sys.modules:
    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(
        'TAOTP_INSTALL', 'taotp @ git+https://github.com/taotp/taotp-book')], check=True)
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
#
# The table of programs, with the sources' numbers, lives in one place,
# `taotp.programs.CATALOGUE`; this page, the chapters and the tests all read it.

# %%
from taotp.programs import PROGRAMS

# %%
rows = []
for program in PROGRAMS:
    params = program.build()
    shape = taotp.config(params)
    rows.append(dict(chapter=program.chapter, name=program.title, layers=shape['n_layers'],
                     heads=sum(shape['n_heads']), d_model=shape['d_model'],
                     mlp=any(d > 0 for d in shape['d_ff']),
                     total=taotp.count_params(params)['n_params'],
                     non0=taotp.count_non0_params(params)['n_params'],
                     book_total=program.source_total, book_non0=program.source_non0))

# %% tags=["hide-input"]
import re

def show(n):
    return '-' if n is None else f'{n:,}'

def name_lines(name, width):
    """A name as lines of at most width characters, broken after a comma or before a '('."""
    lines = ['']
    for piece in re.split(r'(?<=, )|(?= \()', name):
        if lines[-1] and len((lines[-1] + piece).rstrip()) > width:
            lines.append('  ' + piece.lstrip())
        else:
            lines[-1] += piece
    return [line.rstrip() for line in lines]

# one table, shown as a table in Jupyter, Colab and the book (Markdown) and as aligned
# text where only plain text is shown: at most 88 characters a line (the page's text
# column), so a long name continues on the next line
head = ['ch', 'program', 'L', 'H', 'd', 'MLP', 'total', 'source', 'non-zero', 'source']
cells = [[str(r['chapter']), r['name'], str(r['layers']), str(r['heads']), str(r['d_model']),
          'yes' if r['mlp'] else '-', show(r['total']), show(r['book_total']),
          show(r['non0']), show(r['book_non0'])] for r in rows]
markdown = '\n'.join(['| ' + ' | '.join(head) + ' |',
                      '|' + '|'.join(['---:', ':---'] + ['---:'] * 8) + '|']
                     + ['| ' + ' | '.join(c) + ' |' for c in cells])
widths = [max(len(x) for x in column) for column in zip(head, *cells)]
# one space between columns, two after the name, which gets at most what is left of 88
widths[1] = min(widths[1], 88 - (sum(widths) - widths[1]) - len(widths))
lines = []
for line in [head] + cells:
    first, *more = name_lines(line[1], widths[1])
    lines.append(' '.join(x.ljust(w + 1) if i == 1 else x.rjust(w)
                          for i, (x, w) in enumerate(zip([line[0], first] + line[2:], widths))))
    lines += [' ' * (widths[0] + 1) + name for name in more]
plain = '\n'.join(lines)
from IPython.display import display
display({"text/markdown": markdown, "text/plain": plain}, raw=True)

# %% [markdown]
# (L: layers, H: attention heads over all layers, d: `d_model`; *source*: the number the
# chapter's source states. The book's non-zero counts
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
fig = taotp.plot.figure((8, 5.5))
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
