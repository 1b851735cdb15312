"""Max-norm clipping with the norm read as a Python float for the test only."""

import torch
from torch import nn


class MaxNormEmbed(nn.Module):
    def __init__(self, dim: int = 8, max_norm: float = 2.0):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.max_norm = max_norm

    def forward(self, x):
        h = self.proj(x)
        norm = h.norm().item()
        if norm > self.max_norm:
            h = h * (self.max_norm / (h.norm() + 1e-6))
        return h


def make_model():
    return MaxNormEmbed()


def example_inputs():
    return (torch.randn(4, 8),)
