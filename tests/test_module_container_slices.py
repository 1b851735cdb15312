"""A slice of an ``nn.ModuleList``/``nn.Sequential`` holds the submodules at those positions.

``for layer in self.layers[: self.depth]`` runs the same class of layer as
``for layer in self.layers``; ``self.blocks[1:]`` of ``[Gate(), Plain(), Plain()]`` never runs
``Gate``.  Before, a sliced container was taken for one of its elements: the loop's calls were
not followed, so a break in the layer was not seen from the loop (where it makes Dynamo skip
the whole ``forward``, and what follows the loop is never compiled), and every position was
taken to hold every class.  Each expectation is Dynamo's (``test_dynamo_agrees``).
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

BLOCKS = """\
import warnings
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x):
        if x > 0:
            return x * 2
        return x


class Plain(nn.Module):
    def forward(self, x):
        return x + 1


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Gate(), Plain(), Plain()])
        self.seq = nn.Sequential(Plain(), Plain(), Gate())
        self.layers = nn.ModuleList([Gate() for _ in range(3)])
        self.depth = 2

    def forward(self, x):
{body}
        return x
"""

GATE_LINE = 8

# forward's body -> the lines Dynamo reports (the same as pt2lint's findings)
CASES = {
    "a slice past the gate": ("        for b in self.blocks[1:]:\n            x = b(x)", []),
    "a slice holding the gate": ("        for b in self.blocks[:1]:\n            x = b(x)", [GATE_LINE]),
    "the gate's position": ("        x = self.blocks[0](x)", [GATE_LINE]),
    "another position": ("        x = self.blocks[-1](x)", []),
    "a sequential slice without the gate": ("        x = self.seq[:-1](x)", []),
    "a sequential slice with a step that picks the gate": ("        x = self.seq[::2](x)", [GATE_LINE]),
    # a break in a loop body (here in the layer it calls) makes Dynamo skip the frame: the
    # warning after the loop is never compiled, so it is no break of its own
    "a loop over a slice of unknown bound, then a warning": (
        "        for layer in self.layers[: self.depth]:\n            x = layer(x)\n"
        "        if x.shape[0] > 1:\n            warnings.warn('big batch')",
        [GATE_LINE],
    ),
}


def _source(body: str) -> str:
    return BLOCKS.format(body=body)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_slice_holds_the_submodules_at_its_positions(name):
    body, lines = CASES[name]
    assert found(_source(body), codes=None) == [(line, "PTC104") for line in lines]


def test_a_list_grown_after_it_is_built_forgets_its_positions():
    src = _source("        x = self.grown[1](x)").replace(
        "        self.depth = 2\n",
        "        self.depth = 2\n        grown = nn.ModuleList([Plain()])\n        grown.append(Gate())\n        self.grown = grown\n",
    )
    assert found(src, codes=None) == [(GATE_LINE, "PTC104")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [(_source(body), 'torch.compile(Net(), backend="eager")(torch.ones(1))') for body, _ in CASES.values()]
    assert dynamo_break_lines_many(cases) == [lines for _, lines in CASES.values()]
