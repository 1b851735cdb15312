"""A fast pre-order walk over LibCST nodes.

``CSTNode.visit`` rebuilds every node it passes (it is a transformer at heart),
which costs as much as parsing; reading the dataclass fields directly is an
order of magnitude cheaper.  Whitespace, comments and punctuation fields are
skipped: they never hold expressions or statements.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Dict, Iterator, List, Optional, Tuple, Type

import libcst as cst

_SKIP = frozenset(
    {
        "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header", "footer",
        "colon", "equal", "dot", "whitespace", "newline", "default_indent", "default_newline", "encoding",
        "indent", "lbracket", "rbracket", "lbrace", "rbrace", "operator", "asynchronous", "star_tok",
    }
)
_FIELDS: Dict[Type[cst.CSTNode], Tuple[str, ...]] = {}


def _fields(cls: Type[cst.CSTNode]) -> Tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(cls) if f.name not in _SKIP and not f.name.startswith("whitespace")
        )
        _FIELDS[cls] = names
    return names


#: ``type -> 1`` for a node type, ``2`` for a list or tuple, ``0`` for anything else: what
#: ``isinstance(value, cst.CSTNode)`` says of a field value, once per type.  LibCST's node
#: classes are ABCs, so each ``isinstance`` against them runs ``ABCMeta.__instancecheck__``, a
#: Python-level call; the answer depends on the type alone (no node class registers virtual
#: subclasses), so a dictionary look-up gives it.
_KIND: Dict[type, int] = {}


def _kind_of(cls: type) -> int:
    kind = 1 if issubclass(cls, cst.CSTNode) else 2 if issubclass(cls, (list, tuple)) else 0
    _KIND[cls] = kind
    return kind


def _children(node: cst.CSTNode, names: Tuple[str, ...]) -> Iterator[cst.CSTNode]:
    """The nodes held in ``node``'s fields ``names``, in that order (lists flattened)."""
    return iter(_child_list(node, names))


def iter_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Direct child nodes of ``node`` that can contain code."""
    return _children(node, _fields(type(node)))


#: Node types whose walks are kept (:data:`_ORDERS`): the analysis and the fix proposals walk the
#: same module, class, function and block several times each (a 1,800-line forward five times).
_KEPT_ROOTS = (cst.Module, cst.ClassDef, cst.FunctionDef, cst.IndentedBlock)
#: ``(id(root), into_functions) -> (root, pre-order list)`` of the last :data:`_KEPT` walks of such
#: roots; the root is held, so its ``id`` cannot be reused while the entry lives (LibCST nodes
#: are immutable: the order cannot go stale).
_ORDERS: Dict[Tuple[int, bool], Tuple[cst.CSTNode, List[cst.CSTNode]]] = {}
_KEPT = 16
_ORDERS_LOCK = threading.Lock()


def walk(node: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Pre-order walk of ``node`` and its descendants (iterative, no recursion limit).

    The order of a module, class, function or block is kept for the next walk of the same node
    (the last few such walks are kept).

    Args:
        into_functions: when False, nested ``def``/``lambda``/``class`` bodies are not entered.
    """
    if isinstance(node, _KEPT_ROOTS):
        key = (id(node), into_functions)
        hit = _ORDERS.get(key)
        if hit is None or hit[0] is not node:
            order = list(_walk(node, into_functions))
            with _ORDERS_LOCK:  # the editor server lints documents in threads
                while len(_ORDERS) >= _KEPT:
                    del _ORDERS[next(iter(_ORDERS))]  # the oldest (dicts keep insertion order)
                _ORDERS[key] = hit = (node, order)
        return iter(hit[1])
    return _walk(node, into_functions)


def _walk(node: cst.CSTNode, into_functions: bool) -> Iterator[cst.CSTNode]:
    # a list per node, not a generator: the walk is the analysis' inner loop, and a generator
    # per node cost as much as the rest of the step
    fields = _FIELDS
    scopes = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
    stack = [node]
    pop, extend = stack.pop, stack.extend
    while stack:
        n = pop()
        yield n
        if not into_functions and n is not node and isinstance(n, scopes):
            continue
        cls = type(n)
        names = fields.get(cls)
        children = _child_list(n, names if names is not None else _fields(cls))
        if children:
            children.reverse()
            extend(children)


def walk_with_function(node: cst.CSTNode) -> Iterator[Tuple[cst.CSTNode, Optional[cst.FunctionDef]]]:
    """:func:`walk`'s pre-order, each node with the innermost ``def`` it is in (a ``def`` node
    itself is in the enclosing one; ``None`` outside every ``def``; a lambda counts as its
    ``def``'s body)."""
    fields = _FIELDS
    stack: List[Tuple[cst.CSTNode, Optional[cst.FunctionDef]]] = [(node, None)]
    pop = stack.pop
    while stack:
        n, fn = pop()
        yield n, fn
        cls = type(n)
        names = fields.get(cls)
        children = _child_list(n, names if names is not None else _fields(cls))
        if children:
            inner = n if cls is cst.FunctionDef else fn
            stack.extend((c, inner) for c in reversed(children))


def walk_with_ancestors(node: cst.CSTNode) -> Iterator[Tuple[cst.CSTNode, Tuple[cst.CSTNode, ...]]]:
    """:func:`walk`'s pre-order, each node with its ancestors below ``node`` included (nearest
    last; empty for ``node`` itself)."""
    fields = _FIELDS
    stack: List[Tuple[cst.CSTNode, Tuple[cst.CSTNode, ...]]] = [(node, ())]
    pop = stack.pop
    while stack:
        n, above = pop()
        yield n, above
        cls = type(n)
        names = fields.get(cls)
        children = _child_list(n, names if names is not None else _fields(cls))
        if children:
            below = above + (n,)
            stack.extend((c, below) for c in reversed(children))


def _child_list(node: cst.CSTNode, names: Tuple[str, ...]) -> List[cst.CSTNode]:
    """The nodes held in ``node``'s fields ``names``, in that order (lists flattened), as a list."""
    kinds = _KIND
    out: List[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name, None)
        kind = kinds.get(type(value))
        if kind is None:
            kind = _kind_of(type(value))
        if kind == 1:
            out.append(value)
        elif kind == 2:
            for item in value:
                k = kinds.get(type(item))
                if k is None:
                    k = _kind_of(type(item))
                if k == 1:
                    out.append(item)
    return out


#: Code fields of the nodes whose dataclass field order is not the order their parts are
#: written in (``@decorators`` come before ``def name``, ``a if test else b`` starts with ``a``).
#: Every other node's fields are declared in source order.
_SOURCE_ORDER: Dict[Type[cst.CSTNode], Tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.Parameters: ("posonly_params", "posonly_ind", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.Slice: ("lower", "upper", "step"),
    cst.TypeAlias: ("name", "type_parameters", "value"),
    cst.Arg: ("keyword", "value"),
}


def iter_children_in_source_order(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Like :func:`iter_children`, but in the order the children are written in the source
    (the order ``CSTNode.visit`` visits them), at the cost of a dictionary look-up per node."""
    names = _SOURCE_ORDER.get(type(node))
    return _children(node, names if names is not None else _fields(type(node)))


def children_in_source_order(node: cst.CSTNode) -> List[cst.CSTNode]:
    """:func:`iter_children_in_source_order` as a list, built without a generator (the inner
    step of the walks that need source order)."""
    cls = type(node)
    names = _SOURCE_ORDER.get(cls)
    if names is None:
        names = _FIELDS.get(cls) or _fields(cls)
    return _child_list(node, names)

