"""The puzzle registry, the exercise notebooks and the solution notebooks agree."""
import re
from pathlib import Path

import nbformat
import pytest

from taotp.exercises import CHAPTERS, registry

ROOT = Path(__file__).resolve().parent.parent
CHECK_CALL = re.compile(r"""check\(\s*['"](\d+\.\d+)['"]""")


def checked_in(folder, name):
    path = ROOT / folder / f'{name}.ipynb'
    if not path.exists():
        return None
    nb = nbformat.read(path, as_version=4)
    return {m for c in nb.cells if c.cell_type == 'code' for m in CHECK_CALL.findall(c.source)}


def written_chapters():
    """Chapters whose puzzles are registered (a chapter without any is still being written)."""
    return [ch for ch in CHAPTERS if any(p.chapter == ch for p in registry().values())]


def test_registry_loads_and_every_checked_puzzle_has_a_checker():
    table = registry()
    assert table, 'no puzzles registered'
    for puzzle in table.values():
        assert (puzzle.kind == 'checked') == callable(puzzle.checker), puzzle.id


@pytest.mark.parametrize('chapter', written_chapters())
def test_every_checked_puzzle_is_in_the_exercises_and_the_solutions(chapter):
    name = CHAPTERS[chapter]
    checked = {p.id for p in registry().values() if p.chapter == chapter and p.kind == 'checked'}
    in_exercises = checked_in('exercises', name)
    in_solutions = checked_in('solutions', name)
    assert in_exercises is not None, f'exercises/{name}.ipynb is missing'
    assert in_solutions is not None, f'solutions/{name}.ipynb is missing'
    assert in_exercises == checked, f'exercises/{name}: check() calls differ from the registry'
    assert in_solutions == checked, f'solutions/{name}: check() calls differ from the registry'


@pytest.mark.parametrize('chapter', written_chapters())
def test_puzzle_ids_are_numbered_from_one_without_gaps(chapter):
    numbers = sorted(int(p.id.split('.')[1]) for p in registry().values() if p.chapter == chapter)
    assert numbers == list(range(1, len(numbers) + 1))


def test_every_puzzle_has_a_heading_in_its_exercise_notebook():
    for puzzle in registry().values():
        path = ROOT / puzzle.exercise_notebook
        if not path.exists():
            continue
        text = '\n'.join(c.source for c in nbformat.read(path, as_version=4).cells)
        assert f'Puzzle {puzzle.id} ' in text, f'{puzzle.exercise_notebook} has no heading for {puzzle.id}'
