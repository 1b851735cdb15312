"""PTC7xx: work a compiled region puts on the host without breaking the graph.

None of these is a graph break (measured on torch 2.13, see the specs): Dynamo keeps the
op in the graph.  They cost speed on a GPU: a scalar read or a device synchronisation
makes the host wait for the device on every call, and a tensor that lives on the CPU
inside the graph is a "cpu device" node, a reason Inductor lists for skipping CUDA
graphs (``mode="reduce-overhead"``; the reasons are in the Dynamo facts table, read from
``torch/_inductor/cudagraph_utils.py``).  The specs give them severity ``info`` under
``--target compile`` and ``warning`` under ``--target cudagraphs`` or in a region
compiled with a CUDA-graph mode.

Syncs that also break the graph (``.item()`` without ``capture_scalar_outputs``,
``print(t)``, ``if t:``) are reported by the graph-break rules (PTC101, PTC301, PTC104)
and not again here.
"""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis.kinds import Kind
from pt2lint.analysis.walk import walk_with_ancestors
from pt2lint.rules.base import Rule

#: torch functions that make a new tensor on the default device (the CPU) unless given ``device=``.
FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "tensor", "as_tensor", "zeros", "ones", "empty", "full", "arange", "range", "linspace", "logspace",
        "eye", "rand", "randn", "randint", "randperm", "empty_strided", "tril_indices", "triu_indices",
    )
)
#: device synchronisations (``torch.cuda.synchronize`` is traced as Dynamo's ``synchronize_device`` op).
SYNC_FUNCTIONS = frozenset({"torch.cuda.synchronize", "torch.accelerator.synchronize", "torch.xpu.synchronize"})


#: kinds of data that ``torch.tensor(data)`` can only put on the host: Python numbers, lists, shapes.
_HOST_DATA = frozenset({Kind.CONST, Kind.CONTAINER, Kind.SHAPE, Kind.DATA, Kind.NONE})


def _is_sure_tensor(value) -> bool:
    return value is not None and value.kind is Kind.TENSOR and not value.weak


def _is_cpu(value) -> bool:
    """A device argument that is the CPU: the constant ``"cpu"`` (or ``"cpu:0"``)."""
    return value is not None and value.kind is Kind.CONST and isinstance(value.const, str) and value.const.split(":")[0] == "cpu"


def _has_unknown_kwargs(node) -> bool:
    """``f(..., **opts)``: keyword arguments the analysis cannot see (a ``device`` may be among them)."""
    return any(a.star == "**" for a in node.args)


class HostSync(Rule):
    """PTC701: a host-device synchronisation that Dynamo traces into the graph."""

    code = "PTC701"

    def on_call(self, interp, ev) -> None:
        what = None
        cpu_tensor = False  # the op leaves a CPU tensor in the graph (a CUDA-graph skip reason)
        if ev.qualname in SYNC_FUNCTIONS:
            what = f"`{ev.qualname}()` waits for every queued kernel (traced into the graph as a device synchronisation)"
        elif ev.method is not None and _is_sure_tensor(ev.receiver):
            if ev.method == "cpu" and not ev.args:
                what, cpu_tensor = "`.cpu()` copies the tensor to the host and waits for it", True
            elif ev.method == "to" and (any(_is_cpu(a) for a in ev.args[:1]) or _is_cpu(ev.kwargs.get("device"))):
                what, cpu_tensor = "`.to(\"cpu\")` copies the tensor to the host and waits for it", True
            elif ev.method in ("item", "tolist") and not ev.args and self.settings.capture_scalar_outputs:
                what = f"`.{ev.method}()` (traced, with capture_scalar_outputs) copies tensor data to the host and waits for it"
        elif ev.qualname in ("builtins.int", "builtins.float") and len(ev.args) == 1 and not ev.kwargs:
            if _is_sure_tensor(ev.args[0]) and self.settings.capture_scalar_outputs:
                name = ev.qualname.split(".", 1)[1]
                what = f"`{name}()` of a tensor (traced, with capture_scalar_outputs) copies its value to the host and waits for it"
        if what is None:
            return
        also = f", and a CPU tensor in the graph (CUDA graphs: \"{facts.cudagraph_skip_reason('cpu device')}\")" if cpu_tensor else ""
        interp.report(
            self.code,
            ev.node,
            f"{what}: a host-device sync on every call{also} "
            f"(keep the value on the device; read it outside the compiled region)",
        )


#: builtins that only read a tensor's elements into Python (iteration, truth, length).
_HOST_READERS = frozenset({"all", "any", "zip", "enumerate", "list", "tuple", "iter", "len", "bool", "reversed"})


def _host_use(above: Tuple[cst.CSTNode, ...], name: cst.Name) -> bool:
    """The load of ``name`` (with ancestors ``above``) only reads the tensor into Python: an
    ``if``/``while``/conditional-expression or comprehension test, a ``for`` or comprehension
    iterable, an argument of a builtin that iterates it or takes its truth (``all``, ``zip``,
    ``len``, ...), or the subscripted target of an element store (``mask[i] = False``); an
    element read (``mask[i]``) in one of those places too."""
    node: cst.CSTNode = name
    i = len(above) - 1
    while i >= 0:
        parent = above[i]
        if isinstance(parent, cst.Subscript) and parent.value is node:
            node, i = parent, i - 1  # ``mask[i]``: where the element goes decides
            continue
        if isinstance(parent, cst.SubscriptElement) or isinstance(parent, cst.Index):
            return False  # used as an index of something else
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            node, i = parent, i - 1
            continue
        break
    if i < 0:
        return False
    parent = above[i]
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is node:
        return True
    if isinstance(parent, cst.CompIf) and parent.test is node:
        return True
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
        return True
    if isinstance(parent, cst.AssignTarget) and isinstance(node, cst.Subscript):
        return True  # ``mask[i] = False``: a store into the host tensor
    if isinstance(parent, cst.Arg) and i >= 1:
        call = above[i - 1]
        return isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in _HOST_READERS and parent.keyword is None
    return False


def _plain_operand(interp, expr: cst.BaseExpression) -> bool:
    """``expr`` is a Python number: a literal, or a name of the frame (or an attribute of one) holding
    a constant or a size."""
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Name) and interp.frame is not None:
        v = interp.frame.lookup(expr.value)
        return v is not None and _number_like(v)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and interp.frame is not None:
        interp.silent += 1  # ``self.layer_dropout``: read again, nothing reported
        try:
            v = interp.eval(expr)
        finally:
            interp.silent -= 1
        return _number_like(v)
    return False


def _number_like(v) -> bool:
    """A constant or a size, a value of unknown kind surely not ``None`` (a constructor parameter
    whose default is a number, ``layer_dropout=0.``), or one only guessed to be a tensor (a
    parameter its callers pass such a value to): not a tensor the analysis knows of."""
    if v.maybe_none:
        return False
    return v.kind in (Kind.CONST, Kind.SHAPE) or (v.kind is Kind.UNKNOWN and v.not_none) or (v.kind is Kind.TENSOR and v.weak)


def _stays_on_the_host(interp, call: cst.Call) -> bool:
    """The factory's tensor never meets another tensor: the statement assigns it to a name, through
    in-place fills and comparisons with Python numbers only (``torch.zeros(n).uniform_(0., 1.) < p``),
    and every use of that name in the function reads it into Python (:func:`_host_use`, the
    random layer-drop idiom).  Such a tensor is never copied to the device: the host-to-device
    copy the rule warns about does not happen, and ``device=x.device`` would add a
    device-to-host read for each use instead.  The reads themselves break the graph and are
    reported by the graph-break rules."""
    stmt = interp.stmt
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        stmt = stmt.body[0]
    frame = interp.frame
    fn = getattr(getattr(frame, "func", None), "node", None) if frame is not None else None
    if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0].target, cst.Name):
        return False
    if not isinstance(fn, cst.FunctionDef):
        return False
    # the way from the factory call up to the assigned value
    path: Optional[Tuple[cst.CSTNode, ...]] = None
    for node, above in walk_with_ancestors(stmt.value):
        if node is call:
            path = above
            break
    if path is None:
        return False
    inner: cst.CSTNode = call
    for parent in reversed(path):
        if isinstance(parent, cst.Attribute) and parent.value is inner:
            inner = parent
            continue
        if isinstance(parent, cst.Call) and parent.func is inner and isinstance(inner, cst.Attribute):
            if not all(_plain_operand(interp, a.value) for a in parent.args):
                return False
            inner = parent
            continue
        if isinstance(parent, cst.Comparison) and (parent.left is inner or any(c.comparator is inner for c in parent.comparisons)):
            operands = [parent.left] + [c.comparator for c in parent.comparisons]
            if not all(o is inner or _plain_operand(interp, o) for o in operands):
                return False
            inner = parent
            continue
        if isinstance(parent, (cst.ComparisonTarget, cst.Arg)):
            continue
        return False
    if inner is not stmt.value:
        return False
    target = stmt.targets[0].target.value
    uses = 0
    for node, above in walk_with_ancestors(fn.body):
        if isinstance(node, cst.Name) and node.value == target:
            parent = above[-1] if above else None
            if isinstance(parent, cst.AssignTarget) and parent.target is node:
                continue  # a binding, not a use
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                continue  # ``obj.to_drop``: another name
            if not _host_use(above, node):
                return False
            uses += 1
    return uses > 0


class HostTensorCreation(Rule):
    """PTC702: a tensor factory without ``device=`` inside a compiled region."""

    code = "PTC702"

    def on_call(self, interp, ev) -> None:
        if ev.qualname not in FACTORIES or _has_unknown_kwargs(ev.node):
            return
        device = ev.kwargs.get("device")
        if device is not None and not _is_cpu(device):
            return  # device=x.device, device=self.device, ...: not the host (or not known to be)
        if ev.qualname in ("torch.tensor", "torch.as_tensor") and ev.args and ev.args[0].kind not in _HOST_DATA:
            return  # a copy of a tensor keeps its device; of an unknown value, it may be a tensor
        if _stays_on_the_host(interp, ev.node):
            return
        name = ev.qualname
        where = "with `device=\"cpu\"`" if device is not None else "without `device=`"
        interp.report(
            self.code,
            ev.node,
            f"`{name}()` {where} makes a CPU tensor inside the compiled region: a host-to-device copy on "
            f"every call when it meets CUDA inputs, and a CPU node in the graph (CUDA graphs: "
            f"\"{facts.cudagraph_skip_reason('cpu device')}\") "
            f"(pass device=x.device of an input, use x.new_tensor/new_zeros, or register a buffer in __init__)",
        )
