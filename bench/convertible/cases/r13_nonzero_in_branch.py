"""A branch gathers the rows selected by nonzero(): a data-dependent size."""

import torch
from torch import nn


class GatherActive(nn.Module):
    def forward(self, x):
        active = x.sum(dim=1) > 0
        if active.any():
            idx = active.nonzero()[:, 0]
            out = x[idx].mean(dim=0)
        else:
            out = x.mean(dim=0)
        return out


def make_model():
    return GatherActive()


def example_inputs():
    return (torch.randn(6, 8),)
