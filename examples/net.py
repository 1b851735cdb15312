"""A small model with three things torch.compile cannot trace, to try pt2lint on.

`pt2lint check examples/` reports them; `pt2lint fix examples/` guards the `print`;
`pt2lint confirm examples/` compiles the model and confirms each finding.
"""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.update = nn.Linear(dim, dim)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        if (g > 0.5).any():
            x = x + g * self.update(x)
        print("gate mean", g.mean())
        scale = x.abs().max().item()
        return x / scale


def make_model():
    return Net()


def example_inputs():
    return (torch.randn(4, 8),)
