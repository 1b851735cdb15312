"""The ``out-of-place`` codemod: stop writing into a forward input (rule PTC401).

* ``x.add_(y)`` (a statement of its own) -> ``x = x.add(y)``
* ``x += y``                            -> ``x = x + y``

Unsafe: the caller's tensor is no longer changed (a caller that relied on the
mutation sees a difference, as does any other name still bound to the old
tensor), and the out-of-place op may promote to a wider dtype or broadcast to a
larger shape where the in-place op kept ``x``'s.

Refused when the input stays reachable through another reference that would see the
in-place write but not the rebinding: another name, a view, a container, an attribute,
a global, a closure, or a call that may keep its argument
(:class:`pt2lint.fixes.aliasing.InputReferences`).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from pt2lint.diagnostics import Applicability, Fix
from pt2lint.fixes.context import FixContext
from pt2lint.fixes.predicate import paren_if_needed

NAME = "out-of-place"
TARGET_CODES = frozenset({"PTC401"})

# In-place tensor methods whose out-of-place twin (the name without ``_``) takes the same
# arguments and computes the same values (checked against torch 2.13's torch.Tensor in the tests).
# Left out: comparisons and logical ops (the twin returns bool, the in-place op keeps x's dtype),
# metadata ops (``t_``, ``squeeze_``, ``resize_``...), and ``bernoulli_`` (different meaning).
OUT_OF_PLACE = frozenset(
    """abs_ absolute_ acos_ acosh_ add_ addbmm_ addcdiv_ addcmul_ addmm_ addmv_ addr_ arccos_ arccosh_ arcsin_
    arcsinh_ arctan2_ arctan_ arctanh_ asin_ asinh_ atan2_ atan_ atanh_ baddbmm_ bitwise_and_
    bitwise_left_shift_ bitwise_not_ bitwise_or_ bitwise_right_shift_ bitwise_xor_ ceil_ clamp_ clamp_max_
    clamp_min_ clip_ copysign_ cos_ cosh_ cumprod_ cumsum_ deg2rad_ digamma_ div_ divide_ erf_ erfc_ erfinv_
    exp2_ exp_ expm1_ fix_ float_power_ floor_ floor_divide_ fmod_ frac_ gcd_ heaviside_ hypot_ i0_ igamma_
    igammac_ index_add_ index_copy_ index_fill_ index_put_ index_reduce_ lcm_ ldexp_ lerp_ lgamma_ log10_
    log1p_ log2_ log_ logit_ masked_fill_ masked_scatter_ mul_ multiply_ mvlgamma_ nan_to_num_ neg_ negative_
    nextafter_ polygamma_ pow_ put_ rad2deg_ reciprocal_ relu_ remainder_ renorm_ round_ rsqrt_ scatter_
    scatter_add_ scatter_reduce_ sgn_ sigmoid_ sign_ sin_ sinc_ sinh_ sqrt_ square_ sub_ subtract_ tan_ tanh_
    tril_ triu_ true_divide_ trunc_ xlogy_""".split()
)

UNSAFE_NOTE = (
    "the caller's tensor is no longer modified (code that relied on the mutation, or another name bound to the "
    "same tensor, sees the old values), and the result may be promoted to a wider dtype or broadcast to a "
    "larger shape where the in-place op kept the input's"
)


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The out-of-place fix for ``x.op_(...)`` or ``x op= y`` as a statement of its own, else ``None``."""
    node = finding.node
    stmt = finding.stmt
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.AugAssign) and small is node and isinstance(small.target, cst.Name):
        op = _binary_operator(small.operator)
        if op is None:
            return None
        value = cst.BinaryOperation(left=small.target, operator=op, right=paren_if_needed(small.value))
        new = cst.Assign(targets=[cst.AssignTarget(small.target)], value=value)
        text = f"`{small.target.value} = {small.target.value} {_symbol(op)} ...`"
    elif (
        isinstance(small, cst.Expr)
        and small.value is node
        and isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.attr.value in OUT_OF_PLACE
    ):
        recv = node.func.value
        method = node.func.attr.value[:-1]
        call = node.with_changes(func=node.func.with_changes(attr=cst.Name(method)))
        new = cst.Assign(targets=[cst.AssignTarget(cst.Name(recv.value))], value=call)
        text = f"`{recv.value} = {recv.value}.{method}(...)`"
    else:
        return None
    reached = _reachable_otherwise(ctx, node, stmt)
    if reached is not None:
        return Fix(f"not rewritten out of place: {reached}", Applicability.DISPLAY_ONLY, (), NAME)
    new_stmt = stmt.with_changes(body=[new], leading_lines=())
    edits = ctx.replace_statements([stmt], [new_stmt])
    return Fix(f"write out of place: {text}; unsafe: {UNSAFE_NOTE}", Applicability.UNSAFE, tuple(edits), NAME)


def _reachable_otherwise(ctx: FixContext, node: cst.CSTNode, stmt: cst.CSTNode) -> Optional[str]:
    """Why the written forward input stays reachable through another reference that the
    in-place write updates and a rebinding would not, or ``None``.

    The input itself under its own name (``residual = hidden_states; residual *= 0.5``
    followed by ``self.t(hidden_states)``), a view or another name of it bound before the
    write (``y = x.view(-1); x.add_(1); return y``), a container holding it
    (``keep = [x]; x += 1; return keep[0]``), or a store where the function no longer
    controls the reads (``self.saved = x``, ``cache.append(x)``, a ``global``, a closure, a
    call that may keep its argument): see :class:`~pt2lint.fixes.aliasing.InputReferences`.
    Aliases of the input come from the analysis (``alias_of``)."""
    from pt2lint.fixes.aliasing import InputReferences

    event = next((w for w in ctx.facts.writes if w.node is node), None)
    alias = event.target.alias_of if event is not None else None
    receiver = node.target if isinstance(node, cst.AugAssign) else node.func.value  # type: ignore[union-attr]
    if alias is None or not isinstance(receiver, cst.Name):
        return None
    func = ctx.enclosing_function(stmt)
    if func is None:
        if alias != receiver.value:
            return f"`{alias}` shares storage with the written tensor and is read afterwards, so it would no longer see the write"
        return None
    return InputReferences(ctx, func, stmt, receiver.value, alias).reachable()


_AUG_TO_BIN = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power, cst.MatrixMultiplyAssign: cst.MatrixMultiply, cst.BitAndAssign: cst.BitAnd,
    cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor, cst.LeftShiftAssign: cst.LeftShift,
    cst.RightShiftAssign: cst.RightShift,
}


def _binary_operator(op) -> Optional[cst.BaseBinaryOp]:
    cls = _AUG_TO_BIN.get(type(op))
    return cls() if cls is not None else None


def _symbol(op) -> str:
    return cst.Module(body=[]).code_for_node(op).strip()


__all__ = ["NAME", "OUT_OF_PLACE", "TARGET_CODES", "UNSAFE_NOTE", "propose"]
