"""One module in, diagnostics out: index, interpret, resolve positions."""

from __future__ import annotations

import re
from typing import FrozenSet, List, NamedTuple, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from pt2lint.analysis.index import ModuleIndex
from pt2lint.analysis.interp import Interpreter
from pt2lint.analysis.positions import LazyPositions, PositionMismatch
from pt2lint.diagnostics import Diagnostic, Position
from pt2lint.rules import build_dispatch
from pt2lint.specs import load_specs

# A compiled region needs a ``forward``/``__call__`` method or a ``torch.compile``
# (or ``torch._dynamo.optimize``) call; a file with none of these words has none.
REGION_MARKERS = ("forward", "__call__", "compile", "optimize")
_COMPILE_CALL = re.compile(r"\b(?:compile|optimize)\s*\(\s*[A-Za-z_]")


def may_contain_region(source: str) -> bool:
    """Cheap, lossless prefilter: False only when the file cannot hold a compiled region."""
    return any(m in source for m in REGION_MARKERS)


def _start_node(node: cst.CSTNode) -> cst.CSTNode:
    """Dynamo reports a method call at the method name's line (CPython 3.11 call locations)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr
    return node


def _resolve_positions(module: cst.Module, source: str, raw) -> dict:
    """Positions of every node the findings need: per statement when possible, else one full pass."""
    try:
        lazy = LazyPositions(module, source)
        groups: dict = {}
        for f in raw:
            stmt = f.stmt
            if stmt is None:
                raise PositionMismatch("finding outside a statement")
            key = (id(stmt), id(f.header) if f.header is not None and not isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else None)
            entry = groups.setdefault(key, (stmt, f.header if key[1] is not None else None, []))
            entry[2].extend([f.node, _start_node(f.node)])
        out: dict = {}  # node -> CodeRange (LibCST nodes hash by identity)
        for stmt, header, nodes in groups.values():
            rng = lazy.ranges(stmt, header, nodes + ([stmt] if header is None else [header]))
            for n in nodes + ([stmt] if header is None else [header]):
                out[n] = rng[id(n)]
            if header is not None:
                anchor = lazy.anchors.starts[id(stmt)]
                h = out[header]
                out[stmt] = type(h)((min(anchor.lineno, h.start.line), h.start.column), (h.end.line, h.end.column))
        return out
    except PositionMismatch:
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


class Finding(NamedTuple):
    """A diagnostic together with the nodes it was found on (for codemods and the LSP).

    ``node`` is the flagged expression or statement of ``module``; ``stmt`` the
    statement that contains it (``If`` for a branch test, a ``SimpleStatementLine``
    otherwise).  Node identity is meaningful only for the module object that was
    analysed.
    """

    diagnostic: Diagnostic
    node: cst.CSTNode
    stmt: Optional[cst.CSTNode]


def analyse_module(
    module: cst.Module, source: str, filename: str, settings, enabled: FrozenSet[str]
) -> List[Diagnostic]:
    """Run every enabled rule over the compiled regions of ``module``.

    Args:
        module: the parsed module (not copied; nodes are used as identities).
        source: its text (for the prefilter).
        filename: the name findings carry.
        settings: :class:`~pt2lint.settings.LintSettings`.
        enabled: codes enabled for this file.

    Returns:
        Diagnostics (unsorted, unsuppressed).
    """
    return [f.diagnostic for f in analyse_findings(module, source, filename, settings, enabled)]


def analyse_findings(
    module: cst.Module, source: str, filename: str, settings, enabled: FrozenSet[str]
) -> List[Finding]:
    """Like :func:`analyse_module`, keeping each diagnostic's nodes (see :class:`Finding`)."""
    if not may_contain_region(source):
        return []
    dispatch = build_dispatch(enabled, settings)
    if not dispatch.handlers:
        return []
    index = ModuleIndex(module, settings.target, scan_compile_calls=_COMPILE_CALL.search(source) is not None)
    Interpreter(index, dispatch, settings).run()
    raw = dispatch.findings.items
    if not raw:
        return []
    positions = _resolve_positions(module, source, raw)
    specs = load_specs()
    out: List[Finding] = []
    for f in raw:
        spec = specs.get(f.code)
        node = f.node
        start_node = _start_node(node)
        try:
            start = positions[start_node].start
            end = positions[node].end
        except KeyError:
            continue
        stmt_lines = None
        if f.stmt is not None and f.stmt in positions:
            srange = positions[f.stmt]
            last = srange.end.line
            if f.header is not None and f.header in positions:
                last = positions[f.header].end.line
            elif not isinstance(f.stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                last = srange.start.line
            stmt_lines = (min(srange.start.line, start.line), max(last, start.line))
        chain = f.chain
        message = f.message
        if len(chain) > 1:
            message = f"{message} [via {' -> '.join(chain)}]"
        out.append(Finding(
            Diagnostic(
                code=f.code,
                name=spec.name if spec else f.code,
                message=message,
                filename=filename,
                start=Position(start.line, start.column + 1),
                end=Position(end.line, end.column + 1),
                severity=spec.severity if spec else "error",
                category=spec.category if spec else "internal",
                gb_types=spec.gb_types if spec else (),
                symbol=chain[-1] if chain else None,
                call_chain=chain if len(chain) > 1 else (),
                statement_lines=stmt_lines,
            ),
            f.node,
            f.stmt,
        ))
    return out
