"""A failure handler (``except Exception:``, ``except RuntimeError:``) runs only when the ``try`` body
fails, and Dynamo traces it only then: its graph breaks are not reported.

nnAudio's ``get_cqt_complex`` warns in an ``except`` around padding that never fails on the
traced path (no break there, measured on torch 2.13 with the graph_breaks log, below).  A handler
of a lookup miss (``except KeyError:``: a cache filled on the first call) runs in normal use, and
Dynamo traces it on that first call: still reported.  The handler's bindings flow on either way.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

SOURCE = """\
import warnings

import torch
from torch import nn


class Pad(nn.Module):
    def __init__(self):
        super().__init__()
        self.pad = nn.ReflectionPad1d(2)
        self.cache = {}

    def forward(self, x):
        try:
            x = self.pad(x)
        except (RuntimeError, NotImplementedError):
            warnings.warn("reflection padding failed, using zeros")
            x = torch.nn.functional.pad(x, (2, 2))
        except Exception as e:
            print("padding failed:", e)
            raise
        try:
            w = self.cache["w"]
        except KeyError:
            print("building the window")
            w = torch.ones(x.shape[-1])
        return x * w
"""


def test_failure_handlers_are_not_reported_lookup_misses_are():
    assert found(SOURCE, codes={"PTC301", "PTC303"}) == [(25, "PTC301")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Pad(), backend="eager")(torch.randn(2, 1, 16))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[25]]
