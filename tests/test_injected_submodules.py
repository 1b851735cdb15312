"""A module passed to another module class's constructor is that class's submodule.

``Net(Head())`` in a factory function, ``head = Head(...)`` then ``Net(task_heads=head)`` in a
``__main__`` demo: ``Head.forward`` runs inside ``Net``'s graph with what ``Net.forward``
passes (here a tuple of int pairs), not as a top-level model called with tensors.  Before,
``Head`` was analysed as a root and ``i == self.pathway`` over its ``interactions``
parameter, taken for a tensor, was reported as a data-dependent comprehension ``if``;
Dynamo compiles the model in one graph.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEAD = """\
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.pathway = 0
        self.proj = nn.Linear(8, 8)

    def forward(self, x, interactions):
        kept = tuple(j for i, j in interactions if i == self.pathway)
        return self.proj(x) * len(kept)


class Net(nn.Module):
    def __init__(self, head):
        super().__init__()
        self.interactions = ((0, 1), (0, 2), (1, 2))
        self.head = head

    def forward(self, x):
        return self.head(x, self.interactions)
"""

FACTORY = HEAD + """

def build():
    return Net(Head())
"""

DEMO = HEAD + """

if __name__ == "__main__":
    head = Head()
    model = Net(head=head)
"""

LIST_OF_HEADS = HEAD.replace("self.head = head", "self.head = head[0]") + """

def build():
    return Net([Head(), Head()])
"""

# (source, findings expected, how Dynamo compiles it)
CASES = {
    "built by a factory and passed to the parent": (FACTORY, [], "build()"),
    "a demo's variable passed by keyword": (DEMO, [], "Net(head=Head())"),
    "a list of instances": (LIST_OF_HEADS, [], "build()"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_injected_module_is_a_submodule(name):
    src, expected, _ = CASES[name]
    assert found(src, codes=None) == expected


def test_a_module_nobody_passes_on_is_still_a_top_level_model():
    # Head alone, compiled on tensors: `i == self.pathway` over a tensor's rows is a tensor test
    assert found(HEAD.split("\n\nclass Net")[0] + "\n", codes=None) == [(12, "PTC104")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [(src, f'torch.compile({make}, backend="eager")(torch.randn(2, 8))') for src, _, make in CASES.values()]
    alone = HEAD.split("\n\nclass Net")[0] + "\n"
    cases.append((alone, 'torch.compile(Head(), backend="eager")(torch.randn(2, 8), torch.tensor([[0, 1], [1, 2]]))'))
    *injected, head_alone = dynamo_break_lines_many(cases)
    assert injected == [[]] * len(CASES)
    assert head_alone == [12]
