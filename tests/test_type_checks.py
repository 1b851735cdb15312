"""A type check at the top of a function types its unannotated parameter.

``assert isinstance(num_samples, int) and num_samples > 0`` (pyro's forecaster) or ``if not
isinstance(n, int): raise TypeError(...)`` declares the parameter as surely as an annotation:
the function raises for anything else.  Without reading it, the analysis guessed the
unannotated ``forward`` parameter was a tensor, reported ``while num_samples > 0:`` as a
data-dependent loop, and took ``isinstance(n, int)`` for a statically false test, so
``if not isinstance(n, int): raise`` ended the analysis of the function and hid the breaks
after it.  ``test_dynamo_agrees`` runs each model with the values its checks allow.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from linttools import dynamo_break_lines_many, found
from pt2lint.analysis import type_checks

HEADER = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x, n):
"""

# (body of forward, argument passed for ``n`` in the Dynamo run) -> the lines pt2lint reports
CASES = {
    # the assertion makes ``n`` an int: the loop and the branch are on Python values
    ("assert isinstance(n, int) and n > 0\n        while n > 0:\n            x = x * 2\n            n -= 1\n        return x", "2"): [],
    ("assert isinstance(n, (int, float))\n        if n > 1:\n            x = x * 2\n        return x", "3"): [],
    ("if not isinstance(n, int) or n < 0:\n            raise ValueError(n)\n        if n > 1:\n            x = x * 2\n        return x", "3"): [],
    ("assert isinstance(n, (list, tuple))\n        if n[0] > 1:\n            x = x * 2\n        return x", "(2, 3)"): [],
    # past the raising guard the function goes on: the break after it is found
    ("if not isinstance(n, int):\n            raise TypeError(n)\n        return x * x.sum().item() + n", "2"): [9],
    # near misses: a check after the parameter is rebound, or inside a branch, says nothing of it
    ("n = n * 2\n        assert isinstance(n, int)\n        if n > 1:\n            x = x * 2\n        return x", None): [9],
    ("if x.dim() > 1:\n            assert isinstance(n, int)\n        if n > 1:\n            x = x * 2\n        return x", None): [9],
    ("if n is None:\n            return x\n        assert isinstance(n, int)\n        if n > 1:\n            x = x * 2\n        return x", None): [10],
}


def _source(body: str) -> str:
    return HEADER + "        " + body + "\n"


@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: c[0].splitlines()[0])
def test_type_check(case):
    body, _ = case
    assert [line for line, _ in found(_source(body), codes=None)] == CASES[case]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    runs = [(body, arg) for (body, arg) in CASES if arg is not None]
    calls = [(_source(b), f'torch.compile(Net(), backend="eager")(torch.randn(4, 5), {a})') for b, a in runs]
    assert dynamo_break_lines_many(calls) == [CASES[r] for r in runs]


def _checked(code: str):
    fn = cst.parse_module(textwrap.dedent(code)).body[0]
    return type_checks.checked_types(fn)


def test_checked_types_reads_the_leading_run_only():
    assert _checked('''
    def f(a, b, c, d):
        """doc"""
        assert isinstance(a, int) and a > 0
        if not isinstance(b, (list, tuple)):
            raise TypeError(b)
        assert isinstance(c, int)
        assert isinstance(c, (int, float))
        for _ in range(2):
            pass
        assert isinstance(d, int)
    ''') == {"a": frozenset({"int"}), "b": frozenset({"list", "tuple"}), "c": frozenset({"int"})}


def test_checked_types_ignores_other_classes_and_shadowing_rebinds():
    assert _checked('''
    def f(a, b, c):
        assert isinstance(a, torch.Tensor)
        assert isinstance(b, MyConfig)
        c = len(c)
        assert isinstance(c, int)
    ''') == {}
