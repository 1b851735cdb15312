#!/usr/bin/env python
"""Score a pt2lint JSON report against the Dynamo ground truth in truth.json.

    python bench/realmodels/evaluate.py report.json [--truth truth.json]

Definitions (all on unique (file, line) sites, files relative to
site-packages):

* graph-break finding: a report entry whose ``category`` is one of
  data-dependent, dynamic-shape, side-effect.
* precision: among graph-break findings on lines that some model executed
  (``executed`` in truth.json), the fraction at a line where Dynamo broke.
  Reported exact and with a +-1 line tolerance.  ``prec-tr`` is the same
  on lines Dynamo itself traced (``traced``): a line that ran eagerly but
  that Dynamo never traced (a frame it gave up on, an eager-only branch)
  says nothing about a break there.
* recall: among Dynamo break sites inside the linted scope (default:
  transformers/models, timm/models, diffusers/models, the directories the
  report is produced from), the fraction with a graph-break finding at that
  line (exact and +-1).  Break sites outside the scope (e.g. in
  transformers/utils or timm/layers) are listed but not counted; pass
  ``--scope transformers timm diffusers`` if the whole packages were linted.

A truth collected from another model zoo (collect.py --zoo) names its
``libraries``; they take the place of the three above, and the default scope
is then the whole of each library.

Only models whose status is "ok" contribute executed lines and break sites.
Depends on the standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBS = ("transformers", "timm", "diffusers")
GB_CATEGORIES = ("data-dependent", "dynamic-shape", "side-effect")
DEFAULT_SCOPE = ("transformers/models", "timm/models", "diffusers/models")


# --------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------


def expand(items) -> set[int]:
    """Inverse of collect.compress: ints and [start, end] ranges -> set."""
    out: set[int] = set()
    for it in items:
        if isinstance(it, (list, tuple)):
            out.update(range(int(it[0]), int(it[1]) + 1))
        else:
            out.add(int(it))
    return out


class Truth:
    def __init__(self, data: dict, models: list[str] | None = None) -> None:
        # Libraries measured: the truth's "libraries" (another zoo), else LIBS.
        self.libs: tuple[str, ...] = tuple(data.get("libraries", LIBS))
        self.executed: dict[str, set[int]] = defaultdict(set)
        self.traced: dict[str, set[int]] = defaultdict(set)
        self.has_traced = False
        # (file, line) -> list of {"model", "reason", "gb_type", ...}
        self.breaks: dict[tuple[str, int], list[dict]] = defaultdict(list)
        self.models_ok: list[str] = []
        self.models_failed: dict[str, str] = {}
        for name, m in sorted(data.get("models", {}).items()):
            if models and name not in models:
                continue
            if m.get("status") != "ok":
                self.models_failed[name] = m.get("status", "?")
                continue
            self.models_ok.append(name)
            for rel, lines in m.get("executed", {}).items():
                self.executed[rel] |= expand(lines)
            if "traced" in m:
                self.has_traced = True
                for rel, lines in m["traced"].items():
                    self.traced[rel] |= expand(lines)
            for b in m.get("breaks", []):
                if b.get("outside_library"):
                    continue
                self.breaks[(b["file"], int(b["line"]))].append(dict(b, model=name))
        self.files = set(self.executed) | {f for f, _ in self.breaks}
        # basename -> candidate relpaths, for suffix matching report paths
        self._by_base: dict[str, list[str]] = defaultdict(list)
        for rel in self.files:
            self._by_base[rel.rsplit("/", 1)[-1]].append(rel)

    def rel(self, filename: str, site_packages: str | None = None) -> str | None:
        """Map an absolute report path onto a truth relpath (None: unknown)."""
        p = filename.replace("\\", "/")
        if site_packages:
            sp = site_packages.replace("\\", "/").rstrip("/") + "/"
            if p.startswith(sp):
                return p[len(sp):]
        i = p.rfind("/site-packages/")
        if i >= 0:
            return p[i + len("/site-packages/"):]
        best = None
        for cand in self._by_base.get(p.rsplit("/", 1)[-1], ()):
            if (p == cand or p.endswith("/" + cand)) and (best is None or len(cand) > len(best)):
                best = cand
        if best is not None:
            return best
        for lib in self.libs:  # unknown file: best effort, earliest library component
            j = p.find("/" + lib + "/")
            if j >= 0:
                return p[j + 1:]
        return None


def load_report(path: str) -> list[dict]:
    with open(path) as fh:
        data = json.load(fh)
    if isinstance(data, dict):  # tolerate {"findings": [...]} wrappers
        for key in ("findings", "diagnostics", "results"):
            if isinstance(data.get(key), list):
                return data[key]
        raise SystemExit(f"{path}: expected a JSON list of findings")
    return data


def finding_row(f: dict) -> int | None:
    loc = f.get("location") or {}
    row = loc.get("row", f.get("row", f.get("line")))
    try:
        return int(row)
    except (TypeError, ValueError):
        return None


def attributed_site(truth: "Truth", f: dict, sp: str | None = None) -> tuple[str | None, int | None]:
    """The (file, line) a finding is scored at, as the collector attributes breaks.

    The collector attributes a break to the innermost frame of its user stack inside
    one of the truth's libraries.  A finding in a file outside them (a package
    reached through ``--follow-imports``) is scored the same way: at the innermost
    of its ``call_sites`` that lies inside a library.  A finding with no such call
    site keeps its own location (and then maps to no truth file).
    """
    rel = truth.rel(str(f.get("filename", "")), sp)
    row = finding_row(f)
    if rel is not None and lib_of(rel) in truth.libs:
        return rel, row
    for cs in reversed(f.get("call_sites") or ()):
        crel = truth.rel(str(cs.get("filename", "")), sp)
        if crel is not None and lib_of(crel) in truth.libs:
            return crel, finding_row(cs)
    return rel, row


# --------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------


def lib_of(rel: str) -> str:
    return rel.split("/", 1)[0]


def in_scope(rel: str, scope: tuple[str, ...]) -> bool:
    return any(rel == s or rel.startswith(s.rstrip("/") + "/") for s in scope)


def near(site: tuple[str, int], sites, tol: int) -> bool:
    f, n = site
    return any((f, n + d) in sites for d in range(-tol, tol + 1))


def evaluate(truth: Truth, report: list[dict], scope, sp: str | None = None) -> dict:
    gb_sites: dict[tuple[str, int], list[dict]] = defaultdict(list)  # graph-break findings
    any_sites: dict[tuple[str, int], list[dict]] = defaultdict(list)  # all findings
    unknown = 0
    for f in report:
        rel, row = attributed_site(truth, f, sp)
        if row is None or rel is None:
            unknown += 1
            continue
        any_sites[(rel, row)].append(f)
        if f.get("category") in GB_CATEGORIES:
            gb_sites[(rel, row)].append(f)

    breaks = truth.breaks
    scoped_breaks = {s for s in breaks if in_scope(s[0], scope)}
    executed_gb = {s for s in gb_sites if s[1] in truth.executed.get(s[0], ())}
    traced_gb = {s for s in gb_sites if s[1] in truth.traced.get(s[0], ())}

    rows = {}
    for lib in (*truth.libs, "overall"):
        def pick(sites):
            return {s for s in sites if lib == "overall" or lib_of(s[0]) == lib}

        fnd = pick(executed_gb)
        trc = pick(traced_gb)
        brk = pick(scoped_breaks)
        tp = {s for s in fnd if s in breaks}
        tptr = {s for s in trc if s in breaks}
        tp1 = {s for s in fnd if near(s, breaks, 1)}
        tp_gb = {s for s in tp if _gb_agrees(gb_sites[s], breaks[s])}
        found = {s for s in brk if s in gb_sites}
        found1 = {s for s in brk if near(s, gb_sites, 1)}
        found_any = {s for s in brk if s in any_sites}
        rows[lib] = {
            "findings_executed": len(fnd),
            "tp": len(tp),
            "tp_pm1": len(tp1),
            "tp_gb_type": len(tp_gb),
            "precision": _ratio(len(tp), len(fnd)),
            "precision_pm1": _ratio(len(tp1), len(fnd)),
            "findings_traced": len(trc) if truth.has_traced else None,
            "tp_traced": len(tptr) if truth.has_traced else None,
            "precision_traced": _ratio(len(tptr), len(trc)) if truth.has_traced else None,
            "break_sites": len(brk),
            "found": len(found),
            "found_pm1": len(found1),
            "found_any_category": len(found_any),
            "recall": _ratio(len(found), len(brk)),
            "recall_pm1": _ratio(len(found1), len(brk)),
        }

    false_pos = sorted(s for s in executed_gb if s not in breaks)
    missed = sorted(s for s in scoped_breaks if s not in gb_sites)
    out_of_scope = sorted(s for s in breaks if s not in scoped_breaks)
    return {
        "rows": rows,
        "false_positives": [
            {
                "file": f,
                "line": n,
                "near_break": near((f, n), breaks, 1),
                "traced": (n in truth.traced.get(f, ())) if truth.has_traced else None,
                "findings": [
                    {"code": g.get("code"), "message": g.get("message"), "category": g.get("category")}
                    for g in gb_sites[(f, n)]
                ],
            }
            for f, n in false_pos
        ],
        "missed": [_break_entry(s, breaks, any_sites) for s in missed],
        "out_of_scope_breaks": [_break_entry(s, breaks, any_sites) for s in out_of_scope],
        "findings_total": len(report),
        "findings_unmapped": unknown,
        "gb_finding_sites": len(gb_sites),
        "gb_finding_sites_not_executed": len(gb_sites) - len(executed_gb),
        "models_ok": truth.models_ok,
        "models_failed": truth.models_failed,
        "scope": list(scope),
    }


def _norm_gb(g) -> str:
    g = str(g).strip().upper()
    return "GB%04d" % int(g[2:]) if g.startswith("GB") and g[2:].isdigit() else g


def _gb_agrees(findings: list[dict], entries: list[dict]) -> bool:
    """Does any finding predict one of the GB ids Dynamo reported at the site?"""
    actual = set()
    for e in entries:
        actual.add(_norm_gb(e.get("gb_type", "")))
        actual.update(_norm_gb(g) for g in e.get("also_gb", []))
    predicted = {_norm_gb(g) for f in findings for g in (f.get("gb_types") or [])}
    return bool(actual & predicted)


def _break_entry(site, breaks, any_sites) -> dict:
    f, n = site
    entries = breaks[site]
    reasons = sorted({e.get("reason", "") for e in entries})
    out = {
        "file": f,
        "line": n,
        "gb_types": sorted({e.get("gb_type", "") for e in entries}),
        "reasons": reasons,
        "models": sorted({e["model"] for e in entries}),
        "other_findings": [
            f"{g.get('code')} ({g.get('category')})" for g in any_sites.get(site, [])
        ],
    }
    misplaced = sorted({e["misplaced"] for e in entries if e.get("misplaced")})
    if misplaced:
        out["misplaced"] = misplaced
    return out


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


# --------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------


def _pct(x) -> str:
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def source_line(root: str, rel: str, line: int) -> str | None:
    """Line ``line`` of ``root/rel``, stripped (None when unreadable)."""
    try:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    return text.strip()
    except OSError:
        pass
    return None


def render(res: dict, limit: int | None = None, code_root: str | None = None) -> str:
    lines = []
    w = lines.append

    def code(rel: str, line: int) -> None:
        """With --show-code: the source line under an entry."""
        text = source_line(code_root, rel, line) if code_root else None
        if text is not None:
            w(f"      | {text[:160]}")
    w(
        f"models: {len(res['models_ok'])} ok, {len(res['models_failed'])} failed; "
        f"findings: {res['findings_total']} total, {res['gb_finding_sites']} graph-break sites "
        f"({res['gb_finding_sites_not_executed']} on lines no model executed), "
        f"{res['findings_unmapped']} unmapped"
    )
    w(f"recall scope: {', '.join(res['scope'])}")
    w("")
    lw = max([13, *(len(lib) for lib in res["rows"])])
    hdr = (
        f"{'library':{lw}s} {'flagged':>7s} {'TP':>4s} {'prec':>6s} {'prec±1':>6s} {'TP-gb':>5s}"
        f" {'traced':>6s} {'prec-tr':>7s}"
        f" | {'breaks':>6s} {'found':>5s} {'recall':>6s} {'rec±1':>6s} {'anycat':>6s}"
    )
    w(hdr)
    w("-" * len(hdr))
    for lib, r in res["rows"].items():
        w(
            f"{lib:{lw}s} {r['findings_executed']:7d} {r['tp']:4d} {_pct(r['precision'])} "
            f"{_pct(r['precision_pm1'])} {r['tp_gb_type']:5d}"
            f" {'-' if r['findings_traced'] is None else r['findings_traced']:>6} "
            f"{_pct(r['precision_traced']):>7s}"
            f" | {r['break_sites']:6d} {r['found']:5d} {_pct(r['recall'])} {_pct(r['recall_pm1'])} "
            f"{r['found_any_category']:6d}"
        )
    w("")
    w("flagged: graph-break findings on executed lines; TP-gb: true positives whose gb_types")
    w("include the GB id Dynamo reported; traced / prec-tr: flagged and precision on lines")
    w("Dynamo traced; anycat: break sites with a finding of any category at the line.")

    def cap(items):
        return items if limit is None else items[:limit]

    fps = res["false_positives"]
    w("")
    w(f"False positives ({len(fps)}): graph-break findings on executed lines where Dynamo did not break")
    for fp in cap(fps):
        tag = "  [break at ±1]" if fp["near_break"] else ""
        if fp.get("traced") is False:
            tag += "  [not traced by Dynamo]"
        for g in fp["findings"]:
            w(f"  {fp['file']}:{fp['line']} {g['code']} {g['message']}{tag}")
        code(fp["file"], fp["line"])
    if limit is not None and len(fps) > limit:
        w(f"  ... {len(fps) - limit} more (use --limit 0 for all)")

    missed = res["missed"]
    w("")
    w(f"Missed breaks ({len(missed)}): Dynamo break sites with no graph-break finding at the line")
    for m in cap(missed):
        other = f"  [has: {', '.join(m['other_findings'])}]" if m["other_findings"] else ""
        if m.get("misplaced"):
            other += f"  [Dynamo's line looks shifted: {'; '.join(m['misplaced'])}]"
        w(f"  {m['file']}:{m['line']} {' / '.join(m['reasons'])} ({', '.join(m['models'])}){other}")
        code(m["file"], m["line"])
    if limit is not None and len(missed) > limit:
        w(f"  ... {len(missed) - limit} more (use --limit 0 for all)")

    oos = res["out_of_scope_breaks"]
    if oos:
        w("")
        w(f"Break sites outside the recall scope ({len(oos)}), not counted:")
        for m in cap(oos):
            w(f"  {m['file']}:{m['line']} {' / '.join(m['reasons'])} ({', '.join(m['models'])})")
    if res["models_failed"]:
        w("")
        w("Models without ground truth (failed to build or run):")
        for name, st in res["models_failed"].items():
            w(f"  {name}: {st}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("report", help="pt2lint --output-format json report")
    ap.add_argument("--truth", default=str(HERE / "truth.json"))
    ap.add_argument(
        "--scope",
        nargs="+",
        help="site-packages-relative dirs that were linted (recall counts breaks there); "
        "default: the truth's whole libraries if it lists them, else " + " ".join(DEFAULT_SCOPE),
    )
    ap.add_argument("--site-packages", help="prefix to strip from report paths (optional)")
    ap.add_argument("--models", help="comma-separated subset of models")
    ap.add_argument("--limit", type=int, default=0, help="max FP/missed entries to print (0: all)")
    ap.add_argument(
        "--show-code",
        nargs="?",
        const="",
        metavar="SITE_PACKAGES",
        help="print the source line under each false positive and miss, read from "
        "SITE_PACKAGES (default: --site-packages, else this Python's purelib)",
    )
    ap.add_argument("--json", dest="json_out", help="also write the full result as JSON here")
    ns = ap.parse_args(argv)

    with open(ns.truth) as fh:
        truth = Truth(json.load(fh), ns.models.split(",") if ns.models else None)
    report = load_report(ns.report)
    scope = ns.scope or (truth.libs if truth.libs != LIBS else DEFAULT_SCOPE)
    res = evaluate(truth, report, tuple(scope), ns.site_packages)
    code_root = None
    if ns.show_code is not None:
        import sysconfig

        code_root = ns.show_code or ns.site_packages or sysconfig.get_paths()["purelib"]
    print(render(res, ns.limit or None, code_root))
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
