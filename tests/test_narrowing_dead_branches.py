"""Branches Dynamo never traces because a value surely is not ``None``: an ``int``-annotated
constructor argument kept on ``self``, the result of ``int(t) + 1 if n is None else n``, a
literal a loop does not rebind.

Labels from ``torch._dynamo.explain`` (backend ``eager``) on torch 2.13 (CPU):

* ``one_hot(t, self.num_relations)`` with ``self.num_relations`` an ``int`` set in
  ``__init__``: no break (``if num_classes is None:`` is not taken); with the attribute left
  ``None`` the ``int(index.max())`` under it breaks ("Unsupported Tensor.item() call with
  capture_scalar_outputs=False").
* ``d = int(i.max()) + 1 if d is None else d`` then ``f(i, d)``: one break, at the caller's
  ``int()``; ``f``'s own ``if d is None:`` is not taken.  ``d = d if d is not None else 4``: no
  break; ``d`` passed on as it came (``None``): one break, in ``f``.
* ``h = 0`` then ``for ...: if h is None: x.sum().item()`` with ``h = None`` later in the loop:
  the ``.item()`` breaks on the second iteration (and the frame falls back to eager).
"""

from __future__ import annotations

from linttools import found


ONE_HOT = """\
import torch
from typing import Optional
from torch import nn

def one_hot(index, num_classes: Optional[int] = None):
    if num_classes is None:
        num_classes = int(index.max()) + 1
    return torch.zeros(index.size(0), num_classes, device=index.device)

class M(nn.Module):
    def __init__(self, num_relations{ann}):
        super().__init__()
        self.num_relations = num_relations
{extra}
    def forward(self, edge_type):
        return one_hot(edge_type, self.num_relations)
"""


def test_an_int_constructor_argument_kept_on_self_is_not_none():
    assert found(ONE_HOT.format(ann=": int", extra="")) == []


def test_an_attribute_that_may_be_none_keeps_the_none_branch():
    assert found(ONE_HOT.format(ann="", extra="")) == [(7, "PTC103")]
    assert found(ONE_HOT.format(ann=": Optional[int] = None", extra="")) == [(7, "PTC103")]
    # a wrong annotation with a ``None`` default: it is ``None`` unless passed
    assert found(ONE_HOT.format(ann=": int = None", extra="")) == [(7, "PTC103")]
    # another method may leave it ``None``
    reset = "    def reset(self):\n        self.num_relations = None\n"
    assert found(ONE_HOT.format(ann=": int", extra=reset)) == [(7, "PTC103")]


TERNARY = """\
import torch
from typing import Optional
from torch import nn

def f(index, dim_size: Optional[int] = None):
    if dim_size is None:
        dim_size = int(index.max().item() + 1)
    return dim_size

class M(nn.Module):
    def forward(self, x, index, dim_size: Optional[int] = None):
        dim_size = {value}
        return x * f(index, dim_size)
"""


def test_a_ternary_that_replaces_none_makes_the_callee_none_test_dead():
    assert found(TERNARY.format(value="int(index.max()) + 1 if dim_size is None else dim_size")) == [(12, "PTC103")]
    assert found(TERNARY.format(value="dim_size if dim_size is not None else 4")) == []


def test_a_ternary_that_may_still_give_none_keeps_the_callee_none_test():
    # the caller's value may be ``None`` (or anything) on one path
    assert found(TERNARY.format(value="dim_size if dim_size is not None else None")) == [(7, "PTC101")]
    assert found(TERNARY.format(value="getattr(x, 'n', None) if dim_size is None else dim_size")) == [(7, "PTC101")]
    assert found(TERNARY.format(value="dim_size")) == [(7, "PTC101")]


def test_a_name_a_loop_rebinds_to_none_keeps_its_none_branch():
    code = """\
    import torch
    from torch import nn

    class M(nn.Module):
        def forward(self, x):
            h = 0
            for _ in range(3):
                if h is None:
                    x = x * x.sum().item()
                h = None
            return x
    """
    assert found(code) == [(9, "PTC101")]
    # not rebound in the loop: 0 on every iteration
    assert found(code.replace("h = None", "x = x + 1")) == []
