"""A branch clamps the caller's tensor in place."""

import torch
from torch import nn


class ClampInPlace(nn.Module):
    def forward(self, x):
        if (x < 0).any():
            x.clamp_(min=0)
        return x * 2


def make_model():
    return ClampInPlace()


def example_inputs():
    return (torch.randn(4, 8),)
