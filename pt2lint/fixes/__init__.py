"""Codemods: LibCST rewrites that remove a finding, attached to it as a :class:`~pt2lint.diagnostics.Fix`.

Every codemod keeps formatting and comments outside the rewritten statement,
adds ``import torch`` through LibCST's ``AddImportsVisitor`` when it is
missing, and must (a) give code that parses, (b) be idempotent, (c) remove the
finding it targets (DESIGN, "Fixes").  Each fix carries its applicability:

========================  =====================================  ===================
codemod                   rewrites                               applicability
========================  =====================================  ===================
``check``                 ``if <tensor test>: raise E("msg")``   safe when proven (op
                          -> a generated custom op in compiled   form); unsafe
                          code, the ``if``/``raise`` in eager    (``_assert_async``:
                          (PTC104, PTC101, PTC103); else, and    the type becomes
                          ``assert <tensor test>, "msg"``        RuntimeError)
                          (PTC602): ``torch._assert_async``
``cond``                  data-dependent ``if``/``elif`` ->      safe when provably
                          ``torch.cond`` (PTC104, and PTC101 /   equivalent, else
                          PTC103 in an ``if`` test)              unsafe or refused
``where``                 ``a if t else b``, two-branch single   unsafe
                          assignment -> ``torch.where``
``out-of-place``          ``x.add_(y)`` -> ``x = x.add(y)``,     unsafe
                          ``x += y`` -> ``x = x + y`` (PTC401)
``item-branch``           ``s = t.item()`` read only by a later as the inner fix
                          ``if`` test: inline, then ``check`` /  (``cond``, ``where``
                          ``cond`` / ``where`` (PTC101, PTC103)  or ``check``)
``mask-index``            ``x[m].sum()`` -> ``torch.where(m, x,  safe (sum), unsafe
                          0).sum()``, ``.mean()`` -> sum/count   (mean); only for m
                          (PTC201)                               built from x
``scalar-tensor``         ``x * t.item()`` -> ``x * t.detach()`` unsafe
                          (PTC101)
``guard``                 ``print``/logging -> under ``if not    safe
                          torch.compiler.is_compiling():``
                          (PTC301, PTC302)
``print-hop``             ``print("s", t)`` -> ``torch._higher_  unsafe (after
                          order_ops.print("s {!s}", t)``         ``guard``: only with
                          (PTC301)                               ``--rule print-hop``)
========================  =====================================  ===================

A refused rewrite is a display-only fix with no edits whose message says why.
Facts come from the analysis (:mod:`pt2lint.fixes.facts` re-runs the
interpreter with a recorder); nothing here re-derives value kinds.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from pt2lint.diagnostics import Applicability, Diagnostic, Fix

# Preference order: for a finding several codemods could fix, the first that applies wins.
FIX_NAMES: Tuple[str, ...] = ("check", "cond", "where", "item-branch", "mask-index", "scalar-tensor", "out-of-place", "guard", "print-hop")
CODEMOD_CODES: Dict[str, FrozenSet[str]] = {
    "check": frozenset({"PTC104", "PTC101", "PTC103", "PTC602"}),
    "cond": frozenset({"PTC104", "PTC101", "PTC103"}),
    "where": frozenset({"PTC104", "PTC101", "PTC103"}),
    "item-branch": frozenset({"PTC101", "PTC103"}),
    "mask-index": frozenset({"PTC201"}),
    "scalar-tensor": frozenset({"PTC101"}),
    "out-of-place": frozenset({"PTC401"}),
    "guard": frozenset({"PTC301", "PTC302"}),
    "print-hop": frozenset({"PTC301"}),
}
FIXABLE_CODES: FrozenSet[str] = frozenset().union(*CODEMOD_CODES.values())
#: Codemods tried only when named (``fix --rule print-hop``): never in place of a refused default.
OPT_IN: FrozenSet[str] = frozenset({"print-hop"})
DEFAULT_FIX_NAMES: Tuple[str, ...] = tuple(n for n in FIX_NAMES if n not in OPT_IN)

NamesFor = Callable[[Diagnostic], Optional[Sequence[str]]]


def _codemod(name: str):
    if name == "check":
        from pt2lint.fixes import check as mod
    elif name == "cond":
        from pt2lint.fixes import cond as mod
    elif name == "item-branch":
        from pt2lint.fixes import item_branch as mod
    elif name == "mask-index":
        from pt2lint.fixes import mask_index as mod
    elif name == "where":
        from pt2lint.fixes import where as mod
    elif name == "scalar-tensor":
        from pt2lint.fixes import scalar_tensor as mod
    elif name == "out-of-place":
        from pt2lint.fixes import out_of_place as mod
    elif name == "print-hop":
        from pt2lint.fixes import print_hop as mod
    else:
        from pt2lint.fixes import guard as mod
    return mod


def _strict() -> bool:
    return os.environ.get("PT2LINT_FIX_STRICT", "") not in ("", "0")


def propose_fix(ctx, finding, diagnostic: Diagnostic, names: Optional[Sequence[str]] = None) -> Optional[Fix]:
    """The fix of the first codemod (in :data:`FIX_NAMES` order, restricted to ``names``) that applies.

    With ``names=None`` the :data:`OPT_IN` codemods are not tried.

    A codemod that applies but refuses gives a display-only fix; it is kept only
    when no later codemod has a real fix.  Returns ``None`` when no codemod applies.
    """
    allowed = DEFAULT_FIX_NAMES if names is None else [n for n in FIX_NAMES if n in names]
    refusal: Optional[Fix] = None
    for name in allowed:
        if diagnostic.code not in CODEMOD_CODES[name]:
            continue
        fix = _codemod(name).propose(ctx, finding, diagnostic)
        if fix is None:
            continue
        if fix.applicability is Applicability.DISPLAY_ONLY:
            refusal = refusal or fix
            continue
        return fix
    return refusal


def attach_fixes(
    module,
    source: str,
    settings,
    findings: Sequence,
    diagnostics: Sequence[Diagnostic],
    names_for: Optional[NamesFor] = None,
    path: str = "",
    *,
    filename: str = "-",
    overlay=None,
    data: Optional[bytes] = None,
    dependencies: Optional[Dict[str, Optional[str]]] = None,
) -> List[Diagnostic]:
    """Return ``diagnostics`` with a :class:`Fix` on each finding a codemod can handle.

    Args:
        module: the parsed module the findings were computed on.
        source: its text.
        settings: the :class:`~pt2lint.settings.LintSettings` of the run.
        findings: :class:`~pt2lint.analysis.driver.Finding` objects (diagnostic plus nodes).
        diagnostics: the diagnostics to report (a subset of the findings' diagnostics,
            after suppressions, in any order); others pass through unchanged.
        names_for: for each diagnostic, the codemods allowed (``None``: all).
        path: the module's path relative to the project root (names of generated module-level
            definitions are derived from it; see :class:`~pt2lint.fixes.context.FixContext`).
        filename: the module's file as linted; the codemods' facts analyse it in its project
            (helpers imported from other files are followed), as the lint run does.
        overlay: ``abs path -> text`` of unsaved editor buffers, read instead of the disk.
        data: the file's bytes as read, if known.
        dependencies: when given, ``abs path -> sha256 or None`` of every other file the facts
            were computed from is added to it (a cached result depends on them too).

    Returns:
        The diagnostics in the same order; those with a fix are copies with ``fix`` set.
        A diagnostic that already has a fix keeps it.  A codemod error never stops
        linting: the finding is left without a fix (set ``PT2LINT_FIX_STRICT=1`` to raise).
    """
    by_diag = {id(f.diagnostic): f for f in findings}
    wanted = [d for d in diagnostics if d.fix is None and d.code in FIXABLE_CODES and id(d) in by_diag]
    if not wanted:
        return list(diagnostics)
    from pt2lint.fixes.context import FixContext

    reported = {id(d) for d in diagnostics}
    ctx = FixContext(
        module, source, settings, findings, {id(f): f.diagnostic for f in findings if id(f.diagnostic) in reported}, path,
        filename=filename, overlay=overlay, data=data,
    )
    out: List[Diagnostic] = []
    for d in diagnostics:
        if d.fix is not None or d.code not in FIXABLE_CODES or id(d) not in by_diag:
            out.append(d)
            continue
        names = names_for(d) if names_for is not None else None
        if names is not None and not names:
            out.append(d)
            continue
        try:
            fix = propose_fix(ctx, by_diag[id(d)], d, names)
        except RecursionError:
            fix = None
        except Exception:
            if _strict():
                raise
            fix = None
        out.append(replace(d, fix=fix) if fix is not None else d)
    if dependencies is not None:
        for p, h in ctx.dependencies:
            dependencies.setdefault(p, h)
    return out


__all__ = ["CODEMOD_CODES", "DEFAULT_FIX_NAMES", "FIXABLE_CODES", "FIX_NAMES", "OPT_IN", "attach_fixes", "propose_fix"]
