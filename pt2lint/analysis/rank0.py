"""Tensors known to be 0-d: full reductions, and what stays 0-d after them.

A 0-d tensor used as an index (``x[v.sum().long()]``, ``x[torch.bucketize(v.mean(), edges)]``,
``x[v.any()]``) makes Dynamo read its value into Python: "Data dependent operator"
(``aten._local_scalar_dense``), a graph break.  Only 0-d tensors do that; a 1-d index stays in
the graph.  So the rank has to be known for sure, and this module says when it is:

* a full reduction, a method without arguments (``v.sum()``, ``v.mean()``, ``v.max()``,
  ``v.norm()``, ``v.any()``) or the one-argument function (``torch.sum(v)``), is 0-d;
* an elementwise method (``floor``, ``abs``, ``clamp``...), a cast (``long()``, ``.to(torch.int32)``)
  or arithmetic with a Python number or another 0-d tensor keeps it 0-d;
* ``torch.bucketize(s, b)`` and ``torch.searchsorted(seq, s)`` of a 0-d ``s`` and
  ``torch.randint(lo, hi, ())`` are 0-d integer tensors; an integer index into a 1-d tensor of
  known dtype (``torch.randint(0, n, (1,))[0]``) gives a 0-d tensor of that dtype.

Measured on torch 2.13 (``torch._dynamo.explain`` and the ``graph_breaks`` log, see
``tests/test_zero_d_index.py``): each of those used as an index breaks with "Data dependent
operator"; ``x * v.max()`` and an index with a 1-d ``torch.randint(0, 3, (1,))`` trace.

Two marks (``Value.ref``): :data:`~pt2lint.analysis.kinds.INT_SCALAR_TENSOR` when the dtype is an
integer one for sure, :data:`ZERO_D_TENSOR` when only the rank is known (``v.sum()`` of a
tensor of unknown dtype).  Used as an index, either breaks in working code: a floating 0-d index
raises ``IndexError`` in eager mode, an integer or bool one is read into Python.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from pt2lint.analysis.kinds import INT_SCALAR_TENSOR, ONE_D_FLOAT_TENSOR, ONE_D_INT_TENSOR, ZERO_D_TENSOR, Kind, Value, python_number

ZERO_D_REFS = frozenset({ZERO_D_TENSOR, INT_SCALAR_TENSOR})

#: Methods that, called without arguments, reduce over every element (torch's ``Tensor`` methods:
#: ``sum(dim=None)``, ``max()`` without ``dim`` ...).
FULL_REDUCTIONS = frozenset({
    "sum", "mean", "prod", "max", "min", "amax", "amin", "norm", "std", "var", "median",
    "nansum", "nanmean", "nanmedian", "any", "all",
})
#: Full reductions whose result is bool.
_BOOL_REDUCTIONS = frozenset({"any", "all"})
#: Elementwise methods without a dtype change: a 0-d receiver gives a 0-d result of its dtype.
ELEMENTWISE_KEEPING_DTYPE = frozenset({
    "clone", "detach", "contiguous", "cpu", "cuda", "abs", "neg", "clamp", "clamp_min", "clamp_max",
    "clip", "squeeze",
})
#: Elementwise methods whose result is floating for any input (or keeps a floating dtype).
ELEMENTWISE_FLOATING = frozenset({
    "floor", "ceil", "round", "trunc", "exp", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sigmoid", "tanh", "sin", "cos", "reciprocal",
})
_INT_CASTS = frozenset({"long", "int", "short", "char", "byte"})
_FLOAT_CASTS = frozenset({"float", "double", "half", "bfloat16"})
_INT_DTYPES = frozenset({
    "torch.int64", "torch.long", "torch.int32", "torch.int", "torch.int16", "torch.short", "torch.int8",
    "torch.uint8",
})
_FLOAT_DTYPES = frozenset({
    "torch.float32", "torch.float", "torch.float64", "torch.double", "torch.float16", "torch.half",
    "torch.bfloat16",
})


def is_zero_d(v: Optional[Value]) -> bool:
    """``v`` is surely a 0-d tensor computed in the graph (not a guessed tensor)."""
    return v is not None and v.kind is Kind.TENSOR and not v.weak and v.ref in ZERO_D_REFS


def _torch_name(v: Optional[Value]) -> Optional[str]:
    """The qualified name of a ``torch.<attr>`` constant (``torch.int64`` is kept as its name)."""
    if v is None or v.kind is not Kind.CONST:
        return None
    for name in (v.const, v.ref):
        if isinstance(name, str) and name.startswith("torch."):
            return name
    return None


def _dtype_mark(dtype: Optional[Value]) -> Optional[str]:
    """The mark a cast to ``dtype`` gives a 0-d tensor; ``None`` for a dtype not known here."""
    name = _torch_name(dtype)
    if name in _INT_DTYPES:
        return INT_SCALAR_TENSOR
    if name in _FLOAT_DTYPES or name == "torch.bool":
        return ZERO_D_TENSOR
    return None


def dtype_mark(dtype: Optional[Value]) -> Optional[str]:
    """:data:`INT_SCALAR_TENSOR` for an integer dtype (``torch.long``, ``torch.int32``...),
    :data:`ZERO_D_TENSOR` for a floating one, ``None`` for ``torch.bool`` or a dtype not known here."""
    name = _torch_name(dtype)
    return INT_SCALAR_TENSOR if name in _INT_DTYPES else ZERO_D_TENSOR if name in _FLOAT_DTYPES else None


def method_result(recv: Value, method: str, args, kwargs, weak: bool) -> Optional[Value]:
    """The value of ``recv.method(*args, **kwargs)`` when it is surely 0-d, else ``None``.

    Args:
        recv: the receiver, a tensor value.
        method: the method name.
        args: the positional argument values; kwargs: the keyword argument values by name.
        weak: whether the result is only a guess (the receiver was a guessed tensor).
    """
    if recv.kind is not Kind.TENSOR:
        return None
    if method in FULL_REDUCTIONS and not args and (not kwargs or set(kwargs) <= {"dtype"}):
        if recv.ref in ZERO_D_REFS and method not in _BOOL_REDUCTIONS:
            mark = recv.ref
        else:
            mark = ZERO_D_TENSOR
        mark = _dtype_mark(kwargs.get("dtype")) or mark
        return Value(Kind.TENSOR, weak=weak, ref=mark, bool_tensor=method in _BOOL_REDUCTIONS)
    if recv.ref not in ZERO_D_REFS:
        if recv.ref in (ONE_D_INT_TENSOR, ONE_D_FLOAT_TENSOR) and method in ("sum", "max", "min", "prod") and not args and not kwargs:
            return Value(Kind.TENSOR, weak=weak, ref=INT_SCALAR_TENSOR if recv.ref == ONE_D_INT_TENSOR else ZERO_D_TENSOR)
        return None
    if method in _INT_CASTS and not args and not kwargs:
        return Value(Kind.TENSOR, weak=weak, ref=INT_SCALAR_TENSOR)
    if method in _FLOAT_CASTS and not args and not kwargs:
        return Value(Kind.TENSOR, weak=weak, ref=ZERO_D_TENSOR)
    if method in ("to", "type"):
        dtype = kwargs.get("dtype") if "dtype" in kwargs else next((a for a in args if _dtype_mark(a)), None)
        mark = _dtype_mark(dtype)
        if mark is not None:
            return Value(Kind.TENSOR, weak=weak, ref=mark, bool_tensor=_torch_name(dtype) == "torch.bool")
        if method == "to" and args and "dtype" not in kwargs:
            # ``.to(device)`` keeps the dtype; ``.to(other)`` takes the other tensor's dtype (the rank stays)
            same = not any(a.kind is Kind.TENSOR or _torch_name(a) is not None for a in args)
            return Value(Kind.TENSOR, weak=weak, ref=recv.ref if same else ZERO_D_TENSOR, bool_tensor=recv.bool_tensor and same)
        return None
    if method in ELEMENTWISE_KEEPING_DTYPE:
        operands = (*args, *kwargs.values())
        if not all(python_number(a, integer=False) or is_zero_d(a) or a.kind is Kind.NONE for a in operands):
            return None  # ``s.clamp(min=t)``: broadcast with a tensor of unknown rank
        if method == "squeeze" and args:
            return None
        if recv.ref == INT_SCALAR_TENSOR and not all(python_number(a, integer=True) or a.kind is Kind.NONE for a in operands):
            return Value(Kind.TENSOR, weak=weak, ref=ZERO_D_TENSOR)  # ``i.clamp(0.5)`` may promote
        return Value(Kind.TENSOR, weak=weak, ref=recv.ref, bool_tensor=recv.bool_tensor)
    if method in ELEMENTWISE_FLOATING and not args:
        return Value(Kind.TENSOR, weak=weak, ref=ZERO_D_TENSOR)
    return None


def function_result(qual: str, args, kwargs) -> Optional[Value]:
    """The value of the torch function ``qual(*args, **kwargs)`` when it is surely 0-d, else ``None``.

    ``torch.sum(v)`` and the other one-argument full reductions; ``torch.bucketize(s, b)`` and
    ``torch.searchsorted(seq, s)`` with a 0-d ``s`` (0-d integer: ``bucketize`` keeps the input's
    shape, ``searchsorted`` of a 1-d ``seq`` the values' shape); ``torch.randint(lo, hi, ())``.
    """
    name = qual[len("torch."):] if qual.startswith("torch.") else None
    if name is None:
        return None
    if name in FULL_REDUCTIONS and len(args) == 1 and (not kwargs or set(kwargs) <= {"dtype"}):
        # (a torch function returns a tensor even when its argument was only guessed to be one)
        return method_result(replace(args[0], weak=False), name, (), kwargs, weak=False)
    if name == "bucketize" and args and is_zero_d(args[0]):
        return Value(Kind.TENSOR, ref=INT_SCALAR_TENSOR)
    if name == "searchsorted":
        values = args[1] if len(args) > 1 else kwargs.get("input") if "input" in kwargs else kwargs.get("self")
        if is_zero_d(values):
            return Value(Kind.TENSOR, ref=INT_SCALAR_TENSOR)
    if name == "randint" and set(kwargs) <= {"device", "generator", "size"}:
        size = kwargs.get("size") if "size" in kwargs else (args[-1] if len(args) in (2, 3) else None)
        if size is not None and size.kind is Kind.CONTAINER and size.elts == () and all(python_number(a, integer=True) for a in args[: len(args) - (0 if "size" in kwargs else 1)]):
            return Value(Kind.TENSOR, ref=INT_SCALAR_TENSOR)
        if size is not None and size.kind is Kind.CONTAINER and size.elts is not None and len(size.elts) == 1 and python_number(size.elts[0], integer=True):
            return Value(Kind.TENSOR, ref=ONE_D_INT_TENSOR)
    return None


def binop_result(a: Value, b: Value, op: str, weak: bool) -> Optional[Value]:
    """The value of ``a <op> b`` when one operand is a 0-d tensor and the other a Python number or a
    0-d tensor: 0-d, an integer one when both are integers and the operator keeps integers."""
    if not (a.kind is Kind.TENSOR and a.ref in ZERO_D_REFS) and not (b.kind is Kind.TENSOR and b.ref in ZERO_D_REFS):
        return None
    operands = (a, b)
    if not all((v.kind is Kind.TENSOR and v.ref in ZERO_D_REFS) or python_number(v, integer=False) for v in operands):
        return None  # a tensor of unknown rank broadcasts
    if op not in ("+", "-", "*", "/", "//", "%", "**"):
        return None
    integer = op in ("+", "-", "*", "//", "%") and all(
        (v.kind is Kind.TENSOR and v.ref == INT_SCALAR_TENSOR) or python_number(v, integer=True) for v in operands
    )
    return Value(Kind.TENSOR, weak=weak, ref=INT_SCALAR_TENSOR if integer else ZERO_D_TENSOR)


def element_result(base: Value, index: Value) -> Optional[Value]:
    """``base[i]`` with ``base`` a 1-d tensor of known dtype and ``i`` a Python int: 0-d of that dtype."""
    if base.kind is not Kind.TENSOR or base.weak or base.ref not in (ONE_D_INT_TENSOR, ONE_D_FLOAT_TENSOR):
        return None
    if not python_number(index, integer=True):
        return None
    return Value(Kind.TENSOR, ref=INT_SCALAR_TENSOR if base.ref == ONE_D_INT_TENSOR else ZERO_D_TENSOR)
