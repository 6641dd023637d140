"""Puzzles 99.N: checkers that exist only to test the checking machinery itself.

``extra_checkers()`` (a fixture of ``test_verdict_protocol.py``) names this module in
``TAOTP_EXTRA_CHECKERS`` and restarts the judge, so both the test process and its judge
register these rows; afterwards it puts everything back.
"""
from taotp.exercises import toolkit as tk
from taotp.exercises.registry import Puzzle, checker
from taotp.exercises.result import Finding, Passed


@checker('99.1', budget=3)
def reads_a_result(fn):
    """Calls the answer (0.5 s at most) and reads what it returned as an array."""
    value = tk.call(fn, what='your function', seconds=0.5)
    arr = tk.array(value)
    return Passed(f'read {arr.size} numbers')


@checker('99.2')
def counts_cases(answer, n_cases=10):
    """A checker with an option that weakens it (fewer cases)."""
    if answer != 'right':
        raise Finding(f'expected "right"; got {tk.short(answer)}')
    return Passed(f'{n_cases} cases')


@checker('99.3')
def refuses_the_packages_decoder(fn):
    """Calls the answer once with the package's decoder switched off."""
    return Passed(f'returned {tk.short(tk.call(fn, what="your function"))}')


PUZZLES = [
    Puzzle('99.1', 'read a returned array', 'checked', reads_a_result),
    Puzzle('99.2', 'an option that weakens the check', 'checked', counts_cases),
    Puzzle('99.3', 'a refused package function', 'checked', refuses_the_packages_decoder,
           refuse={'taotp.decoding.decode': 'write your own',
                   'taotp.train.*': 'the PyTorch twin is off too'}),
]
