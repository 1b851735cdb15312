#!/usr/bin/env python
"""Collect ground truth: where does Dynamo really graph-break in library models?

Models run in worker subprocesses (a few models of one library per process,
``--jobs`` processes at a time); a model that crashes or exceeds
``--timeout`` is recorded as failed and the rest of its batch is restarted in
a fresh process.  For every model (see models.py for the calls it makes:
eval, train, and for some eval_dyn / decode):

1. eager runs of every call, recording with sys.settrace every line executed
   in files of the transformers / timm / diffusers packages (only during the
   forward calls, not during model construction);
2. for every call: torch._dynamo.reset(), torch.compile(model,
   backend="eager"), the same call, capturing every graph break reported on
   the ``graph_breaks`` logging artifact (with the duplicate-suppression
   turned off so each report carries its user stack).  Each break is
   attributed to the innermost frame of its user stack inside one of the
   libraries.  The library lines Dynamo symbolically traced are recorded
   too ("traced").

Results are written to truth.json (see README.md for the schema).

Usage:
    python bench/realmodels/collect.py                 # all models, 2 jobs
    python bench/realmodels/collect.py --only llama,gpt2 --out /tmp/t.json
    python bench/realmodels/collect.py --only wav2vec2,hubert --merge   # refresh some
    python bench/realmodels/collect.py --list
    python bench/realmodels/collect.py --zoo bench/libmodels/models.py   # another zoo

``--zoo`` names another model-zoo module (see load_zoo); its ``LIBS`` then
replace transformers / timm / diffusers everywhere above.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import logging
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBS = ("transformers", "timm", "diffusers")
DEFAULT_ZOO = HERE / "models.py"

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "DIFFUSERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONWARNINGS": "ignore",
}


# --------------------------------------------------------------------------
# model zoo
# --------------------------------------------------------------------------


def load_zoo(path: Path | str = DEFAULT_ZOO):
    """Import a model-zoo module by file name.

    A zoo defines ``MODELS`` (name -> (library, builder)) and ``Spec``, and
    may define ``LIBS`` (the packages whose lines and break sites are
    recorded; default: transformers, timm, diffusers) and ``prepare(names)``
    (called in a worker before any of ``names`` is built, e.g. to put import
    stubs on ``sys.path``).  Its directory goes on ``sys.path`` first.
    """
    path = Path(path).resolve()
    modname = "models" if path == DEFAULT_ZOO else f"{path.parent.name}_{path.stem}"
    if modname in sys.modules:
        return sys.modules[modname]
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    spec.loader.exec_module(mod)
    return mod


def zoo_libs(zoo) -> tuple[str, ...]:
    return tuple(getattr(zoo, "LIBS", LIBS))


# --------------------------------------------------------------------------
# paths
# --------------------------------------------------------------------------


def lib_dirs(libs=LIBS) -> dict[str, str]:
    """Package directory of each library, found without importing it."""
    out = {}
    for lib in libs:
        spec = importlib.util.find_spec(lib)
        if spec is None or not spec.submodule_search_locations:
            continue
        out[lib] = os.path.realpath(list(spec.submodule_search_locations)[0])
    return out


def site_root_of(path: str) -> str:
    return os.path.dirname(path)


class PathMapper:
    """Maps absolute file names to paths relative to site-packages."""

    def __init__(self, libs=LIBS) -> None:
        self.dirs = lib_dirs(libs)
        self.prefixes = [(d + os.sep, site_root_of(d)) for d in self.dirs.values()]
        import torch

        self.torch_root = os.path.dirname(os.path.dirname(os.path.realpath(torch.__file__)))
        self._cache: dict[str, str | None] = {}

    def lib_rel(self, filename: str) -> str | None:
        """Relative path if ``filename`` is inside one of the libraries, else None."""
        try:
            return self._cache[filename]
        except KeyError:
            pass
        real = os.path.realpath(filename) if os.path.isabs(filename) else filename
        rel = None
        for prefix, root in self.prefixes:
            if real.startswith(prefix):
                rel = os.path.relpath(real, root).replace(os.sep, "/")
                break
        self._cache[filename] = rel
        return rel

    def any_rel(self, filename: str) -> str:
        """Relative to site-packages when possible, else the name as given."""
        rel = self.lib_rel(filename)
        if rel is not None:
            return rel
        real = os.path.realpath(filename) if os.path.isabs(filename) else filename
        if real.startswith(self.torch_root + os.sep):
            return os.path.relpath(real, self.torch_root).replace(os.sep, "/")
        return filename


# --------------------------------------------------------------------------
# executed lines (eager)
# --------------------------------------------------------------------------


class LineRecorder:
    def __init__(self, mapper: PathMapper) -> None:
        self.mapper = mapper
        self.lines: dict[str, set[int]] = {}

    def _global(self, frame, event, arg):
        if event != "call":
            return None
        rel = self.mapper.lib_rel(frame.f_code.co_filename)
        if rel is None:
            return None
        lines = self.lines.setdefault(rel, set())

        def local(frame, event, arg):
            if event == "line":
                lines.add(frame.f_lineno)
            return local

        return local

    def __enter__(self):
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)
        return False


def compress(lines) -> list:
    """Sorted lines as a compact list: ints and [start, end] inclusive ranges."""
    out: list = []
    for n in sorted(set(lines)):
        if out:
            last = out[-1]
            end = last[1] if isinstance(last, list) else last
            if n == end + 1:
                start = last[0] if isinstance(last, list) else last
                out[-1] = [start, n]
                continue
        out.append(n)
    return out


def expand(items) -> set[int]:
    out: set[int] = set()
    for it in items:
        if isinstance(it, list):
            out.update(range(it[0], it[1] + 1))
        else:
            out.add(int(it))
    return out


class TracedLines:
    """Lines Dynamo symbolically traced (InstructionTranslatorBase.starts_line).

    A line that ran eagerly but was never traced by Dynamo (e.g. the rest of
    a frame Dynamo gave up on and ran in eager mode, or an eager-only branch
    under ``torch.compiler.is_compiling()``) says nothing about whether
    Dynamo would break there; a traced line without a break does.
    """

    def __init__(self, mapper: PathMapper) -> None:
        self.mapper = mapper
        self.lines: dict[str, set[int]] = {}

    def install(self) -> bool:
        try:
            from torch._dynamo import symbolic_convert as sc

            orig = sc.InstructionTranslatorBase.starts_line
        except (ImportError, AttributeError):  # pragma: no cover - internals moved
            return False
        rec = self

        def starts_line(tx, lineno):
            rel = rec.mapper.lib_rel(tx.f_code.co_filename)
            if rel is not None and lineno:
                rec.lines.setdefault(rel, set()).add(int(lineno))
            return orig(tx, lineno)

        sc.InstructionTranslatorBase.starts_line = starts_line
        return True


# --------------------------------------------------------------------------
# graph-break capture
# --------------------------------------------------------------------------

_GB_LINK = re.compile(r"/gb/gb(\d+)\.html")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+?)\s*$')
_AT = re.compile(r"in user code at (?P<file>.+):(?P<line>\d+)\s*$")
_STACK_MARKERS = (
    "User code traceback:",
    "The graph break occurred in the following user code:",
)


def load_registry() -> dict[str, str]:
    """GB id -> Gb_type, from torch/_dynamo/graph_break_registry.json."""
    import torch._dynamo

    path = Path(torch._dynamo.__file__).with_name("graph_break_registry.json")
    try:
        data = json.loads(path.read_text())
    except OSError:
        return {}
    out = {}
    for gid, entries in data.items():
        if entries:
            out[gid] = entries[0].get("Gb_type", "")
    return out


class FunctionSpans:
    """The innermost ``def`` around a line of a file, from its AST.

    Used to check the line Dynamo reports for a break: in the resume
    function Dynamo builds after an earlier break in the same frame, the
    line table can be shifted (seen on Python 3.11), so a break is reported
    at a line outside the function named in the same stack frame.
    """

    def __init__(self) -> None:
        self._spans: dict[str, list[tuple[int, int, str]]] = {}

    def name_at(self, path: str, line: int) -> str | None:
        spans = self._spans.get(path)
        if spans is None:
            try:
                tree = ast.parse(Path(path).read_text(encoding="utf-8"))
            except (OSError, SyntaxError, ValueError):
                tree = None
            spans = [
                (n.lineno, n.end_lineno or n.lineno, n.name)
                for n in (ast.walk(tree) if tree is not None else ())
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
            self._spans[path] = spans
        best = None
        for start, end, name in spans:
            if start <= line <= end and (best is None or start > best[0]):
                best = (start, end, name)
        return best[2] if best else None

    def misplaced(self, path: str, line: int, func: str) -> str | None:
        """Why (path, line) cannot be in ``func``, or None when it can be."""
        if func.startswith("<") or func == "?" or not os.path.isabs(path):
            return None
        found = self.name_at(path, line)
        if found == func:
            return None
        return f"line {line} is in {found or 'module code'}, not in {func}"


class BreakCapture(logging.Handler):
    """Logging handler on the graph_breaks artifact loggers."""

    LOGGERS = (
        "torch._dynamo.symbolic_convert.__graph_breaks",
        "torch._dynamo.convert_frame.__graph_breaks",
        "torch._dynamo.exc.__graph_breaks",
    )

    def __init__(self, mapper: PathMapper, registry: dict[str, str]) -> None:
        super().__init__(logging.DEBUG)
        self.mapper = mapper
        self.registry = registry
        self.by_title = {v: k for k, v in registry.items()}
        self.spans = FunctionSpans()
        self.reset()

    def reset(self) -> None:
        self.mode = "eval"
        self.sites: dict[tuple, dict] = {}
        self.unparsed: list[str] = []

    def install(self) -> None:
        import torch

        torch._logging.set_logs(graph_breaks=True)
        for name in self.LOGGERS:
            lg = logging.getLogger(name)
            lg.addHandler(self)
            lg.setLevel(logging.DEBUG)
            lg.propagate = False  # keep stderr quiet
        # Without this, a repeated break (same type, same frame chain) is
        # logged without its user stack; we want the stack every time.
        try:
            from torch._dynamo import utils as dutils

            dutils.graph_break_dup_warning_checker.add = lambda key: True  # type: ignore[method-assign]
        except Exception:  # pragma: no cover - torch internals moved
            pass

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._handle(record.getMessage())
        except Exception as e:  # never let capture break the run
            self.unparsed.append(f"{type(e).__name__}: {e}")

    # -- parsing ------------------------------------------------------------

    def _gb(self, text: str) -> tuple[str, list[str]]:
        ids = ["GB%04d" % int(m) for m in _GB_LINK.findall(text)]
        if not ids:
            for line in text.splitlines():
                gid = self.by_title.get(line.strip())
                if gid:
                    ids.append(gid)
        seen: list[str] = []
        for g in ids:
            if g not in seen:
                seen.append(g)
        return (seen[0] if seen else ""), seen

    def _reason(self, text: str, gb_type: str) -> str:
        title = self.registry.get(gb_type, "")
        expl = ""
        for line in text.splitlines():
            s = line.strip()
            if s.startswith("Explanation:"):
                expl = s[len("Explanation:"):].strip()
                break
        if not title:
            m = re.search(r"Graph Break Reason: (.*)", text)
            title = m.group(1).strip() if m else text.splitlines()[0]
        reason = f"{title}: {expl}" if expl else title
        return reason[:400]

    def _stack(self, text: str) -> list[tuple[str, int, str]]:
        start = -1
        for marker in _STACK_MARKERS:
            i = text.find(marker)
            if i >= 0:
                start = i + len(marker)
                break
        if start < 0:
            return []
        frames = []
        for line in text[start:].splitlines():
            m = _FRAME.match(line)
            if m:
                frames.append((m["file"], int(m["line"]), m["func"]))
        return frames

    def _handle(self, text: str) -> None:
        gb_type, all_gb = self._gb(text)
        frames = self._stack(text)
        if not frames:
            first = text.splitlines()[0] if text else ""
            m = _AT.search(first)
            if m:
                frames = [(m["file"], int(m["line"]), "?")]
        if not frames:
            self.unparsed.append(text[:300])
            return
        lib_frames = [
            (self.mapper.lib_rel(f), ln, fn)
            for f, ln, fn in frames
            if self.mapper.lib_rel(f) is not None
        ]
        lib_abs = [f for f, _, _ in frames if self.mapper.lib_rel(f) is not None]
        inner_file, inner_line, _ = frames[-1]
        if lib_frames:
            rel, line, func = lib_frames[-1]
            in_library = True
            misplaced = self.spans.misplaced(lib_abs[-1], line, func)
        else:
            rel, line, func = self.mapper.any_rel(inner_file), inner_line, frames[-1][2]
            in_library = False
            misplaced = None
        key = (rel, line, gb_type)
        site = self.sites.get(key)
        if site is None:
            site = {
                "file": rel,
                "line": line,
                "reason": self._reason(text, gb_type),
                "gb_type": gb_type,
                "gb_name": self.registry.get(gb_type, ""),
                "function": func,
                "modes": [],
                "count": 0,
            }
            if len(all_gb) > 1:
                site["also_gb"] = all_gb[1:]
            if not in_library:
                site["outside_library"] = True
            if misplaced:
                site["misplaced"] = misplaced
            inner_rel = self.mapper.any_rel(inner_file)
            if (inner_rel, inner_line) != (rel, line):
                site["inner"] = f"{inner_rel}:{inner_line}"
            # Library frames leading to the break, outermost first (last 6).
            site["stack"] = [f"{f}:{n}" for f, n, _ in lib_frames[-6:]]
            self.sites[key] = site
        if self.mode not in site["modes"]:
            site["modes"].append(self.mode)
        site["count"] += 1


# --------------------------------------------------------------------------
# worker: one model
# --------------------------------------------------------------------------


def _short_exc(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    first = msg[0] if msg else ""
    return f"{type(e).__name__}: {first}"[:300]


def run_worker(
    names: list[str], result_dir: str, train: bool = True, compile_: bool = True, zoo_path=DEFAULT_ZOO
) -> int:
    """Run several models (all of one library) in this process, one by one.

    Each model's result goes to ``<result_dir>/<name>.json`` as soon as it is
    done; the driver uses those files to see progress and to restart the rest
    of the batch in a fresh process if this one crashes or hangs.
    """
    os.environ.update(OFFLINE_ENV)
    model_zoo = load_zoo(zoo_path)
    prepare = getattr(model_zoo, "prepare", None)
    if prepare is not None:
        prepare(names)

    import warnings

    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(1)
    mapper = PathMapper(zoo_libs(model_zoo))
    capture = BreakCapture(mapper, load_registry()) if compile_ else None
    traced = TracedLines(mapper) if compile_ else None
    if capture is not None:
        capture.install()
        if not traced.install():
            traced = None
    for name in names:
        path = os.path.join(result_dir, f"{name}.json")
        run_one(name, path, model_zoo, mapper, capture, traced, train=train, compile_=compile_)
    return 0


def run_one(name, result_path, model_zoo, mapper, capture, traced=None, *, train=True, compile_=True) -> None:
    import torch

    lib, builder = model_zoo.MODELS[name]
    result: dict = {"library": lib, "status": "ok", "calls": [], "breaks": [], "executed": {}, "notes": []}
    timings: dict[str, float] = {}

    def save() -> None:
        result["timings"] = {k: round(v, 2) for k, v in timings.items()}
        tmp = result_path + ".part"
        Path(tmp).write_text(json.dumps(result))
        os.replace(tmp, result_path)

    t0 = time.time()
    try:
        torch.manual_seed(0)
        spec = builder()
        if isinstance(spec, tuple):
            spec = model_zoo.Spec(*spec)
        model = spec.model
        calls = spec.calls(train=train)
    except BaseException as e:  # noqa: BLE001
        result["status"] = "error: build: " + _short_exc(e)
        result["traceback"] = traceback.format_exc()[-3000:]
        save()
        return
    timings["build"] = time.time() - t0

    def run(m, label, mode, make):
        """Prepare inputs (untraced, uncompiled) and return a thunk running m."""
        model.eval()
        torch.manual_seed(1)
        with torch.no_grad():
            args, kwargs = make(model)
        if mode == "train":
            model.train()

        def go():
            torch.manual_seed(0)
            if mode == "eval":
                with torch.no_grad():
                    return m(*args, **kwargs)
            return m(*args, **kwargs)

        return go

    # (a) eager runs with line tracing
    recorder = LineRecorder(mapper)
    eager_ok = []
    alt_ok = False
    for label, mode, make in calls:
        t = time.time()
        try:
            go = run(model, label, mode, make)
            with recorder:
                go()
            eager_ok.append((label, mode, make))
        except BaseException as e:  # noqa: BLE001
            sys.settrace(None)
            result["notes"].append(f"eager {label} failed: " + _short_exc(e))
            if label == "eval":
                result["status"] = "error: eager: " + _short_exc(e)
                result["traceback"] = traceback.format_exc()[-3000:]
        timings[f"eager_{label}"] = time.time() - t
        if label == "eval" and spec.alt is not None and eager_ok:
            t = time.time()
            try:
                go = run(model, "eval_dyn", "eval", lambda m: spec.alt())
                with recorder:
                    go()
                alt_ok = True
            except BaseException as e:  # noqa: BLE001
                sys.settrace(None)
                result["notes"].append("eager eval_dyn failed: " + _short_exc(e))
            timings["eager_eval_dyn"] = time.time() - t
    result["executed"] = {k: compress(v) for k, v in sorted(recorder.lines.items())}
    if capture is None or not any(lbl == "eval" for lbl, _, _ in eager_ok):
        save()
        return

    # (b) compiled runs, capturing graph breaks
    import torch._dynamo

    capture.reset()
    if traced is not None:
        traced.lines = {}
    for label, mode, make in eager_ok:
        t = time.time()
        torch._dynamo.reset()
        capture.mode = label
        try:
            compiled = torch.compile(model, backend="eager")
            go = run(compiled, label, mode, make)
            go()
            result["calls"].append(label)
        except BaseException as e:  # noqa: BLE001
            result["notes"].append(f"compile {label} failed: " + _short_exc(e))
            if label == "eval":
                result["status"] = "error: compile: " + _short_exc(e)
                result["traceback"] = traceback.format_exc()[-3000:]
            continue
        finally:
            timings[f"compile_{label}"] = time.time() - t
        if label == "eval" and alt_ok:
            # Same compiled model, new sequence length: automatic dynamic shapes.
            t = time.time()
            capture.mode = "eval_dyn"
            try:
                run(compiled, "eval_dyn", "eval", lambda m: spec.alt())()
                result["calls"].append("eval_dyn")
            except BaseException as e:  # noqa: BLE001
                result["notes"].append("compile eval_dyn failed: " + _short_exc(e))
            timings["compile_eval_dyn"] = time.time() - t
    result["breaks"] = sorted(
        capture.sites.values(), key=lambda s: (s["file"], s["line"], s["gb_type"])
    )
    if traced is not None:
        result["traced"] = {k: compress(v) for k, v in sorted(traced.lines.items())}
    if capture.unparsed:
        result["unparsed_logs"] = capture.unparsed[:20]
    torch._dynamo.reset()
    save()


# --------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------


def versions(libs=LIBS) -> dict:
    """Python, torch and each library's version (by its distribution's name)."""
    from importlib import metadata

    dists = metadata.packages_distributions()
    out = {"python": platform.python_version()}
    for pkg in ("torch", *libs):
        for dist in (*dists.get(pkg, ()), pkg):
            try:
                out[pkg] = metadata.version(dist)
                break
            except metadata.PackageNotFoundError:
                out[pkg] = None
    return out


def make_batches(names: list[str], size: int, model_zoo) -> list[list[str]]:
    """Group models by library (one library per process), ``size`` per batch."""
    by_lib: dict[str, list[str]] = {}
    for n in names:
        by_lib.setdefault(model_zoo.MODELS[n][0], []).append(n)
    batches = []
    for group in by_lib.values():
        for i in range(0, len(group), size):
            batches.append(group[i : i + size])
    return batches


def run_all(
    names: list[str],
    jobs: int,
    timeout: float,
    train: bool,
    compile_: bool = True,
    batch: int = 6,
    zoo_path=DEFAULT_ZOO,
) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="realmodels-"))
    queue = make_batches(names, batch, load_zoo(zoo_path))
    running: dict[int, dict] = {}
    results: dict[str, dict] = {}
    env = dict(os.environ, **OFFLINE_ENV)
    started = time.time()
    wid = 0

    def report(name: str, data: dict) -> None:
        results[name] = data
        print(
            f"[{time.time() - started:6.1f}s] {name:28s} {data['status'][:60]:60s} "
            f"breaks={len(data.get('breaks', [])):3d} ({data.get('seconds', 0):.0f}s)",
            flush=True,
        )

    def harvest(w: dict) -> None:
        """Pick up results written by worker ``w`` since the last look."""
        for name in w["names"]:
            if name in results:
                continue
            res = tmp / f"{name}.json"
            if not res.exists():
                break
            data = json.loads(res.read_text())
            now = time.time()
            data["seconds"] = round(now - w["last"], 1)
            w["last"] = now
            report(name, data)

    def fail_current(w: dict, status: str) -> None:
        pending = [n for n in w["names"] if n not in results]
        if not pending:
            return
        log = w["log"].read_text(errors="replace")[-2000:] if w["log"].exists() else ""
        data = {"library": None, "status": status, "breaks": [], "executed": {}, "log_tail": log}
        data["seconds"] = round(time.time() - w["last"], 1)
        report(pending[0], data)
        if pending[1:]:
            queue.insert(0, pending[1:])

    while queue or running:
        while queue and len(running) < jobs:
            names_ = queue.pop(0)
            wid += 1
            log = tmp / f"worker{wid}.log"
            cmd = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--worker",
                ",".join(names_),
                "--result-dir",
                str(tmp),
                "--zoo",
                str(zoo_path),
            ]
            if not train:
                cmd.append("--no-train")
            if not compile_:
                cmd.append("--no-compile")
            with open(log, "w") as fh:
                proc = subprocess.Popen(
                    cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True
                )
            running[wid] = {"proc": proc, "names": names_, "log": log, "last": time.time()}
        time.sleep(0.25)
        for k in list(running):
            w = running[k]
            harvest(w)
            if w["proc"].poll() is not None:
                harvest(w)
                fail_current(w, f"error: worker died (exit code {w['proc'].returncode})")
                del running[k]
            elif time.time() - w["last"] > timeout:
                try:
                    os.killpg(w["proc"].pid, 9)
                except ProcessLookupError:
                    pass
                w["proc"].wait()
                harvest(w)
                fail_current(w, f"error: timeout after {timeout:.0f}s")
                del running[k]
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated model names (default: all)")
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per model")
    ap.add_argument(
        "--zoo", type=Path, default=DEFAULT_ZOO, help="model-zoo module (default: models.py here)"
    )
    ap.add_argument("--out", type=Path, help="default: truth.json beside the zoo")
    ap.add_argument("--no-train", action="store_true", help="skip the train-mode runs")
    ap.add_argument("--list", action="store_true", help="list model names and exit")
    ap.add_argument("--no-compile", action="store_true", help="eager runs only (to check builders)")
    ap.add_argument(
        "--merge",
        action="store_true",
        help="update --out in place: keep its other models, replace the ones run now",
    )
    ap.add_argument("--batch", type=int, default=6, help="models per worker process")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--result-dir", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)

    if ns.worker:
        return run_worker(
            ns.worker.split(","),
            ns.result_dir,
            train=not ns.no_train,
            compile_=not ns.no_compile,
            zoo_path=ns.zoo,
        )

    model_zoo = load_zoo(ns.zoo)
    if ns.out is None:
        ns.out = ns.zoo.resolve().parent / "truth.json"

    if ns.list:
        for name, (lib, _) in model_zoo.MODELS.items():
            print(f"{lib:12s} {name}")
        return 0
    names = list(model_zoo.MODELS)
    if ns.only:
        wanted = [n.strip() for n in ns.only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in model_zoo.MODELS]
        if unknown:
            ap.error(f"unknown model(s): {', '.join(unknown)}")
        names = wanted
    t0 = time.time()
    results = run_all(
        names,
        ns.jobs,
        ns.timeout,
        train=not ns.no_train,
        compile_=not ns.no_compile,
        batch=ns.batch,
        zoo_path=ns.zoo,
    )
    libs = zoo_libs(model_zoo)
    vers = versions(libs)
    models_out = {n: results[n] for n in names}
    if ns.merge and ns.out.exists():
        old = json.loads(ns.out.read_text())
        if old.get("versions") != vers:
            print(f"warning: {ns.out} was collected with {old.get('versions')}", file=sys.stderr)
        merged = dict(old.get("models", {}))
        merged.update(models_out)
        order = [n for n in model_zoo.MODELS if n in merged] + [
            n for n in merged if n not in model_zoo.MODELS
        ]
        models_out = {n: merged[n] for n in order}
    truth = {"torch": vers.get("torch"), "versions": vers}
    if libs != LIBS:
        truth["libraries"] = list(libs)
    truth["models"] = models_out
    ns.out.write_text(json.dumps(truth, indent=None, separators=(",", ":"), sort_keys=False) + "\n")
    ok = sum(1 for r in results.values() if r["status"] == "ok")
    print(f"wrote {ns.out} ({ok}/{len(names)} ok in this run, {time.time() - t0:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
