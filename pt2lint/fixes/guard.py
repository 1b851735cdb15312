"""The ``guard`` codemod: put debug prints and logging behind ``if not torch.compiler.is_compiling():``.

Measured on torch 2.13 (rules PTC301, PTC302): ``print(...)`` and logger calls
break the graph even when the logger's level drops the message, and code under
``if not torch.compiler.is_compiling():`` is skipped by Dynamo without a break.
In eager mode ``is_compiling()`` is False, so the guarded statement runs exactly
as before.  Under ``torch.compile`` the whole statement is skipped: the message is
no longer printed or logged, which is what the guard is for, but neither are its
arguments evaluated.  So the fix is safe only when every argument (and the
receiver of a logger method) is proven free of side effects
(:func:`pt2lint.fixes.purity.side_effect`): ``print(x.add_(1).sum())`` guarded
would skip the in-place add in compiled code (measured: ``[2., 2., 2.]`` instead
of ``[4., 4., 4.]``).  An argument with a proven effect (an in-place op, ``:=``,
a container mutation, a random op) refuses the fix; one whose freedom from side
effects is not proven (an unknown or same-file function, a module call, an
iterator that may be consumed) makes it unsafe.  Formatting of the arguments by
``print`` or the logger itself (``__str__``, ``__format__``) is what is meant to be
skipped.

Consecutive flagged statements whose arguments are proven free of side effects
share one guard; any other statement gets a guard of its own.  Only whole statements are
guarded (``print(x)`` on its own line in a block); a print inside an expression
or on a line with other statements gets no fix.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from pt2lint.diagnostics import Applicability, Fix
from pt2lint.fixes.context import FixContext, Refuse
from pt2lint.fixes.purity import SideEffect, side_effect

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


def _effect(ctx: FixContext, stmt: cst.SimpleStatementLine) -> Optional[SideEffect]:
    """What evaluating the arguments of the guarded call (and its receiver) may change."""
    call: cst.Call = stmt.body[0].value  # type: ignore[attr-defined]
    key = (NAME, "effect", id(call))
    if key not in ctx.cache:
        parts = [call.func.value] if isinstance(call.func, cst.Attribute) else []
        ctx.cache[key] = side_effect(ctx, parts + list(call.args))  # the `Arg`s: `*it` consumes `it`
    return ctx.cache[key]  # type: ignore[return-value]


def _joinable(ctx: FixContext, stmt: cst.CSTNode) -> bool:
    return _guardable(ctx, stmt) and _effect(ctx, stmt) is None  # type: ignore[arg-type]


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The guard fix for a print/logging finding that is a statement of its own, else ``None``."""
    stmt = finding.stmt
    if not _guardable(ctx, stmt) or stmt.body[0].value is not finding.node:  # type: ignore[union-attr]
        return None
    block = ctx.parent(stmt)
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    effect = _effect(ctx, stmt)
    if effect is not None and effect.proven:
        return Fix(
            f"not guarded: {effect.reason}; under torch.compile the guarded statement is skipped, and that with it",
            Applicability.DISPLAY_ONLY, (), NAME,
        )
    body = list(block.body)
    index = next(i for i, s in enumerate(body) if s is stmt)
    start = end = index
    if effect is None:
        while start > 0 and _joinable(ctx, body[start - 1]) and not body[start].leading_lines:
            start -= 1
        while end + 1 < len(body) and _joinable(ctx, body[end + 1]) and not body[end + 1].leading_lines:
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
    message = f"guard {what} with `if not {torch}.compiler.is_compiling():` (eager runs unchanged; compiled code skips it)"
    if effect is not None:
        message += f"; unsafe: {effect.reason}, and compiled code would skip it too"
    fix = Fix(
        message,
        Applicability.SAFE if effect is None else Applicability.UNSAFE,
        tuple(edits) + tuple(import_edits),
        NAME,
    )
    ctx.cache[key] = fix
    return fix


__all__ = ["NAME", "TARGET_CODES", "propose"]
