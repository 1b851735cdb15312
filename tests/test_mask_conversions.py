"""A boolean mask kept a mask through ``torch.as_tensor`` / ``torch.tensor`` / ``torch.asarray``.

braindecode's augmentations index with ``torch.as_tensor(p > u).to(device)``: without a
``dtype=`` these give a tensor of the argument's own dtype, so the result is still a boolean
mask and ``X[mask]`` has a data-dependent shape (GB0036).  The analysis dropped the mask at
the conversion.  Near miss: ``dtype=torch.float32`` makes it a float tensor, whose indexing is
no mask (here an ``IndexError`` Python raises, not a mask).
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
from torch import nn


class Augment(nn.Module):
    def forward(self, X):
        n = X.shape[0]
        mask = torch.as_tensor(0.5 > torch.rand(n)).to(X.device)
        a = X[mask]
        keep = torch.tensor(torch.rand(n) > 0.5)
        b = X[keep]
        weights = torch.as_tensor(torch.rand(n) > 0.5, dtype=torch.float32)
        return a, b, X * weights[:, None]
"""


def test_the_converted_mask_is_still_a_mask():
    assert found(SOURCE, codes={"PTC201"}) == [(9, "PTC201"), (11, "PTC201")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Augment(), backend="eager")(torch.randn(6, 3))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[9, 11]]
