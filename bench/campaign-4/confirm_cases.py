"""confirm against modules that write heavily to stdout/stderr, fork, or change process state.

Each module has one known graph break (``.item()`` in forward) and misbehaves in
``make_model()`` or ``forward``.  A correct run finishes within the per-module timeout,
reports each module (confirmed, or PTC091 failed with a reason), prints a bounded amount,
and leaves no process behind.
"""

import os
import pathlib
import subprocess
import sys
import time

from harness import REPO, WORK, fresh, generic, record, summary

BASE = '''import torch, os, sys, signal, threading, time

class M(torch.nn.Module):
    def forward(self, x):
        {forward}
        return x * x.sum().item()

def make_model():
    {make}
    return M()

def example_inputs():
    return (torch.ones(3),)
'''
MODULES = {
    "stdout_100mb": ("pass", "sys.stdout.write('x' * (100 << 20)); sys.stdout.flush()"),
    "stderr_flood_lines": ("pass", "[print('e' * 200, file=sys.stderr) for _ in range(200000)]"),
    "fork_child_returns": ("pass", "os.fork()"),  # both processes go on with the job
    "fork_in_forward": ("pid = os.fork()\n        if pid == 0:\n            print('child', flush=True)", "pass"),
    "fork_child_prints_late": ("pass", "pid = os.fork()\n    if pid == 0:\n        time.sleep(3); print('late child', flush=True); os._exit(0)"),
    "chdir_root": ("pass", "os.chdir('/')"),
    "close_stdout_py": ("pass", "sys.stdout.close(); sys.stderr.close()"),
    "sys_exit_in_make": ("pass", "sys.exit(0)"),
    "keyboardinterrupt_forward": ("raise KeyboardInterrupt", "pass"),
    "sigalrm_handler": ("pass", "signal.signal(signal.SIGALRM, signal.SIG_IGN); signal.alarm(1)"),
    "replaces_stdout_none": ("pass", "sys.stdout = None; sys.stderr = None"),
    "writes_to_fd1_directly": ("pass", "os.write(1, b'\\x1b[2J\\x1b]0;pwned\\x07' * 1000)"),
}

d = fresh("confirm")
for name, (fwd, make) in MODULES.items():
    (d / f"{name}.py").write_text(BASE.replace("{forward}", fwd).replace("{make}", make))
env = dict(os.environ, PYTHONPATH=str(REPO), PT2LINT_SECRET_DIR=str(WORK / "secret"))
t0 = time.monotonic()
before = set(os.listdir("/proc"))
try:
    p = subprocess.run([sys.executable, "-m", "pt2lint", "confirm", "--no-cache", "--timeout", "40", "--jobs", "2",
                        "--factory", "make_model", "--inputs", "example_inputs", "."],
                       cwd=d, capture_output=True, timeout=900, env=env, stdin=subprocess.DEVNULL)
    rc, out, err = p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
except subprocess.TimeoutExpired:
    rc, out, err = None, "", ""
secs = time.monotonic() - t0
time.sleep(5)
left = []
for pid in set(os.listdir("/proc")) - before:
    try:
        cmd = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        continue
    if str(d) in cmd or "pt2lint" in cmd:
        left.append((pid, cmd[:100]))
(WORK / "confirm.out").write_text(out + "\n--- stderr ---\n" + err)
g = generic(rc, out.replace("Dynamo internal error", "Dynamo error"), err.replace("Dynamo internal error", "Dynamo error"))
record("confirm", "whole-run", g, f"rc={rc} {secs:.0f}s out={len(out)} err={len(err)} bytes")
for name in MODULES:
    lines = [l for l in out.splitlines() if l.startswith(f"{name}.py:")]
    v = None
    if not lines:
        v = ("silent", "module not reported")
    elif not any("PTC101" in l or "PTC091" in l for l in lines):
        v = ("silent", f"neither the break nor a failure: {lines[:3]}")
    record("confirm", name, v, " | ".join(l[len(name) + 3:][:120] for l in lines[:2]))
record("confirm", "bounded-output", ("message", f"{len(out) + len(err)} bytes printed") if len(out) + len(err) > 2_000_000 else None)
record("confirm", "no-leftover-process", ("message", f"left: {left}") if left else None)
record("confirm", "no-raw-escapes", ("message", "terminal escapes from the module printed raw") if "\x1b]0;pwned" in out + err else None)
summary("confirm.json")
