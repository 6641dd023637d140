"""Colab badges and install cells, all derived from the one repository URL in ``_config.yml``.

    python tools/colab_links.py          # rewrite every notebook script that is out of date
    python tools/colab_links.py --check  # list the ones that are out of date (exit 1 if any)

Every notebook opens with a Colab badge that points at its own file in the
repository, and a setup cell whose first lines install the package on Colab
(and do nothing anywhere else); links to the repository's notebooks (a
chapter's exercises) point at the configured repository too.  The install target can be redirected with the
environment variable ``TAOTP_INSTALL`` (a path or pip requirement); the Colab
simulation test uses it to install the local checkout.  After rewriting, run
``tools/run_notebooks.py`` on the changed scripts.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ('book', 'exercises', 'solutions')
BADGE = re.compile(r'\[!\[Open in Colab\]\(https://colab\.research\.google\.com/assets/'
                   r'colab-badge\.svg\)\]\([^)]*\)')
INSTALL = re.compile(r"# On Colab, install the book's package first.*?check=True\)\n", re.S)
# a link to one of this repository's notebooks on GitHub (e.g. a chapter's exercises)
NOTEBOOK_LINK = re.compile(r'https://github\.com/[\w.-]+/[\w.-]+/blob/[\w.-]+/'
                           r'((?:book|exercises|solutions)/[\w.-]+\.ipynb)')


def repository():
    """``(url, branch)`` from the ``repository:`` section of ``_config.yml``."""
    text = (ROOT / '_config.yml').read_text()
    section = text.split('\nrepository:', 1)[1]
    url = re.search(r'^\s+url:\s*(\S+)', section, re.M).group(1)
    branch = re.search(r'^\s+branch:\s*(\S+)', section, re.M).group(1)
    return url.rstrip('/'), branch


def badge(notebook_path):
    """The Colab badge of a notebook (``notebook_path`` relative to the repository root)."""
    url, branch = repository()
    github = url.split('github.com/', 1)[1]
    return ('[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]'
            f'(https://colab.research.google.com/github/{github}/blob/{branch}/{notebook_path})')


def install_block():
    """The first lines of every setup cell."""
    url, _ = repository()
    return ("# On Colab, install the book's package first; anywhere else this does nothing.\n"
            "import os, subprocess, sys\n"
            "if 'google.colab' in sys.modules:\n"
            "    subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', os.environ.get(\n"
            f"        'TAOTP_INSTALL', 'taotp @ git+{url}')], check=True)\n")


def notebook_link(match):
    """A GitHub link to one of this repository's notebooks, pointed at the configured one."""
    if not (ROOT / match.group(1)).exists():
        return match.group(0)
    url, branch = repository()
    return f'{url}/blob/{branch}/{match.group(1)}'


def expected(script):
    """The script's text with its badge, install block and notebook links up to date."""
    text = script.read_text()
    rel = script.relative_to(ROOT).with_suffix('.ipynb').as_posix()
    text = BADGE.sub(lambda m: badge(rel), text, count=1)
    text = NOTEBOOK_LINK.sub(notebook_link, text)
    return INSTALL.sub(lambda m: install_block(), text, count=1)


def scripts():
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).glob('*.py'))


def main(argv):
    stale = [s for s in scripts() if expected(s) != s.read_text()]
    missing = [s for s in scripts() if not BADGE.search(s.read_text())
               or not INSTALL.search(s.read_text())]
    for s in missing:
        print(f'{s.relative_to(ROOT)}: no Colab badge or install block found')
    if '--check' in argv:
        for s in stale:
            print(f'{s.relative_to(ROOT)}: out of date')
        return 1 if stale or missing else 0
    for s in stale:
        s.write_text(expected(s))
        print(f'rewrote {s.relative_to(ROOT)}')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
