"""Recognise a copy of a switched-off package function, in an answer's bytes or in code
an answer makes while it runs.

Code is compared as the sequence of its instructions' names (no inline caches or
no-ops), so constants, names, comments and line numbers do not matter; sequences that
agree in at least ``SIMILAR`` of their instructions (difflib's ratio) are the same code,
a copy with a few lines edited still.  Code of fewer than ``MIN_OPS`` instructions is
not compared, nor is the package's anonymous code (lambdas, comprehensions: idioms);
an answer's code is compared whatever its name.  The judge reads an answer's bytes
(and text, where bytecode may hide) with ``pickletools``, which executes nothing; the
worker's audit hook checks every code object compiled, built, unmarshalled or run after
the answer starts.

What this cannot do: the package's source is public, so a reader can retype a
switched-off function, or transform a copy until a fifth of its instructions differ;
and an answer can edit the hook (Python in its own process) before it makes code.  Such
an answer holds working code that does what the puzzle asks, typed or transformed by
the reader, and the walls (``sandbox``) still hold it.  Copies are recognised when they
are plain or lightly edited: what a reader tempted to paste one would submit.
"""
import difflib
import dis
import functools
import importlib
import pickletools
import sys
import types

MIN_OPS = 40
SIMILAR = 0.8
MAX_CODE_BYTES = 1 << 18
_SKIPPED = {'CACHE', 'NOP', 'RESUME', 'EXTENDED_ARG'}


def instructions(code_bytes):
    """The names of the instructions of raw bytecode, or None when it is not bytecode."""
    if not MIN_OPS <= len(code_bytes) // 2 or len(code_bytes) > MAX_CODE_BYTES \
            or len(code_bytes) % 2:
        return None
    names = []
    for op in code_bytes[::2]:
        name = dis.opname[op]
        if name.startswith('<'):
            return None
        if name not in _SKIPPED:
            names.append(name)
    return tuple(names) if len(names) >= MIN_OPS else None


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


def resolve(dotted):
    """The object a dotted name such as ``taotp.decoding.decode`` names."""
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
    """((instruction names, switched-off name), ...) for the named functions' code."""
    table = []
    for name in (n for n in names if not n.endswith('.*')):      # 'pkg.*': a whole package
        for code in _codes(resolve(name)):
            ops = instructions(code.co_code)
            if ops is not None and not code.co_name.startswith('<'):
                table.append((ops, name))
    return tuple(table)


CHECKER_HINT = 'the checkers\' own code is not available to an answer'


def checker_functions():
    """Dotted name -> function for every function the checker modules define
    (``taotp.exercises.ch01`` ..., ``draws``, ``training_checks``; loaded by ``registry()``):
    their references and case tables are the judge's, never an answer's."""
    found = {}
    for name, module in list(sys.modules.items()):
        if not (name.startswith('taotp.exercises.ch')
                or name in ('taotp.exercises.draws', 'taotp.exercises.training_checks')):
            continue
        for attr, obj in list(vars(module).items()):
            obj = getattr(obj, '__wrapped__', obj)                  # lru_cache wrappers
            if isinstance(obj, types.FunctionType) and obj.__module__ == name:
                found[f'{name}.{attr}'] = obj
    return found


def match(ops, table):
    """The switched-off name whose code ``ops`` copies, or None."""
    if ops is None:
        return None
    for theirs, name in table:
        if 2 * min(len(ops), len(theirs)) < SIMILAR * (len(ops) + len(theirs)):
            continue                                  # real_quick_ratio, before any set-up
        matcher = difflib.SequenceMatcher(None, ops, theirs, autojunk=False)
        if matcher.real_quick_ratio() >= SIMILAR and matcher.quick_ratio() >= SIMILAR \
                and matcher.ratio() >= SIMILAR:
            return name
    return None


def code_copy(code, table):
    """The switched-off name that ``code`` (or code nested in it) copies, or None."""
    if not table:
        return None
    for inner in _codes(code):                  # whatever its name (any name can be given)
        if found := match(instructions(inner.co_code), table):
            return found
    return None


def refused_copy(answer_bytes, refused):
    """The name of a switched-off function (one of ``refused``, or a checker's) whose code
    the answer carries, or None."""
    table = fingerprints(tuple(sorted(refused))) + fingerprints(tuple(sorted(checker_functions())))
    try:
        for _, arg, _ in pickletools.genops(answer_bytes):
            if isinstance(arg, str):                # bytecode may travel as text
                arg = arg.encode('latin-1', 'ignore')
            if isinstance(arg, bytes) and (found := match(instructions(arg), table)):
                return found
    except Exception:           # unreadable bytes: the worker will say what is wrong
        return None
    return None
