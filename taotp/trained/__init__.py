"""Chapter 11's experiments: gradient descent on the tasks of Chapters 9 and 10.

* ``coupling``: a 1-layer 4-head adder trained on SA(n, n) with the scratchpad
  and bi-level coupled position IDs (random offsets), scored on a grid of
  operand counts and lengths beyond the training box;
* ``selective``: standard (the book's architecture, attention only) and
  disentangled 3-layer models trained on interleaved Markov chains, scored by
  KL against BMA, ML, the construction and the paper's eq. (1); ``claims``
  states each of the paper's messages as holds / not reached / contradicted /
  not run;
* ``paper``: the same task at D'Angelo et al.'s own settings (batch 256, Adam at
  a constant 1e-3, no clipping, up to 30,000 steps or flat), several models per
  process: the runs a GPU is for;
* ``attention``: how much of a trained map's weight falls where a construction looks;
* ``hooks``: a program's attention through TransformerLens hook points;
* ``figures``: the chapter's ``draw_*`` functions (matplotlib);
* ``tasks`` and ``puzzles``: the tasks, measures, harnesses and reference runs of
  the training puzzles 2.3, 3.1, 5.8 and 7.11 (their checkers are in
  ``taotp.exercises``).

Training needs the optional extra (``pip install "taotp[train]"``, PyTorch);
the results the chapter shows are stored in ``taotp/data`` (files
``ch11_*``) and load without it.  Re-run them from a shell (the full size
takes hours on two CPU cores; ``smoke`` takes seconds)::

    python -m taotp.trained smoke  OUT_DIR
    python -m taotp.trained full   OUT_DIR  [--device cuda]
    python -m taotp.trained paper  OUT_DIR  --device cuda --part main --minutes 8

    >>> load_selective()['runs']['std {1,2,3} [1,3,1]']['heads']
    [1, 3, 1]
"""
import json
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / 'data'    # files named ch11_*


def load_selective(size='full', folder=None):
    """The stored Chapter 10 experiments: ``{'runs': {name: result}, 'references': {...}}``.

    ``runs`` as ``selective.run_one`` returns them; ``references`` maps each
    lag set to the KL curves of BMA, ML and the construction (K heads, 1 head).
    """
    path = Path(folder or DATA) / f'ch11_selective_{size}.json'
    return json.loads(path.read_text())


def load_standard(name, folder=None):
    """Stored weights of a trained standard model of ``selective.KEEP_WEIGHTS`` (params dict)."""
    from ..train.store import load_params
    from ..params import as_dtype
    from .selective import file_name
    return as_dtype(load_params(Path(folder or DATA) / f'ch11_{file_name(name)}.npz'), np.float64)


def load_adder(size='full', folder=None):
    """The stored trained adder: ``(params, meta)``; meta holds settings, times and the grids."""
    from ..params import as_dtype
    from ..train.store import load_params
    params, meta = load_params(Path(folder or DATA) / f'ch11_adder_{size}.npz', with_meta=True)
    return as_dtype(params, np.float64), meta


def load_paper(folder=None):
    """Every stored run at the paper's settings, merged from ``ch11_paper_<part>.json``.

    Returns ``{'runs': {name: result}, 'not_run': [names], 'parts': {part: settings}}``,
    or ``None`` when no such file is stored (no GPU session has run them yet).
    The smoke part is left out.
    """
    files = sorted(p for p in Path(folder or DATA).glob('ch11_paper_*.json')
                   if p.stem != 'ch11_paper_smoke')
    if not files:
        return None
    merged = {'runs': {}, 'not_run': [], 'parts': {}}
    for path in files:
        part = json.loads(path.read_text())
        merged['runs'].update(part['runs'])
        merged['not_run'] += [n for n in part.get('not_run', []) if n not in merged['runs']]
        merged['parts'][part['part']] = part['settings']
    return merged


def load_paper_weights(name, folder=None):
    """The stored weights of a standard run at the paper's settings (params dict)."""
    from .paper import load_weights
    for path in sorted(Path(folder or DATA).glob('ch11_paper_*.npz')):
        with np.load(path, allow_pickle=False) as data:
            if any(k.split('|', 1)[0] == name for k in data.files):
                break
    else:
        raise ValueError(f'load_paper_weights: no stored weights for {name!r}')
    return load_weights(path, name)
