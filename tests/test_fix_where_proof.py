"""A ``where`` fix is safe only where ``torch.where(pred, a, b)`` is proven exactly ``a if pred else b``.

The static tests check what the analysis proves and what it keeps unsafe (the near misses);
the measured test runs the proven form and the near misses on torch, eager, on every floating
dtype and both predicate values, and checks that exactly the proven ones agree in values,
dtypes, shapes and gradients (``None`` included).
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.diagnostics import Applicability
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings

HEADER = "import torch\nimport torch.nn as nn\n\n\n"


def module(forward: str, init: str = "self.proj = nn.Linear(6, 6)") -> str:
    return (
        HEADER
        + "class Gate(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        + textwrap.indent(textwrap.dedent(init).strip("\n"), " " * 8)
        + "\n\n    def forward(self, x):\n"
        + textwrap.indent(textwrap.dedent(forward).strip("\n"), " " * 8)
        + "\n"
    )


def where_fix(text: str):
    diags = lint_source(text, "m.py", LintSettings(), fix_names=lambda d: ["where"]).diagnostics
    fixes = [d.fix for d in diags if d.fix is not None and d.fix.name == "where"]
    assert fixes, [(d.code, d.message, d.fix) for d in diags]
    return fixes[0]


# the convertible shapes: a floating tensor (a Linear output, or an input reduced by std before),
# a 0-d test, affine sides of the same tensor
PROVEN = {
    "ternary": "z = self.proj(x)\nm = z.mean()\nout = (z - 1.0) / 4 if m < 0.25 else -z * 3\nreturn out",
    "if_else": "z = self.proj(x)\nif z.amax() > 2:\n    out = z / 2\nelse:\n    out = 0.5 - z\nreturn out",
    "std_input": "spread = x.std()\nout = x * 0.1 if spread > 1 else x + 1\nreturn out",
}

# each must stay unsafe, with the reason named
NEAR_MISSES = {
    "sqrt_side": ("z = self.proj(x)\nout = z.sqrt() if z.sum() > 0 else z * 2\nreturn out", "not arithmetic of one tensor"),
    "reciprocal_side": ("z = self.proj(x)\nout = 1 / z if z.sum() > 0 else z * 2\nreturn out", "divides by a tensor"),
    "bare_side": ("z = self.proj(x)\nout = z if z.sum() > 0 else z * 2\nreturn out", "the tensor itself"),
    "two_tensors": ("z = self.proj(x)\nout = z * 2 if z.sum() > 0 else x * 2\nreturn out", "different tensors"),
    "unknown_dtype": ("out = x * 2 if x.sum() > 0 else x * 0.5\nreturn out", "not proven floating"),
    "tensor_product": ("z = self.proj(x)\nout = z * z if z.sum() > 0 else z * 2\nreturn out", "multiplies two tensors"),
    "zero_divisor": ("z = self.proj(x)\nout = z / 0.0 if z.sum() > 0 else z * 2\nreturn out", "divisor 0"),
    "big_factor": ("z = self.proj(x)\nout = z * 1e6 if z.sum() > 0 else z * 2\nreturn out", "overflows float16"),
    # one element, not 0-d: a test of shape (1, 1) would broadcast a 1-d `z` to 2-d
    "test_not_0d": (
        "z = self.proj(x)\ng = z.sum(dim=(0, 1), keepdim=True)\nout = z * 2 if g.item() > 0 else z * 3\nreturn out",
        "not proven 0-d",
    ),
}


@pytest.mark.parametrize("name", sorted(PROVEN))
def test_affine_sides_of_one_floating_tensor_are_safe(name):
    f = where_fix(module(PROVEN[name]))
    assert f.applicability is Applicability.SAFE, f.message
    assert "exact" in f.message and "computes both sides" in f.message


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_misses_stay_unsafe_with_the_reason(name):
    body, reason = NEAR_MISSES[name]
    f = where_fix(module(body))
    assert f.applicability is not Applicability.SAFE, f.message
    assert reason in f.message, f.message


def _run(fn, z, pred, dtype):
    z = z.detach().to(dtype).requires_grad_(True)
    out = fn(z, pred)
    out.sum().backward() if out.requires_grad else None
    return out.detach(), z.grad


def test_measured_exact_for_the_proven_forms_and_not_for_the_near_misses():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    base = torch.randn(3, 5, generator=gen)
    base[0, 0], base[1, 1], base[2, 2] = float("nan"), float("inf"), 0.0
    base[0, 1] = -1.0
    proven = [
        (lambda z, p: (z - 1.0) / 4 if p else -z * 3, lambda z, p: torch.where(p, (z - 1.0) / 4, -z * 3)),
        (lambda z, p: z / 2 if p else 0.5 - z, lambda z, p: torch.where(p, z / 2, 0.5 - z)),
        (lambda z, p: z * 0.1 if p else z + 1, lambda z, p: torch.where(p, z * 0.1, z + 1)),
    ]
    for orig, new in proven:
        for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
            for truth in (True, False):
                p = torch.tensor(truth)
                (o, og), (n, ng) = _run(orig, base, p, dtype), _run(new, base, p, dtype)
                assert o.dtype == n.dtype and o.shape == n.shape
                torch.testing.assert_close(n, o, rtol=0, atol=0, equal_nan=True)
                torch.testing.assert_close(ng, og, rtol=0, atol=0, equal_nan=True)
    # near misses: each differs for some input (a NaN gradient, a copy, a promoted dtype, a new shape)
    p = torch.tensor(False)
    _, og = _run(lambda z, p: z.sqrt() if p else z * 2, base, p, torch.float32)
    _, ng = _run(lambda z, p: torch.where(p, z.sqrt(), z * 2), base, p, torch.float32)
    assert not torch.isnan(og).any() and torch.isnan(ng).any()
    _, og = _run(lambda z, p: 1 / z if p else z * 2, base, p, torch.float32)
    _, ng = _run(lambda z, p: torch.where(p, 1 / z, z * 2), base, p, torch.float32)
    assert not torch.isnan(og).any() and torch.isnan(ng).any()
    z = torch.ones(3)
    assert (z if True else z * 2) is z and torch.where(torch.tensor(True), z, z * 2) is not z
    n = torch.arange(4)
    assert (n * 2).dtype == torch.int64 and torch.where(torch.tensor(True), n * 2, n * 0.5).dtype == torch.float32
    one = torch.ones(1, 1) > 0
    assert torch.where(one, torch.ones(6), torch.ones(6) * 3).shape == (1, 6)
    with pytest.raises(RuntimeError):
        torch.where(torch.tensor(True), torch.ones(2, dtype=torch.bool) * 2, -torch.ones(2, dtype=torch.bool))


@pytest.mark.parametrize("name", sorted(PROVEN))
def test_safe_where_fix_parses_removes_the_finding_and_is_idempotent(name):
    import libcst as cst
    from test_fix import findings, fix

    text = module(PROVEN[name])
    out = fix(text, "where", unsafe=False)
    assert out != text and "torch.where(" in out
    cst.parse_module(out)
    assert fix(out, "where", unsafe=False) == out
    assert not [c for _, c in findings(out) if c in ("PTC101", "PTC103", "PTC104")], findings(out)
