"""Checkers for Chapter 2, Hello World, and the NumPy harness of puzzle 2.3.

A Hello World answer is a params dict (ids from ``message_tokenizer(message)``) or a pair
``(params, tokenizer)`` whose tokenizer gives every symbol of the message its own id; its
one input is ``<bos>``, its expected output the statement itself.  The repeaters of 2.1
and 2.2 are built at the notebook's vocabulary sizes and at two drawn afresh.  The answer
to 2.6 is stored as a salted digest, never as a number.
"""
import numpy as np

from ..decoding import decode, last_token_argmax
# re-exported: 2.3's NumPy harness, ch02.train_hello_world (PyTorch's is in training.py)
from ..hello_world import (HELLO_WORLD, detokenize, hello_world_loss_and_grad,  # noqa: F401
                           hello_world_targets, message_tokenizer, train_hello_world)
from ..params import count_non0_params, count_params
from . import toolkit
from .registry import Puzzle, checker
from .result import Finding, Passed
from .training_checks import check_2_3

NO_REPEAT = 'Hel Word!'   # puzzle 2.4: the symbols H e l ␣ W o r d ! never repeat
VOCAB = len(message_tokenizer(HELLO_WORLD))                                  # 11 symbols
BLOCK = len(hello_world_targets(HELLO_WORLD, message_tokenizer(HELLO_WORLD)))   # 13 positions
# puzzles 2.1 and 2.2: the sizes the notebook names, from the smallest to a thousand ...
REPEATER_SIZES = (1, 2, 3, 4, 8, 11, 16, 32, 40, 64, 100, 128, 256, 257, 1000, 1001)
# 1001 = 7 * 11 * 13 (round 18: a circle that spread token t to 13 t mod V passed; every prime
# up to 13 divides a size); the powers of two, with POWERS_2_1 for 2.1, whose repeaters are
# small (round 23: a circle wrong at powers of two from 128 passed, and one wrong from 1,002
# to 1,024, which no draw reached)
POWERS_2_1 = (512, 1024)
HIDDEN_SIZES = 2          # ... and this many more drawn afresh from 5..1024 on every check,
LARGE_SIZES = (1024, 2048, 4096)  # and one from each band here, past each power of two (round
#   10: a program right up to 1,024 passed; round 17: one right up to 2,048, then the top; a
#   run of the suite: 1,001 to 2,048 let one right up to 1,024 pass 2 checks in 100)
# 2.1 also: a circle that puts token t at 2 pi (m t mod V) / V is right just when m and V are
# coprime; each prime from 17 to 61 divides one of these sizes (17 x 19, ..., 59 x 61), and a
# size drawn on each check is a multiple of a prime from 67 up (a stride of 17 or 31 passed
# most checks while only the sizes drawn afresh could share a factor with it)
PRIME_PAIRS_2_1 = (323, 667, 1147, 1763, 2491, 3599)
SIZES_SEEN = (f'vocab sizes {", ".join(map(str, REPEATER_SIZES))}, {HIDDEN_SIZES} more drawn '
              f'afresh from 5 to 1,024 and one from {LARGE_SIZES[0] + 1:,} to {LARGE_SIZES[1]:,}')


def _program_and_tokenizer(answer, message):
    """Split an answer into (params, tokenizer), both checked: every symbol of the message
    needs its own id (only <bos> and <eos> may share one, as in the ASCII tokenizer)."""
    if isinstance(answer, (tuple, list)) and len(answer) == 2 and isinstance(answer[1], dict):
        answer, given = answer
        needed = ['<bos>', '<eos>'] + sorted(set(message))
        if missing := [s for s in needed if s not in given]:
            raise Finding(f'your tokenizer has no id for {missing[0]!r}')
        tok = {s: given[s] for s in needed}
    else:
        given = tok = message_tokenizer(message)
    params = _one_pos_table(toolkit.program(answer), 'your params')
    vocab = len(params['tok_emb'])
    for s, i in tok.items():
        if not isinstance(i, (int, np.integer)) or isinstance(i, (bool, np.bool_)) \
                or not 0 <= i < vocab:
            raise Finding(f'your tokenizer maps {s!r} to {i!r}, not an id in 0..{vocab - 1} '
                          f'(rows of tok_emb)')
    tok = {s: int(i) for s, i in tok.items()}
    owner = {}
    for s, i in tok.items():
        if owner.setdefault(i, s) != s and {owner[i], s} != {'<bos>', '<eos>'}:
            raise Finding(f'your tokenizer gives {owner[i]!r} and {s!r} the same id {i}; every '
                          f'symbol of the message needs its own id (only <bos> and <eos> may '
                          f'share one)')
    names = {s: i for s, i in given.items() if s not in tok}     # other symbols, for messages
    return params, {**tok, **names}


def _one_pos_table(params, where):
    if isinstance(params['pos_emb'], list):
        raise Finding(f'{where}: pos_emb must be one (block_size, d_model) table; got a list of '
                      f'{len(params["pos_emb"])} tables')
    return params


def _expect_message(answer, message=HELLO_WORLD, norm='layer', rule=lambda params: None):
    """The params of ``answer`` once ``rule(params)`` (checked first) finds nothing wrong and
    decoding from <bos> prints ``message``; else a Finding naming the first wrong symbol."""
    params, tok = _program_and_tokenizer(answer, message)
    rule(params)
    want = hello_world_targets(message, tok).tolist()
    out = toolkit.run_program(lambda: decode(np.array([tok['<bos>']]), params, max_steps=len(want),
                                             eos=tok['<eos>'], norm=norm), on='<bos>')
    got = out[1:].tolist()
    if got != want:
        k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        try:
            shown = detokenize(out[1:], tok)
        except Exception:             # ids the tokenizer does not name
            shown = got
        raise Finding(f'decoding from <bos> printed {shown!r}; expected {message!r} then <eos> '
                      f'(first difference at output position {k})', got)
    return params


def _every_entry(answer, ok, rule):
    """Hello World whose every entry of the embeddings and layers is ``ok``: the params."""
    def every_entry_ok(params):
        arrays = [(key, params[key]) for key in ('tok_emb', 'pos_emb', 'out_emb')]
        arrays += [(f'layers[{i}][{key!r}]', layer[key]) for i, layer in enumerate(params['layers'])
                   for key in ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2')]
        for where, arr in arrays:
            if not np.all(ok(arr)):
                i = tuple(int(k) for k in np.argwhere(~ok(arr))[0])
                raise Finding(f'{where}{list(i)} = {arr[i]} {rule}')
    return _expect_message(answer, rule=every_entry_ok)


# ----------------------------------------------------------------------------- 2.1 and 2.2

def _sizes(rng, bands=1, powers=()):
    """The notebook's vocabulary sizes and ``powers``, then ``HIDDEN_SIZES`` others and one
    larger per band of ``LARGE_SIZES`` (the first ``bands``) drawn from ``rng``.  2.1 draws
    from both; 2.2's repeater may hold a vocab_size x vocab_size table, which past 2,048 costs
    seconds (and at 512 and 1,024 most of its check)."""
    others = np.setdiff1d(np.arange(5, 1025), REPEATER_SIZES + powers)
    hidden = sorted(int(v) for v in rng.choice(others, HIDDEN_SIZES, replace=False))
    hidden += [int(rng.integers(low + 1, high + 1)) for low, high in
               zip(LARGE_SIZES[:bands], LARGE_SIZES[1:bands + 1])]
    return [(v, f'vocab_size={v}') for v in REPEATER_SIZES + powers] + \
        [(v, f'vocab_size={v} (a size drawn afresh for this check)') for v in hidden]


def _prime_multiple(rng, low=67, top=None):
    """A size up to ``top`` (the largest band's) that a prime from ``low`` up divides: the
    prime drawn uniformly, then its multiple."""
    top = top or LARGE_SIZES[-1]
    sieve = np.ones(top + 1, dtype=bool)
    sieve[:2] = False
    for k in range(2, int(top ** 0.5) + 1):
        if sieve[k]:
            sieve[k * k::k] = False
    prime = int(rng.choice(np.flatnonzero(sieve[low:]) + low))
    return prime * int(rng.integers(1, top // prime + 1))


def _repeater(build, vocab, name, what, **limits):
    """The builder's program for ``vocab``: validated, 0 layers, within ``limits``."""
    params = _one_pos_table(toolkit.built(build, vocab, what=what, on=name, layers=0, **limits),
                            name)
    if len(params['tok_emb']) != vocab:
        raise Finding(f'{name}: tok_emb has {len(params["tok_emb"])} rows; expected {vocab}')
    return params


def _repeats_last(params, vocab, name, rng):
    """Every token is repeated, forever: with no layers and a zero pos_emb the next token
    depends on the last one only, so one prompt per token decides it; then a long decode.
    Past ``LARGE_SIZES[1]``, 256 tokens drawn from ``rng`` and the ends, one decode of 8
    steps."""
    block, large = len(params['pos_emb']), vocab > LARGE_SIZES[1]
    last = np.concatenate([[0, vocab - 1], rng.choice(vocab, 256, replace=False)]) if large \
        else rng.permutation(vocab)                        # every token last, once
    prompts = rng.integers(0, vocab, size=(len(last), 1 if large else min(block, 5)))
    prompts[:, -1] = last
    nxt = toolkit.run_program(lambda: last_token_argmax(prompts, params), on=name)
    bad = np.flatnonzero(nxt != prompts[:, -1])
    if len(bad):
        x = prompts[bad[0]].tolist()
        raise toolkit.wrong(f'{name}, prompt {x} (the next token)', int(nxt[bad[0]]),
                            'a repeater\'s next token is the last token of its prompt', x)
    steps = 8 if large else 2 * min(block, 16)
    for t in [int(last[-1])] if large else sorted({0, vocab - 1, int(rng.integers(vocab))}):
        out = toolkit.run_program(lambda: decode([t], params, max_steps=steps, window=True),
                                  on=name)
        if set(out.tolist()) != {t}:
            raise toolkit.wrong(f'{name}, prompt [{t}], {steps} decoding steps (sliding window)',
                                out.tolist(), 'the prompt\'s token must come out forever', [t])


def _zero_pos(params, where=''):
    pos = params['pos_emb']
    if np.any(pos != 0):
        i = tuple(int(k) for k in np.argwhere(pos != 0)[0])
        raise Finding(f'{where}pos_emb must be all zero; it holds {pos[i]} at {i}')


@checker('2.1')
def check_2_1(build):
    """``build(vocab_size) -> params``: 0 layers, at most 3 * vocab_size parameters, repeats."""
    rng = toolkit.fresh_rng()
    multiple = _prime_multiple(rng)
    for vocab, name in _sizes(rng, bands=2, powers=POWERS_2_1 + PRIME_PAIRS_2_1) + [
            (multiple, f'vocab_size={multiple} (a size drawn afresh for this check)')]:
        params = _repeater(build, vocab, name, 'your builder')
        _zero_pos(params, f'{name}: ')
        counts = count_params(params)
        used = counts['n_params'] - counts['pos_emb']
        if used > 3 * vocab:
            raise Finding(f'{name}: {used} parameters besides the zero pos_emb; the budget is '
                          f'3 * vocab_size = {3 * vocab}')
        _repeats_last(params, vocab, name, rng)
    pairs = ', '.join(f'{v:,}' for v in PRIME_PAIRS_2_1[:-1])
    return Passed(f'{SIZES_SEEN}, also 512, 1,024, {pairs} and {PRIME_PAIRS_2_1[-1]:,} (each '
                  f'prime from 17 to 61 divides one of them), one drawn afresh from '
                  f'{LARGE_SIZES[1] + 1:,} to {LARGE_SIZES[2]:,} and a multiple of a prime '
                  f'from 67 to {LARGE_SIZES[2]:,} drawn afresh: 0 '
                  f'layers, zero pos_emb, <= 3 * vocab_size other parameters '
                  f'(counted on the arrays as given, lists included); every token is repeated '
                  f'(one prompt per token decides it, since nothing else reaches the output; past '
                  f'{LARGE_SIZES[1]:,}, 256 tokens drawn afresh and the ends), also over 2 * '
                  f'block_size decoding steps (at most 32)')


@checker('2.2')
def check_2_2(answer):
    """``(build_repeater, hello_world)``: <= V non-zeros, and Hello World with <= V + B."""
    build, hello = toolkit.parts(answer, 2, 'expected a pair (your repeater builder, your Hello '
                                 'World params)')
    params = _expect_message(hello)
    measured = toolkit.budget(params, what='your Hello World', non_zero=VOCAB + BLOCK)
    rng, totals = toolkit.fresh_rng(), {}
    for vocab, name in _sizes(rng):
        repeater = _repeater(build, vocab, name, 'your repeater builder', non_zero=vocab)
        _repeats_last(repeater, vocab, name, rng)
        totals[vocab] = count_params(repeater)['n_params']
    return Passed(f'repeater at {SIZES_SEEN}, with <= vocab_size non-zeros (your totals, zeros '
                  f'included: {totals[11]:,} at 11, {totals[1000]:,} at 1000); Hello World '
                  f'printed with {measured["non_zero"]} non-zeros (budget {VOCAB} + {BLOCK} = '
                  f'{VOCAB + BLOCK}; your total: {count_params(params)["n_params"]:,} '
                  f'parameters); counted on the arrays as given, lists included')


# ----------------------------------------------------------------------------- 2.3 (harness only)

def trained_result(answer, message=HELLO_WORLD):
    """Result check for 2.3 (no verdict on size): does it print the message, and how big is it?"""
    try:
        params = _expect_message(answer, message)
    except Finding as f:
        return f'does not print {message!r} yet: {f.message}'
    return (f'prints {message!r} then <eos>; d_model {np.shape(params["tok_emb"])[1]}, '
            f'{len(params["layers"])} layers, {count_params(params)["n_params"]:,} parameters '
            f'({count_non0_params(params)["n_params"]:,} non-zero)')


# ----------------------------------------------------------------------------- 2.4 - 2.8

def _message_without_positions(answer, message):
    """Shared by 2.4 and 2.5: an all-zero pos_emb, and decoding prints ``message``."""
    params = _expect_message(answer, message, rule=_zero_pos)
    return Passed(f'pos_emb is all zero and decoding from <bos> prints {message!r} then <eos> '
                  f'({len(params["layers"])} layer(s), {count_params(params)["n_params"]:,} '
                  f'parameters)')


@checker('2.4')
def check_2_4(answer):
    """Print 'Hel Word!' (no repeated symbol) with an all-zero pos_emb."""
    return _message_without_positions(answer, NO_REPEAT)


@checker('2.5')
def check_2_5(answer):
    """Print 'Hello World!' with an all-zero pos_emb (repeated symbols need a layer)."""
    return _message_without_positions(answer, HELLO_WORLD)


# 2.6: the digest of the answer, and of counts that come from a known slip, with a hint each
# (``toolkit.digest('2.6', n)``); the hints never say what the answer is
DIGEST_2_6 = '78dfe7ad3383fda48c96927efa5d50f8905ed3e5e1e86bb8e73b0127a28326ca'
ASCII = (f'that counts the ASCII tokenizer\'s 256 symbols; the question uses the message '
         f'tokenizer ({VOCAB} symbols, {BLOCK} positions)')
SLIPS_2_6 = {
    '2808fdd4b1e0b23c67277312232b93a14e5993cbcdec550f4ae2c695439c14aa':
        'that is the layer-norm count (3 dimensions per row); RMSNorm does not centre: what '
        'does that free?',
    'dd01ed92485d09a66e14e0cefa4bd7409aecd514e261a5825726dc9d22c978e2':
        'that gives each row one dimension; RMSNorm of a single number is its sign (+1 or -1), '
        'so only two symbols could be told apart',
    '3bcb5b004433660b9f3f15cff92a6cbae94d5ac29eca2b0d45080b1c84611f69': ASCII,
    'e71518621bddb5a990dbb92a071aa3c3c6e6cc8c0acc40db82984bd5de24397a': ASCII,
}
HINT_2_6 = (f'count the entries of tok_emb and pos_emb (out_emb is tied, layer norms are not '
            f'counted) at the smallest d_model that keeps {VOCAB} symbols apart under RMSNorm')


@checker('2.6')
def check_2_6(answer):
    """The parameter count of Hello World under RMSNorm (a number), or such a program."""
    if isinstance(answer, (dict, tuple, list)):
        params = _expect_message(answer, norm='rms')
        n = count_params(params)['n_params']
        (vocab, d), block = params['tok_emb'].shape, len(params['pos_emb'])
        if not toolkit.same_digest('2.6', n, DIGEST_2_6):
            shape = (f'the question counts with the message tokenizer ({VOCAB} symbols, '
                     f'{BLOCK} positions)' if (vocab, block) != (VOCAB, BLOCK)
                     else 'how many dimensions does a tied 0-layer model need when the norm '
                          'does not centre?')
            raise Finding(f'your program prints Hello World under RMSNorm (norm="rms") with '
                          f'{n:,} parameters ({vocab} tokens, {block} positions, d_model {d}), '
                          f'which is not the smallest count RMSNorm allows; {shape}')
        return Passed(f'prints Hello World under RMSNorm (norm="rms") with {n} parameters '
                      f'(d_model {d}; counted on the arrays as given, lists included), the '
                      f'smallest count (compared with a salted digest of it)')
    if not isinstance(answer, (int, float)) or isinstance(answer, bool):
        raise Finding(f'expected a number of parameters (a plain int), or a params dict; got '
                      f'{toolkit.describe(answer)}')
    if (code := toolkit.digest('2.6', answer)) == DIGEST_2_6:
        return Passed(f'{toolkit.canonical(answer)} parameters: the smallest Hello World under '
                      f'RMSNorm with the message tokenizer ({VOCAB} symbols, {BLOCK} positions; '
                      f'compared with a salted digest of the answer)')
    raise Finding(f'{toolkit.canonical(answer)} is not it: {SLIPS_2_6.get(code, HINT_2_6)}')


@checker('2.7')
def check_2_7(answer):
    """Hello World whose every parameter is an integer."""
    params = _every_entry(answer, lambda arr: arr == np.round(arr), 'is not an integer')
    return Passed(f'every entry of the embeddings and layers is an integer (layer-norm gamma '
                  f'and beta are not parameters, as in the book\'s count) and the program prints '
                  f'{HELLO_WORLD!r} ({count_params(params)["n_params"]:,} parameters)')


@checker('2.8')
def check_2_8(answer):
    """Hello World whose every parameter is strictly positive (layer-norm gamma/beta excluded)."""
    _every_entry(answer, lambda arr: arr > 0, 'is not > 0 (zeros count as not positive)')
    return Passed(f'every entry of the embeddings and layers is > 0 (layer-norm gamma and beta '
                  f'are not parameters, as in the book\'s count) and the program prints '
                  f'{HELLO_WORLD!r}')


PUZZLES = [
    Puzzle('2.1', 'Repeat the last token forever (0 layers, <= 3 * vocab_size parameters)',
           'checked', check_2_1, budget='0 layers, 3 * vocab_size'),
    Puzzle('2.2', 'Sparse repeater (V non-zeros) and sparse Hello World (V + B non-zeros)',
           'checked', check_2_2, budget='V resp. V + B non-zeros'),
    Puzzle('2.3', 'Train a transformer to print "Hello World!"; how small can it be?', 'checked',
           check_2_3, 'none (the size is reported)'),
    Puzzle('2.4', "Print 'Hel Word!' with an all-zero pos_emb", 'checked', check_2_4,
           budget='pos_emb = 0'),
    Puzzle('2.5', "Print 'Hello World!' with an all-zero pos_emb", 'checked', check_2_5,
           budget='pos_emb = 0'),
    Puzzle('2.6', 'Parameter count with RMSNorm instead of layer norm', 'checked', check_2_6),
    Puzzle('2.7', 'Hello World with integer parameters only', 'checked', check_2_7),
    Puzzle('2.8', 'Hello World with positive parameters only', 'checked', check_2_8),
]
