"""What a ``torch.nn`` submodule call proves for ``cond`` fixes: its output has its input's rank
and dtype, and its input is floating once it has run (``pt2lint/fixes/module_facts.py``).

The measured test runs every module of the tables on torch; the static tests check that a branch
pair built on those facts gets a safe ``cond`` fix and that the near misses (ranks that differ, a
module that is not in the tables, a name rebound or passed conditionally) stay unsafe.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from pt2lint.diagnostics import Applicability
from pt2lint.fixes.module_facts import FLOAT_INPUT_MODULES, RANK_KEEPING_MODULES
from test_fix_cond_safety import cond_fix

HEADER = "import torch\nimport torch.nn as nn\n\n\n"

# (constructor, input shapes of every rank the module accepts)
MEASURED = {
    "Linear": ("nn.Linear(8, 3)", [(8,), (5, 8), (2, 5, 8), (2, 3, 5, 8)]),
    "Conv1d": ("nn.Conv1d(8, 3, 3, padding=1)", [(8, 6), (2, 8, 6)]),
    "Conv2d": ("nn.Conv2d(8, 3, 3, padding=1)", [(8, 6, 6), (2, 8, 6, 6)]),
    "Conv3d": ("nn.Conv3d(8, 3, 1)", [(8, 2, 3, 3), (1, 8, 2, 3, 3)]),
    "LayerNorm": ("nn.LayerNorm(8)", [(8,), (5, 8), (2, 5, 8)]),
    "RMSNorm": ("nn.RMSNorm(8)", [(8,), (5, 8), (2, 5, 8)]),
}
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTEGERS = ("int64", "int32", "uint8", "bool")


def test_tables_are_measured_on_torch():
    torch = pytest.importorskip("torch")
    from torch import nn  # noqa: F401  (read by eval)

    assert set(MEASURED) == set(RANK_KEEPING_MODULES) == set(FLOAT_INPUT_MODULES)
    for name, (make, shapes) in MEASURED.items():
        for shape in shapes:
            for wdt in FLOATS:
                for xdt in FLOATS:
                    mod = eval(make).to(getattr(torch, wdt))
                    try:
                        y = mod(torch.randn(shape, dtype=getattr(torch, xdt)))
                    except RuntimeError:
                        continue  # a dtype pair the kernel rejects
                    assert y.dim() == len(shape), (name, shape)
                    assert y.dtype == getattr(torch, xdt), (name, wdt, xdt, y.dtype)
            for xdt in INTEGERS:
                with pytest.raises(RuntimeError):
                    eval(make)(torch.zeros(shape, dtype=getattr(torch, xdt)))
    # the module left out on purpose: integer input, one more dimension
    emb = nn.Embedding(10, 4)(torch.zeros(5, dtype=torch.long))
    assert emb.dim() == 2 and emb.dtype == torch.float32


def pool(init: str, forward: str) -> str:
    return (
        HEADER
        + "class Pool(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        + textwrap.indent(init, " " * 8)
        + "\n\n    def forward(self, feats):\n"
        + textwrap.indent(textwrap.dedent(forward).strip("\n"), " " * 8)
        + "\n"
    )


# an early return whose output is a reduction of the input against one of a product with a
# Linear output: both of rank `feats.dim() - 1`, both of `feats`'s dtype
PROVEN = """
g = torch.sigmoid(self.gate(feats))
norm = g.sum()
if norm < 1e-3:
    return feats.amax(dim=-1) * 0.0 + norm * 0.0
return (g * feats).sum(dim=-1) / norm
"""


def test_a_linear_output_minus_its_sum_keeps_the_input_dtype():
    # `x - r` and `x - r.sum()` for `r = self.lin(x)`: `r` has `x`'s dtype (a Linear of another
    # dtype raises), so both branches do; with `r` cast to float32 they differ for a float16 `x`
    # (tests/test_fix_dtype_promotion.py keeps that one unsafe)
    body = "r = self.gate(feats)\nif r.mean() > 0:\n    y = feats - r\nelse:\n    y = feats - r.sum()\nreturn y"
    f = cond_fix(pool("self.gate = nn.Linear(6, 6)", body))
    # dtypes agree (no dtype reason), but that a Linear(6, 6) keeps the shape of its input is
    # outside what pt2lint.fixes.cond_proof proves: offered, unsafe
    assert f.applicability is Applicability.UNSAFE and "not proven safe" in f.message and "dtype" not in f.message, f.message
    torch = pytest.importorskip("torch")
    for dtype in (torch.float16, torch.float64):
        lin = torch.nn.Linear(6, 6).to(dtype)
        x = torch.randn(3, 6, dtype=dtype)
        r = lin(x)
        assert (x - r).dtype == (x - r.sum()).dtype == dtype
        assert (x - r.float()).dtype != (x - r.float().sum()).dtype or dtype == torch.float64


def test_rank_and_dtype_of_a_linear_output_leave_only_the_unproven_shape():
    # rank and dtype are proven (no such reason); the early return's `dim` reduction is outside what
    # pt2lint.fixes.cond_proof proves, so the fix is offered unsafe
    for init in ("self.gate = nn.Linear(6, 6)", "self.gate = nn.LayerNorm(6)"):
        f = cond_fix(pool(init, PROVEN))
        assert f.applicability is Applicability.UNSAFE and "not proven safe" in f.message, f.message
        assert "rank" not in f.message and "dtype" not in f.message, f.message


@pytest.mark.parametrize(
    "init, forward, reason",
    [
        # the early return keeps one dimension fewer than the other path
        ("self.gate = nn.Linear(6, 6)", PROVEN.replace("amax(dim=-1)", "amax(dim=(0, -1))"), "rank"),
        # nn.Embedding takes integer indices and adds a dimension: neither fact holds
        ("self.gate = nn.Embedding(6, 6)", PROVEN, "rank"),
        # an attribute assigned two different modules proves nothing
        ("self.gate = nn.Linear(6, 6)\nself.gate = nn.Identity()", PROVEN, "rank"),
        # `feats` is passed to the Linear only in one branch of an `and`: not proven floating
        ("self.gate = nn.Linear(6, 6)", PROVEN.replace("g = torch.sigmoid(self.gate(feats))", "g = torch.sigmoid(feats)\nok = feats.numel() > 0 and self.gate(feats)"), "dtype"),
    ],
)
def test_near_misses_stay_unsafe(init, forward, reason):
    f = cond_fix(pool(init, forward))
    assert f.applicability is not Applicability.SAFE, f.message
    assert reason in f.message, f.message


def test_helpers():
    from pt2lint.fixes.module_facts import floating_inputs, submodule_input, submodules_of

    text = pool(
        "self.a = nn.Linear(6, 6)\nself.b = nn.Embedding(6, 6)\nself.c = nn.Conv2d(1, 1, 1)\nself.c = nn.Conv2d(2, 2, 1)\nself.d = nn.Linear(6, 6)\nself.d = None",
        "y = self.a(feats)\nz = self.c(y)\nw = (lambda t: self.a(t))(feats)\nreturn z",
    )
    module = cst.parse_module(text)
    ctx = _context(text, module)
    cls = module.body[-1]
    fwd = [s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"][0]
    # `c` is assigned two Conv2d calls (one class), `d` a Linear and None
    assert submodules_of(ctx, fwd, RANK_KEEPING_MODULES) == {"a", "c"}
    body = list(fwd.body.body)
    call = body[0].body[0].value
    assert isinstance(submodule_input(ctx, call, FLOAT_INPUT_MODULES), cst.Name)
    # names passed to such a module before, outside the lambda; `y` is not rebound
    assert floating_inputs(ctx, body, set()) == {"feats", "y"}
    assert floating_inputs(ctx, body, {"y"}) == {"feats"}


def _context(text: str, module: cst.Module):
    from pt2lint.fixes.context import FixContext
    from pt2lint.settings import LintSettings

    return FixContext(module, text, LintSettings(), [], {})
