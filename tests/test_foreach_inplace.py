"""``torch._foreach_*_`` functions write every tensor of their first list in place: given a list of
forward inputs they mutate the inputs (the dispatch-mode watcher sees ``aten._foreach_lerp_`` /
``aten._foreach_mul_`` writing them, torch 2.13); the out-of-place ``_foreach_mul`` and a list
built in ``forward`` do not."""

from __future__ import annotations

import pytest

from linttools import found

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
    torch = pytest.importorskip("torch")
    import importlib.util

    from pt2lint.confirm.dynamo import input_mutations

    path = tmp_path / "foreach_model.py"
    path.write_text(_SOURCE)
    spec = importlib.util.spec_from_file_location("foreach_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    args = (torch.ones(4), [torch.zeros(4), torch.zeros(4)], [torch.ones(4), torch.ones(4)])
    lines = sorted({m.lineno for m in input_mutations(mod.M(), args) if m.filename == str(path)})
    assert lines == [7, 8]
