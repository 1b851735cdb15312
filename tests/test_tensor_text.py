"""Text made from a tensor needs its value: ``str(t)``, ``repr(t)``, ``format(t)``, ``"%s" % t``.

Measured on torch 2.13 (graph_breaks log): each breaks where it is called, ``repr(t)`` as
``str(t)`` does; ``str(t.shape)`` and ``repr(t.dtype)`` are text of Python values and trace.
``test_dynamo_agrees`` runs each line.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
"""
LINE = 7  # the line of the statement under test

CASES = {
    "s = repr(x)": True,
    "s = str(x)": True,
    "s = '%s' % x": True,
    # near misses: text of Python values
    "s = repr(x.dtype)": False,
    "s = str(x.shape)": False,
}


def _source(stmt: str) -> str:
    return HEADER + "        " + stmt + "\n        return x * 2, s\n"


@pytest.mark.parametrize("stmt", sorted(CASES))
def test_tensor_text(stmt):
    got = [line for line, code in found(_source(stmt), codes=None) if code == "PTC103"]
    assert got == ([LINE] if CASES[stmt] else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 3))'
    measured = dynamo_break_lines_many([(_source(stmt), call) for stmt in CASES])
    assert measured == [[LINE] if breaks else [] for breaks in CASES.values()]
