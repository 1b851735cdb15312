"""The ``item-branch`` codemod: ``s = t.item(); if s > thr:`` -> inline, then ``cond``/``where``/``check``.

Text-level tests (no torch) pin the composed rewrite, its idempotence and the refusals
(``s`` used as a number elsewhere, rebound, not followed by its ``if``).  With torch, the
fixture ``fixtures/fix/item_branch/threshold_gate.py`` is fixed, and the original and
fixed modules are compared on inputs taking every direction of both tests (outputs,
input and parameter gradients), and the fixed one compiles with ``fullgraph=True``.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from pt2lint.commands.fix import RuleSelection, fix_one
from pt2lint.diagnostics import Applicability
from pt2lint.engine import lint_source
from pt2lint.fixes.apply import fix_text
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection(), assume_compiled=True)  # snippets stand for compiled code
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "fix" / "item_branch" / "threshold_gate.py"
HEADER = (
    "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.a = nn.Linear(4, 4)\n        self.b = nn.Linear(4, 4)\n\n    def forward(self, x, t):\n"
)


def module(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", " " * 8)


def fixed(text: str, unsafe: bool = False) -> str:
    def select(d):
        f = d.fix
        return f is not None and f.name == "item-branch" and (f.applicability is Applicability.SAFE or (unsafe and f.applicability is Applicability.UNSAFE))

    return fix_text(text, "m.py", SETTINGS, select_fix=select, names_for=lambda d: ["item-branch"]).text


def item_fixes(text: str):
    diags = lint_source(text, "m.py", SETTINGS, fix_names=lambda d: ["item-branch"]).diagnostics
    return [d.fix for d in diags if d.fix is not None and d.fix.name == "item-branch"]


def test_item_read_only_by_the_next_if_is_inlined_and_handed_to_cond():
    src = module(
        """
        s = t.item()  # read once
        if s > 0.5:
            y = self.a(x)
        else:
            y = self.a(x) * 2
        return y
        """
    )
    (fix,) = item_fixes(src)
    assert fix.applicability is Applicability.SAFE, fix.message
    assert fix.message.startswith("inline `s = t.item()` into the `if` test") and "then cond:" in fix.message
    out = fixed(src)
    assert out == module(
        """
        # read once
        def _true_fn(x):
            y = self.a(x)
            return y
        def _false_fn(x):
            y = self.a(x) * 2
            return y
        y = torch.cond(t > 0.5, _true_fn, _false_fn, (x,))
        return y
        """
    )
    assert fixed(out) == out
    assert not [d for d in lint_source(out, "m.py", SETTINGS).diagnostics if d.code in ("PTC101", "PTC103", "PTC104")]


def test_reads_in_elif_tests_are_inlined_too():
    src = module(
        """
        s = t.item()
        if s > 1:
            y = self.a(x)
        elif s > 0.5:
            y = self.b(x)
        else:
            y = x.clone()
        return y
        """
    )
    (fix,) = item_fixes(src)
    assert fix.applicability is not Applicability.DISPLAY_ONLY, fix.message
    out = fixed(src, unsafe=True)
    assert "torch.cond(t > 1," in out and "torch.cond(t > 0.5," in out and "t.item()" not in out
    assert fixed(out, unsafe=True) == out


def test_float_read_feeding_a_validation_raise_becomes_a_check():
    src = module(
        """
        v = float(x.norm())
        if v < 1e-6:
            raise ValueError("zero input")
        return self.a(x / x.norm())
        """
    )
    (fix,) = item_fixes(src)
    # the check is the custom-op form (pt2lint/fixes/check_op.py): the code after it is a Linear and a division
    assert fix.applicability is Applicability.SAFE and "then check:" in fix.message, fix.message
    out = fixed(src, unsafe=True)
    assert "_pt2lint_check_M_forward_" in out and "(x.norm().double() < 1e-6)\n" in out
    assert "elif float(x.norm()) < 1e-6:" in out and 'raise ValueError("zero input")' in out
    assert "v = float" not in out and fixed(out, unsafe=True) == out


@pytest.mark.parametrize(
    "body, reason",
    [
        ("s = t.item()\nif s > 0.5:\n    y = self.a(x)\nelse:\n    y = self.b(x)\nreturn y * s", "also used as a Python number outside the `if`/`elif` tests"),
        ("s = t.item()\nif s > 0.5:\n    y = self.a(x)\nelse:\n    y = self.b(x)\ns = 2.0\nreturn y", "bound more than once"),
        ("s = t.item()\nif s > 0.5:\n    y = self.a(x)\n    print(y)\nelse:\n    y = self.b(x)\nreturn y", "not rewritten"),
        ("s = t.item()\nif any(s > 0 for s in [1.0]):\n    y = self.a(x)\nelse:\n    y = self.b(x)\nreturn y", "comprehension"),
    ],
)
def test_refusals_say_why_and_leave_the_code(body, reason):
    src = module(body)
    fixes = item_fixes(src)
    assert fixes and all(f.applicability is Applicability.DISPLAY_ONLY for f in fixes), [f.message for f in fixes]
    assert reason in fixes[0].message
    assert fixed(src, unsafe=True) == src


def test_statements_between_the_read_and_the_if_are_allowed_when_the_number_cannot_change():
    src = module(
        """
        energy = x.pow(2).mean()
        s = energy.item()
        h = self.a(x)
        if s > 0.5:
            y = self.b(h)
        else:
            y = h
        return y
        """
    )
    (fix,) = item_fixes(src)
    assert fix.applicability is not Applicability.DISPLAY_ONLY, fix.message
    out = fixed(src, unsafe=True)
    assert "torch.cond(energy > 0.5," in out and "energy.item()" not in out
    assert out.index("h = self.a(x)") < out.index("def _true_fn")
    assert fixed(out, unsafe=True) == out


@pytest.mark.parametrize(
    "between, reason",
    [
        ("x = x + 1", "read is not of a local name"),  # s = t.item() with t a parameter
        ("energy.add_(1)", "is used between its read"),
        ("u = energy", "is used between its read"),
    ],
)
def test_statements_between_that_could_change_the_number_are_refused(between, reason):
    read = "s = t.item()" if reason == "read is not of a local name" else "energy = x.pow(2).mean()\ns = energy.item()"
    src = module(f"{read}\n{between}\nif s > 0.5:\n    y = self.a(x)\nelse:\n    y = self.b(x)\nreturn y")
    fixes = item_fixes(src)
    if reason == "read is not of a local name":
        reason = "not bound once"  # a parameter is refused by the binding check
    assert fixes and fixes[0].applicability is Applicability.DISPLAY_ONLY and reason in fixes[0].message, [f.message for f in fixes]


def test_a_view_or_a_multi_element_tensor_is_not_moved():
    for read in ("e = x.view(-1)\ns = e.sum().item()", "e = x.float()\ns = e.item()", "e = x * 2\ns = e.item()"):
        src = module(f"{read}\nh = self.a(x)\nif s > 0.5:\n    y = self.b(h)\nelse:\n    y = h\nreturn y")
        fixes = item_fixes(src)
        assert fixes and all(f.applicability is Applicability.DISPLAY_ONLY for f in fixes), (read, [f.message for f in fixes])


def test_near_misses_are_not_claimed():
    near_misses = [
        # the read is not a plain assignment of one name
        "s, u = t.item(), 1\nif s > 0.5:\n    y = self.a(x)\nelse:\n    y = self.b(x)\nreturn y",
        # the next if does not test s
        "s = t.item()\nif x.sum() > 0:\n    y = self.a(x)\nelse:\n    y = self.b(x)\nreturn y * s",
    ]
    for body in near_misses:
        assert not item_fixes(module(body)), body


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _run(torch, model, inputs):
    args = [a.detach().clone().requires_grad_(True) for a in inputs]
    model.zero_grad(set_to_none=True)
    out = model(*args)
    out.sum().backward()
    return out.detach(), [a.grad for a in args], {n: p.grad for n, p in model.named_parameters()}


def test_fixture_is_equivalent_on_every_branch_and_compiles_fullgraph(tmp_path):
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo

    selection = RuleSelection(names=frozenset({"item-branch"}))
    result = fix_one(str(FIXTURE), FIXTURE.name, SETTINGS, selection, unsafe=False)  # safe fixes only
    assert result.error is None and result.changed
    forward = result.text.split("def forward")[1].split("def make_model")[0]
    assert forward.count("torch.cond(") == 3 and ".item()" not in forward and "float(" not in forward
    path = tmp_path / "threshold_gate_fixed.py"
    path.write_text(result.text)
    again = fix_one(str(path), path.name, SETTINGS, selection, unsafe=True)
    assert again.error is None and not again.changed

    orig, new = _load(FIXTURE, "_item_orig"), _load(path, "_item_new")
    m1, m2 = orig.make_model(), new.make_model()
    m2.load_state_dict(m1.state_dict())
    directions = set()
    for inp in orig.branch_inputs():
        score = inp[1].sigmoid().mean().item() > m1.threshold
        energy = float(inp[0].pow(2).mean()) < 1e-3
        peak = inp[0].abs().amax().item() > 50.0
        directions.add((score, energy, peak))
        o1, g1, p1 = _run(torch, m1, inp)
        o2, g2, p2 = _run(torch, m2, inp)
        torch.testing.assert_close(o2, o1)
        for a, b in zip(g1, g2):
            if a is None:
                assert b is None or not b.any()
            else:
                torch.testing.assert_close(b, a)
        for key, a in p1.items():
            if a is None:
                assert p2[key] is None or not p2[key].any(), key
            else:
                torch.testing.assert_close(p2[key], a, msg=key)
    assert all({d[i] for d in directions} == {True, False} for i in range(3)), directions
    dynamo.reset()
    explained = dynamo.explain(m2)(*orig.branch_inputs()[0])
    assert explained.graph_break_count == 0, [str(r.reason) for r in explained.break_reasons]
    dynamo.reset()
    compiled = torch.compile(m2, fullgraph=True, backend="eager")
    for inp in orig.branch_inputs():
        torch.testing.assert_close(compiled(*inp), m1(*inp))


def test_the_new_codemods_give_the_same_diff_under_any_hash_seed():
    """``fix --diff`` of the check/item-branch/mask-index/print-hop fixtures is byte-identical for three seeds."""
    import os
    import subprocess

    root = Path(__file__).resolve().parent.parent
    fixtures = [str(p) for d in ("check", "item_branch", "mask_index") for p in sorted((root / "fixtures" / "fix" / d).glob("*.py"))]
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        proc = subprocess.run(
            [sys.executable, "-m", "pt2lint", "fix", "--isolated", "--no-cache", "--unsafe-fixes", "--diff", "-j", "2",
             "--rule", "check,item-branch,mask-index,print-hop", *fixtures],
            capture_output=True, text=True, env=env, timeout=300,
        )
        assert proc.returncode in (0, 1), proc.stderr
        assert proc.stdout.count("+++ ") == len(fixtures), proc.stdout
        outputs.add(proc.stdout)
    assert len(outputs) == 1
