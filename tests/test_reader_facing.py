"""What a reader sees stands alone: no private notes, no machine paths.

Reader-facing files are the book (``book/``: chapter scripts, their stored
notebooks, the Markdown pages), the puzzles (``exercises/``, ``solutions/``),
``README.md`` and ``CONTRIBUTING.md``.  In a notebook we read the cell
sources and every *text* output (streams, ``text/*`` reprs, tracebacks without
their colour codes); images and the base64 frames inside animation players are
skipped, so random base64 letters can never trip the test.

Three things must not appear:

* ``shared/``: our working notes live outside the repository; a clone has no
  such folder.
* the bare word ``spec`` / ``specs``: in this project it meant those notes.
  Readers have the papers, so the text cites them.  The rule is on the
  standalone word only (``\\bspecs?\\b``): "specific", "spectrum", "special",
  "inspect", "kernelspec" or ``spec_from_file_location`` never match.  To speak
  of a specification, write "format" or "specification".
* an absolute path of a machine (a home folder, a scratch folder, the build
  machine's checkout, a Windows user folder; the patterns are in ``FORBIDDEN``):
  the builder's paths in a traceback or a printed file name mean nothing on the
  reader's machine.
"""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    'shared/ (a path into private notes)': re.compile(r'(?<![\w.-])shared/'),
    'spec (cite the source instead)': re.compile(r'\bspecs?\b', re.IGNORECASE),
    'path (an absolute path of a machine)': re.compile(
        r'(?<![\w.~/-])/(?:work|tmp|root|home|Users|mnt|srv|private|var/folders|usr/local|opt)'
        r'(?=[/\s`\'"),.:;\]]|$)'
        r'|\b[A-Za-z]:\\(?:Users|Documents and Settings)\\'),
}

ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
DATA_URI = re.compile(r'data:[\w/+.-]+;base64,[A-Za-z0-9+/=\s\\n]*')
BASE64_RUN = re.compile(r'[A-Za-z0-9+/=]{200,}')      # frames a player keeps in its script


def reader_files():
    files = sorted((ROOT / 'book').glob('*.md'))
    for folder in ('book', 'exercises', 'solutions'):
        files += sorted((ROOT / folder).glob('*.py'))
        files += sorted((ROOT / folder).glob('*.ipynb'))
    files += [ROOT / 'README.md', ROOT / 'CONTRIBUTING.md']
    return [f for f in files if f.exists()]


def _text(value):
    return ''.join(value) if isinstance(value, list) else str(value)


def _clean(text):
    return BASE64_RUN.sub(' ', DATA_URI.sub(' ', ANSI.sub('', text)))


def notebook_texts(path):
    """``(where, text)`` for every cell source and every text output of a notebook."""
    nb = json.loads(path.read_text(encoding='utf-8'))
    for index, cell in enumerate(nb['cells']):
        yield f'cell {index} source', _text(cell.get('source', ''))
        for output in cell.get('outputs', []):
            kind = output.get('output_type')
            if kind == 'stream':
                yield f'cell {index} {output.get("name", "stream")}', _text(output['text'])
            elif kind == 'error':
                yield (f'cell {index} traceback',
                       '\n'.join([output.get('ename', ''), output.get('evalue', '')]
                                 + list(output.get('traceback', []))))
            for mime, data in output.get('data', {}).items():
                if mime.startswith('text/'):
                    yield f'cell {index} {mime}', _text(data)


def file_texts(path):
    if path.suffix == '.ipynb':
        yield from notebook_texts(path)
    else:
        yield 'text', path.read_text(encoding='utf-8')


def findings(path):
    found = []
    for where, text in file_texts(path):
        for line_no, line in enumerate(_clean(text).splitlines(), 1):
            for what, pattern in FORBIDDEN.items():
                for match in pattern.finditer(line):
                    start = max(match.start() - 40, 0)
                    found.append(f'{where}, line {line_no}: {what}: '
                                 f'...{line[start:match.end() + 40].strip()}...')
    return found


FILES = reader_files()


def test_the_reader_facing_files_are_found():
    names = {f.relative_to(ROOT).as_posix() for f in FILES}
    assert {'README.md', 'CONTRIBUTING.md', 'book/intro.md', 'book/references.md',
            'book/01_transformer.py', 'book/01_transformer.ipynb'} <= names
    assert any(n.startswith('exercises/') for n in names)
    assert any(n.startswith('solutions/') for n in names)


@pytest.mark.parametrize('path', FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_reader_facing_file_stands_alone(path):
    found = findings(path)
    assert not found, f'{path.relative_to(ROOT)}:\n  ' + '\n  '.join(found)


@pytest.mark.parametrize('text', [
    'a specific case', 'the spectrum of P', 'special tokens', 'inspect.getsource(fn)',
    '"kernelspec": {"name": "python3"}', 'importlib.util.spec_from_file_location(name, path)',
    'species', 'respect the budget', 'https://github.com/taotp/taotp-book/blob/main/book',
    'see ../exercises/05_sort.ipynb', 'tests/' + 'tmp/x.py', 'x/tmp_y', 'a shared memory',
    'data:image/png;base64,' + 'ab/' + 'work/cd' * 30 + '==',    # split: the file stays clean
])
def test_ordinary_text_passes(text):
    assert not [p for p in FORBIDDEN.values() if p.search(_clean(text))], text


@pytest.mark.parametrize('text, what', [
    ('See ../' + 'shared/notes.md', 'shared/'),       # split: the file itself stays clean
    ('the spec says 35 %', 'spec'),
    ('print("spec:", 3)', 'spec'),
    ('our Specs', 'spec'),
    ('File /' + 'work/main/taotp/decoding.py:43, in transformer', 'path'),
    ('saved to /' + 'tmp/x.png', 'path'),
    ('cd /' + 'root && ls', 'path'),
    ('/' + 'home/reader/taotp', 'path'),
    ('C:\\' + 'Users\\reader\\taotp', 'path'),
    ('\x1b[32m/' + 'work/main/taotp/params.py\x1b[39m', 'path'),
])
def test_the_forbidden_forms_are_caught(text, what):
    hits = [name.split()[0] for name, p in FORBIDDEN.items() if p.search(_clean(text))]
    assert hits == [what], (text, hits)
