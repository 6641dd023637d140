"""Your progress: the best verdict of every puzzle, kept between sessions.

A puzzle once solved stays solved (with the date it was first solved); the
latest attempt is kept beside it, so re-running a notebook, a time-out or a
later wrong answer never turns "solved" back into "not yet".  The file is
``$TAOTP_PROGRESS`` if set, else ``taotp/progress.json`` in the user's data
folder (``$XDG_DATA_HOME`` or ``~/.local/share``); on Colab it lasts as long
as the runtime.
"""
import contextlib
import datetime
import json
import os
from pathlib import Path

VERSION = 2


def progress_file():
    """Where verdicts are kept (see the module docstring)."""
    if os.environ.get('TAOTP_PROGRESS'):
        return Path(os.environ['TAOTP_PROGRESS'])
    data = Path(os.environ.get('XDG_DATA_HOME') or Path.home() / '.local' / 'share')
    return data / 'taotp' / 'progress.json'


def load():
    """Puzzle id -> {'solved': date or None, 'latest': 'solved'|'not yet', 'latest_at': date};
    reads the first format too; a missing or broken file is an empty record."""
    try:
        saved = json.loads(progress_file().read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(saved, dict):
        return {}
    rows = saved.get('puzzles', saved) if saved.get('version') == VERSION else saved
    table = {}
    for key, row in rows.items():
        if row in ('solved', 'not yet'):               # the first format
            row = {'solved': 'before 2026-11' if row == 'solved' else None, 'latest': row,
                   'latest_at': None}
        if isinstance(row, dict) and row.get('latest') in ('solved', 'not yet'):
            table[str(key)] = {'solved': row.get('solved'), 'latest': row['latest'],
                               'latest_at': row.get('latest_at')}
    return table


def record(puzzle_id, passed):
    """Add one verdict: the first PASS is kept with its date, the latest attempt beside it."""
    table = load()
    today = datetime.date.today().isoformat()
    row = table.setdefault(puzzle_id, {'solved': None})
    if passed and not row.get('solved'):
        row['solved'] = today
    row['latest'], row['latest_at'] = ('solved' if passed else 'not yet'), today
    path = progress_file()
    with contextlib.suppress(OSError):      # a read-only home must not break a notebook
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({'version': VERSION, 'puzzles': table}, indent=1,
                                   sort_keys=True))
