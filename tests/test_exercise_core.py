"""The checker framework itself: no escape, bounded time, strict ids, honest progress."""
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import taotp
from solutions import answer
from taotp.exercises import check, guard, progress_file, registry
from taotp.exercises.registry import checker
from taotp.exercises.result import Finding, Passed


@checker('0.1', budget=1)
def reads_a_result(fn):
    """A checker that calls a submission and then reads what it returned."""
    value = guard.call(fn, what='your function', seconds=0.5)
    arr = guard.array(value)
    return Passed(f'read {arr.size} numbers')


class Endless:
    def __array__(self, *args, **kwargs):
        while True:
            pass


def test_system_exit_and_keyboard_interrupt_from_a_submission_are_reported():
    def exits(*args):
        sys.exit(3)

    def interrupts(*args):
        raise KeyboardInterrupt

    for submission, name in ((exits, 'SystemExit'), (interrupts, 'KeyboardInterrupt')):
        result = reads_a_result(submission)
        assert not result and name in result.message


def test_a_real_ctrl_c_still_stops_the_check():
    def presses_ctrl_c(*args):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)

    with pytest.raises(KeyboardInterrupt):
        reads_a_result(presses_ctrl_c)


def test_a_returned_value_that_hangs_when_read_hits_the_total_budget():
    start = time.perf_counter()
    result = reads_a_result(lambda: Endless())
    assert not result and 'did not finish within its 1 s budget' in result.message
    assert time.perf_counter() - start < 3


def test_a_slow_call_is_reported_by_its_own_limit_inside_the_budget():
    result = reads_a_result(lambda: time.sleep(5))
    assert not result and 'took longer than 0.5 s' in result.message


def test_every_registered_checker_has_a_budget_of_at_most_30_s():
    for puzzle in registry().values():
        if puzzle.checker is not None:
            assert puzzle.checker.budget <= 30, puzzle.id


def test_numbers_and_malformed_ids_are_refused(capsys):
    result = check(6.2, None)
    assert not result and 'ids are strings' in result.message
    for bad in ('6.20.1', '06.2', '6', 'six'):
        assert 'no puzzle' in check(bad, None).message


@checker('0.2')
def counts_cases(answer, n_cases=10):
    """A checker with an option that weakens it (fewer cases)."""
    if answer != 'right':
        raise Finding(f'expected "right"; got {answer!r}')
    return Passed(f'{n_cases} cases')


def test_options_that_weaken_a_check_are_marked_and_not_counted(capsys, monkeypatch):
    table = dict(registry())
    table['0.2'] = taotp.exercises.Puzzle('0.2', 'a test puzzle', 'checked', counts_cases)
    monkeypatch.setattr(taotp.exercises, 'registry', lambda: table)
    monkeypatch.setattr(taotp.exercises, '_ID', re.compile(r'^\d+\.\d+$'))
    before = json.loads(progress_file().read_text()) if progress_file().exists() else {}
    result = check('0.2', 'right', n_cases=1)
    assert result and result.relaxed == 'n_cases=1' and not result.counts
    assert capsys.readouterr().out.startswith('PASS (relaxed: n_cases=1; not counted as solved) 0.2')
    after = json.loads(progress_file().read_text()) if progress_file().exists() else {}
    assert after.get('0.2') == before.get('0.2') is None
    assert check('0.2', 'right').counts
    assert json.loads(progress_file().read_text())['0.2'] == 'solved'


def test_progress_survives_a_new_process(tmp_path):
    env = {**os.environ, 'TAOTP_PROGRESS': str(tmp_path / 'p.json')}
    solve = 'from taotp.exercises import check; check("2.6", 48); check("2.5", None)'
    subprocess.run([sys.executable, '-c', solve], env=env, check=True, capture_output=True)
    out = subprocess.run([sys.executable, '-m', 'taotp', 'progress', '2'], env=env, check=True,
                         capture_output=True, text=True).stdout
    rows = {line.split()[0]: line.split()[2] for line in out.splitlines()[1:-1]}
    assert rows['2.6'] == 'solved' and rows['2.5'] == 'not'
    assert out.splitlines()[-1].startswith('1 of ')


def test_budget_counts_list_valued_weights_and_names_the_limit(rng):
    params = taotp.random_params(rng, n_layers=1, n_heads=2, d_model=4, d_head=2, d_ff=3)
    counts = guard.budget(params, layers=1, heads=2, params=10_000)
    assert counts['params'] == taotp.count_params(params)['n_params']
    params['layers'][0]['M1'] = params['layers'][0]['M1'].tolist()   # a list counts too
    assert guard.budget(params, params=None)['params'] == counts['params']
    with pytest.raises(Finding, match='over the budget: 2 heads in a layer; at most 1 allowed'):
        guard.budget(params, heads=1)
    with pytest.raises(ValueError, match="unknown limits \\['width'\\]"):
        guard.budget(params, width=3)
