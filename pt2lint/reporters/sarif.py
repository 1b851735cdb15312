"""The ``sarif`` output format: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run whose ``tool.driver.rules`` describes every rule of the catalog (short
and full descriptions, help text and markdown, help URI and default level, all
from the ``rules/*.toml`` specs), and one result per finding with a
repository-relative artifact URI (``uriBaseId`` ``%SRCROOT%``), a region in
Unicode code points (``run.columnKind``), the compiled function as a logical
location, the fix as a SARIF ``fix`` and a ``partialFingerprints`` entry that
stays put when lines are added or removed elsewhere in the file.

Reference: OASIS SARIF 2.1.0; GitHub's "SARIF support for code scanning".
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

from pt2lint import __version__
from pt2lint.baseline import fingerprint, normalise_line
from pt2lint.diagnostics import DEFAULT_DOCS_URL, Diagnostic, Fix, rule_url
from pt2lint.reporters import ReportContext, line_window, register
from pt2lint.specs import RuleSpec, load_specs

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/pt2lint/pt2lint"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "pt2lintFinding/v1"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def find_repo_root(start: str) -> str:
    """The nearest directory at or above ``start`` holding ``.git`` (a checkout or a worktree), else ``start``."""
    probe = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return os.path.abspath(start)
        probe = parent


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (up to the first ``. `` or line break), whitespace collapsed."""
    flat = " ".join(text.split())
    for stop in (". ", "\n"):
        cut = flat.find(stop)
        if cut != -1:
            return flat[: cut + 1].rstrip()
    return flat


def rule_descriptor(spec: RuleSpec, docs_url: str = DEFAULT_DOCS_URL) -> Dict[str, Any]:
    """A SARIF ``reportingDescriptor`` for one rule, from its spec; ``helpUri`` follows the ``docs_url`` template."""
    tags = ["torch.compile", spec.category]
    if spec.is_graph_break:
        tags.append("graph-break")
    props: Dict[str, Any] = {"tags": tags, "precision": "high", "category": spec.category}
    if spec.gb_types:
        props["dynamoGraphBreakTypes"] = list(spec.gb_types)
    return {
        "id": spec.code,
        "name": spec.name,
        "shortDescription": {"text": first_sentence(spec.summary)},
        "fullDescription": {"text": spec.summary.strip() + "\n\n" + spec.why.strip()},
        "help": {"text": spec.fix.strip(), "markdown": spec.explain()},
        "helpUri": rule_url(spec.code, docs_url, spec.name),
        "defaultConfiguration": {"level": LEVELS.get(spec.severity, "warning")},
        "properties": props,
    }


def artifact_location(filename: str, context: ReportContext, root: str) -> Dict[str, Any]:
    """``{"uri", "uriBaseId"}`` relative to the repository root, or an absolute ``file://`` URI outside it."""
    if filename == "-":
        return {"uri": "-"}
    absolute = context.absolute(filename)
    try:
        rel = os.path.relpath(absolute, root)
    except ValueError:
        rel = os.pardir
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return {"uri": pathlib.Path(absolute).as_uri()}
    # surrogateescape: a file name that is not valid UTF-8 gets its own bytes percent-encoded, as as_uri() does
    return {"uri": quote(rel.replace(os.sep, "/"), safe="/", errors="surrogateescape"), "uriBaseId": SRCROOT}


def _call_path(d, context: ReportContext, root: str, innermost: Dict[str, Any]):
    """SARIF ``relatedLocations`` (each call of the chain) and a ``threadFlow`` (calls, then the finding)."""
    related: List[Dict[str, Any]] = []
    flow: List[Dict[str, Any]] = []
    for i, (symbol, filename, line, column, _first, _last) in enumerate(d.call_sites):
        where = {
            "physicalLocation": {
                "artifactLocation": artifact_location(filename, context, root),
                "region": {"startLine": line, "startColumn": column},
            },
            "message": {"text": f"{symbol} calls {d.call_chain[i + 1] if i + 1 < len(d.call_chain) else 'the flagged code'}"},
        }
        related.append(dict(where, id=i + 1))
        flow.append({"location": where, "nestingLevel": i})
    if flow:
        flow.append({"location": dict(innermost, message={"text": d.message}), "nestingLevel": len(flow)})
    return related, flow


def _region(start, end) -> Dict[str, int]:
    return {"startLine": start.line, "startColumn": start.column, "endLine": end.line, "endColumn": end.column}


def fix_to_sarif(fix: Fix, location: Dict[str, Any]) -> Dict[str, Any]:
    """A SARIF ``fix``: the fix message (with its applicability) and one ``artifactChange``."""
    applicability = getattr(fix.applicability, "value", fix.applicability)
    return {
        "description": {"text": f"{fix.message} ({applicability} fix)"},
        "artifactChanges": [
            {
                "artifactLocation": dict(location),
                "replacements": [
                    {"deletedRegion": _region(e.start, e.end), "insertedContent": {"text": e.content}} for e in fix.edits
                ],
            }
        ],
    }


def _line(source: str, line: int) -> str:
    from pt2lint.lines import lines_of

    return lines_of(source).text(line)  # numbered as Python numbers lines, not as str.splitlines


def build_sarif(diagnostics: Sequence[Diagnostic], context: ReportContext, root: Optional[str] = None) -> Dict[str, Any]:
    """The SARIF log as a dict.

    Args:
        diagnostics: findings, sorted by file and position.
        context: working directory and file texts (for snippets and fingerprints).
        root: the directory ``%SRCROOT%`` stands for (default: the git checkout
            holding the working directory, else the working directory).
    """
    root = os.path.abspath(root or find_repo_root(context.cwd))
    specs = load_specs()
    codes = list(specs)
    for d in diagnostics:  # a finding of a code outside the catalog still needs a descriptor
        if d.code not in specs and d.code not in codes:
            codes.append(d.code)
    index = {c: i for i, c in enumerate(codes)}
    rules = [
        rule_descriptor(specs[c], context.docs_url)
        if c in specs
        else {"id": c, "shortDescription": {"text": c}, "helpUri": rule_url(c, context.docs_url)}
        for c in codes
    ]
    seen: Dict[Tuple[str, str, str], int] = {}
    results: List[Dict[str, Any]] = []
    for d in diagnostics:
        location = artifact_location(d.filename, context, root)
        line_text = _line(context.sources.get(d.filename, "") or "", d.start.line)
        region = _region(d.start, d.end)
        if line_text:
            # the line, or of a long one the part around the finding (a substring of the file, no ellipsis)
            end = d.end.column - 1 if d.end.line == d.start.line else len(line_text)
            a, b = line_window(len(line_text), d.start.column - 1, end)
            region["snippet"] = {"text": line_text[a:b]}
        physical: Dict[str, Any] = {"artifactLocation": location, "region": region}
        loc: Dict[str, Any] = {"physicalLocation": physical}
        if d.symbol:
            loc["logicalLocations"] = [{"fullyQualifiedName": d.symbol, "kind": "function"}]
        related, flow = _call_path(d, context, root, loc)
        key = (d.code, location["uri"], normalise_line(line_text))
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        result: Dict[str, Any] = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": LEVELS.get(d.severity, "warning"),
            "message": {"text": d.message},
            "locations": [loc],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(d.code, location["uri"], line_text, occurrence)},
        }
        if related:
            result["relatedLocations"] = related
            result["codeFlows"] = [{"threadFlows": [{"locations": flow}]}]
        if d.fix is not None and d.fix.edits:
            result["fixes"] = [fix_to_sarif(d.fix, location)]
        props: Dict[str, Any] = {"category": d.category, "name": d.name}
        if d.gb_types:
            props["dynamoGraphBreakTypes"] = list(d.gb_types)
        if d.call_chain:
            props["callChain"] = list(d.call_chain)
        if getattr(d, "confirm", None) is not None:
            props["confirmStatus"] = d.confirm.status
            props["confirm"] = d.confirm.to_dict()
        result["properties"] = props
        results.append(result)
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "pt2lint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": pathlib.Path(root).as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "invocations": [{"executionSuccessful": True}],
                "results": results,
            }
        ],
    }


@register("sarif", needs_source=True, human=False, description="SARIF 2.1.0 (GitHub code scanning), with rule descriptions")
def render_sarif(diagnostics: Sequence[Diagnostic], context: ReportContext) -> str:
    """The findings as a pretty-printed SARIF 2.1.0 log."""
    return json.dumps(build_sarif(diagnostics, context), indent=2, ensure_ascii=False) + "\n"
