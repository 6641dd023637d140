"""The puzzle registry, the exercise notebooks and the solution notebooks agree."""
import re
from pathlib import Path

import nbformat
import pytest

from taotp.chapters import CHAPTERS as BOOK
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
    """The chapters with puzzles, from the one list (``taotp.chapters``): a chapter without
    puzzles is marked there with its reason, never dropped here because its list is empty."""
    return [c.number for c in BOOK if c.has_puzzles]


@pytest.mark.parametrize('chapter', written_chapters())
def test_every_chapter_with_puzzles_registers_some(chapter):
    found = [p.id for p in registry().values() if p.chapter == chapter]
    assert found, (f'Chapter {chapter} ({CHAPTERS[chapter]}) registers no puzzles in '
                   f'taotp/exercises/ch{chapter:02d}.py; register them, or mark the chapter '
                   f'no_puzzles=<why> in taotp/chapters.py')


def test_chapters_without_puzzles_are_marked_so():
    """Chapter 11 has none on purpose; its reason is in the list, and it registers none."""
    quiet = {c.number: c.no_puzzles for c in BOOK if not c.has_puzzles}
    assert set(quiet) == {11}, quiet
    for chapter in quiet:
        assert not [p for p in registry().values() if p.chapter == chapter], chapter


def test_registry_loads_and_every_checked_puzzle_has_a_checker():
    table = registry()
    assert table, 'no puzzles registered'
    for puzzle in table.values():
        assert (puzzle.kind in ('checked', 'open')) == callable(puzzle.checker), puzzle.id


@pytest.mark.parametrize('chapter', written_chapters())
def test_every_checked_puzzle_is_in_the_exercises_and_the_solutions(chapter):
    name = CHAPTERS[chapter]
    checked = {p.id for p in registry().values()
               if p.chapter == chapter and p.kind in ('checked', 'open')}
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
