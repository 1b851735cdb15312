"""PTC326: a query of a tensor's storage or layout that Dynamo does not trace.

``x.storage_offset()``, ``x.is_pinned()``, ``x.is_shared()``, ``x.is_signed()``,
``x.is_conj()``, ``x.is_neg()``, ``x.dense_dim()``, ``x.sparse_dim()``, ``x.storage()``,
``x.is_distributed()`` and ``x.is_inference()`` return no tensor, and Dynamo has no handler
that answers them at trace time (as it does for ``numel``, ``dim``, ``stride``,
``is_contiguous`` or ``data_ptr``): the call breaks the graph ("torch.* op returned
non-Tensor", GB0208; ``is_inference``: GB0045).  The list is not written here: it is the
``tensor_queries`` section of ``pt2lint/data/dynamo_facts.json``, every zero-argument method
of ``torch.Tensor`` with a non-tensor result, probed on torch 2.13
(``tools/gen_dynamo_facts.py``).  A query Dynamo answers may return an object it cannot ask
further: ``x.untyped_storage()`` traces, but of the storage's methods only ``size()`` does
(``x.untyped_storage().data_ptr()``, ``.nbytes()``: "Unsupported method call", GB0156; the
entries of the same section with a ``via``).
"""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule


class UntraceableTensorQuery(Rule):
    """PTC326: ``t.storage_offset()`` / ``t.is_pinned()`` / ... on a tensor in a compiled region."""

    code = "PTC326"

    def on_call(self, interp, ev) -> None:
        if ev.qualname is not None and ev.qualname.startswith("numpy."):
            self._numpy_query(interp, ev)
            return
        if ev.qualname is not None or ev.args or ev.kwargs:
            return
        query = _query_of(interp, ev.receiver_node, ev.method)
        if query is not None:
            query, gb = query
            interp.report(
                self.code,
                ev.node,
                f"`.{query}().{ev.method}()` of a tensor: Dynamo cannot call `{ev.method}` on what "
                f"`.{query}()` returns ({gb}), graph break (ask outside the compiled region and pass "
                "the answer in, or drop the query)",
            )
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

    def _numpy_query(self, interp, ev) -> None:
        """``np.size(a)`` / ``np.ndim(a)`` / ``np.isscalar(a)`` of an array traced in the graph (a
        known tensor, not a guess): ``torch._numpy`` answers with a Python int or bool, which
        Dynamo cannot put in the graph.  On Python values the call is not reported (alone in a
        frame it folds to a constant; see tests/test_numpy_python_results.py)."""
        gb = facts.numpy_query_break(ev.qualname)
        if gb is None or not any(a.kind is Kind.TENSOR and not a.weak for a in ev.args):
            return
        name = ev.qualname.split(".", 1)[1]
        interp.report(
            self.code,
            ev.node,
            f"`np.{name}()` of an array traced in the graph is a Python value Dynamo cannot put in the "
            f"graph ({gb}), graph break (read the size from the tensor: `x.numel()`, `x.dim()`, `x.shape`)",
        )


def _query_of(interp, receiver_node, method: Optional[str]) -> Optional[Tuple[str, str]]:
    """``(q, gb)`` when ``receiver_node`` is ``t.q()`` with no argument on a tensor ``t`` (known
    to be one, not a guess from an unannotated parameter) and calling ``method`` on its result
    breaks with ``gb``: ``t.untyped_storage().data_ptr()``."""
    if not (isinstance(receiver_node, cst.Call) and not receiver_node.args and isinstance(receiver_node.func, cst.Attribute)):
        return None
    query = receiver_node.func.attr.value
    gb = facts.query_result_method_break(query, method)
    if gb is None:
        return None
    value = interp.quiet_eval(receiver_node.func.value)
    if value.kind is not Kind.TENSOR or value.weak:
        return None
    return query, gb
