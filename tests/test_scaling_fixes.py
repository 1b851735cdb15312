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


def _ifs_between(count: int, between: int = 5) -> str:
    lines = ["import torch", "class M(torch.nn.Module):", "    def __init__(self):", "        super().__init__()",
             "        self.lin = torch.nn.Linear(4, 4)", "    def forward(self, x, y):"]
    for i in range(count):
        lines += [f"        h{i}_{j} = torch.relu(x) * {j} + self.lin(y).mean()" for j in range(between)]
        lines += [f"        if x.sum() > {i}:", f"            x = x + h{i}_0", "        else:", f"            x = x - {i}"]
    return "\n".join(lines + ["        return x"]) + "\n"


def test_cond_name_lookups_do_not_walk_back_over_every_earlier_statement(monkeypatch):
    # Each `if`'s dtype proofs resolve names among the statements before it: walking back over
    # them asked `_binds` of every earlier statement (393,000 look-ups for 200 `if`s with 5
    # statements between); the per-block index asks once per statement.
    from pt2lint.fixes import cond

    calls = []
    real = cond._binds
    monkeypatch.setattr(cond, "_binds", lambda ctx, st: calls.append(1) or real(ctx, st))
    counts = {}
    for n in (20, 40):
        calls.clear()
        result = lint_source(_ifs_between(n), "m.py", SETTINGS)
        assert sum(1 for d in result.diagnostics if d.fix is not None and d.fix.name == "cond") == n
        counts[n] = len(calls)
    assert counts[40] < 2.5 * counts[20], counts  # linear (it was quadratic: about 4x)


def test_last_binding_agrees_with_a_walk_back():
    import libcst as cst

    from pt2lint.fixes import cond
    from pt2lint.fixes.context import FixContext

    src = "def f(x):\n    a = 1\n    b = a\n    if x:\n        a = 2\n        c = 3\n    for b in x:\n        pass\n    a = b\n    return a\n"
    module = cst.parse_module(src)
    ctx = FixContext(module, src, SETTINGS, [], {})
    body = list(module.body[0].body.body)
    inner = list(body[2].body.body)
    other = cst.parse_statement("c = 9\n")  # a statement of no block of the module
    wrapped_prefix = cond._block_prefix(ctx, body[4])
    sequences = [
        body, body[:3], body[1:4], inner, body[:2] + inner, [body[0], body[3], body[1]],
        body[:2] + [other] + inner, cond._concat(ctx, body[:3], inner), wrapped_prefix,
        cond._prefix(ctx, cond._concat(ctx, wrapped_prefix, inner), 3), (), [other],
    ]
    for stmts in sequences:
        for name in ("a", "b", "c", "x", "f"):
            expect = next((i for i in range(len(stmts) - 1, -1, -1) if name in cond._binds(ctx, stmts[i])), -1)
            assert cond._last_binding(ctx, stmts, name) == expect, (list(stmts), name)


def test_the_walk_yields_the_children_isinstance_finds():
    # walk.py answers "is this field value a node?" by type, once per type (LibCST's node classes
    # are ABCs: each isinstance against them is a Python-level call)
    import libcst as cst

    from pt2lint.analysis.walk import iter_children, walk

    module = cst.parse_module("def f(x, *a, k=1):\n    return [y for y in (x, *a) if y], {k: x}, lambda: (yield)\n")
    for node in walk(module):
        expect = []
        for f in __import__("dataclasses").fields(node):
            value = getattr(node, f.name)
            items = value if isinstance(value, (list, tuple)) else [value]
            expect.extend(v for v in items if isinstance(v, cst.CSTNode))
        got = list(iter_children(node))
        assert all(any(g is e for e in expect) for g in got)
        assert [id(g) for g in got] == [id(e) for e in expect if any(e is g for g in got)]


def test_bound_names_by_node_type():
    # bound_names classifies each node by its type once (no isinstance chain per node)
    import libcst as cst

    from pt2lint.analysis.names import bound_names

    src = (
        "a = b = 1\nc: int = 2\nd += 1\nfor e, (f, *g) in x: pass\nimport h.i\nimport j as k\nfrom l import m as n, o\n"
        "def p(q): r = 1\nclass s: t = 1\n(u := 1)\nwith v as w: pass\nlam = lambda y: (z := y)\n[aa for aa in x]\n"
        "try:\n    pass\nexcept E as bb:\n    pass\n"
    )
    names = set(bound_names(list(cst.parse_module(src).body)))
    assert names == {"a", "b", "c", "d", "e", "f", "g", "h", "k", "n", "o", "p", "s", "u", "w", "lam", "bb"}, names
