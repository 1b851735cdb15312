"""Debug print of a tensor in forward."""

import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, 1)

    def forward(self, x):
        y = self.fc(x)
        print("prediction mean:", y.mean())
        return y


def make_model():
    return Regressor()


def example_inputs():
    return (torch.randn(4, 8),)
