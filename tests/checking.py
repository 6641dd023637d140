"""The helpers every checker test uses (one copy; the chapter test files import them).

Answers go through the real protocol (``taotp.exercises.evaluate``): pickled,
run in a worker, judged in the judge, exactly as ``check`` does for a reader.
Test answers are defined in test modules, which cloudpickle sends by value.
"""
import time

import numpy as np

from taotp.exercises import evaluate

SHORT = 0.5          # seconds per call of an answer in tests that expect a time-out


def verdict(puzzle, answer, **options):
    """The CheckResult of ``answer`` for ``puzzle`` (not printed, not recorded)."""
    return evaluate(puzzle, answer, **options)


def passes(puzzle, answer, *fragments, **options):
    """Assert that ``answer`` passes; return the result."""
    result = verdict(puzzle, answer, **options)
    assert result.passed, f'{puzzle}: {result.message}'
    for fragment in fragments:
        assert fragment.lower() in result.message.lower(), (fragment, result.message)
    return result


def fails(puzzle, answer, *fragments, **options):
    """Assert that ``answer`` does not pass and that its message holds every fragment
    (case-insensitive); return the result."""
    result = verdict(puzzle, answer, **options)
    assert not result.passed, f'{puzzle} passed: {result.message}'
    assert result.line.startswith(f'NOT YET {puzzle} · '), result.line
    for fragment in fragments:
        assert fragment.lower() in result.message.lower(), (fragment, result.message)
    return result


def never_names(result, *values):
    """Assert that a NOT YET message prints none of ``values`` (expected answers of hidden
    cases): each value's plain text may not occur in it."""
    for value in values:
        text = str(np.asarray(value).tolist()) if not isinstance(value, str) else value
        assert text not in result.message, (text, result.message)


def raises(*args, **kwargs):
    """An answer that raises."""
    raise RuntimeError('boom')


def forever(*args, **kwargs):
    """An answer that never returns."""
    while True:
        time.sleep(0.01)


class NeverArray:
    """A value whose conversion to an array never returns (read in the worker)."""

    def __array__(self, *args, **kwargs):
        while True:
            time.sleep(0.01)


def returns(value):
    """An answer that ignores its inputs and returns ``value``."""
    def answer(*args, **kwargs):
        return value
    return answer


class ShowsAnother(dict):
    """A params dict whose reads (``d[k]``, ``keys``) show one program while its storage
    (what ``**d``, ``dict(d)`` and pickling copy) holds another."""

    def __init__(self, runs, shows):
        super().__init__(runs)
        self.shows = shows

    def __getitem__(self, key):
        return self.shows[key]

    def keys(self):
        return self.shows.keys()
