"""PTC3xx: calls Dynamo cannot trace -- I/O, logging, debuggers, Python RNG/clocks, skipped C functions.

Graph-break types measured on torch 2.13 (see the specs): "Failed to trace
builtin operator" (``print``, ``breakpoint``), "Attempted to call function
marked as skipped" (``warnings.warn``, ``random``, ``time``, ``zlib.crc32``),
"logging.Logger method not supported" style breaks for logger calls,
``torch.autograd.grad`` in forward, ``torch._dynamo.graph_break()``, and calls to
``torch.compiler.disable``d functions.

Which library functions break is not listed here: PTC303, PTC305, PTC306, PTC307
and PTC312 look the resolved callee up in the Dynamo facts table
(:mod:`pt2lint.analysis.dynamo_facts`, generated from torch's trace rules and
confirmed by probes) and flag only calls a probe saw break. Each rule owns a set of
modules or names; the table decides within it.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis.kinds import Kind
from pt2lint.analysis.walk import iter_children, walk
from pt2lint.rules.base import Rule
from pt2lint.rules.dynamic_shape import arg_kind, derived_shape_break
from pt2lint.rules.refused import refused_call
from pt2lint.analysis.index import ClassInfo, FunctionInfo

LOG_METHODS = frozenset(
    """debug info warning warn error exception critical fatal log warning_once info_once warning_advice
    isEnabledFor getEffectiveLevel""".split()
)
#: "Attempted to call function marked as skipped" (torch 2.13 registry)
_SKIPPED_IDS = frozenset({"GB0007"})
LOGGER_NAMES = frozenset({"logger", "_logger", "log", "_log", "LOGGER", "_LOGGER", "LOG", "logging"})


def _python_values_only(ev) -> bool:
    """Every argument of the call is a Python value the analysis knows (:func:`arg_kind` ``"py"``:
    a constant, a size, a dtype or device, ``None``): no tensor, nothing of unknown kind, no
    ``*``/``**`` splat."""
    if any(a.star for a in ev.node.args):
        return False
    return all(arg_kind(v) == "py" for v in list(ev.args) + list(ev.kwargs.values()))


class PrintCall(Rule):
    """PTC301: ``print(...)`` in a compiled region."""

    code = "PTC301"

    def on_call(self, interp, ev) -> None:
        if ev.qualname == "builtins.print":
            interp.report(
                self.code,
                ev.node,
                "`print()` cannot be traced: graph break (remove it, or guard it with "
                "`if not torch.compiler.is_compiling():`)",
            )


class LoggingCall(Rule):
    """PTC302: ``logger.info(...)``, ``logging.warning(...)`` in a compiled region."""

    code = "PTC302"

    def on_call(self, interp, ev) -> None:
        q = ev.qualname or ""
        method = q.rsplit(".", 1)[-1] if q else ev.method
        if method not in LOG_METHODS:
            gb = facts.inlined_break(q) if q.startswith("logging.") and q.count(".") == 1 else None
            if gb:  # ``logging.getLogger(name)``: inlined, breaks inside (GB6215)
                interp.report(
                    self.code,
                    ev.node,
                    f"`{q}()` cannot be traced: graph break ({gb}) (get the logger once, at module level)",
                )
            return
        hit = False
        if q.startswith("logging.") and q.count(".") == 1:
            hit = True
        elif q.endswith(("getLogger()." + method, "get_logger()." + method)):
            hit = True
        elif ev.receiver is not None and ev.receiver.kind is Kind.UNKNOWN and ev.receiver_node is not None:
            node = ev.receiver_node
            last = getattr(node, "value", None) if node.__class__.__name__ == "Name" else getattr(getattr(node, "attr", None), "value", None)
            hit = last in LOGGER_NAMES
        if hit:
            interp.report(
                self.code,
                ev.node,
                f"logging call `.{method}()` cannot be traced: graph break even when the level drops it "
                f"(move it out of forward or guard it with `if not torch.compiler.is_compiling():`)",
            )


class WarningsWarn(Rule):
    """PTC303: ``warnings.warn(...)`` in a compiled region."""

    code = "PTC303"

    @staticmethod
    def covers(q: str) -> bool:
        return q.startswith("warnings.")

    def on_call(self, interp, ev) -> None:
        q = ev.qualname
        if not q or not self.covers(q):
            return
        if facts.breaks(q):
            interp.report(
                self.code,
                ev.node,
                f"`{q}()` cannot be traced: graph break (warn once outside forward, e.g. in __init__)",
            )
            return
        gb = facts.inlined_break(q)  # ``warnings.simplefilter``: inlined, breaks inside (GB0007)
        if gb:
            interp.report(
                self.code,
                ev.node,
                f"`{q}()` changes the warning filters, which Dynamo cannot trace: graph break ({gb}) "
                "(set the filters outside the compiled region)",
            )


class DebuggerCall(Rule):
    """PTC304: ``breakpoint()`` / ``pdb.set_trace()`` in a compiled region."""

    code = "PTC304"
    NAMES = frozenset({"builtins.breakpoint", "pdb.set_trace", "ipdb.set_trace", "pdb.post_mortem", "pudb.set_trace"})

    def on_call(self, interp, ev) -> None:
        if ev.qualname in self.NAMES:
            interp.report(self.code, ev.node, f"`{ev.qualname.replace('builtins.', '')}()` cannot be traced: graph break (remove the debugger call)")


class NondeterministicPythonCall(Rule):
    """PTC305: Python's ``random``/``time``/``datetime``/``uuid`` and NumPy's RNG in a compiled region.

    The modules are this rule's; whether a call breaks comes from the Dynamo facts
    table. ``random.randint``/``randrange``/``uniform`` are traced (Dynamo draws the
    value as a graph input) and are not flagged; NumPy draws break only without a
    size (``np.random.rand()`` is a Python number, ``np.random.rand(4)`` an array).
    """

    code = "PTC305"
    PREFIXES = ("random.", "time.", "datetime.", "uuid.", "secrets.", "os.urandom", "numpy.random.")
    # Calls in those modules that belong to other rules: reseeding (PTC306) and
    # ``time.sleep``, which reads no clock (PTC307).
    ELSEWHERE = frozenset({"random.seed", "numpy.random.seed", "time.sleep"})

    @classmethod
    def covers(cls, q: str) -> bool:
        return q.startswith(cls.PREFIXES) and q not in cls.ELSEWHERE

    @staticmethod
    def break_of(q: str) -> Optional[str]:
        """The graph-break id the facts table records for a call of ``q`` (probe-confirmed, or
        measured inside a callee Dynamo inlines: ``uuid.uuid4``, ``secrets.token_hex``; or a
        ``numpy.random`` function ``torch._numpy`` lacks, probed in ``numpy_calls``:
        ``np.random.geometric``), else None."""
        return facts.breaks(q) or facts.inlined_break(q) or facts.numpy_unsupported(q)

    def on_call(self, interp, ev) -> None:
        q = ev.qualname
        if not q or not self.covers(q):
            return
        if "()." in q:
            # a method of a generator object built outside the region (``self.rng.random()``
            # with ``self.rng = np.random.default_rng(0)`` in ``__init__``)
            ctor, _, method = q.partition("().")
            gb = facts.numpy_object_method_break(ctor)
            if gb is not None and "." not in method:
                cls = facts.numpy_object_class(ctor)
                interp.report(
                    self.code,
                    ev.node,
                    f"`.{method}()` of a NumPy `{cls.rsplit('.', 1)[-1]}` (built by `{ctor}`): Dynamo cannot trace "
                    f"methods of this object: graph break ({gb}) (draw with torch.rand/torch.randint and a "
                    f"torch.Generator, or draw outside the compiled region and pass the value in)",
                )
            return
        gb = self.break_of(q)
        draw = facts.numpy_scalar_draw(q)
        if draw is not None and ("size" in ev.kwargs or len(ev.args) > draw[1]):
            return  # a sized draw is an array: traced
        if gb is None:
            return
        interp.report(
            self.code,
            ev.node,
            f"`{q}()` is host-side Python state Dynamo does not trace: graph break ({gb}) "
            f"(use torch.rand/torch.randint on the device, or pass the value in as an input)",
        )

    def on_random_arith(self, interp, ev) -> None:
        # ``random.uniform``/``randint``/``randrange`` trace (the draw is a graph input),
        # but Python arithmetic on the draw breaks (measured on torch 2.13, GB0213)
        interp.report(
            self.code,
            ev.node,
            "Python arithmetic on a value drawn by `random` inside a compiled region: graph break (GB0213) "
            "(multiply the tensor by the draw directly, draw with torch.rand on the device, or pass the value in)",
        )


class ManualSeed(Rule):
    """PTC306: reseeding an RNG inside a compiled region."""

    code = "PTC306"
    # The seeding functions; the Dynamo facts table says which break (``np.random.seed()``
    # is traced through torch._numpy, and ``torch.seed()`` is in the graph).
    NAMES = frozenset(
        """torch.manual_seed torch.random.manual_seed torch.cuda.manual_seed torch.cuda.manual_seed_all
        random.seed numpy.random.seed torch.seed""".split()
    )

    def on_call(self, interp, ev) -> None:
        if ev.qualname in self.NAMES and facts.breaks(ev.qualname):
            interp.report(self.code, ev.node, f"`{ev.qualname}()` inside a compiled region: graph break (seed once, outside forward; or pass a torch.Generator)")


class UntraceableCFunction(Rule):
    """PTC307: library functions Dynamo marks as skipped (``zlib.crc32``, ``os.getpid``, ``heapq.heappush``...)
    or inlines and breaks inside (``json.dumps``, ``os.path.exists``, ``copy.copy``), standard-library
    classes it cannot build (``types.SimpleNamespace``, ``datetime.timedelta``), and builtins it has
    no handler for (``exec``, ``compile``, ``globals``).

    Any callee the Dynamo facts table lists as skipped (``trace_rules.lookup`` is
    ``SkipFunctionVariable``) with a probe-confirmed break, or as inlined with a probe that
    broke at or inside the call (:func:`~pt2lint.analysis.dynamo_facts.inlined_break`; with a
    tensor argument, the table's tensor-argument probe), a class whose construction probe broke at
    the call (:func:`~pt2lint.analysis.dynamo_facts.class_construction_break`), or a builtin whose
    probe broke (``BuiltinVariable`` has no handler: GB0059), unless another rule owns it
    (warnings, logging, ``print``, debuggers, clocks and RNGs, seeding).
    """

    code = "PTC307"
    OWNED_ELSEWHERE = ("warnings.", "logging.", "pdb.", "ipdb.", "pudb.")
    #: builtins other rules report (``print``: PTC301, ``breakpoint``: PTC304)
    BUILTINS_ELSEWHERE = frozenset({"builtins.print", "builtins.breakpoint"})

    def on_call(self, interp, ev) -> None:
        q = ev.qualname
        if not q or q.startswith(self.OWNED_ELSEWHERE) or q in ManualSeed.NAMES:
            return
        if q.startswith("builtins."):
            gb = None if q in self.BUILTINS_ELSEWHERE else facts.breaks(q)
            if gb:  # ``exec``, ``compile``, ``globals``: no handler in BuiltinVariable (GB0059)
                interp.report(
                    self.code,
                    ev.node,
                    f"`{q[len('builtins.'):]}()` cannot be traced by Dynamo: graph break ({gb}) "
                    "(do it outside the compiled region)",
                )
            return
        gb = facts.class_construction_break(q)
        if gb and not (NondeterministicPythonCall.covers(q) and NondeterministicPythonCall.break_of(q)):
            interp.report(
                self.code,
                ev.node,
                f"`{q}(...)`: Dynamo cannot build this object while tracing: graph break ({gb}) "
                "(build it outside the compiled region and pass it in, or use a dict or a dataclass)",
            )
            return
        if NondeterministicPythonCall.covers(q):
            return
        if refused_call(ev):
            # refused on every call (``torch.is_inference_mode_enabled()``; ``torch.sparse_coo_tensor``
            # is also skipped): PTC327's
            return
        if isinstance(ev.node, cst.Call) and _python_values_only(ev):
            # probed with no argument; given only Python values (``is_bf16_supported(including_emulation=False)``,
            # ``memory_allocated(0)``) the result is still no tensor (measured on torch 2.13: each breaks)
            gb = facts.torch_query_break(q)
            if gb:  # ``torch._C._is_tracing()``: a graph op whose result is no tensor
                interp.report(
                    self.code,
                    ev.node,
                    f"`{q}()` returns no tensor, and Dynamo records torch functions as graph ops: graph break "
                    f"({gb}) (ask it outside the compiled region, or use a public check Dynamo answers, such as "
                    f"torch.compiler.is_compiling())",
                )
                return
        gb = facts.bound_builtin_method_break(q)
        if gb:  # ``sys.stdout.write(...)``: a method of a C object a module holds
            interp.report(
                self.code,
                ev.node,
                f"`{q}()` is a method of a C object Dynamo cannot trace: graph break ({gb}) "
                "(do it outside the compiled region)",
            )
            return
        gb = facts.skipped_function(q) or facts.skipped_package_call(q)
        if gb is None and not q.startswith(("torch.", "builtins.", ".")):
            gb = _extension_call(q)
        if gb is None and q.startswith("torch."):
            # a torch function the shape-op scan probed, which broke as a skipped function
            # (``torch.lobpcg``)
            fact = derived_shape_break(q, ev.args, ev.kwargs, _SKIPPED_IDS)
            gb = fact.gb if fact is not None else None
        if gb:
            interp.report(
                self.code,
                ev.node,
                f"`{q}()` is marked as skipped by Dynamo: graph break ({gb}) (compute it outside the compiled region)",
            )
            return
        gb = facts.inlined_break(q)
        if gb is None and any(a.kind is Kind.TENSOR and not a.weak for a in ev.args):
            gb = facts.inlined_break(q, "tensor_calls")
        if gb is None and q.startswith("torch."):
            # a torch utility written in Python (``torch.nn.utils.rnn.pack_sequence``,
            # ``torch.nn.utils.fusion.fuse_conv_bn_eval``): the ``utility_calls`` probes
            gb = facts.inlined_break(q, "utility_calls")
        if gb:
            interp.report(
                self.code,
                ev.node,
                f"`{q}()` graph-breaks: Dynamo cannot trace what it does ({gb}) "
                "(compute it outside the compiled region)",
            )

    def on_context_manager(self, interp, ev) -> None:
        # ``with torch.device("cpu"):``, ``with self._lock:`` (a ``threading.Lock``),
        # ``with torch.backends.cudnn.flags(enabled=False):``: the ``context_managers`` probes
        gb = "GB0142" if ev.form == "project-stored" else facts.context_manager_break(ev.qualname, ev.form)
        if gb is None:
            return
        if ev.form not in ("stored", "project-stored"):
            where, advice = "", "enter it outside the compiled region, around the call of the model"
        else:
            where = " built outside the compiled region"
            advice = (
                "build it in the `with` statement inside the region, where Dynamo supports it"
                if ev.form == "project-stored" or facts.context_manager_break(ev.qualname, "local") is None
                else "enter it outside the compiled region, around the call of the model"
            )
        interp.report(
            self.code,
            ev.node,
            f"`with` of a `{ev.qualname}` context manager{where}: Dynamo cannot enter it: graph break ({gb}), "
            f"and the rest of the function runs eagerly ({advice})",
        )
        interp.end_frame(self.code, ev.node)


def _extension_call(qualname: str) -> Optional[str]:
    """``"GB0007"`` when ``qualname`` is a name of an installed third-party package that a compiled
    extension module defines (``scipy.optimize.linear_sum_assignment``): Dynamo cannot trace C
    code and skips it (measured on torch 2.13: GB0007 at the call).  See
    :mod:`pt2lint.analysis.extensions`."""
    from pt2lint.analysis.extensions import extension_binding, installed_package_dirs

    return "GB0007" if extension_binding(qualname, installed_package_dirs()) else None


class NumpyUnsupportedFunction(Rule):
    """PTC312: a NumPy function ``torch._numpy`` does not implement (``np.isin``, ``np.nanmean``...).

    Dynamo traces NumPy calls by running their ``torch._numpy`` equivalents; a function
    with none breaks (GB0294). The table lists those a probe saw break. ``numpy.random``
    belongs to PTC305.
    """

    code = "PTC312"

    def on_call(self, interp, ev) -> None:
        q = ev.qualname
        if not q or not q.startswith("numpy.") or q.startswith("numpy.random."):
            return
        gb = facts.numpy_unsupported(q)
        if gb:
            interp.report(
                self.code,
                ev.node,
                f"`{q}()` has no torch._numpy equivalent, so Dynamo cannot trace it: graph break ({gb}) "
                f"(use the torch function on the tensor, or compute it outside the compiled region)",
            )


def _turns_grad_off(ev) -> bool:
    """``t.requires_grad_(False)`` (or ``requires_grad=False``): measured on torch 2.13, no break on a
    tensor made in the region or on an input (on a non-leaf it raises in eager too), while
    ``requires_grad_()`` and ``requires_grad_(True)`` break."""
    flag = ev.args[0] if ev.args else ev.kwargs.get("requires_grad")
    return flag is not None and flag.kind is Kind.CONST and flag.const is False


class AutogradInForward(Rule):
    """PTC308: ``torch.autograd.grad`` / ``.backward()`` / ``.requires_grad_()`` inside forward."""

    code = "PTC308"
    NAMES = frozenset({"torch.autograd.grad", "torch.autograd.backward"})

    def on_call(self, interp, ev) -> None:
        if _leaf_factory(ev):
            interp.report(
                self.code,
                ev.node,
                f"`{ev.qualname}(..., requires_grad=True)` inside a compiled region: Dynamo does not make leaf "
                "tensors that require grad, graph break (GB0225; create the tensor in `__init__`, as an "
                "`nn.Parameter` or a buffer, or outside the compiled function)",
            )
        elif ev.method == "retain_grad" and not ev.args and not ev.kwargs and _sure_tensor(ev.receiver):
            interp.report(
                self.code,
                ev.node,
                "`.retain_grad()` inside a compiled region: Dynamo refuses it (it does not work with "
                "AOTDispatcher), graph break (GB0108; use a tensor hook, or read the gradient outside the "
                "compiled function)",
            )
        elif ev.qualname in self.NAMES:
            interp.report(self.code, ev.node, f"`{ev.qualname}()` inside a compiled region: graph break (compute gradients outside the compiled forward, or use torch.func.grad)")
        elif ev.method == "backward" and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR and not ev.receiver.weak:
            interp.report(self.code, ev.node, "`.backward()` inside a compiled region: graph break (call backward outside the compiled function)")
        elif (
            ev.method == "requires_grad_" and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR and not ev.receiver.weak
            and not _is_module_state(interp, ev.node, ev.receiver_node) and not _turns_grad_off(ev)
        ):
            interp.report(self.code, ev.node, "`.requires_grad_()` inside a compiled region: graph break (create leaf tensors that need gradients outside the compiled function)")

    def on_attr_store(self, interp, ev) -> None:
        if ev.attr == "requires_grad":
            interp.report(
                self.code,
                ev.node,
                "setting `.requires_grad` inside a compiled region: graph break (GB0206; set it on parameters "
                "outside forward, or use torch.no_grad/detach for the values that must not get gradients)",
            )


def _sure_tensor(value) -> bool:
    return value is not None and value.kind is Kind.TENSOR and not value.weak


def _leaf_factory(ev) -> bool:
    """``torch.zeros(4, requires_grad=True)``: a function of the ``torch`` namespace that returns a
    tensor, called with ``requires_grad`` a constant ``True``.

    Source: ``TorchInGraphFunctionVariable.call_function`` in ``torch/_dynamo/variables/torch.py``
    (torch 2.13) breaks ("Attempted to use tensor creation function with requires_grad=True",
    GB0225) on any such call whose result is a tensor. Measured on torch 2.13: ``torch.zeros``,
    ``empty``, ``full``, ``arange``, ``randn``, ``tensor`` and ``zeros_like`` with
    ``requires_grad=True`` broke; ``requires_grad=False`` and the Tensor method
    ``x.new_zeros(4, requires_grad=True)`` (not a torch function) were traced.
    """
    q = ev.qualname
    if q is None or not q.startswith("torch.") or q.count(".") != 1 or q[6:7].isupper():
        return False
    flag = ev.kwargs.get("requires_grad")
    return flag is not None and flag.kind is Kind.CONST and flag.const is True and _sure_tensor(ev.result)


def _self_rooted(node, me: str) -> bool:
    """``self.x`` / ``self.fc.weight``: an attribute chain whose root is the name ``me``."""
    if not isinstance(node, cst.Attribute):
        return False
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name) and node.value == me


def _binds(stmt, name: str) -> bool:
    """Whether ``stmt`` (nested functions aside) binds the local ``name`` anywhere."""
    for n in walk(stmt, into_functions=False):
        targets = ()
        if isinstance(n, cst.Assign):
            targets = tuple(t.target for t in n.targets)
        elif isinstance(n, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For)):
            targets = (n.target,)
        elif isinstance(n, cst.WithItem) and n.asname is not None:
            targets = (n.asname.name,)
        elif isinstance(n, cst.ExceptHandler) and n.name is not None:
            targets = (n.name.name,)
        if any(isinstance(e, cst.Name) and e.value == name for t in targets for e in walk(t)):
            return True
    return False


def _plain_alias(stmt, name: str, me: str) -> bool:
    """``name = self.x`` (or ``a = name = self.x``) as the last binding of ``name`` in ``stmt``."""
    smalls = list(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
    for small in reversed(smalls):
        if not _binds(small, name):
            continue
        return (
            isinstance(small, cst.Assign)
            and all(isinstance(t.target, cst.Name) for t in small.targets)
            and _self_rooted(small.value, me)
        )
    return False


def _is_module_state(interp, call, node) -> bool:
    """Whether ``node`` (the receiver of ``call``) is a tensor held on ``self``: ``self.zero``,
    ``self.fc.weight``, or a local name whose binding reaching the call is ``name = self.<attr>``
    (``loss = self.zero`` earlier in the same or an enclosing block, with no other binding of
    the name in between or in a loop around the call).

    ``requires_grad_()`` on such persistent state breaks only on the first compiled call
    (GB0125); its ``requires_grad`` flag then stays set on the buffer or parameter, Dynamo's
    guard on it fails once, and the recompiled frame traces the call without a break
    (measured on torch 2.13: a fresh module with ``self.zero.requires_grad_()`` in train mode
    broke on call 1 and recompiled into one full graph on call 2; a forward input kept the
    broken graph on every call).
    """
    frame = interp.frame
    fn = getattr(frame, "func", None) if frame is not None else None
    fdef = getattr(fn, "node", None)
    if node is None or not isinstance(fdef, cst.FunctionDef) or getattr(fn, "cls", None) is None:
        return False
    params = list(fdef.params.posonly_params) + list(fdef.params.params)
    if not params:
        return False
    me = params[0].name.value
    if _self_rooted(node, me):
        return True
    if not isinstance(node, cst.Name) or node.value == me:
        return False
    name = node.value
    parents = {}
    for n in walk(fdef, into_functions=False):
        for c in iter_children(n):
            parents[id(c)] = n
    loops = []
    cur = call
    while cur is not fdef:
        parent = parents.get(id(cur))
        if parent is None:
            return False
        if isinstance(parent, (cst.For, cst.While)):
            loops.append(parent)
        if isinstance(parent, (cst.IndentedBlock, cst.SimpleStatementLine)):
            body = list(parent.body)
            idx = next((i for i, b in enumerate(body) if b is cur), None)
            for stmt in reversed(body[:idx] if idx is not None else ()):
                if _binds(stmt, name):
                    return _plain_alias(stmt, name, me) and not any(_binds(loop, name) for loop in loops)
        cur = parent
    return False


class ExplicitGraphBreak(Rule):
    """PTC309: ``torch._dynamo.graph_break()``."""

    code = "PTC309"

    def on_call(self, interp, ev) -> None:
        if ev.qualname in ("torch._dynamo.graph_break", "torch.compiler.graph_break"):
            interp.report(self.code, ev.node, "explicit `graph_break()`: the graph is split here")


def _report_ending_frame(code: str, interp, node, message: str) -> None:
    """Report ``code`` at ``node`` and end the frame there (Dynamo skips the rest of the function),
    unless the frame already stopped at a finding of the same rule: fixing that one fixes this."""
    frame = interp.frame
    if frame is not None and getattr(frame.skipped, "code", None) == code:
        return
    interp.report(code, node, message)
    interp.end_frame(code, node)


class RnnModuleCall(Rule):
    """PTC311: an ``nn.RNN``/``nn.LSTM``/``nn.GRU`` submodule read or called in a compiled region.

    Dynamo refuses to wrap an RNN module ("Attempted to wrap RNN, GRU, or LSTM", GB0014) where
    compiled code first reads it, and runs the rest of the frame eagerly: measured on torch 2.13,
    ``x.new_zeros((self.lstm.num_layers, 1, 4))`` broke on its line, before the ``self.lstm(...)``
    call, and an ``.item()`` after the call was not reached.
    """

    code = "PTC311"
    NAMES = frozenset({"torch.nn.RNN", "torch.nn.LSTM", "torch.nn.GRU", "torch.nn.modules.rnn.RNN", "torch.nn.modules.rnn.LSTM", "torch.nn.modules.rnn.GRU"})

    def _report(self, interp, node, qualname: str) -> None:
        if self.settings.allow_rnn:
            return  # traced with the knob on (measured on torch 2.13: one graph, no break)
        _report_ending_frame(
            self.code, interp, node,
            f"`{qualname.rsplit('.', 1)[-1]}` modules are not traced by default: graph break (GB0014), and the rest "
            f"of the function runs eagerly (set torch._dynamo.config.allow_rnn = True, or write the recurrence with cells)",
        )

    def on_submodule_access(self, interp, ev) -> None:
        if ev.qualname in self.NAMES:
            self._report(interp, ev.node, ev.qualname)

    def on_call(self, interp, ev) -> None:
        # a call through ``self.lstm`` was reported where the submodule was read
        if isinstance(ev.callee, str) and ev.callee in self.NAMES and not isinstance(ev.node.func, cst.Attribute):
            self._report(interp, ev.node, ev.callee)
            return
        # ``super().forward(x, hx)`` in a project subclass of ``nn.LSTM``: torch's RNN forward, which
        # Dynamo refuses the same way (measured on torch 2.13: GB0014 at that line, in the frame
        # Dynamo compiles for the subclass's forward)
        recv = ev.receiver
        if ev.method in ("forward", "__call__") and recv is not None and recv.kind is Kind.SUPER and isinstance(recv.ref, ClassInfo):
            if recv.ref.lookup_method(ev.method, skip_self=True) is None:
                torch_rnn = [b for b in recv.ref.external_bases() if b in self.NAMES]
                if torch_rnn:
                    self._report(interp, ev.node, torch_rnn[0])


class TorchScriptModuleCall(Rule):
    """PTC328: a TorchScript module (``torch.jit.script``/``freeze``/``trace`` of a module) used in a
    compiled region.

    Measured on torch 2.13 (the spec's examples): a scripted or frozen submodule breaks where
    compiled code first reads it ("torch.jit.script/freeze modules unsupported", GB4695) and Dynamo
    skips the whole frame ("Failed to handle graph break gracefully"); a traced submodule breaks at
    its call ("Attempted to inline function marked as skipped", GB0008, inside ``nn.Module``'s
    ``_CachedForward``) and the frame resumes after it.  ``torch.jit.script`` of a function is
    traced like the function (no break).
    """

    code = "PTC328"

    def _scripted(self, interp, node) -> None:
        _report_ending_frame(
            self.code, interp, node,
            "a torch.jit.script/freeze module runs in the TorchScript runtime, which Dynamo does not trace: "
            "graph break (GB4695), and the rest of the function runs eagerly (keep the eager nn.Module "
            "for the compiled model)",
        )

    def on_submodule_access(self, interp, ev) -> None:
        from pt2lint.analysis.interp import SCRIPT_MODULE

        if ev.qualname == SCRIPT_MODULE:
            self._scripted(interp, ev.node)

    def on_call(self, interp, ev) -> None:
        from pt2lint.analysis.interp import SCRIPT_MODULE, TRACED_MODULE

        if ev.callee == SCRIPT_MODULE and not isinstance(ev.node.func, cst.Attribute):
            self._scripted(interp, ev.node)  # a scripted module held in a local (its read was not of ``self``)
        elif ev.callee == TRACED_MODULE:
            interp.report(
                self.code,
                ev.node,
                "a torch.jit.trace module is not traced by Dynamo (its forward is skipped): graph break "
                "(GB0008) (keep the eager nn.Module for the compiled model)",
            )


class DisabledFunctionCall(Rule):
    """PTC310: calling a ``torch.compiler.disable``d function from a compiled region."""

    code = "PTC310"

    def on_call(self, interp, ev) -> None:
        fn = ev.callee
        if isinstance(fn, FunctionInfo) and fn.disabled:
            interp.report(
                self.code,
                ev.node,
                f"`{fn.symbol}` is decorated with torch.compiler.disable: calling it splits the graph "
                f"(intended? suppress this line; otherwise remove the decorator)",
            )


class FunctionAttributeStore(Rule):
    """PTC330: ``f.calls += 1`` / ``f.last = v`` on a function object in a compiled region.

    Dynamo models a function that exists outside the frame it traces (a module-level function,
    the wrapper a decorator returned) as a value it cannot store attributes on: "setattr() on
    unsupported type" (GB0467), a graph break at the store (measured on torch 2.13); a function
    defined in the traced frame itself takes the store.
    """

    code = "PTC330"

    def on_function_attr_store(self, interp, ev) -> None:
        name = getattr(ev.function, "name", "") or "function"
        interp.report(
            self.code,
            ev.node,
            f"storing `.{ev.attr}` on the function `{name}`: Dynamo cannot set attributes on a function "
            f"object, graph break (GB0467) (keep the state in a module buffer or a dict outside the "
            f"compiled region, or count outside it)",
        )


class TorchGeneratorUse(Rule):
    """PTC315: a ``torch.Generator`` made, seeded or passed as ``generator=`` in a compiled region.

    Measured on torch 2.13 (the spec's examples): ``torch.Generator()`` in ``forward``
    breaks where it is made ("An opaque object was created in the middle of the
    program", GB0363), any method of a generator breaks ("torch.Generator method",
    GB7650), and a generator passed to a torch random function breaks at that call
    ("Failed to convert args/kwargs to proxy", GB0055), whether it was made in
    ``forward``, in ``__init__`` or at module level.  ``generator=None`` traces.
    Only values known to be generators count: a ``generator`` parameter of unknown
    value is not flagged.
    """

    code = "PTC315"

    def on_call(self, interp, ev) -> None:
        from pt2lint.analysis.interp import GENERATOR_REF

        q = ev.qualname or ""
        if q == "torch.Generator":
            interp.report(self.code, ev.node, "`torch.Generator()` made inside a compiled region: graph break (GB0363) (make it outside and draw the noise outside, or use the global RNG: torch.randn without generator=)")
        elif q.startswith(GENERATOR_REF + "."):
            name = q[len(GENERATOR_REF) + 1:]
            interp.report(self.code, ev.node, f"`Generator.{name}()` inside a compiled region: graph break (GB7650) (seed and use the generator outside the compiled region)")
        gen = ev.kwargs.get("generator")
        if gen is not None and gen.kind is Kind.UNKNOWN and gen.ref == GENERATOR_REF and (q.startswith("torch.") or ev.method):
            interp.report(self.code, ev.node, "a `torch.Generator` passed as `generator=` inside a compiled region: graph break (GB0055) (draw the noise outside and pass it in, or use the global RNG)")


class GeneratorGraphBreak(Rule):
    """PTC313: a graph break inside a generator expression consumed by ``all``/``any``/``sum``/``set``."""

    code = "PTC313"

    def on_generator_break(self, interp, ev) -> None:
        interp.report(
            self.code,
            ev.node,
            f"a graph break inside the generator that `{ev.builtin}()` consumes: Dynamo cannot resume the "
            f"generator and breaks again here (pass a list instead, `{ev.builtin}([...])`, or remove the "
            f"break inside)",
        )
