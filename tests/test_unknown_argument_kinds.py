"""An argument of unknown kind does not make a probed op break.

``torch.repeat_interleave(x, self.scale * self.scale, dim=1)`` with ``self.scale`` a constructor
parameter nothing decides: the facts table has a breaking probe for a tensor ``repeats`` with
``dim`` and none for a Python-int one, so the unknown argument matched only the breaking form and
was reported (PTC202).  It now has to break each way it could be; a helper's unannotated
``times`` (only guessed to be a tensor) is no tensor ``repeats`` either.  Dynamo traces both
with the ints the model is built with (measured on torch 2.13); a tensor ``repeats`` breaks.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
from torch import nn


def inflate(t, times, dim):
    return torch.repeat_interleave(t, times, dim=dim)


class Model(nn.Module):
    def __init__(self, scale, beam):
        super().__init__()
        self.scale = scale
        self.beam = beam

    def forward(self, x):
        y = torch.repeat_interleave(x, self.scale * self.scale, dim=1)
        y = inflate(y, times=self.beam, dim=0)
        counts = (x[0, :, 0, 0] > 0).long() + 1
        return y, torch.repeat_interleave(x, counts, dim=1)
"""


def test_unknown_repeats_are_not_tensor_repeats():
    assert found(SOURCE, codes=None) == [(19, "PTC202")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Model(2, 3), backend="eager")(torch.randn(1, 3, 4, 4))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[19]]


WHERE = """\
import torch
from torch import nn


class Pick(nn.Module):
    def forward(self, batch):
        return torch.where(batch.ids == 0)[0]
"""


def test_a_position_every_probe_gives_a_tensor_needs_only_that_probe():
    # ``batch.ids == 0`` of an object of unknown kind: torch.where's condition is a tensor in every
    # probe, so the one-argument form (a break) is all it can be
    assert found(WHERE, codes=None) == [(7, "PTC202")]
