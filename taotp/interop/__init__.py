"""Programs from other hand-weight tools, run on the book's engine.

``from_tracr(model)`` turns a model compiled by tracr (DeepMind's RASP compiler,
``pip install taotp[tracr]``) into a params dict.  ``taotp.interop.tracr_tasks``
(which imports tracr when called) compiles tracr's programs for the book's tasks
and measures them.

What can be imported, and why the rest cannot:

* tracr's blocks are the book's with layer norm switched off: ``x + attn(x)``, then
  ``x + mlp(x)``, no final norm, scores divided by the square root of the key size,
  ReLU.  The book's engine runs that as ``norm='none'``.
* The book's engine is causal (every position sees itself and the past).  A model
  compiled with ``causal=True`` imports exactly; tracr's default, a non-causal
  model, does not: its outputs at a position depend on later tokens, which the
  engine never shows it.  So tracr's one-pass sort and reverse cannot be imported.
* The output must be categorical (tracr takes an argmax over the output space, as
  the book's logits do); a numerical output (a number written on one coordinate)
  has no argmax to import.

Reading the model's arrays needs only NumPy; the unembedding, a fixed projection
built inside tracr's model, is read by applying it once (Haiku, imported then).

The tokens: tracr's input encoding (BOS and PAD included) keeps its ids, and each
output value that is not also an input token gets a new id after them
(``tracr_vocabulary`` lists them).  Tokens that are never an output score a large
negative logit through tracr's constant ``one`` coordinate.
"""
import numpy as np

from ..params import base_layer, base_params

NOT_AN_OUTPUT = -1e3   # logit of a token that is never an output (times the 'one' coordinate)


def _array(value):
    return np.asarray(value, dtype=np.float64)


def _check_importable(model):
    config = model.model_config
    problems = []
    if not config.causal:
        problems.append('it is not causal (compile with causal=True): the book\'s engine '
                        'never shows a position the tokens after it')
    if config.layer_norm:
        problems.append('it uses layer norm with learned gain and shift')
    if getattr(config.activation_function, '__name__', '') != 'relu':
        problems.append(f'its MLP activation is {config.activation_function!r}, not ReLU')
    if model.output_encoder is None or not hasattr(model.output_encoder, 'encoding_map'):
        problems.append('its output is numerical: no argmax over tokens to import')
    for module, arrays in model.params.items():
        if 'b' in arrays and np.any(_array(arrays['b']) != 0):
            problems.append(f'{module} has a non-zero bias')
    if problems:
        raise ValueError('from_tracr: this model cannot be imported: ' + '; '.join(problems))


def tracr_vocabulary(model):
    """The tokens of ``from_tracr(model)`` by id: tracr's inputs, then the other outputs."""
    inputs = sorted(model.input_encoder.encoding_map.items(), key=lambda kv: kv[1])
    vocab = [token for token, _ in inputs]
    if hasattr(model.output_encoder, 'encoding_map'):
        vocab += [v for v in model.output_encoder.encoding_map if v not in vocab]
    return vocab


def _unembedding(model, d_model):
    """The (d_model, n_outputs) projection tracr's unembedding applies, read off by a probe.

    The unembedding is a fixed projection built inside the model (not a parameter):
    applying it to the identity gives its matrix.  This is the one place that needs
    JAX and Haiku, imported here.
    """
    import haiku as hk
    import jax.numpy as jnp

    def probe():
        return model.get_compiled_model().unembed(jnp.eye(d_model), use_unembed_argmax=False)
    out = np.asarray(hk.without_apply_rng(hk.transform(probe)).apply(model.params, ),
                     dtype=np.float64)
    return out.reshape(d_model, -1)


def from_tracr(model):
    """A params dict that runs the causal tracr ``model`` on the book's engine (``norm='none'``).

    Args:
        model: a ``tracr.compiler.assemble.AssembledTransformerModel`` compiled with
            ``causal=True`` and a categorical output.

    Returns:
        A params dict: vocabulary ``tracr_vocabulary(model)``, block size
        ``max_seq_len + 1`` (BOS first), d_model the width of tracr's residual
        stream, one layer of the book per tracr layer (heads of key size k: Q, K,
        V and P of shape (heads, d_model, k); tracr's MLP as M1, M2 with zero
        biases).  Run it with ``taotp.transformer(ids, norm='none', **params)``.

    Raises:
        ValueError: the model is not causal, has a numerical output, layer norm,
        another activation or a non-zero bias (the message says which).
    """
    _check_importable(model)
    params_in = {name: {k: _array(v) for k, v in arrays.items()}
                 for name, arrays in model.params.items()}
    tok = params_in['token_embed']['embeddings']
    pos = params_in['pos_embed']['embeddings']
    d_model = tok.shape[1]
    vocab = tracr_vocabulary(model)
    params = base_params(len(vocab), pos.shape[0], d_model)
    params['tok_emb'][:len(tok)] = tok
    params['pos_emb'] = pos.copy()
    unembed = _unembedding(model, d_model)
    labels = list(model.residual_labels)
    for i, token in enumerate(vocab):
        if token in model.output_encoder.encoding_map:
            params['out_emb'][i] = unembed[:, model.output_encoder.encoding_map[token]]
        elif 'one' in labels:
            params['out_emb'][i, labels.index('one')] = NOT_AN_OUTPUT
    config = model.model_config
    heads, k = config.num_heads, config.key_size
    for n in range(config.num_layers):
        attn, mlp = f'transformer/layer_{n}/attn', f'transformer/layer_{n}/mlp'
        hidden = params_in[f'{mlp}/linear_1']['w'].shape[1]
        layer = base_layer(heads, d_model, hidden, k)
        for ours, theirs in (('Q', 'query'), ('K', 'key'), ('V', 'value')):
            w = params_in[f'{attn}/{theirs}']['w']                   # (d_model, heads * k)
            layer[ours] = w.reshape(d_model, heads, k).transpose(1, 0, 2).copy()
        w = params_in[f'{attn}/linear']['w']                         # (heads * k, d_model)
        layer['P'] = w.reshape(heads, k, d_model).transpose(0, 2, 1).copy()
        layer['M1'] = params_in[f'{mlp}/linear_1']['w'].copy()
        layer['M2'] = params_in[f'{mlp}/linear_2']['w'].copy()
        params['layers'].append(layer)
    return params


def tracr_size(model):
    """tracr's own count of a compiled model: every array of its params (biases included).

    Returns ``(total, non-zero)``; the unembedding is a fixed projection, not a parameter.
    """
    total = non0 = 0
    for arrays in model.params.values():
        for value in arrays.values():
            a = _array(value)
            total += a.size
            non0 += int(np.count_nonzero(a))
    return total, non0
