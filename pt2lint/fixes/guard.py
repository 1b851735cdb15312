"""The ``guard`` codemod: put debug prints and logging behind ``if not torch.compiler.is_compiling():``.

Measured on torch 2.13 (rules PTC301, PTC302): ``print(...)`` and logger calls
break the graph even when the logger's level drops the message, and code under
``if not torch.compiler.is_compiling():`` is skipped by Dynamo without a break.
In eager mode ``is_compiling()`` is False, so the guarded statement runs exactly
as before: the fix is safe.  Under ``torch.compile`` the message is no longer
printed or logged, which is what the guard is for.

Consecutive flagged statements share one guard.  Only whole statements are
guarded (``print(x)`` on its own line in a block); a print inside an expression
or on a line with other statements gets no fix.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from pt2lint.diagnostics import Applicability, Fix
from pt2lint.fixes.context import FixContext, Refuse

NAME = "guard"
TARGET_CODES = frozenset({"PTC301", "PTC302"})


def _guardable(ctx: FixContext, stmt: cst.CSTNode) -> bool:
    """``stmt`` is a line holding only a flagged print/logging call."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return False
    return any(d.code in TARGET_CODES for _, d in ctx.flagged.get(id(small.value), ()))


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The guard fix for a print/logging finding that is a statement of its own, else ``None``."""
    stmt = finding.stmt
    if not _guardable(ctx, stmt) or stmt.body[0].value is not finding.node:  # type: ignore[union-attr]
        return None
    block = ctx.parent(stmt)
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    body = list(block.body)
    index = next(i for i, s in enumerate(body) if s is stmt)
    start = index
    while start > 0 and _guardable(ctx, body[start - 1]) and not body[start].leading_lines:
        start -= 1
    end = index
    while end + 1 < len(body) and _guardable(ctx, body[end + 1]) and not body[end + 1].leading_lines:
        end += 1
    run: List[cst.SimpleStatementLine] = body[start:end + 1]  # type: ignore[assignment]
    key = (NAME, id(run[0]))
    if key in ctx.cache:
        return ctx.cache[key]  # type: ignore[return-value]
    try:
        torch, import_edits = ctx.torch_name(ctx.enclosing_function(stmt))
    except Refuse:
        ctx.cache[key] = None
        return None
    test = cst.UnaryOperation(
        operator=cst.Not(),
        expression=cst.Call(func=cst.Attribute(
            value=cst.Attribute(value=cst.Name(torch), attr=cst.Name("compiler")), attr=cst.Name("is_compiling"),
        )),
    )
    inner = [run[0].with_changes(leading_lines=()), *run[1:]]
    guard = cst.If(test=test, body=cst.IndentedBlock(body=inner))
    edits = ctx.replace_statements(run, [guard])
    what = "these statements" if len(run) > 1 else "the statement"
    fix = Fix(
        f"guard {what} with `if not {torch}.compiler.is_compiling():` (eager runs unchanged; compiled code skips it)",
        Applicability.SAFE,
        tuple(edits) + tuple(import_edits),
        NAME,
    )
    ctx.cache[key] = fix
    return fix


__all__ = ["NAME", "TARGET_CODES", "propose"]
