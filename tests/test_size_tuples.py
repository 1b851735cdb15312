"""A 0-d tensor beside or inside a tuple of sizes is read into Python as a number.

``torch.randint(0, n, (3,))``, ``torch.randint(n, (3,))``, ``x.new_full((2, 3), s)`` and
``F.pad(x, (0, n))`` with ``n``/``s`` 0-d tensors: torch reads the tensor as an int or a fill
value (``aten._local_scalar_dense``) and Dynamo breaks with "Data dependent operator" (GB0033).
The facts table's op scan probes these argument lists (a tuple of sizes, ``"S"``, or a tuple
holding the 0-d tensor, ``"S[T]"``).  Near misses: ``torch.full((2, 3), s)`` (the fill value
stays a tensor: traced), Python ints everywhere, a tensor of unknown rank where a probe had a
0-d one is still reported only as the probe's kind matched.  ``test_dynamo_agrees`` runs each
line alone.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        n = (x > 0).sum() // 8 + 1
        s = x.sum()
"""
LINE = 10  # the line of the statement under test

# statement -> whether pt2lint reports it (and Dynamo breaks there)
CASES = {
    "return torch.randint(0, n, (3,))": True,
    "return torch.randint(n, (3,))": True,
    "return torch.randint(0, n, (3,), device=x.device)": True,
    "return x.new_full((2, 3), s)": True,
    "return x.new_full((2, 3), n)": True,
    "return F.pad(x, (0, n))": True,
    "return F.pad(x, [0, n])": True,
    "return torch.nn.functional.pad(x, (n, 0))": True,
    "return x.tile((1, n))": True,
    "return x.new_ones((2, n))": True,
    # near misses
    "return torch.full((2, 3), s)": False,
    "return torch.full((2, 3), n)": False,
    "return torch.randint(0, 5, (3,))": False,
    "return torch.randint(0, x.shape[0], (3,))": False,
    "return x.new_full((2, 3), 0.5)": False,
    "return x.new_full((2, x.shape[1]), 1.0)": False,
    "return F.pad(x, (0, 2))": False,
    "return F.pad(x, (0, x.shape[-1]))": False,
}


def _source(stmt: str) -> str:
    return HEADER + "        " + stmt + "\n"


@pytest.mark.parametrize("stmt", sorted(CASES))
def test_size_tuple_reads(stmt):
    # (PTC702, a factory without ``device=``, is about CUDA graphs, not this line's break)
    got = [(line, code) for line, code in found(_source(stmt), codes=None) if line == LINE and code != "PTC702"]
    assert got == ([(LINE, "PTC103")] if CASES[stmt] else [])


def test_message_names_the_number_read():
    from linttools import found_with_messages

    (msg,) = [m for _, code, m in found_with_messages(_source("return F.pad(x, (0, n))")) if code == "PTC103"]
    assert "`torch.nn.functional.pad()` is given a tensor where it needs a Python number" in msg
    assert "GB0033" in msg


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(4, 5))'
    measured = dynamo_break_lines_many([(_source(stmt), call) for stmt in CASES])
    assert measured == [[LINE] if breaks else [] for breaks in CASES.values()]
