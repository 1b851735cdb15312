"""The branch indexes with a boolean mask whose size matches only when the test holds."""

import torch
from torch import nn


class KeepSelected(nn.Module):
    def forward(self, x, keep):
        if keep.sum() == x.shape[0]:
            y = x[keep] * 2.0
        else:
            y = x
        return y


def make_model():
    return KeepSelected()


def example_inputs():
    return (torch.randn(4, 8), torch.ones(4, dtype=torch.bool))
