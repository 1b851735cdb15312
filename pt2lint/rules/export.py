"""PTC6xx: what ``torch.export`` rejects although ``torch.compile`` traces it (``--target export``)."""

from __future__ import annotations

from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule


class TensorNumpy(Rule):
    """PTC601: ``t.numpy()`` in a region that must export."""

    code = "PTC601"

    def on_call(self, interp, ev) -> None:
        if ev.method == "numpy" and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR and not ev.receiver.weak:
            interp.report(
                self.code,
                ev.node,
                "`.numpy()` is traced by torch.compile but rejected by torch.export (use torch ops on the tensor)",
            )


class DataDependentAssert(Rule):
    """PTC602: ``assert`` on a tensor value in a region that must export."""

    code = "PTC602"

    def on_assert(self, interp, ev) -> None:
        v = ev.value
        if (v.kind is Kind.TENSOR and not v.weak) or v.kind is Kind.DATA:
            interp.report(
                self.code,
                ev.node.test,
                "`assert` on a tensor value is data-dependent: torch.export rejects it "
                "(use torch._check(...) on a scalar, or torch._assert_async)",
            )
