"""The MLP as a lookup table: spikes, Theorem 6.1 and fitting a lookup to a program.

Three ReLUs make a spike, ``relu(t + 1) - 2 relu(t) + relu(t - 1)``: 1 at
``t = 0`` and 0 for ``|t| >= 1`` (Lemma 6.1).  One spike per point, each as wide
as the smallest gap between the points, interpolates any finite table exactly
(Theorem 6.1, ``build_MLP``).  ``fit_lookup_mlp`` runs a program, reads the
keys its MLP really sees and replaces that MLP by such a table.
"""
import numpy as np

from ..model import scalar_mlp
from ..params import MAX_SIZE, check_numbers
from ..trace import trace

OUT_SCALE = 1e10    # the book's MLP output scale in Chapter 6 (messy cleanup): tok_emb * 1e10


def spike(x0=0.0, a0=1.0, width=1.0):
    """Three ReLUs whose sum is a spike of height ``a0`` at ``x0``, zero beyond ``width``.

    Lemma 6.1 with width 1: relu(t + 1) - 2 relu(t) + relu(t - 1), t = (x - x0) / width.
    Returns ``(M1 (1, 3), b1 (3,), M2 (3, 1), b2 (1,))`` for ``relu(x M1 + b1) M2 + b2``.

    >>> from taotp.model import scalar_mlp
    >>> float(scalar_mlp(2.0, *spike(2.0, 5.0))[0])
    5.0
    """
    if not width > 0:
        raise ValueError(f'spike: width must be > 0; got {width}')
    M1 = np.full((1, 3), 1.0 / width)
    b1 = -x0 / width + np.array([1.0, 0.0, -1.0])
    M2 = a0 * np.array([[1.0], [-2.0], [1.0]])
    return M1, b1, M2, np.zeros(1)


def min_sep(xs):
    """Smallest gap between two of the values ``xs`` (inf for fewer than two values).

    >>> min_sep([0.0, 1.0, 3.0])
    1.0
    """
    xs = np.sort(np.asarray(xs, dtype=np.float64).ravel())
    return float(np.diff(xs).min()) if len(xs) > 1 else float('inf')


class MLPWeights(tuple):
    """``(m1, b1, M2, b2)`` from ``build_MLP``; also carries ``.min_sep`` and ``.xs``."""

    def __new__(cls, m1, b1, M2, b2, min_sep, xs):
        self = super().__new__(cls, (m1, b1, M2, b2))
        self.min_sep, self.xs = min_sep, xs
        return self

    @property
    def d_ff(self):
        """Hidden units: three per point."""
        return len(self[1])


def build_MLP(xs, ys):
    """A one-hidden-layer ReLU MLP with MLP(xs[i]) = ys[i] exactly (Theorem 6.1).

    Each point gets a spike (three hidden units) of height ys[i] centred on xs[i],
    as wide as the smallest gap ``min_sep`` between the points, so no spike
    reaches a neighbour: input weight 1 / min_sep, biases -x_i / min_sep + (1, 0, -1),
    output rows y_i, -2 y_i, y_i, and b2 = 0.

    Args:
        xs: n distinct real numbers (the scalar MLP inputs).
        ys: n outputs, scalars or vectors of one length d.
    Returns:
        ``MLPWeights`` unpacking to ``(m1 (3n,), b1 (3n,), M2 (3n, d), b2 (d,))``, the
        weights of the input row, with ``.min_sep`` (the spike width) attached.
    Raises:
        ValueError: empty, mismatched, non-finite or repeated inputs, or more than
            ``MAX_SIZE // 3`` points (d_ff = 3 n is at most ``taotp.params.MAX_SIZE``).

    >>> w = build_MLP([0.0, 1.0, 3.0], [5.0, -2.0, 7.0])
    >>> w.d_ff, w.min_sep, mlp_apply(w, [1.0, 2.0])[:, 0].tolist()
    (9, 1.0, [-2.0, 0.0])
    """
    xs = np.asarray(xs, dtype=np.float64)
    ys = np.asarray(ys, dtype=np.float64)
    if xs.ndim != 1 or len(xs) == 0:
        raise ValueError(f'build_MLP: xs must be a non-empty 1-D list of numbers; got shape '
                         f'{xs.shape}')
    if ys.ndim == 1:
        ys = ys[:, None]
    if ys.ndim != 2 or len(ys) != len(xs):
        raise ValueError(f'build_MLP: ys must hold one output per x ({len(xs)}); got shape '
                         f'{ys.shape}')
    if 3 * len(xs) > MAX_SIZE:
        raise ValueError(f'build_MLP: xs must hold at most {MAX_SIZE // 3:,} points (3 hidden '
                         f'units each, d_ff at most taotp.params.MAX_SIZE); got {len(xs):,}')
    check_numbers('build_MLP', 3 * len(xs) * (ys.shape[1] + 2), 'the MLP')
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ys))):
        raise ValueError('build_MLP: xs and ys must be finite; got NaN or infinity')
    sep = min_sep(xs)
    if sep == 0:
        order = np.sort(xs)
        dup = order[np.flatnonzero(np.diff(order) == 0)[0]]
        raise ValueError(f'build_MLP: xs must be distinct; got {float(dup)!r} more than once')
    if not np.isfinite(sep):
        sep = 1.0  # a single point: any width works
    n = len(xs)
    m1 = np.full(3 * n, 1.0 / sep)
    b1 = (-xs[:, None] / sep + np.array([1.0, 0.0, -1.0])).ravel()
    M2 = (ys[:, None, :] * np.array([1.0, -2.0, 1.0])[None, :, None]).reshape(3 * n, -1)
    return MLPWeights(m1, b1, M2, np.zeros(ys.shape[1]), sep, xs)


def mlp_apply(weights, x):
    """Evaluate ``(m1, b1, M2, b2)`` at scalar inputs ``x``: shape (*x.shape, d).

    The engine's MLP (``taotp.model.scalar_mlp``), so a built table runs as a program would.
    """
    m1, b1, M2, b2 = weights
    return scalar_mlp(x, m1, b1, M2, b2)


def mlp_keys(params, layer=0, row=0):
    """The MLP input values a built adder was made for, recovered from its weights.

    ``build_MLP`` puts the middle unit of each spike at bias -x_i / min_sep, so
    x_i = -b1[3i + 1] / M1[row, 3i + 1].  Sorted, one per spike.
    """
    lay = params['layers'][layer]
    w, b = lay['M1'][row, 1::3], lay['b1'][1::3]
    return np.sort(-b / w)


def mlp_inputs(params, sequences, layer=0, at=None, row=None):
    """What a layer's MLP reads: its normalised input, shape (batch, len(at), d_model).

    Runs ``sequences`` (batch, n) through the shared forward pass (``trace``) with
    that layer's MLP silenced (its input does not depend on it) and returns the
    recorded ``mlp_in`` at positions ``at`` (default: all); ``row`` picks one
    residual coordinate, giving shape (batch, len(at)).
    """
    lay = params['layers'][layer]
    silent = dict(lay, M1=np.zeros((lay['M1'].shape[0], 0)), b1=np.zeros(0),
                  M2=np.zeros((0, lay['M2'].shape[1])))
    upto = dict(params, layers=list(params['layers'][:layer]) + [silent])
    seen = trace(np.asarray(sequences), upto).mlp_in[layer]
    seen = seen if at is None else seen[..., list(at), :]
    return seen if row is None else seen[..., row]


def fit_lookup_mlp(params, sequences, targets, layer=0, row=0, out_scale=OUT_SCALE, at=None,
                   tol=1e-12):
    """Replace a layer's MLP by a lookup built from the keys it actually sees.

    Reads coordinate ``row`` of the layer's normalised MLP input (``mlp_inputs``)
    at positions ``at`` (default: the last one) of every sequence (N, T) as a key,
    and builds an MLP (``build_MLP``) that maps each key to ``out_scale`` times the
    out-embedding of ``targets`` (N, len(at)) there.  Keys closer than ``tol``
    (rounding noise: the same state reached through different digits) form one
    cluster, represented by its midpoint; a cluster must want a single token.
    A target of -1 means "no answer due here" and skips that key.

    Returns:
        ``(params, min_sep)``; ``params`` is modified in place.
    Raises:
        ValueError: two keys within ``tol`` want different tokens.
    """
    sequences = np.asarray(sequences)
    targets = np.asarray(targets).reshape(len(sequences), -1)
    at = [sequences.shape[1] - 1] if at is None else list(at)
    keys = mlp_inputs(params, sequences, layer, at, row).ravel()
    want = targets.ravel()
    keys, want = keys[want >= 0], want[want >= 0]
    order = np.argsort(keys, kind='stable')
    keys, want = keys[order], want[order]
    cluster = np.concatenate([[0], np.cumsum(np.diff(keys) > tol)])
    starts = np.flatnonzero(np.diff(cluster, prepend=-1))
    clash = np.flatnonzero(want != want[starts][cluster])
    if len(clash):
        i = clash[0]
        raise ValueError(f'fit_lookup_mlp: key {float(keys[i])!r} must give token {want[i]} and '
                         f'{want[starts][cluster][i]}; the attention does not separate them')
    ends = np.append(starts[1:], len(keys)) - 1
    centres = (keys[starts] + keys[ends]) / 2
    weights = build_MLP(centres, out_scale * params['out_emb'][want[starts]])
    lay = params['layers'][layer]
    lay['M1'] = np.zeros((params['tok_emb'].shape[1], weights.d_ff))
    lay['M1'][row] = weights[0]
    lay['b1'], lay['M2'], lay['b2'] = weights[1], weights[2], weights[3]
    return params, weights.min_sep
