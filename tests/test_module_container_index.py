"""A ``ModuleList``/``Sequential`` indexed with a 0-d tensor (``self.experts[i]`` for ``i`` in a
top-k index tensor) reads the index with ``__index__`` (``Tensor.item()``, GB0124, measured on
torch 2.13), also when the container is built from a constructor argument whose elements the
analysis does not know; an int index traces."""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found

_SOURCE = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self, experts, gate):
        super().__init__()
        self.experts = nn.ModuleList(experts)
        self.gate = gate

    def forward(self, x):
        w = self.gate(x).softmax(-1)
        topk_w, topk_i = torch.topk(w, 1)
        first = self.experts[0](x)
        picked = [self.experts[i] for i in topk_i.squeeze(0)]
        for j, e in enumerate(picked):
            first = first + e(x) * topk_w[:, j : j + 1]
        return first
"""
_CALL = 'torch.compile(M([nn.Linear(4, 4) for _ in range(3)], nn.Linear(4, 3)).eval(), backend="eager")(torch.randn(1, 4))'


def test_tensor_index_into_a_module_list_of_unknown_elements():
    assert [(line, code) for line, code in found(_SOURCE) if code[:4] in ("PTC1", "PTC2", "PTC3")] == [(15, "PTC103")]


def test_matches_dynamo():
    pytest.importorskip("torch")
    assert dynamo_break_lines(_SOURCE, _CALL) == [15]
