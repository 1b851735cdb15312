"""Input validation: rates must be non-negative."""

import torch
from torch import nn


class PoissonHead(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.out = nn.Linear(dim, dim)

    def forward(self, rates):
        if (rates < 0).any():
            raise ValueError("rates must be non-negative")
        return self.out(torch.log1p(rates))


def make_model():
    return PoissonHead()


def example_inputs():
    return (torch.rand(4, 8),)
