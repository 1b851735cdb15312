"""The ``out-of-place`` codemod: stop writing into a forward input (rule PTC401).

* ``x.add_(y)`` (a statement of its own) -> ``x = x.add(y)``
* ``x += y``                            -> ``x = x + y``

Unsafe: the caller's tensor is no longer changed (a caller that relied on the
mutation sees a difference, as does any other name still bound to the old
tensor), and the out-of-place op may promote to a wider dtype or broadcast to a
larger shape where the in-place op kept ``x``'s.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from pt2lint.diagnostics import Applicability, Fix
from pt2lint.fixes.context import FixContext
from pt2lint.fixes.names import target_names
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
    shared = _alias_read_later(ctx, node, stmt)
    if shared is not None:
        return Fix(
            f"not rewritten out of place: `{shared}` shares storage with the written tensor and is read afterwards, "
            f"so it would no longer see the write",
            Applicability.DISPLAY_ONLY, (), NAME,
        )
    new_stmt = stmt.with_changes(body=[new], leading_lines=())
    edits = ctx.replace_statements([stmt], [new_stmt])
    return Fix(f"write out of place: {text}; unsafe: {UNSAFE_NOTE}", Applicability.UNSAFE, tuple(edits), NAME)


def _alias_read_later(ctx: FixContext, node: cst.CSTNode, stmt: cst.CSTNode) -> Optional[str]:
    """A name other than the one rebound that shares storage with the written forward input and is
    read after ``stmt`` in the function: the input itself (``residual = hidden_states;
    residual *= 0.5`` followed by ``self.t(hidden_states)``) or a view or other name of it bound
    before the write (``y = x.view(-1); x.add_(1); return y``).  There the in-place write is
    visible, and an out-of-place one is not.  Aliases come from the analysis (``alias_of``)."""
    from pt2lint.analysis.walk import walk

    event = next((w for w in ctx.facts.writes if w.node is node), None)
    alias = event.target.alias_of if event is not None else None
    receiver = node.target if isinstance(node, cst.AugAssign) else node.func.value  # type: ignore[union-attr]
    if alias is None or not isinstance(receiver, cst.Name):
        return None
    func = ctx.enclosing_function(stmt)
    if func is None:
        return alias if alias != receiver.value else None
    inside = {id(n) for n in walk(stmt)}
    bound_before: set = {p.name.value for p in list(func.params.params) + list(func.params.posonly_params) + list(func.params.kwonly_params)}
    seen = False
    for n in walk(func.body):
        if n is stmt:
            seen = True
            continue
        if id(n) in inside:
            continue
        if not seen:
            if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
                targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
                for t in targets:
                    bound_before.update(name.value for name in target_names(t))
            continue
        if not isinstance(n, cst.Name) or n.value == receiver.value:
            continue
        if n.value == alias:
            return alias  # ``residual = hidden_states; residual *= 0.5`` then ``hidden_states`` is read
        if n.value in bound_before:
            # ``y = x.view(-1); x.add_(1); ... y``: a view (or another name) of the written input
            value = ctx.facts.value(n)
            if value is not None and value.alias_of == alias:
                return n.value
    return None


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
