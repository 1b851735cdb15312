"""A forward parameter with no annotation and no default is a tensor only where the code uses it as one.

``forward(self, x, use_cache)`` with ``use_cache`` only tested (``if use_cache:``), ``num_steps`` only
given to ``range()``, ``num_samples`` only given to another tensor's method: nothing in the code
says these are tensors, and callers pass a flag or a count (Dynamo traces each in one graph,
measured below on torch 2.13).  Before, every such parameter was taken for a tensor and the test,
the ``range()`` and the ``repeat_interleave`` were reported as graph breaks.  A parameter the code
uses as a tensor (a method, an index, arithmetic, an argument of a torch function or of a
submodule) is still one, and its data-dependent uses are still reported.  The price: a tensor
given only to another tensor's method (``h.repeat_interleave(counts)`` on line 16 of ``TENSORS``,
which breaks when ``counts`` is a tensor) is not told from a count, and is not reported.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

FLAGS = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, use_cache, num_steps, num_samples, output_attentions):
        h = self.fc(x)
        for _ in range(num_steps):
            h = h + 0.1 * self.fc(h).tanh()
        h = h.repeat_interleave(num_samples, dim=0)
        out = (h, h.sum()) if output_attentions else (h,)
        if use_cache:
            return out, h
        return out, None
"""

TENSORS = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, gate, scale, counts):
        if gate.any():
            x = x * 2
        h = self.fc(x) * scale
        if scale:
            h = h + 1
        return h.repeat_interleave(counts, dim=0)
"""


def test_parameters_only_tested_or_counted_are_not_tensors():
    assert found(FLAGS, codes={"PTC104", "PTC103", "PTC202"}) == []


def test_parameters_used_as_tensors_still_are():
    assert found(TENSORS, codes={"PTC104", "PTC103", "PTC202"}) == [(11, "PTC104"), (14, "PTC104")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    flags = 'torch.compile(Net(), backend="eager")(torch.randn(2, 8), True, 3, 2, False)'
    tensors = 'torch.compile(Net(), backend="eager")(torch.randn(2, 8), torch.ones(2, dtype=torch.bool), torch.tensor(0.5), torch.tensor([1, 2]))'
    assert dynamo_break_lines_many([(FLAGS, flags), (TENSORS, tensors)]) == [[], [11, 14, 16]]
