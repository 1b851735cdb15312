"""Sign-dependent scaling written as a conditional expression."""

import torch
from torch import nn


class SignScale(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        s = h.sum()
        y = h * 2.0 if s > 0 else h * 0.5
        return y


def make_model():
    return SignScale()


def example_inputs():
    return (torch.randn(4, 8),)
