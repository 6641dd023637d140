"""Every puzzle of the book: its id, kind, checker, and where its solution lives.

Each chapter module ``taotp.exercises.chNN`` defines ``PUZZLES``, a list of
``Puzzle`` rows; this module gathers them.  Kinds:

* ``checked``: ``check(id, answer)`` decides pass/fail;
* ``train``: a training experiment; the notebook has a harness, no verdict;
* ``reflect``: a question to think about; the solutions notebook has an answer.
"""
import functools
import importlib
import traceback
from dataclasses import dataclass

from . import guard
from .result import CheckResult, Finding, Passed

CHAPTERS = {
    1: '01_transformer', 2: '02_hello_world', 3: '03_lookup_table', 4: '04_search',
    5: '05_sort', 6: '06_addition', 7: '07_encodings', 8: '08_interpreter',
    9: '09_position_coupling', 10: '10_selective_induction', 11: '11_trained',
    12: '12_records',
}
KINDS = ('checked', 'train', 'reflect')


@dataclass
class Puzzle:
    id: str
    title: str
    kind: str = 'reflect'
    checker: object = None
    budget: str = ''

    @property
    def chapter(self):
        return int(self.id.split('.')[0])

    @property
    def exercise_notebook(self):
        return f'exercises/{CHAPTERS[self.chapter]}.ipynb'

    @property
    def solution_notebook(self):
        return f'solutions/{CHAPTERS[self.chapter]}.ipynb'


BUDGET = 30   # seconds a checker may take in all, by default


def checker(puzzle_id, budget=BUDGET):
    """Decorate a checker body so it never raises and always returns a CheckResult.

    The body receives the submission and returns ``Passed(scope)`` on success or
    raises ``Finding(message, counterexample)``; anything else it raises (a bug
    provoked by a strange submission, ``SystemExit`` included) is reported as a
    finding too.  The whole check, the processing of returned values included,
    runs within ``budget`` seconds; the PASS line states the budget.  A real
    Ctrl-C still stops it.  An answer that rewrites the package while it is
    checked (a function of ``taotp``, NumPy or the builtins swapped, e.g. the
    checker's own helper) is refused and the package put back
    (``guard.module_state``).
    """
    state, restore = guard.module_state, guard.restore_modules   # bound now: a submission
                                                                 # cannot swap them later

    def wrap(body):
        @functools.wraps(body)
        def run(answer, *args, verbose=False, **kwargs):
            before, changed = state(), []
            with guard._real_interrupts_pass() as user_pressed_ctrl_c:
                try:
                    try:
                        with guard.time_limit(budget) as mine:
                            outcome = body(answer, *args, **kwargs)
                    finally:
                        changed = restore(before)
                    if not isinstance(outcome, Passed):
                        raise RuntimeError(f'checker {puzzle_id} returned {outcome!r}')
                    result = CheckResult(puzzle_id, True,
                                         f'{outcome.message} · time budget {budget} s')
                except Finding as f:
                    result = CheckResult(puzzle_id, False, f.message, f.counterexample, f.detail)
                except guard._TimeUp as up:
                    if up.owner is not mine and guard.live(up.owner):
                        raise
                    why = (f'the check did not finish within its {budget} s budget: your answer '
                           f'(or a value it returned, when read) is too slow' if up.owner is mine
                           else 'your answer raised _TimeUp itself (a time-up of no running limit)')
                    result = CheckResult(puzzle_id, False, why, detail='' if up.owner is mine
                                         else traceback.format_exc())
                except KeyboardInterrupt:
                    if user_pressed_ctrl_c():
                        raise
                    result = CheckResult(puzzle_id, False, 'your answer raised KeyboardInterrupt',
                                         detail=traceback.format_exc())
                except BaseException as exc:  # never let a submission crash the notebook
                    result = CheckResult(puzzle_id, False,
                                         f'could not check this answer: {type(exc).__name__}: '
                                         f'{exc}', detail=traceback.format_exc())
            if changed:       # whatever the verdict was, it was reached on a rewritten package
                result = CheckResult(puzzle_id, False, f'your answer changed {changed[0]} while '
                                     f'it was being checked (put back now): a check runs on the '
                                     f'package as it is, so it cannot vouch for an answer that '
                                     f'rewrites it')
            if verbose and result.detail:
                result.message += '\n' + result.detail
            return result
        run.puzzle_id = puzzle_id
        run.budget = budget
        return run
    return wrap


@functools.lru_cache(maxsize=None)
def registry():
    """All puzzles by id, in book order."""
    table = {}
    for chapter in CHAPTERS:
        module = importlib.import_module(f'.ch{chapter:02d}', __package__)
        for puzzle in module.PUZZLES:
            if puzzle.id in table:
                raise ValueError(f'puzzle {puzzle.id} is registered twice')
            if puzzle.kind not in KINDS:
                raise ValueError(f'puzzle {puzzle.id} has unknown kind {puzzle.kind!r}')
            if (puzzle.kind == 'checked') != (puzzle.checker is not None):
                raise ValueError(f'puzzle {puzzle.id}: checked puzzles need a checker, '
                                 f'others must not have one')
            table[puzzle.id] = puzzle
    return table
