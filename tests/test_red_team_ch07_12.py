"""Red-team attacks on the checkers of chapters 7-10 and 12 that passed before their fix.

Each test is one attack, named after it: a submission that does not solve the puzzle
(or solves something smaller than the budget says) and used to get a PASS.  Every one
must now be reported as NOT YET.  The attacks were written from the puzzle statements
and the checkers' code alone.

"Write this function" puzzles whose answer the package already has (7.3, 9.1-9.6, 9.8,
9.12, 10.1) refuse a submission that calls that function once its outputs are all right
(a wrong answer still gets its counterexample first), as 1.x and 8.4 do.  The builders of
9.11, 9.18 and 9.19 stay accepted: the solutions notebook itself uses them.
"""
import copy
import sys

import numpy as np
import pytest

import taotp
from taotp import coupling as C
from taotp.exercises import ch07, ch08, ch09, ch10, ch12
from taotp.lookup import build_universal_lookup_transformer
from taotp.programs import CATALOGUE

from solutions import answer


def rejected(result, *words):
    assert not result.passed, result.message
    for word in words:
        assert word in result.message, result.message


class ShowsAnother(dict):
    """A params dict whose reads (``d[k]``, ``keys``, ``items``) show one program while
    ``**d`` unpacking (the C fast path of a dict subclass) hands over another."""

    def __init__(self, runs, shows):
        super().__init__(runs)
        self.shows = shows

    def __getitem__(self, key):
        return self.shows[key]

    def get(self, key, default=None):
        return self.shows.get(key, default)

    def keys(self):
        return self.shows.keys()

    def items(self):
        return self.shows.items()

    def values(self):
        return self.shows.values()


def _with_extra_layer(params, heads=5, d_ff=100):
    """The same function with one more (identity) layer: over a 1-layer, 4-head budget."""
    out = copy.deepcopy(params)
    out['layers'] = out['layers'] + [taotp.base_layer(heads, taotp.config(params)['d_model'],
                                                       d_ff, 4)]
    return out


def _with_zero_layer(params):
    """The same shapes with the layer zeroed: within the budget, and wrong."""
    out = copy.deepcopy(params)
    cfg = taotp.config(params)
    out['layers'] = [taotp.base_layer(cfg['n_heads'][0], cfg['d_model'], cfg['d_ff'][0],
                                      cfg['d_head'][0])]
    return out


# ----------------------------------------------------------------------------- budgets

def test_9_11_dict_subclass_shows_the_budget_and_runs_a_bigger_program():
    def build(n, m):
        right = C.build_adder_params(n, m)
        return ShowsAnother(_with_extra_layer(right), _with_zero_layer(right))
    rejected(ch09.check_9_11(build))


def test_9_19_dict_subclass_shows_the_budget_and_runs_a_bigger_program():
    right = C.build_adder_params(4, 4, norm=True)
    rejected(ch09.check_9_19(ShowsAnother(_with_extra_layer(right), _with_zero_layer(right))))


def test_9_16_dict_subclass_shows_one_layer_and_runs_two():
    right = answer('9.16')
    rejected(ch09.check_9_16(ShowsAnother(_with_extra_layer(right), _with_zero_layer(right))))


# ----------------------------------------------------------------------------- the package's answer

PACKAGE_ONE_LINERS = {      # "write this function" answered by the package's own function
    '7.3': lambda delta, d: taotp.encodings.shift_by_delta(delta, taotp.encodings.og_angles(d),
                                                           reversed=True),
    '9.1': lambda bits, s: C.parity_sequence(bits, offset=s),
    '9.2': lambda operands: C.scratchpad_text(operands),
    '9.3': lambda operands, s1, s2: C.addition_sequence(operands, offsets=(s1, s2))[1:],
    '9.4': lambda a, b: C.multiplication_sequence(a, b),
    '9.5': lambda operands, index: C.keys_for(C.addition_sequence(operands)[0], index),
    '9.6': lambda D, k: C.cube_code(D, k),
    '9.8': lambda pair_sum, written: C.carry_out(pair_sum, written),
    '9.12': lambda n, m: [C.sizes(n, m)[k] for k in ('ell', 'P1', 'P2', 'd_model')],
    '10.1': lambda P, lags, x: taotp.selective.lag_posterior(P, lags, x),
}


@pytest.mark.parametrize('pid', sorted(PACKAGE_ONE_LINERS))
def test_package_one_liner_is_not_a_solution(pid):
    module = {'7': ch07, '9': ch09, '10': ch10}[pid.split('.')[0]]
    checker = next(p.checker for p in module.PUZZLES if p.id == pid)
    rejected(checker(PACKAGE_ONE_LINERS[pid]), 'the package\'s own answer')


def test_8_4_package_loader_bound_before_the_check():
    # names bound before check() keep pointing at the package's loader when its module
    # attributes are switched off; the check now watches the functions themselves
    from taotp.interpreter.build import build
    from taotp.interpreter.parse import parse

    rejected(ch08.check_8_4(lambda text: build(parse(text))), 'package')


# ----------------------------------------------------------------------------- untested inputs

def test_7_10_lookup_of_the_checkers_own_encodings():
    # the fixed encodings and their answers can be read from the checker module itself
    table = {X.tobytes(): m for X, _, m, _ in ch07._padding_cases()}
    rejected(ch07.check_7_10(lambda X, eps: table.get(np.asarray(X).tobytes(), 0)),
             'drawn with a seed taken from your answers')


def test_12_4_builder_right_only_alone_and_behind_a_full_prefix():
    # the universal lookup with the position rows between "key alone" and "key at the end of
    # the block" overwritten: same size, right at prefix lengths 0 and block - l only
    def build(ks, vs, vocab, block):
        params = build_universal_lookup_transformer(ks, vs, vocab, block)
        rows = list(range(ks.shape[1], block - ks.shape[1]))
        params['pos_emb'][rows] = params['pos_emb'][0]
        return params
    rejected(ch12.check_12_4(build), 'prefix')


def test_12_2_sort_wrong_on_one_percent_of_the_numbers_with_a_ground_seed():
    # 655 numbers (none of them, nor a neighbour, in the fixed inputs) take their
    # successor's code: wrong on about 28 % of random inputs.  The seed comes from the
    # program, so a cheater tweaks an unused weight until the seeded inputs miss the broken
    # numbers; this tweak passed the old check (4 seeded sets), not the 1,536 seeded numbers.
    params = CATALOGUE['sort-65536'].build()
    fixed = taotp.sort.large_vocab_sort_inputs(ch12.SORT_V, np.random.default_rng(1202),
                                               count=6, length=ch12.SORT_LEN)
    fixed.append(list(range(ch12.SORT_V - 1, ch12.SORT_V - 1 - ch12.SORT_LEN, -1)) + [0])
    seen = {t + s for row in fixed for t in row for s in (-1, 0, 1)}
    free = np.array([t for t in range(2, ch12.SORT_V - 2) if t not in seen])
    broken = np.random.default_rng(5).choice(free, size=655, replace=False)
    tok = params['tok_emb'].copy()
    tok[broken] = tok[broken + 1]
    params['tok_emb'], params['out_emb'] = tok, tok.copy()
    params['pos_emb'] = params['pos_emb'].copy()
    params['pos_emb'][-1, -1] = 3e-12                      # the ground seed
    rejected(ch12.check_12_2(params))


def test_9_9_flags_wrong_on_a_response_position_of_an_untested_size():
    # ARROW fires on (PRE_ARROW, PRE_EOS) = (0.5, 1/3), a digit position of one 8-digit
    # operand (and of several sizes the old nine problems skipped); EOS as in the chapter
    M1 = np.array([[1.0, 1.0, 0.0], [-2.0, 0.0, 1.0]])
    b1 = np.array([0.3, -0.5, -1 / 3])
    M2 = np.array([[10.0, 0.0], [0.0, 2.0], [0.0, 6.0]])
    rejected(ch09.check_9_9((M1, b1, M2, np.array([0.0, -1.0]))), '(PRE_ARROW = 0.500')


# ----------------------------------------------------------------------------- NaN and odd values

def test_10_2_matrix_whose_output_is_nan():
    # every stored slot NaN: `err.max() > tol` is False for NaN, so nothing was flagged
    def layer1(P, lags, T, lam):
        d = P.shape[0] + T
        return np.full((d, d), 1e308)
    with np.errstate(all='ignore'):
        rejected(ch10.check_10_2(layer1))


def test_10_8_nan_temperature():
    count = answer('10.8')
    rejected(ch10.check_10_8(lambda T, lags, beta_c: (count(T, lags, beta_c)[0], float('nan'))),
             'got nan')


def test_10_5_str_subclass_that_equals_every_choice():
    class EqualsAll(str):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = str.__hash__

        def strip(self, *chars):
            return self

        def upper(self):
            return self

    design = {**answer('10.5'), 'choice_134': EqualsAll('no idea')}
    rejected(ch10.check_10_5(design), 'choice_134')



# ----------------------------------------------------------------------------- the check's own data

def _checker_locals():
    """The local variables of every frame above the caller (the check's, among others)."""
    frame = sys._getframe(2)
    while frame is not None:
        yield frame.f_locals
        frame = frame.f_back


def test_7_3_zeroes_the_checks_tables_through_its_frame():
    def shift_matrix(delta, d):
        for variables in _checker_locals():
            for value in variables.values():
                for table in value.values() if isinstance(value, dict) else [value]:
                    if isinstance(table, np.ndarray) and table.dtype.kind == 'f':
                        table[...] = 0.0             # every row now maps to row j + delta
        return np.zeros((d, d))
    rejected(ch07.check_7_3(shift_matrix))


def test_12_4_builder_rewrites_the_checks_values_through_its_frame():
    def constant(ks, vs, vocab, block):               # always answers token 0...
        for variables in _checker_locals():            # ...after setting every value to 0
            for name, value in variables.items():
                if name in ('vs', 'tvs') and isinstance(value, np.ndarray):
                    value[...] = 0
                if name == 'tables':
                    for table in value:
                        table[2][...] = 0
        params = taotp.base_params(vocab, block, 1)
        params['tok_emb'] = np.ones((vocab, 1))
        params['out_emb'] = np.zeros((vocab, 1))
        params['out_emb'][0, 0] = 1.0
        return params
    rejected(ch12.check_12_4(constant))


def test_8_4_loader_rewrites_the_expected_programs_through_its_frame():
    refuse = {text for _, text in ch08._MALFORMED} | {text for _, text in ch08._EXPRESSIONS}
    program = taotp.load_program('{"tok_emb": [[1.0, -1.0]], "block_size": 2}')

    def rewrite(value):
        if value is program:
            return
        if isinstance(value, dict) and 'tok_emb' in value:
            value.clear()
            value.update(copy.deepcopy(program))
        elif isinstance(value, (list, tuple)):
            for item in value:
                rewrite(item)

    def loader(text):                                  # parses nothing
        if text in refuse or '__import__' in text:
            raise ValueError('refused')
        for variables in _checker_locals():
            for value in list(variables.values()):
                rewrite(value)
        return copy.deepcopy(program)
    rejected(ch08.check_8_4(loader))


def test_9_17_empties_the_expected_list_through_its_frame():
    def needed(operands, j):
        for variables in _checker_locals():
            if isinstance(variables.get('want'), list):
                variables['want'].clear()
        return []
    rejected(ch09.check_9_17(needed))


def test_10_1_shrinks_the_module_level_case_list():
    right = answer('10.1')

    def posterior(P, lags, x):                         # right on the first lag set only...
        try:
            ch10.POSTERIOR_CASES[1:] = []              # ...so it drops the others
        except TypeError:
            pass
        return right(P, lags, x) if tuple(lags) == (1, 2, 3) else np.zeros((len(x), len(lags)))
    rejected(ch10.check_10_1(posterior))
    assert len(ch10.POSTERIOR_CASES) == 9
