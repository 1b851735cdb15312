"""PTC314: an in-place view op (``unsqueeze_``, ``transpose_``, ``t_``, ``squeeze_``,
``as_strided_``, ``resize_``...) called on a tensor passed into the compiled function.

Dynamo falls back on these (``torch/_dynamo/variables/tensor.py``: "Getting an inplace
view on a graph input is not supported", a delayed graph break, GB0148). Which methods
are in-place view ops is read from torch: those whose ATen op's first overload carries
``torch.Tag.inplace_view``, each probed on torch 2.13 (``inplace_view`` section of
``pt2lint/data/dynamo_facts.json``). On a fresh tensor or on a view of an input (which has
no source of its own) the same methods are traced, except ``resize_`` and ``resize_as_``,
which Dynamo refuses on every tensor (GB0126, GB0127: the probes on a fresh tensor broke), and
``set_`` with a storage, offset, size and stride (GB0128).
"""

from __future__ import annotations

import libcst as cst

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule


class InplaceViewOnInput(Rule):
    """PTC314: ``x.unsqueeze_(0)`` / ``x.t_()`` on a parameter of the compiled function itself."""

    code = "PTC314"

    def on_call(self, interp, ev) -> None:
        if ev.receiver is None or ev.receiver.kind is not Kind.TENSOR or ev.receiver.weak:
            return
        if ev.method == "set_" and _storage_overload(ev.node):
            interp.report(
                self.code,
                ev.node,
                "`.set_(source, offset, size, stride)` cannot be traced by Dynamo on any tensor: graph break "
                "(GB0128; build the view with `source.as_strided(size, stride, offset)` instead)",
            )
            return
        gb = facts.inplace_view_breaks_anywhere(ev.method)
        if gb is not None:
            interp.report(
                self.code,
                ev.node,
                f"`.{ev.method}()` cannot be traced by Dynamo on any tensor: graph break ({gb}) "
                "(allocate a tensor of the new size instead, e.g. `x.new_empty(...)`)",
            )
            return
        gb = facts.inplace_view_breaks(ev.method)
        if gb is None:
            return
        node = ev.receiver_node
        frame = interp.frame
        if not isinstance(node, cst.Name) or frame is None or frame.sites:
            return  # only the entry function's own parameters are graph inputs for sure
        if ev.receiver.alias_of != node.value or not interp._fixed_parameter(node):
            return
        interp.report(
            self.code,
            ev.node,
            f"`.{ev.method}()` changes the shape of the input `{node.value}` in place: Dynamo does not "
            f"trace in-place view ops on graph inputs, graph break ({gb}) "
            f"(use the out-of-place `{node.value} = {node.value}.{ev.method[:-1]}(...)`)",
        )


def _storage_overload(call: cst.Call) -> bool:
    """``t.set_(storage, offset, size, stride)``: ``set_`` with more than one positional argument.

    Source: ``TensorVariable.method_set_`` in ``torch/_dynamo/variables/tensor.py`` (torch 2.13)
    refuses every ``set_`` call with more than one positional argument ("Unsupported
    Tensor.set_() call", GB0128), whatever the receiver. Measured on torch 2.13:
    ``torch.empty(0).set_(x.untyped_storage(), 0, (4, 4), (4, 1))`` broke; ``y.set_(x + 1)`` and
    ``y.set_()`` on a fresh tensor were traced. A starred argument may hide how many there are,
    so a call with one is left alone.
    """
    positional = [a for a in call.args if a.keyword is None]
    return len(positional) > 1 and not any(a.star for a in call.args)
