"""Head designs of the construction: which earlier tokens each layer-2 head averages.

Layer 1 makes every token ``j`` store its normalised transition probabilities
in the slots ``j - k`` (one slot per lag).  Averaging the stored blocks of many
tokens is only safe when no two of them write the same slot, so layer 2 splits
the tokens ``kmax < j <= i`` into residue classes of the distance ``i - j``
modulo a ``period``, one head per class.

A design is **valid** when, for every class, any two of its residues ``r, r'``
(also ``r = r'``) never differ by the difference of two distinct lags:
``(r - r') mod period != (k - k') mod period``.  Then stored transitions never
collide and layer 3 never reads a wrong lag.

* contiguous lags: period ``K``, one residue per head (the paper's Section 4);
* lag sets with holes: the fewest heads over the periods ``K .. 2 (kmax - kmin + 1)``
  (``{1,3}``: period 4, classes {0,1}, {2,3}; ``{3,5,7}``: period 3, three heads);
* two lags and one head: the 'pair' design (the paper's App. H, with a corrected shift).

``safety_margins`` and ``check_constants`` say whether ``lam`` is large enough
for the masks to hold.

    >>> plan_heads((1, 3))
    Design(lags=(1, 3), period=4, classes=((0, 1), (2, 3)), variant='positional')
"""
from collections import namedtuple

import numpy as np

from .task import PRESETS, _is_int, check_lags

Design = namedtuple('Design', 'lags period classes variant')
Design.__doc__ = """A layer-2/layer-3 plan.

Head h averages the keys ``kmax < j <= i`` with ``(i - j) mod period`` in
``classes[h]``.  ``variant``: 'main' (layer 3 reads each head's averaged
positions; one residue per head), 'positional' (layer 3 reads the key's own
position; any valid classes) or 'pair' (two lags, one head)."""

VARIANTS = ('main', 'positional', 'pair')


def design_problems(lags, period, classes):
    """Every reason why a (period, classes) plan is invalid; an empty list when it is valid.

    >>> design_problems((1, 3, 4), 3, [(0,), (1,), (2,)])[0]
    'head 0: residues 0, 0 differ by 0 = lags 1 - 4 (mod 3)'
    """
    problems = []
    pairs = [(k, k2) for k in lags for k2 in lags if k != k2]
    for h, cls in enumerate(classes):
        for r in cls:
            for r2 in cls:
                problems += [f'head {h}: residues {r}, {r2} differ by {(r - r2) % period} '
                             f'= lags {k} - {k2} (mod {period})'
                             for k, k2 in pairs if (r - r2) % period == (k - k2) % period]
    return problems


def check_design(design):
    """Validate a ``Design`` and return it normalised (raises ``ValueError`` naming the clash)."""
    lags = check_lags(design.lags, where='check_design')
    if design.variant not in VARIANTS:
        raise ValueError(f'check_design: variant must be one of {VARIANTS}; '
                         f'got {design.variant!r}')
    if not _is_int(design.period) or design.period < 1:
        raise ValueError(f'check_design: period must be a positive integer; '
                         f'got {design.period!r}')
    classes = tuple(tuple(int(r) for r in c) for c in design.classes)
    if not classes or any(not c for c in classes):
        raise ValueError(f'check_design: need at least one non-empty residue class; '
                         f'got {classes}')
    flat = [r for c in classes for r in c]
    if len(set(flat)) != len(flat) or any(not 0 <= r < design.period for r in flat):
        raise ValueError(f'check_design: classes must be disjoint residues in '
                         f'0..{design.period - 1}; got {classes}')
    if design.variant == 'pair':
        D = lags[-1] - lags[0]
        if len(lags) != 2 or design.period != 2 * D or classes != (tuple(range(D)),):
            raise ValueError(f'check_design: the pair variant needs two lags, period 2D and the '
                             f'one class 0..D-1 (D = kmax - kmin); got lags {list(lags)}, '
                             f'period {design.period}, classes {classes}')
        return Design(lags, int(design.period), classes, 'pair')
    problems = design_problems(lags, design.period, classes)
    if problems:
        raise ValueError(f'check_design: two stored transitions would share a slot; got '
                         f'{problems[0]} (lags {list(lags)}, period {design.period}, '
                         f'classes {classes})')
    if design.variant == 'main' and any(len(c) != 1 for c in classes):
        raise ValueError(f'check_design: the main third layer needs one residue per head; '
                         f'got classes {classes} (use variant="positional")')
    return Design(lags, int(design.period), classes, design.variant)


def _greedy_classes(lags, period):
    """Residues 0..period-1 coloured greedily into valid classes (None if two lags coincide)."""
    if len({k % period for k in lags}) != len(lags):
        return None
    bad = {(k - k2) % period for k in lags for k2 in lags if k != k2}
    classes = []
    for r in range(period):
        for cls in classes:
            if all((r - s) % period not in bad and (s - r) % period not in bad for s in cls):
                cls.append(r)
                break
        else:
            classes.append([r])
    return tuple(tuple(c) for c in classes)


def _candidate_designs(lags):
    """(period, classes) options for a lag set with holes: singletons and greedy classes."""
    K, kmax, kmin = len(lags), lags[-1], lags[0]
    found = []
    for period in range(K, 2 * (kmax - kmin + 1) + 1):
        if len({k % period for k in lags}) != len(lags):
            continue
        found.append((period, tuple((r,) for r in range(period))))
        greedy = _greedy_classes(lags, period)
        if greedy is not None and len(greedy) < period:
            found.append((period, greedy))
    return found


def plan_heads(lags, heads=None, variant=None, period=None, classes=None):
    """Choose the layer-2 design of the construction.

    Args:
        lags: the lag set.
        heads: keep this many heads.  Fewer than the design needs keeps the
            first ``heads`` classes (the same algorithm on fewer transitions);
            ``heads=1`` with two lags gives the single-head 'pair' design
            unless ``variant`` says otherwise.
        variant: force 'main', 'positional' or 'pair'; default 'main' when
            every class is one residue, else 'positional'.
        period, classes: set the design by hand (give both).

    Returns:
        a checked ``Design``.

    >>> plan_heads((3, 5, 7)).classes
    ((0,), (1,), (2,))
    >>> plan_heads((2, 5), heads=1)
    Design(lags=(2, 5), period=6, classes=((0, 1, 2),), variant='pair')
    """
    lags = check_lags(lags, where='plan_heads')
    K, kmax, kmin = len(lags), lags[-1], lags[0]
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f'plan_heads: variant must be one of {VARIANTS}; got {variant!r}')
    if heads is not None and (not _is_int(heads) or heads < 1):
        raise ValueError(f'plan_heads: heads must be a positive integer; got {heads!r}')
    if period is not None or classes is not None:
        if period is None or classes is None:
            raise ValueError('plan_heads: give both period and classes; got only one of them')
        cls = tuple(tuple(c) for c in classes)
        var = variant or ('main' if all(len(c) == 1 for c in cls) else 'positional')
        return check_design(Design(lags, period, cls, var))
    if variant == 'pair' or (heads == 1 and K == 2 and variant is None):
        if K != 2:
            raise ValueError(f'plan_heads: the pair variant needs exactly two lags; '
                             f'got {list(lags)}')
        D = kmax - kmin
        return check_design(Design(lags, 2 * D, (tuple(range(D)),), 'pair'))
    if lags == tuple(range(kmin, kmax + 1)):                       # contiguous
        options = [(K, tuple((r,) for r in range(K)))]
    else:
        options = _candidate_designs(lags)
        if variant == 'main':
            options = [o for o in options if all(len(c) == 1 for c in o[1])]
        options.sort(key=lambda o: (len(o[1]), o[0]))               # fewest heads first
    best_period, best = options[0]
    if heads is not None:
        exact = [o for o in options if len(o[1]) == heads]
        if exact:
            best_period, best = exact[0]
        elif heads < len(best):
            best = best[:heads]
        else:
            raise ValueError(f'plan_heads: heads must be at most {len(best)} for lags '
                             f'{list(lags)}; got {heads}')
    var = variant or ('main' if all(len(c) == 1 for c in best) else 'positional')
    return check_design(Design(lags, best_period, best, var))


def exact_from(design):
    """The first 1-based query from which the network equals ``construction_predictive``.

    Before it, some key that layer 3 reads has an empty class in layer 2, whose
    softmax row falls back to a uniform average.

    >>> exact_from(plan_heads((1, 2, 3)))     # 2 kmax + K - 1
    8
    """
    kmax = design.lags[-1]
    if design.variant == 'main':
        return 2 * kmax + max(c[0] for c in design.classes)
    if design.variant == 'positional':
        return kmax + 1 + max(min(c) for c in design.classes)
    return 2 * kmax


def design_table(lags):
    """The chosen design and the contiguous fallback, as rows for a table.

    Each row: (name, period, classes, heads, variant, exact_from).

    >>> [row[3] for row in design_table((3, 5, 7))]    # heads: chosen vs fallback
    [3, 5]
    """
    lags = PRESETS.get(lags, lags)
    lags = check_lags(lags, where='design_table')
    width = lags[-1] - lags[0] + 1
    rows = []
    for name, design in (('chosen', plan_heads(lags)),
                         ('fallback', plan_heads(lags, period=width,
                                                 classes=[(r,) for r in range(width)]))):
        rows.append((name, design.period, design.classes, len(design.classes), design.variant,
                     exact_from(design)))
    return rows


# ----------------------------------------------------------------------------- constants

def _spread(beta, H, variant):
    """How far layer 3's evidence can lift a key: beta H (the pair design's +-beta: 2 beta)."""
    return 2 * beta if variant == 'pair' else beta * H


def safety_margins(P, T, lam, beta, H, variant='main'):
    """Log-margins of the three soft masks (positive: the mask holds).

    A masked key's weight, relative to an allowed key's, is at most
    ``T * exp(-margin)``: layer 1 ``2 lam - log T - log(pmax / pmin)``,
    layer 2 ``2 lam - log T``, layer 3 ``2 lam - spread - log T`` where the
    evidence can lift a key by ``spread = beta * H`` (``2 beta`` for 'pair').

    >>> P = np.array([[.5, .5], [.25, .75]])
    >>> {k: round(v, 2) for k, v in safety_margins(P, 10, 50.0, 20.0, 3).items()}
    {'layer1': 96.6, 'layer2': 97.7, 'layer3': 37.7}
    """
    P = np.asarray(P, dtype=np.float64)
    m = {'layer1': 2 * lam - np.log(T) - np.log(P.max() / P.min()),
         'layer2': 2 * lam - np.log(T),
         'layer3': 2 * lam - _spread(beta, H, variant) - np.log(T)}
    return {k: float(v) for k, v in m.items()}


def check_constants(P, T, lam, beta, H, variant='main', where='build_selective_induction'):
    """The ``safety_margins``; ``ValueError`` if ``lam``/``beta`` are bad or a margin is <= 0."""
    for name, v in (('lam', lam), ('beta', beta)):
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool) \
                or not np.isfinite(v):
            raise ValueError(f'{where}: {name} must be a finite number; got {v!r}')
    if lam <= 0:
        raise ValueError(f'{where}: lam must be > 0; got {lam}')
    if beta < 0:
        raise ValueError(f'{where}: beta must be >= 0; got {beta}')
    m = safety_margins(P, T, lam, beta, H, variant)
    if m['layer3'] <= 0:
        raise ValueError(f'{where}: need 2*lam > beta*H + log T for the layer-3 mask; got '
                         f'2*lam = {2 * lam:g} <= {_spread(beta, H, variant):g} + '
                         f'{np.log(T):.3g}')
    if m['layer1'] <= 0:
        raise ValueError(f'{where}: need 2*lam > log T + log(pmax/pmin) for the layer-1 mask; '
                         f'got 2*lam = {2 * lam:g} <= '
                         f'{np.log(T) + np.log(P.max() / P.min()):.3g}')
    return m
