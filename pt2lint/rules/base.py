"""Rule plumbing: the base class, the event dispatch, and the findings sink."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst


class Rule:
    """A lint rule: a small class reacting to interpreter events.

    Subclasses set ``code`` (matching a spec in ``rules/``) and implement any of
    ``on_call``, ``on_test``, ``on_index``, ``on_write``, ``on_state_write`` and
    ``on_assert``, ``on_attr_store``, ``on_global_write``, ``on_key``, ``on_format``, ``on_generator_break``, ``on_sourceless_call_break``, ``on_lookup_break``, ``on_index_store``, ``on_hook_handle``, ``on_context_manager``, ``on_sequence_index``, ``on_submodule_access``, ``on_tensor_contains``; each receives the interpreter (``interp.settings``,
    ``interp.report``) and the event (:mod:`pt2lint.analysis.events`).

    ``on_module(index, report)`` is the one handler that is not about compiled regions:
    it is called once per linted file with its :class:`~pt2lint.analysis.index.ModuleIndex`
    and ``report(code, node, message, stmt, header)``, for rules about code that runs
    outside ``forward`` (deprecated APIs, how a model is wrapped before it is compiled).
    """

    code: str = ""
    HANDLERS = (
        "on_call", "on_test", "on_index", "on_write", "on_state_write", "on_assert", "on_attr_store",
        "on_global_write", "on_key", "on_module", "on_construct", "on_format", "on_random_arith", "on_generator_break",
        "on_sourceless_call_break", "on_lookup_break", "on_index_store", "on_hook_handle", "on_context_manager",
        "on_sequence_index", "on_submodule_access", "on_tensor_contains", "on_function_attr_store",
    )

    def __init__(self, settings) -> None:
        self.settings = settings


class RawFinding:
    """A finding before positions are resolved."""

    __slots__ = ("code", "node", "message", "chain", "stmt", "header", "extra", "module", "sites")

    def __init__(self, code, node, message, chain, stmt, header, extra, module=None, sites=()) -> None:
        self.module = module  # the ModuleIndex the node belongs to
        self.sites = sites  # (module, call node, stmt, header) of the call made from each outer frame
        self.code = code
        self.node = node
        self.message = message
        self.chain = chain
        self.stmt = stmt
        self.header = header
        self.extra = extra


class FindingSink:
    """Collects findings, one per (code, node, anchor): the first call chain that reaches a node wins.

    ``anchor`` is None for a node in project code.  For a node inside an installed package
    (``follow-imports``) it is the innermost call from project code that reaches it, where the
    finding is reported: each such call breaks the graph on its own (Dynamo reports the break at
    every call site), so two project calls of one library function give two findings.
    """

    def __init__(self) -> None:
        self.items: List[RawFinding] = []
        self._seen: Dict[tuple, RawFinding] = {}
        self._first: Dict[Tuple[str, int], RawFinding] = {}

    def record(
        self, code: str, node: cst.CSTNode, message: str, chain, stmt, header, extra, module=None, sites=(), anchor=None
    ) -> None:
        key = (code, id(node), id(anchor) if anchor is not None else None)
        if key in self._seen:
            return
        f = RawFinding(code, node, message, tuple(chain), stmt, header, extra, module, tuple(sites))
        self._seen[key] = f
        self._first.setdefault((code, id(node)), f)
        self.items.append(f)

    def recorded(self, code: str, node: cst.CSTNode) -> Optional[RawFinding]:
        """The first finding recorded for ``code`` at ``node``, if any."""
        return self._first.get((code, id(node)))


class Dispatch:
    """The enabled rules' handlers, grouped by event name."""

    def __init__(self, rules: List[Rule]) -> None:
        self.rules = rules
        self.handlers: Dict[str, list] = {}
        for rule in rules:
            for name in Rule.HANDLERS:
                fn = getattr(rule, name, None)
                if fn is not None:
                    self.handlers.setdefault(name, []).append(fn)
        self.findings = FindingSink()


def call_name(event) -> Optional[str]:
    """A short display name of the called function for messages (``torch.nonzero``, ``.item()``)."""
    if event.qualname:
        return event.qualname.replace("builtins.", "")
    if event.method:
        return f".{event.method}()"
    return None


def is_attr_call(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Attribute)
