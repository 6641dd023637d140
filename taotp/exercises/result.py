"""The verdict of a checker, and all of its wording.

A checker returns a ``CheckResult``: truthy on success, with ``.message`` (what
was checked, or the first input that broke) and ``.counterexample``.  ``check``
prints its one line; the object itself does not print again in a notebook.
"""
from dataclasses import dataclass


@dataclass
class CheckResult:
    puzzle: str
    passed: bool
    message: str
    counterexample: object = None
    detail: str = ''          # traceback text, shown with verbose=True
    relaxed: str = ''         # the options that weakened the check, if any
    output: str = ''          # what the answer printed while it was checked

    def __bool__(self):
        return self.passed

    @property
    def counts(self):
        """True when this verdict solves the puzzle: passed, and checked as stated."""
        return self.passed and not self.relaxed

    @property
    def line(self):
        verdict = 'PASS' if self.passed else 'NOT YET'
        if self.relaxed:
            verdict += f' (relaxed: {self.relaxed}; not counted as solved)'
        return f'{verdict} {self.puzzle} · {self.message}'

    def __str__(self):
        return self.line

    __repr__ = __str__

    def _ipython_display_(self):
        """Nothing: check() already printed the line; displaying it again would duplicate it."""


class Finding(Exception):
    """Raised inside a checker to report a failure found in the submission."""

    def __init__(self, message, counterexample=None, detail='', where=None):
        super().__init__(message)
        self.message = message
        self.counterexample = counterexample
        self.detail = detail
        self.where = where        # (file, line) in the answer's own code, when it raised


class Passed:
    """Returned by a checker body on success: the honest scope of what was checked."""

    def __init__(self, message):
        self.message = message
