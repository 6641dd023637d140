"""taotp: the code of *The Art of Transformer Programming*, executable edition.

The book's public names live at the top level::

    import taotp
    params = taotp.base_params(vocab_size=11, block_size=13, d_model=3)
    taotp.decode([0], params, max_steps=5)

Modules: ``model`` (the forward pass), ``params`` (the params format, counts,
validation), ``decoding`` (decode in all its variants), ``trace`` (look inside
a run), ``residual`` (named residual layouts), ``blocks`` (layer-norm-fixed
building blocks), ``plot``, ``verify``, one module per chapter, and
``exercises`` (the puzzle checkers).
"""
from .model import layer_norm, norm, rms_norm, self_attn, softmax, transformer_layer
from .params import (HumanReadableDict, ParamsError, base_layer, base_params, block_size,
                     config, count_non0_params, count_params, is_tied, param_problems,
                     random_params, validate_params)
from .decoding import (KVCache, decode, decode_batch, decode_variant, transformer,
                       transformer_batch, transformer_variant)
from .trace import Trace, residual_stream, trace
from .residual import Layout
from .blocks import (onehot, padding_block, pos_3d_enc_rotation_matrix, pos_enc_3d,
                     pos_enc_3d_array, shift_matrix)
from .verify import Report, verify, verify_batch
from .scramble import scramble_transformer
from . import plot, reference

# chapter modules (each exports its builders through __all__)
from .hello_world import *   # noqa: F401,F403  Ch. 2
from .lookup import *        # noqa: F401,F403  Ch. 3
from .search import *        # noqa: F401,F403  Ch. 4
from .sort import *          # noqa: F401,F403  Ch. 5
from .addition import *      # noqa: F401,F403  Ch. 6
from .encodings import *     # noqa: F401,F403  Ch. 7
from .interpreter import *   # noqa: F401,F403  Ch. 8
from . import coupling, selective  # noqa: F401  Ch. 9 and 10 (used as modules)

__version__ = '0.1.0'
