"""Recognise a copy of a switched-off package function inside an answer's bytes.

cloudpickle sends each function of an answer with its code object's fields,
so the bytecode of every function the answer carries appears in its bytes.
The judge reads those bytes with ``pickletools`` (which executes nothing) and
compares each byte string with the bytecode of the functions the puzzle
switches off.  Arguments that index constants are masked, so a copy with its
docstring, comments or local names changed is still the same code; code
shorter than ``MIN_BYTES`` is not compared (a two-line wrapper is too easily
written independently).
"""
import dis
import functools
import importlib
import pickletools
import types

MIN_BYTES = 64
_MASKED = set(dis.hasconst) | {dis.opmap['EXTENDED_ARG']}


def _masked(code_bytes):
    out = bytearray(code_bytes)
    for i in range(0, len(out) - 1, 2):
        if out[i] in _MASKED:
            out[i + 1] = 0
    return bytes(out)


def _codes(obj, seen=None):
    """Every code object of a function, a class's methods, and the code nested in them."""
    seen = set() if seen is None else seen
    obj = getattr(obj, '_implementation', obj)
    obj = getattr(obj, '__wrapped__', obj)
    found = []
    if isinstance(obj, type):
        for member in vars(obj).values():
            inner = getattr(member, '__func__', member)
            for f in (inner, getattr(inner, 'fget', None)):
                if isinstance(f, types.FunctionType):
                    found += _codes(f, seen)
        return found
    code = getattr(obj, '__code__', obj)
    if not isinstance(code, types.CodeType) or id(code) in seen:
        return found
    seen.add(id(code))
    found.append(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _codes(const, seen)
    return found


def _resolve(dotted):
    parts = dotted.split('.')
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module('.'.join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


@functools.lru_cache(maxsize=None)
def fingerprints(names):
    """Masked bytecode -> the switched-off name it belongs to.

    Anonymous code (``<genexpr>``, ``<lambda>``, comprehensions) is left out: an idiom
    such as ``'+'.join(str(a) for a in xs)`` has the same bytecode wherever it is written.
    """
    table = {}
    for name in names:
        for code in _codes(_resolve(name)):
            if len(code.co_code) >= MIN_BYTES and not code.co_name.startswith('<'):
                table.setdefault(_masked(code.co_code), name)
    return table


def refused_copy(answer_bytes, refused):
    """The name of a switched-off function whose code the answer carries, or None."""
    if not refused:
        return None
    table = fingerprints(tuple(sorted(refused)))
    if not table:
        return None
    try:
        for opcode, arg, _ in pickletools.genops(answer_bytes):
            if isinstance(arg, bytes) and len(arg) >= MIN_BYTES and _masked(arg) in table:
                return table[_masked(arg)]
    except Exception:           # unreadable bytes: the worker will say what is wrong
        return None
    return None
