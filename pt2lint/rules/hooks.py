"""PTC316: registering a module hook inside a compiled region; PTC317: using a hook's handle there.

Measured on torch 2.13 (the spec's examples, graph_breaks log): ``m.register_forward_hook``,
``register_forward_pre_hook`` and ``register_full_backward_hook`` called from ``forward``
break with "setattr() on unsupported type" (GB0467): registration writes the module's
hook dicts, which Dynamo does not model.  A hook registered in ``__init__`` and a
``tensor.register_hook`` (a gradient hook on a tensor) compile in one graph.
"""

from __future__ import annotations

from pt2lint.analysis import torch_api as api
from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule


class ModuleHookRegistration(Rule):
    """PTC316: ``module.register_*_hook(...)`` inside a compiled region.

    The receiver must be a module (``self``, a submodule) or of unknown kind: the
    method names are ``torch.nn.Module``'s own hook API, which no tensor, container or
    constant has.  A call that resolves to a method defined in the linted code (a user
    class with its own ``register_forward_hook``) is not reported.
    """

    code = "PTC316"
    METHODS = api.MODULE_HOOK_METHODS
    RECEIVERS = (Kind.MODULE, Kind.SELF, Kind.UNKNOWN)

    def on_call(self, interp, ev) -> None:
        if ev.method not in self.METHODS or ev.receiver is None or ev.callee is not None:
            return
        if ev.receiver.kind not in self.RECEIVERS:
            return
        interp.report(
            self.code,
            ev.node,
            f"`.{ev.method}()` inside a compiled region: registering a module hook writes the module's hook "
            f"dicts, graph break (register hooks once, in __init__ or before compiling)",
        )


class HookHandleUse(Rule):
    """PTC317: a module hook's ``RemovableHandle`` used inside a compiled region.

    The handle is the value of a module-hook registration (``m.register_forward_hook(fn)``, the
    methods of PTC316, or ``torch.nn.modules.module.register_module_forward_hook(fn)``) that the
    analysis followed to the use: stored on ``self`` by ``__init__`` (or in a list there), or
    returned by a registration in ``forward``.  Dynamo breaks where the handle is used (a method
    call, an attribute read, a comparison, a truth test) with "Attempted to represent
    unregistered RemovableHandle" (GB0013).  A handle of a gradient hook on a tensor
    (``t.register_hook``) and the value of a method of a class in the linted code are not
    handles here.
    """

    code = "PTC317"

    def on_hook_handle(self, interp, ev) -> None:
        interp.report(
            self.code,
            ev.node,
            f"a module hook's handle used inside a compiled region (`{ev.use}`): Dynamo cannot represent a "
            f"RemovableHandle made outside the frame it traces, graph break (GB0013) (remove hooks outside the "
            f"compiled call, e.g. after it returns, or keep the handles where forward does not read them)",
        )
