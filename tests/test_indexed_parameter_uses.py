"""An element of a parameter, read with a constant index and used as a Python number, is a size.

``x.view(B, hw_shape[0], hw_shape[1], C)`` and ``if hw_shape[0] % 2 == 1:`` (a feature map's size
passed next to its tokens), or ``h = size[0]`` then ``if h > 2:``: the unannotated parameter was
guessed a tensor, ``hw_shape[0]`` a 0-d tensor, and the ``if`` a data-dependent branch.  Called with
a tuple of ints, Dynamo traces one graph (measured below, torch 2.13).  An element read with a
constant index now speaks for the parameter as the parameter itself would.  The near miss: an
element read with a tensor's attribute (``state[0].abs().sum()``) keeps the guess, and the branch
on it still breaks.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

ELEMENTS = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def forward(self, x, hw_shape):
        B, L, C = x.shape
        x = x.view(B, hw_shape[0], hw_shape[1], C)
        if hw_shape[0] % 2 == 1:
            x = x[:, :-1]
        return x.flatten(1, 2)


class Crop(nn.Module):
    def forward(self, x, size):
        h = size[0]
        w = size[-1]
        if h > 2:
            x = x * 2
        return x.reshape(-1, h, w)
"""

STATE = """\
import torch
import torch.nn as nn


class Cell(nn.Module):
    def forward(self, x, state):
        if state[0].abs().sum() > 0:
            x = x + state[0]
        return x * state[1]
"""


def test_elements_used_as_numbers_are_no_tensor():
    assert found(ELEMENTS) == []


def test_elements_used_as_tensors_keep_the_guess():
    assert found(STATE, codes={"PTC104"}) == [(7, "PTC104")]


def test_what_dynamo_does():
    pytest.importorskip("torch")
    lines = dynamo_break_lines_many([
        (ELEMENTS, 'torch.compile(Block(), backend="eager")(torch.randn(2, 12, 4), (3, 4))\n'
                   'torch.compile(Crop(), backend="eager")(torch.randn(2, 4, 5), (4, 5))'),
        (STATE, 'torch.compile(Cell(), backend="eager")(torch.randn(2, 4), (torch.randn(2, 4), torch.randn(2, 4)))'),
    ])
    assert lines == [[], [7]]
