"""The training puzzles 2.3, 3.1, 5.8 and 7.11: checkers (no PyTorch) and harnesses (marker train).

The checkers judge a submitted params dict on held-out inputs, visible (seeded) and
fresh (new on every check); the reference answers are the programs the harnesses
stored (``training.stored``), read by the solutions notebooks, so these tests and
the notebooks need no PyTorch.  The harnesses themselves run as seconds-long smoke
trainings in CI.

Class 4 of the verdict-protocol issue (training puzzles judge only the program): a
checker cannot tell a trained program from a hand-built one or from the weights the
book ships, so the statements and every PASS line say that the program is judged on
what it does, not on how it was made (``test_a_pass_says_what_was_judged``).
"""
import json
import subprocess
import sys

import numpy as np
import pytest

import taotp
from taotp.exercises import check, training, training_checks
from taotp.train.init import init_params

PUZZLES = ('2.3', '3.1', '5.8', '7.11')
train = pytest.mark.train


@pytest.fixture(scope='module')
def references():
    return {pid: training.stored(pid) for pid in PUZZLES}


def _answer(pid, references):
    if pid == '7.11':
        facts = training.stored('7.11', with_facts=True)[1]
        gap = facts['rotation']['all'] - facts['og']['all']
        verdict = 'tie' if abs(gap) < training_checks.TIE else ('rotation' if gap > 0 else 'og')
        return {**references[pid], 'better': verdict}
    return references[pid]


@pytest.mark.parametrize('pid', PUZZLES)
def test_stored_reference_passes_and_none_does_not(pid, references):
    assert check(pid, _answer(pid, references))
    result = check(pid, None)
    assert not result and result.line.startswith(f'NOT YET {pid} · ')


def _close(a, b):
    """Equal, with floats compared to 1e-9 (relative) at any depth of dicts and lists."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9, abs=1e-12)
    return a == b


@pytest.mark.parametrize('pid', PUZZLES)
def test_stored_facts_match_what_the_checker_measures(pid):
    answer, facts = training.stored(pid, with_facts=True)
    assert facts['settings'] == {**training.REFERENCE[pid]}
    measured = json.loads(json.dumps(training.measure(pid, answer)))   # as stored (JSON)
    # floats to 1e-9: BLAS kernels differ in the last bits between CPUs (e.g. the 3.1
    # margin was -2.047239603003163 on one machine and ...174 on another)
    assert _close(measured, {k: facts[k] for k in measured})
    if pid == '2.3':
        assert facts['printed'] == 'Hello World!<eos>'
    if pid == '7.11':       # the sweep's seed 0 is the reference pair
        assert [r for r in facts['sweep'] if r['seed'] == 0] == \
            [{'encoding': k, 'seed': 0, **facts[k]} for k in ('og', 'rotation')]


def test_a_pass_says_what_was_judged(capsys):
    """Hand-built programs pass too: the checkers judge the result, not how it was made, and
    every PASS line says so (as the puzzle texts do)."""
    ks, vs = training.lookup_table()
    for pid, program in (('2.3', taotp.build_hello_world_transformer()),
                         ('3.1', taotp.build_lookup_transformer(ks, vs, 50, 15, tok_dims=10,
                                                                rng=np.random.default_rng(1))),
                         ('5.8', taotp.build_sort_transformer(28, 56))):
        result = check(pid, program)
        assert result and 'not on how it was made' in result.message


def test_untrained_programs_are_named_wrong(rng):
    start = init_params(11, 13, 3, n_layers=0, rng=rng)
    result = check('2.3', start)
    assert not result and result.message.startswith("<bos>: expected 'Hello World!<eos>', got")
    lookup = init_params(50, 15, 8, n_heads=2, d_ff=8, rng=rng)
    result = check('3.1', lookup)
    assert not result and 'behind prefixes of random tokens (0-10 tokens, 1,100 visible ' \
                          'held-out queries): at least 99 % must be right' in result.message
    sorter = init_params(28, 54, 8, n_heads=2, d_ff=8, rng=rng)
    result = check('5.8', sorter)
    assert not result and 'at least 95 % must come out sorted exactly' in result.message
    params, tok = taotp.build_hello_world_transformer()
    result = check('2.3', (params, {**tok, '<bos>': tok['<eos>']}))
    assert not result and result.message.startswith('puzzle 2.3 uses the message tokenizer')
    result = check('5.8', taotp.build_sort_transformer(10, 20))
    assert not result and 'tok_emb has 10 rows' in result.message
    result = check('3.1', taotp.build_sort_transformer(28, 56))
    assert not result and 'tok_emb has 28 rows; the table uses a vocabulary of 50' in result.message


def test_7_11_wrong_verdicts_and_unfair_comparisons(references):
    answer = _answer('7.11', references)
    wrong = next(v for v in training_checks.VERDICTS if v != answer['better'])
    result = check('7.11', {**answer, 'better': wrong})
    assert not result and f"verdict {wrong!r} does not match" in result.message
    assert answer['better'] not in result.message.split('does not match')[1]   # not given away
    result = check('7.11', {**answer, 'better': 'sinusoidal'})
    assert not result and "'better' must be one of" in result.message

    class Agreeable(str):                   # equal to every verdict
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = str.__hash__
    result = check('7.11', {**answer, 'better': Agreeable(wrong)})   # arrives as a plain str
    assert not result and f"verdict {wrong!r} does not match" in result.message
    swapped = {'og': answer['rotation'], 'rotation': answer['og'], 'better': answer['better']}
    result = check('7.11', swapped)
    assert not result and "your 'og' pos_emb is not the sinusoidal encoding" in result.message
    noisy = {**answer['rotation'], 'pos_emb': answer['rotation']['pos_emb'] + 0.01}
    result = check('7.11', {**answer, 'rotation': noisy})
    assert not result and "your 'rotation' pos_emb is not a rotation encoding" in result.message
    bigger = init_params(16, 64, 16, n_heads=2, d_ff=32, rng=np.random.default_rng(0))
    bigger['pos_emb'] = taotp.encodings.random_rotation_embedding(64, 16,
                                                                  np.random.default_rng(0))
    result = check('7.11', {**answer, 'rotation': bigger})
    assert not result and 'the two models differ in shape' in result.message
    untrained = {**answer['og'], 'layers': [], 'tok_emb': answer['og']['tok_emb'] * 0}
    untrained['out_emb'] = untrained['tok_emb']
    other = {**answer['rotation'], 'layers': [], 'tok_emb': untrained['tok_emb']}
    other['out_emb'] = other['tok_emb']
    result = check('7.11', {'og': untrained, 'rotation': other, 'better': 'tie'})
    assert not result and 'each model must be >= 90 % right once trained' in result.message
    # one-sided comparisons: one trained model next to an untrained one (red team)
    # weights trained for the other table
    for k, other_k in (('og', 'rotation'), ('rotation', 'og')):
        borrowed = {**answer[other_k], 'pos_emb': answer[k]['pos_emb']}
        result = check('7.11', {**answer, k: borrowed, 'better': other_k})
        assert not result and f"your {k!r} model gets" in result.message
    # the sinusoidal angles used as the "random" rotation table (red team)
    og_as_rotation = {**answer['rotation'],
                      'pos_emb': taotp.encodings.rotation_encoding(
                          64, taotp.encodings.og_angles(16))}
    result = check('7.11', {**answer, 'rotation': og_as_rotation})
    assert not result and "sinusoidal encoding's own angles" in result.message
    result = check('7.11', {'og': answer['og']})
    assert not result and "expected a dict {'og': params" in result.message


def _permuted(params, order, pos_emb):
    """The same program with its model dims reordered by ``order`` and ``pos_emb`` as table."""
    def layer(L):
        return {**L, **{k: L[k][:, order] for k in ('Q', 'K', 'V', 'P', 'M2')},
                'M1': L['M1'][order], 'b2': L['b2'][order],
                **{k: {g: v[order] for g, v in L[k].items()} for k in ('ln1', 'ln2')}}
    return {**params, 'tok_emb': params['tok_emb'][:, order],
            'out_emb': params['out_emb'][:, order], 'layers': [layer(L) for L in params['layers']],
            'lnf': {g: v[order] for g, v in params['lnf'].items()}, 'pos_emb': pos_emb}


def test_7_11_the_sinusoidal_model_in_disguise_is_refused(references):
    """Red team, round 12: the shipped sinusoidal model with each (sin, cos) pair turned into
    (cos, sin) and its angles nudged by 3e-6 is a rotation encoding whose angles passed the old
    1e-6 comparison; both models compute the same function, so 'tie' matched.  At most half of
    the rotation angles may now lie within NEAR_OG of a sinusoidal one (up to sign and order)."""
    og = references['7.11']['og']
    d = og['pos_emb'].shape[1]
    swap = np.arange(d).reshape(-1, 2)[:, ::-1].ravel()
    for nudge, sign in ((3e-6, 1), (-0.04, -1)):
        angles = sign * (taotp.encodings.og_angles(d) + nudge)
        disguised = _permuted(og, swap, taotp.encodings.rotation_encoding(64, angles))
        if sign == 1:           # the same function: the old checker's verdict was 'tie'
            scores = training.measure('7.11', {'og': og, 'rotation': disguised})
            assert scores['og']['all'] == pytest.approx(scores['rotation']['all'], abs=1e-9)
        result = check('7.11', {'og': og, 'rotation': disguised, 'better': 'tie'})
        assert not result and f"{d // 2} of its {d // 2} angles each lie within" in result.message


def test_7_11_random_rotation_tables_are_not_taken_for_sinusoidal_ones(references):
    table = references['7.11']['rotation']['pos_emb']
    assert training_checks._sinusoidal_pairs(np.arctan2(table[1, 1::2], table[1, 0::2]),
                                              16) <= 1
    for d in (4, 8, 16, 32):
        pairs = [training_checks._sinusoidal_pairs(
            taotp.encodings.random_angles(d // 2, np.random.default_rng(seed)), d)
            for seed in range(200)]
        assert np.mean([2 * p > d // 2 for p in pairs]) < 0.02, d


@pytest.mark.parametrize('pid', PUZZLES)
def test_checkers_need_no_torch(pid):
    code = ('import sys; sys.modules["torch"] = None; sys.modules["transformer_lens"] = None\n'
            'from taotp.exercises import training, check\n'
            f'a = training.stored({pid!r})\n'
            f'a = {{**a, "better": "x"}} if {pid!r} == "7.11" else a\n'
            f'r = check({pid!r}, a); check({pid!r}, None)\n'
            'print("torch" in sys.modules and sys.modules["torch"] is not None)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    verdicts = [line for line in lines if line.startswith(('PASS', 'NOT YET'))]  # first lines
    assert lines[-1] == 'False' and verdicts[-1].startswith(f'NOT YET {pid}')


def test_harness_without_torch_says_how_to_install():
    code = ('import sys; sys.modules["torch"] = None\n'
            'from taotp.exercises import training\ntraining.train_hello_world_torch(steps=1)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert 'this training harness needs PyTorch, part of the optional training extra: ' \
           'pip install "taotp[train]"' in out.stderr


# ----------------------------------------------------------------------------- the harnesses

@train
@pytest.mark.parametrize('pid', PUZZLES)
def test_smoke_training_runs_and_is_checked(pid):
    answer, facts = training.reference_run(pid, 'smoke')
    assert facts['seconds'] < 20 and facts['settings']['steps'] == training.SMOKE[pid]['steps']
    if pid == '7.11':
        answer = {**answer, 'better': 'tie'}
    result = check(pid, answer)
    assert result.line.startswith(('PASS', 'NOT YET'))


@train
def test_hello_world_reference_run_reproduces_the_stored_program():
    """The seeded reference run stops at the stored step count and prints the message; it
    passes the checker.  Its weights equal the stored ones to 1e-6 only on a CPU like the
    one that stored them: on an AMD EPYC (AVX2) the same seed reached the same step count
    with other weights (PyTorch's CPU kernels round differently), so that is reported,
    not asserted."""
    answer, facts = training.reference_run('2.3', 'full')
    stored, meta = training.stored('2.3', with_facts=True)
    assert facts['steps'] == meta['steps'] and facts['printed'] == meta['printed']
    assert check('2.3', answer)
    same = np.allclose(answer['tok_emb'], stored['tok_emb'], rtol=1e-6, atol=1e-9)
    print(f'weights equal to the stored ones to 1e-6: {same}')
