"""Construction sites: the ``Cls(...)`` calls of a module that build one of its own classes.

A class whose constructor parameters are not annotated is analysed with those parameters of
unknown value: ``self.rnn = getattr(nn, rnn_type)(...)`` is a module of unknown class,
``self.filterbank = filterbank`` an object whose methods cannot be followed, and code under
``if self.verbose:`` is analysed whatever the flag.  Dynamo, tracing one model, sees the values
the model was built with.  Where a function or method of the module itself builds the class (a
parent's ``__init__`` building its submodules, a factory), every such call is a construction
site, and what the sites pass is what an instance of the class can hold (module-level code, such
as a ``__main__`` demo, is one way among others to build a public class, and does not count).

:func:`pt2lint.analysis.callers.calls_named` finds the calls (from the module's call index, with
the function each call is in, so that a local name that shadows the class is not taken for it);
:func:`bound_in` and :func:`bind_call` here, and
:meth:`pt2lint.analysis.interp.Interpreter.site_parameters`, read their arguments.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from pt2lint.analysis.names import bound_names

_bound: Dict[int, Tuple[cst.FunctionDef, frozenset]] = {}


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
