"""``t.is_sparse`` / ``t.is_sparse_csr`` of a tensor are False wherever Dynamo traces.

Dynamo holds no sparse tensor: a sparse input ends the frame at its first use ("torch.compile
does not support sparse Tensors") and the rest runs eagerly, so the traced code always saw a
dense tensor.  Code under ``if x.is_sparse:`` (norse's LIF cells build their state with
``.to_sparse()`` only for a sparse input) is dead while tracing; its ``to_sparse()`` and
``print`` were reported as graph breaks.  The near miss: the dense branch stays live.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
from torch import nn


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.sparse_fn = None

    def forward(self, x):
        z = torch.zeros_like(x).to_sparse() if x.is_sparse else torch.zeros_like(x)
        if self.sparse_fn is not None and x.is_sparse:
            return x.to_sparse()
        if x.is_sparse_csr:
            print("csr")
        if not x.is_sparse:
            print("dense")
        return x + z
"""


def test_code_under_a_sparse_layout_test_is_dead_while_tracing():
    assert found(SOURCE, codes=None) == [(17, "PTC301")]


def test_a_value_not_known_to_be_a_tensor_keeps_both_branches():
    # ``self.layout_of(x)`` is no tensor the analysis knows of: its ``is_sparse`` is not decided
    code = """\
import torch
from torch import nn


class Cell(nn.Module):
    def forward(self, x):
        info = self.layout_of(x)
        if info.is_sparse:
            print("sparse")
        return x
"""
    assert found(code, codes={"PTC301"}) == [(9, "PTC301")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Cell(), backend="eager")(torch.randn(4, 4))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[17]]
