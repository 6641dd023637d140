"""The package's layers, read from CONTRIBUTING.md, and every import of every module, judged.

CONTRIBUTING's table *is* the rule (one copy): each row names a layer, its modules (the
core's in their order) and, in backticks, the layers its modules may import.  This module
reads that table, finds every import of a module (static ones, relative or absolute, and
dynamic ones: ``importlib.import_module`` and ``__import__`` under any alias, with a
computed name judged as importing everything below its fixed prefix) and reports each
import the table forbids, each core module that imports one listed after it, and each
cycle among the imports that run when a module is loaded.

Everything works on source text, so ``tests/test_package.py`` can feed it a made-up
module and prove that a dodge is caught.
"""
import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / 'taotp'
CONTRIBUTING = ROOT / 'CONTRIBUTING.md'
TABLE_HEADING = '## The package: folders that follow the book'
ORDERED = 'core'            # the layer whose modules may import only those listed before them


@dataclass
class Layer:
    name: str
    modules: list                      # top-level names, in the table's order
    packages: set                      # those written with a trailing slash
    may_import: set                    # layer names
    units: str = 'layer'               # 'layer': one unit; 'module': each module is its own


@dataclass
class Import:
    target: str                        # dotted name ('taotp.sort'); 'taotp' for the root
    line: int
    how: str                           # 'import', 'from', 'import_module', '__import__', ...
    at_load: bool                      # runs when the module is loaded (not in a function)
    computed: bool = False             # a name computed at run time: everything below target


@dataclass
class Table:
    layers: dict = field(default_factory=dict)      # name -> Layer
    owner: dict = field(default_factory=dict)       # top-level module name -> Layer

    def order(self, top):
        return self.owner[top].modules.index(top)


def read_table(text=None):
    """The layer table of CONTRIBUTING.md (or of ``text``), or an AssertionError saying why."""
    text = CONTRIBUTING.read_text() if text is None else text
    assert TABLE_HEADING in text, f'CONTRIBUTING.md has no section {TABLE_HEADING!r}'
    rows = []
    for line in text.split(TABLE_HEADING, 1)[1].splitlines()[1:]:
        if line.startswith('|'):
            rows.append([cell.strip() for cell in line.strip().strip('|').split('|')])
        elif rows:
            break
    assert rows and rows[0][:3] == ['layer', 'modules', 'may import'], \
        f'the layer table must have the columns layer | modules | may import; got {rows[:1]}'
    table = Table()
    for cells in rows[2:]:
        name = cells[0].split()[0]
        names = re.findall(r'`([A-Za-z_][\w]*)(/?)`', cells[1])
        may = set(re.findall(r'`(\w+)`', cells[2]))
        layer = Layer(name, [n for n, _ in names], {n for n, slash in names if slash}, may,
                      units='module' if 'never another' in cells[2] else 'layer')
        table.layers[name] = layer
        for top in layer.modules:
            assert top not in table.owner, f'{top} is in two rows of the layer table'
            table.owner[top] = layer
    unknown = {m for layer in table.layers.values() for m in layer.may_import} - set(table.layers)
    assert not unknown, f'the layer table names layers that have no row: {sorted(unknown)}'
    return table


def package_modules():
    """{dotted name: (source text, is a package)} of every module file under taotp/."""
    found = {}
    for path in sorted(PACKAGE.rglob('*.py')):
        parts = path.relative_to(ROOT).with_suffix('').parts
        if parts[-1] == '__init__':
            found['.'.join(parts[:-1])] = (path.read_text(), True)
        else:
            found['.'.join(parts)] = (path.read_text(), False)
    return found


def top_name(dotted):
    """The name the layer table uses: ``taotp.sort.minmax`` -> ``sort``; the root -> ``__init__``."""
    return dotted.split('.')[1] if '.' in dotted else '__init__'


def unit(table, dotted):
    """(layer, unit) of a module: a chapter and an extra are units of their own."""
    layer = table.owner.get(top_name(dotted))
    if layer is None:
        return None, None
    return layer, (top_name(dotted) if layer.units == 'module' else layer.name)


# ----------------------------------------------------------------------------- reading imports

def _resolve(name, package):
    """``importlib.util.resolve_name`` without importing: '..sort' in 'taotp.search' -> taotp.sort."""
    if not name.startswith('.'):
        return name
    level = len(name) - len(name.lstrip('.'))
    if package is None:
        return None
    bits = package.split('.')
    if level > len(bits):
        return None
    base = '.'.join(bits[:len(bits) - level + 1])
    rest = name[level:]
    return f'{base}.{rest}' if rest else base


def _fixed_prefix(node):
    """(text, computed): the whole constant, or the constant start of an f-string or ``+``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, False
    if isinstance(node, ast.JoinedStr):
        text = ''
        for part in node.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                break
            text += part.value
        return text, True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        text, _ = _fixed_prefix(node.left)
        return text, True
    return '', True


def _dynamic_target(text, computed, package):
    """The module a dynamic import names, or for a computed name the deepest fixed package."""
    if text.startswith('.'):
        dots = len(text) - len(text.lstrip('.'))
        rest = text[dots:]
        if computed:                    # keep only the complete names of the fixed prefix
            rest = rest.rsplit('.', 1)[0] if '.' in rest else ''
        target = _resolve('.' * dots + rest, package)
        return target if target is not None else 'taotp'
    if computed:
        if not text:                    # nothing fixed: it could name any module
            return 'taotp'
        if not (text.startswith('taotp') or 'taotp'.startswith(text)):
            return None
        text = text.rsplit('.', 1)[0] if '.' in text else 'taotp'
        return text if text.startswith('taotp') else 'taotp'
    return text if text == 'taotp' or text.startswith('taotp.') else None


class _Reader(ast.NodeVisitor):
    def __init__(self, dotted, is_package, known):
        self.dotted, self.known = dotted, known
        self.package = dotted if is_package else dotted.rpartition('.')[0]
        self.found, self.depth = [], 0
        self.importlib_names = {'importlib'}       # names bound to the importlib module
        self.loader_names = {'__import__'}         # names bound to import_module / __import__
        self.loader_calls = set()                  # ids of the nodes that are call targets

    def add(self, target, node, how, computed=False):
        if target is not None:
            self.found.append(Import(target, node.lineno, how, self.depth == 0, computed))

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node):
        for alias in node.names:
            if alias.name == 'importlib' or alias.name.startswith('importlib.'):
                self.importlib_names.add(alias.asname or 'importlib')
            if alias.name == 'builtins':
                self.importlib_names.add(alias.asname or 'builtins')
            if alias.name == 'taotp' or alias.name.startswith('taotp.'):
                self.add(alias.name, node, 'import')

    def visit_ImportFrom(self, node):
        if node.level == 0 and node.module in ('importlib', 'builtins'):
            for alias in node.names:
                if alias.name in ('import_module', '__import__'):
                    self.loader_names.add(alias.asname or alias.name)
            return
        stem = _resolve('.' * node.level + (node.module or ''), self.package) if node.level \
            else node.module or ''
        if not stem or not (stem == 'taotp' or stem.startswith('taotp.')):
            return
        subs = [f'{stem}.{a.name}' for a in node.names if f'{stem}.{a.name}' in self.known]
        for sub in subs:
            self.add(sub, node, 'from')
        if node.module or len(subs) < len(node.names):     # `from .x import y` loads x
            self.add(stem, node, 'from')

    def _loader(self, func):
        """'import_module', '__import__' or None: what a called expression is."""
        if isinstance(func, ast.Name) and func.id in self.loader_names:
            return '__import__' if func.id == '__import__' else 'import_module'
        if isinstance(func, ast.Attribute) and func.attr in ('import_module', '__import__'):
            return func.attr
        return None

    def visit_Call(self, node):
        how = self._loader(node.func)
        if how:
            self.loader_calls.add(id(node.func))
            self._dynamic(node, how)
        self.generic_visit(node)

    def _argument(self, node, position, keyword):
        if len(node.args) > position:
            return node.args[position]
        return next((k.value for k in node.keywords if k.arg == keyword), None)

    def _package_of(self, arg):
        if arg is None:
            return None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        if isinstance(arg, ast.Name) and arg.id == '__name__':
            return self.dotted
        return self.package          # __package__, __spec__.parent, or anything else

    def _dynamic(self, node, how):
        name = self._argument(node, 0, 'name')
        text, computed = _fixed_prefix(name) if name is not None else ('', True)
        if how == '__import__':
            level_node = self._argument(node, 4, 'level')
            level = level_node.value if isinstance(level_node, ast.Constant) \
                and isinstance(level_node.value, int) else (0 if level_node is None else 1)
            text = '.' * level + text
            package = self.package
        else:
            package = self._package_of(self._argument(node, 1, 'package'))
        target = _dynamic_target(text, computed, package)
        self.add(target, node, how, computed)
        fromlist = self._argument(node, 3, 'fromlist') if how == '__import__' else None
        if target and not computed and isinstance(fromlist, (ast.List, ast.Tuple)):
            for item in fromlist.elts:
                if isinstance(item, ast.Constant) and f'{target}.{item.value}' in self.known:
                    self.add(f'{target}.{item.value}', node, how)

    def _indirect(self, node, what):
        self.add('taotp', node, f'indirect use of {what}', computed=True)

    def visit_Name(self, node):
        if node.id in self.loader_names and id(node) not in self.loader_calls:
            self._indirect(node, node.id)

    def visit_Attribute(self, node):
        if node.attr in ('import_module', '__import__') and id(node) not in self.loader_calls:
            self._indirect(node, node.attr)
        self.generic_visit(node)

    def visit_Constant(self, node):
        if node.value in ('import_module', '__import__'):     # getattr(importlib, '...')
            self._indirect(node, node.value)


def imports(dotted, source, is_package=False, known=()):
    """Every ``Import`` of the package that the module ``dotted`` (with this source) makes."""
    reader = _Reader(dotted, is_package, set(known))
    reader.visit(ast.parse(source))
    return reader.found


# ----------------------------------------------------------------------------- judging

def _owning_module(target, known):
    """The module file an import target loads: itself, or the nearest package above it."""
    while target not in known and '.' in target:
        target = target.rpartition('.')[0]
    return target


def judge(dotted, source, is_package=False, table=None, known=None):
    """(broken rules, load-time import targets) of one module with this source."""
    table = read_table() if table is None else table
    known = (set(package_modules()) if known is None else set(known)) | {dotted}
    src_layer, src_unit = unit(table, dotted)
    if src_layer is None:
        return [f'{dotted} is in no row of the layer table (CONTRIBUTING.md)'], set()
    found, loads = [], set()
    for imp in imports(dotted, source, is_package, known):
        where = f'{dotted} line {imp.line} ({imp.how})'
        target = _owning_module(imp.target, known)
        if imp.at_load and target != dotted:
            loads.add(target)
        if imp.target == 'taotp':
            if src_layer.name != 'above':
                found.append(f'{where} imports the package root'
                             + (' (a computed name: import by a fixed name)'
                                if imp.computed else ''))
            continue
        dst_layer, dst_unit = unit(table, imp.target)
        if dst_layer is None:
            found.append(f'{where} imports {imp.target}, which is in no layer')
        elif src_unit == dst_unit:
            if src_layer.name == ORDERED and top_name(dotted) != top_name(imp.target) \
                    and table.order(top_name(imp.target)) > table.order(top_name(dotted)):
                found.append(f'{where} imports {imp.target}: the core is ordered '
                             f'{" -> ".join(src_layer.modules)}; a module may import only '
                             f'those before it')
        elif dst_layer.name not in src_layer.may_import:
            found.append(f'{where} imports {imp.target} ({dst_layer.name}); '
                         f'{src_layer.name} may import {sorted(src_layer.may_import)}'
                         + ('' if src_unit == src_layer.name else
                            f' and its own {top_name(dotted)}'))
    return found, loads


def problems(modules=None, table=None):
    """Every broken rule of the package (or of ``modules``), cycles last, as readable lines.

    ``modules``: {dotted: (source, is_package)}, the package's own files by default.
    """
    modules = package_modules() if modules is None else modules
    table = read_table() if table is None else table
    found, edges = [], {}
    for dotted, (source, is_package) in sorted(modules.items()):
        broken, edges[dotted] = judge(dotted, source, is_package, table, modules)
        found += broken
    return found + [f'import cycle at load time: {" -> ".join(c)}' for c in cycles(edges)]


def cycles(edges):
    """One cycle (a list ending where it starts) per strongly connected group of ``edges``."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(node):             # Tarjan, recursive: the package has a few hundred modules
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                out.append(_a_cycle(sorted(group), edges))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return out


def _a_cycle(group, edges):
    """A path through ``group`` from its first member back to it."""
    members, start = set(group), group[0]
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop(0)
        for nxt in sorted(edges.get(path[-1], ())):
            if nxt == start:
                return path + [start]
            if nxt in members and nxt not in seen:
                seen.add(nxt)
                paths.append(path + [nxt])
    return group + [start]
