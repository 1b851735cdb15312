"""An unannotated parameter that ATen's schemas name only for Python values is not a sure tensor.

``forward(self, x, dim)``, ``forward(self, x, is_causal)``, ``forward(self, x, kernel_size)``: with
no annotation, default or caller that types it, an input of ``forward`` is taken for a tensor.
ATen's operator schemas give names such as ``dim``, ``axis``, ``is_causal``, ``kernel_size`` and
``training`` only to ints, bools, dtypes and the like (``parameter_names`` of the facts table, from
``torch._C._jit_get_all_schemas()``), so such a parameter is a guess: a branch on it or on its
elements is no proven break (neuraloperator's ``FourierContinuation.forward(self, x, dim)`` was
reported for ``[a if a >= 0 else x.ndim + a for a in list(dim)]``).  It is still a tensor where the
code uses it as one (``dim.sum()``), and a name ATen also gives to tensors (``n``, ``index``,
``mask``) keeps the old guess where the code also uses it as a tensor (``n.float()``, passed to
``torch.gather``); used only in a test, it is a weak guess whatever its name
(tests/test_parameter_uses.py).  ``test_dynamo_agrees`` runs the unreported lines with the Python
values the names stand for.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x, {param}):
"""
LINE = 7  # the line of the statement under test

# (parameter, statement, value passed in the Dynamo run) -> whether pt2lint reports the line
CASES = {
    ("dim", "if dim >= 0:\n            x = x + 1\n        return x", "1"): False,
    ("dim", "axes = [a if a >= 0 else x.ndim + a for a in list(dim)]\n        return x.sum(axes)", "(0, -1)"): False,
    ("is_causal", "if is_causal:\n            x = x.tril()\n        return x", "True"): False,
    ("kernel_size", "if kernel_size > 1:\n            x = x * 2\n        return x", "3"): False,
    ("training", "return x * 2 if training else x", "False"): False,
    # near misses: still reported
    ("dim", "if dim.sum() > 0:\n            x = x + 1\n        return x", None): True,
    ("n", "if n >= 0:\n            x = x + 1\n        return x * n.float()", None): True,
    ("index", "if index > 0:\n            x = x + 1\n        return torch.gather(x, 1, index)", None): True,
}


def _source(param: str, stmt: str) -> str:
    return HEADER.format(param=param) + "        " + stmt + "\n"


@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: f"{c[0]}:{c[1].splitlines()[0]}")
def test_parameter_name(case):
    param, stmt, _ = case
    assert [line for line, _ in found(_source(param, stmt), codes=None)] == ([LINE] if CASES[case] else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    quiet = [(p, s, v) for (p, s, v), reported in CASES.items() if not reported]
    runs = [(_source(p, s), f'torch.compile(Net(), backend="eager")(torch.randn(4, 5), {v})') for p, s, v in quiet]
    assert dynamo_break_lines_many(runs) == [[] for _ in quiet]
