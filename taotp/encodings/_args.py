"""Argument checks shared by the encodings (each names the calling function in its message)."""
import numpy as np

from ..params import MAX_SIZE, check_numbers


def even_dims(d, who, minimum=2):
    """``d`` as an int, or an error: real dims of a rotation encoding come in (cos, sin) pairs."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f'{who}: d must be an int; got {type(d).__name__}')
    if d < minimum or d % 2:
        raise ValueError(f'{who}: d must be even and at least {minimum}; got {d}')
    if d > MAX_SIZE:
        raise ValueError(f'{who}: d must be at most {MAX_SIZE:,} (taotp.params.MAX_SIZE); got {d}')
    return int(d)


def count(q, who, name='q'):
    """A positive int (a number of positions, items or angles), or an error naming ``name``."""
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)):
        raise TypeError(f'{who}: {name} must be an int; got {type(q).__name__}')
    if q < 1:
        raise ValueError(f'{who}: {name} must be at least 1; got {q}')
    if q > MAX_SIZE:
        raise ValueError(f'{who}: {name} must be at most {MAX_SIZE:,} (taotp.params.MAX_SIZE); '
                         f'got {q}')
    return int(q)


def table(q, d, who):
    """Refuse an encoding of q rows and d columns beyond ``taotp.params.MAX_NUMBERS``."""
    check_numbers(who, q * d, f'the encoding ({q:,} x {d:,})')
    return q, d


def angles(thetas, who):
    """The angles as a non-empty 1-D float64 array, or an error."""
    thetas = np.asarray(thetas, dtype=np.float64)
    if thetas.ndim != 1 or len(thetas) == 0:
        raise ValueError(f'{who}: thetas must be a non-empty 1-D array of angles; '
                         f'got shape {thetas.shape}')
    return thetas


def generator(rng, who):
    """``rng`` if it is a ``np.random.Generator``; a TypeError otherwise (results stay seeded)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f'{who}: rng must be a numpy Generator; got {type(rng).__name__}')
    return rng


def encoding(table, who):
    """An encoding (q, d) as a float64 array, or an error."""
    arr = np.asarray(table)
    if arr.dtype.kind not in 'biuf' or arr.ndim != 2 or 0 in arr.shape:
        raise ValueError(f'{who}: encoding must be a non-empty real 2-D array (q, d); '
                         f'got shape {arr.shape} and dtype {arr.dtype}')
    return arr.astype(np.float64)
