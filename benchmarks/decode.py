"""Naive vs KV-cached greedy decoding on a 2-layer program (not a test; prints a table).

    python benchmarks/decode.py            # 64, 256 and 1024 new tokens
    python benchmarks/decode.py 256        # just one length

The naive loop (the book's Fig. 1.2) re-runs the whole prefix for every new token,
so its cost grows with the square of the length (and attention with the cube);
the cached decoder computes each position's keys and values once.
"""
import sys
import time

import numpy as np

import taotp


def program(block_size, seed=0):
    """A random 2-layer, 4-head program, d_model 64 (about the size of a small chapter)."""
    rng = np.random.default_rng(seed)
    return taotp.random_params(rng, vocab_size=50, block_size=block_size, d_model=64,
                               n_layers=2, n_heads=4, d_head=16, d_ff=128, scale=0.3)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main(lengths):
    print(f'{"new tokens":>10} {"naive s":>9} {"cached s":>9} {"speedup":>8}  identical')
    for n in lengths:
        params = program(block_size=n + 1)
        prompt = np.array([1])
        naive, t_naive = timed(lambda: taotp.decode(prompt, params, n, cache=False))
        cached, t_cached = timed(lambda: taotp.decode(prompt, params, n, cache=True))
        same = np.array_equal(naive, cached)
        print(f'{n:>10} {t_naive:>9.3f} {t_cached:>9.3f} {t_naive / t_cached:>7.1f}x  {same}')
        if not same:
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main([int(a) for a in sys.argv[1:]] or [64, 256, 1024]))
