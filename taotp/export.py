"""Any program of the book as a TransformerLens ``HookedTransformer``, and back.

TransformerLens (``transformer_lens``, version 3) is the library much of the
interpretability field inspects models with: every activation has a named hook
point (``blocks.0.attn.hook_pattern``, ``blocks.0.hook_resid_post``, ...).
Both functions need the optional training extra (``pip install "taotp[train]"``);
this module imports PyTorch only when one of them is called.

* ``to_hooked_transformer(params)``: a float64 ``HookedTransformer`` computing
  the same logits as ``taotp.transformer(tokens, **params)``.  The book's
  layer norm divides by the standard deviation *plus* 1e-10, TransformerLens
  by ``sqrt(variance + eps)``; with TransformerLens' own ``eps = 1e-5`` the
  hand-built programs, whose margins are tiny, change their answers.  So the
  exported model's layer norms are ``BookLayerNorm`` (a subclass of
  TransformerLens' ``LayerNorm`` with the book's formula and the same hook
  points), and its attention patterns pass through ``BookPattern`` (the
  ``hook_pattern`` hook point, which also applies the book's softmax epsilon:
  ``p / (1 + 1e-10 max p)`` is exactly ``exp(s - max) / (sum + 1e-10)``).
  Layers with fewer heads, a smaller ``d_head`` or a narrower MLP are padded
  with zeros (the score scale difference is folded into ``W_Q``); tied
  embeddings become ``W_U = tok_emb.T``.
* ``from_hooked_transformer(model)``: the params dict of a ``HookedTransformer``
  of the same architecture (PreLN, learned absolute positions, ReLU MLP or
  attention only, no attention or unembedding biases), e.g. one trained
  with TransformerLens.  Its layer norms become the book's: exact for models
  made by ``to_hooked_transformer``; for TransformerLens' own ``LayerNorm`` the
  ``eps`` inside the square root is dropped (pass ``exact=False``; the logits
  then move by about ``eps / (2 variance)``, relative).

What cannot be exported raises ``ExportError`` naming why: several position
tables or custom position ids (Chapter 9: TransformerLens adds one table
indexed 0..n-1), PostLN, RMSNorm and the affine-only norm (``norm='none'``).

Generating.  The exported model is a ``BookHookedTransformer``, a subclass of
``HookedTransformer`` whose only change is to ``generate``: greedy
``model.generate(torch.tensor([prompt]), max_new_tokens=n, do_sample=False,
stop_at_eos=False)`` returns ``taotp.decode(prompt, params, max_steps=n)``'s
tokens, with the key/value cache (``use_past_kv_cache=True``, the default) or
without.  A run that needs more positions than the program has (the prompt
plus the ``n - 1`` tokens fed back, past ``block_size``: TransformerLens has no
window and would stop with a shape error) raises ``ExportError`` before
generating anything, as ``taotp.decode`` refuses it; with ``stop_at_eos=True``
it raises when the sequence outgrows the table.  A
0-layer program (Hello World) has no keys or values to cache, and
TransformerLens' cache fails on it (``IndexError``), so it is always run
without the cache, which gives the same tokens.

Why the subclass: TransformerLens 3.x's own cached ``generate`` puts wrong
position embeddings on the new tokens of any model without a tokenizer.  At
step ``i > 0`` it embeds the whole sequence so far (``L`` tokens) with a
position offset equal to the cache length (``L - 1``), so without an attention
mask it reads rows ``L - 1 .. 2L - 2`` of ``W_pos`` and keeps the last: the new
token sits at position ``2L - 2`` instead of ``L - 1`` (a model with a
tokenizer takes another path, through the attention mask).  The tokens change
from the second generated token on, or ``W_pos`` runs out of rows and a shape
error stops the run.  A model that just counts positions shows it (plain
TransformerLens 3.9, no taotp involved)::

    cfg = HookedTransformerConfig(n_layers=1, d_model=16, n_ctx=16, d_head=4,
                                  n_heads=1, d_vocab=17, attn_only=True,
                                  normalization_type=None)
    model = HookedTransformer(cfg)
    with torch.no_grad():
        for weight in model.parameters():
            weight.zero_()
        model.W_pos[:] = torch.eye(16)          # position p ...
        model.W_U[:, 1:] = torch.eye(16)        # ... votes for token p + 1
    for cache in (False, True):
        print(model.generate(torch.tensor([[0, 0, 0]]), max_new_tokens=4,
                             do_sample=False, use_past_kv_cache=cache,
                             stop_at_eos=False, verbose=False)[0].tolist())
    # [0, 0, 0, 3, 4, 5, 6]      without the cache: right
    # [0, 0, 0, 3, 7, 9, 11]     with it: positions 6, 8, 10 instead of 4, 5, 6

``BookHookedTransformer.generate`` runs TransformerLens' own loop and cache
unchanged and only embeds that whole sequence at positions ``0 .. L-1``; the
cached keys and values, the causal mask and the float64 arithmetic were right
already.  Other cached paths need a tokenizer and say so (TransformerLens'
``ValueError: Cannot compute attention mask without a tokenizer``):
``generate_stream`` and ``model(tokens, past_kv_cache=...)``; without the
cache ``generate_stream`` works.

An example (Chapter 5's Sort):

    >>> import torch
    >>> from taotp.export import to_hooked_transformer
    >>> params = taotp.build_sort_transformer(10, 20)
    >>> model = to_hooked_transformer(params)
    >>> tokens = [6, 2, 9, 0]
    >>> ours = taotp.transformer(tokens, **params)
    >>> theirs = model(torch.tensor([tokens]))[0].detach().numpy()
    >>> bool(np.abs(theirs - ours).max() <= 1e-6 * np.abs(ours).max())
    True
    >>> _, cache = model.run_with_cache(torch.tensor([tokens]))
    >>> cache['blocks.0.attn.hook_pattern'].shape         # (batch, heads, query, key)
    torch.Size([1, 1, 4, 4])
    >>> out = model.generate(torch.tensor([tokens]), max_new_tokens=3, do_sample=False,
    ...                      stop_at_eos=False, verbose=False)     # cached, the default
    >>> out[0].tolist() == taotp.decode(tokens, params, max_steps=3).tolist()
    True
"""
import importlib
import inspect
import warnings

import numpy as np

from .model import EPS
from .params import ParamsError, base_layer, base_params, config, validate_params


class ExportError(ValueError):
    """A program (or a TransformerLens model, or a generation run) the other side cannot do."""


def _torch():
    try:
        return importlib.import_module('torch'), importlib.import_module('transformer_lens')
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(f'taotp.export needs {exc.name}, part of the optional training '
                                  f'extra: pip install "taotp[train]"') from None


_CLASSES = {}


def _classes():
    """``BookLayerNorm``, ``BookPattern`` and ``BookHookedTransformer``, defined once
    TransformerLens is loaded."""
    if _CLASSES:
        return _CLASSES['ln'], _CLASSES['pattern'], _CLASSES['model']
    torch, tl = _torch()
    from transformer_lens.components import LayerNorm
    from transformer_lens.hook_points import HookPoint

    class BookLayerNorm(LayerNorm):
        """TransformerLens' LayerNorm with the book's formula: ``(x - mean) / (std + 1e-10)``.

        ``hook_scale`` sees ``std + 1e-10``, ``hook_normalized`` the normalised vector,
        as in the parent class.
        """

        def forward(self, x):
            x = x - x.mean(-1, keepdim=True)
            scale = self.hook_scale(x.pow(2).mean(-1, keepdim=True).sqrt() + EPS)
            return self.hook_normalized(x / scale) * self.w + self.b

    class BookPattern(HookPoint):
        """The ``hook_pattern`` hook point, applying the book's softmax epsilon first.

        TransformerLens computes ``p = softmax(scores)``; the book divides by the sum
        plus 1e-10 after shifting by the maximum, which is ``p / (1 + 1e-10 max(p))``.
        Hooks on ``hook_pattern`` see (and may replace) the corrected pattern.
        """

        def forward(self, x):
            return x / (1 + EPS * x.amax(-1, keepdim=True))

    class BookHookedTransformer(tl.HookedTransformer):
        """A ``HookedTransformer`` whose ``generate`` gives ``taotp.decode``'s tokens.

        Same arguments as ``HookedTransformer.generate``, same loop and cache; see
        the module docstring for the TransformerLens bug this works around and the
        runs it refuses (``ExportError``).
        """

        _whole_sequence = False       # True while generate embeds the sequence so far

        def generate(self, *args, **kwargs):
            call = inspect.signature(tl.HookedTransformer.generate).bind(self, *args, **kwargs)
            call.apply_defaults()
            run = call.arguments
            prompt, steps, n_ctx = run['input'], run['max_new_tokens'], self.cfg.n_ctx
            if isinstance(prompt, torch.Tensor) and prompt.ndim >= 2:
                length = prompt.shape[1]
                needed = length + max(steps, 1) - 1          # the last token is not fed back
                # with stop_at_eos the run may end in time; get_residual refuses it if not
                if needed > n_ctx and (not run['stop_at_eos'] or length > n_ctx):
                    fix = (f'lower max_new_tokens to {n_ctx - length + 1}' if length <= n_ctx
                           else f'shorten the prompt to {n_ctx} tokens or fewer')
                    raise ExportError(
                        f'generate: a prompt of {length} tokens + {steps} new tokens needs '
                        f'{needed} positions but n_ctx (the block_size) is {n_ctx}; '
                        f'TransformerLens has no window: {fix}')
                if steps == 0 and prompt.ndim == 2 and run['return_type'] in ('input', 'tokens'):
                    return prompt.clone()                    # TL's loop fails on 0 steps
            if self.cfg.n_layers == 0:
                run['use_past_kv_cache'] = False             # nothing to cache; TL's cache fails
            self._whole_sequence = True
            try:
                return tl.HookedTransformer.generate(*call.args, **call.kwargs)
            finally:
                self._whole_sequence = False

        def get_residual(self, embed, pos_offset, *args, **kwargs):
            if self._whole_sequence:
                # generate's call: embed holds the whole sequence so far, at positions
                # 0..L-1, whatever the cache holds (TL passes the cache length here)
                if embed.shape[1] > self.cfg.n_ctx:
                    raise ExportError(
                        f'generate: the sequence reached {embed.shape[1]} tokens with no '
                        f'end-of-sequence token but n_ctx (the block_size) is '
                        f'{self.cfg.n_ctx}; TransformerLens has no window: lower '
                        f'max_new_tokens')
                pos_offset = 0
            return super().get_residual(embed, pos_offset, *args, **kwargs)

    _CLASSES.update(ln=BookLayerNorm, pattern=BookPattern, model=BookHookedTransformer)
    return BookLayerNorm, BookPattern, BookHookedTransformer


_CLASS_NAMES = ('BookLayerNorm', 'BookPattern', 'BookHookedTransformer')


def __getattr__(name):
    """``taotp.export.BookHookedTransformer`` etc.: the classes, made on first use."""
    if name in _CLASS_NAMES:
        return dict(zip(_CLASS_NAMES, _classes()))[name]
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def exportable(params, norm='layer', post_ln=False, positions=None):
    """Why ``params`` (run with this variant) cannot be exported, or None if it can."""
    if isinstance(params.get('pos_emb'), (list, tuple)):
        return (f'it has {len(params["pos_emb"])} position tables (multi-level position ids, '
                f'Chapter 9); a HookedTransformer has one table read at positions 0..n-1')
    if positions is not None:
        return ('it runs with custom position ids; a HookedTransformer reads its position '
                'table at 0..n-1 only')
    if post_ln:
        return ("it runs PostLN (post_ln=True); a HookedTransformer's blocks are PreLN "
                "(normalise, then attend or apply the MLP, then add)")
    if norm == 'rms':
        return ("it runs with RMSNorm (norm='rms'); the book adds epsilon to the root mean "
                "square and keeps beta, TransformerLens' RMSNorm does neither")
    if norm == 'none':
        return ("it runs with the affine-only norm (norm='none'); TransformerLens has no "
                "layer that applies gamma and beta without normalising")
    if norm != 'layer':
        return f"norm must be 'layer', 'rms' or 'none'; got {norm!r}"
    return None


def _vector(value, d):
    return np.broadcast_to(np.asarray(value, dtype=np.float64), (d,)).copy()


def to_hooked_transformer(params, norm='layer', post_ln=False, positions=None):
    """A float64 ``transformer_lens.HookedTransformer`` with the program's weights.

    For a 1-D token list ``t``, ``model(torch.tensor([t]))[0]`` equals
    ``taotp.transformer(t, **params)`` up to summation order (the tests measure
    it on every program of the catalogue), and greedy ``model.generate``, cached
    or not, returns ``taotp.decode``'s tokens or raises ``ExportError`` (the
    model is a ``BookHookedTransformer``; see the module docstring).  ``norm``,
    ``post_ln`` and ``positions`` describe how the program is meant to run:
    anything but the book's PreLN layer norm with positions 0..n-1 raises
    ``ExportError``.
    """
    try:
        validate_params(params)
    except ParamsError as exc:
        raise ExportError(f'to_hooked_transformer: not a valid program: {exc}') from None
    why = exportable(params, norm, post_ln, positions)
    if why:
        raise ExportError(f'to_hooked_transformer: this program cannot be exported: {why}')
    torch, tl = _torch()
    BookLayerNorm, BookPattern, BookHookedTransformer = _classes()
    c = config(params)
    d = c['d_model']
    layers = params['layers']
    heads = max(c['n_heads'], default=0) or 1
    widths = [max(np.shape(l['Q'])[2], np.shape(l['V'])[2]) for l in layers]
    d_head = max(widths, default=1) or 1
    d_ff = max(c['d_ff'], default=0)
    attn_only = d_ff == 0 and all(not np.any(np.asarray(l['b2'])) for l in layers)
    cfg = tl.HookedTransformerConfig(
        n_layers=len(layers), d_model=d, n_ctx=c['block_size'], d_head=d_head, n_heads=heads,
        d_mlp=None if attn_only else max(d_ff, 1), d_vocab=c['vocab_size'],
        d_vocab_out=c['vocab_size'], act_fn='relu', normalization_type='LN',
        positional_embedding_type='standard', attn_only=attn_only, default_prepend_bos=False,
        init_weights=False, dtype=torch.float64, device='cpu')
    with warnings.catch_warnings():
        # TransformerLens 3.x deprecates HookedTransformer in favour of 4.x's TransformerBridge,
        # which only wraps Hugging Face checkpoints: the extra pins transformer-lens < 4
        warnings.filterwarnings('ignore', 'HookedTransformer is deprecated', DeprecationWarning)
        model = BookHookedTransformer(cfg)
    for block in model.blocks:
        block.ln1 = BookLayerNorm(cfg)
        if not attn_only:
            block.ln2 = BookLayerNorm(cfg)
        block.attn.hook_pattern = BookPattern()
    model.ln_final = BookLayerNorm(cfg)
    model.setup()                  # register the new hook points under their usual names

    def put(param, value):
        param.copy_(torch.as_tensor(np.asarray(value, dtype=np.float64)))

    with torch.no_grad():
        for p in model.parameters():     # learned weights only: the mask buffers stay
            p.zero_()
        put(model.embed.W_E, params['tok_emb'])
        put(model.pos_embed.W_pos, params['pos_emb'])
        put(model.unembed.W_U, np.asarray(params['out_emb']).T)
        for block, layer in zip(model.blocks, layers):
            h, _, dq = np.shape(layer['Q'])
            dv = np.shape(layer['V'])[2]
            fold = np.sqrt(d_head / dq) if dq else 1.0    # TL divides by sqrt(d_head) of cfg
            block.attn.W_Q[:h, :, :dq] = torch.as_tensor(np.asarray(layer['Q']) * fold)
            block.attn.W_K[:h, :, :dq] = torch.as_tensor(np.asarray(layer['K'], dtype=float))
            block.attn.W_V[:h, :, :dv] = torch.as_tensor(np.asarray(layer['V'], dtype=float))
            block.attn.W_O[:h, :dv, :] = torch.as_tensor(
                np.asarray(layer['P'], dtype=float).transpose(0, 2, 1))
            if not attn_only:
                f = np.shape(layer['M1'])[1]
                block.mlp.W_in[:, :f] = torch.as_tensor(np.asarray(layer['M1'], dtype=float))
                block.mlp.b_in[:f] = torch.as_tensor(np.asarray(layer['b1'], dtype=float))
                block.mlp.W_out[:f, :] = torch.as_tensor(np.asarray(layer['M2'], dtype=float))
                put(block.mlp.b_out, layer['b2'])
            for name, ln in (('ln1', 'ln1'), ('ln2', 'ln2')):
                if name == 'ln2' and attn_only:
                    continue
                module = getattr(block, name)
                put(module.w, _vector(layer[ln].get('gamma', 1.0), d))
                put(module.b, _vector(layer[ln].get('beta', 0.0), d))
        put(model.ln_final.w, _vector(params['lnf'].get('gamma', 1.0), d))
        put(model.ln_final.b, _vector(params['lnf'].get('beta', 0.0), d))
    model.eval()
    return model


def _nonzero(t):
    return t is not None and bool((t != 0).any())


def from_hooked_transformer(model, exact=True):
    """The params dict of a ``HookedTransformer`` of the book's architecture (float64).

    Raises ``ExportError`` naming the first feature the book's format lacks
    (attention or unembedding biases, rotary or other position schemes, RMSNorm,
    PostLN-style or parallel blocks, gated MLPs, other activations, ...).  With
    ``exact=True`` (default) TransformerLens' own ``LayerNorm`` is refused, since
    its ``eps`` sits inside the square root; ``exact=False`` converts it anyway.
    """
    torch, tl = _torch()
    BookLayerNorm = _classes()[0]
    if not isinstance(model, tl.HookedTransformer):
        raise ExportError(f'from_hooked_transformer: expected a transformer_lens.HookedTransformer;'
                          f' got {type(model).__name__}')
    cfg = model.cfg
    where = 'from_hooked_transformer: this model cannot be imported'
    checks = [
        (cfg.positional_embedding_type != 'standard',
         f'its position embedding is {cfg.positional_embedding_type!r}; the book adds one '
         f'learned table (standard)'),
        (cfg.normalization_type not in ('LN', 'LNPre'),
         f'its normalization_type is {cfg.normalization_type!r}; the book uses layer norm'),
        (getattr(cfg, 'parallel_attn_mlp', False), 'its attention and MLP run in parallel'),
        (getattr(cfg, 'gated_mlp', False), 'its MLP is gated'),
        (not cfg.attn_only and cfg.act_fn != 'relu',
         f'its MLP activation is {cfg.act_fn!r}; the book uses ReLU'),
        (cfg.d_vocab_out != cfg.d_vocab,
         f'its output vocabulary ({cfg.d_vocab_out}) differs from its input vocabulary '
         f'({cfg.d_vocab})'),
        (getattr(cfg, 'n_key_value_heads', None) not in (None, cfg.n_heads),
         'it shares keys and values between heads (grouped-query attention)'),
        (cfg.attention_dir != 'causal', 'its attention is not causal'),
        (any(t != 'global' for t in (cfg.attn_types or [])), 'it uses local attention windows'),
        (_nonzero(model.unembed.b_U), 'its unembedding has a bias (b_U); the book has none'),
    ]
    for bad, why in checks:
        if bad:
            raise ExportError(f'{where}: {why}')
    for i, block in enumerate(model.blocks):
        for name in ('b_Q', 'b_K', 'b_V', 'b_O'):
            if _nonzero(getattr(block.attn, name, None)):
                raise ExportError(f'{where}: blocks.{i}.attn.{name} is not zero; the book\'s '
                                  f'attention has no biases')
    if exact and cfg.normalization_type == 'LN':
        lns = [model.ln_final] + [m for b in model.blocks for m in (b.ln1, getattr(b, 'ln2', None))
                                  if m is not None and hasattr(m, 'w')]
        if any(not isinstance(m, BookLayerNorm) for m in lns):
            raise ExportError(f'{where} exactly: its layer norms divide by sqrt(var + '
                              f'{cfg.eps:g}), the book\'s by std + 1e-10; pass exact=False to '
                              f'convert anyway (logits move by about eps / (2 var), relative)')

    def arr(t):
        return t.detach().to(torch.float64).cpu().numpy().copy()

    d, scale = cfg.d_model, cfg.attn_scale if cfg.use_attn_scale else 1.0
    params = base_params(cfg.d_vocab, cfg.n_ctx, d)
    params['tok_emb'] = arr(model.embed.W_E)
    params['pos_emb'] = arr(model.pos_embed.W_pos)
    out = arr(model.unembed.W_U).T.copy()
    params['out_emb'] = params['tok_emb'] if np.array_equal(out, params['tok_emb']) else out

    def norm_of(module):
        if hasattr(module, 'w'):
            return {'gamma': arr(module.w), 'beta': arr(module.b)}
        return {'gamma': 1.0, 'beta': 0.0}          # LNPre: weights folded elsewhere

    for block in model.blocks:
        attn = block.attn
        d_ff = 0 if cfg.attn_only else cfg.d_mlp
        layer = base_layer(cfg.n_heads, d, d_ff, cfg.d_head)
        # TL divides scores by attn_scale; the book by sqrt(d_head): fold the ratio into Q
        layer['Q'] = arr(attn.W_Q) * (np.sqrt(cfg.d_head) / scale)
        layer['K'], layer['V'] = arr(attn.W_K), arr(attn.W_V)
        layer['P'] = arr(attn.W_O).transpose(0, 2, 1).copy()
        if not cfg.attn_only:
            layer['M1'], layer['b1'] = arr(block.mlp.W_in), arr(block.mlp.b_in)
            layer['M2'], layer['b2'] = arr(block.mlp.W_out), arr(block.mlp.b_out)
            layer['ln2'] = norm_of(block.ln2)
        layer['ln1'] = norm_of(block.ln1)
        params['layers'].append(layer)
    params['lnf'] = norm_of(model.ln_final)
    return validate_params(params)
