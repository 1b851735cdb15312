"""The ``where`` codemod: choose between two tensors with ``torch.where`` instead of Python control flow.

* ``y = a if pred else b``            ->  ``y = torch.where(pred, a, b)``
* ``if pred: y = a`` / ``else: y = b`` ->  ``y = torch.where(pred, a, b)``

Unsafe unless :func:`pt2lint.fixes.where_proof.exact_where` proves it exact (both sides
affine forms of one floating tensor, a 0-d test): ``torch.where`` computes both sides (an error, a NaN gradient or
the cost of the unused side now happens every time), broadcasts them to one
shape, and promotes them to one dtype, where the original produced exactly one
of the two.  The predicate must still be provably one value
(:mod:`pt2lint.fixes.predicate`): ``torch.where`` on a multi-element mask would
silently turn "raises" into an elementwise choice.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from pt2lint.analysis.kinds import Kind
from pt2lint.diagnostics import Applicability, Fix
from pt2lint.fixes.context import FixContext, Refuse
from pt2lint.fixes.edits import comment_lines, lost_comments, sole_small_statement, strip_leading_lines
from pt2lint.fixes.predicate import translate_predicate
from pt2lint.fixes.purity import BranchChecker
from pt2lint.fixes.where_proof import exact_where

NAME = "where"
TARGET_CODES = frozenset({"PTC104", "PTC101", "PTC103"})

UNSAFE_NOTE = (
    "torch.where evaluates both sides (errors, NaN gradients and cost of the unused side now always happen), "
    "broadcasts them to one shape and promotes them to one dtype"
)

EXACT_NOTE = (
    "exact: both sides are arithmetic of the same floating tensor with finite number literals (same dtype and "
    "shape, nothing raises, the side not taken gets a zero gradient through a finite derivative) and the test is "
    "0-d; eager mode computes both sides (two elementwise ops instead of one)"
)


def _ifexp_of(ctx: FixContext, finding) -> Optional[cst.IfExp]:
    """The innermost conditional expression whose test holds the finding's node.

    The answer is kept for every node on the way up to the statement, so findings deep in one
    long expression (``a.item() or b.item() or ...``, which nests to the left) share the walk
    instead of each climbing the whole chain.
    """
    memo = ctx.cache.setdefault((NAME, "ifexp-of"), {})
    path: List[cst.CSTNode] = []
    child = finding.node
    found: Optional[cst.IfExp] = None
    while True:
        hit = memo.get(id(child))  # type: ignore[union-attr]
        if hit is not None:
            found = hit[1]
            break
        parent = ctx.parent(child)
        if parent is None or isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
            break
        path.append(child)
        if isinstance(parent, cst.IfExp) and parent.test is child:
            found = parent
            break
        child = parent
    for n in path:  # the node is kept with its answer, so its id cannot be reused
        memo[id(n)] = (n, found)  # type: ignore[index]
    return found


def _single_assign(block) -> Optional[cst.Assign]:
    """The only statement of ``block`` when it is ``name = expr``."""
    assign = sole_small_statement(block)
    if not isinstance(assign, cst.Assign):
        return None
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    return assign


def _call(torch: str, pred, a, b) -> cst.Call:
    return cst.Call(
        func=cst.Attribute(value=cst.Name(torch), attr=cst.Name("where")),
        args=[cst.Arg(pred), cst.Arg(a), cst.Arg(b)],
    )


def _check_side(ctx: FixContext, checker: BranchChecker, expr: cst.BaseExpression, label: str) -> None:
    v = ctx.facts.value(expr)
    if v is None:
        raise Refuse(f"pt2lint has no facts about {label}")
    if v.kind in (Kind.NONE, Kind.CONTAINER, Kind.MODULE, Kind.FUNCTION, Kind.CLASS) or v.maybe_none:
        raise Refuse(f"{label} `{ctx.module.code_for_node(expr).strip()}` is not a tensor or a number")
    checker._refuse_findings([expr], label)
    checker._expr(expr, set(), label)


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The ``torch.where`` fix for a tensor test of a conditional expression, or of an ``if``/``else``
    that assigns one name in each branch; ``None`` when the finding is in neither."""
    ifexp = _ifexp_of(ctx, finding)
    stmt = finding.stmt
    if ifexp is None:
        if not (isinstance(stmt, cst.If) and ctx.contains(stmt.test, finding.node)):
            return None
        orelse = stmt.orelse
        a_assign = _single_assign(stmt.body)
        b_assign = _single_assign(orelse.body) if isinstance(orelse, cst.Else) else None
        if a_assign is None or b_assign is None or a_assign.targets[0].target.value != b_assign.targets[0].target.value:  # type: ignore[union-attr]
            return None
    return ctx.fix_once(NAME, ifexp if ifexp is not None else stmt, lambda: _build(ctx, finding, ifexp), "not rewritten as torch.where")


def _build(ctx: FixContext, finding, ifexp: Optional[cst.IfExp]) -> Fix:
    stmt = finding.stmt
    func = ctx.enclosing_function(stmt)
    torch, import_edits = ctx.torch_name(func)
    checker = BranchChecker(ctx, set())
    if ifexp is not None:
        if not isinstance(stmt, cst.SimpleStatementLine):
            raise Refuse("the conditional expression is not in a simple statement")
        pred = translate_predicate(ctx, func, ifexp.test, torch)
        _check_side(ctx, checker, ifexp.body, "the `if` side")
        _check_side(ctx, checker, ifexp.orelse, "the `else` side")
        _need_tensor(ctx, ifexp.body, ifexp.orelse)
        unproven = exact_where(ctx, func, stmt, ifexp.test, ifexp.body, ifexp.orelse)
        call = _call(torch, pred.expr, ifexp.body, ifexp.orelse)
        call = call.with_changes(lpar=ifexp.lpar, rpar=ifexp.rpar) if ifexp.lpar else call
        new_stmt = strip_leading_lines(stmt).deep_replace(ifexp, call)
        lost = lost_comments(ifexp, call)
        if lost:
            new_stmt = new_stmt.with_changes(leading_lines=lost)  # type: ignore[union-attr]
        edits = ctx.replace_statements([stmt], [new_stmt])  # type: ignore[list-item]
    else:
        assert isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.Else)
        a = _single_assign(stmt.body)
        b = _single_assign(stmt.orelse.body)
        assert a is not None and b is not None
        pred = translate_predicate(ctx, func, stmt.test, torch)
        _check_side(ctx, checker, a.value, "the `if` branch")
        _check_side(ctx, checker, b.value, "the `else` branch")
        _need_tensor(ctx, a.value, b.value)
        unproven = exact_where(ctx, func, stmt, stmt.test, a.value, b.value)
        call = _call(torch, pred.expr, a.value, b.value)
        new_stmt = cst.SimpleStatementLine(
            [cst.Assign(targets=a.targets, value=call)],
            leading_lines=comment_lines(stmt.with_changes(leading_lines=())),
        )
        edits = ctx.replace_statements([stmt], [new_stmt])
    if unproven is None and not pred.inexact and not checker.unverified:
        return Fix(
            "rewrite as `torch.where(pred, a, b)`; " + EXACT_NOTE, Applicability.SAFE, tuple(edits) + tuple(import_edits), NAME
        )
    notes = [UNSAFE_NOTE] + pred.inexact + ([f"not proven exact: {unproven}"] if unproven else [])
    if checker.unverified:
        notes.append("a side calls " + ", ".join(f"`{n}`" for n in dict.fromkeys(checker.unverified)))
    return Fix("rewrite as `torch.where(pred, a, b)`; unsafe: " + "; ".join(notes), Applicability.UNSAFE, tuple(edits) + tuple(import_edits), NAME)


def _need_tensor(ctx: FixContext, a: cst.BaseExpression, b: cst.BaseExpression) -> None:
    va, vb = ctx.facts.value(a), ctx.facts.value(b)
    if not any(v is not None and v.kind is Kind.TENSOR for v in (va, vb)):
        raise Refuse("neither side is a tensor (torch.where would turn a Python number into a tensor)")


__all__ = ["EXACT_NOTE", "NAME", "TARGET_CODES", "UNSAFE_NOTE", "propose"]
