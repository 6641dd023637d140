"""Chapter 5: Min, Max and Sort with one attention-only layer and no positions.

* ``minmax``: Min and Max on the upper half of the layer-norm circle (Fig. 5.2);
* ``sorting``: powerpoints (points whose gaps halve) and Sort built on them (Figs. 5.3-5.5);
* ``limits``: seeded inputs and the error counts that locate where each breaks;
* ``large_vocab``: the Records chapter's Sort for any vocabulary (bits) and in 3 dims (compact);
* ``figures``: the chapter's pictures, one ``draw_*(fig, ...)`` each.

All programs here are plain float64 arrays (NumPy's default; the book's text
says "fp32").  ``taotp.params.as_dtype(params, np.float32)`` gives a float32
copy that the forward pass keeps in float32, which is how the float32 limits
of the chapter are measured.

The numbers the preprint states about these programs live with them in
``taotp.programs.CATALOGUE`` (``source_total``, ``source_non0`` and ``facts``).
"""
from .minmax import (MIN_LAYOUT, build_max_transformer, build_min_transformer, max_so_far,
                     min_angles, min_so_far)
from .sorting import (SORT_LAYOUT, build_sort_transformer, nextpoint, powerpoints,
                          sort_reference, stretch)
from .limits import min_errors, random_min_inputs, random_sort_inputs, sort_errors
from .figures import draw_powerpoints, draw_sort_run
from .large_vocab import (COMPACT_MAX, balanced_codes, bits_sign_errors, code_length, code_ranks,
                          build_bits_sort_transformer, build_compact_sort_transformer,
                          build_large_vocab_sort_transformer, large_vocab_sort_inputs,
                          compact_sort_certificate, large_vocab_sort_size, sort_failures)


__all__ = ['MIN_LAYOUT', 'SORT_LAYOUT', 'build_min_transformer',
           'build_max_transformer', 'build_sort_transformer', 'min_angles', 'min_so_far',
           'max_so_far', 'stretch', 'powerpoints', 'nextpoint', 'sort_reference',
           'random_sort_inputs', 'random_min_inputs', 'sort_errors', 'min_errors',
           'draw_powerpoints', 'draw_sort_run',
           'COMPACT_MAX', 'code_length', 'balanced_codes', 'code_ranks', 'bits_sign_errors',
           'build_bits_sort_transformer', 'build_compact_sort_transformer',
           'build_large_vocab_sort_transformer', 'large_vocab_sort_inputs', 'sort_failures',
           'large_vocab_sort_size', 'compact_sort_certificate']
