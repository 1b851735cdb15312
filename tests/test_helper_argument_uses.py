"""A parameter passed on to a helper speaks as the helper's parameter does, however it is passed.

``num_graphs`` passed to ``scatter_mean(h, batch, dim_size=num_graphs)`` by keyword, to a method
of the instance (``self._pool(h, batch, num_graphs)``), or to a helper imported from another
module of the project is a size there (``src.new_zeros(dim_size, ...)``): the branch
``if num_graphs == 1:`` on it is on a Python int, and Dynamo traces one graph (measured below,
torch 2.13).  Before, only a positional argument of a helper of the same module spoke.  The near
miss: a helper that uses the value as a tensor (``t.sigmoid()``) keeps the guess, and the branch
on a tensor still breaks.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found
from test_project_analysis import PYPROJECT, found as found_in_tree, lint_tree, write

HELPER = '''
def scatter_mean(src, index, dim_size):
    out = src.new_zeros(dim_size, src.size(-1)).index_add_(0, index, src)
    count = src.new_zeros(dim_size).index_add_(0, index, src.new_ones(index.size(0)))
    return out / count.clamp(min=1).unsqueeze(-1)


def gate(x, t):
    return x * t.sigmoid()
'''

KEYWORD = """\
import torch
from torch import nn
""" + HELPER + """

class Pool(nn.Module):
    def forward(self, h, batch, num_graphs):
        if num_graphs == 1:
            return h.mean(0, keepdim=True)
        return scatter_mean(h, batch, dim_size=num_graphs)


class Gated(nn.Module):
    def forward(self, h, t):
        if t > 0:
            return gate(h, t=t)
        return h
"""

METHOD = """\
import torch
from torch import nn


class Pool(nn.Module):
    def _pool(self, src, index, dim_size):
        return src.new_zeros(dim_size, src.size(-1)).index_add_(0, index, src)

    @staticmethod
    def _count(index, dim_size):
        return index.new_zeros(dim_size).index_add_(0, index, index.new_ones(index.size(0)))

    def forward(self, h, batch, num_graphs, num_groups):
        if num_graphs == 1:
            return h.mean(0, keepdim=True)
        if num_groups > 4:
            h = h * 2
        return self._pool(h, batch, num_graphs) / self._count(batch, num_groups).clamp(min=1).unsqueeze(-1)


class Gated(nn.Module):
    def _gate(self, x, t):
        return x * t.sigmoid()

    def forward(self, h, t):
        if t > 0:
            return self._gate(h, t)
        return h
"""

CALLS = """\
h = torch.randn(6, 4)
batch = torch.tensor([0, 0, 1, 1, 2, 2])
torch.compile(Pool(), backend="eager")(h, batch, {pool_args})
torch.compile(Gated(), backend="eager")(h, torch.tensor(0.5))
"""


def test_passed_by_keyword():
    assert found(KEYWORD, codes={"PTC104"}) == [(23, "PTC104")]


def test_passed_to_a_method_of_the_instance():
    assert found(METHOD, codes={"PTC104"}) == [(26, "PTC104")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    got = dynamo_break_lines_many([(KEYWORD, CALLS.format(pool_args="3")), (METHOD, CALLS.format(pool_args="3, 3"))])
    assert got == [[23], [26]]


def test_passed_to_a_helper_imported_from_another_module(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/ops.py": HELPER,
        "pkg/model.py": """
            from torch import nn

            from .ops import gate, scatter_mean


            class Pool(nn.Module):
                def forward(self, h, batch, num_graphs):
                    if num_graphs == 1:
                        return h.mean(0, keepdim=True)
                    return scatter_mean(h, batch, num_graphs)


            class Gated(nn.Module):
                def forward(self, h, t):
                    if t > 0:
                        return gate(h, t)
                    return h
            """,
    })
    got = [f for f in found_in_tree(lint_tree(tmp_path, ["pkg"])) if f[2] == "PTC104"]
    assert got == [("pkg/model.py", 15, "PTC104")]
