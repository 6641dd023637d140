"""The Theorem 4.1 adder of Cho et al. (2025): one layer, four heads, 83 ReLUs.

Two variants of the same construction, both run by the book's one forward
pass (``taotp.model.forward``) with two position tables (one per ID level):

* ``norm=False``: the paper's model without normalisation, run with
  ``norm='none'`` (every norm is the identity ``beta + gamma * x`` with gamma 1,
  beta 0).  The engine divides attention scores by sqrt(d_head); the paper's
  model does not, so that factor is folded into ``Q``.
* ``norm=True``: a port to the book's PreLN transformer.  Every feature is a
  pair (v, -v) and every row of the embedding has the same norm, so the first
  layer norm is a constant scale (folded into Q, K, V and M1); the heads write
  pairs of size ``eps`` that hardly move the norm, and the MLP reads them back
  with gain 1 / (2 eps).

``build_adder_params`` returns the params dict; ``MultiOperandAdder`` (built by
``build_multi_operand_adder``) adds the task around it: prompts, position IDs,
the capacity of its tables, teacher forcing and greedy decoding.

    >>> adder = build_multi_operand_adder(2, 3)
    >>> adder.generate([7, 8])
    (['0', '0', '>', '7', '0', '>', '5', '1', '$'], 15)
"""
from functools import cached_property

import numpy as np

from ..decoding import decode
from ..model import NORMS, forward
from ..params import check_size
from ..residual import Layout
from ..trace import trace
from .digit_mlp import hidden_units
from .formats import (EOS, SEP, TOKEN_ID, VOCAB, _CoupledIds, coupled_ids, _first_width,
                      operand_list, pad_length, read_total, scratchpad_text, _check_offset)
from .positions import position_codes, sizes, wrap

HEADS = ('digit sum', 'carry', 'arrow', 'EOS')
HEAD_OUT = ('PRE_SUM', 'PRE_CARRY', 'PRE_ARROW', 'PRE_EOS')
# the code blocks each head compares: (query blocks, key blocks), matched in pairs
HEAD_BLOCKS = ((('POS1_NEXT', 'POS2'), ('POS1', 'POS2_NEXT')),    # ID1 + 1, ID2 - 1
               (('POS1', 'POS2'), ('POS1', 'POS2_NEXT')),         # same ID1, ID2 - 1
               (('POS1_NEXT',), ('POS1',)),                       # ID1 + 1
               (('POS1', 'POS2'), ('POS1', 'POS2')))              # same IDs
EOS_ID = TOKEN_ID[EOS]


# ----------------------------------------------------------------------------- layouts

def adder_layout(P1, P2, norm=False):
    """The residual stream: 19 named dimensions plus the codes (norm-free), or pairs (PreLN).

    >>> adder_layout(3, 2).d_model, adder_layout(3, 2, norm=True).d_model
    (29, 62)
    """
    if norm:
        return Layout([('NUM', 4), ('IS_BOS', 2), ('ONES', 2), ('FILL', 2), ('POS1', 2 * P1),
                       ('POS1_NEXT', 2 * P1), ('POS2', 2 * P2), ('POS2_NEXT', 2 * P2),
                       ('PRE_SUM', 2), ('PRE_CARRY', 2), ('PRE_ARROW', 2), ('PRE_EOS', 2),
                       ('SUM', 20), ('ARROW', 2), ('EOS', 2)])
    return Layout([('NUM', 1), ('IS_BOS', 1), ('ONES', 1), ('PRE_SUM', 1), ('PRE_CARRY', 1),
                   ('PRE_ARROW', 1), ('PRE_EOS', 1), ('SUM', 10), ('ARROW', 1), ('EOS', 1),
                   ('POS1', P1), ('POS1_NEXT', P1), ('POS2', P2), ('POS2_NEXT', P2)])


def _plus(L, name, i=0):
    """Index of feature ``i`` of block ``name`` (its positive copy in the PreLN layout)."""
    return L[name].start + i


def _minus(L, name, i=0):
    """Index of the negative copy of feature ``i`` of a paired block (PreLN layout)."""
    return L[name].start + (L[name].stop - L[name].start) // 2 + i


def position_tables(L, code_widths, top, signed):
    """One table per level: row p holds ``[v_p ; v_(p+1)]`` in that level's code blocks.

    ``top`` is the largest ID of each level's table; row 0 (BOS) stays zero.
    ``signed`` stores each code as the pair (code, -code) (PreLN layout).
    """
    tables = []
    for level, (D, last) in enumerate(zip(code_widths, top), start=1):
        table = np.zeros((last + 1, L.d_model))
        for p in range(1, last + 1):
            cur, nxt = np.split(position_codes(D, p), 2)
            for name, code in ((f'POS{level}', cur), (f'POS{level}_NEXT', nxt)):
                table[p, L[name]] = np.concatenate([code, -code]) if signed else code
        tables.append(table)
    return tables


def _readout(L):
    """Digit k reads SUM_k; the separator 10 ARROW, EOS 100 EOS (a flag beats any digit)."""
    out = np.zeros((len(VOCAB), L.d_model))
    for k in range(10):
        out[k, _plus(L, 'SUM', k)] = 1.0
    out[TOKEN_ID[SEP], _plus(L, 'ARROW')] = 10.0
    out[EOS_ID, _plus(L, 'EOS')] = 100.0
    return out


def _identity_norm():
    return {'gamma': 1.0, 'beta': 0.0}


# ----------------------------------------------------------------------------- the paper's model

def _free_params(z, lam):
    """The norm-free weights of Appendix D (scores multiplied by sqrt(d_head) for the engine)."""
    P1, P2 = z['P1'], z['P2']
    L = adder_layout(P1, P2)
    d, at = L.d_model, lambda name, i=0: _plus(L, name, i)        # noqa: E731
    # token embeddings: NUM = the digit, ONES = 1, IS_BOS on '$'
    tok = np.zeros((len(VOCAB), d))
    for c, t in TOKEN_ID.items():
        tok[t, at('ONES')] = 1.0
        if c.isdigit():
            tok[t, at('NUM')] = float(c)
    tok[EOS_ID, at('IS_BOS')] = 1.0
    # four matching heads: sqrt(lam) on each compared code, a BOS sink scoring lam * D too
    d_head = P1 + P2 + 1
    fold = d_head ** 0.5                    # the engine divides scores by sqrt(d_head)
    Q, K = np.zeros((4, d, d_head)), np.zeros((4, d, d_head))
    V, P = np.zeros((4, d, 1)), np.zeros((4, d, 1))
    for h, (query_blocks, key_blocks) in enumerate(HEAD_BLOCKS):
        col = 0
        for qn, kn in zip(query_blocks, key_blocks):
            for i in range(L[qn].stop - L[qn].start):
                Q[h, at(qn, i), col] = lam ** 0.5 * fold
                K[h, at(kn, i), col] = lam ** 0.5
                col += 1
        Q[h, at('ONES'), d_head - 1] = (lam * col) ** 0.5 * fold
        K[h, at('IS_BOS'), d_head - 1] = (lam * col) ** 0.5
        V[h, at('NUM' if h < 2 else 'IS_BOS'), 0] = 3.0 if h < 2 else 1.0   # 3 digit: mean of 3
        P[h, at(HEAD_OUT[h]), 0] = 1.0
    # the MLP: every unit's constant rides on ONES (the paper has no biases)
    units = hidden_units()
    M1, M2 = np.zeros((d, len(units))), np.zeros((len(units), d))
    for u, (reads, const, writes) in enumerate(units):
        for name, w in reads.items():
            M1[at(name), u] = w
        M1[at('ONES'), u] = const
        for (name, i), w in writes.items():
            M2[u, at(name, i)] = w
    layer = {'Q': Q, 'K': K, 'V': V, 'P': P, 'M1': M1, 'b1': np.zeros(len(units)),
             'M2': M2, 'b2': np.zeros(d), 'ln1': _identity_norm(), 'ln2': _identity_norm()}
    return {'tok_emb': tok,
            'pos_emb': position_tables(L, (P1, P2), (z['max_pos1'], z['max_pos2']), False),
            'out_emb': _readout(L), 'layers': [layer], 'lnf': _identity_norm()}


# ----------------------------------------------------------------------------- the PreLN port

def _preln_params(z, lam, eps):
    """The port to the book's PreLN transformer (paired features, constant first layer norm)."""
    P1, P2 = z['P1'], z['P2']
    n_codes = P1 + P2
    L = adder_layout(P1, P2, norm=True)
    d = L.d_model
    plus, minus = (lambda name, i=0: _plus(L, name, i)), (lambda name, i=0: _minus(L, name, i))
    # token rows of squared norm 8 (+ 4 (P1 + P2) from the codes): digits as (a, -a, r, -r)
    # with a^2 + r^2 = 2; BOS has no codes and gets a filler pair of the same norm instead
    tok = np.zeros((len(VOCAB), d))
    for c, t in TOKEN_ID.items():
        a = int(c) * 2 ** 0.5 / 9 if c.isdigit() else 0.0
        rest = max(2 - a * a, 0.0) ** 0.5
        tok[t, L['NUM']] = [a, -a, rest, -rest]
        bos = 1.0 if c == EOS else -1.0
        tok[t, L['IS_BOS']] = [bos, -bos]
        tok[t, L['ONES']] = [1.0, -1.0]
    filler = (2 * n_codes) ** 0.5
    tok[EOS_ID, L['FILL']] = [filler, -filler]
    sigma0 = ((8 + 4 * n_codes) / d) ** 0.5       # every row has mean 0: LN(x0) = x0 / sigma0
    # the same four heads on LN(x0); the engine's 1/sqrt(d_head) is folded into Q
    d_head = n_codes + 1
    Q, K = np.zeros((4, d, d_head)), np.zeros((4, d, d_head))
    V, P = np.zeros((4, d, 1)), np.zeros((4, d, 1))
    qs, ks = sigma0 * d_head ** 0.5, sigma0
    for h, (query_blocks, key_blocks) in enumerate(HEAD_BLOCKS):
        col = 0
        for qn, kn in zip(query_blocks, key_blocks):
            for i in range((L[qn].stop - L[qn].start) // 2):
                Q[h, plus(qn, i), col] = lam ** 0.5 * qs
                K[h, plus(kn, i), col] = lam ** 0.5 * ks
                col += 1
        sink = (lam * col) ** 0.5
        Q[h, plus('ONES'), d_head - 1] = sink * qs
        K[h, plus('IS_BOS'), d_head - 1] = sink * ks / 2      # (is_bos + 1) / 2
        K[h, plus('ONES'), d_head - 1] = sink * ks / 2
        if h < 2:
            V[h, plus('NUM'), 0] = sigma0 * 27 / 2 ** 0.5      # 3 * digit
        else:
            V[h, plus('IS_BOS'), 0] = V[h, plus('ONES'), 0] = sigma0 / 2
        P[h, plus(HEAD_OUT[h]), 0] = eps
        P[h, minus(HEAD_OUT[h]), 0] = -eps
    # the MLP reads the eps-pairs back with gain 1 / (2 eps) and writes pairs
    units = hidden_units()
    M1, b1 = np.zeros((d, len(units))), np.zeros(len(units))
    M2, b2 = np.zeros((len(units), d)), np.zeros(d)
    for u, (reads, const, writes) in enumerate(units):
        for name, w in reads.items():
            if name == 'NUM':
                M1[plus('NUM'), u] = w * sigma0 * 9 / 2 ** 0.5
            else:
                M1[plus(name), u] = w * sigma0 / (2 * eps)
                M1[minus(name), u] = -w * sigma0 / (2 * eps)
        b1[u] = const
        for (name, i), w in writes.items():
            M2[u, plus(name, i)] = w
            M2[u, minus(name, i)] = -w
    layer = {'Q': Q, 'K': K, 'V': V, 'P': P, 'M1': M1, 'b1': b1, 'M2': M2, 'b2': b2,
             'ln1': _identity_norm(), 'ln2': _identity_norm()}
    return {'tok_emb': tok,
            'pos_emb': position_tables(L, (P1, P2), (z['max_pos1'], z['max_pos2']), True),
            'out_emb': _readout(L), 'layers': [layer], 'lnf': _identity_norm()}


MAX_COUNT = 1 << 12     # the most digits, and the most operands, an adder is built for (2 s)


def _check_build(lam, eps, max_digits, max_operands, where):
    for value, name in ((max_digits, 'max_digits'), (max_operands, 'max_operands')):
        check_size(where, name, value, high=MAX_COUNT, limit='taotp.coupling.adder.MAX_COUNT')
    for value, name in ((lam, 'lam'), (eps, 'eps')):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) \
                or not (value > 0 and np.isfinite(value)):
            raise ValueError(f'{where}: {name} must be a positive number; got {value!r}')


def build_adder_params(max_digits, max_operands, lam=20.0, norm=False, literal=False, eps=1e-3):
    """The adder's params dict for up to ``max_operands`` numbers of ``max_digits`` digits.

    Args:
        max_digits, max_operands: the sizes the position tables must hold.
        lam: the attention scale (exact once lam >= ln(1000 N) / 2, see
            ``lambda_bound``; measured exact from about 2.25 on short inputs).
        norm: False for the paper's model (run it with ``norm='none'``), True
            for the PreLN port (the book's default ``norm='layer'``).
        literal: the paper's code width (one bit short, see ``sizes``).
        eps: the PreLN port's head-output scale (works from 1e-6 to 3e-2).

    Returns:
        A book-format params dict whose ``pos_emb`` is a list of two tables
        (level 1: significance, level 2: which number).

    Raises:
        TypeError, ValueError: sizes that are not ints in 1..``MAX_COUNT`` (4,096: the
        position tables then hold at most about 2 ** 13 rows, built in about 2 s), or
        scales that are not positive numbers.
    """
    _check_build(lam, eps, max_digits, max_operands, 'build_adder_params')
    z = sizes(max_digits, max_operands, literal)
    return _preln_params(z, float(lam), eps) if norm else _free_params(z, float(lam))


def adder_census(max_digits, max_operands):
    """``(total, non_zero)`` parameters of ``build_adder_params(max_digits, max_operands)``.

    The book's census (``count_params``, ``count_non0_params``) of the norm-free
    adder, from its shapes: the program is built with one-row position tables
    and the real tables are counted by size (row p >= 1 holds 2P codes of
    +-1, row 0 is zero), so sizes whose tables would not fit in memory work too.

    >>> adder_census(2, 3)
    (7739, 555)
    """
    from ..params import count_non0_params, count_params
    z = sizes(max_digits, max_operands)
    small = _free_params({**z, 'max_pos1': 0, 'max_pos2': 0}, 20.0)
    total, non_zero = count_params(small)['n_params'], count_non0_params(small)['n_params']
    d = z['d_model']
    for width, top in ((z['P1'], z['max_pos1']), (z['P2'], z['max_pos2'])):
        total += top * d
        non_zero += top * 2 * width
    return total, non_zero


# ----------------------------------------------------------------------------- the model object

class MultiOperandAdder:
    """The adder with the task around it: prompts, IDs, capacity, teacher forcing, decoding.

    Attributes:
        params: the book-format program (``build_adder_params``); its tables
            hold the IDs up to ``max_pos``.
        max_pos: the largest ID of each level the tables hold.
        sizes: see ``sizes``; ``P1``, ``P2`` are the code widths.
        layout: the residual ``Layout``; ``variant``: the engine's ``norm``
            (``'none'`` for the paper's model, ``'layer'`` for the port).
        lam, norm, literal, eps, max_digits, max_operands: as built.
    """

    def __init__(self, max_digits, max_operands, lam=20.0, norm=False, literal=False,
                 eps=1e-3):
        self.max_digits, self.max_operands = max_digits, max_operands
        self.params = build_adder_params(max_digits, max_operands, lam, norm, literal, eps)
        self.sizes = sizes(max_digits, max_operands, literal)
        self.lam, self.norm, self.literal, self.eps = float(lam), bool(norm), bool(literal), eps
        self.P1, self.P2 = self.sizes['P1'], self.sizes['P2']
        self.max_pos = (self.sizes['max_pos1'], self.sizes['max_pos2'])
        self.layout = adder_layout(self.P1, self.P2, self.norm)
        self.variant = 'layer' if self.norm else 'none'

    def __repr__(self):
        kind = 'PreLN port' if self.norm else 'norm-free'
        return (f'<MultiOperandAdder {kind}: up to {self.max_operands} operands of '
                f'{self.max_digits} digits, d_model {self.layout.d_model}, lam {self.lam:g}>')

    @cached_property
    def code_params(self):
        """``params`` with a row for every code (IDs 0..2^D), for IDs that wrap around.

        Rows 0..max_pos equal those of ``params``; only the norm-free level-1
        table of the corrected width gains a row (ID 2^P1).
        """
        L = self.layout
        tables = position_tables(L, (self.P1, self.P2), (2 ** self.P1, 2 ** self.P2), self.norm)
        return {**self.params, 'pos_emb': tables}

    # ------------------------------------------------------------------ the task's tokens
    def prompt(self, operands):
        """Token ids of ``$ a_1 + ... + a_m =`` (padded with the experiments' rule)."""
        text = scratchpad_text(operands, where='prompt')
        return [EOS_ID] + [TOKEN_ID[c] for c in text[:text.index('=') + 1]]

    def tokens(self, operands):
        """Token ids of the whole sequence ``$ query = scratchpad $``."""
        return [EOS_ID] + [TOKEN_ID[c] for c in scratchpad_text(operands, where='tokens')] + [EOS_ID]

    def ids(self, token_ids, offsets=(1, 1)):
        """Both levels of position IDs of a token-id sequence, shape (2, n).

        IDs wrap modulo 2^D (as the codes do), which changes nothing within
        ``max_pos``; use it as ``positions`` of ``taotp.decode`` / ``trace``.
        """
        raw = np.array(coupled_ids([VOCAB[t] for t in token_ids], offsets), dtype=np.int64)
        return np.stack([wrap(raw[0], self.P1), wrap(raw[1], self.P2)])

    def fits(self, operands, offsets=(1, 1)):
        """True when every ID of the problem has its own row (the capacity of ``params``)."""
        ops = operand_list(operands, 'fits')
        return (offsets[0] + pad_length(ops) <= self.max_pos[0]
                and offsets[1] + len(ops) <= self.max_pos[1])

    def _check_capacity(self, where, top, what):
        """Raise unless the largest IDs ``top`` (one per level) fit the tables."""
        if top[0] > self.max_pos[0] or top[1] > self.max_pos[1]:
            raise ValueError(
                f'{where}: {what} must be <= max_pos = {self.max_pos}, the rows of this '
                f'adder\'s tables (built for {self.max_operands} operands of '
                f'{self.max_digits} digits); got {tuple(int(t) for t in top)}. Build a bigger '
                f'adder, or pass check_capacity=False to let the IDs wrap around the codes')

    def _problem(self, operands, offsets, where, check_capacity):
        ops = operand_list(operands, where)
        for s in offsets:
            _check_offset(s, where)
        top = (offsets[0] + pad_length(ops), offsets[1] + len(ops))
        if check_capacity:
            self._check_capacity(where, top, 'the IDs (s1 + ell, s2 + m)')
        return ops, (self.params if check_capacity else self.code_params)

    # ------------------------------------------------------------------ running it
    def trace(self, token_ids, offsets=(1, 1), check_capacity=True):
        """Run the model on ``token_ids`` and keep every intermediate (a ``taotp.Trace``).

        ``attn[0]`` is (4, n, n), ``resid_pre[0]``, ``resid_mid[0]`` and
        ``resid_post[0]`` are (n, d_model).
        """
        raw = coupled_ids([VOCAB[t] for t in token_ids], offsets)
        if check_capacity:
            self._check_capacity('trace', (max(raw[0]), max(raw[1])), 'the largest IDs')
        params = self.params if check_capacity else self.code_params
        return trace(np.asarray(token_ids), params, positions=self.ids(token_ids, offsets),
                     norm=self.variant)

    def teacher_forced(self, operands, offsets=(1, 1), check_capacity=True):
        """Every response token predicted from the true tokens before it.

        Returns ``(expected, predicted)`` as strings (the response after ``=``,
        EOS included).  Greedy decoding writes the expected response exactly
        when the two are equal.
        """
        ops, params = self._problem(operands, offsets, 'teacher_forced', check_capacity)
        seq = self.tokens(ops)
        start = seq.index(TOKEN_ID['=']) + 1          # the first response token
        predicted = _answer_argmax(np.asarray(seq), start, self.ids(seq[:-1], offsets), params,
                                   self.variant)
        return ''.join(VOCAB[t] for t in seq[start:]), ''.join(VOCAB[t] for t in predicted)

    def generate(self, operands, offsets=(1, 1), max_steps=None, check_capacity=True):
        """Greedy decoding from ``$ query =`` with ``taotp.decode``.

        Returns ``(response_tokens, total)``: every generated token (one-character
        strings, the final EOS ``$`` included) and the integer read from the last
        scratchpad number (``None`` if the response is malformed, e.g. no EOS).
        The IDs of generated tokens wrap around the codes if a broken model
        writes past its tables (see ``code_params``).
        """
        ops, _ = self._problem(operands, offsets, 'generate', check_capacity)
        prompt = self.prompt(ops)
        if max_steps is None:
            max_steps = (len(ops) + 1) * (pad_length(ops) + 1) + 2
        out = decode(prompt, self.code_params, max_steps=max_steps, eos=EOS_ID,
                     positions=_GrowingIds(self, offsets), norm=self.variant)
        response = [VOCAB[t] for t in out[len(prompt):]]
        return response, read_total(response)


class _GrowingIds:
    """``adder.ids(toks, offsets)`` for the sequence of a decode, which grows by a token a call.

    The prompt holds the whole first operand, so ``ell`` is known and each call
    only pushes the new tokens (``_CoupledIds``) instead of recounting the whole
    sequence (quadratic in its length: 1,023 steps for 30 operands of 30 digits).
    """

    def __init__(self, adder, offsets):
        self.adder, self.offsets, self.seen, self.ids = adder, offsets, np.zeros(0, int), None
        self.ell_known = False          # True once the first operand is followed by a sign

    def __call__(self, token_ids):
        token_ids = np.asarray(token_ids)
        n = len(self.seen)
        if not self.ell_known or not np.array_equal(token_ids[:n], self.seen):
            chars = [VOCAB[t] for t in token_ids.tolist()]
            n, self.ids = 0, _CoupledIds(_first_width(chars), self.offsets)
            self.ell_known = any(c != EOS and not c.isdigit() for c in chars)
            self.wrapped = np.zeros((2, 0), dtype=np.int64)
        for t in token_ids[n:].tolist():
            self.ids.push(VOCAB[t])
        new = np.array([self.ids.p1[n:], self.ids.p2[n:]], dtype=np.int64).reshape(2, -1)
        new = np.stack([wrap(new[0], self.adder.P1), wrap(new[1], self.adder.P2)])
        self.wrapped = np.concatenate([self.wrapped, new], axis=1)
        self.seen = token_ids.copy()
        return self.wrapped


SCORES_PER_PASS = 1 << 20     # attention scores per forward pass (8 MB: stays in cache)


def _answer_argmax(seq, start, ids, params, norm):
    """Greedy predictions of ``seq[start:]`` from the true tokens before each (teacher forcing).

    The logits at positions start - 1 .. n - 2 predict tokens start .. n - 1.
    Rows go through ``forward`` in blocks; a block of rows a..b - 1 needs only
    the prefix ``seq[:b]`` (the mask hides the rest), so each pass holds at
    most about ``SCORES_PER_PASS`` attention scores.  (``teacher_forced_argmax``
    splits a batch, not the positions of one long sequence.)
    """
    fed = len(seq) - 1
    n_heads = params['layers'][0]['Q'].shape[0]
    rows = max(16, SCORES_PER_PASS // (n_heads * fed))
    out = []
    for a in range(start - 1, fed, rows):
        b = min(a + rows, fed)
        logits = forward(seq[:b], positions=[level[:b] for level in ids], norm_fn=NORMS[norm],
                         logits_at=slice(a, b), **params)
        out.append(logits.argmax(-1))
    return np.concatenate(out)


def build_multi_operand_adder(max_digits, max_operands, lam=20.0, norm=False, literal=False,
                              eps=1e-3):
    """The 1-layer 4-head adder for up to ``max_operands`` numbers of ``max_digits`` digits.

    Returns a ``MultiOperandAdder`` (its ``.params`` run on the book's
    transformer); the arguments (and their limits) are those of ``build_adder_params``.
    """
    _check_build(lam, eps, max_digits, max_operands, 'build_multi_operand_adder')
    return MultiOperandAdder(max_digits, max_operands, lam, norm, literal, eps)
