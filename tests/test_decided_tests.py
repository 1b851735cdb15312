"""Operands Python evaluates before the constant that decides an ``and``/``or`` test are still tested.

``if torch.isnan(out) and losses.dtype == torch.float16:`` is decided by its right operand once the
dtype is known, but Python asks ``bool(torch.isnan(out))`` first, and Dynamo breaks on that
data-dependent branch (pytorch-metric-learning's ``DivisorReducer``; measured on torch 2.13 with
the graph_breaks log, below).  The body stays dead; only the left operand's test is reported.
When the constant comes first (``x.dtype == torch.float16 and torch.isnan(out)``), Python
short-circuits before the tensor and there is no break.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
from torch import nn


class Reducer(nn.Module):
    def forward(self, losses):
        out = losses.sum() / 4
        if torch.isnan(out) and losses.dtype == torch.float16:
            out = losses.float().sum() / 4
        if losses.dtype == torch.float16 and torch.isnan(out):
            out = out * 0
        if not (out.isinf() or True):
            out = out + 1
        return out
"""


def test_the_left_operand_of_a_decided_test_is_tested():
    assert found(SOURCE, codes={"PTC104"}) == [(8, "PTC104"), (12, "PTC104")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Reducer(), backend="eager")(torch.rand(8))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[8, 12]]
