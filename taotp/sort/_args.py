"""Argument checks shared by the Chapter 5 builders (messages name the function)."""
import numpy as np

from ..params import MAX_SIZE


def check_int(where, name, value, low, high=MAX_SIZE):
    """``value`` must be an integer in ``low..high`` (by default at most ``taotp.params.MAX_SIZE``)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f'{where}: {name} must be an int; got {type(value).__name__}')
    if value < low:
        raise ValueError(f'{where}: {name} must be >= {low}; got {value}')
    if value > high:
        raise ValueError(f'{where}: {name} must be at most {high:,} (taotp.params.MAX_SIZE); '
                         f'got {value}')


def check_scale(where, name, value):
    """``value`` must be a positive finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not np.isfinite(value) or value <= 0:
        raise ValueError(f'{where}: {name} must be a positive finite number; got {value!r}')
