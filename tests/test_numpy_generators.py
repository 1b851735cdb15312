"""A NumPy generator object built in ``__init__`` and drawn from in ``forward`` breaks at the draw.

``self.rng = np.random.default_rng(0)`` (or ``RandomState``, a bit generator) builds an object of a
C class; a compiled ``forward`` that calls any of its methods (``self.rng.random()``,
``self.rng.integers(1, 4)``) breaks there ("Unsupported method call", GB0156, torch 2.13; the
facts table's ``numpy_objects`` probes).  Before, the object was taken for a NumPy array built
while the module is built, its draw for an element of that array, and the ``if`` on the draw was
reported (PTC104) instead of the draw.  Near misses: an array built by ``np.random.rand(3)`` and read
in ``forward`` (Dynamo wraps it as a tensor: nothing breaks at the read), a draw in ``__init__``, and
a draw in a method no compiled region reaches.  ``test_dynamo_agrees`` runs each case.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import numpy as np
import torch
from numpy.random import default_rng
from torch import nn


class Net(nn.Module):
    def __init__(self, seed=0):
        super().__init__()
        self.rng = np.random.default_rng(seed)
        self.state = np.random.RandomState(0)
        self.other = default_rng()
        self.arr = np.random.rand(3)
        self.p = self.rng.random()

    def sample(self):
        return self.rng.random()

    def forward(self, x):
"""
LINE = 20  # the line of the first statement under test

# forward body -> the lines (relative to LINE) pt2lint reports with PTC305, which are Dynamo's break lines
CASES = {
    "use = self.rng.random() < 0.5\n        if use:\n            x = x + 1\n        return x": [0],
    "n = self.rng.integers(1, 4, endpoint=True)\n        return x * n": [0],
    "return x * self.state.rand()": [0],
    "return x + self.other.standard_normal()": [0],
    "rng = self.rng\n        return x * rng.uniform()": [1],
    # near misses
    "return x * self.arr[0]": [],
    "return x * self.p": [],
}


def _source(body: str) -> str:
    return HEADER + "        " + body + "\n"


@pytest.mark.parametrize("body", sorted(CASES))
def test_generator_draws(body):
    assert found(_source(body), codes=None) == [(LINE + d, "PTC305") for d in CASES[body]]


def test_message_names_the_class():
    from linttools import found_with_messages

    [(line, code, message)] = found_with_messages(_source("n = self.rng.integers(1, 4)\n        return x * n"))
    assert (line, code) == (LINE, "PTC305")
    assert "NumPy `Generator`" in message and "GB0156" in message


def test_dynamo_agrees():
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(3))'
    measured = dynamo_break_lines_many([(_source(body), call) for body in CASES])
    assert measured == [[LINE + d for d in lines] for lines in CASES.values()]
