"""NumPy functions whose result is a plain Python value (a size, a shape, a bool) are not arrays.

``self.n_layers = np.size(g)`` in ``__init__`` (nnAudio's CFP front end) is a Python int; reading it
in ``forward`` (``if self.n_layers >= 2``, ``range(1, self.n_layers)``) does not break, while
``np.sum`` gives a ``numpy.int64`` that Dynamo wraps as a tensor, and the same ``if`` breaks
(measured below, torch 2.13).  Which functions give plain values is a fact from NumPy itself
(the ``numpy_queries`` section of the Dynamo facts table), not a list of names here.

In ``forward`` the same functions on an array traced in the graph (``np.ndim(x.numpy())``) break:
``torch._numpy`` answers with a Python int or bool and Dynamo refuses it ("torch.* op returned
non-Tensor"); PTC326 reports them.  ``np.shape`` of a traced array (a tuple of sizes) and any of
them on Python values are not reported: alone in a frame they fold to a constant (``np.size(G)``
for a module-level tuple ``G`` traced in one graph on torch 2.13), though after a ``x.numpy()`` in
the same frame ``np.ndim(G)`` broke too (GB0208), so what they do there is left unclaimed.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

from pt2lint.analysis import dynamo_facts

SOURCE = """\
import numpy as np
import torch


class Net(torch.nn.Module):
    def __init__(self, g=(0.2, 0.6, 0.9)):
        super().__init__()
        self.n = {init}
        self.g = g

    def forward(self, x):
        if self.n >= 2:
            for i in range(1, int(self.n)):
                x = torch.relu(x) * 2
        if np.ndim(x.numpy()) > 1:
            x = x + 1
        return x
"""

CASES = {
    "size": ("np.size(g)", [(15, "PTC326")]),
    "shape": ("np.shape(np.asarray(g))[0]", [(15, "PTC326")]),
    "ndim": ("np.ndim(g) + 2", [(15, "PTC326")]),
    "sum": ("np.sum(np.ones(len(g), dtype=np.int64))", [(12, "PTC104"), (15, "PTC326")]),
}


def test_the_table_holds_the_plain_results():
    assert dynamo_facts.numpy_python_result("numpy.size") == "int"
    assert dynamo_facts.numpy_python_result("numpy.shape") == "shape"
    assert dynamo_facts.numpy_python_result("numpy.sum") is None
    assert dynamo_facts.numpy_python_result("numpy.asarray") is None


@pytest.mark.parametrize("name", sorted(CASES))
def test_only_numpy_values_are_reported(name):
    init, expected = CASES[name]
    assert found(SOURCE.format(init=init), codes={"PTC104", "PTC103", "PTC101", "PTC326"}) == expected


def test_dynamo_agrees():
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 4))'
    lines = dynamo_break_lines_many([(SOURCE.format(init=init), call) for init, _ in CASES.values()])
    assert [sorted(set(found_lines)) for found_lines in lines] == [sorted({line for line, _ in expected}) for _, expected in CASES.values()]


FORWARD = """\
import numpy as np
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        a = x.numpy()
        n = np.size(a)
        rows = np.shape(a)[0]
        if np.isscalar(a):
            x = x * 2
        return x * n + rows
"""


def test_in_forward_only_traced_arrays_are_reported():
    assert found(FORWARD, codes={"PTC326", "PTC104", "PTC103"}) == [(8, "PTC326"), (10, "PTC326")]


def test_dynamo_agrees_in_forward():
    pytest.importorskip("torch")
    pytest.importorskip("numpy")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 4))'
    assert dynamo_break_lines_many([(FORWARD, call)]) == [[8, 10]]
