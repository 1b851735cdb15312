"""Validation raise with an else body that does the work."""

import torch
from torch import nn


class ProbHead(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, probs):
        if (probs > 1).any():
            raise ValueError("probabilities above one")
        else:
            out = self.fc(probs)
        return out


def make_model():
    return ProbHead()


def example_inputs():
    return (torch.rand(4, 8) * 0.9,)
