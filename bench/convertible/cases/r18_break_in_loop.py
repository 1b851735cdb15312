"""Early exit from a refinement loop on a data-dependent test (break)."""

import torch
from torch import nn


class Refine(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.step = nn.Linear(dim, dim)

    def forward(self, x):
        for _ in range(3):
            delta = torch.tanh(self.step(x)) * 0.1
            if delta.abs().max() < 0.05:
                break
            x = x + delta
        return x


def make_model():
    return Refine()


def example_inputs():
    return (torch.randn(4, 8),)
