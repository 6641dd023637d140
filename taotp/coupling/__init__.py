"""Chapter 9: scratchpads, multi-level Position Coupling and a 1-layer 4-head adder.

Cho et al. (2025, Theorem 4.1) prove that one layer with four heads adds any
number of operands of any length, given a running-sum scratchpad and
two-level coupled position IDs.  One file per idea:

* ``formats``: the tasks as token sequences with coupled IDs (parity,
  addition with its scratchpad, the no-scratchpad baseline, multiplication);
* ``positions``: hypercube position codes, the sizes they imply, the
  attention scale ``lambda_bound``;
* ``digit_mlp``: the trapezoids, the carry identity and the 83 hidden units;
* ``adder``: the construction in both variants (the paper's norm-free model
  and a PreLN port), ``build_adder_params`` and the ``MultiOperandAdder``
  object that ``build_multi_operand_adder`` returns;
* ``figures``: ``draw_*`` functions and two explorers (loaded, with
  matplotlib, on first use).

    >>> adder = build_multi_operand_adder(2, 3)
    >>> ''.join(adder.generate([57, 48, 96])[0])
    '000>750>501>102$'
"""
import importlib

from .formats import (EOS, PARITY_VOCAB, SEP, TOKEN_ID, VOCAB, addition_sequence,
                      baseline_sequence, coupled_ids, keys_for, multiplication_sequence,
                      operand_list, pad_length, parity_positions, parity_sequence,
                      random_offsets, random_operands, read_total, scratchpad_text,
                      theory_pad_length)
from .positions import cube_code, lambda_bound, position_codes, sizes, wrap
from .digit_mlp import OFFSET_G, SIGNS, THRESHOLDS, carry_out, digit_mlp, hidden_units, trapezoid
from .adder import (EOS_ID, HEAD_BLOCKS, HEAD_OUT, HEADS, MultiOperandAdder, adder_census,
                    adder_layout, build_adder_params, build_multi_operand_adder, position_tables)

_FIGURES = ('draw_ids', 'plot_ids', 'draw_trapezoids', 'draw_attention', 'draw_heads',
            'heads_explorer',
            'draw_step', 'step_explorer', 'draw_lambda_sweep', 'draw_growth', 'draw_capacity')


def __getattr__(name):
    """The figure functions, loaded (with matplotlib) on first use."""
    if name in _FIGURES:
        return getattr(importlib.import_module('.figures', __name__), name)
    raise AttributeError(f"module 'taotp.coupling' has no attribute {name!r}")


__all__ = [
    'VOCAB', 'SEP', 'EOS', 'TOKEN_ID', 'PARITY_VOCAB', 'parity_sequence', 'parity_positions',
    'addition_sequence', 'scratchpad_text', 'coupled_ids', 'baseline_sequence',
    'multiplication_sequence', 'pad_length', 'theory_pad_length', 'operand_list',
    'random_offsets', 'random_operands', 'read_total', 'keys_for',
    'cube_code', 'wrap', 'position_codes', 'sizes', 'lambda_bound',
    'THRESHOLDS', 'SIGNS', 'OFFSET_G', 'trapezoid', 'digit_mlp', 'carry_out', 'hidden_units',
    'HEADS', 'HEAD_OUT', 'HEAD_BLOCKS', 'EOS_ID', 'adder_census', 'adder_layout', 'position_tables',
    'build_adder_params', 'MultiOperandAdder', 'build_multi_operand_adder', *_FIGURES,
]
