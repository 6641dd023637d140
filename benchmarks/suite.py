"""The timing record of the test tiers: wall time, CPU, peak memory, and where the time goes.

    python benchmarks/suite.py                 # the default tier (README command 2), recorded
    python benchmarks/suite.py default book    # and `pytest --nbval book` alone (target: 60 s)
    python benchmarks/suite.py slow            # the slow tier only (pytest -m slow tests)
    python benchmarks/suite.py --isolate 12    # also re-run the 12 slowest items one by one
    python benchmarks/suite.py --no-save       # print only; keep benchmarks/record.json

Not a test: it prints tables, and writes ``benchmarks/record.json`` (committed), so that
each note can compare with the previous record: every line shows the change against it.
A run measures

* the wall time of each command, the CPU time of every process it waited for (pytest, its
  workers, the kernels), and the peak resident memory of the largest of them;
* per notebook, its time under nbval: the sum of its cells' setup, call and teardown,
  which counts the kernel's start (in the first cell's setup) and its shutdown;
* per test file, the same sum over its tests, and the slowest single tests.

Wall times depend on what else the machine runs: each record keeps the load average
before and after, and the CPU time, which a busy machine changes much less.  Budgets
(README, "Tests: two tiers"): the default tier within 5 minutes on 2 quiet cores, the book
within 60 s, each book notebook within 10 s.
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / 'benchmarks' / 'record.json'
LOGS = ROOT / '_build' / 'benchmarks'          # each tier's full pytest output (not committed)
PYTEST = [sys.executable, '-m', 'pytest', '-q']
PARALLEL = ['-n', '2', '--dist', 'loadscope']
COMMANDS = {     # what each tier runs (README, "Tests: two tiers")
    'default': PARALLEL + ['--nbval', 'tests', 'book', 'exercises', 'solutions'],
    'book': PARALLEL + ['--nbval', 'book'],
    'slow': PARALLEL + ['-m', 'slow', 'tests'],
}
BUDGETS_S = {'default': 300, 'book': 60, 'notebook': 10}
DURATION = re.compile(r'^([\d.]+)s (setup|call|teardown)\s+(\S.*)$', re.M)
SUMMARY = re.compile(r'=+ (.*?) in [\d.]+s')


def measured(args):
    """Run ``args`` from a fresh interpreter; wall s, CPU s, peak MB, exit code, output.

    The fresh interpreter's children are the command and everything it waits for, so its
    resource usage is theirs alone.
    """
    code = ('import json, resource, subprocess, sys, time; t = time.perf_counter(); '
            f'p = subprocess.run({args!r}, cwd={str(ROOT)!r}, capture_output=True, text=True); '
            'w = time.perf_counter() - t; r = resource.getrusage(resource.RUSAGE_CHILDREN); '
            'print(json.dumps([p.returncode, w, r.ru_utime + r.ru_stime, r.ru_maxrss / 1024, '
            'p.stdout + p.stderr]))')
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    rc, wall, cpu, peak, output = json.loads(out.stdout)
    summary = SUMMARY.findall(output)
    return {'date': time.strftime('%Y-%m-%d %H:%M'), 'exit': rc, 'wall_s': round(wall, 1), 'cpu_s': round(cpu, 1),
            'peak_mb': round(peak), 'load_before': round(load, 2),
            'load_after': round(os.getloadavg()[0], 2),
            'summary': summary[-1] if summary else output.strip().splitlines()[-1:]}, output


def durations(output):
    """Seconds per notebook, per test file and per single test, from ``--durations=0``."""
    items = defaultdict(float)
    for seconds, _, node in DURATION.findall(output):
        items[node.strip()] += float(seconds)
    notebooks, files = defaultdict(float), defaultdict(float)
    for node, seconds in items.items():
        path = node.split('::')[0]
        (notebooks if path.endswith('.ipynb') else files)[path] += seconds
    tests = {n: s for n, s in items.items() if not n.split('::')[0].endswith('.ipynb')}
    return dict(notebooks), dict(files), tests


def change(now, before):
    if before is None:
        return ''
    return f' ({now - before:+.1f})'


def run_tier(name, previous):
    print(f'\n{name} tier: pytest {" ".join(COMMANDS[name])}', flush=True)
    result, output = measured(PYTEST + COMMANDS[name] + ['--durations=0', '-rfE'])
    LOGS.mkdir(parents=True, exist_ok=True)
    (LOGS / f'{name}.log').write_text(output)
    notebooks, files, tests = durations(output)
    result['notebooks_s'] = {k: round(v, 1) for k, v in sorted(notebooks.items())}
    result['files_s'] = {k: round(v, 1) for k, v in sorted(files.items(), key=lambda kv: -kv[1])}
    result['slowest_tests_s'] = {k: round(v, 1) for k, v in
                                 sorted(tests.items(), key=lambda kv: -kv[1])[:25]}
    old = previous.get(name, {})
    budget = BUDGETS_S.get(name)
    print(f'  {result["summary"]}; exit {result["exit"]}; output in '
          f'{(LOGS / f"{name}.log").relative_to(ROOT)}')
    for line in re.findall(r'^(?:FAILED|ERROR) .*$', output, flags=re.M)[:30]:
        print(f'  {line[:110]}')
    print(f'  wall {result["wall_s"]:.0f} s{change(result["wall_s"], old.get("wall_s"))}'
          + (f' (budget {budget} s on 2 quiet cores)' if budget else '')
          + f', CPU {result["cpu_s"]:.0f} s{change(result["cpu_s"], old.get("cpu_s"))}'
          f', peak {result["peak_mb"]} MB, load {result["load_before"]} -> {result["load_after"]}')
    if notebooks:
        print(f'\n  {"notebook under nbval (kernel start included)":<58} {"s":>6}')
        old_nb = old.get('notebooks_s', {})
        for path, seconds in sorted(notebooks.items()):
            flag = '  over 10 s' if path.startswith('book/') and seconds > BUDGETS_S['notebook'] else ''
            print(f'  {path:<58} {seconds:6.1f}{change(seconds, old_nb.get(path))}{flag}')
        print(f'  {"all notebooks (summed over both processes)":<58} {sum(notebooks.values()):6.1f}')
    if files:
        print(f'\n  {"test file (its tests summed)":<58} {"s":>6}')
        old_files = old.get('files_s', {})
        for path, seconds in list(result['files_s'].items())[:20]:
            print(f'  {path:<58} {seconds:6.1f}{change(seconds, old_files.get(path))}')
        print(f'\n  {"slowest tests":<78} {"s":>6}')
        for node, seconds in list(result['slowest_tests_s'].items())[:12]:
            print(f'  {node[:78]:<78} {seconds:6.1f}')
    return result, sorted(list(notebooks) + list(tests), key=lambda n: -{**notebooks, **tests}[n])


def isolate(items, count):
    print(f'\n{"item, alone in its own pytest process":<78} {"wall s":>7} {"peak MB":>8}')
    for item in items[:count]:
        nbval = ['--nbval'] if item.endswith('.ipynb') else []
        result, _ = measured(PYTEST + nbval + ['-m', '', item])
        print(f'{item[:78]:<78} {result["wall_s"]:7.1f} {result["peak_mb"]:8,}'
              f'{"" if result["exit"] == 0 else "  FAILED"}')


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('tiers', nargs='*', default=['default'], choices=list(COMMANDS),
                        help='what to time (default: the default tier)')
    parser.add_argument('--isolate', type=int, default=0, metavar='N',
                        help='re-run the N slowest items one by one (their own peak memory)')
    parser.add_argument('--no-save', action='store_true', help='do not write record.json')
    args = parser.parse_args(argv)
    previous = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    if previous:
        print(f'previous record: {previous.get("date")}, {previous.get("machine")}')
    record = {'date': time.strftime('%Y-%m-%d %H:%M'),
              'machine': f'{os.cpu_count()} cores, {platform.machine()}, '
                         f'Python {platform.python_version()}'}
    slowest = []
    for name in dict.fromkeys(args.tiers):
        record[name], items = run_tier(name, previous)
        slowest = slowest or items
    for name in COMMANDS:                # tiers not timed this time keep their last record
        if name not in record and name in previous:
            record[name] = previous[name]
    if args.isolate:
        isolate(slowest, args.isolate)
    if not args.no_save:
        RECORD.write_text(json.dumps(record, indent=1) + '\n')
        print(f'\nrecorded in {RECORD.relative_to(ROOT)}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
