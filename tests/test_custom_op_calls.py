"""Calls of ``torch.library.custom_op`` functions: Dynamo puts them in the graph without tracing their
bodies.  Their result is what the return annotation declares (``.item()`` of a ``-> torch.Tensor``
op's output breaks, torch 2.13), and one declared with ``mutates_args=("x",)`` writes the tensor
passed as ``x`` (the dispatch-mode watcher sees the input mutated).  A custom op without
``mutates_args`` writes nothing."""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found, watched_mutations

_SOURCE = """\
import torch
from torch import nn


@torch.library.custom_op("pt2lint_test::scale_", mutates_args=("x",))
def scale_(x: torch.Tensor, s: float) -> None:
    x.mul_(s)


@torch.library.custom_op("pt2lint_test::double", mutates_args=())
def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@double.register_fake
def _(x):
    return torch.empty_like(x)


class M(nn.Module):
    def forward(self, x):
        y = double(x)
        n = y.sum().item()
        scale_(x, 0.5)
        return y * n
"""


def test_custom_op_results_and_declared_writes():
    assert [(line, code) for line, code in found(_SOURCE) if code in ("PTC101", "PTC401")] == [(23, "PTC101"), (24, "PTC401")]


def test_matches_dynamo_and_the_dispatch_watcher(tmp_path):
    pytest.importorskip("torch")
    assert dynamo_break_lines(_SOURCE, 'torch.compile(M(), backend="eager")(torch.ones(2, 3))') == [23]
    source = _SOURCE.replace("pt2lint_test::", "pt2lint_test2::")
    writes = {m.op for m in watched_mutations(tmp_path, "custom_op_model", source, lambda torch, mod: (torch.ones(2, 3),))}
    assert any("scale_" in op for op in writes), writes



_CONSTANT_RESULT = """\
import torch
from torch import nn


@torch.compiler.assume_constant_result
def table() -> torch.Tensor:
    return torch.arange(4)


class M(nn.Module):
    def forward(self, x):
        n = table().sum().item()
        return x * n
"""


def test_an_assume_constant_result_function_gives_its_declared_tensor():
    # Dynamo bakes the result in as a constant tensor, and `.item()` of it still breaks (torch 2.13)
    assert [(line, code) for line, code in found(_CONSTANT_RESULT) if code == "PTC101"] == [(12, "PTC101")]
    pytest.importorskip("torch")
    assert dynamo_break_lines(_CONSTANT_RESULT, 'torch.compile(M(), backend="eager")(torch.ones(3))') == [12]
