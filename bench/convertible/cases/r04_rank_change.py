"""One branch reduces to a scalar, the other keeps the tensor."""

import torch
from torch import nn


class ReduceMaybe(nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            out = x.sum()
        else:
            out = x * 2
        return out


def make_model():
    return ReduceMaybe()


def example_inputs():
    return (torch.randn(4, 8),)
