"""Fuzz pt2lint's I/O: random hostile trees, never a hang, a traceback or a write outside.

``tools/fuzz.py`` varies what is *in* a file; this varies what the *tree* is made of.
Run by hand, for minutes; ``tests/test_hostile_io.py`` runs a few seeds::

    python tools/fuzz_io.py                      # 3 minutes
    python tools/fuzz_io.py --minutes 20 --seed 7 --keep /tmp/io-failures

Each case builds a project in a fresh temporary directory from random pieces: model files
(with findings, fixable, clean), file and directory links (inside the tree, out of it, to
``/dev/zero``, dangling, loops), FIFOs (as sources, as ``.gitignore``, as cache entries),
file names with control characters, spaces or undecodable bytes, oversized files, forged or
truncated cache entries, a ``.pt2lint_cache`` that is a link, ``.gitignore`` files, and a
config with good or bad values (bad patterns, deep arrays, a tiny ``max-file-size``).  Then
``python -m pt2lint check`` (in a random output format, with or without the cache and
``-j``) and ``python -m pt2lint fix`` run on it in subprocesses, with a timeout and a memory
limit.  Checked, per run:

* it ends within ``--timeout`` (default 60 s) and exits 0, 1 or 2;
* nothing on stdout or stderr is a traceback, and no ``error:`` line an ``internal error``;
* a ``json``, ``sarif`` or ``lsp`` report is valid UTF-8 and valid JSON;
* no ``error:`` line holds a raw control character;
* nothing outside the project changed (the targets of the outward links are snapshotted).

A failing case is kept (``--keep``) with a ``failure.txt`` saying what failed and how to rerun it.
Exit status: 0 when nothing failed, 1 when something did.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODELS = {
    "item": "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x.sum().item()\n",
    "print": "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        print(x)\n        return x * 2\n",
    "clean": "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n",
    "syntax": "def f(:\n    pass\n",
    "crlf-first": "import torch\r\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        print(x)\n        return x\n",
}
NAMES = ["m.py", "a b.py", "new\nline.py", "esc\x1b[2J.py", "tab\t.py", "caf\u00e9.py", "pkg/inner.py", "deep/er/x.py"]
BAD_CONFIGS = [
    'extend-exclude = ["\\\\"]\n',
    '[per-file-ignores]\n"**/[z-a]" = ["PTC101"]\n',
    "exclude = " + "[" * 3000 + "]" * 3000 + "\n",
    'max-file-size = "200"\n',
    'max-file-size = -1\n',
    "select = 5\n",
]
FORMATS = ["text", "full", "json", "json-lines", "sarif", "github", "junit", "lsp", "html"]


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


def _snapshot(root: str) -> Dict[str, Tuple[str, int]]:
    out = {}
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                with open(path, "rb") as fh:
                    out[path] = (hashlib.sha256(fh.read()).hexdigest(), os.lstat(path).st_mode)
            except OSError:
                out[path] = ("?", 0)
    return out


def build(rng: random.Random, base: str) -> Tuple[str, str]:
    """A random project under ``base``; returns ``(project, outside)``."""
    project = os.path.join(base, "proj")
    outside = os.path.join(base, "outside")
    os.makedirs(project)
    os.makedirs(outside)
    _write(os.path.join(outside, "secret.py"), MODELS["print"].encode())
    for _ in range(rng.randint(1, 6)):
        name = rng.choice(NAMES)
        _write(os.path.join(project, name), MODELS[rng.choice(sorted(MODELS))].encode())
    if rng.random() < 0.3:
        try:
            _write(os.path.join(os.fsencode(project), b"\xff\xfe.py"), MODELS["item"].encode())
        except OSError:
            pass
    links = [
        ("out.py", os.path.join(outside, "secret.py")), ("outdir", outside), ("zero.py", "/dev/zero"),
        ("dangling.py", "nowhere.py"), ("loop_a.py", "loop_b.py"), ("loop_b.py", "loop_a.py"), ("self", "."),
    ]
    for name, target in rng.sample(links, rng.randint(0, len(links))):
        if name == "zero.py" and not os.path.exists("/dev/zero"):
            continue
        try:
            os.symlink(target, os.path.join(project, name))
        except OSError:
            pass
    if hasattr(os, "mkfifo"):
        for name in rng.sample(["pipe.py", ".gitignore", "pkg/.gitignore"], rng.randint(0, 2)):
            path = os.path.join(project, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if not os.path.lexists(path):
                os.mkfifo(path)
    if rng.random() < 0.3:
        _write(os.path.join(project, "big.py"), b"x = 1\n" * rng.choice([10, 100000]))
    if rng.random() < 0.3 and not os.path.lexists(os.path.join(project, ".gitignore")):
        _write(os.path.join(project, ".gitignore"), rng.choice([b"*.pyc\n", b"pkg/\n", b"[z-a]\n\\\n", b"\xff\n"]))
    if rng.random() < 0.4:
        config = rng.choice(BAD_CONFIGS) if rng.random() < 0.5 else 'max-file-size = "1MB"\n'
        _write(os.path.join(project, "pt2lint.toml"), config.encode())
    cache = os.path.join(project, ".pt2lint_cache")
    roll = rng.random()
    if roll < 0.15:
        os.symlink(outside, cache)
    elif roll < 0.3:
        entry = os.path.join(cache, "0", "ab", "ab" + "0" * 62 + ".json")
        _write(entry, rng.choice([b"{", b"[]", b'{"diagnostics": []}', b"\x1b[2J"]))
    return project, outside


def _limit():
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    except (ImportError, ValueError, OSError):
        pass


def run_case(rng: random.Random, base: str, timeout: float) -> Optional[str]:
    """Build one project and run ``check`` and ``fix`` on it; the failure, or ``None``."""
    project, outside = build(rng, base)
    before = _snapshot(outside)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PT2LINT_CACHE_DIR", None)
    fmt = rng.choice(FORMATS)
    runs: List[List[str]] = [
        ["check", "--output-format", fmt, "-j", rng.choice(["1", "2"])] + (["--no-cache"] if rng.random() < 0.3 else []) + ["."],
        ["fix", "-j", rng.choice(["1", "2"]), "."],
    ]
    if rng.random() < 0.3:
        runs.append(["check", "out.py", "zero.py", "pipe.py", "m.py"])
    for args in runs:
        cmd = [sys.executable, "-m", "pt2lint"] + args
        try:
            out = subprocess.run(cmd, cwd=project, env=env, capture_output=True, timeout=timeout, preexec_fn=_limit, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return f"{args}: no result after {timeout:.0f} s (a hang)"
        err = out.stderr.decode("utf-8", "replace")
        text = out.stdout.decode("utf-8", "replace") + err
        if out.returncode not in (0, 1, 2):
            return f"{args}: exit {out.returncode}\n{text}"
        if "Traceback (most recent call last)" in text or "error: internal error" in err or ": internal error: " in err:
            return f"{args}: traceback or internal error\n{err}"
        for line in out.stderr.decode("utf-8", "replace").splitlines():
            if line.startswith("error:") and any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in line):
                return f"{args}: raw control character in {line!r}"
        if args[0] == "check" and fmt in ("json", "sarif", "lsp") and out.returncode in (0, 1):
            try:
                json.loads(out.stdout.decode("utf-8"))
            except ValueError as exc:
                return f"{args}: report is not valid UTF-8 JSON: {exc}"
    if _snapshot(outside) != before:
        return "a file outside the project changed"
    return None


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0, help="how long to fuzz (default 3)")
    parser.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock; printed)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per command (default 60)")
    parser.add_argument("--keep", default=None, help="copy failing projects here")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    print(f"pt2lint I/O fuzz: seed {seed}")
    deadline = time.monotonic() + args.minutes * 60
    failures = 0
    n = 0
    while time.monotonic() < deadline and (args.cases is None or n < args.cases):
        rng = random.Random(f"{seed}:{n}")
        base = tempfile.mkdtemp(prefix="pt2lint-io-")
        try:
            failure = run_case(rng, base, args.timeout)
            if failure is not None:
                failures += 1
                print(f"case {seed}:{n}: {failure.splitlines()[0]}")
                if args.keep:
                    dest = os.path.join(args.keep, f"case-{seed}-{n}")
                    shutil.copytree(base, dest, symlinks=True, ignore_dangling_symlinks=True, copy_function=_copy_plain)
                    _write(os.path.join(dest, "failure.txt"), f"{failure}\nrerun: python tools/fuzz_io.py --seed {seed} --cases {n + 1}\n".encode())
        finally:
            shutil.rmtree(base, ignore_errors=True)
        n += 1
    print(f"done: {n} cases, {failures} failures")
    return 1 if failures else 0


def _copy_plain(src: str, dst: str) -> None:
    """Copy a regular file; recreate a FIFO as a FIFO (reading it would block)."""
    import stat

    if stat.S_ISFIFO(os.lstat(src).st_mode):
        os.mkfifo(dst)
    else:
        shutil.copy2(src, dst)


if __name__ == "__main__":
    sys.exit(main())
