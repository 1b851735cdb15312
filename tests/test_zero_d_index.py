"""A 0-d tensor used as an index is read into Python: the rank of full reductions is known.

``x[v.sum().long()]``, ``x[torch.bucketize(v.mean(), edges)]``, ``x[v.any()]``: Dynamo reads the
0-d index into Python ("Data dependent operator", ``aten._local_scalar_dense``) and breaks.
Before, only ``argmax``/``argmin``/``count_nonzero`` and the sum of a mask were known to be
0-d, and each of these was missed.  Near misses: a 1-d index (``torch.randint(0, 3, (1,))``), a
reduction over one dimension of a tensor of unknown rank, a 0-d tensor broadcast with one of
unknown rank, a 0-d tensor in arithmetic.  ``test_dynamo_agrees`` runs each line alone.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEADER = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("edges", torch.tensor([0.1, 0.5]))

    def forward(self, x, v):
"""
LINE = 11  # the line of the statement under test

# statement -> whether pt2lint reports it (and Dynamo breaks there)
CASES = {
    "i = v.sum().long()\n        return x[i]": True,
    "return x[(v.mean() * 3).long()]": True,
    "return x[(v.mean() * x.shape[0]).long().clamp(0, 3)]": True,
    "return x[torch.randint(0, 3, ())]": True,
    "return x[torch.randint(0, 3, (1,))[0]]": True,
    "return x[v.max().int()]": True,
    "return x[v.norm().to(torch.int64)]": True,
    "return x[torch.bucketize(v.sum(), self.edges)]": True,
    "return x[torch.searchsorted(self.edges, v.mean())]": True,
    "return x[torch.sum(v).long() % 4]": True,
    "return x[v.any()]": True,
    "return x[(v > 0.5).all()]": True,
    "x[v.sum().long()] = 0\n        return x": True,
    "for t in torch.linspace(0, 2, 3):\n            x = x + x[t.long()]\n        return x": True,
    "pos = torch.tensor([0, 2], dtype=torch.long)\n        return x[:, pos[-1]]": True,
    "return x[torch.as_tensor([1, 0], dtype=torch.int32)[0]]": True,
    # near misses
    "return x * v.max()": False,
    "return x[torch.randint(0, 3, (1,))]": False,
    "return x[x.sum(0).long().clamp(0, 3)]": False,
    "return x[(v.sum() + v).long().clamp(0, 3)]": False,
    "return x[v.sum().clamp(min=v).long().clamp(0, 3)]": False,
    "return x[v.sum().to(v).long().clamp(0, 3)]": True,
    "return x[int(3 * 0.5)]": False,
    "pos = torch.tensor([0, 2], dtype=torch.long)\n        return x[:, pos[-1:]]": False,
    "return x * torch.tensor([1, 2], dtype=torch.float)[0]": False,
    "return x[torch.tensor([[0, 2]], dtype=torch.long)[0]]": False,
    # a one-element tensor of constants: fake tensors keep its value (CONSTANT_NUMEL_LIMIT)
    "return x[torch.as_tensor([1], dtype=torch.int32)[0]]": False,
    "return x[torch.tensor([2])[0]]": False,
}


def _source(stmt: str) -> str:
    return HEADER + "        " + stmt + "\n"


def _index_line(stmt: str) -> int:
    """The line of the first index in ``stmt``."""
    return LINE + next(n for n, text in enumerate(stmt.splitlines()) if "x[" in text)


@pytest.mark.parametrize("stmt", sorted(CASES))
def test_zero_d_index(stmt):
    assert [(line, code) for line, code in found(_source(stmt), codes=None) if code == "PTC103"] == ([(_index_line(stmt), "PTC103")] if CASES[stmt] else [])


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(4, 3), torch.rand(3))'
    measured = dynamo_break_lines_many([(_source(stmt), call) for stmt in CASES])
    assert measured == [[_index_line(stmt)] if breaks else [] for stmt, breaks in CASES.items()]


def test_a_reduction_of_an_integer_input_breaks():
    # ``x[v.sum()]`` with ``v`` of unknown dtype is reported: with a floating ``v`` it raises in
    # eager mode, with an integer one (measured here) Dynamo reads it into Python
    pytest.importorskip("torch")
    stmt = "return x[v.sum() % 4]"
    assert [code for _, code in found(_source(stmt), codes=None)] == ["PTC103"]
    call = 'torch.compile(Net(), backend="eager")(torch.randn(4, 3), torch.tensor([1, 2]))'
    assert dynamo_break_lines_many([(_source(stmt), call)]) == [[LINE]]


def test_a_torch_reduction_of_a_guessed_tensor_is_a_tensor():
    # ``torch.any(indices == -1)`` of an unannotated input: a tensor whatever the input was, so
    # ``not`` on it is a truth test on a tensor (measured: "generic_jump TensorVariable()")
    src = (
        "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
        "    def forward(self, x, indices):\n"
        "        assert not torch.any(indices == -1), 'dropped'\n"
        "        return x\n"
    )
    assert found(src, codes=None) == [(7, "PTC104")]
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(4, 3), torch.tensor([1, 2]))'
    assert dynamo_break_lines_many([(src, call)]) == [[7]]
