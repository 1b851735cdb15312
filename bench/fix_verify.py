"""``pt2lint fix --verify`` over real model code: how many rewrites are proven, rejected, unverifiable, refused.

Setup: the libraries installed in the environment (nothing is downloaded); torch for
``--verify``.  Run::

    python bench/fix_verify.py                         # prints the table
    python bench/fix_verify.py --files 40 --markdown   # the table for bench/RESULTS.md
    python bench/fix_verify.py --json out.json         # every verdict, for a closer look

For each library (:data:`LIBRARIES`: the ``models`` folders of transformers, timm and
diffusers, and the packages x_transformers and vector_quantize_pytorch; and, in rows of
their own, this repository's model fixtures, :data:`FIXTURES`, which define model
factories) the first
``--files`` Python files in sorted path order (transformers: ``modeling_*.py`` only;
``__init__.py`` never) are fixed twice with ``pt2lint fix --verify --diff
--output-format json --isolated --no-cache`` — safe fixes only, then with
``--unsafe-fixes`` too.  ``--diff`` writes nothing: the installed libraries stay as they are.

Columns, per run: files, fixes proposed (findings with a fix that the run would apply,
before verification), rewritten functions, and of those verified (proven: outputs,
gradients and buffers equal on inputs that took every rewritten branch both ways, no
graph break left), rejected (a check failed: the evidence is in ``--json``),
unverifiable (no model factory, inputs that cannot be built, a branch never taken);
refused (findings whose codemod refused to rewrite, with a reason); seconds.

``--zoo`` adds rows where library code can be decided: the files that define the top-level
class of each transformers / diffusers model of the tiny-config zoo
(``bench/realmodels/models.py``, through ``bench/zoo_factories.py``), fixed with a generated
config that gives each such class a per-class factory (the zoo's model, random weights) and
inputs (its train call: the eval inputs with labels).  A rewritten function of such a file is then run inside the whole
model; one in a file no zoo model is defined in stays unverifiable.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent

#: ``(package, sub-folder or "", file name prefix or "")``.
LIBRARIES = (
    ("transformers", "models", "modeling_"),
    ("timm", "models", ""),
    ("diffusers", "models", ""),
    ("x_transformers", "", ""),
    ("vector_quantize_pytorch", "", ""),
)
#: This repository's own model fixtures, which define ``make_model()`` / ``example_inputs()``
#: (so, unlike the libraries' classes, they can be built without a config): a corpus where
#: ``--verify`` can decide.  Not third-party code; reported in rows of their own.
FIXTURES = ("fixtures/models", "fixtures/fix")


def library_files(package: str, folder: str, prefix: str, limit: int) -> List[Path]:
    """The first ``limit`` files of one library (sorted paths); ``[]`` when it is not installed.

    A ``package`` of :data:`FIXTURES` is a folder of this repository (every file, no limit).
    """
    if package in FIXTURES:
        return sorted(p for p in (ROOT / package).rglob("*.py") if p.name != "__init__.py")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return []
    base = Path(list(spec.submodule_search_locations)[0])
    root = base / folder if folder else base
    files = sorted(p for p in root.rglob("*.py") if p.name != "__init__.py" and p.name.startswith(prefix))
    return files[:limit]


def zoo_config(libraries: List[str], workdir: Path) -> Tuple[List[Path], Path]:
    """The zoo's model files and a config giving each model's class its zoo factory and inputs.

    Writes ``workdir/zoo_entry.py`` (zero-argument wrappers around :mod:`bench.zoo_factories`)
    and ``workdir/pyproject.toml``; returns ``(files, config path)``.  The index is built in a
    child process (the zoo imports the libraries and torch).
    """
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "zoo_factories.py"), *libraries],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        raise SystemExit(f"building the zoo index failed:\n{proc.stderr[-3000:]}")
    found = json.loads(proc.stdout)
    lines = ["import sys", f"sys.path.insert(0, {str(ROOT / 'bench')!r})", "import zoo_factories", ""]
    entries = ["[tool.pt2lint.confirm]", "jobs = 1"]
    files: List[Path] = []
    entry = workdir / "zoo_entry.py"
    for name, (path, cls) in sorted(found.items()):
        fn = "".join(c if c.isalnum() else "_" for c in name)
        lines += [f"def model_{fn}():", f"    return zoo_factories.model({name!r})", "",
                  f"def inputs_{fn}():", f"    return zoo_factories.inputs({name!r})", ""]
        if Path(path) not in files:
            files.append(Path(path))
            entries.append(f'"{path}::{cls}" = {{ factory = "{entry}:model_{fn}", inputs = "{entry}:inputs_{fn}" }}')
    entry.write_text("\n".join(lines) + "\n")
    config = workdir / "pyproject.toml"
    config.write_text("\n".join(entries) + "\n")
    return sorted(files), config


def run_fix(files: List[Path], unsafe: bool, timeout: float, config: Optional[Path] = None) -> Dict[str, Any]:
    """One ``pt2lint fix --verify --diff --output-format json`` run; its JSON and wall time.

    Without ``config`` every config file is ignored (``--isolated``)."""
    cmd = [sys.executable, "-m", "pt2lint", "fix", "--verify", "--diff", "--no-cache",
           "--output-format", "json", "--timeout", str(timeout)]
    cmd += ["--config", str(config)] if config else ["--isolated"]
    if unsafe:
        cmd.append("--unsafe-fixes")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    started = time.perf_counter()
    proc = subprocess.run(cmd + [str(f) for f in files], capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - started
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"pt2lint fix failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    doc["seconds"] = seconds
    doc["stderr_tail"] = proc.stderr[-2000:]
    return doc


def proposed(doc: Dict[str, Any]) -> int:
    """Fixes the run would have applied before verification: those of the rewritten functions."""
    return sum(len(f["fixes"]) for f in doc.get("verify", {}).get("functions", []))


def refused(doc: Dict[str, Any]) -> int:
    """Findings left whose codemod refused (a display-only fix with a reason)."""
    return sum(1 for d in doc.get("remaining", []) if (d.get("fix") or {}).get("applicability") == "display-only")


def row(name: str, files: int, doc: Dict[str, Any]) -> Dict[str, Any]:
    counts = doc.get("verify", {}).get("counts", {})
    return {
        "library": name, "files": files, "fixes": proposed(doc),
        "functions": len(doc.get("verify", {}).get("functions", [])),
        "verified": counts.get("verified", 0), "rejected": counts.get("rejected", 0),
        "unverifiable": counts.get("unverifiable", 0), "refused": refused(doc), "seconds": round(doc["seconds"], 1),
    }


def markdown(rows: List[Dict[str, Any]]) -> str:
    head = "| library | run | files | fixes | functions | verified | rejected | unverifiable | refused | s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    body = "".join(
        f"| {r['library']} | {r['run']} | {r['files']} | {r['fixes']} | {r['functions']} | {r['verified']} | {r['rejected']} | "
        f"{r['unverifiable']} | {r['refused']} | {r['seconds']} |\n"
        for r in rows
    )
    return head + body


def measure(name: str, files: List[Path], timeout: float, config: Optional[Path],
            rows: List[Dict[str, Any]], dump: Dict[str, Any]) -> None:
    """Fix ``files`` twice (safe, then safe + unsafe); append the two rows and their verdicts."""
    for unsafe in (False, True):
        doc = run_fix(files, unsafe, timeout, config)
        r = row(name, len(files), doc)
        r["run"] = "safe + unsafe" if unsafe else "safe"
        rows.append(r)
        dump[f"{name} {r['run']}"] = {"files": [str(f) for f in files], "verify": doc.get("verify"), "errors": doc.get("errors")}
        print(json.dumps(r), file=sys.stderr)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=40, help="files per library (first in sorted order; default 40)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per model in --verify (default 60)")
    parser.add_argument("--only", action="append", default=[], help="only this library (repeatable)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--json", metavar="PATH", help="write every run's verdicts here")
    parser.add_argument("--zoo", action="store_true",
                        help="only the zoo rows: the model files of bench/realmodels' tiny-config models, with their factories")
    args = parser.parse_args(argv)
    rows: List[Dict[str, Any]] = []
    dump: Dict[str, Any] = {}
    if args.zoo:
        with tempfile.TemporaryDirectory(prefix="pt2lint-zoo-") as tmp:
            for library in ("transformers", "diffusers"):
                if args.only and library not in args.only:
                    continue
                files, config = zoo_config([library], Path(tmp))
                measure(f"{library} (zoo)", files, args.timeout, config, rows, dump)
    for package, folder, prefix in () if args.zoo else LIBRARIES + tuple((f, "", "") for f in FIXTURES):
        if args.only and package not in args.only:
            continue
        files = library_files(package, folder, prefix, args.files)
        if not files:
            print(f"{package}: not installed, skipped", file=sys.stderr)
            continue
        measure(package, files, args.timeout, None, rows, dump)
    if args.json:
        Path(args.json).write_text(json.dumps(dump, indent=2, sort_keys=True) + "\n")
    if args.markdown:
        print(markdown(rows), end="")
    else:
        for r in rows:
            print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
