"""``and``/``or`` whose outcome is decided while tracing leave the rest unevaluated.

``non_blocking = t.device.type == "cpu" and ... and not is_compiling() and not t.is_pinned()``
(kornia's ``core/utils.py``): under Dynamo ``is_compiling()`` is True, so Python never calls
``t.is_pinned()`` (GB0208 when it is called); before, an ``and`` outside an ``if`` evaluated every
operand, and a decided operand on the right of a chain did not decide it.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

GUARDED = """\
import torch
from torch import nn
from torch.compiler import is_compiling


def move(t, device):
    non_blocking = t.device.type == "cpu" and device.type in ("cuda", "cpu") and not is_compiling() and not t.is_pinned()
    return t.to(device, non_blocking=non_blocking)


class M(nn.Module):
    def forward(self, x):
        if x.device.type == "cpu" and not is_compiling() and x.is_pinned():
            x = x * 2
        return move(x, x.device) * 2
"""

UNGUARDED = GUARDED.replace(" and not is_compiling()", "")


def test_an_operand_after_a_decided_one_is_not_evaluated():
    assert found(GUARDED, codes=None) == []


def test_without_the_guard_the_query_is_reported():
    assert found(UNGUARDED, codes=None) == [(7, "PTC326"), (13, "PTC326")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(M(), backend="eager")(torch.randn(4))'
    assert dynamo_break_lines_many([(GUARDED, call), (UNGUARDED, call)]) == [[], [7, 13]]
