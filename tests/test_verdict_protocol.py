"""The verdict protocol: attacks on the checking machinery itself, and what it promises.

Each row is a class of attack from the verdict-protocol issue (numbers as there), the
attacks tried here, and the mechanism that refuses them. Chapter-specific attacks of each
class are in the chapter's ``test_exercises_chNN.py``.

| class | attacks tried here | refused by |
|---|---|---|
| 3. work done before `check()` | a thread started earlier that patches the package and the checker in a loop; `taotp.decode` and a checker table patched before the call; a checker function replaced; the reader's copy of the package's code | the judge is a process of its own that the reader's code never runs in; the answer runs in a fresh worker forked from a pristine zygote; a copy of a switched-off function's bytecode is found in the answer's bytes |
| 3. work done inside the worker | an answer that patches the worker's checker tables, reads the package's source, starts a process, sends a signal, loads a C library, calls a switched-off function | the verdict is computed in the judge; the worker's audit hook; switched-off code raises `Refused` |
| 3. a worker that lies | a reply that names a global (a pickle that would run code), an oversized frame, a deep or cyclic structure | `wire.loads` admits no globals; size and node budgets |
| robustness | garbage, a hang, `sys.exit`, `os._exit`, 20 GB, a thread, an unpicklable answer | each ends only its worker: NOT YET with a reason within the budget |
| 7. reaching the hook | its frame from a traceback; the modules it called patched (round 8); a finaliser, another audit hook, a made-up event, tracing or profiling run inside it; then a copy compiled from text, or made a function without running it | the hook's functions have private globals of builtins and constants, test values by exact type, pause the garbage collector; its frames cannot be read; code is judged when run or made a function |
| 7. escaping the worker | writing or hard-linking the progress file, a socket, a process, a signal or its handler, the judge's memory, reading the package back, all with no hook at all; a copy of a switched-off function edited or sent as text and compiled in the worker; CPU spent in a thread that ended | seccomp walls and Landlock (Linux x86-64); copies compared by instruction sequence, also for code made in the worker; CPU from the process's totals |
| 7. progress forgets | a later failure after a PASS; the old file format | the best verdict is kept with its date |
"""
import json
import os
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import taotp
import taotp.exercises as exercises
from checking import NeverArray, fails, forever, passes, verdict
from taotp.exercises import check, progress_file, registry, wire
from taotp.exercises import store as progress_store

TESTS = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope='module', autouse=True)
def extra_checkers():
    """Register puzzles 99.N (tests/checker_fixtures.py) here and in a fresh judge."""
    saved = {k: os.environ.get(k) for k in ('TAOTP_EXTRA_CHECKERS', 'PYTHONPATH')}
    os.environ['TAOTP_EXTRA_CHECKERS'] = 'checker_fixtures'
    os.environ['PYTHONPATH'] = os.pathsep.join([TESTS] + [p for p in (saved['PYTHONPATH'] or '')
                                                          .split(os.pathsep) if p])
    registry.cache_clear()
    exercises._stop_judge()
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    registry.cache_clear()
    exercises._stop_judge()


def window(tokens, params, n_steps):
    """Puzzle 1.7's answer written with the package's forward pass (allowed there)."""
    out = list(tokens)
    block = len(params['pos_emb'])
    for _ in range(n_steps):
        out.append(int(np.argmax(taotp.transformer(np.array(out[-block:]), **params)[-1])))
    return out


def zeros(tokens, params, n_steps):
    return list(tokens) + [0] * n_steps


# ----------------------------------------------------------------------------- class 3: before check()

def test_a_patched_package_in_the_kernel_is_not_the_baseline(monkeypatch):
    """The reader makes taotp.decode (the checker's baseline) agree with a wrong answer."""
    monkeypatch.setattr(taotp.decoding, 'decode', lambda tokens, *a, **k: np.array(
        list(tokens) + [0] * k.get('max_steps', a[0] if a else 0)))
    monkeypatch.setattr(taotp, 'decode', taotp.decoding.decode)
    fails('1.7', zeros)


def test_a_patched_checker_in_the_kernel_changes_nothing(monkeypatch):
    from taotp.exercises import ch01, toolkit
    monkeypatch.setattr(ch01, 'check_1_7', lambda answer: toolkit.Passed('patched'))
    monkeypatch.setitem(ch01.SAMPLING, 'runs', 1)
    monkeypatch.setattr(toolkit, 'wrong', lambda *a, **k: toolkit.Passed('patched'))
    fails('1.7', zeros)


def test_a_thread_started_before_the_check_cannot_reach_it():
    stop = threading.Event()

    def meddle():
        from taotp.exercises import ch01
        while not stop.is_set():
            taotp.decoding.decode = lambda *a, **k: np.zeros(3, int)
            ch01.BLOCKS_1_7 = (1, 1, 1, 1)
            time.sleep(0.001)

    original, blocks = taotp.decoding.decode, None
    from taotp.exercises import ch01
    blocks = ch01.BLOCKS_1_7
    worker = threading.Thread(target=meddle, daemon=True)
    worker.start()
    try:
        fails('1.7', zeros)
    finally:
        stop.set()
        worker.join()
        taotp.decoding.decode, ch01.BLOCKS_1_7 = original, blocks


# ----------------------------------------------------------------------------- class 3: inside the worker

def text_after_patching():
    """Makes the worker's copy of the toolkit accept anything as an array, then returns text."""
    from taotp.exercises import toolkit
    toolkit.array = lambda value, *a, **k: value
    toolkit.LIMITS.clear()
    return 'not numbers'


def test_patching_the_workers_copy_of_the_checker_changes_no_verdict():
    fails('99.1', text_after_patching, 'must be an array of numbers')


@pytest.mark.parametrize('attempt, words', [
    (lambda: open(taotp.decoding.__file__).read(), "package's source files are not available"),
    (lambda: __import__('inspect').getsource(taotp.decoding.decode), 'could not get source'),
    (lambda: __import__('subprocess').run(['true']), 'not available to an answer'),
    (lambda: __import__('os').system('true'), 'os.system is not available'),
    (lambda: __import__('os').kill(__import__('os').getppid(), 0), 'os.kill is not available'),
    (lambda: __import__('ctypes').CDLL(None), 'not available to an answer'),
    (lambda: taotp.decode([0], taotp.random_params(np.random.default_rng(0)), 1),
     'taotp.decoding.decode is switched off while this puzzle is checked: write your own'),
    (lambda: __import__('taotp.train.model'),                                  # a whole package
     'taotp.train.model is switched off while this puzzle is checked: the PyTorch twin'),
    (lambda: open(__import__('os').path.join(__import__('os').path.dirname(taotp.__file__),
                                             'train', 'model.py')).read(),  # a module not loaded
     "package's source files are not available"),
    (lambda: __import__('gc').get_objects(), 'gc.get_objects is not available'),   # round 7:
    (lambda: setattr(taotp.decode, '__code__', (lambda: 0).__code__),  # ways to edit the hook
     'object.__setattr__ is not available'),
])
def test_the_worker_refuses_what_no_answer_needs(attempt, words):
    fails('99.3', attempt, words)


def test_the_package_decoder_works_where_no_puzzle_refuses_it():
    result = verdict('99.1', lambda: taotp.decode([0], taotp.random_params(
        np.random.default_rng(0)), 2))
    assert result.passed, result.message


# ----------------------------------------------------------------------------- class 3: a lying worker

class Runs:
    def __reduce__(self):
        return (os.system, ('echo pwned',))


@pytest.mark.parametrize('payload', [
    pickle.dumps(('ok', Runs(), '')),
    pickle.dumps(np.arange(3)),                             # even NumPy's own reconstruction
    pickle.dumps(('ok', ('X', 1), '')),
])
def test_worker_replies_are_plain_data_or_refused(payload):
    try:
        value = wire.loads(payload)
        wire.decode(value[1])
    except wire.WireError:
        return
    pytest.fail('an unreadable reply was accepted')


def test_replies_have_a_node_budget():
    nested = ('L', [])
    for _ in range(wire.MAX_DEPTH + 2):
        nested = ('L', [nested])
    with pytest.raises(wire.WireError, match='deeper'):
        wire.decode(nested)
    shared = ('L', [1] * 1000)
    wide = ('L', [shared] * 2000)                    # 2,000,000 values from a small pickle
    with pytest.raises(wire.WireError, match='more than'):
        wire.decode(wire.loads(pickle.dumps(wide)))


def test_arrays_cross_as_plain_copies_and_objects_as_opaque():
    class Sub(np.ndarray):
        pass
    tree = wire.encode({'a': np.arange(6.0).reshape(2, 3).view(Sub), 'f': len, 'o': object()}, [])
    value = wire.decode(wire.loads(pickle.dumps(tree)))
    assert type(value['a']) is np.ndarray and value['a'].shape == (2, 3)
    assert isinstance(value['f'], wire.Remote) and isinstance(value['o'], wire.Opaque)


# ----------------------------------------------------------------------------- robustness

def allocates():
    return np.ones((20 << 30) // 8)


def starts_a_thread():
    threading.Thread(target=lambda: time.sleep(60), daemon=False).start()
    return np.zeros(2)


def closes_the_process():
    os._exit(0)


@pytest.mark.parametrize('answer, words', [
    (None, 'expected a function; got None'),
    ('text', 'expected a function; got str'),
    (forever, 'took longer than 0.5 s'),
    (lambda: sys.exit(3), 'raised SystemExit: 3'),
    (closes_the_process, 'ended'),
    (allocates, 'MemoryError'),
    (lambda: NeverArray(), 'took longer than 0.5 s'),
    (lambda: threading.Lock(), 'a lock object'),
])
def test_every_kind_of_bad_answer_is_a_prompt_not_yet(answer, words):
    start = time.perf_counter()
    fails('99.1', answer, words)
    assert time.perf_counter() - start < 5


def test_a_thread_left_running_does_not_outlive_its_check():
    passes('99.1', starts_a_thread)
    passes('99.1', lambda: np.ones(3))


def test_an_unpicklable_answer_is_told_why():
    lock = threading.Lock()
    fails('99.1', lambda: lock, 'cannot be sent to the process that checks it')


@pytest.mark.slow       # three checks that each run into a real puzzle's own limit
def test_the_contract_answers_within_35_s_for_real_puzzles():
    for answer, words in ((forever, "longer than"), (lambda *a: allocates(), "MemoryError"),
                          (lambda *a: sys.exit(1), 'SystemExit')):
        start = time.perf_counter()
        fails('1.7', answer, words)
        assert time.perf_counter() - start < 35


def test_a_check_adds_little_to_the_answers_own_time():
    verdict('99.1', lambda: np.zeros(1))                  # the judge and zygote are up
    start = time.perf_counter()
    for _ in range(5):
        passes('99.1', lambda: np.zeros(1))
    assert (time.perf_counter() - start) / 5 < 1.5


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads /proc')
def test_the_judge_and_its_workers_run_one_blas_thread(monkeypatch):
    """A second OpenBLAS thread spins while it waits: on a busy machine that made the
    reference of 5.7 take 32 s instead of 1.6 s, past its budget.  The judge sets one thread
    for itself and its workers whatever the reader's kernel has."""
    for name in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
        monkeypatch.delenv(name, raising=False)
    exercises._stop_judge()                              # the next check starts a new one
    passes('99.1', lambda: np.zeros(1))
    with open(f'/proc/{exercises._judge["process"].pid}/environ', 'rb') as f:
        environment = dict(item.split(b'=', 1) for item in f.read().split(b'\0') if b'=' in item)
    exercises._stop_judge()                              # later tests get the usual one
    for name in (b'OPENBLAS_NUM_THREADS', b'OMP_NUM_THREADS', b'MKL_NUM_THREADS'):
        assert environment.get(name) == b'1', name


def test_what_the_answer_prints_is_shown(capsys):
    def talks():
        print('hello from the answer')
        return np.zeros(1)
    check('99.1', talks)
    out = capsys.readouterr().out
    assert out.index('hello from the answer') < out.index('PASS 99.1')


def test_a_killed_judge_is_started_again():
    passes('99.1', lambda: np.zeros(1))
    exercises._judge['process'].kill()
    passes('99.1', lambda: np.zeros(1))


def test_options_that_weaken_a_check_are_marked_and_not_counted(capsys):
    result = check('99.2', 'right', n_cases=1)
    assert result and result.relaxed == 'n_cases=1' and not result.counts
    assert capsys.readouterr().out.startswith('PASS (relaxed: n_cases=1; not counted as solved)')
    assert '99.2' not in progress_store.load()
    assert check('99.2', 'right').counts
    assert progress_store.load()['99.2']['solved']


def test_numbers_and_malformed_ids_are_refused():
    assert 'ids are strings' in check(6.2, None).message
    for bad in ('6.20.1', '06.2', '6', 'six', None):
        assert 'no puzzle' in check(bad, None).message


def test_every_registered_checker_has_a_budget_of_at_most_30_s():
    for puzzle in registry().values():
        if puzzle.checker is not None:
            assert puzzle.checker.budget <= 30, puzzle.id


def test_no_module_of_the_checker_layer_is_over_600_lines():
    """The issue's cap: one module per chapter (and the toolkit, the judge, the worker) stays
    readable; a chapter that outgrows it moves its programs to a module of their own."""
    from pathlib import Path
    sizes = {path.name: len(path.read_text().splitlines())
             for path in Path(exercises.__file__).parent.glob('*.py')}
    assert max(sizes.values()) <= 600, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


def test_every_refused_name_resolves_and_is_loaded_by_the_worker():
    from taotp.exercises import worker
    import importlib.util
    for puzzle in registry().values():
        for name in puzzle.refuse:
            if name.endswith('.*'):             # a whole package: the package's own must exist
                if name.startswith('taotp.'):   # (others, torch or jax, may be absent)
                    assert importlib.util.find_spec(name[:-2]) is not None, (puzzle.id, name)
            else:
                assert worker._resolve(name) is not None, (puzzle.id, name)


# ----------------------------------------------------------------------------- class 7: progress

def test_a_solved_puzzle_stays_solved(tmp_path, monkeypatch):
    monkeypatch.setenv('TAOTP_PROGRESS', str(tmp_path / 'p.json'))
    check('99.2', 'right')
    check('99.2', 'wrong')
    row = progress_store.load()['99.2']
    assert row['solved'] and row['latest'] == 'not yet'


def test_the_first_format_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv('TAOTP_PROGRESS', str(tmp_path / 'p.json'))
    progress_file().write_text(json.dumps({'2.6': 'solved', '2.5': 'not yet'}))
    table = progress_store.load()
    assert table['2.6']['solved'] and table['2.5']['latest'] == 'not yet'


def test_two_kernels_recording_at_once_lose_no_verdict(tmp_path):
    """Red team, round 24: read, change and write with no lock lost 6 to 15 of 18 solved
    puzzles when two processes recorded at once."""
    script = ('import sys\nfrom taotp.exercises import store\n'
              'for i in range(150):\n'
              '    store.record(f"{sys.argv[1]}.{i % 9 + 1}", True)\n')
    env = {**os.environ, 'TAOTP_PROGRESS': str(tmp_path / 'p.json')}
    runs = [subprocess.Popen([sys.executable, '-c', script, str(who)], env=env)
            for who in (97, 98)]
    assert [run.wait(timeout=120) for run in runs] == [0, 0]
    table = json.loads((tmp_path / 'p.json').read_text())['puzzles']
    assert sorted(table) == sorted(f'{who}.{i}' for who in (97, 98) for i in range(1, 10))
    assert all(row['solved'] for row in table.values())


def test_an_unreadable_progress_file_is_moved_aside_not_written_over(tmp_path, monkeypatch):
    monkeypatch.setenv('TAOTP_PROGRESS', str(tmp_path / 'p.json'))
    half = '{"version": 2, "puzzles": {"2.5": {"solved": "2026-11-01", "lat'
    progress_file().write_text(half)
    progress_store.record('2.6', False)
    kept = list(tmp_path.glob('p.json.unreadable-*'))
    assert len(kept) == 1 and kept[0].read_text() == half
    table = progress_store.load()
    assert list(table) == ['2.6'] and table['2.6']['latest'] == 'not yet'


def test_the_readers_folder_does_not_shadow_the_judges_standard_library(tmp_path):
    """Red team, round 24: the judge ran with the reader's working folder first on its path,
    so a ``selectors.py`` there was imported by the judge instead of the standard one."""
    (tmp_path / 'selectors.py').write_text(
        f'open({str(tmp_path / "imported")!r}, "w").close()\nraise ImportError("shadow")\n')
    (tmp_path / 'kernel').mkdir()
    script = tmp_path / 'kernel' / 'run.py'     # the kernel's own path starts in kernel/
    script.write_text('from taotp.exercises import check, keep_progress\n'
                      'keep_progress(False)\ncheck("2.5", None)\n')
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(
        [str(Path(__file__).resolve().parents[1])] + [os.environ.get('PYTHONPATH', '')])}
    env.pop('TAOTP_EXTRA_CHECKERS', None)
    out = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120).stdout
    assert out.startswith('NOT YET 2.5') and 'did not answer' not in out, out
    assert not (tmp_path / 'imported').exists()


def test_progress_survives_a_new_process_and_names_its_file(tmp_path):
    env = {**os.environ, 'TAOTP_PROGRESS': str(tmp_path / 'p.json')}
    env.pop('TAOTP_EXTRA_CHECKERS', None)
    solve = 'from taotp.exercises import check; check("2.5", None)'
    subprocess.run([sys.executable, '-c', solve], env=env, check=True, capture_output=True)
    out = subprocess.run([sys.executable, '-m', 'taotp', 'progress', '2'], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert '2.5' in out and 'not yet' in out
    assert out.splitlines()[-1] == f'kept in {tmp_path / "p.json"}'


# ----------------------------------------------------------------------------- walls the answer cannot edit

WALLED = sys.platform == 'linux' and __import__('platform').machine() == 'x86_64'


def behind_the_walls(attempt):
    """Run ``attempt`` (a line of Python) in a process with the worker's walls and no audit
    hook: what an answer meets even past the hook."""
    script = ('import os, taotp, taotp.decoding\n'
              'from taotp.exercises import sandbox, worker\n'
              'sandbox.prepare(worker._package_files())\n'
              'assert sandbox.install()\n'
              f'try:\n    {attempt}\nexcept OSError as exc:\n'
              '    print("refused with errno", exc.errno)\n'
              'else:\n    print("went through")\n')
    return subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                          timeout=60).stdout


@pytest.mark.skipif(not WALLED, reason='the seccomp walls are built for Linux on x86-64')
@pytest.mark.parametrize('attempt', [
    "open(os.environ['TAOTP_PROGRESS'] + '.forged', 'w')",
    "os.link(os.environ['TAOTP_PROGRESS'], os.environ['TAOTP_PROGRESS'] + '.link')",
    "__import__('socket').socket()",
    "os.posix_spawn('/bin/true', ['/bin/true'], {})",
    "os.kill(os.getppid(), 0)",
    "open(f'/proc/{os.getppid()}/mem', 'rb')",
    "os.fchmod(os.open(os.environ['TAOTP_PROGRESS'] + '.x', os.O_RDONLY), 0o777)",
    "__import__('signal').signal(__import__('signal').SIGALRM, print)",   # round 8
])
def test_the_walls_stand_without_the_hook(attempt):
    progress = os.environ['TAOTP_PROGRESS']
    with open(progress + '.x', 'w'):
        pass
    os.chmod(progress + '.x', 0o644)
    assert 'refused with errno' in behind_the_walls(attempt)
    assert not os.path.exists(progress + '.forged') and not os.path.exists(progress + '.link')
    assert os.stat(progress + '.x').st_mode & 0o777 == 0o644


def _landlock_abi():
    try:
        import ctypes
        return max(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1), 0)
    except (OSError, AttributeError):
        return 0


@pytest.mark.skipif(not WALLED or not _landlock_abi(), reason='Landlock: Linux 5.13 and later')
@pytest.mark.parametrize('attempt', [
    "open(taotp.decoding.__file__).read()",
    "os.open('decoding.py', os.O_RDONLY, "              # a path the hook cannot resolve
    "dir_fd=os.open(os.path.dirname(taotp.decoding.__file__), os.O_RDONLY))",
    "__import__('importlib').reload(taotp.decoding)",
])
def test_past_the_hook_the_package_cannot_be_read_back(attempt):
    """Red team, round 7: with the hook edited away, reloading the package's modules from
    disk brought back every switched-off function; the kernel refuses those reads."""
    assert 'refused with errno 13' in behind_the_walls(attempt)


# ----------------------------------------------------------------------------- a hook out of reach

def then_a_copy(reach):
    """An answer that tries ``reach`` (to switch the hook's checks off), then makes a copy of
    the switched-off decoder from its text."""
    text = decode_source()

    def answer():
        reach()
        scope = {}
        exec(compile(text, '<mine>', 'exec'), scope)
        return 'went through'
    return answer


def through_a_traceback():
    """Red team, round 8: the hook's frame, from the traceback of something it refused."""
    try:
        os.system('true')
    except PermissionError as exc:
        tb = exc.__traceback__
        while tb is not None:
            tb.tb_frame.f_globals.update(COPY_TABLE=(), BUSY={__import__('_thread').get_ident()})
            tb = tb.tb_next


def through_patched_modules():
    """Red team, round 8: the modules whose functions the hook once looked up as it ran."""
    import posixpath
    import sys as worker_sys
    from taotp.exercises import copies
    copies.match = copies.code_copy = copies.instructions = lambda *args: None
    posixpath._joinrealpath = lambda *args: (worker_sys._getframe(1), 1 / 0)

    open(os.devnull).close()


def empty_the_hooks_table():
    """Empty the copy table of any frame up the stack that holds it: run inside the hook,
    this would switch its checks off."""
    import sys as worker_sys
    frame = worker_sys._getframe(2)
    while frame is not None:
        if 'COPY_TABLE' in frame.f_globals:
            frame.f_globals['COPY_TABLE'] = ()
        frame = frame.f_back


class Lure:
    """Cyclic garbage whose finaliser (and ``tb_frame``) edits any frame that holds the
    hook's table: run inside the hook, it would switch the hook's checks off."""
    def __init__(self):
        self.me = self

    def __del__(self):
        empty_the_hooks_table()


def through_another_hook():
    """An audit hook of the answer's, which would run inside the worker's (on the events the
    worker's raises) and edit its frame: it is never added."""
    import sys as worker_sys

    def mine(event, args):
        empty_the_hooks_table()
    worker_sys.addaudithook(mine)


def through_a_metaclass():
    """Round 9: a type whose metaclass defines __eq__, in an event made up with sys.audit,
    was asked by the hook's ``type(x) in (str, bytes)``: it edited the hook's frame."""
    import sys as worker_sys

    class Meta(type):
        def __eq__(cls, other):
            empty_the_hooks_table()
            return False
        __hash__ = type.__hash__

    class Bait(metaclass=Meta):
        pass
    for event in ('open', 'object.__getattr__', 'exec', 'import', 'code.__new__'):
        try:
            worker_sys.audit(event, Bait(), 'tb_frame')
        except ImportError:                     # the hook's answer to a name that is no text
            pass


def through_a_finaliser():
    import gc
    gc.set_threshold(1)
    for _ in range(200):
        Lure()
        compile('x = 1', '<mine>', 'exec')        # the hook runs, allocating


@pytest.mark.parametrize('reach, words', [
    (through_a_traceback, "frames of the worker's audit hook are not available"),
    (through_patched_modules, 'is a copy of taotp.decoding.decode'),
    (through_a_finaliser, 'is a copy of taotp.decoding.decode'),
    (lambda: __import__('sys').settrace(lambda *args: None), 'sys.settrace is not available'),
    (lambda: __import__('sys').setprofile(lambda *args: None), 'sys.setprofile is not'),
    (through_another_hook, 'is a copy of taotp.decoding.decode'),
    (through_a_metaclass, 'is a copy of taotp.decoding.decode'),
    (lambda: __import__('sys').audit('object.__getattr__', Lure(), 'tb_frame'),
     'is a copy of taotp.decoding.decode'),           # an event of its own, with its object
])
def test_no_answer_reaches_the_hook(reach, words):
    fails('99.3', then_a_copy(reach), words)


def test_a_copy_made_a_function_without_running_it_is_recognised():
    """Code compiled from a syntax tree, never run: its function is made directly."""
    text = decode_source()

    def answer():
        import ast
        import types
        code = compile(ast.parse(text), '<mine>', 'exec')
        inner = next(c for c in code.co_consts if isinstance(c, types.CodeType))
        return types.FunctionType(inner, {})
    fails('99.3', answer, 'is a copy of taotp.decoding.decode')


def test_a_file_made_after_the_worker_started_beside_the_package_stays_readable():
    """Landlock's rules are built for each worker: a file new in a folder on the way to the
    package (here the repository's root) can still be read by an answer."""
    verdict('99.1', lambda: np.zeros(1))                   # the zygote is running
    path = os.path.join(os.path.dirname(os.path.dirname(taotp.__file__)),
                        f'.landlock-probe-{os.getpid()}')
    with open(path, 'w') as f:
        f.write('readable')
    try:
        result = verdict('99.1', lambda: np.array([len(open(path).read())]))
    finally:
        os.remove(path)
    assert result.passed, result.message


def decode_source(*edits):
    """The text of the package's decoder under another name, with ``edits`` appended to it."""
    import inspect
    text = inspect.getsource(taotp.decoding.decode).replace('def decode(', 'def my_decode(', 1)
    lines = text.splitlines()
    body = [line for line in lines if line.startswith('    ')]
    return '\n'.join(lines + [body[-1][:len(body[-1]) - len(body[-1].lstrip())] + e
                              for e in edits]) + '\n'


def test_an_edited_copy_of_a_switched_off_function_is_recognised():
    scope = dict(vars(taotp.decoding))
    exec(compile(decode_source('unused = 0', 'unused += 1'), '<copy>', 'exec'), scope)
    fails('99.3', scope['my_decode'], 'copy of the code of taotp.decoding.decode')


def test_bytecode_sent_as_text_and_rebuilt_under_an_anonymous_name_is_recognised():
    text = taotp.decoding.decode.__code__.co_code.decode('latin-1')

    def answer():
        switched_off = taotp.decoding.decode.__code__
        return switched_off.replace(co_code=text.encode('latin-1'), co_name='<decode>')
    fails('99.3', answer, 'copy of')


def test_a_copy_sent_as_text_and_compiled_in_the_worker_is_recognised():
    text = decode_source()

    def answer():
        scope = dict(vars(taotp.decoding))
        exec(compile(text, '<sent as text>', 'exec'), scope)
        return scope['my_decode']
    fails('99.3', answer, 'copy of taotp.decoding.decode')


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads /proc')
@pytest.mark.parametrize('between', [(), ('self', '..'), ('self', 'root', 'proc'), ('.',)],
                         ids=['direct', 'up from self', 'through the root link', 'dot'])
def test_another_process_is_out_of_reach_by_any_path_to_proc(between):
    """Red team, round 24: the hook read the path as written, so ``/proc/self/../PID``
    opened the judge's files (the walls kept its memory out of reach).  Each path is
    ``/proc``, the segments ``between``, the parent's id and ``status``."""
    def reader():               # the parent seen from the worker: the process that forked it
        with open('/'.join(('', 'proc', *between, str(os.getppid()), 'status'))) as f:
            f.read()
        return np.zeros(1)
    fails('99.1', reader, "another process's /proc files are not available")


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads /proc')
def test_an_answer_still_reads_its_own_proc_files():
    def reader():
        with open('/proc/self/status') as f, open('/proc/meminfo') as g:
            return np.zeros(len(f.read()[:1] + g.read()[:1]) - 1)
    passes('99.1', reader)


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='reads /proc')
def test_cpu_spent_in_a_thread_that_ended_still_counts():
    from taotp.exercises.judge import Worker
    burn = ('import threading, time\n'
            't = threading.Thread(target=lambda: sum(i * i for i in range(3_000_000)))\n'
            't.start(); t.join(); print("ready", flush=True); time.sleep(30)\n')
    process = subprocess.Popen([sys.executable, '-c', burn], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == 'ready'
        spent = Worker(None, process.pid).cpu_seconds()
        assert spent >= 0.1, spent
    finally:
        process.kill()
        process.communicate()


def test_the_hook_depends_on_nothing_an_answer_can_change():
    """Every global name the hook's functions load is in their private scope or its builtins,
    and every value there is immutable or a C function (``BUSY``, the threads inside the
    hook, is the one set, and only the hook holds it)."""
    import dis
    import types
    from taotp.exercises import hook
    scope = hook.private_scope((), [taotp.decoding.__file__], None, {'taotp.train': 'off'})
    builtin = scope['__builtins__']
    immutable = (tuple, frozenset, str, int, float, bool, type(None), type,
                 types.BuiltinFunctionType)
    for name, value in scope.items():
        if isinstance(value, types.FunctionType):
            assert value.__globals__ is scope, name
            for code in hook.copies.nested_codes(value.__code__):
                for op in dis.get_instructions(code):
                    if op.opname == 'LOAD_GLOBAL':
                        assert op.argval in scope or op.argval in builtin, (name, op.argval)
        elif name not in ('__builtins__', 'BUSY'):
            assert isinstance(value, immutable), (name, type(value))
    assert all(isinstance(v, (types.BuiltinFunctionType, type)) for v in builtin.values())
