"""The analysis does work proportional to the code's size, not exponential or quadratic in it.

These tests count operations (statements interpreted, environment entries joined, name
scans of a function) instead of timing anything, so they hold on any machine; wall-clock
targets for the same inputs live in ``bench/limits.py``.
"""

from __future__ import annotations

import libcst as cst
import pytest

from pt2lint.analysis import interp as interp_mod
from pt2lint.analysis import kinds
from pt2lint.engine import lint_source
from pt2lint.fixes import cond as cond_mod
from pt2lint.fixes import names as names_mod
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def _nested_loops(depth: int, inner: list, pre: str = "") -> str:
    lines = ["import torch", "class M(torch.nn.Module):", "    def forward(self, x):"]
    if pre:
        lines.append("        " + pre)
    indent = "        "
    for i in range(depth):
        lines.append(f"{indent}for i{i} in range(2):")
        indent += "    "
    lines += [indent + line for line in inner]
    lines.append("        return x")
    return "\n".join(lines) + "\n"


@pytest.fixture
def statement_count(monkeypatch):
    """Counts ``Interpreter.exec_stmt`` calls made while linting."""
    calls = [0]
    original = interp_mod.Interpreter.exec_stmt

    def counting(self, stmt):
        calls[0] += 1
        return original(self, stmt)

    monkeypatch.setattr(interp_mod.Interpreter, "exec_stmt", counting)
    return calls


@pytest.mark.parametrize(
    "inner, pre",
    [
        (["x = x + 1"], ""),
        (["def g(t):", "    return t + 1", "x = g(x)"], ""),
        (["acc.append(x)", "x = x + 1"], "acc = []"),
        (["h = x if h is None else h + x", "x = h"], "h = None"),
        (["while x.sum() > 0:", "    x = x - 1"], ""),
    ],
    ids=["rebind", "local-def", "append", "carried-none", "inner-while"],
)
def test_nested_loops_cost_is_polynomial_in_depth(statement_count, inner, pre):
    """Each loop body used to be interpreted twice per enclosing pass: 2**depth passes.
    Now a body is re-run only while the values it sees change."""
    counts = {}
    for depth in (6, 12):
        statement_count[0] = 0
        lint_source(_nested_loops(depth, inner, pre), "m.py", DEFAULT, fixes=False)
        counts[depth] = statement_count[0]
    # polynomial: each level's second pass walks the (already converged) loops below it
    # once, so doubling the depth at most quadruples the work; it was 2**6 = 64x
    assert counts[12] <= 4 * counts[6], counts


def test_nested_loops_still_carry_a_value_into_the_next_iteration():
    """The fixed point must not stop before a value bound late in the body reaches its start."""
    code = (
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        flag = 0\n"
        "        for i in range(3):\n"
        "            for j in range(3):\n"
        "                if flag:\n"
        "                    pass\n"
        "                flag = x.sum()\n"
        "        return x\n"
    )
    result = lint_source(code, "m.py", DEFAULT, fixes=False)
    assert [(d.code, d.start.line) for d in result.diagnostics] == [("PTC104", 7)]


def test_joins_after_branches_cost_the_branch_writes_not_the_environment(monkeypatch):
    """A forward with thousands of locals and an ``if`` every few lines joined every local at
    every ``if``: quadratic in the function's length."""
    joins = [0]
    original = kinds.join

    def counting(a, b):
        joins[0] += 1
        return original(a, b)

    monkeypatch.setattr(interp_mod, "join", counting)

    def forward(n: int) -> str:
        lines = ["import torch", "class M(torch.nn.Module):", "    def forward(self, x, mask=None):", "        h0 = x"]
        for i in range(1, n):
            if i % 10 == 0:
                lines += ["        if mask is not None:", f"            h{i} = h{i - 1} * mask",
                          "        else:", f"            h{i} = h{i - 1} + 1"]
            else:
                lines.append(f"        h{i} = torch.relu(h{i - 1})")
        lines.append(f"        return h{n - 1}")
        return "\n".join(lines) + "\n"

    counts = {}
    for n in (200, 800):
        joins[0] = 0
        lint_source(forward(n), "m.py", DEFAULT, fixes=False)
        counts[n] = joins[0]
    assert counts[800] <= 5 * counts[200], counts  # 16x before


def test_cond_fix_proposals_scan_a_function_once_not_once_per_if(monkeypatch):
    """200 tensor ``if``s in one forward re-read the whole function for each of them."""
    scans = [0]
    original = names_mod.loaded_names

    def counting(nodes):
        if len(nodes) == 1 and isinstance(nodes[0], cst.IndentedBlock):
            scans[0] += 1  # a whole function body
        return original(nodes)

    monkeypatch.setattr(names_mod, "loaded_names", counting)
    monkeypatch.setattr(cond_mod, "loaded_names", counting)
    lines = ["import torch", "class M(torch.nn.Module):", "    def forward(self, x):"]
    for i in range(40):
        lines += [f"        if x.sum() > {i}:", f"            x = x + {i}", "        else:", f"            x = x - {i}"]
    lines.append("        return x")
    result = lint_source("\n".join(lines) + "\n", "m.py", DEFAULT)
    fixable = [d for d in result.diagnostics if d.code == "PTC104" and d.fix is not None]
    assert len(fixable) == 40
    assert scans[0] <= 2, scans[0]
