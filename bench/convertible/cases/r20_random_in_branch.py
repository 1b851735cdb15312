"""A branch draws random noise: the draw happens only when the test holds."""

import torch
from torch import nn


class NoisyWhenLarge(nn.Module):
    def forward(self, x):
        if x.std() > 1.0:
            x = x + 0.1 * torch.randn_like(x)
        return x


def make_model():
    return NoisyWhenLarge()


def example_inputs():
    return (torch.randn(4, 8),)
