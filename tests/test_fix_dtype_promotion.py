"""A ``cond`` fix is safe only when promotion proves its outputs have one dtype in every branch.

The dtype proof must not assume floating inputs: ``(x - m) * 0.5`` with ``m`` a float32 mean
is float32 for an int64 ``x`` that the other branch returns unchanged, and ``torch.cond``
raises.  The ground-truth tests run the naive rewrites on torch 2.13.  The last tests cover
``--verify``'s comparison of what the caller sees after the call: its inputs (in-place
writes) and the Python state of the modules.
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.diagnostics import Applicability
from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

COMPILED = LintSettings(enabled=resolve_selection(), assume_compiled=True)
HEADER = "import torch\nimport torch.nn as nn\n\n\n"


def module(body: str, init: str = "") -> str:
    text = HEADER + "class Net(nn.Module):\n"
    if init:
        text += "    def __init__(self):\n        super().__init__()\n" + textwrap.indent(init, " " * 8) + "\n\n"
    return text + "    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"


def cond_fix(text: str):
    diags = lint_source(text, "m.py", COMPILED, fix_names=lambda d: ["cond"]).diagnostics
    fixes = [d.fix for d in diags if d.fix is not None and d.fix.name == "cond"]
    assert fixes, [(d.code, d.message) for d in diags]
    return fixes[0]


LIN = "self.lin = nn.Linear(4, 4)"

UNPROVEN = [
    # the case: a float32 mean promotes an int64 input, which the other branch keeps
    ("float32-mean-of-unknown-input", module("m = x.mean(dtype=torch.float32)\nif m > 0:\n    y = (x - m) * 0.5\nelse:\n    y = x\nreturn y")),
    # a reduction that raises for no dtype but widens bool to int64 (amax keeps bool)
    ("sum-vs-amax", module("if x.float().mean() > 0:\n    y = x.sum(-1)\nelse:\n    y = x.amax(-1)\nreturn y")),
    # a float32 tensor of the module promotes a float16 input that `x * 3` keeps
    ("float32-tensor-operand", module("if x.sum() > 0:\n    y = x - torch.ones(4)\nelse:\n    y = x * 3\nreturn y")),
    # a float16 `x` minus a float32 tensor is float32, minus a 0-d float32 one float16 (a Linear
    # output itself has `x`'s dtype, see test_fix_module_facts.py: the cast makes it float32)
    ("full-vs-reduced-operand", module("r = self.lin(x).float()\nif r.mean() > 0:\n    y = x - r\nelse:\n    y = x - r.sum()\nreturn y", LIN)),
    # true division of an integer input is floating
    ("division-of-unknown-input", module("if x.sum() > 0:\n    y = x / 2\nelse:\n    y = x\nreturn y")),
]

PROVEN = [
    # the same arithmetic on a tensor proven floating (nn.Linear output) keeps its dtype
    ("floating-centred", module("h = self.lin(x)\nm = h.mean()\nif m > 0:\n    y = (h - m) * 0.5\nelse:\n    y = h\nreturn y", LIN)),
    # one Python float in both branches: the default dtype for an integer input, its own otherwise
    ("float-literal-both", module("if x.sum() > 0:\n    y = x * 1.5\nelse:\n    y = x * 0.5\nreturn y")),
    ("floating-sum-vs-amax", module("h = self.lin(x)\nif h.mean() > 0:\n    y = h.sum(-1)\nelse:\n    y = h.amax(-1)\nreturn y", LIN)),
    # both branches promote the same two operands (0.5 * P keeps the floating P's dtype and rank)
    ("same-operands-promoted", module("if x.sum() > 0:\n    y = x + self.lin(x)\nelse:\n    y = x - 0.5 * self.lin(x)\nreturn y", LIN)),
    # a value read by both branches, whatever its dtype
    ("same-value-both", module("s = x.sum(-1)\nif x.float().mean() > 0:\n    s = s * 2\nreturn s")),
]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in UNPROVEN])
def test_unproven_dtype_agreement_is_unsafe_with_the_reason(text):
    f = cond_fix(text)
    assert f.applicability is Applicability.UNSAFE, f.message
    assert "not proven to keep one dtype" in f.message or "is floating in one branch" in f.message, f.message


#: dtypes agree, but the shapes of ``dim`` reductions are outside what pt2lint.fixes.cond_proof proves
_SHAPES_UNPROVEN = {"floating-sum-vs-amax"}


@pytest.mark.parametrize("name,text", [pytest.param(i, t, id=i) for i, t in PROVEN])
def test_dtype_agreement_proven_by_promotion_stays_safe(name, text):
    f = cond_fix(text)
    if name in _SHAPES_UNPROVEN:
        assert f.applicability is Applicability.UNSAFE and "not proven safe" in f.message, f.message
        assert "dtype" not in f.message.split("not proven safe")[-1], f.message
    else:
        assert f.applicability is Applicability.SAFE, f.message


def test_the_unproven_rewrites_raise_and_the_proven_run_on_torch():
    torch = pytest.importorskip("torch")

    def runs(true_fn, false_fn, x) -> bool:
        try:
            torch.cond(torch.tensor(True), true_fn, false_fn, (x,))
            return True
        except Exception:
            return False

    ints, bools, half = torch.arange(8).view(2, 4), torch.tensor([[True, False, True, True]] * 2), torch.randn(2, 4).half()
    # (x - m) * 0.5 vs x for int64 x
    assert not runs(lambda x: (x - x.mean(dtype=torch.float32)) * 0.5, lambda x: x.clone(), ints)
    assert runs(lambda x: (x - x.mean(dtype=torch.float32)) * 0.5, lambda x: x.clone(), half)
    assert not runs(lambda x: x.sum(-1), lambda x: x.amax(-1), bools)
    assert not runs(lambda x: x - torch.ones(4), lambda x: x * 3, half)
    assert not runs(lambda x: x / 2, lambda x: x.clone(), ints)
    r = torch.randn(2, 4)
    assert not runs(lambda x: x - r, lambda x: x - r.sum(), half)
    for x in (half, half.float(), half.double()):
        assert runs(lambda x: x + r, lambda x: x - 0.5 * r, x)
    # the proven ones, on every input dtype they accept
    for x in (ints, half, half.double()):
        assert runs(lambda x: x * 1.5, lambda x: x * 0.5, x)
    for h in (half, half.float(), half.double()):
        assert runs(lambda h: (h - h.mean()) * 0.5, lambda h: h.clone(), h)
        assert runs(lambda h: h.sum(-1), lambda h: h.amax(-1), h)
    for x in (ints, bools, half):
        s = x.sum(-1)
        assert runs(lambda s: s * 2, lambda s: s.clone(), s)


# ------------------------------------------------------------------ --verify: inputs and module state


class _Writer:
    """Builds modules whose forward writes its input and a counter in one of two ways."""

    @staticmethod
    def make(torch, scale: float, step: int):
        class W(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.calls = 0
                self.history = []
                self.cache = torch.zeros(3)

            def forward(self, x, out):
                out.mul_(scale)
                self.calls += step
                self.history.append(1)
                self.cache = x * scale
                return x + 1

        return W()


def _run(vf, model, args):
    return vf._run_model(model, tuple(a.clone() for a in args), {}, vf._Tracer("<none>"))


def test_verify_compares_inputs_written_in_place_and_module_state():
    torch = pytest.importorskip("torch")
    from pt2lint.confirm import verify as vf

    args = (torch.ones(3), torch.ones(3))
    same = vf.compare_runs("in", _run(vf, _Writer.make(torch, 2.0, 1), args), _run(vf, _Writer.make(torch, 2.0, 1), args))
    assert same == []
    # the same output, but the caller's `out` is written differently and the counter moves by 2
    diff = vf.compare_runs("in", _run(vf, _Writer.make(torch, 2.0, 1), args), _run(vf, _Writer.make(torch, 3.0, 2), args))
    text = "\n".join(diff)
    assert "input args[1] after the call (written in place)" in text, text
    assert "module attribute calls after the call: 1 in the original, 2 in the fixed" in text, text
    assert "module attribute cache after the call" in text, text
    assert "input args[0]" not in text  # x itself is not written


def test_state_snapshot_reads_lengths_of_containers_and_skips_private_attributes():
    torch = pytest.importorskip("torch")
    from pt2lint.confirm import verify as vf

    m = _Writer.make(torch, 1.0, 1)
    m._private = 5
    m.history.extend([1, 2])
    snap = vf.module_state_snapshot(m)
    assert snap["calls"] == 0 and snap["history"][:2] == ("list", 2)
    assert "_private" not in snap and "training" not in snap
    assert isinstance(snap["cache"], torch.Tensor)
