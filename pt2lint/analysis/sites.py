"""Construction sites: the ``Cls(...)`` calls of a module that build one of its own classes.

A class whose constructor parameters are not annotated is analysed with those parameters of
unknown value: ``self.rnn = getattr(nn, rnn_type)(...)`` is a module of unknown class,
``self.filterbank = filterbank`` an object whose methods cannot be followed, and code under
``if self.verbose:`` is analysed whatever the flag.  Dynamo, tracing one model, sees the values
the model was built with.  Where a function or method of the module itself builds the class (a
parent's ``__init__`` building its submodules, a factory), every such call is a construction
site, and what the sites pass is what an instance of the class can hold (module-level code, such
as a ``__main__`` demo, is one way among others to build a public class, and does not count).

:func:`calls_by_name` finds the calls (once per module, with the function each call is in, so
that a local name that shadows the class is not taken for it);
:meth:`pt2lint.analysis.interp.Interpreter.site_parameters` reads their arguments.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from pt2lint.analysis.names import bound_names
from pt2lint.analysis.walk import iter_children

#: (the call, the function or lambda it is in, or ``None`` at module level or in a class body)
Site = Tuple[cst.Call, Optional[cst.FunctionDef]]

_calls: Dict[int, Tuple[cst.Module, Dict[str, List[Site]]]] = {}
_bound: Dict[int, Tuple[cst.FunctionDef, frozenset]] = {}
_MEMO_LIMIT = 256


def calls_by_name(module: cst.Module) -> Dict[str, List[Site]]:
    """Every call of ``module`` whose callee is a plain name, by that name.

    Calls inside lambdas count as calls of the enclosing function; the order within the lists
    is not the source order.  Memoised per module (a bounded number of them).
    """
    hit = _calls.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    out: Dict[str, List[Site]] = {}
    stack: List[Tuple[cst.CSTNode, Optional[cst.FunctionDef]]] = [(module, None)]
    while stack:
        node, fn = stack.pop()
        kind = type(node)
        if kind is cst.Call and type(node.func) is cst.Name:
            out.setdefault(node.func.value, []).append((node, fn))
        inner = node if kind is cst.FunctionDef else fn
        stack.extend((child, inner) for child in iter_children(node))
    if len(_calls) >= _MEMO_LIMIT:
        _calls.clear()
    _calls[id(module)] = (module, out)
    return out


def bound_in(fn: Optional[cst.FunctionDef]) -> frozenset:
    """The names ``fn`` binds locally (its parameters and every binding of its body), or the
    empty set at module level."""
    if fn is None:
        return frozenset()
    hit = _bound.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    params = fn.params
    names = {p.name.value for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    names.update(bound_names(list(body)))
    result = frozenset(names)
    if len(_bound) >= 4096:
        _bound.clear()
    _bound[id(fn)] = (fn, result)
    return result


def bind_call(call: cst.Call, params: cst.Parameters, skip_first: bool) -> Optional[Dict[str, Optional[cst.BaseExpression]]]:
    """The argument expression of each named parameter at ``call`` (``None`` for one the call
    omits, whose default applies), or ``None`` when the call cannot be bound statically
    (``*args``/``**kwargs`` at the call, too many positional arguments, an unknown keyword).

    Args:
        call: the ``Cls(...)`` call.
        params: the constructor's parameters.
        skip_first: drop the first parameter (``self``).
    """
    plist = list(params.posonly_params) + list(params.params)
    if skip_first:
        plist = plist[1:]
    names = [p.name.value for p in plist] + [p.name.value for p in params.kwonly_params]
    out: Dict[str, Optional[cst.BaseExpression]] = {n: None for n in names}
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args):
        return None
    if len(positional) > len(plist):
        return None
    for p, a in zip(plist, positional):
        out[p.name.value] = a.value
    for a in call.args:
        if a.keyword is None:
            continue
        key = a.keyword.value
        if key not in out or any(p.name.value == key for p in list(params.posonly_params)):
            return None
        out[key] = a.value
    return out
