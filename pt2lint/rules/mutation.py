"""PTC401: in-place writes into a forward input (or a view/alias of one).

Not a graph break: AOTAutograd functionalizes the write and copies the result
back into the input after the graph.  Measured on torch 2.13 (see the spec):
CUDA graphs (``mode="reduce-overhead"``) are skipped for graphs that mutate
inputs, and ``torch.export`` records the mutation as an extra output.
"""

from __future__ import annotations

from pt2lint.rules.base import Rule


class InputMutation(Rule):
    """PTC401: ``x.add_()``, ``x += y``, ``x[i] = v``, ``out=x``, ``inplace=True`` on a forward input."""

    code = "PTC401"

    def on_write(self, interp, ev) -> None:
        name = ev.target.alias_of
        if name is None:
            return
        interp.report(
            self.code,
            ev.node,
            f"in-place write to forward input `{name}` via {ev.how}: the input is mutated, which skips CUDA graphs "
            f"and becomes an extra output under export (write to a clone or out-of-place)",
        )
