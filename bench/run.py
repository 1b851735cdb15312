"""The pt2lint benchmark: the model zoos of transformers, timm and diffusers, measured side by side.

Setup (installs nothing itself)::

    pip install torch==2.13.0            # only so the zoos' own imports resolve nothing else
    pip install --no-deps transformers timm diffusers
    pip install -e .                     # pt2lint
    pip install torchfix                 # optional: the peer, measured when present

Run::

    python bench/run.py                  # 3 repeats, writes nothing
    python bench/run.py --repeats 5 --write bench/RESULTS.md

What one run measures, as medians over ``--repeats`` with the spread (min-max):

* ``floor``: single-process ``libcst.parse_module`` over the same files (the LibCST floor);
* ``cold``: ``pt2lint check --no-cache`` with default jobs (one per core);
* ``warm``: ``pt2lint check`` a second time over an unchanged tree with its cache filled;
* ``jobs1``: ``pt2lint check --no-cache --jobs 1``;
* ``torchfix``: ``torchfix`` on the same files, single process, when installed;
* peak RSS of the whole process tree of a cold run (sampled from /proc every 50 ms);
* a scaling row: cold runs over the first quarter, half and all of the (sorted) file list;
* an incremental row: a generated 200-file project (20 helper modules, 180 model modules
  that import them), checked with a warm cache after one helper module is edited: how many
  files are re-analysed (cache entries rewritten) and how long it takes.

Ratios printed: cold/floor, warm/cold, torchfix/cold, and files/s and MB/s.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

PACKAGES = ("transformers", "timm", "diffusers")


def corpus_roots() -> List[Path]:
    """The ``models`` folders of the installed zoos."""
    roots = []
    for pkg in PACKAGES:
        spec = importlib.util.find_spec(pkg)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(list(spec.submodule_search_locations)[0]) / "models"
        if root.is_dir():
            roots.append(root)
    return roots


def corpus_files(roots: Sequence[Path]) -> List[Path]:
    return sorted(p for r in roots for p in r.rglob("*.py"))


def _tree_rss_kb(pid: int) -> int:
    """Resident set size (KiB) of ``pid`` and all its descendants, from /proc."""
    children: Dict[int, List[int]] = {}
    rss: Dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            ppid = int(fields[1])
            rss[int(entry)] = int(fields[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, ()))
    return total


def run_command(cmd: Sequence[str], env: Optional[dict] = None) -> Tuple[float, int, int]:
    """Run ``cmd``; returns (wall seconds, exit code, peak tree RSS in KiB)."""
    peak = [0]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_kb(proc.pid))
            done.wait(0.05)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    rc = proc.wait()
    elapsed = time.perf_counter() - start
    done.set()
    t.join()
    return elapsed, rc, peak[0]


def parse_floor(files: Sequence[Path]) -> float:
    """Seconds to ``libcst.parse_module`` every file, single process (in a child, for a fair start)."""
    code = (
        "import sys, time, libcst\n"
        "paths = sys.stdin.read().splitlines()\n"
        "t = time.perf_counter()\n"
        "for p in paths:\n"
        "    try:\n"
        "        libcst.parse_module(open(p, 'rb').read())\n"
        "    except Exception:\n"
        "        pass\n"
        "print(time.perf_counter() - t)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], input="\n".join(map(str, files)), capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def median_spread(values: Sequence[float]) -> Tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def _fmt(stat: Tuple[float, float, float]) -> str:
    m, lo, hi = stat
    return f"{m:.2f} s ({lo:.2f}-{hi:.2f})"


def bench(files: List[Path], repeats: int, include_torchfix: bool = True) -> Dict[str, object]:
    """Measure every configuration over ``files``; returns a dict of results."""
    pt2lint = [sys.executable, "-m", "pt2lint", "check", "--exit-zero", "-q"]
    filelist = [str(f) for f in files]
    nbytes = sum(f.stat().st_size for f in files)
    results: Dict[str, object] = {"files": len(files), "bytes": nbytes}
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "files.txt"
        listing.write_text("\n".join(filelist))
        args_file = filelist  # passed as arguments (the zoo file list fits the argv limit on Linux)

        floor = [parse_floor(files) for _ in range(repeats)]
        results["floor"] = median_spread(floor)

        cold, rss = [], []
        for _ in range(repeats):
            secs, rc, peak = run_command(pt2lint + ["--no-cache"] + args_file)
            assert rc in (0, 1), f"pt2lint exited {rc}"
            cold.append(secs)
            rss.append(peak)
        results["cold"] = median_spread(cold)
        results["peak_rss_mb"] = max(rss) / 1024

        warm = []
        for i in range(repeats):
            cache = Path(tmp) / f"cache{i}"
            env = dict(os.environ, PT2LINT_CACHE_DIR=str(cache))
            run_command(pt2lint + args_file, env=env)  # fill
            secs, rc, _ = run_command(pt2lint + args_file, env=env)
            warm.append(secs)
        results["warm"] = median_spread(warm)

        jobs1 = [run_command(pt2lint + ["--no-cache", "--jobs", "1"] + args_file)[0] for _ in range(repeats)]
        results["jobs1"] = median_spread(jobs1)

        if include_torchfix and shutil.which("torchfix"):
            tf = [run_command(["torchfix", "-j", "1"] + args_file)[0] for _ in range(repeats)]
            results["torchfix"] = median_spread(tf)

        scaling = []
        for frac in (0.25, 0.5, 1.0):
            subset = filelist[: max(1, int(len(filelist) * frac))]
            times = [run_command(pt2lint + ["--no-cache"] + subset)[0] for _ in range(max(1, repeats))]
            scaling.append((frac, len(subset), statistics.median(times)))
        results["scaling"] = scaling
    return results


INCREMENTAL_HELPERS = 20
INCREMENTAL_MODELS = 180


def write_incremental_project(root: Path) -> None:
    """A 200-file package: ``pkg/ops/hNN.py`` helpers and ``pkg/models/mNNN.py`` modules importing two each."""
    (root / "pyproject.toml").write_text("[project]\nname = 'bench-incremental'\n")
    ops = root / "pkg" / "ops"
    models = root / "pkg" / "models"
    ops.mkdir(parents=True)
    models.mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (ops / "__init__.py").write_text("")
    (models / "__init__.py").write_text("")
    for h in range(INCREMENTAL_HELPERS):
        (ops / f"h{h:02d}.py").write_text(
            "import torch\n\n\n"
            f"def op{h}(x):\n    y = torch.tanh(x) * {h + 1}\n    return y / (y.abs().amax(-1, keepdim=True) + 1e-6)\n"
        )
    for m in range(INCREMENTAL_MODELS):
        a, b = m % INCREMENTAL_HELPERS, (m * 7 + 3) % INCREMENTAL_HELPERS
        (models / f"m{m:03d}.py").write_text(
            "import torch\nfrom torch import nn\n\n"
            f"from ..ops.h{a:02d} import op{a}\nfrom ..ops.h{b:02d} import op{b}\n\n\n"
            f"class Model{m}(nn.Module):\n"
            "    def __init__(self, dim=16):\n        super().__init__()\n        self.proj = nn.Linear(dim, dim)\n\n"
            f"    def forward(self, x):\n        return op{b}(op{a}(self.proj(x)))\n"
        )


def incremental(repeats: int) -> Dict[str, object]:
    """Warm re-check after editing one helper: files re-analysed, and seconds (median of ``repeats``)."""
    pt2lint = [sys.executable, "-m", "pt2lint", "check", "--exit-zero", "-q"]
    times: List[float] = []
    counts: List[int] = []
    reaching = sum(1 for m in range(INCREMENTAL_MODELS) if 3 in (m % INCREMENTAL_HELPERS, (m * 7 + 3) % INCREMENTAL_HELPERS))
    unchanged: List[float] = []
    for i in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "proj"
            root.mkdir()
            write_incremental_project(root)
            cache = Path(tmp) / "cache"
            env = dict(os.environ, PT2LINT_CACHE_DIR=str(cache))
            run_command(pt2lint + [str(root)], env=env)  # fill
            unchanged.append(run_command(pt2lint + [str(root)], env=env)[0])
            time.sleep(0.05)
            edited_at = time.time()
            helper = root / "pkg" / "ops" / "h03.py"
            helper.write_text(helper.read_text() + "\n\ndef extra(x):\n    return x.sum().item()\n")
            secs, rc, _ = run_command(pt2lint + [str(root)], env=env)
            assert rc in (0, 1), f"pt2lint exited {rc}"
            times.append(secs)
            counts.append(sum(1 for p in cache.rglob("*.json") if p.stat().st_mtime >= edited_at))
    return {
        "files": INCREMENTAL_HELPERS + INCREMENTAL_MODELS + 3,
        "reaching": reaching,
        "reanalysed": statistics.median(counts),
        "edit": median_spread(times),
        "unchanged": median_spread(unchanged),
    }


def machine() -> str:
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            mem = f", {int(fh.readline().split()[1]) / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores{mem}, Python {platform.python_version()}, {platform.system()}"


def report(r: Dict[str, object], repeats: int) -> str:
    floor, cold, warm, jobs1 = r["floor"][0], r["cold"][0], r["warm"][0], r["jobs1"][0]
    mb = r["bytes"] / 1e6
    lines = [
        f"Machine: {machine()}",
        f"Corpus: {r['files']} files, {mb:.1f} MB (model folders of {', '.join(PACKAGES)}); medians of {repeats} runs (min-max)",
        "",
        "| measurement | time | files/s | MB/s | ratio |",
        "|---|---|---|---|---|",
        f"| LibCST parse floor (1 process) | {_fmt(r['floor'])} | {r['files'] / floor:.0f} | {mb / floor:.2f} | 1.00x floor |",
        f"| pt2lint check, cold (--no-cache, default jobs) | {_fmt(r['cold'])} | {r['files'] / cold:.0f} | {mb / cold:.2f} | {cold / floor:.2f}x floor |",
        f"| pt2lint check, warm (cache filled) | {_fmt(r['warm'])} | {r['files'] / warm:.0f} | {mb / warm:.2f} | {warm / cold:.3f}x cold |",
        f"| pt2lint check --jobs 1, cold | {_fmt(r['jobs1'])} | {r['files'] / jobs1:.0f} | {mb / jobs1:.2f} | {jobs1 / floor:.2f}x floor |",
    ]
    if "torchfix" in r:
        tf = r["torchfix"][0]
        lines.append(f"| TorchFix (1 process) | {_fmt(r['torchfix'])} | {r['files'] / tf:.0f} | {mb / tf:.2f} | {tf / cold:.1f}x pt2lint cold |")
    else:
        lines.append("| TorchFix | not installed | | | |")
    lines += ["", f"Peak RSS of a cold run (whole process tree): {r['peak_rss_mb']:.0f} MB", "", "Scaling (cold, default jobs):", "", "| share | files | time | time per file |", "|---|---|---|---|"]
    for frac, n, t in r["scaling"]:
        lines.append(f"| {frac:.2f} | {n} | {t:.2f} s | {1000 * t / n:.1f} ms |")
    text = "\n".join(lines) + "\n"
    if r.get("incremental"):
        text += "\n" + report_incremental(r["incremental"])
    return text


def report_incremental(inc: Dict[str, object]) -> str:
    """The incremental table (a row for the unchanged re-check, a row for the edit)."""
    return "\n".join(
        [
            f"Incremental (generated project, {inc['files']} files; warm cache; one helper module edited):",
            "",
            "| run | files re-analysed | time |",
            "|---|---|---|",
            f"| nothing changed | 0 | {_fmt(inc['unchanged'])} |",
            f"| `pkg/ops/h03.py` edited ({inc['reaching']} model modules import it) | {inc['reanalysed']:.0f} | {_fmt(inc['edit'])} |",
        ]
    ) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N files (quick runs)")
    parser.add_argument("--write", metavar="FILE", help="also write the table to FILE (e.g. bench/RESULTS.md)")
    parser.add_argument("--no-torchfix", action="store_true")
    parser.add_argument("--incremental-only", action="store_true", help="run only the incremental row (no corpus needed)")
    args = parser.parse_args(argv)
    if args.incremental_only:
        print(report_incremental(incremental(args.repeats)))
        return 0
    roots = corpus_roots()
    if not roots:
        print("error: install the corpus first: pip install --no-deps transformers timm diffusers", file=sys.stderr)
        return 2
    files = corpus_files(roots)
    if args.limit:
        files = files[: args.limit]
    results = bench(files, args.repeats, include_torchfix=not args.no_torchfix)
    results["incremental"] = incremental(args.repeats)
    text = report(results, args.repeats)
    print(text)
    if args.write:
        Path(args.write).write_text("# Benchmark results\n\nProduced by `python bench/run.py`.\n\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
