"""A ``forward`` input annotated with a project dataclass (``batch: Batch``): its fields have the
kinds their annotations declare.

Dynamo traces a dataclass argument as a user object and each tensor field as a graph input, so
``batch.lengths.max().item()`` and ``if batch.tokens.sum() > 0`` break as they would on tensor
parameters, ``batch.tokens[batch.mask]`` (a ``mask`` field annotated ``torch.Tensor``) is a
boolean-mask index, and ``batch.tokens.add_(1)`` writes the input.  A float or int field, an
``Optional`` field tested against ``None``, and the fields of a class that is no dataclass (its
annotations need not hold) are no tensors.  Expectations follow the graph_breaks log and the
dispatch-mode watcher on torch 2.13.

The examples name the ``torch`` module in ``forward``: Dynamo skips a frame resumed after a
break when none of its live locals holds a tensor or module and the function names no torch
module (``torch/_dynamo/convert_frame.py``, ``has_tensor_in_frame``; a dataclass instance holds
no tensor by that test), which the analysis does not model.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found, watched_mutations

BREAKS = """\
import dataclasses
from typing import Optional
import torch
from torch import nn


@dataclasses.dataclass
class Meta:
    valid: torch.Tensor


@dataclasses.dataclass
class Batch:
    tokens: torch.Tensor
    mask: torch.Tensor
    meta: Meta
    lengths: Optional[torch.Tensor] = None


class M(nn.Module):
    def forward(self, batch: Batch):
        n = batch.lengths.max().item()
        return torch.relu(batch.tokens[batch.mask]).sum() + n
"""

BREAKS_LATER = """\
import dataclasses
import torch
from torch import nn


@dataclasses.dataclass
class Meta:
    valid: torch.Tensor


@dataclasses.dataclass
class Batch:
    tokens: torch.Tensor
    meta: Meta


class M(nn.Module):
    def forward(self, batch: "Batch"):
        if batch.tokens.sum() > 0:
            return batch.tokens * 2
        return torch.relu(batch.tokens[batch.meta.valid])
"""

NEAR_MISSES = """\
import dataclasses
from typing import NamedTuple, Optional
import torch
from torch import nn


@dataclasses.dataclass
class Batch:
    tokens: torch.Tensor
    scale: float
    n: int
    lengths: Optional[torch.Tensor] = None


class Shapes(NamedTuple):
    h: int
    w: int


class Loose:
    tokens: torch.Tensor  # no dataclass: an annotation nothing checks

    def __init__(self, tokens):
        self.tokens = tokens


class M(nn.Module):
    def forward(self, batch: Batch, hw: Shapes, loose: Loose):
        x = batch.tokens[:, : batch.n]
        if batch.scale > 0.5:
            x = x * 2
        if batch.lengths is None:
            x = x + 1
        if loose.tokens:
            x = x - 1
        return x.reshape(x.shape[0], hw.h, -1)
"""


def _batch_args(src_name: str) -> str:
    return {
        "BREAKS": "torch.compile(M(), backend='eager')(Batch(torch.ones(2, 4), torch.rand(2, 4) > 0.5, Meta(torch.ones(2, 4) > 0), torch.tensor([3, 4])))",
        "BREAKS_LATER": "torch.compile(M(), backend='eager')(Batch(-torch.ones(2, 4), Meta(torch.rand(2, 4) > 0.5)))",
        "NEAR_MISSES": "torch.compile(M(), backend='eager')(Batch(torch.ones(2, 4), 0.7, 2), Shapes(2, 1), Loose(1))",
    }[src_name]


def test_tensor_fields_of_a_dataclass_input_break_like_tensor_inputs():
    assert found(BREAKS, codes={"PTC101", "PTC201"}) == [(22, "PTC101"), (23, "PTC201")]


def test_nested_dataclass_fields_and_string_annotations():
    # the mask index after the `if` runs in the resumed frame (traced: the function names the
    # torch module) and breaks there too
    assert [line for line, _ in found(BREAKS_LATER, codes={"PTC104", "PTC201"})] == [19, 21]


def test_near_misses_of_dataclass_inputs_are_not_flagged():
    assert found(NEAR_MISSES) == []


def test_dynamo_agrees_on_dataclass_inputs():
    pytest.importorskip("torch")
    got = dynamo_break_lines_many([(BREAKS, _batch_args("BREAKS")), (BREAKS_LATER, _batch_args("BREAKS_LATER")), (NEAR_MISSES, _batch_args("NEAR_MISSES"))])
    assert got == [[22, 23], [19, 21], []]


MUTATES = """\
import dataclasses
import torch
from torch import nn


@dataclasses.dataclass
class Batch:
    tokens: torch.Tensor
    mask: torch.Tensor


class M(nn.Module):
    def forward(self, batch: Batch):
        batch.tokens[batch.mask] = 0
        t = batch.tokens.clone()
        t.add_(1)
        return t
"""


def test_a_store_into_a_tensor_field_of_a_dataclass_input_is_an_input_mutation(tmp_path):
    assert found(MUTATES, codes={"PTC401"}) == [(14, "PTC401")]
    pytest.importorskip("torch")

    def args(torch, module):
        return (module.Batch(torch.ones(2, 4), torch.rand(2, 4) > 0.5),)

    assert sorted({m.lineno for m in watched_mutations(tmp_path, "dc_mutates", MUTATES, args)}) == [14]
