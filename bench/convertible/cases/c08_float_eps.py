"""Standardise, but skip the division when the variance is (almost) zero."""

import torch
from torch import nn


class Standardize(nn.Module):
    def __init__(self, eps: float = 1e-3):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        mean = x.mean()
        var = x.var()
        if float(var) < self.eps:
            out = x - mean
        else:
            out = (x - mean) / var.sqrt()
        return out


def make_model():
    return Standardize()


def example_inputs():
    return (torch.randn(4, 8),)
