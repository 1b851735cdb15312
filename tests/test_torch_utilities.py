"""Python utilities of torch called from forward: what Dynamo meets inside them.

``torch.nn.utils.rnn.pack_sequence`` calls the skipped ``pack_padded_sequence`` (GB0007),
``torch.nn.utils.fusion.fuse_conv_bn_eval`` deep-copies a module (GB4198),
``torch.nn.utils.skip_init`` builds ``nn.Parameter``s (GB0264) and
``torch.nn.utils.stateless.functional_call`` warns that it is deprecated (GB0007): Dynamo inlines
each (``trace_rules`` says only that), so the facts table's ``utility_calls`` probes decide.
``torch.autograd.functional.jacobian`` is a Python function torch's tables put in the graph whole;
run on fake tensors it still breaks (its probe is the evidence too), as ``torch.testing.assert_close``
does where Dynamo inlines it.
Near misses that Dynamo traced: ``pad_sequence``, ``clip_grad_norm_``, ``parameters_to_vector``,
``torch.func.functional_call``.  ``test_dynamo_agrees`` runs each line alone and attributes a break
inside torch to the line that called it.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.conv = nn.Conv2d(1, 1, 1).eval()
        self.bn = nn.BatchNorm2d(1).eval()
        self.rnn = nn.GRU(4, 4)

    def forward(self, x):
"""
LINE = 14  # the line of the statement under test

# statement -> whether pt2lint reports it (and Dynamo breaks there)
CASES = {
    "packed = nn.utils.rnn.pack_sequence([x, x[:2]])\n        return packed.data": True,
    "fused = nn.utils.fusion.fuse_conv_bn_eval(self.conv, self.bn)\n        return fused(x[None, None])": True,
    "lin = nn.utils.skip_init(nn.Linear, 4, 4)\n        return x * 2": True,
    "return nn.utils.stateless.functional_call(self.lin, {}, (x,))": True,
    # Python functions torch's tables put in the graph whole, which still break on fake tensors
    "return torch.autograd.functional.jacobian(lambda t: t * 2, x[0])": True,
    "torch.testing.assert_close(x, x.clone())\n        return x * 2": True,
    # near misses
    "return nn.utils.rnn.pad_sequence([x[0], x[1, :2]], batch_first=True)": False,
    "nn.utils.clip_grad_norm_(self.lin.parameters(), 1.0)\n        return self.lin(x)": False,
    "v = nn.utils.parameters_to_vector(self.lin.parameters())\n        return self.lin(x) + v.sum()": False,
    "return torch.func.functional_call(self.lin, dict(self.lin.named_parameters()), (x,))": False,
}


def _source(stmt: str) -> str:
    return HEADER + "        " + stmt + "\n"


@pytest.mark.parametrize("stmt", sorted(CASES))
def test_torch_utility(stmt):
    got = [(line, code) for line, code in found(_source(stmt), codes=None) if code != "PTC702"]
    assert got == ([(LINE, "PTC307")] if CASES[stmt] else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(4, 4))'
    measured = dynamo_break_lines_many([(_source(stmt), call) for stmt in CASES])
    assert measured == [[LINE] if breaks else [] for breaks in CASES.values()]
