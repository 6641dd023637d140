"""Chapter 8: the TAOTP language, a text format for hand-written programs.

A program is one literal with the shape of the params dict of Chapter 1::

    {
        "tok_emb": [[1.2, -1.2, 0.0], ...],      # (vocab_size, d_model)
        "pos_emb": [[...], ...],                 # (block_size, d_model)
        "layers": [
            {"Q": [[[...]]], "K": ..., "V": ..., "P": ..., "M1": ..., "b1": ...,
             "M2": ..., "b2": ..., "ln1": {"gamma": 1.0, "beta": 0.0}, "ln2": ...}
        ],
        "lnf": {"gamma": 1.0, "beta": 0.0}
    }

One file per step of reading and writing it:

* ``parse``: text -> tree of dicts, lists and numbers, never running any code;
* ``build``: tree -> params dict (defaults, compact forms), every problem
  named by its line (the rules themselves are ``taotp.params.param_problems``);
* ``load``: ``load_program(text)`` and ``read_program(path)``, the two steps
  together (``compile_TAOTP`` is the book's name for ``load_program``);
* ``dump``: ``dump_program(params)``, params -> text, exact to the bit;
* ``listings``: the book's printed listings (``book_listing``);
* ``cli``: ``python -m taotp run|info PROGRAM``.

>>> text = '{"tok_emb": [[1, -1], [-1, 1]], "out_emb": [[-1, 1], [1, -1]], "block_size": 4}'
>>> taotp.decode([0], load_program(text), max_steps=3).tolist()   # a flip-flop
[0, 1, 0, 1]
"""
from .errors import ProgramError
from .build import MAX_BLOCK_CELLS, TOP_FIELDS
from .dump import dump_program
from .listings import BOOK_LISTINGS, FIG_8_2_SYMBOLS, book_listing
from .load import compile_TAOTP, load_program, read_program
from .parse import MAX_DEPTH

__all__ = ['ProgramError', 'load_program', 'dump_program', 'compile_TAOTP', 'read_program',
           'book_listing', 'BOOK_LISTINGS', 'FIG_8_2_SYMBOLS', 'TOP_FIELDS', 'MAX_DEPTH', 'MAX_BLOCK_CELLS']
