"""A sure tensor on one path and plain Python data on the other stays a tensor on its path.

``img_sizes: list[tuple[int, int]] | None = None`` in ``forward`` and ``if img_sizes is None:
x, img_sizes = self.patchify(x)`` (which builds the sizes as a tensor): the call that leaves the
argument out, the usual one, slices with ``pH * pW`` read from the tensor, and Dynamo (torch
2.13) breaks there (``__index__`` of a tensor slice bound).  The join of the two paths used to be
only a guess (weak) because the other side is a list, not a constant; a list, tuple or dict that
holds only Python numbers is as plain as a constant, so the tensor path's break is reported.  The
near miss, a default built as a list of int pairs, compiles without a break and stays quiet.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

SOURCE = '''
import torch
from torch import nn


class M(nn.Module):
    def patchify(self, x):
        b = x.shape[0]
        sizes = torch.tensor([2, 2], dtype=torch.int64, device=x.device).reshape(-1)
        return x, sizes.unsqueeze(0).repeat(b, 1)

    def unpatchify(self, x: torch.Tensor, img_sizes: list[tuple[int, int]]) -> list[torch.Tensor]:
        out = []
        for i, img_size in enumerate(img_sizes):
            pH, pW = img_size
            out.append(x[i, : pH * pW])
        return out

    def forward(self, x, img_sizes: list[tuple[int, int]] | None = None):
        if img_sizes is None:
{default}
        return self.unpatchify(x, img_sizes)
'''

TENSOR_DEFAULT = "            x, img_sizes = self.patchify(x)"
LIST_DEFAULT = "            img_sizes = [(2, 2)] * x.shape[0]"
SLICE_LINE = 15


def test_the_tensor_path_of_a_python_data_join_is_reported():
    assert found(SOURCE.format(default=TENSOR_DEFAULT), codes={"PTC103"}) == [(SLICE_LINE, "PTC103")]


def test_a_default_of_python_data_stays_quiet():
    assert found(SOURCE.format(default=LIST_DEFAULT)) == []


def test_dynamo_breaks_only_on_the_tensor_path():
    pytest.importorskip("torch")
    call = 'torch.compile(M(), backend="eager")(torch.randn(2, 6, 3))'
    lines = dynamo_break_lines_many([(SOURCE.format(default=d).lstrip("\n"), call) for d in (TENSOR_DEFAULT, LIST_DEFAULT)])
    assert lines == [[SLICE_LINE], []]
