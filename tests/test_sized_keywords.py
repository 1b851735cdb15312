"""A data-dependent-shape op told its output size in a keyword traces.

``torch.repeat_interleave(t, counts, output_size=n)`` (spikingjelly's ragged batching): with
``output_size`` Dynamo knows the output's length and traces the call; without it the length is
the sum of ``counts`` and the graph breaks (GB0036).  The keyword comes from the facts table
(``sized_keywords``: the keyword-only ``Optional[int]`` arguments of the ATen overloads tagged
``dynamic_output_shape``, each call confirmed by a probe).  ``output_size=None`` states nothing.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
from torch import nn


class Ragged(nn.Module):
    def forward(self, times, offsets):
        ids = torch.arange(offsets.shape[0] - 1, device=times.device)
        a = torch.repeat_interleave(ids, offsets.diff(), output_size=times.numel())
        b = ids.repeat_interleave(offsets.diff(), output_size=times.shape[0])
        c = torch.repeat_interleave(ids, offsets.diff(), output_size=None)
        d = torch.repeat_interleave(ids, offsets.diff())
        return a, b, c, d
"""


def test_a_stated_output_size_is_no_dynamic_shape():
    assert found(SOURCE, codes={"PTC202"}) == [(10, "PTC202"), (11, "PTC202")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Ragged(), backend="eager")(torch.rand(12), torch.tensor([0, 5, 9, 12]))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[10, 11]]
