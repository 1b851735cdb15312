"""What the callers of a compiled function pass, read from the call sites (DESIGN §2).

A function compiled on its own (``@torch.compile``, ``torch.compile(fn)``) is a
region root: Dynamo sees its arguments as graph inputs, so their kinds are what
the calls in the project pass.  The interpreter follows calls made from other
compiled code itself; this module covers the call sites it does not interpret
(a training loop, a script, a helper nobody compiles), by reading each argument
expression without running anything:

* a literal number, string, ``True``/``False`` is a Python constant, ``None`` is None;
* ``len(x)``, ``x.shape``/``x.shape[i]``, ``x.size(...)``, ``x.dim()``, ``x.ndim``,
  ``x.numel()`` and arithmetic on these are sizes (SymInt);
* a tuple or list of such values is a container of them;
* anything else is Unknown: it says nothing, the parameter keeps its default kind
  as a guess for that caller.

Nothing here imports torch: the facts are Python's (what a literal is) and the
size-returning tensor attributes that :mod:`pt2lint.analysis.torch_api` lists.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from pt2lint.analysis import torch_api as api
from pt2lint.analysis.kinds import CONST, NONE, SHAPE, UNKNOWN, Kind, Value, const, container, join
from pt2lint.analysis.walk import walk

_SIZE_ATTRIBUTES = frozenset({"shape", "ndim"})


def call_sites(index, fn) -> List[cst.Call]:
    """The calls of ``fn`` written in its own module.

    Args:
        index: the :class:`~pt2lint.analysis.index.ModuleIndex` of the module holding ``fn``.
        fn: a :class:`~pt2lint.analysis.index.FunctionInfo`.

    Returns:
        Every ``fn(...)`` call (or a call of a name bound to ``torch.compile(fn)``) for a
        module-level function, and every ``self.fn(...)`` / ``cls.fn(...)`` call for a
        method, in source order.  Calls inside ``fn`` itself (recursion) are left out.
    """
    module = getattr(index, "module", None)
    if module is None or fn.node is None:
        return []
    name = fn.name
    own = {id(n) for n in walk(fn.node)}
    names = {name}
    if fn.cls is None:
        for node in walk(module):
            # ``step = torch.compile(fn)``: calls of ``step`` are calls of ``fn``
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and node.value.args:
                first = node.value.args[0].value
                if (
                    isinstance(first, cst.Name)
                    and first.value == name
                    and index.imports.qualify(node.value.func) in api.COMPILE_FUNCTIONS
                ):
                    names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
    out: List[cst.Call] = []
    for node in walk(module):
        if not isinstance(node, cst.Call) or id(node) in own:
            continue
        func = node.func
        if fn.cls is None and isinstance(func, cst.Name) and func.value in names:
            out.append(node)
        elif (
            fn.cls is not None
            and isinstance(func, cst.Attribute)
            and func.attr.value == name
            and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls")
        ):
            out.append(node)
    return out


def static_value(expr: cst.BaseExpression, imports=None) -> Value:
    """The kind of an argument expression read without interpreting its context.

    Args:
        expr: the argument expression at a call site.
        imports: the module's import map (to recognise ``builtins.len`` under another
            name); optional.

    Returns:
        A :class:`~pt2lint.analysis.kinds.Value`: CONST, NONE, SHAPE, a container of
        those, or UNKNOWN when the expression alone does not say.
    """
    if isinstance(expr, cst.Integer):
        try:
            return const(int(expr.value.replace("_", ""), 0))
        except ValueError:
            return CONST
    if isinstance(expr, (cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return CONST
    if isinstance(expr, cst.Name):
        if expr.value == "None":
            return NONE
        if expr.value in ("True", "False"):
            return const(expr.value == "True")
        return UNKNOWN
    if isinstance(expr, cst.UnaryOperation):
        inner = static_value(expr.expression, imports)
        return inner if inner.kind in (Kind.CONST, Kind.SHAPE) else UNKNOWN
    if isinstance(expr, cst.BinaryOperation):
        left, right = static_value(expr.left, imports), static_value(expr.right, imports)
        if left.kind in (Kind.CONST, Kind.SHAPE) and right.kind in (Kind.CONST, Kind.SHAPE):
            return SHAPE if Kind.SHAPE in (left.kind, right.kind) else CONST
        return UNKNOWN
    if isinstance(expr, (cst.Tuple, cst.List)):
        elts = []
        for el in expr.elements:
            if isinstance(el, cst.StarredElement):
                return UNKNOWN
            v = static_value(el.value, imports)
            if v.kind is Kind.UNKNOWN:
                return UNKNOWN
            elts.append(v)
        return container(elts=elts)
    if isinstance(expr, cst.Attribute) and expr.attr.value in _SIZE_ATTRIBUTES:
        return SHAPE
    if isinstance(expr, cst.Subscript):
        base = expr.value
        if isinstance(base, cst.Attribute) and base.attr.value == "shape":
            return SHAPE
        if isinstance(base, cst.Call) and static_value(base, imports).kind is Kind.SHAPE:
            return SHAPE  # ``x.size()[0]``
        return UNKNOWN
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value == "len":
            qual = imports.qualify(func) if imports is not None else "builtins.len"
            return SHAPE if qual in (None, "len", "builtins.len") else UNKNOWN
        if isinstance(func, cst.Attribute) and func.attr.value in (api.SHAPE_METHODS | api.SIZE_METHODS):
            return SHAPE
        return UNKNOWN
    return UNKNOWN


def caller_arguments(call: cst.Call, imports=None) -> Optional[Tuple[List[Value], Dict[str, Value]]]:
    """``(positional, keyword)`` argument values of one call, or ``None`` when it splats ``*``/``**``."""
    args: List[Value] = []
    kwargs: Dict[str, Value] = {}
    for a in call.args:
        if a.star:
            return None
        v = static_value(a.value, imports)
        if a.keyword is not None:
            kwargs[a.keyword.value] = v
        else:
            args.append(v)
    return args, kwargs


def join_callers(bound: List[Dict[str, Value]], defaults: Dict[str, Value]) -> Dict[str, Value]:
    """Join the parameter values bound at each call site into one entry environment.

    Args:
        bound: for each call site, ``parameter -> value`` as bound there.
        defaults: the parameters' kinds when no caller informs them (an unannotated
            parameter with no default is a Tensor).

    Returns:
        ``parameter -> value``: a parameter that no call site informs (every caller passes
        something Unknown) keeps its default; otherwise the join of what the callers pass,
        an uninformative caller counting as the default *guess* (a weak Tensor), so that a
        parameter that is an int at one call and unknown at another is only maybe a
        tensor, and a rule reports only what breaks for either.
    """
    out = dict(defaults)
    for name, default in defaults.items():
        values = [b[name] for b in bound if name in b]
        if not values or all(_uninformative(v) for v in values):
            continue
        guess = _as_guess(default)
        acc: Optional[Value] = None
        for v in values:
            v = guess if _uninformative(v) else v
            acc = v if acc is None else join(acc, v)
        if acc is not None:
            out[name] = acc
    return out


def _uninformative(v: Value) -> bool:
    return v.kind is Kind.UNKNOWN or (v.kind is Kind.TENSOR and v.weak)


def _as_guess(default: Value) -> Value:
    """The default kind as a guess: a Tensor default becomes a weak (maybe) Tensor."""
    if default.kind is Kind.TENSOR and not default.weak:
        return Value(Kind.TENSOR, weak=True, alias_of=default.alias_of, maybe_none=default.maybe_none)
    return default
