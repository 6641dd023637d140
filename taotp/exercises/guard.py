"""Safe handling of submissions: calls with a time limit, strict type and shape checks.

Everything here raises ``Finding`` (never another exception) so a checker can
turn any problem into a NOT YET message.
"""
import signal
import threading
import traceback
from contextlib import contextmanager

import numpy as np

from ..params import ParamsError, param_problems
from .result import Finding


class _TimeUp(BaseException):
    """Raised by the alarm; a BaseException so a submission's `except Exception` can't eat it."""


@contextmanager
def time_limit(seconds):
    """Interrupt the body after ``seconds`` (main thread on Unix only; else no limit)."""
    usable = hasattr(signal, 'setitimer') and threading.current_thread() is threading.main_thread()
    if not usable or not seconds:
        yield
        return

    def on_alarm(signum, frame):
        raise _TimeUp()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def call(fn, *args, what='your function', on=None, seconds=20, **kwargs):
    """Call a submitted function; any exception or a timeout becomes a ``Finding``."""
    if not callable(fn):
        raise Finding(f'expected a function; got {type(fn).__name__}')
    where = f' on {on}' if on is not None else ''
    try:
        with time_limit(seconds):
            return fn(*args, **kwargs)
    except _TimeUp:
        raise Finding(f'{what} took longer than {seconds} s{where}; is there an endless loop?',
                      on) from None
    except Finding:
        raise
    except Exception as exc:  # the submission's own bug, reported not raised
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
