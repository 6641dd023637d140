"""The training puzzles (2.3, 3.1, 5.8, 7.11) under the one name the exercise notebooks
import: their tasks and measures (``taotp.trained.tasks``) and their PyTorch harnesses
(``taotp.trained.puzzles``, loaded on first use)."""
from ..trained import tasks

_HARNESS = ('train_hello_world_torch', 'train_lookup', 'train_sorter', 'train_offset',
            'position_table', 'REFERENCE', 'SMOKE', 'SWEEPS', 'STORE_DTYPE', 'as_stored',
            'reference_run', 'sweep', 'regenerate', 'attention_on_next')


def __getattr__(name):
    if name in _HARNESS:
        from ..trained import puzzles
        return getattr(puzzles, name)
    if not name.startswith('__') and hasattr(tasks, name):
        return getattr(tasks, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__():
    return sorted(set(_HARNESS) | {n for n in vars(tasks) if not n.startswith('_')})
