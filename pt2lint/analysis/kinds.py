"""Value kinds: the abstract values of the interpreter over compiled regions.

Every expression in a compiled region evaluates to a :class:`Value` whose
:class:`Kind` says what Dynamo would see: a Tensor (traced into the graph), a
SymInt/shape (``x.shape[0]``, ``len(x)``, ``x.dim()``: branching on it is a guard,
not a graph break), a Python constant, a module, ``None``, a Python scalar read
out of tensor data (``.item()``, ``int(t)``: unbacked), a container, or Unknown.
Rules read these kinds; they never re-derive them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any, Optional, Tuple


class Kind(enum.Enum):
    UNKNOWN = "unknown"
    TENSOR = "tensor"
    SHAPE = "shape"  # SymInt / int from sizes, torch.Size
    CONST = "const"  # a Python constant, config flag, dtype, device, string
    MODULE = "module"  # an nn.Module instance
    NONE = "none"
    DATA = "data"  # a Python scalar/list read from tensor data (.item(), .tolist(), int(t))
    CONTAINER = "container"  # list / tuple / dict / generator
    FUNCTION = "function"  # a function or method defined in the linted file
    CLASS = "class"  # a class defined in the linted file
    SELF = "self"  # the ``self`` of the method being analysed
    SUPER = "super"


@dataclass(frozen=True)
class Value:
    """An abstract value.

    Attributes:
        kind: what the value is.
        bool_tensor: a Tensor known to have ``dtype=torch.bool`` (comparisons,
            ``isnan``, ``&``/``|`` of masks) -- indexing with it is a boolean mask.
        maybe_none: the value may also be ``None`` (``mask=None`` parameters).
        weak: the kind is a guess from a parameter with no annotation and a
            ``None`` default; rules do not branch-flag weak tensors.
        alias_of: name of the forward input whose storage this value may share
            (``x``, ``x.view(-1)``, ``x[0]``, ``h = x``); ``None`` for fresh tensors.
        elts: element values of a tuple/list of known length.
        elt: the value of every element (``ModuleList`` of one class, list of tensors).
        ref: the definition behind FUNCTION/CLASS/MODULE/SELF values (analysis objects),
            or the qualified name of an external callable/module class.
        const: the Python value of a constant when it is known (numbers, strings, bools).
        keys: for a dict whose string keys are all known (a literal, the ``**kwargs`` of
            a call with keyword arguments): the keys, with the values in ``elts``.
        py_float: on a SHAPE/CONST value, a Python float (a true division, ``float(n)``);
            on a TENSOR value, a one-element NumPy value of floating dtype computed only
            from Python numbers and sizes, which Dynamo's fake tensors constant-fold, so
            ``int()``/``float()``/``.item()`` of it reads back a Python number without a
            break (see ``torch_api.NUMPY_FLOAT_OF_FLOAT``).
        not_none: the value is surely not ``None``, whatever its kind: a name in the branch
            of an ``x is not None`` test, a constructor parameter annotated ``int``, the join
            of values that all are (see :func:`surely_not_none`, which also knows literals
            and values read out of tensor data).
        scalar: on a SHAPE value, one size, not a shape tuple (``x.shape[-1]``, ``x.size(0)``,
            ``x.numel()``, a name unpacked from a shape, arithmetic of those): a NumPy call on it
            is a call on a Python number (see :data:`SIZE`).
        iterator: an iterator object and the constructor that built it, as a key of the facts
            table's ``iterator_objects`` (``"itertools.count"``, ``"builtins.iter:list"``,
            ``"generator"``): what Dynamo does with ``next()`` on it when it was built outside
            the compiled region (``dynamo_facts.iterator_next``).
    """

    kind: Kind
    bool_tensor: bool = False
    maybe_none: bool = False
    weak: bool = False
    alias_of: Optional[str] = None
    elts: Optional[Tuple["Value", ...]] = None
    elt: Optional["Value"] = None
    ref: Any = None
    const: Any = None
    keys: Optional[Tuple[str, ...]] = None
    py_float: bool = False
    not_none: bool = False
    scalar: bool = False
    iterator: Optional[str] = None

    def item(self, key: str, default: Optional["Value"] = None) -> Optional["Value"]:
        """``d[key]`` / ``d.get(key, default)`` of a dict with known keys; ``None`` when the keys are unknown."""
        if self.keys is None or self.elts is None:
            return None
        if key in self.keys:
            return self.elts[self.keys.index(key)]
        return default

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    def with_alias(self, alias: Optional[str]) -> "Value":
        return self if self.alias_of == alias else replace(self, alias_of=alias)

    def element(self) -> "Value":
        """Value of an element obtained by iterating or indexing this container."""
        if self.kind is Kind.TENSOR:
            if self.ref == ONE_D_INT_TENSOR and not self.weak:
                return Value(Kind.TENSOR, ref=INT_SCALAR_TENSOR)  # ``for t in torch.arange(n)``: 0-d int64
            if self.ref == ONE_D_FLOAT_TENSOR and not self.weak:
                return Value(Kind.TENSOR, ref=ZERO_D_TENSOR)  # ``for t in torch.linspace(0, 1, n)``: 0-d
            return Value(Kind.TENSOR, bool_tensor=self.bool_tensor, alias_of=self.alias_of, weak=self.weak)
        if self.kind is Kind.SHAPE:
            return SIZE  # ``for d in x.shape``, ``h, w = x.shape[-2:]``: one size each
        if self.kind is Kind.DATA:
            return DATA
        if self.elt is not None:
            return self.elt
        if self.elts:
            out = self.elts[0]
            for v in self.elts[1:]:
                out = join(out, v)
            if out.kind is Kind.TENSOR and not out.weak and any(v.kind is not Kind.TENSOR for v in self.elts):
                # one element of a tuple that also holds non-tensors (``args[i]`` of a wrapper's
                # ``*args``): it may well be one of those, so it is a guess, not a sure tensor
                out = replace(out, weak=True)
            return out
        if self.kind is Kind.MODULE:
            return Value(Kind.MODULE)
        return UNKNOWN


#: ``ref`` of a tensor known to be 0-d with an integer dtype (``t.argmax()``, ``mask.sum()``):
#: indexing with it reads its value as a SymInt (``aten._local_scalar_dense``, GB0033).
INT_SCALAR_TENSOR = "int-scalar"
#: ``ref`` of a tensor known to be 0-d whose dtype is not known to be an integer one (``v.sum()``,
#: ``v.mean() * 3``; see :mod:`pt2lint.analysis.rank0`).
ZERO_D_TENSOR = "0d"
#: ``ref`` of a tensor known to be 1-d with an integer dtype (``torch.arange(n)``,
#: ``torch.randperm(n)``, ``torch.tensor([0, 2, 5])``): iterating it gives 0-d integer tensors
#: (:data:`INT_SCALAR_TENSOR`), and indexing a tensor with one of those breaks (measured on torch
#: 2.13: ``for t in self.timesteps: self.alphas[t]`` with ``timesteps = torch.arange(0, 10, 3).flip(0)``,
#: ``for i in torch.randperm(4): table[i]``, ``[table[i] for i in torch.tensor([0, 2, 5])]``: "Data
#: dependent operator"; ``for t in self.timesteps: x = x * t`` traces).
ONE_D_INT_TENSOR = "1d-int"
#: ``ref`` of a tensor known to be 1-d with a floating dtype (``torch.linspace(0, T - 1, n)``): its
#: ``.long()`` is a :data:`ONE_D_INT_TENSOR` (a sampler's ``timesteps``).
ONE_D_FLOAT_TENSOR = "1d-float"

UNKNOWN = Value(Kind.UNKNOWN)
TENSOR = Value(Kind.TENSOR)
BOOL_TENSOR = Value(Kind.TENSOR, bool_tensor=True)
SHAPE = Value(Kind.SHAPE)
#: One size (a SymInt when the dimension is dynamic), not a shape tuple: ``x.shape[-1]``, ``x.size(0)``.
SIZE = Value(Kind.SHAPE, scalar=True)
CONST = Value(Kind.CONST)
NONE = Value(Kind.NONE)
DATA = Value(Kind.DATA)
MODULE = Value(Kind.MODULE)


def const(value: Any) -> Value:
    """A constant with its Python value (hashable values only are kept)."""
    try:
        hash(value)
    except TypeError:
        return CONST
    return Value(Kind.CONST, const=value)


def container(elts=None, elt: Optional[Value] = None) -> Value:
    return Value(Kind.CONTAINER, elts=tuple(elts) if elts is not None else None, elt=elt)


def keyed_dict(items) -> Value:
    """A dict value with known string keys: ``items`` is a sequence of ``(key, value)``."""
    items = list(items)
    vals = [v for _, v in items]
    elt = vals[0] if vals else UNKNOWN
    for v in vals[1:]:
        elt = join(elt, v)
    return Value(Kind.CONTAINER, elts=tuple(vals), keys=tuple(k for k, _ in items), elt=elt)


#: :func:`_members` of an empty container: it has no elements to join.
_NO_MEMBERS = Value(Kind.UNKNOWN, ref="<no members>")


def _members(v: Value) -> Optional[Value]:
    """What an element of container ``v`` may be: its element value, :data:`_NO_MEMBERS` when it
    is known to be empty, None when nothing is known."""
    if v.elt is not None:
        return v.elt
    if v.elts is not None:
        return v.element() if v.elts else _NO_MEMBERS
    return None


def _python_data(v: Value, depth: int = 0) -> bool:
    """``v`` is a list, tuple or dict holding only Python numbers, strings or such containers
    (``list[tuple[int, int]]``, ``[(2, 3)]``), none of them a tensor: as plain a Python value as a
    constant, so a sure tensor joined with it stays a sure tensor on its own path."""
    if v.kind in (Kind.CONST, Kind.SHAPE):
        return True
    if v.kind is not Kind.CONTAINER or depth > 3:
        return False
    members = _members(v)
    if members is None or members is _NO_MEMBERS:
        return False
    return _python_data(members, depth + 1)


def python_number(v: Value, integer: bool = True) -> bool:
    """``v`` is surely a Python number: a size (a SymInt while tracing) or a numeric constant, never
    ``None``; with ``integer``, surely an ``int`` (not a float read as one, not a bool)."""
    if v.maybe_none:
        return False
    if v.kind is Kind.SHAPE:
        return v.ref is None and (not integer or not v.py_float)
    if v.kind is Kind.CONST and not isinstance(v.const, bool):
        return isinstance(v.const, int) or (not integer and isinstance(v.const, float))
    return False


def surely_not_none(v: Value) -> bool:
    """Whether ``v`` is surely not ``None``: marked so (:attr:`Value.not_none`), a literal's
    constant (a number, string or bool), a size (``x.size(0)``, an element of ``x.shape``), a
    tuple, list or dict whose elements are known (a display, ``(n, n)``), or a Python number read
    out of tensor data (``int(t)``, ``t.item()``; a ``random`` draw aside, which joins absorb).  A
    value that may be ``None``, or of a kind that says nothing either way (Unknown, a guessed
    tensor, a constant of unknown value such as a ``getattr(obj, name, None)``), is not."""
    if v.maybe_none or v.kind is Kind.NONE:
        return False
    if v.not_none:
        return True
    if v.kind is Kind.DATA:
        return not is_random_draw(v)
    if v.kind is Kind.SHAPE:
        return not v.weak
    if v.kind is Kind.CONTAINER:
        return not v.weak and (v.elts is not None or v.keys is not None)
    return v.kind is Kind.CONST and isinstance(v.const, (bool, int, float, complex, str, bytes))


def join(a: Value, b: Value) -> Value:
    """Least upper bound of two values reaching the same point (after an ``if``, a loop)."""
    if a == b:
        return a
    if a.kind is Kind.NONE and b.kind is not Kind.NONE:
        return replace(b, maybe_none=True, not_none=False)
    if b.kind is Kind.NONE and a.kind is not Kind.NONE:
        return replace(a, maybe_none=True, not_none=False)
    callables = a.kind is b.kind and a.kind in (Kind.FUNCTION, Kind.CLASS, Kind.MODULE)
    callables = callables or {a.kind, b.kind} == {Kind.FUNCTION, Kind.MODULE}
    if callables and (a.ref is not b.ref or a.elts != b.elts or a.elt != b.elt):
        # different definitions reaching one point (``f if flag else g``): "one of these"
        from pt2lint.analysis.objects import one_of

        picked = one_of((a, b))
        if picked is not None:
            return picked
    if Kind.CONTAINER in (a.kind, b.kind) and (a.keys != b.keys or a.const != b.const):
        # dicts whose known entries differ (``{}`` and ``{"norm": f}``, an open dict): keep what is known
        from pt2lint.analysis.dicts import join_dicts

        joined = join_dicts(a, b)
        if joined is not None:
            return joined
    fn = a if a.kind is Kind.FUNCTION else b if b.kind is Kind.FUNCTION else None
    if fn is not None and (fn.ref is not None or fn.elts):
        other = b if fn is a else a
        if (other.kind is Kind.UNKNOWN and other.ref is None and other.alias_of is None) or (other.kind is Kind.TENSOR and other.weak):
            # a function of the project on one path, a value of unknown kind (or only guessed
            # to be a tensor) on another
            # (``self.fn = fn_param`` or ``self.fn = self._default_fn(...)``): a call follows the
            # known function, whose breaks are breaks on its path, and its result is joined with
            # an unknown one (``weak`` marks "or something else")
            return replace(fn, weak=True, maybe_none=fn.maybe_none or other.maybe_none)
    draw = a if is_random_draw(a) else b if is_random_draw(b) else None
    if draw is not None:
        other = b if draw is a else a
        guess = (other.kind is Kind.UNKNOWN and other.ref is None) or (other.kind is Kind.TENSOR and other.weak and other.alias_of is None)
        if other.kind in (Kind.DATA, Kind.CONST, Kind.SHAPE) or guess:
            # a value drawn by ``random`` on one path and a plain number (or a value of unknown
            # kind) on another: the draw's path is one the code takes, and on it branching on
            # the value breaks (as for a sure tensor joined with a constant, below)
            return replace(draw, maybe_none=draw.maybe_none or other.maybe_none)
    alias = a.alias_of or b.alias_of
    # ``int(t) + 1 if n is None else n``: neither path gives ``None``, whatever else the join loses
    not_none = surely_not_none(a) and surely_not_none(b)
    if a.kind is b.kind:
        elts = None
        keys = a.keys if a.keys == b.keys else None
        if a.elts is not None and b.elts is not None and len(a.elts) == len(b.elts) and keys == a.keys:
            elts = tuple(join(x, y) for x, y in zip(a.elts, b.elts))
        elt = None
        if a.elt is not None and b.elt is not None:
            elt = join(a.elt, b.elt)
        elif elts is None and a.kind is Kind.CONTAINER and keys is None:
            # lists of different lengths (``[]`` before a loop that appends, ``[t]`` after):
            # the elements of either; an empty list adds none
            ea, eb = _members(a), _members(b)
            if ea is _NO_MEMBERS:
                elt = eb if eb is not _NO_MEMBERS else None
            elif eb is _NO_MEMBERS:
                elt = ea
            elif ea is not None and eb is not None:
                elt = join(ea, eb)
        out = Value(
            a.kind,
            bool_tensor=a.bool_tensor and b.bool_tensor,
            maybe_none=a.maybe_none or b.maybe_none,
            weak=a.weak or b.weak,
            alias_of=alias,
            elts=elts,
            elt=elt,
            ref=a.ref if a.ref is b.ref else None,
            const=a.const if a.const == b.const else None,
            keys=keys if elts is not None else None,
            py_float=a.py_float and b.py_float,
            scalar=a.scalar and b.scalar,
            iterator=a.iterator if a.iterator == b.iterator else None,
        )
        # the mark only where the kind does not say it already (a size, a tuple of known
        # elements): one value, one way of writing it
        return replace(out, not_none=True) if not_none and not surely_not_none(out) else out
    # SymInt and Python constants mix freely (both are fine to branch on).
    if {a.kind, b.kind} <= {Kind.SHAPE, Kind.CONST}:
        return SHAPE  # (a size is never None: see surely_not_none)
    if Kind.TENSOR in (a.kind, b.kind):
        t, other = (a, b) if a.kind is Kind.TENSOR else (b, a)
        # A sure tensor on one path and a Python constant/SymInt on another (``skip = False``
        # then ``skip = torch.rand([]) < p``): on the tensor path, branching on it breaks.
        # Against an unknown value it stays a guess (weak).
        weak = t.weak or not (other.kind in (Kind.CONST, Kind.SHAPE) or _python_data(other))
        return Value(
            Kind.TENSOR, weak=weak, alias_of=alias, maybe_none=a.maybe_none or b.maybe_none, bool_tensor=t.bool_tensor,
            not_none=not_none,
        )
    return Value(Kind.UNKNOWN, alias_of=alias, not_none=not_none)


def is_random_draw(v: Value) -> bool:
    """A value Dynamo draws as a graph input from Python's ``random`` (``RANDOM_DRAW`` of
    :mod:`pt2lint.analysis.interp`)."""
    return v.kind is Kind.DATA and v.ref == "random-variable"
