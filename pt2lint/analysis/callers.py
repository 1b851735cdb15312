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
from pt2lint.analysis.walk import walk, walk_with_function

_SIZE_ATTRIBUTES = frozenset({"shape", "ndim"})
#: Attributes that are a ``torch.dtype`` or ``torch.device`` on a tensor or module.
_NON_TENSOR_ATTRIBUTES = frozenset({"dtype", "device"})


#: ``nn.Module`` methods that return the module itself (``torch/nn/modules/module.py``: ``to``,
#: ``cuda``, ``eval``, ... end in ``return self``): ``Head(...).to(device)`` is the instance.
MODULE_SELF_RETURNING = frozenset({
    "to", "cuda", "cpu", "xpu", "mtia", "ipu", "type", "float", "double", "half", "bfloat16",
    "to_empty", "train", "eval", "requires_grad_", "share_memory", "apply",
})


def _built_class(value: cst.BaseExpression) -> Optional[str]:
    """``"Cls"`` when ``value`` is ``Cls(...)``, or a chain of :data:`MODULE_SELF_RETURNING` calls
    on it; ``None`` for anything else."""
    while isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Name):
            return func.value
        if isinstance(func, cst.Attribute) and func.attr.value in MODULE_SELF_RETURNING:
            value = func.value
            continue
        return None
    return None


class _ModuleCalls:
    """Every call of a module, indexed once: by the name called (``f(...)``), by the attribute
    called on ``self``/``cls`` (``self.f(...)``), and the ``g = <compile>(f)`` assignments, each
    call with its position in source order and the ``def`` it is in; and the attributes and names
    that hold instances of one class only (``holders``)."""

    __slots__ = ("module", "by_name", "by_self_attr", "compiled_aliases", "compiled_calls", "enclosing", "holders")

    def __init__(self, module: cst.Module) -> None:
        self.module = module  # kept alive: the cache is keyed by its id()
        self.by_name: Dict[str, List[Tuple[int, cst.Call]]] = {}
        self.by_self_attr: Dict[str, List[Tuple[int, cst.Call]]] = {}
        # (name of the function passed, the assignment): ``step = torch.compile(fn)``
        self.compiled_aliases: List[Tuple[str, cst.Assign]] = []
        # (name of the function passed, position, the call): ``torch.compile(fn)(x, 3)``
        self.compiled_calls: List[Tuple[str, int, cst.Call]] = []
        # id of a call in ``by_name`` or ``by_self_attr`` -> the innermost ``def`` it is in (None at
        # module level)
        self.enclosing: Dict[int, Optional[cst.FunctionDef]] = {}
        # the class each ``self.<attr> = ...`` / ``<name> = ...`` builds (None: anything else), by
        # attribute and by (``def``, name); see :func:`instance_call_sites`
        attrs: Dict[str, List[Optional[str]]] = {}
        names: Dict[Tuple[int, str], List[Optional[str]]] = {}
        for order, (node, fn) in enumerate(walk_with_function(module)):
            if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
                built = _built_class(node.value)
                for t in [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]:
                    if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                        attrs.setdefault(t.attr.value, []).append(built)
                    elif isinstance(t, cst.Name):
                        names.setdefault((id(fn), t.value), []).append(built)
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Call) and func.args and isinstance(func.args[0].value, cst.Name) and not func.args[0].star:
                    self.compiled_calls.append((func.args[0].value.value, order, node))
                if isinstance(func, cst.Name):
                    self.by_name.setdefault(func.value, []).append((order, node))
                    self.enclosing[id(node)] = fn
                elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
                    self.by_self_attr.setdefault(func.attr.value, []).append((order, node))
                    self.enclosing[id(node)] = fn
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and node.value.args:
                first = node.value.args[0].value
                if isinstance(first, cst.Name):
                    self.compiled_aliases.append((first.value, node))
        # class name -> the attributes and (``def``, name) pairs that hold nothing but its instances
        self.holders: Dict[str, Tuple[List[str], List[Tuple[int, str]]]] = {}
        for index, keys in ((0, attrs), (1, names)):
            for key, built in keys.items():
                if built[0] is not None and all(b == built[0] for b in built):
                    self.holders.setdefault(built[0], ([], []))[index].append(key)


_CALL_INDEX: Dict[int, _ModuleCalls] = {}
_CALL_INDEX_SIZE = 64  # modules kept; a run analyses one entry module and its imports at a time


def _module_calls(module: cst.Module) -> _ModuleCalls:
    got = _CALL_INDEX.get(id(module))
    if got is None or got.module is not module:
        if len(_CALL_INDEX) >= _CALL_INDEX_SIZE:
            _CALL_INDEX.pop(next(iter(_CALL_INDEX)))
        got = _CALL_INDEX[id(module)] = _ModuleCalls(module)
    return got


def call_sites(index, fn) -> List[cst.Call]:
    """The calls of ``fn`` written in its own module.

    Args:
        index: the :class:`~pt2lint.analysis.index.ModuleIndex` of the module holding ``fn``.
        fn: a :class:`~pt2lint.analysis.index.FunctionInfo`.

    Returns:
        Every ``fn(...)`` call (or a call of a name bound to ``torch.compile(fn)``, or
        ``torch.compile(fn)(...)`` itself) for a module-level function, and every ``self.fn(...)`` / ``cls.fn(...)`` call for a
        method, in source order.  Calls inside ``fn`` itself (recursion) are left out.
        The module's calls are indexed once (:class:`_ModuleCalls`), so asking for every
        function of a module costs time linear in its size, not quadratic.
    """
    module = getattr(index, "module", None)
    if module is None or fn.node is None:
        return []
    calls = _module_calls(module)
    name = fn.name
    if fn.cls is None:
        names = {name}
        for passed, assign in calls.compiled_aliases:
            # ``step = torch.compile(fn)``: calls of ``step`` are calls of ``fn``
            if passed == name and index.imports.qualify(assign.value.func) in api.COMPILE_FUNCTIONS:
                names.update(t.target.value for t in assign.targets if isinstance(t.target, cst.Name))
        found = [c for n in names for c in calls.by_name.get(n, ())]
        # ``torch.compile(fn)(x, 3)``: the compiled function called where it is made
        found += [
            (order, call) for passed, order, call in calls.compiled_calls
            if passed == name and index.imports.qualify(call.func.func) in api.COMPILE_FUNCTIONS
        ]
    else:
        found = list(calls.by_self_attr.get(name, ()))
    if not found:
        return []
    own = {id(n) for n in walk(fn.node)}
    return [node for _, node in sorted(found, key=lambda pair: pair[0]) if id(node) not in own]


def instance_call_sites(module: cst.Module, cls_name: str) -> List[Tuple[cst.Call, Optional[cst.FunctionDef]]]:
    """The calls of instances of the module class ``cls_name`` that ``module`` builds and keeps:
    ``self.head(...)`` where every assignment of ``self.head`` in the module is ``Head(...)`` (or
    ``Head(...).to(device)``), and ``net(...)`` in the function (or at module level) that binds
    ``net = Head(...)`` and nothing else to ``net``; each with the ``def`` it is in.

    Calling an ``nn.Module`` instance runs its ``forward`` with the same arguments
    (``Module.__call__``), so these are the calls of ``Head.forward``.  An attribute or name that
    also holds anything else says nothing and is left out.  The module's assignments and calls
    are indexed once (:class:`_ModuleCalls`), so asking for every class of a module costs time
    linear in its size.
    """
    calls = _module_calls(module)
    attrs, names = calls.holders.get(cls_name, ((), ()))
    out: List[Tuple[int, cst.Call, Optional[cst.FunctionDef]]] = []
    for attr in attrs:
        out += [(order, call, calls.enclosing.get(id(call))) for order, call in calls.by_self_attr.get(attr, ())]
    for scope, name in names:
        out += [
            (order, call, calls.enclosing.get(id(call))) for order, call in calls.by_name.get(name, ())
            if id(calls.enclosing.get(id(call))) == scope
        ]
    return [(call, fn) for _, call, fn in sorted(out, key=lambda t: t[0])]


def calls_named(module: cst.Module, name: str) -> List[Tuple[cst.Call, Optional[cst.FunctionDef]]]:
    """Every ``name(...)`` call of ``module``, in source order, with the innermost ``def`` it is in
    (``None`` at module level or in a class body); from the module's call index
    (:class:`_ModuleCalls`, built once per module)."""
    calls = _module_calls(module)
    return [(node, calls.enclosing[id(node)]) for _, node in calls.by_name.get(name, ())]


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
    if isinstance(expr, cst.Attribute) and expr.attr.value in _NON_TENSOR_ATTRIBUTES:
        return CONST  # ``x.dtype``, ``x.device``: a torch.dtype or torch.device, never a tensor
    if isinstance(expr, cst.Attribute) and expr.attr.value in api.TORCH_DTYPES and imports is not None:
        if imports.qualify(expr) == f"torch.{expr.attr.value}":
            return CONST  # ``torch.float32``
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


def caller_arguments(call: cst.Call, imports=None, fallback=None) -> Optional[Tuple[List[Value], Dict[str, Value]]]:
    """``(positional, keyword)`` argument values of one call, or ``None`` when it splats ``*``/``**``.

    ``fallback(expr)``, when given, is asked for an argument that :func:`static_value` leaves
    Unknown (the caller's annotation of a name it was passed, say)."""
    args: List[Value] = []
    kwargs: Dict[str, Value] = {}
    for a in call.args:
        if a.star:
            return None
        v = static_value(a.value, imports)
        if v.kind is Kind.UNKNOWN and fallback is not None:
            v = fallback(a.value)
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
