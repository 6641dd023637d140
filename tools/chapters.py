"""The README's chapter table and ``_toc.yml``, both written from the one list ``taotp.chapters``.

    python tools/chapters.py          # rewrite whichever of the two is out of date
    python tools/chapters.py --check  # list the stale ones (exit 1 if any)

``tests/test_chapters.py`` fails while either file differs from what this writes.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from taotp.chapters import readme_table, toc_yaml  # noqa: E402

TABLE_START = '| # | chapter | what the program does | source |'


def expected(name):
    """The text ``README.md`` or ``_toc.yml`` should hold."""
    if name == '_toc.yml':
        return toc_yaml()
    text = (ROOT / 'README.md').read_text()
    start = text.index(TABLE_START)
    end = text.find('\n\n', start)
    return text[:start] + readme_table() + (text[end:] if end >= 0 else '\n')


def stale():
    return [name for name in ('README.md', '_toc.yml')
            if (ROOT / name).read_text() != expected(name)]


def main(argv):
    names = stale()
    if '--check' in argv:
        print('\n'.join(names) or 'up to date')
        return 1 if names else 0
    for name in names:
        (ROOT / name).write_text(expected(name))
        print('rewrote', name)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
