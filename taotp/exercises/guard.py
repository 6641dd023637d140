"""Safe handling of submissions: calls with a time limit, strict type and shape checks.

Everything here raises ``Finding`` (never another exception) so a checker can
turn any problem into a NOT YET message.
"""
import gc
import hashlib
import signal
import sys
import threading
import time
import traceback
import types
from contextlib import contextmanager

import numpy as np

from ..model import multi_level
from ..params import ParamsError, config, count_non0_params, count_params, param_problems
from .result import Finding


class _TimeUp(BaseException):
    """Raised by the alarm; a BaseException so a submission's `except Exception` can't eat it.

    ``owner`` is the ``time_limit`` whose deadline passed (limits nest: a checker's
    total budget encloses the limits of the single calls it makes).
    """

    def __init__(self, owner=None):
        super().__init__('time limit')
        self.owner = owner


_deadlines = []       # (deadline, owner) of every active time_limit, outermost first


def _usable():
    return hasattr(signal, 'setitimer') and threading.current_thread() is threading.main_thread()


def _arm():
    """Set the alarm for the earliest active deadline (or clear it)."""
    if not _deadlines:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    left = min(d for d, _ in _deadlines) - time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, max(left, 1e-4))


def _swallowed_here(frame):
    """True inside a garbage-collector callback or a ``__del__``: Python reports an exception
    raised there as 'unraisable' and carries on, so a time-up must wait until it is over."""
    callbacks = {getattr(cb, '__code__', None) for cb in gc.callbacks}
    while frame is not None:
        if frame.f_code in callbacks or frame.f_code.co_name == '__del__':
            return True
        frame = frame.f_back
    return False


def _on_alarm(signum, frame):
    now = time.monotonic()
    due = [owner for deadline, owner in _deadlines if deadline <= now]
    if due and _swallowed_here(frame):
        signal.setitimer(signal.ITIMER_REAL, 1e-3)     # try again in a millisecond
        return
    if due:
        raise _TimeUp(due[0])          # the outermost expired limit wins
    _arm()                             # woke early: wait for the next deadline


def live(owner):
    """True when ``owner`` is the owner of a running ``time_limit`` (a _TimeUp of no running
    limit was raised by a submission itself, and is its bug, not a time-up)."""
    return any(owner is o for _, o in _deadlines)


@contextmanager
def time_limit(seconds):
    """Interrupt the body after ``seconds``; nests (main thread on Unix only; else no limit).

    The body sees ``_TimeUp(owner)``; this context lets its own pass through to the
    caller (who reports it) and re-raises an enclosing limit's unchanged.
    """
    if not _usable() or not seconds:
        yield
        return
    owner = object()
    outermost = not _deadlines
    previous = signal.signal(signal.SIGALRM, _on_alarm) if outermost else None
    _deadlines.append((time.monotonic() + seconds, owner))
    _arm()
    try:
        yield owner
    finally:
        _deadlines.pop()
        _arm()
        if outermost:
            signal.signal(signal.SIGALRM, previous)


_ctrl_c = {'depth': 0, 'pressed': False}


def _on_sigint(signum, frame):
    _ctrl_c['pressed'] = True
    raise KeyboardInterrupt


@contextmanager
def _real_interrupts_pass():
    """A real Ctrl-C stops the notebook; a KeyboardInterrupt the submission raises itself does not.

    Yields a function telling whether the user pressed Ctrl-C (nested uses share it).
    """
    if not _usable():
        yield lambda: False
        return
    outermost = _ctrl_c['depth'] == 0
    if outermost:
        _ctrl_c['pressed'] = False
        previous = signal.signal(signal.SIGINT, _on_sigint)
    _ctrl_c['depth'] += 1
    try:
        yield lambda: _ctrl_c['pressed']
    finally:
        _ctrl_c['depth'] -= 1
        if outermost:
            signal.signal(signal.SIGINT, previous)


def call(fn, *args, what='your function', on=None, seconds=20, **kwargs):
    """Call a submitted function; any exception, exit or timeout becomes a ``Finding``."""
    if not callable(fn):
        raise Finding(f'expected a function; got {type(fn).__name__}')
    where = f' on {on}' if on is not None else ''
    with _real_interrupts_pass() as user_pressed_ctrl_c:
        try:
            with time_limit(seconds) as mine:
                return fn(*args, **kwargs)
        except _TimeUp as up:
            if up.owner is mine:
                raise Finding(f'{what} took longer than {seconds} s{where}; is there an endless '
                              f'loop?', on) from None
            if live(up.owner):
                raise                   # an enclosing budget ran out: not this call's fault
            raise Finding(f'{what} raised {type(up).__name__}{where} (a time-up of no running '
                          f'limit: raised by the submission itself)', on,
                          traceback.format_exc()) from None
        except Finding:
            raise
        except KeyboardInterrupt:
            if user_pressed_ctrl_c():
                raise
            raise Finding(f'{what} raised KeyboardInterrupt{where}', on,
                          traceback.format_exc()) from None
        except BaseException as exc:    # the submission's own bug (SystemExit too), reported
            raise Finding(f'{what} raised {type(exc).__name__}: {exc}{where}', on,
                          traceback.format_exc()) from None


def program(params, what='your params'):
    """A submitted program must pass ``validate_params``; report the first problem."""
    if params is None:
        raise Finding(f'expected a params dict (tok_emb, pos_emb, out_emb, layers, lnf); got None '
                      f'(starter code not filled in yet?)')
    try:
        problems = param_problems(params)
    except Exception as exc:  # something so odd that validation itself tripped
        raise Finding(f'{what} could not be read as a program ({type(exc).__name__}: {exc})')
    if problems:
        more = f' (and {len(problems) - 1} more problems)' if len(problems) > 1 else ''
        raise Finding(f'{what}: {problems[0]}{more}')
    return params


def array(value, shape=None, what='your result', integer=False, finite=True):
    """Convert to an ndarray and check its exact shape (no broadcasting) and values."""
    if value is None:
        raise Finding(f'{what} is None (did the function forget to return?)')
    try:
        arr = np.asarray(value)
    except Exception as exc:
        raise Finding(f'{what} is not an array ({exc})')
    if arr.dtype.kind not in 'biuf':
        raise Finding(f'{what} must be numeric; got dtype {arr.dtype}')
    if shape is not None and arr.shape != tuple(shape):
        raise Finding(f'{what} has shape {arr.shape}, expected {tuple(shape)}')
    if finite and arr.dtype.kind == 'f' and not np.all(np.isfinite(arr)):
        raise Finding(f'{what} contains NaN or infinity')
    if integer:
        if arr.dtype.kind == 'f' and not np.all(arr == np.round(arr)):
            raise Finding(f'{what} must hold integers (token ids)')
        arr = arr.astype(np.int64)
    return arr


def run_program(run, *args, what='your program', on=None):
    """Run the package on a submitted program; ParamsError etc. become a Finding."""
    try:
        return run(*args)
    except ParamsError as exc:
        raise Finding(f'{what}: {exc}', on) from None
    except Exception as exc:
        raise Finding(f'{what} failed with {type(exc).__name__}: {exc}', on,
                      traceback.format_exc()) from None


LIMITS = {   # budget keyword -> (what it limits, how to measure it on a program)
    'layers': ('layers', lambda p, c: c['n_layers']),
    'heads': ('heads in a layer', lambda p, c: max(c['n_heads'], default=0)),
    'total_heads': ('heads in all layers', lambda p, c: sum(c['n_heads'])),
    'd_model': ('d_model', lambda p, c: c['d_model']),
    'd_head': ('d_head', lambda p, c: max(c['d_head'], default=0)),
    'd_ff': ('MLP width (d_ff) in a layer', lambda p, c: max(c['d_ff'], default=0)),
    'params': ('parameters', lambda p, c: count_params(p)['n_params']),
    'non_zero': ('non-zero parameters', lambda p, c: count_non0_params(p)['n_params']),
}


def budget(submitted, what='your program', **limits):
    """Enforce a puzzle's stated budget on the submitted program itself.

    Each keyword of ``LIMITS`` is an upper bound (``layers=1, heads=4, params=2000``).
    Counts are taken on the submitted arrays converted to float64 (lists count
    too), with the book's rules (layer norms not counted, a tied ``out_emb``
    counted once).  Returns the measured values; raises ``Finding`` naming the
    first limit exceeded.
    """
    program(submitted, what)
    unknown = set(limits) - set(LIMITS)
    if unknown:
        raise ValueError(f'budget: unknown limits {sorted(unknown)}; expected some of '
                         f'{sorted(LIMITS)}')
    cfg = config(submitted)
    measured = {}
    for key, bound in limits.items():
        name, measure = LIMITS[key]
        measured[key] = value = measure(submitted, cfg)
        if bound is not None and value > bound:
            raise Finding(f'{what} is over the budget: {value:,} {name}; at most {bound:,} '
                          f'allowed')
    return measured


# ----------------------------------------------------------------------------- reading a submission once

MAX_ELEMENTS = 1 << 24      # numbers per submitted array a checker copies (128 MB in float64)


def _f64(value):
    """``value`` as a fresh plain float64 ndarray (read once), or unchanged if it is no array."""
    if isinstance(value, (bool, np.bool_, str, bytes, dict)) or value is None:
        return value
    if isinstance(value, np.ndarray) and value.size > MAX_ELEMENTS:   # e.g. a broadcast view
        raise Finding(f'an array of your program has shape {value.shape} ({value.size:,} numbers); '
                      f'the checkers read at most {MAX_ELEMENTS:,} numbers per array')
    try:
        return np.array(value, dtype=np.float64)    # a new base-class array, never a view
    except Exception:      # ragged, text, complex, ...: left for the validation to name
        return value


def _norm_copy(ln):
    if not isinstance(ln, dict):
        return ln
    out = {}
    for key, value in dict(ln).items():
        value = _f64(value) if key in ('gamma', 'beta') else value
        out[key] = float(value) if isinstance(value, np.ndarray) and value.ndim == 0 else value
    return out


def frozen(params, what='your params'):
    """The submitted program read once into plain dicts, lists and float64 ndarrays, validated.

    Checkers count, check and run this copy, never the submission itself, so the
    program that is counted is the program that runs: an array subclass or a list
    whose reads answer differently each time, a dict subclass, a weight the
    submission changes afterwards, or a view of the checker's own arrays make no
    difference.  A malformed program becomes a ``Finding`` naming the field.
    """
    if params is None or not isinstance(params, dict):
        return program(params, what)
    try:
        copy = {}
        for key in list(params):          # each value read once, through the mapping's own reads
            item = params[key]
            if key == 'pos_emb':
                item = [_f64(t) for t in item] if multi_level(item) else _f64(item)
            elif key in ('lnf',):
                item = _norm_copy(item)
            elif key == 'layers' and isinstance(item, (list, tuple)):
                item = [{k: _norm_copy(layer[k]) if k in ('ln1', 'ln2') else _f64(layer[k])
                         for k in list(layer)} if isinstance(layer, dict) else layer
                        for layer in list(item)]
            else:
                item = _f64(item)
            copy[key] = item
    except Finding as finding:
        raise Finding(f'{what}: {finding.message}') from None
    except Exception as exc:
        raise Finding(f'{what} could not be read as plain arrays ({type(exc).__name__}: '
                      f'{exc})') from None
    return program(copy, what)


def _feed(digest, value):
    if isinstance(value, dict):
        for key in sorted(value):
            digest.update(str(key).encode())
            _feed(digest, value[key])
    elif isinstance(value, (list, tuple)) and not all(np.isscalar(v) for v in value):
        digest.update(b'[')
        for item in value:
            _feed(digest, item)
        digest.update(b']')
    else:
        arr = np.asarray(value, dtype=np.float64)
        digest.update(str(arr.shape).encode() + arr.tobytes())


def submission_rng(base, *values):
    """A Generator seeded by ``base`` and a hash of ``values`` (programs, prompts, numbers).

    Deterministic for a given answer; an answer cannot be tailored to the inputs it
    will be tried on, because they depend on the answer itself.
    """
    digest = hashlib.sha256()
    for value in values:
        _feed(digest, value)
    return np.random.default_rng([base, int.from_bytes(digest.digest()[:8], 'little')])


@contextmanager
def watching(forbidden):
    """Record the first function of ``forbidden`` (code object -> name) entered in the body.

    Used to tell a submission that hands a puzzle's work back to the package's own
    implementation (``sys.settrace``; slow, so only around the submission's calls).
    Threads started in the body are watched too, and a body that switches the
    watch off (``sys.settrace``) is recorded as ``'sys.settrace'``.  A submission
    determined to hide (a reference to settrace bound beforehand, a process of its
    own, a copy of the package's source) can: this is a guide, not a sandbox.
    """
    seen = []
    previous, previous_threads, settrace = sys.gettrace(), threading.gettrace(), sys.settrace

    def tracer(frame, event, arg):
        if not seen and frame.f_code in forbidden:
            seen.append(forbidden[frame.f_code])
        return previous(frame, event, arg) if previous is not None else None

    def switch(function):                 # the watch stays on; the attempt is recorded
        if function is tracer:            # a new thread putting the watch on itself
            settrace(tracer)
        elif not seen:
            seen.append('sys.settrace')

    settrace(tracer)
    threading.settrace(tracer)
    sys.settrace = switch
    try:
        yield seen
        if sys.gettrace() is not tracer and not seen:
            seen.append('sys.settrace')
    finally:
        sys.settrace = settrace
        settrace(previous)
        threading.settrace(previous_threads)


# ----------------------------------------------------------------------------- the package left as it was

_PATCHABLE = ('__code__', '__defaults__', '__kwdefaults__')


def _watched_modules():
    return [(name, module) for name, module in list(sys.modules.items())
            if module is not None and (name == 'builtins' or name.split('.')[0] in ('taotp', 'numpy'))]


def module_state():
    """What a submission could swap to fool a checker: every attribute of the package's,
    NumPy's and the builtins' modules, and the code and defaults of the package's
    functions and methods.  Compare and put back with ``restore_modules``."""
    attrs, parts = {}, {}
    for name, module in _watched_modules():
        for attr, value in list(vars(module).items()):
            if attr.startswith('__') or attr == '_':
                continue
            attrs[(name, attr)] = (module, value)
            if not name.startswith('taotp'):
                continue
            members = [value, getattr(value, '__wrapped__', None)]   # lru_cache's function too
            if isinstance(value, type) and value.__module__ == name:
                for key, member in list(vars(value).items()):   # methods, properties, dunders
                    attrs[(f'{name}.{value.__name__}', key)] = (value, member)
                    members.append(member)
            for f in members:
                if isinstance(f, types.FunctionType):
                    parts[id(f)] = (f, tuple(getattr(f, k) for k in _PATCHABLE))
    return attrs, parts


def restore_modules(state):
    """Put back whatever changed since ``module_state()``; return the changed names."""
    attrs, parts = state
    changed = []
    for (name, attr), (owner, value) in attrs.items():      # owner: a module or a class
        now = vars(owner).get(attr, _MISSING)
        if now is not value:
            changed.append(f'{name}.{attr}')
            setattr(owner, attr, value)
    for f, saved in parts.values():
        for key, value in zip(_PATCHABLE, saved):
            if getattr(f, key) is not value:
                changed.append(f'{f.__module__}.{f.__qualname__}.{key}')
                setattr(f, key, value)
    return changed


_MISSING = object()
