"""The one error of the TAOTP language: ``ProgramError``, naming the field and the line."""
from ..params import ParamsError


class ProgramError(ParamsError):
    """A TAOTP text that cannot be read as a program.

    The message starts with ``load_program:`` and names the line and the field.
    Attributes: ``field`` (e.g. ``"layers[0]['M2']"``, or ``None``), ``line``
    (1-based, or ``None`` when unknown) and ``problems`` (every problem found,
    each as ``"line N: ..."`` when its line is known).
    """

    def __init__(self, message, field=None, line=None, problems=None):
        super().__init__(message)
        self.field = field
        self.line = line
        self.problems = list(problems) if problems else [message]


def fail(what, field=None, line=None):
    """Raise ``ProgramError('load_program: line N: <what>')``."""
    where = f'line {line}: ' if line is not None else ''
    raise ProgramError(f'load_program: {where}{what}', field=field, line=line)
