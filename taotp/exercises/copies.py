"""Recognise a copy of a switched-off package function, in an answer's bytes or in code
an answer makes while it runs.

Code is compared as the sequence of its instructions' names (no inline caches or
no-ops), so constants, names, comments and line numbers do not matter; sequences that
agree in at least ``SIMILAR`` of their instructions (difflib's ratio) are the same code,
a copy with a few lines edited still.  Code of fewer than ``MIN_OPS`` instructions is
not compared, nor is the package's anonymous code (lambdas, comprehensions: idioms);
an answer's code is compared whatever its name.  The judge reads an answer's bytes
(and text, where bytecode may hide) with ``pickletools``, which executes nothing; the
worker's audit hook (``hook``) checks every code object built, unmarshalled, run or made
a function after the answer starts.

What this cannot do: the package's source is public, so a reader can retype a
switched-off function, transform a copy until a fifth of its instructions differ
(round 9 padded every statement with dead stores; code over ``MAX_CODE_BYTES`` is not
compared either), or split it into functions none of which is four fifths of the
original (round 24 cut 9.11's builder in three); and an answer that writes memory or
makes functions with bytecode of its own gets past the hook (see ``hook``).  Such an
answer holds working code that does what the puzzle asks, typed or transformed by the
reader, and the walls (``sandbox``) still hold it.  Copies are recognised when they are
plain or lightly edited: what a reader tempted to paste one would submit.
"""
import dis
import functools
import importlib
import pickletools
import sys
import types

MIN_OPS = 40
SIMILAR = 0.8
MAX_CODE_BYTES = 1 << 18
SKIPPED = frozenset(('CACHE', 'NOP', 'RESUME', 'EXTENDED_ARG'))
OPNAMES = tuple(dis.opname)
CodeType = types.CodeType

# ``instructions``, ``nested_codes``, ``match`` and ``code_copy`` use nothing but builtins and
# the constants above: the worker's audit hook runs them with a private copy of their globals
# (``hook``), out of reach of an answer that patches modules.


def instructions(code_bytes):
    """The names of the instructions of raw bytecode, or None when it is not bytecode."""
    if type(code_bytes) is not bytes or not MIN_OPS <= len(code_bytes) // 2 \
            or len(code_bytes) > MAX_CODE_BYTES or len(code_bytes) % 2:
        return None
    names = []
    for op in code_bytes[::2]:
        name = OPNAMES[op]
        if name[:1] == '<':
            return None
        if name not in SKIPPED:
            names.append(name)
    return tuple(names) if len(names) >= MIN_OPS else None


def nested_codes(code):
    """``code`` and every code object nested in its constants (functions, classes)."""
    found, todo, seen = [], [code], set()
    while todo:
        code = todo.pop()
        if type(code) is CodeType and id(code) not in seen:
            seen.add(id(code))
            found.append(code)
            todo += code.co_consts
        elif type(code) is tuple or type(code) is frozenset:     # code built by hand
            todo += code
    return found


def _codes(obj):
    """Every code object of a function, a class's methods, and the code nested in them."""
    obj = getattr(obj, '_implementation', obj)
    obj = getattr(obj, '__wrapped__', obj)
    found = []
    if isinstance(obj, type):
        for member in vars(obj).values():
            inner = getattr(member, '__func__', member)
            for f in (inner, getattr(inner, 'fget', None)):
                if isinstance(f, types.FunctionType):
                    found += _codes(f)
        return found
    code = getattr(obj, '__code__', obj)
    return nested_codes(code) if isinstance(code, types.CodeType) else found


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


def matched(a, b):
    """How many items of ``a`` and ``b`` difflib's ``SequenceMatcher(None, a, b,
    autojunk=False)`` pairs up: the longest common run, then the same on either side."""
    where = {}
    for j, item in enumerate(b):
        where.setdefault(item, []).append(j)
    total, todo = 0, [(0, len(a), 0, len(b))]
    while todo:
        alo, ahi, blo, bhi = todo.pop()
        besti, bestj, size, runs = alo, blo, 0, {}
        for i in range(alo, ahi):
            longer = {}
            for j in where.get(a[i], ()):
                if j < blo:
                    continue
                if j >= bhi:
                    break
                k = longer[j] = runs.get(j - 1, 0) + 1
                if k > size:
                    besti, bestj, size = i - k + 1, j - k + 1, k
            runs = longer
        if size:
            total += size
            todo += [(alo, besti, blo, bestj), (besti + size, ahi, bestj + size, bhi)]
    return total


def match(ops, table):
    """The switched-off name whose code ``ops`` copies (difflib's ratio >= SIMILAR), or None."""
    if ops is None:
        return None
    counts = {}
    for op in ops:
        counts[op] = counts.get(op, 0) + 1
    for theirs, name in table:
        both = len(ops) + len(theirs)
        if 2 * min(len(ops), len(theirs)) < SIMILAR * both:
            continue                                  # the lengths alone rule it out
        left, common = dict(counts), 0
        for op in theirs:                             # the same items, in any order
            if left.get(op, 0) > 0:
                left[op] -= 1
                common += 1
        if 2 * common >= SIMILAR * both and 2 * matched(ops, theirs) >= SIMILAR * both:
            return name
    return None


def code_copy(code, table):
    """The switched-off name that ``code`` (or code nested in it) copies, or None."""
    if not table:
        return None
    for inner in nested_codes(code):            # whatever its name (any name can be given)
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
