"""PTC322: sorting tensors (or tuples holding tensors) in a compiled region.

Dynamo sorts a list only when every sort key is a Python constant; measured on torch 2.13
(``fullgraph=True`` and the graph_breaks log): ``sorted(d.items())`` of a dict whose values
are tensors, ``sorted([t1, t2])`` and ``sorted(xs, key=lambda t: t.sum())`` break with
"sort with non-constant keys" (GB0207), as does ``sorted(t)`` of a tensor (its elements are
tensors), while ``sorted(d.items())`` of a dict of Python
numbers, ``sorted(d)`` (its string keys) and ``sorted(x.shape)`` do not.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from pt2lint.analysis import dicts
from pt2lint.analysis.kinds import UNKNOWN, Kind, Value
from pt2lint.analysis.names import loaded_names
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


def _holds_non_constant(v: Optional[Value], depth: int = 0) -> bool:
    """A sure tensor, or an object instance (a module, ``self``, an instance of a project class), or a
    tuple/list whose elements include one.  Measured on torch 2.13: ``sorted(d.items())`` breaks with
    GB0207 when a value is an ``nn.Module`` or an instance of a plain class, as when it is a tensor,
    and not when the values are numbers, strings, ``None``, or tuples/lists of them."""
    if v is None or depth > 3:
        return False
    if v.kind in (Kind.MODULE, Kind.SELF):
        return not v.maybe_none and not v.weak
    if v.kind is Kind.CONTAINER:
        if v.elts is not None:
            return any(_holds_non_constant(e, depth + 1) for e in v.elts)
        return _holds_non_constant(v.elt, depth + 1)
    return _holds_tensor(v, depth)


def _key_lambda(ev) -> Optional[cst.Lambda]:
    """The ``key=`` argument of the call, when it is a ``lambda`` written there."""
    key_node = next((a.value for a in ev.node.args if a.keyword is not None and a.keyword.value == "key"), None)
    return key_node if isinstance(key_node, cst.Lambda) else None


def _key_holds_tensor(interp, ev, items: Value) -> bool:
    """True when ``key=`` is a ``lambda`` written in the call whose value, for an element
    of the sorted items, is (or holds) a sure tensor.  Any other key (a named function, a
    ``lambda`` bound elsewhere, one whose value is unknown) says nothing: not flagged."""
    key_node = _key_lambda(ev)
    if key_node is None:
        return False
    element = items.element() if items is not None else None
    result = interp.lambda_result(key_node, [element if element is not None else UNKNOWN])
    return _holds_tensor(result)


class SortNonConstant(Rule):
    """PTC322: ``sorted(...)``/``list.sort()`` whose sort keys are tensors (or hold tensors)."""

    code = "PTC322"

    # the last ``d.items()``/``d.values()`` call seen and its receiver: the argument of a
    # ``sorted(d.items())`` is evaluated just before the ``sorted`` call
    _last_view: tuple = (None, None)

    def _known_dict_values(self, ev) -> tuple:
        """The values of the entries the analysis knows in the dict ``d`` of ``sorted(d.items())`` /
        ``sorted(d.values())`` (an open ``**kwargs`` dict keeps the keywords its callers wrote), or
        ``()``."""
        arg = ev.node.args[0].value if ev.node.args else None
        node, receiver = self._last_view
        if arg is None or arg is not node:
            return ()
        entries = dicts.known_entries(receiver)
        return tuple(entries.values()) if entries else ()

    def on_call(self, interp, ev) -> None:
        if ev.method in ("items", "values") and not ev.args and ev.receiver is not None:
            self._last_view = (ev.node, ev.receiver)
            return
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
        # ``sorted(x[0])``: iterating a tensor gives tensors, compared as sort keys (measured on
        # torch 2.13: GB0207 at the call; ``sorted(x.shape)`` and ``sorted(x.tolist())`` are not
        # tensors here)
        sorts_a_tensor = items.kind is Kind.TENSOR and not items.weak and ev.method is None
        if not sorts_a_tensor and (items.kind is not Kind.CONTAINER or items.keys is not None):
            return  # a dict with known keys: sorting it sorts its (string) keys
        element = items.element()
        if not _holds_non_constant(element):
            element = next((v for v in self._known_dict_values(ev) if _holds_non_constant(v)), None)
            if element is None:
                return
        what = "tensors" if _holds_tensor(element) else "objects (modules or class instances)"
        interp.report(
            self.code, ev.node,
            f"sorting values that hold {what}: Dynamo sorts only constant keys, graph break "
            "(sort the Python keys alone, e.g. `sorted(d)` then `d[k]`, or use `torch.sort`)",
        )


class MinMaxKey(Rule):
    """PTC325: builtin ``min(...)``/``max(...)`` with ``key=`` over tensors, modules or objects.

    Dynamo's handler of the ``min``/``max`` builtins takes no ``key`` argument, and falls back
    to folding the call only when every argument is a Python constant; measured on torch 2.13
    (graph_breaks log): ``max(ts, key=lambda t: t.shape[0])`` over tensors, ``max(*ts, key=...)``,
    ``min(pairs, key=lambda p: p[1])`` over tuples holding tensors and ``min(layers,
    key=lambda m: m.out_features)`` over modules break with "invalid call to builtin op
    handler" (GB0193), whatever the key returns, while ``max(x.shape, key=...)``,
    ``max(range(n), key=...)``, ``max(d, key=d.get)`` of a dict with string keys and ``max(ts)``
    without a key do not.  A key ``lambda`` that reads a tensor or ``self`` from the enclosing
    function makes the call non-constant too (``max(range(3), key=lambda j: self.sizes[j])``
    breaks the same way).
    """

    code = "PTC325"

    def on_call(self, interp, ev) -> None:
        if ev.qualname in ("builtins.min", "builtins.max") and "default" in ev.kwargs and _generator_argument(ev.node):
            # measured on torch 2.13: ``max((i for i, u in enumerate(used) if u), default=-1)`` breaks
            # (GB0193, then the frame runs eagerly); ``max(lst, default=-1)`` and ``max(gen)`` trace
            name = ev.qualname.split(".", 1)[1]
            interp.report(
                self.code, ev.node,
                f"`{name}(<iterator>, default=...)`: Dynamo cannot call `{name}` with `default=` on a generator or iterator: graph "
                f"break (GB0193), and the rest of the function runs eagerly (build a list first: `{name}([...], default=...)`)",
            )
            interp.end_frame(self.code, ev.node)
            return
        if ev.qualname not in ("builtins.min", "builtins.max") or "key" not in ev.kwargs or not ev.args:
            return
        if len(ev.args) == 1 and not any(a.star for a in ev.node.args):
            items = ev.args[0]
            if items.kind not in (Kind.CONTAINER, Kind.MODULE, Kind.TENSOR) or items.keys is not None:
                return  # (a dict with known keys iterates over its string keys)
            if items.kind is Kind.MODULE and items.elt is None:
                return  # a module that is not a known container of modules
            candidates = [items.element() if items.kind is not Kind.TENSOR else items]
        else:
            candidates = list(ev.args)  # ``max(a, b, key=...)``, ``max(*ts, key=...)``
        name = ev.qualname.split(".", 1)[1]
        held = next((c for c in candidates if _holds_non_constant(c)), None)
        if held is not None:
            what = "over tensors" if _holds_tensor(held) else "over objects (modules or class instances)"
        else:
            captured = _key_captures(interp, ev)
            if captured is None:
                return
            what = f"whose key `lambda` reads `{captured}`, not a Python constant"
        interp.report(
            self.code, ev.node,
            f"`{name}(..., key=...)` {what}: Dynamo's `{name}` takes no `key` unless every value is a Python "
            f"constant, graph break (GB0193) (compute the keys as a tensor and use `torch.arg{name}`, or pick by "
            f"Python keys alone)",
        )


def _key_captures(interp, ev) -> Optional[str]:
    """The first name a ``key=lambda ...`` written in the call reads from the enclosing function
    whose value is a tensor, a module (``self``) or another object, else ``None``: Dynamo folds a
    ``min``/``max`` with a key only when the key function, its closure included, is constant
    (measured on torch 2.13: ``max(range(3), key=lambda j: self.sizes[j])`` in a module's
    ``forward`` breaks, ``key=lambda j: w[j]`` with ``w`` a list of ints does not)."""
    key_node = _key_lambda(ev)
    if key_node is None or interp.frame is None:
        return None
    params = {p.name.value for p in key_node.params.params + key_node.params.kwonly_params}
    for sub in (key_node.params.star_arg, key_node.params.star_kwarg):
        if isinstance(sub, cst.Param):
            params.add(sub.name.value)
    for name in loaded_names([key_node.body]):
        if name not in params:
            v = interp.frame.lookup(name)
            if v is not None and (v.kind is Kind.SELF or _holds_non_constant(v)):
                return name
    return None


#: Builtins that return an iterator (not a list): ``max(map(len, words), default=0)`` broke as a
#: generator expression does (measured on torch 2.13, GB0193).
_ITERATOR_BUILTINS = frozenset({"map", "filter", "zip", "reversed", "iter", "enumerate"})


def _generator_argument(call: cst.Call) -> bool:
    """``call``'s one positional argument is written as a generator expression or a call of a
    builtin that returns an iterator (``map``, ``filter``...)."""
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) != 1 or positional[0].star:
        return False
    value = positional[0].value
    if isinstance(value, cst.GeneratorExp):
        return True
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _ITERATOR_BUILTINS
