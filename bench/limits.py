"""Worst-case inputs for the analysis: time and peak memory of ``pt2lint check`` on each.

Each input is generated (nothing is downloaded), written to a temporary directory and
checked in a fresh ``pt2lint check --no-cache -j1`` process, so the figures include
start-up, the LibCST parse and the fix proposals that every ``check`` computes.

    python bench/limits.py            # print a table, exit 1 when a target is missed
    python bench/limits.py --markdown # the same as a Markdown table (for RESULTS.md)
    python bench/limits.py --only elif # only the inputs whose label contains "elif"

Targets (seconds of CPU time, megabytes of peak resident memory):

=====================================  =======  ======
input                                  CPU s    MB
=====================================  =======  ======
18 nested ``for`` loops                 2
200 tensor ``if``\\ s in one forward     2
the same, 5 statements between them    2
a 10,000-line forward                  10       400
the same with a local per line         10
3,000 small classes                    10
one ``if`` of 250 ``and``\\ ed tests      2
an ``if`` with 100 ``elif``\\ s           2
400 conditional expressions            2
2,000 ``.item()`` terms ``or``\\ ed       2
a list literal of 20,000 ints          2
20 nested ``try``/``finally``            2        200
a helper file alone, 2,000 files use it 4
=====================================  =======  ======

CPU time (user + system of the child) is reported next to wall time, because on a shared
machine wall time measures the neighbours too.

The children compile Python's bytecode once, into a cache of their own (``PYTHONPYCACHEPREFIX``
in the temporary directory, written by a warm-up run on a one-line file), as an installed
package does: with ``PYTHONDONTWRITEBYTECODE`` set and no ``__pycache__`` in the checkout,
every run would otherwise compile pt2lint's sources again (about 0.3 s of CPU per run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Callable, List, Optional, Tuple


def nested_loops(depth: int = 18) -> str:
    """``depth`` nested ``for`` loops around one statement in a forward."""
    lines = ["import torch", "class M(torch.nn.Module):", "    def forward(self, x):"]
    indent = "        "
    for i in range(depth):
        lines.append(f"{indent}for i{i} in range(2):")
        indent += "    "
    lines += [f"{indent}x = x + 1", "        return x"]
    return "\n".join(lines) + "\n"


def tensor_ifs(count: int = 200) -> str:
    """``count`` ``if``\\ s on tensor values in one forward (each a finding with a cond fix)."""
    lines = ["import torch", "class M(torch.nn.Module):", "    def forward(self, x):"]
    for i in range(count):
        lines += [f"        if x.sum() > {i}:", f"            x = x + {i}", "        else:", f"            x = x - {i}"]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


def tensor_ifs_between(count: int = 200, between: int = 5) -> str:
    """``count`` tensor ``if``\\ s, each after ``between`` statements that call a ``torch.nn.Linear``
    submodule and a floating-only reduction (what the ``cond`` fix's dtype proofs look for)."""
    lines = ["import torch", "class M(torch.nn.Module):", "    def __init__(self):", "        super().__init__()",
             "        self.lin = torch.nn.Linear(4, 4)", "    def forward(self, x, y):"]
    for i in range(count):
        lines += [f"        h{i}_{j} = torch.relu(x) * {j} + self.lin(y).mean()" for j in range(between)]
        lines += [f"        if x.sum() > {i}:", f"            x = x + h{i}_0", "        else:", f"            x = x - {i}"]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


def long_forward_simple(length: int = 10_000) -> str:
    """A forward of ``length`` short lines rebinding one tensor."""
    lines = ["import torch", "class M(torch.nn.Module):", "    def forward(self, x):"]
    lines += [f"        x = x * {i % 7 + 1} + torch.relu(x)" for i in range(length)]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


def long_forward(length: int = 10_000) -> str:
    """A forward of ``length`` wider lines: a fresh local per line, a Python branch every tenth.

    LibCST's tree of this file alone peaks near 380 MB (``libcst.parse_module`` in a fresh
    interpreter), so the memory target is set on the simpler forward above.
    """
    lines = ["import torch", "from torch import nn", "class M(nn.Module):", "    def __init__(self):",
             "        super().__init__()", "        self.lin = nn.Linear(4, 4)",
             "    def forward(self, x, mask=None):", "        h0 = x"]
    i = 1
    while len(lines) < length + 7:
        if i % 10 == 0:
            lines += ["        if mask is not None:", f"            h{i} = h{i - 1} * mask",
                      "        else:", f"            h{i} = self.lin(h{i - 1})"]
        else:
            lines.append(f"        h{i} = torch.relu(h{i - 1}) + h{max(0, i - 5)}.sum(dim=-1, keepdim=True)")
        i += 1
    lines.append(f"        return h{i - 1}")
    return "\n".join(lines) + "\n"


def small_classes(count: int = 3_000) -> str:
    """``count`` modules of three lines each in one file."""
    lines = ["import torch"]
    for i in range(count):
        lines += [f"class M{i}(torch.nn.Module):", "    def forward(self, x):", f"        return x + {i}", ""]
    return "\n".join(lines) + "\n"


_FORWARD = ["import torch", "from torch import nn", "class M(nn.Module):", "    def forward(self, x):"]


def and_chain(count: int = 250) -> str:
    """One ``if`` whose test is ``count`` tensor comparisons joined by ``and`` (a finding each)."""
    test = " and ".join(f"x[{i}] > 0" for i in range(count))
    return "\n".join(_FORWARD + [f"        if {test}:", "            x = x + 1", "        return x"]) + "\n"


def elif_chain(count: int = 100) -> str:
    """An ``if`` on a tensor followed by ``count`` ``elif``\\ s on tensors (one ``torch.cond`` chain)."""
    lines = _FORWARD + ["        if x.sum() > 0:", "            x = x + 1"]
    for i in range(count):
        lines += [f"        elif x.sum() > {i}:", f"            x = x + {i}"]
    return "\n".join(lines + ["        return x"]) + "\n"


def inheritance_chain(count: int = 800) -> str:
    """``count`` classes each deriving from the previous one, their methods calling ``super().forward``."""
    lines = ["import torch", "from torch import nn", "", "", "class C0(nn.Module):", "    def forward(self, x):", "        return x.sum().item()"]
    for i in range(1, count):
        lines += ["", "", f"class C{i}(C{i - 1}):", f"    def helper{i}(self, x):", "        return super().forward(x)"]
    lines += ["", "", f"class Net(C{count - 1}):", "    pass", "", "", "torch.compile(Net())"]
    return "\n".join(lines) + "\n"


def ternaries(count: int = 400) -> str:
    """``count`` statements ``x<i+1> = x<i> * 2 if x<i>.sum() > 0 else x<i>`` (a ``torch.where`` fix each)."""
    lines = _FORWARD + ["        x0 = x"]
    lines += [f"        x{i + 1} = x{i} * 2 if x{i}.sum() > 0 else x{i}" for i in range(count)]
    return "\n".join(lines + [f"        return x{count}"]) + "\n"


def or_items(count: int = 2_000) -> str:
    """One expression of ``count`` ``x[i].item()`` terms joined by ``or`` (it nests ``count`` deep)."""
    terms = " or ".join(f"x[{i}].item()" for i in range(count))
    return "\n".join(_FORWARD + [f"        y = {terms}", "        return x * y"]) + "\n"


def big_list(count: int = 20_000) -> str:
    """A module-level list literal of ``count`` ints read by a compiled function."""
    return "import torch\nx = [" + "1," * count + "]\n@torch.compile\ndef f(y):\n    return y + x[0]\n"


def compiled_functions(count: int = 500) -> str:
    """``count`` small ``@torch.compile``d functions, each called once at module level: the entry
    kinds of every one are read from its call sites (once per module, not once per function)."""
    lines = ["import torch"]
    for i in range(count):
        lines += ["", "@torch.compile", f"def f{i}(x, n):", "    y = x + 1", f"    return y * n + {i}"]
    lines += ["", "x = torch.ones(2)"] + [f"f{i}(x, 2)" for i in range(count)]
    return "\n".join(lines) + "\n"


def package_users(count: int = 2_000):
    """A package of ``count`` model files that all import and call one helper file, which is
    checked alone (a pre-commit run on it): the search for its callers and builders."""
    files = {"pkg/__init__.py": "", "pkg/utils.py": "import torch\n\n\ndef helper(x):\n    return x * x.sum().item()\n\n\nclass Block(torch.nn.Module):\n    def forward(self, x, n):\n        return x[:n]\n"}
    for i in range(count):
        files[f"pkg/m{i}.py"] = (
            "import torch\nfrom .utils import helper, Block\n\n\n"
            f"class M{i}(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.block = Block()\n\n"
            f"    def forward(self, x):\n        return self.block(helper(x), {i})\n"
        )
    return files, "pkg/utils.py"


def nested_finally(depth: int = 20, body: int = 64) -> str:
    """``depth`` ``try``/``finally`` statements, each in the ``finally`` of the one before (CPython's
    limit), ``body`` statements in the innermost: CPython's code generation copies each
    ``finally`` body twice, so compiling it for real would emit them 2**depth times."""
    lines = []
    for i in range(depth):
        lines += ["    " * i + "try:", "    " * (i + 1) + "pass", "    " * i + "finally:"]
    lines += ["    " * depth + f"x{i} = {i}" for i in range(body)]
    return "\n".join(lines) + "\n"


CASES: List[Tuple[str, Callable[[], object], float, Optional[float]]] = [
    ("18 nested for loops", nested_loops, 2.0, None),
    ("200 tensor ifs in one forward", tensor_ifs, 2.0, None),
    ("200 tensor ifs, 5 statements between", tensor_ifs_between, 2.0, None),
    ("a 10,000-line forward", long_forward_simple, 10.0, 400.0),
    ("a 10,000-line forward, many locals", long_forward, 10.0, None),
    ("3,000 small classes", small_classes, 10.0, None),
    ("one if of 250 and-ed tests", and_chain, 2.0, None),
    ("an if with 100 elifs", elif_chain, 2.0, None),
    ("an if with 300 elifs", lambda: elif_chain(300), 2.0, None),
    ("an inheritance chain of 800 classes", inheritance_chain, 2.0, None),
    ("400 conditional expressions", ternaries, 2.0, None),
    ("2,000 .item() terms or-ed", or_items, 2.0, None),
    ("a list literal of 20,000 ints", big_list, 2.0, None),
    ("500 compiled functions called in the file", compiled_functions, 2.0, None),
    ("20 nested try/finally", nested_finally, 2.0, 200.0),
    ("a helper file alone, 2,000 files use it", package_users, 4.0, None),
]


_WRAPPER = (
    "import json, resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(json.dumps([r.ru_utime + r.ru_stime, r.ru_maxrss, code]))\n"
)


def _child_env(workdir: str) -> dict:
    """The children's environment: this one, with a bytecode cache under ``workdir``."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(workdir, "pycache")
    return env


def warm_up(workdir: str) -> None:
    """Check a one-line file once, so that the measured runs find their bytecode compiled."""
    path = os.path.join(workdir, "warm.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("import torch\n")
    subprocess.run([sys.executable, "-m", "pt2lint", "check", "--no-cache", "-j1", "-q", "--isolated", path],
                   stdout=subprocess.DEVNULL, cwd=workdir, env=_child_env(workdir), check=False)


def measure(source, workdir: str) -> Tuple[float, float, float, int]:
    """Check ``source`` in a child process of its own (so peak memory is this case's alone).

    Args:
        source: the text of the one file checked, or ``(files, checked)``: a tree of
            ``relative path -> text`` written under a directory of its own, of which the
            file ``checked`` is checked alone.

    Returns:
        ``(cpu_seconds, wall_seconds, peak_rss_mb, exit_code)`` of the ``check`` process.
    """
    if isinstance(source, tuple):
        files, checked = source
        base = tempfile.mkdtemp(dir=workdir)
        for rel, text in files.items():
            target = os.path.join(base, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8") as fh:
                fh.write(text)
        path = os.path.join(base, checked)
    else:
        path = os.path.join(workdir, "case.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER,
         sys.executable, "-m", "pt2lint", "check", "--no-cache", "-j1", "-q", "--isolated", "--exit-zero", path],
        stdout=subprocess.PIPE, cwd=workdir, env=_child_env(workdir), check=True, text=True,
    ).stdout
    wall = time.perf_counter() - start
    cpu, maxrss_kb, code = json.loads(out)
    return cpu, wall, maxrss_kb / 1024.0, code


def main(argv: Optional[List[str]] = None) -> int:
    """Run every case; print the table; return 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="run only the inputs whose label contains TEXT (repeatable)")
    args = parser.parse_args(argv)
    missed = 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        warm_up(tmp)
        for label, make, cpu_target, mb_target in CASES:
            if args.only and not any(text in label for text in args.only):
                continue
            source = make()
            cpu, wall, mb, code = measure(source, tmp)
            # ``--exit-zero``: a finished check exits 0 whatever it found; 1 is a failure (python without pt2lint too)
            ok = cpu <= cpu_target and (mb_target is None or mb <= mb_target) and code == 0
            missed += not ok
            lines = sum(len(t.splitlines()) for t in source[0].values()) if isinstance(source, tuple) else len(source.splitlines())
            rows.append((label, lines, cpu, cpu_target, wall, mb, mb_target, "ok" if ok else "MISSED"))
    if args.markdown:
        print("| input | lines | CPU s (target) | wall s | peak MB (target) | |")
        print("|---|---:|---:|---:|---:|---|")
        for label, n, cpu, ct, wall, mb, mt, verdict in rows:
            mbt = f" ({mt:.0f})" if mt else ""
            print(f"| {label} | {n} | {cpu:.2f} ({ct:.0f}) | {wall:.2f} | {mb:.0f}{mbt} | {verdict} |")
    else:
        for label, n, cpu, ct, wall, mb, mt, verdict in rows:
            mbt = f"/{mt:.0f}" if mt else ""
            print(f"{label:32} {n:6d} lines  cpu {cpu:6.2f}s/{ct:.0f}  wall {wall:6.2f}s  rss {mb:6.0f}MB{mbt}  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
