"""Looking inside a run: attention weights and residual streams of every layer.

``trace(tokens, params)`` runs the same forward pass as ``transformer`` and keeps
what plots, checkers and MLP fitting need::

    t = taotp.trace([0, 3, 1], params)
    t.scores[0]       # (n_heads, n, n) its scores before the softmax (-inf: masked)
    t.attn[0]         # (n_heads, n, n) weights of layer 0
    t.resid_pre[0]    # (n, d_model) residual stream entering layer 0
    t.resid_mid[0]    # ... after its attention sub-layer
    t.mlp_in[0]       # ... normalised, as its MLP reads it
    t.resid_post[0]   # ... after its MLP (= resid_pre[1])
    t.final           # (n, d_model) before the final layer norm
    t.logits          # (n, vocab_size)
"""
from dataclasses import dataclass

import numpy as np

from .decoding import check_positions
from .model import forward
from .params import as_arrays, check_tokens, check_variant, validate_params


@dataclass
class Trace:
    tokens: np.ndarray
    logits: np.ndarray
    attn: list
    resid_pre: list
    resid_mid: list
    mlp_in: list
    resid_post: list
    final: np.ndarray
    scores: list       # per layer (..., n_heads, n, n): pre-softmax scores, -inf where masked

    @property
    def attn_out(self):
        """What each attention sub-layer added to the residual stream."""
        return [mid - pre for pre, mid in zip(self.resid_pre, self.resid_mid)]

    @property
    def mlp_out(self):
        """What each MLP sub-layer added to the residual stream."""
        return [post - mid for mid, post in zip(self.resid_mid, self.resid_post)]


def trace(tokens, params, positions=None, norm='layer', post_ln=False):
    """Run ``params`` on ``tokens`` ((n,), or a batch (..., n)) and record every intermediate."""
    params = as_arrays(validate_params(params))
    variant = check_variant(norm, post_ln, 'trace')
    tokens = check_tokens(tokens, params, window=positions is not None)
    positions = check_positions(positions, params, tokens.shape[-1])
    record = []
    logits = forward(tokens, positions=positions, record=record, **variant, **params)
    layers, final = record[:-1], record[-1]['final']
    return Trace(tokens=tokens, logits=logits, final=final,
                 **{key: [r[key] for r in layers]
                    for key in ('scores', 'attn', 'resid_pre', 'resid_mid', 'mlp_in',
                                'resid_post')})


def residual_stream(tokens, params, positions=None):
    """The hidden states right before the final layer norm, shape (n, d_model)."""
    return trace(tokens, params, positions).final
