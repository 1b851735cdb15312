"""The abstract interpreter over compiled regions (DESIGN §2).

It walks each compiled entry point statement by statement, giving every
expression a :class:`~pt2lint.analysis.kinds.Value`, follows calls into
functions, methods and submodules defined in the same file (context-sensitive:
a helper is analysed with the kinds of its actual arguments, memoised per
argument signature), skips ``torch.compiler.disable``d functions and the dead
branch of ``torch.compiler.is_compiling()``-style guards, and hands events
(:mod:`pt2lint.analysis.events`) to the enabled rules.

What Dynamo does with each construct was measured on torch 2.13 (see
``docs/dynamo-2.13-facts.md`` and the rule specs under ``rules/``).
"""

from __future__ import annotations

import copy
import functools
import re
from dataclasses import replace
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import libcst as cst

from pt2lint.analysis import dynamo_facts
from pt2lint.analysis import torch_api as api
from pt2lint.analysis.events import (
    AssertEvent,
    AttrStoreEvent,
    CallEvent,
    ConstructEvent,
    ContextManagerEvent,
    SubmoduleAccessEvent,
    FormatEvent,
    FunctionAttrStoreEvent,
    GlobalWriteEvent,
    GeneratorBreakEvent,
    IndexEvent,
    HookHandleEvent,
    LookupBreakEvent,
    KeyEvent,
    RandomArithEvent,
    StateWriteEvent,
    TestEvent,
    WriteEvent,
)
from pt2lint.analysis.imports import STDLIB_MODULES, caught_exceptions, dotted_name
from pt2lint.analysis.names import bound_names, loaded_names, target_names
from pt2lint.analysis.walk import iter_children, walk
from pt2lint.analysis.index import ClassInfo, FunctionInfo, ModuleIndex, decorator_name, identifier, lambda_function
from pt2lint.analysis.project import load_outcome
from pt2lint.analysis import callers, dicts, docstrings, foreign, objects, param_uses, rank0, rebinding, sites, sourceless, type_checks
from pt2lint.analysis.kinds import INT_SCALAR_TENSOR, ONE_D_FLOAT_TENSOR, ONE_D_INT_TENSOR
from pt2lint.analysis.kinds import (
    CONST,
    DATA,
    MODULE,
    NONE,
    SHAPE,
    SIZE,
    TENSOR,
    UNKNOWN,
    Kind,
    Value,
    const,
    container,
    join,
    keyed_dict,
    python_number,
    surely_not_none,
)

MAX_DEPTH = 64
MAX_SIGNATURES_PER_FUNCTION = 6
#: The signature limit of a small function (see :func:`_small_body`): analysing one costs a few
#: statements, and helpers of this size (``default(val, d)``, ``check(cond, msg)``) are the ones a
#: model calls with many argument kinds, one per call site.
MAX_SIGNATURES_PER_SMALL_FUNCTION = 24
#: The most statements (nested ones included, a docstring not) a function may have to be small.
SMALL_FUNCTION_STATEMENTS = 8
#: How often calls past that limit may widen a function's joined argument kinds (each widening is
#: one more analysis, with the join of all argument kinds seen: it covers every earlier call).
MAX_WIDENINGS = 3
MAX_ANALYSES_PER_FILE = 4000
#: The finding for a call the analysis did not follow because a limit above was reached.
ANALYSIS_LIMIT = "PTC004"

_BUILTIN_TYPES = {
    "int", "float", "bool", "str", "complex", "bytes", "list", "tuple", "dict", "set", "frozenset",
}
_NON_TENSOR_ANNOTATIONS = {
    "int", "float", "bool", "str", "complex", "bytes", "SymInt", "SymFloat", "SymBool", "dtype",
    "device", "Size", "Module",
}
_CONTAINER_ANNOTATIONS = {"List", "list", "Tuple", "tuple", "Sequence", "Dict", "dict", "Iterable", "Mapping"}
# A tensor parameter named like a mask (``mask``, ``valid``, ``keep``, ``is_pad``): indexing
# with it is a boolean mask (integer index tensors are named ``idx``/``indices``/``ids``).
# ``attention_mask``-style names are excluded: those are 0/1 integer or additive float masks.
_MASK_NAME = re.compile(r"^(?!attention|attn|causal|head|encoder_attention)(?:\w*_)?(mask|valid|keep|is_\w+|has_\w+|selected)(?:$|_)")


def _optional_inner(ann: cst.BaseExpression) -> cst.BaseExpression:
    """``X`` of ``Optional[X]``, ``X | None`` or ``None | X``; else ``ann`` itself."""
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        if isinstance(ann.right, cst.Name) and ann.right.value == "None":
            return ann.left
        if isinstance(ann.left, cst.Name) and ann.left.value == "None":
            return ann.right
        return ann
    if isinstance(ann, cst.Subscript) and (dotted_name(ann.value) or "").rsplit(".", 1)[-1] == "Optional" and len(ann.slice) == 1:
        inner = ann.slice[0].slice
        if isinstance(inner, cst.Index):
            return inner.value
    return ann


def _is_bool_annotation(ann: cst.BaseExpression) -> bool:
    name = dotted_name(ann) or ""
    return name.rsplit(".", 1)[-1] == "BoolTensor"


#: ``nn.Module`` methods that return the module itself (torch/nn/modules/module.py, torch 2.13:
#: ``return self``, or ``return self._apply(...)``, which returns ``self``).
_MODULE_SELF_METHODS = frozenset(
    """to cuda cpu xpu ipu mtia type float double half bfloat16 to_empty share_memory _apply apply
    train eval requires_grad_""".split()
)
#: Methods always read for the ``self.x = ...`` attributes of classes of other modules (their
#: other methods only when they set ``self`` state, see ``_stores_self_state``).
_CONSTRUCTION_METHODS = frozenset({"__init__", "__post_init__", "__new__", "setup", "build"})

_GENERIC_METHOD_NAMES = frozenset(
    """split copy get items keys values index count strip lower upper replace join format startswith
    endswith pop append extend update insert remove sort reverse clear __call__ encode decode""".split()
)
_CONTAINER_MUTATORS = frozenset(
    "append extend insert pop clear update add setdefault popitem remove discard appendleft extendleft popleft".split()
)


# A ``torch.Generator`` instance (``torch.Generator()``, ``g.manual_seed(0)``): its
# methods read as ``"torch.Generator().<name>"`` qualified names.
GENERATOR_REF = "torch.Generator()"
GENERATOR = Value(Kind.UNKNOWN, ref=GENERATOR_REF)


# The result of a ``random`` call Dynamo draws as a graph input (the facts table's
# "random-variable" source: ``random.uniform``/``randint``/``randrange``).  Measured on
# torch 2.13: it meets tensors in the graph (``x * random.uniform(a, b)`` traces), but
# Python arithmetic on it with a number (``g / 20.0``) breaks with GB0213.
RANDOM_DRAW = Value(Kind.DATA, ref="random-variable")
# A ``random.Random(seed)`` instance: Dynamo (torch 2.13, ``variables/misc.py``
# ``RandomVariable``) traces it, and its methods in ``RandomVariable._supported_fn_names``
# draw a value as a graph input, like the module-level ``random.randint``.
RANDOM_INSTANCE_REF = "random.Random()"
RANDOM_INSTANCE = Value(Kind.UNKNOWN, ref=RANDOM_INSTANCE_REF)
_RANDOM_INSTANCE_DRAWS = frozenset({"random", "randint", "randrange", "uniform"})
_PY_NUMBER_KINDS = (Kind.CONST, Kind.SHAPE, Kind.DATA)


# Per-node answers of the pure tree scans below, shared by every entry file a process
# analyses (the pieces of imported modules are cached trees, so the same node comes back):
# id(node), extra key -> (node kept alive, answer).  Bounded like ``_SELF_STATE``.
_NODE_SCANS: Dict[tuple, tuple] = {}
_NODE_SCANS_MAX = 8192


def _node_scan(node: cst.CSTNode, extra, scan):
    """``scan()``, the answer of a pure function of ``node`` (and the hashable ``extra``),
    computed once per node in this process.  A key holds its node, so an id is never
    reused by another tree while its entry lives."""
    key = (id(node), extra)
    hit = _NODE_SCANS.get(key)
    if hit is not None and hit[0] is node:
        return hit[1]
    result = scan()
    if len(_NODE_SCANS) >= _NODE_SCANS_MAX:
        _NODE_SCANS.clear()
    _NODE_SCANS[key] = (node, result)
    return result


def _returns_of(fn: cst.FunctionDef) -> Optional[Tuple[cst.BaseExpression, ...]]:
    """The values ``fn`` returns (not counting nested functions); ``None`` when one is bare.

    Memoised per node (:func:`_node_scan`): the guard helpers of an imported module are
    asked about from every entry file that calls them."""
    return _node_scan(fn, "returns", lambda: _scan_returns(fn))


def _scan_returns(fn: cst.FunctionDef) -> Optional[Tuple[cst.BaseExpression, ...]]:
    """:func:`_returns_of` without the memo."""
    out: List[cst.BaseExpression] = []
    ok = True

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return node is fn

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

        def visit_Try(self, node) -> bool:
            # ``try: import torch; return torch.compiler.is_compiling() except ...: return False``:
            # while Dynamo traces, the import and the guard do not raise, so the handlers' returns
            # are not taken
            if all(_import_or_return(st) for st in node.body.body):
                node.body.visit(self)
                if node.orelse is not None:
                    node.orelse.visit(self)
                if node.finalbody is not None:
                    node.finalbody.visit(self)
                return False
            return True

        def visit_Return(self, node) -> None:
            nonlocal ok
            if node.value is None:
                ok = False
            else:
                out.append(node.value)

    fn.visit(V())
    return tuple(out) if ok and out else None


def _default_fills(narrowed, body: Dict[str, Value], orelse: Dict[str, Value], names=None):
    """``(name, filled, kept)`` for each name the ``is None`` arm of an ``if`` on a parameter fills
    with a sure tensor while the other arm holds the parameter itself, of unknown kind or only
    guessed a tensor (``narrowed``: :meth:`Interpreter._narrow` of the test; ``body``/``orelse``:
    what each arm left bound).  ``names``: the names to look at; ``None``: the narrowed parameters
    themselves (a local rebound in the arm, ``if lens is None: lens = ...``)."""
    for arm, other, narrow_arm, narrow_other in ((body, orelse, narrowed[0], narrowed[1]), (orelse, body, narrowed[1], narrowed[0])):
        for param, v in narrow_arm.items():
            if v.kind is not Kind.NONE or param not in narrow_other:
                continue
            for name in (param,) if names is None else names:
                filled, kept = arm.get(name), other.get(name)
                if filled is None or kept is None or kept is not narrow_other[param]:
                    continue
                if filled.kind is not Kind.TENSOR or filled.weak or filled.maybe_none:
                    continue
                if kept.kind is Kind.UNKNOWN or (kept.kind is Kind.TENSOR and kept.weak):
                    yield name, filled, kept


def _none_comparison(test: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, bool]]:
    """``(x, True)`` for the test ``x is None``, ``(x, False)`` for ``x is not None``; else ``None``."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    comp = test.comparisons[0]
    if not (isinstance(comp.comparator, cst.Name) and comp.comparator.value == "None"):
        return None
    if not isinstance(comp.operator, (cst.Is, cst.IsNot)):
        return None
    return test.left, isinstance(comp.operator, cst.Is)


def _branch_subject(test: cst.BaseExpression) -> Optional[Tuple[tuple, bool]]:
    """``(subject, polarity)`` of a test on one flag: the subject ``("self", attr)`` or
    ``("local", name)``, and whether the test is true exactly when the flag is truthy
    (``flag``, ``not not flag``) or falsy (``not flag``).  ``self.training``, a bool, also
    counts in ``is``/``==``/``!=``/``is not`` comparisons with ``True``/``False``.  ``None`` for
    any other test."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _branch_subject(test.expression)
        return None if inner is None else (inner[0], not inner[1])
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        other = comp.comparator
        if not (isinstance(other, cst.Name) and other.value in ("True", "False")):
            return None
        inner = _branch_subject(test.left)
        if inner is None or inner[0] != ("self", "training"):
            return None
        if not isinstance(comp.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)):
            return None
        same = isinstance(comp.operator, (cst.Is, cst.Equal)) == (other.value == "True")
        return inner[0], inner[1] if same else not inner[1]
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self":
        return ("self", test.attr.value), True
    if isinstance(test, cst.Name) and test.value not in ("True", "False", "None"):
        return ("local", test.value), True
    return None


def _built_by_other_classes(modules, module: Optional[cst.Module] = None) -> set:
    """The module classes whose constructor is called in a method of another class of the module,
    or whose instance the module's code passes to another module class's constructor
    (``Net(Head())``, ``Net(head=Head())``, ``Net([Block(), Block()])``, ``head = Head(...)``
    then ``Net(task_heads=head)``: in a factory function or a ``__main__`` demo alike).

    Such a class is somebody's submodule even where the analysis found the constructing
    branch dead (``Bias(cfg) if cfg.use_bias else None`` with the config field's class
    default read as the value): the branch is taken for other configurations, so the
    class's ``forward`` is called from its parent's compiled code, never with tensors the
    user chose.  An instance handed to a parent's constructor (dependency injection) is
    called from that parent's ``forward`` the same way.  A class built only by itself
    (recursion) or nowhere stays a root.

    Args:
        modules: the :class:`~pt2lint.analysis.index.ClassInfo` of the module's ``nn.Module`` classes.
        module: the module's tree (for the instances passed to constructors), if known.

    Returns:
        The subset of ``modules`` so constructed.
    """
    by_name = {c.name: c for c in modules}
    out: set = set()

    def built_in(node):
        return by_name.get(node.func.value) if type(node) is cst.Call and type(node.func) is cst.Name else None

    for owner in modules:
        for fn in owner.methods.values():
            if fn.node is None:
                continue
            for node in walk(fn.node):
                cls = built_in(node)  # final classes: no ABC check per node
                if cls is not None and cls is not owner:
                    out.add(cls)
    if module is None:
        return out
    if len(by_name) < 2:
        return out
    calls = []
    instances: Dict[str, set] = {}  # a name assigned a module class's instance anywhere in the module
    for node in walk(module):
        kind = type(node)
        if kind is cst.Call:
            if type(node.func) is cst.Name and node.func.value in by_name and node.args:
                calls.append(node)
        elif kind is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            cls = built_in(node.value)
            if cls is not None:
                instances.setdefault(node.targets[0].target.value, set()).add(cls)
    for call in calls:
        outer = built_in(call)
        for arg in call.args:
            values = [e.value for e in arg.value.elements] if isinstance(arg.value, (cst.List, cst.Tuple)) else [arg.value]
            for v in values:
                found = {built_in(v)} if built_in(v) is not None else instances.get(v.value, set()) if type(v) is cst.Name else set()
                out |= {c for c in found if c is not outer}
    return out


def _join_params(a: Dict[str, Value], b: Dict[str, Value]) -> Dict[str, Value]:
    """Parameter values of two calls joined name by name (a name bound in one only keeps its value)."""
    out = dict(a)
    for name, v in b.items():
        joined = join(out[name], v) if name in out else v
        if joined.kind is Kind.SELF and not isinstance(joined.ref, ClassInfo):
            joined = UNKNOWN  # instances of two classes: which one is not known
        out[name] = joined
    return out


def _plain_args(call) -> bool:
    """``call`` is a ``Call`` node whose arguments are written out (no ``*args``/``**kwargs``)."""
    return isinstance(call, cst.Call) and not any(a.star for a in call.args)


def _dict_call(first: Optional[Value], args: Sequence[Value], kwargs: Dict[str, Value]) -> Value:
    """The value of ``dict(...)``: ``dict(d)`` a copy of ``d``'s entries, ``dict(scale=t)`` /
    ``dict(d, n=3)`` / ``dict(**d)`` with the keywords as entries, ``dict(zip(names, ts))`` a
    mapping whose values are the pairs' second elements, anything else a mapping of unknown keys."""
    if kwargs and len(args) <= 1 and (first is None or first.kind is Kind.CONTAINER):
        base = dicts.known_entries(first) if first is not None else {}
        entries = {**(base or {}), **dict(kwargs)}
        if first is None or (first.keys is not None and not dicts.is_open(first)):
            if not dicts.is_open_kwargs(kwargs):
                return keyed_dict(entries.items())
            return dicts.open_dict(entries)
        if base is not None:
            return dicts.open_dict(entries)
        elt = first.element()
        for v in kwargs.values():
            elt = join(elt, v)
        return Value(Kind.CONTAINER, elt=elt)
    if first is not None and len(args) == 1 and not kwargs and first.kind is Kind.CONTAINER:
        if first.keys is not None:
            return first  # ``dict(d)``: a copy, with the same entries
        pair = first.element()
        if pair.kind is Kind.CONTAINER and pair.elts is not None and len(pair.elts) == 2:
            return Value(Kind.CONTAINER, elt=pair.elts[1])  # ``dict(zip(names, tensors))``
        return Value(Kind.CONTAINER, elt=first.element())  # a mapping of unknown keys
    return Value(Kind.CONTAINER, elt=UNKNOWN)


def _unsized(value: Value, added: Sequence[Value] = ()) -> Value:
    """List ``value`` with its length forgotten: its elements and ``added`` joined into one element."""
    elt = value.element()
    for v in added:
        elt = join(elt, v)
    return replace(value, elts=None, elt=elt)


def _with_item(value: Value, index: Optional[Value], item: Value) -> Value:
    """List ``value`` after ``value[index] = item`` (``index`` None: a slice assignment).

    A known position of a list of known length holds ``item`` now; any other index (a loop
    variable) may write any position, so every element becomes the join of what it held and
    ``item`` (unless ``item`` is of unknown kind: see below); a slice assignment adds the elements
    of ``item`` and leaves the length unknown.
    Without this, ``outs = [0] * n`` filled by ``outs[i] = t`` kept its ints and ``if outs[1] >
    0:`` was no tensor ``if``."""
    if index is None:
        return _unsized(value, [item.element()])
    n = len(value.elts) if value.elts is not None else None
    pos = index.const if isinstance(index.const, int) and not isinstance(index.const, bool) else None
    if n is not None and pos is not None and -n <= pos < n:
        elts = list(value.elts)
        elts[pos] = item
        return replace(value, elts=tuple(elts), elt=None)
    if item.kind is Kind.UNKNOWN or (item.kind is Kind.TENSOR and item.weak):
        # a value of unknown kind written at an unknown position (``args[i] = v`` in a decorator's
        # wrapper, ``v`` read back from ``args`` or a config): what the list surely holds is kept
        # rather than made a guess everywhere
        return value
    if n is not None:
        return replace(value, elts=tuple(join(e, item) for e in value.elts), elt=None)
    return replace(value, elt=join(value.element(), item))


def _added_by(method: str, args: Sequence[Value]) -> List[Value]:
    """What a container mutator call adds (``extend``/``update`` add the elements of their argument)."""
    return [a.element() if method in ("extend", "update") else a for a in args]


def _self_slot(name: str) -> str:
    """The frame-environment key under which a store to ``self.<name>`` is kept (not an identifier,
    so it never meets a local)."""
    return f"self.{name}"


def _sized_list(value: Optional[Value]) -> bool:
    """``value`` is a container whose elements (and so its length) are known, not a dict."""
    return value is not None and value.kind is Kind.CONTAINER and value.elts is not None and value.keys is None


def _after_docstring(block: cst.IndentedBlock) -> List[cst.BaseStatement]:
    """The statements of a function body after its leading docstring (kept when it is the only
    statement: a body of just a docstring is that statement)."""
    body = list(block.body)
    if len(body) > 1 and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        first = body[0].body[0]
        if isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString)):
            return body[1:]
    return body


def _small_body(fn: cst.CSTNode) -> bool:
    """True when ``fn`` is a function of at most :data:`SMALL_FUNCTION_STATEMENTS` statements
    (nested ones counted, a leading docstring not) with no ``for``/``while`` loop, no ``match``
    and no nested ``def``/``class``.

    One analysis of such a body costs a handful of statements (the functions it calls have
    their own limits), so the per-function signature limit can be larger for it without making
    any file slower than a few dozen statement evaluations per call site.
    """
    if not isinstance(fn, cst.FunctionDef) or not isinstance(fn.body, cst.IndentedBlock):
        return False
    count = 0
    todo = _after_docstring(fn.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Match)):
            return False
        if isinstance(stmt, cst.SimpleStatementLine):
            count += len(stmt.body)
        elif isinstance(stmt, cst.BaseSmallStatement):
            count += 1  # one of ``if c: a; b`` on a line
        else:
            count += 1
            for block in _blocks_of(stmt):
                todo.extend(block)
        if count > SMALL_FUNCTION_STATEMENTS:
            return False
    return True


def _blocks_of(stmt: cst.BaseCompoundStatement) -> List[Sequence[cst.CSTNode]]:
    """The statement lists directly inside a compound statement (an ``if``'s body and its
    ``elif``/``else`` chain, a ``with`` or ``try`` body and its handlers)."""
    out: List[Sequence[cst.CSTNode]] = []
    todo: List[cst.CSTNode] = [stmt]
    while todo:
        node = todo.pop()
        body = getattr(node, "body", None)
        if isinstance(body, cst.IndentedBlock):
            out.append(body.body)
        elif isinstance(body, cst.SimpleStatementSuite):
            out.append(body.body)
        for part in ("orelse", "finalbody"):
            extra = getattr(node, part, None)
            if extra is not None:
                todo.append(extra)
        todo.extend(getattr(node, "handlers", ()) or ())
    return out


def _identity_test_only(fn: cst.CSTNode) -> bool:
    """True when ``fn``'s whole body is ``return`` of an identity test of its names
    (``return val is not None``, ``return not (a is b)``, after an optional docstring).

    Such a function cannot graph-break, read a tensor's data or write anything, whatever
    kinds its arguments have (``is`` compares object identity, never a tensor's value), so
    the per-function limit on argument kinds does not need to skip it: analysing it again
    costs nothing and is exact.
    """
    if not isinstance(fn, cst.FunctionDef) or fn.decorators or not isinstance(fn.body, cst.IndentedBlock):
        return False
    body = _after_docstring(fn.body)
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    ret = body[0].body[0]
    if not isinstance(ret, cst.Return) or ret.value is None:
        return False

    def plain(e: cst.BaseExpression) -> bool:
        return isinstance(e, (cst.Name, cst.Integer, cst.Float, cst.SimpleString))

    e = ret.value
    while isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Not):
        e = e.expression
    return (
        isinstance(e, cst.Comparison)
        and plain(e.left)
        and all(isinstance(c.operator, (cst.Is, cst.IsNot)) and plain(c.comparator) for c in e.comparisons)
    )


def _import_or_return(stmt: cst.CSTNode) -> bool:
    """A statement line of only imports and ``return <call>``s."""
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom))
        or (isinstance(small, cst.Return) and isinstance(small.value, cst.Call))
        for small in stmt.body
    )


def _local_assigns(fn: cst.FunctionDef, name: str) -> Tuple[Tuple[cst.BaseExpression, ...], bool]:
    """The values assigned to local ``name`` in ``fn`` by ``name = e``, and whether every
    other write to it is ``name |= e`` (which keeps a true value true).  Memoised per node
    and name (:func:`_node_scan`)."""
    return _node_scan(fn, ("assigns", name), lambda: _scan_local_assigns(fn, name))


def _scan_local_assigns(fn: cst.FunctionDef, name: str) -> Tuple[Tuple[cst.BaseExpression, ...], bool]:
    """:func:`_local_assigns` without the memo."""
    plain: List[cst.BaseExpression] = []
    others_or = True

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return node is fn

        def visit_Assign(self, node) -> None:
            nonlocal others_or
            for t in node.targets:
                if isinstance(t.target, cst.Name) and t.target.value == name:
                    if len(node.targets) == 1:
                        plain.append(node.value)
                    else:
                        others_or = False

        def visit_AugAssign(self, node) -> None:
            nonlocal others_or
            if isinstance(node.target, cst.Name) and node.target.value == name and not isinstance(node.operator, cst.BitOrAssign):
                others_or = False

        def visit_AnnAssign(self, node) -> None:
            nonlocal others_or
            if isinstance(node.target, cst.Name) and node.target.value == name:
                others_or = False

    fn.visit(V())
    return tuple(plain), others_or


def qualified_guard_truth(qualified: Optional[str], target: str) -> Optional[bool]:
    """The value the guard call ``qualified()`` has while Dynamo traces for ``target``: what the
    facts table's ``tracing_state`` says (:func:`dynamo_facts.tracing_state_value`:
    ``torch.onnx.is_in_onnx_export()`` is False, ``torch.compiler.is_exporting()`` true only under
    ``export``), else :data:`~pt2lint.analysis.torch_api.COMPILING_GUARDS`; ``None`` for any other
    call."""
    known = dynamo_facts.tracing_state_value(qualified, target)
    if known is not None:
        return known
    if qualified == "torch.compiler.is_exporting":
        return target == "export"
    return api.COMPILING_GUARDS.get(qualified) if qualified is not None else None


def _bool_op_truth(operator, a: Optional[bool], b: Optional[bool]) -> Optional[bool]:
    """The truth of ``a and b`` / ``a or b`` (``operator``: the node's ``cst.And``/``cst.Or``) from
    the operands' truths, ``None`` standing for undecided: a False operand decides ``and``, a True
    one ``or``."""
    if isinstance(operator, cst.And):
        if a is False or b is False:
            return False
        return True if a is True and b is True else None
    if a is True or b is True:
        return True
    return False if a is False and b is False else None


def guard_truth(e: cst.BaseExpression, module, target: str, resolve=None, depth: int = 0, name_truth=None) -> Optional[bool]:
    """The value the expression ``e`` of ``module`` has while Dynamo traces, when guards decide
    it: ``torch.compiler.is_compiling()``-style calls (:data:`~pt2lint.analysis.torch_api.COMPILING_GUARDS`;
    ``is_exporting()`` is True only for the ``export`` ``target``), ``True``/``False``, ``not``/``and``/``or``
    of such values, and calls of project functions decided the same way (:func:`helper_truth`;
    ``resolve(module, name)`` finds the function a name of ``module`` stands for).
    ``name_truth(name_node)`` decides other names (``None``: undecided).  Anything else is
    undecided (``None``): unknown is not true."""
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Not):
        t = guard_truth(e.expression, module, target, resolve, depth, name_truth)
        return None if t is None else not t
    if isinstance(e, cst.BooleanOperation):
        a = guard_truth(e.left, module, target, resolve, depth, name_truth)
        b = guard_truth(e.right, module, target, resolve, depth, name_truth)
        return _bool_op_truth(e.operator, a, b)
    if isinstance(e, cst.Name):
        if e.value in ("True", "False"):
            return e.value == "True"
        return name_truth(e) if name_truth is not None else None
    none_test = _none_comparison(e)
    if none_test is not None and _guard_alias(none_test[0], module, target) is not None:
        # ``_is_exporting is not None``: the guard exists in the torch the facts are from
        return not none_test[1]
    if (
        isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value == "bool" and len(e.args) == 1
        and e.args[0].keyword is None and not e.args[0].star
    ):
        return guard_truth(e.args[0].value, module, target, resolve, depth, name_truth)
    if isinstance(e, cst.Call) and not e.args:
        alias = _guard_alias(e.func, module, target)
        if alias is not None:
            return qualified_guard_truth(alias, target)
    if isinstance(e, cst.Call) and isinstance(e.func, (cst.Name, cst.Attribute)):
        d = dotted_name(e.func)
        if d is None:
            return None
        q = module.imports.qualify(e.func) if module is not None else None
        known = qualified_guard_truth(q, target)
        if known is not None:
            return known
        if isinstance(e.func, cst.Name) and module is not None and resolve is not None:
            other = resolve(module, e.func.value)
            t = helper_truth(other, target, depth + 1, resolve) if other is not None else None
            if t is not None:
                return t
        last = d.rsplit(".", 1)[-1]
        if q is None and last in api.COMPILING_GUARD_NAMES:
            return api.COMPILING_GUARD_NAMES[last]
        if d in api.COMPILING_GUARDS:
            return api.COMPILING_GUARDS[d]
    return None


def _guard_alias(e: cst.BaseExpression, module, target: str) -> Optional[str]:
    """The qualified name of the guard a module-level name of ``module`` is bound to by a
    version shim: ``_is_exporting = getattr(torch.compiler, "is_exporting", None)`` (the first
    operand of an ``or`` of such ``getattr`` calls), when the facts know that guard
    (:func:`qualified_guard_truth`: it exists in the torch they are from); else ``None``."""
    if not isinstance(e, cst.Name) or module is None:
        return None
    value = getattr(module, "global_exprs", {}).get(e.value)
    while isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
        value = value.left
    if not (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "getattr"
        and len(value.args) == 3 and isinstance(value.args[1].value, cst.SimpleString)
        and isinstance(value.args[0].value, (cst.Name, cst.Attribute))
    ):
        return None
    owner = module.imports.qualify(value.args[0].value)
    attr = value.args[1].value.evaluated_value
    if not owner or not isinstance(attr, str):
        return None
    qualified = f"{owner}.{attr}"
    return qualified if qualified_guard_truth(qualified, target) is not None else None


def _decided_return(fn: cst.FunctionDef, truth) -> Optional[cst.BaseExpression]:
    """The value ``fn`` returns when its body is a run of ``if TEST: return V`` statements whose
    tests ``truth`` decides, then ``return W`` (``if torch.jit.is_scripting(): return False``
    ahead of the real check): the ``V`` of the first test that holds, else ``W``; ``None`` when
    the body has another shape or a test is undecided."""

    def lone_return(block) -> Optional[cst.Return]:
        stmts = block.body  # (small statements of a ``SimpleStatementSuite``, lines of an indented block)
        if len(stmts) != 1:
            return None
        small = stmts[0]
        if isinstance(small, cst.SimpleStatementLine):
            if len(small.body) != 1:
                return None
            small = small.body[0]
        return small if isinstance(small, cst.Return) and small.value is not None else None

    if not isinstance(fn.body, cst.IndentedBlock):
        return None
    for stmt in _after_docstring(fn.body):
        if isinstance(stmt, cst.If) and stmt.orelse is None:
            ret = lone_return(stmt.body)
            held = truth(stmt.test) if ret is not None else None
            if held is None:
                return None
            if held:
                return ret.value
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            ret = stmt.body[0]
            return ret.value if isinstance(ret, cst.Return) and ret.value is not None else None
        return None
    return None


def helper_truth(info, target: str, depth: int = 0, resolve=None) -> Optional[bool]:
    """The value a call of the project function ``info`` has while Dynamo traces, when its
    body decides it: every ``return`` gives the same compile-time truth.

    A return value's truth comes from ``torch.compiler.is_compiling()``-style guards
    (:data:`~pt2lint.analysis.torch_api.COMPILING_GUARDS`, ``torch.jit.is_tracing()`` is
    False under Dynamo), ``not``/``and``/``or`` of such values, calls of other functions of
    the same module decided the same way (or, failing that, known helper names), and a
    local assigned once and then only ``|=``-ed (``t = is_compiling() or ...; t |= ...``):
    :func:`guard_truth`.  ``resolve(module, name)`` finds the project function a name of the
    helper's module stands for.  Anything else is undecided (``None``): unknown is not true.  transformers' ``is_tracing``
    (``is_torchdynamo_compiling() or is_jit_tracing() or ...``) is True under Dynamo
    (measured: ``if not is_tracing(m) and torch.all(m == 1)`` compiles without a break).
    """
    fn = getattr(info, "node", None)
    module = getattr(info, "module", None)
    if not isinstance(fn, cst.FunctionDef) or depth > 3:
        return None
    returns = _returns_of(fn)
    if returns is None:
        return None

    def truth(e: cst.BaseExpression, seen: frozenset) -> Optional[bool]:
        return guard_truth(e, module, target, resolve, depth, lambda name: local(name.value, seen))

    def local(name: str, seen: frozenset) -> Optional[bool]:
        if name in seen:
            return None
        values, only_or = _local_assigns(fn, name)
        if len(values) == 1:
            t = truth(values[0], seen | {name})
            if t is True and only_or:
                return True
            if t is False and only_or is True and not _has_augassign(fn, name):
                return False
        return None

    decided = _decided_return(fn, lambda test: truth(test, frozenset()))
    if decided is not None:
        t = truth(decided, frozenset())
        if t is not None:
            return t
    found = {truth(r, frozenset()) for r in returns}
    return found.pop() if len(found) == 1 else None


def _self_attrs_written(fn: cst.CSTNode) -> frozenset:
    """Names ``x`` of every ``self.x`` the function ``fn`` assigns, augments or deletes (memoised
    per node: :func:`_node_scan`)."""

    def scan() -> frozenset:
        out = set()
        for n in walk(fn):
            targets = ()
            if type(n) is cst.Assign:
                targets = tuple(t.target for t in n.targets)
            elif type(n) in (cst.AugAssign, cst.AnnAssign, cst.Del):
                targets = (n.target,)
            for t in targets:
                for m in walk(t):
                    if type(m) is cst.Attribute and type(m.value) is cst.Name and m.value.value == "self":
                        out.add(m.attr.value)
        return frozenset(out)

    return _node_scan(fn, "self-writes", scan)


def _returns_a_breaking_query(info) -> bool:
    """``info`` (a project function) returns the result of a torch query that breaks when
    called (:func:`~pt2lint.analysis.dynamo_facts.torch_query_break`: ``return
    torch._C._is_tracing()``): no guard, whatever its name says."""
    fn = getattr(info, "node", None)
    module = getattr(info, "module", None)
    returns = _returns_of(fn) if isinstance(fn, cst.FunctionDef) else None
    if not returns or module is None:
        return False
    for e in returns:
        if isinstance(e, cst.UnaryOperation):
            e = e.expression
        if isinstance(e, cst.Call) and not e.args and isinstance(e.func, (cst.Name, cst.Attribute)):
            if dynamo_facts.torch_query_break(module.imports.qualify(e.func)):
                return True
    return False


def _has_augassign(fn: cst.FunctionDef, name: str) -> bool:
    return any(
        isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name) and n.target.value == name
        for n in walk(fn)
    )


def _note_hidden(first, code: str, node: cst.CSTNode, stmt, header) -> None:
    """Remember on ``first`` (the finding whose break made Dynamo skip the frame) a later
    graph break ``code`` at ``node`` in that frame: Dynamo reaches it only once the first
    break is fixed, so it is named in the first finding's message, not reported alone."""
    extra = getattr(first, "extra", None)
    if not isinstance(extra, dict):
        return
    hidden = extra.setdefault("hidden_breaks", [])
    if node is not getattr(first, "node", None) and all(h[1] is not node for h in hidden):
        hidden.append((code, node, stmt, header))


class Frame:
    """The state of one function being analysed."""

    __slots__ = (
        "func", "env", "parent", "self_value", "chain", "returns", "yields", "cls", "imports", "loop_depth", "skipped",
        "try_depth", "sites", "calling", "log", "globals_declared", "sized",
        "born", "varying", "by_mode", "state_from",
    )

    def __init__(self, func, env, parent, self_value, chain, cls, imports):
        self.func = func
        self.env: Dict[str, Value] = env
        self.parent: Optional[Frame] = parent
        self.self_value: Optional[Value] = self_value
        self.chain: Tuple[str, ...] = chain
        self.returns: List[Value] = []
        self.yields: List[Value] = []
        self.cls: Optional[ClassInfo] = cls
        self.imports = imports
        self.loop_depth = 0  # inside how many for/while bodies of this function
        self.try_depth = 0  # inside how many try bodies of this function
        # Dynamo gave up on this frame after a graph break in a loop: the finding of that
        # break (or True), else False
        self.skipped = False
        # (module, node, stmt, header) of the call made from each outer frame of ``chain``
        self.sites: Tuple[tuple, ...] = ()
        self.calling: Optional[cst.Call] = None  # the call this frame is dispatching
        # every name written in ``env``, in order: two environments that both descend from
        # one taken when the log had length ``m`` differ only in names of ``log[m:]``
        self.log: List[str] = []
        self.globals_declared: set = set()  # names of a ``global`` statement in this function
        # local names bound to a tensor size (``n = x.shape[0]``, ``b, t, c = x.size()``)
        self.sized: set = set()
        # local name -> (graph breaks seen when it was bound, the value bound): names bound to an
        # object built in this frame (see :mod:`pt2lint.analysis.sourceless`)
        self.born: Dict[str, tuple] = {}
        # names the enclosing loops of this function bind (their targets, what their bodies
        # assign): a test on one of them may take a different arm in each iteration
        self.varying: frozenset = frozenset()
        # the subject of an ``if`` (``("self", "training")``, ``("local", "use_cache")``) -> (length
        # of ``log`` after the ``if``, {local name -> (the joined value, its value where the subject
        # is true, where it is false)}): names the ``if``'s arms bound differently (see
        # ``Interpreter._narrow_subject``)
        self.by_mode: Dict[tuple, Tuple[int, Dict[str, Tuple["Value", "Value", "Value"]]]] = {}
        # local name -> (the attributes of ``self`` its value was computed from, whether it was
        # changed from them): ``total = self.count + n`` is ``({"count"}, True)``, ``c = self.count``
        # is ``({"count"}, False)`` (see :func:`_state_sources`); the binding last executed wins
        self.state_from: Dict[str, Tuple[frozenset, bool]] = {}

    def assign(self, name: str, value: "Value") -> None:
        """Bind ``name`` in this frame's environment (and log the write for joins)."""
        self.env[name] = value
        self.log.append(name)

    def lookup(self, name: str) -> Optional[Value]:
        f: Optional[Frame] = self
        while f is not None:
            v = f.env.get(name)
            if v is not None:
                return v
            f = f.parent
        return None

    def is_bound(self, name: str) -> bool:
        return self.lookup(name) is not None


# A loop body is interpreted until the values it sees stop changing, at most this many
# times; two passes carry a value bound in one iteration into the next (``h = f(h)``).
# Stopping at the fixed point makes nested loops cost at most depth**2 body passes, not 2**depth.
_LOOP_PASSES = 2


def _loop_bound_names(loop: cst.CSTNode) -> frozenset:
    """The names a ``for``/``while`` loop binds on each iteration: its target and every name its body
    assigns (``=``, ``+=``, annotated, ``for``/``with`` targets, ``:=``), nested functions aside."""
    return _node_scan(loop, "loop-bound", lambda: _scan_loop_bound(loop))


def _scan_loop_bound(loop: cst.CSTNode) -> frozenset:
    targets = [loop.target] if isinstance(loop, cst.For) else []
    for node in walk(loop.body, into_functions=False):
        if isinstance(node, cst.AssignTarget):
            targets.append(node.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            targets.append(node.target)
        elif isinstance(node, cst.AsName):
            targets.append(node.name)
    # (``self.x = ...``, ``d[k] = ...`` rebind no name)
    return frozenset(n.value for t in targets for n in target_names(t))


class _Alternatives:
    """Mutually exclusive arms (the body and ``else`` of an ``if``, the cases of a ``match``, the
    two arms of a conditional expression): at run time one of them runs, so each is analysed
    from the frame's graph-break state before the first.

    A graph break in one arm neither ends the frame for the next (``Frame.skipped``, set by a
    break in a loop or ``try`` body or by a call Dynamo cannot resume) nor counts as a break
    between an object's construction and a method call on it in the next
    (``Interpreter.gb_events``, ``Frame.born``; measured on torch 2.13: with
    ``if event_fn is None: s.integrate(t) else: s.integrate_until_event(t0, event_fn)``, where
    ``s`` is built in the function and both methods branch on a tensor, Dynamo reports the
    reconstruction failure at the call of whichever arm runs).  After the last arm the frame is
    skipped as the arm that runs when the optional arguments are omitted left it, when the test
    decides that arm (``default``: ``if opt is not None:`` on a parameter ``opt=None``), else if
    any arm that goes on to the next statement skipped it.  A break in a loop under
    ``if opt is not None:`` hides nothing in a call without ``opt``: Dynamo then logs the next
    graph break after the ``if`` (measured on torch 2.13: ``.nonzero()`` after such an arm is
    logged when the arm is not taken, not when it is), so that break is reported on its own.
    Arms that return or raise leave nothing after the statement.  The break count has grown by
    the breaks of every arm, so a caller comparing counts sees that the statement broke.
    """

    __slots__ = ("interp", "frame", "start", "skipped", "born", "merged_born", "breaks", "going_on", "arm", "default")

    def __init__(self, interp: "Interpreter") -> None:
        self.interp = interp
        self.frame = interp.frame
        self.start = interp.gb_events
        self.skipped = self.frame.skipped if self.frame is not None else False
        self.born = dict(self.frame.born) if self.frame is not None else {}
        self.merged_born = dict(self.born)
        self.breaks = 0
        # (arm number, the skip state it left) of each arm that goes on to the next statement
        self.going_on: list = []
        self.arm = 0
        # the number of the arm a call omitting the optional arguments runs, when the test decides it
        self.default: Optional[int] = None

    def next(self, ends: bool = False) -> None:
        """The arm just analysed is over: rewind the state for the next one.  ``ends``: the arm
        always leaves the statement's block (``return``, ``raise``), so its skip state says
        nothing about the code after the statement."""
        self.breaks += self.interp.gb_events - self.start
        self.interp.gb_events = self.start
        arm, self.arm = self.arm, self.arm + 1
        if self.frame is None:
            return
        if not ends:
            self.going_on.append((arm, self.frame.skipped))
        self.frame.skipped = self.skipped
        self.merged_born.update(self.frame.born)
        self.frame.born = dict(self.born)

    def close(self, ends: bool = False) -> None:
        """After the last arm (``ends``: see :meth:`next`): the state of the statement as a whole."""
        self.next(ends)
        self.interp.gb_events = self.start + self.breaks
        if self.frame is None:
            return
        by_default = [state for arm, state in self.going_on if arm == self.default]
        if by_default:
            self.frame.skipped = by_default[0]
        else:
            self.frame.skipped = next((state for _arm, state in self.going_on if state), self.skipped)
        self.frame.born = self.merged_born


class _Terminated(Exception):
    pass


class Interpreter:
    """Runs the abstract interpretation of one module.

    Args:
        index: the module index.
        dispatch: the enabled rules' event handlers (see :mod:`pt2lint.rules`).
        settings: the lint settings (Dynamo knobs, target).
    """

    def __init__(self, index: ModuleIndex, dispatch, settings) -> None:
        self.index = index  # the module of the code being analysed (changes across calls)
        self.entry = index  # the module whose compiled regions are analysed
        self.project = getattr(index, "project", None)
        self.dispatch = dispatch
        self.settings = settings
        self._base_settings = settings
        self.frame: Optional[Frame] = None
        self.silent = 0  # >0 while collecting attributes (no events)
        self.stmt: Optional[cst.CSTNode] = None
        self.header: Optional[cst.CSTNode] = None
        self.memo: Dict[tuple, Value] = {}
        self._lambdas: Dict[tuple, FunctionInfo] = {}  # (id(lambda node), id(frame)) -> its function
        self._lambda_keep: List[tuple] = []
        self.signatures: Dict[int, int] = {}
        # per function (and receiver class): the join of the argument kinds it was analysed with,
        # and how often calls past the signature limit widened it
        self._seen_params: Dict[object, Dict[str, Value]] = {}
        self._widenings: Dict[object, int] = {}
        self._small: Dict[int, bool] = {}  # id(FunctionInfo) -> is its body small (see _signature_limit)
        self.active: List[FunctionInfo] = []
        self._rewidened: set = set()  # id() of the functions in their once-widened recursive activation
        self._reentering: Optional[FunctionInfo] = None
        self._active_params: List[Dict[str, Value]] = []  # the parameters of each entry of ``active``
        self.analysed: set = set()
        self.budget = MAX_ANALYSES_PER_FILE
        self._run_in_loop = False  # the next frame call_function opens runs in a loop of its caller (``module.apply``)
        self._budget_reported = False  # the budget's PTC004 is given once per file
        self._signature_limit_reported: set = set()  # id() of the functions whose PTC004 was given
        self._getattr_nodes: Dict[tuple, tuple] = {}  # (id(getattr call), name) -> (call, its Attribute)
        # id(decorated function) -> (function, settings, wrapper or None): see :meth:`_decoration`
        self._decorations: Dict[int, tuple] = {}
        # (decorator, its text, kind, is a function) -> decorator found to return its argument (:meth:`_decorated`)
        self._identity_decorators: Dict[tuple, FunctionInfo] = {}
        self._map_casts: Dict[int, tuple] = {}  # id(``map(int, it)`` call) -> (call, cast name, iterables)
        self._random_arith_frames: set = set()  # id(frame) of frames that already had their random-arithmetic break
        self._random_branch_frames: set = set()  # id(frame) of frames that already had a branch on a random draw
        self.globals: Dict[str, Value] = {}
        self._starred: Dict[Tuple[int, str], Optional[str]] = {}  # (module, name) -> what a star import bound it to
        self._globals_busy: set = set()
        # Every function (and receiver class) whose id() keys ``memo``/``signatures``/``analysed``, kept
        # alive for this analysis: a freed one's id would be reused by a new object, which would then
        # hit its memo entry, share its signature count, or pass for analysed (an outcome that
        # depended on memory layout).
        self._id_keys: dict = {}
        self.instantiated: set = set()  # local classes constructed inside some class's methods
        # id(class) -> ``self.<name>`` values of the instances of that class constructed inside a
        # compiled region (``__init__`` run with the call's argument kinds, then its methods)
        self.built: Dict[int, Dict[str, Value]] = {}
        # (id(class), name) -> what compiled code stored in ``self.<name>`` of that class where its
        # other methods set no value (or only None): read back later in the region
        self._region_writes: Dict[Tuple[int, str], Value] = {}
        self._via_candidates: Optional[str] = None  # the candidates of the "one of these" call being made
        self._hooks: Dict[int, List[Value]] = {}  # id(ClassInfo) -> forward hooks its __init__ registers
        # id(hook FunctionInfo) -> its registration: see :meth:`hook_registration`
        self._hook_protocol: Dict[int, Tuple[bool, bool, Optional[str]]] = {}
        self._call_node: Optional[cst.Call] = None  # the module call being evaluated (for write events)
        # > 0 while the methods that build ``self`` state (``__init__``) are interpreted: code that
        # runs before (outside) any compiled region
        self._constructing = 0
        # the method :meth:`_collect_class_attrs` runs as the root of the collection (``"__init__"``,
        # ``"enable_input_require_grads"``), None outside one
        self._collection_root: Optional[str] = None
        # per module construction in progress (``_construct``): the module classes built inside its
        # ``__init__``, transitively, with their ``__init__`` (see :meth:`_module_init_broke`)
        self._init_builds: List[List[Tuple[ClassInfo, FunctionInfo]]] = []
        # id(dataclass) -> (its class-body values, the config sites, the values joined with the sites)
        self._site_values: Dict[int, tuple] = {}
        self._slice_bounds: list = []  # tensor-valued slice bounds of the subscript being evaluated
        self._slice_parts: Optional[tuple] = None  # (lower, upper, step) of its lone slice: see :meth:`_eval_slices`
        self._forwarding_sites: set = set()  # id() of the classes whose sites decide a forwarded argument now
        self.frames: List[Frame] = []  # the call stack of frames being analysed
        self.gb_events = 0  # graph breaks seen so far (recorded or not)
        self._last_break: Optional[Tuple[str, cst.CSTNode]] = None  # (code, node) of the last one reported
        self.memo_breaks: Dict[tuple, bool] = {}  # did a memoised call break the graph?
        # ``(key source, container source)`` of the membership tests guarding the code being
        # interpreted: ``if k not in c:`` around its body, ``if k in c: return ...`` for the
        # rest of the block (see :meth:`fill_guarded`)
        self.fill_guards: List[Tuple[str, str]] = []
        # the foreign attribute collection being recorded (see :meth:`_foreign_class_attrs`)
        self._recording: Optional[foreign.Recording] = None
        from pt2lint.specs import load_specs

        self._gb_codes = frozenset(c for c, spec in load_specs().items() if spec.is_graph_break)

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        """Analyse every compiled entry point of the module."""
        roots, subs = self._root_module_classes()
        for cls in roots:
            self._run_module_entry(cls)
        # A module class that no analysed code reached (built by a factory, stored
        # in a dict, passed as an argument, ...) is still compiled as somebody's
        # submodule: analyse it alone, with what its unseen callers pass unknown.
        # A class whose forward the analysis of the file building it followed is not run
        # again here with its arguments and constructor values unknown: that analysis
        # reports what its code does in the parent's graph (engine.judge_submodules).
        reached = getattr(self._base_settings, "reached_elsewhere", ())
        for cls in subs:
            fwd = cls.lookup_method("forward")
            if fwd is not None and id(fwd) not in self.analysed and cls.name not in reached:
                self._run_module_entry(cls, unseen_callers=True)
        # Compiled functions last: one called from the compiled code above was
        # analysed there, with the kinds its callers pass.
        for fn in self.entry.entry_functions():
            if id(fn) not in self.analysed:
                self._use_region(fn.symbol)
                # a compiled method (``@torch.compile`` on it, ``torch.compile(model.log_prob)``):
                # Dynamo traces it with the instance as ``self``
                owner = Value(Kind.SELF, ref=fn.cls) if fn.cls is not None and fn.kind == "method" else None
                self.call_function(fn, owner, self._caller_entry_params(fn), {}, chain=())
        self._use_region(None)

    def _use_region(self, symbol: Optional[str]) -> None:
        """Analyse the region entered at ``symbol`` with the Dynamo knobs its code sets.

        A ``torch._dynamo.config.patch(...)`` on the region's function, or around the
        ``torch.compile`` call that compiles it, changes the knobs for that region only
        (:mod:`pt2lint.analysis.code_config`); every rule then sees those settings.
        """
        base = self._base_settings
        settings = base
        if symbol is not None and getattr(base, "regions", ()):
            name = getattr(self.entry, "name", "") or ""
            region = base.region(f"{name}.{symbol}" if name else symbol)
            if region is not None and region.knobs:
                modelled = base.knobs()
                changes = {k: v for k, v in region.knobs if k in modelled and isinstance(v, bool) and k not in base.explicit_knobs}
                if changes:
                    settings = replace(base, **changes)
        if settings is self.settings:
            return
        self.settings = settings
        for rule in self.dispatch.rules:
            rule.settings = settings
        self.memo.clear()  # values computed under other knobs
        self.memo_breaks.clear()

    def _run_module_entry(self, cls: ClassInfo, unseen_callers: bool = False) -> None:
        fwd = cls.lookup_method("forward") or cls.lookup_method("__call__")
        if fwd is None or fwd.disabled or fwd.opaque:
            return
        self_value = Value(Kind.SELF, ref=cls)
        params = self._entry_params(fwd)
        if unseen_callers:
            params = self._unseen_caller_params(fwd, params)
        elif fwd.name == "forward":
            params = self._instance_caller_params(cls, fwd, params)
        fwd.link_decorators()
        self._use_region(f"{cls.name}.{fwd.name}")
        if fwd.local_decorators:
            self.invoke(fwd, self_value, list(params.values()), {}, ())
        else:
            self.call_function(fwd, self_value, params, {}, chain=(), entry_symbol=f"{cls.name}.{fwd.name}")
        call = cls.lookup_method("__call__")
        if fwd.name != "__call__" and call is not None and id(call) not in self.analysed and not (call.disabled or call.opaque):
            # ``torch.compile(module)`` compiles the instance's ``__call__`` (torch 2.13,
            # ``OptimizedModule``): an override in the project is part of the region too
            self._use_region(f"{cls.name}.{call.name}")
            self.call_function(call, self_value, self._entry_params(call), {}, chain=(), entry_symbol=f"{cls.name}.{call.name}")
        for hook in self._hooks.get(id(cls), ()):
            fn = hook.ref
            if id(fn) in self.analysed or fn.disabled or fn.opaque:
                continue
            bound = hook.elt if hook.elt is not None and hook.elt.kind is Kind.SELF else None
            if fn.cls is not None and bound is None:
                continue
            self._use_region(f"{cls.name}.{fn.name}")
            self.call_function(fn, bound, self._hook_params(fn, bound is not None), {}, chain=(), entry_symbol=f"{cls.name}.{fn.name}")

    def hook_registration(self, fn: Optional[FunctionInfo]) -> Tuple[bool, bool, Optional[str]]:
        """How the forward hook ``fn`` was registered in a constructor: ``(pre-hook, with_kwargs,
        where)``, ``where`` the ``self`` attribute holding the submodule it is registered on
        (``"enc"`` for ``self.enc.register_forward_hook(...)``), ``"*"`` for a submodule reached
        another way, ``None`` for the module itself or for a function registered as no hook."""
        return self._hook_protocol.get(id(fn), (False, False, None)) if fn is not None else (False, False, None)

    def _root_module_classes(self):
        """Split module classes into roots (nobody builds them) and submodules (built in some ``__init__``).

        Submodules are analysed through their parents' calls, with the kinds of the
        actual arguments, as Dynamo inlines them into the parent's graph.
        """
        modules = self.entry.module_classes()
        for cls in modules:
            self.class_attrs(cls)
        built = self.instantiated | _built_by_other_classes(modules, self.entry.module)
        elsewhere = getattr(self._base_settings, "built_elsewhere", ())
        if elsewhere:  # built by a class of another linted file (pt2lint.engine.lint_paths)
            built |= {c for c in modules if c.name in elsewhere}
        roots = [c for c in modules if c not in built]
        subs = [c for c in modules if c in built]
        return roots, subs

    def _entry_params(self, fn: FunctionInfo) -> Dict[str, Value]:
        """Kinds of an entry point's parameters: Tensor unless annotated or defaulted otherwise."""
        out: Dict[str, Value] = {}
        params = fn.node.params
        skip_first = fn.cls is not None and fn.kind in ("method", "classmethod", "property")
        plist = list(params.posonly_params) + list(params.params)
        for i, p in enumerate(plist):
            if skip_first and i == 0:
                continue
            out[identifier(p.name.value)] = _documented(fn, p, self._param_value(p, fn.module))
        for p in params.kwonly_params:
            out[identifier(p.name.value)] = _documented(fn, p, self._param_value(p, fn.module))
        if isinstance(params.star_arg, cst.Param):
            out[params.star_arg.name.value] = container(elt=Value(Kind.TENSOR, weak=True, alias_of=params.star_arg.name.value))
        if params.star_kwarg is not None:
            out[params.star_kwarg.name.value] = Value(Kind.CONTAINER, elt=UNKNOWN)
        return out

    def _hook_params(self, fn: FunctionInfo, bound: bool) -> Dict[str, Value]:
        """Kinds of a forward hook's parameters as ``nn.Module.__call__`` passes them
        (torch/nn/modules/module.py, ``_call_impl``): the module, the tuple of positional inputs
        (each the caller's tensor: ``args[0].sub_(1)`` writes the forward input), the dict of
        keyword inputs for a hook registered ``with_kwargs=True`` (a dict, not a tensor: storing
        a key into it writes no tensor), and, for a forward hook, the module's output."""
        params = self._entry_params(fn)
        pre, with_kwargs, _where = self.hook_registration(fn)
        plist = list(fn.node.params.posonly_params) + list(fn.node.params.params)
        if bound or (fn.cls is not None and fn.kind == "method"):
            plist = plist[1:]
        roles = ["module", "args"] + (["kwargs"] if with_kwargs else []) + ([] if pre else ["output"])
        for p, role in zip(plist, roles):
            name = identifier(p.name.value)
            if p.annotation is not None or name not in params:
                continue
            if role == "module":
                params[name] = Value(Kind.MODULE, not_none=True)
            elif role == "args":
                params[name] = container(elt=Value(Kind.TENSOR, weak=True, alias_of=p.name.value))
            elif role == "kwargs":
                params[name] = Value(Kind.CONTAINER, elt=UNKNOWN)
        return params

    def _unseen_caller_params(self, fn: FunctionInfo, params: Dict[str, Value]) -> Dict[str, Value]:
        """Entry kinds of a submodule's ``forward`` that no analysed caller reached.

        The module is built inside another module's ``__init__``, so it is called from
        compiled code, with arguments the analysis did not see. A parameter that its
        annotation or default does not type is then Unknown, not a Tensor: it stays a
        guess (a weak Tensor), which becomes a sure tensor where the code uses it as one
        (``x.sum()``, ``x.view(...)``) and is never reported as a tensor on its own
        (``if i > n:`` on what may be an int is no proven break).
        """
        out = dict(params)
        for p in self._plain_params(fn):
            name = identifier(p.name.value)
            v = out.get(name)
            if v is not None and v.kind is Kind.TENSOR and not v.weak:
                out[name] = replace(v, weak=True)
        return out

    def _instance_caller_params(self, cls: ClassInfo, fwd: FunctionInfo, params: Dict[str, Value]) -> Dict[str, Value]:
        """Entry kinds of a top-level model's ``forward`` joined with what the module's own calls
        of its instances pass (:func:`pt2lint.analysis.callers.instance_call_sites`: an inference
        wrapper's ``self.text_embedding(tokens, lengths[i])``, a script's ``net(x, 3)``).

        Each argument is read without running the caller (:func:`callers.static_value`), and a
        name or an element of a name that is a parameter of the calling function takes that
        parameter's annotation (``lengths: List[int]``: ``lengths[i]`` is an int).  A parameter
        that no call informs keeps its kind; see :func:`callers.join_callers` for the join.
        """
        module = getattr(fwd.module, "module", None) or getattr(self.entry, "module", None)
        if module is None or not isinstance(module, cst.Module):
            return params
        imports = getattr(self.entry, "imports", None)
        bound = []
        for call, caller in callers.instance_call_sites(module, cls.name):
            fallback = functools.partial(self._annotated_argument, caller=caller) if caller is not None else None
            got = callers.caller_arguments(call, imports, fallback)
            if got is not None:  # (``net(*args)`` says nothing about any parameter)
                bound.append(self.bind_arguments(fwd, got[0], got[1], True))
        return callers.join_callers(bound, params) if bound else params

    def _annotated_argument(self, expr: cst.BaseExpression, caller: cst.FunctionDef) -> Value:
        """The kind the annotation of a parameter of ``caller`` gives ``expr`` when ``expr`` is that
        parameter (``lengths``) or one element of it (``lengths[i]``) and the body never rebinds
        it, else Unknown."""
        element = False
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            expr, element = expr.value, True
        if not isinstance(expr, cst.Name):
            return UNKNOWN
        p = caller.params
        param = next((q for q in list(p.posonly_params) + list(p.params) + list(p.kwonly_params) if q.name.value == expr.value), None)
        if param is None or param.annotation is None or expr.value in bound_names([caller.body]):
            return UNKNOWN  # (rebound in the body: ``lengths = torch.tensor(lengths)`` is no list of ints)
        value = self._declared_value(expr.value, param.annotation.annotation, None, expr.value)
        if value.kind is Kind.UNKNOWN:
            return UNKNOWN
        value = replace(value, alias_of=None)
        if element:
            return value.element() if value.kind is Kind.CONTAINER else UNKNOWN
        return value

    def _caller_entry_params(self, fn: FunctionInfo) -> Dict[str, Value]:
        """Entry kinds of a compiled function: the join of what its calls in its module pass.

        A parameter that no call informs (no call site, or every caller passes something
        the call site alone does not type) keeps :meth:`_entry_params`' kind; see
        :func:`pt2lint.analysis.callers.join_callers` for the join.
        """
        defaults = self._entry_params(fn)
        modules = [fn.module if fn.module is not None else self.entry]
        if modules[0] is not self.entry and fn.cls is None:
            modules.append(self.entry)  # ``torch.compile(helper)`` of an imported helper: called here
        has_self = fn.cls is not None and fn.kind in ("method", "classmethod", "property")
        bound = []
        for module in modules:
            for call in callers.call_sites(module, fn):
                got = callers.caller_arguments(call, getattr(module, "imports", None))
                if got is None:
                    continue  # ``f(*args)``: says nothing about any parameter
                args, kwargs = got
                bound.append(self.bind_arguments(fn, args, kwargs, has_self))
        return callers.join_callers(bound, defaults) if bound else defaults

    @staticmethod
    def _plain_params(fn: FunctionInfo) -> List[cst.Param]:
        """The parameters of ``fn`` (``self`` aside) with neither an annotation nor a default."""
        params = fn.node.params
        plist = list(params.posonly_params) + list(params.params)
        if fn.cls is not None and fn.kind in ("method", "classmethod", "property") and plist:
            plist = plist[1:]
        return [p for p in plist + list(params.kwonly_params) if p.annotation is None and p.default is None]

    def _param_value(self, p: cst.Param, module=None) -> Value:
        """The kind of an entry point's parameter ``p`` (of a function of ``module``, where its
        annotation's names are looked up; ``None``: the module being analysed)."""
        return self._declared_value(p.name.value, p.annotation.annotation if p.annotation is not None else None, p.default, p.name.value, module)

    def _declared_value(self, name: str, annotation, default, alias: str, module=None, depth: int = 0) -> Value:
        """The kind of a caller's value that its declaration says: a parameter, or a field of a
        dataclass parameter (``batch.tokens`` of ``batch: Batch``).

        Args:
            name: the parameter's or field's name (``mask``-like names of tensors are masks).
            annotation: its annotation expression, or ``None``.
            default: its default expression, or ``None``.
            alias: the input whose storage the value is (``alias_of``).
            module: the module whose names the annotation uses.
            depth: dataclass fields entered so far (nested dataclasses stop at 3).
        """
        ann = self._annotation_kind(annotation) if annotation is not None else None
        if ann is not None:
            kind, optional = ann
            if kind is Kind.TENSOR:
                is_mask = _is_bool_annotation(annotation) or (
                    _MASK_NAME.search(name) is not None and not optional
                )
                return Value(Kind.TENSOR, maybe_none=optional, alias_of=alias, bool_tensor=is_mask)
            if kind is Kind.CONTAINER:
                # ``List[Tensor]``/``Dict[str, Tensor]``: the elements are tensors for sure;
                # ``list[tuple[int, int]]``: Python numbers; otherwise a guess.
                names = [
                    (dotted_name(n) or "").rsplit(".", 1)[-1]
                    for n in walk(annotation)
                    if isinstance(n, (cst.Name, cst.Attribute))
                ]
                if any(n.endswith("Tensor") for n in names):
                    elt = Value(Kind.TENSOR, alias_of=alias)
                elif any(n in _NON_TENSOR_ANNOTATIONS for n in names):
                    elt = CONST
                else:
                    elt = Value(Kind.TENSOR, weak=True, alias_of=alias)
                return Value(Kind.CONTAINER, elt=elt, alias_of=alias)
            if kind is Kind.UNKNOWN:
                # an object of some class (``batch: Batch``): what it holds is the caller's, so an
                # in-place write to one of its tensors writes the input (as without the annotation)
                record = self._dataclass_record(annotation, alias, module, depth) if depth < 3 else None
                if record is not None:
                    return replace(record, maybe_none=optional, alias_of=alias)
                return Value(kind, maybe_none=optional, alias_of=alias)
            return Value(kind, maybe_none=optional)
        if default is not None:
            if isinstance(default, cst.Name) and default.value == "None":
                # a guess (``scale=None`` may be a number); when given, a ``mask=None`` is a mask
                return Value(Kind.TENSOR, maybe_none=True, weak=True, alias_of=alias, bool_tensor=_MASK_NAME.search(name) is not None)
            if isinstance(default, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.Imaginary)):
                return CONST
            if isinstance(default, cst.Name) and default.value in ("True", "False"):
                return CONST
            if isinstance(default, cst.UnaryOperation):
                return CONST
            return UNKNOWN
        if dynamo_facts.non_tensor_parameter_name(name):
            # ``forward(self, x, dim)``: a name ATen gives only to Python values is no evidence of a
            # tensor; a guess (weak), a tensor where the code uses it as one (``dim.sum()``)
            return Value(Kind.TENSOR, weak=True, alias_of=alias)
        return Value(Kind.TENSOR, alias_of=alias, bool_tensor=_MASK_NAME.search(name) is not None)

    def _dataclass_record(self, annotation, alias: str, module, depth: int) -> Optional[Value]:
        """The caller's instance of the project dataclass (or ``typing.NamedTuple``) that
        ``annotation`` names (``Batch``, ``Optional[Batch]``, ``data.Batch``), as a record of its
        fields with the kinds their annotations declare; ``None`` for any other annotation.

        Dynamo takes such an argument apart into its fields (a tensor field is a graph input;
        ``torch/_dynamo/variables/user_defined.py``, dataclass instances are traced as user
        objects), so ``batch.mask`` is the tensor ``mask: torch.Tensor`` says.  The fields are
        those of the class and its dataclass bases, in definition order.
        """
        if isinstance(annotation, cst.SimpleString):  # ``batch: "Batch"``
            try:
                annotation = cst.parse_expression(annotation.evaluated_value)
            except (cst.ParserSyntaxError, TypeError, ValueError):
                return None
        target = _optional_inner(annotation)
        if not isinstance(target, (cst.Name, cst.Attribute)):
            return None
        index = module if module is not None else self.index
        saved = self.index
        self.index = index
        self.silent += 1
        try:
            if isinstance(target, cst.Name):
                cls_value = self.global_value(target.value)
            else:
                qualified = index.imports.qualify(target) if getattr(index, "imports", None) is not None else None
                cls_value = self.project_value(qualified) if qualified else UNKNOWN
        finally:
            self.index = saved
            self.silent -= 1
        cls = cls_value.ref if cls_value.kind is Kind.CLASS and not cls_value.maybe_none else None
        if not isinstance(cls, ClassInfo) or cls.node is None:
            return None
        chain = [c for c in reversed(cls.mro()) if c.node is not None]
        if not (objects.is_namedtuple_bases(cls.bases) or any(objects.is_dataclass_node(c.node) for c in chain)):
            return None
        names: List[str] = []
        values: List[Value] = []
        for c in chain:
            owner = c.module if c.module is not None else index
            for field_name, field_annotation, field_default in objects.annotated_field_types(c.node):
                value = self._declared_value(field_name, field_annotation, field_default, alias, owner, depth + 1)
                if field_name in names:
                    values[names.index(field_name)] = value
                else:
                    names.append(field_name)
                    values.append(value)
        return Value(Kind.CONTAINER, keys=tuple(names), elts=tuple(values), const=objects.RECORD)

    def _annotation_kind(self, ann: cst.BaseExpression):
        """(kind, optional) from an annotation, or ``None`` when it says nothing useful."""
        if isinstance(ann, (cst.SimpleString, cst.ConcatenatedString)):
            text = ann.evaluated_value if isinstance(ann, cst.SimpleString) else None
            if not text:
                return None
            try:
                ann = cst.parse_expression(text)
            except cst.ParserSyntaxError:
                return None
        if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
            left = self._annotation_kind(ann.left)
            right = self._annotation_kind(ann.right)
            if isinstance(ann.right, cst.Name) and ann.right.value == "None":
                return (left[0], True) if left else None
            if isinstance(ann.left, cst.Name) and ann.left.value == "None":
                return (right[0], True) if right else None
            if left and right and left[0] is right[0]:
                return left
            return (Kind.UNKNOWN, False)
        if isinstance(ann, cst.Subscript):
            head = dotted_name(ann.value) or ""
            last = head.rsplit(".", 1)[-1]
            if last == "Optional" and ann.slice:
                inner = ann.slice[0].slice
                if isinstance(inner, cst.Index):
                    k = self._annotation_kind(inner.value)
                    return (k[0], True) if k else None
            if last == "Union":
                kinds = []
                optional = False
                for el in ann.slice:
                    if isinstance(el.slice, cst.Index):
                        v = el.slice.value
                        if isinstance(v, cst.Name) and v.value == "None":
                            optional = True
                            continue
                        kinds.append(self._annotation_kind(v))
                if kinds and all(k and k[0] is kinds[0][0] for k in kinds):
                    return (kinds[0][0], optional)
                return (Kind.UNKNOWN, optional)
            if last in _CONTAINER_ANNOTATIONS:
                return (Kind.CONTAINER, False)
            return (Kind.UNKNOWN, False)
        name = dotted_name(ann)
        if name is None:
            if isinstance(ann, cst.Name) and ann.value == "None":
                return (Kind.NONE, False)
            return None
        last = name.rsplit(".", 1)[-1]
        if last in ("Tensor", "FloatTensor", "LongTensor", "BoolTensor", "Parameter", "IntTensor", "HalfTensor", "ByteTensor"):
            return (Kind.TENSOR, False)
        if last in _NON_TENSOR_ANNOTATIONS:
            return (Kind.CONST, False)
        if last in _CONTAINER_ANNOTATIONS:
            return (Kind.CONTAINER, False)
        if last == "None":
            return (Kind.NONE, False)
        if last == "Any":
            return None
        return (Kind.UNKNOWN, False)

    # -------------------------------------------------------- interprocedural
    def call_function(
        self,
        fn: FunctionInfo,
        self_value: Optional[Value],
        params: Dict[str, Value],
        extra: Dict[str, Value],
        chain: Tuple[str, ...],
        entry_symbol: Optional[str] = None,
    ) -> Value:
        """Analyse ``fn`` with bound parameter values; return its return value."""
        if fn.disabled or fn.opaque:
            return UNKNOWN
        if fn in self.active and self._reentering is not fn:
            return self._recursive_call(fn, self_value, params, extra, chain, entry_symbol)
        self._reentering = None
        if len(self.active) >= MAX_DEPTH or self.budget <= 0:
            self._limit_reached(fn, "depth" if self.budget > 0 else "budget")
            return self._declared_return(fn, UNKNOWN)
        self._id_keys.setdefault(id(fn), fn)
        if self_value is not None and isinstance(self_value.ref, ClassInfo):
            self._id_keys.setdefault(id(self_value.ref), self_value.ref)
        key = (id(fn), (self_value.ref, self_value.const) if self_value is not None else None, tuple(sorted(params.items(), key=lambda kv: kv[0])), self.silent > 0)
        try:
            hash(key)
        except TypeError:
            key = (id(fn), None, None, self.silent > 0)
        if key in self.memo:
            if self.memo_breaks.get(key):
                self._graph_break_seen()
            return self.memo[key]
        # the limit is per function and receiver class: a method inherited by several classes
        # (the candidates of ``SOLVERS[method](...)``) is a different context in each
        skey = (id(fn), id(self_value.ref)) if self_value is not None and isinstance(self_value.ref, ClassInfo) else id(fn)
        count = self.signatures.get(skey, 0)
        if count >= self._signature_limit(fn) and not _identity_test_only(fn.node):
            # past the limit, the call is analysed with the join of every argument kind seen so far
            # (a widening step): a few more analyses at most, each covering all earlier calls
            widened = self._widened_params(skey, params)
            if widened is None:
                self._limit_reached(fn, "signatures")
                return self._declared_return(fn, UNKNOWN)
            params = widened
            key = (key[0], key[1], tuple(sorted(params.items(), key=lambda kv: kv[0])), key[3])
            try:
                hash(key)
            except TypeError:
                key = (id(fn), None, None, self.silent > 0)
            # the caller gets what a call not followed gives (the joined analysis is less precise
            # than the call's own kinds: its return value would mislead the caller); the body is
            # analysed for the findings in it
            if key in self.memo:
                return self._declared_return(fn, UNKNOWN)
            widened_call = True
        else:
            widened_call = False
            seen = self._seen_params.get(skey)
            self._seen_params[skey] = params if seen is None else _join_params(seen, params)
        self.signatures[skey] = count + 1
        self.budget -= 1
        self.memo[key] = UNKNOWN  # recursion through memo
        if self.silent == 0:
            self.analysed.add(id(fn))
            if fn.origin is not None:
                self.analysed.add(id(fn.origin))
        symbol = entry_symbol or fn.symbol
        via, self._via_candidates = self._via_candidates, None
        cls = fn.cls
        if self_value is not None and self_value.kind is Kind.SELF and isinstance(self_value.ref, ClassInfo):
            if fn.cls is not None and fn.cls is not self_value.ref:
                symbol = f"{self_value.ref.name}.{fn.name}" if fn.cls in self_value.ref.mro() and fn.name != "forward" else symbol
            cls = self_value.ref
        if via:
            symbol = f"{symbol} (one of {via})"
        env = dict(params)
        if self_value is not None:
            first = self._first_param_name(fn)
            if first is not None:
                env[first] = self_value
        parent = fn.closure
        frame = Frame(fn, env, parent, self_value, chain + (symbol,), cls, None)
        frame.loop_depth, self._run_in_loop = (1 if self._run_in_loop else 0), False
        caller = self.frame
        if chain and caller is not None:
            frame.sites = caller.sites[: len(chain) - 1] + ((self.index, caller.calling or self.header or self.stmt, self.stmt, self.header),)
        saved = (self.frame, self.stmt, self.header, self.index)
        self.frame = frame
        if fn.module is not None:
            self.index = fn.module
        self.active.append(fn)
        self._active_params.append(params)
        self.frames.append(frame)
        breaks_before = self.gb_events
        try:
            if fn.lambda_stmt is not None:
                self._exec_lambda(fn, frame)
            else:
                self.exec_block(fn.node.body)
        except _Terminated:
            pass
        finally:
            if self.gb_events > breaks_before:
                self._module_init_broke(fn, self_value)
            self.active.pop()
            self._active_params.pop()
            self.frames.pop()
            self.frame, self.stmt, self.header, self.index = saved
        self.memo_breaks[key] = self.gb_events > breaks_before
        if widened_call:
            # to the caller, a call past the limit is one the analysis did not follow: what the
            # joined analysis of the body found stays in the body
            self.gb_events = breaks_before
        if fn.is_generator:
            elt = _join_all(frame.yields) if frame.yields else UNKNOWN
            result = container(elt=elt)
        elif frame.returns:
            result = self._declared_return(fn, _join_all(frame.returns))
        else:
            result = NONE
        self.memo[key] = result
        return self._declared_return(fn, UNKNOWN) if widened_call else result

    def _declared_return(self, fn: FunctionInfo, result: Value) -> Value:
        """``result``, the value the analysis computed for a call of ``fn``, or, where it is
        Unknown, what ``fn``'s return annotation declares: ``-> torch.Tensor`` (``Tensor``,
        ``BoolTensor``, ... of any import path, see :meth:`_annotation_kind`) makes a tensor,
        ``-> Tensor | None`` / ``Optional[Tensor]`` one that may be ``None``.  An annotation
        naming anything else, or a value the analysis did type, leaves ``result`` as it is
        (what the body computes is the better fact).  Used where the body returns what the
        analysis cannot follow (a call into an unresolved library, a property of a class
        outside the project) and where the call is not analysed at all (a limit reached).
        """
        if result.kind is not Kind.UNKNOWN or fn.lambda_stmt is not None or fn.is_generator:
            return result
        if result.ref is not None and not isinstance(result.ref, str):  # an object of the analysis
            return result
        returns = getattr(fn.node, "returns", None)
        if returns is None:
            return result
        ann = self._annotation_kind(returns.annotation)
        if ann is None or ann[0] is not Kind.TENSOR:
            return result
        return Value(Kind.TENSOR, maybe_none=ann[1], bool_tensor=_is_bool_annotation(returns.annotation))

    def _recursive_call(self, fn, self_value, params, extra, chain, entry_symbol) -> Value:
        """A call of ``fn`` from inside its own activation (direct or through other functions).

        The outer activation ran with the caller's arguments, so a branch it judged dead
        (``if n:`` with ``n=3``, ``if first:`` with ``first=True``) may be the one the
        recursion reaches: Dynamo inlines ``g(x, 3)``, then ``g(x, n - 1)``... down to the base
        case, and breaks there.  So ``fn`` is analysed once more with the arguments of the
        recursive call (for ``n - 1``, a number not known); a call with the outer activation's
        own arguments, or one from inside that second activation, returns UNKNOWN.
        """
        first = self._active_params[self.active.index(fn)]
        if id(fn) in self._rewidened or params == first:
            return UNKNOWN  # the outer (or the second) activation covers it
        self._rewidened.add(id(fn))
        self._reentering = fn
        try:
            return self.call_function(fn, self_value, params, extra, chain, entry_symbol)
        finally:
            self._reentering = None
            self._rewidened.discard(id(fn))

    def _context_manager_site(self, expr: cst.BaseExpression, value: Value) -> Optional[Tuple[str, str]]:
        """``(factory, form)`` for a ``with`` item whose context manager a known callable built: the
        callee of ``with F(...):`` (``"local"``), or the factory recorded on the value of
        ``with self.attr:`` / a module-level name (``"stored"``) or of a local variable (``"any"``);
        None otherwise (see :func:`~pt2lint.analysis.dynamo_facts.context_manager_break`)."""
        if not self.wants("on_context_manager"):
            return None
        if isinstance(expr, cst.Call):
            q = self.qualname(expr.func)
            return (q, "local") if q else None
        if isinstance(value.ref, ClassInfo) and value.ref.lookup_method("__enter__") is not None:
            # an instance of a context-manager class of the project, built outside the region
            # (on ``self`` or at module level): Dynamo does not enter it (measured on torch 2.13:
            # GB0142 for ``self.timer`` and a module-level instance; ``with Timer():`` traced)
            if self._attribute_of_self(expr):
                return (value.ref.name, "project-stored")
            if isinstance(expr, cst.Name) and self.frame is not None and not self.frame.is_bound(expr.value):
                return (value.ref.name, "project-stored")
            return None
        ref = value.ref
        if value.kind is not Kind.UNKNOWN or not isinstance(ref, str) or not ref.endswith("()"):
            return None
        if isinstance(expr, cst.Attribute):
            return (ref[:-2], "stored") if self._attribute_of_self(expr) else None
        if isinstance(expr, cst.Name):
            local = self.frame is not None and self.frame.is_bound(expr.value)
            return (ref[:-2], "any" if local else "stored")
        return None

    def _attribute_of_self(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is ``<name>.<attr>`` with ``<name>`` bound to the instance a method runs on
        (``self``, whatever the parameter is called)."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)) or self.frame is None:
            return False
        owner = self.frame.lookup(expr.value.value)
        return owner is not None and owner.kind is Kind.SELF

    def end_frame(self, code: str, node: cst.CSTNode) -> None:
        """Dynamo gave up on the current frame at the finding ``(code, node)`` ("Failed to handle
        graph break gracefully. Skipping the function and falling back to eager", measured on torch
        2.13 after a context manager it cannot enter): the rest of the function runs eagerly, so its
        later graph breaks are not reported; functions it calls are still compiled as frames of
        their own."""
        frame = self.frame
        if frame is not None and not frame.skipped and not self.silent:
            first = self.dispatch.findings.recorded(code, node)
            frame.skipped = first if first is not None else True

    def _context_method(self, manager: Value, name: str, args, expr: cst.BaseExpression) -> Optional[Value]:
        """Call ``__enter__``/``__exit__`` of a context manager that is an instance of a class of the
        project (``with Timer(x) as t:``); ``None`` when ``manager`` is anything else.

        Python calls them around the ``with`` body and Dynamo traces them as part of the frame: an
        ``.item()`` in a same-file ``__enter__`` or ``__exit__`` breaks (torch 2.13: the whole frame
        then runs eagerly).  ``__exit__`` gets three ``None`` arguments (the body did not raise).
        """
        if manager.kind is not Kind.MODULE or not isinstance(manager.ref, ClassInfo):
            return None
        fn = manager.ref.lookup_method(name)
        if fn is None:
            return None
        frame = self.frame
        chain = frame.chain if frame is not None else ()
        saved = frame.calling if frame is not None else None
        if frame is not None:
            frame.calling = expr
        try:
            return self.invoke(fn, Value(Kind.SELF, ref=manager.ref, const=manager.const), list(args), {}, chain)
        finally:
            if frame is not None:
                frame.calling = saved

    def _exec_lambda(self, fn: FunctionInfo, frame: Frame) -> None:
        """Run a lambda's body in ``frame``: its one expression is the return value; findings in it
        belong to the statement that holds the lambda."""
        self.stmt, self.header = fn.lambda_stmt, None
        ret = fn.node.body.body[0].body[0]
        frame.returns.append(self.eval(ret.value))

    def _is_type_of_tensor(self, func: cst.BaseExpression) -> bool:
        """``func`` is ``type(t).<name>`` for a value ``t`` that is surely a tensor (its class's attribute)."""
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Call):
            return False
        call = func.value
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            return False
        if self.qualname(call.func) != "builtins.type":
            return False
        v = self.eval(call.args[0].value)
        return v.kind is Kind.TENSOR and not v.maybe_none

    def _signature_limit(self, fn: FunctionInfo) -> int:
        """How many different argument signatures ``fn`` is analysed with before calls are widened:
        :data:`MAX_SIGNATURES_PER_SMALL_FUNCTION` for a small loop-free body (:func:`_small_body`),
        :data:`MAX_SIGNATURES_PER_FUNCTION` otherwise."""
        small = self._small.get(id(fn))
        if small is None:
            small = self._small[id(fn)] = fn.lambda_stmt is None and _small_body(fn.node)
        return MAX_SIGNATURES_PER_SMALL_FUNCTION if small else MAX_SIGNATURES_PER_FUNCTION

    def _widened_params(self, skey, params: Dict[str, Value]) -> Optional[Dict[str, Value]]:
        """The parameter values to analyse a call past the signature limit (:meth:`_signature_limit`) with: the
        join of those of every earlier analysis of the function and ``params`` (the same dict, so a
        memoised analysis is reused, when it adds nothing); None once :data:`MAX_WIDENINGS` joins
        grew it (then the call is reported as not analysed)."""
        seen = self._seen_params.get(skey)
        widened = params if seen is None else _join_params(seen, params)
        if seen is not None and widened == seen:
            return seen
        done = self._widenings.get(skey, 0)
        if done >= MAX_WIDENINGS:
            return None
        self._widenings[skey] = done + 1
        self._seen_params[skey] = widened
        return widened

    def _limit_reached(self, fn: FunctionInfo, why: str) -> None:
        """Report (``PTC004``) a call to ``fn`` that is not analysed because a limit was reached.

        Args:
            fn: the function that is not analysed.
            why: ``"depth"`` (:data:`MAX_DEPTH` calls on the stack), ``"signatures"``
                (the function's signature limit reached, :meth:`_signature_limit`) or
                ``"budget"`` (:data:`MAX_ANALYSES_PER_FILE` analyses in this file; reported once).

        The finding sits at the call being made in the current frame, so nothing that the
        analysis skips goes unmentioned.
        """
        frame = self.frame
        if self.silent or frame is None:
            return
        node = frame.calling or self.header or self.stmt
        if node is None:
            return
        if why == "budget":
            if self._budget_reported:
                return
            self._budget_reported = True
            message = (
                f"`{fn.symbol}` and every later call in this file were not analysed: the analysis reached its limit "
                f"of {MAX_ANALYSES_PER_FILE} function analyses per file; graph breaks in the code they reach are not reported"
            )
        elif why == "depth":
            message = (
                f"`{fn.symbol}` was not analysed: the call chain here is {MAX_DEPTH} calls deep, the analysis limit; "
                f"graph breaks inside it are not reported"
            )
        else:
            if id(fn) in self._signature_limit_reported:
                return  # once per function: its first call past the limit names the others
            self._signature_limit_reported.add(id(fn))
            message = (
                f"`{fn.symbol}` was not analysed for this call (nor for later calls with other argument kinds): "
                f"it was already analysed with {self._signature_limit(fn)} different argument kinds, then "
                f"{MAX_WIDENINGS} times with their join, the limit per function; graph breaks that depend on "
                f"these arguments are not reported"
            )
        self.dispatch.findings.record(
            ANALYSIS_LIMIT, node, message, frame.chain, self.stmt, self.header, {}, module=self.index, sites=frame.sites,
        )

    @staticmethod
    def _first_param_name(fn: FunctionInfo) -> Optional[str]:
        if fn.kind in ("staticmethod",):
            return None
        plist = list(fn.node.params.posonly_params) + list(fn.node.params.params)
        if fn.cls is not None and plist:
            return identifier(plist[0].name.value)
        return None

    def bind_arguments(
        self, fn: FunctionInfo, args: Sequence[Value], kwargs: Dict[str, Value], has_self: bool
    ) -> Dict[str, Value]:
        params = fn.node.params
        plist = list(params.posonly_params) + list(params.params)
        if has_self and plist:
            plist = plist[1:]
        bound: Dict[str, Value] = {}
        args = list(args)
        for p, a in zip(plist, args):
            bound[identifier(p.name.value)] = a
        extra_pos = args[len(plist):]
        for p in list(plist) + list(params.kwonly_params):
            name = identifier(p.name.value)
            if name in kwargs:
                bound[name] = kwargs[name]
            elif name not in bound:
                bound[name] = self._default_value(p)
                if bound[name].kind is Kind.UNKNOWN and isinstance(p.default, cst.Name):
                    bound[name] = self._default_definition(fn, p.default.value) or bound[name]
                if dicts.is_open_kwargs(kwargs):
                    bound[name] = join(bound[name], UNKNOWN)  # ``**d`` of unknown keys may give it
        if isinstance(params.star_arg, cst.Param):
            bound[params.star_arg.name.value] = container(elts=extra_pos)
        for p in list(plist) + list(params.kwonly_params):
            v = bound.get(identifier(p.name.value))
            if v is not None and v.kind is Kind.UNKNOWN and v.ref is None:
                guess = _documented(fn, p, self._param_value(p))
                if guess.kind is Kind.TENSOR:
                    guess = replace(guess, weak=True, alias_of=v.alias_of)
                    if v.not_none:  # what the caller passes is surely not ``None``, whatever the default
                        guess = replace(guess, maybe_none=False, not_none=True)
                    bound[identifier(p.name.value)] = guess
            elif v is not None and v.kind is Kind.TENSOR and p.annotation is None and isinstance(fn.node, cst.FunctionDef):
                used = _parameter_evidence(fn, p.name.value)
                if used in (param_uses.OBJECT, param_uses.CONTAINER):
                    # the body reads an attribute no tensor has (``x_dict.items()``): whatever the
                    # caller was taken to pass, what reaches here is no tensor
                    bound[identifier(p.name.value)] = _no_tensor(used, v)
        if params.star_kwarg is not None:
            names = {p.name.value for p in plist} | {p.name.value for p in params.kwonly_params}
            rest = {k: v for k, v in kwargs.items() if k not in names}
            if dicts.is_open_kwargs(kwargs):
                bound[params.star_kwarg.name.value] = dicts.open_dict(rest) if rest else Value(Kind.CONTAINER, elt=UNKNOWN)
            else:
                bound[params.star_kwarg.name.value] = keyed_dict(rest.items()) if rest else Value(Kind.CONTAINER, elt=UNKNOWN)
        return bound

    def _default_definition(self, fn: FunctionInfo, name: str) -> Optional[Value]:
        """A parameter default naming a module-level function or class of the callee's module
        (``odeint_interface=odeint``): Python evaluates it once, there, so an argument left out
        is that definition, which the call then follows.  ``None`` for any other name (a module
        constant, an import the project cannot resolve, a name shadowed in an enclosing function).
        """
        idx = getattr(fn, "module", None)
        if idx is None or fn.closure:
            return None
        saved = self.index
        self.index = idx
        self.silent += 1
        try:
            v = self.global_value(name)
        finally:
            self.index = saved
            self.silent -= 1
        return v if v.kind in (Kind.FUNCTION, Kind.CLASS) and v.ref is not None else None

    def _default_value(self, p: cst.Param) -> Value:
        """The value a call that leaves ``p`` out binds it to: its default, when the default is a
        literal (``None``, ``True``/``False``, a number, a string, ``-1``): Python evaluated it once,
        at the ``def``, so the call gets exactly that value and a branch on it is decided
        (``def is_image(shape, check_channels=False)``: ``if not check_channels: return True``)."""
        if p.default is None:
            return UNKNOWN
        if isinstance(p.default, cst.Name) and p.default.value == "None":
            return NONE
        if p.annotation is not None:
            ann = self._annotation_kind(p.annotation.annotation)
            if ann is not None and ann[0] is Kind.TENSOR:
                return TENSOR
        named = _name_constant(p.default)
        if named is not None:
            return named
        default = p.default
        if isinstance(default, cst.UnaryOperation) and isinstance(default.operator, cst.Minus):
            inner = self._literal(default.expression)
            if inner is not None and isinstance(inner.const, (int, float)) and not isinstance(inner.const, bool):
                return const(-inner.const)
        return self._literal(default) or UNKNOWN

    # ---------------------------------------------------------------- events
    def emit(self, handler: str, event) -> None:
        if self.silent:
            return
        if handler == "on_state_write" and self.fresh_self():
            return  # an object constructed in this call: no state outlives it, nothing to guard
        for fn in self.dispatch.handlers.get(handler, ()):
            fn(self, event)

    def wants(self, handler: str) -> bool:
        return not self.silent and bool(self.dispatch.handlers.get(handler))

    def report(self, code: str, node: cst.CSTNode, message: str, **extra) -> None:
        """Called by rules: record a finding at ``node`` in the current frame.

        A graph break inside a ``for``/``while`` body makes Dynamo give up on the
        whole frame ("graph break in a for/while loop ... Skipping the frame and
        falling back to eager", GB7000): the rest of that function runs eagerly and
        its later graph breaks are never reported (measured on torch 2.13: only the
        first break in a loop is seen).  Functions it calls are still compiled as
        frames of their own.  Findings mirror that: a graph break in a skipped frame
        is not reported.
        """
        frame = self.frame
        newly: list = []
        if code in self._gb_codes:
            if frame is not None and frame.skipped:
                _note_hidden(frame.skipped, code, node, self.stmt, self.header)
                return
            newly = self._graph_break_seen()
            self._last_break = (code, node)
        sites = frame.sites if frame else ()
        self.dispatch.findings.record(
            code, node, message, frame.chain if frame else (), self.stmt, self.header, extra,
            module=self.index, sites=sites, anchor=self._project_anchor(sites),
        )
        if newly:
            # the frames now skipped remember the finding that ended them (its message
            # will name the breaks they hide)
            first = self.dispatch.findings.recorded(code, node)
            for f in newly:
                f.skipped = first if first is not None else True

    def _project_anchor(self, sites) -> Optional[cst.CSTNode]:
        """For a finding in an installed package's code, the innermost call from project code on
        the stack (its call node), where the finding is reported; else None."""
        project = self.project
        if project is None or not sites or not project.is_library(getattr(self.index, "path", "")):
            return None
        for site in reversed(sites):
            smod = site[0] if site[0] is not None else self.index
            if not project.is_library(getattr(smod, "path", "")):
                return site[1]
        return None

    def _graph_break_seen(self) -> list:
        """A graph break happened here: every frame on the stack that is inside a loop or a
        ``try`` body is skipped.  Returns the frames it skips (``skipped`` is then set by :meth:`report` to
        the finding that ended them)."""
        self.gb_events += 1
        newly = []
        # a break inside a generator Dynamo inlines (a ``@contextmanager`` helper entered with
        # ``with``, ``list(gen(x))``) cannot be resumed: Dynamo gives up on the frame it compiles,
        # and everything on the stack runs eagerly (measured on torch 2.13: "Failed to handle graph
        # break gracefully. Skipping the function and falling back to eager", no later break logged)
        in_generator = any(_is_generator_function(f.func) for f in self.frames)
        for f in self.frames:
            if (in_generator or f.loop_depth > 0 or f.try_depth > 0) and not f.skipped:
                f.skipped = True
                newly.append(f)
        return newly

    # ------------------------------------------------------------ statements
    def exec_block(self, body) -> None:
        guards = len(self.fill_guards)
        try:
            if isinstance(body, cst.SimpleStatementSuite):
                saved = self.stmt, self.header
                self.stmt, self.header = body, None
                for small in body.body:
                    self.exec_small(small)
                self.stmt, self.header = saved
                return
            for stmt in body.body:
                self.exec_stmt(stmt)
        finally:
            del self.fill_guards[guards:]

    def exec_stmt(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            self.stmt, self.header = stmt, None
            for small in stmt.body:
                self.exec_small(small)
            return
        self.stmt = stmt
        if isinstance(stmt, cst.If):
            self.exec_if(stmt, "if")
        elif isinstance(stmt, cst.For):
            self.header = stmt.iter
            it = self.eval(stmt.iter)
            self._consume_map(stmt.iter)
            before = dict(self.frame.env)
            mark = len(self.frame.log)
            for _ in range(_LOOP_PASSES):
                entry = dict(self.frame.env)
                self.stmt, self.header = stmt, stmt.iter
                self.bind(stmt.target, self._numpy_part(it) or it.element())
                self._exec_loop_body(stmt.body, stmt)
                if self.frame.env == entry:
                    break  # a fixed point: another pass would see the same values
            after = self.frame.env
            self._merge_env(before, mark)
            if self._runs_once_at_least(stmt, it):
                # the body ran: a tensor it bound is not also what the name held before the loop
                # (its storage, whether it may be None); only these fields are taken, so the loop
                # values the fixed point compares stay those of the join
                env = self.frame.env
                for name in _loop_bound_names(stmt):
                    a, j = after.get(name), env.get(name)
                    if a is not None and j is not None and a.kind is Kind.TENSOR and j.kind is Kind.TENSOR:
                        env[name] = replace(j, alias_of=a.alias_of, maybe_none=a.maybe_none, not_none=a.not_none)
            if stmt.orelse is not None:
                self._exec_branch(stmt.orelse.body)
        elif isinstance(stmt, cst.While):
            before = dict(self.frame.env)
            mark = len(self.frame.log)
            for _ in range(_LOOP_PASSES):
                entry = dict(self.frame.env)
                self.stmt, self.header = stmt, stmt.test
                if self.static_truth(stmt.test) is False:
                    break
                self.eval_test(stmt.test, "while")
                self._exec_loop_body(stmt.body, stmt)
                if self.frame.env == entry:
                    break  # a fixed point: another pass would see the same values
            self._merge_env(before, mark)
            if stmt.orelse is not None:
                self._exec_branch(stmt.orelse.body)
        elif isinstance(stmt, cst.With):
            managers = []
            for item in stmt.items:
                self.stmt, self.header = stmt, item.item
                v = self.eval(item.item)
                site = self._context_manager_site(item.item, v)
                breaks = self.gb_events
                if site is not None:
                    # Dynamo reports the ``with`` line (a parenthesised item list may span lines)
                    self.emit("on_context_manager", ContextManagerEvent(stmt, *site))
                if self.gb_events > breaks:
                    continue  # not entered by Dynamo: its __enter__/__exit__ run eagerly
                entered = self._context_method(v, "__enter__", [], item.item)
                managers.append((v, item.item))
                if item.asname is not None:
                    self.bind(item.asname.name, entered if entered is not None else v)
            self.exec_block(stmt.body)
            for v, expr in reversed(managers):
                self.stmt, self.header = stmt, expr
                self._context_method(v, "__exit__", [NONE, NONE, NONE], expr)
        elif isinstance(stmt, (cst.Try, getattr(cst, "TryStar", cst.Try))):
            mark = len(self.frame.log)
            # Dynamo cannot resume after a graph break inside a ``try`` body: it skips the frame
            # ("Failed to handle graph break gracefully", measured on torch 2.13)
            self.frame.try_depth += 1
            try:
                self.exec_block(stmt.body)
            finally:
                self.frame.try_depth -= 1
            after_body = dict(self.frame.env)
            for h in stmt.handlers:
                self.frame.env = dict(after_body)
                if h.name is not None:
                    self.bind(h.name.name, UNKNOWN)
                # a failure handler (``except Exception:``, ``except RuntimeError:``) runs only
                # when the body fails, and Dynamo traces it only then: its bindings flow on, its
                # graph breaks are not reported (see :func:`_failure_handler`)
                quiet = _failure_handler(h, self.index.imports)
                self.silent += quiet
                try:
                    self._exec_branch(h.body)
                finally:
                    self.silent -= quiet
                after_body = self._joined(after_body, self.frame.env, mark)
            self.frame.env = after_body
            if stmt.orelse is not None:
                self.exec_block(stmt.orelse.body)
            if stmt.finalbody is not None:
                self.exec_block(stmt.finalbody.body)
        elif isinstance(stmt, cst.FunctionDef):
            info = FunctionInfo(stmt, f"{self.frame.chain[-1] if self.frame.chain else ''}.<locals>.{stmt.name.value}".lstrip("."), None)
            info.closure = self.frame
            info.module = self.index
            for dec in stmt.decorators:
                name = decorator_name(dec, self.index.imports)
                if name in api.DISABLE_DECORATORS:
                    info.disabled = True
                elif name in api.OPAQUE_DECORATORS:
                    info.opaque = True
            self.frame.assign(identifier(stmt.name.value), Value(Kind.FUNCTION, ref=info))
        elif isinstance(stmt, cst.ClassDef):
            self.frame.assign(identifier(stmt.name.value), UNKNOWN)
        elif isinstance(stmt, cst.Match):
            self.eval(stmt.subject)  # what the subject expression itself does
            before = dict(self.frame.env)
            mark = len(self.frame.log)
            merged = None
            arms = _Alternatives(self) if self._arms_alternate(stmt.subject) else None
            for case in stmt.cases:
                self.frame.env = dict(before)
                ends = self._exec_branch(case.body)
                if arms is not None:
                    arms.next(ends)
                merged = self.frame.env if merged is None else self._joined(merged, self.frame.env, mark)
            if arms is not None:
                # no case matching goes on with the state before the ``match``, unless the last
                # case matches anything (``case _:``, a bare capture, no guard)
                last = stmt.cases[-1] if stmt.cases else None
                catch_all = (
                    last is not None and last.guard is None and isinstance(last.pattern, cst.MatchAs)
                    and last.pattern.pattern is None
                )
                arms.close(ends=catch_all)
            self.frame.env = merged if merged is not None else before

    def quiet_eval(self, node: cst.BaseExpression) -> Value:
        """The value of ``node``, evaluated without events (nothing is reported or recorded)."""
        self.silent += 1
        try:
            return self.eval(node)
        finally:
            self.silent -= 1

    def _runs_once_at_least(self, loop: cst.For, it: Value) -> bool:
        """The ``for`` loop's body surely runs before the code after it, so the names it binds are
        not also what they were before the loop.

        True when the loop iterates something surely not empty (:meth:`_surely_not_empty`: a
        module container such as ``self.blocks``, a tuple or list of known elements, ``range`` of
        a positive constant or of a module container's length, and ``enumerate``/``reversed``/
        ``zip`` of those) and its body has no ``break`` or ``continue`` (which may leave before a
        binding).  Dynamo
        unrolls such a loop over the container it is given; a model built with an empty block list
        runs none of the body, but reading ``h = x; for blk in self.blocks: h = blk(h)`` as "``h``
        may still be ``x``" reports an in-place ``h += r`` as a write to the input for every real
        configuration (measured on torch 2.13: no input mutation with three blocks).
        """
        if any(isinstance(n, (cst.Break, cst.Continue)) for n in walk(loop.body, into_functions=False)):
            return False  # (a ``continue`` may skip the binding on every iteration)
        return self._surely_not_empty(loop.iter, it)

    def _surely_not_empty(self, node: cst.BaseExpression, v: Optional[Value] = None, depth: int = 0) -> bool:
        """``node`` (evaluated to ``v``, evaluated here without events when not given) is an
        iterable with at least one element: see :meth:`_runs_once_at_least`."""
        if v is None:
            v = self.quiet_eval(node)
        if v.kind is Kind.MODULE:
            return True
        if v.kind is Kind.CONTAINER and v.elts:
            return True
        if not isinstance(node, cst.Call) or depth > 4:
            return False
        func = node.func
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if isinstance(func, cst.Attribute) and func.attr.value in ("values", "items", "keys") and not node.args:
            return isinstance(func.value, (cst.Attribute, cst.Name)) and self._surely_not_empty(func.value, None, depth + 1)
        qual = self.qualname(func)
        if qual in ("builtins.enumerate", "builtins.reversed") and args:
            return self._surely_not_empty(args[0], None, depth + 1)
        if qual == "builtins.zip" and args and len(args) == len(node.args):
            return all(self._surely_not_empty(a, None, depth + 1) for a in args)
        if qual == "builtins.range" and len(args) == 1 and len(node.args) == 1:
            (arg,) = args
            if isinstance(arg, cst.Call) and self.qualname(arg.func) == "builtins.len" and len(arg.args) == 1:
                return self.quiet_eval(arg.args[0].value).kind is Kind.MODULE  # ``range(len(self.blocks))``
            n = self.quiet_eval(arg)
            return n.kind is Kind.CONST and isinstance(n.const, int) and not isinstance(n.const, bool) and n.const >= 1
        return False

    def _exec_loop_body(self, body, loop: Optional[cst.CSTNode] = None) -> None:
        frame = self.frame
        frame.loop_depth += 1
        outer = frame.varying
        if loop is not None:
            frame.varying = outer | _loop_bound_names(loop)
        try:
            self._exec_branch(body)
        finally:
            frame.loop_depth -= 1
            frame.varying = outer

    def _arms_alternate(self, test: cst.BaseExpression) -> bool:
        """Whether the arms selected by ``test`` are mutually exclusive for the whole frame: not so
        when ``test`` reads a name an enclosing loop rebinds (``if i == 1: ... else: ...`` over
        ``for i in range(n)``), as each iteration may take another arm, and Dynamo, which skips
        the frame at the first break in a loop, reports only the arm that breaks first."""
        varying = self.frame.varying if self.frame is not None else frozenset()
        return not varying or not any(isinstance(n, cst.Name) and n.value in varying for n in walk(test))

    def _exec_branch(self, body) -> bool:
        """Run a block; return True when it always ends in return/raise/break/continue."""
        try:
            self.exec_block(body)
        except _Terminated:
            return True
        return False

    def _test_operands_before_decision(self, test: cst.BaseExpression, construct: str) -> None:
        """Test the operands of a statically decided ``and``/``or`` that Python evaluates before
        the operand that decides it.

        ``if torch.isnan(out) and x.dtype == torch.float16:`` is decided by its right operand
        (False for the float32 the analysis assumes), but Python asks ``bool(torch.isnan(out))``
        first: a data-dependent branch Dynamo breaks on (measured on torch 2.13), whatever the
        right operand gives.  Operands that short-circuit first (``not is_compiling() and ...``)
        leave the rest unevaluated, as in Python."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            self._test_operands_before_decision(test.expression, construct)
            return
        if not isinstance(test, cst.BooleanOperation):
            return
        left = self.static_truth(test.left)
        short_circuits = isinstance(test.operator, cst.Or)
        if left is None:
            self.eval_test(test.left, "and" if isinstance(test.operator, cst.And) else "or")
        elif left is short_circuits:
            self._test_operands_before_decision(test.left, construct)
            return
        else:
            self._test_operands_before_decision(test.left, construct)
        self._test_operands_before_decision(test.right, construct)

    def exec_if(self, stmt: cst.If, construct: str) -> None:
        self.stmt, self.header = stmt, stmt.test
        truth = self.static_truth(stmt.test)
        before = dict(self.frame.env)
        mark = len(self.frame.log)
        if truth is not None:
            self._test_operands_before_decision(stmt.test, construct)
        if truth is True:
            if self._exec_branch(stmt.body):
                raise _Terminated
            return
        if truth is False:
            if stmt.orelse is not None:
                self._exec_else(stmt.orelse)
            return
        known = _known_truth(self.eval_test(stmt.test, construct))
        if known is not None:
            # a Python constant whose value the analysis knows: Dynamo specialises on it and
            # traces only the branch it takes
            if known:
                if self._exec_branch(stmt.body):
                    raise _Terminated
            elif stmt.orelse is not None:
                self._exec_else(stmt.orelse)
            return
        narrowed = self._narrow(stmt.test)
        if narrowed:
            self.frame.env.update(narrowed[0])
            self.frame.log.extend(narrowed[0])
        membership = self._membership_test(stmt.test)
        sv = self.frame.self_value
        collecting = (
            (sv.ref, frozenset(sv.ref.attrs))
            if narrowed and self.silent and sv is not None and sv.kind is Kind.SELF and isinstance(sv.ref, ClassInfo)
            else None
        )
        arms = _Alternatives(self) if self._arms_alternate(stmt.test) else None
        if arms is not None:
            by_default = self._default_truth(stmt.test)
            arms.default = None if by_default is None else 0 if by_default else 1
        if membership is not None and membership[0] == "not in":
            self.fill_guards.append(membership[1])
            try:
                body_ends = self._exec_branch(stmt.body)
            finally:
                self.fill_guards.remove(membership[1])
        else:
            body_ends = self._exec_branch(stmt.body)
        if arms is not None:
            arms.next(body_ends)
        if membership is not None and membership[0] == "in" and body_ends and stmt.orelse is None:
            # ``if k in c: return c[k]``: what follows in this block runs only for a new key
            self.fill_guards.append(membership[1])
        after_body = self.frame.env
        self.frame.env = dict(before)
        if narrowed:
            self.frame.env.update(narrowed[1])
            self.frame.log.extend(narrowed[1])
        # while ``__init__``'s attributes are collected: what each arm stores in attributes the
        # object did not have before the ``if`` (see :meth:`_filled_default_attrs`)
        body_attrs = self._attrs_of_arm(collecting) if collecting is not None else None
        else_ends = False
        if stmt.orelse is not None:
            try:
                self._exec_else(stmt.orelse)
            except _Terminated:
                else_ends = True
        if arms is not None:
            arms.close(else_ends)
        if body_attrs is not None:
            self._filled_default_attrs(collecting, narrowed, body_attrs, not (body_ends or else_ends))
        after_else = self.frame.env
        if body_ends and else_ends:
            raise _Terminated
        if body_ends:
            self.frame.env = after_else
        elif else_ends:
            self.frame.env = after_body
        else:
            self.frame.env = self._joined(after_body, after_else, mark)
            if narrowed:
                self._filled_default(narrowed, after_body, after_else)
            subject = _branch_subject(stmt.test)
            if subject is not None:
                self._remember_arms(subject, after_body, after_else, mark)

    @staticmethod
    def _attrs_of_arm(collecting) -> Dict[str, Value]:
        """After the first arm of an ``if`` while attributes are collected (``collecting``: the
        class and the attribute names it had before the ``if``): the values that arm stored in new
        attributes, which are taken off the class so that the other arm's stores are seen alone."""
        cls, before = collecting
        stored = {name: v for name, v in cls.attrs.items() if name not in before}
        for name in stored:
            del cls.attrs[name]
        return stored

    def _filled_default_attrs(self, collecting, narrowed, body_attrs: Dict[str, Value], both_go_on: bool) -> None:
        """After both arms of an ``if`` on a parameter (``if node_a is None:``) while ``__init__``'s
        attributes are collected: each new attribute holds the join of what the arms stored, except
        one the ``is None`` arm fills with a sure tensor while the other stores the parameter
        itself (``self.node_a = torch.ones(...)`` / ``self.node_a = node_a``), when the parameter's
        kind is unknown or a guessed tensor: the object built without the argument holds the
        tensor, as :meth:`_filled_default` reads a local (monai's DiNTS: ``if self.node_a[0][d]:``
        breaks on torch 2.13).  ``both_go_on``: neither arm returns or raises."""
        cls, _before = collecting
        else_attrs = {name: v for name, v in cls.attrs.items() if name in body_attrs}
        for name, v in body_attrs.items():
            cls.attrs[name] = join(v, else_attrs[name]) if name in else_attrs else v
        if not both_go_on:
            return
        for name, filled, _kept in _default_fills(narrowed, body_attrs, else_attrs, body_attrs):
            cls.attrs[name] = filled

    def _default_truth(self, test: cst.BaseExpression) -> Optional[bool]:
        """The truth of ``test`` in a call that omits the optional arguments, when it tests only a
        parameter of this function whose default is ``None`` and which the function never rebinds
        (``opt is None``, ``opt is not None``, ``opt``, ``not opt``); else ``None``."""
        negated = False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            negated, test = not negated, test.expression
        none_test = _none_comparison(test)
        if isinstance(test, cst.Name):
            name, truth = test.value, False
        elif none_test is not None and isinstance(none_test[0], cst.Name):
            name, truth = none_test[0].value, none_test[1]
        else:
            return None
        fn = getattr(self.frame.func, "node", None) if self.frame is not None else None
        if not isinstance(fn, cst.FunctionDef):
            return None
        params = list(fn.params.posonly_params) + list(fn.params.params) + list(fn.params.kwonly_params)
        param = next((p for p in params if p.name.value == name), None)
        if param is None or not (isinstance(param.default, cst.Name) and param.default.value == "None"):
            return None
        if name in _node_scan(fn, "function-bound", lambda: _scan_loop_bound(fn)):
            return None
        return truth != negated

    def _filled_default(self, narrowed, body: Dict[str, Value], orelse: Dict[str, Value]) -> None:
        """``if lens is None: lens = torch.LongTensor(...)``: a name the ``is None`` arm fills with a
        sure tensor, left as it was (not ``None``, of unknown kind or only guessed a tensor) in the
        other arm, is a tensor after the ``if``.  The call that omits the argument gets the tensor
        the code builds, and the code after the ``if`` treats both the same (asteroid's
        ``y[b, :lens[b]]`` breaks on torch 2.13 reading ``lens[b]`` as a slice bound)."""
        env = self.frame.env
        for name, filled, kept in _default_fills(narrowed, body, orelse):
            env[name] = replace(filled, alias_of=kept.alias_of)

    def _remember_arms(self, subject: Tuple[tuple, bool], body: Dict[str, Value], orelse: Dict[str, Value], mark: int) -> None:
        """After an ``if`` on a flag (``self.training``, ``self.use_bias``, a local ``use_cache``)
        joined its arms: remember, for each name the arms bound differently, its value in each
        arm, so that a later test on the same flag reads the value its arm bound
        (:meth:`_narrow_subject`).  ``subject``: :func:`_branch_subject` of the test."""
        key, polarity = subject
        log = self.frame.log
        if not self._subject_fixed(key, mark):
            return  # an arm rebinds the flag itself
        env = self.frame.env
        values: Dict[str, Tuple[Value, Value, Value]] = {}
        for name in dict.fromkeys(log[mark:]):
            a, b = body.get(name), orelse.get(name)
            if a is None or b is None or a is b:
                continue
            values[name] = (env[name], a, b) if polarity else (env[name], b, a)
        if values:
            self.frame.by_mode[key] = (len(log), values)

    def _subject_fixed(self, key: tuple, mark: int) -> bool:
        """The flag ``key`` (see :func:`_branch_subject`) holds the value it had when the frame's
        write log had length ``mark``: a local not written since, ``self.training`` (one bool for
        the whole call: Dynamo guards on it), or another ``self`` attribute the function never
        assigns."""
        if key[0] == "local":
            return key[1] not in self.frame.log[mark:]
        if key[1] == "training":
            return True
        func = self.frame.func
        node = getattr(func, "node", None)
        if node is None:
            return False
        return key[1] not in _self_attrs_written(node)

    def _narrow_subject(self, test: cst.BaseExpression):
        """``(if-true, if-false)`` environment updates for a test on a flag an earlier ``if``
        tested (:meth:`_remember_arms`): a name that ``if`` bound differently in its arms, and not
        rebound since, holds the value of the arm the test selects, when the flag cannot have
        changed in between.  The flag is one Python value for both tests, and Dynamo guards on
        it: in descript-audio-codec's ``if self.training is False and i >= n_quantizers``,
        ``n_quantizers`` is a tensor only in train mode, where the ``and`` stops before it
        (measured on torch 2.13: no break in either mode)."""
        subject = _branch_subject(test)
        if subject is None or not self.frame.by_mode:
            return None
        key, polarity = subject
        found = self.frame.by_mode.get(key)
        if found is None or not self._subject_fixed(key, found[0]):
            return None
        env = self.frame.env
        when_true: Dict[str, Value] = {}
        when_false: Dict[str, Value] = {}
        for name, (joined, t, f) in found[1].items():
            if env.get(name) is joined:
                when_true[name], when_false[name] = t, f
        if not when_true:
            return None
        return (when_true, when_false) if polarity else (when_false, when_true)

    def _exec_else(self, orelse) -> None:
        if isinstance(orelse, cst.If):
            self.stmt = orelse
            self.exec_if(orelse, "elif")
        else:
            self.exec_block(orelse.body)

    def _narrow(self, test: cst.BaseExpression):
        """Environment updates for ``x is None`` / ``x is not None`` / ``isinstance(x, T)``
        tests, tests on a flag an earlier ``if`` tested (:meth:`_narrow_subject`), and ``not`` of them:
        ``(if-branch, else-branch)``."""
        mode = self._narrow_subject(test)
        if mode is not None:
            return mode
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._narrow(test.expression)
            return (inner[1], inner[0]) if inner else None
        if isinstance(test, cst.Call):
            return self._narrow_isinstance(test)
        none_test = _none_comparison(test)
        if none_test is None or not isinstance(none_test[0], cst.Name):
            return None
        name = none_test[0].value
        cur = self.frame.env.get(name)
        if cur is None:
            return None
        not_none = replace(cur, maybe_none=False, not_none=True) if cur.kind is not Kind.NONE else replace(UNKNOWN, not_none=True)
        return ({name: NONE}, {name: not_none}) if none_test[1] else ({name: not_none}, {name: NONE})

    def _is_builtin(self, name: str) -> bool:
        """``name`` refers to the builtin: no local binding and no module-level name (def, class,
        import, assignment) shadows it (see :meth:`_shadowed`)."""
        return not self._shadowed(name)

    def _isinstance_of_a_name(self, test: cst.Call) -> bool:
        """``test`` is a call of the builtin ``isinstance(name, classes)`` (two plain arguments, the
        first a bare name) in a frame."""
        return (
            isinstance(test.func, cst.Name) and test.func.value == "isinstance" and self.frame is not None
            and self._is_builtin("isinstance")
            and len(test.args) == 2 and all(a.keyword is None and not a.star for a in test.args)
            and isinstance(test.args[0].value, cst.Name)
        )

    def _isinstance_tensor_test(self, test: cst.Call) -> Optional[str]:
        """The name ``x`` when ``test`` is ``isinstance(x, torch.Tensor)`` (or a tuple of tensor
        classes), else ``None``."""
        if not self._isinstance_of_a_name(test) or not self._names_tensor_classes(test.args[1].value):
            return None
        return test.args[0].value.value

    def _names_tensor_classes(self, types: cst.BaseExpression) -> bool:
        """``types`` (the second argument of ``isinstance``) names tensor classes only
        (``torch.Tensor``, ``(torch.Tensor, nn.Parameter)``)."""
        elems = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
        return bool(elems) and all(self.index.imports.qualify(e) in api.TENSOR_TYPES for e in elems)

    def _tensor_type_subject(self, test: cst.Call) -> Optional[cst.BaseExpression]:
        """The tested expression ``e`` when ``test`` is the builtin ``isinstance(e, <tensor
        classes>)`` or ``torch.is_tensor(e)`` (any import spelling, plain arguments) in a frame,
        else ``None``."""
        if self.frame is None or any(a.keyword is not None or a.star for a in test.args):
            return None
        if len(test.args) == 2 and isinstance(test.func, cst.Name) and test.func.value == "isinstance" and self._is_builtin("isinstance"):
            return test.args[0].value if self._names_tensor_classes(test.args[1].value) else None
        if len(test.args) == 1 and self.qualname(test.func) == "torch.is_tensor":
            return test.args[0].value
        return None

    def _hasattr_truth(self, call: cst.Call) -> Optional[bool]:
        """``hasattr(torch, "nextafter")`` (``torch.nn.functional``, ``torch.Tensor``, ... through
        any import alias) with a literal name: True when the name exists on the target torch
        (:func:`~pt2lint.analysis.dynamo_facts.has_attribute`).  Dynamo folds ``hasattr`` on a
        module or class to a constant, so only the branch it selects is traced (measured on
        torch 2.13: ``if hasattr(torch, "nextafter"): ... else: <fallback>`` traces the body).
        ``None`` for anything else."""
        if len(call.args) != 2 or any(a.star or a.keyword is not None for a in call.args):
            return None
        if self.qualname(call.func) != "builtins.hasattr":
            return None
        attr = call.args[1].value
        if not isinstance(attr, cst.SimpleString):
            return None
        namespace = self.qualname(call.args[0].value)
        if namespace is None:
            return None
        return dynamo_facts.has_attribute(namespace, attr.evaluated_value)

    def _function_test_truth(self, test: cst.Call) -> Optional[bool]:
        """``callable(f)`` is True and ``isinstance(f, C)`` False when the name ``f`` surely holds a
        function or lambda of the project and ``C`` is a class of the project or of torch (a
        ``def`` makes a plain function object, an instance of none of them).  Dynamo folds both
        on the type, so the ``default(val, lambda: nn.Linear(...))`` idiom, ``d() if not
        isinstance(d, nn.Module) and callable(d) else d``, takes only its first branch."""
        if not (isinstance(test.func, cst.Name) and test.func.value in ("callable", "isinstance") and self.frame is not None
                and self._is_builtin(test.func.value) and test.args and isinstance(test.args[0].value, cst.Name)
                and all(a.keyword is None and not a.star for a in test.args)):
            return None
        cur = self.frame.env.get(identifier(test.args[0].value.value))
        if cur is None or cur.kind is not Kind.FUNCTION or not isinstance(cur.ref, FunctionInfo) or cur.weak or cur.maybe_none:
            return None
        if test.func.value == "callable":
            return True if len(test.args) == 1 else None
        classes = self._isinstance_types(test) if len(test.args) == 2 else None
        if classes is None:
            return None
        for e, c in classes:
            q = self.index.imports.qualify(e) if self.index is not None else None
            if not (q is not None and q.startswith("torch.")) and not _project_class(c):
                return None
        return False

    def _scalar_isinstance_truth(self, test: cst.Call) -> Optional[bool]:
        """``isinstance(x, int)`` (``float``, ``bool``, ``str``, ``complex``, or a tuple of them) when
        the name ``x`` surely holds a value whose Python type is known here: a size (an ``int``, a
        SymInt while tracing, which Dynamo takes for an ``int``), a constant of known value, ``None``,
        a tuple/list/dict of known elements, or a sure tensor.  Dynamo specialises on the type and
        traces one branch (measured on torch 2.13: ``if isinstance(size, int): size = (size, size)``
        with ``size = (n, n)`` and with ``size = x.size(0)``).  ``None`` when undecided."""
        if not self._isinstance_of_a_name(test):
            return None
        names = self._scalar_types_named(test.args[1].value)
        if names is None:
            return None
        name = identifier(test.args[0].value.value)
        cur = self.frame.env.get(name)
        if cur is None or cur.weak or cur.maybe_none or name in self.frame.varying:
            return None
        if cur.kind is Kind.NONE:
            return False
        if cur.kind is Kind.SHAPE and cur.ref is None:
            return None if cur.py_float else "int" in names  # (a number read as a float may be an int)
        if cur.kind is Kind.CONST and isinstance(cur.const, (bool, int, float, str, complex)) and cur.ref is None:
            return any(isinstance(cur.const, {"int": int, "float": float, "bool": bool, "str": str, "complex": complex}[n]) for n in names)
        if cur.kind is Kind.CONTAINER and (cur.elts is not None or cur.keys is not None):
            return False
        if cur.kind is Kind.TENSOR:
            return False
        return None

    def _isinstance_truth(self, test: cst.Call) -> Optional[bool]:
        """``isinstance(x, torch.Tensor)`` is False while tracing when ``x`` is known to be a
        Python value (a constant, ``None``, a size, a container, a module): Dynamo
        specialises on the type and traces one branch.  ``isinstance(x, C)`` is False when
        ``x`` is surely a tensor and ``C`` a class of the project that is no tensor class
        (:meth:`_tensor_is_no_instance`)."""
        subject = self._tensor_type_subject(test)
        if isinstance(subject, cst.Attribute) and isinstance(subject.value, cst.Name) and self._attribute_is_no_tensor(subject):
            return False
        if not isinstance(subject, cst.Name):
            return False if self._tensor_is_no_instance(test) else None
        name = subject.value
        cur = self.frame.lookup(name)
        if cur is not None and not cur.maybe_none and cur.kind in _NOT_TENSOR_KINDS:
            return False
        if cur is not None and cur.kind is Kind.TENSOR and not cur.weak and not cur.maybe_none and name not in self.frame.varying:
            # a sure tensor: Dynamo specialises on the type, so ``not isinstance(x, torch.Tensor) and
            # x == 0`` stops at the first operand (measured on torch 2.13: no break)
            return True
        return None

    def _attribute_is_no_tensor(self, subject: cst.Attribute) -> bool:
        """The attribute ``subject`` (``obj.attr``) of a tensor type test surely holds a Python value
        (``self.domain = domain`` given ``2`` by every construction site): the test is False while
        Dynamo traces, which specialises on the type (the same test on a name is
        :meth:`_isinstance_truth`'s)."""
        v = self.quiet_eval(subject)
        return not v.maybe_none and v.kind in _NOT_TENSOR_KINDS and v.kind is not Kind.CONTAINER

    def _tensor_is_no_instance(self, test: cst.Call) -> bool:
        """``test`` is ``isinstance(x, C)`` (or a tuple of classes) with ``x`` a name of this frame
        that surely holds a tensor (not a guess; read where no enclosing loop rebinds it) and every
        class one the project defines whose bases, all the way up, are known not to make it a
        ``torch.Tensor`` subclass (:func:`_never_a_tensor_class`): the test is False for every
        input the analysis describes (``isinstance(edge_index, SparseTensor)`` with a tensor
        ``edge_index``), and Dynamo, which specialises on the type, never traces its branch.
        A class the project cannot resolve, or one that may be a tensor subclass, decides nothing."""
        if not self._isinstance_of_a_name(test):
            return False
        frame = self.frame
        name = identifier(test.args[0].value.value)
        cur = frame.env.get(name)
        if cur is None or name in frame.varying or cur.kind is not Kind.TENSOR or cur.weak:
            return False
        classes = self._isinstance_types(test)
        return classes is not None and all(
            _project_class(c) and _never_a_tensor_class(c.ref) for _, c in classes
        )

    def _isinstance_types(self, test: cst.Call) -> Optional[List[Tuple[cst.BaseExpression, Value]]]:
        """``(expression, value)`` of each class named by ``isinstance(x, C)`` / ``isinstance(x, (C, D))``
        (evaluated silently), or ``None`` when the second argument is not a class name, a dotted
        name or a non-empty tuple of them."""
        types = test.args[1].value
        if isinstance(types, cst.Tuple):
            if not types.elements or any(isinstance(e, cst.StarredElement) for e in types.elements):
                return None
            elems = [e.value for e in types.elements]
        else:
            elems = [types]
        if not all(isinstance(e, (cst.Name, cst.Attribute)) for e in elems):
            return None
        return [(e, self.quiet_eval(e)) for e in elems]

    def _narrow_isinstance(self, test: cst.Call):
        """``isinstance(x, torch.Tensor)``: ``x`` is a tensor in the if-branch and not one in the
        else-branch (where a value the analysis took for a tensor becomes unknown: Python
        checks the type, so what reaches that branch is something else, typically an ``int``
        size passed where a tensor could be).  ``isinstance(x, int)`` (``float``, ``bool``,
        ``str``, ``complex``, or a tuple of them): ``x`` is a Python constant in the
        if-branch.  Other types narrow nothing.
        """
        if not (isinstance(test.func, cst.Name) and test.func.value == "isinstance" and len(test.args) == 2
                and isinstance(test.args[0].value, cst.Name) and self._is_builtin("isinstance")):
            return None
        name = test.args[0].value.value
        cur = self.frame.env.get(name)
        if cur is None:
            return None
        if self._isinstance_tensor_test(test) is not None:
            as_tensor = cur if cur.kind is Kind.TENSOR else Value(Kind.TENSOR, alias_of=cur.alias_of)
            not_tensor = UNKNOWN if cur.kind is Kind.TENSOR else cur
            return {name: replace(as_tensor, maybe_none=False)}, {name: not_tensor}
        if self._scalar_types_named(test.args[1].value) is not None:
            return {name: CONST}, {}
        return None

    def _scalar_types_named(self, types: cst.BaseExpression) -> Optional[set]:
        """The builtin Python scalar types (``int``, ``float``, ``bool``, ``str``, ``complex``) the
        second argument of ``isinstance`` names, one or a tuple of them; ``None`` when it names
        anything else."""
        elems = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
        if elems and all(isinstance(e, cst.Name) and e.value in _PY_SCALAR_TYPES and self._is_builtin(e.value) for e in elems):
            return {e.value for e in elems}
        return None

    def _joined(self, a: Dict[str, Value], b: Dict[str, Value], mark: Optional[int] = None) -> Dict[str, Value]:
        """The join of two environments reaching one point, name by name.

        Args:
            a, b: environments of the current frame.
            mark: the length of the frame's write log when the environment both descend
                from was copied; only names written since can differ, so only those are
                joined.  ``None`` joins every name.

        Branches copy the environment, so a name neither branch rebound holds the very
        same :class:`Value` on both sides; with ``mark`` the join costs the writes of the
        branches, not the size of the environment, which keeps a long function with many
        branches linear.
        """
        out = dict(a)
        if mark is None:
            items = b.items()
        else:
            bget = b.get
            items = [(k, bget(k)) for k in dict.fromkeys(self.frame.log[mark:])]  # first-write order, not hash order
        get = a.get
        for k, vb in items:
            va = get(k)
            if va is vb or vb is None:
                continue  # unchanged, or only in ``a``
            out[k] = vb if va is None else join(va, vb)
        return out

    def _merge_env(self, before: Dict[str, Value], mark: Optional[int] = None) -> None:
        self.frame.env = self._joined(before, self.frame.env, mark)

    def exec_small(self, small: cst.CSTNode) -> None:
        if isinstance(small, cst.Expr):
            self.eval(small.value)
        elif isinstance(small, cst.Assign):
            breaks = self.gb_events
            value = self.eval(small.value)
            if isinstance(small.value, cst.Name) and _sized_list(value):
                # ``alias = outs``: one list under two names, changed through either
                value = self._forget_length(small.value.value, value)
            for t in small.targets:
                self.store(t.target, value, small)
            sourceless.note_binding(self, [t.target for t in small.targets], small.value, value, breaks)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                breaks = self.gb_events
                value = self.eval(small.value)
                self.store(small.target, value, small)
                sourceless.note_binding(self, [small.target], small.value, value, breaks)
        elif isinstance(small, cst.AugAssign):
            self.exec_augassign(small)
        elif isinstance(small, cst.Return):
            self.frame.returns.append(self.eval(small.value) if small.value is not None else NONE)
            raise _Terminated
        elif isinstance(small, cst.Raise):
            raise _Terminated
        elif isinstance(small, cst.Assert):
            self.header = small.test
            if self.static_truth(small.test) is None:
                value = self.eval(small.test)
                self.emit("on_assert", AssertEvent(small, value))
        elif isinstance(small, (cst.Break, cst.Continue)):
            raise _Terminated
        elif isinstance(small, cst.Import):
            self.index.imports.add_import(small)
        elif isinstance(small, cst.ImportFrom):
            self.index.imports.add_import_from(small)
        elif isinstance(small, cst.Del):
            pass
        elif isinstance(small, cst.Global):
            self.frame.globals_declared.update(n.name.value for n in small.names)

    def exec_augassign(self, node: cst.AugAssign) -> None:
        target = node.target
        rhs = self.eval(node.value)
        op = _aug_symbol(node.operator)
        if isinstance(target, cst.Name):
            name = identifier(target.value)
            declared = name in self.frame.globals_declared
            cur = self.frame.lookup(name) or (self.global_value(name) if declared else UNKNOWN)
            if declared and cur.kind is not Kind.TENSOR:
                self.emit("on_global_write", GlobalWriteEvent(node, name, cur, "augassign", op))
            if cur.kind is Kind.TENSOR:
                if not (cur.weak and param_uses.number_literal(node.value)):
                    # (``k -= 1`` on a parameter only guessed to be a tensor, by a number: a counter
                    # callers pass as a Python int is rebound, not written -- see param_uses)
                    self.emit("on_write", WriteEvent(node, cur, f"`{target.value} {op}` (in-place {op})"))
                self.frame.assign(name, replace(cur, bool_tensor=cur.bool_tensor and rhs.bool_tensor))
            else:
                self.frame.assign(name, self.binop(cur, rhs, op))
            before = self.frame.state_from.get(name)
            added = _state_sources(node.value, self.frame.state_from)
            if before is not None or added is not None:
                # ``c += 1``: ``c`` is now changed from whatever it was computed from
                self.frame.state_from[name] = ((before[0] if before else frozenset()) | (added[0] if added else frozenset()), True)
        elif isinstance(target, cst.Attribute):
            base = self.eval(target.value)
            cur = self.attribute(base, identifier(target.attr.value), target)
            self._function_attr_store(node, base, target)
            if base.kind is Kind.SELF:
                if cur.kind is not Kind.TENSOR:
                    self.emit("on_state_write", StateWriteEvent(node, target.attr.value, cur, "augassign", op))
                else:
                    self.emit("on_write", WriteEvent(node, cur, f"`self.{target.attr.value} {op}`"))
            elif cur.kind is Kind.TENSOR:
                self.emit("on_write", WriteEvent(node, cur, f"`{op}` on an attribute"))
        elif isinstance(target, cst.Subscript):
            base = self.eval(target.value)
            index = self._eval_slices(target)
            self._augassign_read(target, base, index)
            if base.kind is Kind.TENSOR and (not base.weak or _array_only_index(target)):
                self.emit("on_write", WriteEvent(node, base, f"`[...] {op}` (in-place {op} into a slice)"))
            elif base.kind is Kind.CONTAINER and self._is_self_attr(target.value):
                self.emit("on_state_write", StateWriteEvent(node, self._self_attr_name(target.value), base, "container", f"[...] {op}"))
            elif base.kind is Kind.CONTAINER and self.is_module_global(target.value):
                self.emit("on_global_write", GlobalWriteEvent(node, target.value.value, base, "container", f"[...] {op}"))

    def _function_attr_store(self, stmt: cst.CSTNode, base: Value, target: cst.Attribute) -> None:
        """``f.attr = v`` on ``base``: a :class:`FunctionAttrStoreEvent` when ``base`` is a plain
        function of the project (no partial, no bound method) not defined in the running frame."""
        fn = base.ref
        if base.kind is not Kind.FUNCTION or not isinstance(fn, FunctionInfo) or base.const is not None or base.elt is not None:
            return
        if fn.closure is not None and fn.closure is self.frame:
            return  # a function the frame itself defined: Dynamo tracks stores on it
        self.emit("on_function_attr_store", FunctionAttrStoreEvent(stmt, fn, identifier(target.attr.value)))

    def _augassign_read(self, target: cst.Subscript, base: Value, index: Value) -> None:
        """``x[i] op= v`` first reads ``x[i]`` (``__getitem__``), then stores it back: the read is an index
        like any other (a boolean mask there breaks the graph, "Dynamic shape operator", measured on
        torch 2.13, where the plain store ``x[mask] = v`` does not)."""
        if base.kind is not Kind.TENSOR:
            return
        node = target.slice[0].slice
        index_node = node.value if len(target.slice) == 1 and isinstance(node, cst.Index) else None
        self.emit("on_index", IndexEvent(target, base, index, index_node, tuple(self._slice_bounds)))

    # ------------------------------------------------------------------ store
    def store(self, target: cst.BaseExpression, value: Value, stmt: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            name = target.value if target.value.isascii() else identifier(target.value)
            if name in self.frame.globals_declared and value.kind is not Kind.TENSOR and _reads_name(stmt, name):
                self.emit("on_global_write", GlobalWriteEvent(stmt, name, self.global_value(name), "reassign"))
            rhs = getattr(stmt, "value", None)
            if value.kind is Kind.SHAPE and isinstance(stmt, (cst.Assign, cst.AnnAssign)) and rhs is not None and self.size_derived(rhs):
                self.frame.sized.add(name)
            else:
                self.frame.sized.discard(name)
            sources = _state_sources(rhs, self.frame.state_from) if rhs is not None and _binds_directly(stmt, target) else None
            if sources is not None:
                self.frame.state_from[name] = sources
            else:
                self.frame.state_from.pop(name, None)
            self.frame.assign(name, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            self._unpack(target.elements, value, stmt)
        elif isinstance(target, cst.Attribute):
            base = self.eval(target.value)
            if base.kind is Kind.TENSOR and not base.weak:
                self.emit("on_attr_store", AttrStoreEvent(target, base, target.attr.value, value))
            self._function_attr_store(stmt, base, target)
            if base.kind is Kind.SELF and isinstance(base.ref, ClassInfo):
                name = identifier(target.attr.value)
                if value.kind is not Kind.TENSOR and (
                    (
                        _reads_self_attr(stmt, name) and not _module_returned_to_itself(stmt, name, value)
                        and not (value.kind is Kind.UNKNOWN and _converted_by_foreign_methods(stmt, name))
                    )
                    or (value.kind in _PYTHON_SCALAR_KINDS and _changed_through_locals(stmt, name, self.frame.state_from))
                ):
                    cur = self.attribute(base, name, target)
                    self.emit("on_state_write", StateWriteEvent(stmt, name, cur, "reassign"))
                if self.silent:
                    self._touch(base.ref)
                    base.ref.attrs[name] = join(base.ref.attrs[name], value) if name in base.ref.attrs else value
                else:
                    self._store_built(base.ref, name, value)
                    key = (id(base.ref), name)
                    self._region_writes[key] = join(self._region_writes[key], value) if key in self._region_writes else value
                    if self.frame is not None and self.frame.self_value is not None and self.frame.self_value.ref is base.ref:
                        # what this frame reads back from ``self.<name>`` until the next store (joined
                        # at the end of branches like a local)
                        self.frame.assign(_self_slot(name), value)
        elif isinstance(target, cst.Subscript):
            base = self.eval(target.value)
            index = self._eval_slices(target)
            is_global = base.kind is Kind.CONTAINER and self.is_module_global(target.value)
            if base.kind is Kind.CONTAINER and base.keys is not None and isinstance(target.value, cst.Name) and not is_global:
                self.frame.assign(target.value.value, _dict_with(base, index, value))
            elif _string_key(index) and dicts.can_hold_entries(base) and isinstance(target.value, cst.Name) and not is_global:
                self.frame.assign(target.value.value, dicts.with_entry(base, index.const, value))
            elif base.kind is Kind.CONTAINER and base.keys is None and isinstance(target.value, cst.Name) and not is_global and self.frame.is_bound(target.value.value):
                sliced = any(isinstance(el.slice, cst.Slice) for el in target.slice)
                self.frame.assign(target.value.value, _with_item(base, None if sliced else index, value))
            if base.kind is Kind.UNKNOWN and base.alias_of and _array_only_index(target):
                # an object of the caller's of unknown kind (``cache["k"]`` of an input mapping) stored
                # into with an index only an array takes (``[:, a:b]``): the caller's tensor is written
                base = Value(Kind.TENSOR, weak=True, alias_of=base.alias_of)
            # A guessed tensor (``cache=None`` parameter) is as likely a list or dict:
            # item assignment into those writes no tensor; a string key proves a mapping.
            if base.kind is Kind.TENSOR and (not base.weak or _array_only_index(target)) and not _string_key(index):
                self.emit("on_write", WriteEvent(target, base, "`[...] =` (index assignment writes in place)"))
                self.emit("on_index_store", IndexEvent(target, base, index))
            elif base.kind is Kind.CONTAINER and self._is_self_attr(target.value):
                key_node = self._subscript_key(target)
                self.emit("on_state_write", StateWriteEvent(
                    stmt, self._self_attr_name(target.value), base, "container", "[...] =",
                    fill_once=self.fill_guarded(key_node, target.value, index), key=index,
                ))
                self._key_store(target, base, index, key_node)
            elif is_global:
                key_node = self._subscript_key(target)
                self.emit("on_global_write", GlobalWriteEvent(
                    stmt, target.value.value, base, "container", "[...] =",
                    fill_once=self.fill_guarded(key_node, target.value, index),
                ))
                self._key_store(target, base, index, key_node)
            elif base.kind is Kind.CONTAINER:
                self._key_store(target, base, index, self._subscript_key(target), state=False)
        elif isinstance(target, cst.StarredElement):
            self.store(target.value, container(elt=value.element()), stmt)

    def _unpack(self, elements, value: Value, stmt) -> None:
        n = len(elements)
        star = next((i for i, e in enumerate(elements) if isinstance(e.value, cst.StarredElement)), None)
        # unpacking a NumPy array iterates it: each name is a part of it (``a, b = self.strides``
        # in forward binds 0-d tensors traced from the array, see NUMPY_ELEMENT)
        part = self._numpy_part(value)
        for i, el in enumerate(elements):
            t = el.value
            if value.elts is not None and len(value.elts) == n and star is None:
                v = value.elts[i]
            elif isinstance(t, cst.StarredElement):
                self.store(t.value, container(elt=part or value.element()), stmt)
                continue
            else:
                v = part or value.element()
            self.store(t, v, stmt)

    def bind(self, target: cst.BaseExpression, value: Value) -> None:
        self.store(target, value, self.stmt)

    # ------------------------------------------------- recompile-hazard helpers
    def _key_store(self, target: cst.Subscript, base: Value, index: Value, key_node, state: bool = True) -> None:
        """A ``KeyEvent`` for ``d[k] = v`` with a size key into a known dict: a local one, or
        ``self``/module state when a membership test guards the write (an unguarded write is
        a state write, reported as such)."""
        if key_node is None or index.kind is not Kind.SHAPE or base.keys is None:
            return
        if state and (self._source(key_node), self._source(target.value)) not in self.fill_guards:
            return
        self.emit("on_key", KeyEvent(target, index, key_node, "write", target.value))

    @staticmethod
    def _subscript_key(target: cst.Subscript) -> Optional[cst.BaseExpression]:
        """The key expression of ``c[k]`` (``None`` for slices and ``c[a, b]``)."""
        if len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
            return target.slice[0].slice.value
        return None

    @staticmethod
    def _source(node: cst.CSTNode) -> str:
        return cst.Module(body=[]).code_for_node(node).strip()

    def _membership_test(self, test: cst.BaseExpression) -> Optional[Tuple[str, Tuple[str, str]]]:
        """``("not in", (key, container))`` for ``if k not in c`` (``"in"`` for ``if k in c``), else None."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
            return None
        op = test.comparisons[0].operator
        if isinstance(op, cst.NotIn):
            how = "not in"
        elif isinstance(op, cst.In):
            how = "in"
        else:
            return None
        return how, (self._source(test.left), self._source(test.comparisons[0].comparator))

    def fill_guarded(self, key_node: Optional[cst.BaseExpression], container_node: cst.BaseExpression, key: Value):
        """True when ``container[key] = v`` fills a cache once per key; ``"sized"`` when it does
        so with a tensor size as the key (once per distinct size: reported by PTC504, not as a
        state write); False otherwise.

        That is: a membership test of the same key expression in the same container
        expression guards the write (``if k not in c: c[k] = v``, or ``if k in c: return
        c[k]`` earlier in the block), and the key stays the same from call to call as far
        as the analysis knows: not a tensor (hashed by identity), not a value read out of
        tensor data, not a tensor size (a new key, so a new entry and a recompile, for
        each distinct size; see :meth:`size_derived`).  Measured on torch 2.13 with
        ``if "mask" not in self.cache: self.cache["mask"] = ...``: two graphs over six
        calls of one shape (the guard ``not ___dict_contains('mask', self.cache)`` fails
        once).
        """
        if key_node is None or not self.fill_guards:
            return False
        if key.kind in (Kind.TENSOR, Kind.DATA):
            return False
        if (self._source(key_node), self._source(container_node)) not in self.fill_guards:
            return False
        # a size key: once per distinct size, which the size-keyed-dict rule reports (PTC504)
        return not self.size_derived(key_node) or "sized"

    def size_derived(self, node: Optional[cst.BaseExpression]) -> bool:
        """The expression reads a tensor's size: ``x.shape``, ``x.size(...)``, or a local bound to one.

        Dynamo specialises a size that ends up as a Python dict key or a constructor
        argument, so such a value varies with the inputs' shapes (``x.dim()``/``x.ndim``
        do not count: the rank seldom changes between calls).
        """
        if node is None or self.frame is None:
            return False
        sized = self.frame.sized
        for n in walk(node):
            if isinstance(n, cst.Attribute) and n.attr.value == "shape":
                return True
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "size":
                return True
            if isinstance(n, cst.Name) and n.value in sized:
                return True
        return False

    def is_module_global(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is a bare name of a module-level variable of the analysed module, not shadowed by a local."""
        if not isinstance(expr, cst.Name) or self.frame is None:
            return False
        name = expr.value
        if self.frame.is_bound(name) and name not in self.frame.globals_declared:
            return False
        return name in self.index.global_exprs

    @staticmethod
    def _is_self_attr(expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"

    @staticmethod
    def _self_attr_name(expr: cst.BaseExpression) -> str:
        return expr.attr.value if isinstance(expr, cst.Attribute) else ""

    # ------------------------------------------------------------ expressions
    def static_truth(self, expr: cst.BaseExpression) -> Optional[bool]:
        """The value a guard has while Dynamo traces (``is_compiling()`` -> True), or ``None``."""
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            t = self.static_truth(expr.expression)
            return None if t is None else not t
        if isinstance(expr, cst.BooleanOperation):
            return _bool_op_truth(expr.operator, self.static_truth(expr.left), self.static_truth(expr.right))
        if isinstance(expr, cst.Name):
            if expr.value == "TYPE_CHECKING":
                return False
            if expr.value in ("True", "False") and not self.frame.is_bound(expr.value):
                return expr.value == "True"
            return None
        if isinstance(expr, cst.Attribute) and expr.attr.value == "TYPE_CHECKING":
            return False
        if isinstance(expr, cst.Attribute) and expr.attr.value in api.SPARSE_LAYOUT_TESTS:
            # Dynamo holds no sparse tensor: a sparse input ends the frame at its first use
            # ("torch.compile does not support sparse Tensors"), so code that runs traced saw a
            # dense tensor and ``t.is_sparse`` is False there (measured on torch 2.13: the
            # ``to_sparse()`` under ``if x.is_sparse:`` never breaks, for dense or sparse input)
            if self.eval(expr.value).kind is Kind.TENSOR:
                return False
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            found = self._dtype_guard(expr)
            return found if found is not None else self._device_guard(expr)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            callee = self.eval(expr.func)
            if callee.kind is Kind.FUNCTION and isinstance(getattr(callee.ref, "node", None), cst.FunctionDef):
                found = helper_truth(callee.ref, self.settings.target, resolve=self._function_in)
                if found is not None:
                    return found
                if _returns_a_breaking_query(callee.ref):
                    # asteroid's ``is_tracing()``: ``return torch._C._is_tracing()`` breaks inside the
                    # helper; Dynamo resumes with the value it returns eagerly (False outside
                    # ``torch.jit.trace``), which the helper's name still tells below (measured on
                    # torch 2.13: the break at the ``return``, only the branch of that value traced)
                    self.eval(expr)
        if isinstance(expr, cst.Call) and expr.args:
            found = self._hasattr_truth(expr)
            if found is None:
                found = self._function_test_truth(expr)
            if found is None:
                found = self._scalar_isinstance_truth(expr)
            return found if found is not None else self._isinstance_truth(expr)
        if isinstance(expr, cst.Call) and not expr.args:
            q = self.qualname(expr.func)
            known = qualified_guard_truth(q, self.settings.target)
            if known is not None:
                return known
            d = dotted_name(expr.func)
            if d is not None:
                last = d.rsplit(".", 1)[-1]
                if last in api.COMPILING_GUARD_NAMES and (q is None or not q.startswith("torch.") or q in api.COMPILING_GUARDS):
                    if not (isinstance(expr.func, cst.Name) and self.frame.is_bound(expr.func.value)):
                        return api.COMPILING_GUARD_NAMES[last]
        return None

    def _function_in(self, module, name: str):
        """The project function ``name`` stands for at the top level of ``module``, or None."""
        functions = getattr(module, "functions", {})
        qualified = self.star_bound(module, name)
        if qualified is None and name in functions:
            return functions[name]
        qualified = qualified or getattr(module, "siblings", {}).get(name) or module.imports.names.get(name)
        if not qualified or self.project is None:
            return None
        defn = self.project.resolve(module, qualified)
        return defn if isinstance(defn, FunctionInfo) else None

    def _device_guard(self, expr: cst.Comparison) -> Optional[bool]:
        """``x.device.type == "mps"`` under ``--target cudagraphs``: a constant.

        CUDA graphs run on CUDA devices only, and Dynamo guards on a tensor's device, so with
        the ``cudagraphs`` target ``t.device.type`` is ``"cuda"`` and the test is decided
        (``==``, ``!=``, ``in``/``not in`` a literal tuple, list or set of strings).
        """
        if self.settings.target != "cudagraphs":
            return None
        comp = expr.comparisons[0]
        left, right = expr.left, comp.comparator

        def is_device_type(node) -> bool:
            return (
                isinstance(node, cst.Attribute) and node.attr.value == "type"
                and isinstance(node.value, cst.Attribute) and node.value.attr.value == "device"
            )

        if not is_device_type(left):
            if isinstance(comp.operator, (cst.Equal, cst.NotEqual)):
                left, right = right, left
            if not is_device_type(left):
                return None
        if isinstance(comp.operator, (cst.Equal, cst.NotEqual)):
            if not isinstance(right, cst.SimpleString):
                return None
            same = right.evaluated_value == "cuda"
            return same if isinstance(comp.operator, cst.Equal) else not same
        if isinstance(comp.operator, (cst.In, cst.NotIn)) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
            values = [e.value for e in right.elements]
            if not values or not all(isinstance(v, cst.SimpleString) for v in values):
                return None
            inside = any(v.evaluated_value == "cuda" for v in values)
            return inside if isinstance(comp.operator, cst.In) else not inside
        return None

    _LOW_PRECISION = {
        "torch.float16": "float16", "torch.half": "float16", "torch.bfloat16": "bfloat16",
    }

    def _dtype_guard(self, expr: cst.Comparison) -> Optional[bool]:
        """``x.dtype == torch.float16`` while the model runs in another floating dtype: False.

        Dynamo specialises on dtypes (a guard, not a graph break), so such a test is a
        constant and the code it guards is dead for the configured ``compute_dtype``.
        """
        comp = expr.comparisons[0]
        left, right = expr.left, comp.comparator
        if not (isinstance(left, cst.Attribute) and left.attr.value == "dtype"):
            left, right = right, left
        if not (isinstance(left, cst.Attribute) and left.attr.value == "dtype"):
            return None
        dtypes = right.elements if isinstance(right, (cst.Tuple, cst.List, cst.Set)) else None
        names = [self.qualname(e.value) for e in dtypes] if dtypes is not None else [self.qualname(right)]
        if not names or any(n not in self._LOW_PRECISION for n in names):
            return None
        if any(self._LOW_PRECISION[n] == self.settings.compute_dtype for n in names):
            return None
        op = comp.operator
        if dtypes is None and isinstance(op, (cst.Equal, cst.Is)):
            return False
        if dtypes is None and isinstance(op, (cst.NotEqual, cst.IsNot)):
            return True
        if dtypes is not None and isinstance(op, cst.In):
            return False
        if dtypes is not None and isinstance(op, cst.NotIn):
            return True
        return None

    def eval_test(self, expr: cst.BaseExpression, construct: str) -> Value:
        """Evaluate an expression whose truthiness is taken; emit test events on its leaves.

        The operands of ``and``/``or`` are tested one by one, as Python does: one that decides the
        result (``x is None or ...`` with ``x`` known ``None``, ``not torch.is_tensor(t) and ...``
        with ``t`` a tensor) leaves the rest unevaluated, and Dynamo, which specialises on it,
        never traces them.  (A finding on an operand written on a later line than its ``if`` is
        reported on the statement's line: see :func:`pt2lint.analysis.driver.analyse_project`.)
        """
        if isinstance(expr, cst.BooleanOperation):
            left = self.eval_test(expr.left, construct)
            known = _known_truth(left)
            if known is None and not isinstance(expr.left, cst.BooleanOperation):
                # (a chain ``a and b and c`` nests to the left: its inner operations returned a
                # decided value already, and asking each level again would be quadratic)
                known = self.static_truth(expr.left)
            if known is not None and known == isinstance(expr.operator, cst.Or):
                # ``False and ...``, ``True or ...``: the right side is not evaluated
                return left if _known_truth(left) is not None else const(known)
            mode = self._narrow(expr.left) if self.frame is not None else None
            if mode is not None:
                # the right operand runs only where the left one is true (``and``) or false (``or``):
                # ``not isinstance(t, (int, float)) or t != 1`` compares a Python number on the right
                right = self._eval_narrowed(expr.right, mode[0] if isinstance(expr.operator, cst.And) else mode[1], test=construct)
            else:
                right = self.eval_test(expr.right, construct)
            # ``x and not torch.compiler.is_compiling()`` is falsy whatever ``x`` is: a guard that
            # is constant while tracing decides the test (a value known only from a default,
            # ``self.layerdrop > 0.0`` with a config's 0.0, does not: it joins as before)
            decided = self.static_truth(expr.right) if not isinstance(expr.right, cst.BooleanOperation) else None
            if decided is not None and decided == isinstance(expr.operator, cst.Or):
                return const(decided)
            return join(left, right)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            v = self.eval_test(expr.expression, construct)
            if v.kind in (Kind.DATA, Kind.TENSOR):
                return DATA
            known = _known_truth(v)  # ``not PROFILE`` of a known flag is known too
            return const(not known) if known is not None else CONST
        if isinstance(expr, cst.NamedExpr):
            v = self.eval(expr)
        else:
            v = self.eval(expr)
        if _is_hook_handle(v, surely=True):
            self._hook_handle_used(expr, construct)
        if _numpy_ref(v) in _NUMPY_PART_REFS:
            v = Value(Kind.TENSOR, bool_tensor=True, ref=NUMPY_TEST)  # ``if self.arr[0]:`` (see NUMPY_ELEMENT)
        if v == RANDOM_DRAW:
            # Branching on a value drawn by ``random`` (or a comparison with one) breaks: Dynamo holds
            # the draw as an unspecialised graph input (measured on torch 2.13: ``i = r.randrange(1, 4)``
            # then ``if 2 > i:`` breaks at the ``if``, "generic_jump UnspecializedPythonVariable").  The
            # frame resumes with the draws as plain numbers, so once per frame.  A break on Python
            # arithmetic with the draw (``on_random_arith``) may sit on another path (a branch not
            # taken), so it does not count here.
            if id(self.frame) in self._random_branch_frames:
                v = DATA
            else:
                self._random_branch_frames.add(id(self.frame))
        self.emit("on_test", TestEvent(expr, v, construct))
        return v

    def qualname(self, expr: cst.BaseExpression) -> Optional[str]:
        """Qualified name of a Name/Attribute chain not shadowed by a local variable."""
        d = dotted_name(expr)
        if d is None:
            return None
        head = d.split(".", 1)[0]
        if self.frame is not None and self.frame.is_bound(head):
            return None
        starred = self.star_bound(self.index, head)
        if starred is not None:
            return starred + d[len(head):]  # ``F.relu`` where ``from .common import *`` bound ``F``
        q = self.index.imports.qualify(expr)
        if q is not None:
            return q
        if head not in self.index.defined_names and head in _BUILTINS:
            return "builtins." + d
        return None

    def star_bound(self, index, name: str) -> Optional[str]:
        """What module-level ``name`` of ``index`` stands for when its last binding there is a
        ``from m import *`` (a qualified name), else ``None``: see
        :meth:`~pt2lint.analysis.project.ProjectModel.star_binding`."""
        if not getattr(index, "star_imports", None) or self.project is None:
            return None
        key = (id(index), name)
        if key not in self._starred:
            self._starred[key] = self.project.star_binding(index, name)
        return self._starred[key]

    def eval(self, node: Optional[cst.BaseExpression]) -> Value:
        if node is None:
            return NONE
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            return UNKNOWN
        return method(node)

    def eval_Name(self, node: cst.Name) -> Value:
        name = node.value
        if not name.isascii():
            name = identifier(name)
        # no frame while class attributes are collected before any function runs (an annotation
        # of a constructor parameter read for a construction site): only module names are bound
        v = self.frame.lookup(name) if self.frame is not None else None
        if v is not None:
            return v
        if name in ("True", "False"):
            return const(name == "True")
        if name == "None":
            return NONE
        return self.global_value(name)

    def global_value(self, name: str) -> Value:
        idx = self.index
        gkey = (id(idx), name)
        if gkey in self.globals:
            return self.globals[gkey]
        starred = self.star_bound(idx, name)
        if starred is not None:
            v = self.project_value(starred)  # the module's last binding of the name is a ``from m import *``
        elif name in idx.functions:
            v = Value(Kind.FUNCTION, ref=idx.functions[name])
        elif name in idx.classes and name not in idx.imports.names:
            v = Value(Kind.CLASS, ref=idx.classes[name])
        elif name in idx.siblings:
            v = self.project_value(idx.siblings[name])  # a top-level def of the same file, parsed on demand
        elif name in idx.imports.names:
            v = self.project_value(idx.imports.names[name])
        elif name in idx.global_exprs and gkey not in self._globals_busy:
            v = self._module_global(idx, name)
        elif name in _ALIASED_BUILTINS:
            v = Value(Kind.UNKNOWN, ref=f"builtins.{name}")  # ``p = print`` then ``p(x)``: the builtin's calls
        else:
            v = UNKNOWN
        self.globals[gkey] = v
        return v

    def _module_global(self, idx: ModuleIndex, name: str) -> Value:
        """The value of module-level ``name = expr`` in module ``idx`` (evaluated there, silently)."""
        gkey = (id(idx), name)
        if gkey in self.globals:
            return self.globals[gkey]
        if gkey in self._globals_busy:
            return UNKNOWN
        self._globals_busy.add(gkey)
        saved = self.frame, self.index
        self.silent += 1
        self.frame = Frame(None, {}, None, None, (), None, None)
        self.index = idx
        try:
            v = self.eval(idx.global_exprs[name])
        finally:
            self.frame, self.index = saved
            self.silent -= 1
            self._globals_busy.discard(gkey)
        v = replace(v, alias_of=None) if v.alias_of else v
        self.globals[gkey] = v
        return v

    def project_value(self, qualified: str) -> Value:
        """The value an imported name stands for: a project function, class or module constant when
        :class:`~pt2lint.analysis.project.ProjectModel` resolves it, else an unknown carrying the name."""
        defn = self.project.resolve(self.index, qualified) if self.project is not None else None
        v = self._definition_value(defn)
        return v if v is not None else Value(Kind.UNKNOWN, ref=qualified)

    def _definition_value(self, defn) -> Optional[Value]:
        if defn is None:
            return None
        if isinstance(defn, FunctionInfo):
            return Value(Kind.FUNCTION, ref=defn)
        if isinstance(defn, ClassInfo):
            return Value(Kind.CLASS, ref=defn)
        from pt2lint.analysis.project import GlobalRef

        if isinstance(defn, GlobalRef):
            return self._module_global(defn.index, defn.name)
        return None

    def _project_qualified(self, expr: cst.BaseExpression, qual: Optional[str]) -> Optional[Value]:
        """A project definition for ``pkg.mod.fn``-style chains rooted in an imported name, else ``None``."""
        if qual is None or self.project is None or qual.startswith(("torch.", "builtins.", "numpy.", "math.")):
            return None
        if self.index.imports.qualify(expr) is None:
            d = dotted_name(expr)
            if d is None or self.star_bound(self.index, d.split(".", 1)[0]) is None:
                return None
        defn = self.project.resolve(self.index, qual)
        if defn is None:
            # ``from .util import warn`` where util binds ``warn = warnings.warn``: the library's own
            external = self.project.external_name(self.index, qual)
            return Value(Kind.UNKNOWN, ref=external) if external is not None else None
        return self._definition_value(defn)

    def _literal(self, node) -> Optional[Value]:
        if isinstance(node, cst.Integer):
            try:
                return const(int(node.value.replace("_", ""), 0))
            except ValueError:
                return CONST
        if isinstance(node, cst.Float):
            try:
                return const(float(node.value.replace("_", "")))
            except ValueError:
                return CONST
        if isinstance(node, cst.SimpleString):
            text = _short_string_value(node.value)
            return const(text) if text is not None else CONST
        if isinstance(node, (cst.ConcatenatedString, cst.FormattedString, cst.Imaginary)):
            return CONST
        return None

    def eval_Integer(self, node) -> Value:
        return self._literal(node)

    eval_Float = eval_Integer
    eval_Imaginary = eval_Integer
    eval_SimpleString = eval_Integer
    eval_ConcatenatedString = eval_Integer

    def eval_FormattedString(self, node: cst.FormattedString) -> Value:
        lazy = False
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                v = self.eval(part.expression)
                if part.conversion == "r":
                    # ``f"{t!r}"`` calls ``repr(t)`` while tracing: "repr() on tensor" (GB0569)
                    self._emit_formatted(part.expression, (v,))
                elif _formats_a_tensor(v):
                    lazy = True
        return LAZY_TENSOR_TEXT if lazy else CONST

    def eval_Ellipsis(self, node) -> Value:
        return CONST

    def eval_Tuple(self, node: cst.Tuple) -> Value:
        return container(elts=self._elements(node.elements))

    eval_List = eval_Tuple

    def eval_Set(self, node: cst.Set) -> Value:
        return container(elts=self._elements(node.elements))

    def _elements(self, elements) -> List[Value]:
        out = []
        for el in elements:
            if isinstance(el, cst.StarredElement):
                v = self.eval(el.value)
                if v.elts is not None:
                    out.extend(v.elts)
                else:
                    return [v.element()] * 0 + [v.element()]
            else:
                out.append(self.eval(el.value))
        return out

    def eval_Dict(self, node: cst.Dict) -> Value:
        vals = []
        items: Optional[List[Tuple[str, Value]]] = []  # while every key is a known string
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                key_value = self.eval(el.key)
                if key_value.kind is Kind.SHAPE:
                    self.emit("on_key", KeyEvent(el.key, key_value, el.key, "literal"))
                v = self.eval(el.value)
                vals.append(v)
                key = el.key.evaluated_value if isinstance(el.key, cst.SimpleString) else None
                if items is not None and isinstance(key, str):
                    items = [kv for kv in items if kv[0] != key] + [(key, v)]
                else:
                    items = None
            else:
                splat = self.eval(el.value)
                vals.append(splat.element())
                if items is not None and splat.keys is not None and splat.elts is not None:
                    for key, v in zip(splat.keys, splat.elts):
                        items = [kv for kv in items if kv[0] != key] + [(key, v)]
                else:
                    items = None
        if items is not None:
            return keyed_dict(items)
        return Value(Kind.CONTAINER, elt=_join_all(vals) if vals else UNKNOWN)

    def _comprehension(self, node, elt_nodes) -> Value:
        saved_env = self.frame.env
        self.frame.env = dict(saved_env)
        try:
            f = node.for_in
            first = True
            while f is not None:
                it = self.eval(f.iter)
                self.bind(f.target, it.element())
                for cond in f.ifs:
                    self.eval_test(cond.test, "comprehension")
                f = f.inner_for_in
                first = False
            vals = [self.eval(e) for e in elt_nodes]
        finally:
            self.frame.env = saved_env
        del first
        return vals[-1] if vals else UNKNOWN

    def eval_ListComp(self, node) -> Value:
        return container(elt=self._comprehension(node, [node.elt]))

    eval_SetComp = eval_ListComp

    def eval_GeneratorExp(self, node) -> Value:
        return replace(self.eval_ListComp(node), iterator="generator")

    def eval_DictComp(self, node: cst.DictComp) -> Value:
        return Value(Kind.CONTAINER, elt=self._comprehension(node, [node.key, node.value]))

    def eval_Lambda(self, node: cst.Lambda) -> Value:
        """A lambda is a local function closing over the current frame (one per frame and lambda,
        so a loop that rebinds it reaches a fixed point)."""
        frame = self.frame
        if frame is None:
            return Value(Kind.FUNCTION, ref=node)
        key = (id(node), id(frame))
        info = self._lambdas.get(key)
        if info is None:
            chain = frame.chain[-1] if frame.chain else ""
            info = lambda_function(node, self.stmt, f"{chain}.<locals>.<lambda>".lstrip("."), None)
            info.closure = frame
            info.module = self.index
            self._lambdas[key] = info
            self._lambda_keep.append((node, frame))  # the ids in the key stay those objects'
        return Value(Kind.FUNCTION, ref=info)

    def lambda_result(self, node: cst.Lambda, args: Sequence[Value]) -> Optional[Value]:
        """The value ``node``'s body has when its positional parameters take ``args``.

        The body is evaluated silently (no events, so no findings) in a copy of the
        current frame's names, which is the lambda's own closure only when ``node``
        is written where it is called from (a ``key=lambda ...`` argument): callers
        pass such a node and no other.

        Args:
            node: the ``lambda`` expression.
            args: one value per parameter, in order.

        Returns:
            The body's value, or None when the parameters are not exactly
            ``len(args)`` plain positional ones without defaults, or there is no frame.
        """
        ps = node.params
        if (
            self.frame is None
            or len(ps.params) != len(args)
            or ps.posonly_params
            or ps.kwonly_params
            or isinstance(ps.star_arg, cst.Param)
            or ps.star_kwarg is not None
            or any(p.default is not None for p in ps.params)
        ):
            return None
        saved_env = self.frame.env
        self.frame.env = dict(saved_env)
        self.silent += 1
        try:
            for p, v in zip(ps.params, args):
                self.bind(p.name, v)
            return self.eval(node.body)
        finally:
            self.silent -= 1
            self.frame.env = saved_env

    def eval_NamedExpr(self, node: cst.NamedExpr) -> Value:
        v = self.eval(node.value)
        self.bind(node.target, v)
        return v

    def eval_Await(self, node) -> Value:
        self.eval(node.expression)
        return UNKNOWN

    def eval_Yield(self, node: cst.Yield) -> Value:
        if isinstance(node.value, cst.From):
            v = self.eval(node.value.item).element()
        else:
            v = self.eval(node.value) if node.value is not None else NONE
        if self.frame is not None:
            self.frame.yields.append(v)
            if self.frame.func is not None:
                self.frame.func.is_generator = True
        return UNKNOWN

    def eval_IfExp(self, node: cst.IfExp) -> Value:
        truth = self.static_truth(node.test)
        if truth is True:
            return self.eval(node.body)
        if truth is False:
            return self.eval(node.orelse)
        known = _known_truth(self.eval_test(node.test, "ifexp"))
        if known is not None:
            return self.eval(node.body) if known else self.eval(node.orelse)
        narrowed = self._narrow(node.test) or ({}, {})
        if not self._arms_alternate(node.test):
            return _join_candidates([self._eval_narrowed(node.body, narrowed[0]), self._eval_narrowed(node.orelse, narrowed[1])])
        arms = _Alternatives(self)
        by_default = self._default_truth(node.test)
        arms.default = None if by_default is None else 0 if by_default else 1
        body = self._eval_narrowed(node.body, narrowed[0])
        arms.next()
        orelse = self._eval_narrowed(node.orelse, narrowed[1])
        arms.close()
        return _join_candidates([body, orelse])

    def _eval_narrowed(self, expr: cst.BaseExpression, narrowed: Dict[str, Value], test: Optional[str] = None) -> Value:
        """The value of one arm of a conditional expression, with the names its test narrows
        (:meth:`_narrow`: ``n if n is not None else 4`` reads a ``n`` that is not ``None``) holding
        their narrowed values while it is evaluated; the frame's values are restored after (an
        arm that rebinds one of them, ``(n := 0)``, keeps its own).  ``test``: the construct
        whose truth is taken (``"if"``, ``"and"``...) when ``expr`` is an operand of a test
        (:meth:`eval_test`), ``None`` for a value."""
        if not narrowed:
            return self.eval(expr) if test is None else self.eval_test(expr, test)
        env = self.frame.env
        saved = {name: env.get(name) for name in narrowed}
        env.update(narrowed)
        try:
            return self.eval(expr) if test is None else self.eval_test(expr, test)
        finally:
            for name, old in saved.items():
                if env.get(name) is narrowed[name] and old is not None:
                    env[name] = old

    def eval_BooleanOperation(self, node: cst.BooleanOperation) -> Value:
        # Outside a test, only the left operand's truthiness is taken (to short-circuit): a left
        # operand decided while tracing (``... and not is_compiling()``) leaves the right one
        # unevaluated, as it is in Python (``non_blocking = ... and not t.is_pinned()``).
        left = self.eval_test(node.left, "and" if isinstance(node.operator, cst.And) else "or")
        known = _known_truth(left)
        if known is None and not isinstance(node.left, cst.BooleanOperation):
            known = self.static_truth(node.left)
        if known is not None and known == isinstance(node.operator, cst.Or):
            return left if _known_truth(left) is not None else const(known)
        right = self.eval(node.right)
        return join(left, right)

    def eval_UnaryOperation(self, node: cst.UnaryOperation) -> Value:
        if isinstance(node.operator, cst.Not):
            v = self.eval_test(node.expression, "not")
            if v.kind in (Kind.DATA,):
                return DATA
            known = _known_truth(v)
            return const(not known) if known is not None else CONST
        v = self.eval(node.expression)
        if _numpy_ref(v) is not None:
            return v  # ``-self.arr[0]``: still a part of the traced array
        if v.kind is Kind.TENSOR:
            return Value(Kind.TENSOR, bool_tensor=v.bool_tensor and isinstance(node.operator, cst.BitInvert), weak=v.weak)
        if v.kind in (Kind.CONST, Kind.SHAPE, Kind.DATA):
            if isinstance(node.operator, cst.Minus) and v.const is not None and isinstance(v.const, (int, float)):
                return const(-v.const)
            return Value(v.kind)
        return UNKNOWN

    def _numpy_part(self, base: Value) -> Optional[Value]:
        """An element, slice, iterate or array-method result of ``base`` when it is a NumPy array value:
        a NumPy value while the module is built (plain NumPy: ``self.n = self.arr[0]`` stores a NumPy
        scalar, see :data:`NUMPY_VALUE`), a traced part in compiled code (:data:`NUMPY_ELEMENT`); else
        ``None``."""
        if _numpy_ref(base) not in _NUMPY_ARRAY_REFS:
            return None
        return NUMPY_VALUE if self._constructing else NUMPY_ELEMENT

    def binop(self, a: Value, b: Value, op: str) -> Value:
        na, nb = _numpy_ref(a), _numpy_ref(b)
        if (na in _NUMPY_ARRAY_REFS or nb in _NUMPY_ARRAY_REFS) and Kind.TENSOR not in (a.kind, b.kind):
            return Value(Kind.TENSOR)  # arithmetic on a NumPy value is traced through torch._numpy (see NUMPY_VALUE)
        if NUMPY_NUMBER.ref in (na, nb) and a.kind in (Kind.SHAPE, Kind.CONST) and b.kind in (Kind.SHAPE, Kind.CONST):
            return NUMPY_NUMBER  # arithmetic on an unbacked SymInt stays one (see NUMPY_NUMBER)
        if NUMPY_ELEMENT.ref in (na, nb) and all(v.kind in (Kind.SHAPE, Kind.CONST) or _numpy_ref(v) is not None for v in (a, b)):
            return NUMPY_ELEMENT  # ``self.arr[0] * 2``: still a 0-d tensor traced from the array
        if a.kind is Kind.TENSOR or b.kind is Kind.TENSOR:
            is_bool = op in ("&", "|", "^") and (a.bool_tensor or a.kind is not Kind.TENSOR) and (b.bool_tensor or b.kind is not Kind.TENSOR)
            # bool * bool stays bool (torch's type promotion: ``mask * (p == 1)`` is a mask)
            is_bool = is_bool or (op == "*" and a.kind is b.kind is Kind.TENSOR and a.bool_tensor and b.bool_tensor)
            weak = (a.kind is not Kind.TENSOR or a.weak) and (b.kind is not Kind.TENSOR or b.weak)
            if a.kind is Kind.TENSOR and b.kind is Kind.TENSOR:
                weak = a.weak and b.weak
            zero_d = rank0.binop_result(a, b, op, weak)
            if zero_d is not None:
                # ``x.argmax() % 3``, ``(v.mean() * n).long()``: still 0-d (an index read as a SymInt)
                return zero_d
            return Value(Kind.TENSOR, bool_tensor=is_bool, weak=weak)
        if a.kind is Kind.DATA or b.kind is Kind.DATA:
            return DATA
        if a.kind in (Kind.SHAPE, Kind.CONST) and b.kind in (Kind.SHAPE, Kind.CONST):
            if a.kind is Kind.CONST and b.kind is Kind.CONST:
                return CONST
            if op in ("+", "-", "*", "/", "//", "%", "**") and _one_number(a) and _one_number(b):
                return SIZE  # ``h * w``, ``n // 2``: one size
            return SHAPE
        if a.kind is Kind.CONTAINER and b.kind is Kind.CONTAINER and op == "|" and a.keys is not None and b.keys is not None:
            # ``d | {"n": 3}``: the union of two dicts with known keys, the right one winning
            left, right = dicts.known_entries(a) or {}, dicts.known_entries(b) or {}
            merged = {**left, **right}
            return dicts.open_dict(merged) if dicts.is_open(a) or dicts.is_open(b) else keyed_dict(merged.items())
        if a.kind is Kind.CONTAINER and b.kind is Kind.CONTAINER and op == "+":
            if a.elts is not None and b.elts is not None:
                return container(elts=a.elts + b.elts)
            return container(elt=join(a.element(), b.element()))
        if a.kind is Kind.CONTAINER and op == "*":
            return container(elt=a.element())
        return UNKNOWN

    def eval_BinaryOperation(self, node: cst.BinaryOperation) -> Value:
        a = self.eval(node.left)
        b = self.eval(node.right)
        if isinstance(node.operator, cst.Modulo) and _is_string_node(node.left):
            # ``"%dx%d" % (h, w)``: printf-style formatting makes a string whatever the operands
            operands = b.elts if b.kind is Kind.CONTAINER and b.elts is not None and b.keys is None else (b,)
            self._emit_formatted(node, operands)
            return CONST
        if a is LAZY_TENSOR_TEXT or b is LAZY_TENSOR_TEXT:
            # ``s + "!"``: Dynamo builds the text here (reported at the unbuilt operand)
            self._lazy_text_used(node.left if a is LAZY_TENSOR_TEXT else node.right)
            return CONST
        if (a == RANDOM_DRAW or b == RANDOM_DRAW) and a.kind in _PY_NUMBER_KINDS and b.kind in _PY_NUMBER_KINDS:
            # after that break the frame resumes with the draws as plain Python numbers
            # (measured: ``f0:f0 + f`` on the next line did not break), so once per frame
            if id(self.frame) not in self._random_arith_frames:
                self._random_arith_frames.add(id(self.frame))
                self.emit("on_random_arith", RandomArithEvent(node))
        return _python_float_arith(self.binop(a, b, _bin_symbol(node.operator)), a, b, node.operator)

    def _lazy_text_used(self, node: cst.CSTNode) -> None:
        """The text of an f-string (or ``"...".format``) of a tensor is used here: the break is at this node."""
        self._emit_formatted(node, (TENSOR,))

    def _emit_formatted(self, node: cst.CSTNode, values) -> None:
        """Emit a :class:`FormatEvent` per value formatted into a string where Dynamo needs the text
        at once: ``"%d" % t`` (GB0033; ``"%s" % t``: GB0208), ``str(t)``, ``f"{t!r}"`` (GB0569), and
        the use of a lazy text (:data:`LAZY_TENSOR_TEXT`).

        Measured on torch 2.13: an f-string or ``"{}".format(t)`` of a tensor does not break where it
        is written; Dynamo keeps the text unbuilt and builds it after the graph, so appending it to a
        list, returning it or using it as a dict key compiles into one graph, while ``s + "!"``,
        ``s.upper()`` or ``len(s)`` break at that line (GB3934, GB0156, GB0088).
        ``"%d" % x.shape[0]`` traces.
        """
        if not self.wants("on_format"):
            return
        for v in values:
            self.emit("on_format", FormatEvent(node, v))

    def eval_Comparison(self, node: cst.Comparison) -> Value:
        left = self.eval(node.left)
        comp_left: cst.BaseExpression = node.left
        result: Optional[Value] = None
        folded: Optional[bool] = True  # all links so far compare known constants (and hold)
        for comp in node.comparisons:
            right = self.eval(comp.comparator)
            op = comp.operator
            if (left is LAZY_TENSOR_TEXT or right is LAZY_TENSOR_TEXT) and not isinstance(op, (cst.Is, cst.IsNot)):
                self._lazy_text_used(node)
            if any(_is_hook_handle(v, surely=True) for v in (left, right)):
                # (a handle that may be None -- set by a method forward does not call -- may not exist)
                self._hook_handle_used(node, cst.Module(body=[]).code_for_node(op).strip())
            known = _fold_comparison(left, op, right) if folded is not None else None
            folded = None if known is None else (folded and known)
            if isinstance(op, (cst.Is, cst.IsNot)):
                r = CONST
                is_none = _is_none_test(left, comp.comparator, right) if len(node.comparisons) == 1 else None
                if is_none is True and not (
                    self._fixed_parameter(node.left) or self._straight_line_name(node.left) or self._field_of_object_built_here(node.left)
                ):
                    is_none = None
                if is_none is None and len(node.comparisons) == 1 and self._surely_not_none_here(node.left, left, comp.comparator, right):
                    is_none = False
                if is_none is not None:
                    return const(is_none if isinstance(op, cst.Is) else not is_none)
            elif isinstance(op, (cst.In, cst.NotIn)):
                if left.kind is Kind.SHAPE and right.kind is Kind.CONTAINER and right.keys is not None and len(node.comparisons) == 1:
                    self.emit("on_key", KeyEvent(node, left, node.left, "in", comp.comparator))
                sure = right.kind is Kind.TENSOR and (
                    not right.weak
                    # ``ids[:, [-1, 0]]``: an index only an array takes
                    or (isinstance(comp.comparator, cst.Subscript) and _array_only_index(comp.comparator))
                )
                if sure and (
                    isinstance(left.const, str) or isinstance(comp_left, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
                    or left.kind in (Kind.CONTAINER, Kind.NONE)
                ):
                    # ``"scale" in t``, ``et in t`` with ``et`` a tuple of names, ``None in t``: each
                    # raises for a tensor ``t`` (``Tensor.__contains__`` takes a Tensor, Number, SymInt,
                    # SymFloat or SymBool, else "only supports Tensor or scalar", torch/_tensor.py on
                    # 2.13): code that runs has no tensor there (a dict of tensors, or a caller's
                    # ``dict[str, Tensor]`` annotation that took the dict for one of its tensors)
                    sure = False
                if sure:
                    # ``v in t`` is ``(t == v).any().item()``: the read happens here, branched on or not
                    # (measured on torch 2.13: GB0124 for ``a = 3 in ids`` and ``if 0 not in ids:``);
                    # Dynamo resumes with a Python bool
                    self.emit("on_tensor_contains", TestEvent(node, right, "in"))
                    r = CONST
                else:
                    r = CONST if right.kind in (Kind.CONST, Kind.CONTAINER) else UNKNOWN
            elif isinstance(op, (cst.Equal, cst.NotEqual)) and (_eq_answers_bool(left) or _eq_answers_bool(right)):
                # ``t == None``, ``t == "fp6"``, ``t == torch.float16``: ``Tensor.__eq__`` answers a Python
                # bool (False) for a value that is no number or tensor, and Dynamo folds it (measured on
                # torch 2.13: no break for ``if wcos == None or ...`` nor ``elif elem_dtype == "fp6":``)
                other = right if _eq_answers_bool(left) else left
                sure = other.kind is Kind.TENSOR and not other.weak and not other.maybe_none
                r = const(isinstance(op, cst.NotEqual)) if sure else CONST
            elif (_numpy_ref(left) is not None or _numpy_ref(right) is not None) and not (
                (left.kind is Kind.TENSOR and _numpy_ref(left) is None) or (right.kind is Kind.TENSOR and _numpy_ref(right) is None)
            ):
                # traced through torch._numpy (see NUMPY_VALUE, NUMPY_ELEMENT, NUMPY_NUMBER)
                r = Value(Kind.TENSOR, bool_tensor=True, ref=NUMPY_TEST)
            elif left.kind is Kind.TENSOR or right.kind is Kind.TENSOR:
                weak = (left.kind is not Kind.TENSOR or left.weak) and (right.kind is not Kind.TENSOR or right.weak)
                r = Value(Kind.TENSOR, bool_tensor=True, weak=weak)
            elif (left == RANDOM_DRAW or right == RANDOM_DRAW) and left.kind in _PY_NUMBER_KINDS and right.kind in _PY_NUMBER_KINDS:
                r = RANDOM_DRAW  # a comparison with a draw is data too: branching on it breaks (see eval_test)
            elif left.kind is Kind.DATA or right.kind is Kind.DATA:
                r = DATA
            elif left.kind in (Kind.SHAPE, Kind.CONST, Kind.NONE) and right.kind in (Kind.SHAPE, Kind.CONST, Kind.NONE):
                r = SHAPE if Kind.SHAPE in (left.kind, right.kind) else CONST
            else:
                r = UNKNOWN
            result = r if result is None else (r if r.kind is Kind.TENSOR else join(result, r) if result.kind is not Kind.TENSOR else result)
            left, comp_left = right, comp.comparator
        if folded is not None:
            return const(bool(folded))  # ``mode == "norm"`` with ``mode`` a known string: Dynamo specialises
        return result or UNKNOWN

    def _eval_slices(self, node: cst.Subscript) -> Value:
        """The value of ``node``'s index (a container of them for ``a[i, j]``; ``CONST`` for a
        slice).  Sets ``_slice_bounds`` to the tensor bounds of its slices and ``_slice_parts`` to
        ``(lower, upper, step)`` of a lone slice (``None`` where absent, the ``int`` where known,
        ``_UNKNOWN_BOUND`` otherwise; ``None`` for no lone slice)."""
        vals = []
        bounds: list = []
        parts: Optional[tuple] = None
        for el in node.slice:
            s = el.slice
            if isinstance(s, cst.Index):
                vals.append(self.eval(s.value))
            else:
                known: list = []
                for part in (s.lower, s.upper, s.step):
                    if part is None:
                        known.append(None)
                        continue
                    v = self.eval(part)
                    if (v.kind is Kind.TENSOR and not v.weak) or v == RANDOM_DRAW:
                        bounds.append((part, v))
                    plain = v.kind is Kind.CONST and type(v.const) is int and not v.weak
                    known.append(v.const if plain else _UNKNOWN_BOUND)
                if len(node.slice) == 1:
                    parts = tuple(known)
                vals.append(CONST)
        self._slice_bounds, self._slice_parts = bounds, parts
        if len(vals) == 1:
            return vals[0]
        return container(elts=vals)

    def eval_Subscript(self, node: cst.Subscript) -> Value:
        base = self.eval(node.value)
        index = self._eval_slices(node)
        part = self._numpy_part(base)
        if part is not None:
            return part
        entry = self._class_dict_entry(base, index)
        if entry is not None:
            return entry
        index_node = node.slice[0].slice.value if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) else None
        if base.kind is Kind.TENSOR and _string_key(index):
            # ``batch["mode"]``: no tensor takes a string index, so what was taken for a tensor
            # (a ``forward`` parameter) is a mapping, and its entry is of unknown kind; it is the
            # caller's object all the same (``cache["k"][:, :n] = x`` writes the input's tensor)
            return Value(Kind.UNKNOWN, alias_of=base.alias_of) if base.alias_of else UNKNOWN
        if base.kind is Kind.TENSOR:
            self.emit("on_index", IndexEvent(node, base, index, index_node, tuple(self._slice_bounds)))
            if base.ref in (ONE_D_INT_TENSOR, ONE_D_FLOAT_TENSOR) and not base.weak and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                return base  # ``self.timesteps[:-1]``: a slice of a 1-d tensor is 1-d, same dtype
            element = rank0.element_result(base, index) if len(node.slice) == 1 else None
            if element is not None:
                return element  # ``torch.randint(0, n, (1,))[0]``: 0-d
            basic = _is_basic_index(index)
            return Value(
                Kind.TENSOR,
                bool_tensor=base.bool_tensor,
                weak=base.weak,
                alias_of=base.alias_of if basic else None,
                ref="dynamic" if index.bool_tensor else None,
            )
        if base.kind is Kind.SHAPE:
            if index_node is not None and (_one_number(index) or (index.kind is Kind.CONST and index.const is None)):
                return SIZE if base.ref != "dynamic" else replace(SIZE, ref="dynamic")  # ``x.shape[-1]``: one size
            return SHAPE
        if base.kind is Kind.DATA:
            return DATA
        if base.kind is Kind.CONTAINER:
            if (
                base.keys is None and base.elts is not None and not base.weak and index.kind is Kind.TENSOR
                and not index.weak and index_node is not None and not dicts.is_open(base)
            ):
                # a list or tuple whose elements are known (a dict of unknown keys looks alike)
                self.emit("on_sequence_index", IndexEvent(node, base, index, index_node))
            if objects.is_record(base) and index.kind is Kind.CONST and isinstance(index.const, int) and not isinstance(index.const, bool):
                try:
                    return base.elts[index.const]
                except IndexError:
                    return UNKNOWN
            if (
                base.elts and len(base.elts) > 1 and index_node is not None
                and (index.kind is not Kind.CONST or index.const is None) and index.kind is not Kind.TENSOR
            ):
                # ``SOLVERS[method]``: a key of unknown value into a literal of classes (or of
                # functions) picks one of them
                picked = objects.one_of(base.elts)
                if picked is not None:
                    return picked
            if dicts.is_open(base) and _string_key(index):
                hit = dicts.known_entries(base).get(index.const)
                if hit is not None:
                    return hit
            if base.keys is not None:
                if index.kind is Kind.SHAPE and index_node is not None:
                    self.emit("on_key", KeyEvent(node, index, index_node, "read", node.value))
                if index.kind is Kind.CONST and isinstance(index.const, str):
                    hit = base.item(index.const)
                    return hit if hit is not None else UNKNOWN
                return _guess(base.element())
            if base.elts is not None and index.kind is Kind.CONST and isinstance(index.const, int):
                try:
                    return base.elts[index.const]
                except IndexError:
                    return UNKNOWN
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
                return base
            if index.kind is Kind.UNKNOWN and base.elts is not None:
                # which element an index of unknown kind picks is unknown: a guess, not a sure tensor
                return _guess(base.element())
            return base.element()
        if base.kind is Kind.MODULE:
            listed = base.elt is not None or (type(base.ref) is str and base.ref.rsplit(".", 1)[-1] in ("ModuleList", "Sequential", "ParameterList"))
            if listed and index.kind is Kind.TENSOR and not index.weak and index_node is not None:
                # ``self.heads[i]`` with ``i`` a tensor: the container's ``__getitem__`` reads it as an
                # int (measured on torch 2.13: GB0124, ``Tensor.item()`` inside ``container.py``)
                self.emit("on_sequence_index", IndexEvent(node, base, index, index_node))
            if listed and self._slice_parts is not None:
                # ``self.layers[: self.depth]``: a slice of an ``nn.ModuleList``/``nn.Sequential``
                # is a container of the same class holding those submodules (``__getitem__`` with a
                # slice, torch/nn/modules/container.py); where the bounds or the elements are not
                # known, the container stands for it (it holds every class the slice can)
                lower, upper, step = self._slice_parts
                if base.elts is not None and _UNKNOWN_BOUND not in (lower, upper, step) and step != 0:
                    picked = tuple(base.elts[lower:upper:step])
                    return replace(base, elts=picked, elt=_join_all(list(picked)) if picked else None)
                return base
            if listed and base.elts is not None and index.kind is Kind.CONST and type(index.const) is int and not index.weak:
                if -len(base.elts) <= index.const < len(base.elts):
                    return base.elts[index.const]  # ``self.blocks[0]``: the submodule at that position
            return base.element()
        masked = self._mask_of_unknown(node, base, index, index_node)
        if masked is not None:
            return masked
        if base.alias_of:
            return Value(Kind.UNKNOWN, alias_of=base.alias_of)
        return UNKNOWN

    def _class_dict_entry(self, base: Value, index: Value) -> Optional[Value]:
        """``A.__dict__["it"]`` / ``vars(A)["it"]`` of a class of the project: the value ``A``'s own body
        assigns, as stored (a tensor method stays the plain unbound method: no class lookup runs, and
        Dynamo traces the call as ``torch.Tensor.item(t)``); ``torch._C.TensorBase.__dict__["item"]``: the
        unbound tensor method (measured on torch 2.13: ``vars(torch._C.TensorBase)["item"](t)`` breaks as
        ``t.item()`` does).  ``None`` when ``base`` is no class dict or the key is no constant string."""
        if index.kind is not Kind.CONST or not isinstance(index.const, str) or not index.const.isidentifier():
            return None
        key = index.const
        if base.const == _CLASS_DICT and isinstance(base.ref, ClassInfo):
            v = self.class_level_values(base.ref).get(key)
            if v is None:
                return UNKNOWN
            return replace(v, const=None) if v.const == _STATIC else v
        if base.kind is Kind.UNKNOWN and isinstance(base.ref, str) and base.ref.endswith(".__dict__"):
            owner = base.ref[: -len(".__dict__")]
            if owner in _TENSOR_CLASSES[1:]:  # (``torch.Tensor.__dict__`` lacks the C methods: KeyError)
                return Value(Kind.UNKNOWN, ref=f"{owner}.{key}")
        return None

    def _mask_of_unknown(self, node: cst.Subscript, base: Value, index: Value, index_node) -> Optional[Value]:
        """``y[mask]`` where ``y``'s kind is unknown (the result of a library call the analysis does not
        follow) and ``mask`` is surely a bool tensor: only a tensor (or an array) takes a boolean-mask
        index -- a list, tuple or str raises on a multi-element tensor index and a dict looks it up by
        identity -- so ``y`` is read as a tensor for this index (an ``IndexEvent``), and the selection is
        a tensor of data-dependent size.  The result stays a guess (``weak``): the evidence is the index
        alone.  Returns ``None`` when the rule does not apply.
        """
        if base.kind is not Kind.UNKNOWN or not (index.kind is Kind.TENSOR and index.bool_tensor and not index.weak):
            return None
        self.emit("on_index", IndexEvent(node, replace(base, kind=Kind.TENSOR, weak=True), index, index_node))
        return Value(Kind.TENSOR, weak=True, ref="dynamic")

    def eval_Attribute(self, node: cst.Attribute) -> Value:
        q = self.qualname(node)
        if q is not None and not (isinstance(node.value, cst.Name) and self.frame.is_bound(node.value.value)):
            pv = self._project_qualified(node, q)
            if pv is None and isinstance(node.value, (cst.Name, cst.Attribute)):
                # ``Mode.FAST``, ``Utils.helper`` with the class imported from another project module:
                # looked up on the class as for a class of this file
                owner = self._project_qualified(node.value, q.rpartition(".")[0])
                if owner is not None and owner.kind is Kind.CLASS and isinstance(owner.ref, ClassInfo):
                    return self.attribute(owner, identifier(node.attr.value), node)
            return pv if pv is not None else _qualified_value(q)
        base = self.eval(node.value)
        value = self.attribute(base, identifier(node.attr.value), node)
        self._submodule_read(node, base, value)
        return value

    def _submodule_read(self, node: cst.Attribute, base: Value, value: Value) -> None:
        """``self.lstm`` read (to call it or not): a :class:`SubmoduleAccessEvent` when ``value`` is a
        submodule of a torch class (Dynamo wraps a submodule where it is first read)."""
        if value is None or not (base.kind is Kind.SELF or (base.kind is Kind.MODULE and isinstance(base.ref, ClassInfo))):
            return
        # a submodule that is one of several classes (``self.rnn_v = RNNIdentity()`` in the base's
        # ``__init__``, ``nn.LSTM(...)`` in the subclass's when a flag is on): each torch class counts
        for c in objects.candidates(value) if objects.is_one_of(value) else (value,):
            if c.kind is Kind.MODULE and isinstance(c.ref, str):
                self.emit("on_submodule_access", SubmoduleAccessEvent(node, c.ref))
            elif c.kind is Kind.MODULE and isinstance(c.ref, ClassInfo):
                # a project subclass of a torch module class (``class MyLSTM(nn.LSTM)``): Dynamo
                # decides on the instance, so a refusal of the torch class holds for it too
                # (measured on torch 2.13: GB0014 where ``self.enc`` of an ``nn.LSTM`` subclass is read)
                for base in dict.fromkeys(b for b in c.ref.external_bases() if isinstance(b, str) and b.startswith("torch.")):
                    self.emit("on_submodule_access", SubmoduleAccessEvent(node, base))

    def attribute(self, base: Value, name: str, node: Optional[cst.CSTNode]) -> Value:
        if _is_hook_handle(base):
            if node is not None:
                self._hook_handle_used(node, f".{name}")
            return UNKNOWN
        if objects.is_one_of(base):
            return _join_candidates([self.attribute(c, name, node) for c in base.elts])
        if objects.is_record(base):
            hit = base.item(name)
            if hit is not None:
                return hit
        k = base.kind
        if k in (Kind.SELF, Kind.MODULE) and isinstance(base.ref, ClassInfo):
            return self.self_attribute(base, name)
        if k is Kind.SELF:
            return UNKNOWN  # instances of different classes joined: which class is not known
        if k is Kind.TENSOR:
            if name == "__class__" and not base.weak and not base.maybe_none:
                return Value(Kind.UNKNOWN, ref="torch.Tensor", const=_TENSOR_DUNDER_CLASS)
            if name == "shape":
                return Value(Kind.SHAPE, ref="dynamic" if base.ref == "dynamic" else None)
            if name in api.TENSOR_CONST_ATTRS:
                return CONST
            if name in api.TENSOR_TENSOR_ATTRS:
                return Value(
                    Kind.TENSOR,
                    alias_of=base.alias_of if name in api.TENSOR_VIEW_ATTRS else None,
                    bool_tensor=base.bool_tensor,
                    weak=base.weak,
                    maybe_none=name == "grad",
                )
            # a method not called here (``m = t.item``): calling the value later is ``t.item()``
            return Value(Kind.UNKNOWN, alias_of=base.alias_of, ref=BoundTensorMethod(name, base))
        if k is Kind.MODULE:
            if name == "training":
                return CONST
            if name in ("weight", "bias", "running_mean", "running_var", "in_proj_weight", "in_proj_bias"):
                return TENSOR
            if name in ("in_features", "out_features", "num_features", "eps", "normalized_shape", "kernel_size", "stride", "padding", "num_heads", "embed_dim", "p", "dim", "num_embeddings", "embedding_dim", "in_channels", "out_channels", "groups"):
                return CONST
            return UNKNOWN
        if k is Kind.SUPER:
            cls = base.ref
            if isinstance(cls, ClassInfo):
                m = cls.lookup_method(name, skip_self=True)
                if m is None and name == "__call__" and cls.is_module:
                    m = self._super_module_call(cls)
                if m is not None:
                    return Value(Kind.FUNCTION, ref=m, elt=self.frame.self_value)
            return UNKNOWN
        if k is Kind.CLASS and isinstance(base.ref, ClassInfo):
            if name == "__dict__":
                return Value(Kind.UNKNOWN, ref=base.ref, const=_CLASS_DICT)
            m = base.ref.lookup_method(name)
            if m is not None:
                return Value(Kind.FUNCTION, ref=m)
            if name == "apply" and base.ref.is_autograd_function:
                fwd = base.ref.lookup_method("forward")
                if fwd is not None:
                    return Value(Kind.FUNCTION, ref=fwd, const="autograd.apply")
            for c in base.ref.mro():
                v = self.class_level_values(c).get(name)
                if v is not None:
                    if not name.startswith("_") and v.kind is not Kind.FUNCTION and _is_enum_class(c):
                        # ``Mode.A``: the member, a constant Dynamo specialises on; a name whose value
                        # an earlier name already has is an alias of that member (``B = 1`` after ``A = 1``)
                        if v.kind is not Kind.CONST or v.const is None:
                            return UNKNOWN  # (``auto()``, a tuple: which member it aliases is not known)
                        first = next(
                            (n for n, w in self.class_level_values(c).items()
                             if not n.startswith("_") and w.kind is Kind.CONST and w.const is not None and w.const == v.const),
                            name,
                        )
                        return const(_EnumMember((f"{getattr(c.module, 'path', '') or ''}:{c.name}", first)))
                    return _class_view(v)
            return UNKNOWN
        if k is Kind.CONTAINER and isinstance(base.ref, _Fields) and name in base.ref:
            # ``x.max(dim=-1).values``: a field of a ``torch.return_types`` named tuple
            i = base.ref.index(name)
            return base.elts[i] if base.elts is not None and len(base.elts) == len(base.ref) else base.element()
        if k in (Kind.CONST, Kind.SHAPE):
            return CONST
        if k is Kind.UNKNOWN and isinstance(base.ref, str):
            if _distribution(base) and name in api.DISTRIBUTION_TENSOR_PROPERTIES:
                return TENSOR  # ``Normal(mu, sigma).mean``
            return Value(Kind.UNKNOWN, ref=f"{base.ref}.{name}")
        if base.alias_of:
            return Value(Kind.UNKNOWN, alias_of=base.alias_of)
        return UNKNOWN

    def _super_module_call(self, cls: ClassInfo) -> Optional[FunctionInfo]:
        """``super().__call__`` in a module class whose project bases define no ``__call__``:
        ``nn.Module.__call__``, which runs the instance's ``forward`` (hooks aside)."""
        owner = self.frame.self_value if self.frame is not None else None
        target = owner.ref if owner is not None and owner.kind is Kind.SELF and isinstance(owner.ref, ClassInfo) else cls
        return target.lookup_method("forward")

    def self_attribute(self, base: Value, name: str) -> Value:
        cls: ClassInfo = base.ref
        if name == "training":
            return CONST
        m = cls.lookup_method(name)
        if m is not None:
            if m.kind == "property":
                return self._read_property(m, base)
            return Value(Kind.FUNCTION, ref=m, elt=base)
        attrs = self.class_attrs(cls)
        built = self.built.get(id(cls))
        if built is not None and name in built and (built[name].kind is not Kind.UNKNOWN or name not in attrs):
            return built[name]
        frame = self.frame
        if frame is not None and frame.self_value is not None and frame.self_value.ref is cls:
            here = frame.env.get(_self_slot(name))
            if here is not None:
                return here  # stored earlier in this frame: the last store on this path
        written = self._region_writes.get((id(cls), name))
        if name in attrs:
            v = attrs[name]
            if written is not None and v.kind in (Kind.NONE, Kind.UNKNOWN) and v.ref is None:
                # ``self._params = None`` in ``__init__``, set in ``forward``: what forward stores
                return join(v, written)
            return v
        if written is not None:
            return written  # an attribute only compiled code sets (``self._m = x.max()``), read back
        if cls.is_module and name in ("weight", "bias"):
            return TENSOR
        return UNKNOWN

    def _read_property(self, getter: FunctionInfo, owner: Value) -> Value:
        """The value of reading property ``getter`` on ``owner``: the getter runs through the decorators
        stacked under ``@property`` (``@property @cached(name=...)``), whose wrapper is what Python
        calls on the read, as Dynamo traces it."""
        chain = self.frame.chain if self.frame else ()
        getter.link_decorators()
        if getter.local_decorators:
            return self.invoke(getter, owner, [], {}, chain)
        return self.call_function(getter, owner, {}, {}, chain)

    def class_attrs(self, cls: ClassInfo) -> Dict[str, Value]:
        """``self.<name>`` values assigned by the class's (and its local bases') non-forward methods.

        A class of another project module is collected once per process: its summary
        (:mod:`pt2lint.analysis.foreign`) is replayed into later entries' analyses.
        """
        if cls.attrs_done:
            if self._recording is not None:
                self._recording.touch(cls)
            return cls.attrs
        if self.project is not None and cls.module is not None and cls.module is not self.entry:
            return self._foreign_class_attrs(cls)
        return self._collect_class_attrs(cls)

    def _touch(self, cls: ClassInfo) -> None:
        """About to write ``cls``'s attributes: the collection being recorded remembers its state first."""
        if self._recording is not None:
            self._recording.touch(cls)

    def _foreign_class_attrs(self, cls: ClassInfo) -> Dict[str, Value]:
        """:meth:`class_attrs` of a class defined in another module: replayed from this process's
        summary when one matches, else collected in isolation and summarised."""
        key = foreign.store_key(cls, self.project, self.settings)
        init = cls.methods.get("__init__")
        decided = self.site_parameters(cls, init) if init is not None and init.node is not None else {}
        if key is not None and decided:
            # what the entry's construction sites pass decides attributes: part of the key
            key = key + (tuple(sorted((name, _value_key(v)) for name, v in decided.items())),)
        if key is not None:
            hit = foreign.lookup(key, cls)
            if hit is not None and self._replay_summary(hit):
                return cls.attrs
        foreign.note_computed(cls)
        outer = self._recording
        rec = foreign.Recording()
        rec.touch(cls)
        saved = self._isolate()
        log = self.project.lookup_log
        self.project.lookup_log = rec.loads
        self._recording = rec
        try:
            result = self._collect_class_attrs(cls, decided)
        finally:
            self._recording = outer
            self.project.lookup_log = log
            made = self.instantiated
            self._restore_isolated(saved)
            self.instantiated |= made
        if outer is not None:
            outer.absorb(rec)
        if key is not None:
            summary = self._summarise(cls, rec, made)
            if summary is not None:
                foreign.remember(key, summary)
        return result

    # the interpreter state a foreign attribute collection starts afresh (see :mod:`pt2lint.analysis.foreign`)
    _ISOLATED = (
        "memo", "memo_breaks", "signatures", "_seen_params", "_widenings", "budget", "globals", "_globals_busy", "instantiated", "built",
        "active", "_active_params", "_rewidened", "_reentering", "frames", "_lambdas", "_lambda_keep",
        "fill_guards", "_run_in_loop", "_via_candidates", "_call_node", "_slice_bounds", "_id_keys",
        "_region_writes", "_init_builds", "_slice_parts",
    )

    def _isolate(self) -> tuple:
        saved = tuple(getattr(self, name) for name in self._ISOLATED)
        self.memo, self.memo_breaks, self.signatures, self.budget = {}, {}, {}, MAX_ANALYSES_PER_FILE
        self._seen_params, self._widenings = {}, {}
        self.globals, self._globals_busy, self.instantiated, self.built = {}, set(), set(), {}
        self.active, self._active_params, self._rewidened, self._reentering, self.frames = [], [], set(), None, []
        self._lambdas, self._lambda_keep, self.fill_guards = {}, [], []
        self._run_in_loop, self._via_candidates, self._call_node, self._slice_bounds, self._id_keys = False, None, None, [], {}
        self._region_writes = {}
        self._init_builds = []
        self._slice_parts = None
        return saved

    def _restore_isolated(self, saved: tuple) -> None:
        for name, value in zip(self._ISOLATED, saved):
            setattr(self, name, value)

    def _summarise(self, cls: ClassInfo, rec: "foreign.Recording", made: set) -> Optional["foreign.Summary"]:
        """The portable form of a finished collection, or ``None`` when it cannot be shared."""
        codec = foreign.Codec(self.project, self.entry)
        try:
            classes = tuple(
                (codec.class_handle(c), codec.state(done, attrs), codec.state(c.attrs_done, c.attrs))
                for c, done, attrs in rec.pre.values()
            )
            instantiated = tuple(codec.class_handle(c) for c in made)
        except foreign.NotPortable:
            return None
        paths = set(codec.paths)
        paths.update(op[2] for op in rec.loads if op[0] == "load" and op[2])
        if getattr(self.entry, "path", "") in paths:
            return None
        digests = tuple(sorted((p, self.project.deps.get(p)) for p in paths))
        return foreign.Summary(cls.node, frozenset(paths), tuple(rec.loads), classes, instantiated, digests)

    def _replay_lookups(self, loads, digests) -> bool:
        """Make the project lookups another entry's run made, so this entry's dependency record is
        complete: ``False`` as soon as one finds something else (the import roots include the
        entry's own folder) or a file in ``digests`` (``(path, sha256)`` pairs) has other bytes."""
        for op in loads:
            if op[0] == "load":
                if load_outcome(self.project.load_module(op[1])) != op[2]:
                    return False
            elif self.project._may_bind(op[1], op[2]) != op[3]:
                return False
        return all(self.project.deps.get(p) == digest for p, digest in digests)

    def _replay_summary(self, summary: "foreign.Summary") -> bool:
        """Take a summary's outcome into this analysis; ``False`` (nothing taken) when it does not apply:
        it reaches the entry module, a handle names nothing here, or a class it read is in another state."""
        if getattr(self.entry, "path", "") in summary.paths:
            return False
        if not self._replay_lookups(summary.loads, ()):
            return False
        codec = foreign.Codec(self.project, self.entry)
        try:
            targets = []
            for handle, pre, post in summary.classes:
                c = codec.resolve(handle)
                if codec.state(c.attrs_done, c.attrs) != pre:
                    return False
                targets.append((c, post))
            outcome = [(c, post[0], {name: codec.decode(v) for name, v in post[1]}) for c, post in targets]
            made = [codec.resolve(h) for h in summary.instantiated]
        except foreign.NotPortable:
            return False
        # every module it read has the bytes it had (a long-lived process: the LSP server)
        if any(self.project.deps.get(p) != digest for p, digest in summary.digests):
            return False
        for c, done, attrs in outcome:
            self._touch(c)
            c.attrs_done, c.attrs = done, attrs
        self.instantiated.update(made)
        return True

    def _collect_class_attrs(self, cls: ClassInfo, sites: Optional[Dict[str, Value]] = None) -> Dict[str, Value]:
        """Interpret the class's attribute-setting methods (see :meth:`class_attrs`); ``sites`` is
        :meth:`site_parameters` of its ``__init__`` when the caller has it already."""
        if self._recording is not None:
            self._recording.touch(cls)
        cls.attrs_done = True
        merged: Dict[str, Value] = {}
        for base in reversed(cls.mro()[1:]):
            merged.update(self.class_attrs(base))
        cls.attrs = dict(merged)
        own: Dict[str, Value] = {}
        cls.attrs = own
        self_value = Value(Kind.SELF, ref=cls)
        saved_frame, saved_stmt, saved_header, saved_index = self.frame, self.stmt, self.header, self.index
        if cls.module is not None:
            self.index = cls.module
        self.silent += 1
        try:
            # class-level assignments (``scale = 0.5``, ``_cache: dict = {}``), as an instance sees them
            own.update((name, _instance_view(v)) for name, v in self.class_level_values(cls).items())
            self.frame = Frame(None, {}, None, None, (), cls, None)
            foreign = cls.module is not None and cls.module is not self.entry
            for name, fn in cls.methods.items():
                if name in ("forward", "__call__") or fn.kind in ("staticmethod", "classmethod", "property"):
                    continue
                # a class of another module: its constructor builds the attributes that matter
                # (what the constructor calls is followed); of its other methods only those
                # that set ``self`` state (``setup_caches``-style builders) are read here
                if foreign and name not in _CONSTRUCTION_METHODS and not _stores_self_state(fn.node):
                    continue
                params = {p.name.value: self._attr_param_value(p) for p in list(fn.node.params.params)[1:]}
                params.update((p.name.value, self._attr_param_value(p)) for p in fn.node.params.kwonly_params)
                if name == "__init__":
                    # what every construction site passes is what the model holds: more than an
                    # annotation says (``causal: bool = False`` with ``Unit(causal=False)``)
                    params.update(sites if sites is not None else self.site_parameters(cls, fn))
                for p in list(fn.node.params.params)[1:] + list(fn.node.params.kwonly_params):
                    if params.get(p.name.value) == UNKNOWN and p.annotation is None and _scalar_literal(p.default):
                        params[p.name.value] = replace(UNKNOWN, not_none=True)
                self._constructing += 1
                root, self._collection_root = self._collection_root, name
                try:
                    self.call_function(fn, self_value, params, {}, ())
                finally:
                    self._constructing -= 1
                    self._collection_root = root
        finally:
            self.silent -= 1
            self.frame, self.stmt, self.header, self.index = saved_frame, saved_stmt, saved_header, saved_index
        final = dict(merged)
        final.update(own)
        cls.attrs = final
        return final

    def site_parameters(self, cls: ClassInfo, init: FunctionInfo) -> Dict[str, Value]:
        """The values the construction sites of ``cls`` in its own module pass to ``init``'s parameters.

        Every ``Cls(...)`` call in a function or method of the entry module (a parent's
        ``__init__`` building its submodules, a factory; :func:`callers.calls_named`) is bound to
        the constructor's parameters (an omitted one takes its default).  A call where a local
        name shadows the class does not count, and neither does module-level code (a
        ``__main__`` demo builds a public class one way, its users another).  A parameter gets a
        value only when every site passes a value known without running code: a literal
        (``"LSTM"``, ``0.1``, ``False``, ``None``), an instance of a class of the module
        (``Decoder(STFT())``), such a class (``Block(norm=LayerNorm)``), or a tensor made by torch
        (``nn.Parameter(...)``, ``torch.ones(...)``), or a parameter of the enclosing
        ``__init__`` passed on unchanged, which takes what that class's own sites give
        (:meth:`_forwarded_site_value`); the values of several sites are joined (two classes are
        "one of these").  For a class of another project module the sites are the entry's calls
        of the names it imports the class under and the calls in the ``__init__`` of another class
        of its own file, when no other code the analysis read names the class
        (:meth:`_sites_of_foreign_class`).  Nothing is known for a
        class nothing builds so, or when a site passes ``*args``/``**kwargs``: the parameters
        stay of unknown value.  Dynamo sees the values the model was built with; the sites are
        how the project builds it.

        Args:
            cls: a class of the entry module, or of another project module.
            init: its own ``__init__``.

        Returns:
            parameter name -> value, for the parameters every site decides; empty when none.
        """
        index = cls.module
        if index is None:
            return {}
        if index is self.entry and index.base is None:
            text = index.full_source or index.source
            if text and f"{cls.name}(" not in text:
                return {}  # never called by its name: no walk of the module needed
            found = [(call, enclosing, index) for call, enclosing in callers.calls_named(index.module, cls.name)]
            if not found or index.classes.get(cls.name) is not cls:
                return {}
        else:
            found = self._sites_of_foreign_class(cls)
            if not found:
                return {}
        params = init.node.params
        defaults = {p.name.value: p.default for p in list(params.params) + list(params.kwonly_params)}
        joined: Dict[str, Value] = {}
        unknown: set = set()
        counted = 0
        for call, enclosing, index_of_site in found:
            if enclosing is None:
                continue  # a script or demo at module level: one way to build a public class, not the only one
            local = sites.bound_in(enclosing)
            if cls.name in local or dotted_name(call.func) in local:
                continue  # a local of that name, not the class
            bound = sites.bind_call(call, params, skip_first=True)
            if bound is None:
                return {}
            counted += 1
            for pname, expr in bound.items():
                if pname in unknown:
                    continue
                if expr is None:
                    # an omitted argument: the default, an expression of the class's module
                    expr, where, local_names = defaults.get(pname), index, frozenset()
                    if expr is None:
                        unknown.add(pname)  # a required parameter not passed: not a call that runs
                        continue
                else:
                    where, local_names = index_of_site, local
                v = self._site_value(where, expr, local_names)
                if v is None and isinstance(expr, cst.Name) and expr.value in local:
                    v = self._forwarded_site_value(index_of_site, enclosing, expr.value)
                if v is None and isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in local:
                    v = self._forwarded_field_value(index_of_site, enclosing, expr.value.value, expr.attr.value)
                if v is None:
                    unknown.add(pname)
                    joined.pop(pname, None)
                    continue
                joined[pname] = join(joined[pname], v) if pname in joined else v
        return joined if counted else {}

    def _sites_of_foreign_class(self, cls: ClassInfo) -> List[Tuple[cst.Call, Optional[cst.FunctionDef], ModuleIndex]]:
        """The construction sites of ``cls``, a class of another project module, with the module
        index each is in: the entry module's ``Cls(...)`` calls under a name it imports the class
        as, and the calls in the ``__init__`` of another class of the class's own file
        (``self.attn = Attention(dim, verbose=verbose)`` in ``Block.__init__``, whose own
        parameters take what ``Block``'s sites give, :meth:`_forwarded_site_value`).  Empty when
        other code may build it too (so those sites are not all the sites that matter).

        The entry is parsed whole; other modules are read one definition at a time, and a
        definition read so far (or a module read whole) that names the class, other than the
        class itself, may build it with other arguments: then nothing is known.  In the class's
        own file, every call of its name must be one of the sites found (a function, or a
        definition not read, that builds it makes the sites partial).  The entry may also
        build it in a way not read as a call of an imported name (``layers.Block(...)``).
        """
        entry = self.entry
        project = self.project
        if entry is None or project is None or entry.module is None or cls.node is None:
            return []
        text = entry.full_source or entry.source or ""
        if not text or re.search(rf"\.\s*{re.escape(cls.name)}\s*\(", text):
            return []
        aliases = []
        for local, qualified in entry.imports.names.items():
            if f"{local}(" not in text:
                continue
            if project.resolve(entry, qualified) is cls:
                aliases.append(local)
        word = re.compile(rf"\b{re.escape(cls.name)}\b")
        own = getattr(cls.module, "base", None) or cls.module
        same_file: List[Tuple[cst.Call, Optional[cst.FunctionDef], ModuleIndex]] = []
        for other in project.loaded_indexes():
            if other is entry or other is cls.module:
                continue
            if (getattr(other, "base", None) or other) is own and other.module is not None:
                # the defining file, read whole or by definitions: a site in another class's
                # ``__init__`` is one; a function or another method that builds the class is not known
                for call, enclosing in callers.calls_named(other.module, cls.name):
                    if enclosing is None:
                        continue  # module-level code (a demo): one way among others, as in the entry
                    builder = next((c for c in other.classes.values() if getattr(c.methods.get("__init__"), "node", None) is enclosing), None)
                    if builder is None or builder is cls:
                        return []
                    same_file.append((call, enclosing, other))
                continue
            if word.search(getattr(other, "source", "") or ""):
                return []
        if same_file:
            whole = own.full_source or own.source or ""
            calls = len(re.findall(rf"(?<!class )\b{re.escape(cls.name)}\s*\(", whole))
            if calls != len(same_file):
                return []  # the file builds it somewhere not read here
        if not aliases and not same_file:
            return []
        found: List[Tuple[cst.Call, Optional[cst.FunctionDef], ModuleIndex]] = list(same_file)
        for alias in aliases:
            found.extend((call, enclosing, entry) for call, enclosing in callers.calls_named(entry.module, alias))
        return found

    def _forwarding_owner(self, index: ModuleIndex, enclosing: cst.FunctionDef, name: str) -> Optional[Tuple[ClassInfo, cst.Param]]:
        """``(class, parameter)`` when ``name`` is a parameter of ``enclosing``, the ``__init__`` of
        a class of ``index``, that its body never rebinds and whose class is not already being
        asked about (a cycle of constructors decides nothing); else ``None``."""
        if enclosing.name.value != "__init__":
            return None
        params = enclosing.params
        param = next((p for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.name.value == name), None)
        if param is None:
            return None
        body = enclosing.body.body if isinstance(enclosing.body, cst.IndentedBlock) else ()
        if name in bound_names(list(body)):
            return None  # ``causal = causal and not cfg.bidirectional`` before the call
        owner = next((c for c in index.classes.values() if getattr(c.methods.get("__init__"), "node", None) is enclosing), None)
        if owner is None or id(owner) in self._forwarding_sites:
            return None
        return owner, param

    def _forwarded_site_value(self, index: ModuleIndex, enclosing: cst.FunctionDef, name: str) -> Optional[Value]:
        """The value of ``name``, a parameter of ``enclosing`` passed on unchanged, when
        ``enclosing`` is the ``__init__`` of a class of ``index`` whose own construction sites
        all decide it (``Block(causal=False)`` whose ``__init__`` builds ``Attn(causal=causal)``:
        the attention is built with ``False``), else ``None``.  A parameter the body rebinds is
        not passed on unchanged; a cycle of constructors decides nothing."""
        found = self._forwarding_owner(index, enclosing, name)
        if found is None:
            return None
        owner = found[0]
        self._forwarding_sites.add(id(owner))
        try:
            return self.site_parameters(owner, owner.methods["__init__"]).get(name)
        finally:
            self._forwarding_sites.discard(id(owner))

    def _forwarded_field_value(self, index: ModuleIndex, enclosing: cst.FunctionDef, name: str, attr: str) -> Optional[Value]:
        """The value of ``name.attr`` where ``name`` is a parameter of ``enclosing``, the
        ``__init__`` of a class of ``index``, that its body does not rebind
        (``Block(causal=cfg.causal)`` in ``Model.__init__(self, cfg: Config)``): the attribute of
        the value that ``__init__`` sees for the parameter while the class's attributes are
        collected (what its construction sites pass, else what its annotation says), so the
        block gets the value ``self.cfg.causal`` has in ``Model.forward`` (a config dataclass's
        field default, joined with what the project's own construction sites of the dataclass
        pass).  ``None`` when that value is unknown, may be ``None``, or only guessed."""
        found = self._forwarding_owner(index, enclosing, name)
        if found is None:
            return None
        owner, param = found
        if param is (enclosing.params.posonly_params or enclosing.params.params or (None,))[0]:
            return None  # ``self``
        self._forwarding_sites.add(id(owner))
        saved_index = self.index
        self.index = index
        self.silent += 1
        try:
            base = self.site_parameters(owner, owner.methods["__init__"]).get(name)
            if base is None:
                base = self._attr_param_value(param)
            if base.kind is Kind.UNKNOWN or base.weak or base.maybe_none:
                return None
            value = self.attribute(base, identifier(attr), None)
        finally:
            self.silent -= 1
            self.index = saved_index
            self._forwarding_sites.discard(id(owner))
        if value is None or value.kind is Kind.UNKNOWN or value.weak:
            return None
        return value

    def _site_value(self, index: ModuleIndex, expr: cst.BaseExpression, local: frozenset) -> Optional[Value]:
        """The value of a construction site's argument when it is known without running code
        (see :meth:`site_parameters`), else ``None``."""
        if isinstance(expr, (cst.Integer, cst.Float)):
            return const(expr.evaluated_value)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, (cst.Integer, cst.Float)):
            return const(-expr.expression.evaluated_value)
        text = _literal_string(expr)
        if text is not None:
            return const(text)
        if isinstance(expr, cst.Name):
            name = expr.value
            if name in local or (name in index.defined_names and name not in index.classes):
                return None
            if name in ("True", "False"):
                return const(name == "True")
            if name == "None":
                return NONE
            found = index.classes.get(name)
            return Value(Kind.CLASS, ref=found) if found is not None else None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in index.classes:
            name = expr.func.value
            if name in local or any(a.star for a in expr.args):
                return None
            return Value(Kind.MODULE, ref=index.classes[name], not_none=True)
        if isinstance(expr, cst.Call):
            head = dotted_name(expr.func)
            if head is None or head.split(".", 1)[0] in local:
                return None
            q = index.imports.qualify(expr.func)
            if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer") or (q is not None and api.is_tensor_function(q)):
                return TENSOR  # ``Layer(domain=nn.Parameter(torch.ones(())))``: a tensor, whatever its values
            if q is not None and _is_nn_module_class(q) and not any(a.star for a in expr.args):
                last = q.rsplit(".", 1)[-1]
                if last in api.INPLACE_MODULE_POS and expr.args:
                    return None  # ``nn.ReLU(True)``: whether it writes in place depends on the argument
                if last in _NN_CONTAINERS:
                    return None  # what it holds is not known without running code
                return Value(Kind.MODULE, ref=q, not_none=True)  # ``Block(norm=nn.LayerNorm(dim))``: a torch module
        return None

    def class_level_values(self, cls: ClassInfo) -> Dict[str, Value]:
        """The values of the names ``cls``'s own body assigns (``scale = 0.5``, ``_cache: dict = {}``,
        ``it = torch.Tensor.item``), computed once per class.  ``staticmethod(f)`` of a tensor method is
        that method marked ``_STATIC``; :func:`_class_view` and :func:`_instance_view` say what a lookup
        through the class or an instance gives."""
        if cls.class_values is not None:
            return self._with_config_sites(cls, cls.class_values)
        own: Dict[str, Value] = {}
        cls.class_values = own
        saved_frame, saved_stmt, saved_header, saved_index = self.frame, self.stmt, self.header, self.index
        if cls.module is not None:
            self.index = cls.module
        self.silent += 1
        try:
            body = cls.node.body.body if isinstance(cls.node.body, cst.IndentedBlock) else ()
            self.frame = Frame(None, {}, None, None, (), cls, None)
            for stmt in body:
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, cst.Assign):
                            v = self._class_body_value(small.value)
                            for t in small.targets:
                                if isinstance(t.target, cst.Name):
                                    own[identifier(t.target.value)] = v
                        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                            own[identifier(small.target.value)] = self._class_body_value(small.value)
        finally:
            self.silent -= 1
            self.frame, self.stmt, self.header, self.index = saved_frame, saved_stmt, saved_header, saved_index
        return self._with_config_sites(cls, own)

    def _with_config_sites(self, cls: ClassInfo, values: Dict[str, Value]) -> Dict[str, Value]:
        """A dataclass's field defaults joined with what the project passes where it builds one.

        The analysis reads ``self.cfg.quantize`` of a config dataclass as the field's default
        (``False``: the code under ``if self.cfg.quantize:`` is dead).  A construction site in the
        project (``Config(quantize=True)`` in a training script, read by
        :mod:`pt2lint.analysis.code_config`) that passes another value, or one computed at run
        time, makes the field either, so that code is analysed too.  Fields of a base dataclass
        are those of the base's own sites.  The join is not kept on ``cls`` (shared by the
        entries of a process, whose settings may differ in the language server).
        """
        sites = getattr(self.settings, "config_sites", ())
        if not sites or not objects.is_dataclass_node(cls.node):
            return values
        hit = self._site_values.get(id(cls))
        if hit is not None and hit[0] is values and hit[1] is sites:
            return hit[2]
        from pt2lint.analysis.code_config import site_overrides

        fields = [name for name, _ in objects.annotated_fields(cls.node)]
        module = getattr(cls.module, "name", "") if cls.module is not None else getattr(self.entry, "name", "")
        qualname = f"{module}.{cls.name}" if module else cls.name
        out = values
        for name, passed in site_overrides(sites, qualname, fields).items():
            if name not in values:
                continue  # a field without a default: not known before either
            v = values[name]
            for known, value in passed:
                v = join(v, const(value) if known and value is not None else NONE if known else CONST)
            if v != values[name]:
                out = dict(out) if out is values else out
                out[name] = v
        self._site_values[id(cls)] = (values, sites, out)
        return out

    def _class_body_value(self, expr: cst.BaseExpression) -> Value:
        """The value of an assignment's right-hand side in a class body; ``staticmethod(torch.Tensor.m)``
        (the builtin) is the unbound method marked ``_STATIC``, which no lookup binds."""
        if (
            isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "staticmethod"
            and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star
            and not self._shadowed("staticmethod")
        ):
            inner = self.eval(expr.args[0].value)
            if inner.const is None and _unbound_tensor_method(None, inner) is not None:
                return replace(inner, const=_STATIC)
        return self.eval(expr)

    def _attr_param_value(self, p: cst.Param) -> Value:
        """The value of a method parameter while collecting ``self`` attributes.

        A parameter annotated with a class of the project (``kv_cache: Optional[KVCache] = None``,
        ``attn: MultiHeadAttention``) is an instance of that class (or ``None`` where the
        annotation allows it), so ``self.kv_cache = kv_cache`` lets ``self.kv_cache.size``
        (a property) and its methods be followed.  A parameter annotated with a Python scalar
        type (``num_relations: int``) is a constant, surely not ``None`` unless the annotation or
        a ``None`` default allows it, so ``self.num_relations`` passed on to a helper decides its
        ``if num_classes is None:``.  Anything else stays Unknown.
        """
        if p.annotation is None:
            return UNKNOWN
        ann = p.annotation.annotation
        # ``n: int = None``: the annotation is wrong, the default is not
        optional = isinstance(p.default, cst.Name) and p.default.value == "None"
        for _ in range(4):
            if isinstance(ann, cst.SimpleString):
                text = ann.evaluated_value
                if not isinstance(text, str):
                    return UNKNOWN
                try:
                    ann = cst.parse_expression(text)
                except cst.ParserSyntaxError:
                    return UNKNOWN
                continue
            if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
                sides = [ann.left, ann.right]
                rest = [x for x in sides if not (isinstance(x, cst.Name) and x.value == "None")]
                if len(rest) != 1:
                    return UNKNOWN
                optional, ann = True, rest[0]
                continue
            if isinstance(ann, cst.Subscript):
                head = (dotted_name(ann.value) or "").rsplit(".", 1)[-1]
                inner = [el.slice.value for el in ann.slice if isinstance(el.slice, cst.Index)]
                rest = [x for x in inner if not (isinstance(x, cst.Name) and x.value == "None")]
                if head not in ("Optional", "Union") or len(rest) != 1:
                    return UNKNOWN
                optional = optional or head == "Optional" or len(rest) < len(inner)
                ann = rest[0]
                continue
            break
        if not isinstance(ann, (cst.Name, cst.Attribute)):
            return UNKNOWN
        if isinstance(ann, cst.Name) and ann.value in _PY_SCALAR_TYPES and self._is_builtin(ann.value):
            return Value(Kind.CONST, maybe_none=optional, not_none=not optional)
        v = self.eval(ann)
        if v.kind is Kind.CLASS and isinstance(v.ref, ClassInfo):
            return Value(Kind.MODULE, ref=v.ref, maybe_none=optional)
        return UNKNOWN

    # ------------------------------------------------------------------ calls
    def eval_Call(self, node: cst.Call) -> Value:
        attr = self._constant_getattr(node)
        if attr is not None:
            form = self._getattribute_form(node)
            if form is None:
                return self.eval(attr)  # ``getattr(x, "shape")`` is ``x.shape``
            return self._eval_getattribute(node, attr, form)
        methods = self._patterned_getattr(node)
        if methods is not None:
            return methods
        func = node.func
        lookup: Optional[Tuple[cst.Call, str]] = None
        if isinstance(func, cst.Call):
            looked_up = self._constant_getattr(func)
            if looked_up is not None:  # ``getattr(x, "item")()`` is ``x.item()``
                form = self._getattribute_form(func)
                lookup = (func, form) if form is not None else None
                func = looked_up
        func = _called_through_dunder_call(func)
        args: List[Value] = []
        kwargs: Dict[str, Value] = {}
        arg_nodes = []
        breaks_before = self.gb_events
        # whether ``args[0]`` is surely the call's first positional argument: written plainly, or the
        # first element of a starred tuple or list whose elements are known (``f(*(t,))``)
        first_known = False
        for a in node.args:
            v = self.eval(a.value)
            if a.keyword is not None:
                kwargs[a.keyword.value] = v
            elif a.star == "*":
                if v.keys is not None:
                    args.extend(CONST for _ in v.keys)  # ``*d`` passes the keys
                elif v.elts is not None:
                    first_known = first_known or (not args and bool(v.elts))
                    args.extend(v.elts)
                else:
                    args.append(v.element())
            elif a.star == "**":
                if v.keys is not None and v.elts is not None:
                    kwargs.update(zip(v.keys, v.elts))
                else:
                    kwargs = dicts.open_kwargs(kwargs)  # keys not all known: any other parameter may be given
                    if dicts.is_open(v):
                        kwargs.update(dicts.known_entries(v))  # the entries written to an open dict
            else:
                first_known = first_known or not args
                args.append(v)
                arg_nodes.append(a.value)
        qual = self.qualname(func)
        method = None
        receiver = None
        receiver_node = None
        receiver_broke = False
        eager_call = False  # a call Dynamo breaks on, run eagerly: no event for what it does inside
        callee_value: Optional[Value] = None
        pv = self._project_qualified(func, qual)
        if pv is not None and _library_callable_ref(pv):
            qual = pv.ref  # a project name bound to a library callable (``say = print`` in util.py)
        elif pv is not None:
            callee_value, qual = pv, None
        elif isinstance(func, cst.Attribute) and qual is None:
            receiver_node = func.value
            receiver_breaks = self.gb_events
            receiver = self._class_of_instance(func.value) or self.eval(func.value)
            receiver_broke = self.gb_events > receiver_breaks
            method = identifier(func.attr.value)
            if lookup is not None:
                self._lookup_break(lookup[0], lookup[1], receiver, method)
            callee_value = self.attribute(receiver, method, func) if receiver.kind in (Kind.SELF, Kind.SUPER, Kind.CLASS) or (receiver.kind is Kind.MODULE and isinstance(receiver.ref, ClassInfo)) or objects.is_one_of(receiver) else None
            self._submodule_read(func, receiver, callee_value)
            if receiver.kind is Kind.UNKNOWN and isinstance(receiver.ref, str):
                qual = f"{receiver.ref}.{method}"
                if receiver.const == _TENSOR_DUNDER_CLASS and _unbound_tensor_method(qual, None) is not None:
                    # ``t.__class__.add(t, 1)``: Dynamo breaks on the call, for any tensor method
                    # ("Unsupported method call", GB0156; ``type(t).add(t, 1)`` traces; torch 2.13)
                    self.emit("on_lookup_break", LookupBreakEvent(node, "dunder-class", method, "GB0156"))
                    eager_call = True
        elif isinstance(func, cst.Name) and qual is None:
            callee_value = self.eval(func)
            ref = callee_value.ref
            if _library_callable_ref(callee_value):
                # a name bound to a library callable (``p = print`` at module level, ``act = torch.relu``):
                # the call is a call of that callable, as Dynamo sees it
                qual, callee_value = ref, None
        elif qual is None:
            callee_value = self.eval(func)
        if callee_value is not None and isinstance(callee_value.ref, PartialLibraryCall):
            # ``dbg(x)`` with ``dbg = functools.partial(print, "dbg:")``, or ``self.say(x)`` with such a
            # partial stored on the instance (a partial is no function: it is not bound to ``self``)
            bound = callee_value.ref
            qual, callee_value = bound.qualname, None
            method, receiver, receiver_node = None, None, None
            if bound.args:
                args, first_known = list(bound.args) + args, False
            kwargs = {**dict(bound.kwargs), **kwargs}
        if (
            method is not None and receiver is not None and callee_value is not None
            and callee_value.kind in (Kind.UNKNOWN, Kind.CONST)
            and isinstance(callee_value.ref, str) and callee_value.const in (None, _CLASS_DESCRIPTOR)
            and (receiver.kind is Kind.CLASS or (
                receiver.kind in (Kind.SELF, Kind.MODULE) and _unbound_tensor_method(None, callee_value) is not None))
        ):
            # a callable stored as a class attribute and called through the class (``A.act(x)`` with
            # ``act = torch.relu`` in the class body; a function looked up on a class is not bound), or a
            # tensor method stored on an instance (``self.fn = torch.Tensor.item``, or a ``staticmethod``
            # in the class body): the callable itself is called with the arguments as written
            method, receiver, receiver_node = None, None, None
            if callee_value.const is None and _unbound_tensor_method(None, callee_value) is None:
                qual, callee_value = callee_value.ref, None
        if method is None and callee_value is not None and callee_value.const == _CLASS_DESCRIPTOR:
            # ``A.it(t)`` with ``it = torch.Tensor.item`` in ``A``'s body: Dynamo breaks on the call, for any
            # tensor method ("Unsupported method call", GB0156, torch 2.13), and runs it eagerly
            callee_value = replace(callee_value, const=None)
            name = _unbound_tensor_method(None, callee_value)
            self.emit("on_lookup_break", LookupBreakEvent(node, "class-attribute", name or "", "GB0156"))
            eager_call = True
        if method is None and callee_value is not None and callee_value.const == _ATTRGETTER and len(args) == 1 and not kwargs:
            return self.attribute(args[0], callee_value.ref, node)  # ``attrgetter("item")(t)`` is ``t.item``
        if method is None and callee_value is not None and isinstance(callee_value.ref, BoundTensorMethod):
            # ``m = t.item; m()``, ``(t.item,)[0]()``: Python calls the method on its tensor,
            # and Dynamo breaks there as on ``t.item()`` (torch 2.13)
            method, receiver, receiver_node = callee_value.ref.name, callee_value.ref.receiver, func
            callee_value = None
        if method is not None and self._is_type_of_tensor(func):
            qual, method, receiver = f"torch.Tensor.{method}", None, None  # ``type(t).item(t)``
        if method is None and first_known:
            unbound = _unbound_tensor_method(qual, callee_value)
            if unbound is None and callee_value is not None and callee_value.const == _METHODCALLER:
                unbound = callee_value.ref  # ``operator.methodcaller("item")(t)`` is ``t.item()``
            if unbound is not None and args[0].kind is Kind.TENSOR:
                # ``torch.Tensor.item(t)`` (or an alias or a ``functools.partial`` of it) is ``t.item()``,
                # to Dynamo as to us
                bound_args = list(callee_value.elts or ()) if callee_value is not None and callee_value.const == _METHODCALLER else []
                kwargs = {**_partial_kwargs(callee_value), **kwargs} if callee_value is not None else kwargs
                # (``torch.Tensor.item(*a)`` with ``a = (t,)`` passes ``t`` too; Dynamo breaks on it as on
                # ``t.item()``, torch 2.13)
                first = next(a for a in node.args if a.keyword is None)
                method, receiver = unbound, args[0]
                receiver_node = first.value if not first.star else None
                args, qual, callee_value = bound_args + args[1:], None, None
        if method in _DUNDER_BUILTINS and receiver is not None and receiver.kind is Kind.TENSOR and not args and not kwargs:
            # ``t.__int__()`` is what ``int(t)`` calls, and Dynamo breaks on it as on ``int(t)``
            # (torch 2.13); ``t.__len__()`` is ``len(t)``, a size
            qual, method, args = _DUNDER_BUILTINS[method], None, [receiver]
            receiver, receiver_node, callee_value = None, None, None
        if (
            receiver is not None and receiver.keys is not None and method in _CONTAINER_MUTATORS
            and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and self.frame is not None
        ):
            # ``kwargs.update(...)``/``pop``/``setdefault``: its keys are no longer known
            self.frame.assign(func.value.value, Value(Kind.CONTAINER, elt=receiver.element()))
        if receiver is not None and self.silent and method is not None:
            self._collect_attr_call(node, receiver, method, args)
        frame = self.frame
        saved_calling = frame.calling if frame is not None else None
        if frame is not None:
            frame.calling = node
        try:
            result, callee = self._call_result(node, qual, method, receiver, callee_value, args, kwargs)
        finally:
            if frame is not None:
                frame.calling = saved_calling
        if callee is None and (
            (method in api.MODULE_HOOK_METHODS and receiver is not None and receiver.kind in (Kind.MODULE, Kind.SELF, Kind.UNKNOWN))
            or (method is None and qual in api.GLOBAL_MODULE_HOOK_FUNCTIONS)
        ):
            result = Value(Kind.UNKNOWN, const=_HOOK_HANDLE)
        elif receiver is not None and method is not None and _is_hook_handle(receiver):
            self._hook_handle_used(func, f".{method}()")
        if qual in ("builtins.map", "builtins.filter") and callee is None:
            result = self._map_function(node, qual, args, result)
        if qual == "builtins.map":
            result = self._map_cast(node, args, result)
        elif qual in _ITERATING_BUILTINS and node.args and not node.args[0].star:
            self._consume_map(node.args[0].value)
        elif method == "format" and receiver_node is not None and _is_string_node(receiver_node):
            if any(_formats_a_tensor(v) for v in (*args, *kwargs.values())):
                result = LAZY_TENSOR_TEXT  # like an f-string: built after the graph unless used here
        elif method is not None and receiver is LAZY_TENSOR_TEXT:
            self._lazy_text_used(node)  # ``s.upper()``: the text is needed now
        elif qual in _TEXT_READING_BUILTINS and any(v is LAZY_TENSOR_TEXT for v in args):
            self._lazy_text_used(node)
        if qual is not None and callee is None and result.kind in (Kind.CONTAINER, Kind.UNKNOWN):
            made = self._iterator_constructor(qual, node)
            if made is not None:
                result = replace(result, iterator=made)  # (what ``next()`` on it does: dynamo_facts)
        self._track_local_lists(node, func, qual, method, receiver, args)
        if self.silent == 0:
            if self.gb_events > breaks_before:
                self._emit_generator_break(node, qual)
                if receiver_node is not None and not receiver_broke:
                    sourceless.check_call(self, node, receiver_node, receiver, callee_value, breaks_before)
            self._emit_builtin_tests(node, qual, args)
            self._emit_call_writes(node, qual, method, receiver, callee_value, args, kwargs)
            if not eager_call:  # (a call the graph broke on runs eagerly: what it does inside is no break)
                at_call = self.gb_events
                self.emit(
                    "on_call",
                    CallEvent(node, qual, method, receiver, tuple(args), kwargs, result, callee, receiver_node),
                )
                if self.gb_events > at_call and self._last_break is not None and self._last_break[1] is node:
                    if any(type(a.value) is cst.GeneratorExp and not a.star for a in node.args):
                        # a break at a call given a generator expression: Dynamo cannot rebuild the
                        # generator object to resume after the call ("Generator reconstruction with
                        # mutations", GB8335) and runs the rest of the frame eagerly (measured on torch
                        # 2.13 for ``print(<gen>)``, ``statistics.mean(<gen>)``, ``math.prod(<gen>)``
                        # and a disabled function given one: no later break is logged)
                        self.end_frame(*self._last_break)
        return result

    def _track_local_lists(self, node: cst.Call, func, qual: Optional[str], method: Optional[str], receiver, args) -> None:
        """Keep a local list's known length true after a call that may change it.

        ``outs.append(v)`` adds ``v`` to what is known of ``outs`` (a loop's passes then join
        lists of different lengths into one of unknown length); ``extend`` of a list of known
        length adds its elements; any other mutating method (``insert``, ``pop``, ``clear``,
        ``sort``, ``add``...) leaves the length unknown.  A local list passed to a function that
        is not torch's or a builtin (a helper may append to it) has an unknown length after the
        call.  Without this, ``len(outs)`` of ``outs = []`` filled in a loop folded to 0 and made
        the code under ``if len(outs) > 1:`` dead.
        """
        frame = self.frame
        if frame is None:
            return
        if (
            method in _CONTAINER_MUTATORS and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and frame.is_bound(func.value.value) and _sized_list(receiver)
        ):
            name = func.value.value
            if method == "append" and len(args) == 1 and not node.args[0].star:
                frame.assign(name, replace(receiver, elts=receiver.elts + (args[0],), elt=None))
            elif method == "extend" and len(args) == 1 and not node.args[0].star and args[0].elts is not None and args[0].keys is None:
                frame.assign(name, replace(receiver, elts=receiver.elts + tuple(args[0].elts), elt=None))
            else:
                self._forget_length(name, receiver, _added_by(method, args))
            return
        if (
            method in _CONTAINER_MUTATORS and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute)
            and isinstance(func.value.value, cst.Name) and _sized_list(receiver)
        ):
            # ``self.outs.append(t)`` after ``self.outs = []`` in forward: its length is no longer known
            owner = frame.lookup(func.value.value.value)
            if owner is not None and owner.kind is Kind.SELF and isinstance(owner.ref, ClassInfo):
                key = (id(owner.ref), identifier(func.value.attr.value))
                if key in self._region_writes:
                    forgotten = _unsized(receiver, _added_by(method, args))
                    self._region_writes[key] = forgotten
                    if _self_slot(key[1]) in frame.env:
                        frame.assign(_self_slot(key[1]), forgotten)
            return
        if (
            method in _CONTAINER_MUTATORS and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and frame.is_bound(func.value.value) and receiver is not None and receiver.kind is Kind.MODULE
            and receiver.elts is not None
        ):
            # ``blocks = nn.ModuleList([A()]); blocks.append(B())``: the positions are no longer known
            added = _added_by(method, args)
            elt = _join_all([receiver.elt, *added] if receiver.elt is not None else added)
            frame.assign(func.value.value, replace(receiver, elts=None, elt=elt))
            return
        if qual is not None and qual.startswith(("torch.", "builtins.", "math.", "numpy.")):
            return  # torch and the builtins do not grow a list they are given
        for a in node.args:
            if isinstance(a.value, cst.Name) and frame.is_bound(a.value.value):
                v = frame.lookup(a.value.value)
                if _sized_list(v):
                    self._forget_length(a.value.value, v)

    def _forget_length(self, name: str, value: Value, added: Sequence[Value] = ()) -> Value:
        """Rebind local ``name`` (a list of known length, ``value``) to a list of unknown length
        holding what it held and ``added``; returns the new value."""
        forgotten = _unsized(value, added)
        self.frame.assign(name, forgotten)
        return forgotten

    def _hook_handle_used(self, node: cst.CSTNode, use: str) -> None:
        """A module hook's handle is used at ``node`` in compiled code (see :class:`HookHandleEvent`)."""
        if self.silent == 0 and self.frame is not None:
            self.emit("on_hook_handle", HookHandleEvent(node, use))

    def _record_hook(self, hook: Value, pre: bool = False, with_kwargs: bool = False, where: Optional[str] = None) -> None:
        """Remember a function the class being built registers with ``register_forward_hook`` or
        ``register_forward_pre_hook`` (on ``self`` or a submodule): a bound method (``self._hook``),
        a nested ``def``, or one a factory method returns (``self._make_hook(name)``).
        :meth:`_run_module_entry` analyses it as compiled code of the module.

        Dynamo traces the forward hooks and forward pre-hooks of a compiled module's (sub)modules
        as part of the call: ``out.norm().item()`` in such a hook breaks with "Unsupported
        Tensor.item() call" at the hook's line (measured on torch 2.13, for a method and for a
        closure), ``if torch.isnan(args[0]).any():`` in a pre-hook is data-dependent branching, and
        ``args[0].sub_(...)`` in a pre-hook writes the forward input.
        """
        owner = self.frame.lookup("self") if self.frame is not None else None
        if owner is None or owner.kind is not Kind.SELF or not isinstance(owner.ref, ClassInfo):
            return
        if hook.kind is not Kind.FUNCTION or not isinstance(hook.ref, FunctionInfo):
            return
        hooks = self._hooks.setdefault(id(owner.ref), [])
        if all(h.ref is not hook.ref for h in hooks):
            hooks.append(hook)
            self._hook_protocol[id(hook.ref)] = (pre, with_kwargs, where)

    def _map_function(self, node: cst.Call, qual: str, args: List[Value], result: Value) -> Value:
        """``map(f, xs)`` / ``filter(f, xs)`` with ``f`` a function, lambda or module of the project:
        the builtin calls ``f`` on each element, and Dynamo inlines those calls (measured on torch
        2.13: ``list(map(scale, x.unbind(0)))`` breaks inside ``scale``, ``list(map(lambda t:
        t.max().item(), ...))`` at the lambda).  ``f`` is analysed once with the elements' kinds; the
        result holds what it returns (``filter``: the elements it keeps)."""
        if len(args) < 2 or any(a.star or a.keyword for a in node.args):
            return result
        fnv = args[0]
        callable_value = (
            (fnv.kind is Kind.FUNCTION and (isinstance(fnv.ref, FunctionInfo) or objects.is_one_of(fnv)))
            or (fnv.kind is Kind.MODULE and isinstance(fnv.ref, ClassInfo))
        )
        if not callable_value:
            return result
        elements = [it.element() for it in args[1:]]
        ret, _ = self._call_result(node, None, None, None, fnv, elements, {})
        if qual == "builtins.filter":
            return container(elt=elements[0])
        return container(elt=ret)

    def _map_cast(self, node: cst.Call, args: List[Value], result: Value) -> Value:
        """``map(int, it)`` (``float``, ``bool``, ``complex``; the builtin, not shadowed): its elements
        are the cast of ``it``'s elements, and the call is remembered so that consuming it
        (:meth:`_consume_map`) is seen as the casts.  Other ``map`` calls keep ``result``."""
        first = node.args[0].value if node.args else None
        if not (isinstance(first, cst.Name) and "builtins." + first.value in _MAP_CASTS and len(args) >= 2
                and not any(a.star or a.keyword for a in node.args) and self._is_builtin(first.value)):
            return result
        iterables = tuple(args[1:])
        self._map_casts[id(node)] = (node, "builtins." + first.value, iterables)
        return container(elt=self._builtin_result(first.value, [iterables[0].element()], {}, ()))

    def _consume_map(self, expr: cst.BaseExpression) -> None:
        """``list(map(int, t))`` / ``for v in map(int, t)``: iterating the lazy ``map`` calls the cast
        on each element; it is emitted as that call (``int(t[i])``) at the ``map``.

        ``map`` is lazy: Dynamo runs the cast only when the map is iterated (``list(map(int, t))``
        over a tensor breaks with "Unsupported Tensor.item() call", an unconsumed
        ``map(float, t)`` traces; ``map(int, x.shape)`` traces; measured on torch 2.13).
        """
        hit = self._map_casts.get(id(expr)) if isinstance(expr, cst.Call) else None
        if hit is None or hit[0] is not expr or self.silent:
            return
        node, cast, iterables = hit
        for it in iterables:
            elt = it.element()
            self.emit("on_call", CallEvent(node, cast, None, None, (elt,), {}, self._builtin_result(cast[9:], [elt], {}, ()), None, None))

    def _emit_generator_break(self, node: cst.Call, qual: Optional[str]) -> None:
        """A graph break was reported while evaluating ``node``'s only argument, a generator expression
        consumed by ``all``/``any``/``sum``/``set``: Dynamo cannot resume the half-run generator and
        breaks again at the call (GB8335; measured on torch 2.13 -- ``min``, ``max``, ``list``,
        ``tuple`` and ``sorted`` exhaust it without a second break).  Only a generator written on a later
        line than the call gives a new site; on the same line it is the same break line."""
        if qual not in _GENERATOR_RESUME_BUILTINS or len(node.args) != 1 or node.args[0].keyword is not None:
            return
        gen = node.args[0].value
        if not isinstance(gen, cst.GeneratorExp) or node.args[0].star:
            return
        module = cst.Module(body=[])
        text = module.code_for_node(node)
        head = text.find(module.code_for_node(gen.elt))
        if head <= 0 or "\n" not in text[:head]:
            return
        self.emit("on_generator_break", GeneratorBreakEvent(node, gen, qual.split(".", 1)[1]))

    def _emit_builtin_tests(self, node: cst.Call, qual: Optional[str], args) -> None:
        """``all(...)``/``any(...)`` over tensors test each element's truth in Python: Dynamo runs them
        through its builtin polyfills, which call ``bool()`` on every element, a data-dependent branch
        (GB0170, reported at the ``all(``/``any(`` line; measured on torch 2.13).  A ``TestEvent`` on the
        call, when the iterable's elements are surely tensors.  Builtin ``min``/``max``/``sum`` over tensors
        do not break (rewritten to tensor ops) and get no event.
        """
        if qual not in ("builtins.all", "builtins.any") or len(args) != 1 or len(node.args) != 1 or node.args[0].star:
            return
        elt = args[0].element()
        if elt.kind is Kind.TENSOR and not elt.weak:
            self.emit("on_test", TestEvent(node, elt, qual.split(".", 1)[1]))

    def _getattr_operands(self, node: cst.Call) -> Optional[Tuple[cst.Arg, cst.Arg]]:
        """The object and name arguments of an attribute lookup spelled as a call, else ``None``:
        ``getattr(x, name[, default])`` and ``object.__getattribute__(x, name)`` (the builtins, not
        shadowed), and ``x.__getattribute__(name)`` (also when the bound method is itself looked
        up, ``getattr(x, "__getattribute__")(name)``).

        Python's attribute protocol: ``x.name`` calls ``type(x).__getattribute__(x, "name")``, so
        each spelling is the attribute access itself.  Dynamo agrees for the method names
        measured: ``t.__getattribute__("item")()`` breaks as ``t.item()`` does and
        ``t.__getattribute__("shape")[0]`` traces (torch 2.13).
        """
        func, args = node.func, node.args
        if isinstance(func, cst.Call):
            func = self._constant_getattr(func) or func
        if isinstance(func, cst.Attribute) and func.attr.value == "__getattribute__":
            if len(args) == 1:  # ``x.__getattribute__(name)``
                return cst.Arg(value=func.value), args[0]
            if len(args) == 2 and isinstance(func.value, cst.Name) and func.value.value == "object" and not self._shadowed("object"):
                return args[0], args[1]  # ``object.__getattribute__(x, name)``
            if len(args) == 2 and (self.qualname(func.value) in _TENSOR_CLASSES or self._is_type_of_tensor(func)):
                return args[0], args[1]  # ``torch.Tensor.__getattribute__(t, name)``, ``type(t).__getattribute__(t, name)``
            return None
        if isinstance(func, cst.Name) and func.value == "getattr" and len(args) in (2, 3) and not self._shadowed("getattr"):
            return args[0], args[1]
        return None

    def _class_of_instance(self, expr: cst.BaseExpression) -> Optional[Value]:
        """The class of an instance of a project class, as the receiver of a method call:
        ``type(self).m(...)`` and ``self.__class__.m(...)`` (``self`` any name bound to such an
        instance), else ``None``.  Only there: as a value passed around, ``type(self)`` stays a
        constant (one argument kind for the functions it is passed to)."""
        if isinstance(expr, cst.Call) and len(expr.args) == 1 and not expr.args[0].star and expr.args[0].keyword is None:
            if not (isinstance(expr.func, cst.Name) and expr.func.value == "type" and not self._shadowed("type")):
                return None
            inner = expr.args[0].value
        elif isinstance(expr, cst.Attribute) and expr.attr.value == "__class__":
            inner = expr.value
        else:
            return None
        if not isinstance(inner, cst.Name):
            return None
        v = self.eval(inner)
        if v.kind in (Kind.SELF, Kind.MODULE) and isinstance(v.ref, ClassInfo) and not v.maybe_none:
            return Value(Kind.CLASS, ref=v.ref)
        return None

    def _patterned_getattr(self, node: cst.Call) -> Optional[Value]:
        """``getattr(self, f"_forward_{mode}")`` / ``getattr(self, "{}_reduction".format(kind))`` /
        ``getattr(self, "reduce_" + kind)``: a method of the instance's class whose name the literal
        parts of the computed name fit, "one of these" when several do (every candidate is followed
        when the value is called; Dynamo, which knows the name, traces the one it names).  ``None``
        when the call is not the builtin ``getattr`` of a project instance with such a name, or
        when no method, or more than :data:`objects.MAX_CANDIDATES`, fit."""
        if not (isinstance(node.func, cst.Name) and node.func.value == "getattr" and self._is_builtin("getattr")):
            return None
        if len(node.args) != 2 or any(a.keyword is not None or a.star for a in node.args):
            return None
        pattern = _name_pattern(node.args[1].value)
        if pattern is None:
            return None
        owner = self.quiet_eval(node.args[0].value)
        if owner.kind not in (Kind.SELF, Kind.MODULE) or not isinstance(owner.ref, ClassInfo) or owner.maybe_none:
            return None
        self.eval(node.args[1].value)  # the name's own expression runs (its calls, its reads)
        names: List[str] = []
        for cls in owner.ref.mro():
            if not isinstance(cls, ClassInfo):
                continue
            for name, fn in cls.methods.items():
                if name not in names and pattern.fullmatch(name) and fn.kind not in ("property", "staticmethod", "classmethod"):
                    names.append(name)
        if not names or len(names) > objects.MAX_CANDIDATES:
            return None
        values = [self.attribute(owner, name, None) for name in names]
        return objects.one_of(values) if len(values) > 1 else values[0]

    def _getattribute_form(self, node: cst.Call) -> Optional[str]:
        """For a call that :meth:`_getattr_operands` reads as an attribute lookup: ``"object-getattribute"``
        for ``object.__getattribute__(x, name)``, ``"getattribute"`` for the other ``__getattribute__``
        spellings, ``None`` for ``getattr(x, name)`` (which Dynamo traces as the attribute itself)."""
        func = node.func
        if isinstance(func, cst.Call):
            func = self._constant_getattr(func) or func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "__getattribute__"):
            return None
        if len(node.args) == 2 and isinstance(func.value, cst.Name) and func.value.value == "object":
            return "object-getattribute"
        return "getattribute"

    def _eval_getattribute(self, node: cst.Call, attr: cst.Attribute, form: str) -> Value:
        """The value of ``x.__getattribute__("name")`` (``form`` as :meth:`_getattribute_form` says), read
        as ``attr`` (``x.name``), after reporting the lookup when Dynamo breaks on it."""
        q = self.qualname(attr)
        if q is not None and not (isinstance(attr.value, cst.Name) and self.frame.is_bound(attr.value.value)):
            return self.eval(attr)  # an attribute of a module or another named object
        base = self.eval(attr.value)
        name = identifier(attr.attr.value)
        self._lookup_break(node, form, base, name)
        return self.attribute(base, name, attr)

    def _lookup_break(self, node: cst.Call, form: str, base: Value, name: str) -> None:
        """Emit a :class:`LookupBreakEvent` when the ``__getattribute__`` lookup ``node`` of ``name`` on
        ``base``, a value that is surely a tensor, breaks the graph.

        Measured on torch 2.13 (a graph-counting backend and the graph_breaks log):
        ``t.__getattribute__(name)`` is put in the graph as a call of the tensor method
        ``__getattribute__``, whose result must be a tensor, a ``torch.Size`` or ``None``; so every
        method (``"sum"``, ``"item"``, ``"size"``) and every other attribute (``"dtype"``,
        ``"device"``, ``"ndim"``, ``"requires_grad"``, ``"is_cuda"``, ``"itemsize"``) breaks with
        "torch.* op returned non-Tensor" (GB0208), while ``"shape"``, ``"T"``, ``"mT"``, ``"H"``,
        ``"mH"``, ``"data"``, ``"real"``, ``"grad"``, ``"grad_fn"`` (of a leaf) and ``"name"`` trace.
        Only names of ``torch.Tensor``'s attributes (the facts table) are reported.
        ``object.__getattribute__(t, name)`` breaks for every name, ``"shape"`` included
        ("Unsupported method call", GB0156).
        """
        if self.silent or base.kind is not Kind.TENSOR or base.weak or base.maybe_none:
            return
        if form == "object-getattribute":
            gb = "GB0156"
        elif name in dynamo_facts.tensor_attributes() and name not in _GETATTRIBUTE_TRACES:
            gb = "GB0208"
        else:
            return
        self.emit("on_lookup_break", LookupBreakEvent(node, form, name, gb))

    def _shadowed(self, builtin: str) -> bool:
        """Whether the name of a builtin is bound in the running frame or defined in the module."""
        return (self.frame is not None and self.frame.is_bound(builtin)) or builtin in self.index.defined_names

    def _constant_getattr(self, node: cst.Call) -> Optional[cst.Attribute]:
        """``x.name`` for ``getattr(x, "name")`` / ``getattr(x, "name", default)`` (and the other
        spellings :meth:`_getattr_operands` reads) with a constant string naming an identifier;
        else ``None``.

        Dynamo resolves a constant-string ``getattr`` as the attribute access itself, so the
        interpreter does too.  The ``Attribute`` node is made once per call and kept (node
        identities key the facts of a run).  A name bound to a known string (``N = "item"``) may
        have another value in another analysis of the call, so the node is kept per name.
        """
        found = self._getattr_operands(node)
        if found is None:
            return None
        obj, name = found
        if obj.keyword is not None or obj.star or name.keyword is not None or name.star:
            return None
        text = _literal_string(name.value)
        if not isinstance(text, str):
            text = self._constant_name_string(name.value)
        if text is None or not text.isidentifier():
            return None
        key = (id(node), text)
        cached = self._getattr_nodes.get(key)
        if cached is not None and cached[0] is node:
            return cached[1]
        attr = cst.Attribute(value=obj.value, attr=cst.Name(text))
        self._getattr_nodes[key] = (node, attr)
        return attr

    def _constant_name_string(self, expr: cst.BaseExpression) -> Optional[str]:
        """The identifier a name is surely bound to as a string constant (``N = "item"`` at module level
        or in the function), else ``None``."""
        if not isinstance(expr, cst.Name) or self.frame is None:
            return None
        v = self.eval_Name(expr)
        if v.kind is not Kind.CONST or v.maybe_none or not isinstance(v.const, str):
            return None
        return v.const if v.const.isidentifier() else None

    def _registers_always(self) -> bool:
        """The code being collected runs whenever the module is built: a construction method
        (``__init__``, ``__post_init__``, ``setup``, ``build``) or what it calls, or code outside a
        class's collection.  A hook registered by another method (``enable_input_require_grads()``,
        ``attach()``) exists only once someone calls that method, so it is not taken for part of
        every compiled call (as a hook handle set there may be ``None``, see PTC317)."""
        return self._collection_root is None or self._collection_root in _CONSTRUCTION_METHODS

    def _collect_attr_call(self, node: cst.Call, receiver: Value, method: str, args) -> None:
        """While collecting ``self`` attributes: ``register_buffer``/``register_parameter``/``add_module``,
        ``self.layers.append(Block())`` (a ModuleList filled in a loop), and forward hooks."""
        if method in ("register_forward_hook", "register_forward_pre_hook") and args and self._registers_always():
            with_kwargs = any(
                a.keyword is not None and a.keyword.value == "with_kwargs" and isinstance(a.value, cst.Name) and a.value.value == "True"
                for a in node.args
            )
            func = node.func
            if receiver.kind is Kind.SELF:
                where = None  # on the module itself: it runs after forward, in __call__
            elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and self._is_self_attr(func.value):
                where = func.value.attr.value  # ``self.enc.register_forward_hook(...)``
            else:
                where = "*"  # a submodule reached another way
            self._record_hook(args[0], method == "register_forward_pre_hook", with_kwargs, where)
        if receiver.kind is Kind.SELF and isinstance(receiver.ref, ClassInfo) and len(args) >= 2:
            first = node.args[0].value
            if isinstance(first, cst.SimpleString) and method in ("register_buffer", "register_parameter", "add_module"):
                name = first.evaluated_value
                if isinstance(name, str):
                    if method == "add_module":
                        value = args[1]
                    else:
                        # a buffer keeps what is known of its tensor's shape and dtype (``torch.arange(T)``)
                        kept = args[1].ref if args[1].kind is Kind.TENSOR and args[1].ref in (ONE_D_INT_TENSOR, ONE_D_FLOAT_TENSOR) else None
                        is_bool = args[1].kind is Kind.TENSOR and args[1].bool_tensor and not args[1].weak
                        value = Value(Kind.TENSOR, maybe_none=args[1].kind is Kind.NONE, ref=kept, bool_tensor=is_bool)
                    self._touch(receiver.ref)
                    receiver.ref.attrs[name] = value
            return
        func = node.func
        if (
            method in ("append", "extend", "insert")
            and isinstance(func, cst.Attribute)
            and self._is_self_attr(func.value)
            and receiver.kind in (Kind.MODULE, Kind.CONTAINER)
            and args
        ):
            owner = self.frame.lookup("self") if self.frame else None
            if owner is not None and owner.kind is Kind.SELF and isinstance(owner.ref, ClassInfo):
                added = args[-1].element() if method == "extend" else args[-1]
                elt = added if receiver.elt is None else join(receiver.elt, added)
                self._touch(owner.ref)
                owner.ref.attrs[func.value.attr.value] = replace(receiver, elt=elt, elts=None)

    def _emit_call_writes(self, node, qual, method, receiver, callee_value, args, kwargs) -> None:
        if not self.wants("on_write"):
            return
        if method is not None and receiver is not None and api.is_inplace_method(method):
            if receiver.kind is Kind.TENSOR or (receiver.alias_of and receiver.kind is Kind.UNKNOWN):
                self.emit("on_write", WriteEvent(node, receiver, f"`.{method}()` (in-place method)"))
        out = kwargs.get("out")
        if out is not None and (qual or method):
            targets = out.elts if out.kind is Kind.CONTAINER and out.elts else (out,)
            for t in targets:
                if t.kind is Kind.TENSOR:
                    self.emit("on_write", WriteEvent(node, t, "`out=` argument"))
        if qual is not None and args:
            last = qual.rsplit(".", 1)[-1]
            if qual.startswith("torch.") and api.is_inplace_method(last) and not last.startswith("__"):
                self.emit("on_write", WriteEvent(node, args[0], f"`{last}()` (in-place function)"))
            elif qual.startswith("torch._foreach_") and last.endswith("_") and not last.endswith("__"):
                # ``torch._foreach_mul_(tensors, 0.9)``: every tensor of the first list is written
                target = args[0].element() if args[0].kind is Kind.CONTAINER else args[0]
                self.emit("on_write", WriteEvent(node, target, f"`{last}()` (in-place on each tensor of the list)"))
            elif qual.startswith("torch.nn.functional.") and last in api.INPLACE_FUNCTIONAL_POS:
                flag = kwargs.get("inplace")
                pos = api.INPLACE_FUNCTIONAL_POS[last]
                if flag is None and len(args) > pos:
                    flag = args[pos]
                if flag is not None and flag.kind is Kind.CONST and flag.const is True:
                    self.emit("on_write", WriteEvent(node, args[0], f"`{last}(..., inplace=True)`"))
        if callee_value is not None and callee_value.kind is Kind.MODULE and isinstance(callee_value.ref, str) and callee_value.const == "inplace" and args:
            self.emit("on_write", WriteEvent(node, args[0], f"an `inplace=True` `{callee_value.ref.rsplit('.', 1)[-1]}` module"))
        if qual is None and method is None and callee_value is None:
            return

    def _call_result(self, node, qual, method, receiver, callee_value, args, kwargs):
        """(result value, local callee) of a call."""
        chain = self.frame.chain if self.frame else ()
        if callee_value is not None and callee_value.kind is Kind.FUNCTION and callee_value.weak:
            # a known function or a value of unknown kind (see kinds.join): follow the function;
            # what the call returns may also be anything
            result, fn = self._call_result(node, qual, method, receiver, replace(callee_value, weak=False), args, kwargs)
            return join(result, UNKNOWN), fn
        if objects.is_one_of(callee_value):
            return self._call_candidates(node, qual, method, receiver, callee_value, args, kwargs), None
        if callee_value is not None and objects.is_record_class(callee_value):
            return objects.make_record(callee_value.keys, args, kwargs), None
        # -- local functions, methods, submodules -------------------------------------------------
        if callee_value is not None:
            k = callee_value.kind
            if k is Kind.FUNCTION and isinstance(callee_value.ref, FunctionInfo):
                fn: FunctionInfo = callee_value.ref
                return self._call_local(fn, callee_value, args, kwargs, chain), fn
            if k is Kind.CLASS and isinstance(callee_value.ref, ClassInfo):
                cls = callee_value.ref
                if self.silent and self.frame is not None and self.frame.cls is not None:
                    self.instantiated.add(cls)
                if not self.silent and self.frame is not None:
                    return self._construct(cls, args, kwargs, chain), None
                return Value(Kind.MODULE, ref=cls), None
            if k is Kind.MODULE:
                self._call_node = node
                try:
                    return self._call_module(callee_value, args, kwargs, chain), callee_value.ref
                finally:
                    self._call_node = None
            if k is Kind.SELF and isinstance(callee_value.ref, ClassInfo):
                fwd = callee_value.ref.lookup_method("forward") or callee_value.ref.lookup_method("__call__")
                if fwd is not None:
                    return self.invoke(fwd, callee_value, args, kwargs, chain), fwd
            if k is Kind.UNKNOWN and isinstance(callee_value.ref, str):
                qual = callee_value.ref
            elif k is not Kind.UNKNOWN or method is None:
                if k is Kind.UNKNOWN and callee_value.alias_of:
                    return UNKNOWN, None
                if qual is None:
                    return UNKNOWN, None
        # -- method calls on values ----------------------------------------------------------------
        if method == "apply" and receiver is not None and qual is None:
            applied = self._module_apply(receiver, args, kwargs, chain)
            if applied is not None:
                return applied
        if method is not None and receiver is not None and qual is None:
            return self._method_result(receiver, method, args, kwargs), None
        if qual is None:
            return UNKNOWN, None
        if qual == "builtins.hasattr" and self._hasattr_truth(node) is True:
            return const(True), None
        if qual == "collections.defaultdict":
            return self._default_dict(node, args, kwargs, chain), None
        result = self._qualified_result(qual, args, kwargs, chain)
        if result.kind is Kind.TENSOR and result.ref is None and not result.weak:
            zero_d = rank0.function_result(qual, args, kwargs)
            if zero_d is not None:
                return zero_d, None  # ``torch.bucketize(v.mean(), edges)``: 0-d (see rank0)
        return _one_d_int(qual, args, kwargs, result), None

    #: ``iter()``/``reversed()`` of a literal or of a call of one of these builtins: the iterable's type
    _ITERABLE_NODES = {cst.List: "list", cst.ListComp: "list", cst.Tuple: "tuple", cst.Dict: "dict", cst.DictComp: "dict",
                       cst.Set: "set", cst.SetComp: "set", cst.SimpleString: "str", cst.ConcatenatedString: "str",
                       cst.FormattedString: "str"}

    def _iterator_constructor(self, qual: str, node: cst.Call) -> Optional[str]:
        """The ``iterator_objects`` key of the iterator ``node`` builds (``itertools.count()`` ->
        ``"itertools.count"``, ``zip(a, b)`` -> ``"builtins.zip"``, ``iter([...])`` ->
        ``"builtins.iter:list"``), or None: not an iterator constructor the facts table probed, or
        ``iter()``/``reversed()`` of an iterable whose Python type is not known from its
        expression (a literal, a comprehension, or a call of ``list``/``tuple``/``dict``/``set``/
        ``str``/``range``)."""
        if qual in ("builtins.iter", "builtins.reversed"):
            pos = [a for a in node.args if a.keyword is None]
            if len(node.args) != 1 or len(pos) != 1 or pos[0].star:
                return None
            arg = pos[0].value
            kind = self._ITERABLE_NODES.get(type(arg))
            if kind is None and isinstance(arg, cst.Call):
                called = self.qualname(arg.func)
                if called in ("builtins.list", "builtins.tuple", "builtins.dict", "builtins.set", "builtins.str", "builtins.range"):
                    kind = called[9:]
            key = f"{qual}:{kind}" if kind else None
        else:
            key = qual
        return key if dynamo_facts.iterator_type(key) is not None else None

    def _call_candidates(self, node, qual, method, receiver, callee_value: Value, args, kwargs) -> Value:
        """Call each candidate of a "one of these" value (``SOLVERS[method](...)``, ``f if c else g``).

        Every candidate is analysed with the call's argument kinds, and the chain of a
        finding reached through one names the candidates; the result is the join of
        theirs (instances of different classes stay "one of these").
        """
        viable = tuple(c for c in callee_value.elts if not _cannot_take(c, node))
        if viable and len(viable) < len(callee_value.elts):
            # ``default(experts, lambda: Experts(dim))`` called with an argument: the lambda, which
            # takes none, is not what the call runs (it would raise TypeError)
            if len(viable) == 1:
                return self._call_result(node, qual, method, receiver, viable[0], args, kwargs)[0]
            callee_value = replace(callee_value, elts=viable)
        results = []
        saved = self._via_candidates
        names = objects.candidate_names(callee_value)
        start, outcomes = self.gb_events, []
        try:
            for c in callee_value.elts:
                self._via_candidates = names
                before = self.gb_events
                results.append(self._call_result(node, qual, method, receiver, c, args, kwargs)[0])
                outcomes.append((c, self.gb_events > before))
        finally:
            self._via_candidates = saved
        sourceless.note_candidates(self, node, start, outcomes)
        return _join_candidates(results)

    def _construct(self, cls: ClassInfo, args, kwargs, chain) -> Value:
        """``Cls(...)`` inside a compiled region: Dynamo traces the object's ``__init__`` with the
        call's arguments; the instance's attributes keep the kinds they are given there and in
        the methods later called on it (see :mod:`pt2lint.analysis.objects`).

        ``typing.NamedTuple`` classes give a record of their fields; ``@dataclass`` classes
        without their own ``__init__`` bind their annotated fields (then run ``__post_init__``).
        """
        if objects.is_namedtuple_bases(cls.bases):
            fields = objects.annotated_fields(cls.node)
            return objects.make_record([n for n, _ in fields], args, kwargs)
        self.built.setdefault(id(cls), {})
        init = cls.lookup_method("__init__")
        self_value = Value(Kind.SELF, ref=cls, const=objects.BUILT)
        if init is None and any(objects.is_dataclass_node(c.node) for c in cls.mro()):
            names = [n for c in reversed(cls.mro()) for n, _ in objects.annotated_fields(c.node)]
            rec = objects.make_record(names, args, kwargs)
            for name, v in zip(rec.keys, rec.elts):
                self._store_built(cls, name, v)
            post = cls.lookup_method("__post_init__")
            if post is not None:
                self.invoke(post, self_value, [], {}, chain)
        elif init is not None:
            tracked = cls.is_module
            if tracked:
                self._init_builds.append([])
            try:
                self.invoke(init, self_value, args, kwargs, chain)
            finally:
                if tracked:
                    inner = self._init_builds.pop()
                    if self._init_builds:
                        self._init_builds[-1].append((cls, init))
                        self._init_builds[-1].extend(inner)
        return Value(Kind.MODULE, ref=cls, const=objects.BUILT)

    def _module_init_broke(self, fn: FunctionInfo, self_value: Optional[Value]) -> None:
        """The constructor of an ``nn.Module`` built in the compiled region graph-broke (its frame is current).

        Dynamo then runs that ``__init__`` as a frame of its own, whose ``self`` has not been
        through ``nn.Module.__init__`` yet: "Uninitialized nn.Module" (GB0119), reported at the
        ``super().__init__()`` call (measured on torch 2.13 with the graph_breaks log).
        """
        if self_value is None or self_value.const != objects.BUILT or fn.name != "__init__":
            return
        cls = self_value.ref
        if not isinstance(cls, ClassInfo) or not cls.is_module or cls.lookup_method("__init__") is not fn:
            return
        node = objects.super_init_call(fn.node)
        if node is None:
            return
        saved = self.stmt, self.header, self.index
        self.stmt, self.header = node, None
        try:
            self.emit("on_construct", ConstructEvent(node, cls, fn))
            # Dynamo gives up on that ``__init__`` and runs it eagerly; every nn.Module it builds
            # (and they build) then has its own ``__init__`` compiled as a frame, which breaks the
            # same way at its ``super().__init__()`` (measured on torch 2.13: a child built after
            # a ``print`` in the parent's ``__init__`` breaks at its own ``super().__init__()``)
            seen = {id(fn)}
            for child, child_init in (self._init_builds[-1] if self._init_builds else ()):
                child_node = objects.super_init_call(child_init.node)
                if child_node is None or id(child_init) in seen:
                    continue
                seen.add(id(child_init))
                if child_init.module is not None:
                    self.index = child_init.module
                self.stmt = child_node
                self.emit("on_construct", ConstructEvent(child_node, child, child_init, inside=cls))
        finally:
            self.stmt, self.header, self.index = saved

    def fresh_self(self) -> bool:
        """Whether the method being analysed runs on an object constructed inside the compiled region."""
        sv = self.frame.self_value if self.frame is not None else None
        return sv is not None and sv.const == objects.BUILT

    def _store_built(self, cls: ClassInfo, name: str, value: Value) -> None:
        """Record ``self.<name> = value`` for a class whose instances are constructed in a compiled region."""
        built = self.built.get(id(cls))
        if built is None:
            return
        value = replace(value, alias_of=None) if value.alias_of and value.kind is not Kind.TENSOR else value
        built[name] = join(built[name], value) if name in built else value

    def _call_local(self, fn: FunctionInfo, callee_value: Value, args, kwargs, chain) -> Value:
        bound_self = callee_value.elt if callee_value.elt is not None and callee_value.elt.kind is Kind.SELF else None
        owner = callee_value.elt
        if bound_self is None and owner is not None and owner.kind is Kind.MODULE and isinstance(owner.ref, ClassInfo):
            bound_self = Value(Kind.SELF, ref=owner.ref, const=owner.const)  # a method of an instance (``obj.method(x)``)
        if callee_value.const == "autograd.apply":
            return self.invoke(fn, None, [UNKNOWN] + list(args), kwargs, chain)
        if callee_value.const == _PARTIAL:
            kwargs = {**_partial_kwargs(callee_value), **kwargs}
        return self.invoke(fn, bound_self, args, kwargs, chain)

    def invoke(self, fn: FunctionInfo, bound_self: Optional[Value], args, kwargs, chain) -> Value:
        """Call a local function or method (``bound_self`` for bound methods), through same-file decorators."""
        fn.link_decorators()  # (a decorator imported from another module may disable the function)
        if fn.opaque:
            return self._custom_op_call(fn, args, kwargs)
        if fn.disabled:
            return UNKNOWN
        if fn.local_decorators:
            wrapper = self._decoration(fn)
            if wrapper is not None:
                wargs = ([bound_self] if bound_self is not None and fn.kind in ("method", "property") else []) + list(args)
                return self.call_function(wrapper, None, self.bind_arguments(wrapper, wargs, kwargs, False), {}, chain)
        if fn.kind == "staticmethod" or fn.cls is None:
            return self.call_function(fn, None, self.bind_arguments(fn, args, kwargs, False), {}, chain)
        if fn.kind == "classmethod":
            return self.call_function(fn, None, self.bind_arguments(fn, args, kwargs, True), {}, chain)
        if bound_self is None:
            # an unbound method called through its class (``Base.forward(self, x)``) or a wrapper
            return self.call_function(fn, None, self.bind_arguments(fn, args, kwargs, False), {}, chain)
        return self.call_function(fn, bound_self, self.bind_arguments(fn, args, kwargs, True), {}, chain)

    def _custom_op_call(self, fn: FunctionInfo, args, kwargs) -> Value:
        """A call of an opaque function (``allow_in_graph``, ``torch.library.custom_op``): Dynamo
        puts it in the graph without tracing its body.  A custom op declared with
        ``mutates_args=("x",)`` writes the tensors passed as those parameters (its schema marks them
        ``Tensor(a!)``; measured on torch 2.13 with the dispatch-mode watcher: an input passed
        there is mutated), and its result is what its return annotation declares."""
        if fn.cls is None and fn.node.decorators:
            mutated = _custom_op_mutated_params(fn, self.index)
            if mutated:
                bound = self.bind_arguments(fn, list(args), dict(kwargs), False)
                for name in mutated:
                    v = bound.get(name)
                    if v is not None and self.frame is not None:
                        self.emit("on_write", WriteEvent(self._call_node_or(fn), v, f"custom op `{fn.name}` (mutates_args)"))
        return self._declared_return(fn, UNKNOWN)

    def _call_node_or(self, fn: FunctionInfo) -> cst.CSTNode:
        """The call being dispatched (where a write through it is reported), else ``fn``'s node."""
        frame = self.frame
        node = frame.calling if frame is not None else None
        return node if node is not None else fn.node

    def _decoration(self, fn: FunctionInfo) -> Optional[FunctionInfo]:
        """:meth:`_decorated` of ``fn``, worked out once per function and knob settings.

        Python applies a decorator once, when the ``def`` runs, and every call goes to the
        wrapper it returned; the decorator's arguments are constants of the class or module
        body (:meth:`_decorator_call_args`), so the wrapper is the same for every call site.
        Interpreting the decorator again on each call (``@auto_docstring``-style decorators
        that rewrite docstrings are long) only repeated the same work.
        """
        hit = self._decorations.get(id(fn))
        if hit is not None and hit[0] is fn and hit[1] is self.settings:
            wrapper = hit[2]
        else:
            wrapper = self._decorated(fn)
            self._decorations[id(fn)] = (fn, self.settings, wrapper)
        return copy.copy(wrapper) if wrapper is not None else None

    def _decorated(self, fn: FunctionInfo) -> Optional[FunctionInfo]:
        """The wrapper function a same-file decorator returns for ``fn`` (outermost decorator first)."""
        dec_expr = fn.local_decorators[0]
        deco_name = dotted_name(dec_expr.func if isinstance(dec_expr, cst.Call) else dec_expr)
        deco = fn.decorator_targets.get(id(dec_expr))
        if deco is None:
            home = fn.module if fn.module is not None else self.index
            deco = home.functions.get(deco_name or "")
        if deco is None:
            return None
        inner = FunctionInfo(fn.node, fn.symbol, fn.cls)
        inner.kind = fn.kind
        inner.closure = fn.closure
        inner.module = fn.module
        inner.decorator_targets = fn.decorator_targets
        inner.local_decorators = fn.local_decorators[1:]
        inner.decorators_linked = True
        inner.origin = fn.origin or fn
        # a decorator (with these constant arguments) that returned its argument on every path for
        # another function of this kind returns this one too: the analysis knows nothing of a
        # function object that could make it take another path (``__name__``, ``__doc__``,
        # ``inspect`` results are all unknown to it), so the run is the same
        key = (id(deco), self._decorator_key(dec_expr), fn.kind, fn.cls is None)
        known = self._identity_decorators.get(key)
        if known is not None and known is deco:
            return inner
        # ... and so for later entry files of this process: the run's project lookups are
        # replayed for their dependency record (see :mod:`pt2lint.analysis.foreign`)
        shared = foreign.decorator_key(deco, key[1:], self.project, self.settings, getattr(self.entry, "path", ""))
        if shared is not None:
            hit = foreign.lookup_identity(shared, deco)
            if hit is not None and self._replay_lookups(hit.loads, hit.digests):
                self._identity_decorators[key] = deco
                return inner
        first = deco
        target_value = Value(Kind.FUNCTION, ref=inner)
        rec = outer = log = None
        if shared is not None:
            rec, outer, log = foreign.Recording(), self._recording, self.project.lookup_log
            self._recording, self.project.lookup_log = rec, rec.loads
            made = len(self.instantiated)
        self.silent += 1
        try:
            bound: Dict[str, Value] = {}
            if isinstance(dec_expr, cst.Call):
                dargs, dkwargs = self._decorator_call_args(dec_expr)
                factory = self._returned_callable(deco, self._bind_decorator(deco, dargs, dkwargs))
                if factory is None:
                    return None
                deco, bound = factory.ref, _partial_kwargs(factory)
            returned: List[Value] = []
            value = self._returned_callable(deco, self._bind_decorator(deco, [target_value], bound), returned)
            if returned and all(c.kind is Kind.FUNCTION and c.ref is inner for c in returned):
                self._identity_decorators[key] = first
                # kept for other entries only when the run read no class state and built nothing
                # (its outcome then depends on the project files and settings alone)
                if rec is not None and not rec.pre and len(self.instantiated) == made:
                    paths = {first.module.path} | {op[2] for op in rec.loads if op[0] == "load" and op[2]}
                    if getattr(self.entry, "path", "") not in paths:
                        digests = tuple(sorted((p, self.project.deps.get(p)) for p in paths))
                        foreign.remember_identity(shared, foreign.IdentityDecorator(first.node, tuple(rec.loads), digests))
            return value.ref if value is not None else None
        finally:
            self.silent -= 1
            if rec is not None:
                self._recording, self.project.lookup_log = outer, log
                if outer is not None:
                    outer.absorb(rec)

    def _decorator_key(self, dec_expr: cst.BaseExpression) -> str:
        """The source text of a decorator expression (its constant arguments included)."""
        return cst.Module([]).code_for_node(dec_expr)

    def _straight_line_name(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is a parameter or local name that only straight-line code binds, read outside
        loops (see :mod:`pt2lint.analysis.rebinding`): its current value is exact (``mask = None``
        then ``if mask is not None:``; branches that rebind it were joined into the value)."""
        frame = self.frame
        if not isinstance(expr, cst.Name) or frame is None:
            return False
        node = getattr(frame.func, "node", None)
        if rebinding.straight_line_parameter(node, expr.value, frame.loop_depth):
            return True
        name = identifier(expr.value)
        if name not in frame.env or name in frame.varying or name in frame.globals_declared:
            return False
        return rebinding.straight_line_local(node, expr.value, frame.loop_depth)

    def _field_of_object_built_here(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is ``obj.field`` where ``obj`` is a local name bound to an object this frame built
        (``out = Output(logits=h)``, a dataclass or class of the project), read outside loops, that no
        loop rebinds and whose fields nothing in the function can change (``obj`` is only ever
        bound and read as ``obj.attr``, never passed on, called a method of, or stored to): the
        value the interpreter holds for the field is the one the object was built with, so an
        ``is None`` test on it is decided.  Dynamo specialises on ``None`` (measured on torch
        2.13: ``out = Out(h); if out.aux is not None: print(...)`` traces without a graph break
        when ``aux`` defaults to ``None``)."""
        frame = self.frame
        if frame is None or not isinstance(expr, cst.Attribute) or not isinstance(expr.value, cst.Name):
            return False
        name = identifier(expr.value.value)
        node = getattr(frame.func, "node", None)
        if name not in frame.born or name not in frame.env or name in frame.varying or name in frame.globals_declared:
            return False
        if frame.born[name][1] is not frame.env.get(name):
            return False  # rebound since it was built
        return rebinding.straight_line_local(node, name, frame.loop_depth) and rebinding.only_fields_read(node, name)

    def _surely_not_none_here(self, expr: cst.BaseExpression, value: Value, right_node: cst.BaseExpression, right: Value) -> bool:
        """``expr is None`` is False while tracing: ``expr`` is a name of this frame (or an attribute
        of ``self`` that the compiled region does not store to) that surely does not hold ``None`` (:func:`~pt2lint.analysis.kinds.surely_not_none`: a literal, a
        number read out of tensor data, an ``int``-annotated constructor argument, a name an
        ``is not None`` test narrowed, a join of such values) and no enclosing loop rebinds it, so
        its value here is the same on every iteration.  Dynamo specialises on ``None`` and traces
        only the branch taken."""
        if not (isinstance(right_node, cst.Name) and right_node.value == "None" and right.kind is Kind.NONE):
            return False
        frame = self.frame
        if self._attribute_of_self(expr) and frame.self_value is not None:
            # ``self.norm is None`` with every store to ``self.norm`` outside the compiled region
            # surely not ``None`` (``Block(norm=nn.LayerNorm(d))`` at each construction site)
            attr = expr.attr.value
            if _self_slot(attr) in frame.env or (id(frame.self_value.ref), attr) in self._region_writes:
                return False
            return surely_not_none(value)
        if not isinstance(expr, cst.Name) or frame is None:
            return False
        name = identifier(expr.value)
        if name not in frame.env or name in frame.varying:
            return False
        return surely_not_none(value)

    def _fixed_parameter(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is a parameter of the function being analysed that its body never rebinds: its value
        is the one bound at the call for the whole body."""
        frame = self.frame
        node = getattr(frame.func, "node", None) if frame is not None else None
        params = getattr(node, "params", None)
        if not isinstance(expr, cst.Name) or not isinstance(params, cst.Parameters):
            return False
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        if expr.value not in names:
            return False
        return expr.value not in _rebound_names(node)

    def _decorator_call_args(self, dec_expr: cst.Call):
        """The arguments of a decorator factory call (``@cached(name="svd")``): literals and
        ``True``/``False``/``None`` keep their values, anything else is Unknown (the expression belongs to
        the class or module body, not to a frame the analysis runs).  Returns ``(args, kwargs)``;
        ``*``/``**`` arguments are left out."""
        args: List[Value] = []
        kwargs: Dict[str, Value] = {}
        for a in dec_expr.args:
            if a.star:
                continue
            v = _name_constant(a.value) or self._literal(a.value) or UNKNOWN
            if a.keyword is not None:
                kwargs[a.keyword.value] = v
            else:
                args.append(v)
        return args, kwargs

    def _bind_decorator(self, deco: FunctionInfo, args, kwargs) -> Dict[str, Value]:
        """``bind_arguments`` for a decorator or decorator factory: parameters left at a ``True``/``False``
        default take that constant, so a decorator's ``if ignore_args:`` follows the path Python takes at
        decoration time."""
        bound = self.bind_arguments(deco, args, kwargs, False)
        params = deco.node.params
        positional = list(params.posonly_params) + list(params.params)
        left = positional[len(args):] + list(params.kwonly_params)  # parameters no positional argument fills
        for p in left:
            name = identifier(p.name.value)
            v = _name_constant(p.default) if p.default is not None and name not in kwargs else None
            if v is not None:
                bound[name] = v
        return bound

    def _returned_callable(self, deco: FunctionInfo, params: Dict[str, Value], returned: Optional[List[Value]] = None) -> Optional[Value]:
        """The first local function (a ``FUNCTION`` value, possibly a ``functools.partial`` of one) that
        ``deco`` returns when run on ``params``; ``None`` when it returns none.  ``returned``, when
        given, receives every value any of its ``return`` statements may give."""
        frame = Frame(deco, dict(params), deco.closure, None, (deco.symbol,), None, None)
        saved = self.frame, self.stmt, self.header, self.index
        self.frame = frame
        if deco.module is not None:
            self.index = deco.module
        try:
            try:
                self.exec_block(deco.node.body)
            except _Terminated:
                pass
        finally:
            self.frame, self.stmt, self.header, self.index = saved
        if returned is not None:
            returned.extend(c for r in frame.returns for c in objects.candidates(r))
        for r in frame.returns:
            for c in objects.candidates(r):  # ``return f(obj) if obj else f``: the first definition returned
                if c.kind is Kind.FUNCTION and isinstance(c.ref, FunctionInfo):
                    return c
        return None

    def _call_module(self, mod: Value, args, kwargs, chain) -> Value:
        if isinstance(mod.ref, ClassInfo):
            cls = mod.ref
            # calling an instance runs its class's ``__call__`` when the project defines one
            # (a module that overrides it: Dynamo inlines the override, and ``super().__call__``
            # reaches ``forward``), else a module's ``forward``
            fwd = cls.lookup_method("__call__")
            if fwd is None and cls.is_module:
                fwd = cls.lookup_method("forward")
            if fwd is None:
                return UNKNOWN
            fresh = objects.BUILT if mod.const == objects.BUILT else None  # a module built in this call
            return self.invoke(fwd, Value(Kind.SELF, ref=cls, const=fresh), args, kwargs, chain)
        ref = mod.ref if isinstance(mod.ref, str) else ""
        last = ref.rsplit(".", 1)[-1]
        if last in ("Sequential",) and mod.elts:
            out = args[0] if args else UNKNOWN
            for sub in mod.elts:
                if sub.kind is Kind.MODULE:
                    if sub.const == "inplace" and self.frame is not None and self._call_node is not None:
                        # nn.Sequential(nn.ReLU(inplace=True), ...) applied to an input writes it
                        self.emit("on_write", WriteEvent(self._call_node, out, f"an `inplace=True` `{str(sub.ref).rsplit('.', 1)[-1]}` inside nn.Sequential"))
                    out = self._call_module(sub, [out], {}, chain)
                else:
                    out = TENSOR
            return out
        if last in ("LSTM", "GRU", "RNN", "MultiheadAttention", "Transformer"):
            return container(elt=TENSOR) if last != "Transformer" else TENSOR
        if last in ("ModuleList", "ModuleDict", "ParameterList", "ParameterDict"):
            return UNKNOWN
        if ref.startswith("torch.nn.") or mod.ref is None:
            if last in ("Identity", "Flatten", "Unflatten", "Dropout") and args and args[0].kind is Kind.TENSOR:
                return replace(args[0], alias_of=args[0].alias_of if last in ("Identity", "Flatten", "Unflatten") else None)
            if mod.ref is None:
                return Value(Kind.TENSOR, weak=True) if any(a.kind is Kind.TENSOR for a in args) else UNKNOWN
            return TENSOR
        return UNKNOWN

    def _module_apply(self, receiver: Value, args, kwargs, chain):
        """``module.apply(fn)`` (``nn.Module.apply``): Python calls ``fn`` on every submodule and on the
        module itself, so what ``fn`` does runs in the region (Dynamo traces into it: a hook it
        registers breaks there, GB0467, measured on torch 2.13).  ``fn`` is followed once with a
        module argument of unknown class; the call returns the receiver.  Returns ``(value, callee)``,
        or ``None`` when the receiver is no module or ``fn`` no function of the project."""
        if receiver.kind not in (Kind.MODULE, Kind.SELF) or len(args) != 1 or kwargs:
            return None
        if isinstance(receiver.ref, ClassInfo) and not receiver.ref.is_module:
            return None
        fnv = args[0]
        if fnv.kind is not Kind.FUNCTION or not isinstance(fnv.ref, FunctionInfo):
            return None
        # ``apply`` calls ``fn`` in its loop over the submodules: a first graph break in ``fn`` makes
        # Dynamo give up on it and the later ones are never reported (measured on torch 2.13: of two
        # hook registrations in a row only the first breaks), as for a loop body of ``fn`` itself
        self._run_in_loop = True
        try:
            self._call_local(fnv.ref, fnv, [MODULE], {}, chain)
        finally:
            self._run_in_loop = False
        return receiver, fnv.ref

    def _method_result(self, recv: Value, method: str, args, kwargs) -> Value:
        k = recv.kind
        if k is Kind.TENSOR:
            return self._tensor_method(recv, method, args, kwargs)
        if k is Kind.CONTAINER:
            if method in ("items",):
                return container(elt=container(elts=(CONST, recv.element())))
            if method in ("values",):
                return container(elt=recv.element())
            if method in ("keys",):
                return container(elt=CONST)
            if method in ("get", "pop", "setdefault"):
                if dicts.is_open(recv) and args and _string_key(args[0]):
                    hit = dicts.known_entries(recv).get(args[0].const)
                    if hit is not None:
                        return hit
                if recv.keys is not None and args and args[0].kind is Kind.CONST and isinstance(args[0].const, str):
                    default = args[1] if len(args) > 1 else (NONE if method == "get" else UNKNOWN)
                    hit = recv.item(args[0].const, default)
                    if hit is not None:
                        return hit
                return join(recv.element(), NONE) if method == "get" else recv.element()
            if method in ("index", "count"):
                return CONST
            if method in ("copy",):
                return recv
            if method == "_replace" and objects.is_record(recv):
                return objects.replace_fields(recv, kwargs)
            return UNKNOWN
        if k is Kind.SHAPE:
            if method in ("numel",):
                return SHAPE
            return SHAPE
        if k is Kind.MODULE:
            if method in _MODULE_SELF_METHODS and (not isinstance(recv.ref, ClassInfo) or recv.ref.is_module):
                return recv  # ``ResampleFrac(...).to(x)(x)``: the module itself
            if method in ("parameters", "buffers", "modules", "children"):
                return container(elt=TENSOR if method in ("parameters", "buffers") else MODULE)
            if method in ("named_parameters", "named_buffers", "named_modules", "named_children"):
                return container(elt=container(elts=(CONST, TENSOR if "param" in method or "buffer" in method else MODULE)))
            if method in ("items",):
                return container(elt=container(elts=(CONST, recv.element())))
            if method in ("values",):
                return container(elt=recv.element())
            return UNKNOWN
        if k is Kind.CONST:
            if _numpy_ref(recv) in _NUMPY_ARRAY_REFS:
                number = CONST if self._constructing else NUMPY_NUMBER
                if recv == NUMPY_ARRAY and not self._constructing and not getattr(self.settings, "capture_scalar_outputs", False):
                    number = DATA  # an array's data read into Python: a break (see NUMPY_ARRAY)
                if method == "item":
                    return number
                if method == "tolist":
                    return container(elt=number)
                return self._numpy_part(recv)
            folded = _string_method(recv, method, args, kwargs)
            if folded is not None:
                return folded  # ``torch.__version__.split(".")``: a known string's pieces
            if method in ("format", "join", "lower", "upper", "startswith", "endswith", "split", "strip", "replace", "get"):
                return CONST
            return UNKNOWN
        if recv.alias_of:
            return Value(Kind.UNKNOWN, alias_of=recv.alias_of) if method in api.VIEW_METHODS else UNKNOWN
        return UNKNOWN

    def _tensor_method(self, recv: Value, method: str, args, kwargs) -> Value:
        if recv.ref in (ONE_D_INT_TENSOR, ONE_D_FLOAT_TENSOR) and not recv.weak and not kwargs:
            flip = method == "flip" and len(args) == 1 and args[0].kind is Kind.CONST and args[0].const in (0, -1, (0,), (-1,))
            if flip or (method in _KEEPS_ONE_D and not args):
                return recv  # ``torch.arange(T).flip(0)``, ``.clone()``: still 1-d, same dtype
            if method in ("long", "int") and not args:
                return replace(recv, ref=ONE_D_INT_TENSOR)  # ``torch.linspace(0, T - 1, n).long()``
            if recv.ref == ONE_D_FLOAT_TENSOR and method in ("round", "floor", "ceil") and not args:
                return recv
        # A method only tensors have (``sum``, ``any``, ``view``) on a guessed tensor
        # makes it a tensor for sure; names shared with str/list/dict keep the guess weak.
        weak = recv.weak and method in _GENERIC_METHOD_NAMES
        known = dynamo_facts.tensor_attributes()
        if recv.weak and known and method not in _GENERIC_METHOD_NAMES and method not in known:
            # ``m.is_integer()``: torch.Tensor has no such method, so the guess was wrong
            # (a Python number or an object); what it returns is unknown, not a tensor
            return UNKNOWN
        dyn = recv.ref == "dynamic"
        if method == "item":
            if recv.py_float and not args and not kwargs:
                return UNKNOWN if recv.weak else Value(Kind.SHAPE, py_float=True)
            return DATA
        if method == "tolist":
            return Value(Kind.DATA)
        if method in api.SHAPE_METHODS:
            if dyn and self.settings.capture_dynamic_output_shape_ops and method in ("numel", "nelement"):
                return DATA
            return SIZE  # ``x.numel()``, ``x.dim()``: one number each
        if method in api.SIZE_METHODS:
            if dyn and self.settings.capture_dynamic_output_shape_ops:
                return DATA if args else Value(Kind.SHAPE, ref="dynamic")
            if args and args[0].kind is Kind.CONST and isinstance(args[0].const, int) and not kwargs:
                return SIZE  # ``x.size(0)``
            return SHAPE if args or kwargs else Value(Kind.SHAPE, ref="dynamic" if dyn else None)
        if method in api.CONST_METHODS:
            return CONST
        if method in ("numpy",):
            # Dynamo traces NumPy through torch._numpy: the array is a tensor in the graph
            return Value(Kind.TENSOR, weak=weak)
        if method in api.SPLIT_METHODS:
            return container(elt=Value(Kind.TENSOR, alias_of=recv.alias_of, bool_tensor=recv.bool_tensor, weak=weak))
        if method in api.TUPLE_METHODS:
            return _named_result(method, container(elt=Value(Kind.TENSOR, weak=weak)))
        if method in api.DIM_TUPLE_METHODS and (kwargs.get("dim") is not None or (args and args[0].kind in (Kind.CONST, Kind.SHAPE))):
            return _named_result(method, container(elt=Value(Kind.TENSOR, weak=weak)))
        if method in ("nonzero",) and kwargs.get("as_tuple") is not None and kwargs["as_tuple"].const is True:
            return container(elt=Value(Kind.TENSOR, ref="dynamic"))
        if method in ("unique", "unique_consecutive") and any(kwargs.get(k) is not None and kwargs[k].const is True for k in ("return_inverse", "return_counts")):
            return container(elt=Value(Kind.TENSOR, ref="dynamic"))
        if method in ("nonzero", "unique", "unique_consecutive", "masked_select", "argwhere", "nonzero_static"):
            return Value(Kind.TENSOR, weak=weak, ref="dynamic" if method != "nonzero_static" else None)
        if not args and not kwargs and (method in ("argmax", "argmin", "count_nonzero") or (method == "sum" and recv.bool_tensor)):
            return Value(Kind.TENSOR, weak=weak, ref=INT_SCALAR_TENSOR)  # a 0-d int64 tensor
        zero_d = rank0.method_result(recv, method, args, kwargs, weak)
        if zero_d is not None:
            return zero_d  # ``v.sum()``, ``v.mean().long()``: a 0-d tensor (see rank0)
        if method in api.BOOL_RESULT:
            return Value(Kind.TENSOR, bool_tensor=True, weak=weak)
        if method in ("to", "type") and any(_is_bool_dtype(a) for a in list(args) + [kwargs.get("dtype")] if a is not None):
            return Value(Kind.TENSOR, bool_tensor=True, weak=weak, alias_of=None)
        alias = recv.alias_of if (method in api.VIEW_METHODS or api.is_inplace_method(method)) else None
        if alias is not None and method in ("to", "type") and _cast_copies(args, kwargs):
            alias = None
        strided = False
        if alias is not None:
            if method in api.STRIDING_VIEWS:
                strided = True
            elif method in api.COPY_IF_STRIDED:
                # ``x.permute(...).contiguous()`` (or reshape/flatten) copies a non-contiguous view
                alias = None if recv.const == "strided" else alias
            else:
                strided = recv.const == "strided"
        bool_t = recv.bool_tensor and (
            method in api.DTYPE_PRESERVING
            or api.is_inplace_method(method)
            or (method in _NEW_FACTORIES and kwargs.get("dtype") is None)  # ``mask.new_zeros(n)``: the receiver's dtype
        )
        return Value(Kind.TENSOR, alias_of=alias, bool_tensor=bool_t, weak=weak, const="strided" if strided else None)

    def _default_dict(self, node: cst.Call, args, kwargs, chain) -> Value:
        """The value of ``collections.defaultdict(factory, ...)``: a dict, as ``dict(...)`` of the
        arguments after the factory makes it, whose entries (missing ones made by the factory) are
        what the factory makes where it is a builtin written out (``defaultdict(list)``: lists,
        ``defaultdict(int)``: numbers), else of unknown kind."""
        made = self._builtin_result("dict", args[1:], kwargs, chain)
        first = node.args[0] if node.args and node.args[0].keyword is None and not node.args[0].star else None
        factory = first.value.value if first is not None and isinstance(first.value, cst.Name) else None
        if factory is None or not self._is_builtin(factory) or made.keys is not None:
            return made
        if factory in ("list", "dict", "set"):
            product = container(elt=UNKNOWN)
        elif factory in ("int", "float"):
            product = CONST
        else:
            return made
        return replace(made, elt=product if made.elt is None or made.elt.kind is Kind.UNKNOWN else join(made.elt, product))

    def _qualified_result(self, qual: str, args, kwargs, chain) -> Value:
        if qual in VERSION_PARSERS and len(args) == 1 and not kwargs and isinstance(args[0].const, str) and args[0].kind is Kind.CONST:
            found = _release_version(args[0].const)
            if found is not None:
                return Value(Kind.CONST, const=found)
        if qual.startswith("torch.__version__.") and qual.count(".") == 2:
            # ``torch.__version__.split(".")``: a method of the known version string
            folded = _string_method(_qualified_value("torch.__version__"), qual.rsplit(".", 1)[-1], args, kwargs)
            if folded is not None:
                return folded
        if qual in _TORCHSCRIPT_MODULES and args and args[0].kind is Kind.MODULE:
            # ``torch.jit.script(Block())``: a module run by the TorchScript runtime (or a traced
            # graph), which Dynamo does not trace (see PTC328)
            return Value(Kind.MODULE, ref=_TORCHSCRIPT_MODULES[qual] if args[0].ref != SCRIPT_MODULE else SCRIPT_MODULE)
        if qual in objects.RECORD_FACTORIES:
            spec = args[1] if len(args) > 1 else kwargs.get("field_names") or kwargs.get("fields")
            fields = objects.record_fields(spec) if spec is not None else None
            if fields is not None:
                return objects.record_class(fields)
        fact = dynamo_facts.call_fact(qual)
        if fact is not None and fact.source == "random-variable":
            return RANDOM_DRAW
        if qual == "random.Random" and len(args) <= 1 and not kwargs:
            return RANDOM_INSTANCE
        if qual.startswith(RANDOM_INSTANCE_REF + ".") and qual[len(RANDOM_INSTANCE_REF) + 1:] in _RANDOM_INSTANCE_DRAWS:
            return RANDOM_DRAW
        if qual.startswith("builtins."):
            return self._builtin_result(qual[9:], args, kwargs, chain)
        if qual == "collections.OrderedDict":
            return self._builtin_result("dict", args, kwargs, chain)
        if qual == "collections.deque":
            # a list-like container of unknown length (``maxlen`` drops the oldest entries)
            return container(elt=args[0].element() if args and args[0].kind is Kind.CONTAINER else UNKNOWN)
        if qual in _ENVIRONMENT_READS:
            # Dynamo reads the process environment while tracing and guards on nothing: the
            # value is a constant of the run.  A switch such as ``os.environ.get("PROFILE", "0")``
            # is read as unset, as in a normal run: the default, or None
            default = args[1] if len(args) > 1 else kwargs.get("default")
            return default if default is not None else NONE
        number = _math_number_result(qual, args, kwargs)
        if number is not None:
            return number
        if qual in api.CONST_FUNCTIONS:
            return CONST
        if qual in api.SHAPE_FUNCTIONS:
            return SHAPE
        if qual in api.DATA_FUNCTIONS:
            return DATA
        if _numpy_sized_draw(qual, args, kwargs):
            return Value(Kind.TENSOR)
        if qual.startswith("numpy.random.") and dynamo_facts.numpy_object_class(qual):
            # ``np.random.default_rng(0)``: a generator object, not an array; a compiled region
            # calling its methods breaks there (the rules read ``<constructor>().<method>``)
            return Value(Kind.UNKNOWN, ref=f"{qual}()")
        python_result = dynamo_facts.numpy_python_result(qual)
        if python_result is not None:
            # ``np.size(a)``, ``np.shape(a)``, ``np.ndim(a)``: a Python number (a size of the array,
            # which Dynamo tracks like ``x.numel()``) or bool, not an array (dynamo_facts)
            return SIZE if python_result == "int" else SHAPE if python_result == "shape" else CONST
        if self._constructing and qual.startswith("numpy.") and _python_values_only(list(args) + list(kwargs.values())):
            return NUMPY_ARRAY if _numpy_array_result(qual, args) else NUMPY_VALUE
        folded = _numpy_float_scalar(qual, args, kwargs)
        if folded is not None:
            return folded
        if qual.startswith("numpy.") and not qual.startswith(api.NUMPY_NON_ARRAY):
            # Dynamo traces NumPy calls through torch._numpy: their results are tensors in
            # the graph, so branching on them or using them as ints breaks (measured on 2.13).
            # Of arguments only guessed to be tensors (and Python numbers otherwise), the result
            # is a guess too: on Python numbers the call may fold to a constant
            if not qual.rsplit(".", 1)[-1][:1].islower():
                return UNKNOWN
            guessed = any(a.kind is Kind.TENSOR and a.weak for a in args) and not any(
                a.kind is Kind.TENSOR and not a.weak for a in args
            )
            return Value(Kind.TENSOR, weak=guessed)
        if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"):
            return Value(Kind.TENSOR)
        if qual == "torch.Generator" or (qual.startswith(GENERATOR_REF + ".") and qual.rsplit(".", 1)[-1] == "manual_seed"):
            return GENERATOR  # ``Generator.manual_seed`` returns the generator itself
        if qual == "functools.partial":
            return _partial_value(args, kwargs)
        if qual == "operator.methodcaller":
            return _method_caller(args, kwargs)
        if qual == "operator.attrgetter":
            return _attr_getter(args, kwargs)
        if qual == "torch.utils.checkpoint.checkpoint" and args:
            # traced as a higher-order op: Dynamo inlines the function it checkpoints
            # (``checkpoint_sequential`` is skipped instead: the facts table, PTC307)
            fnv = args[0]
            if fnv.kind is Kind.FUNCTION and isinstance(fnv.ref, FunctionInfo):
                return self._call_local(fnv.ref, fnv, list(args[1:]), {k: v for k, v in kwargs.items() if k not in ("use_reentrant", "preserve_rng_state", "context_fn", "determinism_check", "debug")}, chain)
            if fnv.kind is Kind.MODULE:
                return self._call_module(fnv, list(args[1:]), {}, chain)
            return UNKNOWN
        if _is_nn_module_class(qual):
            return self._nn_module_value(qual, args, kwargs)
        if qual in ("torch.argmax", "torch.argmin", "torch.count_nonzero") and len(args) == 1 and not kwargs and args[0].kind is Kind.TENSOR:
            return Value(Kind.TENSOR, ref=INT_SCALAR_TENSOR)  # a 0-d int64 tensor
        if qual in COND_FUNCTIONS:
            self._trace_cond_branches(args, kwargs, chain)
            return TENSOR  # the branch functions' output: a tensor (or a tuple of them)
        if qual.startswith("torch.distributions.") and qual.rsplit(".", 1)[-1] in api.DISTRIBUTION_TENSOR_METHODS and _distribution_ref(qual.rsplit(".", 1)[0]):
            return TENSOR  # ``Categorical(logits=l).sample()``
        if qual.endswith("()") and qual[:-2] in api.FUNC_TRANSFORMS:
            # ``vmap(f)(x)``, ``grad(f)(x)``: the transformed function's result
            return container(elts=(TENSOR, TENSOR)) if qual[:-2] == "torch.func.grad_and_value" else TENSOR
        if qual in api.FUNC_TENSOR_CALLS or qual in ("torch.func.jvp", "torch.func.vjp"):
            if qual.endswith(("jvp", "vjp", "hvp", "vhp")):
                return container(elts=(TENSOR, TENSOR if qual != "torch.func.vjp" else UNKNOWN))
            return TENSOR
        if (
            qual in ("torch.atleast_1d", "torch.atleast_2d", "torch.atleast_3d") and len(args) == 1 and not kwargs
            and args[0].kind is Kind.TENSOR and _plain_args(self.frame.calling if self.frame is not None else None)
        ):
            # one tensor in, one tensor out (a tuple only for several tensors or a sequence of them)
            return replace(args[0], alias_of=None, ref=None)
        if qual in api.TUPLE_FUNCTIONS:
            return _named_result(_return_type_name(qual), container(elt=TENSOR))
        last = qual.rsplit(".", 1)[-1]
        if qual in ("torch.nonzero",) and kwargs.get("as_tuple") is not None and kwargs["as_tuple"].const is True:
            return container(elt=Value(Kind.TENSOR, ref="dynamic"))
        if qual == "torch.where" and len(args) == 1 and not kwargs:
            return container(elt=Value(Kind.TENSOR, ref="dynamic"))
        if qual in ("torch.max", "torch.min", "torch.median", "torch.mode") and (kwargs.get("dim") is not None or (len(args) > 1 and args[1].kind in (Kind.CONST, Kind.SHAPE))):
            return _named_result(_return_type_name(qual), container(elt=TENSOR))
        if qual in ("torch.unique", "torch.unique_consecutive") and any(kwargs.get(k) is not None and kwargs[k].const is True for k in ("return_inverse", "return_counts")):
            return container(elt=Value(Kind.TENSOR, ref="dynamic"))
        if dynamo_facts.is_context_manager(qual):
            return Value(Kind.UNKNOWN, ref=f"{qual}()")  # ``torch.no_grad()``: a context manager, not a tensor
        if api.is_tensor_function(qual):
            dyn = last in ("nonzero", "unique", "unique_consecutive", "masked_select", "argwhere", "bincount")
            if last in api.BOOL_RESULT:
                return Value(Kind.TENSOR, bool_tensor=True)
            dtype = kwargs.get("dtype")
            if dtype is not None and _is_bool_dtype(dtype):
                return Value(Kind.TENSOR, bool_tensor=True)
            if dtype is None and last in ("tensor", "as_tensor", "BoolTensor") and args and _all_bool_literals(args[0]):
                return Value(Kind.TENSOR, bool_tensor=True)  # ``torch.tensor([True, False, True])``: a bool tensor
            if last in ("tril", "triu", "clone", "logical_not") and args and args[0].bool_tensor:
                return Value(Kind.TENSOR, bool_tensor=True)
            if last in ("tensor", "as_tensor", "asarray") and dtype is None and args and args[0].kind is Kind.TENSOR and args[0].bool_tensor:
                return Value(Kind.TENSOR, bool_tensor=True)  # ``torch.as_tensor(p > u)``: the tensor's own dtype
            if last in _LIKE_FACTORIES and dtype is None and args and args[0].bool_tensor:
                return Value(Kind.TENSOR, bool_tensor=True)  # ``torch.zeros_like(mask)``: the input's dtype
            # ``torch.where(cond, a, b)`` has the dtype of ``a`` and ``b``, not of the condition
            if last in ("where",) and len(args) == 3 and args[1].bool_tensor and args[2].bool_tensor:
                return Value(Kind.TENSOR, bool_tensor=True)
            alias = None
            if last in api.VIEW_METHODS and args and args[0].kind is Kind.TENSOR:
                alias = args[0].alias_of
            return Value(Kind.TENSOR, ref="dynamic" if dyn else None, alias_of=alias)
        return Value(Kind.UNKNOWN, ref=f"{qual}()")

    def _trace_cond_branches(self, args, kwargs, chain) -> List[Value]:
        """``torch.cond(pred, true_fn, false_fn, operands)``: Dynamo traces both branch functions
        with the operands, each as a subgraph that may not break; what would break the graph in a
        branch raises instead (``UncapturedHigherOrderOpError``, in eager mode too, since
        ``torch.cond`` compiles itself), so it is reported in the branch, at its line.

        Returns:
            What the branches that are functions of the project return (modules called as
            branches are traced too, but not counted).
        """
        names = ("pred", "true_fn", "false_fn", "operands")
        bound = dict(zip(names, args))
        bound.update((k, v) for k, v in kwargs.items() if k in names)
        operands = bound.get("operands")
        values = list(operands.elts) if operands is not None and operands.kind is Kind.CONTAINER and operands.elts is not None else []
        results = []
        for key in ("true_fn", "false_fn"):
            fnv = bound.get(key)
            if fnv is None:
                continue
            if fnv.kind is Kind.FUNCTION and isinstance(fnv.ref, FunctionInfo):
                results.append(self._call_local(fnv.ref, fnv, list(values), {}, chain))
            elif fnv.kind is Kind.MODULE:
                self._call_module(fnv, list(values), {}, chain)
        return results

    def _nn_module_value(self, qual: str, args, kwargs) -> Value:
        last = qual.rsplit(".", 1)[-1]
        if last in api.INPLACE_MODULE_POS:
            flag = kwargs.get("inplace")
            pos = api.INPLACE_MODULE_POS[last]
            if flag is None and len(args) > pos:
                flag = args[pos]
            if flag is not None and flag.kind is Kind.CONST and flag.const is True:
                return Value(Kind.MODULE, ref=qual, const="inplace")
        if last in _NN_CONTAINERS:
            if last == "Sequential":
                if len(args) == 1 and args[0].kind is Kind.CONTAINER:
                    return Value(Kind.MODULE, ref=qual, elt=args[0].element())
                return Value(Kind.MODULE, ref=qual, elts=tuple(args), elt=_join_all(list(args)) if args else None)
            if args:
                a = args[0]
                elt = a.element() if a.kind is Kind.CONTAINER else None
                if last.startswith("Parameter"):
                    elt = TENSOR
                if last == "ModuleList" and _sized_list(a) and a.elts:
                    # ``nn.ModuleList([Stem(), Block(), Block()])``: which submodule each position holds
                    # (``self.blocks[1:]``, ``self.blocks[0]`` pick among them)
                    return Value(Kind.MODULE, ref=qual, elts=tuple(a.elts), elt=_join_all(list(a.elts)))
                return Value(Kind.MODULE, ref=qual, elt=elt)
            return Value(Kind.MODULE, ref=qual, elt=TENSOR if last.startswith("Parameter") else None)
        return Value(Kind.MODULE, ref=qual)

    def _builtin_result(self, name: str, args, kwargs, chain) -> Value:
        first = args[0] if args else None
        if name in ("int", "float", "bool", "complex"):
            if first is None:
                return CONST
            ref = _numpy_ref(first) if name in ("int", "float") else None
            if ref == NUMPY_NUMBER.ref or (ref in (NUMPY_ELEMENT.ref, NUMPY_ARRAY.ref) and getattr(self.settings, "capture_scalar_outputs", False)):
                return NUMPY_NUMBER  # an unbacked SymInt/SymFloat (see NUMPY_NUMBER)
            if ref == NUMPY_ARRAY.ref and not self._constructing:
                return DATA  # ``int(self.arr)`` of a one-element array: its data read (see NUMPY_ARRAY)
            if first.kind is Kind.TENSOR and first.py_float and name in ("int", "float"):
                # a constant-folded floating NumPy scalar reads back as a Python float
                return UNKNOWN if first.weak else Value(Kind.SHAPE, py_float=name == "float")
            if first.kind is Kind.TENSOR or first.kind is Kind.DATA:
                return DATA
            if name == "float" and first.kind in (Kind.SHAPE, Kind.CONST):
                return replace(SHAPE if first.kind is Kind.SHAPE else CONST, py_float=True)
            if first.kind is Kind.SHAPE:
                return SHAPE
            if first.kind is Kind.CONST and name in ("int", "float") and len(args) == 1 and not kwargs and first.ref is None:
                # ``int(torch.__version__.split(".")[1])``: a known string or number converts as Python does
                if isinstance(first.const, str) or (isinstance(first.const, (int, float)) and not isinstance(first.const, bool)):
                    try:
                        return const(int(first.const) if name == "int" else float(first.const))
                    except (ValueError, OverflowError):
                        return CONST
            return CONST if first.kind is Kind.CONST else UNKNOWN
        if name == "vars" and first is not None and len(args) == 1:
            # ``vars(A)`` is ``A.__dict__``
            if first.kind is Kind.CLASS and isinstance(first.ref, ClassInfo):
                return Value(Kind.UNKNOWN, ref=first.ref, const=_CLASS_DICT)
            if first.kind is Kind.UNKNOWN and isinstance(first.ref, str) and first.const is None:
                return Value(Kind.UNKNOWN, ref=first.ref + ".__dict__")
        if name == "len":
            if first is not None and first.kind is Kind.TENSOR and first.ref == "dynamic" and self.settings.capture_dynamic_output_shape_ops:
                return DATA
            if first is not None and first.kind is Kind.CONTAINER and first.elts is not None:
                return const(len(first.elts))
            return SHAPE
        if name in ("isinstance", "issubclass", "hasattr", "callable", "type", "id", "hash", "str", "repr", "format", "getattr", "ord", "chr"):
            if name == "getattr" and first is not None and first.kind in (Kind.SELF, Kind.MODULE) and len(args) >= 2:
                # an attribute of a module by a computed name: a submodule, parameter,
                # buffer or anything else, not a constant
                return UNKNOWN
            return CONST
        if name == "range":
            return container(elt=SHAPE if any(a.kind is Kind.SHAPE for a in args) else (DATA if any(a.kind is Kind.DATA for a in args) else CONST))
        if name == "enumerate" and first is not None:
            return container(elt=container(elts=(SHAPE, first.element())))
        if name == "zip":
            return container(elt=container(elts=tuple(a.element() for a in args)))
        if name in ("list", "tuple", "sorted", "reversed", "iter", "set", "frozenset"):
            if first is None:
                return container(elts=())
            if first.kind is Kind.SHAPE:
                return Value(Kind.SHAPE, ref=first.ref)
            if first.kind is Kind.CONTAINER and name in ("list", "tuple"):
                return first
            return container(elt=first.element())
        if name == "dict":
            return _dict_call(first, args, kwargs)
        if name in ("min", "max"):
            vals = list(args) if len(args) > 1 else ([first.element()] if first is not None else [])
            tensors = [v for v in vals if v.kind is Kind.TENSOR]
            if tensors:
                # Dynamo rewrites builtin min/max over tensors to torch.minimum/maximum (no break).
                # A value that is only maybe a tensor (``max(size, 1)`` with ``size`` of unknown
                # kind) keeps that doubt: the result is a tensor only when an operand surely is.
                sure = [v for v in tensors if not v.weak]
                return TENSOR if sure else tensors[0]
            return _join_all(vals) if vals else UNKNOWN
        if name in ("abs", "round", "pow", "divmod"):
            if first is not None:
                return first if first.kind in (Kind.TENSOR, Kind.SHAPE, Kind.CONST, Kind.DATA) else UNKNOWN
        if name == "sum":
            return first.element() if first is not None else CONST
        if name in ("any", "all"):
            if first is not None and first.element().kind is Kind.TENSOR:
                return DATA
            return CONST
        if name == "next" and first is not None:
            return first.element()
        if name == "super":
            # zero-argument ``super()`` starts after the class that defines the running method
            # (its ``__class__`` cell), not after the instance's class
            fn = self.frame.func if self.frame else None
            home = getattr(fn, "cls", None)
            cls = home if isinstance(home, ClassInfo) else (self.frame.cls if self.frame else None)
            return Value(Kind.SUPER, ref=cls)
        if name in ("print", "breakpoint", "input", "open", "exec", "eval"):
            return NONE
        return UNKNOWN


_MAP_CASTS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.complex"})
# builtins that iterate their first argument to the end
_ITERATING_BUILTINS = frozenset(
    "builtins." + n for n in "list tuple set frozenset sorted sum min max any all dict enumerate zip".split()
)


def _name_pattern(expr: cst.BaseExpression) -> Optional["re.Pattern[str]"]:
    """The names a computed attribute name may be, from its literal parts: ``f"_forward_{mode}"``,
    ``"{}_reduction".format(kind)``, ``"%s_head" % kind``, ``"reduce_" + kind``.  ``None`` when the
    expression is none of these, or its literal parts hold fewer than two identifier characters
    (``f"{name}"`` fits every name)."""
    import re

    parts: List[Optional[str]] = []  # literal text, or None for a computed piece
    if isinstance(expr, cst.FormattedString):
        for part in expr.parts:
            parts.append(part.value if isinstance(part, cst.FormattedStringText) else None)
    elif (
        isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format"
        and isinstance(expr.func.value, cst.SimpleString)
    ):
        parts = _template_parts(expr.func.value, r"\{[^{}]*\}")
    elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo) and isinstance(expr.left, cst.SimpleString):
        parts = _template_parts(expr.left, r"%[sdr]")
    elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        pieces = [expr]
        flat: List[cst.BaseExpression] = []
        while pieces:
            p = pieces.pop()
            if isinstance(p, cst.BinaryOperation) and isinstance(p.operator, cst.Add):
                pieces += [p.right, p.left]
            else:
                flat.append(p)
        for p in flat:
            text = _literal_string(p)
            parts.append(text)
    else:
        return None
    if not parts:
        return None
    literal = "".join(p for p in parts if p)
    if None not in parts or sum(ch.isalnum() or ch == "_" for ch in literal) < 2:
        return None
    if any(p is not None and not re.fullmatch(r"\w*", p) for p in parts):
        return None
    return re.compile("".join(re.escape(p) if p is not None else r"\w+" for p in parts))


def _template_parts(template: cst.SimpleString, placeholder: str) -> List[Optional[str]]:
    """The literal pieces of a ``str.format``/``%`` template with ``None`` for each placeholder
    (``placeholder`` is its regular expression); ``[]`` for a bytes literal."""
    import re

    text = template.evaluated_value
    if not isinstance(text, str):
        return []
    parts: List[Optional[str]] = []
    for i, piece in enumerate(re.split(placeholder, text)):
        if i:
            parts.append(None)
        parts.append(piece)
    return parts


#: ``torch.nn`` classes that hold other modules or parameters (what they hold is their value).
_NN_CONTAINERS = frozenset({"ModuleList", "Sequential", "ModuleDict", "ParameterList", "ParameterDict"})


def _is_nn_module_class(qual: str) -> bool:
    """``qual`` names a class of ``torch.nn`` (``torch.nn.LayerNorm``): a capitalised last part."""
    return qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper()


def _value_key(v: Value) -> tuple:
    """A hashable, process-stable fingerprint of a construction-site value (:meth:`Interpreter._site_value`)."""
    ref = v.ref
    if isinstance(ref, ClassInfo):
        ref = (getattr(ref.module, "path", ""), ref.name)
    elif ref is not None and not isinstance(ref, str):
        ref = repr(type(ref))
    return (v.kind.value, repr(v.const), ref, v.maybe_none, v.not_none)


def _scalar_literal(expr: Optional[cst.BaseExpression]) -> bool:
    """``expr`` is a non-``None`` scalar literal (``4``, ``-0.1``, ``"gelu"``, ``True``).

    An unannotated parameter with such a default (``def __init__(self, num_classes=3)``) that no
    construction site decides is taken to hold a scalar of that type, surely not ``None``: its
    value stays unknown (a ``bool`` default still leaves both sides of ``if self.flag:``), but
    ``if num_classes is None:`` in a helper it is passed to is decided.  Passing ``None`` where
    the signature defaults to a number is what a type checker would reject.
    """
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False")
    return _literal_string(expr) is not None


def _literal_string(expr: cst.BaseExpression) -> Optional[str]:
    """The value of a string literal, or of ``+`` of string literals (``"it" + "em"``, which
    CPython and Dynamo fold to one constant); ``None`` for anything else (bytes included)."""
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        left, right = _literal_string(expr.left), _literal_string(expr.right)
        return left + right if left is not None and right is not None else None
    return None


class BoundTensorMethod(NamedTuple):
    """The ``ref`` of a tensor's method looked up but not called (``t.item``): its name and tensor.

    A named tuple, so values that carry it stay hashable (the interpreter's memo keys) and the
    foreign-summary codec rebuilds it from its fields.
    """

    name: str
    receiver: Value


class PartialLibraryCall(NamedTuple):
    """The ``ref`` of ``functools.partial(f, *args, **kwargs)`` of a library callable ``f`` (``print``,
    ``warnings.warn``, ``torch.nn.functional.leaky_relu``): its qualified name, the bound positional
    values and the bound ``(keyword, value)`` pairs.  Calling it calls ``f`` with those first (Python's
    definition of ``partial``; Dynamo traces the partial and then the callable, so a break of ``f`` is a
    break at the call).  A named tuple, so values that carry it stay hashable."""

    qualname: str
    args: Tuple[Value, ...]
    kwargs: Tuple[Tuple[str, Value], ...]


class _Fields(tuple):
    """The field names of a ``torch.return_types`` named tuple: the ``ref`` of its container value."""


class _EnumMember(tuple):
    """A member of an ``enum.Enum`` subclass of the project, as a constant's ``const``:
    ``(owner, name)``, ``owner`` the class's file and name.  Members are singletons, so two of
    them are the same object (``is``, ``==``) exactly when owner and name agree; Dynamo guards on
    the member an attribute holds and folds such tests (``if self.mode is Mode.A:`` traces one
    branch).  A member is compared with nothing else here (an ``IntEnum``/``StrEnum`` member
    equals its value)."""


#: the bases that make a class an enumeration (members are the names its body assigns)
_ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.Flag", "enum.IntFlag", "enum.StrEnum", "enum.ReprEnum"})


def _is_enum_class(cls: ClassInfo) -> bool:
    """``cls`` derives from ``enum.Enum`` (directly or through project classes)."""
    seen: set = set()
    todo = [cls]
    while todo:
        c = todo.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        for b in c.bases:
            if isinstance(b, ClassInfo):
                todo.append(b)
            elif isinstance(b, str) and b in _ENUM_BASES:
                return True
    return False


@functools.lru_cache(maxsize=None)
def _fields_of(op: str) -> Optional[_Fields]:
    fields = dynamo_facts.return_fields(op)
    return _Fields(fields) if fields else None


def _return_type_name(qual: str) -> str:
    """The ``torch.return_types`` name of a torch function: ``torch.max`` -> ``max``,
    ``torch.linalg.eigh`` -> ``linalg_eigh`` (the aten op names)."""
    return qual[len("torch."):].replace(".", "_")


def _named_result(op: str, value: Value) -> Value:
    """``value`` (a container of tensors) marked with the fields of the named tuple ``op`` returns, if any
    (facts table: torch.return_types and the aten schemas' return names)."""
    fields = _fields_of(op)
    return replace(value, ref=fields) if fields is not None else value


def _is_string_node(node: cst.BaseExpression) -> bool:
    """A string literal (plain, implicitly concatenated or an f-string)."""
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) and not (
        isinstance(node, cst.SimpleString) and "b" in node.prefix.lower()
    )


#: builtins that, fed a generator which graph-breaks inside, break again at the call (torch 2.13)
_GENERATOR_RESUME_BUILTINS = frozenset({"builtins.all", "builtins.any", "builtins.sum", "builtins.set"})
_PARTIAL = "functools.partial"


def _all_bool_literals(v: Value) -> bool:
    """``v`` is a (nested) list or tuple of ``True``/``False`` constants, at least one."""
    if v.kind is Kind.CONST:
        return isinstance(v.const, bool)
    if v.kind is Kind.CONTAINER and v.keys is None and v.elts:
        return all(_all_bool_literals(e) for e in v.elts)
    return False


_CUSTOM_OP_DECORATORS = frozenset({"torch.library.custom_op", "torch._library.custom_ops.custom_op"})


def _custom_op_mutated_params(fn: FunctionInfo, index) -> Tuple[str, ...]:
    """The parameter names a ``@torch.library.custom_op(..., mutates_args=("x",))`` declares
    written (string literals of a tuple or list; ``"unknown"`` or anything else: none known)."""
    from pt2lint.analysis.index import decorator_name

    imports = getattr(fn.module or index, "imports", None)
    for dec in fn.node.decorators:
        if imports is None or decorator_name(dec, imports) not in _CUSTOM_OP_DECORATORS or not isinstance(dec.decorator, cst.Call):
            continue
        for arg in dec.decorator.args:
            if arg.keyword is not None and arg.keyword.value == "mutates_args" and isinstance(arg.value, (cst.Tuple, cst.List)):
                names = [_literal_string(el.value) for el in arg.value.elements]
                return tuple(n for n in names if isinstance(n, str))
    return ()


#: Builtins whose calls rules judge by name (``print``, ``breakpoint``...): a name bound to one
#: (``p = print``) is followed to it; other builtins stay values of unknown kind.
_ALIASED_BUILTINS = frozenset({"print", "breakpoint", "input", "exec", "eval"})


def _is_generator_function(fn) -> bool:
    """``fn`` (a :class:`FunctionInfo`, or anything else) is a generator function: its own body
    (not a nested ``def``) holds a ``yield`` (kept on the function once read)."""
    if not isinstance(fn, FunctionInfo):
        return False
    if fn.has_yield is None:
        fn.has_yield = any(isinstance(n, cst.Yield) for n in walk(fn.node.body, into_functions=False))
    return fn.has_yield


def _distribution(v: Value) -> bool:
    """``v`` is an object of a ``torch.distributions`` class built in the analysed code
    (``Normal(mu, sigma)``, ``torch.distributions.Categorical(logits=l)``)."""
    return v.kind is Kind.UNKNOWN and type(v.ref) is str and _distribution_ref(v.ref)


def _distribution_ref(ref: str) -> bool:
    """``ref`` (a value's qualified name) is that of a ``torch.distributions`` object: ``"torch.distributions.Normal()"``."""
    return ref.startswith("torch.distributions.") and ref.endswith("()") and ref.rsplit(".", 1)[-1][:1].isupper()


def _one_number(v: Value) -> bool:
    """``v`` is surely one number, not a tuple: an int or float constant, or a :data:`SIZE`."""
    if v.kind is Kind.CONST:
        return isinstance(v.const, (int, float)) and not isinstance(v.const, bool)
    return v.kind is Kind.SHAPE and (v.scalar or v.py_float)


def _is_python_float(v: Value) -> bool:
    """True when ``v`` is known to be a Python float (a float literal, a true division, ``float(n)``)."""
    return v.kind in (Kind.SHAPE, Kind.CONST) and (v.py_float or (isinstance(v.const, float)))


def _python_float_arith(result: Value, a: Value, b: Value, operator: cst.BaseBinaryOp) -> Value:
    """Mark ``result`` (of ``a <operator> b``) a Python float when it is one: a true division
    of numbers or sizes, or arithmetic with a float operand (``n / k``, ``n * 0.5``, ``d / 2 + 1``).

    Only numbers can be divided, so a true division's operands are scalars, never tuples.
    Arithmetic between a constant-folded floating NumPy scalar and another one or a Python
    number known to be a scalar stays such a scalar (``np.ceil(n / k) + 1``: fake tensors
    fold the add too, measured on torch 2.13).
    """
    arith = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)
    if result.kind is Kind.TENSOR and isinstance(operator, arith) and (a.py_float or b.py_float):
        def folded(v: Value) -> bool:
            if v.kind is Kind.TENSOR:
                return v.py_float
            return _is_python_float(v) or _one_number(v)

        return replace(result, py_float=True) if folded(a) and folded(b) else result
    if (
        result.kind is Kind.UNKNOWN and {a.kind, b.kind} <= {Kind.SHAPE, Kind.CONST, Kind.UNKNOWN}
        and (isinstance(operator, cst.Divide) or (isinstance(operator, arith) and (a.py_float or b.py_float or _is_python_float(a) or _is_python_float(b))))
    ):
        # ``x.shape[0] / self.k``, ``width / scale`` with operands of unknown kind: a Python
        # float when they are numbers (a tensor or an array otherwise); the kind stays unknown
        return replace(result, py_float=True)
    if result.kind not in (Kind.SHAPE, Kind.CONST) or result.py_float:
        return result
    if isinstance(operator, cst.Divide) or (
        isinstance(operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Power))
        and (_is_python_float(a) or _is_python_float(b))
    ):
        return replace(result, py_float=True)
    return result


def _numpy_float_scalar(qual: str, args, kwargs) -> Optional[Value]:
    """True when the NumPy call ``qual(*args)`` gives a floating one-element result computed only
    from Python numbers, which Dynamo constant-folds (``np.ceil(x.shape[0] / k)``,
    ``np.sqrt(2)``, ``np.maximum(n / 2, 1.0)``): reading it with ``int()``/``float()``/``.item()``
    does not break on torch 2.13, while ``np.prod(x.shape)`` (a tuple) or ``np.maximum(n, 2)``
    (an int result) does.

    Every argument must be a number known to be a scalar: a float (see :func:`_is_python_float`),
    a constant int, or such a folded result itself; a bare size may be a whole shape tuple, so
    it does not count. The
    function must be in ``torch_api.NUMPY_FLOAT_OF_FLOAT``, and, when no argument is a float,
    in ``torch_api.NUMPY_FLOAT_OF_INT``. Keyword arguments (``dtype=``) are not modelled.

    Returns the result's value (a TENSOR with ``py_float``), or ``None`` when the call is not
    such a fold. An argument of unknown kind that is a float when it is a number
    (``x.shape[0] / self.k``) makes the result a weak tensor: it folds for a number and is
    a traced array for a tensor, so a read of it is not a break for every kind it may have.
    """
    if kwargs or not args or not qual.startswith("numpy.") or qual.count(".") != 1:
        return None
    name = qual[6:]
    if name not in api.NUMPY_FLOAT_OF_FLOAT:
        return None
    guessed = False
    for a in args:
        if a.kind is Kind.UNKNOWN and a.py_float:
            guessed = True
        elif a.kind is Kind.TENSOR and a.py_float:
            guessed = guessed or a.weak  # a folded NumPy float scalar (``np.floor(np.sqrt(40.0 * n))``)
        elif not (_is_python_float(a) or _one_number(a)):
            return None
    if not (any(a.py_float or isinstance(a.const, float) for a in args) or name in api.NUMPY_FLOAT_OF_INT):
        return None
    return Value(Kind.TENSOR, py_float=True, weak=guessed)


def _numpy_array_result(qual: str, args) -> bool:
    """Whether ``qual(*args)``, a NumPy call on Python values, surely returns an array of one or more
    dimensions (see :data:`NUMPY_ARRAY`)."""
    if qual in _NUMPY_ARRAY_FUNCTIONS:
        return True
    first = args[0] if args else None
    if first is None:
        return False
    if qual in ("numpy.array", "numpy.asarray"):
        return first.kind is Kind.CONTAINER or _numpy_ref(first) == NUMPY_ARRAY.ref
    if qual in _NUMPY_SIZED_FUNCTIONS:
        # ``np.zeros(3)``, ``np.ones((2, 3))``: a size that is a number or a non-empty tuple
        return (first.kind is Kind.CONTAINER and bool(first.elts)) or (first.kind in (Kind.CONST, Kind.SHAPE) and first.const != ())
    return False


def _python_values_only(values) -> bool:
    """Every value is a Python number, string, size or ``None``, or a container of them (no tensor,
    no value of unknown kind): a NumPy call on them computes a NumPy value, not a traced array."""
    for v in values:
        if v.kind is Kind.CONTAINER:
            if not _python_values_only(list(v.elts or ()) + ([v.elt] if v.elt is not None else [])):
                return False
        elif v.kind not in (Kind.CONST, Kind.SHAPE, Kind.NONE) or v == NUMPY_VALUE or v == NUMPY_ARRAY:
            if v != NUMPY_VALUE and v != NUMPY_ARRAY:
                return False
    return True


def _numpy_sized_draw(qual: str, args, kwargs) -> bool:
    """True when ``qual(*args, **kwargs)`` is a NumPy RNG draw given a size
    (``np.random.rand(1)``, ``np.random.randint(0, 9, size=4)``): ``torch._numpy`` returns
    an array for it, a tensor in Dynamo's graph, so reading it out (``.item()``, ``int()``,
    an ``if``) breaks like any tensor.  The draws and their size position come from the
    Dynamo facts table (:func:`dynamo_facts.numpy_scalar_draw`, both forms probed on
    torch 2.13); without a size the draw is a Python number (PTC305 reports it).
    """
    draw = dynamo_facts.numpy_scalar_draw(qual)
    return draw is not None and ("size" in kwargs or len(args) > draw[1])


# ``math`` functions that take and return plain numbers (``ceil(n / m) * m``).
_MATH_NUMBER_FUNCTIONS = frozenset(
    "ceil floor trunc sqrt isqrt exp log log2 log10 pow fabs gcd lcm copysign".split()
)


def _math_number_result(qual: str, args, kwargs) -> Optional[Value]:
    """The value of ``math.<f>(...)`` over Python numbers: a number of the same sort.

    A draw of ``random``, or a value read from a tensor, stays one (data); sizes stay sizes
    (``math.ceil(h / 2)`` of a SymInt is a SymInt to Dynamo); constants stay constants.
    ``None`` for other calls, and when an argument is not surely a number (a tensor, an
    unknown value): what ``math`` does with those is other rules' business.
    """
    if not qual.startswith("math.") or qual[5:] not in _MATH_NUMBER_FUNCTIONS or kwargs or not args:
        return None
    if not all(a.kind in _PY_NUMBER_KINDS for a in args):
        return None
    draws = [a for a in args if a.kind is Kind.DATA and a.ref == RANDOM_DRAW.ref]
    if draws:
        return RANDOM_DRAW
    if any(a.kind is Kind.DATA for a in args):
        return DATA
    if any(a.kind is Kind.SHAPE for a in args):
        return SHAPE
    return CONST


def _partial_value(args, kwargs) -> Value:
    """``functools.partial(f, k=v, ...)`` of a local function ``f``: ``f``'s ``FUNCTION`` value carrying the
    bound keywords (in ``keys``/``elts``), which a call merges under its own.  A partial of an unbound
    tensor method and one tensor is that tensor's bound method.  Partials that bind other positional
    arguments, or of anything else, stay Unknown."""
    if len(args) == 1 and _unbound_tensor_method(None, args[0]) is not None and args[0].const is None:
        # ``functools.partial(torch.Tensor.item)``: still the unbound method, with the keywords bound
        return Value(Kind.UNKNOWN, ref=args[0].ref, const=_PARTIAL, keys=tuple(kwargs), elts=tuple(kwargs.values()))
    if (
        len(args) == 2 and not kwargs and args[0].const is None and args[1].kind is Kind.TENSOR
        and (method := _unbound_tensor_method(None, args[0])) is not None
    ):
        # ``functools.partial(torch.Tensor.item, t)`` is ``t.item``, the method bound to its tensor
        # (Dynamo breaks on calling it as on ``t.item()``, torch 2.13)
        return Value(Kind.UNKNOWN, ref=BoundTensorMethod(method, args[1]))
    if args and _library_callable_ref(args[0]) and not any(a.alias_of for a in args[1:]):
        # ``functools.partial(print, "dbg:")``: a call of ``print`` with those arguments first
        return Value(Kind.UNKNOWN, ref=PartialLibraryCall(args[0].ref, tuple(args[1:]), tuple(kwargs.items())))
    if len(args) != 1 or args[0].kind is not Kind.FUNCTION or not isinstance(args[0].ref, FunctionInfo):
        return UNKNOWN
    fn = args[0]
    if fn.const is not None or fn.elt is not None:
        return UNKNOWN  # a bound method or another special callable: not modelled
    return Value(Kind.FUNCTION, ref=fn.ref, const=_PARTIAL, keys=tuple(kwargs), elts=tuple(kwargs.values()))


#: ``const`` of the value of ``operator.methodcaller(name, *args)``: ``ref`` is the method name, ``elts`` the args
_METHODCALLER = "operator.methodcaller"


def _method_caller(args, kwargs) -> Value:
    """``operator.methodcaller("name", *args)``: calling it on ``obj`` calls ``obj.name(*args)`` (Python's
    definition; Dynamo traces it so: ``methodcaller("item")(t)`` breaks as ``t.item()`` does, torch 2.13).
    Unknown when the name is not a constant string or keywords are bound."""
    if not args or kwargs or args[0].kind is not Kind.CONST or not isinstance(args[0].const, str):
        return UNKNOWN
    if not args[0].const.isidentifier():
        return UNKNOWN
    return Value(Kind.FUNCTION, ref=args[0].const, const=_METHODCALLER, elts=tuple(args[1:]))


#: ``const`` of the value of ``operator.attrgetter(name)``: ``ref`` is the attribute name
_ATTRGETTER = "operator.attrgetter"


def _attr_getter(args, kwargs) -> Value:
    """``operator.attrgetter("name")``: calling it on ``obj`` gives ``obj.name`` (Python's definition;
    Dynamo traces it so: ``attrgetter("item")(t)()`` breaks as ``t.item()`` does, torch 2.13).
    Unknown for several names, a dotted name, or a name that is not a constant string."""
    if len(args) != 1 or kwargs or args[0].kind is not Kind.CONST or not isinstance(args[0].const, str):
        return UNKNOWN
    if not args[0].const.isidentifier():
        return UNKNOWN
    return Value(Kind.FUNCTION, ref=args[0].const, const=_ATTRGETTER)


def _called_through_dunder_call(func: cst.BaseExpression) -> cst.BaseExpression:
    """``f.__call__`` called is ``f`` called (Python's call protocol); any other function expression as is.

    Dynamo breaks on ``t.item.__call__()`` as on ``t.item()`` (torch 2.13, at the same line).  ``super().__call__``
    stays as written (the base class's ``__call__`` is not ``super()`` called).
    """
    if not isinstance(func, cst.Attribute) or func.attr.value != "__call__":
        return func
    inner = func.value
    if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "super":
        return func
    return inner


def _partial_kwargs(v: Value) -> Dict[str, Value]:
    """The keywords a ``functools.partial`` value binds (empty for a plain function)."""
    if v.const != _PARTIAL or v.keys is None or v.elts is None:
        return {}
    return dict(zip(v.keys, v.elts))


def _is_none_test(left: Value, right_node: cst.BaseExpression, right: Value) -> Optional[bool]:
    """``left is None`` when the values decide it: ``left`` is surely ``None`` (True; the caller also checks
    that it is a parameter the function never rebinds, so a loop's ``if h is None: h = x`` keeps both
    branches), or surely a function or class defined in the project (False; a decorator's ``if method is
    None:``).  Dynamo specialises on both, tracing one branch.  ``None`` when unknown (tensors, modules,
    anything that may be ``None``)."""
    if not (isinstance(right_node, cst.Name) and right_node.value == "None" and right.kind is Kind.NONE):
        return None
    if left.kind is Kind.NONE:
        return True
    if left.kind in (Kind.FUNCTION, Kind.CLASS) and not left.maybe_none and not left.weak and left.ref is not None:
        return False
    return None


_REBOUND: Dict[int, Tuple[cst.FunctionDef, frozenset]] = {}
_REBOUND_MAX = 4096  # entries keep their trees alive: bounded, for long-lived processes (the LSP server)


def _rebound_names(fn_node: cst.FunctionDef) -> frozenset:
    """Names a function body binds (assignment, augmented assignment, ``for``/``with``/``except`` targets,
    ``:=``, ``del``, imports, nested ``def``/``class``), nested functions included; memoised per node."""
    key = id(fn_node)
    hit = _REBOUND.get(key)
    if hit is not None and hit[0] is fn_node:
        return hit[1]
    names = set()
    for n in walk(fn_node.body):
        targets = ()
        if isinstance(n, cst.AssignTarget):
            targets = (n.target,)
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            targets = (n.target,)
        elif isinstance(n, (cst.For, cst.CompFor)):
            targets = (n.target,)
        elif isinstance(n, cst.WithItem) and n.asname is not None:
            targets = (n.asname.name,)
        elif isinstance(n, cst.NamedExpr):
            targets = (n.target,)
        elif isinstance(n, cst.ExceptHandler) and n.name is not None:
            targets = (n.name.name,)
        elif isinstance(n, cst.Del):
            targets = (n.target,)
        elif isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            names.add(n.name.value)
        elif isinstance(n, cst.ImportAlias):
            bound = n.asname.name if n.asname is not None else n.name
            targets = (bound,) if isinstance(bound, cst.Name) else ()
        for t in targets:
            names.update(x.value for x in walk(t) if isinstance(x, cst.Name))
    result = frozenset(names)
    if len(_REBOUND) >= _REBOUND_MAX:
        _REBOUND.clear()
    _REBOUND[key] = (fn_node, result)
    return result


#: Exceptions that signal a failure, not a lookup that missed: a handler catching only these
#: runs when the ``try`` body fails (``except RuntimeError: <fallback>``), which the body does not
#: do on the path Dynamo traces.  Lookup misses (``KeyError``, ``IndexError``, ``AttributeError``,
#: ``StopIteration``, ``ImportError``, ``TypeError``, ``ValueError``...) are how code asks
#: (a cache filled on its first call, an optional import): their handlers run in normal use.
_FAILURE_EXCEPTIONS = frozenset({
    "Exception", "BaseException", "RuntimeError", "OSError", "IOError", "EnvironmentError",
    "AssertionError", "MemoryError", "NotImplementedError",
})


def _failure_handler(handler: cst.ExceptHandler, imports) -> bool:
    """``handler`` catches failures only (:data:`_FAILURE_EXCEPTIONS`, a bare ``except:``,
    ``torch.cuda.OutOfMemoryError``)."""
    names = caught_exceptions(handler)
    if names is None:
        return True
    for n in names:
        dotted = dotted_name(n)
        if dotted is None:
            return False
        qual = imports.qualify(n) or dotted
        last = qual.rsplit(".", 1)[-1]
        if last not in _FAILURE_EXCEPTIONS and not last.endswith("OutOfMemoryError"):
            return False
    return True


def _library_callable_ref(v: Value) -> bool:
    """``v`` is a name bound to a library callable, by its qualified name: a builtin, torch, NumPy
    or standard-library function (``p = print``, ``act = torch.relu``, ``warn = warnings.warn``)."""
    ref = v.ref
    if v.kind is not Kind.UNKNOWN or type(ref) is not str or "." not in ref or "()" in ref:
        return False
    if v.const is not None or v.weak:
        return False
    head = ref.split(".", 1)[0]
    return head in ("builtins", "torch", "numpy") or head in STDLIB_MODULES


def _name_constant(node: Optional[cst.BaseExpression]) -> Optional[Value]:
    """``True``/``False``/``None`` written as a name: its constant value, else ``None``."""
    if isinstance(node, cst.Name):
        if node.value in ("True", "False"):
            return const(node.value == "True")
        if node.value == "None":
            return NONE
    return None


def _eq_answers_bool(v: Value) -> bool:
    """``t == v`` of a tensor ``t`` is a Python bool, not a tensor: ``v`` is ``None``, a string or a
    ``torch.dtype`` (``Tensor.__eq__`` compares elementwise with numbers and tensors only; measured
    on torch 2.13: ``torch.randn(2) == "a"`` and ``== torch.float32`` are ``False``)."""
    if v.kind is Kind.NONE:
        return True
    if v.kind is not Kind.CONST:
        return False
    if isinstance(v.const, str):  # a string (and ``torch.bool``, kept as its name)
        return True
    return isinstance(v.ref, str) and v.ref.startswith("torch.") and v.ref[len("torch."):] in api.TORCH_DTYPES


def _qualified_value(q: str) -> Value:
    """Value of a qualified attribute read (``torch.float32``, ``torch.pi``, ``math.pi``).
    ``torch.__version__`` is the target torch's public version (``"2.13.0"``, the version the
    facts table was generated with, its local part such as ``+cpu`` left out): code that
    compares it (``int(torch.__version__.split(".")[0]) >= 2``) runs one way on that torch."""
    if q in ("torch.bool",):
        return Value(Kind.CONST, const="torch.bool")
    if q == "torch.__version__":
        version = dynamo_facts.torch_version().split("+", 1)[0]
        return const(version) if version else CONST
    if q.startswith(("torch.", "math.", "numpy.", "np.")):
        return Value(Kind.UNKNOWN, ref=q) if q.rsplit(".", 1)[-1][:1].isupper() or q.count(".") >= 2 else Value(Kind.CONST, ref=q)
    return Value(Kind.UNKNOWN, ref=q)


def _cast_copies(args, kwargs) -> bool:
    """``x.to(...)``/``x.type(...)`` whose arguments say it returns a new tensor, not ``x``.

    ``Tensor.to`` returns ``self`` when nothing changes and a copy otherwise
    (measured on torch 2.13: ``x.to(torch.float64).add_(1)`` leaves a float32 ``x``
    alone and writes a float64 one).  The analysis does not know an input's dtype,
    so a cast to a named dtype other than float32 (the default dtype, the one an
    input of unknown dtype most likely has, like ``.double()``/``.half()``/``.long()``
    which are copies here too) and ``copy=True`` count as copies; ``.to(torch.float32)``,
    ``.to(other.dtype)``, ``.to(device)`` and ``.type_as(y)`` may return ``x`` itself.
    """
    copy = kwargs.get("copy")
    if copy is not None and copy.kind is Kind.CONST and copy.const is True:
        return True
    for a in list(args[:2]) + [kwargs.get("dtype")]:
        if a is None or a.kind is not Kind.CONST:
            continue
        name = a.ref if isinstance(a.ref, str) else a.const if isinstance(a.const, str) else None
        if name is None or not name.startswith("torch."):
            continue
        last = name[len("torch."):]
        if last in api.TORCH_DTYPES and last not in api.DEFAULT_FLOAT_DTYPES:
            return True
    return False


def _is_bool_dtype(v: Optional[Value]) -> bool:
    return v is not None and v.kind is Kind.CONST and v.const == "torch.bool"


def _is_basic_index(index: Value) -> bool:
    """Basic indexing (ints, slices, None, Ellipsis) returns a view; tensor indices copy."""
    if index.kind is Kind.TENSOR:
        return False
    if index.kind is Kind.CONTAINER and index.elts is not None:
        return all(e.kind is not Kind.TENSOR for e in index.elts)
    return index.kind in (Kind.CONST, Kind.SHAPE, Kind.NONE, Kind.UNKNOWN)


def _string_key(v: Value) -> bool:
    """A dict key whose string value is known (``d["norm"]``)."""
    return v.kind is Kind.CONST and isinstance(v.const, str)


def _dict_with(d: Value, key: Value, value: Value) -> Value:
    """The dict ``d`` after ``d[key] = value`` (its keys stay known only for a known string key)."""
    if key.kind is Kind.CONST and isinstance(key.const, str) and d.keys is not None and d.elts is not None:
        items = [(k, v) for k, v in zip(d.keys, d.elts) if k != key.const] + [(key.const, value)]
        return keyed_dict(items)
    old = d.element()
    elt = join(old, value)
    # which entry a later read gets is unknown: when the entries differ in kind, it is a guess
    return Value(Kind.CONTAINER, elt=_guess(elt) if old.kind is not value.kind else elt)


def _short_string_value(literal: str) -> Optional[str]:
    """The value of a short plain string literal (``'a'``, ``"use_cache"``), else ``None``.

    Only literals without escapes, prefixes other than ``r``/``u``, or triple quotes are
    read (cheaply, without ``ast.literal_eval``): keys and flags look like that.
    """
    if len(literal) > 202 or "\\" in literal:
        return None
    body = literal
    if body[:1] in "rRuU":
        body = body[1:]
    if len(body) < 2 or body[0] not in "'\"" or body[-1] != body[0] or body.startswith(body[0] * 3):
        return None
    return body[1:-1]


class _ReleaseVersion(tuple):
    """A version object made from a plain release string (``packaging.version.parse("2.13.0")``),
    as a constant's ``const``: the release numbers with trailing zeros dropped, which is how
    PEP 440 orders plain releases (``"1.8"`` equals ``"1.8.0"``).  Strings with a pre-, post-,
    dev- or local part are not folded."""


#: Constructors of PEP 440 version objects: comparisons of two made from known strings are
#: folded (Dynamo inlines them and folds the test: measured on torch 2.13, one graph for
#: ``if version.parse(torch.__version__) < version.parse("1.8"):``).
VERSION_PARSERS = frozenset({"packaging.version.parse", "packaging.version.Version"})
_PLAIN_RELEASE = re.compile(r"\d+(\.\d+)*")


def _release_version(text: str) -> Optional[_ReleaseVersion]:
    """The :class:`_ReleaseVersion` of a plain release string (``"2.13.0"``, ``"1.8"``), or None."""
    if not _PLAIN_RELEASE.fullmatch(text):
        return None
    parts = [int(p) for p in text.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return _ReleaseVersion(parts)


_FOLDABLE = (bool, int, float, str, _EnumMember, _ReleaseVersion)
# builtin types whose instances are Python constants to Dynamo (specialised, never in the graph)
_PY_SCALAR_TYPES = frozenset({"int", "float", "bool", "str", "complex"})
#: ``torch.nn`` container classes (the measured ``nn_modules`` facts list the others): no tensors
_NN_CONTAINER_CLASSES = frozenset(
    f"torch.nn{sub}.{name}"
    for sub in ("", ".modules.module", ".modules.container")
    for name in ("Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
)
#: stdlib bases that never make a class a ``torch.Tensor`` subclass, nor let ``isinstance`` answer
#: for a tensor (``abc`` and ``typing.Protocol`` do: ``register``, structural checks)
_PLAIN_BASE_PREFIXES = ("builtins.", "enum.", "typing.NamedTuple", "typing.Generic", "typing.TypedDict")


def _plain_external_base(qualname: Optional[str]) -> bool:
    """A base class from outside the project that is known not to be ``torch.Tensor`` (or a
    subclass of it): ``object`` and other builtins, ``Enum``, ``NamedTuple``, ``Generic``, an
    ``nn.Module`` class, ``autograd.Function``.  ``None`` (unresolvable) and anything else may be."""
    if not qualname:
        return False
    if qualname.startswith(_PLAIN_BASE_PREFIXES) and qualname != "builtins.type":
        return True
    if qualname in _NN_CONTAINER_CLASSES or qualname in api.AUTOGRAD_FUNCTION_BASES:
        return True
    return qualname not in api.NON_MODULE_TORCH_CLASSES and dynamo_facts.module_state(qualname) is not None


def _project_class(v: Value) -> bool:
    """``v`` is surely a class the project defines (not a guess, not maybe ``None``)."""
    return v.kind is Kind.CLASS and isinstance(v.ref, ClassInfo) and not v.maybe_none and not v.weak


def _never_a_tensor_class(cls: ClassInfo) -> bool:
    """Whether no instance of the project class ``cls`` is a ``torch.Tensor``, nor passes
    ``isinstance(t, cls)`` for one: every class in its MRO is a project class with no metaclass
    (which could define ``__instancecheck__``) or a base :func:`_plain_external_base` knows."""
    for c in cls.mro():
        if any(k.keyword is not None and k.keyword.value == "metaclass" for k in c.node.keywords):
            return False
    return all(isinstance(b, str) and _plain_external_base(b) for b in cls.external_bases())


# kinds of values that are never a torch.Tensor
_NOT_TENSOR_KINDS = frozenset({Kind.CONST, Kind.NONE, Kind.SHAPE, Kind.DATA, Kind.CONTAINER, Kind.MODULE, Kind.FUNCTION, Kind.CLASS})


def _cannot_take(callee: Value, call: cst.Call) -> bool:
    """``callee`` is a plain, undecorated function or lambda of the project (no method, whose first
    parameter a call may bind) that ``call``'s arguments cannot bind: too many positional arguments, a keyword
    it does not name, or a required parameter left out; calling it raises ``TypeError``.  False
    when unsure (a ``*``/``**`` argument at the call, anything else)."""
    fn = callee.ref
    if callee.kind is not Kind.FUNCTION or not isinstance(fn, FunctionInfo) or fn.cls is not None or callee.elt is not None:
        return False
    params = getattr(fn.node, "params", None)
    if not isinstance(params, cst.Parameters) or any(a.star for a in call.args) or getattr(fn.node, "decorators", ()):
        return False  # (a decorator may call it with other arguments than the call's)
    positional = list(params.posonly_params) + list(params.params)
    given = sum(1 for a in call.args if a.keyword is None)
    keywords = [a.keyword.value for a in call.args if a.keyword is not None]
    if given > len(positional) and not isinstance(params.star_arg, cst.Param):
        return True
    named = {p.name.value for p in list(params.params) + list(params.kwonly_params)}
    if params.star_kwarg is None and any(k not in named for k in keywords):
        return True
    filled = {p.name.value for p in positional[:given]} | set(keywords)
    return any(p.default is None and p.name.value not in filled for p in positional + list(params.kwonly_params))


def _fold_comparison(left: Value, op, right: Value) -> Optional[bool]:
    """``left op right`` when both are constants whose values are known (strings, numbers, members
    of a project enum: see :class:`_EnumMember`), else ``None``."""
    if left.kind is not Kind.CONST or left.maybe_none or not isinstance(left.const, _FOLDABLE):
        return None
    member = isinstance(left.const, _EnumMember)
    if right.kind is Kind.CONTAINER and isinstance(op, (cst.In, cst.NotIn)) and right.elts is not None and right.keys is None:
        if not all(e.kind is Kind.CONST and not e.maybe_none and isinstance(e.const, _FOLDABLE) for e in right.elts):
            return None
        if any(isinstance(e.const, _EnumMember) != member for e in right.elts):
            return None  # a member among other values: an ``IntEnum`` member equals its number
        inside = any(left.const == e.const for e in right.elts)
        return inside if isinstance(op, cst.In) else not inside
    if right.kind is not Kind.CONST or right.maybe_none or not isinstance(right.const, _FOLDABLE):
        return None
    a, b = left.const, right.const
    if isinstance(a, _ReleaseVersion) or isinstance(b, _ReleaseVersion):
        if not (isinstance(a, _ReleaseVersion) and isinstance(b, _ReleaseVersion)):
            return None  # a version against a string or number: a TypeError, not a test
        a, b = tuple(a), tuple(b)  # release numbers: compared as the tuples below compare
    if member or isinstance(b, _EnumMember):
        if not (member and isinstance(b, _EnumMember)):
            return None
        if isinstance(op, (cst.Equal, cst.Is)):
            return a == b
        if isinstance(op, (cst.NotEqual, cst.IsNot)):
            return a != b
        return None  # an order between members: a TypeError, or an ``IntEnum``'s numbers
    if isinstance(op, cst.Equal):
        return a == b
    if isinstance(op, cst.NotEqual):
        return a != b
    if isinstance(a, str) != isinstance(b, str):
        return None
    if isinstance(op, (cst.In, cst.NotIn)):
        if not isinstance(b, str):
            return None
        inside = a in b  # ``"1.5.0" in torch.__version__``: a substring test of two known strings
        return inside if isinstance(op, cst.In) else not inside
    try:
        if isinstance(op, cst.LessThan):
            return a < b
        if isinstance(op, cst.LessThanEqual):
            return a <= b
        if isinstance(op, cst.GreaterThan):
            return a > b
        if isinstance(op, cst.GreaterThanEqual):
            return a >= b
    except TypeError:
        return None
    return None


#: ``ref`` of a boolean tensor that is a test on a value of a NumPy array (see :data:`NUMPY_ELEMENT`).
NUMPY_TEST = "numpy-test"
#: Methods without arguments that give a 1-d tensor back with its dtype (``flip`` along its only
#: dimension is handled apart).
_KEEPS_ONE_D = frozenset({"clone", "cpu", "cuda", "contiguous", "detach"})
#: Torch functions that return a 1-d int64 tensor from Python integers.
_ONE_D_INT_FACTORIES = frozenset({"torch.arange", "torch.randperm"})
#: Torch functions that return a 1-d floating tensor from Python numbers.
_ONE_D_FLOAT_FACTORIES = frozenset({"torch.linspace", "torch.logspace"})
_LITERAL_INT_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.IntTensor"})
_ONE_D_FACTORIES = _ONE_D_INT_FACTORIES | _ONE_D_FLOAT_FACTORIES | _LITERAL_INT_FACTORIES


def _one_d_int(qual: str, args, kwargs, result: Value) -> Value:
    """``result`` marked :data:`ONE_D_INT_TENSOR` when ``qual(*args, **kwargs)`` surely makes a 1-d
    int64 tensor: ``torch.arange`` of Python ints, ``torch.randperm(n)``, ``torch.tensor`` (and
    ``as_tensor``, ``LongTensor``) of a literal list of ints; no ``out=`` or other keyword but
    ``device=``/``requires_grad=``, and ``dtype=`` only for ``torch.tensor``/``as_tensor`` (an
    integer dtype keeps the mark, a floating one gives :data:`ONE_D_FLOAT_TENSOR`).  Marked :data:`ONE_D_FLOAT_TENSOR` for
    ``torch.linspace``/``logspace`` of Python numbers with an int ``steps``."""
    if qual not in _ONE_D_FACTORIES or result.kind is not Kind.TENSOR or result.ref is not None or result.weak:
        return result  # (the set first: this runs on every call of a qualified name)
    if qual in _ONE_D_FLOAT_FACTORIES:
        if any(k not in ("device", "requires_grad", "steps") for k in kwargs):
            return result
        bounds = list(args[:2])
        steps = args[2] if len(args) > 2 else kwargs.get("steps")
        numbers = len(bounds) == 2 and len(args) <= 3 and all(a.kind in (Kind.CONST, Kind.SHAPE) and not a.maybe_none for a in bounds)
        return replace(result, ref=ONE_D_FLOAT_TENSOR) if numbers and steps is not None and python_number(steps) else result
    if any(k not in ("device", "requires_grad", "pin_memory", "dtype") for k in kwargs):
        return result
    if "dtype" in kwargs:
        # ``torch.tensor([0, 2], dtype=torch.long)``: the dtype decides the mark (an integer or
        # floating one; any other, bool or unknown, gives none)
        mark = rank0.dtype_mark(kwargs["dtype"])
        if mark is None or qual not in ("torch.tensor", "torch.as_tensor"):
            return result
        marked = _one_d_int(qual, args, {k: v for k, v in kwargs.items() if k != "dtype"}, result)
        if marked.ref != ONE_D_INT_TENSOR:
            return result
        return replace(marked, ref=ONE_D_INT_TENSOR if mark == INT_SCALAR_TENSOR else ONE_D_FLOAT_TENSOR)
    if qual in _ONE_D_INT_FACTORIES:
        ok = bool(args) and all(python_number(a) for a in args) and (qual != "torch.randperm" or len(args) == 1)
    else:  # a literal list of ints (_LITERAL_INT_FACTORIES)
        # of two elements or more: Dynamo's fake tensors keep the value of a tensor of at most
        # ``CONSTANT_NUMEL_LIMIT`` (1) element built from constants, so ``torch.tensor([2])[0]`` (or a
        # reduction of it) is a constant and an index with it traces (measured on torch 2.13)
        ok = (
            len(args) == 1 and args[0].kind is Kind.CONTAINER and args[0].keys is None and len(args[0].elts or ()) >= 2
            and all(e.kind is Kind.CONST and isinstance(e.const, int) and not isinstance(e.const, bool) for e in args[0].elts)
        )
    return replace(result, ref=ONE_D_INT_TENSOR) if ok else result


#: A NumPy value computed while the module is built (``self.hop = np.prod(ratios)`` in ``__init__``)
#: and read in compiled code.  Measured on torch 2.13 with ``self.hop = np.prod([2, 2])``: used as
#: it is (``x.view(self.hop, -1)``, ``x[:, :self.hop]``, ``int(self.hop)``, ``math.sqrt(self.hop)``)
#: it is a constant and nothing breaks; arithmetic or a comparison on it (``self.hop * 1``,
#: ``x.shape[-1] // self.hop``, ``self.hop > 2``) is traced through torch._numpy into a tensor,
#: so using the result as a size or branching on it breaks; ``range(self.hop)`` breaks.
NUMPY_VALUE = Value(Kind.CONST, ref="numpy-value")
#: A NumPy array of one or more dimensions built while the module is built (``self.strides =
#: np.array([8, 16, 32])``, ``np.arange(4)``, ``np.zeros(3)``), a :data:`NUMPY_VALUE` known to be an
#: array, not a scalar.  Read in compiled code Dynamo wraps it as a tensor: besides what holds for
#: any NumPy value, ``.tolist()``, ``.item()``, ``int()`` and ``float()`` of it read tensor data into
#: Python ("Data dependent operator", GB0033; measured on torch 2.13 with the ``graph_breaks`` log for
#: ``np.array([2, 4]).tolist()`` and ``np.array([2]).item()``/``int()``), while NumPy scalars
#: (``np.prod([2, 2])``, ``np.float64(2.0)``, a 0-d ``np.array(3)``) give constants there.
NUMPY_ARRAY = Value(Kind.CONST, ref="numpy-array")
#: An element, slice, iterate or reduction of a NumPy array read in compiled code (``self.strides[i]``,
#: ``for s in self.strides``, ``self.counts.sum()``; the array built while the module is built).
#: Dynamo wraps the array as a tensor (``NumpyNdarrayVariable``), so the part is a 0-d tensor in the
#: graph, not a constant, and it is one here (kind ``TENSOR``).  Measured on torch 2.13 with
#: ``self.arr = np.array([3, 2])`` and the ``graph_breaks`` log (``fullgraph=True`` captures the
#: reads as unbacked SymInts and raises nothing, so it is no probe for them): arithmetic with
#: tensors (``x * self.arr[0]``) traces; a comparison, ``not`` or truth test of it (``if self.arr[0]
#: > 2:``, ``for v in self.arr: if v > 2:``) is data-dependent branching; and wherever a Python
#: number is needed it is read with ``aten._local_scalar_dense`` ("Data dependent operator",
#: GB0033), as any 0-d tensor computed in the graph: ``int()``/``float()``/``.item()``/
#: ``.tolist()`` of it, a size (``x.view(self.arr[1], -1)``, ``x.new_zeros(self.arr[0])``,
#: ``x.repeat(self.arr[0], 1)``), a slice bound (``x[:, :s]`` for ``s`` in ``self.arr``), an integer
#: index of a tensor or of a Python list, ``math.sqrt()`` and ``range()`` of it.
NUMPY_ELEMENT = Value(Kind.TENSOR, ref="numpy-element")
#: ``int()``/``float()``/``.item()`` of a :data:`NUMPY_ELEMENT` with ``capture_scalar_outputs`` on (an
#: unbacked SymInt/SymFloat, which traces as a size), an element of ``.tolist()`` of a NumPy value read
#: in compiled code; branching on it (``if int(self.arr[0]) > 1:``) or ``range()`` of it breaks ("Could
#: not guard on data-dependent expression").
NUMPY_NUMBER = Value(Kind.CONST, ref="numpy-number")
_NUMPY_BY_REF = {v.ref: v for v in (NUMPY_VALUE, NUMPY_ARRAY, NUMPY_ELEMENT, NUMPY_NUMBER)}
_NUMPY_ARRAY_REFS = frozenset({"numpy-value", "numpy-array", "numpy-element"})
#: NumPy functions whose result is an array of one or more dimensions whatever their (Python)
#: arguments (``numpy.array``/``asarray`` only when given a list or tuple: ``np.array(3)`` is 0-d).
_NUMPY_ARRAY_FUNCTIONS = frozenset({
    "numpy.arange", "numpy.linspace", "numpy.logspace", "numpy.geomspace", "numpy.eye", "numpy.identity",
    "numpy.stack", "numpy.concatenate", "numpy.vstack", "numpy.hstack", "numpy.cumsum", "numpy.cumprod",
    "numpy.diff", "numpy.tile", "numpy.sort", "numpy.argsort", "numpy.flip",
})
_NUMPY_SIZED_FUNCTIONS = frozenset({"numpy.zeros", "numpy.ones", "numpy.full", "numpy.empty"})
_NUMPY_PART_REFS = frozenset({"numpy-element", "numpy-number"})


def _numpy_ref(v: Value) -> Optional[str]:
    """The ``ref`` of ``v`` when it is one of :data:`NUMPY_VALUE`, :data:`NUMPY_ELEMENT` and
    :data:`NUMPY_NUMBER`, else None (checked on ``kind`` and ``ref`` first: it runs on every
    arithmetic operation)."""
    ref = v.ref
    if type(ref) is not str or (v.kind is not Kind.CONST and v.kind is not Kind.TENSOR):
        return None
    canon = _NUMPY_BY_REF.get(ref)
    return ref if canon is not None and v == canon else None


#: The module values ``torch.jit.script``/``freeze`` and ``torch.jit.trace`` return for a module.
SCRIPT_MODULE = "torch.jit.ScriptModule"
TRACED_MODULE = "torch.jit.TracedModule"
_TORCHSCRIPT_MODULES = {
    "torch.jit.script": SCRIPT_MODULE,
    "torch.jit.freeze": SCRIPT_MODULE,
    "torch.jit.optimize_for_inference": SCRIPT_MODULE,
    "torch.jit.trace": TRACED_MODULE,
    "torch.jit.trace_module": TRACED_MODULE,
}
#: ``torch.cond`` by its public and its defining name
COND_FUNCTIONS = frozenset({"torch.cond", "torch._higher_order_ops.cond.cond"})
#: factories that take their dtype from their first argument unless ``dtype=`` is given
_LIKE_FACTORIES = frozenset({"zeros_like", "ones_like", "empty_like", "full_like"})
#: The value of an f-string or ``"...".format(...)`` that formats a tensor: Dynamo keeps it
#: unbuilt while tracing (see :meth:`Interpreter._emit_formatted`); using it breaks.
LAZY_TENSOR_TEXT = Value(Kind.CONST, ref="lazy tensor text")
#: builtins that need a string's text (the lazy text of a tensor format breaks there)
_TEXT_READING_BUILTINS = frozenset({"builtins.len", "builtins.str", "builtins.hash", "builtins.int", "builtins.float", "builtins.ord", "builtins.list", "builtins.sorted", "builtins.set"})


def _formats_a_tensor(v: Value) -> bool:
    """A value whose text Dynamo cannot build while tracing: a sure tensor (or an unbuilt text of one)."""
    return v is LAZY_TENSOR_TEXT or (v.kind is Kind.TENSOR and not v.weak)


#: reads of an environment variable, with its default as the second argument
_ENVIRONMENT_READS = frozenset({"os.environ.get", "os.getenv"})
#: ``Tensor`` methods that make a new tensor of the receiver's dtype unless ``dtype=`` is given
_NEW_FACTORIES = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})


def _known_truth(v: Value) -> Optional[bool]:
    """The truth of a Python constant whose value is known (a literal, a default), else ``None``."""
    if v.kind is Kind.NONE and not v.maybe_none:
        return False
    if v.kind is Kind.CONST and not v.maybe_none and isinstance(v.const, (bool, int, float, str)):
        return bool(v.const)
    if v.kind in (Kind.FUNCTION, Kind.CLASS) and v.ref is not None and not v.maybe_none:
        return True  # a function or class object is always true (``if obj:`` in a decorator)
    return None


def _array_only_index(target: cst.Subscript) -> bool:
    """Whether the subscript's index only an array accepts: several axes with a slice or ``...`` among them
    (``cache[:, a:b]``, ``x[..., 0]``).  A list raises ``TypeError`` on a tuple index and a dict is not keyed
    by slices in practice, so a guessed tensor stored into this way is a tensor (``x[key] = v``,
    ``x[a:b] = v`` may still be a dict or list)."""
    elements = target.slice
    if len(elements) < 2 and not (
        len(elements) == 1 and isinstance(elements[0].slice, cst.Index) and isinstance(elements[0].slice.value, cst.Ellipsis)
    ):
        return False
    return any(
        isinstance(e.slice, cst.Slice) or (isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Ellipsis))
        for e in elements
    )


def _guess(v: Value) -> Value:
    """``v`` as a guess: a sure tensor becomes a weak one (rules do not branch-flag guesses)."""
    return replace(v, weak=True) if v.kind is Kind.TENSOR and not v.weak else v


def _join_candidates(values: Sequence[Value]) -> Value:
    """The join of values of one point, where different functions, classes or instances stay
    "one of these" (``f if flag else g``, the results of a call on several candidates)."""
    if len(values) > 1 and all(v.kind in (Kind.FUNCTION, Kind.CLASS, Kind.MODULE) for v in values):
        picked = objects.one_of(values)
        if picked is not None:
            return picked
    return _join_all(values)


def _join_all(values: Sequence[Value]) -> Value:
    if not values:
        return UNKNOWN
    out = values[0]
    for v in values[1:]:
        out = join(out, v)
    return out


def _bin_symbol(op) -> str:
    return {
        cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
        cst.Modulo: "%", cst.Power: "**", cst.MatrixMultiply: "@", cst.BitAnd: "&", cst.BitOr: "|",
        cst.BitXor: "^", cst.LeftShift: "<<", cst.RightShift: ">>",
    }.get(type(op), "?")


def _aug_symbol(op) -> str:
    return {
        cst.AddAssign: "+=", cst.SubtractAssign: "-=", cst.MultiplyAssign: "*=", cst.DivideAssign: "/=",
        cst.FloorDivideAssign: "//=", cst.ModuloAssign: "%=", cst.PowerAssign: "**=",
        cst.MatrixMultiplyAssign: "@=", cst.BitAndAssign: "&=", cst.BitOrAssign: "|=",
        cst.BitXorAssign: "^=", cst.LeftShiftAssign: "<<=", cst.RightShiftAssign: ">>=",
    }.get(type(op), "?=")


def _reads_name(stmt: cst.CSTNode, name: str) -> bool:
    """True when the statement's value reads the bare name ``name`` (``STEP = STEP + 1``)."""
    value = getattr(stmt, "value", None)
    if value is None:
        return False
    return any(isinstance(node, cst.Name) and node.value == name for node in walk(value))


_SELF_STATE: Dict[int, Tuple[cst.FunctionDef, bool]] = {}
_SELF_STATE_MAX = 4096  # entries keep their trees alive: bounded, for long-lived processes (the LSP server)


def _stores_self_state(fn: cst.FunctionDef) -> bool:
    """Whether a method's own body (nested functions and classes aside) assigns an attribute of
    its first parameter (``self.cache = ...``) or calls ``register_buffer``/``register_parameter``/
    ``add_module`` on it.

    Memoised per node: the methods of a base class in another module (a library's
    ``PreTrainedModel``) are asked about once per class that inherits them, in every entry file
    whose analysis builds such a class, and the node (a cached piece of that module) is the same.
    """
    hit = _SELF_STATE.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    result = _scan_self_state(fn)
    if len(_SELF_STATE) >= _SELF_STATE_MAX:
        _SELF_STATE.clear()
    _SELF_STATE[id(fn)] = (fn, result)
    return result


def _scan_self_state(fn: cst.FunctionDef) -> bool:
    """:func:`_stores_self_state` without the memo."""
    params = list(fn.params.posonly_params) + list(fn.params.params)
    if not params:
        return False
    me = params[0].name.value

    def is_me(e) -> bool:
        return isinstance(e, cst.Name) and e.value == me

    stack = list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else [fn.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Assign):
            if any(isinstance(t.target, cst.Attribute) and is_me(t.target.value) for t in node.targets):
                return True
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            if isinstance(node.target, cst.Attribute) and is_me(node.target.value):
                return True
        elif isinstance(node, cst.Call):
            f = node.func
            if isinstance(f, cst.Attribute) and is_me(f.value) and f.attr.value in ("register_buffer", "register_parameter", "add_module"):
                return True
        stack.extend(iter_children(node))  # the code fields only: far cheaper than ``.children``
    return False


def _module_returned_to_itself(stmt: cst.CSTNode, name: str, value: Value) -> bool:
    """``self.<name> = self.<name>.to(x.device)`` (``.cuda()``, ``.eval()`` ...) with a module there:
    the statement stores back the very object it read (:data:`_MODULE_SELF_METHODS` return ``self``), so no
    state Dynamo guards on changes (measured on torch 2.13: no recompile over four calls)."""
    call = getattr(stmt, "value", None)
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in _MODULE_SELF_METHODS):
        return False
    recv = call.func.value
    if not _is_self_attribute(recv, name):
        return False
    return value.kind is Kind.MODULE and not value.weak


#: ``str`` methods evaluated on a known string with known arguments (pure, cheap, no locale).
_FOLDED_STRING_METHODS = frozenset(
    "split rsplit strip lstrip rstrip lower upper startswith endswith replace partition rpartition isdigit".split()
)


def _string_method(recv: Value, method: str, args, kwargs) -> Optional[Value]:
    """``recv.method(*args)`` of a known string (``"2.13.0".split(".")``) as Python computes it:
    a constant, or a tuple of constants for a list result; ``None`` when the string, the
    arguments or the method are not known here."""
    if method not in _FOLDED_STRING_METHODS or kwargs or recv.ref is not None or not isinstance(recv.const, str):
        return None
    values = []
    for a in args:
        if a.kind is not Kind.CONST or a.ref is not None or not isinstance(a.const, (str, int)) or isinstance(a.const, bool):
            return None
        values.append(a.const)
    try:
        out = getattr(recv.const, method)(*values)
    except (TypeError, ValueError):
        return None
    if isinstance(out, (list, tuple)):
        return container(elts=tuple(const(x) for x in out))
    return const(out)


def _documented(fn: FunctionInfo, p: cst.Param, value: Value) -> Value:
    """``value``, the guess for an unannotated parameter ``p`` of ``fn`` (a tensor), replaced by what
    ``fn`` itself says of the parameter: the builtin types an ``isinstance`` check at the top of its
    body allows (:mod:`pt2lint.analysis.type_checks`: a Python constant for scalars, a container
    for lists and tuples, unknown for a mix), else a Python constant when its docstring declares the
    parameter a ``bool``, ``int``, ``float`` or ``str`` (:mod:`pt2lint.analysis.docstrings`):
    ``target_is_real (bool)`` is no tensor, and ``if target_is_real:`` no data-dependent branch;
    else what the body's uses of the parameter say (:mod:`pt2lint.analysis.param_uses`): a container
    (of weak tensor guesses) or unknown for a value read with an attribute tensors lack, a weak
    guess for one used only as a Python number or flag."""
    if p.annotation is not None or value.kind is not Kind.TENSOR:
        return value
    node = getattr(fn, "node", None)
    if node is None:
        return value
    checked = type_checks.checked_types(node).get(p.name.value)
    if checked is not None:
        # ``assert isinstance(n, int)`` at the top of the body: the function raises for anything else
        if checked <= type_checks.SCALAR_TYPES:
            return replace(CONST, not_none=True)
        if checked <= type_checks.CONTAINER_TYPES:
            return Value(Kind.CONTAINER, elt=UNKNOWN, not_none=True)
        return UNKNOWN
    found = docstrings.documented_scalars(node).get(p.name.value)
    if found is None:
        if value.weak:
            return value
        used = _parameter_evidence(fn, p.name.value)
        if used in (param_uses.OBJECT, param_uses.CONTAINER):
            return _no_tensor(used, value)  # ``cfg.hidden_size``, ``x_dict.items()``
        if used == param_uses.NUMBER:
            return replace(value, weak=True)  # ``range(horizon)``, ``if guidance_scale == 1.0:``
        return value
    optional = found[1] or value.maybe_none
    return replace(CONST, maybe_none=True) if optional else replace(CONST, not_none=True)


def _parameter_evidence(fn: FunctionInfo, name: str) -> Optional[str]:
    """What the uses of ``fn``'s parameter ``name`` say of its type (:func:`param_uses.evidence`,
    with the facts table's Tensor attributes and ATen argument kinds, the functions and methods to
    follow it into, and the instance parameter of a method)."""
    return param_uses.evidence(
        fn.node, name, dynamo_facts.tensor_attributes(), dynamo_facts.schema_arguments(),
        _callees(fn), Interpreter._first_param_name(fn),
    )


def _callees(fn: FunctionInfo) -> Optional[Callable[[str], object]]:
    """The resolver :func:`param_uses.evidence` follows a parameter of ``fn`` with, passed on to
    another function: a name ``fn`` calls, as its module binds it (a module-level function, or one
    imported from a project module that :meth:`ProjectModel.resolve` finds), or ``".m"`` for
    ``self.m(...)``, a plain or static method of ``fn``'s class (looked up along its MRO).  None
    when ``fn``'s module is not known."""
    module = getattr(fn, "module", None)
    functions = getattr(module, "functions", None)
    if functions is None:
        return None

    def find(name: str):
        if name.startswith("."):
            cls = fn.cls
            info = cls.lookup_method(name[1:]) if isinstance(cls, ClassInfo) else None
            if not isinstance(info, FunctionInfo) or info.kind not in ("method", "staticmethod") or not isinstance(info.node, cst.FunctionDef):
                return None
            method = info.kind == "method"
            return param_uses.Callee(info.node, 1 if method else 0, _callees(info), Interpreter._first_param_name(info) if method else None)
        info = functions.get(name)
        if info is None:
            qualified = module.imports.names.get(name)
            project = getattr(module, "project", None)
            info = project.resolve(module, qualified) if qualified is not None and project is not None else None
        if not isinstance(info, FunctionInfo) or info.cls is not None or not isinstance(info.node, cst.FunctionDef):
            return None
        return param_uses.Callee(info.node, 0, _callees(info), None)

    return find


def _no_tensor(used: str, guess: Value) -> Value:
    """What a parameter taken for a tensor (``guess``) is when its uses say it is none
    (:mod:`pt2lint.analysis.param_uses`): a dict, list or tuple whose entries keep the guess, weakly
    (``for k, v in feats.items(): if v.any():`` -- the values are what a caller passes), or an
    object of unknown kind."""
    if used == param_uses.CONTAINER:
        elt = Value(Kind.TENSOR, weak=True, alias_of=guess.alias_of)
        return Value(Kind.CONTAINER, elt=elt, alias_of=guess.alias_of, maybe_none=guess.maybe_none)
    return Value(Kind.UNKNOWN, alias_of=guess.alias_of, maybe_none=guess.maybe_none)


def _is_self_attribute(node: Optional[cst.CSTNode], name: str) -> bool:
    """``node`` is ``self.<name>`` as written (the instance's parameter spelled ``self``)."""
    return isinstance(node, cst.Attribute) and node.attr.value == name and isinstance(node.value, cst.Name) and node.value.value == "self"


def _reads_self_attr(stmt: cst.CSTNode, name: str) -> bool:
    """True when the statement's value reads ``self.<name>`` (``self.n = self.n + 1``, or
    ``self.n = getattr(self, "n", 0) + 1``)."""
    value = getattr(stmt, "value", None)
    if value is None:
        return False
    return any(_is_self_attribute(node, name) or _getattr_of_self(node) == name for node in walk(value))


def _getattr_of_self(node: cst.CSTNode) -> Optional[str]:
    """The attribute name of ``getattr(self, "<name>"[, default])`` as written, else None."""
    if (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr" and len(node.args) >= 2
        and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "self"
        and isinstance(node.args[1].value, cst.SimpleString)
    ):
        name = node.args[1].value.evaluated_value
        return name if isinstance(name, str) else None
    return None


#: Kinds of a Python number or string (a size, a constant, a value read from a tensor): what Dynamo
#: guards by value when it reads one from ``self``.
_PYTHON_SCALAR_KINDS = frozenset((Kind.SHAPE, Kind.CONST, Kind.DATA))


def _binds_directly(stmt: cst.CSTNode, target: cst.CSTNode) -> bool:
    """``target`` is a whole target of the assignment ``stmt`` (``t = ...``, ``a = t = ...``), not
    an element of an unpacked tuple or a loop variable."""
    if isinstance(stmt, cst.Assign):
        return any(t.target is target for t in stmt.targets)
    return isinstance(stmt, cst.AnnAssign) and stmt.target is target


def _state_sources(expr: Optional[cst.CSTNode], state_from: Dict[str, Tuple[frozenset, bool]]) -> Optional[Tuple[frozenset, bool]]:
    """The attributes of ``self`` the value of ``expr`` is computed from, directly (``self.count``,
    ``getattr(self, "count")``) or through locals bound from them (``state_from``, see
    :attr:`Frame.state_from`), and whether ``expr`` changes them: ``False`` only for a bare copy
    (``self.count``, or a local that is one); ``None`` when it reads no such attribute.

    Syntactic, over the expression's nodes (lambdas and comprehensions included): a source read
    only where its value is dropped (``f(self.n) and 0``) still counts, which errs towards a source.
    """
    if expr is None:
        return None
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return frozenset((expr.attr.value,)), False
    if isinstance(expr, cst.Name):
        return state_from.get(expr.value)
    attrs: set = set()
    for local in loaded_names([expr]):
        if local in state_from:
            attrs |= state_from[local][0]
    for node in walk(expr):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            attrs.add(node.attr.value)
        elif (read := _getattr_of_self(node)) is not None:
            attrs.add(read)
    return (frozenset(attrs), True) if attrs else None


def _changed_through_locals(stmt: cst.CSTNode, name: str, state_from: Dict[str, Tuple[frozenset, bool]]) -> bool:
    """The value ``stmt`` stores reads a local computed from ``self.<name>`` and changed
    (``total = self.count + n`` ... ``self.count = total``): a new value of the attribute on
    every call, like ``self.count = self.count + n``."""
    value = getattr(stmt, "value", None)
    if value is None:
        return False
    if isinstance(value, cst.Name):  # ``self.count = total``: changed only if ``total`` was
        sources = state_from.get(value.value)
        return sources is not None and sources[1] and name in sources[0]
    return any(name in state_from[local][0] for local in loaded_names([value]) if local in state_from)


#: Every attribute of the Python value types Dynamo guards by value on a module (numbers,
#: strings, containers): ``dir()`` of each type of the running Python.
_GUARDED_VALUE_ATTRIBUTES = frozenset().union(*(dir(t) for t in (int, float, complex, bool, str, bytes, list, tuple, dict, set, frozenset)))


def _converted_by_foreign_methods(stmt: cst.CSTNode, name: str) -> bool:
    """True when the statement's value is ``self.<name>`` through a chain of method calls none of
    which a Python number, string or container has (``self.window = self.window.to(x.device)``,
    ``self.h = self.h.detach().float()``).

    An object of unknown type answering ``.to(...)`` is no int, str, list or dict that Dynamo
    specialises on: a tensor (or module) converted each call, which does not recompile (measured
    on torch 2.13: ``self.window = self.window.to(x.device)`` compiled one frame over four calls,
    tests/test_state_conversions.py).  Arithmetic (``self.t * 0.9``) and methods those types
    have (``self.s.strip()``, ``self.l.copy()``) are not such chains.
    """
    node = getattr(stmt, "value", None)
    methods = 0
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in _GUARDED_VALUE_ATTRIBUTES:
            return False
        methods += 1
        node = node.func.value
    return methods > 0 and _is_self_attribute(node, name)


_BUILTINS = frozenset(
    """print len int float bool complex str repr isinstance issubclass hasattr getattr setattr callable type id
    hash range enumerate zip list tuple dict set frozenset sorted reversed iter next min max abs round pow divmod
    sum any all super breakpoint input open exec eval format ord chr hex oct bin ascii map filter vars dir globals locals object
    slice property staticmethod classmethod NotImplementedError ValueError RuntimeError TypeError""".split()
)


#: A tensor's conversion methods and the builtin that calls each (Python's data model: ``int(t)`` is
#: ``type(t).__int__(t)``); Dynamo breaks on ``t.__int__()``, ``t.__float__()``, ``t.__index__()``
#: as on ``int(t)`` ("Unsupported Tensor.item() call with capture_scalar_outputs=False") and traces
#: ``t.__len__()`` (torch 2.13)
_DUNDER_BUILTINS = {
    "__int__": "builtins.int", "__float__": "builtins.float", "__bool__": "builtins.bool",
    "__complex__": "builtins.complex", "__index__": "operator.index", "__len__": "builtins.len",
}

#: Qualified names of the tensor class; ``<one of them>.<method>(t, ...)`` calls ``t.<method>(...)``.
_TENSOR_CLASSES = ("torch.Tensor", "torch._C.TensorBase", "torch._C._TensorBase")

#: Tensor attributes whose ``t.__getattribute__(name)`` traces: their values are tensors, a
#: ``torch.Size`` or ``None`` (torch 2.13; every other attribute and every method breaks, GB0208)
_GETATTRIBUTE_TRACES = api.TENSOR_TENSOR_ATTRS | frozenset({"shape", "grad_fn", "name"})

#: ``const`` of a tensor method stored in a class body (``it = torch.Tensor.item``) and looked up on
#: the class (``A.it``): calling it breaks (GB0156); ``ref`` is the method's qualified name
_CLASS_DESCRIPTOR = "class-attribute tensor method"

#: ``const`` of a class-body value wrapped in ``staticmethod(...)``, stripped when it is looked up
_STATIC = "builtins.staticmethod"

#: a slice bound whose value is no known ``int`` (see :meth:`Interpreter._eval_slices`)
_UNKNOWN_BOUND = "<unknown slice bound>"

#: ``const`` of ``A.__dict__`` / ``vars(A)`` for a class ``A`` of the project (its ``ClassInfo`` is ``ref``)
_CLASS_DICT = "class __dict__"

#: ``const`` of ``t.__class__`` for a value surely a tensor (``ref`` ``"torch.Tensor"``): a tensor method
#: called through it breaks (GB0156, torch 2.13)
_TENSOR_DUNDER_CLASS = "tensor __class__"

#: ``const`` of the ``torch.utils.hooks.RemovableHandle`` a module-hook registration returns
#: (``m.register_forward_hook(fn)``, ``torch.nn.modules.module.register_module_forward_hook(fn)``)
_HOOK_HANDLE = "module hook handle"


def _is_hook_handle(v: Value, surely: bool = False) -> bool:
    """``v`` is a module hook's handle (``_HOOK_HANDLE``); with ``surely``, one that is not maybe ``None``."""
    return v.const == _HOOK_HANDLE and v.kind is Kind.UNKNOWN and not (surely and v.maybe_none)


def _class_view(v: Value) -> Value:
    """A class-body value looked up on the class (``A.it``): a tensor method stored raw is marked
    ``_CLASS_DESCRIPTOR`` (calling it breaks, GB0156, torch 2.13); one wrapped in ``staticmethod`` is the
    plain unbound method (``A.it(t)`` is ``torch.Tensor.item(t)``).  Only callables stored by name
    (functions and qualified callables such as ``torch.relu``) are followed; other values stay Unknown."""
    if v.kind is Kind.UNKNOWN and isinstance(v.ref, str) and _unbound_tensor_method(None, v) is not None:
        return replace(v, const=_CLASS_DESCRIPTOR if v.const is None else None) if v.const in (None, _STATIC) else UNKNOWN
    if v.const is None and ((v.kind in (Kind.UNKNOWN, Kind.CONST) and isinstance(v.ref, str)) or v.kind is Kind.FUNCTION):
        return v  # (``torch.relu`` is read as a constant naming the function)
    return UNKNOWN


def _instance_view(v: Value) -> Value:
    """A class-body value looked up on an instance (``self.it``): a tensor method stored raw binds to
    the instance (CPython's method descriptor, which then rejects a non-tensor ``self``: TypeError), so
    it is Unknown; one wrapped in ``staticmethod`` is the plain unbound method; anything else as is."""
    if v.kind is Kind.UNKNOWN and isinstance(v.ref, str) and _unbound_tensor_method(None, v) is not None:
        return replace(v, const=None) if v.const == _STATIC else UNKNOWN
    return v


def _unbound_tensor_method(qual: Optional[str], callee: Optional[Value]) -> Optional[str]:
    """The method name when a call's function is a method of the tensor class looked up on the class
    (``torch.Tensor.item``, or a variable holding it), else ``None``."""
    name = qual
    if name is None and callee is not None and callee.kind is Kind.UNKNOWN and isinstance(callee.ref, str):
        name = callee.ref
    if not name or "." not in name:
        return None
    owner, _, method = name.rpartition(".")
    if owner not in _TENSOR_CLASSES or not method.isidentifier() or (method.startswith("__") and method not in _DUNDER_BUILTINS):
        return None
    return method

