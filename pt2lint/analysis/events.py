"""Facts the interpreter hands to rules, one per visited construct.

Rules subscribe to these; they never walk the tree or re-derive kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from pt2lint.analysis.kinds import Value


@dataclass
class CallEvent:
    """A call in a compiled region.

    Attributes:
        node: the ``Call``.
        qualname: qualified callee (``"torch.nonzero"``, ``"builtins.print"``,
            ``"logging.getLogger().info"``-style names are not built: see ``receiver``),
            or ``None`` for method calls on values.
        method: the attribute name for ``recv.method(...)`` calls.
        receiver: the value of ``recv`` for method calls.
        args: positional argument values; ``kwargs``: keyword argument values.
        result: the value of the call.
        callee: the local :class:`~pt2lint.analysis.index.FunctionInfo` called, if any.
    """

    node: cst.Call
    qualname: Optional[str]
    method: Optional[str]
    receiver: Optional[Value]
    args: Tuple[Value, ...]
    kwargs: Dict[str, Value]
    result: Value
    callee: object = None
    receiver_node: Optional[cst.BaseExpression] = None


@dataclass
class TestEvent:
    """A value whose Python truthiness decides control flow.

    ``construct`` is ``if``, ``elif``, ``while``, ``ifexp``, ``comprehension``,
    ``not``, ``and``, ``or`` or ``assert``.
    """

    node: cst.BaseExpression
    value: Value
    construct: str


@dataclass
class IndexEvent:
    """``base[index]`` read (``on_index``: ``base`` a tensor; ``on_sequence_index``: ``base`` a Python
    list or tuple and ``index`` a tensor), or the target of ``base[index] = v`` (``on_index_store``)."""

    node: cst.Subscript
    base: Value
    index: Value
    index_node: Optional[cst.BaseExpression] = None
    #: slice bounds (``x[a:b]``) whose value is a tensor: ``(bound expression, value)``
    slice_bounds: Tuple[Tuple[cst.BaseExpression, Value], ...] = ()


@dataclass
class WriteEvent:
    """An in-place write into a tensor (``x.add_()``, ``x += y``, ``x[i] = v``, ``out=x``, ``inplace=True``).

    ``target`` is the written value; its ``alias_of`` names the forward input it
    may share storage with.  ``how`` describes the write for messages.
    """

    node: cst.CSTNode
    target: Value
    how: str


@dataclass
class StateWriteEvent:
    """Python state on ``self`` changed inside a compiled region.

    ``how`` is ``"augassign"`` (``self.n += 1``), ``"reassign"`` (``self.n = self.n + 1``),
    ``"container"`` (``self.cache.append(x)``, ``self.cache[k] = v``) or ``"assign"``.
    ``fill_once`` is True for ``self.cache[k] = v`` run only when ``k not in self.cache``
    (a membership test of the same key in the same container guards it) and the key is
    not a tensor, a value read out of tensor data or a tensor size: such a cache gets
    each key once, so it changes the guarded container once per distinct key.
    ``key`` is the value of ``k`` for item writes.
    """

    node: cst.CSTNode
    attr: str
    value: Value
    how: str
    detail: str = ""
    fill_once: bool = False
    key: Optional[Value] = None


@dataclass
class GlobalWriteEvent:
    """A module-level (global) Python variable changed inside a compiled region.

    ``how`` is ``"augassign"`` (``global STEP; STEP += 1``), ``"reassign"``
    (``global STEP; STEP = STEP + 1``) or ``"container"`` (``CACHE[k] = v``,
    ``HISTORY.append(x)`` on a module-level list/dict/set).  ``fill_once`` as in
    :class:`StateWriteEvent`.
    """

    node: cst.CSTNode
    name: str
    value: Value
    how: str
    detail: str = ""
    fill_once: bool = False


@dataclass
class AttrStoreEvent:
    """``t.<attr> = value`` on a tensor (``h.requires_grad = True``)."""

    node: cst.Attribute
    base: Value
    attr: str
    value: Value


@dataclass
class AssertEvent:
    node: cst.Assert
    value: Value


@dataclass
class KeyEvent:
    """A value hashed as a dict key in a compiled region: ``{k: v}``, ``d[k]``, ``d[k] = v``, ``k in d``.

    ``container`` is the dict's value (``None`` for a literal), ``key`` the key's value and
    ``key_node`` its expression; ``container_node`` the dict expression (``None`` for a
    literal).  ``how`` is ``"literal"``, ``"read"``, ``"write"`` or ``"in"``.  Emitted for
    dicts whose value the analysis knows is a dict (a literal, ``{}`` assigned in
    ``__init__``), and not for an unguarded write into ``self``/module state, which is a
    state write (see :class:`StateWriteEvent`).
    """

    node: cst.CSTNode
    key: Value
    key_node: cst.BaseExpression
    how: str
    container_node: Optional[cst.BaseExpression] = None


@dataclass
class ConstructEvent:
    """The ``__init__`` of an ``nn.Module`` subclass constructed inside a compiled region graph-broke.

    Attributes:
        node: where Dynamo reports the module as uninitialized: the ``super().__init__()``
            call of that ``__init__`` (its first statement when it has none).
        cls: the :class:`~pt2lint.analysis.index.ClassInfo` constructed.
        init: the ``__init__`` :class:`~pt2lint.analysis.index.FunctionInfo` that broke.
        inside: for a module built by another module's ``__init__`` that broke (and that Dynamo
            therefore runs eagerly), that other module's class; ``None`` for the module whose own
            ``__init__`` broke.
    """

    node: cst.CSTNode
    cls: object
    init: object
    inside: object = None


@dataclass
class FormatEvent:
    """A value formatted into a string: an operand of ``"..." % v``, a field of an f-string,
    an argument of ``"...".format(v)``.

    ``node`` is the formatting expression (the ``%`` operation, the f-string field's
    expression, the ``format`` call); ``value`` the formatted value.
    """

    node: cst.CSTNode
    value: Value


@dataclass
class RandomArithEvent:
    """Python arithmetic (``g / 20.0``) on a value a ``random`` call drew as a graph input.

    Attributes:
        node: the ``BinaryOperation``.
    """

    node: cst.BinaryOperation


@dataclass
class GeneratorBreakEvent:
    """A graph break inside a generator expression that the builtin ``builtin`` (``all``, ``any``,
    ``sum``, ``set``) consumes, written on a later line than the call: Dynamo breaks again at the
    call ("Generator reconstruction with mutations", GB8335), measured on torch 2.13.

    ``node`` is the call; ``generator`` its generator-expression argument.
    """

    node: cst.Call
    generator: cst.GeneratorExp
    builtin: str


@dataclass
class SourcelessCallEvent:
    """A call of a method of an object built in the compiled frame, during which a graph break
    happened: Dynamo cannot rebuild the bound method to call it eagerly and breaks at the call
    ("Reconstruction failure", GB0092), measured on torch 2.13 (see
    :mod:`pt2lint.analysis.sourceless`).

    Attributes:
        node: the call.
        classes: the names of the classes the object may be an instance of.
        method: the method's name.
    """

    node: cst.Call
    classes: Tuple[str, ...]
    method: str


@dataclass
class FunctionAttrStoreEvent:
    """``f.<attr> = v`` (or ``f.<attr> += v``) on a Python function that exists outside the running
    frame: a module-level function, or a closure's own function (``wrapper.calls += 1`` in a
    decorator's wrapper).  Dynamo cannot store attributes on such a function object
    ("setattr() on unsupported type", GB0467, measured on torch 2.13); on a function defined in
    the running frame it can."""

    node: cst.CSTNode
    function: object  # the FunctionInfo stored into
    attr: str


@dataclass
class LookupBreakEvent:
    """A tensor method or attribute reached through a lookup that Dynamo does not trace, so the graph
    breaks at the lookup (measured on torch 2.13):

    * ``"getattribute"``: ``t.__getattribute__(name)`` (also ``getattr(t, "__getattribute__")(name)``
      ``torch.Tensor.__getattribute__(t, name)`` and ``type(t).__getattribute__(t, name)``) of a method or of an attribute whose value is
      not a tensor, a ``torch.Size`` or ``None``: Dynamo puts the lookup in the graph as a tensor
      method call and rejects its result ("torch.* op returned non-Tensor", GB0208).
    * ``"object-getattribute"``: ``object.__getattribute__(t, name)``, any name ("Unsupported method
      call", GB0156).
    * ``"class-attribute"``: a tensor method stored as a class attribute (``it = torch.Tensor.item``
      in a class body, not wrapped in ``staticmethod``) called through the class (``A.it(t)``,
      ``getattr(A, "it")(t)``, ``m = A.it; m(t)``): "Unsupported method call" (GB0156), whatever the method.
    * ``"dunder-class"``: a tensor method called through the tensor's ``__class__``
      (``t.__class__.add(t, 1)``): "Unsupported method call" (GB0156); ``type(t).add(t, 1)`` traces.

    Attributes:
        node: the lookup (the ``__getattribute__`` call) or, for a class attribute, the call.
        form: one of the three above.
        name: the attribute or method name.
        gb: the graph-break id Dynamo reports.
    """

    node: cst.Call
    form: str
    name: str
    gb: str


@dataclass
class HookHandleEvent:
    """A module hook's ``RemovableHandle`` used inside a compiled region: a method called on it
    (``h.remove()``), an attribute read (``h.id``), or a comparison or truth test of it
    (``self.h is not None``).

    Every such handle comes from another frame: one stored by ``__init__`` (or any code that
    ran before the call), or one returned by a registration inside the region, which itself
    graph-breaks (PTC316), so the rest runs in a resume function.  Dynamo cannot build a
    representation of a handle it did not see created: "Attempted to represent unregistered
    RemovableHandle" (GB0013), at the line that uses it (measured on torch 2.13, graph_breaks
    log: ``self.h.remove()``, ``self.h.id``, ``if self.h is not None:``, ``for h in
    self.handles: h.remove()``; merely iterating a list of handles does not break).

    Attributes:
        node: the expression that uses the handle (the ``.remove`` attribute, the comparison, the test).
        use: how it is used, as source text (``".remove()"``, ``".id"``, ``"is not None"``, ``"if"``).
    """

    node: cst.CSTNode
    use: str


@dataclass
class ContextManagerEvent:
    """A context manager entered by ``with`` in a compiled region whose factory is known.

    Attributes:
        node: the ``with`` statement (Dynamo reports its first line).
        qualname: the qualified name of what built the context manager (``"threading.Lock"``).
        form: ``"local"`` (built in the ``with`` statement), ``"stored"`` (an attribute of
            ``self`` or a module-level name: built outside the region), ``"any"`` (a local
            variable: either) or ``"project-stored"`` (an instance of a context-manager class of
            the project, on ``self`` or at module level).
    """

    node: cst.CSTNode
    qualname: str
    form: str


@dataclass
class SubmoduleAccessEvent:
    """``self.<name>`` (or ``obj.<name>`` of a project module instance) read in a compiled region,
    giving a submodule of a torch class: ``qualname`` is the class (``"torch.nn.LSTM"``).  Dynamo
    wraps a submodule where compiled code first reads it, so some refusals happen here rather than
    at the call (``self.lstm.num_layers`` before ``self.lstm(x)``)."""

    node: cst.Attribute
    qualname: str
