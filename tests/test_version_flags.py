"""Flags computed from ``torch.__version__`` take the target torch's value.

``WITH_PT21 = WITH_PT20 and int(torch.__version__.split('.')[1]) >= 1`` at module level (PyG's
``torch_geometric.typing``) and ``if not WITH_PT21: <fallback>`` in ``forward``: on torch 2.13
the fallback never runs, and Dynamo, which reads the flag as a constant, never traces it.
Before, ``torch.__version__`` was a string of unknown value and the fallback's breaks were
reported.  The version is the one the facts table was generated with (its public part).
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
from torch import nn

WITH_PT20 = int(torch.__version__.split('.')[0]) >= 2
WITH_PT21 = WITH_PT20 and int(torch.__version__.split('.')[1]) >= 1
WITH_PT99 = int(torch.__version__.split('.')[0]) >= 99
MAJOR, MINOR = (int(p) for p in torch.__version__.split('.')[:2])


class Net(nn.Module):
    def forward(self, x):
        if not WITH_PT21:
            print("old torch")
        if WITH_PT99:
            x = x[x > 0]
        if torch.__version__.startswith("1."):
            x = x.nonzero()
        if WITH_PT20:
            print("new torch")
        return x
"""


def test_version_flags_are_decided():
    assert found(SOURCE, codes=None) == [(19, "PTC301")]


def test_dynamo_agrees():
    torch = pytest.importorskip("torch")
    if not torch.__version__.startswith("2.13"):
        pytest.skip("the flags are computed for torch 2.13")
    call = 'torch.compile(Net(), backend="eager")(torch.ones(2, 3))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[19]]
