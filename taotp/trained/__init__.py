"""Chapter 11's experiments: gradient descent on the tasks of Chapters 9 and 10.

* ``coupling``: a 1-layer 4-head adder trained on SA(n, n) with the scratchpad
  and bi-level coupled position IDs (random offsets), scored on a grid of
  operand counts and lengths beyond the training box;
* ``selective``: standard (the book's architecture, attention only) and
  disentangled 3-layer models trained on interleaved Markov chains, scored by
  KL against BMA, ML and the construction;
* ``attention``: how much of a trained map's weight falls where a construction looks;
* ``hooks``: a program's attention through TransformerLens hook points;
* ``figures``: the chapter's ``draw_*`` functions (matplotlib).

Training needs the optional extra (``pip install "taotp[train]"``, PyTorch);
the results the chapter shows are stored in ``taotp/data`` (files
``ch11_*``) and load without it.  Re-run them from a shell (the full size
takes hours on two CPU cores; ``smoke`` takes seconds)::

    python -m taotp.trained smoke  OUT_DIR
    python -m taotp.trained full   OUT_DIR

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
