"""Training the book's architecture with gradient descent (the optional extra ``taotp[train]``).

Install it with ``pip install "taotp[train]"`` (PyTorch and TransformerLens; Colab has
PyTorch already).  Nothing in ``taotp`` imports this package, and importing it
loads PyTorch only when a name that needs it is first used:

* ``init_params`` (``init``): a random program of a chosen shape, in the book's
  params format (NumPy, no PyTorch needed);
* ``Model`` (``model``): a PyTorch module holding a params dict as parameters and
  computing exactly ``taotp.model.forward`` (PreLN, the book's layer norm with
  epsilon added to the standard deviation, the book's softmax); ``Model(params)``
  and ``model.to_params()`` convert both ways, so a trained model runs through
  ``taotp.transformer`` / ``taotp.decode`` like a constructed one;
* ``train``, ``Batch``, ``History`` (``loop``): a seeded training loop,
  deterministic on the CPU (``device='cuda'`` trains on a GPU), with the loss on
  chosen target positions and an optional progress callback (``progress_bar``),
  silent by default;
* ``train_stack`` (``stack``): several models of one shape trained side by side
  in one process (one stacked model, one launch for all, per-model Adam and
  clipping);
* ``LagChainSampler``, ``next_token_batches`` (``sampling``): Chapter 10's task
  drawn with PyTorch on the training device, the law of
  ``taotp.selective.sample_batch``;
* ``DisentangledModel`` (``disentangled``): the attention-only network of
  Chapter 10 whose layers append to the residual stream;
* ``save_params`` / ``load_params`` (``store``): trained programs as small
  ``.npz`` files, readable without PyTorch.
"""
import importlib

_NAMES = {
    'init_params': 'init', 'Model': 'model', 'torch_forward': 'model',
    'train': 'loop', 'Batch': 'loop', 'History': 'loop', 'progress_bar': 'loop',
    'cross_entropy': 'loop',
    'DisentangledModel': 'disentangled',
    'train_stack': 'stack', 'StackHistory': 'stack',
    'LagChainSampler': 'sampling', 'next_token_batches': 'sampling',
    'save_params': 'store', 'load_params': 'store', 'load_meta': 'store',
}


def __getattr__(name):
    """Load a submodule (and PyTorch, if it needs it) when one of its names is first used."""
    if name in _NAMES:
        return getattr(importlib.import_module(f'.{_NAMES[name]}', __name__), name)
    raise AttributeError(f"module 'taotp.train' has no attribute {name!r}")


def require_torch(where):
    """Import PyTorch, or raise ``ModuleNotFoundError`` saying how to install the extra."""
    try:
        return importlib.import_module('torch')
    except ModuleNotFoundError:
        raise ModuleNotFoundError(f'{where} needs PyTorch, part of the optional training extra: '
                                  f'pip install "taotp[train]" (Colab has PyTorch already)'
                                  ) from None


__all__ = sorted(_NAMES) + ['require_torch']
