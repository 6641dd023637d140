"""Every puzzle of the book: its id, kind, checker, and where its solution lives.

Each chapter module ``taotp.exercises.chNN`` defines ``PUZZLES``, a list of
``Puzzle`` rows; this module gathers them.  Kinds:

* ``checked``: ``check(id, answer)`` decides pass/fail;
* ``open``: an open record (Chapter 12): ``check(id, answer)`` passes only a program
  smaller than the book's record, and no answer is known to pass; the solutions notebook
  shows the record, which ties and is told so (NOT YET);
* ``train``: a training experiment; the notebook has a harness, no verdict;
* ``reflect``: a question to think about; the solutions notebook has an answer.
"""
import functools
import importlib
import os
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from ..chapters import STEMS as CHAPTERS  # number -> notebook stem
from .result import Finding, Passed

KINDS = ('checked', 'open', 'train', 'reflect')
CHECKER_KINDS = ('checked', 'open')


@dataclass
class Puzzle:
    id: str
    title: str
    kind: str = 'reflect'
    checker: object = None
    budget: str = ''
    refuse: dict = field(default_factory=dict)   # package function -> hint, switched off

    @property
    def chapter(self):
        return int(self.id.split('.')[0])

    @property
    def exercise_notebook(self):
        return f'exercises/{CHAPTERS[self.chapter]}.ipynb'

    @property
    def solution_notebook(self):
        return f'solutions/{CHAPTERS[self.chapter]}.ipynb'


BUDGET = 30   # seconds a check may take in all, by default


def checker(puzzle_id, budget=BUDGET):
    """Mark a function as the checker body of ``puzzle_id``: given the submission as plain
    data, it returns ``Passed(scope)`` or raises ``Finding(message, counterexample)`` (any
    other exception is reported too), all within ``budget`` seconds (stated when it passes)."""
    def mark(body):
        body.puzzle_id, body.budget = puzzle_id, budget
        return body
    return mark


def run_check(workers, puzzle, answer, options=None, call_seconds=None, sys_path=(), cwd='.',
              progress=None):
    """Judge one answer (the judge's side of ``check``); returns the verdict as a dict."""
    from . import copies, judge, toolkit
    table = registry()
    if not isinstance(puzzle, str) or puzzle not in table or table[puzzle].checker is None \
            or type(answer) is not bytes or not isinstance(options, dict):
        return {'passed': False, 'message': f'there is no checked puzzle {puzzle!r}'}
    row = table[puzzle]
    body, seconds = row.checker, row.checker.budget
    start = time.monotonic()
    found = copies.refused_copy(answer, row.refuse)
    if found:
        return {'passed': False, 'message': f'your answer holds a copy of the code of {found}, '
                f'which this puzzle switches off: {row.refuse.get(found, copies.CHECKER_HINT)}'}
    limit = min(float(call_seconds), judge.CALL_SECONDS) if call_seconds else judge.CALL_SECONDS
    session = judge.Session(workers.new(), start + seconds, limit)
    policy = {'sys_path': [str(p) for p in sys_path], 'cwd': str(cwd), 'refused': dict(row.refuse),
              'memory_bytes': judge.MEMORY_BYTES, 'cpu_seconds': seconds + 5,
              'progress': progress}
    try:
        with toolkit.time_limit(seconds + 2):
            try:
                submission = session.load(answer, policy)
            except judge.AnswerRaised as exc:
                raise Finding(f'your answer could not be loaded where it runs ({exc.kind}: '
                              f'{exc.text})', detail=exc.detail) from None
            except Finding as exc:
                raise Finding(f'your answer could not be loaded where it runs: '
                              f'{exc.message}') from None
            outcome = body(submission, **options)
        if not isinstance(outcome, Passed):
            raise RuntimeError(f'checker {puzzle} returned {outcome!r}')
        verdict = {'passed': True, 'message': f'{outcome.message} · time budget {seconds} s'}
    except Finding as f:
        verdict = {'message': f.message, 'counterexample': _plain(f.counterexample),
                   'detail': f.detail, 'where': f.where}
    except toolkit.TimeUp:
        verdict = {'message': f'the check did not finish within its {seconds} s budget: your '
                              f'answer (or the program it returned) is too slow or too large'}
    except TypeError as exc:
        verdict = {'message': f'puzzle {puzzle} has no option {sorted(options)[0]!r}'} \
            if options and 'keyword' in str(exc) else _bug(exc)
    except Exception as exc:      # a checker tripped over a strange answer: reported
        verdict = _bug(exc)
    finally:
        session.worker.kill()
    verdict.setdefault('passed', False)
    verdict['output'] = ''.join(session.output)
    return verdict


def _bug(exc):
    return {'message': f'could not check this answer: {type(exc).__name__}: {exc}',
            'detail': traceback.format_exc()}


def _plain(value):
    """A counterexample the kernel can print: numbers, text and sequences of them."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.ndarray):
        return value.tolist() if value.size <= 4096 else repr(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value[:4096]]
    return repr(value)[:2000]


@functools.lru_cache(maxsize=None)
def registry():
    """All puzzles by id, in book order."""
    table = {}
    modules = [importlib.import_module(f'.ch{chapter:02d}', __package__) for chapter in CHAPTERS]
    extra = os.environ.get('TAOTP_EXTRA_CHECKERS')     # the framework's own tests (puzzles 99.N)
    modules += [importlib.import_module(name) for name in extra.split(',')] if extra else []
    for module in modules:
        for puzzle in module.PUZZLES:
            if puzzle.id in table:
                raise ValueError(f'puzzle {puzzle.id} is registered twice')
            if puzzle.kind not in KINDS:
                raise ValueError(f'puzzle {puzzle.id} has unknown kind {puzzle.kind!r}')
            if (puzzle.kind in CHECKER_KINDS) != (puzzle.checker is not None):
                raise ValueError(f'puzzle {puzzle.id}: checked and open puzzles need a '
                                 f'checker, others must not have one')
            table[puzzle.id] = puzzle
    return table
