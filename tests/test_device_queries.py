"""Queries of the device and backend modules inside a compiled region.

``torch.cuda.memory_allocated()``, ``torch.cuda.device_count()``, ``torch.cuda.is_bf16_supported()``,
``torch.backends.cuda.flash_sdp_enabled()``: Dynamo's trace rules put these functions in the graph
(``TorchInGraphFunctionVariable``) and reject their non-tensor result ("torch.* op returned
non-Tensor", GB0208); the facts table's ``torch_queries`` probes say which (the same call on any
device: the trace rule is static, and none of them is folded at trace time).  Given only Python
values (``is_bf16_supported(including_emulation=False)``, ``memory_allocated(0)``) the result is
still no tensor, and the call breaks the same way.  Near misses:
``torch.cuda.is_available()`` and ``torch.cuda.is_initialized()`` (answered at trace time), the
same queries in ``__init__``.  ``test_dynamo_agrees`` runs each line alone.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.budget = torch.cuda.memory_allocated()
        self.bf16 = torch.cuda.is_bf16_supported()

    def forward(self, x):
        y = x * 2
"""
LINE = 13  # the line of the statement under test

# statement -> whether pt2lint reports it (and Dynamo breaks there)
CASES = {
    "used = torch.cuda.memory_allocated()\n        return y + used": True,
    "peak = torch.cuda.max_memory_allocated()\n        return y + peak": True,
    "n = torch.cuda.device_count()\n        return y + n": True,
    "dt = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16\n        return y.to(dt)": True,
    "flash = torch.backends.cuda.flash_sdp_enabled()\n        return y + int(flash)": True,
    "stats = torch.cuda.memory_stats()\n        return y + len(stats)": True,
    # given Python values only, the result is still no tensor
    "dt = torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16\n        return y.to(dt)": True,
    "used = torch.cuda.memory_allocated(0)\n        return y + used": True,
    "peak = torch.cuda.max_memory_allocated(device=y.device)\n        return y + peak": True,
    # near misses: answered at trace time, or asked in __init__
    "on = torch.cuda.is_available()\n        return y + int(on)": False,
    "ready = torch.cuda.is_initialized()\n        return y + int(ready)": False,
    "return y + self.budget": False,
    "return y.to(torch.bfloat16 if self.bf16 else torch.float32)": False,
}


def _source(stmt: str) -> str:
    return HEADER + "        " + stmt + "\n"


@pytest.mark.parametrize("stmt", sorted(CASES))
def test_device_query(stmt):
    assert [line for line, _ in found(_source(stmt), codes=None)] == ([LINE] if CASES[stmt] else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(4, 5))'
    measured = dynamo_break_lines_many([(_source(stmt), call) for stmt in CASES])
    assert measured == [[LINE] if breaks else [] for breaks in CASES.values()]
