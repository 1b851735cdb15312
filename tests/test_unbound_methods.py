"""A tensor method looked up on the class is the method: ``torch.Tensor.item(t)`` is ``t.item()``.

Ground truth (torch 2.13, ``torch._dynamo.explain`` on ``torch.randn(3)``): each module
flagged below has one graph break, "Unsupported Tensor.item() call with
capture_scalar_outputs=False", at the flagged line; the near misses compile to one graph.
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

SETTINGS = LintSettings(enabled=resolve_selection())
HEADER = "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"


def findings(body: str):
    src = HEADER + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"
    return [(d.start.line - 6, d.code) for d in lint_source(src, "m.py", SETTINGS).diagnostics]


@pytest.mark.parametrize(
    "body",
    [
        "return x * torch.Tensor.item(x.sum())",
        "item = torch.Tensor.item\nreturn x * item(x.sum())",
        "return x * torch.Tensor.tolist(x)[0]",
    ],
    ids=["class-call", "alias", "tolist"],
)
def test_a_method_called_through_the_class_is_flagged(body):
    lines = body.count("\n") + 1
    got = findings(body)
    assert len(got) == 1 and got[0][0] == lines and got[0][1] in ("PTC101", "PTC102"), got


@pytest.mark.parametrize(
    "body",
    [
        "return torch.Tensor.add(x, 1)",  # a method Dynamo traces
        "f = torch.Tensor.item\nreturn x",  # looked up, never called
        "return x * torch.Tensor.item(3)",  # not called on a tensor: not ours to judge
    ],
    ids=["traced-method", "not-called", "not-a-tensor"],
)
def test_near_misses_are_not_flagged(body):
    assert findings(body) == []
