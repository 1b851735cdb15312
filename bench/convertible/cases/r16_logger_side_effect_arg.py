"""A logger call whose argument advances an iterator (skipping it changes the state)."""

import itertools
import logging

import torch
from torch import nn

logger = logging.getLogger(__name__)


class Stepper(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = itertools.count()

    def forward(self, x):
        logger.info("step %d", next(self.steps))
        return x * 2


def make_model():
    return Stepper()


def example_inputs():
    return (torch.randn(4, 8),)
