"""What 6.10-6.17 measure on a program's keys (``_separation``, ``_tells_sums_apart``) and the
head probe behind 6.10, 6.11 and 6.13 (``carried_by``): a head the structure names must carry
its digits to the MLP, and nothing else may.  Kept apart from ``ch06`` for room."""
import numpy as np

from ..model import heads, layer_norm
from ..trace import trace
from . import toolkit
from .toolkit import Finding

SWAP_TOL = 1e-3     # how far (relative) the swapped MLP input may land from the other prompt's
EQUALS_AT = 5       # the '=' position in [a, a, +, b, b, =]


def _separation(keys, labels):
    """The smallest gap between keys of different labels (gap, label_a, label_b); keys of one
    label (a sum, or a sum and answer position) may differ.  NaN counts as no gap at all."""
    keys, labels = np.asarray(keys, dtype=np.float64).ravel(), np.asarray(labels).ravel()
    order = np.argsort(keys, kind='stable')
    keys, labels = keys[order], labels[order]
    differ = labels[1:] != labels[:-1]
    if not differ.any():
        return float('inf'), None, None
    gaps = np.nan_to_num(np.where(differ, np.diff(keys), np.inf), nan=0.0, posinf=np.inf)
    i = int(np.argmin(gaps))
    return float(gaps[i]), labels[i], labels[i + 1]


def _tells_sums_apart(params, mlp_in, sums):
    """Prompts whose sums differ must reach the MLP's hidden units (``mlp_in @ M1``, here two
    random combinations of them) differently, by at least 1e-9 of their range: coordinates
    that M1 ignores count for nothing."""
    M1 = params['layers'][0]['M1']
    seen = mlp_in @ (M1 @ toolkit.fresh_rng().normal(size=(M1.shape[1], 2)))
    spread = np.ptp(seen, axis=0)
    seen = np.round((seen - seen.min(0)) / np.where(spread > 0, spread, 1.0), 9)
    group = np.unique(seen, axis=0, return_inverse=True)[1].ravel()
    gap, sum_a, sum_b = _separation(group, sums)            # 0: one group holds two sums
    if gap == 0:
        raise Finding(f'all pairs right, but at "=" the MLP\'s hidden units get the same input '
                      f'for a sum of {sum_a} and a sum of {sum_b}: every digit place must reach '
                      f'what the MLP reads (its key is a + b)')


def head_outputs(params, seen, at=EQUALS_AT):
    """What each head of layer 0 adds to the residual stream at position ``at``: (N, heads, d)."""
    layer = params['layers'][0]
    values = heads(layer_norm(seen.resid_pre[0], **layer['ln1']), layer['V'])   # (N, h, n, dv)
    mixed = np.einsum('nht,nhtv->nhv', seen.attn[0][:, :, at], values)
    return np.einsum('nhv,hdv->nhd', mixed, layer['P'])


def partners(prompts, pairs, positions, rng):
    """For every prompt, one whose digits at ``positions`` are drawn afresh and whose sum
    differs (prompts whose draw left the sum unchanged are dropped): (mine, theirs) indices
    into the exhaustive list, where prompt 100 a + b sits at row a * 100 + b."""
    drawn = prompts.copy()
    drawn[:, list(positions)] = rng.integers(0, 10, (len(prompts), len(positions)))
    a, b = drawn[:, 0] * 10 + drawn[:, 1], drawn[:, 3] * 10 + drawn[:, 4]
    keep = np.flatnonzero(a + b != pairs.sum(1))
    return keep, (a * 100 + b)[keep]


def carried_by(params, prompts, pairs, positions, candidates):
    """The first of ``candidates`` (heads) that carries the digits at ``positions`` alone: give
    each prompt that head's output at '=' from a partner differing only in those digits, and
    the MLP's hidden units (``mlp_in @ M1``) must get the partner's input, to within
    ``SWAP_TOL`` of the distance between the two prompts' inputs.  None if no head does;
    with it the first prompt pair where the best candidate missed."""
    layer = params['layers'][0]
    seen = toolkit.run_program(lambda: trace(prompts, params))
    outs = toolkit.run_program(head_outputs, params, seen)
    mid, M1 = seen.resid_mid[0][:, EQUALS_AT], layer['M1']
    hidden = seen.mlp_in[0][:, EQUALS_AT] @ M1
    mine, theirs = partners(prompts, pairs, positions, toolkit.fresh_rng())
    dist = np.linalg.norm(hidden[mine] - hidden[theirs], axis=1)
    miss = None
    for h in candidates:
        swapped = mid[mine] - outs[mine, h] + outs[theirs, h]
        err = np.linalg.norm(layer_norm(swapped, **layer['ln2']) @ M1 - hidden[theirs], axis=1)
        bad = np.flatnonzero(~(err <= SWAP_TOL * dist))
        if not len(bad):
            return h, None
        if miss is None or len(bad) < miss[1]:
            miss = (h, len(bad), prompts[mine[bad[0]]].tolist(), prompts[theirs[bad[0]]].tolist())
    return None, miss


def no_carrier(name, positions, miss):
    """The Finding when no head that reads ``name`` carries it (``miss`` from ``carried_by``)."""
    h, count, mine, theirs = miss
    return Finding(
        f'all pairs right, but no head carries {name} alone: head {h} puts its attention there, '
        f'yet given its output at "=" from prompt {theirs} (which differs from {mine} only at '
        f'positions {list(positions)}), prompt {mine} does not reach the MLP\'s hidden units as '
        f'{theirs} does ({count:,} such swaps missed): the head must write that place\'s digits, '
        f'and no other head or position may bring them in', mine)
