"""Fail fast on NaN activations."""

import torch
from torch import nn


class NanGuard(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        if torch.isnan(h).any():
            raise RuntimeError("NaN in hidden states")
        return torch.relu(h)


def make_model():
    return NanGuard()


def example_inputs():
    return (torch.randn(4, 8),)
