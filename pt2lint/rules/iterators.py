"""PTC329: a lazy iterator handed to a function Dynamo puts in the graph (``math.prod(d for d in x.shape)``).

Dynamo's trace rules put the ``math`` functions in the graph (``TorchInGraphFunctionVariable``):
with Python numbers for arguments they constant-fold, but every argument must be a value the
graph can hold.  A generator expression, or the object ``map``, ``filter`` or ``reversed``
returns, is none: the call breaks the graph ("Failed to convert args/kwargs to proxy",
GB0055), while ``math.prod(x.shape)`` or ``math.prod([d for d in x.shape])`` folds.  Which
functions and which iterator forms break is not written here: it is the ``iterator_calls``
section of ``pt2lint/data/dynamo_facts.json``, every ``math`` function Dynamo puts in the graph
that takes one iterable, probed with each form (``tools/gen_dynamo_facts.py``).

After a break at a call given a generator expression Dynamo cannot resume the frame (it would
have to rebuild the generator object); the interpreter ends the frame there for every rule
(:meth:`pt2lint.analysis.interp.Interpreter.end_frame`), so later breaks in the function are
named in this finding's message rather than reported alone.

Only iterators written in the call are matched (``math.prod(d for d in s)``,
``math.prod(map(int, s))``); a generator bound to a name first is not followed.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.rules.base import Rule

#: The builtins whose result is a lazy iterator, by the form name the facts table uses.
_ITERATOR_BUILTINS = {"builtins.map": "map", "builtins.filter": "filter", "builtins.reversed": "reversed"}


def iterator_form(interp, node: cst.BaseExpression) -> Optional[str]:
    """The facts table's name for the lazy iterator ``node`` builds (``"generator"``, ``"map"``,
    ``"filter"``, ``"reversed"``), or None for anything else (a list, a tuple, a name)."""
    if type(node) is cst.GeneratorExp:
        return "generator"
    if type(node) is cst.Call:
        return _ITERATOR_BUILTINS.get(interp.qualname(node.func) or "")
    return None


class IteratorIntoGraphCall(Rule):
    """PTC329: ``math.prod(<generator>)``, ``math.fsum(map(float, s))`` in a compiled region."""

    code = "PTC329"

    def on_call(self, interp, ev) -> None:
        q = ev.qualname
        if not q or q not in facts.iterator_callees() or not isinstance(ev.node, cst.Call):
            return
        for arg in ev.node.args:
            if arg.keyword is not None or arg.star:
                continue
            form = iterator_form(interp, arg.value)
            gb = facts.iterator_call_break(q, form) if form else None
            if gb is None:
                continue
            what = "a generator expression" if form == "generator" else f"a `{form}` object"
            interp.report(
                self.code,
                ev.node,
                f"`{q}()` is given {what}: Dynamo puts the call in the graph and cannot pass it an "
                f"iterator: graph break ({gb}) (pass a tuple or list: `{q}([...])`)",
            )
            return
