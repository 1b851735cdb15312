"""A BatchNorm called in one branch only: it updates its running stats in train mode."""

import torch
from torch import nn


class CondNorm(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.bn = nn.BatchNorm1d(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            h = self.bn(h)
        else:
            h = h * 1.0
        return h


def make_model():
    return CondNorm()


def example_inputs():
    return (torch.randn(4, 8),)
