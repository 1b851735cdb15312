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
from pt2lint.analysis import names as names_mod
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def count_calls(monkeypatch, owner, name: str) -> list:
    """Replace ``owner.<name>`` (a function or method) with a wrapper that counts its calls;
    returns the one-element counter (``[n]``; ``counter[0] = 0`` resets it)."""
    calls = [0]
    original = getattr(owner, name)

    def counting(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


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
    return count_calls(monkeypatch, interp_mod.Interpreter, "exec_stmt")


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
    assert interp_mod.join is kinds.join
    joins = count_calls(monkeypatch, interp_mod, "join")

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


# ---------------------------------------------------------------- one long construct
# A single long expression or chain used to cost a walk of the whole construct per finding
# in it (is the node in this test? which conditional holds it? what do the deeper `elif`s
# read?). These compare the CPU time of an input with that of one four times as long:
# linear work gives about 4x, the quadratic walks gave 10-16x. A ratio of two timings
# taken back to back in one process holds on a loaded machine where absolute times do not.

_FORWARD = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"


def _forward(body: list) -> str:
    return _FORWARD + "".join("        " + line + "\n" for line in body)


def _and_chain(n: int) -> str:
    return _forward(["if " + " and ".join(f"x[{i}] > 0" for i in range(n)) + ":", "    x = x + 1", "return x"])


def _elif_chain(n: int) -> str:
    body = ["if x.sum() > 0:", "    x = x + 1"]
    for i in range(n):
        body += [f"elif x.sum() > {i}:", f"    x = x + {i}"]
    return _forward(body + ["return x"])


def _ternaries(n: int) -> str:
    body = ["x0 = x"] + [f"x{i + 1} = x{i} * 2 if x{i}.sum() > 0 else x{i}" for i in range(n)]
    return _forward(body + [f"return x{n}"])


def _or_items(n: int) -> str:
    return _forward(["y = " + " or ".join(f"x[{i}].item()" for i in range(n)), "return x * y"])


def _cpu_seconds(source: str) -> float:
    """CPU seconds of the faster of two lints of ``source`` (a neighbour's burst inflates one run, not both)."""
    import time

    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        lint_source(source, "m.py", DEFAULT)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize(
    "make, n, code",
    [
        (_and_chain, 50, "PTC104"),  # 10x before: each finding walked the whole test
        (_elif_chain, 40, "PTC104"),  # 12x before: each level re-read every deeper branch
        (_ternaries, 60, "PTC104"),  # linear before too; a torch.where fix per statement
    ],
    ids=["and-chain", "elif-chain", "ternaries"],
)
def test_one_long_construct_costs_linear_time_with_fixes(make, n, code):
    small, large = make(n), make(4 * n)
    found = [d for d in lint_source(small, "m.py", DEFAULT).diagnostics if d.code == code]
    assert len(found) >= n  # every term is a finding, each asked for a fix proposal
    if code == "PTC104":
        assert all(d.fix is not None for d in found)
    ratio = _cpu_seconds(large) / _cpu_seconds(small)
    assert ratio < 8, ratio


def test_findings_in_one_long_expression_share_the_climb_to_their_statement(monkeypatch):
    """``a.item() or b.item() or ...`` nests to the left, so the first term is as deep as the
    chain is long; finding the conditional expression (if any) whose test holds each finding
    climbed from it to the statement: quadratic. Counted, since the climb is cheap per step."""
    from pt2lint.fixes import context as context_mod

    steps = count_calls(monkeypatch, context_mod.FixContext, "parent")
    counts = {}
    for n in (100, 400):
        steps[0] = 0
        result = lint_source(_or_items(n), "m.py", DEFAULT)
        assert len([d for d in result.diagnostics if d.code == "PTC101"]) >= n
        counts[n] = steps[0]
    assert counts[400] <= 6 * counts[100], counts  # 16x before


# ---------------------------------------------------------------- whole-file facts
def _tensor_ifs(n: int, buffers: bool = False) -> str:
    lines = ["import torch", "class M(torch.nn.Module):"]
    if buffers:
        lines += ["    def __init__(self):", "        super().__init__()", "        self.register_buffer('scale', torch.ones(1))",
                  "        self.fc = torch.nn.Linear(4, 4)"]
    lines.append("    def forward(self, x):")
    for i in range(n):
        lines += [f"        if x.sum() > {i}:", f"            x = self.fc(x) * self.scale" if buffers else f"            x = x + {i}",
                  "        else:", f"            x = self.fc(x) - {i}" if buffers else f"            x = x - {i}"]
    lines += ["        return x", "m = torch.compile(M())"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("buffers", [False, True], ids=["plain", "class-state"])
def test_cond_proposals_read_the_file_and_class_once_not_once_per_if(monkeypatch, buffers):
    """Each tensor ``if``'s ``torch.cond`` proposal walked the whole module (what does the file
    compile?) and its whole class twice (registered buffers, float submodules): quadratic in
    the number of ``if``s. Counted as nodes the shared walk expands, fixes included."""
    from pt2lint.analysis import walk as walk_mod

    expanded = count_calls(monkeypatch, walk_mod, "iter_children")
    counts = {}
    for n in (20, 80):
        expanded[0] = 0
        result = lint_source(_tensor_ifs(n, buffers), "m.py", DEFAULT)
        fixes = [d for d in result.diagnostics if d.code == "PTC104" and d.fix is not None]
        assert len(fixes) == n
        if buffers:  # the class facts were read: the buffer has no parameters, the class is compiled
            assert all("used in some branches only" not in d.fix.message for d in fixes)
            assert all("not known to run under torch.compile" not in d.fix.message for d in fixes)
        counts[n] = expanded[0]
    assert counts[80] <= 5 * counts[20], counts  # 4x is linear; it was 12-14x


def test_the_file_compiled_and_class_facts_are_gathered_once_per_file(monkeypatch):
    from pt2lint.fixes import compiled as compiled_mod

    calls = {"compiled": 0, "buffers": 0}
    orig_compiled = compiled_mod.compiled_symbols
    orig_buffers = cond_mod._class_registered_buffers

    def compiled(index):
        calls["compiled"] += 1
        return orig_compiled(index)

    def buffers(cls):
        calls["buffers"] += 1
        return orig_buffers(cls)

    monkeypatch.setattr(cond_mod, "compiled_symbols", compiled)
    monkeypatch.setattr(cond_mod, "_class_registered_buffers", buffers)
    result = lint_source(_tensor_ifs(12, buffers=True), "m.py", DEFAULT)
    assert len([d for d in result.diagnostics if d.code == "PTC104" and d.fix is not None]) == 12
    assert calls == {"compiled": 1, "buffers": 1}, calls


_CALLS_IN_ORDER = '''\
import torch

@torch.compile
@deco(a(), b=c())
def f(x, y=g(), *, z=h()) -> r():
    try:
        k(x)
    except (AttributeError, i()):
        torch.cuda.amp.autocast()
    return (p() if q() else s()), x[t():u():v()]

class C(base(), metaclass=meta()):
    with w() as o, ww():
        m(n())
    lam = lambda: l()
    match x():
        case [y] if z():
            pass
'''


def test_the_whole_file_call_walk_is_in_source_order_and_rebuilds_no_node(monkeypatch):
    """PTC801/PTC807 read every call of a file; a ``CSTVisitor`` for that rebuilt each node it
    passed (more CPU than the rest of the analysis on a long file). The field walk must give the
    calls in the visitor's (source) order, with the same statement, header and fallback flag."""
    from pt2lint.analysis.index import ModuleIndex
    from pt2lint.rules import amp_distributed as amp

    module = cst.parse_module(_CALLS_IN_ORDER)
    index = ModuleIndex(module)

    class Calls(cst.CSTVisitor):  # what LibCST's own traversal sees, in its order
        def __init__(self):
            self.found = []

        def visit_Call(self, node):
            self.found.append(node)

    visitor = Calls()
    module.visit(visitor)
    built = count_calls(monkeypatch, cst.CSTNode, "__post_init__")
    calls = amp._walk_calls(index)
    assert built[0] == 0
    assert [c[0] for c in calls if isinstance(c[0], cst.Call)] == visitor.found
    by_callee = {module.code_for_node(c[0].func) if isinstance(c[0], cst.Call) else module.code_for_node(c[0]): c for c in calls}
    assert by_callee["torch.compile"][3] is not None  # a bare decorator: its own header
    assert isinstance(by_callee["a"][2], cst.FunctionDef) and isinstance(by_callee["a"][3], cst.Decorator)
    assert by_callee["k"][4] is False and by_callee["torch.cuda.amp.autocast"][4] is True
    assert isinstance(by_callee["w"][3], cst.WithItem) and isinstance(by_callee["n"][2], cst.SimpleStatementLine)
    assert by_callee["n"][3] is None  # inside the with body's statement, not its header


# ------------------------------------------------- tensor `if`s among simple statements
def _ifs_between_statements(n: int, k: int = 5) -> str:
    """``n`` tensor ``if``\\ s (each rebinding ``x``), ``k`` fresh locals before each."""
    lines = ["import torch", "class M(torch.nn.Module):", "    def __init__(self):", "        super().__init__()",
             "        self.lin = torch.nn.Linear(4, 4)", "        self.eps = 1e-6", "    def forward(self, x, y):"]
    for i in range(n):
        lines += [f"        h{i}_{j} = torch.relu(x) * {j} + self.lin(y).mean() + self.eps" for j in range(k)]
        lines += [f"        if x.sum() > {i}:", f"            x = x + h{i}_0", "        else:", f"            x = x - {i}"]
    lines += ["        return x", "m = torch.compile(M())"]
    return "\n".join(lines) + "\n"


def test_cond_dtype_checks_read_each_statement_before_the_if_once(monkeypatch):
    """The dtype checks of each ``if``'s proposal walked every statement before it: the
    assignments of a name bound in earlier ``if``\\ s (is it floating?), and the floating-only
    reductions (``x.mean()``) and floating-input submodule calls (``self.lin(y)``) it passed
    through: quadratic in a forward of many ``if``\\ s (200 ``if``\\ s with 5 statements each took
    91 s of CPU, then 7.6 s with the submodule scan alone left per ``if``).  Counted as nodes the
    proposal's walks yield and statements handed to either scan, fixes included."""
    counts = {"walked": 0, "scanned": 0, "inputs": 0}
    walk, scan, inputs = cond_mod.walk, cond_mod.floating_by_use, cond_mod.floating_inputs

    def counting_walk(node, **kw):
        for n in walk(node, **kw):
            counts["walked"] += 1
            yield n

    def counting_scan(ctx, before, rebound):
        counts["scanned"] += len(before)
        return scan(ctx, before, rebound)

    def counting_inputs(ctx, before, rebound):
        counts["inputs"] += len(before)
        return inputs(ctx, before, rebound)

    monkeypatch.setattr(cond_mod, "walk", counting_walk)
    monkeypatch.setattr(cond_mod, "floating_by_use", counting_scan)
    monkeypatch.setattr(cond_mod, "floating_inputs", counting_inputs)
    seen = {}
    for n in (6, 24):
        counts.update(walked=0, scanned=0, inputs=0)
        result = lint_source(_ifs_between_statements(n), "m.py", DEFAULT, fixes=True)
        assert sum(d.code == "PTC104" for d in result.diagnostics) == n
        assert all(d.fix is not None for d in result.diagnostics if d.code == "PTC104")
        seen[n] = dict(counts)
    assert seen[24]["walked"] <= 5 * seen[6]["walked"], seen  # 16x before
    assert seen[24]["scanned"] <= 5 * seen[6]["scanned"], seen  # 15x before
    assert 0 < seen[24]["inputs"] <= 5 * seen[6]["inputs"], seen  # 15x before


def test_the_parse_runs_without_cyclic_collections_in_the_main_thread_only(monkeypatch):
    """Full collections during the parse walked the growing tree again and again (about 1.5 s
    of 12 on the 10,000-line "many locals" forward).  The collector is paused in the main
    thread only (its switch is process-wide; the LSP server lints in threads) and runs again
    afterwards, also when the parse fails."""
    import gc
    import threading

    from pt2lint import engine

    seen = []
    original = cst.parse_module

    def recording(source, *args, **kwargs):
        seen.append(gc.isenabled())
        return original(source, *args, **kwargs)

    monkeypatch.setattr(cst, "parse_module", recording)
    assert gc.isenabled()
    engine.parse_module("x = 1\n")
    with pytest.raises(cst.ParserSyntaxError):
        engine.parse_module("x = (\n")
    assert gc.isenabled()
    worker = threading.Thread(target=engine.parse_module, args=("y = 2\n",))
    worker.start()
    worker.join()
    assert seen == [False, False, True]
    assert gc.isenabled()


def test_a_class_walks_its_bases_once_however_often_its_mro_is_asked(monkeypatch):
    # an inheritance chain of n classes: each class's MRO is computed once (the walk links the
    # classes it reaches, so the result does not change after); asked thousands of times before,
    # each walk quadratic in n, 800 classes took 8 s
    from pt2lint.analysis import index as index_mod

    links = count_calls(monkeypatch, index_mod.ClassInfo, "link")

    def chain(n: int) -> str:
        lines = ["import torch", "from torch import nn", "class C0(nn.Module):", "    def forward(self, x):", "        return x.sum().item()"]
        for i in range(1, n):
            lines += [f"class C{i}(C{i - 1}):", f"    def helper{i}(self, x):", "        return super().forward(x)"]
        return "\n".join(lines + [f"class Net(C{n - 1}):", "    pass", "torch.compile(Net())"]) + "\n"

    for n in (50, 100):
        links[0] = 0
        result = lint_source(chain(n), "m.py", DEFAULT)
        assert [d.code for d in result.diagnostics if d.code == "PTC101"] == ["PTC101"]
        # one walk per class, each linking the classes it reaches: at most n(n+1)/2 (+ the rest)
        assert links[0] <= n * (n + 1) // 2 + 2 * n, (n, links[0])
