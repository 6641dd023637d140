"""Reading a TAOTP text into a tree of dicts, lists and numbers, without running any of it.

The text is parsed by Python's ``ast`` module and then walked node by node:
only dict and list (or tuple) displays, numbers with an optional sign and
quoted string keys are accepted.  A name, a call, an attribute, an operator or
anything else is refused before anything is evaluated, so reading a program
can never execute code.  JSON is a subset of this syntax; ``#`` comments work.

The tree remembers where things are: every ``LineDict`` knows its own line
and the line of each key, every ``LineList`` the line it starts on, so the
builder can name the line of a problem.  ``parse_json`` is a fast path for
plain JSON (what ``dump_program`` writes): the same tree, without lines.

    >>> tree = parse('{\\n  "tok_emb": [[1, -1]],\\n  "block_size": 2\\n}')
    >>> tree, tree.key_lines
    ({'tok_emb': [[1, -1]], 'block_size': 2}, {'tok_emb': 2, 'block_size': 3})
"""
import ast
import json
import re

from .errors import fail

MAX_DEPTH = 8      # nesting deeper than this is never a program (Q is 3 levels inside 3)


class LineList(list):
    """A list from the text, with the (1-based) ``line`` it starts on (None if unknown)."""
    line = None


class LineDict(dict):
    """A dict from the text, with its ``line`` and ``key_lines`` (key -> line of the key)."""
    line = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.key_lines = {}


_NODE_NAMES = {
    ast.Name: 'a name', ast.Call: 'a function call', ast.Attribute: 'an attribute',
    ast.BinOp: 'an arithmetic operator', ast.Subscript: 'indexing', ast.Lambda: 'a lambda',
    ast.ListComp: 'a comprehension', ast.GeneratorExp: 'a comprehension',
    ast.DictComp: 'a comprehension', ast.SetComp: 'a comprehension', ast.Set: 'a set',
    ast.JoinedStr: 'an f-string', ast.Compare: 'a comparison', ast.BoolOp: 'a boolean operator',
    ast.IfExp: 'a conditional expression', ast.Starred: 'star-unpacking',
}

_CONSTANT_KINDS = {bool: 'a boolean', str: 'a string', type(None): 'None',
                   complex: 'a complex number', bytes: 'bytes', type(...): 'an ellipsis'}


def _describe(node):
    """How an error names a refused node: 'the name 'inf'', 'a call of 'open'', ..."""
    if isinstance(node, ast.Name):
        return f'the name {node.id!r}'
    if isinstance(node, ast.Constant):
        return f'the constant {node.value!r}'[:60]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return f'a call of {node.func.id!r}'
    return _NODE_NAMES.get(type(node), type(node).__name__)


def _number(node):
    """The value of a numeric literal with any number of leading signs, or None."""
    negative = False
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        negative ^= isinstance(node.op, ast.USub)
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return -node.value if negative else node.value
    return None


def _line(node):
    """The node's line in the reader's text (the parser saw one extra line first)."""
    line = getattr(node, 'lineno', None)
    return None if line is None else max(line - 1, 1)


def _walk(node, depth=0):
    """Turn an ast node into LineDicts, LineLists and numbers; refuse every other node."""
    line = _line(node)
    if depth > MAX_DEPTH:
        fail(f'the literal is nested more than {MAX_DEPTH} levels deep; a program needs at '
             f'most {MAX_DEPTH}', line=line)
    if isinstance(node, ast.Dict):
        out = LineDict()
        out.line = line
        for key, value in zip(node.keys, node.values):
            if key is None:
                fail('star-unpacking (**) is not allowed in a program', line=line)
            if not (isinstance(key, ast.Constant) and type(key.value) is str):
                fail(f'dict keys must be quoted strings like "tok_emb"; got {_describe(key)}',
                     line=_line(key) or line)
            if key.value in out:
                fail(f'the key {key.value!r} appears twice in the same dict', field=key.value,
                     line=_line(key))
            out[key.value] = _walk(value, depth + 1)
            out.key_lines[key.value] = _line(key)
        return out
    if isinstance(node, (ast.List, ast.Tuple)):
        out = LineList(_walk(element, depth + 1) for element in node.elts)
        out.line = line
        return out
    value = _number(node)
    if value is not None:
        return value
    if isinstance(node, ast.Constant):
        kind = _CONSTANT_KINDS.get(type(node.value), 'a constant')
        fail(f'{kind} ({node.value!r}) is not allowed here; values are numbers, lists and '
             f'dicts (strings only as keys)', line=line)
    fail(f'{_describe(node)} is not allowed; a program holds only dicts, lists, numbers and '
         f'string keys (no code is ever run)', line=line)


def as_text(text):
    """The program text as a str (UTF-8 bytes are decoded); ProgramError otherwise."""
    if isinstance(text, (bytes, bytearray)):
        try:
            return bytes(text).decode('utf-8')
        except UnicodeDecodeError as exc:
            fail(f'the program is not UTF-8 text ({exc.reason} at byte {exc.start})')
    if not isinstance(text, str):
        fail(f'expected the program text as a str; got {type(text).__name__}')
    return text


def parse(text):
    """The tree of a program text, with line numbers; ``ProgramError`` naming the line if refused."""
    text = as_text(text)
    if not text.strip():
        fail('the program text is empty; expected a dict literal { "tok_emb": ... }')
    try:  # inside parentheses indentation is free; every line number shifts by one
        tree = ast.parse('(\n' + text + '\n)', mode='eval')
    except SyntaxError as exc:
        line = min(max(exc.lineno - 1, 1), text.count('\n') + 1) if exc.lineno else None
        msg = re.sub(r'on line (\d+)', lambda m: f'on line {int(m[1]) - 1}', exc.msg)
        fail(f'not a dict literal ({msg})', line=line)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        fail(f'could not parse the text ({type(exc).__name__}: {str(exc)[:80]})')
    try:
        return _walk(tree.body)
    except RecursionError:
        fail('the literal is nested too deeply')


class _NotPlainJSON(Exception):
    """The text is not JSON of numbers, lists and string-keyed dicts only."""


def parse_json(text):
    """Fast path: the tree of a plain-JSON text (no line numbers), or None to use ``parse``.

    None whenever the text is not JSON made only of numbers, lists and dicts
    with distinct keys (NaN, true, null, a string value, ...): ``parse`` then
    reads it and reports the problem with its line.
    """
    def pairs(items):
        out = LineDict()
        for key, value in items:
            if key in out:
                raise _NotPlainJSON
            out[key] = value
        return out

    def constant(name):  # NaN, Infinity, -Infinity
        raise _NotPlainJSON

    def check(value, depth):
        if depth > MAX_DEPTH:
            raise _NotPlainJSON
        if isinstance(value, list):
            return LineList(check(v, depth + 1) for v in value)
        if isinstance(value, dict):
            for key in value:
                value[key] = check(value[key], depth + 1)
            return value
        if type(value) in (int, float):
            return value
        raise _NotPlainJSON   # true, false, null or a string value

    try:
        return check(json.loads(text, object_pairs_hook=pairs, parse_constant=constant), 0)
    except (ValueError, RecursionError, _NotPlainJSON):
        return None
