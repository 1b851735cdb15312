"""How many convertible functions ``pt2lint fix`` rewrites, and whether any must-refuse one is.

Setup: torch (the ``confirm`` extra) for ``--verify``; nothing is downloaded.  Run::

    python bench/convertible/run.py              # prints the summary and the per-case table
    python bench/convertible/run.py --markdown   # the same as bench/convertible/RESULTS.md
    python bench/convertible/run.py --json out.json   # every run's JSON, for a closer look
    python bench/convertible/run.py --cases c04,c05   # only the cases whose names start so

The cases (``cases/*.py``, one model per file with ``make_model()`` / ``example_inputs()``)
were written as ordinary model code, independently of the codemods; ``manifest.toml``
labels each ``convertible`` (a rewrite that keeps eager behaviour and removes the graph
break exists) or ``must-refuse`` (every such rewrite changes behaviour for some input),
by what a correct rewrite could be, not by what pt2lint does.

The cases are copied to a temporary folder, and ``pt2lint`` runs on the copy
(``--isolated --no-cache --diff``: nothing is written), five times:

1. ``check``: the findings of each case (its *targets*; codes a case lists as
   ``incidental`` in the manifest are left out, e.g. a ``print`` inside a branch, whose
   own guard is a correct fix);
2. ``fix`` (safe fixes, no ``--assume-compiled``): what the pre-commit hook applies to
   code not known to be compiled;
3. ``fix --assume-compiled``: the safe fixes when every module is compiled (the most a
   safe run applies);
4. ``fix --verify --assume-compiled``: the safe fixes that ``--verify`` keeps;
5. ``fix --verify --assume-compiled --unsafe-fixes``: every fix that ``--verify`` keeps.

A case is *rewritten* by a run when every one of its targets is fixed in it (with
``--verify``: kept, so its function was verified).  The summary gives, for convertible
cases, the rewritten counts of runs 4 and 5 (and 2 and 3, without ``--verify``); for
must-refuse cases, those with a target fixed by a safe run (2 or 3), which must be 0;
and the safe fixes of run 3 whose function ``--verify`` rejects in run 4, which must be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

#: ``(name, extra fix arguments, verify)`` of the fix runs, in order.
RUNS = (
    ("safe", [], False),
    ("safe-compiled", ["--assume-compiled"], False),
    ("verify-safe", ["--assume-compiled"], True),
    ("verify-unsafe", ["--assume-compiled", "--unsafe-fixes"], True),
)

Finding = Tuple[str, str, int]  # (case, code, line)


def load_manifest(path: Path) -> Dict[str, Dict[str, Any]]:
    """The ``[cases.NAME]`` tables of ``manifest.toml``.

    Raises:
        SystemExit: with a message when the file is missing, is not TOML, or a case has
            no valid ``label``.
    """
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"error: cannot read {path}: {exc}") from None
    cases = doc.get("cases", {})
    for name, entry in cases.items():
        if entry.get("label") not in ("convertible", "must-refuse"):
            raise SystemExit(f"error: {path}: case {name}: label must be 'convertible' or 'must-refuse'")
    return cases


def pt2lint(args: List[str], cwd: Path, timeout: float) -> Any:
    """Run ``python -m pt2lint ARGS --output-format json`` in ``cwd``; its JSON document.

    Raises:
        SystemExit: when pt2lint exits with 2 or more, or prints no JSON.
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "pt2lint", *args, "--output-format", "json", "--isolated", "--no-cache"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
    )
    if proc.returncode >= 2:
        raise SystemExit(f"error: pt2lint {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"error: pt2lint {' '.join(args)} printed no JSON:\n{proc.stderr[-2000:]}") from None


def finding_key(doc: Dict[str, Any]) -> Finding:
    """``(case, code, line)`` of one JSON finding."""
    return (Path(doc["filename"]).stem, doc["code"], int(doc["location"]["row"]))


def measure(cases: Dict[str, Dict[str, Any]], timeout: float) -> Dict[str, Any]:
    """Run check and the :data:`RUNS` over a temporary copy of ``cases/``; the raw results."""
    with tempfile.TemporaryDirectory(prefix="pt2lint-convertible-") as tmp:
        work = Path(tmp) / "cases"
        shutil.copytree(HERE / "cases", work)
        names = sorted(p.name for p in work.glob("*.py") if p.stem in cases)
        missing = sorted(set(cases) - {Path(n).stem for n in names})
        if missing:
            raise SystemExit(f"error: manifest cases without a file: {', '.join(missing)}")
        started = time.perf_counter()
        check = pt2lint(["check", "--assume-compiled", *names], work, timeout)
        runs: Dict[str, Any] = {}
        seconds: Dict[str, float] = {}
        for run, extra, verify in RUNS:
            t0 = time.perf_counter()
            args = ["fix", "--diff", *extra, *(["--verify"] if verify else []), *names]
            runs[run] = pt2lint(args, work, timeout)
            seconds[run] = round(time.perf_counter() - t0, 1)
        seconds["total"] = round(time.perf_counter() - started, 1)
    return {"check": check, "runs": runs, "seconds": seconds}


def analyse(cases: Dict[str, Dict[str, Any]], raw: Dict[str, Any]) -> Dict[str, Any]:
    """Per-case verdicts and the summary counts from :func:`measure`'s results."""
    findings = raw["check"] if isinstance(raw["check"], list) else raw["check"].get("remaining", [])
    targets: Dict[str, Set[Finding]] = {name: set() for name in cases}
    fix_info: Dict[Finding, str] = {}
    for f in findings:
        key = finding_key(f)
        if key[0] in targets and key[1] not in cases[key[0]].get("incidental", []):
            targets[key[0]].add(key)
            fix = f.get("fix") or {}
            fix_info[key] = f"{fix.get('applicability', 'none')}: {fix.get('message', '')}"
    fixed: Dict[str, Set[Finding]] = {}
    for run, _, _ in RUNS:
        left = {finding_key(f) for f in raw["runs"][run].get("remaining", [])}
        fixed[run] = {k for ks in targets.values() for k in ks if k not in left}
    verdicts: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for run in ("verify-safe", "verify-unsafe"):
        for fn in (raw["runs"][run].get("verify") or {}).get("functions", []):
            case = Path(fn["path"]).stem
            for fx in fn.get("fixes", []):
                verdicts[(run, f"{case}:{fx}")] = fn
    rows = []
    summary = {
        "convertible": 0, "must_refuse": 0,
        "rewritten": {run: 0 for run, _, _ in RUNS},
        "must_refuse_safe": [], "safe_rejected": [], "no_finding": [],
    }
    for name in sorted(cases):
        label = cases[name]["label"]
        tg = targets[name]
        row = {"case": name, "label": label, "targets": sorted(f"{c}:{l}" for _, c, l in tg), "runs": {}}
        if not tg:
            summary["no_finding"].append(name)
        for run, _, _ in RUNS:
            row["runs"][run] = bool(tg) and tg <= fixed[run]
        status = {}
        for run in ("verify-safe", "verify-unsafe"):
            st = {verdicts[(run, f"{name}:{c}:{l}")]["status"] for _, c, l in tg if (run, f"{name}:{c}:{l}") in verdicts}
            status[run] = "/".join(sorted(st)) or "-"
            reasons = [verdicts[(run, f"{name}:{c}:{l}")]["reason"] for _, c, l in tg if (run, f"{name}:{c}:{l}") in verdicts]
            row[f"{run}-reason"] = reasons[0] if reasons else ""
        row["status"] = status
        row["fix"] = "; ".join(fix_info[k] for k in sorted(tg))
        if label == "convertible":
            summary["convertible"] += 1
            for run, _, _ in RUNS:
                summary["rewritten"][run] += row["runs"][run]
        else:
            summary["must_refuse"] += 1
            if row["runs"]["safe"] or row["runs"]["safe-compiled"] or any(k in fixed["safe-compiled"] for k in tg):
                summary["must_refuse_safe"].append(name)
        safe_applied = tg & fixed["safe-compiled"]
        if any(
            verdicts.get(("verify-safe", f"{name}:{c}:{l}"), {}).get("status") == "rejected" for _, c, l in safe_applied
        ):
            summary["safe_rejected"].append(name)
        rows.append(row)
    return {"summary": summary, "rows": rows}


def short(text: str, width: int = 150) -> str:
    """``text`` on one line, cut to ``width`` characters, with ``|`` escaped for Markdown."""
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 3] + "..."


def report(result: Dict[str, Any], seconds: Dict[str, float]) -> str:
    """The Markdown report: summary lines, then one row per case."""
    s = result["summary"]
    n = s["convertible"]
    r = s["rewritten"]

    def pct(k: int) -> str:
        return f"{k}/{n} ({100.0 * k / n:.0f}%)" if n else "0/0"

    lines = [
        "# Convertible functions: what `pt2lint fix` rewrites",
        "",
        f"{n} convertible and {s['must_refuse']} must-refuse cases (`bench/convertible/manifest.toml`), "
        "`python bench/convertible/run.py --markdown`, torch "
        + torch_version()
        + f", {seconds.get('total', 0):.0f} s.",
        "",
        f"- convertible rewritten, safe and verified (`fix --verify --assume-compiled`): {pct(r['verify-safe'])}",
        f"- convertible rewritten and verified, unsafe fixes included (`--unsafe-fixes`): {pct(r['verify-unsafe'])}",
        f"- convertible rewritten by safe fixes without `--verify`: {pct(r['safe-compiled'])} with `--assume-compiled`, "
        f"{pct(r['safe'])} without",
        f"- must-refuse cases with a safe fix of their target (must be 0): {len(s['must_refuse_safe'])}"
        + (f" ({', '.join(s['must_refuse_safe'])})" if s["must_refuse_safe"] else ""),
        f"- safe fixes (`--assume-compiled`) that `--verify` rejects (must be 0): {len(s['safe_rejected'])}"
        + (f" ({', '.join(s['safe_rejected'])})" if s["safe_rejected"] else ""),
    ]
    if s["no_finding"]:
        lines.append(f"- cases with no finding at all: {', '.join(s['no_finding'])}")
    lines += [
        "",
        "Columns: the case's findings; whether each run fixed all of them (safe, safe with "
        "`--assume-compiled`, `--verify` safe, `--verify` with unsafe fixes); the `--verify` "
        "verdict of the unsafe run; the fix `check` offers (applicability: message).",
        "",
        "| case | label | findings | safe | safe, compiled | verify safe | verify unsafe | verdict | fix offered |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        mark = {True: "yes", False: "-"}
        verdict = row["status"]["verify-unsafe"]
        if row["verify-unsafe-reason"] and verdict != "verified":
            verdict += ": " + row["verify-unsafe-reason"]
        lines.append(
            f"| {row['case']} | {row['label']} | {', '.join(row['targets']) or '-'} | "
            + " | ".join(mark[row["runs"][run]] for run, _, _ in RUNS)
            + f" | {short(verdict, 120)} | {short(row['fix'])} |"
        )
    return "\n".join(lines) + "\n"


def torch_version() -> str:
    """The installed torch's version, or ``"(not installed)"``."""
    try:
        from importlib.metadata import version

        return version("torch")
    except Exception:
        return "(not installed)"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--markdown", action="store_true", help="print the Markdown report only")
    parser.add_argument("--json", metavar="FILE", help="also write every run's JSON to FILE")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per pt2lint run (default 3600)")
    parser.add_argument(
        "--cases", metavar="PREFIXES",
        help="only the cases whose name starts with one of these comma-separated prefixes (e.g. c04,c05)",
    )
    args = parser.parse_args(argv)
    cases = load_manifest(HERE / "manifest.toml")
    if args.cases:
        prefixes = tuple(p.strip() for p in args.cases.split(",") if p.strip())
        cases = {name: entry for name, entry in cases.items() if name.startswith(prefixes)}
        if not cases:
            raise SystemExit(f"error: no case starts with {', '.join(prefixes)}")
    raw = measure(cases, args.timeout)
    result = analyse(cases, raw)
    text = report(result, raw["seconds"])
    print(text, end="")
    if args.json:
        sys.path.insert(0, str(ROOT))
        from pt2lint.atomic import atomic_write  # noqa: PLC0415

        data = json.dumps({"raw": raw, "result": result}, indent=1, sort_keys=True).encode()
        atomic_write(os.path.abspath(args.json), data, durable=False)
    s = result["summary"]
    return 1 if s["must_refuse_safe"] or s["safe_rejected"] else 0


if __name__ == "__main__":
    sys.exit(main())
