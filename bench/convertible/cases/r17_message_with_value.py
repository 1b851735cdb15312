"""A validation raise whose message reads a tensor value."""

import torch
from torch import nn


class CheckMin(nn.Module):
    def forward(self, x):
        if (x < 0).any():
            raise ValueError("negative input, min=" + str(x.min().item()))
        return x.sqrt()


def make_model():
    return CheckMin()


def example_inputs():
    return (torch.rand(4, 8),)
