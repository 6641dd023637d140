"""The test tiers keep their contract (README, "Tests: two tiers"; CONTRIBUTING, "Tests and budgets").

* the README's test command runs the default tier on two processes, notebooks whole;
* ``.ci/run`` runs that command verbatim, then the slow tier, then ``e2e or train``;
* pyproject's options deselect ``slow`` by default, and the markers are registered;
* ``pytest -m "not slow"`` selects exactly the default tier (``e2e``/``train`` are opt-in);
* the result files that pages load are each recomputed by a slow test.
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip('tomllib' if sys.version_info >= (3, 11) else 'tomli')
ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / 'README.md').read_text()
CI = (ROOT / '.ci' / 'run').read_text()
PYPROJECT = tomllib.loads((ROOT / 'pyproject.toml').read_text())
OPTIONS = PYPROJECT['tool']['pytest']['ini_options']


def readme_test_command():
    block = README.split('## The two commands', 1)[1].split('```', 2)[1]
    commands = [line for line in block.splitlines() if line.startswith('.venv/bin/pytest')]
    assert len(commands) == 1, commands
    return commands[0]


def test_the_readme_command_runs_the_default_tier_on_two_processes_notebooks_whole():
    command = readme_test_command()
    assert '-n 2 --dist loadscope' in command            # nbval: a notebook's cells stay together
    assert command.endswith('--nbval tests book exercises solutions')
    assert '-m' not in command.split()                   # the default tier is pyproject's
    assert any(r.startswith('pytest-xdist') for r in PYPROJECT['project']['optional-dependencies']['test'])


def test_ci_runs_the_readme_command_then_the_slow_tier_then_the_extras():
    lines = [line.strip() for line in CI.splitlines() if '.venv/bin/pytest' in line]
    assert lines[0] == readme_test_command()
    assert re.search(r'CI=1 \.venv/bin/pytest .*-m slow tests', lines[1]), lines[1]
    assert '-m "e2e or train" tests' in lines[2] and lines[2].startswith('CI=1'), lines[2]


def test_pyproject_deselects_slow_and_registers_every_marker():
    addopts = OPTIONS['addopts']
    assert "-m 'not slow'" in addopts and '-p session_env' in addopts
    assert OPTIONS['pythonpath'] == ['tests']              # where -p finds session_env
    markers = {m.split(':')[0] for m in OPTIONS['markers']}
    assert markers == {'slow', 'e2e', 'train'}
    contributing = (ROOT / 'CONTRIBUTING.md').read_text().split('## Tests and budgets', 1)[1]
    for marker in markers:
        assert f'@pytest.mark.{marker}' in contributing, marker


def collected(*args):
    """Node ids pytest selects from a few files that hold slow, train and plain tests (none of
    them uses hypothesis, whose plugin takes a second to import)."""
    out = subprocess.run([sys.executable, '-m', 'pytest', '--collect-only', '-q', '-p', 'no:xdist',
                          '-p', 'no:hypothesispytest', *args, 'tests/test_book_build.py', 'tests/test_stored_results.py',
                          'tests/test_trained_train.py'], cwd=ROOT, capture_output=True, text=True)
    return {line for line in out.stdout.splitlines() if '::' in line}


def test_not_slow_is_the_default_tier():
    default, not_slow = collected(), collected('-m', 'not slow')
    assert default == not_slow and default
    assert not any('test_book_build' in node or 'test_trained_train' in node for node in default)


def test_every_stored_result_a_page_loads_is_recomputed_by_a_slow_test():
    text = (ROOT / 'tests' / 'test_stored_results.py').read_text()
    names = re.findall(r"^[A-Z_]+ = '(ch\d\d_\w+\.json)'", text, flags=re.M)
    assert names
    for name in names:
        pages = [p for p in (ROOT / 'book').glob('*.py') if name in p.read_text()]
        assert pages, f'{name}: no page loads it'
        assert (ROOT / 'taotp' / 'data' / name).exists(), name
