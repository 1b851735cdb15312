"""The project model: module names mapped to files, and imported names resolved to definitions.

Dynamo traces a compiled ``forward`` into every Python function it calls, in any
module.  The analysis follows it the same way: when a compiled region uses a name
bound by an import (``from .utils import clamp``, ``import pkg.ops as ops``,
``from ..layers import Block``), :class:`ProjectModel` finds the module's file
under the project's import roots, parses it once (LibCST), indexes it
(:class:`~pt2lint.analysis.index.ModuleIndex`) and returns the definition the
name stands for: a function, a class, a module, or a module-level value.

Import roots, in the order they are searched (as ``sys.path`` would hold them
when the project's code runs):

1. the directory above the entry file's top-level package (found by walking up
   while directories hold an ``__init__.py``, as mypy's crawl does);
2. the project root (the config file's directory, or the nearest directory
   holding ``pyproject.toml``/``setup.cfg``/``setup.py``/``.git``) and its ``src/``,
   plus the ``src`` setting (directories relative to the project root, as in ruff);
3. the entry file's own directory (a script's siblings are importable).

Resolution follows ``__init__.py`` re-exports, ``from x import *`` and chains of
imports, with cycles cut.  Installed libraries are not read: a name that resolves
to no file under the roots stays what it was (a qualified name such as
``torch.nn.functional.relu``).

Every file the model reads or looks for is recorded in :attr:`ProjectModel.deps`
(path -> sha256 of its bytes, or ``None`` when absent), and so is every directory it
looks for (the path with a trailing separator -> :data:`DIRECTORY`, or ``None``), so a
cached result can be reused only while none of them changed.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import OrderedDict
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import libcst as cst

from pt2lint.analysis.imports import STDLIB_MODULES, resolve_relative

#: Files that mark a project root when no config file names one.
ROOT_MARKERS: Tuple[str, ...] = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
#: Modules whose names never resolve to project files (the analysis knows them by name).
EXTERNAL_HEADS = frozenset({"torch", "numpy", "math", "builtins", "typing", "functools", "collections", "itertools"})
#: Largest file the project model reads (bytes); bigger ones are left unresolved.
MAX_MODULE_BYTES = 4 * 1024 * 1024

#: The :attr:`ProjectModel.deps` value of a path ending in ``os.sep`` that is a directory.
DIRECTORY = hashlib.sha256(b"pt2lint: a directory").hexdigest()

# LibCST modules kept between entry files in one process: path -> (sha256 of the bytes, Module).
_PARSED: "OrderedDict[str, Tuple[str, cst.Module]]" = OrderedDict()
_PARSED_MAX = 256
# Top-level functions and classes of imported modules, parsed one at a time: many, and small.
_PIECES: "OrderedDict[str, Tuple[str, cst.Module]]" = OrderedDict()
_PIECES_MAX = 4096


# LibCST parses done by this process, per ``path#part`` key (``part`` '' for a module's base,
# else the top-level name of the piece): what :func:`parse_counts` reports.
_PARSE_COUNTS: Dict[str, int] = {}


def parse_counts() -> Dict[str, int]:
    """How many times this process parsed each imported module piece with LibCST.

    Keys are ``"<abs path>#<part>"``: ``part`` is ``""`` for the module's text without its
    top-level functions and classes, else the name of the top-level ``def``/``class``.  A
    piece whose bytes are unchanged is parsed once per process while it stays in the
    in-process store (bounded: :data:`_PARSED_MAX` bases, :data:`_PIECES_MAX` pieces), so
    every entry file analysed by one worker after the first reuses it.  Returns a copy.
    """
    return dict(_PARSE_COUNTS)


def cached_module(path: str, digest: str, pieces: bool = False) -> Optional[cst.Module]:
    """The module parsed earlier in this process from the file at ``path`` with bytes of sha256 ``digest``."""
    store = _PIECES if pieces else _PARSED
    hit = store.get(path)
    if hit is not None and hit[0] == digest and digest:
        store.move_to_end(path)
        return hit[1]
    return None


def remember_module(path: str, digest: str, module: cst.Module, pieces: bool = False) -> None:
    """Keep ``module`` (parsed from ``path`` with bytes of sha256 ``digest``) for later analyses."""
    if not digest:
        return
    store, limit = (_PIECES, _PIECES_MAX) if pieces else (_PARSED, _PARSED_MAX)
    store[path] = (digest, module)
    store.move_to_end(path)
    while len(store) > limit:
        store.popitem(last=False)


def sha256_text(data: bytes) -> str:
    """Hex sha256 of ``data``: the identity of a file's content in :attr:`ProjectModel.deps`."""
    return hashlib.sha256(data).hexdigest()


def find_project_root(start: str) -> Optional[str]:
    """The nearest directory at or above ``start`` holding one of :data:`ROOT_MARKERS`, or ``None``."""
    d = os.path.abspath(start)
    while True:
        if any(os.path.exists(os.path.join(d, m)) for m in ROOT_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def package_root(path: str) -> str:
    """The directory above the top-level package holding ``path`` (its own directory if not in a package)."""
    d = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(d, "__init__.py")):
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return d


def is_installed_packages_dir(path: str) -> bool:
    """A ``site-packages``/``dist-packages`` folder (or one inside it): installed libraries, not the project."""
    parts = os.path.normpath(path).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def import_roots(path: str, project_root: str = "", src: Sequence[str] = ()) -> List[str]:
    """The directories imports of the file at ``path`` are resolved against, in search order.

    Args:
        path: the entry file.
        project_root: the configured project root ('' when none).
        src: extra import roots relative to the project root (the ``src`` setting).
    """
    roots: List[str] = []

    def add(d: Optional[str]) -> None:
        if d and os.path.isdir(d):
            d = os.path.abspath(d)
            if d not in roots:
                roots.append(d)

    add(package_root(path))
    for base in (project_root, find_project_root(os.path.dirname(os.path.abspath(path)))):
        if not base:
            continue
        for s in src:
            add(os.path.join(base, s))
        add(base)
        add(os.path.join(base, "src"))
    add(os.path.dirname(os.path.abspath(path)))
    return roots


def import_context(path: str, settings) -> Tuple[List[str], List[str]]:
    """``(import roots, library roots)`` that the analysis of the file at ``path`` resolves imports against.

    Args:
        path: the entry file (made absolute).
        settings: its :class:`~pt2lint.settings.LintSettings` (``project_root``, ``src``,
            ``follow_imports``).

    The roots depend on the file's place in the tree (``__init__.py`` files above it, the
    nearest root marker); the library roots (``sys.path``) count only when
    ``follow-imports`` names packages.  The result cache keys entries by them, so an
    identical file elsewhere, or one whose package changed shape, never shares an entry.
    """
    import sys

    roots = import_roots(os.path.abspath(path), getattr(settings, "project_root", "") or "", getattr(settings, "src", ()) or ())
    follow = tuple(getattr(settings, "follow_imports", ()) or ())
    library_roots = [p for p in sys.path if p and os.path.isdir(p)] if follow else []
    return roots, library_roots


def module_name_for(path: str, roots: Sequence[str]) -> Tuple[str, bool]:
    """(dotted module name, is a package) of the file at ``path`` under ``roots``.

    A file inside a regular package is named from the directory above the top-level
    package; otherwise from the deepest root that holds it (namespace packages), else
    by its bare name.
    """
    absolute = os.path.abspath(path)
    base = os.path.basename(absolute)
    is_package = base == "__init__.py"
    d = os.path.dirname(absolute)
    if os.path.isfile(os.path.join(d, "__init__.py")):
        top = package_root(absolute)
        candidates = [top]
    else:
        candidates = sorted((r for r in roots if absolute.startswith(r.rstrip(os.sep) + os.sep)), key=len, reverse=True)
    for root in candidates or [d]:
        rel = os.path.relpath(absolute, root)
        parts = rel.split(os.sep)
        if any(p in (os.pardir, "") for p in parts):
            continue
        if is_package:
            parts = parts[:-1]
        else:
            parts[-1] = parts[-1][:-3] if parts[-1].endswith(".py") else parts[-1]
        if parts and all(p.isidentifier() for p in parts):
            return ".".join(parts), is_package
    stem = base[:-3] if base.endswith(".py") else base
    return (stem if stem.isidentifier() else "__main__"), is_package


# The outline of imported modules (top-level def/class spans, lines, the text without them):
# path -> (sha256, outline or None when CPython cannot parse the file).
_OUTLINES: "OrderedDict[str, tuple]" = OrderedDict()
# Where the files with star imports bind their names: path -> (sha256, BindingOrder).
_ORDERS: "OrderedDict[str, tuple]" = OrderedDict()


def _outline(source: str):
    """``(defs, lines, base text)`` of a module: top-level ``def``/``class`` spans by name (first,
    last line, decorators included), its lines, and its text with those spans blanked."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    from pt2lint.lines import cut_form_feeds, split_lines

    # a statement indented with a form feed is valid for CPython but not for LibCST: the
    # pieces get the text the engine gives LibCST (same lines; columns on a cut line are
    # those of the cut text)
    source, _cuts = cut_form_feeds(source)
    lines = split_lines(source)  # numbered as ast numbers them
    defs: Dict[str, tuple] = {}
    rest = list(lines)
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([stmt.lineno] + [d.lineno for d in stmt.decorator_list])
            last = stmt.end_lineno or stmt.lineno
            defs[stmt.name] = (first, last)
            for n in range(first - 1, min(last, len(rest))):
                rest[n] = "\n" if rest[n].endswith(("\n", "\r")) else ""
    return defs, lines, "".join(rest)


class BindingOrder:
    """Where a module binds its top-level names, for ``from m import *`` to be resolved in order.

    Python binds a module's names as its statements run: a later ``from m import *``
    rebinds every public name ``m`` exports, whatever an earlier ``def``, ``class``,
    assignment or import bound it to, and a later explicit binding wins over an earlier
    star import.  Positions are ``(line, column)`` of the statement in the file.

    Attributes:
        bound: name -> position of the last explicit top-level binding (``import``,
            ``from m import n``, ``def``, ``class``, ``name = ...``), statements inside
            top-level ``if``/``try``/``with`` blocks included, ``if TYPE_CHECKING:`` excluded.
        stars: ``(position, module as written)`` of every top-level ``from m import *``, in
            order (``module`` keeps its leading dots, as :attr:`ModuleIndex.star_imports`).
    """

    __slots__ = ("bound", "stars")

    def __init__(self, source: str) -> None:
        import ast
        import warnings

        self.bound: Dict[str, Tuple[int, int]] = {}
        self.stars: List[Tuple[Tuple[int, int], str]] = []
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return
        self._collect(tree.body)

    def _collect(self, body) -> None:
        import ast

        for stmt in body:
            where = (stmt.lineno, stmt.col_offset)
            if isinstance(stmt, ast.ImportFrom):
                if any(a.name == "*" for a in stmt.names):
                    self.stars.append((where, "." * stmt.level + (stmt.module or "")))
                else:
                    for a in stmt.names:
                        self.bound[a.asname or a.name] = where
            elif isinstance(stmt, ast.Import):
                for a in stmt.names:
                    self.bound[a.asname or a.name.split(".", 1)[0]] = where
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound[stmt.name] = where
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            self.bound[n.id] = where
            elif isinstance(stmt, ast.If):
                test = stmt.test
                name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
                if name != "TYPE_CHECKING":
                    self._collect(stmt.body)
                self._collect(stmt.orelse)
            elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                bound, stars = dict(self.bound), len(self.stars)
                self._collect(stmt.body)
                tried = {n for n, w in self.bound.items() if bound.get(n) != w}
                star_tried = len(self.stars) > stars
                optional = any(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body)
                for h in stmt.handlers:
                    if not optional:
                        self._collect(h.body)
                        continue
                    # an optional import's fallback binds only what the ``try`` body did not
                    before_h, stars_h = dict(self.bound), len(self.stars)
                    self._collect(h.body)
                    for n in tried:
                        if n in before_h:
                            self.bound[n] = before_h[n]
                    if star_tried:
                        del self.stars[stars_h:]
                self._collect(stmt.orelse)
                self._collect(stmt.finalbody)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                self._collect(stmt.body)

    def stars_after(self, name: str) -> List[str]:
        """The star-imported modules (as written) that run after ``name``'s last explicit binding, last first."""
        since = self.bound.get(name)
        return [m for where, m in reversed(self.stars) if since is None or where > since]


def exported_by_star(index, name: str) -> bool:
    """``from <index's module> import *`` binds ``name``: listed in a literal ``__all__``, or,
    without one, a name not starting with ``_`` (the import system's rule).  A ``__all__``
    that is not a literal list or tuple of strings is taken to export every name."""
    if index is None or not hasattr(index, "global_exprs"):
        return False
    listed = index.global_exprs.get("__all__")
    if listed is None:
        return not name.startswith("_")
    if getattr(index, "all_grown", False):
        return True  # ``__all__ += [...]`` after the literal: more names than it lists
    if isinstance(listed, (cst.List, cst.Tuple)):
        names = set()
        for el in listed.elements:
            if not isinstance(el.value, cst.SimpleString):
                return True
            try:
                names.add(el.value.evaluated_value)
            except Exception:  # noqa: BLE001 - an odd literal: be lenient
                return True
        return name in names
    return True


def _compiles(source: str, path: str) -> bool:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(source, path, "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def load_outcome(found) -> Optional[str]:
    """What a :meth:`ProjectModel.load_module` call gave, comparable across project models: the
    module's file, ``"<namespace>"`` for a namespace package, ``None`` when nothing was found."""
    if found is None:
        return None
    return getattr(found, "path", None) or "<namespace>"


class GlobalRef:
    """A module-level name bound by assignment (``SCALE = 0.5``) in a project module."""

    __slots__ = ("index", "name")

    def __init__(self, index, name: str) -> None:
        self.index = index
        self.name = name


class ProjectModel:
    """Module files and resolved definitions for one analysis (one entry file and what it reaches).

    Args:
        roots: import roots, searched in order (see :func:`import_roots`).
        target: the lint target (``compile``/``export``/``cudagraphs``), passed to module indexes.
        overlay: ``abs path -> text`` of unsaved editor buffers, read instead of the disk.

    Attributes:
        modules: abs path -> :class:`~pt2lint.analysis.index.ModuleIndex` of every module loaded.
        deps: abs path -> sha256 of the bytes read, or ``None`` for a path looked for and absent.
    """

    def __init__(
        self,
        roots: Sequence[str],
        target: str = "compile",
        overlay: Optional[Mapping[str, str]] = None,
        entry_package: str = "",
        follow: Sequence[str] = (),
        library_roots: Sequence[str] = (),
    ) -> None:
        self.roots = [os.path.abspath(r) for r in roots]
        # From an installed-packages folder, only the linted package itself is project code.
        self.entry_package = entry_package
        # Installed packages the user asked to follow (``follow-imports``), and where to find them.
        self.follow = tuple(follow)
        self.library_roots = [os.path.abspath(r) for r in library_roots if os.path.abspath(r) not in self.roots]
        self.library_paths: set = set()  # files loaded from library_roots
        self.target = target
        self.overlay = dict(overlay or {})
        self.modules: Dict[str, object] = {}
        self.by_name: Dict[str, Optional[object]] = {}
        self.deps: Dict[str, Optional[str]] = {}
        self._dirs: Dict[str, bool] = {}
        self._texts: Dict[str, Optional[str]] = {}
        self._pieces: Dict[tuple, object] = {}
        self._resolving: set = set()
        self._orders: Dict[str, BindingOrder] = {}  # file path -> where its names are bound
        # while set, every module load and star-import probe is appended here with what it found,
        # hits included (``("load", dotted, load_outcome(...))``, ``("bind", dotted, name, bool)``):
        # see :mod:`pt2lint.analysis.foreign`
        self.lookup_log: Optional[list] = None

    # -- files ------------------------------------------------------------
    def _isdir(self, path: str) -> bool:
        """Whether ``path`` is a directory; the answer joins :attr:`deps` (``path`` + ``os.sep``:
        :data:`DIRECTORY` or ``None``), since a package directory appearing or going changes
        what an import resolves to."""
        hit = self._dirs.get(path)
        if hit is None:
            hit = self._dirs[path] = os.path.isdir(path)
            self.deps.setdefault(path.rstrip(os.sep) + os.sep, DIRECTORY if hit else None)
        return hit

    def _probe(self, path: str) -> bool:
        if path in self.overlay:
            return True
        exists = os.path.isfile(path)
        if not exists:
            self.deps.setdefault(path, None)
        return exists

    def find_module(self, dotted: str) -> Optional[Tuple[str, bool]]:
        """(abs path, is a package) of module ``dotted`` under the roots; a namespace package is ``("", True)``."""
        parts = dotted.split(".")
        if not all(p.isidentifier() for p in parts):
            return None
        namespace = None
        followed = self._followed(dotted)
        roots = self.roots + (self.library_roots if followed else [])
        for root in roots:
            if is_installed_packages_dir(root) and parts[0] != self.entry_package and not followed:
                continue
            d = os.path.join(root, *parts[:-1]) if len(parts) > 1 else root
            if len(parts) > 1 and not self._isdir(d):
                continue
            pkg = os.path.join(d, parts[-1])
            if self._isdir(pkg):
                init = os.path.join(pkg, "__init__.py")
                if self._probe(init):
                    return init, True
                if namespace is None:
                    namespace = pkg
            mod = pkg + ".py"
            if self._probe(mod):
                return mod, False
        if namespace is not None:
            return "", True
        return None

    def _followed(self, dotted: str) -> bool:
        """``dotted`` is a followed package, inside one, or a parent package of one."""
        return any(dotted == f or dotted.startswith(f + ".") or f.startswith(dotted + ".") for f in self.follow)

    def _may_bind(self, dotted: str, name: str) -> bool:
        """Cheap, lossless test before parsing a star-imported module: can it bind ``name``?

        A module binds a name only if its text holds the identifier (or it re-exports with a
        star import of its own); a package ``__init__`` full of ``from .x import *`` lines
        (timm's ``models``, transformers' ``models``) is then searched without parsing every
        module it names.
        """
        if self.lookup_log is None:
            return self._bind_probe(dotted, name)
        found = self._bind_probe(dotted, name)
        self.lookup_log.append(("bind", dotted, name, found))
        return found

    def _bind_probe(self, dotted: str, name: str) -> bool:
        if dotted in self.by_name:
            return True  # already parsed (or known absent)
        found = self.find_module(dotted)
        if found is None or not found[0]:
            return found is not None
        text = self._peek(found[0])
        if text is None:
            return False
        return "import *" in text or re.search(r"\b%s\b" % re.escape(name), text) is not None

    def _peek(self, path: str) -> Optional[str]:
        """The text of a project file, read once per model (its hash joins :attr:`deps`)."""
        if path not in self._texts:
            self._texts[path] = self._read(path)
        return self._texts[path]

    def is_library(self, path: str) -> bool:
        """The file was loaded from an installed package (``follow-imports``), not from the project."""
        return path in self.library_paths

    def _read(self, path: str) -> Optional[str]:
        from pt2lint.engine import DecodeError, decode_source

        if path in self.overlay:
            text = self.overlay[path]
            self.deps[path] = sha256_text(text.encode("utf-8", "surrogatepass"))
            return text
        from pt2lint.reading import read_bytes

        try:  # regular files only (a FIFO named like a module never blocks), at most MAX_MODULE_BYTES
            data = read_bytes(path, max_bytes=MAX_MODULE_BYTES)
        except OSError:
            self.deps[path] = None
            return None
        self.deps[path] = sha256_text(data)
        try:
            return decode_source(data)
        except DecodeError:
            return None

    # -- modules ----------------------------------------------------------
    def add_entry(self, path: str, source: str, module: cst.Module, scan_compile_calls: bool, data: Optional[bytes] = None):
        """Index the entry file (already parsed by the engine) and register it under its module name."""
        from pt2lint.analysis.index import ModuleIndex

        absolute = os.path.abspath(path)
        name, is_package = module_name_for(absolute, self.roots)
        index = ModuleIndex(module, self.target, scan_compile_calls=scan_compile_calls, import_readable=self._readable_from(name, is_package))
        self._attach(index, absolute, source, name, is_package)
        self.deps[absolute] = sha256_text(data if data is not None else source.encode("utf-8", "surrogatepass"))
        return index

    def _readable_from(self, name: str, is_package: bool):
        """``readable(level, module, names=())`` for the imports of module ``name``: the module an
        import names (``from <level dots><module> import <names>``) is one the analysis reads or
        knows -- a project (or followed) module that binds ``names``, torch and the libraries the
        analysis models (:data:`EXTERNAL_HEADS`), the standard library
        (``sys.stdlib_module_names``).  What is left is an optional extension or package the
        project may run without
        (``flash_attn``, ``apex``, its own compiled ``_C``): see
        :meth:`~pt2lint.analysis.index.ModuleIndex`'s ``try``/``except ImportError`` reading."""

        def readable(level: int, module: str, names: Sequence[str] = ()) -> bool:
            absolute = resolve_relative(name, is_package, level, module) if level else module
            head = absolute.split(".", 1)[0]
            if not absolute or head in EXTERNAL_HEADS or head in STDLIB_MODULES:
                return True
            mod = self.load_module(absolute)
            if mod is None:
                return False
            # ``from .fast import op``: the module must also bind ``op`` (a module whose body
            # raises ImportError, or that lacks the name, makes the import fail)
            return all(self.lookup(mod, [n]) is not None for n in names)

        return readable

    def _attach(self, index, path: str, source: str, name: str, is_package: bool) -> None:
        index.path = path
        index.full_source = source
        if not index.lazy_defs:
            index.source = source
        index.siblings = {n: f"{name}.{n}" for n in index.lazy_defs}
        index.name = name
        index.is_package = is_package
        index.project = self
        self.modules[path] = index
        self.by_name.setdefault(name, index)

    def load_module(self, dotted: str):
        """The :class:`ModuleIndex` of project module ``dotted`` (parsed once), a namespace marker, or ``None``."""
        if self.lookup_log is None:
            return self._load_module(dotted)
        log = self.lookup_log
        found = self._load_module(dotted)
        log.append(("load", dotted, load_outcome(found)))
        return found

    def _load_module(self, dotted: str):
        if dotted in self.by_name:
            return self.by_name[dotted]
        self.by_name[dotted] = None  # cut import cycles while loading
        found = self.find_module(dotted)
        if found is None:
            return None
        path, is_package = found
        if not path:
            ns = NamespacePackage(dotted)
            self.by_name[dotted] = ns
            return ns
        if path in self.modules:
            self.by_name[dotted] = self.modules[path]
            return self.modules[path]
        source = self._peek(path)
        if source is None:
            return None
        if not any(path.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots):
            self.library_paths.add(path)
        index = self._parse(path, source, dotted, is_package)
        if index is None:
            return None
        self._attach(index, path, source, dotted, is_package)
        self.by_name[dotted] = index
        return index

    def _parse(self, path: str, source: str, dotted: str = "", is_package: bool = False):
        """The index of an imported module (named ``dotted``), without its top-level functions and classes.

        Those are parsed one at a time, when a name resolves to them (:meth:`definition`):
        an imported module is mostly code no compiled region reaches, and LibCST's parse is
        the analysis' largest cost.  Top-level ``def``/``class`` statements are found with
        CPython's ``ast`` and blanked out (line structure kept, so positions stay right);
        what remains (imports, assignments, ``if``/``try`` blocks) is parsed with LibCST.
        """
        from pt2lint.analysis.index import ModuleIndex

        digest = self.deps.get(path) or ""
        outline = _OUTLINES.get(path)
        if outline is None or outline[0] != digest or not digest:
            outline = (digest, _outline(source))
            if digest:
                _OUTLINES[path] = outline
                while len(_OUTLINES) > _PARSED_MAX * 4:
                    _OUTLINES.popitem(last=False)
        else:
            _OUTLINES.move_to_end(path)
        if outline[1] is None:
            return None
        defs, lines, base_text = outline[1]
        module = self._parse_text(path, "", base_text, cpython_parses=True)
        if module is None:
            return None
        # only the entry's torch.compile calls are regions
        index = ModuleIndex(module, self.target, scan_compile_calls=False, import_readable=self._readable_from(dotted, is_package))
        index.lazy_defs = defs
        # a top-level ``def print`` / ``class Warning`` shadows the builtin of that name in
        # the module, though its body is parsed later (pieces copy these names when built)
        index.defined_names.update(defs)
        index.source = base_text
        index.file_lines = lines
        return index

    def _parse_text(self, path: str, part: str, text: str, cpython_parses: bool = False) -> Optional[cst.Module]:
        """LibCST module of ``text`` (a file, or a piece of one named ``part``), reused in the process.

        ``cpython_parses``: the caller knows CPython's parser accepts ``text`` (a top-level
        statement, or the rest, of a file that ``ast.parse`` read whole: :func:`_outline`),
        so deep or long code is not parsed with CPython a second time before LibCST's parse.
        """
        from pt2lint.nesting import looks_deeply_nested, run_on_big_stack, too_deep_for_python

        digest = self.deps.get(path) or ""
        key = f"{path}#{part}"
        module = cached_module(key, digest, pieces=bool(part))
        if module is not None:
            return module
        try:
            if looks_deeply_nested(text) is None:
                module = cst.parse_module(text)
            else:
                # long lines or deep brackets: only what CPython compiles, and on a big
                # stack (LibCST's parser recurses on the C stack), as the engine does
                if too_deep_for_python(text, path) is not None or not (cpython_parses or _compiles(text, path)):
                    return None
                module = run_on_big_stack(cst.parse_module, text)
        except (cst.ParserSyntaxError, RecursionError, MemoryError):
            return None
        finally:
            _PARSE_COUNTS[key] = _PARSE_COUNTS.get(key, 0) + 1
        remember_module(key, digest, module, pieces=bool(part))
        return module

    def loaded_indexes(self) -> list:
        """The ``ModuleIndex`` of every module read so far, whole or one definition at a time
        (a piece: the index of that definition's text)."""
        pieces = [getattr(d, "module", None) for d in list(self._pieces.values()) if d is not None]
        return list(self.modules.values()) + [p for p in pieces if p is not None]

    def definition(self, index, name: str):
        """The ``FunctionInfo``/``ClassInfo`` of top-level ``name`` of ``index``'s file, parsed on demand."""
        from pt2lint.analysis.index import ModuleIndex

        base = index.base or index
        key = (base.path, name)
        if key in self._pieces:
            return self._pieces[key]
        self._pieces[key] = None  # a def that refers to itself while being built
        span = base.lazy_defs.get(name)
        if span is None:
            return None
        first, last = span
        lines = base.file_lines
        text = "".join(lines[first - 1:last])
        module = self._parse_text(base.path, name, text, cpython_parses=True)
        if module is None:
            return None
        piece = ModuleIndex(module, self.target, scan_compile_calls=False, base=base)
        piece.path, piece.name, piece.is_package, piece.project = base.path, base.name, base.is_package, self
        piece.source, piece.full_source = text, base.full_source
        piece.line_offset = first - 1  # positions in the piece are this many lines above the file's
        fn = piece.functions.get(name)
        if fn is not None and self._registered_in_graph(base, name):
            fn.opaque = True  # Dynamo puts the call in the graph and never traces the body
        found = fn or piece.classes.get(name)
        self._pieces[key] = found
        return found

    def _registered_in_graph(self, base, name: str) -> bool:
        """Top-level function ``name`` of the installed library module ``base`` is registered
        with ``allow_in_graph`` by a call somewhere in its installed package (einops'
        operations): see :mod:`pt2lint.analysis.registrations`.  The files holding the
        registrations join :attr:`deps`."""
        if not base.name or not base.path or not is_installed_packages_dir(os.path.dirname(base.path)):
            return False
        from pt2lint.analysis.registrations import registered_in_graph

        parts = base.name.split(".")
        top = os.path.dirname(base.path)
        for _ in range(len(parts) - (1 if base.is_package else 2)):
            top = os.path.dirname(top)
        names, files = registered_in_graph(top, parts[0])
        for path, data in files:
            self.deps.setdefault(path, sha256_text(data))
        return f"{base.name}.{name}" in names

    # -- names ------------------------------------------------------------
    def absolute_name(self, index, qualified: str) -> Optional[str]:
        """``qualified`` with a leading ``.``/``..`` made absolute against ``index``'s package."""
        if not qualified.startswith("."):
            return qualified
        dots = len(qualified) - len(qualified.lstrip("."))
        rest = qualified[dots:]
        name = getattr(index, "name", "") or ""
        package = name if getattr(index, "is_package", False) else name.rpartition(".")[0]
        parts = package.split(".") if package else []
        up = dots - 1
        if up > len(parts) or (not parts and dots):
            return None
        base = parts[: len(parts) - up] if up else parts
        full = ".".join(base + ([rest] if rest else []))
        return full or None

    def resolve(self, index, qualified: str):
        """The definition an imported name stands for.

        Args:
            index: the module whose import bound the name.
            qualified: the import's target, ``"pkg.utils.clamp"`` or ``".utils.clamp"``.

        Returns:
            a ``FunctionInfo``, ``ClassInfo``, ``ModuleIndex``, :class:`NamespacePackage`,
            :class:`GlobalRef`, or ``None`` when no project file defines it.
        """
        full = self.absolute_name(index, qualified)
        if full is None:
            return None
        key = full
        if key in self._resolving:
            return None
        parts = full.split(".")
        if parts[0] in EXTERNAL_HEADS or self.load_module(parts[0]) is None:
            return None
        self._resolving.add(key)
        try:
            bound = self._bound_in_parent(parts)
            if bound is not None:
                return bound
            for i in range(len(parts), 0, -1):
                mod = self.load_module(".".join(parts[:i]))
                if mod is not None:
                    return self.lookup(mod, parts[i:])
            return None
        finally:
            self._resolving.discard(key)

    def external_name(self, index, qualified: str, depth: int = 0) -> Optional[str]:
        """The absolute name of a library object that ``qualified`` (a name imported into
        ``index``) stands for when a project module re-binds it (``say = print``,
        ``warn = warnings.warn``, ``from torch.nn import functional as F`` re-exported by a package):
        ``"builtins.print"``, ``"warnings.warn"``; ``None`` when it is a project definition or is not
        bound that way.  Import cycles end after a few hops."""
        full = self.absolute_name(index, qualified)
        if full is None or depth > 8:
            return None
        parts = full.split(".")
        if parts[0] in EXTERNAL_HEADS or self.load_module(parts[0]) is None:
            return None  # not a name of the project
        for i in range(len(parts) - 1, 0, -1):
            mod = self.load_module(".".join(parts[:i]))
            if mod is None:
                continue
            if isinstance(mod, NamespacePackage):
                return None
            name, rest = parts[i], parts[i + 1:]
            tail = "".join(f".{r}" for r in rest)
            target = mod.imports.names.get(name)
            if target is None:
                builtin = _builtin_alias(mod, name)
                return f"builtins.{builtin}{tail}" if builtin else None
            if self.resolve(mod, target) is not None:
                return None  # a project definition
            if target.startswith(".") or target.split(".", 1)[0] not in EXTERNAL_HEADS and self.load_module(target.split(".", 1)[0]) is not None:
                return self.external_name(mod, target + tail, depth + 1)
            return target + tail
        return None

    def _bound_in_parent(self, parts: Sequence[str]):
        """``pkg.name`` where ``pkg/__init__.py`` itself binds ``name`` (``from .odeint import odeint``):
        the package's attribute, which is what ``from pkg import name`` and ``pkg.name`` give in
        Python even when a submodule ``pkg/name.py`` exists; ``None`` when the package does not bind it."""
        if len(parts) < 2:
            return None
        parent = self.load_module(".".join(parts[:-1]))
        if parent is None or isinstance(parent, NamespacePackage) or not getattr(parent, "is_package", False):
            return None
        name = parts[-1]
        if name in parent.functions or name in parent.classes or name in parent.imports.names:
            return self.lookup(parent, [name])
        return None

    def lookup(self, mod, rest: Sequence[str]):
        """Attribute path ``rest`` looked up in module ``mod`` (through re-exports and submodules)."""
        if not rest:
            return mod
        name, tail = rest[0], list(rest[1:])
        if isinstance(mod, NamespacePackage):
            sub = self.load_module(f"{mod.name}.{name}")
            return self.lookup(sub, tail) if sub is not None else None
        found = None
        starred = self.star_binding(mod, name)
        if starred is not None:
            found = self.resolve(mod, starred)  # a later ``from m import *`` rebound the name
        elif name in mod.functions:
            found = mod.functions[name]
        elif name in mod.classes and name not in mod.imports.names:
            found = mod.classes[name]
        elif name in getattr(mod, "lazy_defs", ()):
            found = self.definition(mod, name)
        elif name in mod.imports.names:
            found = self.resolve(mod, mod.imports.names[name])
        elif name in mod.global_exprs:
            found = GlobalRef(mod, name)
        if found is None and starred is None and getattr(mod, "is_package", False):
            found = self.load_module(f"{mod.name}.{name}")
        if found is None or not tail:
            return found
        from pt2lint.analysis.index import ClassInfo

        if isinstance(found, ClassInfo):
            if len(tail) == 1:
                return found.lookup_method(tail[0])
            return None
        if isinstance(found, (NamespacePackage,)) or hasattr(found, "functions"):
            return self.lookup(found, tail)
        return None

    def star_binding(self, index, name: str) -> Optional[str]:
        """The qualified name that module-level ``name`` of ``index`` stands for when its last
        binding is a ``from m import *`` (``"pkg.bad.helper"``, or what ``m`` imported it as),
        else ``None``.

        Python runs a module's statements in order: a star import after ``def helper`` or
        ``from .good import helper`` rebinds ``helper`` when ``m`` exports it (its literal
        ``__all__``, or its public names), and an explicit binding after the star import
        wins over it.  Star imports are searched last first; a module that cannot bind the
        name (:meth:`_may_bind`, a text search) is not parsed.
        """
        stars = getattr(index, "star_imports", None)
        if not stars or isinstance(index, NamespacePackage):
            return None
        order = self._binding_order(index)
        if order.stars:
            candidates = [m for m in order.stars_after(name) if m in stars]
        elif self._binds_explicitly(index, name):
            return None  # positions unknown (CPython could not parse the file): explicit first
        else:
            candidates = list(reversed(stars))
        for star in candidates:
            target = self.absolute_name(index, star)
            key = f"*{target}:{name}"
            if not target or key in self._resolving or not self._may_bind(target, name):
                continue
            sub = self.load_module(target)
            if sub is None or sub is index or isinstance(sub, NamespacePackage) or not exported_by_star(sub, name):
                continue
            self._resolving.add(key)
            try:
                found = self.star_binding(sub, name)
                if found is None and self._binds_explicitly(sub, name):
                    if name in sub.imports.names and name not in sub.functions and name not in getattr(sub, "lazy_defs", ()):
                        found = self.absolute_name(sub, sub.imports.names[name])
                    else:
                        found = f"{sub.name}.{name}"
            finally:
                self._resolving.discard(key)
            if found is not None:
                return found
        return None

    @staticmethod
    def _binds_explicitly(index, name: str) -> bool:
        return (
            name in index.functions or name in index.classes or name in getattr(index, "lazy_defs", ())
            or name in index.imports.names or name in index.global_exprs
        )

    def _binding_order(self, index) -> BindingOrder:
        """The :class:`BindingOrder` of ``index``'s file, read once per model and, for a file whose
        bytes are known (:attr:`deps`), once per process while they do not change."""
        base = getattr(index, "base", None) or index
        path = getattr(base, "path", "")
        key = path or str(id(base))
        order = self._orders.get(key)
        if order is None:
            digest = self.deps.get(path) if path else None
            kept = _ORDERS.get(path) if digest else None
            if kept is not None and kept[0] == digest:
                order = kept[1]
                _ORDERS.move_to_end(path)
            else:
                order = BindingOrder(getattr(base, "full_source", "") or getattr(base, "source", ""))
                if digest:
                    _ORDERS[path] = (digest, order)
                    while len(_ORDERS) > _PARSED_MAX * 4:
                        _ORDERS.popitem(last=False)
            self._orders[key] = order
        return order

    def resolve_bases(self, index, bases: Sequence[object]) -> List[object]:
        """``bases`` of a class in ``index`` with qualified names of project classes replaced by their ``ClassInfo``."""
        from pt2lint.analysis.index import ClassInfo

        out: List[object] = []
        for b in bases:
            if isinstance(b, str) and b.split(".", 1)[0] not in EXTERNAL_HEADS:
                target = self.resolve(index, b)
                if isinstance(target, ClassInfo):
                    out.append(target)
                    continue
            out.append(b)
        return out

    def link(self, index) -> None:
        """Resolve the names the entry module passes to ``torch.compile`` that are imported from project modules.

        Base classes and decorators resolve lazily, when the analysis looks at them
        (:meth:`ClassInfo.link`, :meth:`FunctionInfo.link_decorators`).
        """
        if getattr(index, "linked", False):
            return
        index.linked = True
        from pt2lint.analysis.index import FunctionInfo

        for name in list(index.compiled_names):
            if name not in index.functions and name in index.imports.names:
                target = self.resolve(index, index.imports.names[name])
                if isinstance(target, FunctionInfo):
                    index.compiled_foreign.append(target)


def _builtin_alias(index, name: str) -> Optional[str]:
    """``b`` when module-level ``name`` of ``index`` is bound by ``name = b`` to a builtin of that
    name that the module does not shadow (``say = print``)."""
    import builtins

    expr = getattr(index, "global_exprs", {}).get(name)
    if not isinstance(expr, cst.Name) or expr.value in getattr(index, "defined_names", ()):
        return None
    return expr.value if callable(getattr(builtins, expr.value, None)) else None


class NamespacePackage:
    """A directory without ``__init__.py`` under an import root (PEP 420): its submodules resolve."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name
