"""Who uses a file's definitions: the project files outside a run that build its classes or call its functions.

A file linted alone (``pt2lint check layers.py``, a pre-commit run or an editor on the one
changed file) is compiled as part of what other files of its package build and call.  A
module class that another file's module class builds in its ``__init__`` (``self.block =
Block(dim)``) is never compiled on its own: its ``forward`` runs inside the parent's graph
with what the parent passes (``H, W`` from ``x.shape`` are ints there, not tensors).  A
function that another file's ``forward`` calls (or stores and calls later), and a mixin
that another file's model derives from, are traced with what that ``forward`` passes, and
their breaks are that model's breaks.  :func:`find_users` finds such files without
analysing the whole package: a file must hold one of the wanted names as a word and have
an import statement that names the defining module, resolved from the file's own package
(:func:`imports_of`), and only those files are parsed and their calls resolved through
the project model (:func:`pt2lint.analysis.driver.definitions_used_by`).

The search is bounded (:data:`MAX_SCANNED_FILES`, :data:`MAX_CANDIDATES`,
:data:`BUILDERS_PER_CLASS`, :data:`CALLERS_PER_FILE`); past a bound, a class not yet found
built is still taken for a top-level model and a function's other callers are not
analysed, as when the file is linted with nothing else.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import warnings
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from pt2lint.analysis.project import package_root
from pt2lint.discovery import PYTHON_SUFFIXES, is_installed_code_dir, walk_tree

#: Files of the package read (bytes) when looking for users, per search.
MAX_SCANNED_FILES = 4000
#: Files holding a wanted name and importing its module that are parsed, per package searched.
MAX_CANDIDATES = 64
#: Builders found per class before the search for that class stops (each is analysed).
BUILDERS_PER_CLASS = 1
#: Files using the definitions of a linted file (calling, storing, building or deriving from
#: them) that are analysed for it.
CALLERS_PER_FILE = 2
#: Larger files are not read by the search unless the ``max-file-size`` setting allows more
#: (what ``check`` itself reads).
MAX_SCANNED_BYTES = 10 * 1024 * 1024


def search_root(path: str, project_root: Optional[str] = None) -> str:
    """The directory searched for the users of the definitions of the file at ``path``.

    The top-level regular package holding the file (``pkg/`` for ``pkg/sub/layers.py``,
    every ``__init__.py`` directory above it counted): the code that can import the module
    by a relative or package name.  A file in a folder without ``__init__.py`` (a namespace
    package, a flat folder of scripts) can be imported from anywhere in its project
    (``from pkg.sub.layers import Block`` next to ``pkg/``): the project root holding it
    (``project_root``: the nearest ``pyproject.toml``, ``setup.cfg`` or ``.git`` directory),
    else the file's own directory.
    """
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        if project_root:
            top = os.path.abspath(project_root)
            if os.path.commonpath([top, folder]) == top:
                return top
        return folder
    above = package_root(path)
    return os.path.join(above, os.path.relpath(folder, above).split(os.sep)[0])


def _python_files(root: str) -> List[str]:
    """Regular, non-link Python files under ``root`` (sorted), skipping hidden and installed-code directories."""
    out: List[str] = []
    for dirpath, dirnames, filenames in walk_tree(root):
        dirnames[:] = sorted(
            n for n in dirnames
            if not n.startswith(".") and not os.path.islink(os.path.join(dirpath, n))
            and not is_installed_code_dir(os.path.join(dirpath, n))
        )
        for name in filenames:
            if name.endswith(PYTHON_SUFFIXES):
                out.append(os.path.join(dirpath, name))
        if len(out) > MAX_SCANNED_FILES:
            break
    return sorted(out)[:MAX_SCANNED_FILES]


def _read_small(path: str, limit: int = MAX_SCANNED_BYTES) -> bytes:
    """The bytes of a regular, non-link file no larger than ``limit`` bytes, else ``b""``."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return b""
        from pt2lint.reading import read_bytes

        return read_bytes(path, max_bytes=limit, what=None)
    except (OSError, ValueError):
        return b""


_FROM_IMPORT = re.compile(rb"(?m)^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\r\n#;]*)")
_PLAIN_IMPORT = re.compile(rb"(?m)^[ \t]*import[ \t]+([^\r\n#;]*)")


def module_of(path: str) -> Optional[str]:
    """The dotted module name of the file at ``path`` from the directory above its top-level
    regular package (``pkg.sub.layers``), or its bare stem outside a package; ``None`` when a
    part is no identifier."""
    absolute = os.path.abspath(path)
    parts = os.path.relpath(absolute, package_root(absolute)).split(os.sep)
    if parts[-1] == "__init__.py":
        parts.pop()
    else:
        parts[-1] = os.path.splitext(parts[-1])[0]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def imported_modules(data: bytes, path: str) -> List[Tuple[str, FrozenSet[str]]]:
    """``(absolute module, names imported from it)`` of the import statements in a file's bytes
    (relative ones resolved from the file's package; ``import a.b`` gives ``("a.b", {})``).
    Read from the text: an import inside a string is counted too, which only costs a parse."""
    out: List[Tuple[str, FrozenSet[str]]] = []
    for spec, body in _from_clauses(data, path):
        names = frozenset(re.findall(r"([A-Za-z_]\w*|\*)(?:\s+as\s+\w+)?", body)) - {"as"}
        out.append((spec, names))
    for m in _PLAIN_IMPORT.finditer(data):
        for item in m.group(1).decode("utf-8", "replace").split(","):
            item = item.strip().split(" as ")[0].strip()
            if item and all(p.isidentifier() for p in item.split(".")):
                out.append((item, frozenset()))
    return out


def renamed_imports(data: bytes, path: str) -> List[Tuple[str, str, str]]:
    """``(absolute module, name, alias)`` of the ``from M import name as alias`` clauses in a
    file's bytes (relative modules resolved as :func:`imported_modules` does)."""
    out: List[Tuple[str, str, str]] = []
    for module, body in _from_clauses(data, path):
        pairs = re.findall(r"([A-Za-z_]\w*)\s+as\s+([A-Za-z_]\w*)", body)
        out.extend((module, name, alias) for name, alias in pairs if name != alias)
    return out


def _from_clauses(data: bytes, path: str) -> Iterable[Tuple[str, str]]:
    """``(absolute module, imported-names text without comments)`` of each ``from M import ...``
    statement in a file's bytes whose module resolves (:func:`_absolute`)."""
    for m in _FROM_IMPORT.finditer(data):
        module = _absolute(m.group(1).decode("utf-8", "replace"), path)
        if module:
            yield module, re.sub(r"#[^\n]*", "", m.group(2).decode("utf-8", "replace").strip("()"))


def _absolute(spec: str, path: str) -> Optional[str]:
    """The absolute module a ``from`` clause's ``spec`` (``.layers``, ``..``, ``pkg.layers``) names
    in the file at ``path``, or ``None`` when it climbs above the top-level package."""
    dots = len(spec) - len(spec.lstrip("."))
    if not dots:
        return spec or None
    own = module_of(path) or ""
    package = own.split(".") if os.path.basename(path) == "__init__.py" else own.split(".")[:-1]
    if dots - 1 > len(package):
        return None
    base = package[: len(package) - (dots - 1)]
    rest = spec[dots:]
    return ".".join([*base, rest] if rest else base) or None


_AS_CLAUSE = re.compile(rb"[\w)][ \t]+as[ \t]+\w")


def _mentioning(
    root: str, skipped: Set[str], wanted: Mapping[str, FrozenSet[str]], read: Callable[[str], bytes],
) -> Tuple[List[str], Dict[str, Dict[str, Tuple[str, str]]], Dict[str, List[Tuple[str, FrozenSet[str]]]]]:
    """The files under ``root`` (outside ``skipped``) that hold a wanted name, or a name one is
    re-exported under, as a word; the modules that re-export them; and what those files import.

    A module that imports a wanted definition provides it to the files that import it from
    there: ``from .layers import Block as TBlock`` in ``pkg/__init__.py`` makes ``TBlock``
    the name of ``pkg.layers``'s ``Block`` in ``pkg``, and ``from .layers import Block`` in
    ``pkg/api.py`` makes ``pkg.api`` a module ``Block`` can be imported from.  Chains of
    re-exports count, up to three steps.

    Args:
        root: the directory searched (:func:`search_root`).
        skipped: absolute paths not to read.
        wanted: ``dotted module -> wanted names`` (:func:`_by_module`).
        read: ``read(abs path) -> bytes`` of a file (``b""`` when it cannot be read).

    Returns:
        ``(paths in path order, {module: {name there: (defining module, name)}}, {path:
        imported_modules})``: the second maps each module that provides a wanted definition,
        the defining ones included, to the names it provides it under; the third is
        :func:`imported_modules` of each path found.
    """
    provides: Dict[str, Dict[str, Tuple[str, str]]] = {m: {n: (m, n) for n in names} for m, names in wanted.items()}
    pattern = _use_of({n for names in wanted.values() for n in names})
    found: List[str] = []
    missed: List[str] = []
    imports: List[Tuple[str, List[Tuple[str, FrozenSet[str]]], List[Tuple[str, str, str]]]] = []
    modules_of: Dict[str, List[Tuple[str, FrozenSet[str]]]] = {}

    def take(path: str, data: bytes) -> None:
        found.append(path)
        modules_of[path] = imported_modules(data, path)
        own = module_of(path)
        if own is not None:
            imports.append((own, modules_of[path], renamed_imports(data, path) if _AS_CLAUSE.search(data) else []))

    for path in _python_files(root):
        if path in skipped:
            continue
        data = read(path)
        if data and pattern.search(data):
            take(path, data)
        elif data:
            missed.append(path)
    for _round in range(3):
        new: Set[str] = set()
        for own, modules, renamed in imports:
            offered = [(module, name, name) for module, names in modules for name in names] + renamed
            for module, name, spelled in offered:
                origin = provides.get(module, {}).get(name)
                if origin is None or own == origin[0] or spelled in provides.get(own, {}):
                    continue
                provides.setdefault(own, {})[spelled] = origin
                new.add(spelled)
        if not new:
            break
        fresh = _use_of(new)
        still: List[str] = []
        for path in missed:
            data = read(path)
            if data and fresh.search(data):
                take(path, data)
            else:
                still.append(path)
        missed = still
    return sorted(found), provides, modules_of


def imports_of(data: bytes, path: str, targets: Mapping[str, FrozenSet[str]]) -> int:
    """How surely the file at ``path`` (bytes ``data``) imports one of ``targets`` (``abs path ->
    wanted names``): 2 when an import names the module itself (``from .layers import``,
    ``import pkg.layers``, ``from pkg import layers``), 1 when it imports a wanted name (or
    ``*``) from a package above it (a re-export), 0 otherwise."""
    return _import_strength(imported_modules(data, path), _by_module(targets))


def _by_module(targets: Mapping[str, FrozenSet[str]]) -> Dict[str, FrozenSet[str]]:
    """``dotted module name -> wanted names`` of ``targets`` (``abs path -> wanted names``)."""
    out: Dict[str, FrozenSet[str]] = {}
    for t, names in targets.items():
        name = module_of(t)
        if name:
            out[name] = names
    return out


def _import_strength(modules: Sequence[Tuple[str, FrozenSet[str]]], wanted: Mapping[str, FrozenSet[str]]) -> int:
    """:func:`imports_of` of a file's :func:`imported_modules`, with the targets already named by
    module (:func:`_by_module`)."""
    best = 0
    for module, names in modules:
        for target, target_names in wanted.items():
            parent, _, last = target.rpartition(".")
            if module == target or module.startswith(target + ".") or (module == parent and last in names):
                return 2
            if not parent and (module.endswith("." + target) or last in names):
                # a module outside any regular package (a namespace package, a flat folder):
                # an import may name it from any root (``from ns.layers import``, ``from ns import layers``)
                return 2
            if target.startswith(module + ".") and (names & target_names or "*" in names):
                best = 1
    return best


def top_level_functions(data: bytes) -> FrozenSet[str]:
    """Names of the functions a module's bytes define at module level (:func:`module_level_definitions`)."""
    return module_level_definitions(data)[0]


def top_level_classes(data: bytes) -> FrozenSet[str]:
    """Names of the classes a module's bytes define at module level (:func:`module_level_definitions`)."""
    return module_level_definitions(data)[1]


#: Statements whose bodies run at module level when they are at module level.
_MODULE_LEVEL_BLOCKS = (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.AsyncWith, ast.AsyncFor) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ()
)


def module_level_definitions(data: bytes) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """``(functions, classes)``: the names a module's bytes bind with ``def``/``async def`` and
    ``class`` at module level, also inside module-level ``if``/``try``/``with``/loop blocks
    (``try: from fused import op`` ``except ImportError: def op(x): ...``), not in a class or
    function.  Read with :mod:`ast` (the definitions only); bytes it cannot parse are read
    line by line: the statements at column 0."""
    try:
        with warnings.catch_warnings():  # ``"\d"`` in the linted code is not ours to warn about
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return (
            frozenset(m.decode("utf-8", "replace") for m in re.findall(rb"(?m)^(?:async[ \t]+)?def[ \t]+(\w+)", data)),
            frozenset(m.decode("utf-8", "replace") for m in re.findall(rb"(?m)^class[ \t]+(\w+)", data)),
        )
    functions: Set[str] = set()
    classes: Set[str] = set()
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
        elif isinstance(node, ast.ClassDef):
            classes.add(node.name)
        elif isinstance(node, _MODULE_LEVEL_BLOCKS):
            for part in ("body", "orelse", "finalbody"):
                todo.extend(getattr(node, part, ()))
            for handler in getattr(node, "handlers", ()):
                todo.extend(handler.body)
    return frozenset(functions), frozenset(classes)


def _use_of(names: Iterable[str]) -> "re.Pattern[bytes]":
    """Bytes pattern of one of ``names`` as a word: a file that calls one, derives a class from
    one (``class Block(MaskingMixin, nn.Module):``) or imports one under another name
    (``from .layers import Block as B``) holds it so."""
    alternatives = b"|".join(re.escape(n.encode("utf-8")) for n in sorted(names))
    return re.compile(rb"(?<![\w])(?:" + alternatives + rb")(?![\w])")


def find_users(
    classes: Mapping[str, FrozenSet[str]],
    functions: Mapping[str, FrozenSet[str]],
    settings,
    skip: Iterable[str] = (),
    intermediates: Optional[Dict[str, Set[Tuple[str, str]]]] = None,
    overlay: Optional[Mapping[str, str]] = None,
) -> Dict[str, Tuple[Set[Tuple[str, str]], Set[Tuple[str, str]]]]:
    """The project files, outside ``skip``, that build the wanted classes or call the wanted functions.

    Args:
        classes: ``abs path -> class names`` defined in that file whose builders are wanted
            (a builder: a ``nn.Module`` class constructing one in a method).
        functions: ``abs path -> top-level function and class names`` defined in that file
            whose users are wanted (a user: a file that may hold a compiled region, with a
            function or method calling one of the functions, or a class deriving from one
            of the classes, a mixin's methods running in its subclasses' ``forward``, or a
            module class building one).
        settings: the run's :class:`~pt2lint.settings.LintSettings` (import roots).
        skip: absolute paths not to search (the files linted in the run: their analyses
            already say what they build and call).
        intermediates: when given, receives ``abs path -> {(abs path, name)}`` for the files
            that use wanted functions but hold no compiled region (``ops.py`` calling
            ``utils.helper`` for ``model.py``): their own users are the ones to look for.
        overlay: ``abs path -> text`` read instead of the disk (an editor's buffers).

    Returns:
        ``abs path of a user file -> (built, called)``, each a set of ``(abs path, name)``
        of the wanted definitions it builds or calls.  At most :data:`BUILDERS_PER_CLASS`
        builder files per class and :data:`CALLERS_PER_FILE` caller files per file of
        wanted functions are kept: the files whose import statements name the definition's
        module (resolved from their own package: a ``from .layers import`` in a sibling
        package names another module) first, then those that import a wanted name from a
        package above it, each in path order; at most :data:`MAX_CANDIDATES` files are
        parsed per package.
    """
    from pt2lint.analysis.driver import definitions_used_by, may_contain_region

    skipped = {os.path.abspath(p) for p in skip}
    limit = getattr(settings, "max_file_size", None) or MAX_SCANNED_BYTES
    overlay = dict(overlay or {})

    def read(path: str) -> bytes:
        if path in overlay:
            return overlay[path].encode("utf-8", "surrogateescape")
        return _read_small(path, limit)
    by_root: Dict[str, Dict[str, Tuple[FrozenSet[str], FrozenSet[str]]]] = {}
    for path in sorted(set(classes) | set(functions)):
        c, f = frozenset(classes.get(path, ())), frozenset(functions.get(path, ()))
        if (c or f) and module_of(path) is not None:  # a file no import can name has no users
            by_root.setdefault(search_root(path, getattr(settings, "project_root", None)), {})[os.path.abspath(path)] = (c, f)
    found: Dict[str, Tuple[Set[Tuple[str, str]], Set[Tuple[str, str]]]] = {}
    for root, targets in by_root.items():
        want_built = {(p, n) for p, (c, _f) in targets.items() for n in c}
        want_called = {(p, n) for p, (_c, f) in targets.items() for n in f}
        callers_left = {p: CALLERS_PER_FILE for p, (_c, f) in targets.items() if f}
        wanted_modules = _by_module({p: c | f for p, (c, f) in targets.items()})
        files, provides, modules_of = _mentioning(root, skipped | set(targets), wanted_modules, read)
        reexported = {m: frozenset(names) for m, names in provides.items() if m not in wanted_modules}
        module_names = {p: module_of(p) for p in targets}

        def strength(modules: Sequence[Tuple[str, FrozenSet[str]]]) -> int:
            """:func:`_import_strength`, or 2 for a file importing a wanted name from a module that re-exports it."""
            how = _import_strength(modules, wanted_modules)
            if how < 2 and any(names & reexported.get(module, frozenset()) for module, names in modules):
                return 2
            return how

        def spellings(keys: Iterable[Tuple[str, str]]) -> Set[str]:
            """The names the wanted definitions ``keys`` (``(abs path, name)``) are used under: their own, and those they are re-exported under."""
            origins = {(module_names[p], n) for p, n in keys}
            return {n for _m, n in origins} | {s for names in provides.values() for s, origin in names.items() if origin in origins}

        # files that call one of the names and import a wanted module by name first, then
        # those that may import it through a re-exporting package
        direct: List[str] = []
        through: List[str] = []
        plain: List[str] = []  # importing files with no compiled region of their own
        for path in files:
            data = read(path)
            how = strength(modules_of[path])
            if not may_contain_region(data.decode("utf-8", "replace")):
                if intermediates is not None and how == 2:
                    plain.append(path)
                continue  # nothing in it is compiled: its calls reach nothing itself
            if how == 2:
                direct.append(path)
            elif how == 1:
                through.append(path)
        parsed = 0
        for path in direct + through:
            names = spellings(want_built | {(p, n) for p, n in want_called if callers_left.get(p, 0) > 0})
            if not names or parsed >= MAX_CANDIDATES:
                break
            data = read(path)
            if _use_of(names).search(data) is None:
                continue  # uses only definitions whose users were found already
            parsed += 1
            built, called = definitions_used_by(path, data, settings, overlay)
            # a module class that builds a wanted class uses it too (its analysis follows the
            # class's forward), whether or not that class needs a builder
            called = {(p, n) for p, n in (called | built) & want_called if callers_left.get(p, 0) > 0}
            built &= want_built
            if not built and not called:
                continue
            found[path] = (built, called)
            for key in built:
                want_built.discard(key)  # BUILDERS_PER_CLASS == 1
            for p in {p for p, _n in called}:
                callers_left[p] -= 1
        for path in plain:
            names = spellings((p, n) for p, n in want_called if callers_left.get(p, 0) > 0)
            if not names or parsed >= MAX_CANDIDATES:
                break
            data = read(path)
            if _use_of(names).search(data) is None:
                continue
            parsed += 1
            _built, called = definitions_used_by(path, data, settings, overlay)
            called = {(p, n) for p, n in called & want_called if callers_left.get(p, 0) > 0}
            if called:
                intermediates[path] = called
    return found


def standalone_classes(results: Sequence[object], root_of) -> Dict[int, FrozenSet[str]]:
    """``{index: class names}`` of the results with findings from a class of their own file analysed
    as a top-level model (``root_of(diagnostic) -> (abs path, class)``), minus the classes
    their own file builds."""
    out: Dict[int, FrozenSet[str]] = {}
    for i, r in enumerate(results):
        if getattr(r, "error", None):
            continue
        own = os.path.abspath(r.filename)
        names = {c for p, c in (root_of(d) for d in r.diagnostics) if p == own and c}
        names -= {c for p, c in r.submodules if p == own}
        if names:
            out[i] = frozenset(names)
    return out
