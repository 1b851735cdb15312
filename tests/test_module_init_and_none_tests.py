"""Two classes found by running Dynamo on libraries the project had not used (nnAudio, auraloss),
each re-measured here with the graph_breaks log:

* ``t == None`` is a Python bool (``Tensor.__eq__`` answers ``False`` for ``None``), so an ``if``
  on it is no data-dependent branch;
* a module whose ``__init__`` graph-breaks inside the compiled region runs that ``__init__``
  eagerly, and every ``nn.Module`` it builds then breaks at its own ``super().__init__()``.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found

TENSOR_EQ_NONE = """\
import torch
from torch import nn


def project(x, k, wcos=None, wsin=None):
    if wcos == None or wsin == None:
        return x @ k
    if wcos != None:
        x = x @ wcos
    return x @ wsin


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.randn(4, 4))
        self.register_buffer("wcos", torch.randn(4, 4))
        self.register_buffer("wsin", torch.randn(4, 4))

    def forward(self, x):
        return project(x, self.k, wcos=self.wcos, wsin=self.wsin) + project(x, self.k)
"""

NESTED_MODULE_INIT = """\
import torch
from torch import nn


class Leaf(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0


class Child(nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()


class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        print("building")
        self.child = Child()

    def forward(self, x):
        return x * self.child.leaf.scale


class Model(nn.Module):
    def forward(self, x):
        return Parent()(x)
"""

CLEAN_MODULE_INIT = NESTED_MODULE_INIT.replace('        print("building")\n', "")


def test_tensor_compared_with_none_is_a_python_bool():
    assert found(TENSOR_EQ_NONE) == []


def test_a_tensor_compared_elementwise_still_is_a_tensor():
    src = TENSOR_EQ_NONE.replace("if wcos != None:", "if (wcos != 0).all():")
    assert found(src, codes={"PTC104"}) == [(8, "PTC104")]


def test_modules_built_by_a_broken_init_break_too():
    assert found(NESTED_MODULE_INIT, codes={"PTC321", "PTC301"}) == [
        (7, "PTC321"), (13, "PTC321"), (19, "PTC321"), (20, "PTC301"),
    ]


def test_modules_built_by_a_clean_init_do_not():
    assert found(CLEAN_MODULE_INIT, codes={"PTC321"}) == []


@pytest.mark.parametrize(
    "src,breaks",
    [
        (TENSOR_EQ_NONE, []),
        (NESTED_MODULE_INIT, [7, 13, 19, 20]),
        (CLEAN_MODULE_INIT, []),
    ],
    ids=["tensor == None", "nested inits", "clean inits"],
)
def test_dynamo_agrees(src, breaks):
    pytest.importorskip("torch")
    assert dynamo_break_lines(src, 'torch.compile(Model(), backend="eager")(torch.randn(2, 4))') == breaks
