"""Which names a function rebinds inside loops (for folding ``x is None`` on a parameter).

A parameter that is ``None`` at the call and rebound only in straight-line code
(``if options is None: options = {}``) is ``None`` at each test that reads it before the
rebinding: the interpreter's value of it at that point is exact, so Dynamo, which
specialises on ``None``, traces the branch the analysis folds to.  Inside a loop that is not
so (``for x in xs: if h is None: h = x``): the first iteration sees ``None``, later ones the
rebound value.
"""

from __future__ import annotations

from typing import Dict, Tuple

import libcst as cst

from pt2lint.analysis.walk import walk

_MEMO: Dict[int, Tuple[cst.FunctionDef, frozenset]] = {}
_MEMO_MAX = 4096  # entries keep their trees alive: bounded, for long-lived processes (the LSP server)


def _bound_in(node: cst.CSTNode) -> set:
    names = set()
    for n in walk(node):
        targets = ()
        if isinstance(n, cst.AssignTarget):
            targets = (n.target,)
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            targets = (n.target,)
        elif isinstance(n, cst.WithItem) and n.asname is not None:
            targets = (n.asname.name,)
        elif isinstance(n, cst.ExceptHandler) and n.name is not None:
            targets = (n.name.name,)
        elif isinstance(n, cst.Del):
            targets = (n.target,)
        elif isinstance(n, cst.Nonlocal):
            names.update(a.name.value for a in n.names)
        for t in targets:
            names.update(x.value for x in walk(t) if isinstance(x, cst.Name))
    return names


def loop_rebound_names(fn_node: cst.FunctionDef) -> frozenset:
    """Names bound inside a ``for``/``while`` loop of ``fn_node`` (targets and bodies), or declared
    ``nonlocal`` in a nested function; memoised per node."""
    key = id(fn_node)
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is fn_node:
        return hit[1]
    names = set()
    for n in walk(fn_node.body):
        if isinstance(n, (cst.For, cst.While)):
            names |= _bound_in(n)
        elif isinstance(n, cst.Nonlocal):
            names.update(a.name.value for a in n.names)
    result = frozenset(names)
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[key] = (fn_node, result)
    return result


def straight_line_parameter(fn_node, name: str, loop_depth: int) -> bool:
    """``name`` is a parameter of ``fn_node`` that no loop rebinds, read outside any loop."""
    params = getattr(fn_node, "params", None)
    if not isinstance(params, cst.Parameters) or loop_depth > 0:
        return False
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    return name in names and name not in loop_rebound_names(fn_node)
