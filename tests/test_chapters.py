"""One list of chapters (``taotp.chapters``), and every place that names a chapter agrees with it.

Each test is one step of CONTRIBUTING.md's checklist *Adding a chapter*, and each failure
names the chapter and the step it misses.  The README's table and ``_toc.yml`` are
written from the list (``python tools/chapters.py``); the rest is checked here.
"""
import importlib
import re
from pathlib import Path

import pytest

from taotp.chapters import CHAPTERS, STEMS, chapter, readme_table, toc_yaml
from taotp.exercises import CHAPTERS as REGISTERED, registry

ROOT = Path(__file__).resolve().parent.parent
IDS = [c.stem for c in CHAPTERS]
NUMBERED = re.compile(r'^(\d\d)_\w+$')


def test_the_list_is_numbered_from_one_and_each_stem_starts_with_its_number():
    assert [c.number for c in CHAPTERS] == list(range(1, len(CHAPTERS) + 1))
    for c in CHAPTERS:
        assert NUMBERED.match(c.stem) and int(c.stem[:2]) == c.number, c
        assert c.title and c.program and c.source and c.part, c
    assert chapter(5).stem == '05_sort'
    with pytest.raises(ValueError, match=r'chapter: number must be one of \[1, 2, .*got 13'):
        chapter(13)


def test_step_toc_and_readme_are_written_from_the_list():
    stale = [name for name, text in (('_toc.yml', toc_yaml()), ('README.md', readme_table()))
             if text not in (ROOT / name).read_text()]
    assert not stale, f'{stale} differ from taotp.chapters: run python tools/chapters.py'


@pytest.mark.parametrize('c', CHAPTERS, ids=IDS)
def test_step_notebooks_exist_in_pairs(c):
    missing = [path for path in c.notebooks() if not (ROOT / path).exists()]
    assert not missing, f'Chapter {c.number} ({c.stem}) misses {missing}'


@pytest.mark.parametrize('c', CHAPTERS, ids=IDS)
def test_step_the_chapter_notebook_opens_with_its_number_and_title(c):
    heading = next(line for line in (ROOT / 'book' / f'{c.stem}.py').read_text().splitlines()
                   if line.startswith('# # '))
    assert heading == f'# # {c.number}. {c.title}', \
        f'Chapter {c.number}: book/{c.stem}.py opens with {heading!r}; the list says {c.title!r}'


@pytest.mark.parametrize('c', CHAPTERS, ids=IDS)
def test_step_puzzles_or_the_reason_there_are_none(c):
    """A chapter has puzzles, their checker module, their tests and both notebooks, or
    none of them and a reason in the list; never an empty list that nobody decided on."""
    assert (ROOT / c.checkers).exists(), f'Chapter {c.number}: {c.checkers} is missing'
    puzzles = [p for p in registry().values() if p.chapter == c.number]
    if c.has_puzzles:
        assert puzzles, (f'Chapter {c.number} ({c.stem}) has no puzzles in {c.checkers}; add '
                         f'them, or give it no_puzzles=<why> in taotp/chapters.py')
        assert (ROOT / c.tests).exists(), f'Chapter {c.number}: {c.tests} is missing'
    else:
        assert not puzzles, (f'Chapter {c.number} is marked without puzzles '
                             f'({c.no_puzzles!r}) but registers {[p.id for p in puzzles]}')
        extra = [f'{folder}/{c.stem}.{ext}' for folder in ('exercises', 'solutions')
                 for ext in ('py', 'ipynb') if (ROOT / folder / f'{c.stem}.{ext}').exists()]
        assert not extra, f'Chapter {c.number} is marked without puzzles but has {extra}'
        assert not (ROOT / c.tests).exists(), f'{c.tests} tests a chapter without puzzles'


def _mentioned(number, text):
    if re.search(rf'\bChapter {number}\b', text):
        return True
    return any(int(a) <= number <= int(b)
               for a, b in re.findall(r'\bChapters (\d+)\s*[-\u2013]\s*(\d+)', text))


@pytest.mark.parametrize('c', CHAPTERS, ids=IDS)
def test_step_the_introduction_mentions_the_chapter(c):
    assert _mentioned(c.number, (ROOT / 'book' / 'intro.md').read_text()), \
        f'book/intro.md never mentions Chapter {c.number} ({c.title})'


def test_nothing_numbered_lives_outside_the_list():
    """A notebook, checker module or test module of a chapter the list does not have fails."""
    stray = []
    for folder in ('book', 'exercises', 'solutions'):
        for path in (ROOT / folder).glob('*.py'):
            if NUMBERED.match(path.stem) and path.stem not in STEMS.values():
                stray.append(f'{folder}/{path.name}')
    for pattern, where in ((r'^ch(\d\d)\.py$', 'taotp/exercises'),
                           (r'^test_exercises_ch(\d\d)\.py$', 'tests')):
        for path in (ROOT / where).iterdir():
            found = re.match(pattern, path.name)
            if found and int(found.group(1)) not in STEMS:
                stray.append(f'{where}/{path.name}')
    assert not stray, f'not chapters of taotp.chapters: {stray}'


def test_the_registry_and_the_catalogue_use_the_list():
    assert REGISTERED == STEMS, 'taotp.exercises.CHAPTERS differs from taotp.chapters.STEMS'
    programs = importlib.import_module('taotp.programs').PROGRAMS
    assert {p.chapter for p in programs} <= set(STEMS), 'a program of an unknown chapter'


def test_a_new_chapter_missing_a_step_is_caught():
    """The checks above on a made-up chapter 13 that only has its row in the list."""
    from taotp.chapters import Chapter
    new = Chapter(13, '13_new', 'New', 'does something', 'nowhere', 'Beyond the preprint')
    assert f'book/{new.stem}' not in (ROOT / '_toc.yml').read_text()
    assert [p for p in new.notebooks() if not (ROOT / p).exists()] == [
        'book/13_new.py', 'book/13_new.ipynb', 'exercises/13_new.py', 'exercises/13_new.ipynb',
        'solutions/13_new.py', 'solutions/13_new.ipynb']
    assert not (ROOT / new.checkers).exists() and not (ROOT / new.tests).exists()
    assert not _mentioned(13, (ROOT / 'book' / 'intro.md').read_text())
    quiet = Chapter(13, '13_new', 'New', 'x', 'y', 'z', no_puzzles='on purpose')
    assert quiet.notebooks() == ['book/13_new.py', 'book/13_new.ipynb']
