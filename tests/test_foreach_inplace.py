"""``torch._foreach_*_`` functions write every tensor of their first list in place: given a list of
forward inputs they mutate the inputs (the dispatch-mode watcher sees ``aten._foreach_lerp_`` /
``aten._foreach_mul_`` writing them, torch 2.13); the out-of-place ``_foreach_mul`` and a list
built in ``forward`` do not."""

from __future__ import annotations

import pytest

from linttools import found, watched_mutations

_SOURCE = """\
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x, shadow: list, live: list):
        torch._foreach_lerp_(shadow, live, 0.01)
        torch._foreach_mul_(live, 0.5)
        scaled = torch._foreach_mul(live, 2.0)
        mine = [x * 1.0, x * 2.0]
        torch._foreach_add_(mine, 1.0)
        return x * 2 + scaled[0].sum() + mine[0]
"""


def test_foreach_in_place_on_input_lists_is_an_input_mutation():
    assert [(line, code) for line, code in found(_SOURCE) if code.startswith("PTC4")] == [(7, "PTC401"), (8, "PTC401")]


def test_matches_the_dispatch_watcher(tmp_path):
    pytest.importorskip("torch")

    def args(torch, mod):
        return (torch.ones(4), [torch.zeros(4), torch.zeros(4)], [torch.ones(4), torch.ones(4)])

    assert sorted({m.lineno for m in watched_mutations(tmp_path, "foreach_model", _SOURCE, args)}) == [7, 8]
