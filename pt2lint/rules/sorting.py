"""PTC322: sorting tensors (or tuples holding tensors) in a compiled region.

Dynamo sorts a list only when every sort key is a Python constant; measured on torch 2.13
(``fullgraph=True`` and the graph_breaks log): ``sorted(d.items())`` of a dict whose values
are tensors, ``sorted([t1, t2])`` and ``sorted(xs, key=lambda t: t.sum())`` break with
"sort with non-constant keys" (GB0207), while ``sorted(d.items())`` of a dict of Python
numbers, ``sorted(d)`` (its string keys) and ``sorted(x.shape)`` do not.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from pt2lint.analysis.kinds import UNKNOWN, Kind, Value
from pt2lint.rules.base import Rule


def _holds_tensor(v: Optional[Value], depth: int = 0) -> bool:
    """A sure (not guessed) tensor, or a tuple/list whose elements include one."""
    if v is None or depth > 3:
        return False
    if v.kind is Kind.TENSOR:
        return not v.weak
    if v.kind is Kind.CONTAINER:
        if v.elts is not None:
            return any(_holds_tensor(e, depth + 1) for e in v.elts)
        return _holds_tensor(v.elt, depth + 1)
    return False


def _key_holds_tensor(interp, ev, items: Value) -> bool:
    """True when ``key=`` is a ``lambda`` written in the call whose value, for an element
    of the sorted items, is (or holds) a sure tensor.  Any other key (a named function, a
    ``lambda`` bound elsewhere, one whose value is unknown) says nothing: not flagged."""
    key_node = next((a.value for a in ev.node.args if a.keyword is not None and a.keyword.value == "key"), None)
    if not isinstance(key_node, cst.Lambda):
        return False
    element = items.element() if items is not None else None
    result = interp.lambda_result(key_node, [element if element is not None else UNKNOWN])
    return _holds_tensor(result)


class SortNonConstant(Rule):
    """PTC322: ``sorted(...)``/``list.sort()`` whose sort keys are tensors (or hold tensors)."""

    code = "PTC322"

    def on_call(self, interp, ev) -> None:
        if ev.qualname == "builtins.sorted" and ev.args:
            items = ev.args[0]
        elif ev.method == "sort" and ev.receiver is not None and ev.receiver.kind is Kind.CONTAINER:
            items = ev.receiver
        else:
            return
        if "key" in ev.kwargs:
            if _key_holds_tensor(interp, ev, items):
                interp.report(
                    self.code, ev.node,
                    "sort key that returns a tensor: Dynamo sorts only constant keys, graph break "
                    "(sort with `torch.argsort` on the stacked keys, or make the key a Python number)",
                )
            return
        if items.kind is not Kind.CONTAINER or items.keys is not None:
            return  # a dict with known keys: sorting it sorts its (string) keys
        if not _holds_tensor(items.element()):
            return
        interp.report(
            self.code, ev.node,
            "sorting values that hold tensors: Dynamo sorts only constant keys, graph break "
            "(sort the Python keys alone, e.g. `sorted(d)` then `d[k]`, or use `torch.sort`)",
        )
