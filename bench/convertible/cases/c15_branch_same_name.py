"""Pick the temperature from the logit spread; both branches assign one name."""

import torch
from torch import nn


class AdaptiveTemp(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        logits = self.fc(x)
        if logits.std() > 1.0:
            scaled = logits / 2.0
        else:
            scaled = logits * 1.5
        return torch.log_softmax(scaled, dim=-1)


def make_model():
    return AdaptiveTemp()


def example_inputs():
    return (torch.randn(4, 8),)
