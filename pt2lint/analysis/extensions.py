"""Names of installed third-party packages that a compiled extension module defines.

Dynamo traces Python bytecode; a function written in C (or Cython, or pybind11) that torch
does not know is a ``SkipFunctionVariable``, and calling it from compiled code breaks the graph
("Attempted to call function marked as skipped", GB0007).  Measured on torch 2.13:
``scipy.optimize.linear_sum_assignment(cost)`` (bound in ``scipy/optimize/__init__.py`` by
``from ._lsap import linear_sum_assignment``, ``_lsap`` being a ``.so``) breaks at the call.

:func:`extension_binding` finds, without importing anything, whether a qualified name of an
installed package resolves to a name bound by an extension module: it locates the package under
the installed-packages folders of the running interpreter's ``sys.path`` and follows the
``from .x import name`` statements of its ``__init__.py`` files (read with CPython's ``ast``)
until it reaches a Python definition (not an extension), an extension module, or something it
cannot follow (then it says nothing).  The standard library, torch, NumPy and packages the
Dynamo facts table knows are left to the other rules.
"""

from __future__ import annotations

import ast
import os
import sys
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

from pt2lint.analysis.imports import resolve_relative

#: Suffixes of extension module files (``importlib.machinery.EXTENSION_SUFFIXES`` of the
#: platform, plus the generic ones).
_EXTENSION_SUFFIXES: Tuple[str, ...] = tuple(
    dict.fromkeys(__import__("importlib.machinery").machinery.EXTENSION_SUFFIXES + [".so", ".pyd"])
)
#: Top-level packages handled elsewhere (torch's own ops, NumPy through ``torch._numpy``, the
#: packages the facts table and the other rules know by name).
_HANDLED_ELSEWHERE = frozenset({"torch", "numpy", "functorch", "torchvision", "torchaudio", "triton", "einops"})
_MAX_HOPS = 8
_SEARCH: Optional[Tuple[str, ...]] = None


def installed_package_dirs() -> Tuple[str, ...]:
    """The ``site-packages``/``dist-packages`` folders on the running interpreter's ``sys.path``
    (read once per process)."""
    global _SEARCH
    if _SEARCH is not None:
        return _SEARCH
    out = []
    for p in sys.path:
        if p and os.path.isdir(p):
            parts = os.path.normpath(p).split(os.sep)
            if "site-packages" in parts or "dist-packages" in parts:
                out.append(os.path.abspath(p))
    _SEARCH = tuple(dict.fromkeys(out))
    return _SEARCH


def extension_binding(qualname: str, search: Sequence[str]) -> Optional[str]:
    """The path of the extension module that defines ``qualname`` (``"scipy.optimize.linear_sum_assignment"``),
    or None: a Python definition, a name it cannot follow, a package not installed in ``search``,
    the standard library, or a package of :data:`_HANDLED_ELSEWHERE`.

    Args:
        qualname: a dotted name as the analysis qualifies a call (at least ``package.name``).
        search: installed-packages folders to look in, in order (:func:`installed_package_dirs`).
    """
    parts = qualname.split(".")
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return None
    head = parts[0]
    if head in _HANDLED_ELSEWHERE or head in getattr(sys, "stdlib_module_names", ()) or head in sys.builtin_module_names:
        return None
    return _resolve(tuple(parts), tuple(search))


@lru_cache(maxsize=4096)
def _resolve(parts: Tuple[str, ...], search: Tuple[str, ...]) -> Optional[str]:
    module, name = ".".join(parts[:-1]), parts[-1]
    for _ in range(_MAX_HOPS):
        found = _locate(module, search)
        if found is None:
            return None
        kind, path = found
        if kind == "extension":
            return path
        if kind == "package_dir":
            return None  # a namespace package: nothing binds names in it
        bindings = _bindings(path)
        target = bindings.get(name)
        if target is None:
            # maybe a submodule (``pkg.sub`` called as a function is no call of an extension)
            return None
        if target[0] == "python":
            return None
        src_module, src_name = target[1], target[2]
        if src_name is None:
            # ``from . import _ext`` then ``_ext`` itself is the name: a module, not a call target
            return None
        level = len(src_module) - len(src_module.lstrip("."))
        package_depth = module.count(".") + (1 if kind == "package" else 0)
        if level - 1 > package_depth:
            return None  # beyond the top-level package: an ImportError at run time
        module = resolve_relative(module, kind == "package", level, src_module[level:] or None)
        if not module:
            return None
        name = src_name
    return None


@lru_cache(maxsize=4096)
def _locate(module: str, search: Tuple[str, ...]) -> Optional[Tuple[str, str]]:
    """``("package", __init__.py)``, ``("module", x.py)``, ``("extension", x.so)``,
    ``("package_dir", dir)`` or None for an installed module."""
    rel = module.split(".")
    for root in search:
        base = os.path.join(root, *rel)
        init = os.path.join(base, "__init__.py")
        if os.path.isfile(init):
            return "package", init
        if os.path.isfile(base + ".py"):
            return "module", base + ".py"
        folder, stem = os.path.split(base)
        try:
            entries = os.listdir(folder)
        except OSError:
            entries = []
        for entry in sorted(entries):
            if not entry.startswith(stem + "."):
                continue
            middle = entry[len(stem):]  # ``.cpython-311-x86_64-linux-gnu.so``, ``.abi3.so``, ``.pyd``
            if middle in _EXTENSION_SUFFIXES or (middle.endswith((".so", ".pyd")) and middle.count(".") == 2):
                return "extension", os.path.join(folder, entry)
        if os.path.isdir(base):
            return "package_dir", base
    return None


@lru_cache(maxsize=2048)
def _bindings(path: str) -> Dict[str, Tuple[str, str, Optional[str]]]:
    """Top-level names the module at ``path`` binds: ``name -> ("python", "", None)`` for a
    ``def``/``class``/assignment, ``("import", module, source name)`` for ``from module import
    source as name`` (a later binding wins, as at run time; ``try``/``if`` bodies are read too,
    the first branch of a ``try`` being the one that runs when the import works)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(4 * 1024 * 1024)
        tree = ast.parse(data)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: Dict[str, Tuple[str, str, Optional[str]]] = {}
    _collect(tree.body, out)
    return out


def _collect(body: List[ast.stmt], out: Dict[str, Tuple[str, str, Optional[str]]]) -> None:
    for stmt in body:
        if isinstance(stmt, ast.ImportFrom):
            module = "." * stmt.level + (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                out[alias.asname or alias.name] = ("import", module if stmt.module else module + alias.name, None if not stmt.module else alias.name)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                out[alias.asname or alias.name.split(".")[0]] = ("python", "", None)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[stmt.name] = ("python", "", None)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out[n.id] = ("python", "", None)
        elif isinstance(stmt, ast.Try):
            _collect(stmt.body, out)  # the import that works; an ``except`` fallback is not read
        elif isinstance(stmt, ast.If):
            _collect(stmt.body, out)
