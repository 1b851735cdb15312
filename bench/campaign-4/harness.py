"""Shared runner for the campaign-4 reproducers: run pt2lint in a child process and classify.

Classes (most severe first): ``silent`` (a wrong result with exit 0/1 and no word),
``crash`` (a traceback, "internal error", or an exit status other than 0/1/2), ``hang``
(past the time limit), ``message`` (a bad or missing message). ``ok`` otherwise.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
WORK = pathlib.Path(os.environ.get("WORK", tempfile.gettempdir())) / "pt2lint-campaign-4"
PY = os.environ.get("PT2LINT_PYTHON", sys.executable)
MODEL = "import torch\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n"
RESULTS = []


def fresh(name: str) -> pathlib.Path:
    d = WORK / name
    if d.exists() or d.is_symlink():
        subprocess.run(["chmod", "-R", "u+rwx", str(d)], stderr=subprocess.DEVNULL)
        shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    return d


def pt(args, cwd, timeout=60, stdin=subprocess.DEVNULL, env=None, input=None):
    """Run ``python -m pt2lint ARGS``; return (rc, stdout, stderr, seconds); rc None on a hang."""
    full_env = dict(os.environ, PYTHONPATH=str(REPO), PT2LINT_SECRET_DIR=str(WORK / "secret"), **(env or {}))
    full_env.pop("PT2LINT_CACHE_DIR", None) if not (env and "PT2LINT_CACHE_DIR" in env) else None
    t0 = time.monotonic()
    try:
        p = subprocess.run([PY, "-m", "pt2lint", *args], cwd=cwd, capture_output=True, timeout=timeout,
                           stdin=None if input is not None else stdin, input=input, env=full_env)
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode("utf-8", "replace"), (e.stderr or b"").decode("utf-8", "replace"), time.monotonic() - t0
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"), time.monotonic() - t0


def generic(rc, out, err):
    """The class every case shares: hang or crash, else None."""
    if rc is None:
        return "hang", "timed out"
    if "Traceback" in out + err or "internal error" in (out + err).lower():
        return "crash", (err or out)[-600:]
    if rc not in (0, 1, 2):
        return "crash", f"rc={rc} {(err or out)[-300:]}"
    return None


def record(family, name, verdict, note=""):
    cls = verdict[0] if verdict else "ok"
    text = verdict[1] if verdict else note
    RESULTS.append({"family": family, "case": name, "class": cls, "note": str(text)[:600]})
    print(f"{cls:8} {family:10} {name}: {str(text)[:300]}", flush=True)


def summary(out_name: str):
    counts = {}
    for r in RESULTS:
        counts.setdefault(r["family"], {}).setdefault(r["class"], 0)
        counts[r["family"]][r["class"]] += 1
    print(json.dumps(counts, indent=1))
    (WORK / out_name).write_text(json.dumps(RESULTS, indent=1))
    print("cases", len(RESULTS), "not ok", sum(r["class"] != "ok" for r in RESULTS))


def findings(out: str):
    """(line, code) pairs of the text output."""
    res = []
    for line in out.splitlines():
        parts = line.split(":")
        if len(parts) >= 4 and parts[1].isdigit() and parts[3].strip().startswith("PTC"):
            res.append((parts[0], int(parts[1]), parts[3].strip().split()[0]))
    return res
