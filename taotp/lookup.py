"""Chapter 3, Lookup Table: memorise key -> value pairs in one attention layer.

A table holds ``n`` keys of ``l`` tokens (``ks``, shape (n, l)) and one value
token per key (``vs``, shape (n,)).  Whatever comes before the last ``l`` tokens
of the input is ignored; when those ``l`` tokens equal key j the program emits
``vs[j]``.

Residual layout (``lookup_layout(tok_dims)``)::

    | tok (tok_dims) | pos (3) |

Token rows live in the ``tok`` block (layer-normalised, zero in ``pos``),
position rows on the sqrt(3)-circle in ``pos`` (zero in ``tok``), so every
input vector is a fixed point of ``layer_norm``.  One layer with ``l`` heads:
head ``h`` attends exactly ``h`` positions back (a hardened rotation of the
position circle) and maps what it reads through a hash matrix; head 0 also
wipes the residual (proper cleanup), so the last position ends up holding
``hash(key) = sum_p tok(k_p) @ M[p]`` and nothing else.

Two builders:

* ``build_untied_transformer``: random embeddings and random hash matrices;
  ``out_emb`` (untied) accumulates the hashes of the keys of each value.
* ``build_lookup_transformer``: tied ``out_emb = tok_emb``; the embeddings and
  hash matrices come from a small gradient-descent problem (``optimize`` with
  the hand-derived ``loss_and_grad``), solved before the weights are wired.
"""
import sys

import numpy as np

from .blocks import harden, onehot, pos_3d_enc_rotation_matrix, pos_enc_3d_array
from .decoding import transformer_batch
from .model import causal_mask, layer_norm, softmax, transformer_layer
from .params import base_layer, base_params
from .residual import Layout

__all__ = [
    'HARDENING', 'DEFAULT_OPTIMIZATION_ITERS', 'lookup_layout', 'random_lookup_table',
    'lookup_reference', 'lookup_queries', 'lookup_precision', 'build_untied_transformer',
    'build_lookup_transformer', 'logsumexp', 'loss_and_grad', 'optimize', 'lookup_scores',
    'terminal_progress', 'ngram_table', 'precision_sweep', 'plot_precision_sweep',
    'plot_word_histogram', 'with_hardening', 'draw_hardening',
]

HARDENING = 1e8                  # the book's attention-hardening factor for lookup
DEFAULT_OPTIMIZATION_ITERS = 5000  # upper bound; the optimiser stops once every key is right


def lookup_layout(tok_dims):
    """The residual stream of both lookup builders: ``tok`` block, then ``pos``."""
    return Layout([('tok', tok_dims), ('pos', 3)])


# ----------------------------------------------------------------------------- tables

def _rng(rng, where):
    if rng is None:
        return np.random.default_rng(0)
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise TypeError(f'{where}: rng must be None, an int seed or a numpy Generator; '
                    f'got {type(rng).__name__}')


def random_lookup_table(n_entries, key_len, vocab_size, rng=None):
    """``n_entries`` distinct random keys of ``key_len`` tokens and random values.

    Returns ``(ks, vs)`` with shapes (n, l) and (n,), int64.
    """
    rng = _rng(rng, 'random_lookup_table')
    if n_entries < 1 or key_len < 1 or vocab_size < 1:
        raise ValueError(f'random_lookup_table: n_entries, key_len and vocab_size must be >= 1; '
                         f'got {n_entries}, {key_len}, {vocab_size}')
    space = vocab_size ** key_len
    if n_entries > space:
        raise ValueError(f'random_lookup_table: only {space} distinct keys of length {key_len} '
                         f'exist over {vocab_size} tokens; got n_entries = {n_entries}')
    ks = np.zeros((0, key_len), dtype=np.int64)
    while len(ks) < n_entries:
        more = rng.integers(0, vocab_size, size=(2 * (n_entries - len(ks)) + 8, key_len))
        both = np.concatenate([ks, more])
        _, first = np.unique(both, axis=0, return_index=True)
        ks = both[np.sort(first)][:n_entries]
    vs = rng.integers(0, vocab_size, size=n_entries)
    return ks.astype(np.int64), vs.astype(np.int64)


def lookup_reference(tokens, ks, vs):
    """The plain-Python meaning of the program: the value of the key that ends ``tokens``.

    Returns None when the last ``l`` tokens match no key (the book leaves that
    case undefined).
    """
    tokens = [int(t) for t in tokens]
    for key, value in zip(np.asarray(ks).tolist(), np.asarray(vs).tolist()):
        if len(tokens) >= len(key) and tokens[len(tokens) - len(key):] == key:
            return value
    return None


def lookup_queries(ks, prefix_len, vocab_size, rng=None, mode='random'):
    """Every key behind a prefix of ``prefix_len`` tokens: shape (n, prefix_len + l).

    ``mode='random'`` draws the prefix uniformly from the vocabulary;
    ``mode='keys'`` builds it from the tokens of other keys (an adversarial
    choice: the prefix itself looks like table entries).
    """
    rng = _rng(rng, 'lookup_queries')
    ks = np.asarray(ks, dtype=np.int64)
    n, l = ks.shape
    if mode == 'random':
        prefix = rng.integers(0, vocab_size, size=(n, prefix_len))
    elif mode == 'keys':
        reps = -(-prefix_len // l) if prefix_len else 0
        rows = rng.integers(0, n, size=(n, reps))
        prefix = ks[rows].reshape(n, reps * l)[:, reps * l - prefix_len:]
    else:
        raise ValueError(f"lookup_queries: mode must be 'random' or 'keys'; got {mode!r}")
    return np.concatenate([prefix.astype(np.int64), ks], axis=1)


def lookup_precision(params, ks, vs, prefix_len=0, rng=None, mode='random', run=None,
                     chunk=2048):
    """Fraction of keys (behind prefixes, see ``lookup_queries``) decoded to their value.

    ``run(tokens, params)`` returns logits (batch, n, vocab); it defaults to
    ``taotp.transformer_batch`` (puzzles pass a PostLN forward instead).
    """
    run = run or transformer_batch
    vocab = np.shape(params['tok_emb'])[0]
    queries = lookup_queries(ks, prefix_len, vocab, rng, mode)
    got = np.concatenate([np.asarray(run(queries[i:i + chunk], params))[:, -1].argmax(-1)
                          for i in range(0, len(queries), chunk)])
    return float(np.mean(got == np.asarray(vs)))


# ----------------------------------------------------------------------------- wiring

def _check_table(where, ks, vs, vocab_size, block_size):
    ks, vs = np.asarray(ks), np.asarray(vs)
    if ks.ndim != 2 or ks.shape[1] < 1 or ks.shape[0] < 1:
        raise ValueError(f'{where}: ks must have shape (n_entries, key_len) with both >= 1; '
                         f'got {ks.shape}')
    if vs.shape != (ks.shape[0],):
        raise ValueError(f'{where}: vs must have shape (n_entries,) = ({ks.shape[0]},); '
                         f'got {vs.shape}')
    for name, arr in (('ks', ks), ('vs', vs)):
        if arr.dtype.kind not in 'iu':
            raise TypeError(f'{where}: {name} must hold integer token ids; got dtype {arr.dtype}')
        if arr.min() < 0 or arr.max() >= vocab_size:
            raise ValueError(f'{where}: {name} must hold ids in 0..{vocab_size - 1}; got '
                             f'{int(arr.min())}..{int(arr.max())}')
    if len(np.unique(ks, axis=0)) != len(ks):
        raise ValueError(f'{where}: keys must be distinct; got {len(ks)} keys with '
                         f'{len(ks) - len(np.unique(ks, axis=0))} repeats')
    if block_size < ks.shape[1]:
        raise ValueError(f'{where}: block_size must be >= key length {ks.shape[1]}; '
                         f'got {block_size}')
    return ks.astype(np.int64), vs.astype(np.int64)


def _hash_layer(hash_matrices, tok_dims, block_size, hardening):
    """One attention layer: head h reads h positions back and applies ``M[l - 1 - h]``."""
    l = len(hash_matrices)
    L = lookup_layout(tok_dims)
    d = L.d_model
    layer = base_layer(l, d, 0, d)       # d_head = d_model: each head copies everything
    tok, pos = L['tok'], L['pos']
    for head in range(l):
        turn = pos_3d_enc_rotation_matrix(-2 * np.pi * head / block_size)
        turn[np.abs(turn) < 1e-15] = 0.0     # rounding dust (the delta = 0 turn is exactly I)
        layer['Q'][head, pos, pos] = harden(turn, hardening)
        layer['K'][head, pos, pos] = np.eye(3)
        layer['V'][head] = np.eye(d)
        layer['P'][head, tok, tok] = hash_matrices[l - 1 - head].T
    layer['P'][0] -= np.eye(d)           # proper cleanup: head 0 reads us, so subtract us
    return layer


def _embeddings(vocab_size, block_size, tok_rows):
    L = lookup_layout(tok_rows.shape[1])
    params = base_params(vocab_size, block_size, L.d_model)
    params['pos_emb'][:, L['pos']] = pos_enc_3d_array(block_size)
    params['tok_emb'][:, L['tok']] = layer_norm(tok_rows)
    return params


def build_untied_transformer(ks, vs,  # the table: keys (n, l) and values (n,)
                             vocab_size, block_size, prefix_len, tok_dims, rng=None,
                             hardening=HARDENING, hash_scale=0.1):
    """The simplified construction (book Fig. 3.3): random hashes, untied ``out_emb``.

    ``prefix_len`` is the key length (the book's name); ``out_emb[v]`` is the sum
    of the final residual vectors of the keys whose value is v.  ``rng``: None
    (seed 0), an int seed or a Generator.
    """
    where = 'build_untied_transformer'
    ks, vs = _check_table(where, ks, vs, vocab_size, block_size)
    if prefix_len != ks.shape[1]:
        raise ValueError(f'{where}: prefix_len must equal the key length {ks.shape[1]}; '
                         f'got {prefix_len}')
    if tok_dims < 2:
        raise ValueError(f'{where}: tok_dims must be >= 2 (layer norm flattens 1 dim); '
                         f'got {tok_dims}')
    rng = _rng(rng, where)
    params = _embeddings(vocab_size, block_size, rng.normal(0, 1, (vocab_size, tok_dims)))
    hashes = rng.normal(0, hash_scale, (prefix_len, tok_dims, tok_dims))
    layer = _hash_layer(hashes, tok_dims, block_size, hardening)
    params['layers'].append(layer)
    x = params['tok_emb'][ks] + params['pos_emb'][:prefix_len]          # (n, l, d), all keys
    last = transformer_layer(x, **layer, mask=causal_mask(prefix_len))[:, -1]
    out = np.zeros_like(params['tok_emb'])
    np.add.at(out, vs, last)
    params['out_emb'] = out
    return params


# ----------------------------------------------------------------------------- optimiser

def logsumexp(x, axis=-1):
    """log(sum(exp(x))) along ``axis`` (kept as a length-1 axis), without overflow."""
    top = np.max(x, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top


def _scores(E, M, k):
    """What the wired transformer computes at the last key position, before argmax.

    Returns the logits (n, V) and the intermediates the gradient needs.
    """
    n_tok = E.shape[1]
    D = n_tok + 3                                   # the 3 position dims are 0 after cleanup
    x = E[k]                                        # (n, l, t)
    n, l = k.shape
    h = x.reshape(n, l * n_tok) @ M.reshape(l * n_tok, n_tok)   # hash(key), (n, t)
    mean = h.sum(axis=1, keepdims=True) / D
    c = h - mean                                    # centred tok block; pos block is -mean
    var = ((c ** 2).sum(axis=1, keepdims=True) + 3 * mean ** 2) / D
    root = np.sqrt(var)
    sigma = root + 1e-10                            # the book's epsilon, added to the std
    y = c / sigma                                   # layer-normed tok block
    z = y @ E.T                                     # tied out_emb: logits (n, V)
    return z, (x, c, mean, root, sigma, y, D)


def lookup_scores(E, M, ks):
    """Logits the tied lookup program gives each key (before the argmax), shape (n, V)."""
    return _scores(np.asarray(E, float), np.asarray(M, float), np.asarray(ks))[0]


def loss_and_grad(E, M, k, v, y=None):
    """Summed cross-entropy of the values given the keys, and its gradients.

    ``E`` (V, t) token embeddings (the tok block), ``M`` (l, t, t) hash matrices,
    ``k`` (n, l) keys, ``v`` (n,) values; ``y`` (their one-hot rows) is accepted
    for the book's signature and not needed.  Returns ``loss, (dM, dE)``.  The
    derivative goes through the final layer norm over all t + 3 dimensions (the
    3 zeros of the position block included).
    """
    k, v = np.asarray(k), np.asarray(v)
    z, cache = _scores(E, M, k)
    return _loss_grad(E, M, k, v, z, cache)


def _loss_grad(E, M, k, v, z, cache):
    x, c, mean, root, sigma, normed, D = cache
    rows = np.arange(len(z))
    lse = logsumexp(z)                                         # (n, 1)
    loss = float(np.sum(lse[:, 0] - z[rows, v]))
    dz = np.exp(z - lse)                                       # softmax ...
    dz[rows, v] -= 1                                           # ... minus the one-hot target
    g = dz @ E                                                 # dL/d(normed tok block)
    # normed = c / sigma with sigma = sqrt(var) + eps; the pos block's normed value
    # (-mean / sigma) never reaches the logits (tok_emb is 0 there), so its g is 0.
    gc = (g * c).sum(axis=1, keepdims=True)                    # sum_i g_i c_i
    dvar = -gc / sigma ** 2 / (2 * root)                       # dL/dvar
    # var = (sum_tok c^2 + 3 mean^2) / D, and c_pos = -mean for the 3 pos dims
    dc_tok = g / sigma + dvar * 2 * c / D                      # dL/dc on the tok block
    dc_pos = dvar * 2 * (-mean) / D                            # dL/dc on each pos dim
    # c = u - mean(u) over all D dims with u = (h, 0, 0, 0): subtract the mean gradient
    shift = (dc_tok.sum(axis=1, keepdims=True) + 3 * dc_pos) / D
    dh = dc_tok - shift                                        # (n, t)
    n, l, t = x.shape
    dM = (x.reshape(n, l * t).T @ dh).reshape(l, t, t)
    dE = dz.T @ normed                                         # E as the output embedding
    dx = (dh @ M.reshape(l * t, t).T).reshape(n, l, t)        # E as the input embedding
    _scatter_add(dE, k.ravel(), dx.reshape(n * l, t))
    return loss, (dM, dE)


def _scatter_add(target, index, rows):
    """``target[index[i]] += rows[i]`` for repeated indices (a fast ``np.add.at``)."""
    order = np.argsort(index, kind='stable')
    index = index[order]
    starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    target[index[starts]] += np.add.reduceat(rows[order], starts, axis=0)


def _margin(z, v):
    """How far each key's value beats the best other token (negative: a wrong answer)."""
    rows = np.arange(len(z))
    right = z[rows, v].copy()
    z[rows, v] = -np.inf
    best_other = z.max(axis=1)
    z[rows, v] = right
    return right - best_other


def optimize(E, M, ks, vs, iters, lr=1e-3, progress=None, progress_every=100, stop_margin=0.01):
    """Gradient descent on ``E`` and ``M`` in place, re-normalising ``E`` every step.

    Stops early once every key's value wins by at least ``stop_margin`` logits
    (``stop_margin=None`` runs all ``iters`` steps, like the book).  ``progress``,
    if given, is called as ``progress(step, iters, loss, accuracy)`` every
    ``progress_every`` steps and at the end (it never prints by itself).
    Returns a dict: ``iters`` (gradient steps taken), final ``loss``, ``accuracy``
    on the table, and the ``losses`` seen every ``progress_every`` steps.
    """
    ks, vs = np.asarray(ks), np.asarray(vs)
    losses = []
    step = 0
    while True:
        E[:] = layer_norm(E)
        z, cache = _scores(E, M, ks)
        margins = _margin(z, vs)
        acc = float(np.mean(margins > 0))
        if step == iters or (stop_margin is not None and margins.min() > stop_margin):
            loss = float(np.sum(logsumexp(z)[:, 0] - z[np.arange(len(z)), vs]))
            losses.append(loss)
            break
        loss, (dM, dE) = _loss_grad(E, M, ks, vs, z, cache)
        E -= lr * dE
        M -= lr * dM
        if step % progress_every == 0:
            losses.append(loss)
            if progress is not None:
                progress(step, iters, loss, acc)
        step += 1
    if progress is not None:
        progress(step, iters, loss, acc)
    return {'iters': step, 'loss': loss, 'accuracy': acc, 'losses': losses}


def terminal_progress(step, total, loss, accuracy):
    """A one-line progress display on the process's real stderr.

    Pass as ``progress=taotp.terminal_progress``.  It writes to ``sys.__stderr__``
    (the terminal that started Jupyter), so notebooks never store it.
    """
    stream = sys.__stderr__
    if stream is None:
        return
    width = 30
    filled = int(width * step / max(total, 1))
    stream.write(f'\r[{"#" * filled}{"." * (width - filled)}] step {step}/{total} '
                 f'loss {loss:.3f} right {accuracy:.1%}')
    stream.flush()


def build_lookup_transformer(ks, vs,  # the table: keys (n, l) and values (n,)
                             vocab_size, block_size, tok_dims,
                             optimization_iters=DEFAULT_OPTIMIZATION_ITERS, rng=None, lr=1e-3,
                             hardening=HARDENING, progress=None, stop_margin=0.01,
                             return_info=False):
    """The tied construction (book Figs. 3.4-3.6): d_model = tok_dims + 3, one layer, l heads.

    Token embeddings and hash matrices start small and random (``rng``: None
    means seed 0, or an int seed, or a Generator) and are fitted by ``optimize``
    for at most ``optimization_iters`` steps of size ``lr``; the default 5,000
    (the book never states its count) reaches 100 % on seeded random tables of
    the book's sizes, and the early stop (``stop_margin``) usually ends far
    sooner.  ``return_info=True`` returns ``(params, info)`` with the optimiser's
    report.
    """
    where = 'build_lookup_transformer'
    ks, vs = _check_table(where, ks, vs, vocab_size, block_size)
    if tok_dims < 2:
        raise ValueError(f'{where}: tok_dims must be >= 2 (layer norm flattens 1 dim); '
                         f'got {tok_dims}')
    if optimization_iters < 0:
        raise ValueError(f'{where}: optimization_iters must be >= 0; got {optimization_iters}')
    rng = _rng(rng, where)
    key_len = ks.shape[1]
    E = rng.normal(0, 0.1, (vocab_size, tok_dims))
    M = rng.normal(0, 0.1, (key_len, tok_dims, tok_dims))
    info = optimize(E, M, ks, vs, optimization_iters, lr=lr, progress=progress,
                    stop_margin=stop_margin)
    params = _embeddings(vocab_size, block_size, E)
    params['out_emb'] = params['tok_emb']           # tied: the same array
    params['layers'].append(_hash_layer(M, tok_dims, block_size, hardening))
    return (params, info) if return_info else params


# ----------------------------------------------------------------------------- text

def ngram_table(words, n_entries=1000, key_len=5):
    """Non-overlapping (key_len + 1)-grams from the start of ``words`` as a lookup table.

    Gram i is ``words[i*(l+1) : (i+1)*(l+1)]``; its first ``l`` words are the key,
    the last the value.  A key seen before is skipped (keys must be distinct),
    so the table takes the first ``n_entries`` grams with new keys.  Returns
    ``(ks, vs, vocab)``: ids index ``vocab``, the sorted list of words used.
    """
    words = list(words)
    size = key_len + 1
    grams, seen = [], set()
    for start in range(0, len(words) - size + 1, size):
        gram = tuple(words[start:start + size])
        if gram[:-1] in seen:
            continue
        seen.add(gram[:-1])
        grams.append(gram)
        if len(grams) == n_entries:
            break
    vocab = sorted({w for gram in grams for w in gram})
    ids = {w: i for i, w in enumerate(vocab)}
    table = np.array([[ids[w] for w in gram] for gram in grams], dtype=np.int64)
    return table[:, :-1], table[:, -1], vocab


# ----------------------------------------------------------------------------- Fig. 3.8

def precision_sweep(entries, vocab_sizes, d_models, runs=1, key_len=5, optimization_iters=2000,
                    seed=0, prefix_len=0):
    """Precision of the tied builder for every (entries, vocab, d_model), ``runs`` seeds each.

    Returns an array of shape (len(entries), len(vocab_sizes), len(d_models), runs);
    NaN marks impossible cells (more entries than distinct keys).
    """
    out = np.full((len(entries), len(vocab_sizes), len(d_models), runs), np.nan)
    for a, n in enumerate(entries):
        for b, vocab in enumerate(vocab_sizes):
            if n > vocab ** key_len:
                continue
            for r in range(runs):
                rng = np.random.default_rng([seed, n, vocab, r])
                ks, vs = random_lookup_table(n, key_len, vocab, rng)
                for c, d in enumerate(d_models):
                    params = build_lookup_transformer(ks, vs, vocab, key_len + prefix_len, d - 3,
                                                      optimization_iters, rng=rng)
                    out[a, b, c, r] = lookup_precision(params, ks, vs, prefix_len, rng)
    return out


def plot_precision_sweep(result, entries, vocab_sizes, d_models, size=(9.0, 3.0)):
    """The book's Fig. 3.8: precision vs d_model, one panel per table size, min-max bands."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=size, layout='constrained')
    axes = np.atleast_1d(fig.subplots(1, len(entries), sharey=True))
    for a, (ax, n) in enumerate(zip(axes, entries)):
        for b, vocab in enumerate(vocab_sizes):
            cell = result[a, b]
            if np.all(np.isnan(cell)):
                continue
            mean = np.nanmean(cell, axis=1)
            line, = ax.plot(d_models, 100 * mean, marker='o', ms=3, label=f'vocab {vocab}')
            ax.fill_between(d_models, 100 * np.nanmin(cell, axis=1),
                            100 * np.nanmax(cell, axis=1), color=line.get_color(), alpha=0.2)
        ax.set_title(f'{n:,} entries', fontsize=10)
        ax.set_xlabel('d_model')
        ax.set_ylim(-3, 103)
    axes[0].set_ylabel('keys decoded right (%)')
    axes[-1].legend(fontsize=8, loc='lower right')
    return fig


def plot_word_histogram(words, top=40, size=(8.0, 3.0), title='word frequencies'):
    """Counts of the ``top`` most frequent words, largest first (the book's Fig. 3.7)."""
    vocab, counts = np.unique(np.asarray(list(words)), return_counts=True)
    order = np.lexsort((vocab, -counts))[:top]
    from matplotlib.figure import Figure
    fig = Figure(figsize=size, layout='constrained')
    ax = fig.subplots()
    ax.bar(range(len(order)), counts[order])
    ax.set_xticks(range(len(order)), vocab[order], rotation=90, fontsize=7)
    ax.set_ylabel('occurrences')
    ax.set_title(title, fontsize=10)
    return fig


# ----------------------------------------------------------------------------- hardening demo

def with_hardening(params, N):
    """A copy of a lookup program whose query weights use hardening factor ``N``."""
    layer = dict(params['layers'][0])
    scale = np.abs(layer['Q']).max()
    layer['Q'] = layer['Q'] / (scale or 1.0) * N
    return {**params, 'layers': [layer]}


def draw_hardening(fig, params, ks, vs, query, N):
    """Draw the last query's attention (heads x key positions) at hardening ``N`` into ``fig``.

    The title reports the program's answer for ``query`` and its precision on the
    whole table (keys behind the same prefix length).  Used by the slider and its
    kernel-free animation.
    """
    from .trace import trace
    program = with_hardening(params, N)
    weights = trace(query, program).attn[0][:, -1]                      # (heads, n)
    answer = int(np.argmax(trace(query, program).logits[-1]))
    want = lookup_reference(query, ks, vs)
    queries = np.concatenate([np.tile(np.asarray(query)[:len(query) - ks.shape[1]],
                                      (len(ks), 1)), ks], axis=1)
    right = np.mean(transformer_batch(queries, program)[:, -1].argmax(-1) == vs)
    ax = fig.subplots()
    im = ax.imshow(weights, cmap='viridis', vmin=0, vmax=1, aspect='auto')
    ax.set_xticks(range(len(query)), [str(t) for t in query], fontsize=8)
    ax.set_yticks(range(len(weights)), [f'head {h} ({h} back)' for h in range(len(weights))],
                  fontsize=8)
    ax.set_xlabel('key position (token)')
    ax.set_title(f'N = {N:.3g}: answer {answer} (want {want}); '
                 f'{right:.0%} of the table right', fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return fig
