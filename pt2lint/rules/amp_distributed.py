"""PTC8xx: mixed precision and distributed code under ``torch.compile``.

What each rule claims was measured on torch 2.13 (CPU; two gloo ranks for the
collectives, ``tools/probe_distributed.py``); the specs in ``rules/PTC8*.toml`` carry the
evidence. Which names are deprecated and which collectives Dynamo rewrites into
functional collectives is read from torch by ``tools/gen_dynamo_facts.py``
(:func:`pt2lint.analysis.dynamo_facts.amp_deprecation`,
:func:`~pt2lint.analysis.dynamo_facts.collective`), not listed here.

Two rules look at the whole file rather than at compiled regions (``on_module``):
a deprecated API warns wherever it is called, and how a model is wrapped for FSDP is
written in the training script, outside any ``forward``.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

import libcst as cst

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis import torch_api as api
from pt2lint.analysis.imports import caught_exceptions
from pt2lint.analysis.kinds import Kind
from pt2lint.analysis.walk import children_in_source_order, iter_children
from pt2lint.rules.base import Rule

#: The autocast context-manager classes, by the names they are imported under.
AUTOCAST_CLASSES = api.CONTEXT_MANAGER_CLASSES
GRAD_SCALER_CLASSES = frozenset(
    """torch.amp.GradScaler torch.amp.grad_scaler.GradScaler torch.cuda.amp.GradScaler
    torch.cuda.amp.grad_scaler.GradScaler torch.cpu.amp.GradScaler torch.cpu.amp.grad_scaler.GradScaler""".split()
)
#: ``dist.get_rank()`` and friends: a different value on every rank.
RANK_FUNCTIONS = frozenset(
    """torch.distributed.get_rank torch.distributed.distributed_c10d.get_rank torch.distributed.get_node_local_rank
    torch.distributed.distributed_c10d.get_node_local_rank""".split()
)
FSDP_CLASSES = frozenset(
    """torch.distributed.fsdp.FullyShardedDataParallel
    torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel""".split()
)


def _constructed(value, classes) -> Optional[str]:
    """The class name when ``value`` is an instance built by calling one of ``classes`` (``ref`` ``"C()"``)."""
    ref = getattr(value, "ref", None) if value is not None else None
    if isinstance(ref, str) and ref.endswith("()") and ref[:-2] in classes:
        return ref[:-2]
    return None


def _method_on(ev, classes) -> Optional[str]:
    """For ``obj.method(...)`` on an instance of one of ``classes``: the class name."""
    if ev.method is None:
        return None
    found = _constructed(ev.receiver, classes)
    if found:
        return found
    q = ev.qualname or ""
    head, _, method = q.rpartition(".")
    if method == ev.method and head.endswith("()") and head[:-2] in classes:
        return head[:-2]
    return None


#: Exceptions a version-compatibility fallback catches (``try: new_api() except AttributeError: old_api()``).
COMPAT_EXCEPTIONS = frozenset({"AttributeError", "TypeError", "ImportError", "ModuleNotFoundError", "NameError"})


def _catches_compat(handler: cst.ExceptHandler) -> bool:
    """An ``except`` clause that catches one of :data:`COMPAT_EXCEPTIONS` (by name, maybe in a tuple)."""
    names = caught_exceptions(handler)
    return names is not None and any(isinstance(expr, cst.Name) and expr.value in COMPAT_EXCEPTIONS for expr in names)


def module_calls(index, skip_compat_fallbacks: bool = False) -> Iterator[Tuple[cst.CSTNode, Optional[str], cst.CSTNode, Optional[cst.CSTNode]]]:
    """Every call and decorator in a module: ``(node, qualified callee, statement, header)``.

    ``statement`` is the innermost statement holding ``node``; ``header`` the decorator or
    ``with`` item / test of a compound statement when ``node`` is in one (for positions).
    Callees are qualified through the module's imports (``None`` when not an imported name).
    With ``skip_compat_fallbacks``, calls inside an ``except AttributeError``/``TypeError``/
    ``ImportError``/... handler are left out: code that runs only when a newer API failed
    (an older torch).

    The module is walked once per index (both rules that read every call share the walk:
    on a big module it is most of the analysis' time).
    """
    memo = getattr(index, "_module_calls_memo", None)
    if memo is None or memo[0] is not index.module:
        calls = _walk_calls(index)
        memo = (index.module, [c[:4] for c in calls], [c[:4] for c in calls if not c[4]])  # all; outside fallbacks
        try:
            index._module_calls_memo = memo
        except AttributeError:  # an index that takes no new attributes: no memo
            pass
    return iter(memo[2] if skip_compat_fallbacks else memo[1])


def _walk_calls(index) -> List[Tuple[cst.CSTNode, Optional[str], cst.CSTNode, Optional[cst.CSTNode], bool]]:
    """:func:`module_calls`'s tuples, each with whether it lies in a compatibility-fallback handler.

    One walk in source order (:func:`~pt2lint.analysis.walk.children_in_source_order`): a
    ``CSTVisitor`` rebuilds every node it passes, which on a long file cost more than the rest
    of the analysis.  ``statement`` is the innermost simple statement line, ``def``, ``class``
    or ``with`` around the call; ``header`` the innermost decorator or ``with`` item.
    """
    out = []
    stmts: List[cst.CSTNode] = []
    headers: List[cst.CSTNode] = []
    fallback = 0
    qualify = index.imports.qualify
    stack: list = [index.module]
    # node types compared with ``is``/``in`` (LibCST's concrete node classes have no subclasses):
    # ``isinstance`` against its ABC classes is a Python-level call per node
    call_type, handler_type, decorator_type, line_type = cst.Call, cst.ExceptHandler, cst.Decorator, cst.SimpleStatementLine
    while stack:
        node = stack.pop()
        if node is _LEAVE:  # the end of a statement, header or handler pushed below
            left = type(stack.pop())
            if left in _HEADERS:
                headers.pop()
            elif left is handler_type:
                fallback -= 1
            else:
                stmts.pop()
            continue
        kind = type(node)
        if kind is call_type:
            stmt = stmts[-1] if stmts else None
            header = headers[-1] if headers and type(stmt) is not line_type else None
            out.append((node, qualify(node.func), stmt, header, fallback > 0))
        elif kind in _STATEMENTS:
            stmts.append(node)
            stack += (node, _LEAVE)
        elif kind in _HEADERS:
            headers.append(node)
            stack += (node, _LEAVE)
            if kind is decorator_type and type(node.decorator) is not call_type:
                expr = node.decorator
                out.append((expr, qualify(expr), stmts[-1] if stmts else None, node, fallback > 0))
        elif kind is handler_type and _catches_compat(node):
            fallback += 1
            stack += (node, _LEAVE)
        children = children_in_source_order(node)
        children.reverse()
        stack += children
    return out


_LEAVE = object()
#: The nodes :func:`_walk_calls` takes as a call's statement, and as its header.
_STATEMENTS = (cst.SimpleStatementLine, cst.FunctionDef, cst.ClassDef, cst.With)
_HEADERS = (cst.Decorator, cst.WithItem)


class DeprecatedAmpApi(Rule):
    """PTC801: a deprecated mixed-precision API (``torch.cuda.amp.autocast``, ``torch.cpu.amp.GradScaler``...).

    Anywhere in the file: torch warns at every call, compiled or not. The names and
    torch's own warning text come from the Dynamo facts table (``amp_deprecated``). A call in
    an ``except AttributeError``/``TypeError``/``ImportError`` handler is a fallback for older
    torch versions (``try: torch.get_autocast_dtype(d) except AttributeError:
    torch.get_autocast_gpu_dtype()``) that does not run on a torch where the new API exists:
    not flagged.
    """

    code = "PTC801"

    def on_module(self, index, report) -> None:
        for node, q, stmt, header in module_calls(index, skip_compat_fallbacks=True):
            found = facts.amp_deprecation(q)
            if found is None:
                continue
            category, message = found
            report(self.code, node, f"`{q}` is deprecated: torch warns \"{message}\" ({category})", stmt, header)


class AutocastManualEnter(Rule):
    """PTC802: an autocast object entered by hand (``ctx.__enter__()``, ``ExitStack().enter_context(ctx)``) in a compiled region.

    Dynamo models ``with torch.autocast(...)`` and the decorator form; a call of the
    context manager's dunder methods, or an ``ExitStack`` holding one, it does not.
    """

    code = "PTC802"

    def on_call(self, interp, ev) -> None:
        if ev.method == "__enter__":  # Dynamo fails here; the matching ``__exit__`` is not reported again
            cls = _method_on(ev, AUTOCAST_CLASSES)
            if cls:
                interp.report(
                    self.code,
                    ev.node,
                    f"`{cls}` entered by calling `.{ev.method}()`: Dynamo only models autocast used in a `with` "
                    f"statement or as a decorator (write `with {cls}(...):`)",
                )
        elif ev.method == "enter_context" and ev.args and _constructed(ev.args[0], AUTOCAST_CLASSES):
            interp.report(
                self.code,
                ev.node,
                f"`{_constructed(ev.args[0], AUTOCAST_CLASSES)}` entered through `ExitStack.enter_context()`: "
                f"Dynamo cannot trace the ExitStack (write `with torch.autocast(...):`)",
            )


class GradScalerInCompiledRegion(Rule):
    """PTC803: building or using a ``GradScaler`` inside a compiled region (Dynamo skips its methods)."""

    code = "PTC803"

    def on_call(self, interp, ev) -> None:
        if isinstance(ev.callee, str) and ev.callee in GRAD_SCALER_CLASSES or ev.qualname in GRAD_SCALER_CLASSES:
            name = ev.qualname if ev.qualname in GRAD_SCALER_CLASSES else ev.callee
            interp.report(
                self.code,
                ev.node,
                f"`{name}(...)` inside a compiled region: Dynamo does not trace GradScaler: graph break "
                f"(create the scaler once, outside the compiled code)",
            )
            return
        cls = _method_on(ev, GRAD_SCALER_CLASSES)
        if cls:
            interp.report(
                self.code,
                ev.node,
                f"`GradScaler.{ev.method}()` inside a compiled region: Dynamo marks GradScaler's methods as skipped: "
                f"graph break (compile the forward and loss only; call the scaler in the eager training loop)",
            )


class OptimizerInCompiledRegion(Rule):
    """PTC804: ``optimizer.step()`` / ``optimizer.zero_grad()`` of a ``torch.optim`` optimizer in a compiled region."""

    code = "PTC804"
    METHODS = frozenset({"step", "zero_grad"})

    def on_call(self, interp, ev) -> None:
        if ev.method not in self.METHODS:
            return
        ref = getattr(ev.receiver, "ref", None) if ev.receiver is not None else None
        q = ev.qualname or ""
        head = ref if isinstance(ref, str) else q.rpartition(".")[0]
        if not (head.startswith("torch.optim.") and head.endswith("()")) or head.startswith("torch.optim.lr_scheduler."):
            return
        cls = head[:-2]
        what = (
            "`Optimizer.step()` breaks the graph before and after the step (torch.optim graph-breaks on purpose, "
            "so the step becomes a graph of its own)"
            if ev.method == "step"
            else "`Optimizer.zero_grad()` is marked as skipped by Dynamo: graph break"
        )
        interp.report(
            self.code,
            ev.node,
            f"{what} [{cls}] (compile the forward and loss; run the optimizer outside, or compile `opt.step` on its own)",
        )


class CollectiveGraphBreak(Rule):
    """PTC805: a ``torch.distributed`` collective Dynamo does not rewrite, or any collective with ``async_op=True``."""

    code = "PTC805"

    def on_call(self, interp, ev) -> None:
        q = ev.qualname
        functional = facts.collective(q)
        if functional is None:
            return
        async_op = ev.kwargs.get("async_op")
        if async_op is not None and async_op.kind is Kind.CONST and async_op.const is True:
            interp.report(
                self.code,
                ev.node,
                f"`{q}(..., async_op=True)` in a compiled region: Dynamo does not trace asynchronous collectives: "
                f"graph break (GB0172; use async_op=False, or torch.distributed._functional_collectives)",
            )
        elif functional is False:
            interp.report(
                self.code,
                ev.node,
                f"`{q}()` is not rewritten into a functional collective by Dynamo: graph break (GB0007) "
                f"(move it out of forward, or use a collective Dynamo traces: all_reduce, all_gather_into_tensor, "
                f"reduce_scatter_tensor, all_to_all_single, or torch.distributed._functional_collectives)",
            )


class RankDependentBranch(Rule):
    """PTC806: a branch on ``dist.get_rank()`` in a compiled region: every rank traces a different graph."""

    code = "PTC806"
    CONSTRUCTS = frozenset({"if", "elif", "ifexp", "while"})

    def on_test(self, interp, ev) -> None:
        if ev.construct not in self.CONSTRUCTS:
            return
        invariant = _rank_invariant_calls(ev.node)
        for node in _calls_in(ev.node):
            q = interp.index.imports.qualify(node.func)
            if q in RANK_FUNCTIONS and id(node) not in invariant:
                interp.report(
                    self.code,
                    node,
                    f"branch on `{q}()` in a compiled region: the rank is a constant to Dynamo, so each rank "
                    f"compiles a different graph, and a collective under the branch leaves the ranks out of step "
                    f"(compute both sides and select with torch.where, or move rank-specific work out of forward)",
                )
                return


def _int_const(expr: cst.BaseExpression) -> Optional[int]:
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.value, 0)
    return None


def _rank_invariant_calls(test: cst.CSTNode) -> set:
    """ids of rank calls in comparisons that hold on every rank (``get_rank() > -1``,
    ``get_rank() >= 0``, ``-1 < get_rank()``): ranks are never negative."""
    out = set()
    stack = [test]
    while stack:
        node = stack.pop()
        stack.extend(iter_children(node))
        if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
            continue
        op, right = node.comparisons[0].operator, node.comparisons[0].comparator
        left = node.left
        if isinstance(left, cst.Call) and _int_const(right) is not None:
            c = _int_const(right)
            if (isinstance(op, cst.GreaterThan) and c < 0) or (isinstance(op, cst.GreaterThanEqual) and c <= 0):
                out.add(id(left))
        elif isinstance(right, cst.Call) and _int_const(left) is not None:
            c = _int_const(left)
            if (isinstance(op, cst.LessThan) and c < 0) or (isinstance(op, cst.LessThanEqual) and c <= 0):
                out.add(id(right))
    return out


def _calls_in(expr: cst.CSTNode) -> Iterator[cst.Call]:
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            yield node
        if isinstance(node, (cst.Lambda, cst.FunctionDef)):
            continue
        stack.extend(iter_children(node))


class FsdpFlatParamsUnderCompile(Rule):
    """PTC807: ``FullyShardedDataParallel(...)`` without ``use_orig_params=True`` in a file that calls ``torch.compile``.

    Module construction is outside ``forward``, so this reads the whole file: the FSDP
    docs say ``use_orig_params=True`` "is required to use torch.compile()" (its default is
    ``False``). A file that wraps with FSDP but never compiles is not flagged.
    """

    code = "PTC807"

    def on_module(self, index, report) -> None:
        calls = list(module_calls(index))
        if not any(q in api.COMPILE_FUNCTIONS for _, q, _, _ in calls):
            return
        for node, q, stmt, header in calls:
            if q not in FSDP_CLASSES or not isinstance(node, cst.Call):
                continue
            kw = next((a for a in node.args if a.keyword is not None and a.keyword.value == "use_orig_params"), None)
            if kw is not None and not (isinstance(kw.value, cst.Name) and kw.value.value == "False"):
                continue  # True, or a value decided elsewhere: not known to be False
            if any(a.star == "**" for a in node.args):
                continue  # ``**fsdp_kwargs`` may set it
            how = "use_orig_params=False" if kw is not None else "the default use_orig_params=False"
            report(
                self.code,
                node,
                f"FSDP with {how} in a file that calls torch.compile: the FSDP docs require use_orig_params=True "
                f"to use torch.compile (pass use_orig_params=True)",
                stmt,
                header,
            )
