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


def stored_iterator_next(interp, ev, memo: dict):
    """``next(self.<attr>)`` / ``next(<global>)`` (with or without a default) in a compiled region
    on an iterator built outside it (in ``__init__``, at module level), with what Dynamo does.

    The iterator's constructor is the ``iterator`` mark of the argument's value
    (:attr:`pt2lint.analysis.kinds.Value.iterator`); an attribute the call assigns before it reads
    it, one a method other than ``__init__`` assigns (``forward`` or a ``reset()`` may rebuild it),
    or an object built inside the region, may hold an iterator Dynamo built itself, which it
    steps without a break or a guard: not matched.  A local name is not followed (it may hold an
    iterator the region built).

    Args:
        interp: the interpreter, at the call.
        ev: the ``on_call`` event.
        memo: the calling rule's cache for :func:`pt2lint.rules.recompile.same_state_every_call`.

    Returns:
        ``(subject, constructor, outcome, gb)``: the argument as written (``"self.steps"``,
        ``"STEPS"``), the ``iterator_objects`` key, ``"breaks"`` or ``"recompiles"``, and the
        graph-break id (``"GB4347"``) or None; None when the call is no such ``next()``.
        Source: ``dynamo_facts.iterator_next``.
    """
    from pt2lint.rules.recompile import same_state_every_call

    if ev.qualname != "builtins.next" or not ev.args or not isinstance(ev.node, cst.Call) or not ev.node.args:
        return None
    first = ev.node.args[0]
    made = ev.args[0].iterator
    if first.keyword is not None or first.star or made is None:
        return None
    fact = facts.iterator_next(made)
    if fact is None:
        return None
    subject = first.value
    if isinstance(subject, cst.Attribute) and isinstance(subject.value, cst.Name) and subject.value.value == "self":
        attr = subject.attr.value
        if interp.fresh_self() or same_state_every_call(interp, memo, attr, ev.node) or _rebuilt_outside_init(interp, attr):
            return None
        return f"self.{attr}", made, fact[0], fact[1]
    if interp.is_module_global(subject):
        return subject.value, made, fact[0], fact[1]
    return None


def _rebuilt_outside_init(interp, attr: str) -> bool:
    """A method of the running object's class (or a base) other than ``__init__`` assigns
    ``self.<attr>``: the iterator ``next()`` meets may be one the compiled region built (``self.it =
    iter(...)`` in ``forward`` or in a ``reset()`` it calls), which Dynamo steps without a break."""
    from pt2lint.analysis.index import ClassInfo
    from pt2lint.analysis.interp import _self_attrs_written

    sv = interp.frame.self_value if interp.frame is not None else None
    if sv is None or not isinstance(sv.ref, ClassInfo):
        return True  # (not a method of a known class: say nothing)
    return any(
        attr in _self_attrs_written(fn.node)
        for cls in sv.ref.mro()
        for name, fn in cls.methods.items()
        if name != "__init__" and getattr(fn, "node", None) is not None
    )


def iterator_words(made: str) -> str:
    """``"builtins.iter:list"`` -> ``"a `list_iterator` (`iter()` of a list)"``."""
    typ = facts.iterator_type(made)
    if made == "generator":
        return "a generator"
    if ":" in made:
        ctor, _, of = made.partition(":")
        return f"a `{typ}` (`{ctor[9:]}()` of a {of})"
    return f"a `{typ}` object (`{made[9:] if made.startswith('builtins.') else made}()`)"


class StoredIteratorNext(Rule):
    """PTC331: ``next(self.it)`` in a compiled region on an iterator ``__init__`` built, of a type
    Dynamo cannot step ("Missing tp_iternext", GB4347).

    Dynamo wraps an iterator it finds on ``self`` or in a global as an opaque object unless its
    builder has a handler for the type; ``next()`` on such an object breaks the graph.  Which
    iterator types break and which are tracked instead (those recompile: PTC501/PTC503) is the
    ``iterator_objects`` section of ``pt2lint/data/dynamo_facts.json``, one probe per
    constructor (``tools/gen_dynamo_facts.py``).  Facts: rules/PTC331-stored-iterator-next.toml.
    """

    code = "PTC331"

    def __init__(self, settings) -> None:
        super().__init__(settings)
        self._memo: dict = {}

    def on_call(self, interp, ev) -> None:
        found = stored_iterator_next(interp, ev, self._memo)
        if found is None or found[2] != "breaks":
            return
        subject, made, _, gb = found
        interp.report(
            self.code,
            ev.node,
            f"`next({subject})` on {iterator_words(made)} built outside the compiled region: Dynamo cannot "
            f"step this iterator: graph break ({gb}) (step it outside the compiled region and pass the item to "
            f"forward, or keep the values in a tensor indexed by a step counter held in a buffer)",
        )
