"""Chapter 7, The Original Encodings: rotation and sinusoidal encodings and how to compare them.

An *encoding* of q items (positions or tokens) in d real dims is an array of
shape (q, d): row a is the vector given to item a.  Float64 throughout, row
vectors (``x @ T``), randomness only through an ``rng`` Generator argument.

* ``rotation``: complex, real and reversed rotation encodings, their exact
  shift matrices ``shift_by_delta``, random and evenly spaced angles;
* ``sinusoidal``: the 2017 ("OG") encoding, a reversed rotation encoding with
  the angles ``og_angles(d)`` (Theorem 7.3);
* ``codes``: encodings that do not shift: random normal, random sign, Hamming;
* ``measures``: ``distinguishability`` (Def. 7.6), its bound for any encoding,
  ``padding_dimension`` (Lemma 7.2);
* ``attention``: one bilinear positional score, and training it (Puzzles 7.7, 7.11);
* ``figures``: the chapter's ``draw_*`` functions (loads matplotlib on first use).

>>> E = og_embedding(64, 128)
>>> round(distinguishability(E), 2), padding_dimension(E)
(0.77, 16)
"""
import importlib

from .attention import positional_attention, train_offset_head, window_attention
from .codes import (all_bit_strings, balanced_hamming_embedding, hamming_embedding,
                    random_normal_encoding, random_sign_encoding)
from .measures import (distinguishability, distinguishability_bound, distinguishability_curves,
                       padding_dimension)
from .rotation import (complex_rotation_encoding, random_angles, random_rotation_embedding,
                       reversed_rotation_encoding, rotation_encoding, shift_by_delta,
                       uniform_rotation_embedding)
from .sinusoidal import og_angles, og_embedding

_FIGURES = ('draw_heatmaps', 'draw_angles', 'draw_distinguishability', 'draw_explorer',
            'EXPLORER_ENCODINGS')


def __getattr__(name):
    """``figures`` and its ``draw_*`` functions load on first use (and matplotlib with them)."""
    if name == 'figures' or name in _FIGURES:
        figures = importlib.import_module('.figures', __name__)
        return figures if name == 'figures' else getattr(figures, name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


__all__ = [
    'og_angles', 'og_embedding', 'complex_rotation_encoding', 'rotation_encoding',
    'reversed_rotation_encoding', 'shift_by_delta', 'random_angles', 'random_rotation_embedding',
    'uniform_rotation_embedding', 'random_normal_encoding', 'random_sign_encoding',
    'all_bit_strings', 'hamming_embedding', 'balanced_hamming_embedding', 'distinguishability',
    'distinguishability_bound', 'distinguishability_curves', 'padding_dimension',
    'positional_attention', 'window_attention', 'train_offset_head', *_FIGURES,
]
