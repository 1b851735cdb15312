"""Qualified names: resolve ``F.relu`` to ``torch.nn.functional.relu`` through imports and aliases.

Matching calls by qualified name (not by spelling) is what lets ``import torch as t``
or ``from torch.nn import functional as F`` still match, as TorchFix does.
"""

from __future__ import annotations

import ast
import sys
import unicodedata
from typing import Dict, List, Optional

import libcst as cst


#: The standard library's top-level modules of the running Python (``sys.stdlib_module_names``):
#: always importable, never an optional dependency; their callables are library callables.
STDLIB_MODULES = frozenset(getattr(sys, "stdlib_module_names", ()))


def identifier(name: str) -> str:
    """``name`` as Python binds it: identifiers are normalised to NFKC when the source is parsed
    (PEP 3131, the language reference's "Identifiers and keywords"), so ``ｆｏｒｗａｒｄ`` is ``forward``.

    ASCII names (nearly all) are returned as they are, without the cost of normalising.
    """
    return name if name.isascii() else unicodedata.normalize("NFKC", name)


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain (each part as Python binds it: NFKC), else ``None``."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(identifier(node.attr.value))
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(identifier(node.value))
        return ".".join(reversed(parts))
    return None


def qualify_dotted(names: Dict[str, str], dotted: Optional[str]) -> Optional[str]:
    """``dotted`` (``"F.relu"``) with its first part replaced by what ``names`` binds it to
    (``{"F": "torch.nn.functional"}`` gives ``"torch.nn.functional.relu"``); ``None`` when
    ``dotted`` is ``None`` or its first part is not bound."""
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    target = names.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def _module_name(node) -> str:
    if isinstance(node, cst.Name):
        return identifier(node.value)
    if isinstance(node, cst.Attribute):
        return f"{_module_name(node.value)}.{identifier(node.attr.value)}"
    return ""


class ImportMap:
    """Local names bound by import statements, mapped to the qualified names they stand for.

    ``import torch.nn as nn`` binds ``nn -> torch.nn``; ``import torch.nn`` binds
    ``torch -> torch``; ``from torch.nn import functional as F`` binds
    ``F -> torch.nn.functional``; relative imports map to ``.name`` (unresolved,
    so they never match a torch name).
    """

    def __init__(self) -> None:
        self.names: Dict[str, str] = {}

    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _module_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.names[identifier(alias.asname.name.value)] = full
            else:
                head = full.split(".", 1)[0]
                self.names[head] = head

    def add_import_from(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        base = _module_name(node.module) if node.module is not None else ""
        if node.relative:
            base = "." * len(node.relative) + base
        for alias in node.names:
            name = _module_name(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = identifier(alias.asname.name.value)
            if not base:
                self.names[local] = name
            elif base.endswith("."):  # ``from . import x``: ``.x``, the package's attribute
                self.names[local] = f"{base}{name}"
            else:
                self.names[local] = f"{base}.{name}"

    def copy(self) -> "ImportMap":
        other = ImportMap()
        other.names = dict(self.names)
        return other

    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        """Qualified name of a Name/Attribute chain rooted in an imported name, else ``None``."""
        return qualify_dotted(self.names, dotted_name(node))


def ast_dotted_name(node: ast.AST) -> Optional[str]:
    """``"a.b.c"`` for a CPython ``ast`` chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def resolve_relative(module: str, is_package: bool, level: int, name: Optional[str]) -> str:
    """The absolute module a ``from`` import names.

    Args:
        module: dotted name of the importing module (``"pkg.sub.mod"``).
        is_package: the importing file is a package's ``__init__.py``.
        level: the number of leading dots (0: absolute; then ``name`` is returned).
        name: the module after the dots (``"utils"`` in ``from ..utils import f``), or None.
    """
    if not level:
        return name or ""
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    return ".".join(p for p in (base, name or "") if p)


def caught_exceptions(handler: cst.ExceptHandler) -> Optional[List[cst.BaseExpression]]:
    """The exception expressions an ``except`` clause names (``except (ImportError, OSError) as
    e:`` gives the two names); ``None`` for a bare ``except:``, which catches everything."""
    kind = handler.type
    if kind is None:
        return None
    return [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
