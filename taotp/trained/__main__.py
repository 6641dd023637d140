"""Re-run Chapter 11's experiments: ``python -m taotp.trained SIZE OUT_DIR [NAME ...]``.

SIZE is ``smoke`` (seconds) or ``full`` (hours on two CPU cores); NAME picks
experiments (``adder`` or names of ``selective.EXPERIMENTS``; default all).
Needs the training extra (``pip install "taotp[train]"``).  Point the
chapter's loaders at OUT_DIR with ``folder=`` to see the new results.
"""
import sys
from pathlib import Path

from . import coupling, selective
from ..train import progress_bar


def main(argv):
    if len(argv) < 2 or argv[0] not in ('smoke', 'full'):
        print(__doc__)
        return 2
    size, out, names = argv[0], Path(argv[1]), argv[2:]
    known = ['adder'] + [e[0] for e in selective.EXPERIMENTS]
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f'unknown experiment(s) {unknown}; known: {known}', file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    if not names or 'adder' in names:
        print('adder: training on SA(n, n) ...', file=sys.stderr)
        coupling.run(size, out, progress=progress_bar())
    todo = [n for n in names if n != 'adder'] or None
    if names and not todo:
        return 0
    for name in todo or [e[0] for e in selective.EXPERIMENTS]:
        print(f'{name} ...', file=sys.stderr)
        selective.run(size, out, names=[name], progress=progress_bar())
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
