"""Re-run Chapter 11's experiments from a shell.

    python -m taotp.trained SIZE OUT_DIR [NAME ...] [--device DEVICE]
    python -m taotp.trained paper OUT_DIR [--part PART] [--device DEVICE] [--minutes M]
                                          [--max-steps N] [--no-early-stop] [--no-tf32]
                                          [--eval-every N] [--no-graph]

SIZE is ``smoke`` (seconds) or ``full`` (the chapter's CPU budget, about three
CPU hours); NAME picks experiments (``adder`` or names of
``selective.EXPERIMENTS``; default all, then ``selective.VARIANTS``).  ``paper``
trains a part of ``paper.PARTS`` at D'Angelo et al.'s settings (batch 256, Adam at a constant
1e-3, no clipping, up to 30,000 steps or flat): a GPU's work, ``--device cuda``;
``--part smoke`` runs two tiny groups on the CPU in seconds.  ``--minutes``
caps the wall time of a part (what is unfinished is recorded as such).
DEVICE defaults to ``cpu``.  Needs the training extra (``pip install
"taotp[train]"``).  Point the chapter's loaders at OUT_DIR with ``folder=`` to
see the new results.
"""
import argparse
import sys
from pathlib import Path

from . import coupling, paper, selective
from ..train import progress_bar


def _parser():
    parser = argparse.ArgumentParser(prog='python -m taotp.trained', add_help=True,
                                     usage=__doc__)
    parser.add_argument('size', choices=['smoke', 'full', 'paper'])
    parser.add_argument('out')
    parser.add_argument('names', nargs='*')
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--part', default='main')
    parser.add_argument('--minutes', type=float, default=None)
    parser.add_argument('--max-steps', type=int, default=None)
    parser.add_argument('--no-early-stop', action='store_true')
    parser.add_argument('--threads', type=int, default=None)
    parser.add_argument('--no-tf32', action='store_true')
    parser.add_argument('--eval-every', type=int, default=None)
    parser.add_argument('--no-graph', action='store_true')
    return parser


def main(argv):
    if len(argv) < 2 or argv[0] not in ('smoke', 'full', 'paper'):
        print(__doc__)
        return 2
    args = _parser().parse_args(argv)
    out = Path(args.out)
    from ..train.loop import as_device
    try:
        as_device(args.device, 'python -m taotp.trained')
    except ValueError as problem:
        print(problem, file=sys.stderr)
        return 2
    if args.size == 'paper':
        if args.part not in paper.PARTS:
            print(f'unknown part {args.part!r}; known: {list(paper.PARTS)}', file=sys.stderr)
            return 2
        settings = dict(paper.SMOKE if args.part == 'smoke' else paper.PAPER)
        settings['tf32'] = settings['tf32'] and not args.no_tf32
        if args.eval_every:
            settings['eval_every'] = args.eval_every
        settings['cuda_graph'] = not args.no_graph
        paper.run_part(args.part, out, device=args.device, minutes=args.minutes,
                       early_stop=not args.no_early_stop, max_steps=args.max_steps,
                       settings=settings,
                       log=lambda line: print(line, file=sys.stderr, flush=True),
                       threads=args.threads)
        return 0
    names = args.names
    known = ['adder'] + [e[0] for e in selective.EXPERIMENTS]
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f'unknown experiment(s) {unknown}; known: {known}', file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    if not names or 'adder' in names:
        print('adder: training on SA(n, n) ...', file=sys.stderr)
        coupling.run(args.size, out, progress=progress_bar())
    todo = [n for n in names if n != 'adder'] or None
    if names and not todo:
        return 0
    jobs = [(name, 0, None, None) for name in todo] if todo else \
        [(e[0], 0, None, None) for e in selective.EXPERIMENTS] + list(selective.VARIANTS)
    for name, seed, settings, tag in jobs:
        print(f'{selective.seeded_name(name + (" " + tag if tag else ""), seed)} ...',
              file=sys.stderr)
        selective.run(args.size, out, names=[name], seed=seed, settings=settings, tag=tag,
                      progress=progress_bar(), device=args.device, threads=args.threads or 1)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
