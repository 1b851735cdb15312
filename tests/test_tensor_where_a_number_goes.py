"""Facts the table's scans derive for a tensor passed where torch reads a Python number, and
for context managers built from a pair of callables.

``F.one_hot(idx, idx.max() + 1)``: ``num_classes`` is read as an int, which for a tensor runs
``aten::_local_scalar_dense`` (GB0033).  The op scan now tries an integer tensor followed by the
0-d probe tensor (``("i", "n4")`` in tools/gen_dynamo_facts.py), so the table holds this form
for ``one_hot``, ``roll``, ``split``, ``topk``, ``diff`` and the others it confirmed.
``torch.autograd.graph.saved_tensors_hooks(pack, unpack)`` is now built by the context-manager
scan (a form with two callables) and its ``with`` is a graph break (GB0008).  Each expectation
is Dynamo's (``test_dynamo_agrees``).
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        idx = (x * 3).long().clamp(0, 5)
{body}
        return x
"""

LINE = 9

# body -> findings at LINE
CASES = {
    "one_hot with a tensor class count": ("        x = x + F.one_hot(idx, idx.max() + 1).sum()", ["PTC103"]),
    "one_hot with the larger of a tensor and a number": ("        x = x + F.one_hot(idx, max(idx.max() + 1, 8)).sum()", ["PTC103"]),
    "roll by a tensor": ("        x = x + torch.roll(idx, idx.sum() % 3).sum()", ["PTC103"]),
    "a with of saved_tensors_hooks": ("        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):\n            x = x * 2", ["PTC307"]),
    # the near misses: a number, or a size, where the number goes; a tensor where a tensor goes
    "one_hot with a literal class count": ("        x = x + F.one_hot(idx, 8).sum()", []),
    "one_hot with a size": ("        x = x + F.one_hot(idx, x.shape[-1] + 6).sum()", []),
    "clamp by a tensor": ("        x = x + torch.clamp(idx, idx.min()).sum()", []),
}


def _source(body: str) -> str:
    return SOURCE.format(body=body)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tensor_where_torch_reads_a_number(name):
    body, codes = CASES[name]
    assert found(_source(body), codes={"PTC103", "PTC307", "PTC202"}) == [(LINE, code) for code in codes]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [(_source(body), 'torch.compile(Net(), backend="eager")(torch.rand(2, 6))') for body, _ in CASES.values()]
    assert dynamo_break_lines_many(cases) == [[LINE] if codes else [] for _, codes in CASES.values()]
