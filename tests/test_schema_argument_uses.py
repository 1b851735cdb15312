"""A parameter passed where no ATen overload takes a tensor (``x.view(n, -1)``, ``s.topk(k)``,
``torch.zeros(n, d)``) is used as a number: with its other uses number uses, it is a weak guess
(pt2lint.analysis.param_uses, the facts table's ``schema_arguments``).

The models are called as their callers call them, with Python ints next to the tensors; Dynamo
specialises those and traces in one graph (measured below, torch 2.13).  The near misses keep
their findings: an argument position some overload types as a tensor (``repeat_interleave``'s
``repeats``, ``index_select``'s index) says nothing, and neither does a module's function of the
same name (``np.repeat``).
"""

from __future__ import annotations

import libcst as cst
import pytest
from linttools import dynamo_break_lines_many, found

from pt2lint.analysis import dynamo_facts, param_uses

SIZES = """\
import torch
from torch import nn


class TopK(nn.Module):
    def forward(self, scores, k):
        if k > 1:
            return scores.topk(k, dim=-1).values
        return scores.max(dim=-1, keepdim=True).values


class Heads(nn.Module):
    def forward(self, x, num_heads):
        if num_heads == 1:
            return x
        b, t, d = x.shape
        return x.view(b, t, num_heads, -1).transpose(1, 2)


class Padded(nn.Module):
    def forward(self, x, extra):
        if extra > 0:
            pad = x.new_zeros(x.shape[0], extra)
            x = torch.cat([x, pad], dim=1)
        return x


class Windows(nn.Module):
    def forward(self, x, size):
        if size % 2 == 0:
            x = x[:, :-1]
        return x.unfold(1, size, 1)
"""

SIZE_CALLS = """\
x = torch.randn(2, 6, 8)
torch.compile(TopK(), backend="eager")(x, 3)
torch.compile(Heads(), backend="eager")(x, 2)
torch.compile(Padded(), backend="eager")(torch.randn(2, 5), 3)
torch.compile(Windows(), backend="eager")(torch.randn(2, 9), 4)
"""

TENSORS = """\
import torch
from torch import nn


class Repeats(nn.Module):
    def forward(self, x, counts):
        if counts > 0:
            return x.repeat_interleave(counts, dim=0)
        return x


class Selected(nn.Module):
    def forward(self, x, idx):
        if idx > 0:
            return x.index_select(0, idx)
        return x
"""

TENSOR_CALLS = """\
x = torch.randn(4, 3)
torch.compile(Repeats(), backend="eager")(x, torch.tensor(2))
torch.compile(Selected(), backend="eager")(x, torch.tensor([1]))
"""


def test_sizes_passed_to_aten_int_positions_are_not_taken_for_tensors():
    assert found(SIZES) == []


def test_positions_an_overload_types_as_a_tensor_keep_the_guess():
    assert found(TENSORS, codes={"PTC104"}) == [(7, "PTC104"), (14, "PTC104")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    got = dynamo_break_lines_many([(SIZES, SIZE_CALLS), (TENSORS, TENSOR_CALLS)])
    assert got[0] == []
    assert {7, 14} <= set(got[1])


def _evidence(src: str, name: str, schema=None):
    fn = cst.parse_module(src).body[-1]
    table = dynamo_facts.schema_arguments() if schema is None else schema
    return param_uses.evidence(fn, name, dynamo_facts.tensor_attributes(), table)


def test_the_shipped_table_reads_the_varargs_and_mixed_positions():
    table = dynamo_facts.schema_arguments()
    assert table["torch.Tensor.view"] == "n*n"  # view(SymInt[] size) and view(ScalarType dtype)
    assert table["torch.Tensor.topk"].startswith("n")
    assert table["torch.Tensor.repeat_interleave"].startswith("t")  # self_Tensor overload
    assert table["torch.zeros"].startswith("n*")
    assert "torch.Tensor.masked_fill" not in table  # (mask, value): both may be tensors
    assert "torch.Tensor.split" not in table  # defined in Python (torch/_tensor.py), not bound from ATen


def test_evidence_by_position():
    view = "def f(x, n):\n    if n > 1:\n        x = x + 1\n    return x.view({})\n"
    assert _evidence(view.format("n, -1"), "n") == param_uses.NUMBER
    assert _evidence(view.format("-1, n"), "n") == param_uses.NUMBER  # varargs: into size
    assert _evidence(view.format("-1, n * 2"), "n") == param_uses.NUMBER  # through arithmetic
    assert _evidence(view.format("*x.shape[:1], n"), "n") is None  # after a star: position unknown
    assert _evidence(view.format("n, -1"), "n", schema={}) is None  # no table: no evidence
    narrow = "def f(x, s):\n    if s > 1:\n        x = x + 1\n    return x.narrow(0, s, 2)\n"
    assert _evidence(narrow, "s") is None  # narrow.Tensor takes a tensor start


def test_a_module_function_of_a_tensor_method_name_is_no_evidence():
    src = "import numpy as np\ndef f(a, n):\n    if n > 1:\n        a = a + 1\n    return np.repeat(a, n)\n"
    assert _evidence(src, "a") is None
    assert _evidence(src, "n") is None
    torch_fn = "import torch\ndef f(x, n):\n    if n > 1:\n        x = x + 1\n    return x + torch.zeros(n, 3)\n"
    assert _evidence(torch_fn, "n") == param_uses.NUMBER
    shadowed = "def f(x, n, torch):\n    if n > 1:\n        x = x + 1\n    return x + torch.zeros(n, 3)\n"
    assert _evidence(shadowed, "n") is None  # ``torch`` is the function's own value, not the module


HELPERS = """\
import torch
from torch import nn


def scatter_mean(src, index, dim_size):
    out = src.new_zeros(dim_size, src.size(-1)).index_add_(0, index, src)
    count = src.new_zeros(dim_size).index_add_(0, index, src.new_ones(index.size(0)))
    return out / count.clamp(min=1).unsqueeze(-1)


class Pool(nn.Module):
    def forward(self, h, batch, num_graphs):
        if num_graphs == 1:
            return h.mean(0, keepdim=True)
        return scatter_mean(h, batch, num_graphs)
"""

HELPER_CALLS = """\
h = torch.randn(6, 4)
batch = torch.tensor([0, 0, 1, 1, 2, 2])
torch.compile(Pool(), backend="eager")(h, batch, 3)
"""

HELPER_TENSORS = """\
import torch
from torch import nn


def pooled(src, dim_size):
    return src.new_zeros(dim_size, src.size(-1))


def gate(x, t):
    return x * t.sigmoid()


class Pool(nn.Module):
    def forward(self, h, batch):
        return pooled(h, batch.max() + 1)


class Gated(nn.Module):
    def forward(self, h, t):
        if t > 0:
            return gate(h, t)
        return h
"""

HELPER_TENSOR_CALLS = """\
h = torch.randn(6, 4)
torch.compile(Pool(), backend="eager")(h, torch.tensor([0, 0, 1, 1, 2, 2]))
torch.compile(Gated(), backend="eager")(h, torch.tensor(0.5))
"""


def test_a_parameter_passed_on_to_a_helper_speaks_as_the_helpers_parameter():
    assert found(HELPERS) == []


def test_a_helper_that_uses_it_as_a_tensor_keeps_the_guess():
    assert found(HELPER_TENSORS, codes={"PTC103", "PTC104"}) == [(6, "PTC103"), (20, "PTC104")]


def test_dynamo_agrees_on_the_helpers():
    pytest.importorskip("torch")
    got = dynamo_break_lines_many([(HELPERS, HELPER_CALLS), (HELPER_TENSORS, HELPER_TENSOR_CALLS)])
    assert got[0] == []
    assert {6, 20} <= set(got[1])


def test_a_recursive_helper_does_not_loop():
    src = "def f(x, n):\n    if n > 1:\n        return f(x, n - 1)\n    return x.view(n, -1)\n"
    assert _evidence(src, "n") == param_uses.NUMBER  # no callee known: ``n - 1`` is arithmetic
    fn = cst.parse_module(src).body[0]
    got = param_uses.evidence(fn, "n", dynamo_facts.tensor_attributes(), dynamo_facts.schema_arguments(), lambda name: fn if name == "f" else None)
    assert got == param_uses.NUMBER


def test_an_element_of_a_size_tuple_is_a_number_use():
    full = "def f(x, n):\n    if n > 1:\n        x = x + 1\n    return x.new_full({}, 0.0)\n"
    assert _evidence(full.format("(n, x.size(-1))"), "n") == param_uses.NUMBER
    assert _evidence(full.format("[n, 2]"), "n") == param_uses.NUMBER
    cat = "import torch\ndef f(x, t):\n    if t > 1:\n        x = x + 1\n    return torch.cat((x, t), 0)\n"
    assert _evidence(cat, "t") is None  # cat's first argument is a list of tensors


def test_the_instances_own_method_of_a_tensor_methods_name_is_no_evidence():
    src = "def forward(self, x, n):\n    if x > 0:\n        n = 2\n    return self.repeat(x, n)\n"
    fn = cst.parse_module(src).body[0]
    facts = (dynamo_facts.tensor_attributes(), dynamo_facts.schema_arguments())
    assert param_uses.evidence(fn, "x", *facts, None, "self") is None  # ``repeat`` is the module's
    assert param_uses.evidence(fn, "x", *facts, None, None) == param_uses.NUMBER  # read as Tensor.repeat
    buffer = "def forward(self, n):\n    if n > 1:\n        return self.pe\n    return self.pe.view(n, -1)\n"
    assert param_uses.evidence(cst.parse_module(buffer).body[0], "n", *facts, None, "self") == param_uses.NUMBER


TILED = """\
import torch
from torch import nn


class Tiled(nn.Module):
    def repeat(self, x, n):
        return torch.cat([x] * n, 0)

    def forward(self, x, n):
        if x > 0:
            x = x + 1
        return self.repeat(x, n)
"""


def test_found_on_a_module_method_named_like_a_tensor_method():
    assert found(TILED, codes={"PTC104"}) == [(10, "PTC104")]
    pytest.importorskip("torch")
    calls = 'torch.compile(Tiled(), backend="eager")(torch.tensor([0.5]), 2)\n'
    assert 10 in dynamo_break_lines_many([(TILED, calls)])[0]
