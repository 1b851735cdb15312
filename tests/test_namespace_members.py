"""Only public functions of torch's tensor namespaces are taken to return tensors.

``F._Reduction.get_enum(reduction)`` (basicsr's ``reduce_loss``) returns a Python int: a member
of a class inside ``torch.nn.functional``, not one of its functions.  Before, any name under
``torch.nn.functional.`` (``torch.fft.``, ``torch.linalg.`` ...) was a tensor function, and the
``if reduction_enum == 0:`` after it was reported as a tensor branch; Dynamo traces it without a
break (measured on torch 2.13).  ``F.relu(x)`` and ``torch.ops.<ns>.<op>`` calls stay tensors.
Nor do the functions written in ``torch/__init__.py`` (``torch.get_device_module("cuda")`` is a
module, ``torch.typename(x)`` a string): the facts table lists them by defining module.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found
from pt2lint.analysis.torch_api import is_tensor_function

SOURCE = """\
import torch
from torch import nn
from torch.nn import functional as F


def reduce_loss(loss, reduction):
    reduction_enum = F._Reduction.get_enum(reduction)
    if reduction_enum == 0:
        return loss
    elif reduction_enum == 1:
        return loss.mean()
    return loss.sum()


class Model(nn.Module):
    def forward(self, pred, target):
        gate = F.relu(pred).sum()
        if gate > 0:
            pred = pred * 2
        return reduce_loss((pred - target).abs(), "mean")
"""


def test_a_class_member_of_a_namespace_is_not_a_tensor_function():
    assert found(SOURCE, codes=None) == [(18, "PTC104")]


@pytest.mark.parametrize(
    "name, tensor",
    [
        ("torch.nn.functional.relu", True),
        ("torch.linalg.norm", True),
        ("torch.ops.aten.add.Tensor", True),
        ("torch.ops.mylib.scale", True),
        ("torch.nn.functional._Reduction.get_enum", False),
        ("torch.nn.functional._in_projection_packed", False),
        ("torch.nn.functional.Linear", False),
        # functions written in torch/__init__.py configure torch or describe it (the facts table)
        ("torch.get_device_module", False),
        ("torch.typename", False),
        ("torch.set_default_dtype", False),
        ("torch.einsum", True),
        ("torch.add", True),
    ],
)
def test_is_tensor_function(name, tensor):
    assert is_tensor_function(name) is tensor


DEVICE_MODULE = """\
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        acc = torch.get_device_module("cuda")
        if acc.is_available() and hasattr(acc, "synchronize"):
            x = x + 1
        if x.sum() > 0:
            x = x * 2
        return x
"""


def test_a_device_module_is_not_a_tensor():
    # ``torch.get_device_module`` returns a module: its ``is_available()`` is a Python bool
    assert found(DEVICE_MODULE, codes=None) == [(10, "PTC104")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Model(), backend="eager")(torch.ones(2, 3), torch.zeros(2, 3))'
    device = 'torch.compile(Model(), backend="eager")(torch.ones(2, 3))'
    assert dynamo_break_lines_many([(SOURCE, call), (DEVICE_MODULE, device)]) == [[18], [10]]
