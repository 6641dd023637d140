"""The programs Chapter 1's checkers run: random programs of every shape the chapter's
puzzles must handle (``case_programs``), 1.3's prompts for them (``decode_cases``), a
program that copies one position's token (``token_copier``), the long programs of 1.4, and
the sampling programs and temperatures of 1.6.  Named in the exercise notebook as
``taotp.exercises.ch01.<name>``."""
import numpy as np

from ..decoding import decode, transformer
from ..model import softmax
from ..params import base_layer, base_params


def _norm(rng, d, kind):
    if kind == 'vector':
        return {'gamma': 0.5 + rng.random(d), 'beta': 0.5 * rng.normal(size=d)}
    if kind == 'scalar':
        return {'gamma': float(0.5 + rng.random()), 'beta': float(0.5 * rng.normal())}
    return {'gamma': 1.0, 'beta': 0.0}


def random_program(rng, vocab, block, d_model, layers, norms='default', scale=1.0):
    """A random program; ``layers`` holds ``(n_heads, d_head, d_value, d_ff)`` per layer."""
    p = base_params(vocab, block, d_model)
    for key in ('tok_emb', 'pos_emb', 'out_emb'):
        p[key] = scale * rng.normal(size=p[key].shape)
    for n_heads, d_head, d_value, d_ff in layers:
        layer = base_layer(n_heads, d_model, d_ff, d_head)
        for key in ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2'):
            shape = (n_heads, d_model, d_value) if key in ('V', 'P') else layer[key].shape
            layer[key] = scale * rng.normal(size=shape)
        layer['ln1'], layer['ln2'] = _norm(rng, d_model, norms), _norm(rng, d_model, norms)
        p['layers'].append(layer)
    p['lnf'] = _norm(rng, d_model, norms)
    return p


SHAPES = (   # (vocab, d_model, layer norms, layers as (n_heads, d_head, d_value, d_ff))
    (7, 8, 'vector', ((2, 3, 3, 5), (2, 3, 3, 5))),
    (5, 6, 'scalar', ((3, 2, 2, 0),) * 3),
    (11, 12, 'default', ((1, 12, 12, 9),)),
    (2, 4, 'vector', ((0, 1, 1, 6), (3, 1, 4, 3))),       # a layer without heads; d_v != d_head
    (6, 5, 'vector', ()),                                  # no layers (Hello World's shape)
)
SHARP = ((3, 8), (12, 20))   # log10 of the factor on Q of each layer of the sharp program
FAINT = (-8, -6)             # log10 of the factor on the faint program's embeddings
SCOPE = ('5 random programs drawn afresh (0 to 3 layers, up to 3 heads, a layer without heads, '
         'd_value != d_head, d_ff = 0, vector and scalar layer norms)')
TIED = 'whose logits all tie (out_emb all zeros, so the argmax is token 0 at every step)'
HARD_SCOPE = SCOPE + (', a sixth with attention scores of 1e3 to 1e20, a seventh whose '
                       'stream spreads 1e-8 to 1e-6, an eighth ' + TIED)


def sharpened(params, rng):
    """``params`` with the Q of layer i scaled by 10 ** uniform(*SHARP[i]): scores as large as
    those of the book's hardened programs, so exp overflows unless the max is taken off, and
    a causal mask of -1e9 where -inf belongs lets later positions in (round 20: both passed
    1.3 and 1.4, the random programs' scores being small)."""
    for layer, (low, high) in zip(params['layers'], SHARP):
        layer['Q'] = layer['Q'] * 10 ** rng.uniform(low, high)
    return params


def case_programs(seed, norms=None, hard=True):
    """The programs of one check (``SHAPES``, block 24, weights from ``seed``), and with
    ``hard`` a sixth, of the first shape, ``sharpened``, a seventh, of the last (no
    layers), whose embeddings are scaled by 10 ** uniform(*FAINT), so that the layer norm's
    1e-10 counts (round 22: a norm with it inside the square root passed 3 checks in 5), and
    an eighth, of the first shape, with ``out_emb`` all zeros: every logit is exactly 0.0,
    whatever order a forward pass sums in, so the argmax is the first token, 0, at every step
    (round 26: a decoder that broke ties by the last index passed 1.3 and 1.7, no two logits
    ever being equal); the seed of a failed case is printed in its message."""
    rng = np.random.default_rng(seed)
    programs = [random_program(rng, vocab, 24, d, layers, norms or kind)
                for vocab, d, kind, layers in SHAPES]
    if hard:
        vocab, d, kind, layers = SHAPES[0]
        programs.append(sharpened(random_program(rng, vocab, 24, d, layers, norms or kind), rng))
        vocab, d, kind, layers = SHAPES[-1]
        faint = random_program(rng, vocab, 24, d, layers, norms or kind)
        for key in ('tok_emb', 'pos_emb'):
            faint[key] = faint[key] * 10 ** rng.uniform(*FAINT)
        programs.append(faint)
        vocab, d, kind, layers = SHAPES[0]
        tied = random_program(rng, vocab, 24, d, layers, norms or kind)
        tied['out_emb'] = np.zeros_like(tied['out_emb'])
        programs.append(tied)
    return programs


def decode_cases(params, rng):
    """1.3's prompts, step counts and eos for one program: boundaries first, then random."""
    vocab, block = len(params['tok_emb']), len(params['pos_emb'])
    full = rng.integers(0, vocab, size=block)
    first = int(decode(full[:2], params, max_steps=1, cache=False)[-1])
    cases = [([vocab - 1], block, None),              # one token in, fills the block
             (full.tolist(), 1, None),                # a full block in, one step
             (full[:3].tolist(), 0, None),            # no steps at all
             (full[:2].tolist(), block - 1, first)]   # eos is the very first token
    for _ in range(4):
        n = int(rng.integers(1, block))
        eos = int(rng.integers(0, vocab)) if rng.random() < 0.5 else None
        cases.append((rng.integers(0, vocab, size=n).tolist(),
                      int(rng.integers(1, block - n + 2)), eos))
    for _ in range(20):   # eos = 0, met on the way where 20 tries find a path that meets it
        prompt = rng.integers(0, vocab, size=int(rng.integers(1, block // 2))).tolist()
        path = [int(t) for t in decode(prompt, params, max_steps=block - len(prompt), cache=False)]
        if 0 in path[len(prompt) + 1:]:    # (round 23: `if eos and ...` passed 1 check in 9)
            break
    return cases + [(prompt, block - len(prompt), 0)]


LONG_BLOCK = (65, 400)   # 1.4's long program: a block drawn from this range, ...
TOP_BLOCK = 1024         # ... and a second one at the largest block the statement names


def long_program(seed, block=None):
    """The first shape of ``SHAPES`` with weights from ``seed``, at ``block`` or, when none is
    given, at a block drawn from ``seed`` in ``LONG_BLOCK`` (round 17: a forward pass with a
    causal mask fixed at 32 x 32 passed, no input being longer than 24 tokens; round 25: a
    mask made once at 256 x 256 passed 6 checks in 10, which the program at ``TOP_BLOCK``
    now refuses on every check)."""
    rng = np.random.default_rng(seed)
    vocab, d, kind, layers = SHAPES[0]
    size = int(rng.integers(LONG_BLOCK[0], LONG_BLOCK[1] + 1)) if block is None else block
    return random_program(rng, vocab, size, d, layers, kind)


def token_copier(vocab, block, position=0):
    """1 layer, 1 head, no MLP: every position attends to ``position`` (once it is in view),
    so the program emits the token there forever; a cache that drops that position emits
    something else.  In a sliding window, ``position`` 0 is the window's oldest token."""
    d_model = 2 * vocab + 2
    p = base_params(vocab, block, d_model)
    p['tok_emb'][:, :vocab] = np.eye(vocab)
    p['tok_emb'][:, vocab] = 1.0                          # on at every position: the query
    p['pos_emb'][position, vocab + 1] = 3.0               # the position's mark: the key
    layer = base_layer(1, d_model, 0, vocab)
    layer['Q'][0, vocab, 0] = layer['K'][0, vocab + 1, 0] = 6.0
    layer['V'][0, :vocab, :vocab] = np.eye(vocab)         # the attended token, copied ...
    layer['P'][0, vocab + 2:, :vocab] = 4.0 * np.eye(vocab)   # ... to the dimensions read out
    p['layers'].append(layer)
    p['out_emb'][:, vocab + 2:] = np.eye(vocab)
    return p


FRESH_VOCABS = (3, 9)      # a fresh program's vocabulary: from 3 to 9, never the shown 4 ...
COLD_VOCABS = (24, 64)     # ... or from 24 to 64
# 1.6's deep case: its bottom band (from the smallest T the statement allows) and its top
# band (up to the largest); float64 keeps the law at both ends (see ``deep_temperatures``)
DEEP = (1e-300, 2e-300, 5e299, 1e300)


def deep_temperatures(rng, n):
    """``n`` temperatures, one per run of 1.6's deep case: a third drawn log-uniformly in the
    bottom band of ``DEEP``, a third in its top band, the rest one in each of as many equal
    slices of the decades between the bands (6 decades a slice at the check's n = 300).  A
    sampler that goes greedy (or flat) below or above any T inside the range is wrong on a
    whole band.  History: greedy below T = 1e-4 passed 3 checks in 8 while the coldest T was
    1e-5 to 1e-3; greedy above T = 3 passed 12 checks in 12 while no T above 3 was tried.

    The top band is safe in float64: a logit is at most (max |gamma| sqrt(d_model) + |beta|)
    of the final norm times the longest row of out_emb, for the deep programs (scaled for
    T = 2.5) 15.4 at the most over 300 seeds (a test holds it under 100), so at T = 1e300
    every logit stays below 1e302, six decades under the largest float (1.8e308), and a sum
    over the 64 tokens of the largest vocabulary stays finite."""
    low, floor, ceiling, high = np.log10(DEEP)
    third = n // 3
    edges = np.linspace(floor, ceiling, n - 2 * third + 1)
    return 10 ** np.concatenate([rng.uniform(low, floor, third), rng.uniform(ceiling, high, third),
                                 rng.uniform(edges[:-1], edges[1:])])


def sampling_program():
    """1 layer, vocabulary 4, block 10: a next-token law that depends on the whole context
    (chosen among seeded programs so that the laws are spread: at T = 0.5 the likeliest
    token has about 0.7 on average, and they differ between temperatures)."""
    return random_program(np.random.default_rng(29), 4, 10, 8, ((2, 4, 4, 8),), 'vector',
                          scale=0.4)


def fresh_sampling_program(seed, T=None, vocab=FRESH_VOCABS, offset=0.0):
    """A program of ``sampling_program``'s family drawn from ``seed``, with its prompt, steps
    and temperature: ``(params, prompt, steps, T)``.  Never the shown shape: a vocabulary
    drawn from the range ``vocab`` (never 4), block 11 to 13, a prompt of 1 to 3 tokens and
    as many steps as fill the block (8 to 12), d_model 6 to 10; its laws at T = 2 are spread
    along the greedy path from the prompt (the likeliest token has under 0.7 at every step),
    so greedy decoding is far from them.  T is drawn from 2 to 3, or, given, the logits are
    scaled down so that the laws at ``T`` are those of T = 2 to 3 (round 13: a sampler greedy
    below T = 0.05 and one that kept the 8 likeliest tokens passed; round 17: greedy below
    0.0015, and the 16 likeliest).  ``offset`` is added to every logit (through the final
    norm's beta; then the vocabulary is at most d_model): the laws stay, exp(logits / T)
    overflows (round 19: a softmax that did not subtract the max passed)."""
    rng = np.random.default_rng(seed)
    while True:
        size = int(rng.integers(vocab[0], vocab[1] + 1))
        block, d_model = int(rng.integers(11, 14)), int(rng.integers(6, 11))
        prompt = rng.integers(0, size, size=int(rng.integers(1, 4))).tolist()
        if offset and size > d_model:            # the offset needs out_emb of full row rank
            continue
        params = random_program(rng, size, block, d_model, ((2, 4, 4, 8),), 'vector', scale=0.4)
        path = decode(prompt, params, max_steps=block - len(prompt), cache=False)
        laws = softmax(transformer(path[:-1], **params)[len(prompt) - 1:] / 2.0)
        if size != 4 and laws.max() < 0.7:
            spread = rng.uniform(2, 3)              # the laws are those of T = spread
            if offset:                              # beta moved so out_emb @ beta grows by
                shift = np.linalg.lstsq(params['out_emb'], np.full(size, offset), rcond=None)[0]
                params['lnf']['beta'] = params['lnf']['beta'] + shift   # offset for every token
            if T is None:
                return params, prompt, block - len(prompt), float(f'{spread:.3g}')
            params['out_emb'] = params['out_emb'] * (T / spread)
            return params, prompt, block - len(prompt), float(T)
