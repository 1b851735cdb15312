"""PTC307 on a torch function that returns no tensor: ``torch._C._is_tracing()`` in a compiled region.

Dynamo's trace rules put ``torch._C._is_tracing`` in the graph like any torch op, and the call's
Python ``bool`` result is rejected ("torch.* op returned non-Tensor", GB0208; asteroid's and
asteroid-filterbanks' ``is_tracing()`` helpers, measured on torch 2.13 with the graph_breaks log:
a break at the ``return torch._C._is_tracing()`` line).  ``torch.is_grad_enabled()`` and
``torch.compiler.is_compiling()`` are answered at trace time and do not break.  The list is the
``torch_queries`` section of the facts table, each entry probed.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

from pt2lint.analysis import dynamo_facts as facts


def test_the_table_holds_the_probed_queries():
    assert facts.torch_query_break("torch._C._is_tracing") == "GB0208"
    assert facts.torch_query_break("torch.is_grad_enabled") is None  # answered while tracing
    assert facts.torch_query_break("torch.nonzero") is None  # not a query: not in the section


def test_a_private_query_in_a_helper_breaks_at_its_line():
    # Dynamo resumes after the break with the helper's eager value (False outside
    # ``torch.jit.trace``): the ``os.getpid()`` branch is never traced (measured on torch 2.13)
    assert found(
        """
        import os
        import torch

        def is_tracing():
            return torch._C._is_tracing()

        class M(torch.nn.Module):
            def forward(self, x):
                if not is_tracing():
                    x = x + 1
                else:
                    x = x + os.getpid()
                if torch.is_grad_enabled() and torch.compiler.is_compiling():
                    x = x * 2
                return x
        """,
        codes={"PTC307"},
    ) == [(5, "PTC307")]


def test_a_query_named_function_given_arguments_is_not_the_query():
    # ``torch.broadcast_shapes()`` returns ``()`` with no argument, so the scan saw a non-tensor
    # result; called with shapes it is another call, and only the zero-argument form counts
    assert found(
        """
        import torch

        class M(torch.nn.Module):
            def forward(self, x):
                s = torch.broadcast_shapes(x.shape, (1, 4))
                return x.expand(s)
        """,
        codes={"PTC307"},
    ) == []


DTYPE_QUERIES = """\
import torch


class Cast(torch.nn.Module):
    def forward(self, x):
        dt = torch.promote_types(x.dtype, torch.float16)
        if torch.can_cast(dt, torch.float32):
            x = x.to(dt)
        return x
"""


def test_a_query_that_takes_python_arguments_is_probed_with_them():
    # ``torch.can_cast(ScalarType, ScalarType) -> bool``: the scan builds the probe's arguments
    # from the ATen schema; Dynamo rejects the bool (GB0208), while ``promote_types`` is folded
    assert facts.torch_query_break("torch.can_cast") == "GB0208"
    assert facts.torch_query_break("torch.promote_types") is None
    assert found(DTYPE_QUERIES, codes={"PTC307"}) == [(7, "PTC307")]


def test_dynamo_agrees_on_the_dtype_queries():
    pytest.importorskip("torch")
    call = 'torch.compile(Cast(), backend="eager")(torch.randn(2, 4))'
    assert dynamo_break_lines_many([(DTYPE_QUERIES, call)]) == [[7]]
