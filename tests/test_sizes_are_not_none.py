"""A size, or a tuple of known elements, is not ``None``: ``if size is None:`` on it is decided.

``to_dense(edge_index, value, (N, N))`` with ``N = x.size(0)`` and, in the helper,
``if size is None: size = int(edge_index.max()) + 1`` then ``num_src, num_dst = size`` and
``if num_src is None: ...``: the helper gets a tuple of two sizes, so Dynamo traces neither
``int(...)`` (measured on torch 2.13: one graph).  Before, only literals, numbers read from
tensors and values marked so were known not to be ``None``, and the three ``int(...)`` reads of
the dead branches were reported.  ``isinstance(size, int)`` is decided on a size (True) and on
a tuple (False), as Dynamo decides it.  Called without ``size``, the first read breaks.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
from typing import Optional, Tuple, Union
import torch
from torch import nn


def to_dense(edge_index, value, size: Optional[Union[int, Tuple[Optional[int], Optional[int]]]] = None):
    if size is None:
        size = int(edge_index.max()) + 1
    if isinstance(size, int):
        size = (size, size)
    num_src, num_dst = size
    if num_src is None:
        num_src = int(edge_index[0].max()) + 1
    if num_dst is None:
        num_dst = int(edge_index[1].max()) + 1
    out = value.new_zeros(num_src * num_dst)
    out = out.index_put((edge_index[0] * num_dst + edge_index[1],), value, accumulate=True)
    return out.view(num_src, num_dst)


class Model(nn.Module):
    def forward(self, x, edge_index):
        n = x.size(0)
        adj = to_dense(edge_index, x.new_ones(edge_index.size(1)){size})
        return adj @ x
"""

CALL = 'torch.compile(Model(), backend="eager")(torch.randn(5, 4), torch.tensor([[0, 1, 4], [2, 3, 4]]))'

# size argument -> (lines pt2lint reports, lines Dynamo breaks at)
CASES = {
    "a tuple of sizes": (", (n, n)", [], []),
    "a size": (", n", [], []),
    # the tuple reaches the helper with its elements joined (a size that may be None), so
    # ``num_src is None`` stays undecided: a false alarm at line 13 that remains
    "a tuple with a None": (", (n, None)", [13, 15], [15]),
    # Dynamo reports the first break; the reads after it break too once it is fixed
    "no size": ("", [8, 13, 15], [8]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_is_none_on_a_size(name):
    size, lines, _ = CASES[name]
    assert [line for line, code in found(SOURCE.format(size=size), codes=None) if code == "PTC103"] == lines


def test_dynamo_agrees():
    pytest.importorskip("torch")
    measured = dynamo_break_lines_many([(SOURCE.format(size=size), CALL) for size, _, _ in CASES.values()])
    assert measured == [lines for _, _, lines in CASES.values()]
