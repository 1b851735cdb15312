"""PTC106: searching a list or tuple of tensors for a tensor (``vals.index(max(vals))``).

``seq.index(v)`` and ``seq.remove(v)`` compare ``v`` with each element until one matches:
``elem is v or elem == v``.  For tensors ``==`` is a tensor, and asking its truth is a
data-dependent branch: measured on torch 2.13 (graph_breaks log), ``vals.index(max(vals))``,
``vals.index(x.mean())`` and ``vals.remove(x.max())`` over a list of tensors break with
"Data-dependent branching" (GB0170), while ``vals.count(v)`` (Dynamo sums the comparisons
without asking their truth), ``v in vals`` and ``vals.index(vals[0])`` (the first element is
``v`` itself) do not.  Which methods break is not written here: it is the
``sequence_searches`` section of ``pt2lint/data/dynamo_facts.json``, every ``list``,
``tuple`` and ``collections.deque`` method that compares elements, probed
(``tools/gen_dynamo_facts.py``).

``remove`` breaks the same way on a list, but the analysis does not tell a list of tensors from
a set of them, and a set finds by hash (``s.remove(x.max())`` raises ``KeyError`` in eager,
never breaks): a method ``set`` also has is not reported.

The rule reports a search only when it cannot end at an element by identity: the searched
value is computed by the expression written in the call (``max(vals)``, ``x.mean()``,
``a + b``), or is a local name every assignment of which in the function is such an
expression.  A name bound to an element (``v = vals[1]``), a parameter or anything else may
be the first element itself, and is not reported.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis.kinds import Kind, Value
from pt2lint.rules.base import Rule

#: Expressions that always evaluate to a new object: never an element of the searched
#: sequence.  (A call may in principle return one of its arguments; Dynamo's ``max``/``min`` of
#: tensors and every tensor op return a new tensor, and a call that returns an element it was
#: given is not the idiom this rule is about.)
_FRESH = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)


def _fresh(node: cst.BaseExpression, func: Optional[cst.FunctionDef], depth: int = 0) -> bool:
    """True when ``node`` evaluates to an object made by this expression, not an existing one."""
    if isinstance(node, _FRESH):
        return True
    if isinstance(node, cst.Name) and func is not None and depth == 0:
        values = _assigned_values(func, node.value)
        return bool(values) and all(_fresh(v, None, depth + 1) for v in values)
    return False


def _assigned_values(func: cst.FunctionDef, name: str) -> Optional[list]:
    """Every value the function body assigns to ``name`` with a plain ``name = value``, or
    ``None`` when ``name`` is bound any other way (a parameter, a loop target, a tuple
    target, ``+=``, ``with ... as``, a nested scope's ``nonlocal``)."""
    params = func.params
    for p in (*params.posonly_params, *params.params, *params.kwonly_params):
        if p.name.value == name:
            return None
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param) and star.name.value == name:
            return None
    collector = _Assignments(name)
    func.body.visit(collector)
    return None if collector.other else collector.values


class _Assignments(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.values: list = []
        self.other = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function's names are its own

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name) and target.target.value == self.name:
                self.values.append(node.value)
            elif self._binds(target.target):
                self.other = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == self.name:
            if node.value is None:
                return
            self.values.append(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self._binds(node.target):
            self.other = True

    def visit_For(self, node: cst.For) -> None:
        if self._binds(node.target):
            self.other = True

    def visit_CompFor(self, node: cst.CompFor) -> None:
        if self._binds(node.target):
            self.other = True

    def visit_AsName(self, node: cst.AsName) -> None:
        if self._binds(node.name):
            self.other = True

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if self._binds(node.target):
            self.other = True

    def visit_Global(self, node: cst.Global) -> None:
        if any(n.name.value == self.name for n in node.names):
            self.other = True

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        if any(n.name.value == self.name for n in node.names):
            self.other = True

    def _binds(self, target: cst.BaseExpression) -> bool:
        if isinstance(target, cst.Name):
            return target.value == self.name
        if isinstance(target, (cst.Tuple, cst.List)):
            return any(self._binds(e.value) for e in target.elements)
        if isinstance(target, cst.StarredElement):
            return self._binds(target.value)
        return False


def _tensor_elements(seq: Optional[Value]) -> bool:
    """A list/tuple whose every known element is a sure (not guessed) tensor."""
    if seq is None or seq.kind is not Kind.CONTAINER or seq.keys is not None:
        return False
    elements = seq.elts if seq.elts is not None else ((seq.elt,) if seq.elt is not None else ())
    return bool(elements) and all(e is not None and e.kind is Kind.TENSOR and not e.weak for e in elements)


class TensorSequenceSearch(Rule):
    """PTC106: ``seq.index(v)`` of a sequence of tensors, ``v`` a new tensor."""

    code = "PTC106"

    def on_call(self, interp, ev) -> None:
        if ev.qualname is not None or ev.kwargs or len(ev.args) != 1 or len(ev.node.args) != 1:
            return
        # ``remove`` is a set method too, and a set finds by hash, not ``==``; but a tensor's hash
        # is its identity, so removing a fresh tensor from a set of tensors raises KeyError without
        # torch.compile: only a list or deque receiver is code that runs
        gb = facts.sequence_search_break(ev.method)
        if gb is None or not _tensor_elements(ev.receiver):
            return
        target = ev.args[0]
        if target.kind is not Kind.TENSOR or target.weak or target.maybe_none:
            return
        func = getattr(getattr(interp.frame, "func", None), "node", None)
        if not _fresh(ev.node.args[0].value, func if isinstance(func, cst.FunctionDef) else None):
            return
        interp.report(
            self.code,
            ev.node,
            f"`.{ev.method}()` searches tensors with `==` and asks each result's truth: data-dependent "
            f"branch, graph break ({gb}) (compare in one tensor op: `torch.stack(seq)` with `argmax`/`==`, "
            "or search Python numbers)",
        )
