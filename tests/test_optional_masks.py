"""A ``mask=None`` parameter of a top-level model is a boolean mask when given.

A parameter defaulting to ``None`` is a guess (``scale=None`` may be a number), but its name says
what it holds when the caller passes it, as for a parameter without a default: indexing with a
``mask``/``keep``/``valid`` parameter selects by a boolean mask, a data-dependent shape (GB0036).
``attention_mask`` and the like (added to scores, never used to index) are not masks by name, and
an index with a parameter of another name is no boolean mask.  Checked against the graph_breaks
log on torch 2.13, with the mask passed.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

NARROWED = """\
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x, mask=None):
        if mask is None:
            return x.sum(1)
        return x[mask].sum(0)
"""

UNNARROWED = """\
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x, keep=None):
        return x[keep].sum(0)
"""

NEAR_MISSES = """\
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x, index=None, attention_mask=None):
        y = x[index] if index is not None else x
        if attention_mask is not None:
            y = y + attention_mask[..., None]
        return y.sum()
"""

CALL_MASK = "torch.compile(M(), backend='eager')(torch.randn(2, 4, 3), torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool))"
CALL_INDEX = "torch.compile(M(), backend='eager')(torch.randn(2, 4, 3), torch.tensor([1, 0]), torch.zeros(2, 4))"


def test_optional_mask_parameters_index_by_mask():
    assert found(NARROWED) == [(9, "PTC201")]
    assert found(UNNARROWED) == [(7, "PTC201")]


def test_near_misses():
    assert found(NEAR_MISSES) == []


def test_dynamo_agrees():
    pytest.importorskip("torch")
    got = dynamo_break_lines_many([(NARROWED, CALL_MASK), (UNNARROWED, CALL_MASK), (NEAR_MISSES, CALL_INDEX)])
    assert got == [[9], [7], []]
