"""The ``mask-index`` codemod: ``x[mask].sum()`` -> ``torch.where(mask, x, 0).sum()``, ``mean`` as sum/count.

Text-level tests (no torch) pin the rewrites, idempotence, the refusals and the masks that
must not be claimed (not built from ``x``, lower rank).  With torch, each equivalence the
codemod relies on is measured on random, empty, full and NaN-holding masks for every
common dtype, and the fixture ``fixtures/fix/mask_index/masked_stats.py`` is fixed and
compared (outputs and gradients), then compiled with ``fullgraph=True``.
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

SETTINGS = LintSettings(enabled=resolve_selection())
FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "fix" / "mask_index" / "masked_stats.py"
HEADER = "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x, y, t):\n"


def module(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", " " * 8)


def fixed(text: str, unsafe: bool = True) -> str:
    def select(d):
        f = d.fix
        return f is not None and f.name == "mask-index" and (f.applicability is Applicability.SAFE or (unsafe and f.applicability is Applicability.UNSAFE))

    return fix_text(text, "m.py", SETTINGS, select_fix=select, names_for=lambda d: ["mask-index"]).text


def mask_fixes(text: str):
    diags = lint_source(text, "m.py", SETTINGS, fix_names=lambda d: ["mask-index"]).diagnostics
    return [d.fix for d in diags if d.fix is not None and d.fix.name == "mask-index"]


def test_sum_and_mean_are_safe_with_precedence_kept():
    src = module(
        """
        a = x[x > 0].sum()  # positives
        b = 2 * x[~torch.isnan(x)].mean()
        c = x[(x < 1) & (x > t.mean())].sum()
        d = torch.sum(x[x != 0])
        return a + b + c + d
        """
    )
    fixes = mask_fixes(src)
    assert [f.applicability for f in fixes] == [Applicability.SAFE] * 4
    assert "raises the original's RuntimeError for an integer or bool one" in fixes[1].message
    out = fixed(src)
    assert out == module(
        """
        a = torch.where(x > 0, x, 0).sum()  # positives
        b = 2 * (torch.where(~torch.isnan(x), x, 0).sum(dtype=torch.promote_types(x.dtype, torch.float32)) / (~torch.isnan(x)).sum()).to(x.dtype).mean()
        c = torch.where((x < 1) & (x > t.mean()), x, 0).sum()
        d = torch.where(x != 0, x, 0).sum()
        return a + b + c + d
        """
    )
    assert fixed(out) == out
    assert not [d for d in lint_source(out, "m.py", SETTINGS).diagnostics if d.code == "PTC201"]
    assert fixed(src, unsafe=False) == out


@pytest.mark.parametrize(
    "body, reason",
    [
        ("return x[x > 0].max()", "empty selection raises"),
        ("return x[x > 0].sum(0)", "some dimensions only"),
        ("return torch.sum(x[x > 0], dim=0)", "some dimensions only"),
        ("return x[y > 0].sum()", "not provably of the indexed tensor's shape"),
        ("return x[(x > 0) & (y > 0)].sum()", "not provably of the indexed tensor's shape"),
        ("return x[x > y].sum()", "not provably of the indexed tensor's shape"),
        ("return (x + 1)[x > 0].sum()", "not a name or attribute"),
    ],
)
def test_refusals_say_why_and_leave_the_code(body, reason):
    src = module("y = torch.randn(3)\n" + body if "y" in body else body)
    fixes = mask_fixes(src)
    assert fixes and all(f.applicability is Applicability.DISPLAY_ONLY for f in fixes), [f.message for f in fixes]
    assert reason in fixes[0].message
    assert fixed(src) == src


def test_a_mask_name_bound_once_from_x_is_proven_unless_x_is_rebound():
    src = module(
        """
        valid = ~torch.isnan(x)
        return x[valid].sum()
        """
    )
    assert fixed(src, unsafe=False).endswith("        return torch.where(valid, x, 0).sum()\n")
    rebound = module(
        """
        valid = ~torch.isnan(x)
        x = torch.cat([x, x])
        return x[valid].sum()
        """
    )
    fixes = mask_fixes(rebound)
    assert fixes and fixes[0].applicability is Applicability.DISPLAY_ONLY and "not provably" in fixes[0].message
    twice = module(
        """
        valid = x > 0
        valid = y > 0
        return x[valid].sum()
        """
    )
    assert all(f.applicability is Applicability.DISPLAY_ONLY for f in mask_fixes(twice))


def test_selections_not_reduced_are_not_claimed():
    for body in ("return x[x > 0]", "return x[x > 0] * 2", "return x[x > 0].abs().sum()"):
        assert not mask_fixes(module(body)), body


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_measured_equivalences_on_random_and_edge_inputs():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    floating = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
    for dtype in floating + (torch.int32, torch.int64, torch.uint8, torch.bool):
        x = (torch.randn(6, 9, generator=gen) * 10).abs().to(dtype) if dtype is torch.uint8 else (torch.randn(6, 9, generator=gen) * 10).to(dtype)
        masks = {
            "random": torch.randn(6, 9, generator=gen) > 0,
            "empty": torch.zeros(6, 9, dtype=torch.bool),
            "full": torch.ones(6, 9, dtype=torch.bool),
        }
        for label, mask in masks.items():
            a, b = x[mask].sum(), torch.where(mask, x, 0).sum()
            assert a.dtype == b.dtype and a.shape == b.shape, (dtype, label)
            if dtype in floating:
                torch.testing.assert_close(b, a, msg=f"{dtype} {label}")
            else:
                assert torch.equal(a, b), (dtype, label)
            new_mean = (torch.where(mask, x, 0).sum(dtype=torch.promote_types(x.dtype, torch.float32)) / mask.sum()).to(x.dtype)
            if dtype in floating:
                old_mean = x[mask].mean()
                assert old_mean.dtype == new_mean.dtype
                torch.testing.assert_close(new_mean, old_mean, equal_nan=True, msg=f"{dtype} {label}")
                assert old_mean.isnan().item() == (label == "empty")
            else:
                with pytest.raises(RuntimeError, match="mean") as old_error:  # why the form ends in .mean()
                    x[mask].mean()
                assert not new_mean.is_floating_point()  # a number (cast back), not an error
                with pytest.raises(RuntimeError) as new_error:
                    new_mean.mean()
                assert str(new_error.value) == str(old_error.value)
        with pytest.raises(RuntimeError):  # why max is refused
            x[masks["empty"]].max()
    # NaN outside the mask is ignored by both; gradients are identical
    x = torch.randn(5, 7, generator=gen)
    x[0, 0] = float("nan")
    torch.testing.assert_close(torch.where(~x.isnan(), x, 0).sum(), x[~x.isnan()].sum())
    x = torch.randn(5, 7, generator=gen, requires_grad=True)
    mask = x.detach() > 0
    (g1,) = torch.autograd.grad(x[mask].sum(), x)
    (g2,) = torch.autograd.grad(torch.where(mask, x, 0).sum(), x)
    assert torch.equal(g1, g2)
    # a mask of lower rank: indexing selects rows, torch.where broadcasts from the right (why shapes must match)
    rows = torch.randn(5, generator=gen) > 0
    x[rows].sum()
    with pytest.raises(RuntimeError):
        torch.where(rows, x, 0).sum()
    cols = torch.randn(7, generator=gen) > 0
    torch.where(cols, x, 0).sum()
    with pytest.raises(IndexError):
        x[cols].sum()


def test_fixture_is_equivalent_and_compiles_fullgraph(tmp_path):
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo

    selection = RuleSelection(names=frozenset({"mask-index"}))
    result = fix_one(str(FIXTURE), FIXTURE.name, SETTINGS, selection, unsafe=True)
    assert result.error is None and result.changed
    path = tmp_path / "masked_stats_fixed.py"
    path.write_text(result.text)
    assert not [d for d in lint_source(result.text, "f.py", SETTINGS).diagnostics if d.code == "PTC201"]
    again = fix_one(str(path), path.name, SETTINGS, selection, unsafe=True)
    assert again.error is None and not again.changed
    orig, new = _load(FIXTURE, "_mask_orig"), _load(path, "_mask_new")
    m1, m2 = orig.make_model(), new.make_model()
    m2.load_state_dict(m1.state_dict())
    for (x,) in orig.inputs():
        outs = []
        for m in (m1, m2):
            m.zero_grad(set_to_none=True)
            xi = x.clone().requires_grad_(True)
            out = m(xi)
            out.backward()
            outs.append((out.detach(), xi.grad, {n: p.grad for n, p in m.named_parameters()}))
        (o1, g1, p1), (o2, g2, p2) = outs
        torch.testing.assert_close(o2, o1, equal_nan=True)
        torch.testing.assert_close(g2, g1, equal_nan=True)
        for key in p1:
            torch.testing.assert_close(p2[key], p1[key], equal_nan=True, msg=key)
    dynamo.reset()
    before = dynamo.explain(m1)(*orig.inputs()[0])
    assert before.graph_break_count >= 1
    dynamo.reset()
    after = dynamo.explain(m2)(*orig.inputs()[0])
    assert after.graph_break_count == 0, [str(r.reason) for r in after.break_reasons]
    dynamo.reset()
    compiled = torch.compile(m2, fullgraph=True, backend="eager")
    for inp in orig.inputs():
        torch.testing.assert_close(compiled(*inp), m1(*inp), equal_nan=True)


PROVEN_MEANS = {
    # a Linear output, a name a Linear read before, a name `std` read before, a cast
    "linear_output": "h = self.fc(x)\nm = h[h > 0].mean()\nreturn h - m",
    "linear_input": "h = self.fc(x)\nm = x[x.abs() < 3].mean()\nreturn h * m",
    "std_before": "s = x.std()\nm = x[x > s].mean()\nreturn m",
    "cast": "h = x.float()\nm = h[torch.isfinite(h)].mean()\nreturn h - m",
}
# not proven floating (an input of unknown dtype, `mean` of the input only in one branch of an
# `if`, a Linear reading another tensor): the form ends in `.mean()`, which raises as the original
UNPROVEN_MEANS = {
    "raw_input": "m = x[torch.isfinite(x)].mean()\nreturn x - m",
    "conditional_use": "if t:\n    s = x.std()\nm = x[x > 0].mean()\nreturn m",
    "other_tensor_into_linear": "h = self.fc(y)\nm = x[x > 0].mean()\nreturn h * m",
}


def _fc_module(body: str) -> str:
    return (
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x, y, t):\n" + textwrap.indent(body + "\n", " " * 8)
    )


@pytest.mark.parametrize("name", sorted(PROVEN_MEANS))
def test_mean_of_a_proven_floating_tensor_is_safe(name):
    fixes = mask_fixes(_fc_module(PROVEN_MEANS[name]))
    assert len(fixes) == 1 and fixes[0].applicability is Applicability.SAFE, [f.message for f in fixes]
    assert "proven floating" in fixes[0].message
    out = fixed(_fc_module(PROVEN_MEANS[name]), unsafe=False)
    assert "promote_types" in out and fixed(out) == out


@pytest.mark.parametrize("name", sorted(UNPROVEN_MEANS))
def test_mean_of_a_tensor_not_proven_floating_keeps_the_raise(name):
    fixes = mask_fixes(_fc_module(UNPROVEN_MEANS[name]))
    assert len(fixes) == 1 and fixes[0].applicability is Applicability.SAFE, [f.message for f in fixes]
    assert "not proven floating" in fixes[0].message
    out = fixed(_fc_module(UNPROVEN_MEANS[name]), unsafe=False)
    assert ".to(x.dtype).mean()" in out and fixed(out) == out


def test_mean_of_an_integer_tensor_is_refused():
    # `.mean()` of an int64 selection raises for every input: nothing to rewrite
    text = _fc_module("h = x.long()\nm = h[h > 0].mean()\nreturn m")
    fixes = mask_fixes(text)
    assert len(fixes) == 1 and fixes[0].applicability is Applicability.DISPLAY_ONLY, [f.message for f in fixes]
    assert "int64" in fixes[0].message and "raises for every input" in fixes[0].message


def test_mean_form_is_measured_exact_for_floating_tensors():
    """The proven form against ``x[mask].mean()``: values, dtype, all-False masks (NaN in both),
    gradients, the float16 overflow of a plain sum, and compiled with ``fullgraph=True``."""
    torch = pytest.importorskip("torch")

    def new(x, mask):
        return (torch.where(mask, x, 0).sum(dtype=torch.promote_types(x.dtype, torch.float32)) / mask.sum()).to(x.dtype)

    gen = torch.Generator().manual_seed(1)
    compiled = torch.compile(new, fullgraph=True, backend="eager")
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        base = torch.randn(6, 9, generator=gen) * 10
        base[0, 0] = float("inf")
        for label, mask in {
            "random": torch.randn(6, 9, generator=gen) > 0,
            "finite": torch.isfinite(base),
            "empty": torch.zeros(6, 9, dtype=torch.bool),
            "full": torch.ones(6, 9, dtype=torch.bool),
        }.items():
            x1 = base.to(dtype).requires_grad_(True)
            x2 = base.to(dtype).requires_grad_(True)
            a, b = x1[mask].mean(), new(x2, mask)
            assert a.dtype == b.dtype and a.shape == b.shape, (dtype, label)
            torch.testing.assert_close(b, a, equal_nan=True, msg=f"{dtype} {label}")
            assert a.isnan().item() == (label == "empty")
            (g1,) = torch.autograd.grad(a, x1, allow_unused=True)
            (g2,) = torch.autograd.grad(b, x2, allow_unused=True)
            torch.testing.assert_close(g2, g1, equal_nan=True, msg=f"grad {dtype} {label}")
            torch.testing.assert_close(compiled(x2.detach(), mask), a.detach(), equal_nan=True)
            # the form for a tensor not proven floating: the 0-d .mean() is the identity
            guarded = new(x2, mask).mean()
            assert guarded.dtype == b.dtype and guarded.shape == b.shape
            torch.testing.assert_close(guarded, b, equal_nan=True)
            (g3,) = torch.autograd.grad(guarded, x2, allow_unused=True)
            torch.testing.assert_close(g3, g2, equal_nan=True)
    # ... and for an integer or bool tensor it raises what the original raises, eager and compiled
    guarded_compiled = torch.compile(lambda x, mask: new(x, mask).mean(), fullgraph=True)
    original_compiled = torch.compile(lambda x, mask: x[mask].mean())
    for dtype in (torch.int64, torch.int32, torch.int8, torch.uint8, torch.bool):
        x = torch.ones(3, 4, dtype=dtype)
        mask = x != 0
        with pytest.raises(RuntimeError) as old_error:
            x[mask].mean()
        with pytest.raises(RuntimeError) as new_error:
            new(x, mask).mean()
        assert str(new_error.value) == str(old_error.value)
        torch._dynamo.reset()
        with pytest.raises(RuntimeError) as old_error:
            original_compiled(x, mask)
        with pytest.raises(RuntimeError) as new_error:
            guarded_compiled(x, mask)
        assert type(new_error.value) is type(old_error.value)
    # why the sum is accumulated in float32: a float16 sum of the selection overflows
    big = torch.full((2000,), 100.0, dtype=torch.float16)
    keep = big > 0
    assert torch.isinf(torch.where(keep, big, 0).sum() / keep.sum())
    assert new(big, keep).item() == big[keep].mean().item() == 100.0
