"""Checkers for Chapter 2, Hello World, and the training harness of puzzle 2.3.

Hello World answers may be a params dict (ids from
``taotp.hello_world.message_tokenizer(message)``) or a pair ``(params, tokenizer)``
such as ``build_hello_world_transformer`` returns; a tokenizer must give every
symbol of the message its own id.  A submitted program is read once into plain
float64 arrays (``guard.frozen``), and that copy is counted, checked and run
on the one forward pass (``decode``, ``last_token_argmax``, ``forward``).
"""
import numpy as np

from ..decoding import decode, last_token_argmax
from ..hello_world import HELLO_WORLD, detokenize, hello_world_targets, message_tokenizer
from ..model import forward, layer_norm, softmax
from ..params import base_params, count_non0_params, count_params
from . import guard
from .registry import Puzzle, checker
from .result import Finding, Passed
from .training import check_2_3

NO_REPEAT = 'Hel Word!'   # puzzle 2.4: the symbols H e l ␣ W o r d ! never repeat
VOCAB, BLOCK = 11, 13     # Hello World with the message tokenizer: 11 symbols, 13 positions
# puzzles 2.1 and 2.2: every vocabulary size here, from the smallest to a thousand
REPEATER_SIZES = (1, 2, 3, 4, 11, 40, 64, 100, 257, 1000)


def program_of(answer, what='your params'):
    """A submitted program read once (``guard.frozen``) and validated; one pos_emb table."""
    params = guard.frozen(answer, what)
    if isinstance(params['pos_emb'], list):
        raise Finding(f'{what}: pos_emb must be one (block_size, d_model) table; got a list of '
                      f'{len(params["pos_emb"])} tables')
    return params


def _program_and_tokenizer(answer, message):
    """Split an answer into (params, tokenizer): the program read once, the tokenizer checked.

    Every symbol of the message needs its own id (only <bos> and <eos> may share one, as in
    the ASCII tokenizer), else "printing" the message would not spell it.
    """
    if isinstance(answer, (tuple, list)) and len(answer) == 2 and isinstance(answer[1], dict):
        answer, given = answer[0], dict(answer[1])           # read once
        needed = ['<bos>', '<eos>'] + sorted(set(message))
        missing = [s for s in needed if s not in given]
        if missing:
            raise Finding(f'your tokenizer has no id for {missing[0]!r}')
        tok = {s: given[s] for s in needed}
    else:
        given = tok = message_tokenizer(message)
    params = program_of(answer)
    vocab = len(params['tok_emb'])
    for s, i in tok.items():
        exact = type(i) is int or (isinstance(i, np.integer) and type(i).__module__ == 'numpy')
        if not exact or not 0 <= i < vocab:
            raise Finding(f'your tokenizer maps {s!r} to {i!r}, not an id in 0..{vocab - 1} '
                          f'(rows of tok_emb)')
    tok = {s: int(i) for s, i in tok.items()}
    names = {s: i for s, i in given.items() if s not in tok}     # other symbols, for messages
    owner = {}
    for s, i in tok.items():
        if i in owner and {owner[i], s} != {'<bos>', '<eos>'}:
            raise Finding(f'your tokenizer gives {owner[i]!r} and {s!r} the same id {i}; every '
                          f'symbol of the message needs its own id (only <bos> and <eos> may '
                          f'share one)')
        owner.setdefault(i, s)
    return params, {**tok, **names}


def _expect_message(params, tok, message, norm='layer'):
    """Decode from <bos>; raise a Finding naming the first wrong symbol."""
    want = hello_world_targets(message, tok).tolist()
    start = np.array([tok['<bos>']])
    out = guard.run_program(lambda: decode(start, params, max_steps=len(want), eos=tok['<eos>'],
                                           norm=norm), on='<bos>')
    got = out[1:].tolist()
    if got != want:
        k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        try:
            shown = detokenize(out[1:], tok)
        except Exception:             # ids the tokenizer does not name
            shown = got
        raise Finding(f'decoding from <bos> printed {shown!r}; expected {message!r} then <eos> '
                      f'(first difference at output position {k})', got)


def _all_arrays(params):
    yield 'tok_emb', params['tok_emb']
    yield 'pos_emb', params['pos_emb']
    yield 'out_emb', params['out_emb']
    for i, layer in enumerate(params['layers']):
        for key in ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2'):
            yield f'layers[{i}][{key!r}]', layer[key]


# ----------------------------------------------------------------------------- 2.1 and 2.2

def _repeater(build, vocab, what, **limits):
    """The builder's program for ``vocab``: read once, 0 layers, within ``limits``."""
    answer = guard.call(build, vocab, what=what, on=f'vocab_size={vocab}')
    params = program_of(answer, what=f'{what} for vocab_size={vocab}')
    if len(params['tok_emb']) != vocab:
        raise Finding(f'vocab_size={vocab}: tok_emb has {len(params["tok_emb"])} rows; expected '
                      f'{vocab}')
    guard.budget(params, what=f'{what} for vocab_size={vocab}', layers=0, **limits)
    return params


def _repeats_last(params, vocab, seed):
    """Every token is repeated, forever.

    With no layers and an all-zero pos_emb the next token depends on the last token only,
    so one prompt per token decides it; random prefixes and a long windowed decode show it.
    """
    block = len(params['pos_emb'])
    rng = np.random.default_rng(seed)
    length = min(block, 5)
    prompts = rng.integers(0, vocab, size=(vocab, length))
    prompts[:, -1] = np.arange(vocab)                      # every token last, once
    nxt = guard.run_program(lambda: last_token_argmax(prompts, params))
    bad = np.flatnonzero(nxt != prompts[:, -1])
    if len(bad):
        x = prompts[bad[0]].tolist()
        raise Finding(f'vocab_size={vocab}, prompt {x}: expected the next token {x[-1]}, '
                      f'got {int(nxt[bad[0]])}', x)
    steps = 2 * min(block, 16)
    for t in sorted({0, vocab - 1}):
        out = guard.run_program(lambda: decode([t], params, max_steps=steps, window=True))
        if set(out.tolist()) != {t}:
            raise Finding(f'vocab_size={vocab}, prompt [{t}]: decoding {steps} steps (sliding '
                          f'window) gave {out.tolist()}; expected {t} forever', [t])


def _zero_pos(params, where=''):
    pos = params['pos_emb']
    if np.any(pos != 0):
        i = tuple(int(k) for k in np.argwhere(pos != 0)[0])
        raise Finding(f'{where}pos_emb must be all zero; it holds {pos[i]} at {i}')


@checker('2.1')
def check_2_1(build):
    """``build(vocab_size) -> params``: 0 layers, at most 3 * vocab_size parameters, repeats."""
    for vocab in REPEATER_SIZES:
        params = _repeater(build, vocab, 'your builder')
        _zero_pos(params, f'vocab_size={vocab}: ')
        counts = count_params(params)
        used = counts['n_params'] - counts['pos_emb']
        if used > 3 * vocab:
            raise Finding(f'vocab_size={vocab}: {used} parameters besides the zero pos_emb; the '
                          f'budget is 3 * vocab_size = {3 * vocab}')
        _repeats_last(params, vocab, seed=vocab)
    return Passed(f'vocab sizes {", ".join(map(str, REPEATER_SIZES))}: 0 layers, zero pos_emb, '
                  f'<= 3 * vocab_size other parameters (counted on the arrays as given, lists '
                  f'included); every token is repeated (one prompt per token decides it, since '
                  f'nothing else reaches the output), also over 2 * block_size decoding steps '
                  f'(at most 32)')


@checker('2.2')
def check_2_2(answer):
    """``(build_repeater, hello_world)``: <= V non-zeros, and Hello World with <= V + B."""
    if not (isinstance(answer, (tuple, list)) and len(answer) == 2):
        raise Finding('expected a pair (your repeater builder, your Hello World params); got '
                      f'{type(answer).__name__}')
    build, hello = answer
    params, tok = _program_and_tokenizer(hello, HELLO_WORLD)
    _expect_message(params, tok, HELLO_WORLD)
    measured = guard.budget(params, what='your Hello World', non_zero=VOCAB + BLOCK)
    totals = []
    for vocab in REPEATER_SIZES:
        repeater = _repeater(build, vocab, 'your repeater builder', non_zero=vocab)
        _repeats_last(repeater, vocab, seed=100 + vocab)
        totals.append(count_params(repeater)['n_params'])
    sizes = dict(zip(REPEATER_SIZES, totals))
    return Passed(f'repeater at vocab sizes {", ".join(map(str, REPEATER_SIZES))} with <= '
                  f'vocab_size non-zeros (your totals, zeros included: {sizes[11]:,} at 11, '
                  f'{sizes[1000]:,} at 1000); Hello World printed with {measured["non_zero"]} '
                  f'non-zeros (budget {VOCAB} + {BLOCK} = {VOCAB + BLOCK}; your total: '
                  f'{count_params(params)["n_params"]:,} parameters); counted on the arrays as '
                  f'given, lists included')


# ----------------------------------------------------------------------------- 2.3 (harness only)

def hello_world_loss_and_grad(tok_emb, pos_emb, inputs, targets):
    """Cross-entropy of a tied 0-layer model and its gradients for tok_emb and pos_emb.

    The logits and the residual stream come from the one forward pass; the
    backward pass goes by hand through the tied output and the final layer norm.
    """
    record = []
    logits = forward(inputs, tok_emb, pos_emb, tok_emb, [], {}, record=record)
    x = record[-1]['final']                           # the stream before the final layer norm
    y = layer_norm(x)
    xc = x - x.mean(-1, keepdims=True)
    s = np.sqrt((xc ** 2).mean(-1, keepdims=True))
    r = s + 1e-10                                     # the book's epsilon, on the std
    probs = softmax(logits)
    n, d = y.shape
    loss = -np.log(probs[np.arange(n), targets] + 1e-300).mean()
    dz = probs.copy()
    dz[np.arange(n), targets] -= 1
    dz /= n
    d_tok = dz.T @ y                                   # through the tied output embedding
    dy = dz @ tok_emb
    dr = -(dy * xc).sum(-1, keepdims=True) / r ** 2
    dxc = dy / r + dr * xc / (d * s)
    dx = dxc - dxc.mean(-1, keepdims=True)
    d_pos = np.zeros_like(pos_emb)
    d_pos[:n] = dx
    np.add.at(d_tok, inputs, dx)
    return loss, d_tok, d_pos


def train_hello_world(d_model=3, steps=1500, lr=0.05, rng=None, message=HELLO_WORLD):
    """Train a tied 0-layer model with Adam to print ``message`` (message tokenizer).

    Returns ``(params, tokenizer, losses)``.  A harness for puzzle 2.3: change the
    sizes, the optimiser or the initialisation and see what still learns.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    tok = message_tokenizer(message)
    targets = hello_world_targets(message, tok)
    inputs = np.concatenate([[tok['<bos>']], targets[:-1]])
    vocab = max(tok.values()) + 1
    weights = [rng.normal(scale=0.5, size=(vocab, d_model)),
               rng.normal(scale=0.5, size=(len(targets), d_model))]
    m = [np.zeros_like(w) for w in weights]
    v = [np.zeros_like(w) for w in weights]
    losses = []
    for step in range(1, steps + 1):
        loss, *grads = hello_world_loss_and_grad(*weights, inputs, targets)
        losses.append(loss)
        for w, g, mi, vi in zip(weights, grads, m, v):
            mi *= 0.9
            mi += 0.1 * g
            vi *= 0.999
            vi += 0.001 * g ** 2
            w -= lr * (mi / (1 - 0.9 ** step)) / (np.sqrt(vi / (1 - 0.999 ** step)) + 1e-8)
    params = base_params(vocab, len(targets), d_model)
    params['tok_emb'] = params['out_emb'] = weights[0]
    params['pos_emb'] = weights[1]
    return params, tok, np.array(losses)


def trained_result(answer, message=HELLO_WORLD):
    """Result check for 2.3 (no verdict on size): does it print the message, and how big is it?"""
    try:
        params, tok = _program_and_tokenizer(answer, message)
        _expect_message(params, tok, message)
    except Finding as f:
        return f'does not print {message!r} yet: {f.message}'
    c = count_params(params)
    return (f'prints {message!r} then <eos>; d_model {np.shape(params["tok_emb"])[1]}, '
            f'{len(params["layers"])} layers, {c["n_params"]:,} parameters '
            f'({count_non0_params(params)["n_params"]:,} non-zero)')


# ----------------------------------------------------------------------------- 2.4 - 2.8

def _message_without_positions(answer, message):
    """Shared by 2.4 and 2.5: an all-zero pos_emb, and decoding prints ``message``."""
    params, tok = _program_and_tokenizer(answer, message)
    _zero_pos(params)
    _expect_message(params, tok, message)
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


def _plain_number(answer):
    """``answer`` as a float if it is a plain int or float (no subclass that redefines ==)."""
    if type(answer) in (int, float) or (isinstance(answer, (np.integer, np.floating))
                                         and type(answer).__module__ == 'numpy'):
        return float(answer)
    return None


@checker('2.6')
def check_2_6(answer):
    """The parameter count of Hello World under RMSNorm (a number), or such a program."""
    if isinstance(answer, (dict, tuple, list)):
        params, tok = _program_and_tokenizer(answer, HELLO_WORLD)
        _expect_message(params, tok, HELLO_WORLD, norm='rms')
        n = guard.budget(params, what='your RMSNorm Hello World', params=None)['params']
        d = params['tok_emb'].shape[1]
        if n > 2 * (VOCAB + BLOCK):
            raise Finding(f'your program prints Hello World under RMSNorm (norm="rms") but has '
                          f'{n:,} parameters (d_model {d}); the question is the smallest count '
                          f'RMSNorm allows: how many dimensions does a tied 0-layer model need '
                          f'when the norm does not centre?')
        return Passed(f'prints Hello World under RMSNorm (norm="rms") with {n} parameters '
                      f'(d_model {d}; counted on the arrays as given, lists included)')
    number = _plain_number(answer)
    if number is None:
        raise Finding(f'expected a number of parameters (a plain int), or a params dict; got '
                      f'{type(answer).__name__}')
    if number == 2 * (VOCAB + BLOCK):
        return Passed('48 = 2 * (13 + 11): RMSNorm does not centre, so the 2-D circle of radius '
                      'sqrt(2) is fixed and 2 dimensions suffice')
    if number in (2 * (BLOCK + 256), 3 * (BLOCK + 256)):
        raise Finding(f'{answer} counts the ASCII tokenizer\'s 256 symbols; the question uses '
                      f'the message tokenizer ({VOCAB} symbols, {BLOCK} positions)')
    if number == 3 * (VOCAB + BLOCK):
        raise Finding('72 is the layer-norm count (3 dimensions per row); RMSNorm does not '
                      'centre: what does that free?')
    if number == VOCAB + BLOCK:
        raise Finding('24 gives each row one dimension; RMSNorm of a single number is its sign '
                      '(+1 or -1), so only two symbols could be told apart')
    raise Finding(f'{answer} is not it: count the entries of tok_emb and pos_emb (out_emb is '
                  f'tied, layer norms are not counted) at the smallest d_model that keeps '
                  f'{VOCAB} symbols apart under RMSNorm')


@checker('2.7')
def check_2_7(answer):
    """Hello World whose every parameter is an integer."""
    params, tok = _program_and_tokenizer(answer, HELLO_WORLD)
    for where, arr in _all_arrays(params):
        if arr.size and not np.all(arr == np.round(arr)):
            i = tuple(int(k) for k in np.argwhere(arr != np.round(arr))[0])
            raise Finding(f'{where}{list(i)} = {arr[i]} is not an integer')
    _expect_message(params, tok, HELLO_WORLD)
    return Passed(f'every entry of the embeddings and layers is an integer (layer-norm gamma '
                  f'and beta are not parameters, as in the book\'s count) and the program prints '
                  f'{HELLO_WORLD!r} ({count_params(params)["n_params"]:,} parameters)')


@checker('2.8')
def check_2_8(answer):
    """Hello World whose every parameter is strictly positive (layer-norm gamma/beta excluded)."""
    params, tok = _program_and_tokenizer(answer, HELLO_WORLD)
    for where, arr in _all_arrays(params):
        if arr.size and not np.all(arr > 0):
            i = tuple(int(k) for k in np.argwhere(~(arr > 0))[0])
            raise Finding(f'{where}{list(i)} = {arr[i]} is not > 0 (zeros count as not positive)')
    _expect_message(params, tok, HELLO_WORLD)
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
