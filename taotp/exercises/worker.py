"""The worker: a process of its own in which a reader's answer runs.

The judge starts one *zygote* per kernel (``python -m taotp.exercises.worker``), an
interpreter that imports NumPy and the package and then only forks: every answer starts
from the package as it is on disk.  Each fork limits its own memory and CPU time,
replaces the code of each function the puzzle refuses by one raising ``Refused``, puts
the operating system's walls around itself (``sandbox``, Linux x86-64), installs the audit
hook (``hook``), then unpickles the answer and serves the judge's calls, sending every
value back through ``wire.encode``.
"""
import builtins
import os
import signal
import socket
import struct
import sys
import threading
import traceback
import types

# one BLAS thread before NumPy loads: a fork must not inherit worker threads
for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ[_var] = '1'

from . import copies, hook, sandbox, wire  # noqa: E402

OUTPUT_LIMIT = 4000           # characters of the answer's own printing sent back per message
_PID = struct.Struct('!q')


# ----------------------------------------------------------------------------- the zygote

def zygote(control_fd):
    """Import everything once, then fork a worker for each channel the judge sends."""
    _preload()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)      # forks are reaped by the kernel
    control = socket.socket(fileno=control_fd)
    control.sendall(_PID.pack(os.getpid()))
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(control, 16, 1)
        except OSError:
            return
        if not fds:
            return                                    # the judge is gone
        pid = os.fork()
        if pid == 0:
            control.close()
            _worker_main(fds[0])                      # never returns
        os.close(fds[0])
        control.sendall(_PID.pack(pid))


def spawned(channel_fd):
    """A worker started on its own (where fork is unavailable): no zygote in between."""
    _preload()
    _worker_main(channel_fd)


def _preload():
    """The package and everything an answer may use from it, loaded before any answer."""
    import cloudpickle  # noqa: F401
    import numpy  # noqa: F401
    import taotp  # noqa: F401
    import taotp.corpus, taotp.programs, taotp.reference  # noqa: E401,F401
    from taotp.exercises import registry
    registry()
    sandbox.prepare(_package_files())
    _switch_off_checkers()            # the same for every puzzle: once, before any fork


# ----------------------------------------------------------------------------- one check's worker

class Refused(BaseException):
    """Raised by a package function that the checked puzzle switches off."""

    hints = {}

    def __init__(self, name):
        super().__init__(f'{name} is switched off while this puzzle is checked: '
                         f'{self.hints.get(name, "write this part yourself")}')
        self.name = name


class _Output:
    """sys.stdout / sys.stderr of the worker: keeps the first OUTPUT_LIMIT characters."""

    def __init__(self):
        self.parts, self.size, self.more = [], 0, False

    def write(self, text):
        text = str(text)
        room = OUTPUT_LIMIT - self.size
        self.parts.append(text[:max(room, 0)])
        self.size += min(len(text), max(room, 0))
        self.more = self.more or len(text) > room
        return len(text)

    def flush(self):
        pass

    def take(self):
        out = ''.join(self.parts) + ('\n[... more output cut]' if self.more else '')
        self.parts, self.size, self.more = [], 0, False
        return out


def _worker_main(fd):
    os.setsid()
    try:
        os.closerange(3, fd)
        os.closerange(fd + 1, 4096)
        null = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            os.dup2(null, std)
    except OSError:
        pass
    channel = socket.socket(fileno=fd)
    threading.Thread(target=_orphan_watch, args=(os.getppid(),), daemon=True).start()
    try:
        _serve(channel)
    finally:
        os._exit(0)


def _orphan_watch(parent, exit=os._exit, getppid=os.getppid, sleep=__import__('time').sleep):
    """End the worker when its parent is gone (a judge killed mid-check leaves no orphan)."""
    while True:
        sleep(1.0)
        if getppid() != parent:
            exit(3)


def _serve(channel):
    kind, answer_bytes, policy = wire.recv_trusted(channel)
    if kind != 'load':
        return
    output = _prepare(answer_bytes, policy)
    callables = []
    try:
        import cloudpickle
        answer = cloudpickle.loads(answer_bytes)
        reply = ('loaded', wire.encode(answer, callables))
    except BaseException as exc:                      # noqa: B036 (reported, never raised)
        reply = ('raised', *_describe(exc), 'loading')
    _reply(channel, reply, output)
    while True:
        try:
            message = wire.recv_trusted(channel)
        except Exception:
            return
        if message[0] != 'call':
            return
        _, ref, calls, echo = message
        values, reply = [], None
        for i, (args, kwargs) in enumerate(calls):
            try:
                value = callables[ref](*args, **kwargs)
                values.append((value, args, kwargs) if echo else value)
            except BaseException as exc:              # noqa: B036
                reply = ('raised', *_describe(exc), i)
                break
        if reply is None:
            try:
                reply = ('ok', wire.encode(values, callables))
            except BaseException as exc:              # noqa: B036
                reply = ('raised', *_describe(exc), len(values))
        _reply(channel, reply, output)


def _reply(channel, reply, output):
    try:
        data = wire.pickle.dumps(reply + (output.take(),), protocol=5)
    except Exception as exc:
        data = wire.pickle.dumps(('raised', 'WireError', str(exc), [], '', 'sending', ''))
    wire.send_bytes(channel, data)


_BUILTIN_ERRORS = tuple(value for value in vars(builtins).values()
                        if isinstance(value, type) and issubclass(value, BaseException))


def _kind(exc):
    """The name of ``exc``'s class; for one that is not an ``Exception``, followed by that of
    the builtin class it derives from, as in 'ValueError (a SystemExit)' (round 12: a
    SystemExit named ValueError passed 8.4)."""
    cls = type(exc)
    base = next(c for c in cls.__mro__ if any(c is b for b in _BUILTIN_ERRORS))
    if base is cls or cls is Refused or issubclass(cls, Exception):
        return cls.__name__
    return f'{cls.__name__} (a {base.__name__})'


def _describe(exc):
    """(type name, message, [(file, line, function)], formatted traceback) of an exception;
    the traceback stops at the audit hook's frame, which nothing may read."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        try:
            code = tb.tb_frame.f_code
        except PermissionError:           # the audit hook's own frame: it refused something
            break
        frames.append((code.co_filename, tb.tb_lineno or 0, code.co_name))
        tb = tb.tb_next
    name = 'a value that cannot be sent back' if isinstance(exc, wire.WireError) else _kind(exc)
    try:
        message = str(exc)[:2000]
    except BaseException:                 # noqa: B036 (an answer's exception, printed anyhow)
        message = '(its message could not be printed)'
    stack = traceback.StackSummary.from_list([(*frame, None) for frame in frames])
    text = ''.join(['Traceback (most recent call last):\n', *stack.format(),
                    f'{type(exc).__qualname__}: {message}\n'])
    return name, message, frames[-12:], text[-6000:]


def _prepare(answer_bytes, policy):
    """Everything that must happen before the answer's first byte is unpickled."""
    sys.path[:] = list(policy['sys_path'])
    try:
        os.chdir(policy['cwd'])
    except OSError:
        pass
    # the answer's tensors need torch: load it first, unless the puzzle refuses it (the
    # audit hook sees only the import of a module not loaded yet: 1.4, other einsums)
    if b'torch' in answer_bytes and 'torch.*' not in policy['refused']:
        try:
            import torch  # noqa: F401
        except Exception:
            pass
    _limit_resources(policy['memory_bytes'], policy['cpu_seconds'])
    Refused.hints = {**Refused.hints, **policy['refused']}    # the checkers', the puzzle's
    functions = tuple(sorted(n for n in policy['refused'] if not n.endswith('.*')))
    copy_table = copies.fingerprints(functions) + tuple(_CHECKERS)
    for name in functions:
        _switch_off(name)
    try:
        sandbox.install()
    except OSError:                       # a container that forbids seccomp: the hook only
        pass
    hook.install(copy_table, _package_files(), policy.get('progress'),
                 {n[:-2]: hint for n, hint in policy['refused'].items() if n.endswith('.*')})
    output = _Output()
    sys.stdout = sys.stderr = output
    return output


def _limit_resources(memory_bytes, cpu_seconds):
    try:
        import resource
    except ImportError:
        return
    try:
        with open('/proc/self/statm') as f:
            in_use = int(f.read().split()[0]) * os.sysconf('SC_PAGE_SIZE')
    except (OSError, ValueError):
        in_use = 0
    # hard limits too (an answer may raise a soft one up to its hard one); no file may
    # grow (the answer writes nothing; on Linux the sandbox refuses opening for writing)
    for limit, value in ((getattr(resource, 'RLIMIT_AS', None), in_use + memory_bytes),
                         (resource.RLIMIT_CPU, int(cpu_seconds) + 1),
                         (getattr(resource, 'RLIMIT_FSIZE', None), 0)):
        if limit is None:
            continue
        try:
            soft, hard = resource.getrlimit(limit)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


# ------------------------------------------------------------------------- switching a function off

_resolve = copies.resolve


def _refusing_code(name, freevars):
    """A code object that raises ``Refused(name)``, with the given free variables."""
    cells = ''.join(f'    {v} = None\n' for v in freevars)
    uses = ''.join(f'        {v}\n' for v in freevars)
    source = (f'def _outer():\n{cells}    def _refused(*args, **kwargs):\n{uses}'
              f'        raise __taotp_refused__({name!r})\n    return _refused\n')
    scope = {}
    exec(compile(source, '<switched off>', 'exec'), scope)
    code = scope['_outer']().__code__
    return code.replace(co_freevars=tuple(freevars))


def _switch_off_function(function, name):
    function.__globals__['__taotp_refused__'] = Refused
    function.__code__ = _refusing_code(name, function.__code__.co_freevars)


_CHECKERS = []      # the checker functions' fingerprints, taken in the zygote before the switch


def _switch_off_checkers():
    """Every function the checker modules define (``copies.checker_functions``), after
    taking their fingerprints: a copy of a checker's reference is refused like a call."""
    functions = copies.checker_functions()
    _CHECKERS[:] = copies.fingerprints(tuple(sorted(functions)))
    for name, function in functions.items():
        Refused.hints.setdefault(name, copies.CHECKER_HINT)
        _switch_off_function(function, name)


def _switch_off(dotted):
    obj = _resolve(dotted)
    obj = getattr(obj, '_implementation', obj)          # NumPy's dispatchers (np.einsum)
    obj = getattr(obj, '__wrapped__', obj)              # functools wrappers (lru_cache)
    if isinstance(obj, types.FunctionType):
        _switch_off_function(obj, dotted)
    elif isinstance(obj, type):
        for attr, member in list(vars(obj).items()):
            inner = getattr(member, '__func__', member)          # static and class methods
            for f in (inner, getattr(inner, 'fget', None)):
                if isinstance(f, types.FunctionType):
                    _switch_off_function(f, dotted)
    else:
        raise TypeError(f'cannot switch off {dotted} ({type(obj).__name__})')
    if dotted == 'numpy.einsum':            # and the C function beneath it, wherever it sits
        import numpy
        c_einsum = getattr(numpy, '_core', None) or numpy.core
        c_einsum = c_einsum.multiarray.c_einsum
        for module in list(sys.modules.values()):
            if getattr(module, '__dict__', {}).get('c_einsum') is c_einsum:
                module.c_einsum = numpy.einsum


# ----------------------------------------------------------------------------- the audit hook

_FILES = {}        # module names -> their files, filled in the zygote and inherited by forks


def _package_files():
    """The source and cached bytecode files of the package: every module loaded now, and
    every ``.py`` file in its folders (modules not loaded, such as the PyTorch extras)."""
    import importlib.util
    names = tuple(sorted(name for name, module in list(sys.modules.items())
                         if name.split('.')[0] == 'taotp' and getattr(module, '__file__', None)))
    if names not in _FILES:
        sources = {sys.modules[name].__file__ for name in names}
        root = os.path.dirname(sys.modules['taotp'].__file__)
        sources |= {os.path.join(folder, f) for folder, _, files in os.walk(root)
                    for f in files if f.endswith('.py')}
        files = set()
        for source in sources:
            files.add(os.path.realpath(source))
            try:
                files.add(os.path.realpath(importlib.util.cache_from_source(source)))
            except (NotImplementedError, ValueError):
                pass
        _FILES[names] = frozenset(files)
    return _FILES[names]


if __name__ == '__main__':
    if sys.argv[1] == 'zygote':
        zygote(int(sys.argv[2]))
    else:
        spawned(int(sys.argv[2]))
