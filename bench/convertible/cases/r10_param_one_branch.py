"""Drop-path style skip: the block's parameters are used in one branch only."""

import torch
from torch import nn


class DropBlock(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.block = nn.Linear(dim, dim)

    def forward(self, x):
        if x.mean() > 0:
            return x
        return x + self.block(x)


def make_model():
    return DropBlock()


def example_inputs():
    return (torch.randn(4, 8),)
