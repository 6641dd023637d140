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
