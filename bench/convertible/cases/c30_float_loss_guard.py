"""float() of a loss read only by the test that skips a penalty term."""

import torch
from torch import nn


class PenaltyLoss(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, 1)

    def forward(self, x, y):
        pred = self.fc(x)
        base = (pred - y).pow(2).mean()
        mean_pred = pred.mean()
        val = float(mean_pred)
        if val > 0.0:
            loss = base + 0.1 * mean_pred
        else:
            loss = base - 0.1 * mean_pred
        return loss


def make_model():
    return PenaltyLoss()


def example_inputs():
    return (torch.randn(4, 8), torch.randn(4, 1))
