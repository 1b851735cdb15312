"""A Python precondition (self.training) and a tensor test joined with `and`, no else."""

import torch
from torch import nn


class LossSpikeDamp(nn.Module):
    def __init__(self, dim: int = 8, spike: float = 0.0):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.spike = spike

    def forward(self, x):
        h = self.fc(x)
        if self.training and h.mean() > self.spike:
            h = h * 0.5
        return h


def make_model():
    return LossSpikeDamp()


def example_inputs():
    return (torch.randn(4, 8),)
