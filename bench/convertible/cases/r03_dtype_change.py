"""One branch returns integer codes, the other floats."""

import torch
from torch import nn


class Quantize(nn.Module):
    def forward(self, x):
        if x.abs().max() > 1:
            return x.round().long()
        return x


def make_model():
    return Quantize()


def example_inputs():
    return (torch.randn(4, 8),)
