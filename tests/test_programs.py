"""Every program of the catalogue: it builds, its size matches the source, its examples decode."""
import pytest

import taotp
from taotp.programs import CATALOGUE, PROGRAMS
from taotp.reference import naive_transformer

KEYS = [p.key for p in PROGRAMS]


@pytest.fixture(scope='module')
def built():
    cache = {}

    def get(key):
        if key not in cache:
            cache[key] = CATALOGUE[key].build()
        return cache[key]
    return get


@pytest.mark.parametrize('key', KEYS)
def test_program_is_valid_and_matches_the_source_counts(key, built):
    program, params = CATALOGUE[key], built(key)
    taotp.validate_params(params)
    counts = taotp.count_params(params)
    non0 = taotp.count_non0_params(params)
    if program.source_total is not None:
        assert counts['n_params'] == program.source_total
    if program.source_non0 is not None:    # within a few: see each chapter for the cause
        assert abs(non0['n_params'] - program.source_non0) <= 8, non0


@pytest.mark.parametrize('key', [p.key for p in PROGRAMS if p.examples is not list])
def test_examples_decode_to_the_expected_tokens(key, built):
    params = built(key)
    examples = CATALOGUE[key].examples()
    assert examples
    for prompt, want, *kwargs in examples:
        got = taotp.decode(prompt, params, len(want), **(kwargs[0] if kwargs else {}))
        assert got[len(prompt):].tolist() == list(want), (prompt, want)


SMALL = ['hello-world-message', 'lookup-10', 'search-10', 'min-10', 'sort-28', 'mod-1-digit',
         'addition-1']


@pytest.mark.parametrize('key', SMALL)
def test_forward_picks_the_independent_references_tokens_on_the_examples(key, built):
    """The hand-set programs add and cancel constants up to 1e20, so their logits depend on
    the order of summation by far more than rounding; what they compute is the argmax."""
    params = built(key)
    prompt, want, *_ = CATALOGUE[key].examples()[0]
    tokens = list(prompt) + list(want)[:-1]
    got = taotp.transformer(tokens, **params)
    ref = naive_transformer(tokens, **params)
    n = len(prompt) - 1
    assert got[n:].argmax(-1).tolist() == ref[n:].argmax(-1).tolist() == list(want)
