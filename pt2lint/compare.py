"""``pt2lint compare`` and ``pt2lint merge``: regression diffs between reports, and joining reports.

Both read the reports ``check`` writes with ``--output-format json``, ``json-lines``
or ``sarif``.  Findings are matched by their fingerprint (the ``json`` format's
``fingerprint`` field, SARIF's ``partialFingerprints["pt2lintFinding/v1"]``; see
:func:`pt2lint.baseline.fingerprint`): rule, repository-relative path, normalised
text of the flagged line and an occurrence index, so a finding whose line merely
moved is *unchanged*, not fixed and new again.

``merge`` joins reports of one kind (e.g. from sharded ``confirm`` runs), keeping
one copy of each fingerprint: the copy with the most telling confirm status.
"""

from __future__ import annotations

import copy
import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

FINGERPRINT_KEY = "pt2lintFinding/v1"  # the same key as pt2lint.reporters.sarif

#: Confirm statuses from most to least telling; a merge keeps the copy ranked first.
_STATUS_RANK = {"confirmed": 0, "not-reproduced": 1, "not-executed": 2, "dynamic-only": 3, "failed": 3, "not-confirmed": 4}


class CompareError(ValueError):
    """A report cannot be read, is not a pt2lint report, or reports cannot be joined (one-line message)."""


@dataclass(frozen=True)
class ReportFinding:
    """One finding of a report.

    Attributes:
        fingerprint: its stable id.
        code: rule code.
        path: where it is, for display (absolute in ``json`` reports, repository-relative in SARIF).
        row, column: 1-based position.
        message: the finding's message.
        status: its confirm status, or ``None`` in a static report.
        raw: the object as the report holds it (a ``json`` finding or a SARIF result).
    """

    fingerprint: str
    code: str
    path: str
    row: int
    column: int
    message: str
    status: Optional[str]
    raw: Dict[str, Any] = field(compare=False, hash=False)

    def sort_key(self) -> Tuple[str, int, int, str]:
        return (self.path, self.row, self.column, self.code)


@dataclass
class Report:
    """A report read from a file.

    Attributes:
        path: the file it was read from.
        kind: ``"json"`` (``json`` or ``json-lines``) or ``"sarif"``.
        findings: its findings, in file order.
        log: the whole SARIF log (``kind == "sarif"``), else ``None``.
    """

    path: str
    kind: str
    findings: List[ReportFinding]
    log: Optional[Dict[str, Any]] = None


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _from_json(path: str, i: int, item: Any) -> ReportFinding:
    if not isinstance(item, dict) or not isinstance(item.get("code"), str):
        raise CompareError(f"{path}: finding {i + 1} is not a pt2lint finding (no code)")
    fp = item.get("fingerprint")
    if not isinstance(fp, str) or not fp:
        raise CompareError(
            f"{path}: finding {i + 1} has no fingerprint (written by an older pt2lint? rerun `pt2lint check --output-format json`)"
        )
    loc = item.get("location") if isinstance(item.get("location"), dict) else {}
    conf = item.get("confirm") if isinstance(item.get("confirm"), dict) else {}
    return ReportFinding(
        fp, item["code"], str(item.get("filename", "")), _int(loc.get("row")), _int(loc.get("column")),
        str(item.get("message", "")), conf.get("status") if isinstance(conf.get("status"), str) else None, item,
    )


def _from_sarif(path: str, i: int, result: Any) -> ReportFinding:
    if not isinstance(result, dict) or not isinstance(result.get("ruleId"), str):
        raise CompareError(f"{path}: result {i + 1} has no ruleId")
    fps = result.get("partialFingerprints") if isinstance(result.get("partialFingerprints"), dict) else {}
    fp = fps.get(FINGERPRINT_KEY)
    if not isinstance(fp, str) or not fp:
        raise CompareError(f"{path}: result {i + 1} has no {FINGERPRINT_KEY} fingerprint (not written by pt2lint?)")
    where, row, column = "", 0, 0
    locations = result.get("locations")
    if isinstance(locations, list) and locations and isinstance(locations[0], dict):
        physical = locations[0].get("physicalLocation") or {}
        where = str((physical.get("artifactLocation") or {}).get("uri", ""))
        region = physical.get("region") or {}
        row, column = _int(region.get("startLine")), _int(region.get("startColumn"))
    props = result.get("properties") if isinstance(result.get("properties"), dict) else {}
    message = (result.get("message") or {}).get("text", "") if isinstance(result.get("message"), dict) else ""
    status = props.get("confirmStatus") if isinstance(props.get("confirmStatus"), str) else None
    return ReportFinding(fp, result["ruleId"], where, row, column, str(message), status, result)


#: Largest report read, in bytes.
REPORT_MAX_BYTES = 512 * 1024 * 1024


def load_report(path: str) -> Report:
    """Read a report written by ``pt2lint check`` (``json``, ``json-lines`` or ``sarif`` format).

    Raises:
        CompareError: missing, unreadable, not JSON, not a pt2lint report, or its
            findings carry no fingerprint.
    """
    from pt2lint.reading import read_bytes

    try:
        text = read_bytes(path, max_bytes=REPORT_MAX_BYTES, what=None).decode("utf-8")
    except FileNotFoundError:
        raise CompareError(f"{path}: report not found") from None
    except OSError as exc:
        raise CompareError(f"{path}: cannot read report: {(exc.strerror or type(exc).__name__).lower()}") from None
    except UnicodeDecodeError:
        raise CompareError(f"{path}: not a JSON report (not UTF-8 text)") from None
    try:
        data: Any = json.loads(text) if text.strip() else []
    except ValueError as exc:
        # only \n ends a record: json-lines holds U+2028 and friends raw (ensure_ascii=False), and
        # str.splitlines would cut a record there
        lines = [line for line in text.split("\n") if line.strip()]
        try:  # json-lines: one finding per line
            data = [json.loads(line) for line in lines]
        except ValueError:
            raise CompareError(f"{path}: not a JSON report: {exc}") from None
        if not all(isinstance(item, dict) for item in data):
            raise CompareError(f"{path}: not a JSON report: {exc}")
    if isinstance(data, dict) and "code" in data and "runs" not in data:
        data = [data]  # json-lines holding one finding
    if isinstance(data, list):
        return Report(path, "json", [_from_json(path, i, item) for i, item in enumerate(data)])
    if isinstance(data, dict) and isinstance(data.get("runs"), list):
        runs = data["runs"]
        if len(runs) != 1 or not isinstance(runs[0], dict) or not isinstance(runs[0].get("results", []), list):
            raise CompareError(f"{path}: expected a SARIF log with one run (as pt2lint writes)")
        driver = ((runs[0].get("tool") or {}).get("driver") or {}) if isinstance(runs[0].get("tool"), dict) else {}
        if driver.get("name") != "pt2lint":
            raise CompareError(f"{path}: SARIF log of {driver.get('name')!r}, not of pt2lint")
        results = runs[0].get("results", [])
        return Report(path, "sarif", [_from_sarif(path, i, r) for i, r in enumerate(results)], data)
    raise CompareError(f"{path}: not a pt2lint report (expected the json, json-lines or sarif output of `pt2lint check`)")


@dataclass
class Comparison:
    """How two reports differ.

    Attributes:
        new: findings of the new report that the old one lacks.
        fixed: findings of the old report that the new one lacks.
        unchanged: findings of the new report that the old one has too (the new copy).
    """

    new: List[ReportFinding]
    fixed: List[ReportFinding]
    unchanged: List[ReportFinding]


def compare_reports(old: Report, new: Report) -> Comparison:
    """Match the findings of ``old`` and ``new`` by fingerprint (as a multiset: two copies match two)."""
    pool: Dict[str, List[ReportFinding]] = defaultdict(list)
    for f in old.findings:
        pool[f.fingerprint].append(f)
    added: List[ReportFinding] = []
    same: List[ReportFinding] = []
    for f in new.findings:
        if pool.get(f.fingerprint):
            pool[f.fingerprint].pop(0)
            same.append(f)
        else:
            added.append(f)
    gone = [f for group in pool.values() for f in group]
    key = ReportFinding.sort_key
    return Comparison(sorted(added, key=key), sorted(gone, key=key), sorted(same, key=key))


def _display(path: str, cwd: str) -> str:
    if os.path.isabs(path):
        try:
            rel = os.path.relpath(path, cwd)
        except ValueError:
            return path
        return path if rel.startswith(os.pardir) else rel
    return path


def render_comparison_text(result: Comparison, old: Report, new: Report, cwd: Optional[str] = None) -> str:
    """The comparison for people: a section per kind (``new``, ``fixed``, ``unchanged``), then a count line."""
    cwd = cwd or os.getcwd()
    out: List[str] = []
    for title, group in (("New", result.new), ("Fixed", result.fixed), ("Unchanged", result.unchanged)):
        if not group:
            continue
        out.append(f"{title} ({len(group)}):")
        for f in group:
            status = f" [{f.status}]" if f.status else ""
            out.append(f"  {_display(f.path, cwd)}:{f.row}:{f.column}: {f.code} {f.message}{status}")
    out.append(
        f"{len(result.new)} new, {len(result.fixed)} fixed, {len(result.unchanged)} unchanged"
        f" ({old.path}: {len(old.findings)} findings, {new.path}: {len(new.findings)} findings)."
    )
    return "\n".join(out) + "\n"


def render_comparison_json(result: Comparison) -> str:
    """The comparison as JSON: ``{"new", "fixed", "unchanged"}`` (each a list of the reports' own
    finding objects) and ``counts`` (``{"new", "fixed", "unchanged"}``)."""
    payload = {
        "new": [f.raw for f in result.new],
        "fixed": [f.raw for f in result.fixed],
        "unchanged": [f.raw for f in result.unchanged],
        "counts": {"new": len(result.new), "fixed": len(result.fixed), "unchanged": len(result.unchanged)},
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def _best(findings: Sequence[ReportFinding]) -> List[ReportFinding]:
    """One finding per fingerprint, in first-seen order: the copy whose confirm status tells most."""
    chosen: Dict[str, ReportFinding] = {}
    for f in findings:
        held = chosen.get(f.fingerprint)
        if held is None or _STATUS_RANK.get(f.status or "", 5) < _STATUS_RANK.get(held.status or "", 5):
            chosen[f.fingerprint] = f
    return list(chosen.values())


def merge_reports(reports: Sequence[Report]) -> str:
    """Join reports of one kind into one report of that kind (the text to write).

    ``json`` reports become one JSON array sorted by file, position and rule; SARIF
    logs become one log: the first log's run with every rule descriptor seen and
    every result, each ``ruleIndex`` pointing into the merged rule list.  Findings
    with the same fingerprint are kept once: a ``confirmed`` copy over a
    ``not-reproduced`` one over ``not-executed``, over ``not-confirmed``, over none.

    Raises:
        CompareError: no reports, or reports of different kinds.
    """
    if not reports:
        raise CompareError("give at least one report to merge")
    kinds = {r.kind for r in reports}
    if len(kinds) > 1:
        names = ", ".join(f"{r.path} ({r.kind})" for r in reports)
        raise CompareError(f"cannot merge reports of different formats: {names}")
    merged = sorted(_best([f for r in reports for f in r.findings]), key=ReportFinding.sort_key)
    if reports[0].kind == "json":
        return json.dumps([f.raw for f in merged], indent=2, ensure_ascii=False) + "\n"
    log = copy.deepcopy(reports[0].log) or {}
    run = log["runs"][0]
    driver = run.setdefault("tool", {}).setdefault("driver", {})
    rules: List[Dict[str, Any]] = []
    index: Dict[str, int] = {}
    for r in reports:
        for rule in ((r.log or {})["runs"][0].get("tool", {}).get("driver", {}).get("rules") or []):
            if isinstance(rule, dict) and isinstance(rule.get("id"), str) and rule["id"] not in index:
                index[rule["id"]] = len(rules)
                rules.append(rule)
    results = []
    for f in merged:
        result = dict(f.raw)
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        else:
            result.pop("ruleIndex", None)
        results.append(result)
    driver["rules"] = rules
    run["results"] = results
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


__all__ = [
    "CompareError",
    "Comparison",
    "Report",
    "ReportFinding",
    "compare_reports",
    "load_report",
    "merge_reports",
    "render_comparison_json",
    "render_comparison_text",
]
