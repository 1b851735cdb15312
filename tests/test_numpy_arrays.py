"""A NumPy array kept on a module (``self.strides = np.array([8, 16, 32])`` in ``__init__``) and
read in ``forward``: Dynamo wraps it as a tensor (``NumpyNdarrayVariable``), so its elements,
slices, iterates and reductions are 0-d tensors in the graph.  In arithmetic with tensors they
trace; a branch on them breaks, and so does every place that needs a Python number: ``int()``,
``float()``, ``.item()``, ``.tolist()``, a size, a slice bound, an integer index, ``math`` and
``range()`` of them.  The table is the probe: ``test_cases_match_dynamo`` re-runs every body on
torch 2.13 and reads the lines of Dynamo's ``graph_breaks`` log (``fullgraph=True`` is no probe
here: it captures the reads as unbacked SymInts and raises nothing)."""

from __future__ import annotations

import textwrap

import pytest

from linttools import dynamo_break_lines_many, found_with_messages

# (forward body, breaks on torch 2.13): ``self.arr = np.array([3, 2])``, ``self.one = np.array([2])``,
# ``self.half = np.float64(0.5)``, ``self.zero_d = np.array(3)``,
# ``self.scale = np.float32(2.0)``, ``self.hop = np.prod([2, 2])``, ``self.space.nvec = np.array([3, 2])``
# on a plain object; ``x = torch.randn(12)``.  The finding must be on the body's first line.
CASES = [
    ("if self.arr[0] > 2:\n    x = x + 1", True),
    ("if self.arr[1] == 2:\n    x = x - 1", True),
    ("if self.arr[0]:\n    x = x - 1", True),
    ("if -self.arr[0] < 0:\n    x = x - 1", True),
    ("if self.arr[0] * 2 > 3:\n    x = x - 1", True),
    ("if self.arr.sum() > 3:\n    x = x + 1", True),
    ("if self.arr[:1].max() > 1:\n    x = x - 1", True),
    ("if int(self.arr[0]) > 1:\n    x = x - 1", True),
    ("if self.arr[0].item() > 1:\n    x = x - 1", True),
    ("if self.arr.tolist()[0] > 1:\n    x = x - 1", True),
    ("if self.space.nvec[1] > 1:\n    x = x - 1", True),
    ("if self.scale > 1:\n    x = x - 1", True),
    ("for i in range(self.arr[0]):\n    x = x + 1", True),
    ("for v in self.arr:\n    x = x * 2 if v > 2 else x", True),
    # a Python number is needed: the element is read with aten._local_scalar_dense
    ("x = x.view(self.arr[1], -1)", True),
    ("x = x[: self.arr[1]]", True),
    ("x = x.new_zeros(int(self.arr[0]) * 2)", True),
    ("x = x * float(self.arr[0])", True),
    ("n = int(self.arr[0])\nx = x * n", True),
    ("x = x.reshape(self.arr[0], -1)", True),
    ("x = x.repeat(self.arr[0], 1)", True),
    ("x = x.new_zeros(self.arr[0]) + x.sum()", True),
    ("x = x[self.arr[0]]", True),
    ("x = x * [1.0, 2.0, 3.0][self.arr[1]]", True),
    ("x = x * math.sqrt(self.arr[0])", True),
    ("x = x[self.arr[1]:]", True),
    ("x = x * len(self.arr.tolist())", True),
    ("x = x * sum(self.arr.tolist())", True),
    ("x = x * self.one.item()", True),
    # near misses: arithmetic with tensors traces, and so do the array's shape and NumPy scalars
    ("x = x * self.hop.item()", False),
    ("x = x * float(self.half)", False),
    ("x = x * self.zero_d.item()", False),
    ("x = x * self.arr[0] * self.scale", False),
    ("x = x + self.arr.sum()", False),
    ("if self.arr.shape[0] > 1:\n    x = x - 1", False),
    ("if len(self.arr) > 1:\n    x = x - 1", False),
    ("if int(self.hop) > 1:\n    x = x - 1", False),
    ("x = x.view(int(self.hop), -1)", False),
]

_MODULE = """\
import math

import numpy as np
import torch


class Space:
    def __init__(self):
        self.nvec = np.array([3, 2])


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.arr = np.array([3, 2])
        self.scale = np.float32(2.0)
        self.hop = np.prod([2, 2])
        self.space = Space()
        self.one = np.array([2])
        self.half = np.float64(0.5)
        self.zero_d = np.array(3)

    def forward(self, x):
{body}
        return x
"""
_FIRST_LINE = 24


def _source(body: str) -> str:
    return _MODULE.format(body=textwrap.indent(body, " " * 8))


@pytest.mark.parametrize("body,breaks", CASES)
def test_flagged_exactly_where_dynamo_breaks(body, breaks):
    findings = [(line, code) for line, code, _ in found_with_messages(_source(body)) if code.startswith("PTC1")]
    assert bool(findings) is breaks, findings
    if breaks:
        assert [line for line, _ in findings] == [_FIRST_LINE + (1 if "v > 2" in body else 0)]


def test_the_message_names_the_numpy_array():
    [(line, code, message)] = found_with_messages(_source("if self.arr[0] > 2:\n    x = x + 1"))
    assert (line, code) == (_FIRST_LINE, "PTC104")
    assert "NumPy array" in message and "tensor value" not in message


def test_values_read_while_the_module_is_built_are_numbers():
    # ``int()``/``.item()``/``.tolist()`` in ``__init__`` run in plain NumPy: Python numbers, so a
    # branch on them in ``forward`` is on a constant
    src = """\
import numpy as np
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        arr = np.array([3, 2])
        self.n = int(arr[0])
        self.sizes = arr.tolist()
        self.m = arr[1].item()

    def forward(self, x):
        if self.n > 2 and self.sizes[1] > 1 and self.m > 1:
            x = x + 1
        return x
"""
    assert found_with_messages(src) == []


def test_cases_match_dynamo():
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    call = 'torch.compile(M(), backend="eager")(torch.randn(12))'
    measured = dynamo_break_lines_many([(_source(body), call) for body, _ in CASES])
    assert [bool(lines) for lines in measured] == [breaks for _, breaks in CASES], list(zip(CASES, measured))
    for (body, breaks), lines in zip(CASES, measured):
        if breaks:  # where the finding must be
            assert lines == [_FIRST_LINE + (1 if "v > 2" in body else 0)], (body, lines)
