"""Who builds a class: the project files outside a run whose module classes construct it.

A file linted alone (``pt2lint check layers.py``, a pre-commit run on the one changed
file) may define a module class that another file of its package builds in its
``__init__`` (``self.block = Block(dim)``).  Dynamo then never compiles ``Block`` on its
own: its ``forward`` runs inside the parent's graph with what the parent passes (``H, W``
from ``x.shape`` are ints there, not tensors).  :func:`find_builders` finds such parents
without analysing the whole package: a byte search for a call of the class's name
narrows the package's files to a few, and only those are parsed and their constructions
resolved through the project model (:func:`pt2lint.analysis.driver.classes_built_by`), as
the analysis of a linted file records what it builds.

The search is bounded (:data:`MAX_SCANNED_FILES`, :data:`MAX_CANDIDATES`,
:data:`BUILDERS_PER_CLASS`); past a bound, the classes not yet found built are left as
they were (top-level models), never dropped.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Dict, FrozenSet, Iterable, List, Mapping, Sequence, Set, Tuple

from pt2lint.discovery import PYTHON_SUFFIXES, is_installed_code_dir, walk_tree

#: Files of the package read (bytes) when looking for builders, per search.
MAX_SCANNED_FILES = 4000
#: Files whose bytes call a wanted class's name that are parsed, per search.
MAX_CANDIDATES = 64
#: Builders found per class before the search for that class stops (each is analysed).
BUILDERS_PER_CLASS = 1
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


def _module_word(path: str) -> bytes:
    """The name a module is imported by, as bytes: ``layers`` for ``pkg/layers.py``, ``pkg`` for ``pkg/__init__.py``."""
    absolute = os.path.abspath(path)
    base = os.path.basename(absolute)
    stem = os.path.basename(os.path.dirname(absolute)) if base == "__init__.py" else os.path.splitext(base)[0]
    return stem.encode("utf-8")


def import_spellings(path: str, names: Iterable[str]) -> FrozenSet[bytes]:
    """Words one of which a file that imports the classes ``names`` of the module at ``path`` contains.

    The module's own name (``layers`` in ``from .layers import Block``, ``from pkg.layers
    import Block``, ``import pkg.layers as L``), and the name of each package above it whose
    ``__init__.py`` mentions one of ``names`` (a re-export: ``from pkg import Block``).
    """
    absolute = os.path.abspath(path)
    out = {_module_word(absolute)}
    wanted = [n.encode("utf-8") for n in names]
    d = os.path.dirname(absolute)
    while os.path.isfile(os.path.join(d, "__init__.py")):
        init = _read_small(os.path.join(d, "__init__.py"))
        if any(n in init for n in wanted):
            out.add(os.path.basename(d).encode("utf-8"))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return frozenset(out)


def _call_of(names: Iterable[str]) -> "re.Pattern[bytes]":
    """Bytes pattern of a call of one of ``names``, bare or as an attribute (``Block(``, ``layers.Block (``)."""
    alternatives = b"|".join(re.escape(n.encode("utf-8")) for n in sorted(names))
    return re.compile(rb"(?<![\w.])(?:\w+\s*\.\s*)*(?:" + alternatives + rb")\s*\(")


def find_builders(
    wanted: Mapping[str, FrozenSet[str]], settings, skip: Iterable[str] = ()
) -> Dict[str, Set[Tuple[str, str]]]:
    """The project files, outside ``skip``, whose ``nn.Module`` classes build the wanted classes.

    Args:
        wanted: ``abs path -> class names`` defined in that file.
        settings: the run's :class:`~pt2lint.settings.LintSettings` (import roots).
        skip: absolute paths not to search (the files linted in the run: their analyses
            already say what they build).

    Returns:
        ``abs path of a builder file -> {(abs path, class name)}`` of the wanted classes it
        constructs in a method of one of its module classes, at most
        :data:`BUILDERS_PER_CLASS` builder files per class: the files that name the
        class's module first, then those that may import it through a re-exporting
        package, each in path order.
    """
    from pt2lint.analysis.driver import classes_built_by

    skipped = {os.path.abspath(p) for p in skip}
    by_root: Dict[str, Dict[str, FrozenSet[str]]] = {}
    for path, names in sorted(wanted.items()):
        if names:
            by_root.setdefault(search_root(path), {})[os.path.abspath(path)] = frozenset(names)
    found: Dict[str, Set[Tuple[str, str]]] = {}
    for root, targets in by_root.items():
        remaining = {(p, c) for p, names in targets.items() for c in names}
        call = _call_of({c for _p, c in remaining})
        modules = {p: _module_word(p) for p in targets}
        spellings = {p: import_spellings(p, names) for p, names in targets.items()}
        # files that call one of the names and import its module by name first, then those
        # that may import it through a re-exporting package
        direct: List[str] = []
        through: List[str] = []
        for path in _python_files(root):
            if path in skipped or path in targets:
                continue
            data = _read_small(path)
            if not data or call.search(data) is None:
                continue
            if any(modules[p] in data for p in targets):
                direct.append(path)
            elif any(w in data for p in targets for w in spellings[p]):
                through.append(path)
        counts: Dict[Tuple[str, str], int] = {}
        parsed = 0
        for path in direct + through:
            if not remaining or parsed >= MAX_CANDIDATES:
                break
            data = _read_small(path)
            if _call_of({c for _p, c in remaining}).search(data) is None:
                continue  # calls only classes whose builders were found already
            parsed += 1
            built = classes_built_by(path, data, settings) & remaining
            if not built:
                continue
            found[path] = built
            for key in built:
                counts[key] = counts.get(key, 0) + 1
                if counts[key] >= BUILDERS_PER_CLASS:
                    remaining.discard(key)
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
