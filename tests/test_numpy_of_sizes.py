"""NumPy functions of one size (``np.sqrt(x.shape[-1])``, ``np.ceil(h / 8) * 8 - h`` with ``h``
unpacked from ``x.size()``): Dynamo's fake tensors constant-fold a floating NumPy scalar computed
from Python numbers, so ``int()``/``float()``/``.item()`` of it is no break, while a NumPy
function of a whole shape tuple (``np.prod(x.shape[1:])``) gives an integer array whose read
breaks.  A size is one number when it is an element of a shape, ``x.size(d)``, ``x.numel()``,
a name unpacked from a shape, or arithmetic of those (``kinds.SIZE``).  The table is the probe:
``test_cases_match_dynamo`` runs every body on torch 2.13 and reads the ``graph_breaks`` log."""

from __future__ import annotations

import textwrap

import pytest

from linttools import dynamo_break_lines_many, found

# (forward body, breaks); ``x = torch.randn(2, 3, 16)``.  A break must be on the body's first line.
CASES = [
    ("s = float(np.sqrt(x.shape[-1]))\nx = x / s", False),
    ("t = np.sqrt(x.shape[-1]).item()\nx = x / t", False),
    ("d = x.size(-1)\nx = x / float(np.sqrt(d))", False),
    ("h, w = x.size()[-2:]\npad = int(np.ceil(h / 8) * 8 - h)\nx = x * pad", False),
    ("n = int(np.sqrt(x.numel()))\nx = x * n", False),
    ("s = float(np.sqrt(x.shape[1] * x.shape[2]))\nx = x / s", False),
    ("n = int(np.prod(x.shape[1:]))\nx = x.view(-1, n)", True),
    ("n = int(np.prod(x.shape))\nx = x * n", True),
]

_MODULE = """\
import numpy as np
import torch


class M(torch.nn.Module):
    def forward(self, x):
{body}
        return x
"""
_FIRST_LINE = 7


def _source(body: str) -> str:
    return _MODULE.format(body=textwrap.indent(body, " " * 8))


@pytest.mark.parametrize("body,breaks", CASES)
def test_flagged_exactly_where_dynamo_breaks(body, breaks):
    lines = [line for line, code in found(_source(body)) if code[:4] in ("PTC1", "PTC2", "PTC3")]
    assert lines == ([_FIRST_LINE] if breaks else []), lines


def test_cases_match_dynamo():
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    call = 'torch.compile(M(), backend="eager")(torch.randn(2, 3, 16))'
    measured = dynamo_break_lines_many([(_source(body), call) for body, _ in CASES])
    assert measured == [[_FIRST_LINE] if breaks else [] for _, breaks in CASES], list(zip(CASES, measured))
