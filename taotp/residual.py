"""Named slices of the residual stream, declared once in the order of a figure.

    >>> L = Layout([('tok', 3), ('pos', 3), ('pad', 2)])
    >>> L['pos'], L.d_model
    (slice(3, 6, None), 8)
    >>> L.labels()[:4]
    ['tok:0', 'tok:1', 'tok:2', 'pos:0']
"""


class Layout:
    """An ordered list of ``(name, width)`` blocks; never reordered."""

    def __init__(self, blocks):
        self.blocks = []
        self._slices = {}
        start = 0
        for name, width in blocks:
            if name in self._slices:
                raise ValueError(f'Layout: block name {name!r} is used twice')
            if int(width) < 1:
                raise ValueError(f'Layout: block {name!r} must have width >= 1; got {width}')
            self.blocks.append((name, int(width)))
            self._slices[name] = slice(start, start + int(width))
            start += int(width)
        self.d_model = start

    def __getitem__(self, name):
        try:
            return self._slices[name]
        except KeyError:
            raise KeyError(f'Layout has no block {name!r}; blocks are '
                           f'{[n for n, _ in self.blocks]}') from None

    def __contains__(self, name):
        return name in self._slices

    def labels(self):
        """One label per dimension: ``name`` for width 1, else ``name:i``."""
        out = []
        for name, width in self.blocks:
            out += [name] if width == 1 else [f'{name}:{i}' for i in range(width)]
        return out

    def __repr__(self):
        return 'Layout(' + ', '.join(f'{n}={w}' for n, w in self.blocks) + f'; d_model={self.d_model})'
