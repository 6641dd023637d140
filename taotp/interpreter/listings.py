"""The book's printed listings (Figs. 8.2 and 8.3), shipped as data files of the package."""
from importlib import resources

BOOK_LISTINGS = {
    'hello_world': 'hello_world_fig8_2.taotp',   # Fig. 8.2, one decimal, typed in as printed
    'min': 'min_fig8_3.taotp',                   # Fig. 8.3, one decimal, typed in as printed
    'min_2dp': 'min_fig8_3_2dp.taotp',           # the same program with two decimals
}

# Token ids of the Fig. 8.2 listing, recovered from its weights (Chapter 8 shows how): the
# book built its tokenizer from a Python set, so this order belongs to the printed run.
FIG_8_2_SYMBOLS = ('l', 'H', ' ', 'r', 'W', '!', 'd', 'o', 'e', '<bos>', '<eos>')


def book_listing(name):
    """The text of one of the book's listings (a key of ``BOOK_LISTINGS``).

    >>> book_listing('hello_world').split('\\n')[1]
    '    "tok_emb": ['
    """
    if name not in BOOK_LISTINGS:
        raise ValueError(f'book_listing: name must be one of {sorted(BOOK_LISTINGS)}; '
                         f'got {name!r}')
    return resources.files('taotp').joinpath('data', BOOK_LISTINGS[name]).read_text('utf-8')
