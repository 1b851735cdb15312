"""Functions an installed library registers with ``allow_in_graph`` by a call.

``@torch.compiler.allow_in_graph`` on a ``def`` makes the function opaque to Dynamo: the
call goes into the graph as one node and its body is never traced (the index reads the
decorator).  Libraries also register functions by calling the same function, often when
they are imported: einops' ``_torch_specific.allow_ops_in_compiled_graph()`` runs
``allow_in_graph(rearrange)`` for its public operations.  A followed library
(``follow-imports``) whose functions were so registered must not be analysed as traced
code: Dynamo never enters them, so nothing inside them is a graph break.

:func:`registered_in_graph` scans the ``.py`` files of an installed package once per
process (a text test first, then CPython's ``ast`` on the files that name
``allow_in_graph``) and returns the qualified names registered with an argument that
names a function: a module-level ``def``, or a name bound by ``from M import f`` in the
same file.  A registration of a value computed at run time (einx's
``torch.compiler.allow_in_graph(op)`` of an op it builds) names nothing and is skipped.
"""

from __future__ import annotations

import ast
import os
from typing import Dict, FrozenSet, Tuple

from pt2lint.analysis.imports import ast_dotted_name, resolve_relative
from pt2lint.analysis.torch_api import OPAQUE_DECORATORS
from pt2lint.discovery import walk_tree

#: torch's registration functions (``torch.compiler.allow_in_graph``, ``torch._dynamo.allow_in_graph``).
_REGISTRARS = frozenset(n for n in OPAQUE_DECORATORS if n.endswith(".allow_in_graph"))
#: Files bigger than this (bytes) are not scanned.
_MAX_BYTES = 4 * 1024 * 1024
#: Package folders scanned in this process: folder -> (registered names, (path, bytes) of the
#: files holding a registration).
_SCANNED: Dict[str, Tuple[FrozenSet[str], Tuple[Tuple[str, bytes], ...]]] = {}


def registered_in_graph(package_dir: str, package: str) -> Tuple[FrozenSet[str], Tuple[Tuple[str, bytes], ...]]:
    """Qualified names (``"einops.einops.rearrange"``) that package ``package``, installed in
    ``package_dir`` (its folder, holding ``__init__.py``), registers with
    ``torch.compiler.allow_in_graph`` / ``torch._dynamo.allow_in_graph`` by a call, and the
    files where it does so with their bytes (for cache keys).

    Unreadable, undecodable and unparsable files are skipped: the scan never raises.
    """
    key = os.path.abspath(package_dir)
    hit = _SCANNED.get(key)
    if hit is not None:
        return hit
    names = set()
    files = []
    for dirpath, dirnames, filenames in walk_tree(key):  # iterative: any depth
        dirnames[:] = sorted(d for d in dirnames if d.isidentifier())
        for filename in sorted(filenames):
            if not filename.endswith(".py"):
                continue
            path = os.path.join(dirpath, filename)
            try:
                if os.path.getsize(path) > _MAX_BYTES:
                    continue
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if b"allow_in_graph" not in data:
                continue
            found = _scan(data, _module_name(key, package, path), filename == "__init__.py")
            if found:
                names |= found
                files.append((path, data))
    result = (frozenset(names), tuple(files))
    _SCANNED[key] = result
    return result


def _module_name(package_dir: str, package: str, path: str) -> str:
    rel = os.path.relpath(path, package_dir)[: -len(".py")].split(os.sep)
    if rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join([package, *rel])


def _scan(data: bytes, module: str, is_package: bool) -> FrozenSet[str]:
    """Names registered in one file (module ``module``; ``is_package``: an ``__init__.py``)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    bound: Dict[str, str] = {}  # local name -> qualified name, from any import in the file
    registrar_names = set()
    defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            src = resolve_relative(module, is_package, node.level, node.module)
            for alias in node.names:
                local = alias.asname or alias.name
                if f"{src}.{alias.name}" in _REGISTRARS:
                    registrar_names.add(local)
                bound[local] = f"{src}.{alias.name}"
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) != 1 or node.keywords:
            continue
        if not _is_registrar(node.func, registrar_names):
            continue
        arg = node.args[0]
        if not isinstance(arg, ast.Name):
            continue
        if arg.id in bound:
            out.add(bound[arg.id])
        elif arg.id in defs:
            out.add(f"{module}.{arg.id}")
    return frozenset(out)


def _is_registrar(func: ast.expr, registrar_names) -> bool:
    if isinstance(func, ast.Name):
        return func.id in registrar_names
    return ast_dotted_name(func) in _REGISTRARS
