"""Reassigning a module attribute of unknown type from a conversion of itself is no guarded state.

``self.window = self.window.to(x.device)`` (auraloss' STFT loss, with the window built by
``getattr(torch, name)(n)``) converts a tensor: Dynamo compiles one frame over several calls
(measured below, torch 2.13).  Before, a value of unknown type read back from itself was taken
for Python state and PTC501 warned.  A method no Python number, string or container has (``to``,
``detach``, ``float``) is what tells the value apart; arithmetic on an unknown value
(``self.scale * 0.9``) still is a recompile (a float attribute, measured below) and is reported.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_frame_counts, found

SOURCE = """\
import torch


class Net(torch.nn.Module):
    def __init__(self, cfg, window="hann_window"):
        super().__init__()
        self.window = getattr(torch, window)(4)
        self.h = cfg.h
        self.scale = cfg.scale

    def forward(self, x):
        {body}
        return x * self.window * self.h * self.scale
"""

CASES = {
    "to_device": ("self.window = self.window.to(x.device)", []),
    "chain": ("self.h = self.h.detach().to(x.dtype)", []),
    "arithmetic": ("self.scale = self.scale * 0.9", [(12, "PTC501")]),
    "float_method_on_the_result": ("self.scale = (self.scale * 0.9).conjugate()", [(12, "PTC501")]),
}
BUILD = "Net(__import__('types').SimpleNamespace(scale=1.0, h=torch.zeros(4)))"


@pytest.mark.parametrize("name", sorted(CASES))
def test_reported_only_for_guarded_values(name):
    body, expected = CASES[name]
    assert found(SOURCE.format(body=body), codes={"PTC501"}) == expected


def test_recompiles_are_what_dynamo_does():
    pytest.importorskip("torch")
    cases = [(SOURCE.format(body=body), BUILD, "torch.randn(2, 4)") for body, _ in CASES.values()]
    recompiled = [count > 1 for count in dynamo_frame_counts(cases, calls=4)]
    assert recompiled == [bool(expected) for _, expected in CASES.values()]
