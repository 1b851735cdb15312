"""Who uses a file's definitions: the project files outside a run that build its classes or call its functions.

A file linted alone (``pt2lint check layers.py``, a pre-commit run or an editor on the one
changed file) is compiled as part of what other files of its package build and call.  A
module class that another file's module class builds in its ``__init__`` (``self.block =
Block(dim)``) is never compiled on its own: its ``forward`` runs inside the parent's graph
with what the parent passes (``H, W`` from ``x.shape`` are ints there, not tensors).  A
function that another file's ``forward`` calls is traced with what that ``forward`` passes,
and its breaks are that model's breaks.  :func:`find_users` finds such files without
analysing the whole package: a byte search for a call of a wanted name in a file that
imports the defining module narrows the package to a few files, and only those are parsed
and their calls resolved through the project model
(:func:`pt2lint.analysis.driver.definitions_used_by`).

The search is bounded (:data:`MAX_SCANNED_FILES`, :data:`MAX_CANDIDATES`,
:data:`BUILDERS_PER_CLASS`, :data:`CALLERS_PER_FILE`); past a bound, a class not yet found
built is still taken for a top-level model and a function's other callers are not
analysed, as when the file is linted with nothing else.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from pt2lint.discovery import PYTHON_SUFFIXES, is_installed_code_dir, walk_tree

#: Files of the package read (bytes) when looking for builders, per search.
MAX_SCANNED_FILES = 4000
#: Files whose bytes call a wanted name that are parsed, per package searched.
MAX_CANDIDATES = 64
#: Builders found per class before the search for that class stops (each is analysed).
BUILDERS_PER_CLASS = 1
#: Files calling the functions of a linted file that are analysed for it.
CALLERS_PER_FILE = 2
#: Larger files are not read by the search (generated code, data).
MAX_SCANNED_BYTES = 2_000_000


def search_root(path: str) -> str:
    """The directory searched for builders of the classes of the file at ``path``.

    The top-level regular package holding the file (``pkg/`` for ``pkg/sub/layers.py``,
    every ``__init__.py`` directory above it counted), else the file's own directory: the
    code that can import the module by a relative or package name.
    """
    d = os.path.dirname(os.path.abspath(path))
    top = None
    while os.path.isfile(os.path.join(d, "__init__.py")):
        top = d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return top or os.path.dirname(os.path.abspath(path))


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


def _read_small(path: str) -> bytes:
    """The bytes of a regular, non-link file no larger than :data:`MAX_SCANNED_BYTES`, else ``b""``."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SCANNED_BYTES:
            return b""
        from pt2lint.reading import read_bytes

        return read_bytes(path, max_bytes=MAX_SCANNED_BYTES, what=None)
    except (OSError, ValueError):
        return b""


def _module_word(path: str) -> Optional[bytes]:
    """The name a module is imported by, as bytes: ``layers`` for ``pkg/layers.py``, ``pkg`` for
    ``pkg/__init__.py``; ``None`` when that is no identifier (``my model.py``: not importable)."""
    absolute = os.path.abspath(path)
    base = os.path.basename(absolute)
    stem = os.path.basename(os.path.dirname(absolute)) if base == "__init__.py" else os.path.splitext(base)[0]
    return stem.encode("utf-8") if stem.isidentifier() else None


def import_spellings(path: str, names: Iterable[str]) -> FrozenSet[bytes]:
    """Words one of which a file that imports the classes ``names`` of the module at ``path`` contains.

    The module's own name (``layers`` in ``from .layers import Block``, ``from pkg.layers
    import Block``, ``import pkg.layers as L``), and the name of each package above it whose
    ``__init__.py`` mentions one of ``names`` (a re-export: ``from pkg import Block``).
    """
    absolute = os.path.abspath(path)
    word = _module_word(absolute)
    out = {word} if word is not None else set()
    wanted = [n.encode("utf-8") for n in names]
    d = os.path.dirname(absolute)
    while os.path.isfile(os.path.join(d, "__init__.py")):
        init = _read_small(os.path.join(d, "__init__.py"))
        package = os.path.basename(d)
        if package.isidentifier() and any(n in init for n in wanted):
            out.add(package.encode("utf-8"))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return frozenset(out)


def _call_of(names: Iterable[str]) -> "re.Pattern[bytes]":
    """Bytes pattern of a call of one of ``names``, bare or as an attribute (``Block(``, ``layers.Block (``)."""
    alternatives = b"|".join(re.escape(n.encode("utf-8")) for n in sorted(names))
    return re.compile(rb"(?<![\w.])(?:\w+\s*\.\s*)*(?:" + alternatives + rb")\s*\(")


def _imports_word(words: Iterable[bytes]) -> "re.Pattern[bytes]":
    """Bytes pattern of an import statement naming one of ``words`` as a module or package
    (``from .layers import``, ``from pkg.layers import``, ``import pkg.layers as L``,
    ``from . import layers``, ``from pkg import (a, layers)``)."""
    alternatives = b"|".join(re.escape(w) for w in sorted(set(words)))
    word = rb"(?<![\w])(?:" + alternatives + rb")(?![\w])"
    return re.compile(
        rb"(?m)^[ \t]*(?:from[ \t]+[\w.]*" + word + rb"|import[ \t]+[\w., \t]*" + word
        + rb"|from[ \t]+[\w.]+[ \t]+import[ \t]*\(?[\w, \t\\\n]*" + word + rb")"
    )


def top_level_functions(data: bytes) -> FrozenSet[str]:
    """Names of the ``def``/``async def`` statements at column 0 of a module's bytes."""
    return frozenset(m.decode("utf-8", "replace") for m in re.findall(rb"(?m)^(?:async[ \t]+)?def[ \t]+(\w+)", data))


def find_users(
    classes: Mapping[str, FrozenSet[str]],
    functions: Mapping[str, FrozenSet[str]],
    settings,
    skip: Iterable[str] = (),
) -> Dict[str, Tuple[Set[Tuple[str, str]], Set[Tuple[str, str]]]]:
    """The project files, outside ``skip``, that build the wanted classes or call the wanted functions.

    Args:
        classes: ``abs path -> class names`` defined in that file whose builders are wanted
            (a builder: a ``nn.Module`` class constructing one in a method).
        functions: ``abs path -> top-level function names`` defined in that file whose
            callers are wanted (a caller: any function or method calling one, in a file
            that may hold a compiled region).
        settings: the run's :class:`~pt2lint.settings.LintSettings` (import roots).
        skip: absolute paths not to search (the files linted in the run: their analyses
            already say what they build and call).

    Returns:
        ``abs path of a user file -> (built, called)``, each a set of ``(abs path, name)``
        of the wanted definitions it builds or calls.  At most :data:`BUILDERS_PER_CLASS`
        builder files per class and :data:`CALLERS_PER_FILE` caller files per file of
        wanted functions are kept: the files that import the definition's module by name
        first, then those that may import it through a re-exporting package, each in path
        order; at most :data:`MAX_CANDIDATES` files are parsed per package.
    """
    from pt2lint.analysis.driver import definitions_used_by, may_contain_region

    skipped = {os.path.abspath(p) for p in skip}
    by_root: Dict[str, Dict[str, Tuple[FrozenSet[str], FrozenSet[str]]]] = {}
    for path in sorted(set(classes) | set(functions)):
        c, f = frozenset(classes.get(path, ())), frozenset(functions.get(path, ()))
        if (c or f) and _module_word(path) is not None:  # a file no import can name has no users
            by_root.setdefault(search_root(path), {})[os.path.abspath(path)] = (c, f)
    found: Dict[str, Tuple[Set[Tuple[str, str]], Set[Tuple[str, str]]]] = {}
    for root, targets in by_root.items():
        want_built = {(p, n) for p, (c, _f) in targets.items() for n in c}
        want_called = {(p, n) for p, (_c, f) in targets.items() for n in f}
        callers_left = {p: CALLERS_PER_FILE for p, (_c, f) in targets.items() if f}
        direct_import = _imports_word([_module_word(p) for p in targets])
        through_import = _imports_word([w for p, (c, f) in targets.items() for w in import_spellings(p, c | f)])
        call = _call_of({n for _p, n in want_built | want_called})
        # files that call one of the names and import a wanted module by name first, then
        # those that may import it through a re-exporting package
        direct: List[str] = []
        through: List[str] = []
        for path in _python_files(root):
            if path in skipped or path in targets:
                continue
            data = _read_small(path)
            if not data or call.search(data) is None:
                continue
            if not may_contain_region(data.decode("utf-8", "replace")):
                continue  # nothing in it is compiled: its calls reach nothing
            if direct_import.search(data) is not None:
                direct.append(path)
            elif through_import.search(data) is not None:
                through.append(path)
        parsed = 0
        for path in direct + through:
            names = {n for _p, n in want_built} | {n for p, n in want_called if callers_left.get(p, 0) > 0}
            if not names or parsed >= MAX_CANDIDATES:
                break
            data = _read_small(path)
            if _call_of(names).search(data) is None:
                continue  # calls only definitions whose users were found already
            parsed += 1
            built, called = definitions_used_by(path, data, settings)
            built &= want_built
            called = {(p, n) for p, n in called & want_called if callers_left.get(p, 0) > 0}
            if not built and not called:
                continue
            found[path] = (built, called)
            for key in built:
                want_built.discard(key)  # BUILDERS_PER_CLASS == 1
            for p in {p for p, _n in called}:
                callers_left[p] -= 1
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
