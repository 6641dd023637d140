"""taotp: the code of *The Art of Transformer Programming*, executable edition.

The top level holds the book's core (Chapter 1) and every program builder::

    import taotp
    params = taotp.base_params(vocab_size=11, block_size=13, d_model=3)
    taotp.decode([0], params, max_steps=5)

The package reads like the book's table of contents:

* the core, Chapter 1: ``model`` (the one forward pass), ``params`` (the
  format, counts, validation), ``decoding`` (every way to run a program),
  ``trace`` (look inside a run), ``reference`` (an independent loop version),
  ``residual`` (named residual layouts), ``blocks`` (layer-norm-fixed pieces),
  ``verify`` (checking programs against references), ``corpus`` (text data);
* one module or subpackage per chapter: ``hello_world``, ``lookup``,
  ``search``, ``sort``, ``addition``, ``encodings``, ``interpreter``,
  ``coupling`` and ``selective``;
* ``chapters`` (the list of chapters), ``programs`` (the catalogue of every
  program with the sources' numbers),
  ``plot`` and ``widgets`` (figures; they load matplotlib when first used) and
  ``exercises`` (the puzzle checkers).

Chapter helpers that are not builders live in their chapter's namespace
(``taotp.sort.stretch``, ``taotp.addition.spike``, ...).
"""
import importlib

from .model import layer_norm, norm, rms_norm, self_attn, softmax, transformer_layer
from .params import (HumanReadableDict, ParamsError, Problem, as_dtype, base_layer, base_params,
                     block_size, config, count_non0_params, count_params, is_tied,
                     param_problems, params_difference, params_equal, random_params,
                     validate_params)
from .decoding import (KVCache, decode, decode_batch, decode_variant, last_token_argmax,
                       teacher_forced_argmax, transformer, transformer_batch,
                       transformer_variant)
from .trace import Trace, residual_stream, trace
from .residual import Layout
from .blocks import (onehot, padding_block, pos_3d_enc_rotation_matrix, pos_enc_3d,
                     pos_enc_3d_array, shift_matrix)
from .verify import Report, first_failure, tolerated_exponents, verify, verify_batch

from . import hello_world, lookup, search, sort, addition, encodings, interpreter  # noqa: E402
from . import coupling, selective  # noqa: E402

from .hello_world import build_hello_world_simpleformer, build_hello_world_transformer
from .lookup import build_lookup_transformer, build_untied_transformer
from .search import build_search_transformer, random_search_inputs
from .sort import build_max_transformer, build_min_transformer, build_sort_transformer
from .addition import (build_decimal_addition_transformer, build_MLP,
                       build_multi_digit_mod_transformer, build_single_digit_mod_transformer)
from .encodings import (distinguishability, hamming_embedding, og_embedding, padding_dimension,
                        rotation_encoding)
from .interpreter import ProgramError, compile_TAOTP, dump_program, load_program
from .sort import build_large_vocab_sort_transformer            # the Records chapter (12)
from .lookup import build_universal_lookup_transformer
from .addition import build_attention_only_mod_transformer
from .addition import build_compact_addition_transformer

__version__ = '0.1.0'

_LAZY = ('plot', 'widgets', 'programs', 'chapters', 'exercises', 'reference', 'trained',
         'train', 'export')   # the training extra: PyTorch loads only when they are used


def __getattr__(name):
    """Load the figure, catalogue and checker modules on first use (matplotlib stays unloaded)."""
    if name in _LAZY:
        return importlib.import_module(f'.{name}', __name__)
    raise AttributeError(f"module 'taotp' has no attribute {name!r}")


__all__ = [
    # Chapter 1: the model, the params format, running and inspecting programs
    'transformer', 'transformer_batch', 'transformer_variant', 'decode', 'decode_batch',
    'decode_variant', 'KVCache', 'last_token_argmax', 'teacher_forced_argmax', 'trace', 'Trace',
    'residual_stream', 'layer_norm', 'rms_norm', 'norm', 'softmax', 'self_attn',
    'transformer_layer', 'base_params', 'base_layer', 'random_params', 'count_params',
    'count_non0_params', 'config', 'block_size', 'is_tied', 'validate_params', 'param_problems',
    'ParamsError', 'Problem', 'params_equal', 'params_difference', 'as_dtype',
    'HumanReadableDict', 'Layout', 'verify', 'verify_batch', 'Report', 'first_failure',
    'tolerated_exponents',
    # blocks shared by several chapters
    'pos_enc_3d', 'pos_enc_3d_array', 'pos_3d_enc_rotation_matrix', 'shift_matrix',
    'padding_block', 'onehot',
    # the programs of chapters 2-8
    'build_hello_world_simpleformer', 'build_hello_world_transformer',
    'build_untied_transformer', 'build_lookup_transformer', 'build_search_transformer',
    'random_search_inputs', 'build_min_transformer', 'build_max_transformer',
    'build_sort_transformer', 'build_MLP', 'build_single_digit_mod_transformer',
    'build_multi_digit_mod_transformer', 'build_decimal_addition_transformer',
    'og_embedding', 'rotation_encoding', 'distinguishability', 'padding_dimension',
    'hamming_embedding', 'load_program', 'dump_program', 'compile_TAOTP', 'ProgramError',
    # the Records chapter (12)
    'build_large_vocab_sort_transformer', 'build_universal_lookup_transformer',
    'build_attention_only_mod_transformer', 'build_compact_addition_transformer',
    # chapter modules
    'hello_world', 'lookup', 'search', 'sort', 'addition', 'encodings', 'interpreter',
    'coupling', 'selective',
]
