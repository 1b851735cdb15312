"""The right operand of ``and``/``or`` runs only where the left one allows it.

``if not isinstance(t, (int, float)) or t != 1:`` (PyG's softmax aggregation): the comparison
runs only when ``t`` is a Python number, so it is no tensor test, whatever ``t`` may be.  Before,
the analysis narrowed the right operand only on flags an earlier ``if`` tested; it now narrows
it on what the left operand says (``isinstance``, ``is None``, ``not`` of them), as it narrows an
``if`` body, and ``isinstance(t, (int, float))`` of a sure tensor is False.  Near miss:
``isinstance(t, torch.Tensor) and t.sum() > 0`` is a tensor test on the right (it breaks).
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Parameter(torch.ones(1))

    def forward(self, x, s):
        t = {subject}
        if {test}:
            x = x * 2
        return x
"""
LINE = 12

# (subject, test, the second input) -> whether pt2lint reports the test (and Dynamo breaks)
CASES = [
    ("self.t", "not isinstance(t, (int, float)) or t != 1", "2.0", False),
    # a tensor or None: the type test is undecided, so the right operand is read narrowed
    ("self.t if s is None else None", "not isinstance(t, (int, float)) or t != 1", "None", False),
    ("s", "not isinstance(t, (int, float)) or t != 1", "2.0", False),
    ("s", "not isinstance(t, (int, float)) or t != 1", "torch.ones(1)", False),
    ("s", "isinstance(t, (int, float)) and t > 1", "2.0", False),
    ("s", "t is not None and isinstance(t, float) and t > 1", "2.0", False),
    ("s", "isinstance(t, torch.Tensor) and t.sum() > 0", "torch.ones(1)", True),
]


@pytest.mark.parametrize("subject, test, arg, breaks", CASES)
def test_operand_narrowing(subject, test, arg, breaks):
    src = SOURCE.format(subject=subject, test=test)
    assert [(line, code) for line, code in found(src, codes=None)] == ([(LINE, "PTC104")] if breaks else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [
        (SOURCE.format(subject=subject, test=test), f'torch.compile(Model(), backend="eager")(torch.ones(2, 3), {arg})')
        for subject, test, arg, _ in CASES
    ]
    assert dynamo_break_lines_many(cases) == [[LINE] if breaks else [] for *_, breaks in CASES]
