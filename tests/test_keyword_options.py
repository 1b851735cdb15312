"""A Python value passed by keyword does not hide a 0-d tensor read as a number.

The facts table's op probes pass their arguments by position (``x.topk(n)``,
``torch.chunk(x, n, -1)``), so a call with any keyword outside the factory options matched no
probe, and ``x.topk(k, dim=-1)`` / ``torch.chunk(x, k, dim=0)`` with ``k = (x > 0).sum()`` went
unreported.  A keyword holding a Python value is now left out of the match (its default taken):
whether a tensor among the positional arguments is read as a number does not depend on it.  A
keyword holding a tensor, or a value of unknown kind, still matches nothing.  ``test_dynamo_agrees``
runs each line.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        k = (x > 0).sum().clamp(1, 3)
"""
LINE = 8  # the line of the statement under test

# statement -> whether pt2lint reports it (and Dynamo breaks there)
CASES = {
    "return x.topk(k, dim=-1).values": True,
    "return torch.chunk(x, k, dim=0)[0]": True,
    "return x.topk(k, dim=0, largest=False).indices": True,
    # near misses: no tensor where a number goes, and a tensor operand beside a keyword option
    "return x.topk(3, dim=-1).values": False,
    "return x.add(k, alpha=2)": False,
    "return torch.chunk(x, 2, dim=0)[0] * k": False,
}


def _source(stmt: str) -> str:
    return HEADER + "        " + stmt + "\n"


@pytest.mark.parametrize("stmt", sorted(CASES))
def test_keyword_option(stmt):
    got = [line for line, code in found(_source(stmt), codes=None) if code == "PTC103"]
    assert got == ([LINE] if CASES[stmt] else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(4, 5))'
    measured = dynamo_break_lines_many([(_source(stmt), call) for stmt in CASES])
    assert measured == [[LINE] if breaks else [] for breaks in CASES.values()]
