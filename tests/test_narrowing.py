"""``isinstance`` tests narrow what a name holds in each branch.

Labels from ``torch._dynamo.explain`` on torch 2.13 (CPU): in ``TWO_WAYS`` with a tensor
``s`` Dynamo breaks at lines 7 and 14, with an ``int`` ``s`` only at line 14; ``TRIM``
compiles with no break when ``reference`` is an ``int`` size and when it is a tensor.
"""

from __future__ import annotations

import textwrap

import pytest
from linttools import dynamo_break_lines

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def found(code: str):
    result = lint_source(textwrap.dedent(code), "m.py", DEFAULT, fixes=False)
    return sorted((d.start.line, d.code) for d in result.diagnostics)


TWO_WAYS = """\
import torch
from torch import nn

class M(nn.Module):
    def forward(self, x, s):
        if isinstance(s, torch.Tensor):
            if s.sum() > 0:
                x = x + 1
        else:
            if s > 0:
                x = x + 2
        if not isinstance(x, torch.Tensor):
            x = torch.tensor(x)
        if x.max() > 0:
            x = x * 2
        return x
"""

TRIM = """\
import torch
from torch import nn

def center_trim(tensor, reference):
    if isinstance(reference, torch.Tensor):
        ref_size = reference.size(-1)
    else:
        ref_size = reference
    delta = tensor.size(-1) - ref_size
    if delta < 0:
        raise ValueError("bad")
    if delta:
        tensor = tensor[..., delta // 2:-(delta - delta // 2)]
    return tensor

def scale(x, s):
    if not isinstance(s, torch.Tensor):
        return x * s
    if s > 0:
        return x * s
    return x

class M(nn.Module):
    def forward(self, x, ref):
        length = x.shape[-1]
        y = center_trim(x, length)
        z = center_trim(x, ref)
        return scale(y, 2.0).sum() + z.sum()
"""


def test_the_else_branch_of_a_tensor_isinstance_holds_no_tensor():
    assert found(TWO_WAYS) == [(7, "PTC104"), (14, "PTC104")]


def test_an_int_size_passed_where_a_tensor_could_be_is_not_a_tensor():
    # ``reference`` is an int from ``x.shape[-1]`` at one call and a tensor at the other;
    # both give ``ref_size`` an int, and ``scale`` gets a Python float, so its tensor
    # branch is never traced
    assert found(TRIM) == []


def test_isinstance_of_python_scalars_makes_a_constant_and_other_types_narrow_nothing():
    code = """\
    import torch
    from torch import nn

    class Box:
        pass

    class M(nn.Module):
        def forward(self, x, n):
            if isinstance(n, int):
                if n > 1:
                    x = x + 1
            if isinstance(x, Box):
                pass
            if x.sum() > 0:
                x = x - 1
            return x
    """
    assert found(code) == [(14, "PTC104")]


def test_a_shadowed_isinstance_or_a_tensor_argument_is_not_narrowed_away():
    code = """\
    import torch
    from torch import nn

    from mylib import isinstance

    class M(nn.Module):
        def forward(self, x):
            if isinstance(x, torch.Tensor):
                pass
            else:
                if x.sum() > 0:
                    x = x + 1
            return x
    """
    assert found(code) == [(11, "PTC104")]


def test_a_method_torch_tensor_lacks_proves_a_guess_was_no_tensor():
    """``m = seqlen / multiple`` with ``multiple`` an attribute of unknown type is guessed a
    tensor; ``m.is_integer()`` is no ``torch.Tensor`` method (``dir(torch.Tensor)``, in the
    shipped facts), so ``m`` is a Python number and the ``if`` is no graph break
    (linear_attention_transformer's ``pad_to_multiple`` compiles without one)."""
    code = """\
    import torch
    from torch import nn

    def pad_to_multiple(tensor, multiple):
        m = tensor.shape[-1] / multiple
        if m.is_integer():
            return tensor
        if tensor.sum() > 0:
            return tensor + 1
        return tensor

    class M(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.pad_to = net.pad_to_multiple

        def forward(self, x):
            return pad_to_multiple(x, self.pad_to)
    """
    assert found(code) == [(8, "PTC104")]


FILLED_DEFAULT = """\
import torch
from torch import nn

class M(nn.Module):
    def forward(self, y, lens=None):
        if lens is None:
            lens = torch.LongTensor([y.shape[1]] * y.shape[0])
        return torch.cat([y[b, :lens[b]].mean(0, keepdim=True) for b in range(y.shape[0])], 0)

class KeepsGuess(nn.Module):
    def forward(self, y, lens=None):
        if lens is None:
            lens = [y.shape[1]] * y.shape[0]
        return torch.cat([y[b, :lens[b]].mean(0, keepdim=True) for b in range(y.shape[0])], 0)
"""


def test_a_default_filled_with_a_tensor_makes_the_parameter_a_tensor():
    # asteroid's FasNet: with ``lens`` omitted, Dynamo on torch 2.13 breaks at line 8 reading
    # ``lens[b]`` as a slice bound ("Unsupported Tensor.item()"); filled with a list of ints, the
    # parameter stays of unknown kind and line 14 is not reported
    assert found(FILLED_DEFAULT) == [(8, "PTC103")]


_FILLED_CLASS = """
class {name}(nn.Module):
    def __init__(self, depth=2, node_a=None):
        super().__init__()
        if node_a is None:
            self.node_a = {fill}
        else:
            self.node_a = node_a
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        for d in range(2):
            if self.node_a[0][d]:  # the branch
                x = self.lin(x)
        return x
"""

FILLED_ATTRIBUTE = (
    "import torch\nfrom torch import nn\n"
    + _FILLED_CLASS.format(name="Filled", fill="torch.ones((2, depth))")
    + _FILLED_CLASS.format(name="FilledWithFlags", fill="[[True] * depth] * 2")
)
# the branch of ``Filled`` (the first class)
FILLED_BRANCH = next(i for i, line in enumerate(FILLED_ATTRIBUTE.splitlines(), 1) if line.endswith("# the branch"))


def test_an_attribute_filled_with_a_tensor_when_the_argument_is_omitted_is_a_tensor():
    """``if node_a is None: self.node_a = torch.ones(...) else: self.node_a = node_a`` (monai's
    DiNTS): a model built without the argument holds the tensor, and ``if self.node_a[0][d]:``
    breaks there (the Dynamo run below, torch 2.13: "Data-dependent branching").  Filled with a
    list of flags, the attribute stays of unknown kind and nothing is reported."""
    assert [f for f in found(FILLED_ATTRIBUTE) if f[1] == "PTC104"] == [(FILLED_BRANCH, "PTC104")]


def test_the_filled_attribute_break_is_dynamos():
    pytest.importorskip("torch")
    call = (
        "for cls in (Filled, FilledWithFlags):\n"
        "    torch._dynamo.reset()\n"
        "    torch.compile(cls(), backend='eager')(torch.randn(2, 4))"
    )
    assert dynamo_break_lines(FILLED_ATTRIBUTE, call) == [FILLED_BRANCH]
