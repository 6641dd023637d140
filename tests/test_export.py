"""taotp.export: every program of the catalogue in TransformerLens, and back.

Tolerance.  For each example of the catalogue the prompt plus its expected
continuation runs through both models.  At the positions whose logits greedy
decoding reads (the last prompt token onwards) the exported logits agree with
``taotp.transformer`` to 1e-6 of the program's largest logit (measured: 3.5e-10 on
3-digit addition, below 1e-12 on every other program).  At prompt positions some hand-built
programs are ill-conditioned: there two NumPy implementations of the same
equations (the engine and the loop reference ``taotp.reference``) already
disagree (up to 1.8 relative on 3-digit addition), so a larger difference is
accepted where, and only as far as, the loop reference shows it.  Greedy
decoding through TransformerLens gives the catalogue's outputs token for token.

TransformerLens' own ``generate``, with its key/value cache and without, must
return ``taotp.decode``'s tokens or raise ``ExportError`` before it runs: on every
exportable program (its examples and one long run) and on seeded random programs
of 0-3 layers, with and without MLPs, with padded layers; a position counter
shows directly where each new token is embedded.
"""
import subprocess
import sys

import numpy as np
import pytest

import taotp
from taotp.programs import PROGRAMS

RTOL = 1e-6
train = pytest.mark.train


def _tl():
    import torch                      # fails loudly if the extra is missing: never skipped
    from taotp.export import from_hooked_transformer, to_hooked_transformer
    return torch, to_hooked_transformer, from_hooked_transformer


def _exportable():
    from taotp.export import exportable
    out = []
    for prog in PROGRAMS:
        options = [e[2] for e in prog.examples() if len(e) > 2]
        variant = {k: o[k] for o in options for k in ('norm', 'post_ln') if k in o}
        positions = any(o.get('positions') is not None for o in options) or None
        if exportable(prog.build(), positions=positions, **variant) is None:
            out.append(prog.key)
    return out


EXPORTABLE = [p.key for p in PROGRAMS if p.key != 'coupling-adder-10x10']


def test_the_catalogue_exports_all_but_the_multi_level_adder():
    assert _exportable() == EXPORTABLE


def _greedy(model, torch, prompt, steps, eos=None):
    seq = list(prompt)
    for _ in range(steps):
        with torch.no_grad():
            seq.append(int(model(torch.tensor([seq]))[0, -1].argmax()))
        if seq[-1] == eos:
            break
    return seq


@train
@pytest.mark.parametrize('key', EXPORTABLE)
def test_exported_program_matches_the_engine(key):
    torch, to_hooked, _ = _tl()
    prog = {p.key: p for p in PROGRAMS}[key]
    params = prog.build()
    model = to_hooked(params)
    assert model.cfg.dtype == torch.float64
    examples = prog.examples() or [([0, 1, 2], [0])]     # count-only programs: any prompt
    for example in examples:
        prompt, want = list(example[0]), list(example[1])
        kwargs = example[2] if len(example) > 2 else {}
        seq = prompt + want[:-1]
        ours = taotp.transformer(seq, **params)
        with torch.no_grad():
            theirs = model(torch.tensor([seq]))[0].numpy()
        scale = np.abs(ours).max()
        read = slice(len(prompt) - 1, None)             # logits that decoding reads
        assert np.abs(theirs[read] - ours[read]).max() <= RTOL * scale, (key, prompt)
        everywhere = np.abs(theirs - ours).max()
        if everywhere > RTOL * scale:                   # ill-conditioned prompt positions
            loop = taotp.reference.naive_transformer(seq, **params)
            assert everywhere <= 10 * np.abs(loop - ours).max(), (key, prompt)
        if example[1] and prog.examples():
            got = _greedy(model, torch, prompt, len(want), kwargs.get('eos'))
            assert got[len(prompt):] == want, (key, prompt)


@train
def test_exported_model_keeps_transformer_lens_hooks_and_padding():
    torch, to_hooked, _ = _tl()
    params = taotp.random_params(np.random.default_rng(0), vocab_size=9, block_size=8, d_model=6,
                                 n_layers=2, n_heads=2, d_head=3, d_ff=4)
    params['layers'][1] = {**params['layers'][1], 'Q': params['layers'][1]['Q'][:1, :, :2],
                           'K': params['layers'][1]['K'][:1, :, :2],
                           'V': params['layers'][1]['V'][:1], 'P': params['layers'][1]['P'][:1],
                           'M1': params['layers'][1]['M1'][:, :0], 'b1': np.zeros(0),
                           'M2': np.zeros((0, 6))}         # 1 head, d_head 2, no MLP units
    params['layers'][0]['ln1'] = {'gamma': 1.5 + np.arange(6) / 10, 'beta': 0.1}
    model = to_hooked(params)
    tokens = [3, 1, 4, 1, 5, 8]
    logits, cache = model.run_with_cache(torch.tensor([tokens]))
    ours = taotp.transformer(tokens, **params)
    assert np.allclose(logits[0].detach().numpy(), ours, rtol=0, atol=1e-12)
    book = taotp.trace(tokens, params)
    for i in range(2):
        heads = book.attn[i].shape[0]
        assert np.allclose(cache[f'blocks.{i}.attn.hook_pattern'][0, :heads].numpy(),
                           book.attn[i], atol=1e-13)
    assert np.allclose(cache['blocks.0.ln1.hook_scale'][0, :, 0].numpy(),
                       book.resid_pre[0].std(-1) + 1e-10, atol=1e-13)


@train
def test_attention_only_and_zero_layer_programs_export():
    torch, to_hooked, _ = _tl()
    rng = np.random.default_rng(1)
    attn_only = taotp.random_params(rng, n_layers=2, d_ff=0)
    for layer in attn_only['layers']:
        layer['b2'] = np.zeros_like(layer['b2'])
    model = to_hooked(attn_only)
    assert model.cfg.attn_only
    zero = taotp.random_params(rng, n_layers=0)
    for params in (attn_only, zero):
        tokens = [1, 2, 3, 4]
        got = to_hooked(params)(torch.tensor([tokens]))[0].detach().numpy()
        assert np.allclose(got, taotp.transformer(tokens, **params), rtol=0, atol=1e-12)


@train
def test_round_trip_and_reverse_import():
    torch, to_hooked, from_hooked = _tl()
    params = taotp.build_search_transformer(10, 100, 3)
    back = from_hooked(to_hooked(params))
    prompt = taotp.random_search_inputs(np.random.default_rng(3), 1, 10, 40, 3)[0][0].tolist()
    a, b = taotp.transformer(prompt, **params), taotp.transformer(prompt, **back)
    assert np.abs(a - b).max() <= RTOL * np.abs(a).max()
    assert taotp.count_params(back)['n_params'] >= taotp.count_params(params)['n_params']


@train
def test_importing_a_model_trained_with_transformer_lens():
    torch, _, from_hooked = _tl()
    import warnings

    from transformer_lens import HookedTransformer, HookedTransformerConfig
    from taotp.export import ExportError
    cfg = HookedTransformerConfig(n_layers=2, d_model=8, n_ctx=10, d_head=4, n_heads=2, d_mlp=16,
                                  d_vocab=7, act_fn='relu', normalization_type='LN',
                                  dtype=torch.float64, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        model = HookedTransformer(cfg)
    with torch.no_grad():                  # TL starts biases and norms at 0 and 1: vary them
        for block in model.blocks:
            block.mlp.b_in.normal_()
            block.ln1.w.uniform_(0.5, 1.5)
    with pytest.raises(ExportError, match=r'sqrt\(var \+ 1e-05\).*exact=False'):
        from_hooked(model)
    params = from_hooked(model, exact=False)
    tokens = [1, 5, 2, 6, 0, 3]
    with torch.no_grad():
        theirs = model(torch.tensor([tokens]))[0].numpy()
    ours = taotp.transformer(tokens, **params)
    assert np.abs(theirs - ours).max() <= 1e-4 * np.abs(ours).max()     # eps / (2 var)
    with torch.no_grad():
        model.blocks[0].attn.b_Q.fill_(0.1)
    with pytest.raises(ExportError, match=r"blocks.0.attn.b_Q is not zero"):
        from_hooked(model, exact=False)
    with torch.no_grad():
        model.blocks[0].attn.b_Q.zero_()
        model.unembed.b_U.fill_(1.0)
    with pytest.raises(ExportError, match=r'unembedding has a bias'):
        from_hooked(model, exact=False)
    with pytest.raises(ExportError, match=r'expected a transformer_lens.HookedTransformer'):
        from_hooked({'tok_emb': 1})


@train
@pytest.mark.parametrize('kwargs, why', [
    ({'norm': 'rms'}, r"RMSNorm \(norm='rms'\)"),
    ({'norm': 'none'}, r"affine-only norm \(norm='none'\)"),
    ({'post_ln': True}, r'PostLN \(post_ln=True\)'),
    ({'positions': np.arange(4)}, r'custom position ids'),
])
def test_variants_that_cannot_be_exported_say_why(kwargs, why):
    _tl()
    from taotp.export import ExportError, to_hooked_transformer
    params = taotp.random_params(np.random.default_rng(0))
    with pytest.raises(ExportError, match='cannot be exported: it (runs|has).*' + why):
        to_hooked_transformer(params, **kwargs)


@train
def test_multi_level_positions_cannot_be_exported():
    _tl()
    from taotp.export import ExportError, to_hooked_transformer
    params = taotp.coupling.build_multi_operand_adder(2, 2, norm=True).params
    with pytest.raises(ExportError, match=r'2 position tables \(multi-level position ids, '
                                          r'Chapter 9\)'):
        to_hooked_transformer(params)
    with pytest.raises(ExportError, match=r'not a valid program'):
        to_hooked_transformer({'tok_emb': np.zeros((2, 2)), 'pos_emb': np.zeros((2, 2))})
    with pytest.raises(ExportError, match=r'not a valid program: validate_params: expected a '
                                          r'params dict'):
        to_hooked_transformer(None)


def test_export_is_a_lazy_name_and_loads_no_torch():
    code = ('import sys, taotp; m = taotp.export; import taotp.train; taotp.train.init_params; '
            'print("torch" in sys.modules, "transformer_lens" in sys.modules)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ['False', 'False']


def test_without_torch_export_says_how_to_install():
    code = ('import sys; sys.modules["torch"] = None; import numpy, taotp, taotp.export as e; '
            'e.to_hooked_transformer(taotp.random_params(numpy.random.default_rng(0)))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert 'pip install "taotp[train]"' in out.stderr, out.stderr


# ---- generate(): TransformerLens' own decoding loop, cached or not ----

def _generate(model, torch, prompt, steps, cache, **kwargs):
    kwargs = {'do_sample': False, 'verbose': False, 'stop_at_eos': False, **kwargs}
    out = model.generate(torch.tensor([list(prompt)]), max_new_tokens=steps,
                         use_past_kv_cache=cache, **kwargs)
    return out[0].tolist()


def _assert_generate_is_decode(model, torch, params, prompt, steps, **kwargs):
    eos = kwargs.get('eos_token_id')
    want = taotp.decode(prompt, params, max_steps=steps, eos=eos).tolist()
    for cache in (True, False):
        got = _generate(model, torch, prompt, steps, cache, **kwargs)
        assert got == want, (cache, len(prompt), steps)


LONG_RUN = 24       # new tokens of the long run per program (fewer where the block ends first)


@train
@pytest.mark.parametrize('key', EXPORTABLE)
def test_generate_gives_decodes_tokens_on_every_program(key):
    """Each example's run, then one long run from the first prompt, cached and not;
    one step more than the position table holds is refused before anything runs."""
    torch, to_hooked, _ = _tl()
    from taotp.export import ExportError
    prog = {p.key: p for p in PROGRAMS}[key]
    params = prog.build()
    model = to_hooked(params)
    block = taotp.params.config(params)['block_size']
    examples = prog.examples() or [([0, 1, 2], [0])]
    for example in examples[:3]:
        _assert_generate_is_decode(model, torch, params, list(example[0]), len(example[1]))
    prompt = list(examples[0][0])
    longest = block - len(prompt) + 1          # the last new token is never fed back
    _assert_generate_is_decode(model, torch, params, prompt, min(longest, LONG_RUN))
    for cache in (True, False):
        with pytest.raises(ExportError, match=rf'generate: a prompt of {len(prompt)} tokens \+ '
                                              rf'{longest + 1} new tokens needs {block + 1} '
                                              rf'positions but n_ctx \(the block_size\) is '
                                              rf'{block}; .*lower max_new_tokens to {longest}'):
            _generate(model, torch, prompt, longest + 1, cache)
    with pytest.raises(taotp.ParamsError, match='block_size'):     # decode refuses it too
        taotp.decode(prompt, params, max_steps=longest + 1)


def _random_program(seed, n_layers, n_heads, d_ff, attn_only=False, mixed=False):
    rng = np.random.default_rng(seed)
    params = taotp.random_params(rng, vocab_size=16, block_size=32, d_model=12,
                                 n_layers=n_layers, n_heads=n_heads, d_head=4, d_ff=d_ff)
    for layer in params['layers']:
        layer['ln1'] = {'gamma': rng.uniform(0.5, 1.5, 12), 'beta': rng.normal(0, 0.1, 12)}
        layer['ln2'] = {'gamma': rng.uniform(0.5, 1.5, 12), 'beta': rng.normal(0, 0.1, 12)}
        if attn_only:
            layer['b2'] = np.zeros(12)
    if mixed:       # the last layer: one head of width 3, so the export pads it
        last = params['layers'][-1]
        for name in ('Q', 'K', 'V', 'P'):
            last[name] = last[name][:1, :, :3]
    return params


@train
@pytest.mark.parametrize('n_layers, n_heads, d_ff, attn_only, mixed', [
    (0, 1, 0, True, False),
    (1, 1, 0, True, False),        # attention only: the export has no MLP at all
    (1, 4, 16, False, False),
    (2, 2, 0, False, False),       # no MLP units but a bias b2: an MLP padded to width 1
    (2, 3, 8, False, True),
    (3, 2, 16, False, False),
    (3, 1, 0, True, True),
])
def test_generate_gives_decodes_tokens_on_random_programs(n_layers, n_heads, d_ff, attn_only,
                                                          mixed):
    torch, to_hooked, _ = _tl()
    for seed in range(2):
        params = _random_program(seed, n_layers, n_heads, d_ff, attn_only, mixed)
        model = to_hooked(params)
        assert model.cfg.attn_only == attn_only
        prompts = np.random.default_rng(seed + 10).integers(0, 16, size=(2, 5))
        for prompt in prompts.tolist():
            _assert_generate_is_decode(model, torch, params, prompt, 28)   # to the last position
        batch = model.generate(torch.tensor(prompts), max_new_tokens=28, do_sample=False,
                               verbose=False, stop_at_eos=False)          # cached, two rows
        for row, prompt in zip(batch.tolist(), prompts.tolist()):
            assert row == taotp.decode(prompt, params, max_steps=28).tolist()


def _position_counter(block=16):
    """A 1-layer program whose next token is (position of the last token) + 1."""
    from taotp.params import base_layer, base_params
    params = base_params(block + 1, block, block)
    params['pos_emb'] = np.eye(block)
    params['out_emb'] = np.vstack([np.zeros((1, block)), np.eye(block)])
    params['layers'].append(base_layer(1, block, 0, 4))
    return params


@train
def test_generate_puts_each_new_token_at_its_own_position():
    """TransformerLens 3.x's cached generate, on a model without a tokenizer, embeds the
    sequence so far at an offset of the cache length: the new tokens of a position
    counter would read 3, 7, 9, 11 (the module docstring shows it on a plain
    HookedTransformer).  The export's generate counts 3, 4, 5, 6."""
    torch, to_hooked, _ = _tl()
    from taotp.export import ExportError
    params = _position_counter()
    model = to_hooked(params)
    assert taotp.decode([0, 0, 0], params, max_steps=4).tolist() == [0, 0, 0, 3, 4, 5, 6]
    _assert_generate_is_decode(model, torch, params, [0, 0, 0], 4)
    _assert_generate_is_decode(model, torch, params, [0, 0, 0], 14)          # to position 15
    # with an end-of-sequence token that never comes, the run stops at the table's end
    for cache in (True, False):
        with pytest.raises(ExportError, match=r'generate: the sequence reached 17 tokens with '
                                              r'no end-of-sequence token but n_ctx \(the '
                                              r'block_size\) is 16; .*lower max_new_tokens'):
            _generate(model, torch, [0, 0, 0], 30, cache, stop_at_eos=True, eos_token_id=0)


@train
def test_generate_refuses_before_running_and_handles_the_edges():
    torch, to_hooked, _ = _tl()
    from taotp.export import ExportError
    import transformer_lens
    from taotp.export import BookHookedTransformer
    params = _random_program(0, 2, 2, 8)
    model = to_hooked(params)
    assert isinstance(model, BookHookedTransformer)
    assert isinstance(model, transformer_lens.HookedTransformer)
    calls = []
    hooks = [('ln_final.hook_scale', lambda value, hook: calls.append(hook.name))]
    with model.hooks(fwd_hooks=hooks):
        for cache in (True, False):
            with pytest.raises(ExportError, match=r'a prompt of 5 tokens \+ 29 new tokens needs '
                                                  r'33 positions.*lower max_new_tokens to 28'):
                _generate(model, torch, [1, 2, 3, 4, 5], 29, cache)
            with pytest.raises(ExportError, match=r'a prompt of 33 tokens \+ 1 new tokens needs '
                                                  r'33 positions.*shorten the prompt to 32 '
                                                  r'tokens or fewer'):
                _generate(model, torch, [1] * 33, 1, cache, stop_at_eos=True, eos_token_id=0)
        assert calls == []                                  # no forward pass ran
        for cache in (True, False):                         # 0 new tokens: the prompt
            assert _generate(model, torch, [1, 2, 3], 0, cache) == [1, 2, 3]
        _assert_generate_is_decode(model, torch, params, [1] * 32, 1)     # exactly fills it
    # Hello World: 0 layers, always run without a cache (TransformerLens' fails on it)
    hello, tokens = taotp.hello_world.build_hello_world_transformer()
    model = to_hooked(hello)
    _assert_generate_is_decode(model, torch, hello, [tokens['<bos>']], 20, stop_at_eos=True,
                               eos_token_id=tokens['<eos>'])
    assert _generate(model, torch, [tokens['<bos>']], 20, True, stop_at_eos=True,
                     eos_token_id=tokens['<eos>'])[-1] == tokens['<eos>']
