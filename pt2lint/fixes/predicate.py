"""Tensor predicates: when is an ``if`` test one tensor value, and how to write it as one.

``torch.cond`` and ``torch.where`` take the predicate as a tensor.  Python's
``if t:`` calls ``bool(t)``, which is defined only for a tensor with exactly one
element, so a rewrite is equivalent only when the test is provably a single
value: a full reduction (``x.sum()``, ``(g > 0.5).any()``, ``torch.all(m)``, ``x.norm()``),
elementwise arithmetic and comparisons of such values with each other and with
Python numbers, or ``t.item()`` (which itself fails unless ``t`` has one element).
A test that might be a multi-element tensor is refused: wrapping it with
``.all()``/``.any()`` would silently turn an error into a choice.

Kinds (tensor, Python number, ...) come from the interpreter's
:class:`~pt2lint.fixes.facts.Facts`; this module only adds the shape fact
"0-d", which the analysis does not track.
"""

from __future__ import annotations

import struct
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from pt2lint.analysis.kinds import Kind
from pt2lint.fixes.context import FixContext, Refuse
from pt2lint.analysis.names import target_names

# Reductions that give a 0-d tensor when called with no ``dim`` (torch.Tensor reference).
REDUCTIONS = frozenset(
    """sum mean max min prod norm all any std var amax amin median nansum nanmean nanmedian count_nonzero
    argmax argmin logsumexp trace dot vdot inner""".split()
)
# ``torch.<name>(t)`` reductions with the tensor as the only positional argument.
_TORCH_REDUCTIONS = REDUCTIONS | frozenset({"linalg.norm", "linalg.vector_norm", "linalg.matrix_norm"})
# Elementwise methods: a 0-d receiver with 0-d or Python-number arguments gives a 0-d result.
ELEMENTWISE = frozenset(
    """abs neg negative sqrt rsqrt exp exp2 log log2 log10 log1p expm1 sigmoid tanh relu float double half
    bfloat16 bool long int short byte char to detach clone clamp clamp_min clamp_max clip round floor ceil trunc
    frac sign sgn square reciprocal pow logical_not logical_and logical_or logical_xor isnan isinf isfinite
    isposinf isneginf signbit type_as eq ne lt le gt ge greater less greater_equal less_equal not_equal add sub
    subtract mul multiply div divide true_divide floor_divide fmod remainder maximum minimum fmax fmin
    nan_to_num sin cos tan asin acos atan sinh cosh asinh acosh atanh erf erfc erfinv lerp where
    contiguous cpu cuda""".split()
)
_SCALAR_KINDS = (Kind.CONST, Kind.SHAPE, Kind.DATA)


def is_number_literal(node: cst.BaseExpression) -> bool:
    """``3``, ``0.5``, ``-1e-4``: an int or float literal, possibly signed."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)) and isinstance(node.expression, (cst.Integer, cst.Float))


def literal_value(node: cst.BaseExpression) -> Optional[float]:
    """The value of a number literal (see :func:`is_number_literal`) as a float, ``None`` if it has none."""
    try:
        if isinstance(node, cst.Integer):
            return float(int(node.value.replace("_", ""), 0))
        if isinstance(node, cst.Float):
            return float(node.value.replace("_", ""))
        if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)):
            v = literal_value(node.expression)
            return None if v is None else (-v if isinstance(node.operator, cst.Minus) else v)
    except (ValueError, OverflowError):
        return None
    return None


def exact_in_every_dtype(value: float, integer: bool = False) -> bool:
    """True when comparing a tensor of any dtype with the Python number ``value`` gives what Python's
    comparison of the number read with ``.item()`` gives.

    Args:
        value: the literal's value.
        integer: the literal is a Python ``int``. torch converts an int to the tensor's own dtype, so it
            must fit every integer dtype: ``uint8`` wraps ``-1`` to 255 and ``int8`` wraps 200 to -56
            (measured on torch 2.13), hence the range 0..127. A float literal promotes an integer
            tensor to a floating dtype and is converted to a floating tensor's dtype, so it must be
            exact in float16, bfloat16 and float32 and at most 256 in magnitude.
    """
    if value != value or abs(value) > 256:
        return False
    if integer:
        return value == int(value) and 0 <= value <= 127
    try:
        f32 = struct.unpack("<f", struct.pack("<f", value))[0]
        f16 = struct.unpack("<e", struct.pack("<e", value))[0]
    except (OverflowError, struct.error):
        return False
    bf16_bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return f32 == value and f16 == value and (bf16_bits & 0xFFFF) == 0


def _is_int_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, cst.Integer)


def _assigned_values(func: cst.FunctionDef) -> Dict[str, List[Optional[cst.BaseExpression]]]:
    """:meth:`ScalarProver._assigns` of ``func``, computed from its body."""
    from pt2lint.analysis.walk import walk

    out: Dict[str, List[Optional[cst.BaseExpression]]] = {}
    binders = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.AsName, cst.NamedExpr)
    for n in walk(func.body, into_functions=False):
        if type(n) not in binders:  # final node classes: a tuple look-up instead of an ABC check per test
            continue
        if isinstance(n, cst.Assign):
            for t in n.targets:
                if isinstance(t.target, cst.Name):
                    out.setdefault(t.target.value, []).append(n.value)
                else:
                    for name in target_names(t.target):
                        out.setdefault(name.value, []).append(None)
        elif isinstance(n, cst.AnnAssign) and n.value is not None:
            for name in target_names(n.target):
                out.setdefault(name.value, []).append(n.value if isinstance(n.target, cst.Name) else None)
        elif isinstance(n, cst.AugAssign):
            for name in target_names(n.target):
                out.setdefault(name.value, []).append(n.value)
        elif isinstance(n, (cst.For, cst.CompFor, cst.AsName, cst.NamedExpr)):
            target = n.target if not isinstance(n, cst.AsName) else n.name
            for name in target_names(target):  # type: ignore[arg-type]
                out.setdefault(name.value, []).append(None)
    for p in list(func.params.params) + list(func.params.posonly_params) + list(func.params.kwonly_params):
        out.setdefault(p.name.value, []).append(None)
    return out


class ScalarProver:
    """Decides "this expression is a tensor with exactly one element" inside one function.

    Args:
        ctx: the file's :class:`FixContext` (facts give each expression's kind).
        func: the function the expression is evaluated in; a local name is 0-d when
            every assignment to it in ``func`` is (parameters are never assumed 0-d).
    """

    def __init__(self, ctx: FixContext, func: Optional[cst.FunctionDef]) -> None:
        self.ctx = ctx
        self.func = func
        self._assignments: Optional[Dict[str, List[Optional[cst.BaseExpression]]]] = None
        self._busy: Set[str] = set()

    def kind(self, node: cst.BaseExpression) -> Optional[Kind]:
        """The interpreter's kind of ``node`` (``None`` when it was never evaluated)."""
        v = self.ctx.facts.value(node)
        return v.kind if v is not None else None

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        """A tensor that cannot be ``None``, per the interpreter."""
        v = self.ctx.facts.value(node)
        return v is not None and v.kind is Kind.TENSOR and not v.maybe_none

    def is_bool_tensor(self, node: cst.BaseExpression) -> bool:
        """A tensor known to have ``dtype=torch.bool`` (comparisons, ``isnan``, masks)."""
        v = self.ctx.facts.value(node)
        return v is not None and v.kind is Kind.TENSOR and v.bool_tensor

    def is_py_number(self, node: cst.BaseExpression) -> bool:
        """A Python number (constant, SymInt, config value): not a tensor, not a container, not None."""
        if is_number_literal(node):
            return True
        v = self.ctx.facts.value(node)
        if v is not None and v.kind in _SCALAR_KINDS and not v.maybe_none:
            return True
        return v is not None and v.kind is Kind.UNKNOWN and self._number_attribute(node)

    def _number_attribute(self, node: cst.BaseExpression) -> bool:
        """``self.<name>`` that every method of the class sets only to a number literal or to a
        parameter annotated ``int``/``float`` or defaulting to a number literal (``threshold=0.5``).

        The analysis gives constructor parameters no kind (the caller may pass anything); this is the
        narrow fact the predicate needs, read from the class's own assignments.
        """
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and self.func is not None):
            return False
        owner = self.ctx.parent(self.func)
        while owner is not None and not isinstance(owner, cst.ClassDef):
            owner = self.ctx.parent(owner)
        if owner is None:
            return False
        name = node.attr.value
        found = False
        from pt2lint.analysis.walk import walk

        for n in walk(owner.body):
            if not isinstance(n, cst.FunctionDef):
                continue
            params = {p.name.value: p for p in list(n.params.params) + list(n.params.kwonly_params)}
            for a in walk(n.body):
                targets = [t.target for t in a.targets] if isinstance(a, cst.Assign) else ([a.target] if isinstance(a, (cst.AnnAssign, cst.AugAssign)) else [])
                for t in targets:
                    if isinstance(t, cst.Attribute) and t.attr.value == name and isinstance(t.value, cst.Name):
                        value = getattr(a, "value", None)
                        if isinstance(a, cst.AugAssign) or value is None:
                            return False
                        if is_number_literal(value):
                            found = True
                        elif isinstance(value, cst.Name) and value.value in params and _number_param(params[value.value]):
                            found = True
                        else:
                            return False
        return found

    def _assigns(self) -> Dict[str, List[Optional[cst.BaseExpression]]]:
        """``name -> values`` bound to it in the function (``None``: bound by a parameter, a loop, a
        pattern or an unpacking), read once per function for the whole module: the codemods other
        than ``cond`` build a prover per finding, and each would read the whole function again."""
        if self._assignments is None:
            func = self.func
            self._assignments = {} if func is None else self.ctx.per_node("assigned-values", func, lambda: _assigned_values(func))
        return self._assignments

    def zero_dim(self, node: cst.BaseExpression) -> bool:
        """True when ``node`` is provably a 0-d tensor."""
        if not self.is_tensor(node):
            return False
        return self._zero_dim(node)

    def _operand_ok(self, node: cst.BaseExpression) -> bool:
        return self.is_py_number(node) or self.zero_dim(node)

    def _zero_dim(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Name):
            name = node.value
            if name in self._busy:
                return False
            values = self._assigns().get(name)
            if not values or any(v is None for v in values):
                return False
            self._busy.add(name)
            try:
                return all(self._operand_ok(v) for v in values)  # type: ignore[arg-type]
            finally:
                self._busy.discard(name)
        if isinstance(node, cst.Call):
            args = [a for a in node.args if a.keyword is None and not a.star]
            kwargs = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
            if any(a.star for a in node.args):
                return False
            func = node.func
            q = call_qualname(self.ctx, node)
            if q is not None and q.startswith("torch."):
                name = q[len("torch."):]
                if name in _TORCH_REDUCTIONS and len(args) == 1 and not (set(kwargs) & {"dim", "axis"}):
                    return True
                if name in ("tensor", "scalar_tensor") and len(args) == 1 and (is_number_literal(args[0].value) or self.is_py_number(args[0].value)):
                    return True
                if name in ("rand", "randn", "zeros", "ones", "empty", "full") and args and isinstance(args[0].value, (cst.List, cst.Tuple)) and not args[0].value.elements:
                    return True  # torch.rand([]), torch.zeros(()): the size is empty
                if name in ("dot", "vdot", "inner") and len(args) == 2:
                    return name != "inner"
                if name in ELEMENTWISE or name in ("where", "clamp", "minimum", "maximum"):
                    tensors = [a.value for a in args + [cst.Arg(v) for v in kwargs.values()]]
                    return bool(tensors) and all(self._operand_ok(t) for t in tensors) and any(self.zero_dim(t) for t in tensors)
                return False
            if isinstance(func, cst.Attribute) and q is None:
                method = func.attr.value
                recv = func.value
                rv = self.ctx.facts.value(recv)
                if rv is None or rv.kind is not Kind.TENSOR:  # a None receiver fails in the original too
                    return False
                if method in REDUCTIONS and method not in ("dot", "vdot", "inner"):
                    if set(kwargs) & {"dim", "axis"}:
                        return False
                    if method in ("max", "min") and args:
                        return len(args) == 1 and self._operand_ok(args[0].value) and self.zero_dim(recv)
                    if method == "norm":
                        return len(args) <= 1
                    return not args
                if method in ELEMENTWISE:
                    return self.zero_dim(recv) and all(self._operand_ok(a.value) or not self.is_tensor(a.value) for a in args) and all(
                        not self.is_tensor(v) or self.zero_dim(v) for v in kwargs.values()
                    )
            return False
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.MatrixMultiply):
                return False
            return self._operand_ok(node.left) and self._operand_ok(node.right) and (self.zero_dim(node.left) or self.zero_dim(node.right))
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self.zero_dim(node.expression)
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            right = node.comparisons[0].comparator
            if isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
                return False
            return self._operand_ok(node.left) and self._operand_ok(right) and (self.zero_dim(node.left) or self.zero_dim(right))
        return False


def _number_param(p: cst.Param) -> bool:
    ann = p.annotation.annotation if p.annotation is not None else None
    if ann is not None:
        return isinstance(ann, cst.Name) and ann.value in ("int", "float")
    return p.default is not None and is_number_literal(p.default)


def call_qualname(ctx: FixContext, call: cst.Call) -> Optional[str]:
    """The qualified name of the function ``call`` calls (``torch.sum``, ``builtins.float``), as the
    interpreter resolved it; ``None`` for method calls on values and unknown callees."""
    ev = ctx.facts.calls.get(id(call))
    if ev is not None:
        return ev.qualname
    return ctx.imports.qualify(call.func)


# methods and torch functions that return a value for every tensor they accept, empty ones
# included (``mean`` of an empty tensor is nan; ``max``/``min``/``item`` of one raise)
TOTAL_CALLS = frozenset(
    """any all sum mean abs neg isnan isinf isfinite isneginf isposinf float double half bfloat16 bool
    logical_not logical_and logical_or logical_xor numel dim sign signbit""".split()
)


def is_total(node: cst.BaseExpression) -> bool:
    """Whether evaluating ``node`` (a rewritten predicate part) cannot raise for any input of the kinds
    it already has: names, attributes, number literals, comparisons, ``+ - * /``, ``not`` and the calls
    of :data:`TOTAL_CALLS`. An index (out of range, boolean mask), ``//``, ``%`` (integer division by
    zero raises) or any other call is not known to be total.

    The test decides whether ``and``/``or`` may become ``torch.logical_and``/``logical_or``, which
    evaluate both sides where Python skips the right one.
    """
    if isinstance(node, (cst.Name, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Attribute):
        return is_total(node.value)
    if isinstance(node, cst.UnaryOperation):
        return is_total(node.expression)
    if isinstance(node, cst.BooleanOperation):
        return is_total(node.left) and is_total(node.right)
    if isinstance(node, cst.BinaryOperation):
        ok_op = isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide))
        return ok_op and is_total(node.left) and is_total(node.right)
    if isinstance(node, cst.Comparison):
        return is_total(node.left) and all(is_total(c.comparator) for c in node.comparisons)
    if isinstance(node, cst.Call):
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in TOTAL_CALLS:
            return False
        if any(a.keyword is not None or a.star for a in node.args):
            return False
        receiver_ok = is_total(func.value)
        return receiver_ok and all(is_total(a.value) for a in node.args)
    return False


class Predicate:
    """A translated tensor predicate.

    Attributes:
        expr: the new test expression (a single-element bool tensor).
        inexact: reasons the new comparison may disagree with the old one on some values
            (an operand of unknown kind next to a number read with ``.item()``).
        stripped: number of ``.item()``/``float()``/``bool()`` calls removed.
    """

    def __init__(self, expr: cst.BaseExpression, inexact: List[str], stripped: int) -> None:
        self.expr = expr
        self.inexact = inexact
        self.stripped = stripped


def translate_predicate(ctx: FixContext, func: Optional[cst.FunctionDef], test: cst.BaseExpression, torch: str) -> Predicate:
    """Rewrite an ``if`` test as a single-element bool tensor with the same truth value.

    Args:
        ctx: the file's context (facts give kinds).
        func: the function the test is evaluated in.
        test: the test expression.
        torch: the local name of the torch module.

    Raises:
        Refuse: the test is not provably one tensor value, mixes Python values with
            tensors in ``and``/``or``/``not``, or uses a construct with no tensor
            equivalent (``is``, ``in``, chained comparisons, ``int()``).
    """
    prover = ScalarProver(ctx, func)
    inexact: List[str] = []
    stripped = [0]

    def unwrap(node: cst.BaseExpression) -> Tuple[cst.BaseExpression, bool]:
        """``t.item()``/``float(t)``/``bool(t)`` -> ``t``; returns (node, was_stripped)."""
        if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value == "item":
            recv = node.func.value
            if prover.is_tensor(recv):
                stripped[0] += 1
                return _keep_parens(node, recv), True
        if isinstance(node, cst.Call) and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            q = call_qualname(ctx, node)
            if q in ("builtins.float", "builtins.bool"):
                inner, _ = unwrap(node.args[0].value)
                if prover.is_tensor(inner) or (inner is not node.args[0].value):
                    stripped[0] += 1
                    return _keep_parens(node, inner), True
            if q in ("builtins.int", "builtins.complex"):
                raise Refuse(f"`{q[9:]}()` of a tensor truncates or changes type; the test has no exact tensor form")
        return node, False

    def single(node: cst.BaseExpression, was_stripped: bool) -> bool:
        return was_stripped or prover.zero_dim(node)

    def truth(node: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = truth(node.expression)
            return _call(torch, "logical_not", [inner], node)
        if isinstance(node, cst.BooleanOperation):
            left = truth(node.left)
            right = truth(node.right)
            word = "and" if isinstance(node.operator, cst.And) else "or"
            if not is_total(right):
                raise Refuse(
                    f"`{word}` skips `{_code(ctx, node.right)}` when the left side decides, and "
                    f"torch.logical_{word} would evaluate it for every input, where it may raise "
                    f"(an index, a reduction of a possibly empty tensor, a call pt2lint cannot see into)"
                )
            name = "logical_and" if isinstance(node.operator, cst.And) else "logical_or"
            return _call(torch, name, [left, right], node)
        if isinstance(node, cst.Comparison):
            return comparison(node)
        inner, was = unwrap(node)
        if not prover.is_tensor(inner):
            if prover.is_py_number(inner) or prover.kind(inner) in (Kind.CONST, Kind.SHAPE, Kind.NONE):
                raise Refuse("the test mixes Python values with tensors (split it into a Python `if` around the tensor one)")
            raise Refuse(f"`{_code(ctx, inner)}` is not known to be a tensor")
        if not single(inner, was):
            raise Refuse(f"`{_code(ctx, inner)}` is not provably a single value; `bool()` of a multi-element tensor raises, and `.all()`/`.any()` would change that")
        if prover.is_bool_tensor(inner):
            return inner
        return cst.Comparison(
            left=_paren_if_needed(inner),
            comparisons=[cst.ComparisonTarget(cst.NotEqual(), cst.Integer("0"))],
        )

    def comparison(node: cst.Comparison) -> cst.BaseExpression:
        if len(node.comparisons) != 1:
            raise Refuse("chained comparison (`a < b < c`): rewrite it with `and` first")
        comp = node.comparisons[0]
        if isinstance(comp.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
            raise Refuse(f"`{_code(ctx, node)}` is a Python test (`is`/`in`), not a tensor one; split it into a Python `if` around the tensor one")
        left, ls = unwrap(node.left)
        right, rs = unwrap(comp.comparator)
        lt, rt = prover.is_tensor(left), prover.is_tensor(right)
        if not lt and not rt:
            raise Refuse(f"`{_code(ctx, node)}` does not compare a tensor")
        for side, was, is_t in ((left, ls, lt), (right, rs, rt)):
            if is_t and not single(side, was):
                raise Refuse(f"`{_code(ctx, side)}` is not provably a single value; `bool()` of a multi-element tensor raises")
            if not is_t and not prover.is_py_number(side):
                kind = prover.kind(side)
                if kind is not Kind.UNKNOWN:
                    raise Refuse(f"`{_code(ctx, side)}` is neither a tensor nor a Python number")
                if ls or rs:
                    # float(t) > obj and t.double() > obj agree for numbers, not for a float32 tensor obj
                    inexact.append(f"`{_code(ctx, side)}` is of unknown kind: if it is a tensor, the comparison's dtype changes")
                # else: the comparison is the original one, and ``bool()`` and ``torch.cond`` see the same tensor
        if ls or rs:
            other = right if ls else left
            value = literal_value(other) if is_number_literal(other) else None
            if not (ls and rs) and value is not None and exact_in_every_dtype(value, _is_int_literal(other)):
                pass  # a small literal exact in every dtype: the tensor's dtype gives Python's answer
            else:
                # Python compared the number read from the tensor as a float64 (or int); compare the tensor
                # as float64 too, which holds every float16/bfloat16/float32/float64 value and every
                # integer up to 2**53 exactly.
                if ls:
                    left = _double(left)
                if rs:
                    right = _double(right)
        return node.with_changes(left=left, comparisons=[comp.with_changes(comparator=right)])

    return Predicate(truth(test), inexact, stripped[0])


def _code(ctx: FixContext, node: cst.CSTNode) -> str:
    text = ctx.module.code_for_node(node).strip()
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _keep_parens(old: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
    if getattr(old, "lpar", None) and not getattr(new, "lpar", None):
        try:
            return new.with_changes(lpar=old.lpar, rpar=old.rpar)
        except Exception:
            return new
    return new


def _double(node: cst.BaseExpression) -> cst.BaseExpression:
    return cst.Call(func=cst.Attribute(value=_paren_if_needed(node), attr=cst.Name("double")))


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString)


def _paren_if_needed(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, _ATOMS) or getattr(node, "lpar", None):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def paren_if_needed(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` in parentheses unless it is an atom (name, attribute, call, subscript, literal) or already parenthesized."""
    return _paren_if_needed(node)


def _call(torch: str, name: str, args: List[cst.BaseExpression], like: cst.BaseExpression) -> cst.Call:
    call = cst.Call(
        func=cst.Attribute(value=cst.Name(torch), attr=cst.Name(name)),
        args=[cst.Arg(_strip_parens(a)) for a in args],
    )
    if getattr(like, "lpar", None):
        call = call.with_changes(lpar=like.lpar, rpar=like.rpar)
    return call


def _strip_parens(node: cst.BaseExpression) -> cst.BaseExpression:
    if getattr(node, "lpar", None) and len(node.lpar) == 1:
        return node.with_changes(lpar=[], rpar=[])
    return node


__all__ = [
    "Predicate",
    "ScalarProver",
    "call_qualname",
    "exact_in_every_dtype",
    "is_total",
    "is_number_literal",
    "literal_value",
    "paren_if_needed",
    "translate_predicate",
]
