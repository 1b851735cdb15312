"""What calling a ``torch.nn`` submodule tells about ranks and dtypes, for the fix proofs.

Two facts, each measured on torch 2.13 for every module listed (``tests/test_fix_module_facts.py``
repeats the measurement on float16, bfloat16, float32 and float64 inputs of every rank the
module accepts, and on int64, int32, uint8 and bool inputs):

* :data:`RANK_KEEPING_MODULES`: the output has the input's rank (``nn.Linear`` maps the last
  dimension, ``nn.Conv2d`` keeps an unbatched ``(C, H, W)`` input unbatched, ``nn.LayerNorm``
  normalises in place of the trailing dimensions);
* :data:`FLOAT_INPUT_MODULES`: an integer or bool input raises (the module's weight is
  floating and the kernel needs one dtype), so once ``self.fc(x)`` has run, ``x`` is floating;
  and the output has the input's dtype for every pair of floating input and weight dtypes that
  does not raise (outside ``torch.autocast``, which the dtype proofs do not model).

``nn.Embedding`` is in neither: it takes integer indices and adds a dimension.  A submodule is
recognised only when every assignment of ``self.<attr>`` in the class is a call of one of these
``torch.nn`` classes (:func:`submodules_of`).
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Set

import libcst as cst

from pt2lint.analysis.walk import iter_children, walk
from pt2lint.fixes.context import FixContext
from pt2lint.fixes.predicate import call_qualname

#: ``torch.nn`` modules whose output has the rank of their (one) input (measured, see above)
RANK_KEEPING_MODULES = frozenset("Linear Conv1d Conv2d Conv3d LayerNorm RMSNorm".split())
#: ``torch.nn`` modules that raise for an integer or bool input (measured, see above)
FLOAT_INPUT_MODULES = frozenset("Linear Conv1d Conv2d Conv3d LayerNorm RMSNorm".split())


def _class_of(ctx: FixContext, node: Optional[cst.CSTNode]) -> Optional[cst.ClassDef]:
    cls = ctx.parent(node) if node is not None else None
    while cls is not None and not isinstance(cls, cst.ClassDef):
        cls = ctx.parent(cls)
    return cls


_ASSIGNMENTS = (cst.Assign, cst.AnnAssign, cst.AugAssign)


def _class_submodules(ctx: FixContext, cls: cst.ClassDef) -> Dict[str, Optional[str]]:
    """``self`` attribute -> the ``torch.nn`` class every assignment of it in ``cls`` calls
    (``None`` when the assignments differ or are not such a call)."""
    seen: Dict[str, Set[Optional[str]]] = {}
    for n in walk(cls):
        if type(n) not in _ASSIGNMENTS:  # final node classes: skip the rest without an ABC check per test
            continue
        targets = []
        if isinstance(n, cst.Assign):
            targets = [(t.target, n.value) for t in n.targets]
        elif isinstance(n, (cst.AnnAssign, cst.AugAssign)):
            targets = [(n.target, n.value if isinstance(n, cst.AnnAssign) else None)]
        for tgt, value in targets:
            for m in walk(tgt):
                if isinstance(m, cst.Attribute) and isinstance(m.value, cst.Name) and m.value.value == "self":
                    name = None
                    if m is tgt and isinstance(value, cst.Call):
                        q = call_qualname(ctx, value)
                        if q is not None and q.startswith("torch.nn."):
                            name = q.rsplit(".", 1)[-1]
                    seen.setdefault(m.attr.value, set()).add(name)
    return {attr: (next(iter(names)) if len(names) == 1 else None) for attr, names in seen.items()}


def submodules_of(ctx: FixContext, func: Optional[cst.FunctionDef], table: frozenset) -> Set[str]:
    """``self`` attributes that the class around ``func`` assigns only to a call of one
    ``torch.nn`` class of ``table`` (``self.fc = nn.Linear(4, 2)``); empty outside a class."""
    cls = _class_of(ctx, func)
    if cls is None:
        return set()
    kinds = ctx.per_node("nn-submodule-classes", cls, lambda: _class_submodules(ctx, cls))
    return {attr for attr, name in kinds.items() if name is not None and name in table}  # type: ignore[union-attr]


def submodule_input(ctx: FixContext, call: cst.BaseExpression, table: frozenset) -> Optional[cst.BaseExpression]:
    """The input of ``call`` when it is ``self.<attr>(x)`` (one positional argument) for a
    submodule of ``table`` (see :func:`submodules_of`); else ``None``."""
    if not isinstance(call, cst.Call) or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
        return None
    if func.attr.value not in submodules_of(ctx, ctx.enclosing_function(call), table):
        return None
    return call.args[0].value


def floating_inputs(ctx: FixContext, before: Sequence[cst.BaseStatement], rebound: Set[str]) -> Set[str]:
    """Names ``x`` (never rebound in the function: not in ``rebound``) that ``before`` passes to a
    submodule of :data:`FLOAT_INPUT_MODULES` (``self.fc(x)``), in a simple statement and outside
    any lambda, comprehension, conditional expression or ``and``/``or``, so on every path through
    ``before``: where the code after ``before`` runs, ``x`` is floating (an integer or bool ``x``
    would have raised)."""
    out: Set[str] = set()
    skip = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp, cst.BooleanOperation)

    # an explicit stack over the code fields (``walk``'s reader): ``CSTNode.children`` rebuilds
    # every node it lists, and the result is a set, so the visiting order does not matter
    stack: list = [st for st in before if isinstance(st, cst.SimpleStatementLine)]
    while stack:
        node = stack.pop()
        if type(node) in skip:  # final node classes: a tuple look-up, not an ABC check per node
            continue
        arg = submodule_input(ctx, node, FLOAT_INPUT_MODULES) if type(node) is cst.Call else None
        if isinstance(arg, cst.Name) and arg.value not in rebound:
            out.add(arg.value)
        stack.extend(iter_children(node))
    return out


__all__ = ["FLOAT_INPUT_MODULES", "RANK_KEEPING_MODULES", "floating_inputs", "submodule_input", "submodules_of"]
