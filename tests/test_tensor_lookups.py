"""Tensor methods and attributes reached through lookups Dynamo does not trace (PTC324), and class-level
aliases of callables.

Ground truth (torch 2.13, a graph-counting backend and the graph_breaks log, a ``torch.randn(4, 8)``
input): each module in ``BREAKS`` breaks at the marked line -- "torch.* op returned non-Tensor" (GB0208)
for ``__getattribute__`` of a method or of a non-tensor attribute, "Unsupported method call" (GB0156)
for ``object.__getattribute__``, for a tensor method stored in a class body and called through the
class (``add`` as well as ``item``) and for one called through ``t.__class__``; a method read from a
class dict (``vars(A)["it"]``, ``torch._C.TensorBase.__dict__["item"]``) is the plain unbound method
(``item``: "Unsupported Tensor.item() call"); each module in ``NEAR_MISSES`` compiles to one graph.
"""

from __future__ import annotations

import pytest

from linttools import found

P = "import torch\nimport torch.nn as nn\n"
FWD = "class M(nn.Module):\n    def forward(self, x):\n        y = x + 1\n"
OPS = "class Ops:\n    it = {}\n"

#: name -> (source, [(line, code)])
BREAKS = {
    "getattribute-method-called": (P + FWD + "        return y * x.__getattribute__('sum')()\n", [(6, "PTC324")]),
    "getattribute-item-called": (P + FWD + "        return y * x.sum().__getattribute__('item')()\n", [(6, "PTC101"), (6, "PTC324")]),
    "getattribute-dtype": (P + FWD + "        return y * x.__getattribute__('dtype').itemsize\n", [(6, "PTC324")]),
    "getattribute-ndim": (P + FWD + "        return y * x.__getattribute__('ndim')\n", [(6, "PTC324")]),
    "getattribute-requires-grad": (P + FWD + "        r = x.__getattribute__('requires_grad')\n        return y\n", [(6, "PTC324")]),
    "getattr-of-getattribute": (P + FWD + "        return y * getattr(x, '__getattribute__')('size')(0)\n", [(6, "PTC324")]),
    "tensor-class-getattribute": (P + FWD + "        return y * torch.Tensor.__getattribute__(x, 'dtype').itemsize\n", [(6, "PTC324")]),
    "constant-built-by-concatenation": (P + FWD + "        return y * x.__getattribute__('su' + 'm')()\n", [(6, "PTC324")]),
    "object-getattribute-shape": (P + FWD + "        return y * object.__getattribute__(x, 'shape')[0]\n", [(6, "PTC324")]),
    "class-attribute-item": (P + OPS.format("torch.Tensor.item") + FWD + "        return y * Ops.it(x.sum())\n", [(8, "PTC324")]),
    "class-attribute-add": (P + OPS.format("torch.Tensor.add") + FWD + "        return y * Ops.it(x, 1)\n", [(8, "PTC324")]),
    "class-attribute-inherited": (P + OPS.format("torch.Tensor.sum") + "class Sub(Ops):\n    pass\n" + FWD + "        return y * Sub.it(x)\n", [(10, "PTC324")]),
    "class-attribute-kept-then-called": (P + OPS.format("torch.Tensor.add") + FWD + "        f = Ops.it\n        return y * f(x, 1)\n", [(9, "PTC324")]),
    "class-attribute-through-getattr": (P + OPS.format("torch.Tensor.size") + FWD + "        return y * getattr(Ops, 'it')(x, 0)\n", [(8, "PTC324")]),
    "type-of-tensor-getattribute": (P + FWD + "        return y * type(x).__getattribute__(x, 'dtype').itemsize\n", [(6, "PTC324")]),
    "dunder-class-add": (P + FWD + "        return y * x.__class__.add(x, 1)\n", [(6, "PTC324")]),
    "dunder-class-item": (P + FWD + "        t = x.sum()\n        return y * t.__class__.item(t)\n", [(7, "PTC324")]),
    # the class dict holds the method as stored: called, it is ``torch.Tensor.item(t)``
    "tensorbase-dict-item": (P + FWD + "        return y * torch._C.TensorBase.__dict__['item'](x.sum())\n", [(6, "PTC101")]),
    "vars-tensorbase-tolist": (P + FWD + "        return y * len(vars(torch._C.TensorBase)['tolist'](x))\n", [(6, "PTC102")]),
    "vars-of-class-item": (P + OPS.format("torch.Tensor.item") + FWD + "        return y * vars(Ops)['it'](x.sum())\n", [(8, "PTC101")]),
    "class-dict-item": (P + OPS.format("torch.Tensor.item") + FWD + "        return y * Ops.__dict__['it'](x.sum())\n", [(8, "PTC101")]),
    # through the instance's class, in a method of the compiled module
    "type-of-self-class-attribute": (P + "class M(nn.Module):\n    it = torch.Tensor.add\n    def forward(self, x):\n        y = x + 1\n        return y * type(self).it(x, 1)\n", [(7, "PTC324")]),
    "dunder-class-of-self-class-attribute": (P + "class M(nn.Module):\n    it = torch.Tensor.add\n    def forward(self, x):\n        y = x + 1\n        return y * self.__class__.it(x, 1)\n", [(7, "PTC324")]),
    # wrapped in staticmethod, the call is ``torch.Tensor.item(t)``: ``.item()``'s own break
    "staticmethod-item": (P + OPS.format("staticmethod(torch.Tensor.item)") + FWD + "        return y * Ops.it(x.sum())\n", [(8, "PTC101")]),
}

NEAR_MISSES = {
    "getattribute-shape": P + FWD + "        return y * x.__getattribute__('shape')[0]\n",
    "getattribute-T-and-data": P + FWD + "        return y @ x.__getattribute__('T') + x.__getattribute__('data').sum()\n",
    "getattribute-grad": P + FWD + "        g = x.__getattribute__('grad')\n        return y\n",
    "getattr-method": P + FWD + "        return y * getattr(x, 'sum')()\n",
    # not a tensor: a name the analysis does not know, an object of the file
    "getattribute-of-unknown": P + "from helpers import make\n" + FWD + "        return y * make().__getattribute__('sum')()\n",
    "staticmethod-add": P + OPS.format("staticmethod(torch.Tensor.add)") + FWD + "        return y * Ops.it(x, 1)\n",
    "class-attribute-torch-function": P + OPS.format("torch.relu") + FWD + "        return y * Ops.it(x)\n",
    "class-dict-lookup": P + OPS.format("torch.Tensor.add") + FWD + "        return y * Ops.__dict__['it'](x, 1)\n",
    "type-of-tensor-add": P + FWD + "        return y * type(x).add(x, 1)\n",
    "dunder-class-looked-up-only": P + FWD + "        c = x.__class__\n        return y * len(c.__name__)\n",
    "tensorbase-dict-add": P + FWD + "        return y * torch._C.TensorBase.__dict__['add'](x, 1)\n",
    "type-of-self-staticmethod": P + "class M(nn.Module):\n    it = staticmethod(torch.Tensor.add)\n    def forward(self, x):\n        y = x + 1\n        return y * type(self).it(x, 1)\n",
    "type-of-self-method": P + "class M(nn.Module):\n    def helper(self, t):\n        return t * 2\n    def forward(self, x):\n        y = x + 1\n        return y * type(self).helper(self, x)\n",
    "class-attribute-looked-up-only": P + OPS.format("torch.Tensor.add") + FWD + "        f = Ops.it\n        return y\n",
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_the_break_is_found_at_its_line(name):
    src, expected = BREAKS[name]
    assert [f for f in found(src) if f[1].startswith(("PTC1", "PTC3"))] == expected


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_the_near_miss_is_clean(name):
    assert [f for f in found(NEAR_MISSES[name]) if f[1].startswith(("PTC1", "PTC3"))] == []


def test_a_class_level_torch_function_gives_its_result_kind():
    # ``Ops.it(x)`` with ``it = torch.relu`` is ``torch.relu(x)``, a tensor: a branch on it is on data
    src = P + OPS.format("torch.relu") + FWD + "        if Ops.it(x).sum() > 0:\n            return y\n        return x\n"
    assert found(src, codes={"PTC104"}) == [(8, "PTC104")]


def test_a_name_that_is_no_tensor_attribute_is_not_reported():
    # (AttributeError in eager and under Dynamo alike: not a graph break)
    src = P + FWD + "        return y * x.__getattribute__('no_such_attribute')\n"
    assert [f for f in found(src) if f[1].startswith(("PTC1", "PTC3"))] == []


def test_the_raw_descriptor_on_an_instance_is_not_followed():
    # ``Ops().it(t)`` binds the descriptor to the ``Ops`` instance: TypeError in eager as under Dynamo
    src = P + OPS.format("torch.Tensor.item") + FWD + "        return y * Ops().it(x.sum())\n"
    assert [f for f in found(src) if f[1].startswith(("PTC1", "PTC3"))] == []
