"""The command line ``python -m taotp run|info PROGRAM`` (Chapter 8)."""
import subprocess
import sys
from importlib import resources

import numpy as np
import pytest

import taotp
from taotp.interpreter import dump_program
from taotp.interpreter.cli import main as cli

DATA = resources.files('taotp').joinpath('data')
HELLO = str(DATA / 'hello_world_fig8_2.taotp')
MIN = str(DATA / 'min_fig8_3.taotp')
MIN_2DP = str(DATA / 'min_fig8_3_2dp.taotp')


def run(*args, stdin=None):
    return subprocess.run([sys.executable, '-m', 'taotp', *args], capture_output=True,
                          text=True, input=stdin, timeout=120)


# ----------------------------------------------------------------------------- as a subprocess

def test_run_hello_world_listing():
    res = run('run', HELLO, '--input', '9', '--steps', '13', '--eos', '10')
    assert res.returncode == 0 and res.stderr == ''
    assert res.stdout.strip().split('\n')[-1] == '9 1 8 0 0 7 2 4 7 3 0 6 5 10'


def test_run_min_listing_with_attention():
    res = run('run', MIN, '--input', '6 2 0 12 18 7 12', '--steps', '1', '--show-attention')
    assert res.returncode == 0 and res.stderr == ''
    lines = res.stdout.strip().split('\n')
    assert lines[-1] == '6 2 0 12 18 7 12 0'
    assert lines[0] == 'layer 0 head 0 attention (rows: queries, columns: keys):'
    # every query attends (hard) to the smallest token seen so far
    assert lines[3].split('|')[1].split() == ['0.00', '0.00', '1.00']
    assert len(lines) == 1 + 7 + 1   # header, one row per fed token, the result


def test_run_min_2dp_and_defaults():
    res = run('run', MIN_2DP, '--input', '5 3 7')
    assert res.returncode == 0
    assert res.stdout.strip().split('\n')[-1] == '5 3 7 3 3 3 3 3 3'   # fills the block of 8


def test_info():
    res = run('info', MIN)
    assert res.returncode == 0 and res.stderr == ''
    out = res.stdout
    for line in ('layers: 1', 'heads: [1]', 'd_model: 3', 'vocab_size: 20', 'block_size: 8',
                 'params: 123 total, 69 non-zero (outside the embeddings: 39 total, 11 non-zero)'):
        assert line in out


def test_program_from_stdin():
    res = run('info', '-', stdin='{"tok_emb": [[1, -1], [-1, 1]], "block_size": 3}')
    assert res.returncode == 0 and 'params: 10 total, 4 non-zero' in res.stdout


@pytest.mark.parametrize('args, stdin, pattern', [
    (('run', 'MISSING.taotp', '--input', '1'), None, 'cannot read MISSING.taotp'),
    (('info', '-'), "__import__('os').system('echo hacked')", 'a function call is not allowed'),
    (('run', MIN, '--input', '5 30'), None, 'token id 30 at index (1,), outside the vocabulary'),
    (('frobnicate', MIN), None, "invalid choice: 'frobnicate'"),
])
def test_bad_input_gives_one_line_and_nonzero_exit(args, stdin, pattern):
    res = run(*args, stdin=stdin)
    assert res.returncode != 0
    assert res.stdout == ''
    assert res.stderr.count('\n') == 1 and res.stderr.startswith('taotp: error: ')
    assert pattern in res.stderr
    assert 'hacked' not in res.stdout + res.stderr


@pytest.mark.parametrize('args, pattern', [
    (('info', '{"tok_emb": [[1, 2]], "block_size": 1, "layers": [{"M2": []}]}'),
     "load_program: line 1: layers[0] gives M2 but not M1"),
    (('run', MIN, '--input', '5 x'), "--input must be whole-number token ids"),
    (('run', MIN, '--input', '1 2 3', '--steps', '9'), 'block_size is 8'),
    (('run', MIN, '--input', '1', '--eos'), 'argument --eos: expected one argument'),
    (('run', MIN, '--input', '1', '--steps', 'many'), "argument --steps: invalid int value"),
    (('run', MIN), 'the following arguments are required: --input'),
    ((), 'the following arguments are required: command'),
])
def test_bad_input_in_process(args, pattern, tmp_path, capsys):
    if args and args[0] == 'info':   # a program text: write it to a file
        path = tmp_path / 'p.taotp'
        path.write_text(args[1])
        args = ('info', str(path))
    assert cli(list(args)) != 0
    out, err = capsys.readouterr()
    assert out == '' and err.count('\n') == 1 and err.startswith('taotp: error: ')
    assert pattern in err


# ----------------------------------------------------------------------------- in-process

def test_cli_in_process(tmp_path, capsys):
    path = tmp_path / 'prog.taotp'
    params = taotp.random_params(np.random.default_rng(0), vocab_size=5, block_size=6)
    path.write_text(dump_program(params))
    assert cli(['run', str(path), '--input', '1,2', '--steps', '3']) == 0
    want = ' '.join(map(str, taotp.decode([1, 2], params, max_steps=3)))
    assert capsys.readouterr().out.strip().split('\n')[-1] == want
    assert cli(['run', str(path), '--input', '1', '--steps', '9', '--window']) == 0
    assert len(capsys.readouterr().out.split()) == 10
    assert cli(['run', str(path), '--input', '1', '--steps', '-1']) == 2
    assert capsys.readouterr().err == 'taotp: error: --steps must be >= 0; got -1\n'
    assert cli(['run', str(path), '--input', '  ']) == 2
    assert 'is empty' in capsys.readouterr().err
    path.write_text('{"tok_emb": [[1, 2],\n [3]], "block_size": 1}')
    assert cli(['info', str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'line 2: tok_emb is ragged' in err
    no_heads = tmp_path / 'none.taotp'
    no_heads.write_text('{"tok_emb": [[1, -1], [-1, 1]], "block_size": 3}')
    assert cli(['run', str(no_heads), '--input', '0', '--show-attention']) == 0
    assert capsys.readouterr().out.split('\n')[0] == '(no attention heads)'
