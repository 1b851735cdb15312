"""The .item() value steers the branch and is also returned as a Python number."""

import torch
from torch import nn


class NormReport(nn.Module):
    def forward(self, x):
        n = x.norm().item()
        if n > 4.0:
            x = x / 2.0
        return x, n


def make_model():
    return NormReport()


def example_inputs():
    return (torch.randn(4, 8),)
