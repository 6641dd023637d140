"""The book's architecture as a PyTorch module, converted to and from params dicts.

``Model(params)`` turns every array of a params dict (Chapter 1's format) into
a tensor and computes what ``taotp.model.forward`` computes, step by step:
token plus position embeddings (one table, or several summed tables with
explicit position ids), PreLN layers with the book's layer norm (epsilon
added to the standard deviation), scores divided by ``sqrt(d_head)``, the
book's softmax (epsilon added to the sum), a ReLU MLP, the final norm, and
the output embedding (``tok_emb`` itself when tied).  ``model.to_params()``
gives the params dict back (float64 NumPy), so a trained model runs through
``taotp.transformer`` / ``taotp.decode`` / ``taotp.trace`` and is counted and
plotted like a constructed one.  The variants of ``taotp.model`` are options:
``norm='layer'|'rms'|'none'`` and ``post_ln``.

    >>> import torch
    >>> from taotp.train import Model, init_params
    >>> params = init_params(7, 10, 8, n_layers=2, n_heads=2, d_ff=[16, 0])
    >>> model = Model(params)
    >>> tokens = np.array([1, 4, 2, 6])
    >>> mine = model(torch.tensor(tokens)).detach().numpy()
    >>> bool(np.allclose(mine, taotp.transformer(tokens, **model.to_params()), rtol=0, atol=1e-12))
    True

Training runs in float64 by default (the same numbers as NumPy, about half
the speed of float32); ``dtype=torch.float32`` trains faster, and
``to_params`` converts back to float64 either way.
"""
import fnmatch

import numpy as np

from ..model import EPS
from ..params import is_tied, validate_params
from . import require_torch

torch = require_torch('taotp.train.Model')

NORMS = ('layer', 'rms', 'none')
LAYER_ARRAYS = ('Q', 'K', 'V', 'P', 'M1', 'b1', 'M2', 'b2')


def normalise(x, kind, gamma, beta):
    """The book's norms on tensors: ``'layer'`` (epsilon on the std), ``'rms'`` or ``'none'``."""
    if kind == 'layer':
        centred = x - x.mean(-1, keepdim=True)
        x = centred / ((centred ** 2).mean(-1, keepdim=True).sqrt() + EPS)
    elif kind == 'rms':
        x = x / ((x ** 2).mean(-1, keepdim=True).sqrt() + EPS)
    return beta + gamma * x


def book_softmax(scores):
    """Max-shifted softmax divided by (sum + epsilon), as ``taotp.model.softmax``."""
    e = torch.exp(scores - scores.amax(-1, keepdim=True).detach())
    return e / (e.sum(-1, keepdim=True) + EPS)


def _entries(params):
    """(name, value) of every array and norm entry: 'tok_emb', 'layers.0.Q', 'lnf.gamma', ..."""
    out = [('tok_emb', params['tok_emb'])]
    tables = params['pos_emb']
    if isinstance(tables, (list, tuple)):
        out += [(f'pos_emb.{i}', t) for i, t in enumerate(tables)]
    else:
        out.append(('pos_emb', tables))
    if not is_tied(params):
        out.append(('out_emb', params['out_emb']))
    for i, layer in enumerate(params['layers']):
        out += [(f'layers.{i}.{k}', layer[k]) for k in LAYER_ARRAYS]
        for ln in ('ln1', 'ln2'):
            out += [(f'layers.{i}.{ln}.{k}', layer[ln].get(k, 1.0 if k == 'gamma' else 0.0))
                    for k in ('gamma', 'beta')]
    out += [(f'lnf.{k}', params['lnf'].get(k, 1.0 if k == 'gamma' else 0.0))
            for k in ('gamma', 'beta')]
    return out


class Model(torch.nn.Module):
    """A params dict as a trainable PyTorch module (see the module docstring).

    Args:
        params: a program in the book's format (``validate_params`` must accept it).
        norm, post_ln: the variant (the book: ``'layer'``, ``False``).
        freeze: names or patterns (``fnmatch``) of entries kept as they are:
            ``'tok_emb'``, ``'out_emb'``, ``'pos_emb'`` (``'pos_emb.1'`` for the
            second of several tables, ``'pos_emb*'`` for all), ``'layers.0.Q'``,
            ``'layers.*.ln1.gamma'``, ``'lnf.*'``, ``'*ln*'`` (every norm)...
            A layer with ``d_ff = 0`` is attention-only: its ``b2`` is frozen too.
        dtype: ``torch.float64`` (default) or ``torch.float32``.
        tied: share ``tok_emb`` as the output embedding; default: when the two
            are equal in ``params`` (``taotp.is_tied``).

    Trained entries become tensors of their array's shape (a scalar layer-norm
    ``gamma`` or ``beta`` becomes a vector of ``d_model`` entries); frozen
    ones are returned unchanged by ``to_params``.
    """

    def __init__(self, params, norm='layer', post_ln=False, freeze=(), dtype=torch.float64,
                 tied=None):
        super().__init__()
        validate_params(params)
        if norm not in NORMS:
            raise ValueError(f'Model: norm must be one of {NORMS}; got {norm!r}')
        if not isinstance(post_ln, bool):
            raise ValueError(f'Model: post_ln must be True or False; got {post_ln!r}')
        if dtype not in (torch.float64, torch.float32):
            raise ValueError(f'Model: dtype must be torch.float64 or torch.float32; got {dtype}')
        freeze = (freeze,) if isinstance(freeze, str) else tuple(freeze)
        self.norm, self.post_ln, self.dtype = norm, post_ln, dtype
        self.tied = is_tied(params) if tied is None else bool(tied)
        d_model = np.shape(params['tok_emb'])[1]
        self.n_layers = len(params['layers'])
        self.multi_positions = isinstance(params['pos_emb'], (list, tuple))
        self.n_tables = len(params['pos_emb']) if self.multi_positions else 1
        entries = _entries(params)
        if not self.tied and 'out_emb' not in dict(entries):
            entries.append(('out_emb', params['out_emb']))
        attention_only = {f'layers.{i}.b2' for i, l in enumerate(params['layers'])
                          if np.shape(l['M1'])[1] == 0}
        self._names, self._frozen, self._scalars = [], {}, {}
        matched = set()
        for name, value in entries:
            hits = [p for p in freeze if fnmatch.fnmatchcase(name, p)]
            matched.update(hits)
            key = name.replace('.', '__')
            self._names.append(name)
            if hits or name in attention_only:
                self._frozen[name] = value
                if np.ndim(value) == 0:
                    self._scalars[name] = float(value)
                self.register_buffer(key, torch.as_tensor(np.asarray(value, dtype=np.float64),
                                                          dtype=dtype))
            else:
                arr = np.asarray(value, dtype=np.float64)
                if arr.ndim == 0:                 # a scalar norm entry becomes a vector
                    arr = np.full(d_model, float(arr))
                self.register_parameter(key, torch.nn.Parameter(torch.tensor(arr, dtype=dtype)))
        unknown = [p for p in freeze if p not in matched]
        if unknown:
            raise ValueError(f'Model: freeze names no entry of the program: {unknown}; entries '
                             f'are named like {self._names[:3] + ["layers.0.Q", "lnf.gamma"]}')

    # ------------------------------------------------------------------ access by book name
    def get(self, name):
        """The tensor of an entry, by its book name (``'layers.0.Q'``, ``'out_emb'``, ...)."""
        if name == 'out_emb' and self.tied:
            name = 'tok_emb'
        return getattr(self, name.replace('.', '__'))

    def trainable(self):
        """Book names of the entries that training changes."""
        return [n for n in self._names if n not in self._frozen]

    @property
    def variant(self):
        """Keywords for ``taotp.transformer`` / ``decode`` / ``trace``: ``{'norm', 'post_ln'}``."""
        return {'norm': self.norm, 'post_ln': self.post_ln}

    # ------------------------------------------------------------------ the forward pass
    def _norm(self, x, prefix):
        return normalise(x, self.norm, self.get(f'{prefix}.gamma'), self.get(f'{prefix}.beta'))

    def _positions(self, positions, shape, device):
        n = shape[-1]
        if positions is None:
            return [torch.arange(n, device=device)] * self.n_tables

        def on_device(p):
            return (p if torch.is_tensor(p) else torch.as_tensor(np.asarray(p))).to(device)
        if self.multi_positions:
            if len(positions) != self.n_tables:
                raise ValueError(f'Model: positions needs one array per position table '
                                 f'({self.n_tables}); got {len(positions)}')
            return [on_device(p) for p in positions]
        return [on_device(positions)]

    def forward(self, tokens, positions=None, record=None):
        """Logits ``(..., n, vocab)`` of token ids ``(..., n)``.

        ``positions``: ``None`` (ids ``0..n-1`` in every table), ids ``(..., n)``
        for one table, or a list of such arrays, one per table.  ``record``, if
        a list, receives per layer ``{'attn': (..., heads, n, n)}``.
        """
        device = self.get('tok_emb').device
        tokens = (tokens if torch.is_tensor(tokens) else torch.as_tensor(np.asarray(tokens))
                  ).to(device)
        x = self.get('tok_emb')[tokens]
        tables = [f'pos_emb.{i}' for i in range(self.n_tables)] if self.multi_positions \
            else ['pos_emb']
        for table, ids in zip(tables, self._positions(positions, tokens.shape, device)):
            x = x + self.get(table)[ids]
        n = tokens.shape[-1]
        mask = torch.ones(n, n, dtype=torch.bool, device=device).tril()
        for i in range(self.n_layers):
            x = self._layer(x, i, mask, record)
        return self._norm(x, 'lnf') @ self.get('out_emb').T

    def _attention(self, a, i, mask, record):
        Q, K, V, P = (self.get(f'layers.{i}.{k}') for k in 'QKVP')
        if Q.shape[0] == 0:
            if record is not None:
                record.append({'attn': a.new_zeros(a.shape[:-2] + (0, a.shape[-2], a.shape[-2]))})
            return torch.zeros_like(a)
        q, k, v = (torch.einsum('...nd,hdk->...hnk', a, W) for W in (Q, K, V))
        scores = (q * Q.shape[-1] ** -0.5) @ k.transpose(-1, -2)
        scores = scores.masked_fill(~mask, float('-inf'))
        # float32 cannot see the book's 1e-10 next to a sum >= 1: use the fused softmax
        weights = book_softmax(scores) if scores.dtype == torch.float64 else \
            torch.softmax(scores, dim=-1)
        if record is not None:
            record.append({'attn': weights})
        return torch.einsum('...hnv,hdv->...nd', weights @ v, P)

    def _mlp(self, a, i):
        M1, b1, M2, b2 = (self.get(f'layers.{i}.{k}') for k in ('M1', 'b1', 'M2', 'b2'))
        if M1.shape[1] == 0:
            return b2.expand_as(a)
        return torch.relu(a @ M1 + b1) @ M2 + b2

    def _layer(self, x, i, mask, record):
        ln1, ln2 = f'layers.{i}.ln1', f'layers.{i}.ln2'
        if self.post_ln:
            mid = self._norm(x + self._attention(x, i, mask, record), ln1)
            return self._norm(mid + self._mlp(mid, i), ln2)
        mid = x + self._attention(self._norm(x, ln1), i, mask, record)
        return mid + self._mlp(self._norm(mid, ln2), i)

    # ------------------------------------------------------------------ back to the book
    def to_params(self):
        """The program as a params dict of float64 NumPy arrays (frozen entries unchanged)."""
        def value(name):
            if name in self._frozen:
                v = self._frozen[name]
                return self._scalars[name] if name in self._scalars else \
                    np.array(v, dtype=np.float64)
            return self.get(name).detach().cpu().to(torch.float64).numpy().copy()

        params = {'tok_emb': value('tok_emb')}
        params['out_emb'] = params['tok_emb'] if self.tied else value('out_emb')
        params['pos_emb'] = [value(f'pos_emb.{i}') for i in range(self.n_tables)] \
            if self.multi_positions else value('pos_emb')
        params['layers'] = []
        for i in range(self.n_layers):
            layer = {k: value(f'layers.{i}.{k}') for k in LAYER_ARRAYS}
            for ln in ('ln1', 'ln2'):
                layer[ln] = {k: value(f'layers.{i}.{ln}.{k}') for k in ('gamma', 'beta')}
            params['layers'].append(layer)
        params['lnf'] = {k: value(f'lnf.{k}') for k in ('gamma', 'beta')}
        return params

    def extra_repr(self):
        return (f'norm={self.norm!r}, post_ln={self.post_ln}, tied={self.tied}, '
                f'layers={self.n_layers}, trainable={sum(p.numel() for p in self.parameters()):,}')
