"""Objects made inside compiled code: records, instances and "one of these" values.

Dynamo traces the construction of a plain Python object inside a compiled region
(its ``__init__`` runs as traced code, with the arguments of the call) and keeps the
object's attributes as the values they were given: a tensor stored in ``self.t`` is a
tensor when a method later branches on ``self.t`` (measured on torch 2.13 with
``torch._dynamo.explain``: ``Plain(x).go()`` compiles to one graph; a
``while self.state.t1 < t[-1]`` on such an attribute is a data-dependent branch).

This module holds the value-level helpers the interpreter uses for that:

* records: ``collections.namedtuple``/``typing.NamedTuple`` (factory call or class) and
  ``@dataclass`` classes, whose fields keep the kinds they were constructed with;
* "one of these": a subscript with a key of unknown value into a literal whose values
  are all classes or all functions (``SOLVERS[method]``), or a join of different
  definitions (``f if flag else g``); a call on it follows every candidate.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from pt2lint.analysis.imports import dotted_name
from pt2lint.analysis.kinds import Kind, Value

#: ``Value.const`` of a value that stands for one of several definitions (its ``elts``).
ONE_OF = "one-of"
#: ``Value.const`` of a record (namedtuple/NamedTuple instance): a container whose ``keys`` are its fields.
RECORD = "record"
#: ``Value.const`` of a record class (the result of ``collections.namedtuple(...)``); ``keys`` are its fields.
RECORD_CLASS = "record-class"
#: ``Value.const`` of an instance (and of its ``self``) constructed inside the compiled region.
BUILT = "built"
#: The most candidates a "one of these" value keeps (a larger set is not followed).
MAX_CANDIDATES = 16

#: Factories that return a record class: ``namedtuple(typename, field_names)``.
RECORD_FACTORIES = frozenset({"collections.namedtuple", "typing.NamedTuple", "typing_extensions.NamedTuple"})

_CANDIDATE_KINDS = (Kind.FUNCTION, Kind.CLASS, Kind.MODULE)


def is_one_of(v: Optional[Value]) -> bool:
    """Whether ``v`` stands for one of several definitions (see :func:`one_of`)."""
    return v is not None and v.const == ONE_OF and v.elts is not None


def candidates(v: Value) -> Tuple[Value, ...]:
    """The definitions ``v`` may be: its candidates for a "one of these" value, else ``(v,)``."""
    return v.elts if is_one_of(v) else (v,)


#: Candidates of different kinds that a "one of these" value may still join: both are called the same way.
_CALLABLE_KINDS = frozenset({Kind.FUNCTION, Kind.MODULE})


def one_of(values: Iterable[Value]) -> Optional[Value]:
    """A value standing for one of ``values`` (functions, classes or instances of one kind, or
    functions and module instances mixed, which are called alike).

    Returns ``None`` when the values are not all of one candidate kind with a known
    definition (``ref``), or when there are more than :data:`MAX_CANDIDATES` of them;
    a single distinct candidate is returned as itself.
    """
    out: List[Value] = []
    for v in values:
        for c in candidates(v):
            if c.kind not in _CANDIDATE_KINDS or c.ref is None or (c.kind is Kind.MODULE and c.const not in (None, BUILT)):
                return None
            if not any(c.ref is o.ref and c.elt == o.elt for o in out):
                out.append(c)
    kinds = {c.kind for c in out}
    if not out or (len(kinds) != 1 and not kinds <= _CALLABLE_KINDS) or len(out) > MAX_CANDIDATES:
        return None
    if len(out) == 1:
        return out[0]
    # a method or a submodule (``self.trunk_ckpt if flag else self.trunk``): called, each is followed
    kind = out[0].kind if len(kinds) == 1 else Kind.FUNCTION
    return Value(kind, elts=tuple(out), const=ONE_OF)


def candidate_names(v: Value) -> str:
    """``"A, B"``: the names of a "one of these" value's candidates (for call chains)."""
    names: List[str] = []
    for c in candidates(v):
        ref = c.ref
        owner = getattr(c.elt, "ref", None) if c.elt is not None else None
        if getattr(owner, "name", None) and getattr(ref, "name", None):
            name = f"{owner.name}.{ref.name}"  # a method of one candidate instance
        else:
            name = getattr(ref, "symbol", None) or getattr(ref, "name", None) or (ref if isinstance(ref, str) else "?")
        if str(name) not in names:
            names.append(str(name))
    if len(names) > 4:
        return ", ".join(names[:4]) + f", ... ({len(names)} candidates)"
    return ", ".join(names)


# ------------------------------------------------------------------ records
def record_fields(value: Value) -> Optional[Tuple[str, ...]]:
    """Field names of ``namedtuple(typename, fields)`` from the value of its ``fields`` argument.

    ``fields`` is a string (``"a b"`` / ``"a, b"``) or a list/tuple of strings, or, for
    ``typing.NamedTuple("T", [("a", int), ...])``, of ``(name, type)`` pairs. ``None``
    when the names are not all known constants.
    """
    if value.kind is Kind.CONST and isinstance(value.const, str):
        names = tuple(value.const.replace(",", " ").split())
        return names if all(n.isidentifier() for n in names) else None
    if value.kind is Kind.CONTAINER and value.elts is not None and value.keys is None:
        names = []
        for e in value.elts:
            if e.kind is Kind.CONTAINER and e.elts:
                e = e.elts[0]
            if e.kind is not Kind.CONST or not isinstance(e.const, str) or not e.const.isidentifier():
                return None
            names.append(e.const)
        return tuple(names)
    return None


def record_class(fields: Sequence[str]) -> Value:
    """The value of a record class with ``fields`` (what ``collections.namedtuple(...)`` returns)."""
    return Value(Kind.CLASS, keys=tuple(fields), const=RECORD_CLASS)


def is_record_class(v: Value) -> bool:
    return v.kind is Kind.CLASS and v.const == RECORD_CLASS and v.keys is not None


def is_record(v: Value) -> bool:
    return v.kind is Kind.CONTAINER and v.const == RECORD and v.keys is not None and v.elts is not None


def make_record(fields: Sequence[str], args: Sequence[Value], kwargs, defaults=None) -> Value:
    """A record instance: ``fields`` bound from positional ``args`` then ``kwargs``.

    ``defaults`` maps a field to its default value; a field with neither is Unknown.
    """
    from pt2lint.analysis.kinds import UNKNOWN

    vals = []
    for i, f in enumerate(fields):
        if i < len(args):
            vals.append(args[i])
        elif f in kwargs:
            vals.append(kwargs[f])
        elif defaults and f in defaults:
            vals.append(defaults[f])
        else:
            vals.append(UNKNOWN)
    return Value(Kind.CONTAINER, keys=tuple(fields), elts=tuple(vals), const=RECORD)


def replace_fields(rec: Value, kwargs) -> Value:
    """``rec._replace(**kwargs)``: the record with the named fields rebound."""
    vals = tuple(kwargs.get(k, v) for k, v in zip(rec.keys, rec.elts))
    return Value(Kind.CONTAINER, keys=rec.keys, elts=vals, const=RECORD)


def _decorator_names(node: cst.ClassDef) -> List[str]:
    out = []
    for d in node.decorators:
        e = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        out.append((dotted_name(e) or "").rsplit(".", 1)[-1])
    return out


def is_dataclass_node(node: cst.ClassDef) -> bool:
    """A class decorated with ``@dataclass``/``@dataclasses.dataclass(...)`` (or attrs' ``@define``/``@attr.s``)."""
    return any(n in ("dataclass", "define", "frozen", "mutable", "s", "attrs") for n in _decorator_names(node))


def is_namedtuple_bases(bases: Sequence[object]) -> bool:
    """Whether a class's bases (qualified names or definitions) include ``typing.NamedTuple``."""
    return any(isinstance(b, str) and b.rsplit(".", 1)[-1] == "NamedTuple" for b in bases)


def annotated_fields(node: cst.ClassDef) -> List[Tuple[str, Optional[cst.BaseExpression]]]:
    """``(name, default expression)`` of the annotated class-level fields, in order (``ClassVar`` excluded)."""
    out = []
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                ann = dotted_name(small.annotation.annotation.value if isinstance(small.annotation.annotation, cst.Subscript) else small.annotation.annotation) or ""
                if ann.rsplit(".", 1)[-1] in ("ClassVar", "InitVar"):
                    continue
                out.append((small.target.value, small.value))
    return out


def annotated_field_types(node: cst.ClassDef) -> List[Tuple[str, cst.BaseExpression, Optional[cst.BaseExpression]]]:
    """``(name, annotation, default expression)`` of the fields :func:`annotated_fields` lists."""
    out = []
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    fields = {name for name, _ in annotated_fields(node)}
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value in fields:
                out.append((small.target.value, small.annotation.annotation, small.value))
    return out


def super_init_call(fn: cst.FunctionDef) -> Optional[cst.CSTNode]:
    """The statement of ``fn``'s body that calls ``super().__init__(...)`` (or ``Base.__init__(self, ...)``)."""
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            call = getattr(small, "value", None)
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "__init__":
                return stmt
    return None
