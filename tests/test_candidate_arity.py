"""A candidate callee that cannot take the call's arguments is not what the call runs.

``self.experts = default(experts, lambda: Experts(dim))`` (a helper that calls its second
argument when it is a function) holds either the module it was given or the one the lambda
builds; ``self.experts(x)`` in ``forward`` calls that module.  Before, the lambda itself was
also taken for a possible value and followed as the callee, so ``Experts.__init__`` was
reported as running inside the compiled region (PTC321, PTC320).  A lambda that takes no
argument called with one raises ``TypeError``: it is not a candidate of that call.  Dynamo
compiles the model without a break (``test_dynamo_agrees``).
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
from inspect import isfunction

import torch
from torch import nn


def default(val, d):
    if val is not None:
        return val
    return d() if isfunction(d) else d


class Experts(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(dim, dim))

    def forward(self, x):
        return x @ self.w


class MoE(nn.Module):
    def __init__(self, dim, experts=None):
        super().__init__()
        self.experts = default(experts, {fallback})

    def forward(self, x):
        return self.experts(x)
"""

# fallback -> findings (line, code)
CASES = {
    "a lambda taking no argument": ("lambda: Experts(dim)", []),
    # the near miss: the lambda's result is a function that takes the argument, and its print runs
    "a lambda making a function of the argument": ("lambda: (lambda t: print(t) or t)", [(25, "PTC301")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_candidate_that_cannot_take_the_arguments_is_not_called(name):
    fallback, expected = CASES[name]
    assert found(SOURCE.format(fallback=fallback), codes=None) == expected


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [(SOURCE.format(fallback=fallback), 'torch.compile(MoE(4), backend="eager")(torch.ones(2, 4))') for fallback, _ in CASES.values()]
    assert dynamo_break_lines_many(cases) == [[line for line, _ in expected] for _, expected in CASES.values()]
