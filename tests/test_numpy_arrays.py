"""A NumPy array kept on a module (``self.strides = np.array([8, 16, 32])`` in ``__init__``) and
read in ``forward``: Dynamo wraps it as a tensor (``NumpyNdarrayVariable``), so its elements,
slices, iterates and reductions are 0-d tensors in the graph.  Used as they are (a size, a slice
bound, a factor) they trace; a branch on them, on ``int()``/``.item()``/``.tolist()`` of them, or
``range()`` of them breaks.  The table is the probe: ``test_cases_match_dynamo`` re-runs every
body through ``torch.compile(fullgraph=True)`` on torch 2.13."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from linttools import found_with_messages

# (forward body, breaks on torch 2.13): ``self.arr = np.array([3, 2])``,
# ``self.scale = np.float32(2.0)``, ``self.hop = np.prod([2, 2])``, ``self.space.nvec = np.array([3, 2])``
# on a plain object; ``x = torch.randn(12)``.  The finding must be on the body's first line.
CASES = [
    ("if self.arr[0] > 2:\n    x = x + 1", True),
    ("if self.arr[1] == 2:\n    x = x - 1", True),
    ("if self.arr[0]:\n    x = x - 1", True),
    ("if -self.arr[0] < 0:\n    x = x - 1", True),
    ("if self.arr.sum() > 3:\n    x = x + 1", True),
    ("if self.arr[:1].max() > 1:\n    x = x - 1", True),
    ("if int(self.arr[0]) > 1:\n    x = x - 1", True),
    ("if self.arr[0].item() > 1:\n    x = x - 1", True),
    ("if self.arr.tolist()[0] > 1:\n    x = x - 1", True),
    ("if self.space.nvec[1] > 1:\n    x = x - 1", True),
    ("if self.scale > 1:\n    x = x - 1", True),
    ("for i in range(self.arr[0]):\n    x = x + 1", True),
    ("for v in self.arr:\n    x = x * 2 if v > 2 else x", True),
    # near misses: used as they are, they trace
    ("x = x.view(self.arr[1], -1)", False),
    ("x = x[: self.arr[1]]", False),
    ("x = x * self.arr[0] * self.scale", False),
    ("x = x.new_zeros(int(self.arr[0]) * 2)", False),
    ("x = x * float(self.arr[0])", False),
    ("if self.arr.shape[0] > 1:\n    x = x - 1", False),
    ("if len(self.arr) > 1:\n    x = x - 1", False),
    ("if int(self.hop) > 1:\n    x = x - 1", False),
    ("x = x.view(int(self.hop), -1)", False),
]

_MODULE = """\
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

    def forward(self, x):
{body}
        return x
"""
_FIRST_LINE = 19


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


_DYNAMO_PROBE = """
import sys, textwrap
import numpy as np
import torch
src = sys.stdin.read()
cases = eval(src)
out = []
for body, _ in cases:
    ns = {}
    exec(compile(MODULE.format(body=textwrap.indent(body, " " * 8)), "m.py", "exec"), ns)
    torch._dynamo.reset()
    try:
        torch.compile(ns["M"](), backend="eager", fullgraph=True)(torch.randn(12))
        out.append(False)
    except Exception:
        out.append(True)
print(out)
"""


def test_cases_match_dynamo():
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    code = f"MODULE = {_MODULE!r}\n" + _DYNAMO_PROBE
    proc = subprocess.run(
        [sys.executable, "-c", code], input=repr(CASES), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    measured = eval(proc.stdout.strip().splitlines()[-1])
    assert measured == [breaks for _, breaks in CASES]
