"""Three activation regimes chosen from the batch mean (an if/elif/else chain)."""

import torch
from torch import nn


class Regimes(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        m = h.mean()
        if m > 0.2:
            out = torch.relu(h)
        elif m < -0.2:
            out = torch.tanh(h)
        else:
            out = h * 0.5
        return out


def make_model():
    return Regimes()


def example_inputs():
    return (torch.randn(6, 8) + 1.0,)
