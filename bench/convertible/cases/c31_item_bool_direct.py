"""`if t.item():` on a boolean one-element tensor."""

import torch
from torch import nn


class SkipIfZero(nn.Module):
    def forward(self, x):
        nonzero = (x != 0).any()
        if nonzero.item():
            y = x / (x.abs().amax() + 1e-6)
        else:
            y = x + 1.0
        return y


def make_model():
    return SkipIfZero()


def example_inputs():
    return (torch.randn(4, 8),)
