"""An unannotated ``forward`` parameter the body uses only as a Python number or flag, or reads
with an attribute no tensor has, is not taken for a sure tensor (pt2lint.analysis.param_uses).

The models below are called as their callers call them (Python numbers and dicts next to the
tensors); Dynamo specialises those and traces without a graph break (measured below, torch
2.13).  The near misses keep their findings: a parameter used as a tensor anywhere stays one.
"""

from __future__ import annotations

import libcst as cst
import pytest
from linttools import dynamo_break_lines_many, found

from pt2lint.analysis import dynamo_facts, param_uses

PYTHON_VALUES = """\
import torch
from torch import nn


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.step = nn.Linear(4, 4)

    def forward(self, series, horizon):
        outs = []
        for _ in range(horizon):
            series = self.step(series)
            outs.append(series)
        return torch.stack(outs)


class Guided(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, x, guidance_scale):
        cond = self.net(x)
        if guidance_scale == 1.0:
            return cond
        return x + guidance_scale * (cond - x)


class Sampler(nn.Module):
    def __init__(self, T=12):
        super().__init__()
        self.T = T

    def forward(self, x, num_steps, use_cache):
        stride = self.T // num_steps
        for i in reversed(range(0, self.T, stride)):
            x = x * 0.5 + i
        if use_cache and x.dim() > 1:
            x = x + 1
        return x


class Typed(nn.Module):
    def __init__(self):
        super().__init__()
        self.root = nn.ModuleDict({"user": nn.Linear(4, 4), "item": nn.Linear(4, 4)})

    def forward(self, x_dict):
        out = {nt: self.root[nt](x) for nt, x in x_dict.items()}
        return out["user"] + x_dict["item"]


class Hetero(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = Typed()

    def forward(self, x_dict):
        return self.conv(x_dict)
"""

CALLS = """\
x = torch.randn(2, 4)
torch.compile(Forecaster(), backend="eager")(x, 3)
torch.compile(Guided(), backend="eager")(x, 7.5)
torch.compile(Sampler(), backend="eager")(x, 4, True)
torch.compile(Hetero(), backend="eager")({"user": x, "item": x})
"""

TENSORS = """\
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x, t):
        if t.sum() > 0:
            return x * 2
        return x


class Picked(nn.Module):
    def forward(self, x, idx):
        if idx == 1:
            x = x + 1
        return x[idx]


class Mixed(nn.Module):
    def forward(self, x, thr):
        if thr > 0.5:
            return x
        return x + thr.mean()
"""

TENSOR_CALLS = """\
x = torch.randn(2, 4)
torch.compile(Gate(), backend="eager")(x, torch.ones(3))
torch.compile(Picked(), backend="eager")(x, torch.tensor([1]))
torch.compile(Mixed(), backend="eager")(x, torch.tensor(0.7))
"""


def test_python_numbers_flags_and_dicts_are_not_taken_for_tensors():
    assert found(PYTHON_VALUES) == []


def test_parameters_used_as_tensors_keep_their_findings():
    assert found(TENSORS, codes={"PTC104", "PTC201", "PTC103"}) == [(7, "PTC104"), (14, "PTC104"), (21, "PTC104")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    got = dynamo_break_lines_many([(PYTHON_VALUES, CALLS), (TENSORS, TENSOR_CALLS)])
    assert got[0] == []
    assert {7, 14, 21} <= set(got[1])


def _evidence(src: str, name: str):
    fn = cst.parse_module(src).body[0]
    return param_uses.evidence(fn, name, dynamo_facts.tensor_attributes())


def test_evidence_of_each_use():
    assert _evidence("def f(x, n):\n    return [x] * len(range(n))\n", "n") == param_uses.NUMBER
    assert _evidence("def f(x, s):\n    if s == -1.0:\n        return x\n    return x * s\n", "s") == param_uses.NUMBER
    assert _evidence("def f(x, flag):\n    return x if flag else -x\n", "flag") == param_uses.NUMBER
    assert _evidence("def f(x, n):\n    k = n * 2\n    return x.new_zeros(range(k)[0])\n", "n") == param_uses.NUMBER
    assert _evidence("def f(d):\n    return d.get('a')\n", "d") == param_uses.CONTAINER
    assert _evidence("def f(d):\n    return d['a'] + len(d.keys())\n", "d") == param_uses.CONTAINER
    assert _evidence("def f(d):\n    return d.get('a') + d.hidden\n", "d") == param_uses.OBJECT
    # a tensor's attribute anywhere, a use as an argument or an index, or a rebinding: no evidence
    assert _evidence("def f(d):\n    return d.items() + d.sum()\n", "d") is None
    assert _evidence("def f(x, n):\n    return g(n) + range(n)\n", "n") is None
    assert _evidence("def f(x, n):\n    return x[n] if n > 0 else x\n", "n") is None
    assert _evidence("def f(x, keep):\n    if keep == 1:\n        x = x + 1\n    return x * (keep > 0)\n", "keep") is None
    assert _evidence("def f(x, n):\n    n = g(n)\n    return range(n)\n", "n") is None
    assert _evidence("def f(x, n):\n    if n is None:\n        return x\n    return x * n\n", "n") is None
    # a nested function's own parameter of that name is another value
    assert _evidence("def f(x, n):\n    def g(n):\n        return range(n)\n    return x * n\n", "n") is None


MORE_PYTHON_VALUES = """\
import torch
from torch import nn


class Flags(nn.Module):
    def forward(self, x, return_dict, step, k, n):
        if step % 2 == 0:
            x = x + 1
        k = min(k, 3)
        while k > 0:
            x = x * 2
            k -= 1
        if n == 0:
            return x
        x = x / n
        if not return_dict:
            return (x,)
        return {"out": x}
"""

DICT_OF_TENSORS = """\
import torch
from torch import nn


class Feats(nn.Module):
    def forward(self, x, feats):
        for name, v in feats.items():
            if v.any():
                x = x * 2
        return x
"""


def test_flags_counters_and_divisors_are_weak_guesses():
    assert found(MORE_PYTHON_VALUES) == []


def test_the_values_of_a_dict_parameter_keep_the_guess():
    # ``feats.items()`` makes ``feats`` a dict, not a tensor; what it holds is what callers pass,
    # and ``v.any()`` makes each value a tensor: the branch on it breaks (Dynamo, below)
    assert found(DICT_OF_TENSORS, codes={"PTC104"}) == [(8, "PTC104")]


def test_dynamo_agrees_on_the_flags_and_the_dict():
    pytest.importorskip("torch")
    got = dynamo_break_lines_many([
        (MORE_PYTHON_VALUES, 'f = torch.compile(Flags(), backend="eager")\nf(torch.randn(2, 4), False, 2, 5, 3)'),
        (DICT_OF_TENSORS, 'torch.compile(Feats(), backend="eager")(torch.randn(2, 4), {"a": torch.ones(2)})'),
    ])
    assert got == [[], [8]]


def test_evidence_through_arithmetic_and_rebinding():
    assert _evidence("def f(x, s):\n    if not s:\n        return x\n    return -x\n", "s") == param_uses.NUMBER
    assert _evidence("def f(x, s):\n    if s % 2 == 0:\n        return x\n    return x + 1\n", "s") == param_uses.NUMBER
    assert _evidence("def f(x, k):\n    while k > 0:\n        k -= 1\n    return x\n", "k") == param_uses.NUMBER
    assert _evidence("def f(x, k):\n    k = min(k, 3)\n    return [x for _ in range(k)]\n", "k") == param_uses.NUMBER
    assert _evidence("def f(x, n):\n    if n == 0:\n        return x\n    x = x / n\n    return x\n", "n") == param_uses.NUMBER
    assert _evidence("def f(d):\n    return [d[k] for k in d.keys()]\n", "d") == param_uses.CONTAINER
    assert _evidence("def f(c):\n    return c.hidden_size\n", "c") == param_uses.OBJECT
    # rebound to something else, or a comparison kept as a value: no evidence
    assert _evidence("def f(x, k):\n    k = torch.tensor(k)\n    return range(k)\n", "k") is None
    assert _evidence("def f(x, t):\n    m = t % 2 == 0\n    return x[m]\n", "t") is None
