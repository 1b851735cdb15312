"""Iterating a 1-d integer tensor gives 0-d integer tensors, and indexing with one reads its value
(``aten._local_scalar_dense``, GB0033).  The analysis knows a tensor is 1-d and integer where a
factory of Python ints made it (``torch.arange``, ``torch.randperm``, ``torch.tensor([0, 2, 5])``,
``torch.linspace(...).long()``, kept through ``flip``, ``clone``, slices and ``register_buffer``);
other tensors' elements may be
rows, which index without a break.  ``test_dynamo_agrees`` compiles each case with the
graph_breaks log."""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found

_HEAD = """\
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("alphas", torch.linspace(0.1, 0.9, 10))
        self.register_buffer("timesteps", torch.arange(0, 10, 3).flip(0))
        self.register_buffer("pairs", torch.tensor([[0, 1], [1, 0]]))
        self.register_buffer("steps", torch.linspace(0, 9, steps=4).round().long().flip(0))

    def forward(self, x):
"""

# (forward body, lines Dynamo breaks at; the body starts at line 14)
CASES = {
    "buffer of arange, flipped": ("for t in self.timesteps:\n    x = x * self.alphas[t]\nreturn x", [15]),
    "randperm": ("for i in torch.randperm(4):\n    x = x + self.alphas[i]\nreturn x", [15]),
    "literal index list": ("idx = torch.tensor([0, 2, 5])\nreturn torch.stack([x * self.alphas[i] for i in idx])", [15]),
    "rounded linspace made long": ("for t in self.steps:\n    x = x * self.alphas[t]\nreturn x", [15]),
    "slice of a 1-d buffer": ("for t in self.timesteps[:-1]:\n    x = x * self.alphas[t]\nreturn x", [15]),
    # near misses: the element used as a number, and the rows of a 2-d tensor used as indices
    "element used as a factor": ("for t in self.timesteps:\n    x = x * t\nreturn x", []),
    "rows of a 2-d tensor": ("table = self.alphas.view(5, 2)\nreturn torch.stack([table[p] for p in self.pairs]).sum() * x", []),
    "float arange": ("for t in torch.arange(0.0, 1.0, 0.5):\n    x = x * t\nreturn x", []),
}


def _source(body: str) -> str:
    return _HEAD + "".join(f"        {line}\n" for line in body.splitlines())


@pytest.mark.parametrize("name", sorted(CASES))
def test_indexing_with_an_element_is_found(name):
    body, breaks = CASES[name]
    assert found(_source(body), codes={"PTC103"}) == [(line, "PTC103") for line in breaks]


@pytest.mark.parametrize("name", sorted(CASES))
def test_dynamo_agrees(name):
    pytest.importorskip("torch")
    body, breaks = CASES[name]
    assert dynamo_break_lines(_source(body), 'torch.compile(Model(), backend="eager")(torch.randn(4))') == breaks
