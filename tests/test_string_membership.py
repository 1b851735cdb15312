"""``"key" in v`` is no tensor membership test: ``Tensor.__contains__`` raises for a string.

A ``forward(self, x: dict[str, Tensor])`` that passes ``x["target_scale"]`` (a nested dict in
practice) to a helper testing ``if "scale" in target_scale:`` was reported as a tensor
``__contains__`` (PTC103): the caller's annotation made every value of ``x`` a tensor.  For a
tensor, ``"scale" in t`` raises in eager mode ("Tensor.__contains__ only supports Tensor or
scalar", torch 2.13), so in code that runs the value is not a tensor and the test is not reported.
``3 in ids`` with ``ids`` a tensor stays reported (GB0124).  ``test_dynamo_agrees`` runs the model.

The same holds for every left operand that is no tensor or number: ``Tensor.__contains__`` takes
a ``Tensor``, ``Number``, ``SymInt``, ``SymFloat`` or ``SymBool`` and raises for anything else
(torch/_tensor.py), so ``et in edge_index_dict`` with ``et`` a tuple of edge-type names (a
heterogeneous graph's keys), a list or ``None`` is a dict's membership test.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found

SOURCE = """\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x: dict[str, torch.Tensor], ids: torch.Tensor):
        p = self.lin(x["history_target"])
        if "target_scale" in x:
            p = self.transform_output(p, x["target_scale"])
        if 3 in ids:
            p = p + 1
        return p

    def transform_output(self, y_hat, target_scale: dict[str, torch.Tensor] | None):
        if "scale" in target_scale and "center" in target_scale:
            scale, center = target_scale["scale"], target_scale["center"]
        else:
            raise ValueError("no scale")
        return y_hat * scale + center
"""


def test_string_key_membership_is_not_a_tensor_test():
    assert found(SOURCE, codes=None) == [(14, "PTC103")]


def test_a_string_in_a_tensor_raises():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        "scale" in torch.ones(2)  # noqa: B015 - the membership test itself is what raises


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = (
        'torch.compile(M(), backend="eager")({"history_target": torch.randn(2, 6), '
        '"target_scale": {"scale": torch.rand(3), "center": torch.randn(3)}}, torch.tensor([1, 3]))'
    )
    assert dynamo_break_lines(SOURCE, call) == [14]


TUPLE_KEYS = """\
import torch
from torch import nn


class Hetero(nn.Module):
    def __init__(self):
        super().__init__()
        self.edge_types = [("user", "buys", "item"), ("item", "rev", "user")]
        self.lin = nn.Linear(4, 4)

    def forward(self, x, edge_index_dict):
        for et in self.edge_types:
            if et not in edge_index_dict:
                continue
            x = x + self.lin(x)[edge_index_dict[et][0]].sum(0)
        if None in edge_index_dict:
            x = x + 1
        return x
"""


def test_a_tuple_or_list_in_a_value_is_no_tensor_test():
    assert found(TUPLE_KEYS, codes=None) == []


def test_dynamo_agrees_on_tuple_keys():
    pytest.importorskip("torch")
    call = (
        'x = torch.randn(3, 4)\n'
        'torch.compile(Hetero(), backend="eager")(x, {("user", "buys", "item"): torch.tensor([[0, 1]])})\n'
    )
    assert dynamo_break_lines(TUPLE_KEYS, call) == []
