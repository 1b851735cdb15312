"""print of a tensor and literals (no f-string)."""

import torch
from torch import nn


class Probe(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        print("hidden", h.norm(), "done")
        return h


def make_model():
    return Probe()


def example_inputs():
    return (torch.randn(4, 8),)
