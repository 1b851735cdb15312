"""PTC5xx: Python state that changes between calls and so fails Dynamo's guards (recompiles).

Dynamo guards on the values of Python ints/floats/lists read from ``self``; when
forward changes them, the next call fails the guard and recompiles, until
``torch._dynamo.config.recompile_limit`` is hit (measured on torch 2.13: the
``recompiles`` log artifact reports the failed guard, see the specs).
"""

from __future__ import annotations

from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule


class ModuleStateMutation(Rule):
    """PTC501: ``self.n += 1``, ``self.n = self.n + 1``, ``self.cache.append(x)`` in a compiled region."""

    code = "PTC501"

    def on_state_write(self, interp, ev) -> None:
        if ev.how == "augassign":
            what = f"`self.{ev.attr} {ev.detail}`"
        elif ev.how == "reassign":
            what = f"reassigning `self.{ev.attr}` from its own value"
        else:
            what = f"mutating the container `self.{ev.attr}` ({ev.detail})"
        interp.report(
            self.code,
            ev.node,
            f"{what} changes Python state Dynamo guards on: recompiles on later calls "
            f"(keep the state in a registered buffer tensor, or outside the compiled module)",
        )

    def on_call(self, interp, ev) -> None:
        from pt2lint.analysis.interp import _CONTAINER_MUTATORS  # the interpreter's list

        node = ev.node.func
        if (
            ev.method in _CONTAINER_MUTATORS
            and ev.receiver is not None
            and ev.receiver.kind is Kind.CONTAINER
            and node.__class__.__name__ == "Attribute"
            and node.value.__class__.__name__ == "Attribute"
            and getattr(node.value.value, "value", None) == "self"
        ):
            attr = node.value.attr.value
            interp.report(
                self.code,
                ev.node,
                f"`self.{attr}.{ev.method}()` mutates a Python container Dynamo guards on: recompiles on later calls "
                f"(keep the state in a tensor, or outside the compiled module)",
            )


class TensorId(Rule):
    """PTC502: ``id(tensor)`` in a compiled region."""

    code = "PTC502"

    def on_call(self, interp, ev) -> None:
        if ev.qualname == "builtins.id" and ev.args and ev.args[0].kind is Kind.TENSOR:
            interp.report(
                self.code,
                ev.node,
                "`id()` of a tensor is a new Python int on every call: guards on it recompile each time "
                "(key caches on shapes/dtypes, not object identity)",
            )
