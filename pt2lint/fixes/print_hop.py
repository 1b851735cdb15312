"""The ``print-hop`` codemod: ``print`` of tensor values becomes torch's graph-safe print operator.

::

    print("scale", s, x)   ->   torch._higher_order_ops.print("scale {!s} {!s}", s, x)

Measured on torch 2.13 (``tests/test_fix_print_hop.py`` repeats it):

* ``print(...)`` breaks the graph (rule PTC301); ``torch._higher_order_ops.print(fmt, *args)``
  does not (``torch._dynamo.explain``: 0 breaks; ``fullgraph=True`` compiles with the
  eager, aot_eager and inductor backends, and ``torch.export.export`` succeeds).
* Eager output is the same text: the operator prints ``fmt.format(*args)``, and ``{!s}``
  formats an argument with ``str()`` as ``print`` does (a bare ``{}`` would print a 0-d
  tensor as a number, ``6.0`` instead of ``tensor(6.)``).
* Compiled output is the same text, except that with the aot_eager and inductor backends
  a tensor that requires grad prints without its ``grad_fn=...`` suffix.
* ``torch.Size`` arguments are flattened to tuples and fail to compile with aot_eager and
  inductor, so only tensors, number literals and string literals are accepted.

Unsafe: the operator is a private torch API (``torch._higher_order_ops``), and compiled
output can differ as above.  ``print`` with keyword arguments (``sep``, ``end``, ``file``,
``flush``), with an f-string, or without a tensor argument is left to the ``guard``
codemod.  This codemod comes after ``guard`` in the preference order: it applies only
when chosen with ``pt2lint fix --rule print-hop``.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from pt2lint.analysis.kinds import Kind
from pt2lint.diagnostics import Applicability, Fix
from pt2lint.fixes.check import constant_string
from pt2lint.fixes.context import FixContext, Refuse
from pt2lint.fixes.predicate import call_qualname, is_number_literal

NAME = "print-hop"
TARGET_CODES = frozenset({"PTC301"})

UNSAFE_NOTE = (
    "`torch._higher_order_ops` is a private torch API, and compiled with aot_eager or inductor a tensor that "
    "requires grad prints without its `grad_fn=...` (measured on torch 2.13; eager output is identical)"
)


def propose(ctx: FixContext, finding, diagnostic) -> Optional[Fix]:
    """The print-operator fix for a ``print(...)`` statement with a tensor argument; ``None`` otherwise."""
    call, stmt = finding.node, finding.stmt
    if finding.stmt is None or ctx.parent(finding.stmt) is None:
        return None  # a finding in another file of the project (its nodes are not this module's)
    if not (isinstance(call, cst.Call) and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
        return None
    small = stmt.body[0]
    if not (isinstance(small, cst.Expr) and small.value is call) or call_qualname(ctx, call) != "builtins.print":
        return None
    if not any(_tensor(ctx, a.value) for a in call.args if a.keyword is None and not a.star):
        return None
    return ctx.fix_once(NAME, call, lambda: _build(ctx, stmt, call), "not rewritten with torch._higher_order_ops.print")


def _tensor(ctx: FixContext, node: cst.BaseExpression) -> bool:
    v = ctx.facts.value(node)
    return v is not None and v.kind is Kind.TENSOR and not v.maybe_none


def _build(ctx: FixContext, stmt: cst.SimpleStatementLine, call: cst.Call) -> Fix:
    if any(a.keyword is not None for a in call.args):
        raise Refuse("`print` has keyword arguments (sep/end/file/flush)")
    if any(a.star for a in call.args):
        raise Refuse("`print` has starred arguments")
    parts: List[str] = []
    args: List[cst.Arg] = []
    for a in call.args:
        text = constant_string(a.value)
        if text is not None:
            parts.append(text.replace("{", "{{").replace("}", "}}"))
        elif is_number_literal(a.value) or _tensor(ctx, a.value):
            parts.append("{!s}")
            args.append(cst.Arg(a.value))
        else:
            code = ctx.module.code_for_node(a.value).strip()
            raise Refuse(f"`{code}` is neither a tensor nor a literal (only those print the same through the operator)")
    torch, import_edits = ctx.torch_name(ctx.enclosing_function(stmt))
    fmt = cst.SimpleString(_quote(" ".join(parts)))
    new_call = cst.Call(
        func=cst.Attribute(value=cst.Attribute(value=cst.Name(torch), attr=cst.Name("_higher_order_ops")), attr=cst.Name("print")),
        args=[cst.Arg(fmt), *args],
    )
    new_stmt = stmt.with_changes(leading_lines=(), body=[stmt.body[0].with_changes(value=new_call)])
    edits = ctx.replace_statements([stmt], [new_stmt])
    return Fix(
        "print through `torch._higher_order_ops.print` (no graph break; same text in eager mode, measured on "
        f"torch 2.13); unsafe: {UNSAFE_NOTE}",
        Applicability.UNSAFE,
        tuple(edits) + tuple(import_edits),
        NAME,
    )


def _quote(text: str) -> str:
    """A Python string literal for ``text``: double-quoted when that needs no escapes, else ``repr``."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return repr(text)


__all__ = ["NAME", "TARGET_CODES", "UNSAFE_NOTE", "propose"]
