"""PTC326: a query of a tensor's storage or layout that Dynamo does not trace.

``x.storage_offset()``, ``x.is_pinned()``, ``x.is_shared()``, ``x.is_signed()``,
``x.is_conj()``, ``x.is_neg()``, ``x.dense_dim()``, ``x.sparse_dim()``, ``x.storage()``,
``x.is_distributed()`` and ``x.is_inference()`` return no tensor, and Dynamo has no handler
that answers them at trace time (as it does for ``numel``, ``dim``, ``stride``,
``is_contiguous`` or ``data_ptr``): the call breaks the graph ("torch.* op returned
non-Tensor", GB0208; ``is_inference``: GB0045).  The list is not written here: it is the
``tensor_queries`` section of ``pt2lint/data/dynamo_facts.json``, every zero-argument method
of ``torch.Tensor`` with a non-tensor result, probed on torch 2.13
(``tools/gen_dynamo_facts.py``).
"""

from __future__ import annotations

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule


class UntraceableTensorQuery(Rule):
    """PTC326: ``t.storage_offset()`` / ``t.is_pinned()`` / ... on a tensor in a compiled region."""

    code = "PTC326"

    def on_call(self, interp, ev) -> None:
        if ev.qualname is not None or ev.args or ev.kwargs:
            return
        recv = ev.receiver
        if recv is None or recv.kind is not Kind.TENSOR or recv.weak:
            return
        gb = facts.tensor_query_break(ev.method)
        if gb is None:
            return
        interp.report(
            self.code,
            ev.node,
            f"`.{ev.method}()` of a tensor: Dynamo cannot answer it while tracing ({gb}), graph break "
            "(ask outside the compiled region and pass the answer in, or drop the query)",
        )
