"""The ``mask-index`` codemod: a boolean-mask selection that only feeds a full reduction.

* ``x[mask].sum()``, ``torch.sum(x[mask])``  ->  ``torch.where(mask, x, 0).sum()``  (safe)
* ``x[mask].mean()``  ->  ``(torch.where(mask, x, 0).sum(dtype=<x's dtype, float32 at least>) / mask.sum()).to(x.dtype)``
  when ``x`` is proven floating, with a trailing ``.mean()`` otherwise (safe; refused for
  a tensor known to be integer or bool, whose mean always raises)
* ``x[mask].max()`` / ``.min()``: refused (no exact static form)

``x[mask]`` has a data-dependent shape (rule PTC201, a graph break); the reduction of
it does not.  Measured on torch 2.13 (``tests/test_fix_mask_index.py`` repeats it on
random, empty, full and NaN-holding inputs, for float16/bfloat16/float32/float64,
int32/int64/uint8 and bool ``x``):

* ``sum``: same dtype and value for every dtype, empty masks included (0); integer and
  bool sums are bit-identical, floating sums agree up to the order of summation (the
  rewrite adds zeros in other places: last-bit differences, within
  ``torch.testing.assert_close``); gradients are identical.  Safe.
* ``mean`` as sum over count, accumulated in float32 at least (``torch.promote_types(x.dtype,
  torch.float32)``, as ``mean()`` accumulates: a plain float16 sum of 2000 elements of 100.0
  is inf where the mean is 100) and cast back to ``x``'s dtype: floating results and
  gradients agree up to summation order, an empty mask gives NaN in both.  For an integer or
  bool ``x`` the original raises (``mean()`` needs a floating dtype) and the sum over the
  count does not, so where ``x`` is not proven floating (a floating submodule's output, a
  name an ``nn.Linear`` or ``mean()`` read before) the rewrite ends in ``.mean()`` of its 0-d
  result: the identity for a floating tensor, and for an integer or bool one the original's
  ``RuntimeError`` with its message (eager; compiled, ``TorchRuntimeError`` as for the
  original).  Measured for int64/int32/int8/uint8/bool and every floating dtype.
* ``max``/``min``: the original raises on an empty mask, a ``-inf`` filler does not,
  and integer dtypes have no infinity: refused.

The rewrite needs ``mask`` to have exactly ``x``'s shape: ``torch.where`` broadcasts
from the right where indexing matches from the left, so a mask of lower rank selects
rows in the original and fails or selects columns in the rewrite (measured).  The shape
is proven only for masks built elementwise from ``x`` itself (the same name or
attribute): comparisons of ``x`` (or of an elementwise function of it, ``x.abs()``,
``(x - x.mean()).abs()``) with Python numbers or 0-d tensors, ``isnan``/
``isfinite``/``isinf``/``signbit`` of ``x``, ``~``/``&``/``|``/``logical_*`` of such
masks, and a local name bound once to such a mask when ``x`` is never rebound in the
function (a parameter, or ``self.<attr>`` the function does not assign).  Any other mask
is left alone.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from pt2lint.analysis.kinds import Kind
from pt2lint.analysis.walk import walk
from pt2lint.diagnostics import Applicability, Fix
from pt2lint.fixes.context import FixContext, Refuse, all_params
from pt2lint.fixes.edits import strip_leading_lines
from pt2lint.analysis.names import bound_names
from pt2lint.fixes.predicate import ScalarProver, call_qualname, paren_if_needed

NAME = "mask-index"
TARGET_CODES = frozenset({"PTC201"})
_ELEMENTWISE_TESTS = frozenset({"isnan", "isfinite", "isinf", "isposinf", "isneginf", "signbit", "isreal"})
#: Elementwise tensor functions and methods of one tensor (no other arguments): the result has
#: the argument's shape.  In-place forms (``abs_``) are not listed.
_ELEMENTWISE_MATH = frozenset(
    """abs neg negative exp expm1 log log1p log2 log10 sqrt rsqrt sigmoid tanh relu sign sgn square
    reciprocal sin cos floor ceil round trunc frac float double half bfloat16 clone detach contiguous""".split()
)
_ARITH = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)
_LOGICAL = frozenset({"logical_and", "logical_or", "logical_xor"})
_COMPARE = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)

SUM_NOTE = (
    "exact for integer and bool tensors; floating sums agree up to summation order (measured on torch 2.13, "
    "empty masks and NaN outside the mask included)"
)
MEAN_NOTE = (
    "the `.mean()` of the 0-d result is the identity for a floating `{x}` and raises the original's "
    "RuntimeError for an integer or bool one (mean() needs a floating dtype; eager and compiled, measured on "
    "torch 2.13); floating results agree with mean() up to summation order, an empty mask giving NaN in both"
)
MEAN_PROVEN_NOTE = (
    "`{x}` is proven floating, and for floating tensors the sum over the count (accumulated in float32 at "
    "least) agrees with mean() up to summation order, an empty mask giving NaN in both and the gradients "
    "equal (measured on torch 2.13)"
)


def _same_ref(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """``a`` and ``b`` are the same name or attribute chain of names (``x``, ``self.buf``)."""
    if isinstance(a, cst.Name) and isinstance(b, cst.Name):
        return a.value == b.value
    if isinstance(a, cst.Attribute) and isinstance(b, cst.Attribute):
        return a.attr.value == b.attr.value and _same_ref(a.value, b.value)
    return False


def _is_ref(node: cst.BaseExpression) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


class _MaskShape:
    """Proves "``mask`` is a bool tensor of exactly ``x``'s shape" for masks built elementwise from ``x``."""

    def __init__(self, ctx: FixContext, func, x: cst.BaseExpression) -> None:
        self.ctx = ctx
        self.x = x
        self.func = func
        self.prover = ScalarProver(ctx, func)
        self._busy: set = set()

    def _x_or_scalar(self, node: cst.BaseExpression) -> Optional[bool]:
        """True: ``x`` or a tensor of exactly its shape (:meth:`_x_shaped`); False: a Python number
        or 0-d tensor; None: anything else."""
        if self._x_shaped(node):
            return True
        if self.prover.is_py_number(node) or self.prover.zero_dim(node):
            return False
        return None

    def _x_shaped(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """``node`` has exactly ``x``'s shape: ``x`` itself, an elementwise function of it
        (:data:`_ELEMENTWISE_MATH`: ``x.abs()``, ``torch.sigmoid(x)``, ``-x``), or arithmetic of
        such a tensor with Python numbers, 0-d tensors or another such tensor (``x * 2``,
        ``(x - x.mean()).abs()``): a number or 0-d operand broadcasts to the other's shape."""
        if depth > 8:
            return False
        if _same_ref(node, self.x):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self._x_shaped(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITH):
            left, right = self._x_shaped(node.left, depth + 1), self._x_shaped(node.right, depth + 1)
            if left and right:
                return True
            other = node.right if left else node.left if right else None
            return other is not None and (self.prover.is_py_number(other) or self.prover.zero_dim(other))
        if isinstance(node, cst.Call) and not any(a.star or a.keyword is not None for a in node.args):
            q = call_qualname(self.ctx, node)
            if q is not None and q.startswith("torch.") and len(node.args) == 1:
                return q[len("torch."):] in _ELEMENTWISE_MATH and self._x_shaped(node.args[0].value, depth + 1)
            if q is None and isinstance(node.func, cst.Attribute) and not node.args:
                return node.func.attr.value in _ELEMENTWISE_MATH and self._x_shaped(node.func.value, depth + 1)
        return False

    def _stable_x(self) -> bool:
        """``x`` names the same tensor everywhere in the function: a name the body never rebinds
        (a parameter or a closure), or ``self.<attr>`` that the body never assigns."""
        func = self.func
        if func is None:
            return False
        if isinstance(self.x, cst.Name):
            return self.x.value not in self.ctx.function_bound(func)
        for n in walk(func.body):
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else ([n.target] if isinstance(n, (cst.AnnAssign, cst.AugAssign)) else [])
            if any(_same_ref(t, self.x) for t in targets):
                return False
        return isinstance(self.x, cst.Attribute)

    def _single_value(self, name: str) -> Optional[cst.BaseExpression]:
        """The value of the only binding of local ``name`` (``name = value``), else ``None``."""
        func = self.func
        if func is None or name in {p.name.value for p in all_params(func)}:
            return None
        binds = bound_names([func.body]).get(name, [])
        if len(binds) != 1 or not isinstance(binds[0], cst.Assign):
            return None
        assign = binds[0]
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return None
        return assign.value

    def proves(self, mask: cst.BaseExpression) -> bool:  # noqa: C901 - one case per form
        if isinstance(mask, cst.Name):
            # ``m = x > 0`` bound once, ``x`` never rebound: ``m`` has ``x``'s shape wherever it is read
            if mask.value in self._busy:
                return False
            value = self._single_value(mask.value)
            if value is None or not self._stable_x():
                return False
            self._busy.add(mask.value)
            try:
                return self.proves(value)
            finally:
                self._busy.discard(mask.value)
        if isinstance(mask, cst.Comparison) and len(mask.comparisons) == 1:
            comp = mask.comparisons[0]
            if not isinstance(comp.operator, _COMPARE):
                return False
            sides = (self._x_or_scalar(mask.left), self._x_or_scalar(comp.comparator))
            return None not in sides and True in sides
        if isinstance(mask, cst.UnaryOperation) and isinstance(mask.operator, cst.BitInvert):
            return self.proves(mask.expression)
        if isinstance(mask, cst.BinaryOperation) and isinstance(mask.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self.proves(mask.left) and self.proves(mask.right)
        if isinstance(mask, cst.Call) and not any(a.star or a.keyword is not None for a in mask.args):
            args = [a.value for a in mask.args]
            q = call_qualname(self.ctx, mask)
            if q is not None and q.startswith("torch."):
                name = q[len("torch."):]
                if name in _ELEMENTWISE_TESTS and len(args) == 1:
                    return _same_ref(args[0], self.x)
                if name == "logical_not" and len(args) == 1:
                    return self.proves(args[0])
                if name in _LOGICAL and len(args) == 2:
                    return self.proves(args[0]) and self.proves(args[1])
                return False
            if q is None and isinstance(mask.func, cst.Attribute):
                method, recv = mask.func.attr.value, mask.func.value
                if method in _ELEMENTWISE_TESTS and not args:
                    return _same_ref(recv, self.x)
                if method == "logical_not" and not args:
                    return self.proves(recv)
        return False


def _mean_form(torch: str, where: cst.Call, mask: cst.BaseExpression, x: cst.BaseExpression) -> cst.BaseExpression:
    """``(torch.where(mask, x, 0).sum(dtype=torch.promote_types(x.dtype, torch.float32)) / mask.sum()).to(x.dtype)``:
    the sum over the count accumulated in float32 at least, as ``mean()`` does (a float16 sum of
    the selection can overflow where its mean does not: 2000 elements of 100.0), cast back."""
    def attr(value: cst.BaseExpression, name: str) -> cst.Attribute:
        return cst.Attribute(value=value, attr=cst.Name(name))

    acc = cst.Call(func=attr(cst.Name(torch), "promote_types"), args=[cst.Arg(attr(x, "dtype")), cst.Arg(attr(cst.Name(torch), "float32"))])
    total = cst.Call(func=attr(where, "sum"), args=[cst.Arg(acc, keyword=cst.Name("dtype"), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))])
    count = cst.Call(func=attr(paren_if_needed(mask), "sum"))
    ratio = cst.BinaryOperation(left=total, operator=cst.Divide(), right=count, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=attr(ratio, "to"), args=[cst.Arg(attr(x, "dtype"))])


def _not_floating(ctx: FixContext, func, stmt: cst.CSTNode, x: cst.BaseExpression) -> Optional[str]:
    """Why ``x`` is not proven a floating tensor where ``stmt`` runs, or ``None`` when it is: the
    output of a floating ``torch.nn`` submodule, of a floating op of one, or a name a floating-only
    reduction or a floating-input submodule read before ``stmt`` in its block (the proofs of
    :func:`pt2lint.fixes.cond._proven_floating`, :func:`~pt2lint.fixes.cond.floating_by_use` and
    :func:`~pt2lint.fixes.module_facts.floating_inputs`)."""
    from pt2lint.fixes.cond import _FLOAT_DTYPES, FLOATING_NAME, _proven_floating, dtype_class, floating_by_use
    from pt2lint.fixes.module_facts import floating_inputs
    from pt2lint.fixes.where_proof import floating_submodules

    if func is None:
        return "the expression is not in a function"
    parent = ctx.parent(stmt)
    body = list(parent.body) if isinstance(parent, cst.IndentedBlock) else []
    index = next((i for i, st in enumerate(body) if st is stmt), len(body))
    before = body[:index]
    rebound = ctx.function_bound(func)
    names = floating_by_use(ctx, before, rebound) | floating_inputs(ctx, before, rebound)
    floating = floating_submodules(ctx, func) | {FLOATING_NAME + n for n in names}
    if _proven_floating(ctx, x, before, floating):
        return None
    code = ctx.module.code_for_node(x).strip()
    known = dtype_class(ctx, x, before)
    if known not in ("?", "num", "float") and known not in _FLOAT_DTYPES:
        raise Refuse(f"`{code}` is {known}: `.mean()` of it raises for every input, there is nothing to keep")
    return f"`{code}` is not proven floating"


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The ``torch.where`` fix for ``x[mask].sum()`` / ``.mean()`` (a refusal for ``.max()``/``.min()``); else ``None``."""
    sub = finding.node
    if finding.stmt is None or ctx.parent(finding.stmt) is None:
        return None  # a finding in another file of the project (its nodes are not this module's)
    stmt = finding.stmt
    if not isinstance(sub, cst.Subscript) or len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    parent = ctx.parent(sub)
    call = ctx.parent(parent) if isinstance(parent, (cst.Attribute, cst.Arg)) else None
    if not isinstance(call, cst.Call):
        return None
    if isinstance(parent, cst.Attribute) and parent.value is sub and call.func is parent:
        method, extra = parent.attr.value, list(call.args)  # x[mask].sum(...)
    elif isinstance(parent, cst.Arg) and call.args and call.args[0] is parent and parent.keyword is None and not parent.star:
        q = call_qualname(ctx, call)  # torch.sum(x[mask], ...)
        if q is None or not q.startswith("torch."):
            return None
        method, extra = q[len("torch."):], list(call.args[1:])
    else:
        return None
    if method not in ("sum", "mean", "max", "min"):
        return None
    if not isinstance(stmt, cst.SimpleStatementLine):
        return None
    return ctx.fix_once(NAME, call, lambda: _build(ctx, stmt, sub, call, method, extra), "not rewritten with torch.where")


def _build(ctx: FixContext, stmt, sub: cst.Subscript, call: cst.Call, method: str, extra) -> Fix:
    if extra:
        raise Refuse(f"`.{method}(...)` with arguments reduces over some dimensions only; the result's shape would change")
    if method in ("max", "min"):
        raise Refuse(
            f"`.{method}()` of an empty selection raises, a filler value (-inf/inf) would not, and integer dtypes have no infinity"
        )
    x = sub.value
    mask = sub.slice[0].slice.value  # type: ignore[union-attr]
    xv = ctx.facts.value(x)
    if xv is None or xv.kind is not Kind.TENSOR or xv.maybe_none:
        raise Refuse("the indexed value is not known to be a tensor")
    if not _is_ref(x):
        raise Refuse("the indexed value is not a name or attribute (it would be evaluated in a different order)")
    func = ctx.enclosing_function(stmt)
    if not _MaskShape(ctx, func, x).proves(mask):
        raise Refuse(
            "the mask is not provably of the indexed tensor's shape (torch.where broadcasts from the right, "
            "indexing matches from the left)"
        )
    torch, import_edits = ctx.torch_name(func)
    bare_mask = mask.with_changes(lpar=[], rpar=[]) if getattr(mask, "lpar", None) else mask
    where = cst.Call(
        func=cst.Attribute(value=cst.Name(torch), attr=cst.Name("where")),
        args=[cst.Arg(bare_mask), cst.Arg(x), cst.Arg(cst.Integer("0"))],
    )
    total = cst.Call(func=cst.Attribute(value=where, attr=cst.Name("sum")))
    xcode = ctx.module.code_for_node(x).strip()
    if method == "sum":
        new: cst.BaseExpression = total
        applicability, note = Applicability.SAFE, SUM_NOTE
    else:
        new = _mean_form(torch, where, bare_mask, x)
        why = _not_floating(ctx, func, stmt, x)
        if why is None:
            applicability, note = Applicability.SAFE, MEAN_PROVEN_NOTE.format(x=xcode)
        else:
            # the 0-d `.mean()` raises for integer and bool tensors as the original does
            new = cst.Call(func=cst.Attribute(value=new, attr=cst.Name("mean")))
            applicability, note = Applicability.SAFE, why + "; " + MEAN_NOTE.format(x=xcode)
    if call.lpar:
        new = new.with_changes(lpar=call.lpar, rpar=call.rpar)
    new_stmt = strip_leading_lines(stmt).deep_replace(call, new)
    edits = ctx.replace_statements([stmt], [new_stmt])  # type: ignore[list-item]
    text = ctx.module.code_for_node(new)
    return Fix(
        f"reduce without selecting: `{text}` (the mask is built elementwise from `{xcode}`, so it has its shape); {note}",
        applicability,
        tuple(edits) + tuple(import_edits),
        NAME,
    )


__all__ = ["NAME", "TARGET_CODES", "propose"]
