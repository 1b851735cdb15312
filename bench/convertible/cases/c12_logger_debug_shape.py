"""A logger.debug call with the input shape."""

import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Encoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        logger.debug("encoder input %s", x.shape)
        return torch.relu(self.fc(x))


def make_model():
    return Encoder()


def example_inputs():
    return (torch.randn(4, 8),)
