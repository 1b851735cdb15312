"""Methods compiled on their own: ``@torch.compile`` on a method, ``torch.compile(model.log_prob)``,
``self._step = torch.compile(self._step)``.  Dynamo traces the bound method with the instance as
``self``, as it traces ``forward``; ``test_dynamo_agrees`` compiles each and reads the
graph_breaks log."""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found

_CLASS = """\
import torch
from torch import nn


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)

    {decorator}def log_prob(self, x):
        z = self.lin(x)
        if z.sum() > 0:
            z = z * 2
        return z.sum(-1)
{tail}"""

CASES = {
    "decorated method": (_CLASS.format(decorator="@torch.compile\n    ", tail=""), "flow.log_prob"),
    "bound method of a module-level instance": (
        _CLASS.format(decorator="", tail="\n\nflow = Flow()\nlog_prob = torch.compile(flow.log_prob)\n"),
        "log_prob",
    ),
    "method compiled by its own class": (
        _CLASS.format(decorator="", tail="")
        + "\n\nclass Trainer:\n    def __init__(self):\n        self.flow = Flow()\n        self.step = torch.compile(self.flow_step)\n\n"
        "    def flow_step(self, x):\n        z = self.flow(x)\n        if z.sum() > 0:\n            z = z * 2\n        return z\n",
        "Trainer().step",
    ),
}
_EXPECTED = {
    "decorated method": [(16, "PTC104")],
    "bound method of a module-level instance": [(15, "PTC104")],
    # forward is not compiled here; the compiled method's own `if` is
    "method compiled by its own class": [(27, "PTC104")],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_method_is_a_region(name):
    src, _ = CASES[name]
    assert found(src) == _EXPECTED[name]


def test_an_uncompiled_method_is_not_a_region():
    src = _CLASS.format(decorator="", tail="\n\nflow = Flow()\nlog_prob = flow.log_prob\n")
    assert found(src) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_dynamo_agrees(name):
    pytest.importorskip("torch")
    src, target = CASES[name]
    call = "Flow().log_prob(torch.ones(2, 4))" if target == "flow.log_prob" else f"{target}(torch.ones(2, 4))"
    assert dynamo_break_lines(src, call) == [line for line, _ in _EXPECTED[name]]
