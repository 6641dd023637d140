"""The worker's audit hook, which no answer can reach or change.

``install`` copies the functions below, and ``copies``'s, with one private dictionary as
their globals, holding only builtins and constants (tuples, frozensets, C functions).  A
module an answer patches is not theirs, and nothing of an answer runs while they run:
values are tested by exact type, never by their own methods; the garbage collector (whose
finalizers are an answer's code) is paused; tracing, profiling, another audit hook and
(``sandbox``) signal handlers are refused.  Their frames never reach an answer either: a
traceback's frame that is one of theirs cannot be read.  What the hook refuses: see
``DENIED``; code built, unmarshalled, run or made a function that copies a switched-off
function (``copies``); a module of a switched-off package; the package's code files and
the progress file; another process's ``/proc`` files.

What no hook in the answer's own process can stop: an answer that writes memory itself
(NumPy wraps any address as an array; ``ctypes`` is loaded for the walls), or one that
makes a function out of compiled code through bytecode of its own (``MAKE_FUNCTION``
raises no event).  Round 9 ran the package's code, carried compressed, both ways.  The
hook makes such an answer work for it; what holds is the walls (``sandbox``) and the
judge, where every verdict is computed.
"""
import builtins
import gc
import marshal
import os
import sys
import types

from . import copies

DENIED = frozenset((
    'os.fork', 'os.forkpty', 'os.posix_spawn', 'os.exec', 'os.spawn', 'os.system',
    'subprocess.Popen', 'os.kill', 'os.killpg', 'signal.pthread_kill', 'pty.spawn',
    'os.startfile', 'winreg', 'marshal.load', 'gc.get_objects', 'gc.get_referrers',
    'gc.get_referents', 'sys._current_frames', 'sys.settrace', 'sys.setprofile',
    'sys.addaudithook', 'sys.monitoring.register_callback'))
NO_IMPORT = ('_posixsubprocess', '_ctypes', 'cffi', '_cffi_backend', '_testcapi',
             '_testinternalcapi')
FRAMES = frozenset(('tb_frame', 'gi_frame', 'cr_frame', 'ag_frame'))
CODE_EVENTS = frozenset(('exec', 'function.__new__', 'code.__new__', 'marshal.loads'))
FRAME_HOLDERS = (types.TracebackType, types.GeneratorType, types.CoroutineType,
                 types.AsyncGeneratorType)
_COPIED = ('instructions', 'nested_codes', 'matched', 'match', 'code_copy')
# The functions below also read names that only their private scope holds (``private_scope``):
# BUSY, COPY_TABLE, MODULES_OFF, OWN_CODE, PID, PROC_DEV, PROGRESS, PROTECTED, get_ident,
# gc_isenabled, gc_disable, gc_enable, getcwd, stat, unmarshal and copies' constants (a linter
# sees them undefined).


def audit(event, args):
    """The hook: refuse ``event`` by raising, or return."""
    if type(event) is not str or type(args) is not tuple:     # ``is``, never ``==`` or ``in``:
        return                            # a type's metaclass may define __eq__ (round 9)
    if event in DENIED or event[:7] == 'ctypes.' or (
            event == 'object.__setattr__' and len(args) > 1 and type(args[1]) is str
            and args[1] == '__code__'):
        raise PermissionError(f'{event} is not available to an answer while it is checked')
    thread = get_ident()
    if thread in BUSY:                    # an event of the hook's own work
        return
    BUSY.add(thread)
    collecting = gc_isenabled()
    gc_disable()
    try:
        refusal = refused(event, args)
    finally:
        if collecting:
            gc_enable()
        BUSY.discard(thread)
    if refusal is not None:
        raise refusal


def refused(event, args):
    """The exception that refuses ``event``, or None."""
    if event == 'object.__getattr__' and len(args) > 1 and type(args[1]) is str \
            and args[1] in FRAMES and any(type(args[0]) is kind for kind in FRAME_HOLDERS):
        frame = getattr(args[0], args[1], None)
        if frame is not None and id(frame.f_code) in OWN_CODE:
            return PermissionError('the frames of the worker\'s audit hook are not available '
                                   'to an answer')
    elif event == 'import' and args:
        name = args[0]
        if type(name) is not str:
            return ImportError('a module\'s name must be a plain string')
        if name.split('.')[0] in NO_IMPORT:
            return ImportError(f'{name} is not available to an answer while it is checked')
        for module, hint in MODULES_OFF:
            if name == module or name[:len(module) + 1] == module + '.':
                return ImportError(f'{name} is switched off while this puzzle is checked: '
                                   f'{hint}')
    elif event == 'open' and args and (type(args[0]) is str or type(args[0]) is bytes):
        return opened(args[0])
    elif event in CODE_EVENTS and COPY_TABLE and args:
        found = copied(event, args)
        if found is not None:
            return PermissionError(f'this code is a copy of {found}, which is switched off '
                                   f'while this puzzle is checked')
    return None


def opened(path):
    text = path if type(path) is str else path.decode('utf-8', 'surrogateescape')
    try:
        where = stat(path)
    except (OSError, ValueError):
        return None                       # opening it will fail and say why
    if where.st_dev == PROC_DEV and not own_proc_file(text):
        return PermissionError('another process\'s /proc files are not available to an '
                               'answer while it is checked')
    here = (where.st_dev, where.st_ino)
    if here in PROTECTED:
        return PermissionError(f'the package\'s source files are not available to an answer '
                               f'while it is checked (opening {text})')
    if PROGRESS:
        try:
            progress = stat(PROGRESS)
        except OSError:
            return None
        if here == (progress.st_dev, progress.st_ino):
            return PermissionError('the progress file is not available to an answer')
    return None


def own_proc_file(text):
    """Whether a path to a file of ``/proc`` names this process's own files (or none's):
    judged on the path made absolute with '.' and '..' resolved (round 24 reached another
    process through ``/proc/self/../PID``), never through ``root`` or ``cwd``, which lead
    out of ``/proc`` and back in."""
    parts = []
    for part in (text if text[:1] == '/' else getcwd() + '/' + text).split('/'):
        if part == '..':
            parts = parts[:-1]
        elif part and part != '.':
            parts.append(part)
    if len(parts) < 2 or parts[0] != 'proc':
        return True                       # a link of the system's own into /proc
    if parts[1] in ('self', 'thread-self', PID):
        return len(parts) < 3 or parts[2] not in ('root', 'cwd')
    return not parts[1].isdigit()         # /proc/meminfo, /proc/cpuinfo, ...


def copied(event, args):
    """The switched-off name whose code the event's code copies, or None.  Code compiled
    from text is judged when it is run (``exec``) or made a function, never compiled here:
    compiling may warn, and warnings run Python an answer can replace."""
    code = args[0]
    if event == 'code.__new__':
        return match(instructions(code), COPY_TABLE)     # named or not: any name can be given
    if event == 'marshal.loads':
        if type(code) is not bytes:
            return None
        try:
            code = unmarshal(code)
        except Exception:
            return None
    return code_copy(code, COPY_TABLE) if type(code) is CodeType else None


def install(copy_table, protected, progress, modules_off):
    """Add the hook: ``copy_table`` (``copies.fingerprints``), ``protected`` (files no answer
    may open), ``progress`` (the progress file or None), ``modules_off`` ({package: hint})."""
    sys.addaudithook(private_scope(copy_table, protected, progress, modules_off)['audit'])


def _device(path):
    try:
        return os.stat(path).st_dev
    except OSError:
        return None                       # no /proc: nothing of it to guard


def private_scope(copy_table, protected, progress, modules_off):
    """The hook's functions and constants, in the dictionary that is their globals."""
    ids = set()
    for path in protected:
        try:
            found = os.stat(path)
            ids.add((found.st_dev, found.st_ino))
        except OSError:
            pass
    import _thread
    scope = {'__builtins__': {name: value for name, value in vars(builtins).items()   # C
                              if isinstance(value, (types.BuiltinFunctionType, type))},
             'DENIED': DENIED, 'NO_IMPORT': NO_IMPORT,
             'FRAMES': FRAMES, 'CODE_EVENTS': CODE_EVENTS, 'CodeType': types.CodeType,
             'FRAME_HOLDERS': FRAME_HOLDERS,
             'MIN_OPS': copies.MIN_OPS, 'SIMILAR': copies.SIMILAR, 'OPNAMES': copies.OPNAMES,
             'MAX_CODE_BYTES': copies.MAX_CODE_BYTES, 'SKIPPED': copies.SKIPPED,
             'COPY_TABLE': tuple(copy_table), 'PROTECTED': frozenset(ids),
             'PROGRESS': progress, 'PID': str(os.getpid()), 'getcwd': os.getcwd,
             'PROC_DEV': _device('/proc'),
             'MODULES_OFF': tuple(sorted(modules_off.items())), 'BUSY': set(),
             'get_ident': _thread.get_ident, 'gc_isenabled': gc.isenabled,
             'gc_disable': gc.disable, 'gc_enable': gc.enable, 'stat': os.stat,
             'unmarshal': marshal.loads}
    functions = [globals()[name] for name in ('audit', 'refused', 'opened', 'own_proc_file',
                                              'copied')]
    functions += [getattr(copies, name) for name in _COPIED]
    own = set()
    for f in functions:
        scope[f.__name__] = types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__)
        own.update(id(code) for code in copies.nested_codes(f.__code__))
    scope['OWN_CODE'] = frozenset(own)
    return scope
