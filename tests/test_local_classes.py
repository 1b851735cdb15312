"""A model class defined inside a function (a factory: ``def make(): class Net(nn.Module): ...``)
is analysed like a module-level one; before, it was never looked at and its breaks went
unreported.  Its name stays the function's: a module-level class of the same name is still
what the module's own code builds."""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
import torch.nn as nn


def make(scale):
    class Net(nn.Module):
        def forward(self, x):
            print("scale", scale)
            return x * x.sum().item()

    return Net()


class Net(nn.Module):
    def forward(self, x):
        return x * 2


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Net()

    def forward(self, x):
        return self.inner(x) + 1
"""


def test_a_model_defined_in_a_factory_is_analysed():
    assert found(SOURCE, codes=None) == [(8, "PTC301"), (9, "PTC101")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [
        (SOURCE, 'torch.compile(make(2), backend="eager")(torch.ones(3))'),
        (SOURCE, 'torch.compile(Outer(), backend="eager")(torch.ones(3))'),
    ]
    assert dynamo_break_lines_many(cases) == [[8, 9], []]
