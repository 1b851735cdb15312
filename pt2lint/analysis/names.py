"""Which names a piece of code reads and binds (Python's scoping rules, syntactically).

The codemods need this to turn a block into a function: the names it reads
from outside become parameters or closures, the names it binds and that are
read afterwards become outputs.  The interpreter and the rules use it too (the
names a loop rebinds, the variables a ``key=`` lambda reads).  Loads are collected conservatively (nested
functions and comprehensions included); bindings are those of the block's own
scope (assignment, augmented assignment, ``for``/``with``/``except`` targets,
walrus, ``def``/``class``/``import`` names), not those of nested scopes.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Sequence, Set

import libcst as cst

from pt2lint.analysis.walk import iter_children, walk


def target_names(target: cst.BaseExpression) -> List[cst.Name]:
    """The ``Name`` nodes an assignment target binds (``a``, ``a, (b, *c)``); attribute and subscript targets bind none."""
    out: List[cst.Name] = []
    stack = [target]
    while stack:
        t = stack.pop()
        if isinstance(t, cst.Name):
            out.append(t)
        elif isinstance(t, (cst.Tuple, cst.List)):
            stack.extend(el.value for el in reversed(t.elements))
        elif isinstance(t, cst.StarredElement):
            stack.append(t.value)
    return out


#: What :func:`_not_loads` reads of a node, by the node's type (one dictionary look-up per node:
#: ``isinstance`` against LibCST's abstract node classes is a Python-level call each time).
_NL_OTHER, _NL_ATTRIBUTE, _NL_ARG, _NL_PARAM, _NL_DEFINITION, _NL_IMPORT, _NL_DECLARE, _NL_ASSIGN, _NL_TARGET, _NL_AS = range(10)
_NOT_LOAD_TESTS = (
    (cst.Attribute, _NL_ATTRIBUTE),
    (cst.Arg, _NL_ARG),
    (cst.Param, _NL_PARAM),
    ((cst.FunctionDef, cst.ClassDef), _NL_DEFINITION),
    (cst.ImportAlias, _NL_IMPORT),
    ((cst.Global, cst.Nonlocal), _NL_DECLARE),
    (cst.Assign, _NL_ASSIGN),
    ((cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr), _NL_TARGET),
    (cst.AsName, _NL_AS),
)
_NOT_LOAD_KIND: Dict[type, int] = {}


def _not_load_kind(cls: type) -> int:
    kind = next((k for classes, k in _NOT_LOAD_TESTS if issubclass(cls, classes)), _NL_OTHER)
    _NOT_LOAD_KIND[cls] = kind
    return kind


def _not_loads(nodes: Iterable[cst.CSTNode], flat: bool = False) -> Set[int]:
    """ids of ``Name`` nodes that are not reads: attribute names, keywords, parameters, binding targets.

    ``nodes`` are roots whose subtrees are searched; with ``flat``, ``nodes`` already lists every
    node of interest (a walk's output) and each is looked at alone: the same answer for those
    nodes in linear rather than depth-times-size time.
    """
    skip: Set[int] = set()
    kinds = _NOT_LOAD_KIND
    for root in nodes:
        for n in ((root,) if flat else walk(root)):
            kind = kinds.get(type(n))
            if kind is None:
                kind = _not_load_kind(type(n))
            if kind == _NL_OTHER:
                continue
            if kind == _NL_ATTRIBUTE:
                skip.add(id(n.attr))
            elif kind == _NL_ARG:
                if n.keyword is not None:
                    skip.add(id(n.keyword))
            elif kind == _NL_PARAM or kind == _NL_DEFINITION:
                skip.add(id(n.name))
            elif kind == _NL_IMPORT:
                for m in walk(n):
                    skip.add(id(m))
            elif kind == _NL_DECLARE:
                for item in n.names:
                    skip.add(id(item.name))
            elif kind == _NL_ASSIGN:
                for t in n.targets:
                    skip.update(id(x) for x in target_names(t.target))
            elif kind == _NL_TARGET:
                skip.update(id(x) for x in target_names(n.target))
            else:  # _NL_AS
                skip.update(id(x) for x in target_names(n.name))
    return skip


def loaded_names(nodes: Sequence[cst.CSTNode]) -> Dict[str, List[cst.Name]]:
    """Names read anywhere in ``nodes`` (nested scopes included), in order of first read.

    ``x += 1`` and ``del x`` count as reads of ``x``.
    """
    skip = _not_loads(nodes)
    out: Dict[str, List[cst.Name]] = {}
    name_type = cst.Name  # a final node class: ``type(n) is`` is its isinstance test, without the ABC call
    for root in nodes:
        for n in walk(root):
            if type(n) is name_type and id(n) not in skip:
                out.setdefault(n.value, []).append(n)
    return out


def bound_names(nodes: Sequence[cst.CSTNode]) -> Dict[str, List[cst.CSTNode]]:
    """Names bound by ``nodes`` in their own scope, each with its binding statements, in source order.

    Nested ``def``/``lambda``/``class`` bodies and comprehensions bind in their own
    scopes and are not entered (their ``def``/``class`` name is bound here).
    """
    out: Dict[str, List[cst.CSTNode]] = {}

    def add(names: Iterable[cst.Name], where: cst.CSTNode) -> None:
        for name in names:
            out.setdefault(name.value, []).append(where)

    for root in nodes:
        stack = [root]
        while stack:
            n = stack.pop()
            kind = _BIND_KIND.get(type(n))
            if kind is None:
                kind = _bind_kind(type(n))
            if kind == _ASSIGN:
                for t in n.targets:
                    add(target_names(t.target), n)
            elif kind == _TARGET:
                add(target_names(n.target), n)
            elif kind == _AS_NAME:
                add(target_names(n.name), n)
            elif kind == _DEFINITION:
                add([n.name], n)
                continue
            elif kind == _IMPORT:
                if not isinstance(n.names, cst.ImportStar):
                    for alias in n.names:
                        if alias.asname is not None:
                            add(target_names(alias.asname.name), n)  # type: ignore[arg-type]
                        else:
                            head = alias.name
                            while isinstance(head, cst.Attribute):
                                head = head.value  # type: ignore[assignment]
                            if isinstance(head, cst.Name):
                                add([head], n)
                continue
            elif kind == _OWN_SCOPE:
                continue
            children = list(iter_children(n))
            children.reverse()
            stack.extend(children)
    return out


# What :func:`bound_names` does with a node, by its type: the first ``isinstance`` test of its
# chain that the type passes, computed once per type (LibCST's node classes are ABCs, so each
# ``isinstance`` against them is a Python-level call).
_OTHER, _ASSIGN, _TARGET, _AS_NAME, _DEFINITION, _IMPORT, _OWN_SCOPE = range(7)
_BIND_TESTS = (
    (cst.Assign, _ASSIGN),
    ((cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr), _TARGET),
    (cst.AsName, _AS_NAME),
    ((cst.FunctionDef, cst.ClassDef), _DEFINITION),
    ((cst.Import, cst.ImportFrom), _IMPORT),
    ((cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp), _OWN_SCOPE),
)
_BIND_KIND: Dict[type, int] = {}


def _bind_kind(cls: type) -> int:
    kind = next((k for classes, k in _BIND_TESTS if issubclass(cls, classes)), _OTHER)
    _BIND_KIND[cls] = kind
    return kind


def all_names(node: cst.CSTNode) -> Set[str]:
    """Every identifier spelled in ``node`` (to pick names that cannot collide)."""
    return {n.value for n in walk(node) if type(n) is cst.Name}  # a final class: no ABC check per node


__all__ = ["all_names", "bound_names", "loaded_names", "target_names"]
