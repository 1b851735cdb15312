"""Mean over the finite entries, written with a mask."""

import torch
from torch import nn


class FiniteMean(nn.Module):
    def forward(self, x):
        m = x[torch.isfinite(x)].mean()
        return x - m


def make_model():
    return FiniteMean()


def example_inputs():
    return (torch.randn(4, 8),)
