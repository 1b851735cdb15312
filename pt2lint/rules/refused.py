"""PTC327: a torch function, Tensor method or tensor attribute write that Dynamo refuses
whatever its arguments.

Dynamo has a handler for each of these, and the handler gives up: ``torch.is_inference_mode_enabled()``
(GB0046, ``TorchInGraphFunctionVariable``'s handler in ``torch/_dynamo/variables/torch.py``),
``t.random_()`` (GB0107) and ``t.uniform_(**{"from": a})`` (GB0110, ``TensorVariable.call_method``),
``t.share_memory_()`` (GB0117: ``method_share_memory_`` has a signature the call does not fit, so
the call fails inside Dynamo), a sparse tensor made in the region (``t.to_sparse()``: GB0277 at the
call, GB0015 where it is used next; the sparse compressed factories ``torch.sparse_csr_tensor``
and its siblings, which ``trace_rules.manual_torch_name_rule_map`` maps to
``SparseTensorCreationSkipVariable``: GB0374; ``torch.sparse_coo_tensor``, a skipped function:
GB0007), and a store to ``t.real`` / ``t.imag`` (GB0058, ``BuiltinVariable.call_setattr``
refuses every tensor getset descriptor but ``data``, ``grad`` and ``requires_grad``).

None of these is a table torch exports for the linter to read, so the names are listed here,
each one measured on torch 2.13 (the spec's evidence; tests/test_refused.py holds the near misses).
"""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from pt2lint.analysis import dynamo_facts
from pt2lint.analysis.kinds import Kind
from pt2lint.analysis.walk import walk
from pt2lint.rules.base import Rule

#: torch functions whose Dynamo handler refuses every call (``torch/_dynamo/variables/torch.py``).
REFUSED_FUNCTIONS: Dict[str, str] = {"torch.is_inference_mode_enabled": "GB0046"}

#: sparse tensor factories: the compressed ones are ``SparseTensorCreationSkipVariable`` in
#: ``trace_rules.manual_torch_name_rule_map`` (GB0374); ``sparse_coo_tensor`` is
#: ``SkipFunctionVariable`` (GB0007). Each measured on torch 2.13.
SPARSE_FACTORIES: Dict[str, str] = {
    "torch.sparse_csr_tensor": "GB0374",
    "torch.sparse_csc_tensor": "GB0374",
    "torch.sparse_bsr_tensor": "GB0374",
    "torch.sparse_bsc_tensor": "GB0374",
    "torch.sparse_compressed_tensor": "GB0374",
    "torch.sparse_coo_tensor": "GB0007",
}

#: Tensor methods that return a sparse tensor: Dynamo cannot wrap the result (GB0277), measured
#: for each on torch 2.13 (``to_sparse`` with and without ``layout=``).
SPARSE_METHODS = frozenset({"to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc"})

#: Tensor methods ``TensorVariable`` refuses on every tensor, measured on torch 2.13.
REFUSED_METHODS: Dict[str, str] = {"random_": "GB0107", "share_memory_": "GB0117"}

#: tensor attributes whose store Dynamo refuses on every tensor, inputs included (measured).
REFUSED_STORES = frozenset({"real", "imag"})


#: ``torch._check*`` functions Dynamo handles, with the position of their ``message`` argument
#: (``torch/_dynamo/variables/torch.py``, ``handle_check`` and ``handle_check_with``, torch 2.13).
CHECK_MESSAGE_POSITION: Dict[str, int] = {
    "torch._check": 1,
    "torch._check_index": 1,
    "torch._check_value": 1,
    "torch._check_type": 1,
    "torch._check_not_implemented": 1,
    "torch._check_with": 2,
}


def _message_node(call: cst.Call, position: int) -> Optional[cst.BaseExpression]:
    """The ``message`` argument of a ``torch._check*`` call, or None (absent, or hidden by a star)."""
    if any(a.star for a in call.args):
        return None
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "message":
            return a.value
    positional = [a.value for a in call.args if a.keyword is None]
    return positional[position] if len(positional) > position else None


def _captures_non_constant(interp, fn: cst.Lambda) -> bool:
    """Whether the lambda reads a local of the enclosing function that holds a tensor, a module or
    ``self``: a closure variable that is no Python constant."""
    params = {p.name.value for p in walk(fn.params) if isinstance(p, cst.Param)}
    frame = interp.frame
    if frame is None:
        return False
    for node in walk(fn.body):
        if isinstance(node, cst.Name) and node.value not in params:
            v = frame.lookup(node.value)
            if v is not None and not v.weak and v.kind in (Kind.TENSOR, Kind.MODULE, Kind.SELF):
                return True
    return False


def check_message_break(interp, ev) -> Optional[str]:
    """The graph-break id of a ``torch._check*`` call's message argument, or None.

    Source: ``check_impl`` in ``torch/_dynamo/variables/torch.py`` (torch 2.13): a message that is
    not a function defined in the compiled region breaks ("Can't extract message from
    torch._check*()", GB9840), and one whose closure holds a value that is not a Python constant
    breaks too ("Can't convert torch._check*() message closure", GB9158). Measured on torch 2.13:
    a string, ``None`` and a module-level function as message broke with GB9840, and lambdas
    reading the tensor ``x`` or ``self`` with GB9158; no message, ``lambda: "bad"``, a lambda
    reading a local string, and a function defined in ``forward`` returning a string were
    traced. Only those forms are reported: a message whose value is unknown is not.
    """
    position = CHECK_MESSAGE_POSITION.get(ev.qualname or "")
    if position is None:
        return None
    node = _message_node(ev.node, position)
    if node is None:
        return None
    if isinstance(node, cst.Lambda):
        return "GB9158" if _captures_non_constant(interp, node) else None
    if isinstance(node, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return "GB9840"
    if isinstance(node, cst.Name):
        if node.value == "None":
            return "GB9840"
        frame = interp.frame
        if frame is not None and frame.lookup(node.value) is None and interp.global_value(node.value).kind is Kind.FUNCTION:
            return "GB9840"  # a module-level function: not defined in the compiled region
    return None


def _sure_tensor(value) -> bool:
    return value is not None and value.kind is Kind.TENSOR and not value.weak


def refused_call(ev) -> Optional[str]:
    """The graph-break id Dynamo gives the call of ``ev`` whatever its values, or None.

    Sources: the tables of this module (each entry measured on torch 2.13), and the Dynamo
    facts table for the methods that take a Python function (``t.apply_(fn)``, ``t.map_(o, fn)``:
    ``callable_methods``).
    """
    if ev.qualname is not None:
        return REFUSED_FUNCTIONS.get(ev.qualname) or SPARSE_FACTORIES.get(ev.qualname)
    if not ev.method or not _sure_tensor(ev.receiver):
        return None
    if ev.method in REFUSED_METHODS:
        return REFUSED_METHODS[ev.method]
    gb = dynamo_facts.callable_method_break(ev.method)
    if gb is not None:
        return gb  # ``t.apply_(fn)``: a Python function cannot be an argument of a graph op
    if ev.method == "uniform_" and "from" in ev.kwargs:
        return "GB0110"  # only reachable as ``uniform_(**{"from": a})``
    if ev.method in SPARSE_METHODS:
        return "GB0277"
    return None


_ADVICE = {
    "GB0046": "decide inference mode outside the compiled region and pass a flag in",
    "GB0107": "use `torch.randint(low, high, shape)` or `torch.randint_like(t, low, high)`",
    "GB0110": "pass the bounds positionally: `t.uniform_(a, b)`",
    "GB0117": "move tensors to shared memory before compiling, outside the region",
    "GB0277": "Dynamo does not trace sparse tensors; convert outside the compiled region",
    "GB0374": "Dynamo does not trace sparse tensors; build them outside the compiled region",
    "GB0007": "Dynamo does not trace sparse tensors; build them outside the compiled region",
    "GB0055": "write the element function with tensor ops (`torch.where`, arithmetic) on the whole tensor",
}


class RefusedTorchApi(Rule):
    """PTC327: ``torch.is_inference_mode_enabled()``, ``t.random_()``, ``t.share_memory_()``,
    ``t.to_sparse()``, ``torch.sparse_csr_tensor(...)``, ``t.real = v`` in a compiled region."""

    code = "PTC327"

    def on_call(self, interp, ev) -> None:
        gb = check_message_break(interp, ev)
        if gb is not None:
            interp.report(
                self.code,
                ev.node,
                f"the message of `{ev.qualname}()`: Dynamo takes only a function defined in the compiled "
                f"region whose closure holds Python constants, graph break ({gb}; write "
                "`lambda: \"...\"` reading no tensor, module or `self`, or drop the message)",
            )
            return
        if dynamo_facts.forbidden_callable(ev.qualname):
            interp.report(
                self.code,
                ev.node,
                f"`{ev.qualname}()` is a function Dynamo forbids in a traced region: compilation fails "
                "(AssertionError \"Attempt to trace forbidden callable\"), in every mode, so the model "
                "does not run compiled at all (call it on the inputs before the compiled call)",
            )
            return
        gb = refused_call(ev)
        if gb is None:
            return
        what = f"`{ev.qualname}()`" if ev.qualname else f"`.{ev.method}()` of a tensor"
        interp.report(self.code, ev.node, f"{what}: Dynamo refuses it on every call, graph break ({gb}; {_ADVICE[gb]})")

    def on_attr_store(self, interp, ev) -> None:
        if ev.attr in REFUSED_STORES:
            interp.report(
                self.code,
                ev.node,
                f"setting `.{ev.attr}` of a tensor: Dynamo refuses the store, graph break (GB0058; "
                f"write into it in place instead: `t.{ev.attr}.copy_(v)`)",
            )
