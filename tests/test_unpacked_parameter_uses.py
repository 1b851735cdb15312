"""A parameter unpacked into names used as Python numbers is a size, not a tensor.

``H, W = hw_shape`` then ``x.view(B, H, W, C)`` and ``if H % 2 == 1:`` (the window and patch
blocks of hierarchical vision transformers, which take the feature map's size next to the
tokens): the unannotated ``hw_shape`` was guessed a tensor, its elements 0-d tensors, and the
``if`` a data-dependent branch.  Called with a tuple of ints, Dynamo traces one graph (measured
below, torch 2.13).  What the unpacked names are used for now speaks for the parameter: one used
where only a Python number goes (an ATen size argument, ``range()``, a comparison with a number
tested by an ``if``) and none read with a tensor's attribute make it a weak guess, which rules do
not flag branches on.  The near miss: a state tuple unpacked into tensors (``h, c = state`` with
``h.abs().sum()``) keeps the guess, and its branch still breaks the graph.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

SIZE = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, hw_shape):
        H, W = hw_shape
        B, L, C = x.shape
        x = x.view(B, H, W, C)
        if H % 2 == 1:
            x = x[:, :-1]
        return self.fc(x).flatten(1, 2)
"""

RANGE = """\
import torch
import torch.nn as nn


class Unroll(nn.Module):
    def forward(self, x, schedule):
        steps, scale = schedule
        if steps > 2:
            x = x + 1
        for _ in range(steps):
            x = x * scale
        return x
"""

STATE = """\
import torch
import torch.nn as nn


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, state):
        h, c = state
        if h.abs().sum() > 0:
            x = x + h
        return self.fc(x) + c
"""

def test_sizes_unpacked_and_used_as_numbers_are_no_tensor():
    assert found(SIZE) == []
    assert found(RANGE) == []


def test_tensors_unpacked_from_a_state_keep_the_guess():
    assert found(STATE, codes={"PTC104"}) == [(12, "PTC104")]


def test_what_dynamo_does():
    pytest.importorskip("torch")
    lines = dynamo_break_lines_many([
        (SIZE, 'torch.compile(Block(), backend="eager")(torch.randn(2, 16, 8), (4, 4))'),
        (RANGE, 'torch.compile(Unroll(), backend="eager")(torch.randn(2, 4), (3, 0.5))'),
        (STATE, 'torch.compile(Cell(), backend="eager")(torch.randn(2, 8), (torch.randn(2, 8), torch.randn(2, 8)))'),
    ])
    assert lines == [[], [], [12]]
