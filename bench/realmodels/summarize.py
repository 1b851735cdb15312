#!/usr/bin/env python
"""Print a markdown summary of truth.json: models, failures, break sites.

    python bench/realmodels/summarize.py [--truth truth.json]

Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBS = ("transformers", "timm", "diffusers")


def summarize(data: dict) -> str:
    models = data.get("models", {})
    out = []
    w = out.append
    vers = data.get("versions", {})
    w("Versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()))
    w("")
    ok = {n: m for n, m in models.items() if m.get("status") == "ok"}
    bad = {n: m for n, m in models.items() if m.get("status") != "ok"}
    w(f"Models: {len(models)} total, {len(ok)} ok, {len(bad)} failed.")
    libs = data.get("libraries")
    sub = libs is None  # the default zoo: also count sites under <lib>/models
    w("")

    # sites per library (in library code only), and per scope
    sites: dict[tuple[str, int], list[tuple[str, dict]]] = defaultdict(list)
    for name, m in ok.items():
        for b in m.get("breaks", []):
            if b.get("outside_library"):
                continue
            sites[(b["file"], b["line"])].append((name, b))
    w(
        "| library | models ok | break sites | "
        + ("in `<lib>/models` | " if sub else "")
        + "models with breaks | executed lines | traced lines |"
    )
    w("|---|---|---|---|---|---|" + ("---|" if sub else ""))
    for lib in libs or LIBS:
        # a model counts for each library it ran code of (a dependency too)
        lib_models = [
            n
            for n, m in ok.items()
            if m.get("library") == lib or any(r.startswith(lib + "/") for r in m.get("executed", {}))
        ]
        lib_sites = [s for s in sites if s[0].split("/", 1)[0] == lib]
        in_models = [s for s in lib_sites if s[0].startswith(lib + "/models/")]
        with_breaks = [
            n for n in lib_models if any(not b.get("outside_library") for b in ok[n].get("breaks", []))
        ]
        executed, traced = (
            sum(
                _count(lines)
                for n in lib_models
                for rel, lines in ok[n].get(key, {}).items()
                if rel.startswith(lib + "/")
            )
            for key in ("executed", "traced")
        )
        w(
            f"| {lib} | {len(lib_models)} | {len(lib_sites)} | "
            + (f"{len(in_models)} | " if sub else "")
            + f"{len(with_breaks)} | {executed} | {traced} |"
        )
    w("")
    w(
        "(executed / traced lines are summed over models, so shared code counts once "
        "per model; traced lines include code Dynamo traces but eager skips.)"
    )
    w("")

    reasons = Counter()
    for (f, n), entries in sites.items():
        for gb in {(b.get("gb_type", ""), b.get("gb_name", "")) for _, b in entries}:
            reasons[gb] += 1
    w("Break sites by graph-break type (a site can have more than one):")
    w("")
    w("| GB id | type | sites |")
    w("|---|---|---|")
    for (gid, name), c in reasons.most_common():
        w(f"| {gid} | {name} | {c} |")
    w("")

    w("Break sites:")
    w("")
    w("| file:line | type | calls | models |")
    w("|---|---|---|---|")
    for (f, n) in sorted(sites):
        entries = sites[(f, n)]
        types = sorted({b.get("gb_name") or b.get("gb_type", "") for _, b in entries})
        calls = sorted({c for _, b in entries for c in b.get("modes", [])})
        names = sorted({name for name, _ in entries})
        w(f"| `{f}:{n}` | {'; '.join(types)} | {', '.join(calls)} | {', '.join(names)} |")
    w("")

    outside = Counter()
    for name, m in ok.items():
        for b in m.get("breaks", []):
            if b.get("outside_library"):
                outside[(b["file"], b.get("gb_name", ""))] += 1
    if outside:
        w("Breaks with no library frame on the stack (not counted as sites):")
        w("")
        for (f, g), c in outside.most_common():
            w(f"- `{f}` {g} ({c} models)")
        w("")

    notes = {n: m.get("notes") for n, m in ok.items() if m.get("notes")}
    if notes:
        w("Models that ran, with some calls failing (their other calls count):")
        w("")
        for n, ns in sorted(notes.items()):
            w(f"- {n}: " + "; ".join(ns))
        w("")
    if bad:
        w("Failed models:")
        w("")
        for n, m in sorted(bad.items()):
            w(f"- {n}: {m.get('status')}")
        w("")
    return "\n".join(out)


def _count(items) -> int:
    return sum((it[1] - it[0] + 1) if isinstance(it, list) else 1 for it in items)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--truth", default=str(HERE / "truth.json"))
    ns = ap.parse_args(argv)
    with open(ns.truth) as fh:
        print(summarize(json.load(fh)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
