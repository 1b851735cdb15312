"""PTC326 on a method of a tensor's storage: ``x.untyped_storage().data_ptr()`` in a compiled region.

Dynamo answers ``x.untyped_storage()`` itself (an ``UntypedStorageVariable``), but of the storage's
methods it answers ``size()`` alone: ``data_ptr()``, ``nbytes()``, ``element_size()``,
``is_pinned()`` and the other queries are refused ("Unsupported method call", GB0156; measured
on torch 2.13 with the graph_breaks log, below).  The methods are the ``tensor_queries`` entries
of the facts table with ``via: untyped_storage``, each probed by ``tools/gen_dynamo_facts.py``.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

from pt2lint.analysis import dynamo_facts as facts

SOURCE = """\
import torch


class Aliasing(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4))
        self.ptr = self.w.untyped_storage().data_ptr()  # not compiled: __init__

    def forward(self, x):
        shared = x.untyped_storage().data_ptr() == self.w.untyped_storage().data_ptr()
        n = x.untyped_storage().nbytes()
        size = x.untyped_storage().size()
        return x * size + n + int(shared)
"""


def test_the_table_holds_the_probed_storage_methods():
    assert facts.query_result_method_break("untyped_storage", "data_ptr") == "GB0156"
    assert facts.query_result_method_break("untyped_storage", "nbytes") == "GB0156"
    assert facts.query_result_method_break("untyped_storage", "size") is None  # answered
    # the storage's methods are not the tensor's: ``x.data_ptr()`` traces
    assert facts.tensor_query_break("data_ptr") is None


def test_storage_methods_are_reported_where_they_break():
    assert found(SOURCE, codes={"PTC326"}) == [(11, "PTC326"), (11, "PTC326"), (12, "PTC326")]


def test_an_unknown_receiver_is_not_a_tensor():
    # ``buf`` has no annotation and a None default: a guess, not a tensor; ``obj.untyped_storage()``
    # of an object of unknown kind may be anything
    assert found(
        """
        import torch

        class M(torch.nn.Module):
            def forward(self, x, buf=None, obj=None):
                if buf is not None:
                    x = x + buf.untyped_storage().nbytes()
                return x + obj.untyped_storage().nbytes()
        """,
        codes={"PTC326"},
    ) == []


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Aliasing(), backend="eager")(torch.randn(4))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[11, 12]]
