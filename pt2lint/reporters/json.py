"""The ``json`` output format: a list of findings, with ruff's field names plus pt2lint's own."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence

from pt2lint.diagnostics import Diagnostic, Fix, Position, rule_url
from pt2lint.reporters import ReportContext, register


def _location(pos: Position) -> Dict[str, int]:
    return {"row": pos.line, "column": pos.column}


def fix_to_dict(fix: Optional[Fix]) -> Optional[Dict[str, Any]]:
    """A fix as ruff's JSON shape: ``{"applicability", "message", "edits": [{"content", "location", "end_location"}]}``."""
    if fix is None:
        return None
    return {
        "applicability": getattr(fix.applicability, "value", fix.applicability),
        "message": fix.message,
        "edits": [
            {"content": e.content, "location": _location(e.start), "end_location": _location(e.end)} for e in fix.edits
        ],
    }


def diagnostic_to_dict(d: Diagnostic, context: ReportContext, fingerprint: Optional[str] = None) -> Dict[str, Any]:
    """One finding as a JSON object.

    Fields: ``code``, ``name``, ``message``, ``filename`` (absolute, like ruff; ``-``
    for unnamed stdin), ``location`` / ``end_location`` (``{row, column}``,
    1-based, end exclusive), ``fix``, ``url``, ``noqa_row`` (the line a
    suppression comment goes on), ``category``, ``severity``, ``gb_types``,
    ``symbol``, ``call_chain`` (symbols, outermost first) and ``call_sites`` (for each
    function of the chain but the innermost: ``{symbol, filename, location}`` of the call
    it makes; the first lies in the file that was analysed); in confirm mode also ``confirm`` (``{status,
    detail, module, failure, next_step, evidence}``, see
    :class:`~pt2lint.diagnostics.Confirmation`); and ``fingerprint`` when given (see
    :func:`fingerprints`).
    """
    out = {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "filename": context.absolute(d.filename),
        "location": _location(d.start),
        "end_location": _location(d.end),
        "fix": fix_to_dict(d.fix),
        "url": rule_url(d.code, context.docs_url, d.name),
        "noqa_row": d.start.line,
        "category": d.category,
        "severity": d.severity,
        "gb_types": list(d.gb_types),
        "symbol": d.symbol,
        "call_chain": list(d.call_chain),
        "call_sites": [
            {"symbol": s[0], "filename": context.absolute(s[1]), "location": {"row": s[2], "column": s[3]}}
            for s in d.call_sites
        ],
    }
    if getattr(d, "confirm", None) is not None:
        out["confirm"] = d.confirm.to_dict()
    if fingerprint is not None:
        out["fingerprint"] = fingerprint
    return out


def fingerprints(diagnostics: Sequence[Diagnostic], context: ReportContext) -> List[str]:
    """Each finding's stable id, the value SARIF puts in ``partialFingerprints``
    (:func:`pt2lint.baseline.fingerprint` over the path relative to the git checkout)."""
    from pt2lint.baseline import finding_fingerprints
    from pt2lint.reporters.sarif import artifact_location, find_repo_root

    root = os.path.abspath(find_repo_root(context.cwd))
    return finding_fingerprints(diagnostics, context.sources, lambda f: artifact_location(f, context, root)["uri"])


@register("json", human=False, description="a JSON array of findings (ruff's fields plus category, gb_types, call_chain)")
def render_json(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The findings as a pretty-printed JSON array followed by a newline."""
    ids = fingerprints(diagnostics, context)
    return json.dumps([diagnostic_to_dict(d, context, f) for d, f in zip(diagnostics, ids)], indent=2, ensure_ascii=False) + "\n"
