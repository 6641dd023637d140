"""Building blocks that survive layer normalisation (Chapters 2-4).

A vector v in R^d is a fixed point of ``layer_norm`` when its entries sum to 0
and its squared norm is d.  Concatenating fixed blocks gives a fixed vector, so
programs lay out their residual stream as a row of such blocks.
"""
import numpy as np

# An orthonormal frame of the plane perpendicular to (1, 1, 1).
_E1 = np.array([1.0, -1.0, 0.0]) / 2 ** 0.5
_E2 = np.array([1.0, 1.0, -2.0]) / 6 ** 0.5
_ONES = np.ones(3) / 3 ** 0.5


def pos_enc_3d(t):
    """The point at angle ``t`` on the sqrt(3)-circle perpendicular to (1, 1, 1).

    Every such point has zero mean and squared norm 3, so ``layer_norm`` leaves
    it unchanged.  ``t`` may be an array; the result then has shape (*t.shape, 3).
    """
    t = np.asarray(t, dtype=np.float64)
    return 3 ** 0.5 * (np.cos(t)[..., None] * _E1 + np.sin(t)[..., None] * _E2)


def pos_enc_3d_array(n):
    """``n`` evenly spaced points on the circle: row i is at angle 2*pi*i/n."""
    return pos_enc_3d(2 * np.pi * np.arange(n) / n)


def pos_3d_enc_rotation_matrix(theta):
    """The 3x3 rotation with ``pos_enc_3d(t) @ R == pos_enc_3d(t + theta)``.

    Built directly as a rotation about the (1, 1, 1) axis (it fixes that axis and
    turns the circle's plane by theta), so it is exact; the book instead solves a
    linear system whose matrix is singular.
    """
    c, s = np.cos(theta), np.sin(theta)
    return (np.outer(_ONES, _ONES) + c * (np.outer(_E1, _E1) + np.outer(_E2, _E2))
            + s * (np.outer(_E1, _E2) - np.outer(_E2, _E1)))


def shift_matrix(delta, n):
    """Maps the encoding of position i to that of i + delta (``pos_enc_3d_array(n)``)."""
    return pos_3d_enc_rotation_matrix(2 * np.pi * delta / n)


def padding_block(d):
    """A d-dim block fixed under layer norm: (sqrt(d-1), -1/sqrt(d-1), ...)."""
    if d < 2:
        raise ValueError(f'padding_block: a padding block needs d >= 2 dimensions; got {d}')
    return np.array([(d - 1) ** 0.5] + [-1 / (d - 1) ** 0.5] * (d - 1))


def onehot(indices, size):
    """Rows of the size x size identity picked by ``indices``."""
    return np.eye(size)[np.asarray(indices)]


# ----------------------------------------------------------------------------- hardening, cleanup

HARDEN = 1e8       # the preprint's usual attention-hardening factor
OUT_SCALE = 1e8    # ... and its usual messy-cleanup factor


def harden(matrix, factor=HARDEN):
    """``factor * matrix``: scale a query (or key) matrix so softmax behaves like a hard max.

    Scores are multiplied by the factor, so a lead of s over the runner-up becomes a
    weight ratio of exp(factor * s / sqrt(d_head)).  Across the package the keyword
    for this factor is ``harden`` (the papers' chapters keep their symbol ``lam``).
    """
    return factor * np.asarray(matrix, dtype=np.float64)


def messy_cleanup(matrix, factor=OUT_SCALE):
    """``factor * matrix``: write a result so large that the next layer norm hides what was there.

    Across the package the keyword for this factor is ``out_scale``.
    """
    return factor * np.asarray(matrix, dtype=np.float64)


def proper_cleanup(layer, head, dims, harden=HARDEN):
    """Make ``layer``'s head ``head`` attend to itself and subtract the stream's ``dims``.

    ``dims`` is a slice of the residual stream (e.g. ``Layout['pad']``).  The query and
    key both read that block, so every position attends to the positions whose block
    equals its own (itself, or copies of the same content): the block must have the same
    norm everywhere, as layer-norm-fixed blocks do.  Needs ``d_head >= width``.
    Modifies ``layer`` in place and returns it.
    """
    width = dims.stop - dims.start
    d_head = layer['Q'].shape[2]
    if width > d_head:
        raise ValueError(f'proper_cleanup: the block must fit in one head (width <= d_head = '
                         f'{d_head}); got width {width}')
    eye = np.eye(width)
    layer['Q'][head, dims, :width] = harden * eye
    layer['K'][head, dims, :width] = eye
    layer['V'][head, dims, :width] = eye
    layer['P'][head, dims, :width] = -eye
    return layer
