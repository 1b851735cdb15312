"""An input annotated with a class of the project (``batch: Batch``, a dataclass of tensors) holds the
caller's tensors as an unannotated input does: an in-place method on one of its fields, directly or
through a local name, writes the input (the dispatch-mode watcher sees ``aten.mul_``/``aten.add_`` on
the field's storage, torch 2.13); reading the fields does not."""

from __future__ import annotations

import pytest

from linttools import found, watched_mutations

_SOURCE = """\
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class Batch:
    tokens: torch.Tensor
    mask: torch.Tensor


class M(nn.Module):
    def forward(self, batch: Batch, x):
        batch.tokens.mul_(2.0)
        t = batch.tokens
        t.add_(1.0)
        y = batch.tokens * batch.mask
        return y + x
"""


def test_in_place_writes_to_fields_of_an_annotated_input():
    assert [(line, code) for line, code in found(_SOURCE) if code.startswith("PTC4")] == [(15, "PTC401"), (17, "PTC401")]


def test_matches_the_dispatch_watcher(tmp_path):
    pytest.importorskip("torch")

    def args(torch, mod):
        return (mod.Batch(torch.ones(3), torch.tensor([1.0, 0.0, 1.0])), torch.ones(3))

    assert sorted({m.lineno for m in watched_mutations(tmp_path, "annotated_model", _SOURCE, args)}) == [15, 17]
