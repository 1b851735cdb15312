"""One branch returns an auxiliary tensor, the other None."""

import torch
from torch import nn


class AuxHead(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            aux = h.pow(2)
        else:
            aux = None
        return h, aux


def make_model():
    return AuxHead()


def example_inputs():
    return (torch.randn(4, 8),)
