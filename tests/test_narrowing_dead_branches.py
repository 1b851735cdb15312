"""Branches Dynamo never traces because of what a value surely is: an ``isinstance`` test of a
tensor against a class of the project that is no ``torch.Tensor`` subclass, and an ``is None``
test of a value that surely is not ``None`` (an ``int``-annotated constructor argument kept on
``self``, the result of ``int(t) + 1 if n is None else n``, a literal a loop does not rebind).

Labels from ``torch._dynamo.explain`` (backend ``eager``) on torch 2.13 (CPU):

* ``isinstance(e, Sparse)`` with a tensor ``e`` and ``Sparse`` a plain class: one graph, no
  break (the ``.item()`` under the test never runs).  With ``Sparse`` a ``torch.Tensor``
  subclass: no break for a tensor ``e``, one at the ``.item()`` for a ``Sparse`` one.
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
from test_project_analysis import PYPROJECT, lint_tree, write
from test_project_analysis import found as found_in_tree


def sparse_model(base: str = "", annotation: str = ": torch.Tensor", header: str = "") -> str:
    """A model whose ``forward`` reads ``x.sum().item()`` (line 12, two more with a two-line ``header``)
    only under ``isinstance(e, Sparse)``."""
    return f"""\
import torch
from torch import nn
{header}
class Sparse{base}:
    def has_value(self) -> bool:
        return True


class M(nn.Module):
    def forward(self, x, e{annotation}):
        if isinstance(e, Sparse):
            return x * x.sum().item()
        return x * 2
"""


PLAIN_BASE = "class Base:\n    pass\n"
TENSOR_BASE = "class Base(torch.Tensor):\n    pass\n"


def test_isinstance_of_a_tensor_with_a_plain_project_class_is_false():
    assert found(sparse_model()) == []
    assert found(sparse_model(base="(object)")) == []
    # an unannotated input is taken for a tensor too
    assert found(sparse_model(annotation="")) == []
    # a base of the project, itself no tensor
    assert found(sparse_model(base="(Base)", header=PLAIN_BASE)) == []


def test_isinstance_with_a_tensor_subclass_an_unknown_base_or_a_guess_keeps_the_branch():
    assert found(sparse_model(base="(torch.Tensor)")) == [(12, "PTC101")]
    # a class of the project whose base is a tensor class
    assert found(sparse_model(base="(Base)", header=TENSOR_BASE)) == [(14, "PTC101")]
    # a base the project cannot resolve may be a tensor subclass
    assert found(sparse_model(base="(Base)", header="from somewhere import Base")) == [(12, "PTC101")]
    # ``e`` may be anything: the annotation allows a Sparse
    assert found(sparse_model(annotation=": object")) == [(12, "PTC101")]
    assert found(sparse_model(annotation="=None")) == [(12, "PTC101")]


def test_isinstance_with_a_class_of_another_project_module(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/sparse.py": """
            class Sparse:
                def has_value(self) -> bool:
                    return True
            """,
        "pkg/tensorlike.py": """
            import torch

            class Sparse(torch.Tensor):
                def has_value(self) -> bool:
                    return True
            """,
        "pkg/model.py": """
            import torch
            from torch import nn
            from pkg.sparse import Sparse
            from pkg import tensorlike

            class M(nn.Module):
                def forward(self, x, e: torch.Tensor):
                    if isinstance(e, Sparse):
                        x = x * x.sum().item()
                    if isinstance(e, tensorlike.Sparse):
                        x = x * x.mean().item()
                    return x
            """,
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == [("pkg/model.py", 11, "PTC101")]


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
