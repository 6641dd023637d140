"""The book's chapters, listed once.

Everything else that names the chapters reads this list or is checked against it by
``tests/test_chapters.py``: the table of contents (``_toc.yml``), the README's chapter
table (``readme_table()`` writes it), the introduction, the puzzle registry
(``taotp.exercises.CHAPTERS``), the notebooks in ``book/``, ``exercises/`` and
``solutions/``, the checker and test modules of each chapter, and the catalogue of
programs.  CONTRIBUTING.md's checklist *Adding a chapter* walks through a new row.

    >>> from taotp.chapters import CHAPTERS, chapter
    >>> chapter(5).stem, chapter(5).notebooks()[:2]
    ('05_sort', ['book/05_sort.py', 'book/05_sort.ipynb'])
    >>> [c.number for c in CHAPTERS if not c.has_puzzles]
    [11]
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Chapter:
    """One chapter: where its files are and what the README says about it.

    ``no_puzzles`` is empty for a chapter with puzzles; a chapter without them on
    purpose says why there (it then has no exercises or solutions notebooks).
    """
    number: int
    stem: str           # the name of its notebooks: book/<stem>.py, exercises/<stem>.py, ...
    title: str          # its notebook's heading, after the number
    program: str        # the README's "what the program does"
    source: str         # the README's "source"
    part: str           # its caption in _toc.yml
    no_puzzles: str = ''

    @property
    def has_puzzles(self):
        return not self.no_puzzles

    @property
    def checkers(self):
        """The module of its checkers and its ``PUZZLES`` list (empty without puzzles)."""
        return f'taotp/exercises/ch{self.number:02d}.py'

    @property
    def tests(self):
        """Its checkers' tests (wrong answers and cheats), for a chapter with puzzles."""
        return f'tests/test_exercises_ch{self.number:02d}.py'

    def notebooks(self):
        """Every notebook file the chapter must have, each script beside its notebook."""
        folders = ('book', 'exercises', 'solutions') if self.has_puzzles else ('book',)
        return [f'{folder}/{self.stem}.{ext}' for folder in folders for ext in ('py', 'ipynb')]


PRELIMINARIES, PROGRAMS = 'Preliminaries', 'Transformer programs'
FURTHER, BEYOND = 'Further topics', 'Beyond the preprint'
PREPRINT = 'TAOTP'                       # Leviathan's preprint, as the README cites it
CHO, DANGELO = 'Cho et al. 2025', "D'Angelo et al. 2025"

CHAPTERS = (
    Chapter(1, '01_transformer', 'The Transformer',
            'the NumPy decoder every program runs on; decoding, KV cache, counting parameters',
            f'{PREPRINT} ch. 1', PRELIMINARIES),
    Chapter(2, '02_hello_world', 'Hello World',
            'prints any fixed message with a 0-layer transformer', f'{PREPRINT} ch. 2', PROGRAMS),
    Chapter(3, '03_lookup_table', 'Lookup Table',
            'recalls memorised key/value pairs with one attention layer', f'{PREPRINT} ch. 3',
            PROGRAMS),
    Chapter(4, '04_search', 'Search', 'finds the query in the prompt and outputs the token '
            'after it', f'{PREPRINT} ch. 4', PROGRAMS),
    Chapter(5, '05_sort', 'Min, Max and Sort', 'minimum so far, and sorting with "powerpoints"',
            f'{PREPRINT} ch. 5', PROGRAMS),
    Chapter(6, '06_addition', 'Decimal Addition: the MLP as a lookup machine',
            'adds n-digit numbers; an MLP that looks up any finite table exactly',
            f'{PREPRINT} ch. 6', PROGRAMS),
    Chapter(7, '07_encodings', 'The Original Encodings',
            'sinusoidal vs rotation encodings, shiftability, distinguishability',
            f'{PREPRINT} ch. 7', FURTHER),
    Chapter(8, '08_interpreter', 'The TAOTP Interpreter',
            'a safe text format for programs, run by `python -m taotp run` and `info`',
            f'{PREPRINT} ch. 8', FURTHER),
    Chapter(9, '09_position_coupling', 'Multi-Operand Addition with Position Coupling',
            'the first runnable 1-layer, 4-head multi-operand adder (Theorem 4.1)',
            CHO, BEYOND),
    Chapter(10, '10_selective_induction', 'Selective Induction Heads',
            'the first runnable 3-layer selective induction head', DANGELO, BEYOND),
    Chapter(11, '11_trained', 'Trained vs Constructed',
            'gradient descent on the tasks of Chapters 9 and 10 next to the constructions; '
            'a program opened in TransformerLens', f'{CHO}; {DANGELO}', BEYOND,
            no_puzzles='its training puzzles (2.3, 3.1, 5.8, 7.11) are checked in Chapters 2, '
                       '3, 5 and 7; it closes with three open problems instead'),
    Chapter(12, '12_records', 'Records',
            'how far the same architecture goes: an adder linear in the digits, Sort for '
            '65,536 numbers, a lookup of every table, puzzle 6.12',
            f'{PREPRINT} ch. 3, 5, 6', BEYOND),
)

STEMS = {c.number: c.stem for c in CHAPTERS}     # the registry's CHAPTERS: number -> stem


def chapter(number):
    """The chapter numbered ``number``; a ValueError names the numbers there are."""
    if isinstance(number, int) and not isinstance(number, bool):
        for c in CHAPTERS:
            if c.number == number:
                return c
    raise ValueError(f'chapter: number must be one of {sorted(STEMS)}; got {number!r}')


ROOT_PAGE = 'book/intro'
APPENDIX = ('Reference', ('book/programs', 'book/glossary', 'book/references'))


def readme_table():
    """The README's chapter table (Markdown), one row per chapter."""
    rows = ['| # | chapter | what the program does | source |', '|---|---|---|---|']
    rows += [f'| {c.number} | {c.title} | {c.program} | {c.source} |' for c in CHAPTERS]
    return '\n'.join(rows)


def toc_yaml():
    """The whole ``_toc.yml`` (Jupyter Book): the chapters under their parts, then the appendix.

    A chapter with puzzles has its exercises notebook as a section of its own, right
    under it (the puzzles' statements, starter code and checks are pages of the book;
    the solutions are not).
    """
    parts = []
    for c in CHAPTERS:
        if not parts or parts[-1][0] != c.part:
            parts.append((c.part, []))
        parts[-1][1].append((f'book/{c.stem}', [f'exercises/{c.stem}'] if c.has_puzzles else []))
    parts.append((APPENDIX[0], [(f, []) for f in APPENDIX[1]]))
    lines = ['format: jb-book', f'root: {ROOT_PAGE}', 'parts:']
    for caption, files in parts:
        lines += [f'  - caption: {caption}', '    chapters:']
        for f, sections in files:
            lines.append(f'      - file: {f}')
            if sections:
                lines.append('        sections:')
                lines += [f'          - file: {s}' for s in sections]
    return '\n'.join(lines) + '\n'


__all__ = ['Chapter', 'CHAPTERS', 'STEMS', 'chapter', 'readme_table', 'toc_yaml']
