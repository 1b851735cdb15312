#!/usr/bin/env python
"""Score a pt2lint JSON report against truth.json here.

    python bench/libmodels/evaluate.py report.json [options of bench/realmodels/evaluate.py]
    python bench/libmodels/evaluate.py --lint report.json [options]   # lint into report.json, then score

The scoring is bench/realmodels/evaluate.py's, with ``--truth`` defaulting to
truth.json here; the truth names its libraries, so the per-library rows and
the recall scope (each library's whole package folder) come from it.
``--lint`` first writes the report by running

    pt2lint check --no-cache --output-format json --exit-zero <site-packages>/<lib> ... -o report.json

over the package folder of every library in the truth.  Standard library only.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "realmodels"))

import evaluate as realmodels_evaluate  # noqa: E402  (bench/realmodels/evaluate.py)

DEFAULT_TRUTH = HERE / "truth.json"


def package_dirs(libs) -> list[str]:
    """Installed package folder of each library (without importing it)."""
    out = []
    for lib in libs:
        spec = importlib.util.find_spec(lib)
        if spec is None or not spec.submodule_search_locations:
            print(f"warning: {lib} is not installed; not linted", file=sys.stderr)
            continue
        out.append(os.path.realpath(list(spec.submodule_search_locations)[0]))
    return out


def lint(truth: Path, report: str) -> None:
    libs = json.loads(truth.read_text())["libraries"]
    cmd = ["pt2lint", "check", "--no-cache", "--output-format", "json", "--exit-zero",
           *package_dirs(libs), "-o", report]
    subprocess.run(cmd, check=True)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--truth" not in argv:
        argv += ["--truth", str(DEFAULT_TRUTH)]
    if "--lint" in argv:
        # --lint REPORT: write REPORT with pt2lint, then score it
        i = argv.index("--lint")
        del argv[i]
        if i >= len(argv) or argv[i].startswith("-"):
            raise SystemExit("--lint needs the report path after it")
        lint(Path(argv[argv.index("--truth") + 1]), argv[i])
    return realmodels_evaluate.main(argv)


if __name__ == "__main__":
    sys.exit(main())
