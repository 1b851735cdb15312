"""Fix proposals do function-wide work once per function, not once per finding.

A forward with hundreds of in-place writes (``y += 1`` after ``y = ... if ... else y``) got
an out-of-place proposal per write, and each proposal walked the whole function again and,
for every node after the write, that node's whole subtree: 200 writes took 23 s of CPU,
400 took 89 s.  The tests count the function-wide scans instead of timing them.
"""

from __future__ import annotations

from pt2lint.engine import lint_source
from pt2lint.fixes import aliasing
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())


def _writes(n: int) -> str:
    body = "".join(f"        y = y[{i % 3}] if y.dim() > 1 else y\n        y += 1\n" for i in range(n))
    return "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        y = x\n" + body + "        return y\n"


def test_the_function_is_scanned_once_for_all_its_in_place_writes(monkeypatch):
    scans = []
    real = aliasing._not_loads
    monkeypatch.setattr(aliasing, "_not_loads", lambda nodes, *a, **k: scans.append(1) or real(nodes, *a, **k))
    result = lint_source(_writes(30), "m.py", SETTINGS)
    writes = [d for d in result.diagnostics if d.code == "PTC401"]
    assert len(writes) == 30 and all(d.fix is not None for d in writes)
    assert len(scans) == 1


def test_the_proposals_are_the_same_for_each_write():
    # a near miss for the memo: two functions, each with its own facts
    src = _writes(3) + "\n\nclass N(nn.Module):\n    def forward(self, x):\n        keep = [x]\n        x += 1\n        return keep\n"
    result = lint_source(src, "m.py", SETTINGS)
    fixes = {d.start.line: d.fix.message for d in result.diagnostics if d.code == "PTC401"}
    assert len(fixes) == 4
    last = fixes[max(fixes)]
    assert last.startswith("not rewritten out of place") and "keep" in last, last
    assert all(m.startswith("write out of place") for line, m in fixes.items() if line != max(fixes)), fixes
