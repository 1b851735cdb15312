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


def straight_line_local(fn_node, name: str, loop_depth: int) -> bool:
    """``name`` is bound in ``fn_node`` and no loop (nor a nested function's ``nonlocal``) rebinds
    it, read outside any loop: the interpreter's current value of it is the value it has on every
    run through this point (branches that rebind it were joined into that value)."""
    if loop_depth > 0 or not isinstance(getattr(fn_node, "body", None), cst.BaseSuite):
        return False
    return name not in loop_rebound_names(fn_node)


_READ_ONLY: Dict[Tuple[int, str], Tuple[cst.FunctionDef, bool]] = {}


def only_fields_read(fn_node, name: str) -> bool:
    """Every use of ``name`` in ``fn_node`` (nested functions included) other than binding it is a
    field read ``name.attr`` that is not called, stored to or deleted: no code of the function can
    change the object's fields after it is built (a method call, ``setattr``, or passing the object
    on could).  Memoised per node and name."""
    key = (id(fn_node), name)
    hit = _READ_ONLY.get(key)
    if hit is not None and hit[0] is fn_node:
        return hit[1]
    allowed = set()  # ids of Name nodes that are a binding or a plain field read
    for n in walk(fn_node):
        if isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name) and n.target.value == name:
            allowed.add(id(n.target))
        elif isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == name:
            allowed.add(id(n.value))
    stored, called = set(), set()
    for n in walk(fn_node):
        if isinstance(n, cst.Call):
            called.add(id(n.func))
        elif isinstance(n, cst.AssignTarget):
            stored.add(id(n.target))
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            stored.add(id(n.target))
        elif isinstance(n, cst.Del):
            stored.update(id(t) for t in walk(n.target))
    ok = True
    for n in walk(fn_node):
        if isinstance(n, cst.Attribute) and id(n.value) in allowed and (id(n) in called or id(n) in stored):
            ok = False
            break
        if isinstance(n, cst.Name) and n.value == name and id(n) not in allowed:
            if isinstance(fn_node, cst.FunctionDef) and n is fn_node.name:
                continue
            ok = False
            break
    if len(_READ_ONLY) >= _MEMO_MAX:
        _READ_ONLY.clear()
    _READ_ONLY[key] = (fn_node, ok)
    return ok
