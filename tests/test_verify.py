"""``pt2lint fix --verify``: rewrites are proven by running them against the original.

The parent side (units, reverting, verdicts) is tested without torch. The runs
share one ``run_jobs`` call (one fork server that imports torch once, one child
per model) made by the module-scoped ``measured`` fixture; the CLI test makes
one more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pt2lint.confirm import verify as vf

ROOT = Path(__file__).resolve().parent.parent

HEAD = "import torch\nfrom torch import nn\n\n\n"

#: name -> (source of the file, the finding's function); each file defines make_model/example_inputs.
CASES = {
    "correct": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            y = h * 2
        else:
            y = h - 1
        return y
""",
    # parameters used only in the branch not taken: torch.cond gives zeros, eager gives None
    "two_heads": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:
            y = self.a(x)
        else:
            y = self.b(x)
        return y
""",
    # no input makes a sum of absolute values negative: the true branch is never taken
    "never": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if h.abs().sum() < -1.0:
            h = h * 0
        else:
            h = h + 1
        return h
""",
    # the true branch needs every gate output at or below 0.5: no perturbation of `x` reaches it
    # with these weights, the weights zeroed do (sigmoid(0) == 0.5)
    "gate_reached_by_weights": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(4, 4)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        if g.amax() <= 0.5:
            y = (x + g) * 0.5
        else:
            y = x * g
        return y
""",
    # a module that updates its buffers in train mode, called in a branch
    "batchnorm": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        h = self.lin(x)
        if h.mean() > 0:
            h = self.bn(h)
        else:
            h = h * 2
        return h
""",
    # a branch that changes the dtype of its output
    "dtype": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            h = h.double()
        else:
            h = h * 2
        return h
""",
    # the guard fix of the print is proven although the refused tensor `if` around it still breaks
    "guard_in_refused_branch": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            print("positive batch")
            h = h * 2
        return h
""",
    # a validation raise: the check codemod's custom-op form (safe), verified eager and compiled
    "validation": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        if (x < 0).any():
            raise ValueError("inputs must be non-negative")
        return self.lin(torch.log1p(x))
""",
    # the unsafe op form: Inductor runs the loss (with its own bounds check) before the check op
    "validation_reordered": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        labels = x.abs().sum(dim=1).long()
        if (labels >= 4).any():
            raise IndexError("label out of range")
        return torch.nn.functional.cross_entropy(self.lin(x), labels)
""",
}

FACTORY = """

def make_model():
    return Net()


def example_inputs():
    return (torch.randn(3, 4),)
"""

#: A hand-made rewrite of "correct" that is wrong in its false branch (- 2 instead of - 1).
WRONG_FIXED = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        def _true_fn(h):
            return h * 2
        def _false_fn(h):
            return h - 2
        y = torch.cond(h.sum() > 0, _true_fn, _false_fn, (h,))
        return y
"""


#: A file whose branch also counts its calls in a module global, and a hand-made ``cond`` rewrite
#: that computes the same outputs but drops the count (``torch.cond`` branches cannot write it).
COUNTED = "\nCALLS = [0]\n\n" + CASES["correct"].replace("            y = h * 2\n", "            CALLS[0] += 1\n            y = h * 2\n")
COUNTED_FIXED = "\nCALLS = [0]\n\n" + WRONG_FIXED.replace("return h - 2", "return h - 1")


def _validation_fixed(message: str, eager_message: str = "inputs must be non-negative") -> str:
    """A hand-made check-op fix of "validation" whose op raises ``message`` and whose eager `raise`
    says ``eager_message`` (the codemod writes the original message in both)."""
    from pt2lint.fixes.check_op import check_op_source

    op = check_op_source("torch", "pt2lint_verify_test", "check_Net_forward_11", "Net.forward", f'raise ValueError("{message}")')
    body = CASES["validation"].replace(
        '        if (x < 0).any():\n            raise ValueError("inputs must be non-negative")\n',
        "        if torch.compiler.is_compiling():\n            _pt2lint_check_Net_forward_11((x < 0).any())\n"
        f'        elif (x < 0).any():\n            raise ValueError("{eager_message}")\n',
    )
    return HEAD.rstrip("\n") + "\n\n\n" + op + "\n\n" + body.lstrip("\n") + FACTORY


def _fixed_text(path: Path) -> str:
    """The file fixed by the real codemods, unsafe fixes included."""
    from pt2lint.fixes.apply import applicable, fix_text
    from pt2lint.settings import LintSettings

    settings = LintSettings()
    return fix_text(path.read_text(), str(path), settings, select_fix=lambda d: d.fix is not None and applicable(d.fix, True)).text


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """``{case: [Verdict]}`` for every case, plus ``"wrong"``, from one run of the children."""
    from pt2lint.confirm.runner import run_jobs
    from pt2lint.confirm.settings import build_settings

    base = tmp_path_factory.mktemp("verify")
    files = {}
    for name, body in CASES.items():
        path = base / f"{name}.py"
        path.write_text(HEAD + body.lstrip("\n") + FACTORY)
        files[name] = (path, path.read_text(), _fixed_text(path))
    wrong = base / "wrong.py"
    wrong.write_text(HEAD + CASES["correct"].lstrip("\n") + FACTORY)
    files["wrong"] = (wrong, wrong.read_text(), HEAD + WRONG_FIXED.lstrip("\n") + FACTORY)
    counted = base / "counted.py"
    counted.write_text(HEAD + COUNTED.lstrip("\n") + FACTORY)
    files["counted"] = (counted, counted.read_text(), HEAD + COUNTED_FIXED.lstrip("\n") + FACTORY)
    for name, fixed in (
        ("op_message", _validation_fixed("inputs must be positive")),
        ("eager_message", _validation_fixed("inputs must be non-negative", "inputs must be positive")),
    ):
        path = base / f"{name}.py"
        path.write_text(HEAD + CASES["validation"].lstrip("\n") + FACTORY)
        files[name] = (path, path.read_text(), fixed)
    planned, units = [], {}
    for name, (path, orig, fixed) in files.items():
        found, problems = vf.rewritten_units(orig, fixed)
        assert not problems, (name, problems)
        units[name] = found
        planned.append((str(path), str(path), path.name, orig, tuple(found)))
    settings = build_settings({}, config_path=None, root=str(base), jobs=2, timeout=240)
    jobs, unplanned = vf.plan_verify_jobs(planned, settings)
    assert not unplanned
    outcomes = run_jobs(jobs, parallel=2, run=vf.run_verify_job)
    out = {}
    for name, (path, orig, fixed) in files.items():
        mine = [o for o in outcomes if o.job.path == str(path)]
        out[name] = vf.verdicts(str(path), str(path), units[name], mine)
    return out, files


def _one(measured, name):
    results, _files = measured
    assert len(results[name]) == 1, results[name]
    return results[name][0]


def test_a_correct_fix_is_verified(measured):
    v = _one(measured, "correct")
    assert (v.unit, v.status) == ("Net.forward", vf.VERIFIED), v
    assert "both branches" in v.reason


def test_a_wrong_rewrite_is_rejected_with_evidence(measured):
    v = _one(measured, "wrong")
    assert v.status == vf.REJECTED, v
    # the evidence names the input, the tensor and the difference
    assert "input '" in v.reason and "output" in v.reason and "max abs diff" in v.reason, v.reason


def test_a_rewrite_that_drops_a_global_write_is_rejected(measured):
    # equal outputs and gradients, but the caller's module-level counter is no longer updated
    v = _one(measured, "counted")
    assert v.status == vf.REJECTED, v
    assert "module global CALLS was written by the original call and not by the fixed" in v.reason, v.reason


def test_global_state_differences_are_told():
    pytest.importorskip("torch")
    import types

    import torch

    def run(before, after):
        r = vf._Run()
        r.globals_before, r.globals_after = before, after
        return r

    same = {"N": 1, "T": torch.zeros(2)}
    # both calls increment the counter from the same value: no difference
    assert vf._compare_globals("x", run(same, {**same, "N": 2}), run(same, {**same, "N": 2})) == []
    # one increments by two
    assert vf._compare_globals("x", run(same, {**same, "N": 2}), run(same, {**same, "N": 3})) == ["x: module global N after the call: 2 in the original, 3 in the fixed"]
    # a tensor written in place by the original only
    assert vf._compare_globals("x", run(same, {**same, "T": torch.ones(2)}), run(same, same)) == ["x: module global T was written by the original call and not by the fixed"]
    # the fixed module started elsewhere (building the model ran the original's code): both wrote it
    assert vf._compare_globals("x", run(same, {**same, "N": 2}), run({**same, "N": 0}, {**same, "N": 1})) == []
    # a global the fixed call creates
    assert vf._compare_globals("x", run(same, same), run(same, {**same, "NEW": [1]})) == ["x: module global NEW was written by the fixed call and not by the original"]
    # the snapshot keeps plain data, not functions, classes, modules or dunder names
    mod = types.ModuleType("m")
    mod.CACHE, mod.f, mod.torch, mod._pt2lint_check_x = {"a": 1}, (lambda: 0), torch, object()
    assert vf.global_state_snapshot(mod) == {"CACHE": ("dict", 1, repr(sorted([repr(("a", 1))])))}


def test_none_and_zero_gradients_are_told_apart(measured):
    v = _one(measured, "two_heads")
    assert v.status == vf.REJECTED, v
    assert "None in the original, zeros in the fixed" in v.reason, v


def test_a_branch_never_taken_is_unverifiable(measured):
    v = _one(measured, "never")
    assert v.status == vf.UNVERIFIABLE, v
    assert "true branch was never taken" in v.reason, v


def test_a_branch_reached_only_by_changing_the_weights_is_verified(measured):
    v = _one(measured, "gate_reached_by_weights")
    assert v.status == vf.VERIFIED, v
    assert "both branches" in v.reason, v


def test_a_check_op_fix_is_verified_eager_and_compiled(measured):
    results, files = measured
    _path, _orig, fixed = files["validation"]
    assert "torch.fx.node.has_side_effect(" in fixed and "_assert_async" not in fixed
    v = _one(measured, "validation")
    assert v.status == vf.VERIFIED, v
    assert "both branches" in v.reason, v


def test_a_check_op_raising_another_message_is_rejected_compiled_and_eager(measured):
    v = _one(measured, "op_message")  # eager mode keeps the right `raise`: only compiled code differs
    assert v.status == vf.REJECTED, v
    assert "compiled (inductor)" in v.reason and "inputs must be positive" in v.reason, v
    v = _one(measured, "eager_message")
    assert v.status == vf.REJECTED, v
    assert "(another message)" in v.reason, v


def test_a_check_op_that_inductor_orders_after_a_later_kernel_is_rejected(measured):
    results, files = measured
    assert "_pt2lint_check_Net_forward_" in files["validation_reordered"][2]  # the unsafe op form
    v = _one(measured, "validation_reordered")
    assert v.status == vf.REJECTED, v
    assert "compiled (inductor)" in v.reason and "IndexError" in v.reason and "RuntimeError" in v.reason, v


def test_generated_check_ops_are_recognised_exactly():
    orig = HEAD + CASES["validation"].lstrip("\n") + FACTORY
    fixed = _validation_fixed("inputs must be non-negative")
    units, problems = vf.rewritten_units(orig, fixed)
    assert problems == [] and [u.qualname for u in units] == ["Net.forward"]
    assert units[0].check_ops == ("_pt2lint_check_Net_forward_11",)
    assert "has_side_effect" in units[0].alone_text
    for tampered in (
        fixed.replace("mutates_args=()", 'mutates_args=("failed",)'),
        fixed.replace("torch.fx.node.has_side_effect(", "print("),
        fixed.replace("    if failed:\n", "    if not failed:\n"),
        fixed.replace('raise ValueError("inputs must be non-negative")\n\n\n@', "raise ValueError(str(failed))\n\n\n@"),
    ):
        assert tampered != fixed
        _units, problems = vf.rewritten_units(orig, tampered)
        assert "function _pt2lint_check_Net_forward_11 was added" in problems, problems


def test_the_ops_of_many_validations_fixed_in_one_round_are_recognised_per_unit():
    """Twelve validations in three forwards, all fixed in one round (their op blocks written together
    after the imports): three units, each taking its own four ops, and keeping only some units'
    rewrites keeps only their ops."""
    from test_fix_check import TWELVE, fixed

    out = fixed(TWELVE)
    units, problems = vf.rewritten_units(TWELVE, out)
    assert problems == [] and [u.qualname for u in units] == ["A.forward", "B.forward", "C.forward"]
    for unit in units:
        assert len(unit.check_ops) == 4 and all(op.startswith(f"_pt2lint_check_{unit.qualname[0]}_forward_") for op in unit.check_ops)
    verdicts = [vf.Verdict("m.py", u.qualname, 1, vf.VERIFIED if u.qualname != "B.forward" else vf.REJECTED, "x") for u in units]
    kept = vf.keep_verified(TWELVE, out, verdicts)
    compile(kept, "m.py", "exec")
    assert kept.count("torch.library.custom_op(") == 8 and "_pt2lint_check_B_" not in kept


def test_a_rejected_check_op_unit_takes_its_op_with_it():
    orig = HEAD + CASES["validation"].lstrip("\n") + "\n\ndef g(x):\n    return x\n" + FACTORY
    fixed = _validation_fixed("inputs must be non-negative").replace("\n\ndef make_model", "\n\ndef g(x):\n    return x + 0\n\n\ndef make_model", 1)
    units, problems = vf.rewritten_units(orig, fixed)
    assert problems == [] and [u.qualname for u in units] == ["Net.forward", "g"]
    verdicts = [vf.Verdict("f.py", "Net.forward", 1, vf.REJECTED, "x"), vf.Verdict("f.py", "g", 1, vf.VERIFIED, "y")]
    kept = vf.keep_verified(orig, fixed, verdicts)
    assert kept == orig.replace("    return x\n\n\ndef make_model", "    return x + 0\n\n\ndef make_model")


def test_perturb_parameters_changes_floating_parameters_only():
    torch = pytest.importorskip("torch")
    net = torch.nn.Linear(3, 2)
    net.register_buffer("steps", torch.ones(2))
    w = net.weight.detach().clone()
    assert vf.perturb_parameters(net, "params-neg") and torch.equal(net.weight, -w)
    assert vf.perturb_parameters(net, "params-zeros") and not net.weight.any() and not net.bias.any()
    assert torch.equal(net.steps, torch.ones(2)) and net.weight.grad is None  # buffers kept, nothing recorded
    assert not vf.perturb_parameters(torch.nn.ReLU(), "params-zeros")  # no parameter: nothing to try
    with pytest.raises(ValueError, match="unknown parameter variant"):
        vf.perturb_parameters(net, "params-ones")


def test_a_graph_break_the_fix_did_not_touch_does_not_reject_it(measured):
    v = _one(measured, "guard_in_refused_branch")
    assert v.status == vf.VERIFIED, v
    assert "no graph break left on the rewritten lines" in v.reason


@pytest.mark.parametrize("name", ["batchnorm", "dtype"])
def test_rewrites_that_break_working_code_are_rejected(measured, name):
    results, files = measured
    _path, orig, fixed = files[name]
    if fixed == orig:
        # the codemod refuses these before anything runs (a buffer written in train mode, a
        # one-sided dtype change): there is no rewrite left to verify
        assert results[name] == [], results[name]
        return
    v = _one(measured, name)
    assert v.status == vf.REJECTED, v
    # the fixed code raised, or (a `where` rewrite, which promotes) gave another dtype
    assert "the fixed code raised" in v.reason or " in the original, " in v.reason, v


def test_only_verified_functions_are_kept(measured):
    results, files = measured
    for name, (_path, orig, fixed) in files.items():
        kept = vf.keep_verified(orig, fixed, results[name])
        assert kept == (fixed if name in ("correct", "guard_in_refused_branch", "gate_reached_by_weights", "validation") else orig), name


# ---------------------------------------------------------------------------
# parent side, no torch


TWO = """import torch


class A:
    def f(self, x):
        if x.sum() > 0:
            y = x
        else:
            y = -x
        return y

    def g(self, x):
        return x


def h(x):
    if x.max() > 1: return x
    return x + 1
"""


def test_units_are_functions_and_methods_rewritten_alone():
    fixed = TWO.replace("    def f(self, x):\n        if x.sum() > 0:\n            y = x\n        else:\n            y = -x\n",
                        "    def f(self, x):\n        def _t(x):\n            return x\n        def _f(x):\n            return -x\n        y = torch.cond(x.sum() > 0, _t, _f, (x,))\n")
    fixed = fixed.replace("    if x.max() > 1: return x\n    return x + 1\n", "    return torch.where(x.max() > 1, x, x + 1)\n")
    units, problems = vf.rewritten_units(TWO, fixed)
    assert problems == []
    assert [u.qualname for u in units] == ["A.f", "h"]
    f, h = units
    assert f.tests == (vf.BranchTest(6, 6, 7),) and f.tests[0].observable
    assert h.tests == (vf.BranchTest(17, 17, 17),) and not h.tests[0].observable
    # each unit's text holds its own rewrite only
    assert "torch.cond" in f.alone_text and "torch.where" not in f.alone_text
    assert "torch.where" in h.alone_text and "torch.cond" not in h.alone_text
    # the lines the fix wrote, in the unit's own text: a graph break is looked for there
    assert f.rewritten == (6, 7, 8, 9, 10) and h.rewritten == (17,)
    assert f.replaced == (6, 7, 8, 9) and h.replaced == (17, 18)
    assert vf.revert_units(fixed, TWO, ["A.f", "h"]) == TWO


def test_module_level_rewrites_are_not_verifiable():
    _units, problems = vf.rewritten_units("X = 1\n\n\ndef f(x):\n    return x\n", "X = 2\n\n\ndef f(x):\n    return x\n")
    assert problems == ["module-level code outside any function was rewritten"]
    _units, problems = vf.rewritten_units("def f(x):\n    return x\n", "import torch\n\n\ndef f(x):\n    return x\n")
    assert problems == []  # an added import is not a rewrite


def test_unit_of_symbol():
    assert vf.unit_of_symbol("Net.forward.<locals>.inner") == "Net.forward"
    assert vf.unit_of_symbol("helper") == "helper"
    assert vf.unit_of_symbol(None) is None


def test_verdicts_without_a_job_are_unverifiable():
    units, _ = vf.rewritten_units("def f(x):\n    if x:\n        y = 1\n    else:\n        y = 2\n    return y\n",
                                  "def f(x):\n    y = 1 if x else 2\n    return y\n")
    (v,) = vf.verdicts("/p.py", "p.py", units, [], unplanned=["no model factory: p.py defines none"])
    assert (v.status, v.reason) == (vf.UNVERIFIABLE, "no model factory: p.py defines none")
    assert vf.summary_line([v]) == "Verify: 1 function rewritten: 0 verified, 0 rejected, 1 unverifiable."


def test_a_job_that_ran_makes_other_jobs_failures_evidence_not_the_reason():
    """A file with one buildable class and others that need a config: when the built model ran
    the inputs but never reached the rewritten lines, that is the reason; the other classes'
    build failures are evidence."""
    from types import SimpleNamespace

    units, _ = vf.rewritten_units("def f(x):\n    if x:\n        y = 1\n    else:\n        y = 2\n    return y\n",
                                  "def f(x):\n    y = 1 if x else 2\n    return y\n")
    ran = SimpleNamespace(result={"units": {"f": {"executed": False, "fixed_executed": False, "inputs": 3, "outcomes": {}}}},
                          job=SimpleNamespace(label="p.py::Top"), timed_out=False, exitcode=0, stage="done")
    failed = SimpleNamespace(result={"failure": "no-inputs", "detail": "no model factory: Other() needs config", "units": {}},
                             job=SimpleNamespace(label="p.py::Other"), timed_out=False, exitcode=0, stage="build")
    (v,) = vf.verdicts("/p.py", "p.py", units, [failed, ran])
    assert v.status == vf.UNVERIFIABLE
    assert v.reason == "the rewritten lines of the original were never executed on the model's inputs"
    assert v.evidence == ["p.py::Other: no model factory: Other() needs config"]
    # No job measured anything: the first failure is the reason, as before.
    (v,) = vf.verdicts("/p.py", "p.py", units, [failed])
    assert v.reason == "p.py::Other: no model factory: Other() needs config"


def test_verify_without_torch_is_a_clear_error(tmp_path):
    (tmp_path / "m.py").write_text(HEAD + CASES["correct"].lstrip("\n") + FACTORY)
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["torch"] = None  # as if torch were not installed
        from pt2lint.cli import main
        main(["fix", "--verify", "--isolated", "--no-cache", {str(tmp_path)!r}])
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "`confirm` extra" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert (tmp_path / "m.py").read_text() == HEAD + CASES["correct"].lstrip("\n") + FACTORY  # untouched


def test_fix_verify_cli_writes_only_proven_rewrites_and_reports_json(tmp_path):
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(HEAD + CASES["correct"].lstrip("\n") + FACTORY)
    bad.write_text(HEAD + CASES["two_heads"].lstrip("\n") + FACTORY)
    before_bad = bad.read_text()
    code = textwrap.dedent(
        f"""
        from pt2lint.cli import main
        main(["fix", "--verify", "--isolated", "--no-cache", "--unsafe-fixes", "--output-format", "json", {str(tmp_path)!r}])
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the rejected function's finding is left
    doc = json.loads(proc.stdout)
    statuses = {(Path(f["path"]).name, f["function"]): f["status"] for f in doc["verify"]["functions"]}
    assert statuses == {("bad.py", "Net.forward"): "rejected", ("good.py", "Net.forward"): "verified"}, doc
    assert doc["verify"]["counts"] == {"rejected": 1, "unverifiable": 0, "verified": 1}
    assert [Path(f["path"]).name for f in doc["files"]] == ["good.py"]
    assert "torch.cond" in good.read_text()
    assert bad.read_text() == before_bad
    assert [d["code"] for d in doc["remaining"]] == ["PTC104"]
    assert "Verify: 2 functions rewritten: 1 verified, 1 rejected, 0 unverifiable." in proc.stderr
