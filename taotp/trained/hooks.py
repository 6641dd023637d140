"""A program's attention read through TransformerLens hook points (needs the training extra).

    patterns = tl_patterns(params, tokens)     # per layer (heads, n, n), from hook_pattern
    book = [a for a in taotp.trace(tokens, params).attn]
    max(np.abs(p - b).max() for p, b in zip(patterns, book))    # 3e-10 on Ch. 10's port

``taotp.export.to_hooked_transformer`` pads every layer to the widest layer's
head count; ``tl_patterns`` drops the padding heads.
"""
import numpy as np

from ..params import config


def tl_patterns(params, tokens):
    """Per layer, ``blocks.{l}.attn.hook_pattern`` of the exported model on ``tokens`` (NumPy)."""
    from ..export import to_hooked_transformer
    import torch
    model = to_hooked_transformer(params)
    _, cache = model.run_with_cache(torch.tensor(np.asarray(tokens)[None]))
    heads = config(params)['n_heads']
    return [cache[f'blocks.{l}.attn.hook_pattern'][0, :h].detach().numpy()
            for l, h in enumerate(heads)]


def hook_names(params, layer=0):
    """The hook points of one block of the exported model (names only)."""
    from ..export import to_hooked_transformer
    model = to_hooked_transformer(params)
    return sorted(name for name in model.hook_dict if name.startswith(f'blocks.{layer}.'))
