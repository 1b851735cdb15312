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

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis.kinds import Kind
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
