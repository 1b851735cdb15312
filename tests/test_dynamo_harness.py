"""Tests of pt2lint.confirm.dynamo, the ground-truth harness (needs torch).

Expected lines are found through ``# mark: <name>`` comments, so editing this
file does not silently shift them.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
THIS_FILE = str(Path(__file__).resolve())


def _line(mark: str) -> int:
    for lineno, text in enumerate(Path(THIS_FILE).read_text().splitlines(), start=1):
        if text.rstrip().endswith(f"# mark: {mark}"):
            return lineno
    raise AssertionError(f"no line marked {mark!r}")


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def dyn(torch):
    from pt2lint.confirm import dynamo

    return dynamo


def _breaks_here(found):
    return [(b.lineno, b.gb_type) for b in found if b.filename == THIS_FILE]


def test_module_imports_without_torch():
    code = "import sys; sys.modules['torch'] = None; import pt2lint.confirm.dynamo as d; print(d.GraphBreak)"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


def test_item_break_found_at_its_line(torch, dyn):
    class Scale(torch.nn.Module):
        def forward(self, x):
            y = x * 2
            s = y.sum().item()  # mark: item
            return y * s

    found = dyn.graph_breaks(Scale(), (torch.randn(4),))
    assert _breaks_here(found) == [(_line("item"), "GB0124")]
    assert "Tensor.item()" in found[0].reason
    assert found[0].user_stack[-1][:2] == (THIS_FILE, _line("item"))


def test_capture_scalar_outputs_config_removes_item_break(torch, dyn):
    def fn(x):
        return x * (x.sum().item() + 1)

    assert dyn.graph_breaks(fn, (torch.randn(3),), config={"capture_scalar_outputs": True}) == []


def test_break_inside_for_loop_is_found(torch, dyn):
    # explain() misses this one: Dynamo skips the whole frame ("graph break in loop").
    class Loop(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))

        def forward(self, x):
            x = x + 1
            for layer in self.layers:
                x = layer(x)
                print("layer done")  # mark: loop-print
            return x

    found = dyn.graph_breaks(Loop(), (torch.randn(2, 4),))
    assert _breaks_here(found) == [(_line("loop-print"), "GB0059")]


def test_break_at_first_op_of_frame_is_found(torch, dyn):
    class PrintFirst(torch.nn.Module):
        def forward(self, x):
            print("entering")  # mark: first-op
            return x.relu()

    found = dyn.graph_breaks(PrintFirst(), (torch.randn(3),))
    assert _breaks_here(found) == [(_line("first-op"), "GB0059")]


def _clip_scale(t):
    peak = t.abs().max().item()  # mark: helper-item
    return t / max(peak, 1.0)


def test_break_inside_helper_reports_helper_line(torch, dyn):
    class UsesHelper(torch.nn.Module):
        def forward(self, x):
            h = x * 3
            return _clip_scale(h)  # mark: helper-call

    found = dyn.graph_breaks(UsesHelper(), (torch.randn(5),))
    assert _breaks_here(found) == [(_line("helper-item"), "GB0124")]
    stack_lines = [(f[1], f[2]) for f in found[0].user_stack]
    assert stack_lines == [(_line("helper-call"), "forward"), (_line("helper-item"), "_clip_scale")]


def test_clean_module_has_no_breaks_and_no_mutations(torch, dyn):
    class Clean(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x, mask=None):
            if x.shape[0] > 1 and self.training:
                x = x * 2
            if mask is not None:
                x = x.masked_fill(mask, 0.0)
            return self.fc(x).relu()

    assert dyn.graph_breaks(Clean(), (torch.randn(3, 4),)) == []
    assert dyn.input_mutations(Clean(), (torch.randn(3, 4),)) == []


def test_inplace_on_input_found_but_not_on_clone(torch, dyn):
    class Mutates(torch.nn.Module):
        def forward(self, x, feats):
            y = x.clone()
            y.add_(1)
            x.mul_(2)  # mark: mul-input
            feats[1][0] = 0.0  # mark: list-input
            torch.add(y, 1, out=y)
            return x + y

    args = (torch.randn(3), [torch.randn(2), torch.randn(2)])
    found = dyn.input_mutations(Mutates(), args)
    got = [(m.lineno, m.op, m.argument) for m in found if m.filename == THIS_FILE]
    assert got == [
        (_line("mul-input"), "aten.mul_.Tensor", "x"),
        (_line("list-input"), "aten.copy_.default", "feats[1]"),
    ]


def test_recompiles_reports_guard_on_int_attribute(torch, dyn):
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x * self.calls

    reasons = dyn.recompiles(Counter(), [(torch.randn(2),)] * 3)
    assert len(reasons) == 2
    assert "self.calls == 0" in reasons[0]


def test_export_error(torch, dyn):
    assert dyn.export_error(torch.nn.Linear(2, 2), (torch.randn(1, 2),)) is None

    def branchy(x):
        if x.sum() > 0:
            return x
        return -x

    err = dyn.export_error(branchy, (torch.randn(3),))
    assert err is not None and "\n" not in err


# Fixtures re-measured against the committed labels: one per kind of fact
# (item, break in a loop, break in a helper, mutation through a list, clean).
_FIXTURE_SAMPLE = [
    "models/attention_temperature_item.py",
    "models/stage_debug_print_loop.py",
    "models/nested_helper_item.py",
    "models/fpn_list_inplace_normalize.py",
    "models/clean_torch_cond_gate.py",
]


def _relabel_module():
    path = ROOT / "fixtures" / "relabel.py"
    spec = importlib.util.spec_from_file_location("pt2lint_fixtures_relabel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("key", _FIXTURE_SAMPLE)
def test_fixture_labels_match_measurement(torch, key):
    labels = json.loads((ROOT / "fixtures" / "labels.json").read_text())
    relabel = _relabel_module()
    assert relabel.measure(ROOT / "fixtures" / key) == labels[key]
