"""Guards on the tracing state take the value Dynamo gives them while it traces.

Dynamo answers a few no-argument queries itself (``tracing_state_functions()`` in
``torch/_dynamo/variables/torch.py``): ``torch.onnx.is_in_onnx_export()`` and
``torch.jit.is_scripting()`` are False, ``torch.compiler.is_compiling()`` is True,
``torch.compiler.is_exporting()`` is True only under ``torch.export``.  The facts table's
``tracing_state`` section holds that table (each value confirmed by a compiled probe); a branch
behind such a guard is dead or the only one traced.  ``print()`` under
``if torch.onnx.is_in_onnx_export():`` was reported, and Dynamo never reaches it.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found
from pt2lint.analysis import dynamo_facts

HEADER = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
"""
LINE = 8  # the print under the guard

# guard -> whether the print under it is reported (and Dynamo breaks there)
CASES = {
    "torch.onnx.is_in_onnx_export()": False,
    "torch.jit.is_scripting()": False,
    "torch.jit.is_tracing()": False,
    "not torch.compiler.is_compiling()": False,
    "torch.compiler.is_exporting()": False,
    # near misses: a guard Dynamo answers True, and a query it does not answer
    "torch.compiler.is_compiling()": True,
    "not torch.onnx.is_in_onnx_export()": True,
    "self.training": True,
}


def _source(guard: str) -> str:
    return HEADER + f"        if {guard}:\n            print('traced')\n        return x * 2\n"


@pytest.mark.parametrize("guard", sorted(CASES))
def test_guard(guard):
    got = [(line, code) for line, code in found(_source(guard), codes=None)]
    assert got == ([(LINE, "PTC301")] if CASES[guard] else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 3))'
    measured = dynamo_break_lines_many([(_source(g), call) for g in CASES])
    assert measured == [[LINE] if breaks else [] for breaks in CASES.values()]


def test_values_by_target():
    assert dynamo_facts.tracing_state_value("torch.onnx.is_in_onnx_export", "compile") is False
    assert dynamo_facts.tracing_state_value("torch.compiler.is_compiling", "compile") is True
    assert dynamo_facts.tracing_state_value("torch.compiler.is_exporting", "compile") is False
    assert dynamo_facts.tracing_state_value("torch.compiler.is_exporting", "export") is True
    assert dynamo_facts.tracing_state_value("torch.cuda.is_available", "compile") is None
