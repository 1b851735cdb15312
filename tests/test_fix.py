"""Codemods on snippets and ``pt2lint fix`` / ``check --fix`` end to end (no torch needed).

Every codemod must give code that parses, be idempotent, and remove the finding it
targets (DESIGN, "Fixes"); the exact text of a few rewrites is pinned so formatting
and comments are kept.  The CLI tests cover ``--diff``, read-only and unparsable
files, line endings and encodings, atomic writes and ``--rule``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import textwrap
from pathlib import Path

import pytest

from pt2lint.cli import cli
from pt2lint.commands.fix import RuleSelection, fix_one
from pt2lint.diagnostics import Applicability
from pt2lint.engine import lint_source
from pt2lint.fixes import CODEMOD_CODES
from pt2lint.fixes.apply import FixError, decode_file, fix_text, write_fixed
from pt2lint.settings import LintSettings, resolve_selection
from pt2lint.specs import load_specs
from clitools import cli_runner as runner

# Snippets stand for code that runs under torch.compile (the `assume-compiled` setting); the
# default, where a `cond` fix of code not known to be compiled is unsafe, is tested on its own.
SETTINGS = LintSettings(enabled=resolve_selection(), assume_compiled=True)
REPO = Path(__file__).resolve().parent.parent


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def fix(text: str, rule=None, unsafe=True) -> str:
    selection = RuleSelection(names=frozenset({rule})) if rule else RuleSelection()

    def select(d):
        return d.fix is not None and (d.fix.applicability is Applicability.SAFE or (unsafe and d.fix.applicability is Applicability.UNSAFE)) and (rule is None or d.fix.name == rule)

    out = fix_text(code(text), "m.py", SETTINGS, select_fix=select, names_for=selection.names_for)
    return out.text


def findings(text: str):
    return [(d.start.line, d.code) for d in lint_source(text, "m.py", SETTINGS).diagnostics]


def fix_of(text: str, code_: str, rule=None):
    names = (lambda d: [rule]) if rule else None
    diags = lint_source(code(text), "m.py", SETTINGS, fix_names=names).diagnostics
    return next(d.fix for d in diags if d.code == code_)




def run(*args, input=None):
    return runner().invoke(cli, list(args), input=input, catch_exceptions=False)


HEADER = "import torch\nimport torch.nn as nn\n\n\n"

# --------------------------------------------------------------------------- cond


def test_cond_missing_else_keeps_comments_and_clones_the_passthrough():
    src = HEADER + code(
        """
        class Gate(nn.Module):
            def forward(self, x):
                g = torch.sigmoid(x)
                # only when some gate is open
                if (g > 0.5).any():  # hot path
                    x = x + g  # update
                return x
        """
    )
    assert fix(src, "cond") == HEADER + code(
        """
        class Gate(nn.Module):
            def forward(self, x):
                g = torch.sigmoid(x)
                # only when some gate is open
                def _true_fn(x, g):  # hot path
                    x = x + g  # update
                    return x
                def _false_fn(x, g):
                    return x.clone()
                x = torch.cond((g > 0.5).any(), _true_fn, _false_fn, (x, g))
                return x
        """
    )
    # `x + torch.sigmoid(x)` is floating for an int64 `x` that the other branch keeps: torch.cond
    # raises for it (measured on torch 2.13), so the rewrite is not safe for an input of unknown dtype
    f = fix_of(src, "PTC104")
    assert f.applicability is Applicability.UNSAFE and "not proven to keep one dtype" in f.message, f.message


def test_cond_elif_chain_is_nested_and_item_test_uses_the_tensor():
    src = HEADER + code(
        """
        class Clip(nn.Module):
            def forward(self, x, y):
                if x.abs().max() > 10:
                    x = x.clamp(-10, 10)
                elif x.sum().item() < 0:
                    y = y * 3
                else:
                    y = y + 1
                return x, y
        """
    )
    out = fix(src, "cond")
    assert "x.sum() < 0" in out and ".item()" not in out
    assert "x, y = torch.cond(x.abs().max() > 10, _true_fn, _false_fn, (x, y))" in out
    assert "x, y = torch.cond(x.sum() < 0, _elif_true_fn, _elif_false_fn, (x, y))" in out
    assert "return x.clone(), y" in out
    assert findings(out) == []
    assert fix(out, "cond") == out


def test_cond_both_branches_return_and_early_return():
    src = HEADER + code(
        """
        class Both(nn.Module):
            def forward(self, x):
                if x.mean() > 0:
                    return x * 2, x
                else:
                    # keepdim: one rank in both branches (torch.cond raises on `x.sum(dim=0)` here)
                    return x - 1, x.sum(dim=0, keepdim=True)

        class Early(nn.Module):
            def forward(self, x, mask):
                if not mask.any():
                    return x
                y = x.masked_fill(mask, 0.0)
                return y
        """
    )
    out = fix(src, "cond")
    assert "return x * 2, x.clone()" in out  # an input passed through is cloned
    assert "return torch.cond(x.mean() > 0, _true_fn, _false_fn, (x,))" in out
    assert "return torch.cond(torch.logical_not(mask.any()), _true_fn, _false_fn, (x, mask))" in out
    assert findings(out) == []
    assert fix(out, "cond") == out


def test_comments_inside_a_rewritten_test_are_kept():
    src = HEADER + code(
        """
        class M(nn.Module):
            def forward(self, x):
                if (
                    x.mean() > 0  # positive on average
                    and x.sum() < 10  # and bounded
                ):
                    x = x - 1
                y = (x * 2  # doubled
                     if x.sum() > 1  # when large
                     else x)
                return y
        """
    )
    out = fix(src)
    out = fix(out, "where")
    for comment in ("# positive on average", "# and bounded", "# doubled", "# when large"):
        assert comment in out
    assert "torch.cond(torch.logical_and(x.mean() > 0, x.sum() < 10), _true_fn, _false_fn, (x,))" in out


def test_cond_outputs_that_alias_each_other_or_cast_are_handled():
    src = HEADER + code(
        """
        class M(nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    a = x * 2
                    b = a
                else:
                    a = x + 1
                    b = (x - 1) * 2
                return a, b
        """
    )
    # two outputs: offered unsafe (under inductor's backward two cond outputs failed, "cond_true
    # might be aliasing the input or the output"; pt2lint.fixes.cond_proof proves one output)
    f = fix_of(src, "PTC104")
    assert f.applicability is Applicability.UNSAFE and "2 outputs" in f.message, f.message
    cast = fix_of(src.replace("b = (x - 1) * 2", "b = (x - 1).double()"), "PTC104")
    assert cast.applicability is Applicability.DISPLAY_ONLY and "float64 in one branch" in cast.message  # a dtype clash: refused
    out = fix(src, "cond", unsafe=True)
    assert "return a, b.clone()" in out  # b is a second name for a: torch.cond rejects aliased outputs
    assert "return a, b\n" in out


def test_cond_keeps_a_leading_python_condition_as_a_plain_if():
    src = HEADER + code(
        """
        class M(nn.Module):
            def forward(self, x, mask=None):
                if self.training and not torch.isfinite(x).all():
                    x = torch.clamp(x, min=-1000, max=1000)
                if mask is not None and mask.any():
                    x = x.masked_fill(mask, 0.0)
                return x
        """
    )
    out = fix(src, "cond")
    assert "        if self.training:\n            def _true_fn(x):" in out
    assert "torch.cond(torch.logical_not(torch.isfinite(x).all()), _true_fn, _false_fn, (x,))" in out
    assert "        if mask is not None:\n            def _true_fn_1(x):" in out  # mask may be None: a closure, not an operand
    assert findings(out) == []
    assert fix(out, "cond") == out


def test_cond_item_comparison_is_done_in_float64_unless_the_literal_is_exact():
    src = HEADER + code(
        """
        class M(nn.Module):
            def __init__(self, threshold: float = 0.5):
                super().__init__()
                self.threshold = threshold

            def forward(self, x):
                if x.mean().item() > 0.1:
                    x = x * 2
                if float(x.max()) >= self.threshold:
                    x = x - 1
                if x.sum().item() < 0:
                    x = -x
                return x
        """
    )
    f = fix_of(src, "PTC101")
    assert f.name == "cond" and f.applicability is Applicability.SAFE
    out = fix(src, "cond", unsafe=False)
    # Python compared a float64 read from the tensor: so does the rewrite (exact for every float dtype)
    assert "torch.cond(x.mean().double() > 0.1," in out
    assert "torch.cond(x.max().double() >= self.threshold," in out
    assert "torch.cond(x.sum() < 0," in out  # 0 is exact in every dtype
    assert "torch.cond(torch.isnan(x).any()," in fix(src.replace("if x.sum().item() < 0:", "if bool(torch.isnan(x).any()):"), "cond")
    assert findings(out) == []


@pytest.mark.parametrize(
    "body, reason",
    [
        ("if x.sum() > 0:\n    print('pos')\n    x = x * 2\nreturn x", "PTC301"),
        ("if x.sum() > 0:\n    self.seen = x\n    x = x * 2\nreturn x", "assigns `self.seen`"),
        ("if x.sum() > 0:\n    x.mul_(2)\nreturn x", "in-place"),
        ("if x.sum() > 0:\n    x += 1\nreturn x", "in-place"),
        ("if x.sum() > 0:\n    extra = x * 2\nreturn x + extra", "assigned in some branches only"),
        ("if x > 0:\n    x = x * 2\nreturn x", "not provably a single value"),
        ("if x.sum() > 0:\n    n = 2\nelse:\n    n = 1\nreturn x * n", "can only return tensors"),
        ("for _ in range(3):\n    if x.sum() > 0:\n        break\n    x = x * 2\nreturn x", "`break`"),
        ("if x.sum() > 0:\n    y = x > 0\nelse:\n    y = x * 2\nreturn y", "dtype bool in one branch and"),
        ("if x.sum() > 0:\n    return x\nx = x * 2", "does not always return"),
        ("if x.sum() > 0:\n    x = x * 2\n    return x\nelse:\n    x = x - 1\nreturn x", "one branch returns"),
        ("if x.sum() > 0 < x.mean():\n    x = x * 2\nreturn x", "chained comparison"),
        ("if x is not None and x.any():\n    x = x * 2\nelse:\n    x = x - 1\nreturn x", "Python test"),
        ("if int(x.sum()) > 0:\n    x = x * 2\nreturn x", "truncates"),
        ("if x.sum() > 0:\n    yield x\nreturn x", "yield"),
    ],
)
def test_cond_refusals_leave_the_code_and_say_why(body, reason):
    src = HEADER + "class M(nn.Module):\n    def forward(self, x):\n" + textwrap.indent(body, " " * 8) + "\n"
    diags = lint_source(src, "m.py", SETTINGS, fix_names=lambda d: ["cond"]).diagnostics
    refusals = [d.fix for d in diags if d.fix is not None and d.fix.name == "cond"]
    assert refusals, [(d.code, d.message) for d in diags]
    assert all(f.applicability is Applicability.DISPLAY_ONLY and f.edits == () for f in refusals)
    assert any(reason in f.message for f in refusals), [f.message for f in refusals]
    assert fix(src, "cond") == src


def test_cond_adds_import_torch_when_missing_and_respects_an_alias():
    src = code(
        """
        from torch import nn

        class M(nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    x = x * 2
                return x
        """
    )
    out = fix(src, "cond")
    assert out.startswith("from torch import nn\nimport torch\n")
    assert "x = torch.cond(x.sum() > 0," in out
    aliased = "import torch as T\n" + src.replace("from torch import nn", "nn = T.nn")
    out = fix(aliased, "cond")
    assert "x = T.cond(x.sum() > 0," in out and "import torch\n" not in out


def test_cond_unverified_call_is_unsafe():
    src = HEADER + code(
        """
        from somewhere import helper

        class M(nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    x = helper(x)
                return x
        """
    )
    f = fix_of(src, "PTC104")
    assert f.applicability is Applicability.UNSAFE and "`somewhere.helper`" in f.message


def test_cond_is_unsafe_when_the_function_later_writes_the_input_in_place():
    # torch.cond returns a new tensor: `x.add_(1)` would stop mutating the caller's input.
    src = HEADER + code(
        """
        class M(nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    x = x * 2
                x.add_(1)
                return x
        """
    )
    f = fix_of(src, "PTC104")
    assert f.applicability is Applicability.UNSAFE and "writes `x` in place" in f.message
    clean = "".join(line for line in src.splitlines(keepends=True) if "add_" not in line)
    assert fix_of(clean, "PTC104").applicability is Applicability.SAFE


# --------------------------------------------------------------------------- where


def test_where_ternary_and_two_branch_assignment():
    src = HEADER + code(
        """
        class M(nn.Module):
            def forward(self, x):
                norm = x.norm()
                y = x / norm if norm > 1.0 else x
                if norm > 2:
                    z = y * 2  # boost
                else:
                    z = y
                return z
        """
    )
    ternary = fix_of(src, "PTC104", rule="where")
    assert ternary.applicability is Applicability.UNSAFE and "evaluates both sides" in ternary.message
    out = fix(src, "where")
    assert "y = torch.where(norm > 1.0, x / norm, x)" in out
    assert "# boost\n        z = torch.where(norm > 2, y * 2, y)" in out
    assert findings(out) == []
    assert fix(out, "where") == out
    assert fix(src, "where", unsafe=False) == src


# --------------------------------------------------------------------------- the others


def test_guard_wraps_prints_and_logging_safely_one_guard_per_run():
    src = code(
        """
        import logging
        import torch

        logger = logging.getLogger(__name__)


        class M(torch.nn.Module):
            def forward(self, x):
                print("shape", x.shape)  # debug
                logger.info("mean %s", x.mean())
                y = x * 2
                print(
                    "done",
                )
                return y
        """
    )
    out = fix(src, "guard", unsafe=False)
    assert out == src.replace(
        '        print("shape", x.shape)  # debug\n        logger.info("mean %s", x.mean())\n',
        '        if not torch.compiler.is_compiling():\n            print("shape", x.shape)  # debug\n            logger.info("mean %s", x.mean())\n',
    ).replace(
        '        print(\n            "done",\n        )\n',
        '        if not torch.compiler.is_compiling():\n            print(\n                "done",\n            )\n',
    )
    assert findings(out) == []
    assert fix(out, "guard") == out


def test_out_of_place_is_unsafe_and_keeps_precedence():
    src = HEADER + code(
        """
        class M(nn.Module):
            def forward(self, x, y):
                x.add_(y, alpha=2)
                y *= x + 1
                return x, y
        """
    )
    f = fix_of(src, "PTC401")
    assert f.name == "out-of-place" and f.applicability is Applicability.UNSAFE
    assert fix(src, unsafe=False) == src
    out = fix(src)
    assert "x = x.add(y, alpha=2)" in out and "y = y * (x + 1)" in out
    assert [c for _, c in findings(out)] == []


def test_out_of_place_refuses_when_another_name_for_the_input_is_read_later():
    src = HEADER + code(
        """
        class M(nn.Module):
            def forward(self, hidden_states):
                residual = hidden_states
                residual *= 0.5
                return residual + hidden_states
        """
    )
    f = fix_of(src, "PTC401")
    assert f.applicability is Applicability.DISPLAY_ONLY and "`hidden_states` shares storage" in f.message
    assert fix(src) == src


def test_out_of_place_methods_exist_in_torch():
    torch = pytest.importorskip("torch")
    from pt2lint.fixes.out_of_place import OUT_OF_PLACE

    missing = [m for m in OUT_OF_PLACE if not hasattr(torch.Tensor, m) or not hasattr(torch.Tensor, m[:-1])]
    assert missing == []


def test_scalar_tensor_only_in_tensor_arithmetic():
    src = HEADER + code(
        """
        class M(nn.Module):
            def forward(self, x, t):
                y = x * t.item()
                z = x / x.abs().max().item()
                n = t.item() + 1
                return y, z, n
        """
    )
    out = fix(src, "scalar-tensor")
    assert "y = x * t.detach().reshape(())" in out
    assert "z = x / x.abs().max().detach()" in out
    assert "n = t.item() + 1" in out  # a Python number: left alone
    assert [ln for ln, c in findings(out) if c == "PTC101"] == [9]
    assert fix(out, "scalar-tensor") == out


# --------------------------------------------------------------------------- properties


def _spec_examples():
    for spec in load_specs().values():
        for i, ex in enumerate(spec.examples):
            if ex.kind == "bad" and spec.code != "PTC001":
                yield pytest.param(spec.code, ex.code, id=f"{spec.code}-{i}")


@pytest.mark.parametrize("rule_code, src", list(_spec_examples()))
def test_every_fix_on_spec_examples_parses_is_idempotent_and_removes_its_finding(rule_code, src):
    before = lint_source(src, "m.py", SETTINGS).diagnostics
    applied = [d for d in before if d.fix is not None and d.fix.edits]
    out = fix_text(src, "m.py", SETTINGS, select_fix=lambda d: d.fix is not None and d.fix.applicability is not Applicability.DISPLAY_ONLY)
    compile(out.text, "m.py", "exec")
    again = fix_text(out.text, "m.py", SETTINGS, select_fix=lambda d: d.fix is not None and d.fix.applicability is not Applicability.DISPLAY_ONLY)
    assert again.text == out.text
    left = {(d.code, d.fix.name if d.fix else None) for d in lint_source(out.text, "m.py", SETTINGS).diagnostics}
    for d in applied:
        assert (d.code, d.fix.name) not in left or d.code not in CODEMOD_CODES[d.fix.name]


def test_fixture_models_fix_parses_and_is_idempotent():
    for path in sorted((REPO / "fixtures" / "models").glob("*.py")):
        result = fix_one(str(path), path.name, SETTINGS, RuleSelection(), unsafe=True)
        assert result.error is None, result.error
        compile(result.text, path.name, "exec")
        again = fix_one(str(path), path.name, SETTINGS, RuleSelection(), unsafe=True, data=result.text.encode())
        assert again.text == result.text, path.name


# --------------------------------------------------------------------------- CLI

MODEL = HEADER + code(
    """
    class M(nn.Module):
        def forward(self, x):
            print("x", x.shape)
            if x.sum() > 0:
                x = x * 2
            return x
    """
)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.pt2lint]\nassume-compiled = true\n")
    return tmp_path


def test_fix_writes_and_second_run_is_clean(project):
    path = project / "m.py"
    path.write_text(MODEL)
    os.chmod(path, 0o640)
    result = run("fix", "m.py")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert "Fixed 2 findings in 1 file; nothing left" in result.stderr
    text = path.read_text()
    assert "torch.cond(" in text and "if not torch.compiler.is_compiling():" in text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert [p.name for p in project.iterdir() if p.name.startswith(".pt2lint-fix")] == []
    again = run("fix", "m.py")
    assert again.exit_code == 0 and path.read_text() == text
    assert "Fixed 0 findings in 0 files; nothing left" in again.stderr


def test_diff_writes_nothing_and_exits_1(project):
    path = project / "m.py"
    path.write_text(MODEL)
    result = run("fix", "--diff", ".")
    assert result.exit_code == 1
    assert path.read_text() == MODEL
    assert result.stdout.startswith("--- a/m.py\n+++ b/m.py\n@@ ")
    assert "+        x = torch.cond(x.sum() > 0, _true_fn, _false_fn, (x,))\n" in result.stdout
    assert "Would fix 2 findings in 1 file" in result.stderr
    clean = project / "m.py"
    clean.write_text("x = 1\n")
    assert run("fix", "--diff", ".").exit_code == 0


@pytest.mark.parametrize("newline", ["\r", "\r\n"])
@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
def test_diff_applies_with_patch_to_files_with_carriage_returns(project, newline):
    # a lone CR is a line break for CPython but not for patch/git apply: the diff used to cut
    # lines there and end them without a newline, and patch called it malformed
    source = MODEL.replace("if x.sum() > 0:\n", "if x.sum() > 0:" + newline)
    assert source != MODEL
    (project / "m.py").write_bytes(source.encode())
    result = run("fix", "--unsafe-fixes", "--diff", "m.py")
    assert result.exit_code == 1 and result.stdout.startswith("--- a/m.py\n"), result.stdout
    (project / "d.patch").write_bytes(result.stdout_bytes)  # (.stdout turns \r\n into \n)
    applied = subprocess.run(["patch", "--binary", "-p1", "-i", "d.patch"], cwd=project, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    patched = (project / "m.py").read_bytes()
    (project / "m.py").write_bytes(source.encode())
    assert run("fix", "--unsafe-fixes", "m.py").exit_code == 0
    assert (project / "m.py").read_bytes() == patched


def test_rule_cond_runs_only_cond(project):
    path = project / "m.py"
    path.write_text(MODEL)
    result = run("fix", "--rule", "cond", "m.py")
    assert result.exit_code == 0, result.stdout + result.stderr
    text = path.read_text()
    assert "torch.cond(" in text and 'print("x", x.shape)\n' in text and "is_compiling" not in text
    # the print is not what `--rule cond` is about: it is neither reported nor counted
    assert "PTC301" not in result.stdout


def test_rule_accepts_codes_prefixes_names_and_rejects_others(project):
    path = project / "m.py"
    path.write_text(MODEL)
    assert run("fix", "--diff", "--rule", "PTC3").stdout.count("is_compiling") == 1
    assert run("fix", "--diff", "--rule", "print-call").stdout.count("is_compiling") == 1
    assert "torch.cond" in run("fix", "--diff", "--rule", "PTC104,guard").stdout
    bad = run("fix", "--rule", "nonsense", "m.py")
    assert bad.exit_code == 2 and "unknown --rule 'nonsense'" in bad.stderr


def test_unsafe_fixes_are_listed_not_applied_without_the_flag(project):
    path = project / "m.py"
    src = HEADER + "class M(nn.Module):\n    def forward(self, x, y):\n        x.add_(y)\n        return x\n"
    path.write_text(src)
    result = run("fix", "m.py")
    assert result.exit_code == 1
    assert path.read_text() == src
    assert "m.py:7:11: PTC401" in result.stdout
    assert "out-of-place (unsafe, apply with --unsafe-fixes)" in result.stdout
    assert "(1 with an unsafe fix: --unsafe-fixes)" in result.stderr
    result = run("fix", "--unsafe-fixes", "m.py")
    assert result.exit_code == 0 and "x = x.add(y)" in path.read_text()


def test_refusal_reason_is_printed_and_exit_is_1(project):
    path = project / "m.py"
    src = HEADER + "class M(nn.Module):\n    def forward(self, x):\n        if x > 0:\n            x = x * 2\n        return x\n"
    path.write_text(src)
    result = run("fix", "--rule", "cond", "m.py")
    assert result.exit_code == 1
    assert path.read_text() == src
    assert "[suggested fix]\n  = cond: not rewritten as torch.cond: `x` is not provably a single value" in result.stdout


def test_read_only_file_is_reported_and_untouched(project):
    path = project / "m.py"
    path.write_text(MODEL)
    os.chmod(path, 0o444)
    try:
        result = run("fix", "m.py")
        assert result.exit_code == 2
        assert "error: m.py: read-only file, not fixed" in result.stderr
        assert path.read_text() == MODEL
        assert [p.name for p in project.iterdir() if p.name.startswith(".pt2lint-fix")] == []
    finally:
        os.chmod(path, 0o644)


LEFT_MODEL = HEADER + code(
    """
    class M(nn.Module):
        def forward(self, x):
            print("x", x.shape)
            return x * x.abs().max().item()
    """
)


@pytest.mark.parametrize("how", ["read-only", "link out of the project"])
def test_a_file_fix_cannot_write_reports_the_findings_it_still_has(tmp_path, monkeypatch, how):
    """Nothing was written, so what is left is what `check` finds in the file: the print the
    fix would have guarded included, at the lines the file has (not those of the fixed text)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    if how == "read-only":
        path = root / "m.py"
        path.write_text(LEFT_MODEL)
        os.chmod(path, 0o444)
    else:
        (tmp_path / "outside").mkdir()
        (tmp_path / "outside" / "o.py").write_text(LEFT_MODEL)
        os.symlink(str(tmp_path / "outside" / "o.py"), str(root / "m.py"))
    monkeypatch.chdir(root)
    try:
        checked = run("check", "--no-cache", "m.py")
        assert [line.split()[:2] for line in checked.stdout.splitlines()] == [["m.py:7:9:", "PTC301"], ["m.py:8:34:", "PTC101"]]
        result = run("fix", "--no-cache", "m.py")
        assert result.exit_code == 2
        assert (root / "m.py").read_text() == LEFT_MODEL
        left = [line.split()[:2] for line in result.stdout.splitlines() if not line.startswith("  =")]
        assert left == [["m.py:7:9:", "PTC301"], ["m.py:8:34:", "PTC101"]], result.stdout
        assert "guard:" in result.stdout and "Fixed 0 findings in 0 files; 2 findings left" in result.stderr
        doc = json.loads(run("fix", "--no-cache", "--output-format", "json", "m.py").stdout)
        assert [(d["code"], d["location"]["row"]) for d in doc["remaining"]] == [("PTC301", 7), ("PTC101", 8)]
        assert doc["files"] == []
    finally:
        if how == "read-only":
            os.chmod(root / "m.py", 0o644)


def test_syntax_error_file_is_reported_and_untouched_others_are_fixed(project):
    broken = project / "broken.py"
    broken.write_text("def f(:\n    pass\n" + MODEL)
    good = project / "good.py"
    good.write_text(MODEL)
    result = run("fix", ".")
    assert result.exit_code == 2
    assert "error: broken.py: cannot parse: SyntaxError: invalid syntax (line 1); not fixed" in result.stderr
    assert broken.read_text() == "def f(:\n    pass\n" + MODEL
    assert "torch.cond(" in good.read_text()


def test_crlf_bom_and_coding_line_are_kept(project):
    crlf = project / "crlf.py"
    crlf.write_bytes(MODEL.replace("\n", "\r\n").encode())
    latin = project / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# caf\xe9\n" + MODEL).encode("latin-1"))
    bom = project / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + MODEL.encode())
    result = run("fix", ".")
    assert result.exit_code == 0, result.stderr
    data = crlf.read_bytes()
    assert b"torch.cond(" in data and data.count(b"\n") == data.count(b"\r\n")
    ldata = latin.read_bytes()
    assert b"caf\xe9" in ldata and b"torch.cond(" in ldata
    bdata = bom.read_bytes()
    assert bdata.startswith(b"\xef\xbb\xbf") and bdata.count(b"\xef\xbb\xbf") == 1 and b"torch.cond(" in bdata


def test_write_is_atomic_and_skips_a_file_changed_since_read(project, monkeypatch):
    path = project / "m.py"
    path.write_text(MODEL)
    src = decode_file(path.read_bytes())
    path.write_text(MODEL + "# edited meanwhile\n")
    with pytest.raises(FixError, match="changed since it was read"):
        write_fixed(str(path), src, "new text\n")
    assert path.read_text().endswith("# edited meanwhile\n")

    path.write_text(MODEL)
    src = decode_file(path.read_bytes())

    def boom(a, b):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(FixError, match="no space left on device"):
        write_fixed(str(path), src, "new text\n")
    assert path.read_text() == MODEL
    assert [p.name for p in project.iterdir() if p.name.startswith(".pt2lint-fix")] == []


def test_stdin_prints_the_fixed_code_and_findings_go_to_stderr(project):
    result = run("fix", "--rule", "cond", "-", input=MODEL)
    assert result.exit_code == 0
    assert "torch.cond(" in result.stdout and result.stdout.startswith("import torch\n")
    diff = run("fix", "--diff", "-", "--stdin-filename", "models/m.py", input=MODEL)
    assert diff.exit_code == 1 and diff.stdout.startswith("--- a/models/m.py\n")


def test_check_fix_then_reports_what_is_left(project):
    path = project / "m.py"
    path.write_text(MODEL + "\n\nclass N(nn.Module):\n    def forward(self, x, y):\n        x.add_(y)\n        return x\n")
    result = run("check", "--fix", "--no-cache", ".")
    assert result.exit_code == 1
    assert "PTC401" in result.stdout and "PTC104" not in result.stdout and "PTC301" not in result.stdout
    assert "torch.cond(" in path.read_text()
    result = run("check", "--fix", "--unsafe-fixes", "--no-cache", ".")
    assert result.exit_code == 0, result.stdout
    assert run("check", "--fix", "-", input=MODEL).exit_code == 2


def test_check_json_shows_edits_and_applicability_and_text_marks_fixes(project):
    path = project / "m.py"
    path.write_text(MODEL)
    out = json.loads(run("check", "--no-cache", "--output-format", "json", ".").stdout)
    by_code = {d["code"]: d for d in out}
    assert by_code["PTC104"]["fix"]["applicability"] == "safe"
    assert by_code["PTC301"]["fix"]["applicability"] == "safe"
    edit = by_code["PTC104"]["fix"]["edits"][0]
    assert edit["location"] == {"row": 8, "column": 1} and "torch.cond(" in edit["content"]
    text = run("check", "--no-cache", ".").stdout
    assert "PTC104" in text and text.count("[fix available]") == 2


def test_diff_reports_leftover_findings_at_the_lines_on_disk(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "m.py"
    path.write_text(
        "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        if x.sum() > 0:\n            x = x * 2\n        y = x.tolist()\n        return x, y\n"
    )
    before = path.read_text()
    out = subprocess.run([sys.executable, "-m", "pt2lint", "fix", "--diff", str(path)], capture_output=True, text=True)
    assert out.returncode == 1
    assert path.read_text() == before  # --diff writes nothing
    assert f"{path}:9:15: PTC102" in out.stdout + out.stderr  # line 9 on disk, not in the rewrite


def test_fix_reads_the_result_cache_unless_no_cache(tmp_path, monkeypatch):
    """Files whose cached check result has nothing a codemod handles are not re-analysed; --no-cache re-analyses all."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.pt2lint]\n")
    (tmp_path / "printing.py").write_text(code("""
        import torch

        class Net(torch.nn.Module):
            def forward(self, x):
                print("shape", x.shape)
                return x * 2
    """))
    (tmp_path / "listing.py").write_text(code("""
        import torch

        class Lister(torch.nn.Module):
            def forward(self, x):
                return x.tolist()
    """))
    assert run("check", "--cache-dir", "c", "-j", "1", ".").exit_code == 1
    entries = list((tmp_path / "c").rglob("*.json"))
    assert len(entries) == 2
    # Make the cache say listing.py is clean (signed with this user's own secret, as an entry
    # pt2lint wrote): a fix run that reads the cache must believe it.
    from pt2lint.cache import _signature, cache_secret

    for entry in entries:
        data = json.loads(entry.read_text())
        if any(d["code"] == "PTC102" for d in data["diagnostics"]):
            data.pop("signature")
            data["diagnostics"] = []
            data["signature"] = _signature(cache_secret(), entry.stem, data)
            entry.write_text(json.dumps(data))
    cached = run("fix", "--cache-dir", "c", "-j", "1", "--diff", ".")
    assert "PTC102" not in cached.stdout + cached.stderr
    assert "print" in cached.stdout and "is_compiling" in cached.stdout  # printing.py was still fixed
    fresh = run("fix", "--no-cache", "--cache-dir", "c", "-j", "1", "--diff", ".")
    assert "listing.py:5:18: PTC102" in fresh.stdout + fresh.stderr
    assert fresh.stdout.count("is_compiling") == cached.stdout.count("is_compiling")
    # Without poisoning, reading the cache changes nothing but the time taken.
    assert run("check", "--no-cache", "-j", "1", ".").exit_code == 1
    applied = run("fix", "--cache-dir", "c2", "-j", "1", ".")
    assert applied.exit_code == 1 and "listing.py:5:18: PTC102" in applied.stdout + applied.stderr
    assert "is_compiling" in (tmp_path / "printing.py").read_text()
