"""What the uses of an unannotated parameter say about its type.

The analysis guesses that an unannotated ``forward`` parameter without a default is a tensor:
most are.  The guess is wrong for the Python values callers pass next to the tensors (a number
of steps, a guidance scale, a flag, a dict of tensors), and a branch or a ``range()`` on such a
value is then taken for a data-dependent one.  Dynamo specialises a Python number or bool
argument as a constant (measured on torch 2.13: ``if guidance_scale == 1.0:`` and
``for _ in range(horizon):`` with Python numbers passed trace in one graph and recompile when the
value changes; ``x_dict.items()`` is a dict's method).  The function's own body often tells:

* an attribute ``torch.Tensor`` does not have (``x_dict.items()``, ``cfg.hidden_size``), and none
  it has: the value is surely no tensor, whatever else it is used for (``x_dict[k]``): a dict,
  list or tuple when every such attribute is one of theirs (:data:`CONTAINER`), else an object
  (:data:`OBJECT`); Tensor's attributes are ``dir(torch.Tensor)`` on the table's torch
  (:func:`pt2lint.analysis.dynamo_facts.tensor_attributes`);
* used only where a Python number or flag is what code passes (an argument of ``range()``, a
  comparison with a number literal tested by an ``if``, ``while``, ``assert``, ``and``/``or`` or
  ``not`` (one whose result is kept may be a mask: ``x[keep > 0]``), a truth test, ``not``), also
  through arithmetic (``if step % 2 == 0:``), and otherwise only in arithmetic, in ``is None``
  tests or as an argument of ``int()``, ``float()``, ``bool()``, ``min()``, ``max()``, ``abs()``,
  ``round()``: most likely a number (:data:`NUMBER`), still possibly a tensor, so the guess
  becomes a weak one, which rules do not flag branches on.  A name assigned once from arithmetic
  on it whose own uses are number uses only (``stride = self.T // num_steps`` then
  ``range(0, self.T, stride)``) counts as a number use.

* passed where no overload of an ATen operator takes a tensor: a positional argument of a
  ``torch.Tensor`` method or ``torch`` function (or an element of a tuple or list passed there)
  that the facts table's ``schema_arguments`` (``torch._C._jit_get_all_schemas()``) types as an
  int, size, float, flag or dtype in every overload (``x.view(b, t, num_heads, -1)``,
  ``scores.topk(k)``, ``x.new_full((n, d), 0.0)``; not ``x.repeat_interleave(n)``, which also
  takes a tensor of repeats), counts as a number use; a 0-d tensor passed there is read with
  ``.item()``, as one passed to ``range()`` is;
* passed on to a function of the project (of the same module or imported) or a method of the
  instance, by position or keyword: the uses of the parameter it binds speak instead
  (``scatter_mean(h, batch, dim_size=num_graphs)`` with ``src.new_zeros(dim_size, d)``);
* unpacked into names (``H, W = hw_shape``) of which one has a number use and none a tensor
  attribute read (``x.view(B, H, W, C)``, ``if H % 2 == 1:``): a number use (a sequence of sizes);
* an element read with a constant index (``hw_shape[0]``) is used as the parameter itself would
  be, and a name bound once to it or to the parameter (``h = size[0]``) whose uses are all number
  uses makes a number use.

Any other use (a method or attribute tensors have, an index, another call argument, a return)
says "maybe a tensor", and the guess stays.  Rebinding the parameter makes the uses say nothing (a
different value may reach them), unless it is to a number computed from it and number literals
(``k -= 1``, ``k = min(k, 3)``).
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Iterator, Mapping, NamedTuple, Optional, Set, Tuple

import libcst as cst

from pt2lint.analysis.names import bound_names
from pt2lint.analysis.walk import walk

#: A use shows the value is no tensor.
OBJECT = "object"
#: Every use is one of a Python number or flag.
NUMBER = "number"
#: A use shows the value is no tensor, and every attribute read is one of a dict, list or tuple.
CONTAINER = "container"

_TENSOR = "tensor"  # a use that may well be a tensor's
_TENSOR_ATTRIBUTE = "tensor-attribute"  # an attribute tensors have (``x.shape``, ``x.sum()``)
_NEUTRAL = "neutral"  # a use any value may have (arithmetic, ``is None``)

_NUMBER_BUILTINS = frozenset({"range"})
#: Public attributes of Python's dict, list and tuple (``items``, ``keys``, ``append``...).
_CONTAINER_ATTRIBUTES = frozenset(n for t in (dict, list, tuple) for n in dir(t) if not n.startswith("_"))
_NEUTRAL_BUILTINS = frozenset({"int", "float", "min", "max", "abs", "round", "bool"})
_ARITHMETIC = (cst.BinaryOperation, cst.UnaryOperation)
_FOLLOW_DEPTH = 2

_MEMO: Dict[Tuple[int, str, bool, bool, Optional[str]], Tuple[cst.FunctionDef, Optional[str]]] = {}
_MEMO_MAX = 4096  # entries keep their trees alive: bounded, for long-lived processes (the LSP server)


class Callee(NamedTuple):
    """A function a parameter is passed on to, as a ``callee`` resolver of :func:`evidence` answers.

    Attributes:
        node: its definition.
        skip: how many of its leading parameters the call does not pass (1 for a method called on
            the instance: ``self``).
        callee: the resolver for the calls in its own body (its module's functions, its class's
            methods), or None.
        receiver: the name of its instance parameter, for a method; else None.
    """

    node: cst.FunctionDef
    skip: int
    callee: Optional[Callable[[str], object]]
    receiver: Optional[str]


class _Context(NamedTuple):
    tensor_attributes: frozenset  # ``dir(torch.Tensor)``'s public names (empty: unknown)
    schema_arguments: Mapping[str, str]  # :func:`pt2lint.analysis.dynamo_facts.schema_arguments`
    local: frozenset  # the names the function binds (its parameters and body): not a module
    callee: Optional[Callable[[str], object]]  # a function by name, see :func:`evidence`
    receiver: Optional[str]  # the name of a method's first parameter (``self``)
    visiting: FrozenSet[int]  # ids of the functions whose evidence is being computed (recursion)


def evidence(
    node: cst.FunctionDef,
    name: str,
    tensor_attributes,
    schema_arguments: Optional[Mapping[str, str]] = None,
    callee: Optional[Callable[[str], object]] = None,
    receiver: Optional[str] = None,
    _visiting: FrozenSet[int] = frozenset(),
) -> Optional[str]:
    """What the uses of parameter ``name`` in ``node``'s body say of its type.

    Args:
        node: the function definition whose parameter ``name`` is.
        name: the parameter's name.
        tensor_attributes: the public attribute names of ``torch.Tensor`` (empty: unknown, and
            no attribute is then taken as proof).
        schema_arguments: per ATen-bound ``torch.Tensor`` method and ``torch`` function, the
            positions where no overload takes a tensor (``{"torch.Tensor.view": "n*n"}``, the
            facts table's ``schema_arguments``); None or empty: no call argument is a number use.
        callee: resolves a called name to the function it calls: a ``FunctionDef`` of
            ``node``'s module, or a :class:`Callee`, for a name ``node`` calls (``"scatter_mean"``,
            imported or not) or, with a leading dot, for a method called on the instance
            (``".pool"`` for ``self.pool(...)``); None when unknown.  A parameter passed on to one,
            by position or keyword, speaks as that function's parameter does.
        receiver: for a method, the name of its instance parameter (``self``): a call of the
            instance's own method (``self.repeat(x, n)``) is not matched against Tensor's.

    Returns:
        :data:`OBJECT`, :data:`NUMBER`, or None when the uses do not say (or may be a tensor's).
    """
    key = (id(node), name, bool(schema_arguments), callee is not None, receiver)
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is node:
        return hit[1]
    if id(node) in _visiting:
        return None  # a recursive helper: its uses are being read
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    body = node.body
    bound = bound_names([body])
    rebound = bound.get(name, ())
    local = frozenset(bound) | {p.name.value for p in _parameters(node.params)}
    ctx = _Context(frozenset(tensor_attributes), schema_arguments or {}, local, callee, receiver, _visiting | {id(node)})
    kinds = None if not all(_counts_on(stmt, name) for stmt in rebound) else _classify(body, bound, name, ctx, 0)
    if kinds is None or _TENSOR_ATTRIBUTE in kinds:
        out = None
    elif OBJECT in kinds:
        out = OBJECT  # an attribute no tensor has: whatever else the value is used for (``d[k]``)
    elif CONTAINER in kinds:
        out = CONTAINER  # ``feats.items()``: a dict (of what the caller passes)
    elif _TENSOR in kinds:
        out = None
    elif NUMBER in kinds:
        out = NUMBER
    else:
        out = None
    if not _visiting:  # (an answer cut short by recursion is not kept)
        _MEMO[key] = (node, out)  # (the node kept: its id is not reused while the entry lives)
    return out


def _parameters(params: cst.Parameters) -> Iterator[cst.Param]:
    yield from params.posonly_params
    yield from params.params
    yield from params.kwonly_params
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            yield star


def _classify(body: cst.CSTNode, bound: Dict[str, list], name: str, ctx: _Context, depth: int) -> Set[str]:
    """The kinds of ``name``'s uses in ``body`` (a parameter rebound at most to a number of itself,
    or a name bound once from arithmetic on one); ``bound`` is ``bound_names([body])``."""
    kinds: Set[str] = set()
    for use, ancestors in _loads(body, name):
        while ancestors and _constant_index(ancestors[-1], use):
            # ``hw_shape[0]``: an element speaks for the sequence (a tensor's is a tensor as well)
            use, ancestors = ancestors[-1], ancestors[:-1]
        parent = ancestors[-1] if ancestors else None
        grand = ancestors[-2] if len(ancestors) > 1 else None
        kind = _use_kind(use, parent, grand, ctx)
        if kind == _TENSOR and depth < _FOLLOW_DEPTH and _bound_to_a_number(use, parent, bound, body, ctx, depth):
            kind = NUMBER  # ``h = size[0]`` then ``if h > 2:``, ``x.reshape(-1, h, w)``
        if kind == _TENSOR and _in_sized_tuple(ancestors, ctx):
            kind = NUMBER  # ``x.new_full((n, d), 0.0)``: an element of a size passed where ATen takes ints
        if kind == _TENSOR and depth < _FOLLOW_DEPTH and _unpacked_numbers(use, parent, body, bound, ctx, depth):
            kind = NUMBER  # ``H, W = hw_shape`` then ``x.view(B, H, W, C)``: a size
        if kind == _NEUTRAL and _is_arithmetic(parent):
            # ``step % 2 == 0`` tested, ``range(n * 2)``: the arithmetic is used as a number
            top, i = use, len(ancestors) - 1
            while i >= 0 and _is_arithmetic(ancestors[i]):
                top, i = ancestors[i], i - 1
            outer = ancestors[i] if i >= 0 else None
            if _use_kind(top, outer, ancestors[i - 1] if i > 0 else None, ctx) == NUMBER:
                kind = NUMBER
        if kind in (_NEUTRAL, NUMBER) and _is_arithmetic(parent) and depth < _FOLLOW_DEPTH:
            target = _assigned_from(use, body)
            if target is not None and _a_number_only(target, body, bound, ctx, depth):
                kind = NUMBER  # the result is used as a number only; a result used as a tensor
                # (``x = x / n``, a tensor divided by a number) says nothing of the parameter
        kinds.add(kind)
        if kind == _TENSOR_ATTRIBUTE:
            return kinds
    return kinds


def _constant_index(node, use: cst.BaseExpression) -> bool:
    """``node`` is ``use[i]`` with ``i`` an integer literal, negated or not (``size[0]``, ``size[-1]``)."""
    if not (isinstance(node, cst.Subscript) and node.value is use and len(node.slice) == 1):
        return False
    index = node.slice[0].slice
    if not isinstance(index, cst.Index):
        return False
    value = index.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return isinstance(value, cst.Integer)


def _bound_to_a_number(use: cst.BaseExpression, parent, bound: Dict[str, list], body: cst.CSTNode, ctx: _Context, depth: int) -> bool:
    """``use`` is the whole value of an assignment to a name bound only there (``h = size[0]``)
    whose own uses are those of a Python number only (as the parameter's would have to be)."""
    if not (isinstance(parent, cst.Assign) and parent.value is use and len(parent.targets) == 1):
        return False
    target = parent.targets[0].target
    return isinstance(target, cst.Name) and _a_number_only(target.value, body, bound, ctx, depth)


def _a_number_only(name: str, body: cst.CSTNode, bound: Dict[str, list], ctx: _Context, depth: int) -> bool:
    """The local ``name``, bound once in ``body``, has a number use and no use a tensor may have."""
    if len(bound.get(name, ())) != 1:
        return False
    more = _classify(body, bound, name, ctx, depth + 1)
    return NUMBER in more and not more & {_TENSOR, _TENSOR_ATTRIBUTE}


def _unpacked_numbers(use: cst.BaseExpression, parent, body: cst.CSTNode, bound: Dict[str, list], ctx: _Context, depth: int) -> bool:
    """``use`` is unpacked into names (``H, W = hw_shape``, each bound there only) of which one is
    used where only a Python number goes and none is read with an attribute tensors have.

    Unpacking a tensor gives tensors, each as able to have a tensor's attribute read as the next;
    a sequence whose elements are used as sizes or counts is one of numbers (the size of a feature
    map passed next to its tokens), whatever the other element is used for."""
    if not (isinstance(parent, cst.Assign) and parent.value is use and len(parent.targets) == 1):
        return False
    target = parent.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return False
    kinds: Set[str] = set()
    for element in target.elements:
        if not isinstance(element.value, cst.Name) or len(bound.get(element.value.value, ())) != 1:
            return False  # ``a, *rest = p``, ``a, b.c = p``, or a name bound again elsewhere
        kinds |= _classify(body, bound, element.value.value, ctx, depth + 1)
        if _TENSOR_ATTRIBUTE in kinds:
            return False
    return NUMBER in kinds


def _is_arithmetic(node) -> bool:
    return isinstance(node, cst.BinaryOperation) or (isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not))


def _use_kind(use: cst.BaseExpression, parent, grand, ctx: _Context) -> str:
    """The kind of one use: ``use`` (the name, or arithmetic on it) in ``parent`` in ``grand``."""
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return NUMBER  # ``if not return_dict:``: a flag
    if isinstance(parent, cst.Attribute) and parent.value is use:
        attr = parent.attr.value
        if attr.startswith("_"):
            return _TENSOR  # a dunder or private name (``x.__class__``, ``x._version``): every object, or not listed
        if not ctx.tensor_attributes or attr in ctx.tensor_attributes:
            return _TENSOR_ATTRIBUTE
        return CONTAINER if attr in _CONTAINER_ATTRIBUTES else OBJECT
    if isinstance(parent, cst.Arg) and parent.value is use and parent.keyword is not None and isinstance(grand, cst.Call):
        passed = _passed_on(parent, grand, ctx)  # ``scatter_mean(h, batch, dim_size=n)``
        return passed if passed is not None else _TENSOR
    if isinstance(parent, cst.Arg) and parent.value is use and parent.keyword is None and not parent.star:
        if isinstance(grand, cst.Call) and isinstance(grand.func, cst.Name):
            if grand.func.value in _NUMBER_BUILTINS:
                return NUMBER
            if grand.func.value in _NEUTRAL_BUILTINS:
                return _NEUTRAL
        if isinstance(grand, cst.Call):
            if _schema_number(parent, grand, ctx):
                return NUMBER
            passed = _passed_on(parent, grand, ctx)
            if passed is not None:
                return passed
        return _TENSOR
    if _is_arithmetic(parent):
        return _NEUTRAL
    if isinstance(parent, cst.Comparison):
        tested = (isinstance(grand, (cst.If, cst.While, cst.IfExp)) and grand.test is parent) or isinstance(grand, cst.BooleanOperation)
        if isinstance(grand, cst.UnaryOperation) and isinstance(grand.operator, cst.Not):
            tested = True
        if isinstance(grand, cst.Assert) and grand.test is parent:
            tested = True
        kind = _comparison_kind(use, parent)
        # a comparison whose result is no test (``x[keep > 0]``, ``m = t > 0.5``) may be a mask
        return kind if tested or kind == _NEUTRAL else _TENSOR
    if isinstance(parent, cst.BooleanOperation):
        return NUMBER  # ``use_cache and self.cache is not None``: a flag
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is use:
        return NUMBER  # ``if use_cache:``
    return _TENSOR


def _schema_number(arg: cst.Arg, call: cst.Call, ctx: _Context) -> bool:
    """``arg`` is passed where no ATen overload of the called ``torch.Tensor`` method or ``torch``
    function takes a tensor (``x.view(n, -1)``, ``s.topk(k)``, ``torch.zeros(n, d)``).  A method
    is matched by name on a receiver the function binds (``x.view``, ``self.buf.view``, a call's
    result), not on a module it imports (``np.repeat``: NumPy's, another signature)."""
    func = call.func
    if not isinstance(func, cst.Attribute) or not ctx.schema_arguments:
        return False
    index = _position(arg, call)
    if index is None:
        return False  # ``x.view(*lead, n)``: the position is unknown
    root = func.value
    while isinstance(root, cst.Attribute):
        root = root.value
    if isinstance(func.value, cst.Name) and func.value.value == "torch" and "torch" not in ctx.local:
        kinds = ctx.schema_arguments.get(f"torch.{func.attr.value}")
    elif isinstance(root, cst.Name) and root.value not in ctx.local:
        return False  # ``np.repeat(a, n)``, ``F.pad``: a module's function, not a tensor's method
    elif isinstance(func.value, cst.Name) and func.value.value == ctx.receiver:
        return False  # ``self.repeat(x, n)``: the instance's own method, not a tensor's
    else:
        kinds = ctx.schema_arguments.get(f"torch.Tensor.{func.attr.value}")
    if not kinds:
        return False
    fixed, _, rest = kinds.partition("*")
    return (fixed[index] if index < len(fixed) else rest) == "n"


def _in_sized_tuple(ancestors: Tuple[cst.CSTNode, ...], ctx: _Context) -> bool:
    """The use is an element of a tuple or list literal passed where no ATen overload of the
    called method or function takes a tensor (``x.new_full((n, d), 0.0)``, ``torch.zeros((b, n))``)."""
    if len(ancestors) < 4:
        return False
    element, literal, arg, call = ancestors[-1], ancestors[-2], ancestors[-3], ancestors[-4]
    return (
        isinstance(element, cst.Element) and isinstance(literal, (cst.Tuple, cst.List)) and isinstance(arg, cst.Arg)
        and arg.value is literal and arg.keyword is None and not arg.star and isinstance(call, cst.Call)
        and _schema_number(arg, call, ctx)
    )


def _passed_on(arg: cst.Arg, call: cst.Call, ctx: _Context) -> Optional[str]:
    """What the function ``call`` calls says of the parameter ``arg`` passes on (by position or
    keyword): its own evidence for that parameter, when unannotated (``scatter_mean(h, batch,
    num_graphs)`` with ``src.new_zeros(dim_size, ...)`` in ``scatter_mean``).  The function is one
    the ``callee`` resolver knows: a function the body calls by a name it does not bind itself, or
    a method of the instance (``self.pool(h, n)``)."""
    func = call.func
    if ctx.callee is None:
        return None
    if isinstance(func, cst.Name) and func.value not in ctx.local:
        found = ctx.callee(func.value)
    elif isinstance(func, cst.Attribute) and ctx.receiver is not None and isinstance(func.value, cst.Name) and func.value.value == ctx.receiver:
        found = ctx.callee("." + func.attr.value)
    else:
        return None
    if isinstance(found, cst.FunctionDef):
        found = Callee(found, 0, ctx.callee, None)
    if not isinstance(found, Callee):
        return None
    params = found.node.params
    everything = list(params.posonly_params) + list(params.params)
    skipped = {id(p) for p in everything[: found.skip]}
    if arg.keyword is None:
        index = _position(arg, call)
        positional = everything[found.skip:]
        param = positional[index] if index is not None and index < len(positional) else None
    else:  # (a positional-only parameter takes no keyword)
        by_name = [p for p in list(params.params) + list(params.kwonly_params) if id(p) not in skipped]
        param = next((p for p in by_name if p.name.value == arg.keyword.value), None)
    if param is None or param.annotation is not None:
        return None
    return evidence(found.node, param.name.value, ctx.tensor_attributes, ctx.schema_arguments, found.callee, found.receiver, ctx.visiting)


def _position(arg: cst.Arg, call: cst.Call) -> Optional[int]:
    """The position of the positional argument ``arg`` in ``call``; None after a ``*`` argument."""
    for i, a in enumerate(a for a in call.args if a.keyword is None):
        if a is arg:
            return i
        if a.star:
            return None
    return None


def _comparison_kind(use: cst.BaseExpression, cmp: cst.Comparison) -> str:
    operands = [cmp.left] + [t.comparator for t in cmp.comparisons]
    ops = [t.operator for t in cmp.comparisons]
    if all(isinstance(op, (cst.Is, cst.IsNot)) for op in ops):
        return _NEUTRAL  # ``scale is None``
    others = [o for o in operands if o is not use]
    if others and all(number_literal(o) for o in others):
        return NUMBER  # ``guidance_scale == 1.0``, ``k > 0``
    return _TENSOR


def number_literal(node) -> bool:
    """``node`` is an int or float literal, negated or not (``1``, ``-0.5``)."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _loads(body: cst.CSTNode, name: str) -> Iterator[Tuple[cst.Name, Tuple[cst.CSTNode, ...]]]:
    """``(name node, its ancestors from ``body`` down)`` of every read of ``name`` in ``body``, not
    entering a nested function, lambda or class (whose own binding of that name is another value)."""
    stack = [(body, ())]
    while stack:
        node, ancestors = stack.pop()
        parent = ancestors[-1] if ancestors else None
        if isinstance(node, cst.Name):
            if node.value != name:
                continue
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                continue
            if isinstance(parent, cst.Arg) and parent.keyword is node:
                continue
            if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor)) and parent.target is node:
                continue  # a binding, not a read
            yield node, ancestors
            continue
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not body:
            continue
        below = ancestors + (node,)
        for child in node.children:
            stack.append((child, below))


def _counts_on(stmt: cst.CSTNode, name: str) -> bool:
    """``stmt`` rebinds ``name`` to a number computed from it and number literals (``k -= 1``,
    ``k = k - 1``, ``k = min(k, 3)``): a number stays a number, so its uses still speak."""
    if isinstance(stmt, cst.AugAssign):
        return isinstance(stmt.target, cst.Name) and number_literal(stmt.value)
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name):
        value = stmt.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("min", "max"):
            parts = [a.value for a in value.args if a.keyword is None and not a.star]
            return len(parts) == len(value.args) and all(number_literal(p) or _is(p, name) for p in parts)
        if isinstance(value, cst.BinaryOperation):
            return all(number_literal(p) or _is(p, name) for p in (value.left, value.right))
    return False


def _is(node, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _assigned_from(use: cst.Name, body: cst.CSTNode) -> Optional[str]:
    """The name an arithmetic expression containing ``use`` is assigned to directly
    (``stride = self.T // num_steps``), else None."""
    for stmt in _statements(body):
        if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name):
            value = stmt.value
            if isinstance(value, _ARITHMETIC) and any(n is use for n in walk(value)):
                return stmt.targets[0].target.value
    return None


def _statements(body: cst.CSTNode) -> Iterator[cst.CSTNode]:
    return (n for n in walk(body, into_functions=False) if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)))
