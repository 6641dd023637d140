"""The loader's entry points: a text or a file in, a validated params dict out."""
from .build import build
from .errors import ProgramError
from .parse import as_text, parse, parse_json


def load_program(text):
    """Read a TAOTP program (the book's dict literal, or JSON) into a params dict.

    No code is executed: only dict / list / number / string-key syntax is
    accepted (``taotp.interpreter.parse``).  Omitted fields get their defaults
    and every field is checked by ``taotp.param_problems``
    (``taotp.interpreter.build``).

    Args:
        text: the program, a str (or UTF-8 bytes).

    Returns:
        The params dict: float64 arrays, tied ``out_emb`` copied from ``tok_emb``.

    Raises:
        ProgramError: naming the line and the field of the first problem found.

    >>> params = load_program('{"tok_emb": [[1, -1], [-1, 1]], "block_size": 4}')
    >>> taotp.decode([0], params, max_steps=3).tolist()
    [0, 0, 0, 0]
    """
    text = as_text(text)
    tree = parse_json(text)              # plain JSON (what dump_program writes): fast
    if tree is not None:
        try:
            return build(tree)
        except ProgramError:             # read it again below to name the line
            pass
    return build(parse(text))


compile_TAOTP = load_program  # the book's name (Fig. 8.1), now safe and validated


def read_program(path):
    """``load_program`` on the text of a file; errors start with the file's path."""
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProgramError(f'read_program: cannot read {path}: '
                           f'{getattr(exc, "strerror", None) or exc}') from None
    try:
        return load_program(text)
    except ProgramError as exc:
        raise ProgramError(f'{path}: {exc}', exc.field, exc.line, exc.problems) from None
