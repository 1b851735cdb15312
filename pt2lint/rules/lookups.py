"""PTC324: a tensor method or attribute reached through a lookup Dynamo does not trace.

Measured on torch 2.13 (see ``rules/PTC324-untraceable-tensor-lookup.toml`` and its evidence):
``t.__getattribute__(name)`` of a method or of an attribute whose value is not a tensor, a
``torch.Size`` or ``None`` breaks at the lookup ("torch.* op returned non-Tensor", GB0208);
``object.__getattribute__(t, name)`` breaks for any name, and a tensor method stored in a class
body and called through the class (``A.it(t)``) breaks for any method ("Unsupported method
call", GB0156), and so does a tensor method called through ``t.__class__``
(``t.__class__.add(t, 1)``; ``type(t).add(t, 1)`` traces).  The interpreter decides (:class:`~pt2lint.analysis.events.LookupBreakEvent`);
this rule words the finding.
"""

from __future__ import annotations

from pt2lint.rules.base import Rule


class UntraceableTensorLookup(Rule):
    """PTC324: ``t.__getattribute__("sum")``, ``object.__getattribute__(t, ...)``, or ``A.it(t)`` with
    ``it = torch.Tensor.item`` in ``A``'s body, in a compiled region."""

    code = "PTC324"

    def on_lookup_break(self, interp, ev) -> None:
        if ev.form == "class-attribute":
            message = (
                f"`torch.Tensor.{ev.name}` stored as a class attribute and called through the class: Dynamo "
                "cannot trace the call (Unsupported method call): graph break (call the method on the tensor, "
                "or wrap it in `staticmethod(...)` in the class body)"
            )
        elif ev.form == "dunder-class":
            message = (
                f"`.{ev.name}` called through a tensor's `__class__`: Dynamo cannot trace the call (Unsupported "
                f"method call): graph break (call `t.{ev.name}(...)`, or `type(t).{ev.name}(t, ...)`)"
            )
        elif ev.form == "object-getattribute":
            message = (
                f"`object.__getattribute__` of a tensor: Dynamo cannot trace it (Unsupported method call): "
                f"graph break (write `t.{ev.name}`)"
            )
        else:
            message = (
                f"`__getattribute__(\"{ev.name}\")` of a tensor: Dynamo traces the lookup as a tensor op and "
                f"breaks on its non-tensor result (torch.* op returned non-Tensor): graph break "
                f"(write `t.{ev.name}`)"
            )
        interp.report(self.code, ev.node, message)
