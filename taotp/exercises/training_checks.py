"""Checkers of the training puzzles 2.3, 3.1, 5.8 and 7.11 (tasks and harnesses: ``training``).

Each judges what the submitted program does, never how it was made (trained, built by
hand, or the weights the book ships), on held-out inputs: the *visible* ones (seeded, the
same for every answer, reported in the PASS line) and as many drawn afresh, which must meet
the same bar.
"""
import numpy as np

from .. import encodings, hello_world
from ..params import config, count_non0_params, count_params
from . import toolkit as tk
from .registry import checker
from .result import Finding, Passed
from ..trained.tasks import LOOKUP, OFFSET, SORT_N, hello_world_task, lookup_accuracy, measure

NOT_HOW = 'judged on what the program does, not on how it was made'


def _counts(params):
    c = config(params)
    return (f'{c["n_layers"]} layer(s), d_model {c["d_model"]}, '
            f'{count_params(params)["n_params"]:,} parameters '
            f'({count_non0_params(params)["n_params"]:,} non-zero)')


def _program(answer, vocab, why, exact=True):
    """The submitted program, with ``vocab`` rows of tok_emb (or more, unless ``exact``)."""
    params = tk.program(answer)
    rows = np.shape(params['tok_emb'])[0]
    if rows < vocab or exact and rows != vocab:
        raise Finding(f'tok_emb has {rows} rows; {why}')
    return params


@checker('2.3')
def check_2_3(answer):
    """A trained (or any) program that prints "Hello World!" then <eos> from <bos>."""
    tok = hello_world_task()[2]                 # the message tokenizer
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], dict):
        if answer[1] != tok:                 # (params, tokenizer), as the builder returns
            raise Finding(f'puzzle 2.3 uses the message tokenizer {tok}; got the tokenizer '
                          f'{tk.short(answer[1], 200)}')
        answer = answer[0]
    params = _program(answer, len(tok), f'the message tokenizer needs {len(tok)} '
                      f'(message_tokenizer("Hello World!"))', exact=False)
    printed = tk.run_program(lambda: measure('2.3', params)['printed'], on='<bos>')
    want = hello_world.HELLO_WORLD + '<eos>'
    if printed != want:
        raise Finding(f'<bos>: expected {want!r}, got {printed!r}', printed)
    return Passed(f'prints "Hello World!" then <eos> from <bos> (message tokenizer); '
                  f'{_counts(params)}; the hand-built program of Chapter 2 has 72; {NOT_HOW}')


@checker('3.1')
def check_3_1(answer):
    """Answers the puzzle's table (100 keys) behind held-out prefixes: >= 99 % in both modes."""
    params = _program(answer, LOOKUP['vocab_size'],
                      f'the table uses a vocabulary of {LOOKUP["vocab_size"]}')
    seen = tk.run_program(lambda: measure('3.1', params))
    fresh = tk.run_program(lambda: lookup_accuracy(params, tk.fresh_rng()))
    for mode, what in (('random', 'random tokens'), ('keys', 'tokens cut from other keys')):
        for result, which in ((seen, 'visible'), (fresh, 'fresh')):
            if result[mode] < 0.99:
                raise Finding(f'keys behind prefixes of {what} (0-10 tokens, 1,100 {which} '
                              f'held-out queries): at least 99 % must be right; your program '
                              f'gets {result[mode]:.1%}')
    attack = seen['attack']
    searched = ('not searched (the program is wider than the search allows)' if attack is None
                else f'made {attack["wrong"]} of 100 keys come out wrong')
    return Passed(f'at least 99 % right on 1,100 held-out queries of each kind, visible and '
                  f'fresh (visible: {seen["random"]:.1%} behind random prefixes, '
                  f'{seen["keys"]:.1%} behind prefixes cut from other keys); largest attention '
                  f'on a prefix token {seen["leak"]:.2g}; a greedy search for bad prefixes (not '
                  f'part of the verdict) {searched}; {_counts(params)}; {NOT_HOW}')


@checker('5.8')
def check_5_8(answer):
    """Sorts held-out prompts of every length 1..27 (20 each): >= 95 % exactly right."""
    params = _program(answer, SORT_N, f'the task uses 0 (separator) and 1..27, a vocabulary of '
                      f'{SORT_N}')
    seen = tk.run_program(lambda: measure('5.8', params))
    fresh = tk.run_program(lambda: measure('5.8', params, tk.fresh_rng()))
    for share, by_length, which in ((seen['accuracy'], seen['by_length'], 'visible'),
                                    (fresh['accuracy'], fresh['by_length'], 'fresh')):
        worst = min(by_length, key=by_length.get)
        if share < 0.95:
            raise Finding(f'540 {which} held-out prompts (20 of each length 1..27): at least 95 % '
                          f'must come out sorted exactly; your program sorts {share:.1%} '
                          f'(worst at length {worst}: {by_length[worst]:.0%})', by_length)
    by_length = seen['by_length']
    worst = min(by_length, key=by_length.get)
    worst = 'every length 100 %' if by_length[worst] == 1 else \
        f'worst length {worst}: {by_length[worst]:.0%}'
    return Passed(f'at least 95 % of 540 held-out prompts (20 of each length 1..27) sorted '
                  f'exactly, visible and fresh (visible: {seen["accuracy"]:.1%}, {worst}); '
                  f'{_counts(params)}; {NOT_HOW}')


VERDICTS = ('og', 'rotation', 'tie')
TIE = 0.02     # accuracies closer than 2 points are a tie
TABLE_TOL = 1e-5   # position tables must match their encoding to float32 precision
NEAR_OG = 0.05     # radians: an angle this close to a sinusoidal one (folded as below) is it


def _rotation_problem(table):
    """None if ``table`` is a rotation encoding (cos, sin per angle), else what is wrong."""
    if table.shape[1] % 2:
        return f'it has {table.shape[1]} columns; a rotation encoding has pairs'
    thetas = np.arctan2(table[1, 1::2], table[1, 0::2]) % (2 * np.pi)
    expected = encodings.rotation_encoding(len(table), thetas)
    if not np.allclose(table, expected, atol=TABLE_TOL):
        row, col = np.argwhere(~np.isclose(table, expected, atol=TABLE_TOL))[0]
        return (f'row {row}, column {col} is {table[row, col]:.6g}; a rotation encoding with '
                f'the angles of row 1 has {expected[row, col]:.6g}')
    return None


def _sinusoidal_pairs(thetas, d):
    """How many of ``thetas`` pair off, one to one, with an angle of ``og_angles(d)`` within
    NEAR_OG, up to sign, a half turn and order. Angles are folded into [0, pi/2] first: -theta
    gives the same table with one column of the pair negated, and theta + pi the same table
    with every odd row negated (round 24: og_angles(d) + pi passed the fold at 0 and pi
    alone), so each angle is taken modulo pi, then theta and pi - theta are one. A greedy
    walk through both sorted lists."""
    def folded(angles):
        angles = np.asarray(angles) % np.pi
        return np.sort(np.minimum(angles, np.pi - angles))
    mine, og = folded(thetas), folded(encodings.og_angles(d))
    i = j = pairs = 0
    while i < len(mine) and j < len(og):
        if abs(mine[i] - og[j]) <= NEAR_OG:
            i, j, pairs = i + 1, j + 1, pairs + 1
        elif mine[i] < og[j]:
            i += 1
        else:
            j += 1
    return pairs


def _two_models(answer):
    if not isinstance(answer, dict) or set(answer) != {'og', 'rotation', 'better'}:
        raise Finding(f"expected a dict {{'og': params, 'rotation': params, 'better': "
                      f"'og' | 'rotation' | 'tie'}}; got {tk.describe(answer)}"
                      + (f' with keys {sorted(map(str, answer))}' if isinstance(answer, dict)
                         else ''))
    if answer['better'] not in VERDICTS:
        raise Finding(f"'better' must be one of {VERDICTS}; got {tk.short(answer['better'])}")
    models = {k: tk.program(answer[k], what=f'your {k!r} params') for k in ('og', 'rotation')}
    shapes = {k: config(p) for k, p in models.items()}
    for k, c in shapes.items():
        if (c['vocab_size'], c['block_size']) != (OFFSET['vocab_size'], OFFSET['block_size']):
            raise Finding(f'your {k!r} model has vocab_size {c["vocab_size"]} and block_size '
                          f'{c["block_size"]}; the task needs {OFFSET["vocab_size"]} and '
                          f'{OFFSET["block_size"]}')
    if shapes['og'] != shapes['rotation']:
        raise Finding(f'the two models differ in shape ({shapes["og"]} vs {shapes["rotation"]}); '
                      f'a fair comparison changes only the position table')
    q, d = OFFSET['block_size'], shapes['og']['d_model']
    if d % 2 or not np.allclose(models['og']['pos_emb'], encodings.og_embedding(q, d),
                                atol=TABLE_TOL):
        raise Finding(f"your 'og' pos_emb is not the sinusoidal encoding og_embedding({q}, {d}) "
                      f"(keep the table fixed while training)")
    table = models['rotation']['pos_emb']
    problem = _rotation_problem(table)
    if problem:
        raise Finding(f"your 'rotation' pos_emb is not a rotation encoding: {problem}")
    pairs = _sinusoidal_pairs(np.arctan2(table[1, 1::2], table[1, 0::2]), d)
    if 2 * pairs > d // 2:         # round 12: the sinusoidal angles, nudged by 3e-6, passed
        raise Finding(f"your 'rotation' pos_emb uses the sinusoidal encoding's own angles: "
                      f"{pairs} of its {d // 2} angles each lie within {NEAR_OG} rad of a "
                      f"different angle of og_angles({d}) (up to sign, a half turn and "
                      f"order); the puzzle compares the sinusoidal table with a rotation table "
                      f"of random angles, at most half of them that close (draw others)")
    return models


@checker('7.11')
def check_7_11(answer):
    """Two PostLN models (sinusoidal, random rotation) and a verdict matching their accuracies."""
    models = _two_models(answer)
    seen = tk.run_program(lambda: measure('7.11', models))
    fresh = tk.run_program(lambda: measure('7.11', models, tk.fresh_rng()))
    for scores, which in ((seen, 'visible'), (fresh, 'fresh')):
        for k in ('og', 'rotation'):       # a fair comparison: both trained on the task
            if scores[k]['inside'] < 0.9:
                raise Finding(f'positions 5-31 of 200 {which} held-out rows (the training '
                              f'length): each model must be >= 90 % right once trained; your '
                              f'{k!r} model gets {scores[k]["inside"]:.1%}')
    verdicts = set()
    for scores in (seen, fresh):
        gap = scores['rotation']['all'] - scores['og']['all']
        verdicts.add('tie' if abs(gap) < TIE else ('rotation' if gap > 0 else 'og'))
    if answer['better'] not in verdicts:
        raise Finding(f"verdict {answer['better']!r} does not match what your two models do on "
                      f"held-out positions 5-63 (a gap under {TIE:.0%} is a tie): measure both "
                      f"yourself (taotp.exercises.training.measure('7.11', models)) and compare")
    summary = (f'og {seen["og"]["inside"]:.1%} / {seen["og"]["beyond"]:.1%}, rotation '
               f'{seen["rotation"]["inside"]:.1%} / {seen["rotation"]["beyond"]:.1%} '
               f'(positions 5-31 / 32-63)')
    return Passed(f'both PostLN, same shape ({_counts(models["og"])}), fixed tables; held-out '
                  f'accuracy copying the token 5 back, on the visible rows: {summary}; verdict '
                  f'{answer["better"]!r} matches; {NOT_HOW}')
