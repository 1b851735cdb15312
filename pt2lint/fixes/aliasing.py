"""Where else a forward input may be reachable when it is written in place.

``x.add_(1)`` changes the tensor, so every other reference to it sees the change;
``x = x.add(1)`` only rebinds ``x``.  The ``out-of-place`` rewrite is therefore
equivalent only when, at the write, no other reference to the input (or to a view
of it) can be read again.  References are made (syntactically, with the
interpreter's facts for kinds and aliases):

* by binding another name to it, to a view of it or to a container, object or
  closure holding it (``y = x.view(-1)``, ``keep = [x]``, ``f = lambda: y``), when
  that name is read after the write;
* by storing it where the function no longer controls the reads: an attribute or
  an item (``self.saved = x``, ``cache[k] = x``), a ``global``/``nonlocal`` name, a
  container mutator (``keep.append(x)``), the default of a nested function, a
  closure over another name of it, or an argument of a call that may keep its
  arguments (an unknown callable, a function of this file that stores state).

Inside a loop, the whole loop body counts as both before and after the write
(the next iteration writes what this one stored); a ``for`` loop's iterable is
evaluated once, before the loop.  Every judgement errs towards
"reachable": an unknown value that may hold the input holds it.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from pt2lint.analysis import torch_api as api
from pt2lint.analysis.index import ClassInfo, FunctionInfo
from pt2lint.analysis.kinds import Kind
from pt2lint.analysis.walk import walk
from pt2lint.fixes.context import FixContext
from pt2lint.analysis.names import _not_loads, target_names
from pt2lint.fixes.purity import _CONTAINER_MUTATORS, MAY_ALIAS_METHODS, PURE_BUILTINS, VIEW_LIKE_FUNCTIONS

# Builtins whose result never references their arguments (numbers, strings, bools, types).
_FRESH_BUILTINS = frozenset(
    "len isinstance issubclass hasattr callable id hash repr str format int float bool complex round abs type divmod pow ascii".split()
)
# Builtins that keep no reference to their arguments once they return.
_NON_RETAINING_BUILTINS = PURE_BUILTINS | frozenset({"print", "id", "hash", "ascii"})
# Tensor methods (besides views and in-place ops) whose result shares memory with the receiver.
_SHARING_METHODS = frozenset({"numpy", "storage", "untyped_storage", "__getitem__", "as_subclass"})
# torch functions that may return their argument itself or share its memory.
_SHARING_FUNCTIONS = frozenset(
    "as_tensor asarray from_numpy Parameter Buffer dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout".split()
)
# torch.nn modules whose call may return the input itself (``Identity``; dropout in eval mode,
# measured on torch 2.13: ``nn.Dropout().eval()(x) is x``), a view of it, or write it in place.
_PASS_THROUGH_MODULES = frozenset({"Identity", "Flatten", "Unflatten"}) | frozenset(api.INPLACE_MODULE_POS)


def _function_facts(ctx: FixContext, func: cst.FunctionDef) -> Tuple[List[cst.CSTNode], Set[int], Set[str], Set[int]]:
    """What every write in ``func`` shares, computed once per function (a forward with hundreds of
    in-place writes asks for each): its nodes in order, the ids of nodes inside nested function and
    class bodies (captured, not run where they stand), its ``global``/``nonlocal`` names, and the ids
    of its names that are not reads (:func:`~pt2lint.analysis.names._not_loads`)."""
    return ctx.per_node("input-references", func, lambda: _compute_function_facts(func))  # type: ignore[return-value]


def _compute_function_facts(func: cst.FunctionDef) -> Tuple[List[cst.CSTNode], Set[int], Set[str], Set[int]]:
    order = list(walk(func.body))
    nested: Set[int] = set()
    for n in order:
        if isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            nested.update(id(m) for m in walk(n.body))
    declared = {
        item.name.value for n in order if isinstance(n, (cst.Global, cst.Nonlocal)) for item in n.names if isinstance(item.name, cst.Name)
    }
    return order, nested, declared, _not_loads(order, flat=True)


class InputReferences:
    """Finds references to a forward input that an in-place write would reach and a rebinding would not.

    Args:
        ctx: the file's context (facts: call events, value kinds and aliases).
        func: the function holding the write.
        stmt: the statement of the write (``x.add_(...)`` or ``x += ...``).
        receiver: the name written (``x``).
        alias: the forward input ``receiver`` shares storage with (``x``, or ``hidden_states``
            for ``residual = hidden_states; residual *= 0.5``).
    """

    def __init__(self, ctx: FixContext, func: cst.FunctionDef, stmt: cst.CSTNode, receiver: str, alias: str) -> None:
        self.ctx = ctx
        self.func = func
        self.stmt = stmt
        self.receiver = receiver
        self.holders: Set[str] = {receiver, alias}
        self._stores_memo: Dict[int, bool] = {}
        order, self._nested, self._declared, self._skip = _function_facts(ctx, func)
        inside = {id(n) for n in walk(stmt)}
        index = next(i for i, n in enumerate(order) if n is stmt)
        loop = self._outermost_loop(stmt)
        # the loop's body (and a ``while`` test) runs again after the write; a ``for``'s iterable
        # is evaluated once, before it
        looped: Set[int] = set()
        if loop is not None:
            for part in (loop.body, loop.test if isinstance(loop, cst.While) else None):
                if part is not None:
                    looped.update(id(n) for n in walk(part))
        self.before: List[cst.CSTNode] = [n for i, n in enumerate(order) if (i < index or id(n) in looped or id(n) in inside) and n is not stmt]
        self.after: List[cst.CSTNode] = [n for i, n in enumerate(order) if (i > index or id(n) in looped) and id(n) not in inside]

    def _outermost_loop(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        found = None
        cur = self.ctx.parent(node)
        while cur is not None and cur is not self.func:
            if isinstance(cur, (cst.For, cst.While)):
                found = cur
            cur = self.ctx.parent(cur)
        return found

    # ------------------------------------------------------------------ the verdict
    def reachable(self) -> Optional[str]:
        """Why another reference to the input would miss an out-of-place write, or ``None``."""
        self._grow_holders()
        for n in self.before:
            if id(n) in self._nested:
                continue
            why = self._store(n)
            if why is not None:
                return why
        skip = self._skip  # the function's non-read names: the same for the nodes after the write
        for n in self.after:
            if isinstance(n, cst.Name) and id(n) not in skip and n.value in self.holders and n.value != self.receiver:
                return f"`{n.value}` shares storage with the written tensor and is read afterwards, so it would no longer see the write"
        return None

    def _grow_holders(self) -> None:
        """Names bound before the write to something that may reference the input (to a fixed point)."""
        changed = True
        while changed:
            changed = False
            for n in self.before:
                if id(n) in self._nested:
                    continue
                for names, value in _bindings(n):
                    if not self.holds(value):
                        continue
                    for name in names:
                        if name not in self.holders:
                            self.holders.add(name)
                            changed = True

    def _store(self, n: cst.CSTNode) -> Optional[str]:
        code = self._code
        if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            value = n.value
            if value is None or not self.holds(value):
                return None
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
            for t in targets:
                for part in _target_parts(t):
                    if isinstance(part, (cst.Attribute, cst.Subscript)):
                        return f"`{code(n)}` stores the input where it may be read later, which would no longer see the write"
                    if isinstance(part, cst.Name) and part.value in self._declared:
                        return f"`{code(n)}` stores the input in a `global`/`nonlocal` name, which would no longer see the write"
            return None
        if isinstance(n, (cst.FunctionDef, cst.Lambda)):
            params = n.params
            for p in list(params.params) + list(params.posonly_params) + list(params.kwonly_params):
                if p.default is not None and self.holds(p.default):
                    return f"`{code(p)}` keeps the input as a default value, which would no longer see the write"
            body = n.body
            free = {m.value for m in walk(body) if isinstance(m, cst.Name)} & (self.holders - {self.receiver})
            if free:
                return f"a closure captures `{sorted(free)[0]}`, which shares storage with the written tensor"
            return None
        if isinstance(n, cst.Call):
            return self._call_store(n)
        return None

    # ------------------------------------------------------------------ values
    def holds(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr`` may evaluate to the input, a view of it, or something that references it."""
        facts = self.ctx.facts
        if isinstance(expr, cst.Name):
            return expr.value in self.holders
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in api.TENSOR_CONST_ATTRS or expr.attr.value == "shape":
                return False
            return self.holds(expr.value)
        if isinstance(expr, cst.Subscript):
            return self.holds(expr.value)
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return any(self.holds(el.value) for el in expr.elements)
        if isinstance(expr, cst.Dict):
            return any(
                self.holds(el.value) or (isinstance(el, cst.DictElement) and self.holds(el.key)) for el in expr.elements
            )
        if isinstance(expr, cst.StarredElement):
            return self.holds(expr.value)
        if isinstance(expr, cst.IfExp):
            return self.holds(expr.body) or self.holds(expr.orelse)
        if isinstance(expr, cst.BooleanOperation):
            return self.holds(expr.left) or self.holds(expr.right)
        if isinstance(expr, cst.NamedExpr):
            return self.holds(expr.value)
        if isinstance(expr, (cst.UnaryOperation, cst.Comparison)):
            return False
        if isinstance(expr, cst.BinaryOperation):
            v = facts.value(expr)
            if v is not None and v.kind is Kind.TENSOR:
                return False  # a tensor operator allocates its result
            return self.holds(expr.left) or self.holds(expr.right)
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis)):
            return False
        if isinstance(expr, cst.Call):
            return self._call_holds(expr)
        if isinstance(expr, cst.Lambda):
            return any(isinstance(m, cst.Name) and m.value in self.holders - {self.receiver} for m in walk(expr))
        # comprehensions, await, yield, ...: whatever mentions a holder may hold it
        return any(isinstance(m, cst.Name) and m.value in self.holders for m in walk(expr))

    def _args_hold(self, call: cst.Call) -> bool:
        return any(self.holds(a.value) for a in call.args)

    def _call_holds(self, call: cst.Call) -> bool:
        func = call.func
        ev = self.ctx.facts.calls.get(id(call))
        if isinstance(func, cst.Attribute) and self.holds(func.value):
            method = func.attr.value
            if method in api.VIEW_METHODS or method in MAY_ALIAS_METHODS or method in api.SPLIT_METHODS or method in _SHARING_METHODS:
                return True
            if api.is_inplace_method(method):
                return True  # returns its receiver
            recv = ev.receiver if ev is not None else self.ctx.facts.value(func.value)
            if recv is None or recv.kind is not Kind.TENSOR:
                return True  # a container's or an object's method (``keep.copy()``, ``d.get(k)``)
            if not self._args_hold(call):
                return False  # another tensor method computes a new tensor
        if not self._args_hold(call):
            return False
        if any(a.keyword is not None and a.keyword.value == "inplace" for a in call.args):
            return True
        if ev is None:
            return True
        q = ev.qualname
        if q is not None:
            last = q.rsplit(".", 1)[-1]
            if q.startswith("builtins."):
                return last not in _FRESH_BUILTINS
            if q.startswith("torch."):
                if last in VIEW_LIKE_FUNCTIONS or last in MAY_ALIAS_METHODS or last in api.SPLIT_METHODS or last in _SHARING_FUNCTIONS:
                    return True
                if api.is_inplace_method(last) or last in api.INPLACE_FUNCTIONAL_POS:
                    return True
                return not api.is_tensor_function(q)
            if q.startswith("math."):
                return False
            return True
        callee = ev.callee
        if isinstance(callee, str) and callee.startswith(api.MODULE_BASES_PREFIX):
            return callee.rsplit(".", 1)[-1] in _PASS_THROUGH_MODULES
        result = ev.result
        if result is not None and result.kind in (Kind.CONST, Kind.SHAPE, Kind.NONE, Kind.DATA):
            return False
        if result is not None and result.kind is Kind.TENSOR and not result.weak and result.alias_of is None and isinstance(callee, (FunctionInfo, ClassInfo)):
            return False  # the interpreter followed the function: a new tensor
        return True

    def _call_store(self, call: cst.Call) -> Optional[str]:
        """Why ``call`` may keep a reference to one of its arguments that holds the input."""
        if not self._args_hold(call):
            return None
        text = self._code(call)
        ev = self.ctx.facts.calls.get(id(call))
        func = call.func
        if ev is None:
            return f"`{text}` passes the input to a call that may keep it"
        q = ev.qualname
        callee = ev.callee
        if isinstance(callee, str) and callee.startswith(api.MODULE_BASES_PREFIX):
            return None  # a torch.nn module's forward computes from its input, it keeps nothing
        if isinstance(callee, (FunctionInfo, ClassInfo)):
            if not self._may_store_callee(callee):
                return None
            return f"`{text}` passes the input to `{self._code(func)}`, which may keep it (it stores state)"
        if ev.method is not None and q is None:
            recv = ev.receiver
            if recv is not None and recv.kind is Kind.TENSOR:
                if ev.method == "set_":
                    return f"`{text}` makes another tensor share the input's storage"
                return None
            if ev.method in _CONTAINER_MUTATORS:
                return f"`{text}` puts the input in a container, which would no longer see the write"
            if recv is not None and recv.kind in (Kind.CONST, Kind.SHAPE, Kind.CONTAINER, Kind.NONE):
                return None
        if q is not None:
            if q.startswith("builtins."):
                return None if q[len("builtins."):] in _NON_RETAINING_BUILTINS else f"`{text}` may keep the input"
            if q.startswith("torch.") or q.startswith("math.") or q in api.THIRD_PARTY_TENSOR_FUNCTIONS:
                return None
            if q.startswith("operator.") and not q.startswith(("operator.i", "operator.set")):
                return None
            return f"`{text}` passes the input to `{q}`, which may keep it"
        return f"`{text}` passes the input to a call that may keep it"

    def _may_store(self, fn: FunctionInfo) -> bool:
        """Whether a function of this file may keep a reference to anything it is given: it
        assigns an attribute or an item, declares ``global``/``nonlocal``, yields, mutates a
        container, or calls something that may (conservatively: anything not resolved)."""
        key = id(fn.node)
        if key in self._stores_memo:
            return self._stores_memo[key]
        self._stores_memo[key] = False  # recursion: assume the best while in progress
        verdict = False
        facts = self.ctx.facts
        for n in walk(fn.node.body):
            if isinstance(n, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
                if any(isinstance(p, (cst.Attribute, cst.Subscript)) for t in targets for p in _target_parts(t)):
                    verdict = True
            elif isinstance(n, (cst.Global, cst.Nonlocal, cst.Yield)):
                verdict = True
            elif isinstance(n, cst.Call):
                ev = facts.calls.get(id(n))
                if ev is None:
                    verdict = True
                elif isinstance(ev.callee, str) and ev.callee.startswith(api.MODULE_BASES_PREFIX):
                    pass
                elif isinstance(ev.callee, (FunctionInfo, ClassInfo)):
                    verdict = self._may_store_callee(ev.callee)
                elif ev.qualname is not None:
                    q = ev.qualname
                    if q.startswith("builtins."):
                        verdict = q[len("builtins."):] not in _NON_RETAINING_BUILTINS
                    elif not (q.startswith(("torch.", "math.")) or q in api.THIRD_PARTY_TENSOR_FUNCTIONS):
                        verdict = True
                elif ev.method is not None:
                    recv = ev.receiver
                    if ev.method in _CONTAINER_MUTATORS and (recv is None or recv.kind is not Kind.TENSOR):
                        verdict = True
                    elif recv is not None and recv.kind is Kind.TENSOR:
                        verdict = ev.method == "set_"
                    elif not (recv is not None and recv.kind in (Kind.CONST, Kind.SHAPE, Kind.CONTAINER, Kind.NONE)):
                        verdict = True
                else:
                    verdict = True
            if verdict:
                break
        self._stores_memo[key] = verdict
        return verdict

    def _may_store_callee(self, callee) -> bool:
        if isinstance(callee, ClassInfo):
            callee = callee.lookup_method("forward") or callee.lookup_method("__call__")
        return not isinstance(callee, FunctionInfo) or self._may_store(callee)

    def _code(self, node: cst.CSTNode) -> str:
        text = " ".join(self.ctx.module.code_for_node(node).split())
        return text if len(text) <= 60 else text[:57] + "..."


def _bindings(n: cst.CSTNode) -> List[Tuple[List[str], cst.BaseExpression]]:
    """``(names, value)`` pairs for the names ``n`` binds: each name may reference the input
    when ``value`` may (an unpacked element or a loop variable takes a part of ``value``)."""
    if isinstance(n, cst.Assign):
        return [p for a in n.targets for p in _pair(a.target, n.value, False)]
    if isinstance(n, (cst.AnnAssign, cst.AugAssign)) and n.value is not None:
        return _pair(n.target, n.value, False)
    if isinstance(n, cst.NamedExpr):
        return _pair(n.target, n.value, False)
    if isinstance(n, (cst.For, cst.CompFor)):
        return _pair(n.target, n.iter, True)
    if isinstance(n, cst.WithItem) and n.asname is not None:
        return _pair(n.asname.name, n.item, False)
    return []


def _pair(target: cst.BaseExpression, value: cst.BaseExpression, element: bool) -> List[Tuple[List[str], cst.BaseExpression]]:
    """Match an unpacking target with the parts of ``value`` it takes (``a, b = x, 1``;
    ``for f, m in zip(feats, mods)``; ``for i, t in enumerate(xs)``); ``element``: the target
    takes one element of ``value`` at a time."""
    if isinstance(target, (cst.Tuple, cst.List)) and not any(isinstance(el, cst.StarredElement) for el in target.elements):
        parts = [el.value for el in target.elements]
        if not element and isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(parts) and not any(
            isinstance(el, cst.StarredElement) for el in value.elements
        ):
            return [p for t, v in zip(parts, value.elements) for p in _pair(t, v.value, False)]
        if element and isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and all(a.keyword is None and not a.star for a in value.args):
            args = [a.value for a in value.args]
            if value.func.value == "zip" and len(args) == len(parts):
                return [p for t, v in zip(parts, args) for p in _pair(t, v, True)]
            if value.func.value == "enumerate" and len(args) == 1 and len(parts) == 2:
                return _pair(parts[1], args[0], True)  # the index is a number
    return [([t.value for t in target_names(target)], value)]


def _target_parts(target: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [p for el in target.elements for p in _target_parts(el.value)]
    if isinstance(target, cst.StarredElement):
        return _target_parts(target.value)
    return [target]


__all__ = ["InputReferences"]
