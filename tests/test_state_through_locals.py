"""A Python attribute of ``self`` written back from a local computed from it is a recompile.

``total = self.count + n`` then ``self.count = total`` (a running count kept as a Python int, an
online normaliser's Welford step) changes the value Dynamo guards on (``self.count == 0``) just as
``self.count = self.count + n`` does: every call recompiles (measured below, torch 2.13).  Before,
only a statement whose own right-hand side read ``self.count`` was seen.  The near misses: a
local that is the attribute unchanged (``c = self.count``, then ``self.count = c``), a local
stored into another attribute (the same value every call), a tensor attribute updated through a local, and a local
rebound to something unrelated before the store, compile one frame.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_frame_counts, found

SOURCE = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 0
        self.base = 1
        self.h = torch.zeros(4)

    def forward(self, x):
        n = x.shape[0]
        {body}
        return x * 2
"""

CASES = {
    "through_a_local": ("total = self.count + n; self.count = total", [(13, "PTC501")]),
    "through_two_locals": ("c = self.count; c = c + 1; self.count = c", [(13, "PTC501")]),
    "augmented_local": ("c = self.count; c += 1; self.count = c", [(13, "PTC501")]),
    "unchanged_copy": ("c = self.count; self.count = c", []),
    "other_attribute": ("total = self.count + 1; self.base = total", []),
    "rebound_before_the_store": ("c = self.count + 1; c = 0; self.count = c", []),
    "tensor_state": ("h = self.h * 0.5 + 1; self.h = h", []),
}
BUILD = "Net()"


@pytest.mark.parametrize("name", sorted(CASES))
def test_reported_only_when_the_value_comes_from_the_attribute_changed(name):
    body, expected = CASES[name]
    assert found(SOURCE.format(body=body), codes={"PTC501"}) == expected


WELFORD = """\
import torch


class Norm(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.register_buffer("mean", torch.zeros(d))
        self.count = 0

    def forward(self, x):
        if self.training:
            n = x.shape[0]
            total = self.count + n
            self.mean += (x.mean(0) - self.mean) * n / total
            self.count = total
        return x - self.mean
"""


def test_welford_count_in_a_branch():
    """The store sits in an ``if`` under ``self.training``, its source two statements above."""
    assert found(WELFORD, codes={"PTC501"}) == [(15, "PTC501")]


def test_recompiles_are_what_dynamo_does():
    pytest.importorskip("torch")
    cases = [(SOURCE.format(body=body), BUILD, "torch.randn(2, 4)") for body, _ in CASES.values()]
    cases.append((WELFORD, "Norm(4)", "torch.randn(2, 4)"))  # built in training mode
    recompiled = [count > 1 for count in dynamo_frame_counts(cases, calls=4)]
    assert recompiled == [bool(expected) for _, expected in CASES.values()] + [True]
