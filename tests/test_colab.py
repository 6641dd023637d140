"""A fresh Colab runtime, simulated: every book notebook runs top to bottom there.

What a reader gets after pressing a chapter's Colab button is a Python with Colab's
preinstalled stack and no ``taotp``; the notebook's setup cell sees ``google.colab``
and pip-installs the book's package from the repository.  This test builds that:

* a clean virtual environment (no system or project packages) holding only the
  pinned Colab stack below (``COLAB_STACK``), with a Jupyter kernel;
* a stub ``google.colab`` module, imported when the kernel starts (as Colab's kernel does);
* ``TAOTP_INSTALL`` pointing the setup cell's ``pip install`` at a wheel of this
  checkout instead of the repository URL.

Each book notebook then runs in that kernel, from an empty working folder, with nbclient
(cells tagged ``raises-exception`` may raise; any other error fails).  Before each
notebook ``taotp`` is absent; after it, ``taotp`` comes from the environment's own
site-packages and Colab's stack is exactly as preinstalled: installing the book must
never replace Colab's NumPy, Matplotlib or ipywidgets (a new NumPy under a running
runtime breaks it, and Colab's page renders the ipywidgets 7 protocol).

Two more checks show that the live widgets are live: in that runtime (Colab's
ipywidgets 7) and in this environment's own kernel (JupyterLab, ipywidgets 8), an
``Explorer`` widget whose slider is moved (the comm message a widget page sends) makes
the kernel clear and redraw its figure.

The environments are kept in ``_build/e2e/colab-runtime`` (two identical ones, so two
notebooks run at a time) and reused only while their ``pip freeze`` is exactly what a
fresh one had; otherwise they are rebuilt.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from e2e_helpers import ARTEFACTS, ROOT, missing

pytestmark = pytest.mark.e2e

# Colab's preinstalled versions of what the book imports and what runs its kernel, from
# Colab's published runtime package list (github.com/googlecolab/backend-info,
# pip-freeze.txt) and the pins of its google-colab package (2025).  Update them when
# Colab moves; the README's "Colab" section quotes the ipywidgets range this implies.
COLAB_STACK = {
    'numpy': '2.0.2',
    'matplotlib': '3.10.0',
    'ipywidgets': '7.7.1',
    'ipykernel': '6.17.1',
    'ipython': '7.34.0',
    'traitlets': '5.7.1',
    'jupyter-client': '6.1.12',
    'notebook': '6.5.7',
    'cloudpickle': '3.1.1',      # check() sends answers to the judge with it
}
BOOK = sorted((ROOT / 'book').glob('*.ipynb'))
RUNTIME = ARTEFACTS / 'colab-runtime'
STUB = '''"""Stand-in for Colab's google.colab package: its presence is what notebooks test."""
__version__ = '0.0.0-simulated'
'''


def _run(*args, **kw):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return result.stdout


def _clean_env(**extra):
    """The test's environment without anything that points Python at this checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ('PYTHONPATH', 'VIRTUAL_ENV', 'PYTHONHOME', 'PYTHONSTARTUP',
                        'TAOTP_IMAGES')}
    env.update(OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1',
               PIP_DISABLE_PIP_VERSION_CHECK='1', **extra)
    return env


def _freeze(python):
    lines = _run(python, '-m', 'pip', 'freeze', '--all', env=_clean_env()).splitlines()
    return sorted(line for line in lines if not line.startswith(('pip==', 'setuptools==')))


LIST = ('import importlib.metadata as m, json, re; print(json.dumps({re.sub(r"[-_.]+", "-", '
        'd.metadata["Name"]).lower(): d.version for d in m.distributions()}))')


def _installed(python):
    """``{name: version}`` of the environment (names normalised like pip's)."""
    return json.loads(_run(python, '-I', '-c', LIST, env=_clean_env()))


def _build_runtime(home):
    """Colab's stack in a clean venv at ``home``; returns its python."""
    python = home / 'bin' / 'python'
    shutil.rmtree(home, ignore_errors=True)
    home.parent.mkdir(parents=True, exist_ok=True)
    # the machine's own python3, not this test's venv: a clean venv on top of it
    base = shutil.which('python3') or sys.executable
    _run(base, '-m', 'venv', '--clear', home, env=_clean_env())
    _run(python, '-m', 'pip', 'install', '-q',
         *[f'{name}=={version}' for name, version in COLAB_STACK.items()],
         env=_clean_env(), timeout=900)
    return python


def _runtime(home, copy_of=None):
    """A runtime at ``home``: reused while its ``pip freeze`` is what a fresh one had."""
    python = home / 'bin' / 'python'
    stamp = home / 'fresh-freeze.json'
    wanted = json.dumps(COLAB_STACK, sort_keys=True)
    if not (python.exists() and stamp.exists()
            and json.loads(stamp.read_text()) == {'stack': wanted, 'freeze': _freeze(python)}):
        if copy_of is not None:          # a second runtime: a copy of the first (same files)
            shutil.rmtree(home, ignore_errors=True)
            shutil.copytree(copy_of, home, symlinks=True,
                            ignore=shutil.ignore_patterns('colab-sim-*'))
        else:
            _build_runtime(home)
        stamp.write_text(json.dumps({'stack': wanted, 'freeze': _freeze(python)}))
    # the stub google.colab, and a kernel that imports it at start (as Colab's does)
    stub = home / 'colab-stub'
    (stub / 'google' / 'colab').mkdir(parents=True, exist_ok=True)
    (stub / 'google' / 'colab' / '__init__.py').write_text(STUB)
    kernel = home / 'share' / 'jupyter' / 'kernels' / f'colab-sim-{home.name}'
    kernel.mkdir(parents=True, exist_ok=True)
    (kernel / 'kernel.json').write_text(json.dumps({
        'argv': [str(python), '-m', 'ipykernel_launcher', '-f', '{connection_file}',
                 '--IPKernelApp.exec_lines=import google.colab'],
        'display_name': 'Python 3 (simulated Colab)', 'language': 'python'}))
    return python, kernel.name


@pytest.fixture(scope='module')
def runtimes():
    """Two identical runtimes (the machine's two cores run two notebooks at a time)."""
    first = _runtime(RUNTIME / '1')
    return [first, _runtime(RUNTIME / '2', copy_of=RUNTIME / '1')]


@pytest.fixture(scope='module')
def wheel(tmp_path_factory):
    """A wheel of this checkout (built from a copy, so the checkout gets no build/ folder)."""
    src = tmp_path_factory.mktemp('checkout')
    for name in ('pyproject.toml', 'README.md'):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / 'taotp', src / 'taotp',
                    ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))
    out = tmp_path_factory.mktemp('wheel')
    _run(sys.executable, '-m', 'pip', 'wheel', '-q', '--no-deps', '-w', out, src,
         env=_clean_env(), timeout=600)
    return next(out.glob('taotp-*.whl'))


def _restore(python, changed):
    """Undo what an install changed: ``changed`` maps a name to (before, after)."""
    added = [name for name, (was, _) in changed.items() if was is None]
    replaced = [f'{name}=={was}' for name, (was, _) in changed.items() if was is not None]
    if added:
        _run(python, '-m', 'pip', 'uninstall', '-y', '-q', *added, env=_clean_env())
    if replaced:
        _run(python, '-m', 'pip', 'install', '-q', '--no-deps', *replaced, env=_clean_env(),
             timeout=600)


def _run_notebook(path, python, kernel, wheel, scratch):
    """Run one notebook on a fresh runtime; returns a list of problems (empty: it worked)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    before = _installed(python)
    if 'taotp' in before:
        return ['taotp is already installed: not a fresh runtime']
    content = scratch / 'content'            # Colab's working folder: empty
    content.mkdir(parents=True)
    env = _clean_env(PYTHONPATH=str(python.parent.parent / 'colab-stub'),
                     TAOTP_INSTALL=str(wheel),
                     TAOTP_PROGRESS=str(scratch / 'progress.json'),
                     PYDEVD_DISABLE_FILE_VALIDATION='1')
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == 'code':
            cell.outputs, cell.execution_count = [], None
    problems = []
    try:
        NotebookClient(nb, timeout=300, kernel_name=kernel,
                       resources={'metadata': {'path': str(content)}}).execute(env=env)
        where = subprocess.run([str(python), '-c', 'import taotp; print(taotp.__file__)'],
                               capture_output=True, text=True, env=_clean_env(), cwd=content)
        if not where.stdout.startswith(str(python.parent.parent)):
            problems.append(f'taotp was not installed into the runtime: {where.stdout}'
                            f'{where.stderr[-500:]}')
        after = _installed(python)
        changed = {name: (before.get(name), after.get(name))
                   for name in sorted(set(before) | set(after))
                   if name != 'taotp' and before.get(name) != after.get(name)}
        if changed:
            problems.append("installing the book changed Colab's preinstalled packages "
                            f'(before, after): {changed}')
            _restore(python, changed)        # the next notebook gets Colab's stack again
    except CellExecutionError as err:
        problems.append(str(err)[-3000:])
    finally:                                 # the next notebook starts without taotp
        subprocess.run([str(python), '-m', 'pip', 'uninstall', '-y', '-q', 'taotp'],
                       capture_output=True, env=_clean_env())
    return problems


def _close_thread_event_loop():
    """Close the event loop nbclient made for this thread (jupyter_core never closes it).

    Left open, its self-pipe sockets are reported as unraisable ResourceWarnings in
    whatever test the garbage collector happens to run next (CI once blamed an export test).
    """
    import asyncio
    try:
        loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:                     # this thread never made one
        return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture(scope='module', autouse=True)
def _nothing_left_open():
    """Collect this module's garbage here, so a leak is reported against it and nowhere else."""
    yield
    import gc
    gc.collect()


@pytest.fixture(scope='module')
def results(runtimes, wheel, tmp_path_factory):
    """Every book notebook run once, two at a time: ``{name: problems}``."""
    try:
        import nbclient  # noqa: F401
    except ImportError:
        missing('nbclient is not installed (pip install -e ".[test]")')
    from concurrent.futures import ThreadPoolExecutor
    jupyter_path = os.pathsep.join(str(p.parent.parent / 'share' / 'jupyter')
                                   for p, _ in runtimes)
    queues = [BOOK[i::len(runtimes)] for i in range(len(runtimes))]

    def worker(runtime, paths):
        python, kernel = runtime
        try:
            return {p.stem: _run_notebook(p, python, kernel, wheel,
                                          tmp_path_factory.mktemp(p.stem)) for p in paths}
        finally:
            _close_thread_event_loop()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv('JUPYTER_PATH', jupyter_path)
        with ThreadPoolExecutor(len(runtimes)) as pool:
            done = list(pool.map(worker, runtimes, queues))
    return {name: problems for part in done for name, problems in part.items()}


def test_the_simulated_runtime_is_colabs_stack(runtimes):
    for python, _ in runtimes:
        installed = _installed(python)
        for name, version in COLAB_STACK.items():
            assert installed.get(name) == version, f'{name}: {installed.get(name)} != {version}'
        assert 'taotp' not in installed
        probe = _run(python, '-c', 'import sys; print(sys.prefix != sys.base_prefix, '
                     '[p for p in sys.path if "site-packages" in p and sys.prefix not in p])',
                     env=_clean_env())
        assert probe.split() == ['True', '[]'], f'not a clean venv: {probe}'


@pytest.mark.parametrize('name', [p.stem for p in BOOK])
def test_notebook_runs_on_a_fresh_colab_runtime(results, name):
    assert not results[name], '\n'.join(results[name])


LIVE = '''
import numpy as np
import taotp
explorer = taotp.widgets.Explorer(lambda fig, n: fig.subplots().plot(np.arange(n) ** 2),
                                  size=(2, 2), n=taotp.widgets.slider(1, 6, value=2))
display(explorer.widget())
'''


def _drag_live_slider(kernel, env):
    """Show an Explorer's live widget, move its slider as a page would: what came back.

    Returns (slider model state, the outputs the kernel sent for the move).
    """
    from jupyter_client.manager import start_new_kernel
    km, kc = start_new_kernel(kernel_name=kernel, env=env)
    try:
        msg_id = kc.execute(LIVE)
        models = {}
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg['msg_type'] == 'comm_open':
                models[msg['content']['comm_id']] = msg['content']['data']['state']
            if msg['msg_type'] == 'error':
                raise AssertionError('\n'.join(msg['content']['traceback']))
            if (msg['parent_header'].get('msg_id') == msg_id and msg['msg_type'] == 'status'
                    and msg['content']['execution_state'] == 'idle'):
                break
        slider = next(cid for cid, state in models.items()
                      if state.get('_model_name') == 'IntSliderModel')
        # what the widget page sends when a reader drags the slider to 5
        move = kc.session.msg('comm_msg', {'comm_id': slider, 'data': {
            'method': 'update', 'state': {'value': 5}, 'buffer_paths': []}})
        kc.shell_channel.send(move)
        sent = []
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg['parent_header'].get('msg_id') != move['header']['msg_id']:
                continue
            if msg['msg_type'] == 'status' and msg['content']['execution_state'] == 'idle':
                break
            sent.append((msg['msg_type'], sorted(msg['content'].get('data', {}))))
        return models[slider], sent
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_live_widgets_redraw_when_dragged_on_colabs_ipywidgets(runtimes, wheel, tmp_path):
    """In Colab (ipywidgets 7) a moved slider makes the kernel draw a new figure."""
    python, kernel = runtimes[0]
    target = tmp_path / 'site'
    _run(python, '-m', 'pip', 'install', '-q', '--no-deps', '--target', target, wheel,
         env=_clean_env())
    env = _clean_env(PYTHONPATH=os.pathsep.join([str(python.parent.parent / 'colab-stub'),
                                                 str(target)]),
                     PYDEVD_DISABLE_FILE_VALIDATION='1')
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv('JUPYTER_PATH', str(python.parent.parent / 'share' / 'jupyter'))
        state, sent = _drag_live_slider(kernel, env)
    assert (state['min'], state['max'], state['value']) == (1, 6, 2)
    assert ('display_data', ['image/png', 'text/plain']) in sent, sent


def test_live_widgets_redraw_when_dragged_in_local_jupyter():
    """The same in this environment's own kernel (JupyterLab, ipywidgets 8)."""
    state, sent = _drag_live_slider('python3', _clean_env(PYDEVD_DISABLE_FILE_VALIDATION='1'))
    assert (state['min'], state['max'], state['value']) == (1, 6, 2)
    assert ('display_data', ['image/png', 'text/plain']) in sent, sent
