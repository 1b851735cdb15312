"""Eager-mode cost of the ``cond`` codemod: a small module, before and after its ``torch.cond`` rewrite.

Run from the repository root (torch installed; CPU)::

    python bench/cond_overhead.py              # prints a Markdown table
    python bench/cond_overhead.py --repeats 5 --calls 200

Each module is a gated residual block (``if (g > 0.5).any(): x = x + g * self.update(x)``)
of width ``--dim``, written the way people write it, and its rewrite exactly as
``pt2lint fix --rule cond`` produces it (the rewrite is made by pt2lint at run time, not
copied in). Both are called ``--calls`` times on a batch of 32 in eager mode (no
``torch.compile``), after a warm-up call (torch.cond traces its branches on the first
call); the best of ``--repeats`` runs is reported, per call, with the ratio. The same is
measured under ``torch.compile(backend="eager")`` for comparison. ``torch.set_num_threads``
is 1 so other work on the machine matters less.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SOURCE = textwrap.dedent(
    """
    import torch
    import torch.nn as nn


    class Gated(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.gate = nn.Linear(dim, 1)
            self.update = nn.Linear(dim, dim)

        def forward(self, x):
            g = torch.sigmoid(self.gate(x))
            if (g > 0.5).any():
                x = x + g * self.update(x)
            else:
                x = x * 0.5
            return x.tanh()
    """
).lstrip()


def rewritten() -> str:
    """``SOURCE`` after ``pt2lint fix --rule cond --unsafe-fixes``."""
    from pt2lint.commands.fix import RuleSelection
    from pt2lint.diagnostics import Applicability
    from pt2lint.fixes.apply import fix_text
    from pt2lint.settings import LintSettings, resolve_selection

    settings = LintSettings(enabled=resolve_selection(), assume_compiled=True)
    names = RuleSelection(names=frozenset({"cond"})).names_for
    out = fix_text(SOURCE, "gated.py", settings, select_fix=lambda d: d.fix is not None and d.fix.applicability in (Applicability.SAFE, Applicability.UNSAFE), names_for=names)
    if "torch.cond(" not in out.text:
        raise SystemExit("pt2lint did not rewrite the benchmark module")
    return out.text


def _load(text: str, name: str):
    scope: dict = {"__name__": name}
    exec(compile(text, f"{name}.py", "exec"), scope)
    return scope["Gated"]


def _time(fn, x, calls: int, repeats: int) -> float:
    import torch

    with torch.no_grad():
        fn(x)  # warm-up: torch.cond traces its branches on the first call
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn(x)
            best = min(best, (time.perf_counter() - t0) / calls)
    return best


def measure(dim: int, calls: int, repeats: int):
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    orig_cls, new_cls = _load(SOURCE, "orig"), _load(rewritten(), "fixed")
    m1 = orig_cls(dim)
    m2 = new_cls(dim)
    m2.load_state_dict(m1.state_dict())
    x = torch.randn(32, dim)
    rows = []
    for mode in ("eager", "compiled"):
        torch._dynamo.reset()
        a = m1 if mode == "eager" else torch.compile(m1, backend="eager")
        b = m2 if mode == "eager" else torch.compile(m2, backend="eager")
        ta, tb = _time(a, x, calls, repeats), _time(b, x, calls, repeats)
        rows.append((mode, dim, ta, tb))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per timed run (default 200)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs; the best is kept (default 5)")
    parser.add_argument("--dims", default="16,256", help="module widths, comma-separated (default 16,256)")
    args = parser.parse_args(argv)
    import torch

    print(f"torch {torch.__version__}, 1 thread, batch 32, best of {args.repeats} x {args.calls} calls\n")
    print("| mode | width | `if` (original) | `torch.cond` (rewrite) | ratio |")
    print("|---|---:|---:|---:|---:|")
    for dim in (int(d) for d in args.dims.split(",")):
        for mode, d, ta, tb in measure(dim, args.calls, args.repeats):
            print(f"| {mode} | {d} | {ta * 1e6:.0f} us | {tb * 1e6:.0f} us | {tb / ta:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
