"""Writes to the standard streams break like ``print``: ``sys.stdout.write(...)``.

``sys.stdout`` and ``sys.stderr`` are C file objects; their methods are bound builtin methods,
which Dynamo does not trace (the facts table's ``calls`` probes: GB0156 on torch 2.13).  PTC307
reports them; ``sys.version_info`` and ``sys.maxsize`` are values and trace.  ``test_dynamo_agrees``
runs each line.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import sys
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
"""
LINE = 8  # the line of the statement under test

CASES = {
    "sys.stdout.write('step\\n')": True,
    "sys.stderr.write('step')": True,
    "sys.stdout.flush()": True,
    # near misses: values of the sys module
    "x = x * sys.maxsize": False,
    "x = x + (1 if sys.version_info >= (3, 9) else 0)": False,
}


def _source(stmt: str) -> str:
    return HEADER + "        " + stmt + "\n        return x * 2\n"


@pytest.mark.parametrize("stmt", sorted(CASES))
def test_standard_stream(stmt):
    got = [(line, code) for line, code in found(_source(stmt), codes=None)]
    assert got == ([(LINE, "PTC307")] if CASES[stmt] else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 3))'
    measured = dynamo_break_lines_many([(_source(stmt), call) for stmt in CASES])
    assert measured == [[LINE] if breaks else [] for breaks in CASES.values()]
