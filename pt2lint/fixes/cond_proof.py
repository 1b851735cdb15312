"""When a ``torch.cond`` rewrite is proven, not only unrefuted (DESIGN §5: a safe fix is applied unread).

:mod:`pt2lint.fixes.cond` refuses the rewrites it knows to be wrong (breaks, side effects, ``None``
outputs, buffer writes, dtype clashes it can see).  Refuting known failures leaves the unknown ones:
torch.cond needs both branches to return tensors of one dtype, shape, device and aliasing
status, and the gradients of an ``if`` become those of both branches (a parameter the taken
branch does not use gets a zero ``.grad`` instead of ``None``).  Helpers that write state, an
``nn.Identity`` returning its input, ``F.pad`` changing a size, ``.to(dtype)``, autocast, several
outputs under inductor's backward (measured on torch 2.13: "cond_true might be aliasing the input
or the output") each broke a rewrite that nothing refuted.

So a rewrite is *safe* only when this module proves it from a small grammar, branch by branch:

* each branch is straight-line ``name = expr`` statements (one plain name each) and, in a branch
  that returns, a final ``return expr``; there is one output (one name assigned, or one value
  returned);
* every expression is built from names, numeric literals, ``+ - * /`` and unary ``-``/``+``,
  ``self.<attr>`` loads (an attribute holding a Python number reads like a literal), calls of the
  module's own submodules (``self.proj(x)``), the elementwise functions and methods of
  :data:`ELEMENTWISE` (``torch.sigmoid(e)``, ``e.relu()``) and ``e.clamp(...)`` with number bounds;
* the output of each branch is computed by such an operation (a fresh tensor, never an attribute
  or the result of a module that may return its input: ``nn.Identity``, ``Dropout`` in eval mode),
  by a floating ``torch.nn`` module of ``FLOAT_MODULES`` (a new tensor), or is an outside name
  passed through, which the rewrite returns as a ``.clone()``;
* both branches read the same *leaves*: the same outside names, ``self`` attributes and submodule
  calls (a floating module's calls on arguments of the same leaves, any other module's written the
  same way).  Elementwise operations broadcast their leaves, so equal leaf sets
  give equal shapes and devices, and the same parameters take part in both gradients;
* the dtypes agree: both branches promote alike (the same use of float literals and of true
  division), or both read a leaf known to be floating (a submodule of ``FLOAT_MODULES``, a name
  the cond codemod proved floating), which makes every result floating;
* the ``if`` is not inside a ``with`` block of the function (``torch.autocast`` changes the dtype
  of some ops only).

Anything else is not proven, and the rewrite is offered as unsafe with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set

import libcst as cst

#: Elementwise torch functions (``torch.<name>``, ``torch.nn.functional.<name>``) and tensor methods
#: of one tensor that keep its shape, device and floating dtype (torch's reference: each is a
#: pointwise op of one input; ``relu`` and ``abs`` keep integer dtypes too).
ELEMENTWISE = frozenset(
    "sigmoid tanh relu exp abs sin cos neg gelu silu softplus elu selu mish log_sigmoid hardtanh relu6 "
    "hardsigmoid hardswish sqrt rsqrt log log1p expm1 square reciprocal".split()
)
#: Full reductions (no ``dim``) to a 0-d tensor: broadcasting a 0-d tensor keeps the other operand's
#: shape, and the result is computed from the operand's leaves.  ``mean``/``norm``/``std``/``var``
#: raise for integer tensors, so where they run their operand is floating; ``amax``/``amin``/``max``/
#: ``min`` keep its dtype (``sum`` promotes integers to int64: not here).
_FLOAT_REDUCTIONS = frozenset("mean norm std var".split())
_REDUCTIONS = _FLOAT_REDUCTIONS | frozenset("amax amin max min".split())
_ELEMENTWISE_QUALS = frozenset(
    [f"torch.{n}" for n in ELEMENTWISE] + [f"torch.nn.functional.{n}" for n in ELEMENTWISE] + ["torch.nn.functional.logsigmoid"]
)


class Unproven(Exception):
    """A branch leaves the grammar; the message says where."""


@dataclass
class Reading:
    """What one branch's output is built from."""

    leaves: Set[str] = field(default_factory=set)  # read at their full shape
    reduced: Set[str] = field(default_factory=set)  # read only through a full reduction (0-d)
    casts: Set[str] = field(default_factory=set)  # ``.float()``-style casts applied
    float_literal: bool = False
    true_division: bool = False
    floating: bool = False
    touched: bool = False  # an operation is applied (a name passed through is not: a bool stays bool)
    floating_evidence: Set[str] = field(default_factory=set)  # leaves a float-only reduction reads


def unproven_reason(
    branches: Sequence[Sequence[cst.BaseStatement]],
    outputs: Sequence[str],
    mode: str,
    *,
    qualname: Callable[[cst.Call], Optional[str]],
    floating_names: FrozenSet[str],
    floating_submodules: FrozenSet[str],
    inside_with: bool,
    number_attrs: FrozenSet[str] = frozenset(),
    definitions: Optional[Dict[str, cst.BaseExpression]] = None,
    elementwise_submodules: FrozenSet[str] = frozenset(),
) -> Optional[str]:
    """Why a ``torch.cond`` rewrite is not proven safe, or ``None`` when it is (see the module doc).

    Args:
        branches: the statements of every branch (an ``elif`` chain gives more than two).
        outputs: the names the branches assign and the rewrite returns (``mode == "assign"``).
        mode: ``"assign"`` or ``"return"``.
        qualname: the qualified name of a call (``torch.sigmoid``), or None.
        floating_names: names known to hold floating tensors where the ``if`` is reached.
        floating_submodules: ``self`` attributes known to be floating ``torch.nn`` modules.
        inside_with: the ``if`` is inside a ``with`` statement of its function.
        number_attrs: ``self`` attributes that hold Python numbers (read like a number literal).
        definitions: names bound once in the function, before the ``if`` in its block, with the
            expression each is bound to (``m = h.mean()``): read through, so ``(h - m) * 0.5`` reads
            ``h`` at full shape and through a reduction.
        elementwise_submodules: ``self`` attributes holding an activation module of
            :data:`ELEMENTWISE_MODULES` (not in place): a call of one is an elementwise operation.

    Returns:
        The reason, phrased to follow "not proven safe: ", or None.
    """
    if inside_with:
        return "the `if` is inside a `with` block (autocast and other contexts change dtypes per op)"
    if mode == "assign" and len(outputs) != 1:
        return f"the branches produce {len(outputs)} outputs (one is proven; several fail inductor's backward)"
    readings: List[Reading] = []
    for stmts in branches:
        try:
            readings.append(_read_branch(stmts, outputs, mode, qualname, floating_names, floating_submodules, number_attrs, definitions or {}, elementwise_submodules))
        except Unproven as exc:
            return str(exc)
    evidence = set().union(*(r.floating_evidence for r in readings))
    first = readings[0]

    def floating(r: Reading) -> bool:
        return r.floating or bool((r.leaves | r.reduced) & evidence)

    def promotion(r: Reading):
        # with one set of leaves, a Python float or a true division turns an integral result into the
        # default float dtype and leaves a floating one as it is; any operation turns bool into an integer
        return (r.float_literal or r.true_division, r.touched)

    for other in readings[1:]:
        if other.leaves != first.leaves or other.leaves | other.reduced != first.leaves | first.reduced:
            return "the branches read different tensors, parameters or submodules (shapes and gradients may differ)"
        if other.casts != first.casts:
            return "the branches cast to different dtypes"
        if promotion(first) != promotion(other) and not (floating(first) and floating(other)):
            return "the branches may promote to different dtypes (float literals, true division or arithmetic in one only)"
    return None


def _read_branch(stmts, outputs, mode, qualname, floating_names, floating_submodules, number_attrs, definitions, elementwise_submodules) -> Reading:
    env: Dict[str, cst.BaseExpression] = {}
    result: Optional[cst.BaseExpression] = None
    for i, stmt in enumerate(stmts):
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            raise Unproven("a branch has a compound or multi-part statement")
        small = stmt.body[0]
        if isinstance(small, cst.Assign):
            if len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
                raise Unproven("a branch assigns something other than one plain name")
            env[small.targets[0].target.value] = small.value
        elif isinstance(small, cst.Return) and mode == "return" and i == len(stmts) - 1 and small.value is not None:
            if isinstance(small.value, cst.Tuple):
                raise Unproven("a branch returns several values")
            result = small.value
        elif isinstance(small, cst.Pass):
            continue
        else:
            raise Unproven(f"a branch has a `{type(small).__name__}` statement")
    if mode == "assign":
        name = outputs[0]
        # a branch that leaves the output as it was passes the operand through: the rewrite
        # returns a ``.clone()`` of it (torch.cond outputs may not alias its inputs)
        result = env.pop(name) if name in env else cst.Name(name)
    if result is None:
        raise Unproven("a branch has no result")
    top = _follow(result, env)
    floating_call = (
        isinstance(top, cst.Call) and isinstance(top.func, cst.Attribute) and isinstance(top.func.value, cst.Name)
        and top.func.value.value == "self" and top.func.attr.value in floating_submodules
    )
    activation_call = (
        isinstance(top, cst.Call) and isinstance(top.func, cst.Attribute) and isinstance(top.func.value, cst.Name)
        and top.func.value.value == "self" and top.func.attr.value in elementwise_submodules
    )
    cast = isinstance(top, cst.Call) and _cast_operand(top, qualname) is not None
    if not (_fresh(top, qualname) or floating_call or activation_call or cast or (isinstance(top, cst.Name) and top.value not in env)):
        raise Unproven("a branch's result is not computed by an arithmetic or elementwise operation (it may alias its input)")
    reading = Reading()
    scan = _Scanner(env, qualname, floating_names, floating_submodules, number_attrs, definitions, elementwise_submodules)
    scan(top, reading, 0)
    return reading


def _follow(expr: cst.BaseExpression, env: Dict[str, cst.BaseExpression]) -> cst.BaseExpression:
    seen = 0
    while isinstance(expr, cst.Name) and expr.value in env and seen < 50:
        expr = env[expr.value]
        seen += 1
    return expr


def _fresh(expr: cst.BaseExpression, qualname) -> bool:
    if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)):
        return True
    return isinstance(expr, cst.Call) and _elementwise_operand(expr, qualname) is not None


def _number_literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


def _elementwise_operand(call: cst.Call, qualname) -> Optional[cst.BaseExpression]:
    """The tensor of ``torch.sigmoid(e)`` / ``e.sigmoid()``-style calls of :data:`ELEMENTWISE`, and of
    ``e.clamp(min=-1.0, max=1.0)`` with number literal bounds, else None."""
    func = call.func
    if (
        isinstance(func, cst.Attribute) and func.attr.value in ("clamp", "clip", "clamp_min", "clamp_max") and qualname(call) is None
        and call.args and all(not a.star and _number_literal(a.value) and (a.keyword is None or a.keyword.value in ("min", "max")) for a in call.args)
        and _same_literal_kinds(call)
    ):
        return func.value
    if any(a.keyword is not None or a.star for a in call.args):
        return None
    q = qualname(call)
    if q in _ELEMENTWISE_QUALS and len(call.args) == 1:
        return call.args[0].value
    func = call.func
    if (
        q is None and isinstance(func, cst.Attribute) and func.attr.value in ELEMENTWISE and not call.args
        and not (isinstance(func.value, cst.Name) and func.value.value in ("torch", "F", "nn", "self"))
    ):
        return func.value
    return None


class _Scanner:
    """Reads one branch's output expression into a :class:`Reading`, or raises :class:`Unproven`."""

    def __init__(self, env, qualname, floating_names, floating_submodules, number_attrs, definitions, elementwise_submodules) -> None:
        self.env = env
        self.definitions = definitions
        self.elementwise_submodules = elementwise_submodules
        self.reading_definition: Set[str] = set()
        self.qualname = qualname
        self.floating_names = floating_names
        self.floating_submodules = floating_submodules
        self.number_attrs = number_attrs

    def __call__(self, expr, reading: Reading, depth: int) -> None:
        if depth > 200:
            raise Unproven("a branch's expression is too deep to read")
        env = self.env
        if isinstance(expr, cst.Name):
            if expr.value in env:
                self(env[expr.value], reading, depth + 1)
                return
            if expr.value in ("True", "False", "None"):
                raise Unproven("a branch uses a constant that is not a number")
            defined = self.definitions.get(expr.value)
            if defined is not None and expr.value not in self.reading_definition:
                # read through a name bound once before the ``if`` (``m = h.mean()``); when its
                # expression leaves the grammar the name is a leaf of its own
                sub = Reading()
                self.reading_definition.add(expr.value)
                try:
                    self(defined, sub, depth + 1)
                except Unproven:
                    sub = None
                finally:
                    self.reading_definition.discard(expr.value)
                if sub is not None:
                    _merge(reading, sub)
                    reading.floating = reading.floating or expr.value in self.floating_names
                    return
            reading.leaves.add(f"name:{expr.value}")
            reading.floating = reading.floating or expr.value in self.floating_names
            return
        if isinstance(expr, cst.Integer):
            return
        if isinstance(expr, cst.Float):
            reading.float_literal = True
            return
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            reading.touched = True
            self(expr.expression, reading, depth + 1)
            return
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
            reading.touched = True
            if isinstance(expr.operator, cst.Divide):
                reading.true_division = True
            self(expr.left, reading, depth + 1)
            self(expr.right, reading, depth + 1)
            return
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            if expr.attr.value in self.number_attrs:
                reading.float_literal = True  # a Python number: promotes like a literal (read as a float)
                return
            reading.leaves.add(f"self.{expr.attr.value}")
            return
        if isinstance(expr, cst.Call):
            inner = _elementwise_operand(expr, self.qualname)
            if inner is not None:
                reading.touched = True
                self(inner, reading, depth + 1)
                return
            reduced = _full_reduction(expr, self.qualname)
            if reduced is not None:
                operand, name = reduced
                sub = Reading()
                self(operand, sub, depth + 1)
                if name in _FLOAT_REDUCTIONS:
                    sub.floating_evidence |= sub.leaves | sub.reduced
                # a full reduction is 0-d: its leaves take part in the values and gradients, not the shape
                sub.reduced |= sub.leaves
                sub.leaves = set()
                _merge(reading, sub)
                reading.touched = True
                return
            operand = _cast_operand(expr, self.qualname)
            if operand is not None:
                reading.casts.add(expr.func.attr.value)
                reading.touched = True
                if expr.func.attr.value in _FLOAT_CASTS:
                    reading.floating = True
                self(operand, reading, depth + 1)
                return
            func = expr.func
            if (
                isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                and func.attr.value in self.elementwise_submodules and len(expr.args) == 1 and expr.args[0].keyword is None
                and not expr.args[0].star
            ):
                reading.touched = True  # ``self.act(h)`` with ``self.act = nn.GELU()``: elementwise
                self(expr.args[0].value, reading, depth + 1)
                return
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
                if any(a.keyword is not None or a.star for a in expr.args):
                    raise Unproven(f"`self.{func.attr.value}(...)` is called with keyword or starred arguments")
                # a submodule call is a leaf.  A floating torch.nn module (Linear, LayerNorm...) returns
                # a new floating tensor whose shape follows its input's, so it is keyed by the leaves
                # of its arguments; any other module (nn.Identity, Dropout returning its input, a
                # module of the project) by its arguments as written, the branch's names followed
                floating = func.attr.value in self.floating_submodules
                args = []
                for a in expr.args:
                    sub = Reading()
                    self(a.value, sub, depth + 1)
                    key = ",".join(sorted(sub.leaves))
                    args.append(key if floating else f"{key}|{sub.float_literal}|{sub.true_division}|{_code(a.value, env)}")
                reading.leaves.add(f"call:self.{func.attr.value}({';'.join(args)})")
                reading.floating = reading.floating or floating
                return
            name = self.qualname(expr) or (func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "?"))
            raise Unproven(f"a branch calls `{name}`, which is not a proven elementwise operation")
        raise Unproven(f"a branch uses a `{type(expr).__name__}` expression")


#: Activation modules of ``torch.nn`` that apply one of :data:`ELEMENTWISE` (``nn.GELU()``), when
#: built without ``inplace=True``.
ELEMENTWISE_MODULES = frozenset(
    "ReLU GELU SiLU Tanh Sigmoid ELU SELU CELU Softplus Mish Hardswish Hardsigmoid ReLU6 LogSigmoid LeakyReLU Hardtanh".split()
)
#: Dtype casts without arguments; the floating ones make the result floating whatever the input.
_FLOAT_CASTS = frozenset("float double half bfloat16".split())
_CASTS = _FLOAT_CASTS | frozenset("long int short".split())


def _cast_operand(call: cst.Call, qualname) -> Optional[cst.BaseExpression]:
    """The tensor of ``e.float()``-style casts of :data:`_CASTS` (no arguments), else None."""
    func = call.func
    if (
        not call.args and isinstance(func, cst.Attribute) and func.attr.value in _CASTS and qualname(call) is None
        and not (isinstance(func.value, cst.Name) and func.value.value in ("torch", "F", "nn", "self"))
    ):
        return func.value
    return None


def _merge(into: Reading, sub: Reading) -> None:
    into.leaves |= sub.leaves
    into.reduced |= sub.reduced
    into.casts |= sub.casts
    into.float_literal |= sub.float_literal
    into.true_division |= sub.true_division
    into.floating |= sub.floating
    into.touched |= sub.touched
    into.floating_evidence |= sub.floating_evidence


def _full_reduction(call: cst.Call, qualname):
    """``(operand, name)`` of ``e.mean()``/``torch.amax(e)``-style full reductions of :data:`_REDUCTIONS`
    (no ``dim``, no other argument), else None."""
    func = call.func
    q = qualname(call)
    if q is None and isinstance(func, cst.Attribute) and func.attr.value in _REDUCTIONS and not call.args:
        if isinstance(func.value, cst.Name) and func.value.value in ("torch", "F", "nn", "self"):
            return None
        return func.value, func.attr.value
    if q is not None and q.rpartition(".")[0] == "torch" and q.rpartition(".")[2] in _REDUCTIONS:
        if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
            return call.args[0].value, q.rpartition(".")[2]
    return None


def _same_literal_kinds(call: cst.Call) -> bool:
    """The bounds of a ``clamp`` are all integer literals or all float literals (a float bound on an
    integer tensor is an error, so a floating result; an integer bound keeps the dtype)."""
    kinds = {type(a.value.expression if isinstance(a.value, cst.UnaryOperation) else a.value) for a in call.args}
    return len(kinds) == 1


def _code(expr: cst.BaseExpression, env: Dict[str, cst.BaseExpression]) -> str:
    """The source of ``expr`` with the branch's own names replaced by what they were assigned."""

    class _Inline(cst.CSTTransformer):
        def leave_Name(self, original, updated):  # noqa: N802 - LibCST's visitor naming
            hit = env.get(original.value)
            return hit.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if hit is not None and not isinstance(hit, cst.Name) else updated

    return cst.Module(body=[]).code_for_node(expr.visit(_Inline()))


__all__ = ["ELEMENTWISE", "ELEMENTWISE_MODULES", "Unproven", "unproven_reason"]
