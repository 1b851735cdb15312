"""Residual with a data-dependent mixing weight; the block runs in both paths."""

import torch
from torch import nn


class MixResidual(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x):
        r = self.block(x)
        if (r * x).sum() > 0:
            out = x + r
        else:
            out = x - r
        return out


def make_model():
    return MixResidual()


def example_inputs():
    return (torch.randn(4, 8),)
