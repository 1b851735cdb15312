#!/usr/bin/env python
"""Measure, on a CUDA machine, what each rule example does to CUDA graphs.

For every spec in ``rules/`` that is marked ``needs_device = "cuda"``, and for the
input-mutation rule (PTC401, whose "mutated inputs" skip also needs a GPU), each example
with a ``run`` expression is imported from a file, moved to the GPU, compiled with
``torch.compile(mode="reduce-overhead")`` and called three times.  Recorded per example:

* ``skips``: the messages Inductor logs as "skipping cudagraphs due to ..."
  (``torch._inductor.cudagraph_utils`` logs them on its ``cudagraphs`` artifact logger),
* ``counters``: every ``torch._dynamo.utils.counters["inductor"]`` entry whose name has
  ``cudagraph`` in it (``cudagraph_skips`` is bumped with each skip message),
* ``syncs``: the warnings ``torch.cuda.set_sync_debug_mode("warn")`` raises for
  synchronising CUDA calls during calls 2 and 3 (after warm-up and recording),
* ``error``: an exception from compiling or calling, as text (or ``None``).

Needs only torch (and Python 3.11+ for ``tomllib``); pt2lint is not imported.  The whole
run stops starting new examples after ``--budget`` seconds (default 240), so that it
finishes in under five minutes; examples not run are listed with ``"error": "not run"``.

Usage, from the repository root on a machine with a CUDA GPU::

    python bench/cudagraphs_evidence.py                       # writes bench/cudagraphs_evidence.json
    python bench/cudagraphs_evidence.py --output /tmp/cg.json --budget 200
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import logging
import os
import sys
import tempfile
import time
import tomllib
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
EXTRA_CODES = ("PTC401",)  # input mutation: the "mutated inputs" skip reason
_LOGGER = "torch._inductor.cudagraph_utils.__cudagraphs"


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _to_cuda(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.cuda()
    if isinstance(value, (list, tuple)):
        return type(value)(_to_cuda(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_cuda(v) for k, v in value.items()}
    return value


_counter = [0]


def measure(code: str, run: str, config: Optional[Dict[str, Any]] = None, workdir: Optional[str] = None) -> Dict[str, Any]:
    """Compile one example with ``mode="reduce-overhead"`` on the GPU and record what CUDA graphs did.

    Args:
        code: the example's source (written to a file in ``workdir`` and imported).
        run: the spec's expression giving ``(model, args)``.
        config: ``torch._dynamo.config`` overrides (``{"capture_scalar_outputs": True}``).
        workdir: a directory for the example file (default: a fresh temporary one).

    Returns:
        ``{"skips": [...], "counters": {...}, "syncs": [...], "error": str or None, "seconds": float}``.
    """
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters

    started = time.perf_counter()
    out: Dict[str, Any] = {"skips": [], "counters": {}, "syncs": [], "error": None}
    workdir = workdir or tempfile.mkdtemp(prefix="cg_evidence_")
    _counter[0] += 1
    name = f"cg_example_{_counter[0]}"
    path = os.path.join(workdir, f"{name}.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(code)
    handler = _Collect()
    logger = logging.getLogger(_LOGGER)
    logger.addHandler(handler)
    torch._logging.set_logs(cudagraphs=True)
    torch._dynamo.reset()
    counters.clear()
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        scope = dict(vars(module))
        scope.setdefault("torch", torch)
        torch.manual_seed(0)
        model, args = eval(run, scope)  # the spec's own expression
        if isinstance(model, torch.nn.Module):
            model = model.cuda()
        with torch._dynamo.config.patch(**(config or {})):
            compiled = torch.compile(model, mode="reduce-overhead")
            for call in range(3):
                call_args = _to_cuda(tuple(eval(run, scope)[1]))  # fresh inputs each call
                if call == 0:
                    compiled(*call_args)
                    torch.cuda.synchronize()
                    continue
                with warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always")
                    torch.cuda.set_sync_debug_mode("warn")
                    try:
                        compiled(*call_args)
                    finally:
                        torch.cuda.set_sync_debug_mode(0)
                out["syncs"].extend(sorted({str(w.message).splitlines()[0] for w in seen if "synchroniz" in str(w.message)}))
                torch.cuda.synchronize()
    except Exception as exc:  # recorded, not raised: one example must not stop the run
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        logger.removeHandler(handler)
        torch._logging.set_logs()
        out["skips"] = sorted({m.splitlines()[0] for m in handler.messages if "skipping cudagraphs" in m})
        out["counters"] = {k: v for k, v in counters.get("inductor", {}).items() if "cudagraph" in k}
        out["syncs"] = sorted(set(out["syncs"]))
        torch._dynamo.reset()
        out["seconds"] = round(time.perf_counter() - started, 2)
    return out


def _examples(rules_dir: Path):
    for path in sorted(rules_dir.glob("PTC*.toml")):
        with open(path, "rb") as fh:
            spec = tomllib.load(fh)
        if spec.get("needs_device") != "cuda" and spec.get("code") not in EXTRA_CODES:
            continue
        knobs = {"capture-scalar-outputs": "capture_scalar_outputs", "capture-dynamic-output-shape-ops": "capture_dynamic_output_shape_ops", "allow-rnn": "allow_rnn"}
        for i, ex in enumerate(spec.get("examples", ())):
            if ex.get("run"):
                config = {knobs[k]: v for k, v in ex.get("config", {}).items() if k in knobs}
                yield spec["code"], i + 1, ex["kind"], ex["code"], ex["run"], config


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=ROOT / "bench" / "cudagraphs_evidence.json")
    parser.add_argument("--rules", type=Path, default=ROOT / "rules")
    parser.add_argument("--budget", type=float, default=240.0, help="seconds after which no new example starts")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("error: torch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("error: no CUDA device (this measures CUDA graphs)", file=sys.stderr)
        return 2
    if not args.rules.is_dir():
        print(f"error: {args.rules}: no such directory", file=sys.stderr)
        return 2
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="cg_evidence_") as workdir:
        for code, index, kind, source, run, config in _examples(args.rules):
            entry: Dict[str, Any] = {"code": code, "example": index, "kind": kind, "config": config}
            if time.perf_counter() - started > args.budget:
                entry.update({"error": "not run", "skips": [], "counters": {}, "syncs": []})
            else:
                entry.update(measure(source, run, config, workdir))
            results.append(entry)
            print(f"{code} example {index} ({kind}): skips={len(entry['skips'])} syncs={len(entry['syncs'])} error={entry['error']}", flush=True)
    payload = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "mode": "reduce-overhead",
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
    }
    _write_atomic(args.output, json.dumps(payload, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.output} ({len(results)} examples, {payload['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
