"""PTC2xx: operators whose output shape depends on tensor data.

Dynamo graph-breaks on them ("Dynamic shape operator") unless
``torch._dynamo.config.capture_dynamic_output_shape_ops`` is set (measured on
torch 2.13, see the specs).
"""

from __future__ import annotations

from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule

DYNAMIC_SHAPE_FUNCTIONS = frozenset(
    """torch.nonzero torch.unique torch.unique_consecutive torch.masked_select torch.bincount
    torch.argwhere""".split()
)
DYNAMIC_SHAPE_METHODS = frozenset("nonzero unique unique_consecutive masked_select bincount argwhere".split())


class BooleanMaskIndex(Rule):
    """PTC201: indexing a tensor with a boolean mask (``x[x > 0]``)."""

    code = "PTC201"

    def on_index(self, interp, ev) -> None:
        if self.settings.capture_dynamic_output_shape_ops:
            return
        idx = ev.index
        is_mask = idx.kind is Kind.TENSOR and idx.bool_tensor
        if not is_mask and idx.kind is Kind.CONTAINER and idx.elts:
            is_mask = any(e.kind is Kind.TENSOR and e.bool_tensor for e in idx.elts)
        if is_mask:
            interp.report(
                self.code,
                ev.node,
                "boolean-mask indexing has a data-dependent output shape: graph break "
                "(use torch.where(mask, x, 0) or multiply by the mask to keep shapes static)",
            )


class DynamicShapeOp(Rule):
    """PTC202: ``nonzero``, ``unique``, ``masked_select``, ``bincount``, one-argument ``torch.where``..."""

    code = "PTC202"

    def on_call(self, interp, ev) -> None:
        if self.settings.capture_dynamic_output_shape_ops:
            return
        name = None
        q = ev.qualname
        if q in DYNAMIC_SHAPE_FUNCTIONS:
            name = q
        elif q == "torch.where" and len(ev.args) == 1 and not ev.kwargs:
            name = "torch.where(cond)"
        elif q == "torch.repeat_interleave" and len(ev.args) >= 2 and ev.args[1].kind is Kind.TENSOR and "output_size" not in ev.kwargs:
            name = "torch.repeat_interleave with tensor repeats"
        elif ev.method is not None and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR:
            if ev.method in DYNAMIC_SHAPE_METHODS:
                name = f".{ev.method}()"
            elif ev.method == "repeat_interleave" and ev.args and ev.args[0].kind is Kind.TENSOR and "output_size" not in ev.kwargs:
                name = ".repeat_interleave() with tensor repeats"
        if name is None:
            return
        hint = "torch.nonzero_static(x, size=...)" if "nonzero" in name or "argwhere" in name or "where" in name else "a static-shape formulation (masking, torch.where)"
        interp.report(
            self.code,
            ev.node,
            f"`{name}` has a data-dependent output shape: graph break (use {hint}, "
            f"or set capture_dynamic_output_shape_ops=True)",
        )
