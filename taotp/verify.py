"""Checking a program against a plain-Python reference, exhaustively or on samples.

    >>> report = verify(lambda x: x * 2, lambda x: x + x, range(100), scope='all 100 inputs')
    >>> report.ok, report.n_checked, report.n_wrong
    (True, 100, 0)
    >>> print(verify(lambda x: x * 2, lambda x: x + 1, [1, 2, 3], scope='three'))
    checked 3 inputs (three): 2 wrong; first failure: input 2, expected 3, got 4
"""
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Report:
    """Outcome of a verification run; ``str(report)`` is a one-line summary."""
    n_checked: int
    n_wrong: int
    scope: str
    first_failure: tuple = None      # (input, expected, got)
    extra: dict = field(default_factory=dict)

    @property
    def ok(self):
        return self.n_checked > 0 and self.n_wrong == 0

    def __str__(self):
        line = f'checked {self.n_checked:,} inputs ({self.scope}): {self.n_wrong:,} wrong'
        if self.first_failure is not None:
            x, want, got = self.first_failure
            line += f'; first failure: input {x}, expected {want}, got {got}'
        for key, value in self.extra.items():
            line += f'; {key} {value}'
        return line

    __repr__ = __str__


def verify(run, reference, inputs, scope='', equal=None):
    """Compare ``run(x)`` with ``reference(x)`` for every x in ``inputs``."""
    equal = equal or (lambda a, b: list(a) == list(b) if hasattr(a, '__len__') else a == b)
    n = wrong = 0
    first = None
    for x in inputs:
        want, got = reference(x), run(x)
        n += 1
        if not equal(want, got):
            wrong += 1
            if first is None:
                first = (x, want, got)
    return Report(n, wrong, scope, first)


def verify_batch(outputs, expected, inputs, scope=''):
    """Vectorised variant: row i of ``outputs`` must equal row i of ``expected``."""
    outputs, expected = np.asarray(outputs), np.asarray(expected)
    bad = np.flatnonzero(np.any(outputs.reshape(len(outputs), -1)
                                != expected.reshape(len(expected), -1), axis=1))
    first = None
    if len(bad):
        i = bad[0]
        first = (np.asarray(inputs)[i].tolist(), expected[i].tolist(), outputs[i].tolist())
    return Report(len(outputs), len(bad), scope, first)


def first_failure(sizes, errors):
    """``(last size with 0 errors before the first failure, first failing size)``.

    ``errors(size)`` returns a count; sizes are tried in order and the sweep
    stops at the first failure (None if every size passed).
    """
    last_ok = None
    for size in sizes:
        if errors(size):
            return last_ok, size
        last_ok = size
    return last_ok, None


def tolerated_exponents(errors, exponents):
    """The exponents e (of 10**e) for which ``errors(10.0 ** e)`` is 0, in order."""
    return [e for e in exponents if errors(10.0 ** e) == 0]
