"""The chapter's worked example, small enough to check by hand (values rounded to 4 places).

Three symbols with a "sticky" matrix (each token most often repeats its
parent; the stationary law is uniform), lags {1, 2, 3}, ten tokens.  The
chapter prints each computed number next to these; the tests compare them.

Rows of ``PTIL`` are positions 4..10 (1-based), columns lags 1, 2, 3; for
position 6 the parents x5 = 0, x4 = 2, x3 = 1 give P[0, 0] = .7, P[2, 0] = .2,
P[1, 0] = .1.  ``NETWORK`` holds, per ``beta`` (with ``lam = 500``), layer 3's
scores at query 10 minus ``lam`` (lags 1, 2, 3), its weights on the keys of
lags 1, 2, 3 and the output.
"""
import numpy as np

P = np.array([[.7, .2, .1], [.1, .7, .2], [.2, .1, .7]])
LAGS = (1, 2, 3)
TOKENS = np.array([2, 0, 1, 2, 0, 0, 2, 1, 1, 2])

PTIL = [(.2, .1, .7), (.2, .1, .7), (.7, .2, .1), (1 / 9, 1 / 9, 7 / 9), (.2, .4, .4),
        (.7, .1, .2), (2 / 11, 2 / 11, 7 / 11)]
LOG_LIKELIHOODS = (-10.1468, -14.0387, -6.9482)     # after all ten tokens
POSTERIOR = (.0392, .0008, .9600)
BMA = (.1039, .6765, .2196)
PROP1_BETA3 = (.3019, .1884, .5096)                  # Proposition 1's weights, beta = 3
NETWORK = {1.0: {'scores': (1.0643, 0.5310, 1.4047), 'weights': (.3342, .1961, .4697),
                 'output': (.1334, .4995, .3671)},
           10.0: {'scores': (10.643, 5.310, 14.047), 'weights': (.0322, .0002, .9677),
                  'output': (.1032, .6807, .2161)}}
