"""A branch stores a tensor on the module (a cache)."""

import torch
from torch import nn


class CacheLast(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None

    def forward(self, x):
        if x.sum() > 0:
            self.last = x.detach()
            x = x * 2
        return x


def make_model():
    return CacheLast()


def example_inputs():
    return (torch.randn(4, 8),)
