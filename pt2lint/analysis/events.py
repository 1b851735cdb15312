"""Facts the interpreter hands to rules, one per visited construct.

Rules subscribe to these; they never walk the tree or re-derive kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from pt2lint.analysis.kinds import Value


@dataclass
class CallEvent:
    """A call in a compiled region.

    Attributes:
        node: the ``Call``.
        qualname: qualified callee (``"torch.nonzero"``, ``"builtins.print"``,
            ``"logging.getLogger().info"``-style names are not built: see ``receiver``),
            or ``None`` for method calls on values.
        method: the attribute name for ``recv.method(...)`` calls.
        receiver: the value of ``recv`` for method calls.
        args: positional argument values; ``kwargs``: keyword argument values.
        result: the value of the call.
        callee: the local :class:`~pt2lint.analysis.index.FunctionInfo` called, if any.
    """

    node: cst.Call
    qualname: Optional[str]
    method: Optional[str]
    receiver: Optional[Value]
    args: Tuple[Value, ...]
    kwargs: Dict[str, Value]
    result: Value
    callee: object = None
    receiver_node: Optional[cst.BaseExpression] = None


@dataclass
class TestEvent:
    """A value whose Python truthiness decides control flow.

    ``construct`` is ``if``, ``elif``, ``while``, ``ifexp``, ``comprehension``,
    ``not``, ``and``, ``or`` or ``assert``.
    """

    node: cst.BaseExpression
    value: Value
    construct: str


@dataclass
class IndexEvent:
    """``base[index]`` read (not a store target)."""

    node: cst.Subscript
    base: Value
    index: Value
    index_node: Optional[cst.BaseExpression] = None
    #: slice bounds (``x[a:b]``) whose value is a tensor: ``(bound expression, value)``
    slice_bounds: Tuple[Tuple[cst.BaseExpression, Value], ...] = ()


@dataclass
class WriteEvent:
    """An in-place write into a tensor (``x.add_()``, ``x += y``, ``x[i] = v``, ``out=x``, ``inplace=True``).

    ``target`` is the written value; its ``alias_of`` names the forward input it
    may share storage with.  ``how`` describes the write for messages.
    """

    node: cst.CSTNode
    target: Value
    how: str


@dataclass
class StateWriteEvent:
    """Python state on ``self`` changed inside a compiled region.

    ``how`` is ``"augassign"`` (``self.n += 1``), ``"reassign"`` (``self.n = self.n + 1``),
    ``"container"`` (``self.cache.append(x)``, ``self.cache[k] = v``) or ``"assign"``.
    """

    node: cst.CSTNode
    attr: str
    value: Value
    how: str
    detail: str = ""


@dataclass
class AttrStoreEvent:
    """``t.<attr> = value`` on a tensor (``h.requires_grad = True``)."""

    node: cst.Attribute
    base: Value
    attr: str
    value: Value


@dataclass
class AssertEvent:
    node: cst.Assert
    value: Value
