#!/usr/bin/env python
"""Score a pt2lint JSON report against truth.json here.

    python bench/libmodels/evaluate.py report.json [options of bench/realmodels/evaluate.py]
    python bench/libmodels/evaluate.py --lint report.json [options]   # lint into report.json, then score

The scoring is bench/realmodels/evaluate.py's, with ``--truth`` defaulting to
truth.json here; the truth names its libraries, so the per-library rows and
the recall scope (each library's whole package folder) come from it.
``--lint`` first writes the report by running

    pt2lint check --no-cache --output-format json --exit-zero \
        --follow-imports <lib>,...,julius <site-packages>/<lib> ... bench/libmodels/models.py -o report.json

over the package folder of every library in the truth, as a user of these
libraries would: each library's own modules are compiled regions, and so is
every wrapper ``forward`` in models.py (an ODE solve, a GP loss), whose calls
are followed into the installed libraries (``--follow-imports``).  Findings in
models.py itself are never scored.  ``--no-entry`` lints the package folders
alone (the score before the wrappers were linted).  Standard library only.
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
# Installed dependencies whose model code Dynamo traces when a library calls it, followed
# (``--follow-imports``) but not scored: the collector attributes a break inside them to the
# innermost library line that calls them, and bench/realmodels/evaluate.py scores a finding
# there the same way (``attributed_site``).  julius is demucs's resampler (pure PyTorch).
# einops and einx are not followed: they register their functions with ``allow_in_graph``
# when imported (einx registers ops it builds at run time, which the linter cannot name:
# docs/accuracy.md, known misses).
FOLLOWED_DEPENDENCIES = ("julius",)


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


def lint(truth: Path, report: str, entry: bool = True) -> None:
    """Write the pt2lint JSON report over every library of the truth to ``report``.

    Args:
        truth: truth.json (its ``libraries`` list names the package folders).
        report: path of the JSON report to write.
        entry: also lint models.py, following its calls into the libraries.
    """
    libs = json.loads(truth.read_text())["libraries"]
    cmd = ["pt2lint", "check", "--no-cache", "--output-format", "json", "--exit-zero"]
    if entry:
        cmd += ["--follow-imports", ",".join([*libs, *FOLLOWED_DEPENDENCIES])]
    cmd += [*package_dirs(libs)]
    if entry:
        cmd.append(str(HERE / "models.py"))
    cmd += ["-o", report]
    subprocess.run(cmd, check=True)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--truth" not in argv:
        argv += ["--truth", str(DEFAULT_TRUTH)]
    entry = "--no-entry" not in argv
    if not entry:
        argv.remove("--no-entry")
    if "--lint" in argv:
        # --lint REPORT: write REPORT with pt2lint, then score it
        i = argv.index("--lint")
        del argv[i]
        if i >= len(argv) or argv[i].startswith("-"):
            raise SystemExit("--lint needs the report path after it")
        lint(Path(argv[argv.index("--truth") + 1]), argv[i], entry=entry)
    return realmodels_evaluate.main(argv)


if __name__ == "__main__":
    sys.exit(main())
