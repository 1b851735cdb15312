"""A logger.warning call with an f-string of a tensor statistic."""

import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Scaler(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        logger.warning(f"scaler range {h.min()} .. {h.max()}")
        return h * 2


def make_model():
    return Scaler()


def example_inputs():
    return (torch.randn(4, 8),)
