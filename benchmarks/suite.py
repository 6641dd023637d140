"""Wall time and peak memory of the test suite: the whole run, its slowest tests, every notebook.

    python benchmarks/suite.py                 # everything (a few minutes on 2 cores)
    python benchmarks/suite.py --top 15        # how many of the slowest tests to re-measure
    python benchmarks/suite.py --notebooks     # only the notebooks

Not a test: it prints a table.  Each measured item runs in its own pytest process,
so its peak resident memory (that process and every kernel it starts) is its own.
The first pass runs the README's test command once and reports its wall time and
peak memory; its ``--durations`` list picks the tests to re-measure one by one.
"""
import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')     # as the test suite does (tests/conftest.py)
PYTEST = [sys.executable, '-m', 'pytest', '-q']
FOLDERS = ['tests', 'book', 'exercises', 'solutions']


def isolated(args):
    """Run ``args`` from a fresh interpreter: (exit code, wall s, peak RSS MB, its stdout).

    The peak covers the command and every process it starts (pytest, kernels), and
    nothing else, because the measuring interpreter is new.
    """
    code = ('import json, resource, subprocess, sys, time; t = time.perf_counter(); '
            f'p = subprocess.run({args!r}, cwd={str(ROOT)!r}, capture_output=True, text=True); '
            'w = time.perf_counter() - t; '
            'print(json.dumps([p.returncode, w, '
            'resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, p.stdout]))')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def slowest(output, top):
    rows = re.findall(r'^([\d.]+)s call\s+(\S+)$', output, flags=re.M)
    return [name for _, name in sorted(rows, key=lambda r: -float(r[0]))[:top]]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--top', type=int, default=12)
    parser.add_argument('--notebooks', action='store_true', help='measure only the notebooks')
    args = parser.parse_args(argv)
    tests = []
    if not args.notebooks:
        rc, wall, peak, output = isolated(PYTEST + ['--nbval', '--durations=60'] + FOLDERS)
        print(f'whole suite (pytest --nbval {" ".join(FOLDERS)}): exit {rc}, '
              f'{wall:.0f} s, peak {peak:,.0f} MB')
        tests = [t for t in slowest(output, args.top + 20) if '.ipynb' not in t][:args.top]
    notebooks = sorted(str(p.relative_to(ROOT)) for f in FOLDERS[1:]
                       for p in (ROOT / f).glob('*.ipynb'))
    print(f'\n{"item":<78} {"wall s":>7} {"peak MB":>8}')
    for item in tests:
        rc, wall, peak, _ = isolated(PYTEST + [item])
        print(f'{item[:78]:<78} {wall:7.1f} {peak:8,.0f}{"" if rc == 0 else "  FAILED"}')
    for item in notebooks:
        rc, wall, peak, _ = isolated(PYTEST + ['--nbval', item])
        size = os.path.getsize(ROOT / item) / 1024
        print(f'{item + f" ({size:,.0f} KB)":<78} {wall:7.1f} {peak:8,.0f}'
              f'{"" if rc == 0 else "  FAILED"}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
