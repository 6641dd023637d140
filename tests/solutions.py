"""The reference solutions, read from their one copy: the solution notebooks' scripts.

``answer('1.8')`` runs the code cells of ``solutions/01_transformer.py`` (the
text paired with the notebook) once, with ``check`` replaced by a recorder,
and returns what the notebook passes to ``check('1.8', ...)``.  Tests use it
to confirm that every reference passes and to derive wrong answers from it,
without a second copy of any solution.  Under the heading of a puzzle with no
checker (a reflection or an experiment), only the cells that define a function or a
class or import something run: the others compute and print, which nbval checks,
and no answer needs them (if one did, its name would be missing: a NameError here).
"""
import ast
import re
import contextlib
import functools
import io
import linecache
import os
from pathlib import Path

import jupytext

import taotp.exercises as exercises
from taotp.exercises import CHAPTERS
from taotp.exercises.registry import CHECKER_KINDS
from taotp.exercises.result import CheckResult

ROOT = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=None)
def chapter_answers(chapter):
    """Every answer that ``solutions/<chapter>.py`` passes to ``check``, by puzzle id."""
    script = ROOT / 'solutions' / f'{CHAPTERS[chapter]}.py'
    notebook = jupytext.read(script)
    answers = {}

    def record(puzzle_id, answer, *args, **kwargs):
        answers[str(puzzle_id)] = answer
        return CheckResult(str(puzzle_id), True, 'recorded by tests/solutions.py')

    table = exercises.registry()   # imports every taotp.exercises.chNN, as check() would
    checked = True
    namespace = {'__name__': f'solutions_{chapter:02d}'}
    original, here, keeping = exercises.check, os.getcwd(), exercises._keep[0]
    exercises.check = record
    os.chdir(script.parent)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for i, cell in enumerate(notebook.cells):
                if cell.cell_type == 'markdown':      # the last puzzle heading it holds
                    for puzzle in re.findall(r'^## Puzzle (\d+\.\d+) ', cell.source, re.M):
                        checked = table[puzzle].kind in CHECKER_KINDS
                if cell.cell_type != 'code' or 'raises-exception' in cell.metadata.get('tags', []) \
                        or not (checked or _defines(cell.source)):
                    continue
                name = f'<{script.name}, cell {i}>'
                linecache.cache[name] = (len(cell.source), None,   # so inspect finds the source
                                         cell.source.splitlines(True), name)
                exec(compile(cell.source, name, 'exec'), namespace)
    finally:
        exercises.check = original
        exercises._keep[0] = keeping     # the notebooks switch progress off for themselves
        os.chdir(here)
    return answers


def _defines(source):
    """Whether a cell defines a function or class or imports (what later cells may use)."""
    kinds = (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return any(isinstance(node, kinds) for node in ast.parse(source).body)


def answer(puzzle_id):
    """The reference answer of a checked puzzle (KeyError if its notebook has none)."""
    return chapter_answers(int(puzzle_id.split('.')[0]))[puzzle_id]
