"""Chapter 1 checkers: what each one calls solved, and the answers that must not pass.

| id | solved means | wrong answers and cheats tried (each a test below) |
|---|---|---|
| 1.1, 1.2, 1.5, 1.9, 1.10 | no checker (reflection) | - |
| 1.3 | `decode_fast(tokens, params, max_steps, eos)` gives the naive decode's tokens on 72 cases over 8 programs drawn afresh (no layers, a layer without heads, d_value != d_head, d_ff = 0, vector and scalar layer norms, one whose attention scores are 1e3 to 1e20, as in the book's hardened programs: round 20, a softmax without the max taken off passed; one whose stream spreads 1e-8 to 1e-6: round 22; one with `out_emb` all zeros, so that every logit ties exactly and the argmax is token 0: round 26, a decoder that broke ties by the last index passed 10 checks in 10; full blocks, 0 steps, eos at the first token) and on a prompt of 40 to 60 tokens for `token_copier` (which reads a position drawn at least 32 before the prompt's end at every step: round 13, a cache that kept position 0 and the last 31 passed the copier of position 0), and on a prompt 8 to 16 tokens short of a block of 700 to 2,048 whose copier reads a position 660 or more back (round 17: a ring of 640 passed), and on one 8 to 16 tokens short of a block of 2,048 whose copier reads position 1 to 4 (round 25: a ring of the last 1,000 positions passed 7 checks in 12; now every cache of fewer than 2,043 positions fails), and a run of a fresh length (500-600 steps, d_model 128) takes at most 5x the CPU time of the package's cache on the same run (the worker's own CPU time, so another process's load counts little); the package's decoders and forward pass are switched off | a hand-written naive loop (float64 and float32); the leanest naive loop (float32, heads batched); a naive loop padded with busy work so its time grows linearly; a memoised naive loop; a cache that breaks ties by the last index (round 26); caches that read eos = 0 as no eos (round 23: a case with eos = 0 met on the way is now drawn for most programs), with a softmax without the max taken off, with a ring of 32 positions (passed once in a clean clone's run when only the long run could see it; now refused on the copier's prompt), with rings of 640, 1,000 and 2,042 positions, layer norms without gamma/beta, values as wide as keys; `taotp.decode` itself, `taotp.transformer` in a loop, a copy of `taotp.decode`'s code |
| 1.4 | `transformer_at(...)` gives the book's logits to 1e-9 on 37 inputs over 8 fresh programs and two long ones (one without layers: round 9; one with attention scores of 1e3 to 1e20: round 20, a softmax without the max taken off and a causal mask of -1e9 passed; one whose stream spreads 1e-8 to 1e-6: round 22, a layer norm with its 1e-10 inside the square root passed 3 checks in 5) and one of block 65 to 400 (round 17: a causal mask fixed at 32 x 32 passed), and a full block of 1,024 tokens for one of block 1,024 (round 25: a causal mask made once at 256 x 256 passed 6 checks in 10); the package's forward pass, every function of the loop reference, `np.einsum`, the packages of other libraries with an einsum (`torch`, `jax`, `tensorflow`, `opt_einsum`: round 26, a rewrite through `torch.einsum` passed 8 checks in 10; the worker no longer loads torch for an answer that names it while 1.4 is checked) and the extras' packages (`taotp.train`, `taotp.export`, `taotp.interop`; also for 1.3, 1.6, 1.7) are switched off | `taotp.transformer`, `taotp.reference.naive_transformer` and its parts (`_attention`, `_mlp`, `_normalise`: round 7), a rewrite calling `np.einsum`, one calling `torch.einsum` (holding the module, or importing it when called), layer norms without gamma/beta, no 1/sqrt(d_head), a softmax without the max taken off, a mask of -1e9, the norm's 1e-10 inside the square root, causal masks made once at 256 x 256 and at 400 x 400 |
| 1.6 | `sample_decode(...)`: greedy at a T drawn from 1e-5 to 1e-3 along 6-step runs of 5 fresh programs (logit gaps > 0.05); at a T drawn from 0.2 to 0.5 and one from 0.5 to 2 on `sampling_program()` (round 7: no T between 1e-3 and 0.5 was tried; round 18: the named T = 0.5 gave its place to a scaled program), at a T drawn from 2 to 3 on a fresh program of its family with 10^3.5 to 10^5 added to every logit (vocabulary 3 to 9 but 4, a prompt of 1 to 3 tokens, steps up to a block of 11 to 13: round 12), and on two more with 24 to 64 tokens, their logits scaled down so that their laws are those of T = 2 to 3, one at a T from 1e-3 to 0.2 and one (100 runs) at the greedy check's own T (round 13: 12 or 16 tokens, T 0.002 to 0.06; round 17: a top-16 sampler and one greedy below T = 0.0015 passed that; round 18: at the greedy check's T alone, a mixture of sharp and flat draws right below 1e-3 passed a clean clone's run), and a third, scaled for T = 2.5 and read at T = 1 (sharper laws, so greedy and uniform draws both stray far), whose 300 runs each get their own T and out_emb times it: a third from 1e-300 (the smallest T the statement allows) to 2e-300, a third from 5e299 to 1e300 (the largest; float64 keeps the scaled law at both ends, its logits below 1e302), the rest one in each hundredth of the decades between (a sampler greedy below T = 1e-4 passed 3 checks in 8 while the coldest T was 1e-5 to 1e-3; round 25: greedy above T = 3 passed 12 in 12, no T above 3 being tried), 300 runs of 8 steps (8 to 12 on the fresh programs), 3 of them replayed with the same seed (round 12: reproducibility was tried only at T = 1): the frequency of every token at every step (and over all steps) within a Hoeffding-Azuma margin of softmax(logits / T) of the sampled prefixes; then, per case and over all six, Freedman margins for sums that stay near 0 for a right sampler (`draws.martingales`): calibration per tenth of p, the score of T, its square, and its spread between runs (a right sampler fails with probability < 1e-6); the package's sampler switched off | the first token sampled then greedy; greedy after 4 sampled steps; `taotp.decode(..., temperature=T)`; the prompt's law at every step; T ignored; T a quarter too high or a fifth too low (the frequency margins alone let 1.25 T pass, round 4; now refused in 89 of 90 checks measured); T squared; right only at the temperatures the notebook names, a temperature per run, sharp and flat draws mixed with no drift (round 5); a fresh global generator, also one used at every T but 1 (round 12); greedy unless the vocabulary is 4 or past the 10th token (round 12); greedy below T = 0.05, the 8 likeliest tokens only (round 13); greedy below T = 0.0015, the 16 likeliest tokens only (round 17); a softmax that does not subtract the max, argmax where it overflows (round 19: every sampled logit was small; the program at T = 2 to 3 now has 10^3.5 to 10^5 added to every logit); the generator reseeded; the prompt dropped; greedy below T = 1e-4, and below 1e-299; greedy above T = 3 and above 1e299, uniform draws above 1e299 (round 25). **Not refused** (round 5, below the power of 9,600 draws at 1e-6, now about 15,000): T off by 10 to 15 %, top-p 0.95, per-step mixtures of T / 3 and 3 T with no drift (0.04 to 0.07 from the law in total variation); 1.2 T, 0.8 T, greedy on 10 % of steps and argmax-or-uniform after the first step fail |
| 1.7 | `decode_window(...)` returns the prompt and n_steps argmax tokens over the last block_size tokens for 30 prompts at block sizes 1, 3, 5, 8 and 24 and at 4 on a program whose logits all tie (`out_emb` all zeros: round 26, a decoder that broke ties by the last index passed 10 checks in 10), and a block size from 65 to 300 (100 steps) and one of 1,024 (10 steps) on `token_copier` (a draw of exactly 64 let the window capped at 64 pass about once in 100 checks) (round 25: windows capped at 128 and at 300 passed 5 checks in 10 and every check; round 17: a window capped at 64 passed; round 13: a window capped at 16 passed 13, the largest tried) over 5 fresh programs, up to 120 steps (round 12: up to 41 were tried) | a window hard-coded to 8; the first step on the whole prompt; `taotp.decode(..., window=True)`; a window one token short; right for 41 steps, then the last token repeated; ties broken by the last index; windows capped at 16, 64, 128 and 300 |
| 1.8 | `scramble_transformer(...)` leaves its inputs (and M) untouched, returns 5 pieces with new_tok_emb = tok_emb @ M and the same logits (1e-7) on 18 inputs for 6 (program, M) pairs of fresh programs; failures name the piece | M set to the identity in place; a right rewrite that mutates the caller's layers; only the embeddings; pos_emb, P, b2 or out_emb forgotten; M instead of M.T; pieces out of order |

Red team (classes of the verdict-protocol issue) for this chapter, and the mechanism that
refuses each: (1) an oracle table from NOT YET messages: hidden cases come from a new seed on
every check and their messages never print an expected token (`test_hidden_cases_*`);
(3) the package's answer handed back, called, copied or patched: switched off in the worker
(`refuse`), copies recognised in the answer's bytes, and the extras' own forward passes
(`taotp.train`, `taotp.export`, `taotp.interop`) cannot be imported
(`test_the_extras_forward_passes_are_switched_off`); (6) a work test that looks at one
length: a fresh length, and a ratio to the package's cache measured on the same run; a
sampler right only on the program or the temperatures the notebook shows: a fresh T from
0.7 to 1.4 on it, and a fresh program of its family at a fresh T from 2 to 3. Attacks on
the protocol itself (threads, patches, exits, memory) are in `test_verdict_protocol.py`.
"""
import types

import numpy as np
import pytest

import taotp
from checking import fails, never_names, passes, verdict
from solutions import answer
from taotp.exercises import ch01, check, draws
from taotp.model import layer_norm, softmax

CHECKED = ('1.3', '1.4', '1.6', '1.7', '1.8')
REF = {pid: answer(pid) for pid in CHECKED}

# garbage particular to Chapter 1's answers: token lists and logits of the wrong kind
EXTRA_GARBAGE = {pid: {'a function returning a ragged list': lambda *a, **k: [[1, 2], [3]],
                       'a function returning a 2-D token array': lambda *a, **k: [[0, 1]]}
                 for pid in CHECKED}


# ----------------------------------------------------------------------------- a forward pass of our own

def plain_softmax(scores):
    """exp(s) / sum exp(s), the max not taken off: NaN where exp overflows (red team, round 20)."""
    with np.errstate(all='ignore'):
        weights = np.exp(scores)
        return weights / weights.sum(-1, keepdims=True)


def eps_in_the_root(x, gamma=1.0, beta=0.0):
    """(x - mean) / sqrt(var + 1e-10): the book adds 1e-10 to the std (red team, round 22)."""
    centred = x - x.mean(-1, keepdims=True)
    return centred / np.sqrt((centred ** 2).mean(-1, keepdims=True) + 1e-10) * gamma + beta


def own_forward(tokens, params, dtype=np.float64, weights=softmax, hidden=-np.inf,
                norm=layer_norm):
    """The logits written with @ (no package forward pass), optionally in float32, with
    another softmax (``weights``), value for the masked scores (``hidden``) or layer norm."""
    cast = lambda a: np.asarray(a, dtype=dtype)  # noqa: E731
    x = cast(params['tok_emb'])[tokens] + cast(params['pos_emb'])[:len(tokens)]
    mask = np.tril(np.ones((len(x), len(x)), dtype=bool))
    for layer in params['layers']:
        h = norm(x, **layer['ln1'])
        update = np.zeros_like(x)
        for Q, K, V, P in zip(*(cast(layer[k]) for k in 'QKVP')):
            scores = (h @ Q) @ (h @ K).T / Q.shape[-1] ** 0.5
            update = update + weights(np.where(mask, scores, hidden)) @ (h @ V) @ P.T
        x = x + update
        h = norm(x, **layer['ln2'])
        x = x + np.maximum(h @ cast(layer['M1']) + cast(layer['b1']), 0) @ cast(layer['M2']) \
            + cast(layer['b2'])
    return norm(x, **params['lnf']) @ cast(params['out_emb']).T


def naive_loop(tokens, params, max_steps, eos=None, dtype=np.float64, padded=0):
    """The book's loop on our own forward pass; ``padded`` adds forward passes on the long runs
    so that the total grows no faster than linearly (the padding cheat of the curvature test)."""
    out = [int(t) for t in tokens]
    for _ in range(max_steps):
        out.append(int(np.argmax(own_forward(np.array(out), params, dtype)[-1])))
        if out[-1] == eos:
            break
    if max_steps >= 50:                  # only the long runs are timed
        for _ in range(max(0, padded - max_steps) // 2):
            own_forward(np.array(out), params, dtype)
    return out


def memoised(tokens, params, max_steps, eos=None, memo={}):
    key = (tuple(int(t) for t in tokens), max_steps, eos,      # the program's own bytes: two
           np.asarray(params['tok_emb']).tobytes())             # programs share a shape now
    if key not in memo:
        memo[key] = naive_loop(tokens, params, max_steps, eos)
    return memo[key]


def last_argmax(logits):
    """The argmax, ties broken by the last index (red team, round 26; np.argmax takes the
    first)."""
    logits = np.asarray(logits)
    return int(np.flatnonzero(logits == logits.max())[-1])


def wrong_cache(tokens, params, max_steps, eos=None, capacity=None, ignore_norms=False,
                values_like_keys=False, weights=softmax, pick=np.argmax):
    """A KV-cache decoder with one of five bugs: a ring of ``capacity`` positions, layer
    norms without their gamma and beta, value buffers as wide as the keys, another softmax
    (``weights``), or another argmax (``pick``)."""
    out = [int(t) for t in tokens]
    cap = capacity or len(out) + max_steps
    layers = params['layers']
    norm = (lambda x, ln: layer_norm(x)) if ignore_norms else (lambda x, ln: layer_norm(x, **ln))
    keys = [np.zeros((len(lay['K']), cap, lay['K'].shape[2])) for lay in layers]
    values = [np.zeros((len(lay['V']), cap, (lay['K'] if values_like_keys else lay['V']).shape[2]))
              for lay in layers]
    seen, x = 0, None
    for _ in range(max_steps):
        for t in range(seen, len(out)):
            x = params['tok_emb'][out[t]] + params['pos_emb'][t]
            for layer, K, V in zip(layers, keys, values):
                h = norm(x, layer['ln1'])
                K[:, t % cap], V[:, t % cap] = h @ layer['K'], h @ layer['V']
                q, m = h @ layer['Q'], min(t + 1, cap)
                w = weights((K[:, :m] @ q[:, :, None])[..., 0] / np.sqrt(layer['Q'].shape[-1]))
                heads = (w[:, None, :] @ V[:, :m])[:, 0]
                x = x + sum(P @ v for P, v in zip(layer['P'], heads))
                h = norm(x, layer['ln2'])
                x = x + np.maximum(h @ layer['M1'] + layer['b1'], 0) @ layer['M2'] + layer['b2']
        seen = len(out)
        out.append(int(pick(norm(x, params['lnf']) @ params['out_emb'].T)))
        if out[-1] == eos:
            break
    return out


copied_decode = types.FunctionType(taotp.decoding.decode.__code__, taotp.decoding.__dict__,
                                   'my_decode', taotp.decoding.decode.__defaults__)


# ----------------------------------------------------------------------------- 1.3

def lean_naive(tokens, params, max_steps, eos=None):
    """The naive loop at its leanest: float32, every head of a layer in one einsum."""
    f32 = {k: np.asarray(v, np.float32) for k, v in params.items() if k not in ('layers', 'lnf')}
    layers = [{k: (v if k.startswith('ln') else np.asarray(v, np.float32))
               for k, v in lay.items()} for lay in params['layers']]
    out = [int(t) for t in tokens]
    for _ in range(max_steps):
        n = len(out)
        x = f32['tok_emb'][out] + f32['pos_emb'][:n]
        mask = np.tril(np.ones((n, n), dtype=bool))
        for lay in layers:
            h = layer_norm(x, **lay['ln1'])
            q, k, v = (np.einsum('nd,hdk->hnk', h, lay[w]) for w in 'QKV')
            a = softmax(np.where(mask, q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1]), -np.inf))
            x = x + np.einsum('hnk,hdk->nd', a @ v, lay['P'])
            h = layer_norm(x, **lay['ln2'])
            x = x + np.maximum(h @ lay['M1'] + lay['b1'], 0) @ lay['M2'] + lay['b2']
        out.append(int(np.argmax(layer_norm(x[-1], **params['lnf']) @ f32['out_emb'].T)))
        if out[-1] == eos:
            break
    return out


WORK = ('the work of a cache', 'took your decode')        # over the ratio, or over the limit
CHEATS_1_3 = {
    'a naive loop of our own': (naive_loop, WORK),
    'a naive loop in float32': (lambda t, p, m, e=None: naive_loop(t, p, m, e, np.float32), WORK),
    'the leanest naive loop (float32, heads batched)': (lean_naive, WORK),
    'a naive loop padded to grow linearly':
        (lambda t, p, m, e=None: naive_loop(t, p, m, e, padded=700), WORK),
    'a memoised naive loop': (memoised, WORK),
    'a ring of 32 positions': (lambda *a: wrong_cache(*a, capacity=32),
                               ('your token at position',)),
    'a ring of 640 positions (red team, round 17: no run past about 610 positions was read '
    'at every position)': (lambda *a: wrong_cache(*a, capacity=640),
                           ('a prompt of', 'your token at position')),
    'a ring of the last 1,000 positions (red team, round 25: passed 7 checks in 12)':
        (lambda *a: wrong_cache(*a, capacity=1000), ('token_copier(',)),
    'a ring of 2,042 positions, the most that the block of 2,048 read at position 4 refuses':
        (lambda *a: wrong_cache(*a, capacity=2042), ('token_copier(',)),
    'layer norms without gamma and beta': (lambda *a: wrong_cache(*a, ignore_norms=True),
                                           ('not right',)),
    'values as wide as the keys': (lambda *a: wrong_cache(*a, values_like_keys=True),
                                   ('heads [0, 3]',)),
    'a softmax without the max taken off (red team, round 20: every score was small)':
        (lambda *a: wrong_cache(*a, weights=plain_softmax), ('sharp attention',)),
    'ties broken by the last index (red team, round 26: passed 10 checks in 10)':
        (lambda *a: wrong_cache(*a, pick=last_argmax), ('tied logits',)),
    'eos = 0 read as no eos, `if eos and ...` (round 23: passed 1 check in 9)':
        (lambda t, p, m, e=None: wrong_cache(t, p, m, e or None), ('eos 0',)),
    'taotp.decode itself': (lambda t, p, m, e=None: taotp.decode(t, p, m, e),
                            ('taotp.decoding.decode is switched off',)),
    'taotp.transformer in a loop':
        (lambda t, p, m, e=None: [*t, *(int(np.argmax(taotp.transformer(list(t), **p)[-1]))
                                        for _ in range(m))], ('is switched off',)),
    'a copy of taotp.decode\'s code': (lambda t, p, m, e=None: copied_decode(t, p, m, e),
                                       ('copy of the code of taotp.decoding.decode',)),
}


# Each naive loop runs the check's long decode (5-10 s); one stays in the default tier,
# its variants run in the slow one.
SLOW_1_3 = {'a naive loop in float32', 'a naive loop padded to grow linearly',
            'a memoised naive loop', 'the leanest naive loop (float32, heads batched)'}


@pytest.mark.parametrize('label', [pytest.param(label, marks=pytest.mark.slow)
                                   if label in SLOW_1_3 else label for label in CHEATS_1_3])
def test_1_3_cheats_fail(label):
    make, words = CHEATS_1_3[label]
    result = fails('1.3', make)
    assert any(w in result.message for w in words), result.message


def test_1_3_copier_repeats_the_token_at_its_position_past_any_ring():
    rng = np.random.default_rng(12)
    for vocab, position in ((3, 0), (5, 4), (8, 8)):      # 32 or more before the end
        prompt = rng.integers(0, vocab - 1, size=41).tolist()
        prompt[position] = vocab - 1
        params = ch01.token_copier(vocab, 64, position)
        assert taotp.decode(prompt, params, 23, cache=False).tolist()[41:] == [vocab - 1] * 23
        assert wrong_cache(prompt, params, 23, capacity=32)[41] != vocab - 1


def keeps_first_and_last(keep):
    """Round 13: a right cache, but for prompts over 32 tokens it keeps only position 0 and
    the last ``keep`` (the copier of position 0 could not tell)."""
    def decode_fast(tokens, params, max_steps, eos=None):
        if len(tokens) <= 32:
            return REF['1.3'](tokens, params, max_steps, eos)
        tokens = [int(t) for t in tokens]
        kept = REF['1.3'](tokens[:1] + tokens[-keep:], params, max_steps, eos)
        return tokens + kept[1 + keep:]
    return decode_fast


def test_1_3_a_cache_that_drops_the_middle_of_a_long_prompt_fails():
    fails('1.3', keeps_first_and_last(31), 'token_copier(', 'your token at position')


def test_1_3_hidden_cases_never_print_the_expected_tokens():
    result = fails('1.3', lambda *a: wrong_cache(*a, ignore_norms=True), 'case_programs(')
    seed = int(result.message.split('case_programs(')[1].split(')')[0])
    program = int(result.message.split('program ')[1].split()[0])
    params = ch01.case_programs(seed)[program]
    prompt = eval(result.message.split('prompt ')[1].split(', max_steps')[0])
    steps = int(result.message.split('max_steps ')[1].split(',')[0])
    eos = result.message.split('eos ')[1].split(':')[0]
    want = taotp.decode(prompt, params, max_steps=steps, eos=None if eos == 'None' else int(eos),
                        cache=False).tolist()
    never_names(result, want)                     # the seed rebuilds the case, the text hides it


def test_1_3_cases_are_new_on_every_check():
    seeds = {fails('1.3', lambda *a: wrong_cache(*a, ignore_norms=True)).message
             .split('case_programs(')[1].split(')')[0] for _ in range(2)}
    assert len(seeds) == 2


# ----------------------------------------------------------------------------- 1.4

def no_scale(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    unscaled = [{**layer, 'Q': layer['Q'] * layer['Q'].shape[-1] ** 0.5} for layer in layers]
    return REF['1.4'](tokens, tok_emb, pos_emb, out_emb, unscaled, lnf)


def from_the_references_parts(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    """The loop reference's own attention, MLP and norm, assembled (red team, round 7)."""
    from taotp.reference import _attention, _mlp, _normalise
    xs = (np.asarray(tok_emb)[np.asarray(tokens)] + np.asarray(pos_emb)[:len(tokens)]).tolist()
    for layer in layers:
        g = {k: np.asarray(layer[k]).tolist() for k in ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2')}
        update = _attention([_normalise(x, layer['ln1'], 'layer') for x in xs], g['Q'], g['K'],
                            g['V'], g['P'])
        xs = [[a + b for a, b in zip(x, u)] for x, u in zip(xs, update)]
        xs = [[a + b for a, b in zip(x, _mlp(_normalise(x, layer['ln2'], 'layer'), g['M1'],
                                              g['b1'], g['M2'], g['b2']))] for x in xs]
    return np.array([_normalise(x, lnf, 'layer') for x in xs]) @ np.asarray(out_emb).T


def final_norm_in_the_last_layer(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    """lnf applied only after a last layer: wrong on a program without layers (round 9)."""
    if layers:
        return REF['1.4'](tokens, tok_emb, pos_emb, out_emb, layers, lnf)
    return (np.asarray(tok_emb)[np.asarray(tokens)] + np.asarray(pos_emb)[:len(tokens)]) \
        @ np.asarray(out_emb).T


def mask_made_once(size):
    """A forward pass whose causal mask is made once, at ``size`` x ``size``, and cut to the
    input (red team, round 25: at 256, it passed 6 checks in 10): it breaks past ``size``."""
    made = np.tril(np.ones((size, size), dtype=bool))

    def transformer_at(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
        n = len(tokens)
        x = tok_emb[tokens] + pos_emb[:n]
        for layer in layers:
            h = layer_norm(x, **layer['ln1'])
            for Q, K, V, P in zip(layer['Q'], layer['K'], layer['V'], layer['P']):
                scores = (h @ Q) @ (h @ K).T / Q.shape[-1] ** 0.5
                x = x + softmax(np.where(made[:n, :n], scores, -np.inf)) @ (h @ V) @ P.T
            h = layer_norm(x, **layer['ln2'])
            x = x + np.maximum(h @ layer['M1'] + layer['b1'], 0) @ layer['M2'] + layer['b2']
        return layer_norm(x, **lnf) @ out_emb.T
    return transformer_at


def ignores_norms(tokens, tok_emb, pos_emb, out_emb, layers, lnf):
    plain = [{**layer, 'ln1': {}, 'ln2': {}} for layer in layers]
    return REF['1.4'](tokens, tok_emb, pos_emb, out_emb, plain, {})


CHEATS_1_4 = {
    'taotp.transformer': (taotp.transformer, 'taotp.decoding.transformer is switched off'),
    'the loop reference': (taotp.reference.naive_transformer, 'switched off'),
    "the loop reference's parts (round 7)":
        (from_the_references_parts, 'taotp.reference._normalise is switched off'),
    'a rewrite that calls np.einsum':
        (lambda *a, **k: np.einsum('nv->nv', REF['1.4'](*a, **k)), 'numpy.einsum is switched'),
    'layer-norm gamma and beta ignored': (ignores_norms, 'of your logits is off'),
    'no 1/sqrt(d_head)': (no_scale, 'of your logits is off'),
    'the final norm only after a last layer (round 9)':
        (final_norm_in_the_last_layer, '(0 layers, heads [])'),
    'right only up to 32 tokens (red team, round 17: a causal mask fixed at 32 x 32 passed)':
        (lambda tokens, **p: np.concatenate([REF['1.4'](tokens, **p)[:32],
                                             np.zeros((max(0, len(tokens) - 32),
                                                       len(p['out_emb'])))]), 'long_program('),
    'a causal mask made once at 256 x 256 (red team, round 25: passed 6 checks in 10)':
        (mask_made_once(256), 'long_program('),
    'a causal mask made once at 400 x 400, the top of the drawn block':
        (mask_made_once(400), 'long_program('),
    'a softmax without the max taken off (red team, round 20: every score was small)':
        (lambda tokens, **p: own_forward(tokens, p, weights=plain_softmax), 'sharp attention'),
    'a causal mask of -1e9 in place of -inf (round 20)':
        (lambda tokens, **p: own_forward(tokens, p, hidden=-1e9), 'sharp attention'),
    'the layer norm\'s 1e-10 inside the square root (round 22: every stream spread about 1)':
        (lambda tokens, **p: own_forward(tokens, p, norm=eps_in_the_root), 'case_programs('),
}


@pytest.mark.parametrize('label', CHEATS_1_4)
def test_1_4_cheats_fail(label):
    make, words = CHEATS_1_4[label]
    fails('1.4', make, words)


@pytest.mark.parametrize('imported', ['with the answer', 'in its body'])
def test_1_4_torch_einsum_fails(imported):
    """Red team, round 26: with only NumPy's einsum off, a rewrite through torch.einsum passed
    8 checks in 10; torch is refused while 1.4 is checked, whether the answer holds the module
    (the worker used to load torch for such an answer) or imports it when called."""
    torch = pytest.importorskip('torch')

    def held(tokens, **p):
        return torch.einsum('nv->nv', torch.from_numpy(REF['1.4'](tokens, **p))).numpy()

    def imports(tokens, **p):
        import torch
        return torch.einsum('nv->nv', torch.from_numpy(REF['1.4'](tokens, **p))).numpy()
    fails('1.4', held if imported == 'with the answer' else imports,
          'torch is switched off', "other libraries' einsum is switched off")


# ----------------------------------------------------------------------------- 1.6

def naive_softmax(tokens, params, max_steps, temperature, rng):
    """exp(logits / T) without the max taken off, and the argmax where that overflows (as
    it does at the greedy check's T): right wherever the logits are small."""
    out = [int(t) for t in tokens]
    for _ in range(max_steps):
        logits = taotp.transformer(np.array(out), **params)[-1]
        with np.errstate(over='ignore', invalid='ignore'):
            weights = np.exp(logits / temperature)
            law = weights / weights.sum()
        out.append(int(rng.choice(len(law), p=law)) if np.all(np.isfinite(law)) else
                   int(np.argmax(logits)))
    return out


def top_k(k):
    def sample_decode(tokens, params, max_steps, temperature, rng):
        out = [int(t) for t in tokens]
        for _ in range(max_steps):
            logits = taotp.transformer(np.array(out), **params)[-1] / temperature
            top = np.argsort(logits)[-k:]
            out.append(int(rng.choice(top, p=softmax(logits[top]))))
        return out
    return sample_decode


def greedy_after(k):
    def sample_decode(tokens, params, max_steps, temperature, rng):
        out = list(REF['1.6'](tokens, params, min(k, max_steps), temperature, rng))
        for _ in range(max_steps - min(k, max_steps)):
            out.append(int(np.argmax(taotp.transformer(np.array(out), **params)[-1])))
        return out
    return sample_decode


def wrong_past(threshold, above=True, flat=False):
    """Right on one side of ``threshold``, and past it (above it, or below) greedy, or with
    ``flat`` uniform over the vocabulary (red team, round 25: greedy above T = 3 passed)."""
    def sample_decode(tokens, params, max_steps, temperature, rng):
        if (temperature > threshold) != above:
            return REF['1.6'](tokens, params, max_steps, temperature, rng)
        if not flat:
            return greedy_after(0)(tokens, params, max_steps, temperature, rng)
        return [int(t) for t in tokens] + rng.integers(0, len(params['tok_emb']),
                                                       max_steps).tolist()
    return sample_decode


def prompt_law_throughout(tokens, params, max_steps, temperature, rng):
    probs = softmax(taotp.transformer(np.array(tokens), **params)[-1] / temperature)
    return list(tokens) + [int(rng.choice(len(probs), p=probs / probs.sum()))
                           for _ in range(max_steps)]


def mixed_laws(per_run=False, factor=3.0):
    """Red team, round 5: draw from T / factor or factor * T (per run, or per step weighted so
    that the score of T has no drift, the first step right); the averages match the law."""
    def sample_decode(tokens, params, max_steps, temperature, rng):
        if temperature < 1e-3:                          # greedy there, as it must be
            return REF['1.6'](tokens, params, max_steps, temperature, rng)
        out, sharp = [int(t) for t in tokens], rng.random() < 0.5
        for step in range(max_steps):
            z = taotp.transformer(np.array(out), **params)[-1]
            if per_run:
                law = softmax(z / (temperature / factor if sharp else temperature * factor))
            elif step == 0:
                law = softmax(z / temperature)
            else:
                laws = [softmax(z / (temperature / factor)), softmax(z / (temperature * factor))]
                y = z - softmax(z / temperature) @ z
                drift = [law @ y for law in laws]
                w = -drift[1] / (drift[0] - drift[1])
                law = w * laws[0] + (1 - w) * laws[1]
            out.append(int(rng.choice(len(z), p=law / law.sum())))
        return out
    return sample_decode


def only_the_temperatures_shown(tokens, params, max_steps, temperature, rng):
    shown = temperature < 1e-3 or temperature in (0.5, 1.0, 2.0)
    return REF['1.6'](tokens, params, max_steps, temperature if shown else 3 * temperature, rng)


CHEATS_1_6 = {
    'a temperature per run, T / 3 or 3 T (red team, round 5)':
        (mixed_laws(per_run=True, factor=3.0), 'a right sampler stays within'),
    'sharp and flat draws mixed with no drift (red team, round 5)':
        (mixed_laws(factor=5.0), 'a right sampler stays within'),
    'right only at the temperatures the notebook names (red team, round 5)':
        (only_the_temperatures_shown, 'a right sampler stays within'),
    'the first token sampled, then greedy': (greedy_after(1), 'token'),
    'greedy after 4 sampled steps': (greedy_after(4), 'token'),
    'taotp.decode with a temperature':
        (lambda t, p, m, T, r: taotp.decode(t, p, m, temperature=T, rng=r), 'switched off'),
    'the prompt\'s law at every step': (prompt_law_throughout, 'sampling is greedy'),
    'T ignored (except near 0)':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T if T < 0.01 else 1.0, r), 'at temperature'),
    'a fresh global generator':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T, np.random.default_rng()),
         'draw from the rng you are given'),
    'the generator reseeded on every call':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T, np.random.default_rng(0)), 'token'),
    'the prompt dropped': (lambda t, p, m, T, r: REF['1.6'](t, p, m, T, r)[len(t):],
                           'expected the prompt followed by 6 token ids'),
    'T a quarter too high (red team, round 4: passed the frequency margins)':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, 1.25 * T, r), 'a right sampler stays within'),
    'T a fifth too low':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, 0.8 * T, r), 'a right sampler stays within'),
    'T squared': (lambda t, p, m, T, r: REF['1.6'](t, p, m, T * T, r), 'at temperature 0.'),
    'right only at T <= 1e-3 and T >= 0.5 (red team, round 7)':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T if T < 1e-2 or T >= 0.5 else 1.0, r),
         'a right sampler stays within'),
    'a hidden generator except at T = 1 (red team, round 12: reproducibility was tried at T = 1)':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T, r if T == 1.0 else np.random.default_rng()),
         'draw from the rng you are given'),
    'greedy unless the vocabulary is 4 (red team, round 12: every law test had vocabulary 4)':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T, r) if len(p['tok_emb']) == 4
         else greedy_after(0)(t, p, m, T, r), 'taotp.exercises.ch01.fresh_sampling_program('),
    'greedy past the 10th token (red team, round 12: every law test had 10 tokens)':
        (lambda t, p, m, T, r: greedy_after(10 - len(t))(t, p, m, T, r),
         'taotp.exercises.ch01.fresh_sampling_program('),
    'greedy below T = 0.05 (red team, round 13: no T from 1e-3 to 0.05 was sampled)':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T, r) if T >= 0.05 else greedy_after(0)(
            t, p, m, T, r), 'taotp.exercises.ch01.fresh_sampling_program('),
    'the 8 likeliest tokens only (red team, round 13: no vocabulary over 7 was sampled)':
        (lambda t, p, m, T, r: top_k(8)(t, p, m, T, r),
         'taotp.exercises.ch01.fresh_sampling_program('),
    'the 16 likeliest tokens only (red team, round 17: no vocabulary over 16 was sampled)':
        (lambda t, p, m, T, r: top_k(16)(t, p, m, T, r),
         'taotp.exercises.ch01.fresh_sampling_program('),
    'greedy below T = 0.0015 (red team, round 17: no spread law was sampled below T = 0.002)':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T, r) if T >= 0.0015 else greedy_after(0)(
            t, p, m, T, r), 'taotp.exercises.ch01.fresh_sampling_program('),
    'a softmax that does not subtract the max, argmax where it overflows (red team, round 19)':
        (naive_softmax, 'fresh_sampling_program('),
    'greedy below T = 1e-4 (passed 3 checks in 8 while the coldest T was 1e-5 to 1e-3)':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T, r) if T >= 1e-4 else greedy_after(0)(
            t, p, m, T, r), 'a right sampler stays within'),
    'greedy below T = 1e-299, just above the smallest T the statement allows':
        (wrong_past(1e-299, above=False), 'a right sampler stays within'),
    'greedy above T = 3 (red team, round 25: no T above 3 was tried; it passed 12 checks in 12)':
        (wrong_past(3.0), 'a right sampler stays within'),
    'greedy above T = 1e299, just below the largest T the statement allows':
        (wrong_past(1e299), 'a right sampler stays within'),
    'uniform draws above T = 1e299': (wrong_past(1e299, flat=True), 'a right sampler stays within'),
    'right only on the program the notebook shows (red team, class 6)':
        (lambda t, p, m, T, r: REF['1.6'](t, p, m, T, r) if p['tok_emb'].shape == (4, 8)
         and len(p['pos_emb']) == 10 else greedy_after(0)(t, p, m, T, r),
         'taotp.exercises.ch01.fresh_sampling_program('),
}


# A cheat that reaches the law tests runs the whole check (5 to 10 s): they run in the slow
# tier (the default tier's budget; the 1.25 T one also passes about one check in 90).
SLOW_1_6 = {'T a quarter too high (red team, round 4: passed the frequency margins)',
            'a temperature per run, T / 3 or 3 T (red team, round 5)',
            'sharp and flat draws mixed with no drift (red team, round 5)',
            'right only at the temperatures the notebook names (red team, round 5)',
            'T a fifth too low', 'right only at T <= 1e-3 and T >= 0.5 (red team, round 7)',
            'T squared', 'right only on the program the notebook shows (red team, class 6)',
            'greedy unless the vocabulary is 4 (red team, round 12: every law test had '
            'vocabulary 4)',
            'greedy past the 10th token (red team, round 12: every law test had 10 tokens)',
            'greedy below T = 0.05 (red team, round 13: no T from 1e-3 to 0.05 was sampled)',
            'the 8 likeliest tokens only (red team, round 13: no vocabulary over 7 was sampled)',
            'the 16 likeliest tokens only (red team, round 17: no vocabulary over 16 was '
            'sampled)',
            'greedy below T = 0.0015 (red team, round 17: no spread law was sampled below T = '
            '0.002)',
            'a softmax that does not subtract the max, argmax where it overflows (red team, '
            'round 19)',
            'greedy below T = 1e-4 (passed 3 checks in 8 while the coldest T was 1e-5 to 1e-3)',
            'greedy below T = 1e-299, just above the smallest T the statement allows',
            'greedy above T = 3 (red team, round 25: no T above 3 was tried; it passed 12 checks '
            'in 12)',
            'greedy above T = 1e299, just below the largest T the statement allows',
            'uniform draws above T = 1e299'}


@pytest.mark.parametrize('label', [pytest.param(label, marks=pytest.mark.slow)
                                   if label in SLOW_1_6 else label for label in CHEATS_1_6])
def test_1_6_cheats_fail(label):
    make, words = CHEATS_1_6[label]
    fails('1.6', make, words)


def test_1_6_greedy_paths_have_no_near_ties():
    cases = ch01._greedy_cases(12345)
    assert len(cases) == len(ch01.SHAPES)
    for _, params, prompt in cases:
        seq = taotp.decode(prompt, params, max_steps=6, cache=False)
        top = np.sort(taotp.transformer(seq[:-1], **params)[2:], axis=-1)
        assert np.min(top[:, -1] - top[:, -2]) > ch01.GREEDY_GAP


def test_1_6_sampling_program_has_spread_laws_that_depend_on_the_context_and_on_t():
    params, start = ch01.sampling_program(), len(ch01.SAMPLING['prompt'])
    rng = np.random.default_rng(0)
    means = {}
    for temperature in (0.5, 1.0, 2.0):
        runs = np.array([taotp.decode(list(ch01.SAMPLING['prompt']), params, 8,
                                      temperature=temperature, rng=rng) for _ in range(200)])
        probs = softmax(taotp.transformer_batch(runs[:, :-1], params)[:, start - 1:] / temperature)
        assert probs.max(-1).mean() < 0.75            # no token dominates
        assert probs.std(0).mean() > 0.03             # the law moves with the context
        means[temperature] = probs.mean((0, 1))
    pooled = draws.hoeffding_margin(300 * 8, draws.tests_for(4, 8, 4))
    for temperature in (0.5, 2.0):                  # a sampler ignoring T is caught by the margin
        assert np.abs(means[temperature] - means[1.0]).max() > 1.3 * pooled


def test_1_6_fresh_sampling_programs_are_new_and_far_from_greedy_at_t_2():
    """Never the shown shape, and a greedy sampler strays past the per-step margin on every
    fresh program."""
    margin = draws.hoeffding_margin(ch01.SAMPLING['runs'],
                                    draws.tests_for(4, 12, ch01.COLD_VOCABS[1]))
    shapes, temperatures = set(), []
    for seed in range(20):
        params, prompt, steps, temperature = ch01.fresh_sampling_program(
            seed, *((1e-4, ch01.COLD_VOCABS) if seed % 2 == 0 else ()))
        vocab, block = len(params['tok_emb']), len(params['pos_emb'])
        assert vocab != 4 and block > 10 and len(prompt) + steps == block
        shapes.add((vocab, block, len(prompt)))
        temperatures.append(temperature)
        path = taotp.decode(prompt, params, max_steps=steps, cache=False)
        laws = softmax(taotp.transformer(path[:-1], **params)[len(prompt) - 1:] / temperature)
        assert 1 - laws.max() > margin, seed
    assert len(shapes) > 10 and min(temperatures) < 0.05 and max(temperatures) > 0.5


def test_1_6_deep_temperatures_fill_both_bands_and_every_slice_between():
    """A third of the runs in each band, the rest one per slice between: a sampler wrong past
    any T inside the range (greedy above 3 passed every check while no T above 3 was tried)
    is wrong on a whole band."""
    n = ch01.SAMPLING['deep'][0]
    third, (low, floor, ceiling, high) = n // 3, ch01.DEEP
    width = np.log10(ceiling / floor) / (n - 2 * third)         # the decades of one slice
    for seed in range(20):
        ts = ch01.deep_temperatures(np.random.default_rng(seed), n)
        assert len(ts) == n and low <= ts.min() and ts.max() <= high
        assert np.all(ts[:third] <= floor) and np.all(ts[third:2 * third] >= ceiling)
        assert np.all((floor <= ts[2 * third:]) & (ts[2 * third:] <= ceiling))
        assert np.diff(np.log10(np.sort(ts))).max() < 2 * width


def test_1_6_a_program_scaled_to_the_smallest_and_largest_t_keeps_its_law_in_float64():
    """The deep case scales out_emb by T from 1e-300 to 1e300: logits near 1e-300 are still
    normal floats and those near 1e300 stay finite, so softmax(logits / T) is the law at
    T = 1 to rounding."""
    made = ch01.SAMPLING['deep'][1]
    for seed in range(5):
        params, prompt, _, _ = ch01.fresh_sampling_program(seed, made, ch01.COLD_VOCABS)
        law = softmax(taotp.transformer(np.array(prompt), **params))
        for t in (*ch01.DEEP, 1e-150, 1e150):
            scaled = {**params, 'out_emb': params['out_emb'] * t}
            logits = taotp.transformer(np.array(prompt), **scaled)
            assert np.all(np.abs(logits) > 1e-307) and np.all(np.abs(logits) < 1e303)
            np.testing.assert_allclose(softmax(logits / t), law, rtol=1e-9, atol=1e-15)


def test_1_6_the_deep_programs_logits_stay_far_below_the_largest_float():
    """A logit is at most (max |gamma| sqrt(d_model) + |beta|) times the longest out_emb row:
    under 100 at T = 1, so the largest vocabulary's logits at T = 1e300 sum to under 1e305."""
    made = ch01.SAMPLING['deep'][1]
    for seed in range(100):
        params = ch01.fresh_sampling_program(seed, made, ch01.COLD_VOCABS)[0]
        lnf, d = params['lnf'], params['out_emb'].shape[1]
        stream = np.abs(lnf['gamma']).max() * np.sqrt(d) + np.linalg.norm(lnf['beta'])
        assert stream * np.linalg.norm(params['out_emb'], axis=1).max() < 100


def test_1_6_freedman_margin_covers_the_gaussian_tail_and_rounds_the_variance_up():
    n, tests = 2400, 149
    for variance in (1e-9, 10.0, 500.0, 2000.0):
        margin = draws.freedman_margin(variance, n, tests)
        low = draws.freedman_margin(variance / draws.GRID, n, tests)     # one grid step down
        assert margin >= np.sqrt(2 * np.log(2 * tests / ch01.ALPHA) * variance) and low <= margin


def test_1_6_martingale_steps_stay_within_1_of_their_means():
    """Freedman needs each step within 1 of its mean (one step of one run here)."""
    rng = np.random.default_rng(3)
    logits = 5 * rng.normal(size=(50, 8, 4))
    probs = softmax(logits / 0.7)
    drawn = rng.integers(0, 4, size=(50, 8))
    for i in range(50):
        sums, variances, count, mass = draws.martingales(logits[i:i + 1, :1], probs[i:i + 1, :1],
                                                         drawn[i:i + 1, :1])
        assert np.all(np.abs(sums) <= 1 + 1e-12) and np.all(variances <= 0.25 + 1e-12)
        assert count[:draws.BINS].sum() == 4 and np.isclose(mass.sum(), 1.0)


# ----------------------------------------------------------------------------- 1.7

def window_of(k, pick=np.argmax):
    def decode_window(tokens, params, n_steps):
        out = list(tokens)
        for _ in range(n_steps):
            out.append(int(pick(taotp.transformer(np.array(out[-k:]), **params)[-1])))
        return out
    return decode_window


def whole_prompt_first(tokens, params, n_steps):
    if not n_steps:
        return list(tokens)
    first = int(np.argmax(taotp.transformer(np.array(tokens), **params)[-1]))
    return REF['1.7'](list(tokens) + [first], params, n_steps - 1)


CHEATS_1_7 = {
    'a window of 8 tokens, hard-coded': (window_of(8), 'block_size 5'),
    'the first step on the whole prompt': (whole_prompt_first, 'block_size'),
    'taotp.decode(window=True)': (lambda t, p, n: taotp.decode(t, p, n, window=True),
                                  'switched off'),
    'a window one token short':
        (lambda t, p, n: window_of(max(1, len(p['pos_emb']) - 1))(t, p, n), 'your token at'),
    'a window capped at 16 tokens (red team, round 13: no block size over 13 was tried)':
        (lambda t, p, n: window_of(min(16, len(p['pos_emb'])))(t, p, n), 'your token at'),
    'a window capped at 64 tokens (red team, round 17: no block size over 64 was tried)':
        (lambda t, p, n: window_of(min(64, len(p['pos_emb'])))(t, p, n), 'token_copier(8, '),
    'a window capped at 128 tokens (red team, round 25: passed 5 checks in 10)':
        (lambda t, p, n: window_of(min(128, len(p['pos_emb'])))(t, p, n), 'token_copier(8, '),
    'a window capped at 300 tokens (red team, round 25: the top of the drawn block)':
        (lambda t, p, n: window_of(min(300, len(p['pos_emb'])))(t, p, n), 'token_copier(8, '),
    'ties broken by the last index (red team, round 26: passed 10 checks in 10)':
        (lambda t, p, n: window_of(len(p['pos_emb']), last_argmax)(t, p, n), 'tied logits'),
    'right for 41 steps, then the last token again (red team, round 12: never more tried)':
        (lambda t, p, n: (lambda out: out + out[-1:] * (n - 41))(REF['1.7'](t, p, min(n, 41))),
         'your token at'),
}


@pytest.mark.parametrize('label', CHEATS_1_7)
def test_1_7_cheats_fail(label):
    make, words = CHEATS_1_7[label]
    fails('1.7', make, words)


def test_1_7_never_prints_the_expected_tokens():
    result = fails('1.7', window_of(8), 'case_programs(')
    assert 'expected' not in result.message


# ----------------------------------------------------------------------------- 1.8

def rewrite(change):
    """The reference scramble, then ``change(new_pieces, old_pieces, M)`` applied to its result."""
    def scramble(tok_emb, pos_emb, out_emb, layers, lnf, M):
        old = [tok_emb, pos_emb, out_emb, layers, lnf]
        new = list(REF['1.8'](tok_emb, pos_emb, out_emb, layers, lnf, M))
        return change(new, old, M)
    return scramble


def in_place(new, old, M):
    for mine, theirs in zip(old[3], new[3]):
        mine.update(theirs)                  # the caller's layer dicts now hold the new weights
    return new[:3] + [old[3], new[4]]


def layers_with(key, value):
    def change(new, old, M):
        new[3] = [{**n, key: value(o, M)} for n, o in zip(new[3], old[3])]
        return new
    return change


def unturned_reads(new, old, M):
    """Q and K multiplied by M (which turns them further) instead of M.T (which undoes it)."""
    for key in ('Q', 'K'):
        new = layers_with(key, lambda o, M, key=key: np.einsum('de,hek->hdk', M, o[key]))(
            new, old, M)
    return new


def identity_in_place(tok_emb, pos_emb, out_emb, layers, lnf, M):
    M[:] = np.eye(len(M))
    return tok_emb, pos_emb, out_emb, layers, lnf


CHEATS_1_8 = {
    'M set to the identity in place': (identity_in_place, 'changed its input M in place'),
    'a right rewrite that mutates the caller\'s layers':
        (rewrite(in_place), 'changed its input layers'),
    'only the embeddings rotated': (lambda t, p, o, lay, f, M: (t @ M, p @ M, o @ M, lay, f),
                                    'layer 0: the attention weights'),
    'pos_emb forgotten': (rewrite(lambda n, o, M: [n[0], o[1], *n[2:]]), 'pos_emb: position rows'),
    'P forgotten': (rewrite(layers_with('P', lambda o, M: o['P'])),
                    'what the heads add to the stream'),
    'b2 forgotten': (rewrite(layers_with('b2', lambda o, M: o['b2'])),
                     "the MLP's update is not the rotated one"),
    'M instead of M.T on Q and K': (rewrite(unturned_reads), 'Q and K must undo'),
    'out_emb forgotten': (rewrite(lambda n, o, M: [n[0], n[1], o[2], *n[3:]]),
                          'out_emb compares each token'),
    'the pieces in the wrong order': (rewrite(lambda n, o, M: [n[0], n[1], n[2], n[4], n[3]]),
                                      'in the order tok_emb, pos_emb, out_emb, layers, lnf'),
}


@pytest.mark.parametrize('label', CHEATS_1_8)
def test_1_8_cheats_fail_with_a_message_about_the_piece(label):
    make, words = CHEATS_1_8[label]
    fails('1.8', make, words)


def test_scramble_transformer_refuses_matrices_that_break_layer_norm(rng):
    params = taotp.random_params(rng, d_model=4)
    args = [params[k] for k in ('tok_emb', 'pos_emb', 'out_emb', 'layers', 'lnf')]
    with pytest.raises(ValueError, match='must be an orthonormal 4x4 matrix'):
        REF['1.8'](*args, 2 * np.eye(4))
    reflection = np.eye(4)
    reflection[0, 0] = -1  # orthonormal, but moves the all-ones direction
    with pytest.raises(ValueError, match=r'must map \(1, ..., 1\) to itself'):
        REF['1.8'](*args, reflection)


def test_every_matrix_of_1_8_is_orthonormal_and_fixes_the_ones(rng):
    for d in (4, 6, 8):
        for _, M in ch01._matrices(d, rng, 0):
            np.testing.assert_allclose(M @ M.T, np.eye(d), atol=1e-12)
            np.testing.assert_allclose(np.ones(d) @ M, np.ones(d), atol=1e-12)
    assert np.linalg.det(ch01._matrices(6, rng, 0)[2][1]) == pytest.approx(-1)


# ----------------------------------------------------------------------------- shared

def test_options_are_refused():
    result = verdict('1.7', REF['1.7'], n_cases=1)
    assert not result and 'no option' in result.message and result.relaxed


def test_the_line_of_an_answer_that_raises_is_named():
    def decode_window(tokens, params, n_steps):
        out = list(tokens)
        return out[len(out) + 5]
    result = fails('1.7', decode_window, 'raised IndexError', 'line ')
    assert 'of decode_window' in result.message


def test_reflection_puzzles_have_no_checker():
    assert 'reflect puzzle with no checker' in check('1.1', None).message


def test_the_references_pass():
    for pid in ('1.4', '1.7', '1.8'):
        passes(pid, REF[pid])


def test_registry_lists_every_chapter_one_puzzle():
    ids = [p.id for p in ch01.PUZZLES]
    assert ids == [f'1.{i}' for i in range(1, 11)]
    assert {p.id for p in ch01.PUZZLES if p.kind == 'checked'} == set(CHECKED)


@pytest.mark.parametrize('puzzle', ['1.3', '1.4', '1.6', '1.7'])
def test_the_extras_forward_passes_are_switched_off(puzzle):
    """Red team, class 3: ``taotp.train.model.Model`` (PyTorch) computes the same logits; the
    worker refuses importing the extras' packages for the puzzles that ask for a forward pass
    or a decoder (no PyTorch is needed to see the refusal)."""
    def through_the_extras(*args, **kwargs):
        __import__('taotp.train.model')
    fails(puzzle, through_the_extras, 'taotp.train.model is switched off')
