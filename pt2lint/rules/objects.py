"""Rules about objects constructed inside compiled regions (PTC320, PTC321, PTC323).

Facts measured on torch 2.13 (see the specs in ``rules/`` and their evidence):

* ``torch.nn.Parameter(t)`` of a tensor made inside the region breaks the graph
  ("Attempted to use `torch.nn.Parameter()` constructor with Dynamo", GB0264, while
  ``torch._dynamo.config.graph_break_on_nn_param_ctor`` is True, its default); so does
  building a ``torch.nn`` layer that allocates parameters (``nn.Linear(4, 4)``).
  A parameter-free module (``nn.ReLU()``) or a plain object is traced without a break.
* When the ``__init__`` of an ``nn.Module`` subclass built in the region graph-breaks,
  Dynamo runs that ``__init__`` as a frame of its own and meets a module that
  ``nn.Module.__init__`` has not set up yet: "Uninitialized nn.Module" (GB0119), at its
  ``super().__init__()`` line, and the frame runs eagerly.
* When a method of a plain object (or module) that the compiled frame built graph-breaks,
  Dynamo cannot rebuild the bound method to call it eagerly: "Reconstruction failure"
  (GB0092) at the call, and the whole function runs eagerly (see
  :mod:`pt2lint.analysis.sourceless`).
"""

from __future__ import annotations

import libcst as cst

from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule

_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def _fresh_tensor_node(node: cst.BaseExpression) -> bool:
    """An expression that makes a new tensor (a call or an arithmetic result), not a name or attribute."""
    return isinstance(node, (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript))


def _makes_parameters(name: str, kwargs, api) -> bool:
    """Whether ``torch.nn.<name>(**kwargs)`` allocates ``nn.Parameter``s (torch 2.13 constructors:
    norms without an affine part, ``LocalResponseNorm`` and, by default, ``InstanceNorm*`` have none)."""
    if name not in api.PARAMETRISED_MODULES or name == "LocalResponseNorm":
        return False
    for flag in ("affine", "elementwise_affine"):
        v = kwargs.get(flag)
        if v is not None and v.kind is Kind.CONST and v.const is False:
            return False
    if name.startswith("InstanceNorm"):
        v = kwargs.get("affine")
        return v is not None and v.kind is Kind.CONST and v.const is True
    return True


class ParameterInCompiledRegion(Rule):
    """PTC320: ``nn.Parameter(...)`` of a new tensor, or a ``torch.nn`` layer with parameters, built in a compiled region."""

    code = "PTC320"

    def on_call(self, interp, ev) -> None:
        from pt2lint.analysis import torch_api as api

        qual = ev.qualname or ""
        if qual in _PARAMETER:
            data = next((a.value for a in ev.node.args if a.keyword is None and not a.star), None)
            if data is None:
                data = next((a.value for a in ev.node.args if a.keyword is not None and a.keyword.value == "data"), None)
            value = ev.args[0] if ev.args else ev.kwargs.get("data")
            if data is None or value is None or value.kind is not Kind.TENSOR or value.weak or not _fresh_tensor_node(data):
                return
            interp.report(
                self.code, ev.node,
                "`nn.Parameter()` of a tensor made inside the compiled region: graph break "
                "(create the parameter in `__init__`, or use the tensor itself)",
            )
            return
        if qual.startswith("torch.nn.") and ev.result.kind is Kind.MODULE and _makes_parameters(qual.rsplit(".", 1)[-1], ev.kwargs, api):
            interp.report(
                self.code, ev.node,
                f"`{qual.rsplit('.', 1)[-1]}(...)` built inside the compiled region creates `nn.Parameter`s: graph break "
                "(build the layer in `__init__`, or use the functional form with the model's parameters)",
            )


class ModuleInitGraphBreak(Rule):
    """PTC321: an ``nn.Module`` subclass built in a compiled region whose ``__init__`` graph-breaks."""

    code = "PTC321"

    def on_construct(self, interp, ev) -> None:
        if ev.inside is not None:
            interp.report(
                self.code, ev.node,
                f"`{ev.cls.name}` is built by `{ev.inside.name}.__init__`, which graph-breaks inside the compiled "
                f"region and then runs eagerly: Dynamo compiles `{ev.cls.name}.__init__` as a frame of its own on an "
                "uninitialized nn.Module and gives up on it too (build the modules in the parent's `__init__`, or "
                f"remove the break from `{ev.inside.name}.__init__`)",
            )
            return
        interp.report(
            self.code, ev.node,
            f"`{ev.cls.name}` is built inside the compiled region and its `__init__` graph-breaks: Dynamo "
            "then compiles `__init__` on an uninitialized nn.Module and gives up on it (build the module in "
            "the parent's `__init__`, or remove the break from its constructor)",
        )


class SourcelessMethodCallBreak(Rule):
    """PTC323: a method of an object built in the compiled frame graph-breaks; Dynamo breaks at the call too."""

    code = "PTC323"

    def on_sourceless_call_break(self, interp, ev) -> None:
        cls = " or ".join(f"`{c}`" for c in ev.classes[:3]) + (" (or another candidate)" if len(ev.classes) > 3 else "")
        interp.report(
            self.code, ev.node,
            f"`.{ev.method}()` of a {cls} object built in this function graph-breaks inside: Dynamo cannot "
            "rebuild the bound method to resume after the break (Reconstruction failure) and runs this whole "
            "function eagerly (build the object outside the compiled region, or pass it in, or remove the break "
            "inside the method)",
        )
