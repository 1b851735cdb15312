"""PTC2xx: operators whose output shape depends on tensor data.

Dynamo graph-breaks on them ("Dynamic shape operator") unless
``torch._dynamo.config.capture_dynamic_output_shape_ops`` is set (measured on
torch 2.13, see the specs).
"""

from __future__ import annotations

from pt2lint.analysis import dynamo_facts as facts
from pt2lint.analysis.kinds import Kind
from pt2lint.rules.base import Rule

#: The graph-break ids this rule owns: "Dynamic shape operator" and "Attempted to use
#: `torch.nn.functional.one_hot` with data-dependent output shape" (torch 2.13 registry).
SHAPE_GB_IDS = frozenset({"GB0036", "GB0246"})


#: Keyword arguments that choose where and how a result is made, never an operand: left out of
#: the argument kinds matched against the probed forms (``torch.arange(n, device=x.device)``).
OPTION_KEYWORDS = frozenset(
    {"dtype", "device", "layout", "requires_grad", "pin_memory", "memory_format", "generator", "non_blocking", "out"}
)


def arg_kind(value):
    """``"T"`` for a sure tensor, ``"py"`` for a Python number / constant / size, else None (not known)."""
    if value.kind is Kind.TENSOR and not value.weak and not value.maybe_none:
        return "T"
    if value.kind in (Kind.CONST, Kind.SHAPE, Kind.NONE):
        return "py"
    return None


def shape_op_callee(ev):
    """The name the facts table's op scan knows a call by: its qualified name for a function of
    ``torch`` or NumPy (``"torch.unique"``, ``"numpy.unique"``), ``"torch.Tensor.<method>"`` for a
    method of a sure tensor, else None."""
    q = ev.qualname
    if q and q.startswith(("torch.", "numpy.")):
        return q
    if ev.method is not None and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR and not ev.receiver.weak:
        return f"torch.Tensor.{ev.method}"
    return None


def derived_shape_break(callee, args, kwargs, gb_ids=SHAPE_GB_IDS):
    """The probed fact that calling ``callee`` (``"torch.unique"``, ``"torch.Tensor.nonzero"``,
    ``"numpy.unique"``) with these argument values breaks on a data-dependent output shape, or None.

    A callee every probed argument list of which broke (``torch.unique``, ``np.unique``,
    ``F.ctc_loss``) breaks whatever its arguments; one with an argument list that traced
    (``torch.where(b, x, y)``, ``F.one_hot(t, 3)``) breaks only where the argument kinds
    (keyword arguments taken in order after the positional ones, :data:`OPTION_KEYWORDS` left
    out) match a probe that broke
    and no probe of that length traced. ``gb_ids`` are the graph-break ids that count (by default
    the dynamic-shape ones; PTC105 asks for "Data dependent operator", GB0033). Source:
    :func:`pt2lint.analysis.dynamo_facts.shape_op_forms`.
    """
    forms = facts.shape_op_forms(callee)
    if not forms:
        return None
    keyword = facts.sized_keyword(callee)
    if keyword is not None and keyword in kwargs and kwargs[keyword].kind is not Kind.NONE:
        return None  # ``repeat_interleave(t, counts, output_size=n)``: the shape is stated
    if all(f.confirmed and f.outcome == "breaks" and f.gb in gb_ids for f in forms):
        return forms[0]
    values = (*args, *(v for k, v in kwargs.items() if k not in OPTION_KEYWORDS))
    return facts.shape_op_break(callee, tuple(arg_kind(v) for v in values), gb_ids)


class BooleanMaskIndex(Rule):
    """PTC201: indexing a tensor with a boolean mask (``x[x > 0]``)."""

    code = "PTC201"

    def on_index(self, interp, ev) -> None:
        if self.settings.capture_dynamic_output_shape_ops:
            return
        idx = ev.index
        is_mask = idx.kind is Kind.TENSOR and idx.bool_tensor
        if not is_mask and idx.kind is Kind.CONTAINER and idx.elts:
            is_mask = any(e.kind is Kind.TENSOR and e.bool_tensor for e in idx.elts)
        if is_mask:
            interp.report(
                self.code,
                ev.node,
                "boolean-mask indexing has a data-dependent output shape: graph break "
                "(use torch.where(mask, x, 0) or multiply by the mask to keep shapes static)",
            )


class DynamicShapeOp(Rule):
    """PTC202: ``nonzero``, ``unique``, ``masked_select``, ``bincount``, one-argument ``torch.where``..."""

    code = "PTC202"

    def on_call(self, interp, ev) -> None:
        if self.settings.capture_dynamic_output_shape_ops:
            return
        name = None
        fact = None
        q = ev.qualname
        # (repeats only guessed to be a tensor -- a helper's unannotated ``times`` -- decide nothing)
        if q == "torch.repeat_interleave" and len(ev.args) >= 2 and arg_kind(ev.args[1]) == "T" and "output_size" not in ev.kwargs:
            name = "torch.repeat_interleave with tensor repeats"
        elif ev.method == "repeat_interleave" and ev.receiver is not None and ev.receiver.kind is Kind.TENSOR:
            if ev.args and arg_kind(ev.args[0]) == "T" and "output_size" not in ev.kwargs:
                name = ".repeat_interleave() with tensor repeats"
        else:
            callee = shape_op_callee(ev)
            fact = derived_shape_break(callee, ev.args, ev.kwargs) if callee else None
            if fact is not None:
                name = q if callee == q else f".{ev.method}()"
        if name is None:
            return
        if q == "torch.where":
            name = "torch.where(cond)"
        via = f" (reaches aten::{fact.aten[0]}, {fact.gb})" if fact is not None and fact.aten else ""
        nonzero = fact is not None and "nonzero" in fact.aten
        if fact is not None and fact.gb == "GB0246":
            hint = "an explicit num_classes"
        elif nonzero:
            hint = "torch.nonzero_static(x, size=...)"
        else:
            hint = "a static-shape formulation (masking, torch.where)"
        interp.report(
            self.code,
            ev.node,
            f"`{name}` has a data-dependent output shape{via}: graph break (use {hint}, "
            f"or set capture_dynamic_output_shape_ops=True)",
        )
