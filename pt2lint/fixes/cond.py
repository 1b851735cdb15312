"""The ``cond`` codemod: a data-dependent ``if``/``elif``/``else`` becomes ``torch.cond``.

::

    if (g > 0.5).any():                 def _true_fn(x, g):
        x = x + g * self.update(x)   ->     x = x + g * self.update(x)
                                            return x
                                        def _false_fn(x, g):
                                            return x.clone()
                                        x = torch.cond((g > 0.5).any(), _true_fn, _false_fn, (x, g))

What torch 2.13's ``torch.cond`` requires (``torch/_higher_order_ops/cond.py``,
measured here): a predicate that is a Python bool or a one-element tensor;
branch functions that take the operands (a tuple of tensors) and return the
same structure of tensors with the same dtype (shapes may differ); no mutation
of inputs or outer state; and no output that aliases an input ("Higher order
ops do not support aliasing", GB0040 -- hence ``.clone()`` for a value passed
through unchanged).  Closures over ``self``, its submodules and parameters are
lifted by Dynamo, and gradients flow through them.

The rewrite is applied only when it can be argued equivalent; otherwise the
finding gets a display-only fix whose message says why (see :mod:`pt2lint.fixes.purity`
for what a branch may not do).  It is marked unsafe, not refused, when the
branches call code pt2lint cannot see into, draw random numbers, when a
``.item()``/``float()`` comparison moves from Python float64 into the tensor's
dtype, when an output's rank or device is fixed in one branch only (a full
reduction, ``.cpu()``), when a parameter is used in some branches only (its
``.grad`` becomes zero instead of ``None``), and when the module is not known to
be compiled (``assume-compiled``: in eager mode torch.cond costs time).  A clash
the syntax proves (int32 vs int64, 0-d vs flattened, cpu vs cuda) is refused, and
so is an output whose dtype one branch fixes (a cast, a comparison) while another
keeps its input's.  torch 2.13's ``torch.cond`` raises on
every such clash when it traces the branches (measured: ``tests/test_fix_cond_hazards.py``).
"""

from __future__ import annotations

import bisect
import itertools
import operator
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from pt2lint.analysis import torch_api as api
from pt2lint.analysis.dynamo_facts import module_state
from pt2lint.analysis.kinds import Kind, Value, join
from pt2lint.analysis.walk import iter_children, walk
from pt2lint.diagnostics import Applicability, Fix
from pt2lint.fixes.compiled import compiled_symbols, region_compiled
from pt2lint.fixes.cond_proof import ELEMENTWISE_MODULES, unproven_reason
from pt2lint.fixes.context import FixContext, Refuse
from pt2lint.fixes.edits import lost_comments
from pt2lint.fixes.module_facts import FLOAT_INPUT_MODULES, RANK_KEEPING_MODULES, floating_inputs, submodule_input
from pt2lint.analysis.names import bound_names, loaded_names
from pt2lint.fixes.predicate import Predicate, ScalarProver, call_qualname, literal_value, paren_if_needed, translate_predicate
from pt2lint.fixes.purity import BranchChecker, declared_names, may_alias

NAME = "cond"
#: The eager-mode cost of a rewrite, measured by ``bench/cond_overhead.py`` on torch 2.13 (CPU,
#: one thread; ``bench/RESULTS.md``): a small gated block is this much slower per call after
#: the rewrite when it is not compiled.  Under ``torch.compile`` the two are the same graph.
EAGER_COST = "about 6-27x slower per call"
TARGET_CODES = frozenset({"PTC104", "PTC101", "PTC103"})


@dataclass
class Branch:
    """One arm of the ``if``: its statements and where they came from."""

    stmts: List[cst.BaseStatement]
    block: Optional[cst.BaseSuite]
    label: str
    exit_env: Optional[Dict[str, Optional[Value]]]
    leading: Sequence[cst.EmptyLine] = ()
    fresh: Set[str] = field(default_factory=set)


@dataclass
class Level:
    """One ``torch.cond``: an ``if`` (or ``elif``) with a tensor test."""

    node: cst.If
    pred: Predicate
    true: Branch
    false: Union[Branch, "Level", None]
    entry: Dict[str, Optional[Value]]
    operands: List[str] = field(default_factory=list)


def _contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(n is node for n in walk(root))


def target_if(finding, ctx: Optional[FixContext] = None) -> Optional[cst.If]:
    """The ``if``/``elif`` whose test holds the finding's node, if any.

    With ``ctx`` the test's nodes are walked once per file (:meth:`FixContext.contains`),
    not once per finding.
    """
    stmt = finding.stmt
    if not isinstance(stmt, cst.If):
        return None
    inside = ctx.contains(stmt.test, finding.node) if ctx is not None else _contains(stmt.test, finding.node)
    return stmt if inside else None


def tensor_test(ctx: FixContext, node: cst.If) -> bool:
    """Whether some rule flags the test of ``node`` as data-dependent (``if t``, ``t.item()``, ``bool(t)``).

    The flagged nodes are gathered once per file, and the answer is kept per ``if``.
    """
    key = (NAME, "tensor-test", id(node))
    hit = ctx.cache.get(key)
    if hit is None:
        flagged = ctx.cache.get((NAME, "flagged"))
        if flagged is None:
            flagged = ctx.cache[(NAME, "flagged")] = frozenset(
                id(f.node) for f in ctx.facts.findings if f.code in TARGET_CODES
            )
        hit = ctx.cache[key] = (node, not flagged.isdisjoint(ctx.subtree_ids(node.test)))  # type: ignore[union-attr]
    return hit[1]  # type: ignore[index]


def chain_top(ctx: FixContext, node: cst.If) -> cst.If:
    """The first ``if`` of the ``if``/``elif`` chain whose tests, from there down to ``node``, are all tensor tests."""
    cur = node
    while True:
        parent = ctx.parent(cur)
        if isinstance(parent, cst.If) and parent.orelse is cur and tensor_test(ctx, parent):
            cur = parent
        else:
            return cur


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The ``torch.cond`` fix for a finding in an ``if``/``elif`` test, or ``None`` when it is not in one.

    Refusals come back as a display-only fix whose message gives the reason.
    The same fix is shared by every finding of one ``if``/``elif`` chain.
    """
    node = target_if(finding, ctx)
    if node is None:
        return None
    top = chain_top(ctx, node)
    return ctx.fix_once(NAME, top, lambda: CondRewrite(ctx, top).fix(), "not rewritten as torch.cond")


def python_test(ctx: FixContext, node: cst.BaseExpression) -> bool:
    """``node`` is a Python test per the analysis: every leaf is a known non-tensor value and no rule
    flags a tensor read in it (``labels is not None``, ``self.training``, ``x.dim() == 3``)."""
    leaves = [node]
    while leaves:
        n = leaves.pop()
        if isinstance(n, cst.BooleanOperation):
            leaves += [n.left, n.right]
            continue
        if isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not):
            leaves.append(n.expression)
            continue
        v = ctx.facts.value(n)
        if v is None or v.kind in (Kind.TENSOR, Kind.DATA, Kind.UNKNOWN):
            return False
    ids = {id(m) for m in walk(node)}
    return not any(f.code in TARGET_CODES and id(f.node) in ids for f in ctx.facts.findings)


def _stmts_of(block: cst.BaseSuite) -> List[cst.BaseStatement]:
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    assert isinstance(block, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(body=list(block.body), trailing_whitespace=block.trailing_whitespace)]


def _returns(stmts: Sequence[cst.CSTNode]) -> List[cst.Return]:
    """``return`` statements of the block itself (not of functions or classes defined in it)."""
    out = []
    for s in stmts:
        if isinstance(s, (cst.FunctionDef, cst.ClassDef)):
            continue
        for n in walk(s, into_functions=False):
            if isinstance(n, cst.Return):
                out.append(n)
    return out


def always_returns(stmts: Sequence[cst.BaseStatement]) -> bool:
    """Whether every path through ``stmts`` ends in ``return`` (the last statement returns, or is an
    ``if`` with an ``else`` whose arms all do)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, cst.Return) for s in last.body)
    if isinstance(last, cst.If):
        if not always_returns(_stmts_of(last.body)):
            return False
        orelse = last.orelse
        if orelse is None:
            return False
        if isinstance(orelse, cst.If):
            return always_returns([orelse])
        return always_returns(_stmts_of(orelse.body))
    return False


def _top_level_bound(stmts: Sequence[cst.BaseStatement]) -> Set[str]:
    out: Set[str] = set()
    for s in stmts:
        if isinstance(s, cst.SimpleStatementLine):
            out |= set(bound_names([s]))
    return out


def _last_assignment(stmts: Sequence[cst.BaseStatement], name: str) -> Optional[cst.BaseExpression]:
    value = None
    for s in stmts:
        if isinstance(s, cst.SimpleStatementLine):
            for small in s.body:
                if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                    value = small.value
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == name and small.value is not None:
                    value = small.value
    return value


_CAST_METHODS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
                 "long": "int64", "int": "int32", "short": "int16", "byte": "uint8", "char": "int8", "bool": "bool"}
_INT_METHODS = frozenset("argmax argmin argsort nonzero count_nonzero bincount searchsorted bucketize randint randint_like randperm".split())
_DTYPE_NAMES = {
    "float": "float32", "float32": "float32", "double": "float64", "float64": "float64", "half": "float16",
    "float16": "float16", "bfloat16": "bfloat16", "bool": "bool", "long": "int64", "int64": "int64", "int": "int32",
    "int32": "int32", "short": "int16", "int16": "int16", "int8": "int8", "uint8": "uint8",
}
_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8"})
_FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
_FAMILIES = {"int": _INT_DTYPES | {"int"}, "float": _FLOAT_DTYPES | {"float"}}
# Results of these are floating point whatever the input (an integer input gives the default dtype).
_FLOAT_RESULT = frozenset(
    """sigmoid tanh exp exp2 expm1 log log2 log10 log1p sqrt rsqrt softmax log_softmax sin cos tan erf erfc
    erfinv mean nanmean std var norm reciprocal logsumexp""".split()
)
# Methods (and ``torch.<name>(t, ...)``) whose result has the dtype of their tensor argument.
_SAME_DTYPE = frozenset(
    """view reshape view_as reshape_as clone contiguous detach relu abs neg negative flatten unflatten squeeze
    unsqueeze transpose permute t mT T expand expand_as repeat repeat_interleave narrow select flip roll tril
    triu clamp clamp_min clamp_max clip masked_fill index_select gather take movedim
    maximum minimum max min amax amin zeros_like ones_like empty_like
    full_like rand_like randn_like""".split()
)
_FACTORIES = frozenset("zeros ones empty rand randn eye linspace logspace full".split())


def _binds(ctx: FixContext, stmt: cst.BaseStatement) -> frozenset:
    """The names ``stmt`` binds in its scope, computed once per statement and fix pass."""
    return ctx.per_node("cond-binds", stmt, lambda: frozenset(bound_names([stmt])))


def _loads(ctx: FixContext, node: cst.CSTNode) -> frozenset:
    """The names read in ``node`` (see :func:`~pt2lint.analysis.names.loaded_names`), computed once
    per node and fix pass."""
    return ctx.per_node("cond-loads", node, lambda: frozenset(loaded_names([node])))


class _BlockIndex:
    """Where each statement of one block (an indented block or the module) sits, and the positions
    of the statements that bind each name: built once per block, so finding the last binding of a
    name before a statement is a bisection, not a walk back over every statement before it.

    Attributes:
        body: the block's statements, in order.
        position: ``id(statement) -> index`` in ``body``.
        bound_at: ``name -> sorted indices`` of the statements of ``body`` that bind it
            (:func:`_binds`).
    """

    def __init__(self, ctx: FixContext, body: Sequence[cst.BaseStatement]) -> None:
        self.body: List[cst.BaseStatement] = list(body)
        self.position: Dict[int, int] = {id(st): i for i, st in enumerate(self.body)}
        self.bound_at: Dict[str, List[int]] = {}
        for i, st in enumerate(self.body):
            for name in _binds(ctx, st):
                self.bound_at.setdefault(name, []).append(i)

    def last_binding(self, name: str, start: int, end: int) -> int:
        """The largest index in ``[start, end)`` of a statement binding ``name``, else ``-1``."""
        at = self.bound_at.get(name)
        if not at:
            return -1
        k = bisect.bisect_left(at, end) - 1
        return at[k] if k >= 0 and at[k] >= start else -1


def _block_index(ctx: FixContext, stmt: cst.BaseStatement) -> Tuple[Optional[_BlockIndex], int]:
    """The :class:`_BlockIndex` of the block holding ``stmt`` and ``stmt``'s index there, or
    ``(None, -1)`` for a statement that is in no block of the module (a synthesized one)."""
    parent = ctx.parent(stmt)
    if not isinstance(parent, (cst.IndentedBlock, cst.Module)):
        return None, -1
    index: _BlockIndex = ctx.per_node("cond-block", parent, lambda: _BlockIndex(ctx, parent.body))
    at = index.position.get(id(stmt), -1)
    if at < 0 or index.body[at] is not stmt:
        return None, -1
    return index, at


#: A run of a statement sequence: ``(start, end, block index, first)``: ``stmts[start:end]`` is
#: ``index.body[first:first + end - start]``; with no index, ``stmts[start]`` alone, a statement of no block.
_Run = Tuple[int, int, Optional[_BlockIndex], int]


class _Statements(list):
    """A list of statements that knows its runs (:data:`_Run`): which of its stretches are which
    slices of which blocks, so :func:`_last_binding` need not compare them statement by statement.

    Built by :func:`_block_prefix`, :func:`_concat` and the ``before`` slices of :func:`_resolve`.
    """

    runs: Tuple[_Run, ...] = ()


def _runs(ctx: FixContext, stmts: Sequence[cst.BaseStatement]) -> Tuple[_Run, ...]:
    """The runs of ``stmts``: carried by a :class:`_Statements`; otherwise found from the end,
    each checked to be exactly the slice of its block that it looks like (an identity comparison
    of its statements)."""
    if isinstance(stmts, _Statements):
        return stmts.runs
    out: List[_Run] = []
    end = len(stmts)
    while end > 0:
        last = stmts[end - 1]
        index, at = _block_index(ctx, last)
        if index is None:
            out.append((end - 1, end, None, 0))
            end -= 1
            continue
        run = min(end, at + 1)
        if not all(map(operator.is_, itertools.islice(stmts, end - run, end), itertools.islice(index.body, at + 1 - run, at + 1))):
            run = 1  # not one slice of the block: the longest run that is
            while run < end and run <= at and stmts[end - 1 - run] is index.body[at - run]:
                run += 1
        out.append((end - run, end, index, at + 1 - run))
        end -= run
    out.reverse()
    return tuple(out)


def _with_runs(stmts: List[cst.BaseStatement], runs: Sequence[_Run]) -> _Statements:
    out = _Statements(stmts)
    out.runs = tuple(runs)
    return out


def _block_prefix(ctx: FixContext, stmt: cst.BaseStatement) -> Optional[_Statements]:
    """The statements of the block holding ``stmt`` that come before it, or ``None`` when ``stmt``
    is in no block of the module."""
    index, at = _block_index(ctx, stmt)
    if index is None:
        return None
    return _with_runs(index.body[:at], ((0, at, index, 0),) if at else ())


def _concat(ctx: FixContext, *parts: Sequence[cst.BaseStatement]) -> _Statements:
    """``parts`` one after the other, as a :class:`_Statements` carrying the runs of each part."""
    stmts: List[cst.BaseStatement] = []
    runs: List[_Run] = []
    for part in parts:
        base = len(stmts)
        runs.extend((start + base, end + base, index, first) for start, end, index, first in _runs(ctx, part))
        stmts.extend(part)
    return _with_runs(stmts, runs)


def _prefix(ctx: FixContext, stmts: Sequence[cst.BaseStatement], i: int) -> Sequence[cst.BaseStatement]:
    """``stmts[:i]``; for a :class:`_Statements`, one that carries the runs of that prefix."""
    if not isinstance(stmts, _Statements):
        return stmts[:i]
    runs = [(start, min(end, i), index, first) for start, end, index, first in stmts.runs if start < i]
    return _with_runs(list.__getitem__(stmts, slice(0, i)), runs)


def _last_binding(ctx: FixContext, stmts: Sequence[cst.BaseStatement], name: str) -> int:
    """The index in ``stmts`` of the last statement binding ``name`` (:func:`_binds`), else ``-1``.

    ``stmts`` is made of runs of consecutive statements of blocks (a block's statements before
    an ``if``, then a branch's; see :func:`_runs`): each run is answered by its block's
    :class:`_BlockIndex` (a bisection), a statement of no block is looked at alone.
    """
    for start, end, index, first in reversed(_runs(ctx, stmts)):
        if index is None:
            if name in _binds(ctx, stmts[start]):
                return start
            continue
        found = index.last_binding(name, first, first + end - start)
        if found >= 0:
            return start + found - first
    return -1


def _resolve(ctx: FixContext, stmts: Sequence[cst.BaseStatement], name: str) -> Tuple[Optional[cst.BaseExpression], Sequence[cst.BaseStatement], bool]:
    """Where ``name`` was last bound in ``stmts``: ``(expression, statements before it, True)`` for a
    plain assignment, ``(None, (), True)`` when it is bound some other way (a loop, a nested
    block), ``(None, (), False)`` when ``stmts`` do not bind it (it keeps the value it had where
    they start).  The look-up is :func:`_last_binding`'s (a bisection per block)."""
    i = _last_binding(ctx, stmts, name)
    if i < 0:
        return None, (), False
    st = stmts[i]
    if isinstance(st, cst.SimpleStatementLine):
        value = _last_assignment([st], name)
        if value is not None:
            return value, _prefix(ctx, stmts, i), True
    return None, (), True


def _callee_returns(ctx: FixContext, call: cst.Call) -> List[Tuple[cst.BaseExpression, Sequence[cst.BaseStatement]]]:
    """The returned expressions of the function of this file that ``call`` calls (a module's
    ``forward`` for a submodule call), each with the statements of the function before it."""
    from pt2lint.analysis.index import ClassInfo, FunctionInfo

    ev = ctx.facts.calls.get(id(call))
    callee = ev.callee if ev is not None else None
    if isinstance(callee, ClassInfo):
        callee = callee.lookup_method("forward") or callee.lookup_method("__call__")
    if not isinstance(callee, FunctionInfo) or callee.module not in (None, ctx.facts.index) or callee.is_generator:
        return []
    body = callee.node.body
    if not isinstance(body, cst.IndentedBlock):
        return []
    out = []
    stmts = list(body.body)
    for i, st in enumerate(stmts):
        for ret in _returns([st]):
            if ret.value is None:
                return []
            out.append((ret.value, stmts[:i]))
    return out


def _through_callee(ctx: FixContext, call: cst.Call, classify, depth: int) -> Optional[str]:
    """``classify`` of what a same-file function returns, when every ``return`` agrees."""
    if depth >= 6:
        return None
    found = {classify(e, st) for e, st in _callee_returns(ctx, call)}
    return found.pop() if len(found) == 1 else None


def _is_int_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) or (isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Integer))


def _is_float_literal(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Float) or (isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Float))


def dtypes_compatible(a: str, b: str) -> bool:
    """Whether two dtype classes (see :func:`dtype_class`; not ``?``) can be the same dtype."""
    if a == b:
        return True
    if "num" in (a, b):
        return "bool" not in (a, b)
    for fam, members in _FAMILIES.items():
        if a == fam:
            return b in members
        if b == fam:
            return a in members
    return False


def _arith(left: str, right: str, left_lit: str, right_lit: str, divide: bool) -> str:
    """The dtype class of ``left <op> right`` (torch's type promotion, on classes).

    ``*_lit`` is ``"int"``/``"float"`` for a Python number literal operand, else ``""``.
    """
    if left_lit and right_lit:
        return "?"  # Python arithmetic, not a tensor
    if left_lit:
        left, right, left_lit, right_lit = right, left, right_lit, left_lit
    if right_lit:
        t = left
        if right_lit == "float" and t not in _FLOAT_DTYPES:
            out = "float"  # an integer, bool or unknown tensor times a float: floating
        elif t == "bool":
            out = "int64"
        elif t in ("?", "num"):
            out = "num"
        else:
            out = t
    else:
        a, b = left, right
        if a == b and a not in ("?", "num", "bool"):
            out = a
        elif a == "bool" and b == "bool":
            out = "?"
        elif "bool" in (a, b):
            other = b if a == "bool" else a
            out = "num" if other == "?" else other
        elif a in _FLOAT_DTYPES | {"float"} and b in _INT_DTYPES | {"int"}:
            out = a
        elif b in _FLOAT_DTYPES | {"float"} and a in _INT_DTYPES | {"int"}:
            out = b
        elif a in _FAMILIES["float"] and b in _FAMILIES["float"]:
            out = "float"
        elif a in _FAMILIES["int"] and b in _FAMILIES["int"]:
            out = "int"
        elif a in _FAMILIES["float"] or b in _FAMILIES["float"]:
            out = "float"
        else:
            out = "num"
    if divide and out not in _FLOAT_DTYPES:
        return "float"  # true division of integers gives the default float dtype
    return out


def dtype_class(ctx: FixContext, expr: Optional[cst.BaseExpression], stmts: Sequence[cst.BaseStatement], depth: int = 0) -> str:
    """A dtype class of a branch output, read from the syntax: an exact dtype name (``int64``,
    ``float16``, ``bool``, ...) for an explicit cast, a comparison or an op whose result type is
    fixed; ``int`` / ``float`` for some integer / floating dtype; ``num`` for arithmetic (never
    bool); or ``?`` (as far as the syntax tells, the dtype of the inputs).

    Promotion follows torch's rules (``torch.result_type``): a tensor with a Python int keeps its
    dtype (bool becomes int64), with a Python float becomes floating, integer with floating tensors
    gives the floating one, true division is always floating.
    """
    if expr is None or depth > 8:
        return "?"
    if isinstance(expr, cst.Comparison):
        if all(not isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in expr.comparisons):
            return "bool"
        return "?"
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        left = dtype_class(ctx, expr.left, stmts, depth + 1)
        return "bool" if left == "bool" and dtype_class(ctx, expr.right, stmts, depth + 1) == "bool" else "?"
    if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, (cst.LeftShift, cst.RightShift)):
        lit = [("int" if _is_int_literal(e) else "float" if _is_float_literal(e) else "") for e in (expr.left, expr.right)]
        left = dtype_class(ctx, expr.left, stmts, depth + 1) if not lit[0] else "?"
        right = dtype_class(ctx, expr.right, stmts, depth + 1) if not lit[1] else "?"
        if isinstance(expr.operator, cst.Add) and not any(lit) and {left, right} <= {"bool", "?"}:
            return "?"  # bool + bool stays bool in torch
        return _arith(left, right, lit[0], lit[1], isinstance(expr.operator, cst.Divide))
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.BitInvert, cst.Minus, cst.Plus)):
        return dtype_class(ctx, expr.expression, stmts, depth + 1)
    if isinstance(expr, cst.Name):
        value, before, _ = _resolve(ctx, stmts, expr.value)
        return dtype_class(ctx, value, before, depth + 1) if value is not None else "?"
    if isinstance(expr, cst.Subscript):
        return dtype_class(ctx, expr.value, stmts, depth + 1)
    if isinstance(expr, cst.Call):
        kwargs = {a.keyword.value: a.value for a in expr.args if a.keyword is not None}
        if "dtype" in kwargs:
            return _dtype_of(kwargs["dtype"])
        func = expr.func
        q = call_qualname(ctx, expr)
        last = q.rsplit(".", 1)[-1] if q else (func.attr.value if isinstance(func, cst.Attribute) else None)
        if last is None:
            through = _through_callee(ctx, expr, lambda e, st: dtype_class(ctx, e, st, depth + 2), depth)
            return through if through is not None else "?"
        if q is None and isinstance(func, cst.Attribute):
            recv = func.value
            first = expr.args[0].value if expr.args and expr.args[0].keyword is None else None
        elif q is not None and q.startswith("torch.") and expr.args and expr.args[0].keyword is None:
            recv = expr.args[0].value
            first = expr.args[1].value if len(expr.args) > 1 and expr.args[1].keyword is None else None
        else:
            recv, first = None, None
        if last in api.BOOL_RESULT:
            return "bool"
        if q is None and last in _CAST_METHODS:
            return _CAST_METHODS[last]
        if last in _INT_METHODS:
            return "int64"
        if last in ("to", "type") and first is not None:
            d = _dtype_of(first)
            if d != "?":
                return d
            return dtype_class(ctx, recv, stmts, depth + 1) if recv is not None and _is_device_arg(first) else "?"
        if last == "type_as" and first is not None:
            return dtype_class(ctx, first, stmts, depth + 1)
        if q is not None and q.startswith("torch.") and last in _FACTORIES and "out" not in kwargs:
            if last == "full" and len(expr.args) > 1 and _is_int_literal(expr.args[1].value):
                return "int64"
            return "float"  # the default dtype
        if recv is not None and last in _FLOAT_RESULT:
            inner = dtype_class(ctx, recv, stmts, depth + 1)
            return inner if inner in _FLOAT_DTYPES else "float"
        if recv is not None and last in ("sum", "prod", "cumsum", "cumprod"):
            inner = dtype_class(ctx, recv, stmts, depth + 1)
            return "int64" if inner in _INT_DTYPES | {"bool", "int"} else inner
        if recv is not None and (last in _SAME_DTYPE or last in api.VIEW_METHODS):
            return dtype_class(ctx, recv, stmts, depth + 1)
        through = _through_callee(ctx, expr, lambda e, st: dtype_class(ctx, e, st, depth + 2), depth)
        if through is not None:
            return through
    return "?"


_SHAPE_CHANGING = frozenset(
    """view reshape view_as reshape_as flatten unflatten squeeze unsqueeze transpose permute t mT T expand
    expand_as repeat repeat_interleave narrow select index_select gather take movedim split chunk unbind cat
    concat concatenate stack hstack vstack tril_indices nonzero masked_select diag diagonal""".split()
)
_ELEMENTWISE = frozenset(
    """clone contiguous detach relu abs neg negative sigmoid tanh exp exp2 expm1 log log2 log10 log1p sqrt
    rsqrt sin cos tan erf erfc float double half bfloat16 long int bool short byte char clamp clamp_min
    clamp_max clip softmax log_softmax flip roll tril triu zeros_like ones_like empty_like full_like rand_like
    randn_like gelu silu""".split()
)


def shape_class(ctx: FixContext, expr: Optional[cst.BaseExpression], stmts: Sequence[cst.BaseStatement], depth: int = 0) -> Optional[str]:
    """A shape key of a branch output read from the syntax: ``same:<name>`` for an expression with the
    shape of the name it is computed from elementwise (arithmetic with Python numbers, elementwise
    methods), ``changed:<code>`` for an index, slice or shape-changing call, or ``None`` when the
    syntax does not tell. Two outputs of one key have one shape for every input."""
    if expr is None or depth > 8:
        return None
    if isinstance(expr, cst.Name):
        value, before, bound = _resolve(ctx, stmts, expr.value)
        if value is None:
            return None if bound else f"same:{expr.value}"
        inner = shape_class(ctx, value, before, depth + 1)
        return inner if inner is not None or not isinstance(value, cst.Name) else None
    if isinstance(expr, cst.UnaryOperation):
        return shape_class(ctx, expr.expression, stmts, depth + 1)
    if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.MatrixMultiply):
        sides = [None if (_is_int_literal(e) or _is_float_literal(e)) else e for e in (expr.left, expr.right)]
        keys = [shape_class(ctx, e, stmts, depth + 1) for e in sides if e is not None]
        if len(keys) == 1:
            return keys[0]
        return keys[0] if len(keys) == 2 and keys[0] == keys[1] else None
    if isinstance(expr, cst.Subscript):
        return f"changed:{_code(ctx, expr)}"
    if isinstance(expr, cst.Call):
        q = call_qualname(ctx, expr)
        func = expr.func
        last = q.rsplit(".", 1)[-1] if q else (func.attr.value if isinstance(func, cst.Attribute) else None)
        if last is None:
            return None
        if last in ("view", "reshape") and q is None and isinstance(func, cst.Attribute):
            # view and reshape give one shape for one receiver shape and one size list
            inner = shape_class(ctx, func.value, stmts, depth + 1)
            sizes = ", ".join(_code(ctx, a.value) for a in expr.args)
            return f"changed:{inner}.reshape({sizes})" if inner is not None else f"changed:{_code(ctx, expr)}"
        if last in _SHAPE_CHANGING:
            return f"changed:{_code(ctx, expr)}"
        if last in _ELEMENTWISE and not any(a.keyword is not None and a.keyword.value == "dim" for a in expr.args if last not in ("softmax", "log_softmax")):
            if q is None and isinstance(func, cst.Attribute):
                return shape_class(ctx, func.value, stmts, depth + 1)
            if q is not None and q.startswith("torch.") and expr.args and expr.args[0].keyword is None:
                return shape_class(ctx, expr.args[0].value, stmts, depth + 1)
    return None


#: The longest ``if``/``elif`` chain of tensor tests rewritten (one nested ``torch.cond`` per test).
MAX_ELIF_LEVELS = 16

# torch.nn modules whose output is floating for every input they accept (an integer input raises:
# its weight is floating; measured on torch 2.13 for nn.Linear and nn.Conv2d)
FLOAT_MODULES = frozenset(
    """Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LayerNorm
    GroupNorm RMSNorm BatchNorm1d BatchNorm2d BatchNorm3d InstanceNorm1d InstanceNorm2d InstanceNorm3d Embedding""".split()
)


#: Tensor methods (and ``torch.`` / ``torch.nn.functional`` functions) whose result is floating
#: when their (first) tensor is: reductions and elementwise maths that never return an integer or
#: bool tensor for a floating one (unlike ``argmax``, comparisons, ``long()``).  Used only with a
#: receiver already proven floating.
_FLOAT_KEEPING = frozenset(
    """norm mean sum prod std var exp expm1 log log1p log2 log10 sqrt rsqrt sigmoid tanh sin cos softmax
    log_softmax gelu silu mish elu leaky_relu softplus hardtanh relu6 layer_norm normalize dropout pow square
    reciprocal logsumexp cumsum round floor ceil trunc sign""".split()
)

#: Prefix of the entries of ``floating_attrs`` that are local names, not ``self`` attributes
#: (an attribute name cannot contain it).
FLOATING_NAME = "name:"

#: Reductions that raise for integer and bool tensors (measured on torch 2.13: ``mean``,
#: ``std``, ``var`` and ``norm`` of int64, int32, uint8 and bool tensors raise RuntimeError).
_FLOAT_ONLY = frozenset({"mean", "std", "var", "norm"})


def floating_by_use(ctx: FixContext, before: Sequence[cst.BaseStatement], rebound: Set[str]) -> Set[str]:
    """Names ``x`` (never rebound in the function: not in ``rebound``) that ``before`` passes to a
    reduction of :data:`_FLOAT_ONLY` without ``dtype=`` (``x.mean()``, ``torch.std(x, 0)``), in a
    simple statement and outside any lambda, comprehension, conditional expression or
    ``and``/``or`` (so on every path through ``before``).

    Such a reduction raises for an integer or bool ``x``, so where the code after ``before``
    runs, ``x`` is floating (or complex): the must-analysis behind "``x * 0.5`` keeps ``x``'s dtype".
    """
    out: Set[str] = set()
    skip = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp, cst.BooleanOperation)

    # an explicit stack over the code fields (``walk``'s reader): ``CSTNode.children`` rebuilds
    # every node it lists, and the result is a set, so the visiting order does not matter
    stack = [st for st in before if isinstance(st, cst.SimpleStatementLine)]
    while stack:
        node = stack.pop()
        if type(node) in skip:  # final node classes: a tuple look-up, not an ABC check per node
            continue
        if type(node) is cst.Call and not any(a.keyword is not None and a.keyword.value == "dtype" for a in node.args):
            q = call_qualname(ctx, node)
            func = node.func
            target = None
            if q is None and isinstance(func, cst.Attribute) and func.attr.value in _FLOAT_ONLY:
                target = func.value
            elif q is not None and q.rpartition(".")[0] == "torch" and q.rpartition(".")[2] in _FLOAT_ONLY and node.args:
                if node.args[0].keyword is None and node.args[0].star == "":
                    target = node.args[0].value
            if isinstance(target, cst.Name) and target.value not in rebound:
                out.add(target.value)
        stack.extend(iter_children(node))
    return out


_NUMBER_ANNOTATIONS = frozenset({"int", "float", "bool"})


def _is_number_literal(expr: cst.BaseExpression) -> bool:
    """``1``, ``0.5``, ``-1e-6``, ``True``: a Python number written as a literal."""
    while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    return isinstance(expr, cst.Name) and expr.value in ("True", "False")


def number_attributes(cls: cst.ClassDef) -> Set[str]:
    """Names ``X`` such that every write of ``self.X`` in ``cls`` stores a Python number.

    A write counts as a number when it assigns a numeric literal (``self.eps = 1e-6``), or a
    parameter of the enclosing method annotated ``int``, ``float`` or ``bool``
    (``def __init__(self, eps: float = 1e-6): self.eps = eps``; an unannotated parameter could
    be passed a tensor or an ``nn.Parameter``, so it does not count), or adds a numeric literal to
    it (``self.X += 1``).  Any other write (another value, a tuple target, ``setattr``,
    ``del``) leaves ``X`` out.  Such an attribute holds no parameter, so reading it in one branch
    of a ``torch.cond`` gives no gradient to tell apart.
    """
    verdict: Dict[str, bool] = {}
    dynamic = False

    def is_self_attr(t: cst.BaseExpression) -> Optional[str]:
        if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
            return t.attr.value
        return None

    def number_params(fn: cst.FunctionDef) -> Set[str]:
        out = set()
        params = fn.params
        for prm in (*params.posonly_params, *params.params, *params.kwonly_params):
            ann = prm.annotation.annotation if prm.annotation is not None else None
            if isinstance(ann, cst.Name) and ann.value in _NUMBER_ANNOTATIONS:
                out.add(prm.name.value)
        return out

    def visit(node: cst.CSTNode, params: Set[str]) -> None:
        nonlocal dynamic
        if type(node) not in watched:  # final node classes: skip the rest without an ABC check per test
            return
        if isinstance(node, cst.Assign):
            for t in node.targets:
                name = is_self_attr(t.target)
                if name is not None:
                    ok = _is_number_literal(node.value) or (isinstance(node.value, cst.Name) and node.value.value in params)
                    verdict[name] = verdict.get(name, True) and ok
                else:
                    for m in walk(t.target):
                        inner = is_self_attr(m) if isinstance(m, cst.Attribute) else None
                        if inner is not None:
                            verdict[inner] = False
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            name = is_self_attr(node.target)
            if name is not None:
                ok = node.value is not None and _is_number_literal(node.value)
                verdict[name] = verdict.get(name, True) and ok
        elif isinstance(node, cst.Del):
            for m in walk(node.target):
                inner = is_self_attr(m) if isinstance(m, cst.Attribute) else None
                if inner is not None:
                    verdict[inner] = False
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("setattr", "delattr"):
            dynamic = True

    # an explicit stack over the code fields (``walk``'s reader), each node with the number
    # parameters of its method: ``CSTNode.children`` rebuilds every node it lists, and the
    # verdicts only ever go from true to false, so the visiting order does not matter
    watched = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del, cst.Call)
    stack: List[Tuple[cst.CSTNode, Set[str]]] = [(cls, set())]
    while stack:
        node, params = stack.pop()
        if type(node) is cst.FunctionDef:
            params = number_params(node)
        visit(node, params)
        stack.extend((child, params) for child in iter_children(node))
    return set() if dynamic else {name for name, ok in verdict.items() if ok}


def _binding_summary(ctx: FixContext, stmt: cst.BaseStatement) -> Tuple[Dict[str, List[cst.BaseExpression]], frozenset]:
    """How ``stmt`` binds names, anywhere inside it (nested blocks and functions included), for
    :func:`_proven_floating`: ``(plain, others)`` where ``plain[name]`` lists the values of the
    ``name = value`` assignments in walk order (once per assignment, however many of its targets
    are ``name``), and ``others`` the names bound any other way (augmented or annotated
    assignment, a ``for``/comprehension target, walrus, ``with ... as``, inside a tuple,
    attribute or subscript target; a ``with`` item without ``as`` counts the names it reads).

    Computed once per statement and fix pass: asking it per name and per branch output walked
    every statement before the ``if`` again, quadratic in a function of many ``if``\\ s.
    """

    def compute():
        plain: Dict[str, List[cst.BaseExpression]] = {}
        others: Set[str] = set()
        for n in walk(stmt):
            if isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.WithItem, cst.CompFor)):
                root = getattr(n, "target", None) or getattr(n, "asname", None) or n
                others.update(m.value for m in walk(root) if isinstance(m, cst.Name))
            elif isinstance(n, cst.Assign):
                for name in dict.fromkeys(t.target.value for t in n.targets if isinstance(t.target, cst.Name)):
                    plain.setdefault(name, []).append(n.value)
                for t in n.targets:
                    if not isinstance(t.target, cst.Name):
                        others.update(m.value for m in walk(t.target) if isinstance(m, cst.Name))
        return plain, frozenset(others)

    return ctx.per_node("cond-binding-summary", stmt, compute)


def _proven_floating(ctx: FixContext, expr: Optional[cst.BaseExpression], stmts: Sequence[cst.BaseStatement], floating_attrs: Set[str], depth: int = 0) -> bool:
    """Whether ``expr`` is a floating tensor for every input: a floating dtype class, the output of
    a ``self.<attr>`` submodule in ``floating_attrs``, arithmetic with such a tensor (a floating
    tensor promotes the other operand), or a same-dtype method of one."""
    if expr is None or depth > 8:
        return False
    if dtype_class(ctx, expr, stmts) in _FLOAT_DTYPES:
        return True
    if isinstance(expr, cst.Name):
        value, before, bound = _resolve(ctx, stmts, expr.value)
        if value is None and not bound and FLOATING_NAME + expr.value in floating_attrs:
            return True  # a never-rebound name that a floating-only op read before the `if`
        if value is None and bound:
            # bound in a compound statement (the branches of an earlier `if`): floating when every
            # assignment to it before here is
            # (each statement's bindings are read once per fix pass, not once per question)
            summaries = [_binding_summary(ctx, st) for st in stmts]
            values = [v for plain, _ in summaries for v in plain.get(expr.value, ())]
            other = any(expr.value in others for _, others in summaries)
            return bool(values) and not other and all(_proven_floating(ctx, v, stmts, floating_attrs, depth + 1) for v in values)
        return value is not None and _proven_floating(ctx, value, before, floating_attrs, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return _proven_floating(ctx, expr.expression, stmts, floating_attrs, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return _proven_floating(ctx, expr.left, stmts, floating_attrs, depth + 1) or _proven_floating(ctx, expr.right, stmts, floating_attrs, depth + 1)
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            return func.attr.value in floating_attrs
        q = call_qualname(ctx, expr)
        if any(a.keyword is not None and a.keyword.value == "dtype" for a in expr.args):
            return False  # `h.sum(dtype=torch.long)`
        if isinstance(func, cst.Attribute) and q is None and (func.attr.value in _SAME_DTYPE or func.attr.value in _FLOAT_KEEPING):
            return _proven_floating(ctx, func.value, stmts, floating_attrs, depth + 1)
        if q is not None and expr.args and expr.args[0].keyword is None and expr.args[0].star == "":
            module, _, last = q.rpartition(".")
            if module in ("torch", "torch.nn.functional") and (last in _SAME_DTYPE or last in _FLOAT_KEEPING):
                # `torch.relu(h)`, `F.softmax(h, -1)`: the function form of such a method
                return _proven_floating(ctx, expr.args[0].value, stmts, floating_attrs, depth + 1)
    return False


def _float_source(ctx: FixContext, expr: Optional[cst.BaseExpression], stmts: Sequence[cst.BaseStatement], depth: int = 0, floating_attrs: Set[str] = frozenset()) -> str:
    """Where a branch output's floating dtype comes from when it need not be its input's: ``"factory"``
    (a torch factory without ``dtype=``: the default dtype, float32, whatever the inputs), ``"literal"``
    (a Python float operand of a tensor not known to be floating: the default dtype for an integer
    input, the input's for a floating one), or ``""``. Outputs of different sources have different
    dtypes for some input (measured: ``x + 1`` vs ``x * 0.5`` on int64, ``torch.zeros(n)`` vs ``x * 2``
    on float64 make torch.cond raise)."""
    if expr is None or depth > 8:
        return ""
    if isinstance(expr, cst.Name):
        value, before, _ = _resolve(ctx, stmts, expr.value)
        return _float_source(ctx, value, before, depth + 1, floating_attrs) if value is not None else ""
    if isinstance(expr, cst.UnaryOperation):
        return _float_source(ctx, expr.expression, stmts, depth + 1, floating_attrs)
    if isinstance(expr, cst.BinaryOperation):
        for lit, other in ((expr.left, expr.right), (expr.right, expr.left)):
            if _is_float_literal(lit) and not _is_float_literal(other):
                if not _proven_floating(ctx, other, stmts, floating_attrs):
                    inner = _float_source(ctx, other, stmts, depth + 1, floating_attrs)
                    return inner or "literal"
        return _float_source(ctx, expr.left, stmts, depth + 1, floating_attrs) or _float_source(ctx, expr.right, stmts, depth + 1, floating_attrs)
    if isinstance(expr, cst.Call):
        kwargs = {a.keyword.value for a in expr.args if a.keyword is not None}
        if "dtype" in kwargs:
            return ""
        q = call_qualname(ctx, expr)
        func = expr.func
        last = q.rsplit(".", 1)[-1] if q else (func.attr.value if isinstance(func, cst.Attribute) else None)
        if q is not None and q.startswith("torch.") and last in _FACTORIES and "out" not in kwargs:
            if last == "full" and len(expr.args) > 1 and _is_int_literal(expr.args[1].value):
                return ""
            return "factory"
        if q is None and isinstance(func, cst.Attribute) and last in _SAME_DTYPE:
            return _float_source(ctx, func.value, stmts, depth + 1, floating_attrs)
    return ""


_EXACT_DTYPES = _FLOAT_DTYPES | _INT_DTYPES | {"bool"}
#: :func:`dtype_key` of a value the syntax does not see into (a submodule or helper call, an
#: attribute): as everywhere in this module, taken to keep its input's dtype
OPAQUE = "opaque"
#: prefix of a :func:`dtype_key` after arithmetic with a Python float or a true division (an integer
#: or bool tensor becomes the default floating dtype, a floating one keeps its own)
FLOAT_ARITH = "float-arith:"


def _key_base(key: str) -> str:
    return key[len(FLOAT_ARITH):] if key.startswith(FLOAT_ARITH) else key


def dtype_key(ctx: FixContext, expr: Optional[cst.BaseExpression], stmts: Sequence[cst.BaseStatement], floating_attrs: Set[str] = frozenset(), depth: int = 0) -> Optional[str]:
    """What a branch output's dtype is proven equal to, for every input dtype: ``"exact:<dtype>"``
    for a dtype the syntax fixes (a cast, a comparison, ``dtype=``), ``"of:<name>"`` for the dtype
    of a name the branch reads but does not bind (an input of the ``if``), ``"float-arith:<key>"``
    for that after arithmetic with a Python float or a true division (an integer or bool tensor
    becomes the default floating dtype), :data:`OPAQUE` for a value the syntax does not see into, or ``None`` when promotion may
    change the dtype for some input dtype.

    Only dtype-preserving steps keep a key: same-dtype methods without tensor arguments (``view``,
    ``clone``, ``relu``), arithmetic between operands of one key (not true division), and arithmetic
    with a Python float, a floating-result reduction (``mean``, ``sum``) or true division only of a
    tensor proven floating (``floating_attrs``, see :func:`_proven_floating`; otherwise the key
    gets the ``float-arith:`` prefix).  Measured on torch
    2.13, each of these makes ``torch.cond`` raise for some input dtype: ``(x - x.mean(dtype=
    torch.float32)) * 0.5`` vs ``x`` for an int64 ``x``, ``x - torch.tensor(1.0)`` vs ``x`` for a 0-d float16 ``x``.
    """
    if expr is None or depth > 8:
        return None
    exact = dtype_class(ctx, expr, stmts)
    if exact in _EXACT_DTYPES:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and call_qualname(ctx, expr) is None:
            # `r.sum()` of a float32 `r` may be 0-d: it promotes with a float16 tensor to float16,
            # where `r` itself gives float32
            return _reduced(expr.func.attr.value, "exact:" + exact)
        return "exact:" + exact
    if isinstance(expr, cst.Name):
        value, before, bound = _resolve(ctx, stmts, expr.value)
        if value is None and bound:
            # bound in a compound statement before here (an earlier `if`): the value it has after
            # that statement, the same for every branch reading it there
            where = stmts[_last_binding(ctx, stmts, expr.value)]
            return f"bound:{id(where)}:{expr.value}"
        if value is None:
            return "of:" + expr.value
        key = dtype_key(ctx, value, before, floating_attrs, depth + 1)
        # a value of unknown dtype is still the dtype of itself: branches reading one assignment
        # (made before the `if`) agree
        return key if key is not None else f"value:{id(value)}"
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus, cst.BitInvert)):
        return dtype_key(ctx, expr.expression, stmts, floating_attrs, depth + 1)
    if isinstance(expr, cst.Subscript):
        return dtype_key(ctx, expr.value, stmts, floating_attrs, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.LeftShift, cst.RightShift, cst.MatrixMultiply, cst.BitAnd, cst.BitOr, cst.BitXor)):
            return None
        floats = [_is_float_literal(e) for e in (expr.left, expr.right)]
        numbers = [not (_is_int_literal(e) or _is_float_literal(e)) and _is_python_number(ctx, e, floating_attrs) for e in (expr.left, expr.right)]
        tensors = [e for e, n in zip((expr.left, expr.right), numbers) if not (_is_int_literal(e) or _is_float_literal(e) or n)]
        if not tensors:
            return None
        if any(numbers) and not all(_proven_floating(ctx, e, stmts, floating_attrs) for e in tensors):
            return None  # a Python number of unknown type: an int keeps an integer dtype, a float does not
        keys = [dtype_key(ctx, e, stmts, floating_attrs, depth + 1) for e in tensors]
        if None in keys:
            return None
        prefixes = {k[: len(k) - len(_key_base(k))] for k in keys}
        bases = {_key_base(k) for k in keys}
        if len({_underlying(b) for b in bases}) > 1:
            # operands of unrelated dtypes promote to one that may be neither: the result is the
            # promotion of exactly these operands (their dtypes and whether each is 0-d, which the
            # reduction marks keep), the same in another branch promoting the same ones
            base = "join(" + ",".join(sorted(bases)) + ")"
        else:
            base = _underlying(bases.pop())  # one dtype, whatever the ranks
        key = FLOAT_ARITH + base if FLOAT_ARITH in prefixes else base
        if any(floats) or isinstance(expr.operator, cst.Divide):
            if all(_proven_floating(ctx, e, stmts, floating_attrs) for e in tensors):
                return _key_base(key)  # a Python float or a division keeps a floating tensor's dtype
            # an integer or bool tensor becomes the default floating dtype, a floating one keeps its
            # own: the same for every branch doing this to the same value
            return None if key.startswith("exact:") else FLOAT_ARITH + _key_base(key)
        # a Python int keeps the dtype (a bool tensor becomes int64: not modelled, see keys_agree)
        return key
    if isinstance(expr, cst.Call):
        if any(a.keyword is not None and a.keyword.value in ("dtype", "out") for a in expr.args):
            return None
        module_input = submodule_input(ctx, expr, FLOAT_INPUT_MODULES)
        if module_input is not None:
            # `self.fc(x)`: the output has `x`'s dtype (another dtype than the weight's raises)
            return dtype_key(ctx, module_input, stmts, floating_attrs, depth + 1)
        q = call_qualname(ctx, expr)
        func = expr.func
        if q is None and isinstance(func, cst.Attribute):
            name, recv, rest = func.attr.value, func.value, list(expr.args)
        elif q is not None and q.rpartition(".")[0] in ("torch", "torch.nn.functional") and expr.args and expr.args[0].keyword is None and not expr.args[0].star:
            name, recv, rest = q.rpartition(".")[2], expr.args[0].value, list(expr.args[1:])
        else:
            return OPAQUE
        if name in _SAME_DTYPE or name in api.VIEW_METHODS:
            if any(a.star or _is_tensor_arg(ctx, a.value) for a in rest):
                return None  # another tensor (or a value that may be one) promotes with the receiver
            return _reduced(name, dtype_key(ctx, recv, stmts, floating_attrs, depth + 1))
        if name in _FLOAT_ONLY and not any(a.star or _is_tensor_arg(ctx, a.value) for a in rest):
            # raises for integer and bool tensors, keeps a floating one's dtype
            return _reduced(name, dtype_key(ctx, recv, stmts, floating_attrs, depth + 1))
        if name in _FLOAT_KEEPING or name in _FLOAT_RESULT or name in _WIDENING:
            if _proven_floating(ctx, recv, stmts, floating_attrs) and not any(a.star or _is_tensor_arg(ctx, a.value) for a in rest):
                return _reduced(name, dtype_key(ctx, recv, stmts, floating_attrs, depth + 1))
            return None
        return OPAQUE
    return OPAQUE if isinstance(expr, cst.Attribute) else None


#: Prefix of the entries of the ``floating_attrs`` of :func:`dtype_key` that name ``self``
#: attributes holding a Python number (see :func:`number_attributes`)
NUMBER_ATTR = "number:"


def _is_python_number(ctx: FixContext, expr: cst.BaseExpression, floating_attrs: Set[str]) -> bool:
    """Whether ``expr`` is a Python number that is not a literal: a ``self`` attribute that every
    write sets to a number, or a value the analysis knows to be a constant or a size."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return NUMBER_ATTR + expr.attr.value in floating_attrs
    v = ctx.facts.value(expr)
    return v is not None and v.kind in (Kind.CONST, Kind.SHAPE)


def _reduced(name: str, key: Optional[str]) -> Optional[str]:
    """``key`` marked as reduced by ``name`` (possibly 0-d: a 0-d operand takes part in promotion
    below a dimensioned one of its category, so ``x - r`` and ``x - r.sum()`` can differ)."""
    if key is None or name not in _DIM_REDUCTIONS:
        return key
    prefix = key[: len(key) - len(_key_base(key))]
    return prefix + "red(" + _key_base(key) + ")"


def _underlying(base: str) -> str:
    """A key base without its reduction marks: the dtype, whatever the rank."""
    while base.startswith("red(") and base.endswith(")"):
        base = base[4:-1]
    return base


def keys_agree(keys: Sequence[Optional[str]]) -> bool:
    """Whether branch outputs with these :func:`dtype_key` values have one dtype: one prefix
    (:data:`FLOAT_ARITH` or none) and one base, an :data:`OPAQUE` base being taken to have the
    others' dtype.  A Python int operand is taken to keep the dtype (for a bool tensor it gives
    int64: bool tensors in arithmetic are not modelled)."""
    if None in keys:
        return False
    prefixes = {k[: len(k) - len(_key_base(k))] for k in keys}  # type: ignore[arg-type]
    bases = {_underlying(_key_base(k)) for k in keys} - {OPAQUE}  # type: ignore[arg-type]
    return len(prefixes) <= 1 and len(bases) <= 1


_WIDENING = frozenset({"sum", "prod", "cumsum", "cumprod", "nansum"})


def _widens(ctx: FixContext, expr: cst.BaseExpression, stmts: Sequence[cst.BaseStatement]) -> bool:
    """Whether a branch output of unknown dtype class comes from a reduction that widens integer and
    bool tensors to int64 (``x.sum()`` of a bool ``x`` is int64, of a float16 one float16)."""
    if dtype_class(ctx, expr, stmts) != "?":
        return False
    if isinstance(expr, cst.Name):
        value, before, _ = _resolve(ctx, stmts, expr.value)
        return value is not None and _widens(ctx, value, before)
    return any(
        isinstance(n, cst.Call) and isinstance(n.func, (cst.Attribute, cst.Name))
        and (n.func.attr.value if isinstance(n.func, cst.Attribute) else n.func.value) in _WIDENING
        for n in walk(expr)
    )


def grad_class(ctx: FixContext, expr: Optional[cst.BaseExpression], stmts: Sequence[cst.BaseStatement], depth: int = 0) -> str:
    """``"none"`` when a branch output never requires grad whatever the inputs (``.detach()``, a
    comparison, a factory call without ``requires_grad=``), else ``"?"`` (it may follow its inputs).

    torch.cond's output requires grad when any branch's would, so a branch that detaches makes the
    rewritten output gain a ``grad_fn`` the original lacked (measured on torch 2.13)."""
    if expr is None or depth > 8:
        return "?"
    if isinstance(expr, cst.Comparison):
        return "none" if dtype_class(ctx, expr, stmts) == "bool" else "?"
    if isinstance(expr, cst.Name):
        value, before, _ = _resolve(ctx, stmts, expr.value)
        return grad_class(ctx, value, before, depth + 1) if value is not None else "?"
    if isinstance(expr, cst.UnaryOperation):
        return grad_class(ctx, expr.expression, stmts, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        sides = [e for e in (expr.left, expr.right) if not (_is_int_literal(e) or _is_float_literal(e))]
        return "none" if sides and all(grad_class(ctx, e, stmts, depth + 1) == "none" for e in sides) else "?"
    if isinstance(expr, cst.Call):
        kwargs = {a.keyword.value for a in expr.args if a.keyword is not None}
        if isinstance(expr.func, cst.Attribute) and call_qualname(ctx, expr) is None and expr.func.attr.value in _SAME_DTYPE:
            if grad_class(ctx, expr.func.value, stmts, depth + 1) == "none":
                return "none"
        q = call_qualname(ctx, expr)
        func = expr.func
        last = q.rsplit(".", 1)[-1] if q else (func.attr.value if isinstance(func, cst.Attribute) else None)
        if last == "detach" and (q is None or q == "torch.detach"):
            return "none"
        if q is not None and q.startswith("torch.") and last in _FACTORIES and "requires_grad" not in kwargs:
            return "none"
    return "?"


def _dtype_of(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return _DTYPE_NAMES.get(node.attr.value, "?")
    return "?"


def _is_device_arg(node: cst.BaseExpression) -> bool:
    """``"cuda"``, ``torch.device(...)``, ``x.device``: an argument of ``.to()`` that moves, not casts."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Attribute):
        return node.attr.value == "device"
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "device"


def device_class(ctx: FixContext, expr: Optional[cst.BaseExpression], stmts: Sequence[cst.BaseStatement], depth: int = 0) -> str:
    """The device a branch output is explicitly put on: ``cpu``, ``cuda``, ``mps``, ... for a literal
    (``.cpu()``, ``.cuda()``, ``.to("cuda:0")``, ``device="cpu"``), ``moved`` for a device that is not
    a literal (``.to(other.device)``), or ``?`` (the inputs' device, as far as the syntax tells)."""
    if expr is None or depth > 8:
        return "?"
    if isinstance(expr, cst.Name):
        value, before, _ = _resolve(ctx, stmts, expr.value)
        return device_class(ctx, value, before, depth + 1) if value is not None else "?"
    if isinstance(expr, cst.Subscript):
        return device_class(ctx, expr.value, stmts, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return device_class(ctx, expr.expression, stmts, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        left = device_class(ctx, expr.left, stmts, depth + 1)
        return left if left != "?" else device_class(ctx, expr.right, stmts, depth + 1)
    if isinstance(expr, cst.Call):
        kwargs = {a.keyword.value: a.value for a in expr.args if a.keyword is not None}
        if "device" in kwargs:
            return _device_of(kwargs["device"])
        func = expr.func
        if isinstance(func, cst.Attribute) and call_qualname(ctx, expr) is None:
            method = func.attr.value
            if method == "cpu":
                return "cpu"
            if method == "cuda":
                return "cuda"
            if method == "to" and expr.args and expr.args[0].keyword is None and _is_device_arg(expr.args[0].value):
                return _device_of(expr.args[0].value)
            inner = device_class(ctx, func.value, stmts, depth + 1)
            if inner != "?" or func.value is None:
                return inner
        through = _through_callee(ctx, expr, lambda e, st: device_class(ctx, e, st, depth + 2), depth)
        if through is not None:
            return through
    return "?"


def _device_of(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Call) and node.args and isinstance(node.args[0].value, cst.SimpleString):
        node = node.args[0].value  # torch.device("cuda")
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        if isinstance(text, str) and text:
            return text.split(":", 1)[0]
    return "moved"


_RANK_KEEPING = frozenset(
    """relu abs neg negative float double half bfloat16 long int short byte char bool clone detach contiguous
    sigmoid tanh exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan erf erfc reciprocal square sign
    floor ceil round trunc frac clamp clamp_min clamp_max clip masked_fill softmax log_softmax to type_as cpu
    cuda t transpose permute mT cumsum cumprod flip roll tril triu nan_to_num gelu silu elu leaky_relu
    hardtanh softplus dropout normalize layer_norm""".split()
)
_DIM_REDUCTIONS = frozenset("sum mean max min amax amin prod std var norm logsumexp all any argmax argmin nansum nanmean".split())


def _literal_dims(node: cst.BaseExpression) -> Optional[int]:
    """How many dimensions a ``dim`` argument names: 1 for an int literal, n for a tuple/list of them."""
    if _is_int_literal(node):
        return 1
    if isinstance(node, (cst.Tuple, cst.List)) and node.elements and all(_is_int_literal(e.value) for e in node.elements):
        return len(node.elements)
    return None


def _combine_ranks(a: str, b: str) -> str:
    """The rank of a broadcast of two tensors of ranks ``a`` and ``b`` (see :func:`rank_class`)."""
    if a == "lit" or b == "lit":
        other = b if a == "lit" else a
        return "?" if other == "lit" else other
    if a == "?" or b == "?":
        return "?"
    if a == "0":
        return b
    if b == "0":
        return a
    if a == b:
        return a
    if "+" in a or "-" in a:
        if ("+" in b or "-" in b) and _rank_base(a) == _rank_base(b):
            return a if _rank_delta(a) >= _rank_delta(b) else b
    return "?"


def _rank_base(r: str) -> str:
    return r.rstrip("0123456789").rstrip("+-")


def _rank_delta(r: str) -> int:
    base = _rank_base(r)
    return int(r[len(base):])


def _rel(r: str, delta: int) -> str:
    if r in ("?", "lit"):
        return "?"
    if delta == 0:
        return r
    if r.isdigit():
        n = int(r) + delta
        return str(n) if n >= 0 else "?"
    d = _rank_delta(r) + delta
    return f"{_rank_base(r)}{d:+d}"


def ranks_differ(a: str, b: str) -> bool:
    """Whether two known ranks (see :func:`rank_class`) are different for every input."""
    if a.isdigit() and b.isdigit():
        return a != b
    if not a.isdigit() and not b.isdigit():
        return _rank_base(a) == _rank_base(b) and _rank_delta(a) != _rank_delta(b)
    return False


def rank_class(prover: ScalarProver, ctx: FixContext, expr: Optional[cst.BaseExpression], stmts: Sequence[cst.BaseStatement], depth: int = 0) -> str:
    """The rank of a branch output as far as the syntax tells: ``"0"`` (a full reduction), ``"1"``
    (``.flatten()``, ``.view(-1)``), ``"x+0"`` / ``"x-1"`` / ``"x+1"`` (the rank of the parameter
    ``x``, one less after ``x.sum(dim=0)``, one more after ``x.unsqueeze(0)``), or ``"?"``."""
    if expr is None or depth > 8:
        return "?"
    if isinstance(expr, cst.Name):
        value, before, bound = _resolve(ctx, stmts, expr.value)
        if value is not None:
            return rank_class(prover, ctx, value, before, depth + 1)
        if bound:
            return "?"  # bound by a loop or a nested block: not known
        # the value the name has where the statements start (the `if`'s block): every branch is
        # measured against the same value, so ranks relative to it compare
        v = ctx.facts.value(expr)
        if v is not None and v.kind in (Kind.CONST, Kind.SHAPE, Kind.DATA):
            return "lit"
        return f"{expr.value}+0"
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.MatrixMultiply):
            return "?"
        sides = [
            "lit" if (_is_int_literal(e) or _is_float_literal(e)) else rank_class(prover, ctx, e, stmts, depth + 1)
            for e in (expr.left, expr.right)
        ]
        return _combine_ranks(sides[0], sides[1])
    if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
        return rank_class(prover, ctx, expr.expression, stmts, depth + 1)
    if isinstance(expr, cst.Subscript):
        base = rank_class(prover, ctx, expr.value, stmts, depth + 1)
        drops = 0
        for el in expr.slice:
            if isinstance(el.slice, cst.Slice):
                continue
            if isinstance(el.slice, cst.Index) and _is_int_literal(el.slice.value):
                drops += 1
                continue
            return "?"
        return _rel(base, -drops)
    if isinstance(expr, cst.Call):
        q = call_qualname(ctx, expr)
        args = [a for a in expr.args if a.keyword is None and not a.star]
        kwargs = {a.keyword.value: a.value for a in expr.args if a.keyword is not None}
        if q is None and isinstance(expr.func, cst.Attribute):
            method, recv, rest = expr.func.attr.value, expr.func.value, args
        elif q is not None and q.startswith("torch.") and args:
            method, recv, rest = q.rsplit(".", 1)[-1], args[0].value, args[1:]
        else:
            method, recv, rest = None, None, []
        module_input = submodule_input(ctx, expr, RANK_KEEPING_MODULES)
        if module_input is not None:
            return rank_class(prover, ctx, module_input, stmts, depth + 1)  # `self.fc(x)`: the rank of `x`
        if method is not None and recv is not None:
            if method == "flatten" and not rest and not kwargs:
                return "1"
            if method in ("view", "reshape") and len(rest) == 1 and _is_int_literal(rest[0].value) and literal_value(rest[0].value) == -1:
                return "1"
            if method == "unsqueeze" and (len(rest) == 1 or "dim" in kwargs):
                return _rel(rank_class(prover, ctx, recv, stmts, depth + 1), 1)
            if method in _DIM_REDUCTIONS:
                dim = kwargs.get("dim", kwargs.get("axis", rest[0].value if rest else None))
                keep = kwargs.get("keepdim")
                if dim is not None:
                    n = _literal_dims(dim)
                    base = rank_class(prover, ctx, recv, stmts, depth + 1)
                    if n is None:
                        return "?"
                    if isinstance(keep, cst.Name) and keep.value == "True":
                        return base
                    if keep is None or (isinstance(keep, cst.Name) and keep.value == "False"):
                        return _rel(base, -n)
                    return "?"
            if method in _RANK_KEEPING and not any(_is_tensor_arg(ctx, a.value) for a in rest):
                inner = rank_class(prover, ctx, recv, stmts, depth + 1)
                if inner != "?":
                    return inner
        through = _through_callee(ctx, expr, lambda e, st: rank_class(prover, ctx, e, st, depth + 2), depth)
        if through is not None and through.isdigit():
            return through  # a fixed rank carries over; one relative to the callee's parameters does not
    try:
        return "0" if prover.zero_dim(expr) else "?"
    except RecursionError:  # pragma: no cover - very deep expressions
        return "?"


def _safe_zero_dim(prover: ScalarProver, expr: cst.BaseExpression) -> bool:
    try:
        return bool(prover.zero_dim(expr))
    except RecursionError:  # pragma: no cover - very deep expressions
        return False


def _is_tensor_arg(ctx: FixContext, node: cst.BaseExpression) -> bool:
    v = ctx.facts.value(node)
    return v is not None and v.kind in (Kind.TENSOR, Kind.UNKNOWN)


def _class_registered_buffers(cls: cst.ClassDef) -> Set[str]:
    """Names ``cls`` registers anywhere in its body with ``self.register_buffer("name", ...)``
    (a literal name; buffers have no gradient)."""
    out: Set[str] = set()
    for n in walk(cls):
        if (
            type(n) is cst.Call and isinstance(n.func, cst.Attribute) and n.func.attr.value == "register_buffer"
            and n.args and isinstance(n.args[0].value, cst.SimpleString)
        ):
            name = n.args[0].value.evaluated_value
            if isinstance(name, str):
                out.add(name)
    return out


class CondRewrite:
    """Builds the ``torch.cond`` rewrite of one ``if``/``elif`` chain (see the module docstring).

    Args:
        ctx: the file's context.
        top: the first ``if`` (or ``elif``) of the chain to rewrite.

    Raises:
        Refuse: from :meth:`fix`, with the reason the chain cannot be rewritten.
    """

    def __init__(self, ctx: FixContext, top: cst.If) -> None:
        self.ctx = ctx
        self.top = top
        func = ctx.enclosing_function(top)
        if func is None:
            raise Refuse("the `if` is not inside a function")
        self.func = func
        parent = ctx.parent(top)
        self.owner: Optional[cst.If] = parent if isinstance(parent, cst.If) and parent.orelse is top else None
        entry = ctx.facts.if_entry.get(id(top))
        if entry is None:
            raise Refuse("this `if` is not reached from a compiled region, so pt2lint has no facts about it")
        self.entry = entry
        self.self_names = {k for k, v in entry.items() if v is not None and v.kind is Kind.SELF}
        self.torch, self.import_edits = ctx.torch_name(func)
        self.guard = self._python_guard(top) if self.owner is None and top.orelse is None else None
        self.taken = set(ctx.function_spelled(func))
        self.checker = BranchChecker(ctx, self.self_names)
        self.checker.declared = declared_names(func)
        self.notes: List[str] = []

    def _python_guard(self, node: cst.If) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
        """``(A, B)`` for ``if A and B:`` where ``A`` is a Python value (``mask is not None``,
        ``x.dtype == torch.float16``, ``self.training``) and ``B`` a tensor test.

        With no ``else``, ``if A and B: body`` is ``if A: (if B: body)``: Python never evaluates
        ``B`` when ``A`` is false, and nothing runs then; so the rewrite keeps ``if A:`` and turns
        the inner test into ``torch.cond``.
        """
        test = node.test
        if not (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And)):
            return None
        left, right = test.left, test.right
        if not python_test(self.ctx, left):
            return None
        return left, right

    # ------------------------------------------------------------ structure
    def _branch(self, block: cst.BaseSuite, label: str, leading: Sequence[cst.EmptyLine] = ()) -> Branch:
        return Branch(_stmts_of(block), block, label, self.ctx.facts.block_exit.get(id(block)), leading)

    def _if_exit_env(self, node: cst.If):
        envs = [self.ctx.facts.block_exit.get(id(node.body))]
        orelse = node.orelse
        if orelse is None:
            envs.append(self.ctx.facts.if_entry.get(id(node)))
        elif isinstance(orelse, cst.If):
            envs.append(self._if_exit_env(orelse))
        else:
            envs.append(self.ctx.facts.block_exit.get(id(orelse.body)))
        envs = [e for e in envs if e is not None]
        if not envs:
            return None
        out = dict(envs[0])
        for e in envs[1:]:
            for k in list(out) + [k for k in e if k not in out]:  # insertion order, never hash order
                a, b = out.get(k), e.get(k)
                out[k] = join(a, b) if a is not None and b is not None else None
        return out

    def _level(self, node: cst.If, first: bool, depth: int = 1) -> Level:
        if depth > MAX_ELIF_LEVELS:
            # each level is a torch.cond nested in the previous one's false branch: the rewrite of a
            # long chain nests that deep (and re-parsing it costs seconds per fix)
            raise Refuse(f"the `if`/`elif` chain has more than {MAX_ELIF_LEVELS} tensor tests (nested torch.cond that deep is not written)")
        entry = self.ctx.facts.if_entry.get(id(node))
        if entry is None:
            raise Refuse("an `elif` of the chain is not reached by the analysis")
        pred = None if (first and self.guard is not None) else translate_predicate(self.ctx, self.func, node.test, self.torch)
        if pred is None:
            assert self.guard is not None
            pred = translate_predicate(self.ctx, self.func, self.guard[1], self.torch)
        self.notes.extend(pred.inexact)
        word = "`if`" if first and self.owner is None else "`elif`"
        true = self._branch(node.body, f"the {word} branch")
        orelse = node.orelse
        false: Union[Branch, Level, None]
        if orelse is None:
            false = None
        elif isinstance(orelse, cst.Else):
            false = self._branch(orelse.body, "the `else` branch", orelse.leading_lines)
        elif tensor_test(self.ctx, orelse):
            false = self._level(orelse, False, depth + 1)
        else:
            stmt = orelse.with_changes(leading_lines=())
            false = Branch([stmt], None, "the `elif` branch", self._if_exit_env(orelse), orelse.leading_lines)
        return Level(node, pred, true, false, entry)

    def _leaves(self, level: Level) -> List[Optional[Branch]]:
        out: List[Optional[Branch]] = [level.true]
        if isinstance(level.false, Level):
            out.extend(self._leaves(level.false))
        else:
            out.append(level.false)
        return out

    def _levels(self, level: Level) -> List[Level]:
        return [level] + (self._levels(level.false) if isinstance(level.false, Level) else [])

    # ------------------------------------------------------------ analysis
    def fix(self) -> Fix:
        """The fix (safe, or unsafe with the reasons in its message).

        Raises:
            Refuse: the chain cannot be rewritten.
        """
        root = self._level(self.top, True)
        leaves = self._leaves(root)
        replaced: List[cst.BaseStatement] = [self.top]
        real = [b for b in leaves if b is not None]
        if all(b is not None and always_returns(b.stmts) for b in leaves):
            mode = "return"
        elif root.false is None and always_returns(root.true.stmts):
            if self.guard is not None:
                raise Refuse("the `if` returns, there is no `else`, and its test starts with a Python condition")
            rest = self._rest_after_top()
            root.false = Branch(rest, None, "the code after the `if`", None)
            leaves = self._leaves(root)
            real = [b for b in leaves if b is not None]
            replaced = [self.top, *rest]
            mode = "return"
        elif not any(_returns(b.stmts) for b in real):
            mode = "assign"
        else:
            raise Refuse("one branch returns and another falls through")

        prover = self._prover()
        self.checker.zero_dim = lambda e: _safe_zero_dim(prover, e)
        for level in self._levels(root)[1:]:
            self.checker._expr(level.node.test, set(), "an `elif` test")
        for b in real:
            self.checker.check(b.stmts, allow_return=mode == "return", fresh=b.fresh, where=b.label)

        if mode == "assign":
            outputs = self._outputs(root, leaves, replaced)
            self._note_input_aliases(outputs)
        else:
            outputs = []
            self._check_returns(real)
        self._check_dtypes(leaves, outputs, mode)
        self._note_one_branch_parameters(leaves, replaced)
        self._assign_operands(root, outputs)
        new_stmts = self._generate(root, outputs, mode)
        if self.guard is not None:
            # keep the Python part of the test as a plain `if` around the rewrite
            new_stmts = [cst.If(test=self.guard[0], body=cst.IndentedBlock(body=new_stmts))]

        if self.owner is None:
            edits = self.ctx.replace_statements(replaced, new_stmts)
        else:
            new_else = cst.Else(body=cst.IndentedBlock(body=new_stmts), leading_lines=self.top.leading_lines)
            edits = self.ctx.replace_orelse(self.owner, new_else)
        notes = list(dict.fromkeys(self.notes))
        if self.checker.unverified:
            names = ", ".join(f"`{n}`" for n in dict.fromkeys(self.checker.unverified))
            notes.append(f"the branches call {names}, which pt2lint cannot see into")
        if self.checker.random:
            notes.append("a branch draws random numbers; under torch.cond the random stream may differ from eager")
        notes.extend(dict.fromkeys(self.checker.shapes))
        if not getattr(self.ctx.settings, "assume_compiled", False) and not self._known_compiled():
            notes.append(
                f"the code is not known to run under torch.compile (no torch.compile of it in this file; set "
                f"`assume-compiled = true` if it always does), and in eager mode torch.cond is {EAGER_COST} than the `if`"
            )
        if not notes:
            # nothing refuted it: it is safe only when proven (pt2lint.fixes.cond_proof)
            definitions = self._single_definitions()
            reason = unproven_reason(
                [b.stmts for b in real], outputs, mode,
                qualname=lambda call: call_qualname(self.ctx, call),
                floating_names=frozenset(self._floating_names()) | self._floating_outputs(definitions),
                floating_submodules=frozenset(self._floating_submodules()),
                inside_with=self._inside_with(),
                number_attrs=frozenset(self._number_attrs()),
                definitions=definitions,
                elementwise_submodules=self._elementwise_submodules(),
            )
            if reason is not None:
                notes.append(f"not proven safe: {reason}")
        what = ", ".join(f"`{o}`" for o in outputs) if outputs else "the returned value"
        message = (
            f"rewrite the branch as `{self.torch}.cond(...)` with branch functions (outputs: {what}; "
            f"eager mode: {EAGER_COST}, bench/cond_overhead.py)"
        )
        if notes:
            message += "; unsafe: " + "; ".join(notes)
        applicability = Applicability.UNSAFE if notes else Applicability.SAFE
        return Fix(message, applicability, tuple(edits) + tuple(self.import_edits), NAME)

    def _single_definitions(self) -> Dict[str, cst.BaseExpression]:
        """Names bound once in the function, by a plain ``name = expr`` among the statements before
        the ``if`` in its block, with their expressions."""
        counts = self._binding_counts()
        out: Dict[str, cst.BaseExpression] = {}
        for st in self._before_top():
            if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 and isinstance(st.body[0], cst.Assign):
                a = st.body[0]
                if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name) and counts.get(a.targets[0].target.value) == 1:
                    out[a.targets[0].target.value] = a.value
        return out

    def _elementwise_submodules(self) -> frozenset:
        """Attributes the enclosing class assigns only to an activation module of
        :data:`~pt2lint.fixes.cond_proof.ELEMENTWISE_MODULES` built without ``inplace=True``."""
        cls = self._enclosing_class()
        if cls is None:
            return frozenset()

        def activation(q: str, call: cst.Call) -> bool:
            return (
                q.rsplit(".", 1)[-1] in ELEMENTWISE_MODULES
                and not any(a.keyword is not None and a.keyword.value == "inplace" for a in call.args)
                and not any(a.keyword is None for a in call.args[1:])
            )

        return self.ctx.per_node("elementwise-submodules", cls, lambda: frozenset(self._class_attrs_only(cls, activation)))

    def _binding_counts(self) -> Dict[str, int]:
        """How many times each name is a binding target in the function (assignments, loops, ``as``;
        nested functions included, which a ``nonlocal`` may make rebind it), once per function."""

        def compute() -> Dict[str, int]:
            counts: Dict[str, int] = {}
            for n in walk(self.func.body):
                targets = []
                if isinstance(n, cst.Assign):
                    targets = [t.target for t in n.targets]
                elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)):
                    targets = [n.target]
                elif isinstance(n, (cst.For, cst.CompFor)):
                    targets = [n.target]
                elif isinstance(n, cst.AsName):
                    targets = [n.name]
                for t in targets:
                    for m in walk(t):
                        if isinstance(m, cst.Name):
                            counts[m.value] = counts.get(m.value, 0) + 1
            return counts

        return self.ctx.per_node("binding-counts", self.func, compute)

    def _floating_outputs(self, definitions: Dict[str, cst.BaseExpression]) -> frozenset:
        """The names of ``definitions`` (:meth:`_single_definitions`) bound to what a floating
        submodule returns (``h = self.fc(x)`` with ``self.fc`` an ``nn.Linear``): floating tensors."""
        subs = self._floating_submodules()
        return frozenset(
            name for name, call in definitions.items()
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
            and call.func.value.value == "self" and call.func.attr.value in subs
        )

    def _inside_with(self) -> bool:
        """Whether the ``if`` is inside a ``with`` statement of its function."""
        node = self.ctx.parent(self.top)
        while node is not None and node is not self.func:
            if isinstance(node, cst.With):
                return True
            node = self.ctx.parent(node)
        return False

    def _known_compiled(self) -> bool:
        """Whether the file compiles the region(s) the ``if`` is reached from (see :mod:`pt2lint.fixes.compiled`)."""
        ids = self.ctx.subtree_ids(self.top.test)
        entries = [f.chain[0] for f in self.ctx.facts.findings if id(f.node) in ids and f.code in TARGET_CODES and f.chain]
        index = self.ctx.facts.index
        # what the file compiles does not depend on the `if`: gathered once per module, not per proposal
        table = self.ctx.per_node("compiled-symbols", index.module, lambda: compiled_symbols(index))
        return region_compiled(index, entries, table)

    def _self_attrs(self, stmts: Sequence[cst.CSTNode]) -> Dict[str, cst.Attribute]:
        """``self.<name>`` loads in ``stmts`` that may hold parameters (a module with parameters or
        one pt2lint cannot tell, a tensor attribute, an attribute of unknown kind), by name."""
        out: Dict[str, cst.Attribute] = {}
        inner: Set[int] = set()
        for root in stmts:
            for n in walk(root):
                if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Attribute):
                    inner.add(id(n.value))
        for root in stmts:
            for n in walk(root):
                if not (isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value in self.self_names):
                    continue
                v = self.ctx.facts.value(n)
                parent = self.ctx.parent(n)
                if v is None and isinstance(parent, cst.Call) and parent.func is n:
                    ev = self.ctx.facts.calls.get(id(parent))  # `self.act(x)`: the call knows the module
                    if ev is not None and isinstance(ev.callee, str):
                        v = Value(Kind.MODULE, ref=ev.callee)
                kind = v.kind if v is not None else Kind.UNKNOWN
                if kind in (Kind.CONST, Kind.SHAPE, Kind.NONE, Kind.DATA, Kind.FUNCTION, Kind.CLASS, Kind.SELF):
                    continue
                if kind is Kind.UNKNOWN and id(n) in inner:
                    continue  # `self.config.eps`: an attribute of an object, not a parameter
                if kind is Kind.MODULE and isinstance(v.ref, str):
                    fact = module_state(v.ref)
                    if fact is not None and fact.parameters is False:
                        continue  # measured: no parameters (ReLU, Dropout, pooling)
                out.setdefault(n.attr.value, n)
        return out

    def _note_one_branch_parameters(self, leaves: List[Optional[Branch]], replaced: Sequence[cst.BaseStatement]) -> None:
        """Unsafe when a parameter (of ``self`` or of a submodule) is used in some branches only
        and nowhere else on the way to the ``if``: after ``torch.cond``'s backward it has a zero
        ``.grad`` where the original leaves ``None`` (measured on torch 2.13, eager and compiled),
        so an optimizer with weight decay or momentum then changes it."""
        per = [set(self._self_attrs(b.stmts)) if b is not None else set() for b in leaves]
        some = set().union(*per)
        buffers = self._registered_buffers() | self._number_attrs()
        partial = [a for a in sorted(some) if not all(a in p for p in per) and a not in buffers]
        if not partial:
            return
        partial = [a for a in partial if a not in self._self_attrs_around(replaced)]
        if partial:
            names = ", ".join(f"`self.{a}`" for a in partial)
            self.notes.append(
                f"{names} {'is' if len(partial) == 1 else 'are'} used in some branches only: after torch.cond their "
                f"parameters get a zero `.grad` instead of None when another branch runs (measured on torch 2.13), "
                f"which an optimizer with weight decay or momentum acts on"
            )

    def _floating_submodules(self) -> Set[str]:
        """Attributes the enclosing class assigns only to a ``torch.nn`` module of :data:`FLOAT_MODULES`
        (``self.fc = nn.Linear(...)``): calling one gives a floating tensor."""
        cls = self._enclosing_class()
        if cls is None:
            return set()
        return self.ctx.per_node("floating-submodules", cls, lambda: self._class_floating_submodules(cls))  # once per class

    def _class_floating_submodules(self, cls: cst.ClassDef) -> Set[str]:
        """:meth:`_floating_submodules` of the class ``cls``, computed from its whole tree."""
        return self._class_attrs_only(cls, lambda q, call: q.rsplit(".", 1)[-1] in FLOAT_MODULES)

    def _class_attrs_only(self, cls: cst.ClassDef, ok: Callable[[str, cst.Call], bool]) -> Set[str]:
        """Attributes every ``self.<name> = ...`` of the class ``cls`` sets to a ``torch.nn`` call that
        ``ok(qualified name, call)`` accepts (an attribute also set to anything else is not one)."""
        kinds: Dict[str, Set[bool]] = {}
        for n in walk(cls):
            if type(n) is cst.Assign:  # a final node class: no ABC check per node
                for t in n.targets:
                    tgt = t.target
                    if isinstance(tgt, cst.Attribute) and isinstance(tgt.value, cst.Name) and tgt.value.value == "self":
                        q = call_qualname(self.ctx, n.value) if isinstance(n.value, cst.Call) else None
                        accepted = q is not None and q.startswith("torch.nn.") and ok(q, n.value)
                        kinds.setdefault(tgt.attr.value, set()).add(accepted)
        return {name for name, oks in kinds.items() if oks == {True}}

    def _enclosing_class(self) -> Optional[cst.ClassDef]:
        """The class whose method holds the ``if`` (its function's nearest enclosing ``class``), or None."""
        cls = self.ctx.parent(self.func)
        while cls is not None and not isinstance(cls, cst.ClassDef):
            cls = self.ctx.parent(cls)
        return cls

    def _floating_names(self) -> Set[str]:
        """Names of the function that are floating tensors wherever the ``if`` can be reached: see
        :func:`floating_by_use` and :func:`~pt2lint.fixes.module_facts.floating_inputs`, applied to the
        statements that run before the ``if`` in its block."""
        before, rebound = self._before_top(), self.ctx.function_bound(self.func)
        return self._floating_before(before, rebound)

    def _floating_before(self, before: Sequence[cst.BaseStatement], rebound: Set[str]) -> Set[str]:
        """:func:`floating_by_use` and :func:`~pt2lint.fixes.module_facts.floating_inputs` of ``before``
        (the statements before the ``if`` in its block).

        Both answers for the statements before the k-th statement of a block are the unions of
        the answers for each of them: kept per block and extended as later ``if``\\ s ask, so a
        block of many ``if``\\ s is read once, not once per ``if`` (``rebound``, the names the
        function rebinds, is the same for every ``if`` of a block)."""
        block = self.ctx.parent(self.top)
        if not before or block is None:
            return floating_by_use(self.ctx, before, rebound) | floating_inputs(self.ctx, before, rebound)
        prefix = self.ctx.per_node("floating-names-prefix", block, lambda: [frozenset()])
        while len(prefix) <= len(before):
            st = [before[len(prefix) - 1]]
            prefix.append(prefix[-1] | floating_by_use(self.ctx, st, rebound) | floating_inputs(self.ctx, st, rebound))
        return set(prefix[len(before)])

    def _number_attrs(self) -> Set[str]:
        """Attributes of the enclosing class that hold a Python number, so no parameter: see
        :func:`number_attributes`."""
        cls = self._enclosing_class()
        if cls is None:
            return set()
        memo = self.ctx.__dict__.setdefault("_number_attrs_memo", {})  # per file: the tree does not change
        if id(cls) not in memo:
            memo[id(cls)] = (cls, number_attributes(cls))
        return memo[id(cls)][1]

    def _registered_buffers(self) -> Set[str]:
        """Names the enclosing class registers with ``self.register_buffer("name", ...)`` (buffers
        have no gradient)."""
        cls = self._enclosing_class()
        if cls is None:
            return set()
        return self.ctx.per_node("registered-buffers", cls, lambda: _class_registered_buffers(cls))  # once per class

    def _self_attrs_around(self, replaced: Sequence[cst.BaseStatement]) -> Set[str]:
        """``self.<name>`` loads in the simple statements of the blocks that enclose the ``if``
        (they run whichever branch is taken), outside the replaced statements."""
        skip = {id(s) for s in replaced}
        found: Set[str] = set()
        node: Optional[cst.CSTNode] = self.top
        while node is not None and node is not self.func:
            parent = self.ctx.parent(node)
            if isinstance(parent, cst.IndentedBlock):
                simple = [st for st in parent.body if isinstance(st, cst.SimpleStatementLine) and id(st) not in skip]
                found |= set(self._self_attrs(simple))
            node = parent
        return found

    def _note_input_aliases(self, outputs: List[str]) -> None:
        """Unsafe when an output is a forward input (or a view of it) before the branch and the
        function writes that input in place: torch.cond returns new tensors, so the write would
        stop reaching the caller's tensor."""
        entry = self.ctx.facts.if_entry.get(id(self.top)) or {}
        here = self.ctx.enclosing_function(self.top)
        for name in outputs:
            value = entry.get(name)
            alias = getattr(value, "alias_of", None)
            if not alias:
                continue
            if any(
                w.target.alias_of == alias and self.ctx.enclosing_function(w.node) is here
                for w in self.ctx.facts.writes
            ):
                self.notes.append(
                    f"`{name}` is the forward input `{alias}` before the branch and the function writes "
                    f"`{alias}` in place; torch.cond returns a new tensor, so that write would no longer reach the caller"
                )

    def _rest_after_top(self) -> List[cst.BaseStatement]:
        parent = self.ctx.parent(self.top)
        owner = self.ctx.parent(parent) if parent is not None else None
        if self.owner is not None or not isinstance(parent, cst.IndentedBlock) or owner is not self.func:
            raise Refuse("the `if` branch returns but there is no `else` and the `if` is not at the top level of the function")
        body = list(parent.body)
        index = next(i for i, s in enumerate(body) if s is self.top)
        rest = body[index + 1:]
        if not rest or not always_returns(rest):
            raise Refuse("the `if` branch returns but the code after the `if` does not always return")
        return rest

    def _live_out(self, replaced: Sequence[cst.CSTNode]) -> Set[str]:
        func_loads = self.ctx.function_loads(self.func)
        load_ids = self.ctx.per_node(
            "load-ids", self.func, lambda: {id(n): name for name, nodes in func_loads.items() for n in nodes}
        )
        # a name is read outside the replaced statements when not all of its reads are inside
        # them: counted over the replaced statements only, so each ``if`` costs its own size
        inside: Dict[str, int] = {}
        for r in replaced:
            for n in walk(r):
                name = load_ids.get(id(n))
                if name is not None:
                    inside[name] = inside.get(name, 0) + 1
        live = {name for name, nodes in func_loads.items() if len(nodes) > inside.get(name, 0)}
        if self.ctx.inside_loop(self.top, self.func):
            live |= set(loaded_names(list(replaced)))
        return live

    def _outputs(self, root: Level, leaves: List[Optional[Branch]], replaced) -> List[str]:
        bound = {id(b): bound_names(b.stmts) for b in leaves if b is not None}
        assigned: Dict[str, None] = {}
        for b in leaves:
            if b is not None:
                for name in bound[id(b)]:
                    assigned.setdefault(name, None)
        live = self._live_out(replaced)
        outputs = [n for n in assigned if n in live]
        if not outputs:
            raise Refuse("the branches assign nothing that is read after the `if`")
        for n in outputs:
            pre = root.entry.get(n)
            pre_tensor = pre is not None and pre.kind is Kind.TENSOR and not pre.maybe_none
            for b in leaves:
                where = b.label if b is not None else "the missing `else`"
                if b is None or n not in bound[id(b)]:
                    if n not in root.entry or pre is None:
                        raise Refuse(f"`{n}` is assigned in some branches only and read after the `if`")
                    if not pre_tensor:
                        raise Refuse(f"`{n}` keeps its old value in {where}, which is {_kind_text(pre)}, not a tensor")
                    continue
                if n not in _top_level_bound(b.stmts) and not pre_tensor:
                    raise Refuse(f"`{n}` may stay unassigned in {b.label}")
                v = b.exit_env.get(n) if b.exit_env is not None else None
                if v is None:
                    raise Refuse(f"pt2lint has no facts about `{n}` at the end of {b.label}")
                self._check_output_value(v, f"`{n}`", f"at the end of {b.label}")
        return outputs

    def _check_returns(self, branches: Sequence[Branch]) -> None:
        counts = set()
        for b in branches:
            for ret in _returns(b.stmts):
                if ret.value is None:
                    raise Refuse(f"{b.label} returns None; torch.cond branches must return tensors")
                elems = _tuple_elements(ret.value)
                if elems is None:
                    elems = [ret.value]
                counts.add(len(elems))
                for e in elems:
                    v = self.ctx.facts.value(e)
                    if v is None:
                        raise Refuse(f"pt2lint has no facts about `{_code(self.ctx, e)}` returned by {b.label}")
                    self._check_output_value(v, f"`{_code(self.ctx, e)}`", f"as returned by {b.label}")
        if len(counts) > 1:
            raise Refuse("the branches return different numbers of values")

    def _check_output_value(self, v: Value, what: str, where: str) -> None:
        """A branch output must be a tensor: refuse known non-tensors (and tensor-or-None); a value of
        unknown kind (the result of a call pt2lint cannot see into) makes the fix unsafe, since
        torch.cond raises rather than misbehaves when it is not a tensor."""
        if v.kind is Kind.TENSOR and not v.maybe_none:
            return
        if v.kind is Kind.UNKNOWN and not v.maybe_none:
            self.notes.append(f"{what} is of unknown kind {where} (torch.cond raises if it is not a tensor)")
            return
        raise Refuse(f"{what} is {_kind_text(v)} {where}; torch.cond branches can only return tensors")

    def _passthrough_key(self, label: str, outputs: List[str], mode: str) -> Optional[str]:
        """The :func:`dtype_key` of an output that a branch passes through when an earlier compound
        statement (another ``if``) binds it: the value after that statement."""
        name = next((n for n in outputs if label == f"`{n}`"), None) if mode == "assign" else None
        before = self._before_top()
        at = _last_binding(self.ctx, before, name) if name is not None else -1
        where = before[at] if at >= 0 else None
        return f"bound:{id(where)}:{name}" if where is not None and not isinstance(where, cst.SimpleStatementLine) else None

    def _output_slots(self, leaves: List[Optional[Branch]], outputs: List[str], mode: str):
        """For each output: its label and, per branch, ``(expression or None, statements before it)``.

        A branch that does not assign an output passes through its value from before the ``if``.
        """
        before = self._before_top()
        slots: List[Tuple[str, List[Tuple[Optional[cst.BaseExpression], Sequence[cst.BaseStatement]]]]] = []
        if mode == "assign":
            for n in outputs:
                per = []
                for b in leaves:
                    context = _concat(self.ctx, before, b.stmts) if b is not None else _concat(self.ctx, before)
                    value, prefix, bound = _resolve(self.ctx, context, n)
                    if value is None and not bound:
                        value, prefix = cst.Name(n), context  # the value from before the block, unchanged
                    per.append((value, prefix))
                slots.append((f"`{n}`", per))
        else:
            per_pos: Dict[int, list] = {}
            for b in leaves:
                if b is None:
                    continue
                for ret in _returns(b.stmts):
                    elems = _tuple_elements(ret.value) or [ret.value]
                    for i, e in enumerate(elems):
                        per_pos.setdefault(i, []).append((e, _concat(self.ctx, before, b.stmts)))
            slots = [(f"returned value {i + 1}", c) for i, c in sorted(per_pos.items())]
        return slots

    def _before_top(self) -> Sequence[cst.BaseStatement]:
        """The statements of the block holding the ``if`` that run before it (none for an ``elif``)."""
        parent = self.ctx.parent(self.top)
        if self.owner is not None or not isinstance(parent, cst.IndentedBlock):
            return ()
        before = _block_prefix(self.ctx, self.top)
        return before if before is not None else ()

    def _prover(self) -> ScalarProver:
        key = (NAME, "prover", id(self.func))
        hit = self.ctx.cache.get(key)
        if hit is None or hit[0] is not self.func:
            hit = (self.func, ScalarProver(self.ctx, self.func))  # one per function: it indexes the assignments
            self.ctx.cache[key] = hit
        return hit[1]

    def _check_dtypes(self, leaves: List[Optional[Branch]], outputs: List[str], mode: str) -> None:
        """torch.cond raises unless every output has one dtype, one rank and one device in all
        branches (measured on torch 2.13: ``x.sum()`` vs ``x * 2``, ``x.int()`` vs ``x.long()``,
        ``x.cpu()`` vs ``x`` on another device all fail when the branches are traced).

        Refused when the syntax proves a clash, and when one branch fixes the dtype (a cast, a
        comparison, an integer op) and the other keeps its input's; unsafe when one branch fixes
        the rank or device (a full reduction, a device move) that the other is not known to share.
        """
        prover = self._prover()
        floating = self._floating_submodules() | {FLOATING_NAME + n for n in self._floating_names()}
        for label, per in self._output_slots(leaves, outputs, mode):
            classes = [dtype_class(self.ctx, e, st) if e is not None else "?" for e, st in per]
            known = [c for c in classes if c != "?"]
            for i, a in enumerate(known):
                for b in known[i + 1:]:
                    if not dtypes_compatible(a, b):
                        raise Refuse(f"{label} has dtype {' in one branch and '.join(sorted((a, b)))} in another; torch.cond needs one dtype")
            # ``num``/``float`` (arithmetic, float-valued ops) agree with an input of unknown dtype in
            # the usual case of floating inputs; an explicit dtype, an integer or bool result is a
            # fact the other branch must share
            fixed = [c for c in known if c not in ("num", "float")]
            if fixed and len(set(classes)) > 1:
                # the other branch keeps its input's dtype: torch.cond raises unless that already is
                # `fixed[0]`, and then the cast does nothing -- a dtype clash, refused (issue: a
                # branch that changes its output's dtype always fails)
                raise Refuse(
                    f"{label} is {fixed[0]} in one branch and keeps its input's dtype in another; torch.cond needs one "
                    f"dtype, so the rewrite would raise unless the input already is {fixed[0]}"
                )
            if set(classes) & {"num", "float"} or any(_widens(self.ctx, e, st) for e, st in per if e is not None):
                numbers = {NUMBER_ATTR + n for n in self._number_attrs()}
                # an output of unknown dtype still has the dtype of itself: a branch that passes
                # through the value another branch reads agrees with it
                keys = [(dtype_key(self.ctx, e, st, floating | numbers) or f"value:{id(e)}") if e is not None else self._passthrough_key(label, outputs, mode) for e, st in per]
                if not keys_agree(keys):
                    # arithmetic whose operands' dtypes are unknown: its result has the other branch's
                    # dtype only where promotion proves it (an int64 input times 0.5 is floating)
                    self.notes.append(
                        f"{label} is computed by arithmetic in a branch and is not proven to keep one dtype in every "
                        f"branch for every input dtype (a Python number or a tensor of another dtype promotes an "
                        f"integer or bool input); torch.cond raises where the dtypes differ"
                    )
            sources = [_float_source(self.ctx, e, st, 0, floating) if e is not None else "" for e, st in per]
            if any(sources) and len(set(sources)) > 1:
                # a Python float operand makes an integer input floating (the default dtype) and a
                # factory gives the default dtype whatever the input's: torch.cond raises for the
                # inputs where the other branch keeps another dtype (measured: `x + 1` vs `x * 0.5`
                # on an int64 input, `torch.zeros(n)` vs `x * 2` on float64)
                self.notes.append(
                    f"{label} is floating in one branch (a Python float operand or a factory's default dtype) and "
                    f"keeps its input's dtype in another; torch.cond raises for inputs where they differ"
                )
            grads = [grad_class(self.ctx, e, st) if e is not None else "?" for e, st in per]
            if "none" in grads and len(set(grads)) > 1:
                self.notes.append(
                    f"{label} never requires grad in one branch (detached, a comparison or a new tensor) and may in "
                    f"another; the torch.cond output requires grad when any branch's does"
                )
            shapes = [shape_class(self.ctx, e, st) if e is not None else None for e, st in per]
            if any(k is not None and k.startswith("changed:") for k in shapes) and len(set(shapes)) > 1:
                self.notes.append(
                    f"{label} is not proven to have one shape in every branch (an index or a shape change in one); "
                    f"torch.cond traces outputs of different shapes, but their backward raises"
                )
            ranks = [rank_class(prover, self.ctx, e, st) if e is not None else "?" for e, st in per]
            ranks = [r if r != "lit" else "?" for r in ranks]
            known_ranks = [r for r in ranks if r != "?"]
            for i, a in enumerate(known_ranks):
                for b in known_ranks[i + 1:]:
                    if ranks_differ(a, b):
                        raise Refuse(
                            f"{label} has rank {_rank_text(a)} in one branch and {_rank_text(b)} in another; "
                            f"torch.cond needs outputs of one rank"
                        )
            informative = [r for r in known_ranks if r.isdigit() or _rank_delta(r) != 0]
            if informative and len(set(ranks)) > 1:
                r = informative[0]
                what = "0-d (a full reduction)" if r == "0" else f"of rank {_rank_text(r)}"
                self.notes.append(f"{label} is {what} in one branch and may have another rank in the other; torch.cond raises when the ranks differ")
            devices = [device_class(self.ctx, e, st) if e is not None else "?" for e, st in per]
            literal = {d for d in devices if d not in ("?", "moved")}
            if len(literal) > 1:
                raise Refuse(f"{label} is on {' in one branch and on '.join(sorted(literal))} in another; torch.cond needs outputs on one device")
            if any(d != "?" for d in devices) and len(set(devices)) > 1:
                moved = next(d for d in devices if d != "?")
                where = f"to {moved}" if moved != "moved" else "to another device"
                self.notes.append(f"{label} is moved {where} in one branch only; torch.cond raises when the outputs' devices differ")

    def _operands_of(self, level: Level, loads: Set[str], identity: Set[str], bound_inside: Set[str]) -> List[str]:
        """Tensors the branch functions take as parameters: the function's local tensors that the
        branches (and nested ``elif`` tests) read (``loads``), plus outputs a branch passes through
        unchanged (``identity``); ``bound_inside`` are the names the branches bind."""
        order = {name: i for i, name in enumerate(level.entry)}  # parameters first, then by definition
        candidates = sorted(loads | identity, key=lambda n: (order.get(n, len(order)), n))
        operands = []
        for name in candidates:
            if name in self.self_names or name not in level.entry:
                continue  # `self`, globals, builtins, closures of an outer function, branch locals
            v = level.entry[name]
            if v is None:
                if name in bound_inside:
                    continue
                raise Refuse(f"`{name}` may be unbound before the `if`")
            if v.kind is Kind.TENSOR and not v.maybe_none:
                operands.append(name)
            elif name in bound_inside:
                raise Refuse(f"a branch rebinds `{name}`, which is {_kind_text(v)}; torch.cond passes only tensors into its branches")
        return operands

    def _assign_operands(self, root: Level, outputs: Sequence[str]) -> None:
        """Set each level's operands.  A level's branches include every deeper ``elif``'s, so
        what they read and bind is gathered once, from the last ``elif`` up (one pass over the
        chain, not one per level), then checked from the top down."""
        levels = self._levels(root)
        loads: Set[str] = set()
        identity: Set[str] = set()
        bound_inside: Set[str] = set()
        seen: List[Tuple[frozenset, frozenset, frozenset]] = []
        for i in range(len(levels) - 1, -1, -1):
            level = levels[i]
            own = [level.true] + ([] if isinstance(level.false, Level) else [level.false])
            for b in own:
                if b is None:
                    identity.update(outputs)
                    continue
                binds: Set[str] = set()
                for st in b.stmts:
                    binds |= _binds(self.ctx, st)
                    loads |= _loads(self.ctx, st)
                bound_inside |= binds
                identity.update(n for n in outputs if n not in binds)
            if i + 1 < len(levels):
                loads |= _loads(self.ctx, levels[i + 1].node.test)
            seen.append((frozenset(loads), frozenset(identity), frozenset(bound_inside)))
        seen.reverse()
        for level, (lo, ident, bound) in zip(levels, seen):
            level.operands = self._operands_of(level, set(lo), set(ident), set(bound))

    # ------------------------------------------------------------ generation
    def _top_names(self) -> Tuple[str, str]:
        """Branch-function names for this chain, unique among every chain of the function that
        is rewritten in the same pass (each rewrite computes the same allocation)."""
        key = (NAME, "names", id(self.func))
        table = self.ctx.cache.get(key)
        if table is None:
            tops: List[cst.If] = []
            for f in self.ctx.facts.findings:
                node = target_if(f, self.ctx)
                if node is None or self.ctx.enclosing_function(node) is not self.func:
                    continue
                top = chain_top(self.ctx, node)
                if all(t is not top for t in tops):
                    tops.append(top)
            order = {id(n): i for i, n in enumerate(walk(self.func))}
            tops.sort(key=lambda t: order.get(id(t), 0))
            taken = set(self.ctx.function_spelled(self.func))
            table = {}
            i = 0
            for top in tops:
                while True:
                    sfx = "" if i == 0 else f"_{i}"
                    i += 1
                    names = (f"_true_fn{sfx}", f"_false_fn{sfx}")
                    if not (set(names) & taken):
                        break
                table[id(top)] = names
            self.ctx.cache[key] = table
        names = table.get(id(self.top)) or (self._fresh_name("_true_fn"), self._fresh_name("_false_fn"))
        self.taken.update(names)
        return names

    def _fresh_name(self, base: str) -> str:
        name = base
        i = 1
        while name in self.taken:
            name = f"{base}_{i}"
            i += 1
        self.taken.add(name)
        return name

    def _clone(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        return cst.Call(func=cst.Attribute(value=paren_if_needed(expr), attr=cst.Name("clone")))

    def _output_return(self, branch: Optional[Branch], outputs: Sequence[str]) -> cst.SimpleStatementLine:
        elems = []
        for n in outputs:
            fresh = branch is not None and n in branch.fresh and n in _top_level_bound(branch.stmts)
            elems.append(cst.Name(n) if fresh else self._clone(cst.Name(n)))
        value: cst.BaseExpression = elems[0] if len(elems) == 1 else cst.Tuple([cst.Element(e) for e in elems], lpar=[], rpar=[])
        return cst.SimpleStatementLine([cst.Return(value=value)])

    def _rewrite_returns(self, stmts: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
        """Clone returned values that may alias an input (``torch.cond`` rejects aliasing outputs)."""
        fresh_at = self.checker.fresh_at
        rewriter = self

        class Clone(cst.CSTTransformer):
            def visit_FunctionDef(self, node) -> bool:
                return False

            def visit_Lambda(self, node) -> bool:
                return False

            def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
                if original.value is None:
                    return updated
                fresh = fresh_at.get(id(original), set())
                elems = _tuple_elements(original.value)
                if elems is None:
                    if may_alias(original.value, fresh):
                        return updated.with_changes(value=rewriter._clone(original.value))
                    return updated
                new = []
                seen_names = set()
                for e in elems:
                    repeated = isinstance(e, cst.Name) and e.value in seen_names
                    if isinstance(e, cst.Name):
                        seen_names.add(e.value)
                    new.append(rewriter._clone(e) if repeated or may_alias(e, fresh) else e)
                if all(a is b for a, b in zip(new, elems)):
                    return updated
                tup = original.value
                assert isinstance(tup, cst.Tuple)
                return updated.with_changes(value=tup.with_changes(elements=[el.with_changes(value=v) for el, v in zip(tup.elements, new)]))

        return [s.visit(Clone()) for s in stmts]  # type: ignore[misc]

    def _def(self, name: str, operands: Sequence[str], branch: Optional[Branch], body: List[cst.BaseStatement]) -> cst.FunctionDef:
        params = cst.Parameters(params=[cst.Param(cst.Name(o)) for o in operands])
        block = branch.block if branch is not None else None
        if isinstance(block, cst.IndentedBlock):
            new_block = block.with_changes(body=body)
        elif isinstance(block, cst.SimpleStatementSuite):
            new_block = cst.IndentedBlock(body=body)
        else:
            new_block = cst.IndentedBlock(body=body)
        leading = list(branch.leading) if branch is not None else []
        return cst.FunctionDef(name=cst.Name(name), params=params, body=new_block, leading_lines=leading)

    def _branch_body(self, branch: Union[Branch, Level, None], outputs: Sequence[str], mode: str) -> Tuple[Optional[Branch], List[cst.BaseStatement]]:
        if isinstance(branch, Level):
            stmts = self._generate(branch, outputs, mode)
            if mode == "assign":
                stmts.append(cst.SimpleStatementLine([cst.Return(value=_names_value(outputs))]))
            leading = branch.node.leading_lines
            return Branch([], None, "", None, leading), stmts
        if branch is None:
            return None, [self._output_return(None, outputs)]
        if mode == "assign":
            return branch, list(branch.stmts) + [self._output_return(branch, outputs)]
        return branch, self._rewrite_returns(list(branch.stmts))

    def _generate(self, level: Level, outputs: Sequence[str], mode: str) -> List[cst.BaseStatement]:
        if level.node is self.top:
            t_name, f_name = self._top_names()
        else:  # an `elif`: its functions live inside the outer `_false_fn`
            t_name = self._fresh_name("_elif_true_fn")
            f_name = self._fresh_name("_elif_false_fn")
        t_branch, t_body = self._branch_body(level.true, outputs, mode)
        f_branch, f_body = self._branch_body(level.false, outputs, mode)
        true_def = self._def(t_name, level.operands, t_branch, t_body)
        false_def = self._def(f_name, level.operands, f_branch, f_body)
        operands = cst.Tuple([cst.Element(cst.Name(o)) for o in level.operands])
        pred = level.pred.expr
        if getattr(pred, "lpar", None):
            pred = pred.with_changes(lpar=[], rpar=[])  # an argument needs no parentheses of its own
        call = cst.Call(
            func=cst.Attribute(value=cst.Name(self.torch), attr=cst.Name("cond")),
            args=[cst.Arg(pred), cst.Arg(cst.Name(t_name)), cst.Arg(cst.Name(f_name)), cst.Arg(operands)],
        )
        # comments inside a test that was rewritten (`a and  # why` -> `torch.logical_and(...)`) move above
        lost = lost_comments(level.node.test, pred)
        if mode == "assign":
            target: cst.BaseExpression = _names_value(outputs)
            last = cst.SimpleStatementLine([cst.Assign(targets=[cst.AssignTarget(target)], value=call)], leading_lines=lost)
        else:
            last = cst.SimpleStatementLine([cst.Return(value=call)], leading_lines=lost)
        return [true_def, false_def, last]


def _rank_text(r: str) -> str:
    if r.isdigit():
        return r
    base, delta = _rank_base(r), _rank_delta(r)
    return f"`{base}.dim()`" if delta == 0 else f"`{base}.dim()` {'+' if delta > 0 else '-'} {abs(delta)}"


def _names_value(names: Sequence[str]) -> cst.BaseExpression:
    if len(names) == 1:
        return cst.Name(names[0])
    return cst.Tuple([cst.Element(cst.Name(n)) for n in names], lpar=[], rpar=[])


def _tuple_elements(value: Optional[cst.BaseExpression]) -> Optional[List[cst.BaseExpression]]:
    if isinstance(value, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
        return [e.value for e in value.elements]
    return None


def _kind_text(v: Optional[Value]) -> str:
    if v is None:
        return "unknown"
    if v.kind is Kind.TENSOR and v.maybe_none:
        return "a tensor or None"
    return {
        Kind.TENSOR: "a tensor", Kind.SHAPE: "a size (SymInt)", Kind.CONST: "a Python value", Kind.NONE: "None",
        Kind.DATA: "a Python number read from a tensor", Kind.CONTAINER: "a list/tuple/dict", Kind.MODULE: "a module",
        Kind.FUNCTION: "a function", Kind.CLASS: "a class", Kind.SELF: "`self`",
    }.get(v.kind, "of unknown kind")


def _code(ctx: FixContext, node: cst.CSTNode) -> str:
    text = " ".join(ctx.module.code_for_node(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = [
    "CondRewrite", "NAME", "TARGET_CODES", "always_returns", "chain_top", "device_class", "dtype_class", "dtypes_compatible",
    "propose", "python_test", "rank_class", "ranks_differ", "target_if", "tensor_test",
]
