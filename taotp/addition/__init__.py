"""Chapter 6, Decimal Addition: attention gathers the digits, the MLP looks up the answer.

* ``data``: the token format, prompts, plain-Python references and error counts;
* ``additive``: why attention alone cannot add (the best table ``x_i + y_j``);
* ``mlp``: the spike, ``build_MLP`` (Theorem 6.1) and fitting a lookup MLP to a program;
* ``programs``: the single-digit, multi-digit mod-10 and decimal adders (Figs. 6.2-6.4);
* ``figures``: the chapter's pictures, one ``draw_*(fig, ...)`` each;
* ``attention_only``: puzzle 6.12, an attention-only layer that adds mod 10 (Records).

The book's ``build_MLP`` is the listing of the preprint's Fig. 6.1 (the author's
notebook, https://yanivle.github.io/taotp.ipynb, has it too): three ReLUs per
point.  Ours is written afresh from the spike lemma, builds the same units in
another order, and reproduces every parameter count of the chapter.

The numbers the preprint states about these programs live with them in
``taotp.programs.CATALOGUE`` (``source_total``, ``source_non0`` and ``facts``).
"""
from .data import (EQUALS, PLUS, SYMBOLS, addition_errors, addition_prompts, addition_reference,
                   addition_text, answer_digits, mod_addition_reference)
from .additive import additive_fit
from .mlp import (OUT_SCALE, MLPWeights, build_MLP, fit_lookup_mlp, min_sep, mlp_apply,
                  mlp_inputs, mlp_keys, spike)
from .programs import (HARDEN, VALUE_SCALE, build_decimal_addition_transformer,
                       build_multi_digit_mod_transformer, build_single_digit_mod_transformer,
                       digit_embedding)
from .figures import (draw_adder_heads, draw_additive_tables, draw_build_mlp, draw_keys,
                      draw_spike)
from .attention_only import (build_attention_only_mod_transformer, four_prompt_cycle, head_pairs,
                             reading_by_position, unscaled_logits)
from .compact import (COMPACT_ADDITION_HOW, COMPACT_ADDITION_VERIFIED, book_addition_size,
                      build_compact_addition_transformer, carry_chain_pairs, carry_plan,
                      compact_addition_internals, compact_addition_record, compact_addition_size,
                      compact_addition_table, long_addition_errors, long_addition_prompts,
                      random_pairs)


__all__ = ['PLUS', 'EQUALS', 'SYMBOLS', 'HARDEN', 'OUT_SCALE', 'VALUE_SCALE',
           'addition_text', 'answer_digits', 'addition_prompts', 'addition_reference',
           'mod_addition_reference', 'addition_errors', 'additive_fit', 'spike', 'min_sep',
           'MLPWeights', 'build_MLP', 'mlp_apply', 'mlp_keys', 'mlp_inputs', 'fit_lookup_mlp',
           'digit_embedding', 'build_single_digit_mod_transformer',
           'build_multi_digit_mod_transformer', 'build_decimal_addition_transformer',
           'draw_additive_tables', 'draw_spike', 'draw_build_mlp', 'draw_keys',
           'draw_adder_heads']
__all__ += ['build_attention_only_mod_transformer', 'head_pairs',   # puzzle 6.12 (Records)
            'reading_by_position', 'unscaled_logits', 'four_prompt_cycle']
__all__ += ['build_compact_addition_transformer', 'compact_addition_size',   # linear-size record
            'book_addition_size', 'compact_addition_table', 'compact_addition_record',
            'compact_addition_internals', 'carry_plan', 'carry_chain_pairs', 'random_pairs',
            'long_addition_prompts', 'long_addition_errors', 'COMPACT_ADDITION_HOW',
            'COMPACT_ADDITION_VERIFIED']
