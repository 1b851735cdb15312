"""A call that leaves a parameter out binds it to its default, and a branch on it is decided.

``def is_image(shape, check_channels=False)`` called as ``is_image(shape)``: ``check_channels`` is
``False`` in that call (Python evaluated the default once, at the ``def``), so
``if not check_channels: return True`` returns and the code after it never runs.  Before, a
``True``/``False`` or negative-number default was an unknown value, and the analysis followed
both ways: stable-baselines3's ``is_image_space`` (``check_channels=False``) and auraloss's
``STFTLoss(perceptual_weighting=False)`` got graph-break findings on lines no call reaches.
Measured on torch 2.13 with the graph_breaks log (below): no break when the argument is left out,
breaks when ``True`` is passed.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

SOURCE = """\
import warnings

import torch
from torch import nn


def channels_first(shape):
    if shape[0] == 1:
        warnings.warn("one channel")
    return shape[0] < shape[-1]


def is_image(shape, check_channels=False, min_side=-1):
    if len(shape) == 3:
        if not check_channels:
            return True
        return channels_first(shape)
    if min_side < 0:
        return False
    print("checking sides")
    return min(shape) >= min_side


class Sub(nn.Module):
    def __init__(self, n, verbose=False):
        super().__init__()
        self.scale = float(n)
        if verbose:
            print("built Sub")


class Net(nn.Module):
    def forward(self, x):
        s = Sub(x.shape[-1])
        if is_image(x.shape[1:]) and not is_image(x.shape):
            return x * s.scale
        return x
"""

CHECKED = """

class Checked(nn.Module):
    def forward(self, x):
        s = Sub(x.shape[-1], verbose=True)
        if is_image((1, 8, 8), check_channels=True):
            return x * s.scale
        return x
"""


CODES = {"PTC301", "PTC303", "PTC321"}


def test_left_out_arguments_take_their_defaults():
    assert found(SOURCE, codes=CODES) == []


def test_passed_arguments_still_reach_the_breaks():
    assert found(SOURCE + CHECKED, codes=CODES) == [
        (9, "PTC303"),  # check_channels=True reaches channels_first
        (26, "PTC321"),  # Sub(..., verbose=True) built in forward: its __init__ breaks
        (29, "PTC301"),  # the print verbose=True reaches
    ]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    net = 'torch.compile(Net(), backend="eager")(torch.randn(2, 3, 8, 8))'
    checked = 'torch.compile(Checked(), backend="eager")(torch.randn(2, 3, 8, 8))'
    assert dynamo_break_lines_many([(SOURCE, net), (SOURCE + CHECKED, checked)]) == [[], [9, 26, 29]]
