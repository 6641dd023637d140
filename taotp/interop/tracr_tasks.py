"""tracr's programs for the book's tasks: compile, measure, store (needs ``taotp[tracr]``).

Every function imports tracr (and so JAX) when called, never at import.  The numbers
the Records chapter prints come from ``measure_all()``, stored in
``taotp/data/records_tracr.json``; ``tests/test_interop.py`` recomputes them (marker
``slow``) when tracr is installed.

The tasks, in tracr's RASP:

* ``sort``: ``make_sort_unique(tokens, tokens)`` for distinct numbers 1..27, at most
  27 of them (the book's Sort takes the same numbers, closed by its terminator 0);
  one non-causal pass writes the sorted list at every position.
* ``lookup``: a table of every key of 3 tokens over 10 (``every_key_table``): the
  value of the key that ends at a position.  Heads bring the previous tokens
  (``shift_by``), sequence maps join them into the key's prefix (a prefix of no key
  becomes None, so the value sets stay small) and a last one gives the value.  It
  is causal: it looks only back.
* ``reverse``, ``hist`` (how often each token occurs) and ``length``: tracr's
  library programs, vocabulary 1..5, at most 8 tokens.
"""
import numpy as np

SEED = 21
SORT_VOCAB, SORT_LEN = 27, 27
SMALL_VOCAB, SMALL_LEN = 5, 8
LOOKUP = {'key_len': 3, 'vocab': 10, 'seed': 0}    # every key of 3 tokens: 1,000 entries
N_INPUTS = 50


def every_key_table(key_len=LOOKUP['key_len'], vocab=LOOKUP['vocab'], seed=LOOKUP['seed']):
    """Every key of ``key_len`` tokens in lexicographic order, with seeded random values.

    >>> keys, values = every_key_table()
    >>> keys.shape, keys[1].tolist(), values.shape
    ((1000, 3), [0, 0, 1], (1000,))
    """
    keys = np.indices((vocab,) * key_len).reshape(key_len, -1).T
    values = np.random.default_rng(seed).integers(0, vocab, size=len(keys))
    return keys, values


def _tracr():
    """Import tracr's compiler once, widening a head's value size when it exceeds its key size.

    tracr-pypi 1.0.0 sizes every head's value projection by the key size; a head
    that copies a token (10 values) chosen by a position (a few values), as
    ``shift_by`` does, fails to assemble.  The widened model computes the same.
    """
    from tracr.compiler import assemble, compiling, lib
    from tracr.craft import transformers
    from tracr.rasp import rasp
    if not getattr(assemble, '_taotp_widened', False):
        original = assemble._get_model_config_and_module_names

        def widened(craft_model):
            config, names = original(craft_model)
            heads = [h for block in craft_model.blocks
                     if not isinstance(block, transformers.MLP) for h in block.as_multi().heads()]
            if heads:
                config.key_size = max(config.key_size,
                                      max(max(h.w_ov.matrix.shape) for h in heads))
            return config, names
        assemble._get_model_config_and_module_names = widened
        assemble._taotp_widened = True
    return compiling, lib, rasp


def lookup_program(keys, values):
    """RASP for a lookup table: the value of the key that ends at each position (causal).

    ``shift_by`` heads bring the previous tokens; sequence maps join them into the
    key's prefix (a prefix of no key becomes None, so the value sets stay small); the
    last sequence map, prefix and current token, gives the value itself.
    """
    _, lib, rasp = _tracr()
    table = {tuple(int(t) for t in k): int(v) for k, v in zip(keys, values)}
    key_len = len(next(iter(table)))
    prefixes = {k[:j] for k in table for j in range(1, key_len)}

    def join(x, y):
        if x is None or y is None:
            return None
        prefix = (x if isinstance(x, tuple) else (x,)) + (y,)
        return prefix if prefix in prefixes else None

    def value(x, y):
        if x is None or y is None:
            return 0
        return table.get((x if isinstance(x, tuple) else (x,)) + (y,), 0)

    parts = [lib.shift_by(key_len - 1 - i, rasp.tokens) for i in range(key_len - 1)]
    key = parts[0]
    for i, part in enumerate(parts[1:]):
        key = rasp.categorical(rasp.SequenceMap(join, key, part)).named(f'prefix_{i + 2}')
    return rasp.categorical(rasp.SequenceMap(value, key, rasp.tokens)).named('value')


def program(name, keys=None, values=None):
    """The RASP program of a task (``keys``/``values``: the lookup table)."""
    _, lib, rasp = _tracr()
    if name == 'sort':
        return lib.make_sort_unique(rasp.tokens, rasp.tokens)
    if name == 'lookup':
        return lookup_program(keys, values)
    if name == 'reverse':
        return lib.make_reverse(rasp.tokens)
    if name == 'hist':
        return lib.make_hist()
    if name == 'length':
        return lib.make_length()
    raise ValueError(f"program: name must be one of 'sort', 'lookup', 'reverse', 'hist', "
                     f"'length'; got {name!r}")


def compile_task(name, causal=False, mlp_exactness=100, keys=None, values=None):
    """Compile a task with a BOS token; vocabulary and length as in the module docstring."""
    compiling, _, _ = _tracr()
    if name == 'sort':
        vocab, length = set(range(1, SORT_VOCAB + 1)), SORT_LEN
    elif name == 'lookup':
        vocab, length = set(range(LOOKUP['vocab'])), len(keys[0])
    else:
        vocab, length = set(range(1, SMALL_VOCAB + 1)), SMALL_LEN
    return compiling.compile_rasp_to_model(program(name, keys, values), vocab=vocab,
                                           max_seq_len=length, causal=causal,
                                           compiler_bos='BOS', mlp_exactness=mlp_exactness)


def run(model, inputs):
    """tracr's own forward pass on lists of tokens (BOS added).

    Returns ``(decoded, scores)``: per input the decoded outputs after BOS, and the
    (n, outputs) array tracr takes its argmax of.  Inputs of one length run as one
    batch through the model's jitted forward.
    """
    import jax
    import jax.numpy as jnp
    from . import _unembedding
    forward = jax.jit(model.forward)
    d_model = int(np.shape(model.params['token_embed']['embeddings'])[1])
    unembed = _unembedding(model, d_model)
    decode = {j: v for v, j in model.output_encoder.encoding_map.items()}
    decoded, scores = [None] * len(inputs), [None] * len(inputs)
    groups = {}
    for i, x in enumerate(inputs):
        groups.setdefault(len(x), []).append(i)
    for idx in groups.values():
        ids = jnp.array([model.input_encoder.encode(['BOS'] + list(inputs[i])) for i in idx])
        out = forward(model.params, ids)
        final = np.asarray(out.transformer_output.output, dtype=np.float64)
        for row, resid, i in zip(np.asarray(out.unembedded_output), final, idx):
            decoded[i] = [decode[int(j)] for j in row[1:]]
            scores[i] = resid[1:] @ unembed
    return decoded, scores


def task_inputs(name, rng=None, keys=None):
    """The seeded inputs each task is measured on (lists of tokens, no BOS)."""
    rng = np.random.default_rng(SEED) if rng is None else rng
    if name == 'sort':
        return [rng.choice(np.arange(1, SORT_VOCAB + 1), size=int(rng.integers(1, SORT_LEN + 1)),
                           replace=False).tolist() for _ in range(N_INPUTS)]
    if name == 'lookup':
        return [list(map(int, k)) for k in keys]
    return [rng.integers(1, SMALL_VOCAB + 1, size=int(rng.integers(1, SMALL_LEN + 1))).tolist()
            for _ in range(N_INPUTS)]


def expected(name, x, table=None):
    """What the task should print at every position (what RASP evaluates to)."""
    if name == 'sort':
        return sorted(x)
    if name == 'reverse':
        return x[::-1]
    if name == 'hist':
        return [x.count(t) for t in x]
    if name == 'length':
        return [len(x)] * len(x)
    return [table.get(tuple(x[max(0, i - len(next(iter(table))) + 1):i + 1]), 0)
            for i in range(len(x))]


def _shape(model):
    config = model.model_config
    return {'layers': config.num_layers, 'heads': config.num_heads,
            'd_model': int(np.shape(model.params['token_embed']['embeddings'])[1]),
            'causal': bool(config.causal)}


def measure(name, causal=False, mlp_exactness=100, table=None):
    """Compile a task, count it, run it on ``task_inputs`` and compare with the task itself.

    Returns a dict: tracr's ``total`` and ``non0`` (every array of its params, biases
    included), its shape, ``right`` / ``checked`` (inputs whose every output
    position is right; for lookup and causal models only the last position, the
    one that sees the whole input), and, for a causal model, ``imported``: the
    inputs on which ``from_tracr`` gives the same outputs at every position.
    """
    from . import tracr_size
    keys, values = table if table is not None else (None, None)
    model = compile_task(name, causal, mlp_exactness, keys, values)
    lookup_table = None if keys is None else {tuple(map(int, k)): int(v)
                                               for k, v in zip(keys, values)}
    inputs = task_inputs(name, keys=keys)
    outputs, scores = run(model, inputs)
    last_only = causal or name == 'lookup'
    right = 0
    for x, got in zip(inputs, outputs):
        want = expected(name, x, lookup_table)
        right += (got[-1] == want[-1]) if last_only else (got == want)
    total, non0 = tracr_size(model)
    result = {'task': name, 'causal': bool(causal), 'mlp_exactness': mlp_exactness,
              'total': total, 'non0': non0, **_shape(model), 'right': int(right),
              'checked': len(inputs), 'last_position_only': bool(last_only)}
    if causal:
        result.update(_imported(model, inputs, outputs, scores))
    return result


def _imported(model, inputs, outputs, scores):
    """How ``from_tracr`` compares: the largest score difference, and argmax agreement.

    A position where tracr's two best scores are within 1e-3 (nothing decided it: a
    None that tracr's MLPs cannot represent gives all zeros) is a tie that rounding
    breaks either way; agreement is counted on the decided positions.
    """
    from ..decoding import transformer
    from ..params import count_non0_params, count_params
    from . import from_tracr, tracr_vocabulary
    params = from_tracr(model)
    vocab = tracr_vocabulary(model)
    rows = [vocab.index(v) for v, _ in sorted(model.output_encoder.encoding_map.items(),
                                               key=lambda kv: kv[1])]
    same, ties, diff = 0, 0, 0.0
    for x, got, theirs in zip(inputs, outputs, scores):
        ids = [vocab.index(t) for t in ['BOS'] + list(x)]
        ours = transformer(ids, norm='none', **params)[1:]
        diff = max(diff, float(np.abs(ours[:, rows] - theirs).max()))
        top2 = np.sort(theirs, axis=-1)[:, -2:] if theirs.shape[1] > 1 else None
        decided = np.ones(len(x), bool) if top2 is None else top2[:, 1] - top2[:, 0] > 1e-3
        ties += int((~decided).sum())
        picked = [vocab[i] for i in ours.argmax(-1)]
        same += all(a == b for a, b, d in zip(picked, got, decided) if d)
    return {'imported': int(same), 'imported_ties': ties, 'imported_max_diff': diff,
            'imported_size': [count_params(params)['n_params'],
                              count_non0_params(params)['n_params']]}


def craft_size(name, keys=None, values=None, max_seq_len=None):
    """tracr's count of a program without assembling its arrays (for tables too big to build).

    Runs the compiler up to its craft model and counts what assembling would
    allocate: token and position tables, and per layer Q, K, V (d_model x heads k),
    the output map, the MLP's two matrices, and every bias.  Returns ``(total,
    d_model, layers, heads, key_size, mlp_hidden)``; tests check it against an
    assembled model.
    """
    _tracr()
    from tracr.compiler import (basis_inference, craft_graph_to_model, expr_to_craft_graph,
                                nodes, rasp_to_graph)
    from tracr.craft import bases, transformers
    from tracr.rasp import rasp
    prog = program(name, keys, values)
    if name == 'lookup':
        vocab, length = set(range(LOOKUP['vocab'])), len(keys[0])
    elif name == 'sort':
        vocab, length = set(range(1, SORT_VOCAB + 1)), SORT_LEN
    else:
        vocab, length = set(range(1, SMALL_VOCAB + 1)), SMALL_LEN
    length = max_seq_len or length
    extracted = rasp_to_graph.extract_rasp_graph(prog)
    graph, sources, sink = extracted.graph, extracted.sources, extracted.sink
    basis_inference.infer_bases(graph, sink, vocab, length)
    expr_to_craft_graph.add_craft_components_to_rasp_graph(
        graph, bos_dir=bases.BasisDirection(rasp.tokens.label, 'BOS'), mlp_exactness=100)
    craft = craft_graph_to_model.craft_graph_to_model(graph, sources)
    tokens = graph.nodes[rasp.tokens.label][nodes.VALUE_SET] | {'BOS', 'compiler_pad'}
    space = bases.join_vector_spaces(
        craft.residual_space, bases.VectorSpaceWithBasis.from_values(rasp.tokens.label, tokens),
        bases.VectorSpaceWithBasis.from_values(rasp.indices.label, range(length)),
        bases.VectorSpaceWithBasis(sink[nodes.OUTPUT_BASIS]))
    d = space.num_dims
    attn = [list(b.as_multi().heads()) for b in craft.blocks if not isinstance(b, transformers.MLP)]
    mlps = [b for b in craft.blocks if isinstance(b, transformers.MLP)]
    heads = max((len(h) for h in attn), default=1)
    k = max((max(max(x.w_qk.matrix.shape), max(x.w_ov.matrix.shape)) for h in attn for x in h),
            default=1)
    hidden = max((m.fst.output_space.num_dims for m in mlps), default=1)
    layers = 0
    names = iter(f'{i}/{kind}' for i in range(2 * len(craft.blocks)) for kind in ('attn', 'mlp'))
    for block in craft.blocks:
        kind = 'mlp' if isinstance(block, transformers.MLP) else 'attn'
        name_ = next(names)
        while not name_.endswith(kind):
            name_ = next(names)
        layers = int(name_.split('/')[0]) + 1
    per_layer = 4 * d * heads * k + 3 * heads * k + d + 2 * d * hidden + hidden + d
    total = len(tokens) * d + (length + 1) * d + layers * per_layer
    return total, d, layers, heads, k, hidden


def measure_all():
    """Every number of ``records_tracr.json`` (a few minutes of compiling)."""
    from importlib.metadata import version
    table = every_key_table()
    runs = [measure('sort'), measure('sort', mlp_exactness=1000),
            measure('lookup', causal=True, table=table),
            measure('reverse'), measure('hist'), measure('length'),
            measure('hist', causal=True), measure('length', causal=True)]
    return {'tracr': version('tracr-pypi'), 'jax': version('jax'), 'seed': SEED,
            'lookup_table': dict(LOOKUP), 'runs': runs}
