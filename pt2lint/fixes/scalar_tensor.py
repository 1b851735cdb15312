"""The ``scalar-tensor`` codemod: keep a ``.item()`` value a tensor when it only feeds tensor arithmetic.

``x * t.item()`` -> ``x * t.detach()`` (rule PTC101).  ``.item()`` returns a
number with no gradient, so ``.detach()`` keeps autograd exactly as it was; a
receiver that is not provably 0-d gets ``.reshape(())`` so that broadcasting
cannot grow the result's shape (``.item()`` itself fails unless ``t`` has one
element, and so does the reshape).

Unsafe: type promotion treats a Python number and a 0-d tensor differently
(``int_tensor * t.item()`` with a float64 ``t`` gives float32, ``int_tensor * t``
gives float64; a 0-d ``x`` times a float32 0-d ``t`` is float32, times a Python
float keeps ``x``'s float16), and a 0-d CUDA ``t`` cannot multiply a CPU ``x``.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from pt2lint.analysis.kinds import Kind
from pt2lint.diagnostics import Applicability, Fix
from pt2lint.fixes.context import FixContext
from pt2lint.fixes.predicate import ScalarProver

NAME = "scalar-tensor"
TARGET_CODES = frozenset({"PTC101"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)

UNSAFE_NOTE = (
    "a 0-d tensor takes part in dtype promotion where the Python number did not (e.g. an integer tensor "
    "times a float64 0-d tensor is float64, not float32), and it must be on a device the other operand accepts"
)


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The fix for ``t.item()`` that is an operand of arithmetic with a tensor, in a simple statement; else ``None``."""
    node = finding.node
    stmt = finding.stmt
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "item" and not node.args):
        return None
    if not isinstance(stmt, cst.SimpleStatementLine):
        return None
    parent = ctx.parent(node)
    if not isinstance(parent, cst.BinaryOperation) or not isinstance(parent.operator, _ARITHMETIC):
        return None
    other = parent.right if parent.left is node else parent.left
    value = ctx.facts.value(other)
    if value is None or value.kind is not Kind.TENSOR or value.maybe_none:
        return None
    recv = node.func.value
    detached: cst.BaseExpression = cst.Call(func=cst.Attribute(value=recv, attr=cst.Name("detach")))
    if not ScalarProver(ctx, ctx.enclosing_function(stmt)).zero_dim(recv):
        detached = cst.Call(
            func=cst.Attribute(value=detached, attr=cst.Name("reshape")),
            args=[cst.Arg(cst.Tuple([], lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))],
        )
    if node.lpar:
        detached = detached.with_changes(lpar=node.lpar, rpar=node.rpar)
    new_stmt = stmt.with_changes(leading_lines=()).deep_replace(node, detached)
    edits = ctx.replace_statements([stmt], [new_stmt])  # type: ignore[list-item]
    code = ctx.module.code_for_node(detached)
    return Fix(f"keep the value a tensor: `{code}` instead of `.item()`; unsafe: {UNSAFE_NOTE}", Applicability.UNSAFE, tuple(edits), NAME)


__all__ = ["NAME", "TARGET_CODES", "UNSAFE_NOTE", "propose"]
