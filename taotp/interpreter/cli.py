"""The command line: ``python -m taotp run|info PROGRAM``.

``run`` decodes greedily from a prompt and prints the token ids (prompt
included) on its last line; ``info`` prints the shape and the parameter
counts.  A problem (a bad file, a bad argument, a token outside the
vocabulary) is one line on stderr, ``taotp: error: ...``, and a non-zero exit
code: 2 for a usage error, 1 for a program or input that cannot run.
"""
import argparse
import sys

import numpy as np

from ..decoding import decode
from ..params import (ParamsError, block_size, config, count_non0_params, count_params,
                      is_tied)
from ..trace import trace
from .load import load_program, read_program


class _UsageError(Exception):
    """A bad command line (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):      # one line on stderr and exit code 2, never argparse's exit
        raise _UsageError(message)


def _parser():
    p = _Parser(prog='python -m taotp', description='Run or inspect a TAOTP program file.')
    sub = p.add_subparsers(dest='command', required=True)
    run = sub.add_parser('run', help='decode greedily from a prompt and print the token ids')
    run.add_argument('program', help='program file (TAOTP dict literal or JSON; - for stdin)')
    run.add_argument('--input', required=True, help='prompt token ids, e.g. "9" or "5 3 7"')
    run.add_argument('--steps', type=int, default=None,
                     help='tokens to generate (default: fill the block)')
    run.add_argument('--eos', type=int, default=None, help='stop after emitting this id')
    run.add_argument('--window', action='store_true',
                     help='slide over the last block_size tokens to run past the block')
    run.add_argument('--show-attention', action='store_true',
                     help="print every layer's attention weights on the last forward pass")
    info = sub.add_parser('info', help='print the shape and parameter counts of a program')
    info.add_argument('program', help='program file (TAOTP dict literal or JSON; - for stdin)')
    for command in (run, info):
        command.error = p.error
    return p


def _tokens(text):
    """Token ids from ``--input``: whole numbers separated by spaces or commas."""
    parts = text.replace(',', ' ').split()
    if not parts:
        raise _UsageError('--input is empty; give token ids like --input "9" or "5 3 7"')
    try:
        return [int(p) for p in parts]
    except ValueError:
        bad = next(p for p in parts if not p.lstrip('-').isdigit())
        raise _UsageError(f'--input must be whole-number token ids separated by spaces; '
                          f'got {bad!r}') from None


def _read(path):
    return load_program(sys.stdin.read()) if path == '-' else read_program(path)


def info_text(params):
    """The lines ``python -m taotp info`` prints: shape, tying and parameter counts."""
    c = config(params)
    total, non0 = count_params(params), count_non0_params(params)
    return '\n'.join([
        f'layers: {c["n_layers"]}',
        f'heads: {c["n_heads"]}',
        f'd_model: {c["d_model"]}',
        f'd_head: {c["d_head"]}',
        f'd_ff: {c["d_ff"]}',
        f'vocab_size: {c["vocab_size"]}',
        f'block_size: {c["block_size"]}',
        f'out_emb: {"tied to tok_emb" if is_tied(params) else "separate"}',
        f'params: {total["n_params"]:,} total, {non0["n_params"]:,} non-zero '
        f'(outside the embeddings: {total["non_emb"]:,} total, {non0["non_emb"]:,} non-zero)',
    ])


def attention_text(tokens, params):
    """Every head's attention weights on ``tokens``, one row per query, as text."""
    weights = trace(np.array(tokens), params).attn
    out = []
    for i, layer in enumerate(weights):
        for h, w in enumerate(layer):
            out.append(f'layer {i} head {h} attention (rows: queries, columns: keys):')
            out += [f'  {tokens[q]:>4} | ' + ' '.join(f'{x:.2f}' for x in row[:q + 1])
                    for q, row in enumerate(w)]
    return '\n'.join(out) or '(no attention heads)'


def _run(args):
    params = _read(args.program)
    tokens = _tokens(args.input)
    steps = args.steps
    if steps is None:
        steps = max(block_size(params) - len(tokens) + 1, 0)
    if steps < 0:
        raise _UsageError(f'--steps must be >= 0; got {steps}')
    out = decode(tokens, params, max_steps=steps, eos=args.eos, window=args.window).tolist()
    if args.show_attention:
        # what the last forward pass saw: the final token is never fed back in
        fed = (out[:-1] if len(out) > len(tokens) else out)[-block_size(params):]
        print(attention_text(fed, params))
    print(' '.join(str(t) for t in out))


def main(argv=None):
    """``python -m taotp run|info PROGRAM ...``; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
        if args.command == 'info':
            print(info_text(_read(args.program)))
        else:
            _run(args)
        return 0
    except _UsageError as exc:
        print(f'taotp: error: {exc}', file=sys.stderr)
        return 2
    except (ParamsError, ValueError) as exc:
        print('taotp: error: ' + ' '.join(str(exc).split()), file=sys.stderr)
        return 1
