"""PTC702 and a factory's tensor that only Python reads (``pt2lint.rules.sync._stays_on_the_host``).

The random layer-drop idiom draws a CPU mask and reads it in Python
(``[layer for layer, drop in zip(layers, to_drop) if not drop]``): it is never copied to the
device, so the host-to-device copy PTC702 warns about does not happen, and its advice
(``device=x.device``) would add a device-to-host read per use.  The read is a graph break
(PTC104, checked against the graph_breaks log below).  A mask that meets a tensor is still
flagged.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found

LAYER_DROP = """\
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
        self.p = p

    def forward(self, x):
        to_drop = torch.zeros(len(self.layers)).uniform_(0., 1.) < self.p
        if all(to_drop):
            to_drop[0] = False
        layers = [layer for layer, drop in zip(self.layers, to_drop) if not drop]
        for layer in layers:
            x = layer(x)
        return x
"""


def test_a_mask_only_python_reads_is_no_host_to_device_copy():
    assert found(LAYER_DROP, codes=None) == [(13, "PTC104"), (15, "PTC104")]


@pytest.mark.parametrize("use, line", [
    ("        x = x * to_drop.float().sum()\n", 12),  # meets the input: copied to its device
    ("        x = x[:, : len(self.layers)][:, to_drop]\n", 12),  # indexes a tensor
    ("        helper = to_drop\n", 12),  # passed on: what happens to it is not read here
])
def test_a_mask_that_meets_a_tensor_is_still_flagged(use, line):
    src = LAYER_DROP.replace("        return x\n", use + "        return x\n")
    assert (line, "PTC702") in found(src, codes=None)


def test_a_mask_mixed_with_a_tensor_where_it_is_made_is_still_flagged():
    src = LAYER_DROP.replace("< self.p", "< x[0, :3].sigmoid()")
    assert (12, "PTC702") in found(src, codes=None)


def test_dynamo_breaks_where_python_reads_the_mask():
    pytest.importorskip("torch")
    lines = dynamo_break_lines(LAYER_DROP, 'torch.compile(Model(), backend="eager")(torch.randn(2, 8))')
    assert lines == [13, 15]  # the two reads; nothing at the factory


HELPER_FORM = """\
import torch
from torch import nn


def dropout_layers(layers, dropout):
    if dropout == 0:
        return layers
    to_drop = torch.zeros(len(layers)).uniform_(0., 1.) < dropout
    return [layer for layer, drop in zip(layers, to_drop) if not drop]


class Model(nn.Module):
    def __init__(self, layer_dropout=0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
        self.layer_dropout = layer_dropout

    def forward(self, x):
        for layer in dropout_layers(self.layers, self.layer_dropout):
            x = layer(x)
        return x
"""


def test_the_helper_form_of_the_idiom():
    # vit-pytorch's cait/xcit: the probability reaches the helper as a parameter
    assert found(HELPER_FORM, codes=None) == [(9, "PTC104")]
    pytest.importorskip("torch")
    assert dynamo_break_lines(HELPER_FORM, 'torch.compile(Model(), backend="eager")(torch.randn(2, 8))') == [9]
