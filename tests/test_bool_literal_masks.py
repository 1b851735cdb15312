"""A boolean tensor made from literals (``torch.tensor([True, False, True])``), also kept with
``register_buffer``, is a mask: indexing with it (or its ``~``) has a data-dependent output shape
(``aten.nonzero``, "Dynamic shape operator", torch 2.13); a float buffer is not a mask."""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found

_SOURCE = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pbc", torch.tensor([True, False, True]))
        self.register_buffer("w", torch.tensor([1.0, 2.0, 3.0]))

    def forward(self, coordinates):
        a = coordinates[:, :, ~self.pbc]
        pbc = torch.tensor([True, False, True], device=coordinates.device)
        b = coordinates[:, :, pbc]
        c = coordinates * self.w
        return a.sum() + b.sum() + c.sum()
"""


def test_literal_bool_tensors_are_masks():
    assert [(line, code) for line, code in found(_SOURCE) if code[:4] in ("PTC1", "PTC2", "PTC3")] == [(12, "PTC201"), (14, "PTC201")]


def test_matches_dynamo():
    pytest.importorskip("torch")
    assert dynamo_break_lines(_SOURCE, 'torch.compile(M(), backend="eager")(torch.randn(2, 4, 3))') == [12, 14]
