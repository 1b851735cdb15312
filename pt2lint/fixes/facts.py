"""Read-only facts for codemods, taken from the abstract interpreter (DESIGN §2).

The codemods must not re-derive value kinds, so this module runs the very
:class:`~pt2lint.analysis.interp.Interpreter` the rules run on, subclassed only
to *record* what it computes:

* the :class:`~pt2lint.analysis.kinds.Value` of every expression it evaluates
  (joined over every call signature and loop iteration it was evaluated in);
* the local environment at the entry of every ``if`` statement, and at the
  normal exit of every block (the branches of an ``if``);
* every call event (qualified name, receiver kind, callee in the project) and every
  in-place write event;
* the raw findings of *every* rule, whatever the user selected, so that a
  codemod can tell whether a branch body holds a graph break or a side effect;
* the branch functions of ``torch.cond`` calls, which the analysis does not
  enter, are run with the operands' values (as Dynamo traces them), so a
  rewrite nested in another branch has facts too.

The module is analysed in the project model the rules use
(:mod:`pt2lint.analysis.project`): calls into helpers of other project files are
followed, and their findings, calls and writes are recorded with those files' nodes.

Nothing here changes what the lint reports; it is a second, recording run.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from pt2lint.analysis.events import CallEvent, WriteEvent
from pt2lint.analysis.index import ModuleIndex
from pt2lint.analysis.interp import COND_FUNCTIONS, Interpreter
from pt2lint.analysis.kinds import TENSOR, Value, join
from pt2lint.rules import RULES
from pt2lint.rules.base import Dispatch

Env = Dict[str, Optional[Value]]  # ``None``: the name may be unbound on some path


class Facts:
    """What the interpreter computed for one module, keyed by node identity.

    Attributes:
        values: ``id(expression) -> Value``.
        if_entry: ``id(If) -> env`` just before the test is evaluated.
        block_exit: ``id(IndentedBlock | SimpleStatementSuite) -> env`` after the
            block ran to its end (absent when the block always returns/raises).
        calls: ``id(Call) -> CallEvent`` (the first event seen for that call).
        writes: every in-place write event, in order.
        findings: raw findings of every rule (``code``, ``node``, ``stmt``, ``message``, ``chain``).
        index: the module index the run used (imports, classes, functions); its ``project``
            resolves the names the module imports.
        dependencies: ``(abs path, sha256 or None)`` of every other file the run read or
            looked for (as :attr:`pt2lint.analysis.driver.Analysis.dependencies`).
    """

    def __init__(self, index: ModuleIndex) -> None:
        self.values: Dict[int, Value] = {}
        self.if_entry: Dict[int, Env] = {}
        self.block_exit: Dict[int, Env] = {}
        self.calls: Dict[int, CallEvent] = {}
        self.writes: List[WriteEvent] = []
        self.findings: list = []
        self.index = index
        self.dependencies: Tuple[Tuple[str, Optional[str]], ...] = ()

    def value(self, node: cst.CSTNode) -> Optional[Value]:
        """The joined value of ``node``, or ``None`` when the interpreter never evaluated it
        (dead code, code outside every compiled region)."""
        return self.values.get(id(node))


def _ordered_union(a, b) -> List[str]:
    """The keys of ``a`` then those of ``b`` not in ``a``, in insertion order.

    A set union (``a.keys() | b.keys()``) iterates in hash order, which changes with
    ``PYTHONHASHSEED``; the branch-function parameters of a rewrite follow this order.
    """
    return list(a) + [k for k in b if k not in a]


def _join_env(old: Optional[Env], new: Dict[str, Value]) -> Env:
    if old is None:
        return dict(new)
    out: Env = {}
    for k in _ordered_union(old, new):
        a, b = old.get(k), new.get(k)
        out[k] = join(a, b) if a is not None and b is not None else None
    return out


class _Recorder:
    """Receives call and write events next to the rules (it reports nothing)."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts

    def on_call(self, interp, ev: CallEvent) -> None:
        self.facts.calls.setdefault(id(ev.node), ev)

    def on_write(self, interp, ev: WriteEvent) -> None:
        self.facts.writes.append(ev)


class _FactInterpreter(Interpreter):
    """The interpreter, recording values and environments as it goes (behaviour unchanged)."""

    def __init__(self, index, dispatch, settings, facts: Facts) -> None:
        super().__init__(index, dispatch, settings)
        self._facts = facts

    def eval(self, node):  # noqa: D102 - same contract as Interpreter.eval
        value = super().eval(node)
        if node is not None and not self.silent:
            key = id(node)
            old = self._facts.values.get(key)
            self._facts.values[key] = value if old is None else join(old, value)
        return value

    def _call_result(self, node, qual, method, receiver, callee_value, args, kwargs):  # noqa: D102
        # ``torch.cond(pred, true_fn, false_fn, operands)``: both branch functions are traced (their
        # bodies get facts too), and when both are functions the result is what they return
        if qual in COND_FUNCTIONS:
            chain = self.frame.chain if self.frame is not None else ()
            results = self._trace_cond_branches(args, kwargs, chain)
            return (join(results[0], results[1]) if len(results) == 2 else TENSOR), None
        return super()._call_result(node, qual, method, receiver, callee_value, args, kwargs)

    def exec_if(self, stmt, construct):  # noqa: D102
        if not self.silent and self.frame is not None:
            key = id(stmt)
            self._facts.if_entry[key] = _join_env(self._facts.if_entry.get(key), self.frame.env)
        return super().exec_if(stmt, construct)

    def exec_block(self, body):  # noqa: D102
        super().exec_block(body)  # raises when the block returns/raises/breaks: no exit env
        if not self.silent and self.frame is not None:
            key = id(body)
            self._facts.block_exit[key] = _join_env(self._facts.block_exit.get(key), self.frame.env)


def collect_facts(
    module: cst.Module, source: str, settings, filename: str = "-", *, overlay=None, data: Optional[bytes] = None,
) -> Facts:
    """Run every rule over ``module`` and the project code it calls, with a recording interpreter.

    The module is analysed as the entry of a project model
    (:func:`pt2lint.analysis.driver.entry_in_project`), exactly as the lint run analyses it:
    a helper imported from another project module (``from .utils import helper``, through
    re-exports and chains of imports) is followed, so its findings, writes and calls are in
    the facts, with nodes of that module.

    Args:
        module: the parsed module; node identities in the result refer to it.
        source: its text (decides whether to scan for ``torch.compile(f)`` calls, exactly as
            :func:`pt2lint.analysis.driver.analyse_findings` does).
        settings: the :class:`~pt2lint.settings.LintSettings` of the lint run (target and
            Dynamo knobs change kinds and findings; the rule selection is ignored: every
            rule runs).
        filename: the module's file (its imports resolve from there; ``"-"``: from the working
            directory, as for standard input).
        overlay: ``abs path -> text`` of unsaved editor buffers, read instead of the disk.
        data: the file's bytes as read, if known.

    Returns:
        The :class:`Facts` of the module.
    """
    from pt2lint.analysis.driver import ANALYSIS_LOCK, entry_in_project

    with ANALYSIS_LOCK:  # indexes of imported modules are shared between analyses in a process
        path, project, index = entry_in_project(module, source, filename, settings, data=data, overlay=overlay)
        facts = Facts(index)
        rules = [cls(settings) for cls in RULES.values()]
        dispatch = Dispatch(rules + [_Recorder(facts)])  # type: ignore[list-item]
        _FactInterpreter(index, dispatch, settings, facts).run()
        facts.findings = list(dispatch.findings.items)
        facts.dependencies = tuple(sorted((p, h) for p, h in project.deps.items() if p != path))
    return facts


__all__ = ["Facts", "collect_facts"]
