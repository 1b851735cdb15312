"""A logger.info call with a tensor statistic."""

import logging

import torch
from torch import nn

log = logging.getLogger("model.decoder")


class Decoder(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, z):
        out = self.fc(z)
        log.info("decoder output mean %s", out.mean())
        return out


def make_model():
    return Decoder()


def example_inputs():
    return (torch.randn(4, 8),)
