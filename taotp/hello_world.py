"""Chapter 2, Hello World: a program that ignores its input and prints a fixed message.

Two machines run it, both on the one forward pass of ``taotp.model``:

* the *Simpleformer*, the book's warm-up toy: a 0-layer model with no token
  embedding and no normalisation, so the logits are ``pos_emb[i] @ out_emb.T``.
  Here it is an ordinary program with ``tok_emb = 0`` run with ``norm='none'``;
  2 dimensions suffice;
* the real 0-layer transformer (tied embeddings, final layer norm), which needs
  3 dimensions: symbols sit on the sqrt(3)-circle that layer norm leaves alone,
  and ``pos_emb[i] = harden * tok_emb[next symbol]`` drowns the input token.

Two tokenizers are offered.  Both are plain dicts ``symbol -> id`` that contain
``'<bos>'`` and ``'<eos>'``:

* ``'message'``: only the symbols the message needs, in a **fixed order**:
  ``'<bos>'`` is id 0, ``'<eos>'`` id 1, then every distinct character of the
  message in order of first appearance (``'Hello World!'`` gives H=2, e=3, l=4,
  o=5, ' '=6, W=7, r=8, d=9, !=10).  The book builds its tokenizer from a Python
  ``set``, whose order changes from run to run; ours never does.
* ``'ascii'``: all 256 byte values, ``chr(i) -> i``; ``'\\0'`` (id 0) doubles as
  ``'<bos>'`` and ``'<eos>'``, so messages may not contain it.

    >>> params, tok = build_hello_world_transformer('Hi!')
    >>> out = taotp.decode(tokenize(['<bos>'], tok), params, eos=tok['<eos>'])
    >>> detokenize(out, tok)
    '<bos>Hi!<eos>'
"""
from numbers import Real

import numpy as np

from .blocks import pos_enc_3d_array
from .decoding import decode, transformer
from .model import EPS, forward, layer_norm, softmax
from .params import MAX_SIZE, base_params, check_size

__all__ = ['HELLO_WORLD', 'HARDEN', 'SIMPLEFORMER', 'message_tokenizer', 'ascii_tokenizer',
           'make_tokenizer', 'tokenize', 'detokenize', 'hello_world_targets',
           'simpleformer_params', 'simpleformer', 'decode_simpleformer',
           'build_hello_world_simpleformer', 'build_hello_world_transformer',
           'hello_world_loss_and_grad', 'train_hello_world']

HELLO_WORLD = 'Hello World!'
SPECIAL = ('<bos>', '<eos>')
HARDEN = 1e6    # the book's N for Hello World; tests/test_hello_world.py measures the working range
SIMPLEFORMER = {'norm': 'none'}   # the variant switch that turns the engine into a Simpleformer


# ----------------------------------------------------------------------------- tokenizers

def _check_message(message, where):
    if not isinstance(message, str):
        raise TypeError(f'{where}: message must be a str; got {type(message).__name__}')
    if not message:
        raise ValueError(f"{where}: message must have at least 1 character; got ''")
    if len(message) >= MAX_SIZE:     # block_size is len(message) + 1
        raise ValueError(f'{where}: message must have at most {MAX_SIZE - 1:,} characters '
                         f'(block_size = len + 1, at most taotp.params.MAX_SIZE); got '
                         f'{len(message):,}')


def message_tokenizer(message):
    """Ids for exactly the symbols of ``message``: <bos>=0, <eos>=1, then first appearance.

        >>> message_tokenizer('abba')
        {'<bos>': 0, '<eos>': 1, 'a': 2, 'b': 3}
    """
    _check_message(message, 'message_tokenizer')
    table = {s: i for i, s in enumerate(SPECIAL)}
    for ch in message:
        table.setdefault(ch, len(table))
    return table


def ascii_tokenizer():
    """All 256 byte values, ``chr(i) -> i``, with '\\0' (id 0) serving as <bos> and <eos>."""
    table = {'<bos>': 0, '<eos>': 0}
    table.update({chr(i): i for i in range(256)})
    return table


def make_tokenizer(message, tokenizer='message'):
    """The tokenizer named by ``tokenizer`` ('message' or 'ascii'), checked against ``message``."""
    _check_message(message, 'make_tokenizer')
    if tokenizer == 'message':
        return message_tokenizer(message)
    if tokenizer != 'ascii':
        raise ValueError(f"make_tokenizer: tokenizer must be 'message' or 'ascii'; "
                         f"got {tokenizer!r}")
    bad = [ch for ch in message if ord(ch) > 255 or ch == '\0']
    if bad:
        raise ValueError(f"make_tokenizer: the ascii tokenizer needs characters chr(1)..chr(255) "
                         f"('\\0' is <bos>/<eos>); got {bad[0]!r}")
    return ascii_tokenizer()


def tokenize(symbols, tokenizer):
    """Ids of ``symbols``: a string (one symbol per character) or a list such as ['<bos>', 'H']."""
    try:
        return np.array([tokenizer[s] for s in symbols], dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f'tokenize: every symbol must be in the tokenizer; got {exc.args[0]!r}') \
            from None


def detokenize(ids, tokenizer):
    """The string spelled by ``ids``; <bos>/<eos> are written by name.

    With the ascii tokenizer id 0 is written as '<bos>' (it is also '<eos>').
    """
    names = {}
    for symbol, i in tokenizer.items():
        names.setdefault(i, symbol)
    try:
        return ''.join(names[int(i)] for i in np.asarray(ids).ravel())
    except KeyError as exc:
        raise ValueError(f'detokenize: id {exc.args[0]} is not in the tokenizer') from None


def hello_world_targets(message, tokenizer):
    """The ids the program must print: the message then <eos> (one per position)."""
    return np.concatenate([tokenize(message, tokenizer), [tokenizer['<eos>']]])


# ----------------------------------------------------------------------------- Simpleformer

def simpleformer_params(pos_emb, out_emb):
    """The Simpleformer's two tables as a program: ``tok_emb`` all zero, no layers.

    Run it with the variant ``norm='none'`` (``SIMPLEFORMER``): the final norm is
    then only ``beta + gamma * x = x``, so the logits are ``pos_emb[i] @ out_emb.T``.
    """
    pos_emb, out_emb = np.asarray(pos_emb, dtype=np.float64), np.asarray(out_emb, dtype=np.float64)
    params = base_params(len(out_emb), len(pos_emb), out_emb.shape[1])
    params['pos_emb'], params['out_emb'] = pos_emb, out_emb
    return params


def simpleformer(tokens, pos_emb, out_emb):
    """The book's Simpleformer: logits (n, vocab); the input ids are ignored."""
    return transformer(tokens, **simpleformer_params(pos_emb, out_emb), **SIMPLEFORMER)


def decode_simpleformer(tokens, pos_emb, out_emb, eos, max_steps=None):
    """Greedy decoding on the Simpleformer until ``eos`` (default: as many steps as pos_emb rows)."""
    steps = len(pos_emb) - len(tokens) + 1 if max_steps is None else max_steps
    return decode(tokens, simpleformer_params(pos_emb, out_emb), max_steps=steps, eos=eos,
                  **SIMPLEFORMER)


def build_hello_world_simpleformer(message=HELLO_WORLD, tokenizer='message'):
    """Hello World on the Simpleformer, d_model = 2; returns ``(params, tokenizer)``.

    The symbols sit on the unit circle at angles ``linspace(0, 6, vocab)`` (as in
    the book: 6 is a little less than 2*pi, so the first and last do not meet),
    and position i simply holds the point of the symbol to print there.  Decode
    with ``norm='none'``:

        >>> params, tok = build_hello_world_simpleformer('ok')
        >>> out = taotp.decode([tok['<bos>']], params, eos=tok['<eos>'], norm='none')
        >>> detokenize(out, tok)
        '<bos>ok<eos>'

    ``message`` holds at most ``MAX_SIZE - 1`` characters (taotp.params.MAX_SIZE).
    """
    _check_message(message, 'build_hello_world_simpleformer')
    table = make_tokenizer(message, tokenizer)
    vocab = max(table.values()) + 1
    angles = np.linspace(0, 6, vocab)
    out_emb = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return simpleformer_params(out_emb[hello_world_targets(message, table)], out_emb), table


# ----------------------------------------------------------------------------- 0-layer transformer

def build_hello_world_transformer(message=HELLO_WORLD, tokenizer='message', harden=HARDEN):
    """A 0-layer, d_model = 3 transformer that prints ``message`` after <bos>.

    ``tok_emb = out_emb`` are evenly spaced points of the layer-norm-fixed
    sqrt(3)-circle; ``pos_emb[i] = harden * tok_emb[t_{i+1}]`` where t_{i+1} is the
    symbol to print at position i (the last one is <eos>), so the position term
    drowns the input token.  block_size is ``len(message) + 1``.

    Args:
        message: the text to print (for 'ascii', characters chr(1)..chr(255)).
        tokenizer: 'message' or 'ascii' (see the module docstring).
        harden: the position scale (the book's N = 1e6; 5 already works for
            'Hello World!' with the message tokenizer, a few hundred with 'ascii').
    Returns:
        ``(params, tokenizer)``: the program and the ``symbol -> id`` dict.
    Raises:
        TypeError, ValueError: a message that is not a non-empty str (or is longer
            than ``MAX_SIZE - 1`` characters), an unknown tokenizer, a character the
            tokenizer lacks, or harden <= 0.
    """
    _check_message(message, 'build_hello_world_transformer')
    table = make_tokenizer(message, tokenizer)
    if isinstance(harden, bool) or not isinstance(harden, Real) or not harden > 0:
        raise ValueError(f'build_hello_world_transformer: harden must be a number > 0; '
                         f'got {harden!r}')
    vocab = max(table.values()) + 1
    targets = hello_world_targets(message, table)
    params = base_params(vocab, len(targets), d_model=3)
    params['tok_emb'] = pos_enc_3d_array(vocab)
    params['out_emb'] = params['tok_emb']          # tied: counted once
    params['pos_emb'] = harden * params['tok_emb'][targets]
    return params, table


# ----------------------------------------------------------------------------- training (puzzle 2.3)

def hello_world_loss_and_grad(tok_emb, pos_emb, inputs, targets):
    """Mean cross-entropy of a tied 0-layer program, and its gradients for both tables.

    The logits and the residual stream come from the engine (``forward`` with a
    ``record``); the backward pass is written out by hand through the tied output
    embedding and the final layer norm (which adds its epsilon to the std).
    Returns ``(loss, d_tok_emb, d_pos_emb)``.
    """
    record = []
    logits = forward(inputs, tok_emb, pos_emb, tok_emb, [], {}, record=record)
    x = record[-1]['final']                                # the stream before the final norm
    y = layer_norm(x)
    centred = x - x.mean(-1, keepdims=True)
    std = np.sqrt((centred ** 2).mean(-1, keepdims=True))
    scale = std + EPS
    probs = softmax(logits)
    n, d = y.shape
    loss = -np.log(probs[np.arange(n), targets] + 1e-300).mean()
    d_logits = probs.copy()
    d_logits[np.arange(n), targets] -= 1
    d_logits /= n
    d_tok = d_logits.T @ y                                 # the tied output embedding
    d_y = d_logits @ tok_emb
    d_scale = -(d_y * centred).sum(-1, keepdims=True) / scale ** 2
    d_centred = d_y / scale + d_scale * centred / (d * std)
    d_x = d_centred - d_centred.mean(-1, keepdims=True)
    d_pos = np.zeros_like(pos_emb)
    d_pos[:n] = d_x
    np.add.at(d_tok, inputs, d_x)                          # the input embedding, same table
    return loss, d_tok, d_pos


def train_hello_world(d_model=3, steps=1500, lr=0.05, *, rng=None, message=HELLO_WORLD):
    """Train a tied 0-layer program with Adam to print ``message`` (message tokenizer).

    NumPy only: the forward pass is the engine's, the gradients are
    ``hello_world_loss_and_grad``.  Returns ``(params, tokenizer, losses)``; the
    harness of puzzle 2.3 (change the width, the optimiser or the start and see
    what still learns).  ``rng`` (keyword) draws the start; None means seed 0.
    ``d_model`` and ``steps`` are at most ``taotp.params.MAX_SIZE``.

    >>> params, tok, losses = train_hello_world(steps=300)
    >>> detokenize(decode([tok['<bos>']], params, eos=tok['<eos>']), tok)
    '<bos>Hello World!<eos>'
    """
    where = 'train_hello_world'
    d_model = check_size(where, 'd_model', d_model)
    steps = check_size(where, 'steps', steps, low=0)
    _check_message(message, where)
    rng = np.random.default_rng(0) if rng is None else rng
    tok = message_tokenizer(message)
    targets = hello_world_targets(message, tok)
    inputs = np.concatenate([[tok['<bos>']], targets[:-1]])
    vocab = max(tok.values()) + 1
    weights = [rng.normal(scale=0.5, size=(vocab, d_model)),
               rng.normal(scale=0.5, size=(len(targets), d_model))]
    first = [np.zeros_like(w) for w in weights]        # Adam's running moments
    second = [np.zeros_like(w) for w in weights]
    losses = []
    for step in range(1, steps + 1):
        loss, *grads = hello_world_loss_and_grad(*weights, inputs, targets)
        losses.append(loss)
        for w, g, m, v in zip(weights, grads, first, second):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g ** 2
            w -= lr * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    params = base_params(vocab, len(targets), d_model)
    params['tok_emb'] = params['out_emb'] = weights[0]
    params['pos_emb'] = weights[1]
    return params, tok, np.array(losses)
