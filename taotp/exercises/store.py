"""Your progress: the best verdict of every puzzle, kept between sessions.

A puzzle once solved stays solved (with the date it was first solved); the
latest attempt is kept beside it, so re-running a notebook, a time-out or a
later wrong answer never turns "solved" back into "not yet".  The file is
``$TAOTP_PROGRESS`` if set, else ``taotp/progress.json`` in the user's data
folder (``$XDG_DATA_HOME`` or ``~/.local/share``); on Colab it lasts as long
as the runtime.

Two kernels may check at once: a verdict is added under a lock on a file beside
it (where the system has ``fcntl``), and the new table is written to a temporary
file that then replaces the old one, so no reader ever sees half a file.  A file
that cannot be read as progress is never written over: it is moved aside to
``progress.json.unreadable-<time>`` and a fresh table starts.
"""
import contextlib
import datetime
import json
import os
import tempfile
import time
from pathlib import Path

try:
    import fcntl
except ImportError:          # Windows: no lock; the replace is still atomic
    fcntl = None

VERSION = 2


def progress_file():
    """Where verdicts are kept (see the module docstring)."""
    if os.environ.get('TAOTP_PROGRESS'):
        return Path(os.environ['TAOTP_PROGRESS'])
    data = Path(os.environ.get('XDG_DATA_HOME') or Path.home() / '.local' / 'share')
    return data / 'taotp' / 'progress.json'


def _read(path):
    """(table, readable): a missing file is an empty, readable record."""
    try:
        saved = json.loads(path.read_text())
    except FileNotFoundError:
        return {}, True
    except (OSError, ValueError):
        return {}, False
    if not isinstance(saved, dict):
        return {}, False
    rows = saved.get('puzzles', saved) if saved.get('version') == VERSION else saved
    if not isinstance(rows, dict):
        return {}, False
    table = {}
    for key, row in rows.items():
        if row in ('solved', 'not yet'):               # the first format
            row = {'solved': 'before 2026-11' if row == 'solved' else None, 'latest': row,
                   'latest_at': None}
        if isinstance(row, dict) and row.get('latest') in ('solved', 'not yet'):
            table[str(key)] = {'solved': row.get('solved'), 'latest': row['latest'],
                               'latest_at': row.get('latest_at')}
    return table, True


def load():
    """Puzzle id -> {'solved': date or None, 'latest': 'solved'|'not yet', 'latest_at': date};
    reads the first format too; a missing or unreadable file is an empty record."""
    return _read(progress_file())[0]


@contextlib.contextmanager
def _locked(path):
    """Hold an exclusive lock on ``path``'s lock file (a no-op without ``fcntl``)."""
    if fcntl is None:
        yield
        return
    with open(path.with_name(path.name + '.lock'), 'a') as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def record(puzzle_id, passed):
    """Add one verdict: the first PASS is kept with its date, the latest attempt beside it."""
    path = progress_file()
    with contextlib.suppress(OSError):      # a read-only home must not break a notebook
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            table, readable = _read(path)
            if not readable:
                stamp = time.strftime('%Y%m%d-%H%M%S')
                os.replace(path, path.with_name(f'{path.name}.unreadable-{stamp}'))
            today = datetime.date.today().isoformat()
            row = table.setdefault(puzzle_id, {'solved': None})
            if passed and not row.get('solved'):
                row['solved'] = today
            row['latest'], row['latest_at'] = ('solved' if passed else 'not yet'), today
            text = json.dumps({'version': VERSION, 'puzzles': table}, indent=1, sort_keys=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name + '.')
            try:
                with os.fdopen(handle, 'w') as out:
                    out.write(text)
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
