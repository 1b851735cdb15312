"""Time of ``check`` on shapes that stress the analysis, each at n and 2n (CPU seconds of the child).

A defect is a shape whose time more than triples when n doubles (superlinear), or any run
over 20 s at the larger size.
"""

import resource
import subprocess
import sys
import time

from harness import REPO, fresh, pt, record, summary

H = "import torch\n"


def clique(n):  # n mutually recursive helpers, each calling every other with constants
    fns = "".join(f"def g{i}(x, k):\n" + "".join(f"    if k == {j}:\n        return g{j}(x, k + 1)\n" for j in range(n) if j != i)
                  + "    return x\n" for i in range(n))
    return H + fns + "@torch.compile\ndef f(x):\n    return g0(x, 1)\n"


def self_recursive_many(n):
    return H + "".join(f"def r{i}(x, n):\n    return r{i}(x, n - 1) if n else x * 2\n" for i in range(n)) + \
        "@torch.compile\ndef f(x):\n" + "".join(f"    x = r{i}(x, 3)\n" for i in range(n)) + "    return x\n"


def bound_methods(n):
    return H + "@torch.compile\ndef f(x):\n" + "".join(f"    m{i} = x.add\n    x = m{i}({i})\n" for i in range(n)) + "    return x\n"


def elif_chain(n):
    return H + "@torch.compile\ndef f(x, k: int):\n    if k == 0:\n        x = x + 0\n" + "".join(f"    elif k == {i}:\n        x = x + {i}\n" for i in range(1, n)) + "    return x\n"


def many_methods(n):
    return H + "class M(torch.nn.Module):\n" + "".join(f"    def m{i}(self, x):\n        return x + {i}\n" for i in range(n)) + \
        "    def forward(self, x):\n" + "".join(f"        x = self.m{i}(x)\n" for i in range(n)) + "        return x\n"


def decorators(n):
    return H + "def deco(fn):\n    def w(*a):\n        return fn(*a)\n    return w\n@torch.compile\n" + "@deco\n" * n + "def f(x):\n    return x * 2\n"


def nested_ifs(n):
    body = "".join("    " * (i + 1) + f"if x.shape[0] > {i}:\n" for i in range(n)) + "    " * (n + 1) + "x = x + 1\n"
    return H + "@torch.compile\ndef f(x):\n" + body + "    return x\n"


SHAPES = {"clique": (clique, 8), "self_recursive_many": (self_recursive_many, 150), "bound_methods": (bound_methods, 1000),
          "elif_chain": (elif_chain, 1500), "many_methods": (many_methods, 500), "decorators": (decorators, 60),
          "nested_ifs_18_36": (nested_ifs, 18)}
d = fresh("scaling")
for name, (make, n) in SHAPES.items():
    times = []
    for size in (n, 2 * n):
        p = d / f"{name}_{size}.py"
        p.write_text(make(size))
        rc, out, err, secs = pt(["check", "--no-cache", "-q", p.name], d, timeout=120)
        times.append(secs if rc is not None else 999)
    ratio = times[1] / max(times[0], 0.5)
    v = None
    if times[1] >= 999:
        v = ("hang", f"over 120 s at {2 * n}")
    elif times[1] > 20:
        v = ("hang", f"{times[1]:.1f} s at {2 * n}")
    elif ratio > 3 and times[1] > 3:
        v = ("message", f"superlinear: {times[0]:.1f} s -> {times[1]:.1f} s")
    record("scaling", name, v, f"n={n}: {times[0]:.1f} s, 2n: {times[1]:.1f} s (wall, 1 process)")
summary("scaling.json")
