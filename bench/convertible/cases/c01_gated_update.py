"""Gated update: the same projection in both branches, scaled differently by a data-dependent gate."""

import torch
from torch import nn


class GatedUpdate(nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.gate = nn.Linear(dim, 1)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x)).mean()
        if g > 0.5:
            h = x + self.proj(x)
        else:
            h = x - 0.5 * self.proj(x)
        return h


def make_model():
    return GatedUpdate()


def example_inputs():
    return (torch.randn(4, 16),)
