"""When ``torch.where(pred, a, b)`` is exactly ``a if pred else b``: the proof behind a safe ``where`` fix.

``torch.where`` evaluates both sides, broadcasts ``pred``, ``a`` and ``b`` to one shape,
promotes them to one dtype, and its backward sends a zero gradient into the side not
taken.  The rewrite is exact (same values bit for bit, same dtype and shape, same
gradients, ``None`` gradients included, no new exception) when all of these are proven:

* each side is an *affine form of one tensor* ``r`` (a name or ``self.`` attribute chain):
  ``r`` combined with finite number literals by ``*``, ``/``, ``+``, ``-`` and unary
  ``-``/``+`` (``h * 2.0``, ``-(h - 1) / 3``), with at least one operation (a bare ``r``
  is the tensor itself in the original and a copy after ``torch.where``: an in-place
  write to the result would then differ), and both sides read the same ``r``;
* ``r`` is proven floating (an ``nn.Linear``-style submodule's output, a tensor passed to
  ``mean``/``std`` before, arithmetic with one; :func:`pt2lint.fixes.cond._proven_floating`):
  arithmetic of a floating tensor with Python numbers keeps its dtype and shape, never
  raises (unlike ``-`` of a bool tensor), so both sides have ``r``'s dtype and shape and
  nothing is broadcast or promoted;
* the literals are finite, multipliers at most 65504 in magnitude and divisors at least
  2**-14 (so that in float16 neither the value nor ``1/c`` overflows): the derivative
  of the side not taken is a finite constant, and zero times it is zero, not NaN
  (``x.sqrt()`` or ``1 / x`` as the unused side give ``0 * inf = nan`` gradients);
* every tensor the test reads is proven 0-d (:meth:`ScalarProver.zero_dim`), after
  ``.item()``/``float()``/``bool()`` are stripped: a one-element tensor of higher rank
  would broadcast the result to more dimensions.

Measured on torch 2.13 (``tests/test_fix_where_proof.py``): outputs and gradients agree
exactly for float16/bfloat16/float32/float64, for both predicate values, with NaN and
inf in ``r``; the near misses (``x.sqrt()``, ``1 / x``, a bare name, two tensors, an
unproven dtype) differ.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Set, Tuple

import libcst as cst

from pt2lint.analysis.walk import walk
from pt2lint.fixes.cond import FLOAT_MODULES, FLOATING_NAME, _proven_floating, floating_by_use
from pt2lint.fixes.context import FixContext
from pt2lint.fixes.predicate import ScalarProver, call_qualname, is_number_literal, literal_value

#: Largest multiplier and smallest divisor (in magnitude) a proven side may have: float16's
#: largest finite value and smallest normal one.
MAX_FACTOR = 65504.0
MIN_DIVISOR = 2.0 ** -14


def _ref_key(node: cst.BaseExpression) -> Optional[str]:
    """``x`` / ``self.a.b`` as text, ``None`` for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _ref_key(node.value)
        return None if inner is None else f"{inner}.{node.attr.value}"
    return None


def _literal(node: cst.BaseExpression) -> Optional[float]:
    """The value of an int or float literal (not bool, not complex), ``None`` otherwise."""
    if not is_number_literal(node) or isinstance(node, cst.Imaginary):
        return None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Imaginary):
        return None
    value = literal_value(node)
    return value if value is not None and math.isfinite(value) else None


def affine_base(node: cst.BaseExpression, depth: int = 0) -> Tuple[Optional[cst.BaseExpression], str]:
    """The one tensor reference of an affine form (see the module docstring) and ``""``, or
    ``(None, reason)``.  A bare reference is returned with ``depth`` 0 only by the caller's check."""
    if depth > 12:
        return None, "the expression is too deeply nested"
    if _ref_key(node) is not None:
        return node, ""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        if _literal(node) is not None:
            return None, "a side is a number"
        return affine_base(node.expression, depth + 1)
    if isinstance(node, cst.BinaryOperation):
        op = node.operator
        lv, rv = _literal(node.left), _literal(node.right)
        if isinstance(op, (cst.Add, cst.Subtract)):
            if (lv is None) == (rv is None):
                return None, "a side adds two tensors (or two numbers)"
            return affine_base(node.right if lv is not None else node.left, depth + 1)
        if isinstance(op, cst.Multiply):
            if (lv is None) == (rv is None):
                return None, "a side multiplies two tensors (or two numbers)"
            c = lv if lv is not None else rv
            if abs(c) > MAX_FACTOR:  # type: ignore[arg-type]
                return None, f"the factor {c:g} overflows float16"
            return affine_base(node.right if lv is not None else node.left, depth + 1)
        if isinstance(op, cst.Divide):
            if rv is None or lv is not None:
                return None, "a side divides by a tensor (its derivative is infinite where the tensor is 0)"
            if abs(rv) < MIN_DIVISOR:
                return None, f"the divisor {rv:g} is zero or underflows float16"
            return affine_base(node.left, depth + 1)
        return None, "a side uses an operator other than + - * /"
    return None, "a side is not arithmetic of one tensor with number literals (a call may raise, or have an infinite derivative, for the other branch's inputs)"


def _strip_scalar_read(ctx: FixContext, node: cst.BaseExpression) -> cst.BaseExpression:
    """``t.item()`` / ``float(t)`` / ``bool(t)`` -> ``t`` (repeatedly)."""
    while True:
        if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value == "item":
            node = node.func.value
            continue
        if isinstance(node, cst.Call) and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            if call_qualname(ctx, node) in ("builtins.float", "builtins.bool"):
                node = node.args[0].value
                continue
        return node


def zero_dim_test(ctx: FixContext, prover: ScalarProver, test: cst.BaseExpression) -> bool:
    """Every tensor ``test`` reads is proven 0-d and every other operand is a Python number, so
    the translated predicate is 0-d and broadcasts nothing."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return zero_dim_test(ctx, prover, test.expression)
    if isinstance(test, cst.BooleanOperation):
        return zero_dim_test(ctx, prover, test.left) and zero_dim_test(ctx, prover, test.right)
    if isinstance(test, cst.Comparison):
        sides = [test.left] + [c.comparator for c in test.comparisons]
        return all(_zero_dim_operand(ctx, prover, s) for s in sides)
    return _zero_dim(prover, _strip_scalar_read(ctx, test))


def _zero_dim_operand(ctx: FixContext, prover: ScalarProver, node: cst.BaseExpression) -> bool:
    """A comparison operand that is a Python number, or a 0-d tensor once a scalar read is
    stripped (``t.item()`` is a number, but the rewrite compares ``t``, which must be 0-d)."""
    inner = _strip_scalar_read(ctx, node)
    if inner is not node:
        return _zero_dim(prover, inner)
    return prover.is_py_number(node) or _zero_dim(prover, node)


def _zero_dim(prover: ScalarProver, node: cst.BaseExpression) -> bool:
    try:
        return bool(prover.zero_dim(node))
    except RecursionError:  # pragma: no cover - very deep expressions
        return False


def floating_submodules(ctx: FixContext, func: Optional[cst.FunctionDef]) -> Set[str]:
    """``self`` attributes the class around ``func`` assigns only to a ``torch.nn`` module of
    :data:`pt2lint.fixes.cond.FLOAT_MODULES` (calling one returns a floating tensor)."""
    cls = ctx.parent(func) if func is not None else None
    while cls is not None and not isinstance(cls, cst.ClassDef):
        cls = ctx.parent(cls)
    if cls is None:
        return set()
    kinds: dict = {}
    for n in walk(cls):
        if isinstance(n, cst.Assign):
            for t in n.targets:
                tgt = t.target
                if isinstance(tgt, cst.Attribute) and isinstance(tgt.value, cst.Name) and tgt.value.value == "self":
                    q = call_qualname(ctx, n.value) if isinstance(n.value, cst.Call) else None
                    ok = q is not None and q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in FLOAT_MODULES
                    kinds.setdefault(tgt.attr.value, set()).add(ok)
    return {name for name, oks in kinds.items() if oks == {True}}


def _before(ctx: FixContext, stmt: cst.CSTNode) -> Sequence[cst.BaseStatement]:
    """The statements of ``stmt``'s block that run before it."""
    parent = ctx.parent(stmt)
    if not isinstance(parent, cst.IndentedBlock):
        return ()
    body = list(parent.body)
    index = next((i for i, st in enumerate(body) if st is stmt), None)
    return body[:index] if index is not None else ()


def exact_where(
    ctx: FixContext,
    func: Optional[cst.FunctionDef],
    stmt: cst.CSTNode,
    test: cst.BaseExpression,
    a: cst.BaseExpression,
    b: cst.BaseExpression,
) -> Optional[str]:
    """Why ``torch.where(test, a, b)`` in ``stmt`` is not proven exactly ``a if test else b``, or
    ``None`` when it is (see the module docstring for what is proven and how).

    Args:
        ctx: the file's context.
        func: the function holding ``stmt`` (``None`` at module level: never proven).
        stmt: the statement the rewrite replaces (its block gives the values names have).
        test: the original test (before translation).
        a: the value when the test holds; b: the value otherwise.
    """
    if func is None:
        return "the expression is not in a function"
    bases = []
    for side in (a, b):
        if _ref_key(side) is not None:
            return f"`{ctx.module.code_for_node(side).strip()}` is the tensor itself in the original and a copy after torch.where"
        base, why = affine_base(side)
        if base is None:
            return why
        bases.append(base)
    if _ref_key(bases[0]) != _ref_key(bases[1]):
        return "the sides read different tensors (what only the side not taken reads gets a zero gradient instead of None)"
    before = _before(ctx, stmt)
    floating = floating_submodules(ctx, func) | {FLOATING_NAME + n for n in floating_by_use(ctx, before, ctx.function_bound(func))}
    if not _proven_floating(ctx, bases[0], before, floating):
        return f"`{ctx.module.code_for_node(bases[0]).strip()}` is not proven floating (Python numbers promote an integer or bool tensor, and `-` of a bool tensor raises)"
    if not zero_dim_test(ctx, ScalarProver(ctx, func), test):
        return "the test is not proven 0-d (a one-element tensor of higher rank broadcasts the result)"
    return None


__all__ = ["MAX_FACTOR", "MIN_DIVISOR", "affine_base", "exact_where", "floating_submodules", "zero_dim_test"]
