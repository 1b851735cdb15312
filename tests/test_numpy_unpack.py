"""Unpacking a NumPy array attribute in forward binds parts traced from it.

``freq, _ = self.strides`` with ``self.strides = np.prod(..., axis=0)`` built in ``__init__``:
Dynamo wraps the array as a tensor and iterates it, so ``freq`` is a 0-d tensor in the graph and
``if x.shape[1] % freq:`` is data-dependent branching (measured on torch 2.13 with the
``graph_breaks`` log).  Before, unpacking gave a value of unknown kind and the branch was missed,
while ``self.strides[0]`` was found.  Near misses: unpacking a tuple of Python ints, unpacking in
``__init__`` into Python ints, arithmetic of a part with a tensor.  ``test_dynamo_agrees`` runs
each line alone.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import numpy as np
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.strides = np.prod(np.array([[2, 2], [2, 1]]), axis=0)
        self.sizes = (4, 2)
        self.f, self.t = [int(s) for s in self.strides]

    def forward(self, x):
"""
LINE = 14  # the line of the statement under test

# statement -> whether pt2lint reports it (and Dynamo breaks there)
CASES = {
    "freq, _ = self.strides\n        if x.shape[1] % freq:\n            x = x + 1\n        return x": 15,
    "freq, time = self.strides\n        return x.view(-1)[: freq * time]": 15,
    "*_, time = self.strides\n        if time > 1:\n            x = x + 1\n        return x": 15,
    "freq, _ = np.zeros(2) + 2\n        if freq > 1:\n            x = x + 1\n        return x": 15,
    # near misses
    "freq, _ = self.sizes\n        if x.shape[1] % freq:\n            x = x + 1\n        return x": None,
    "if x.shape[1] % self.f:\n            x = x + 1\n        return x": None,
    "freq, time = self.strides\n        return x * freq + time": None,
}


def _source(stmt: str) -> str:
    return HEADER + "        " + stmt + "\n"


@pytest.mark.parametrize("stmt", sorted(CASES))
def test_numpy_unpack(stmt):
    want = CASES[stmt]
    assert [line for line, _ in found(_source(stmt), codes=None)] == ([want] if want else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(4, 5))'
    measured = dynamo_break_lines_many([(_source(stmt), call) for stmt in CASES])
    assert measured == [[want] if want else [] for want in CASES.values()]
