"""The one toolkit every checker body uses (it runs in the judge, on plain data).

A checker body gets the answer as plain data (arrays, lists, dicts, numbers, strings, a
``Remote`` per callable; see ``wire``).  It calls the answer with ``call`` and ``built``,
reads values with ``array``, ``tokens``, ``program`` and ``budget`` (anything malformed
becomes a ``Finding`` naming the field and the rule), draws hidden cases from
``fresh_rng()`` and reports them with ``wrong``, and compares single answers with a salted
``digest``.  The *verdict protocol*: expected values are computed here, after the answer
has returned; messages about hidden cases never print an expected value; a stated budget
is measured on the plain copy that is then run.
"""
import hashlib
import json
import math
import reprlib
import signal
import threading
import time
from contextlib import contextmanager

import numpy as np

from ..params import config, count_non0_params, count_params, param_problems
from .result import Finding, Passed  # noqa: F401  (re-exported for the chapters)
from .wire import Opaque, Remote


# ----------------------------------------------------------------------------- calling the answer

def _where(on):
    return f' on {on}' if on is not None else ''


def call(fn, *args, what='your function', on=None, seconds=None, echo=False, **kwargs):
    """Call a submitted callable in its worker; every failure becomes a ``Finding`` naming
    the input ``on`` (and the answer's own line that raised).  ``seconds`` lowers the limit;
    ``echo=True`` returns ``(value, args, kwargs)`` as the call left them."""
    from .judge import AnswerRaised, WorkerTimeout
    if not isinstance(fn, Remote):
        raise Finding(f'expected a function; got {describe(fn)}')
    try:
        return fn.session.call(fn, args, kwargs, seconds=seconds, on=on, echo=echo)
    except AnswerRaised as exc:
        line, where = _line(exc.frames)
        raise Finding(f'{what} raised {exc.kind}: {exc.text}{_where(on)}{line}', on,
                      exc.detail, where) from None
    except WorkerTimeout as exc:
        if 'budget' in exc.message:
            raise Finding(f'{what}: {exc.message}', on) from None
        raise Finding(f'{what} {exc.message}{_where(on)}; is there an endless loop?',
                      on) from None
    except Finding as exc:
        raise Finding(f'{what}{_where(on)}: {exc.message}', on, exc.detail) from None


def call_many(fn, arg_tuples, what='your function', on=None, seconds=None, **kwargs):
    """``call`` for many argument tuples in one message to the worker; the list of values.

    Much faster than many ``call``s when each is short; ``seconds`` limits them together;
    ``on`` is one description, or a list of one per call (a raise names its own).
    """
    from .judge import AnswerRaised, WorkerTimeout
    if not isinstance(fn, Remote):
        raise Finding(f'expected a function; got {describe(fn)}')
    pairs = [(tuple(args), kwargs) for args in arg_tuples]
    overall = None if isinstance(on, list) else on
    try:
        return fn.session.call_many(fn, pairs, seconds=seconds)
    except AnswerRaised as exc:
        where = on[exc.stage] if isinstance(on, list) and isinstance(exc.stage, int) \
            and exc.stage < len(on) else overall
        line, place = _line(exc.frames)
        raise Finding(f'{what} raised {exc.kind}: {exc.text}{_where(where)}{line}', where,
                      exc.detail, place) from None
    except WorkerTimeout as exc:
        raise Finding(f'{what} {exc.message} for {len(pairs)} calls{_where(overall)}; is there '
                      f'an endless loop?', overall) from None
    except Finding as exc:
        raise Finding(f'{what}: {exc.message}', overall, exc.detail) from None


_NOT_YOURS = ('<switched off>', '<string>')     # frames of code the answer did not write


def _line(frames):
    """(' (line N of f)', (file, N)) for the innermost frame of the answer's own code."""
    for frame in reversed(frames):
        if type(frame) not in (list, tuple) or len(frame) != 3:
            continue
        filename, line, function = (str(frame[0]), frame[1], str(frame[2]))
        if 'site-packages' in filename or '/taotp/' in filename or filename in _NOT_YOURS \
                or filename.startswith('<frozen') or '/lib/python' in filename \
                or type(line) is not int:
            continue
        return f' (line {line} of {function})', (filename, line)
    return '', None


def built(build, *args, what='your builder', on=None, **limits_and_kwargs):
    """Call a submitted builder and return its program as a validated plain copy.

    Keywords named in ``LIMITS`` are the puzzle's budget; the rest go to the builder.
    """
    limits = {k: v for k, v in limits_and_kwargs.items() if k in LIMITS}
    kwargs = {k: v for k, v in limits_and_kwargs.items() if k not in LIMITS}
    params = call(build, *args, what=what, on=on, **kwargs)
    where = f'{what}{_where(on)}'
    params = program(params, what=f'the program {where} returned')
    if limits:
        budget(params, what=f'the program {where} returned', **limits)
    return params


# ----------------------------------------------------------------------------- reading values

def describe(value):
    """A short name for the type of a submitted value (for messages)."""
    if value is None:
        return 'None (starter code not filled in yet?)'
    if isinstance(value, Opaque):
        return 'a plain object' if value.type_name == 'object' else f'a {value.type_name} object'
    if isinstance(value, Remote):
        return f'the function {value.name}'
    return type(value).__name__


_REPR = reprlib.Repr()          # (keyword arguments to Repr need Python 3.12)
_REPR.maxlist, _REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 24, 4, 60, 60


def short(value, width=120):
    """A one-line repr for messages, cut to ``width`` characters."""
    if isinstance(value, np.ndarray):
        value = value.tolist() if value.size <= 64 else value
    text = _REPR.repr(value) if not isinstance(value, np.ndarray) else \
        f'array of shape {value.shape}'
    return text if len(text) <= width else text[:width - 3] + '...'


def array(value, shape=None, what='your result', integer=False, finite=True):
    """``value`` as a plain ndarray of exactly ``shape`` (no broadcasting) with numeric values."""
    if value is None:
        raise Finding(f'{what} is None (did the function forget to return?)')
    if isinstance(value, (Remote, Opaque, dict, str, bytes)):
        raise Finding(f'{what} must be an array of numbers; got {describe(value)}')
    try:
        arr = np.asarray(value)
    except Exception as exc:      # ragged lists and the like
        raise Finding(f'{what} is not an array ({exc})') from None
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


def tokens(value, what='your output'):
    """A flat list of token ids."""
    arr = array(value, what=what, integer=True)
    if arr.ndim != 1:
        raise Finding(f'{what} must be a flat list of token ids; got shape {arr.shape}')
    return arr.tolist()


def tokens_many(values, length, vocab, what='your output'):
    """Many token lists at once, each of exactly ``length`` ids in ``0..vocab-1``: an
    (n, length) int array."""
    rows = []
    for i, value in enumerate(values):
        row = tokens(value, what=f'{what} (run {i})')
        if len(row) != length or not all(0 <= t < vocab for t in row):
            raise Finding(f'{what} (run {i}): expected {length} token ids in 0..{vocab - 1}; got '
                          f'{short(row)}')
        rows.append(row)
    return np.array(rows, dtype=np.int64).reshape(len(rows), length)


def _f64(value):
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, np.ndarray) and
                                                          v.ndim == 2 for v in value):
        return [np.array(v, dtype=np.float64) for v in value]       # multi-level pos_emb
    if isinstance(value, (np.ndarray, list, tuple, int, float)) and not isinstance(value, bool):
        try:
            return np.array(value, dtype=np.float64)
        except (TypeError, ValueError):
            return value
    return value


def program(params, what='your params'):
    """A submitted program, validated (``param_problems``) and converted to float64 arrays."""
    if params is None:
        raise Finding(f'{what}: expected a params dict (tok_emb, pos_emb, out_emb, layers, lnf); '
                      f'got None (starter code not filled in yet?)')
    if not isinstance(params, dict):
        raise Finding(f'{what} must be a params dict; got {describe(params)}')
    copy = {}
    for key, value in params.items():
        if key == 'layers' and isinstance(value, (list, tuple)):
            copy[key] = [{k: (v if k in ('ln1', 'ln2') else _f64(v)) for k, v in layer.items()}
                         if isinstance(layer, dict) else layer for layer in value]
        elif key == 'lnf':
            copy[key] = value
        else:
            copy[key] = _f64(value)
    try:
        problems = param_problems(copy)
    except Exception as exc:    # something so odd that validation itself tripped
        raise Finding(f'{what} could not be read as a program ({type(exc).__name__}: '
                      f'{exc})') from None
    if problems:
        more = f' ({len(problems) - 1} further problems after this one)' if len(problems) > 1 \
            else ''
        raise Finding(f'{what}: {problems[0]}{more}')
    return copy


def run_program(run, *args, what='your program', on=None):
    """Run the package on a submitted program; its errors become a ``Finding``."""
    try:
        return run(*args)
    except TimeUp:
        raise
    except Exception as exc:
        raise Finding(f'{what}{_where(on)} failed with {type(exc).__name__}: {exc}', on) from None


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


def budget(params, /, what='your program', **limits):
    """Enforce a stated budget (``layers=1, heads=4, params=2000``: upper bounds) on a program
    already read by ``program``; returns the measured values."""
    unknown = set(limits) - set(LIMITS)
    if unknown:
        raise ValueError(f'budget: unknown limits {sorted(unknown)}; expected some of '
                         f'{sorted(LIMITS)}')
    cfg = config(params)
    measured = {}
    for key, bound in limits.items():
        name, measure = LIMITS[key]
        measured[key] = value = measure(params, cfg)
        if bound is not None and value > bound:
            raise Finding(f'{what} is over the budget: {value:,} {name}; at most {bound:,} '
                          f'allowed')
    return measured


# ----------------------------------------------------------------------------- hidden cases

def fresh_rng():
    """A generator seeded from new OS entropy: different cases on every check."""
    return np.random.default_rng()


def fresh_seed():
    """A new seed from OS entropy, to draw a hidden case that a message can name (a reader
    rebuilds the case from it; a seed of an earlier check is no help with the next)."""
    return int(np.random.default_rng().integers(2 ** 62))


def wrong(on, got, hint='', counterexample=None):
    """The Finding for a hidden case: the input, what the answer gave, a hint; never the
    expected value."""
    tail = f'; {hint}' if hint else ''
    return Finding(f'{on}: your answer gave {short(got)}, which is not right{tail}',
                   counterexample if counterexample is not None else on)


# ----------------------------------------------------------------------------- single answers

def canonical(value):
    """A canonical text of a number, string or (nested) sequence: -0.0 is 0.0, 3.0 is 3,
    NumPy scalars are Python's, a tuple is a list."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return '[' + ','.join(canonical(v) for v in value) + ']'
    if isinstance(value, (bool, np.bool_)):
        return 'true' if value else 'false'
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isfinite(value) and value == int(value) and abs(value) < 2 ** 53:
            return str(int(value))
        return repr(value + 0.0)
    if isinstance(value, str):
        return json.dumps(value.strip())
    raise TypeError(f'canonical: expected numbers, strings or sequences; got '
                    f'{type(value).__name__}')


ROUNDS = 200_000     # PBKDF2 rounds: ~0.1 s per digest, so guessing offline is slow


def digest(puzzle_id, value):
    """The salted digest stored in a checker instead of a literal answer."""
    return hashlib.pbkdf2_hmac('sha256', canonical(value).encode(),
                               f'taotp-{puzzle_id}'.encode(), ROUNDS).hex()


def same_digest(puzzle_id, value, stored):
    try:
        return digest(puzzle_id, value) == stored
    except TypeError:
        return False


# ----------------------------------------------------------------------------- the judge's own time

class TimeUp(BaseException):
    """The check's total budget ran out while the judge itself was computing."""


@contextmanager
def time_limit(seconds):
    """Interrupt the judge's own work after ``seconds`` (main thread on Unix; else no limit)."""
    usable = hasattr(signal, 'setitimer') and threading.current_thread() is threading.main_thread()
    if not usable or not seconds:
        yield
        return

    def on_alarm(signum, frame):
        raise TimeUp()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


cpu_clock = time.process_time     # the judge's own CPU time (it runs one thread)


def room(params, vocab=0, block=0, on=None, vocab_why='', block_why=''):
    """Require a program read by ``program`` to take ``vocab`` token ids and ``block`` positions;
    ``vocab_why`` / ``block_why`` (a phrase such as '(numbers 1..32)') say what needs them."""
    cfg, head = config(params), f'{on}: ' if on is not None else ''
    vocab_why, block_why = (f' {why}' if why else '' for why in (vocab_why, block_why))
    if cfg['vocab_size'] < vocab:
        raise Finding(f'{head}the vocabulary must have at least {vocab:,} tokens{vocab_why}; got '
                      f'vocab_size {cfg["vocab_size"]:,}')
    if cfg['block_size'] < block:
        raise Finding(f'{head}block_size must be at least {block:,}{block_why}; got '
                      f'{cfg["block_size"]:,}')
    return cfg


def parts(value, n, what):
    """``value`` as a list of exactly ``n`` parts (from a tuple or a list); ``what`` says what
    was expected, as in 'bits 0101: expected 2 results'."""
    if not isinstance(value, (tuple, list)) or len(value) != n:
        raise Finding(f'{what}; got {short(value, 80)}')
    return list(value)


def off(got, want, tol):
    """Boolean mask of the entries of ``got`` more than ``tol`` from ``want`` (NaN, inf: off)."""
    with np.errstate(all='ignore'):
        return ~(np.abs(np.subtract(got, want)) <= tol)
