"""Argument binding through submodule methods, dtype-cast copies, and the other
kinds found by linting model code written apart from the fixtures.

Each case names the finding that must appear and its near miss that must not;
the Dynamo facts behind them are measured in the rule specs' examples
(tests/test_spec_evidence.py) on torch 2.13.
"""

from __future__ import annotations

from pt2lint.analysis import torch_api as api
from linttools import found as codes
from linttools import found_with_messages as found


# --------------------------------------------- methods of submodules bind self

_CACHE = """
import torch, torch.nn as nn
class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.zeros(8, 4))
    def update(self, pos, val):
        {body}
        return self.k
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = Cache()
    def forward(self, val, pos):
        return self.cache.update(pos, val).sum(0)
"""


def test_submodule_method_write_to_buffer_is_not_an_input_write():
    # index_copy_ writes its receiver (the buffer), not the index argument
    assert codes(_CACHE.format(body="self.k.index_copy_(0, pos, val)")) == []


def test_submodule_method_write_to_argument_names_the_right_input():
    out = found(_CACHE.format(body="val.mul_(2)"))
    assert [(line, c) for line, c, _ in out] == [(7, "PTC401")]
    assert "`val`" in out[0][2] and "`pos`" not in out[0][2]


# --------------------------------------------------------- dtype-cast copies

_CAST = """
import torch, torch.nn as nn
class M(nn.Module):
    def forward(self, x):
        y = {cast}
        y.add_(1.0)
        return y
"""


def test_cast_to_another_dtype_is_a_copy():
    for cast in (
        "x.to(torch.float64)",
        "x.to(dtype=torch.float16)",
        "x.to(x.device, torch.bfloat16)",
        "x.type(torch.float64)",
        "x.to(torch.float32, copy=True)",
        "x.double()",
    ):
        assert codes(_CAST.format(cast=cast)) == [], cast


def test_cast_to_default_or_unknown_dtype_may_return_the_input():
    for cast in ("x.to(torch.float32)", "x.float()", "x.to(x.dtype)", "x.to(x.device)", "x.to(torch.float)"):
        assert codes(_CAST.format(cast=cast)) == [(5, "PTC401")], cast


def test_dtype_names_match_torch():
    import pytest

    torch = pytest.importorskip("torch")
    names = {n for n in dir(torch) if isinstance(getattr(torch, n, None), torch.dtype)}
    assert api.TORCH_DTYPES == names
    assert {n for n in names if getattr(torch, n) == torch.get_default_dtype()} == api.DEFAULT_FLOAT_DTYPES


# ----------------------------------------------------------- torch.Generator


def test_generator_made_seeded_and_passed_in_forward():
    assert [c for c in codes(
        """
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                g = torch.Generator(device=x.device)
                g.manual_seed(3)
                return x + torch.rand(2, 4, generator=g, device=x.device)
        """
    ) if c[1] == "PTC315"] == [(4, "PTC315"), (5, "PTC315"), (6, "PTC315")]


def test_generator_parameter_of_unknown_value_is_not_flagged():
    assert codes(
        """
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x, generator=None):
                return x + torch.randn(x.shape, generator=generator, device=x.device)
        """
    ) == []


# ------------------------------------------------- arithmetic on random draws


def test_python_arithmetic_on_a_random_draw_breaks_where_it_happens():
    assert [c for c in codes(
        """
        import random
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                g = random.uniform(-6.0, 6.0)
                t = random.randint(0, 9)
                y = x * (10.0 ** (g / 20.0))
                return y + x * (t / 10)
        """
    ) if c[1] == "PTC305"] == [(7, "PTC305")]  # after the break the draws are plain numbers


def test_a_random_draw_meeting_a_tensor_directly_is_not_flagged():
    assert codes(
        """
        import random
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                g = random.uniform(0.5, 1.5)
                return x * g + random.randrange(3) + x * random.randint(0, 3)
        """
    ) == []


def test_a_random_draw_where_torch_needs_a_number_is_read_like_a_tensor():
    # Dynamo holds the draw as a tensor graph input; where a number is needed it is read with
    # aten._local_scalar_dense (measured on torch 2.13: each of these lines breaks, GB0033 or
    # a Tensor.item() break)
    assert codes(
        """
        import random
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                a = torch.roll(x, random.randint(0, 3), 0)
                b = x.narrow(0, 0, random.randint(1, 3))
                k = random.randint(1, 3)
                c = x[:k]
                d = x[random.randint(0, 3)]
                for i in range(random.randint(1, 3)):
                    x = x + 1
                return a, b, c, d, x.view(random.randint(2, 2), -1)
        """
    ) == [(5, "PTC103"), (6, "PTC103"), (8, "PTC103"), (9, "PTC103"), (10, "PTC103"), (12, "PTC103")]


def test_a_random_draw_in_tensor_arithmetic_or_a_shape_bound_is_not_read():
    # near misses, traced on torch 2.13: the draw as a tensor operand, a slice bound from a shape
    assert codes(
        """
        import random
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                s = random.uniform(0.5, 2.0)
                k = x.shape[0] // 2
                return x[:k] * s + x.new_ones(4) * s
        """
    ) == []


def test_a_tensor_in_a_later_size_position_is_read_as_a_number():
    # the facts table's probes with the 0-d tensor after a Python size (``x.view(-1, n)``,
    # ``x.repeat(1, n)``, ``x.clamp(0, n)``): each broke with GB0033 on torch 2.13
    assert codes(
        """
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                n = x.argmax() % 2 + 1
                a = x.view(-1, n)
                b = x.repeat(1, n)
                c = x.clamp(0, x.max())
                return a, b, c, x.view(-1, x.shape[0])
        """
    ) == [(5, "PTC103"), (6, "PTC103"), (7, "PTC103")]


def test_a_tensor_among_more_sizes_than_any_probe_tried_is_read_as_a_number():
    # ``x.view(1, n, 2, -1)``: no probe tried four sizes, but view read the 0-d tensor as a number
    # wherever the probes put it (torch 2.13: this line breaks with GB0033); index_select takes a
    # tensor operand, so one tensor after a number there is no such read
    assert codes(
        """
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                n = x.argmax() % 2 + 1
                idx = x.argmax(dim=0)
                return x.view(1, n, 2, -1), x.index_select(0, idx)
        """
    ) == [(6, "PTC103")]


def test_torch_functions_dynamo_skips_are_reported_but_not_the_torchscript_decorators():
    # torch 2.13: ``torch.jit.isinstance(e, torch.Tensor)`` breaks (GB0007, "should not be traced");
    # methods under @torch.jit.ignore / @torch.jit.unused / @torch.jit.export and a @torch.jit.script
    # function called from forward compile without a break (the decorators ran at definition)
    assert codes(
        """
        import torch
        from torch import nn

        @torch.jit.script
        def fused_gelu(x):
            return x * 0.5 * (1.0 + torch.erf(x / 1.41421))

        class A(nn.Module):
            @torch.jit.ignore
            def helper(self, x):
                return x * 2

            @torch.jit.unused
            def other(self, x):
                return x + 1

            @torch.jit.export
            def exported(self, x):
                return x - 1

            def forward(self, x, e=None):
                y = fused_gelu(x) + self.helper(x) + self.exported(x)
                if e is not None and torch.jit.isinstance(e, torch.Tensor):
                    y = y + e
                return y
        """
    ) == [(23, "PTC307")]


def test_a_tensor_among_the_sizes_of_a_factory_is_read_as_a_number():
    # ``torch.zeros(n, 3)``, ``torch.ones(2, n, 3)``, ``torch.randn(3, n)`` with ``n`` a 0-d tensor:
    # each breaks at its line on torch 2.13 (GB0033, each compiled alone); sizes read from a
    # shape are SymInts and trace
    assert codes(
        """
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                n = x.argmax() % 2 + 1
                a = torch.zeros(n, 3, device=x.device)
                b = torch.ones(2, n, 3, device=x.device)
                c = torch.randn(3, n, device=x.device)
                d = torch.zeros(x.shape[0], 3, device=x.device)
                return a, b, c, d
        """
    ) == [(5, "PTC103"), (6, "PTC103"), (7, "PTC103")]


def test_a_tensor_in_a_size_tuple_is_read_as_a_number():
    # the sizes as one tuple or list: torch 2.13 breaks at each of lines 5-8 (GB0033, each compiled
    # alone), as with the spread sizes; sizes from a shape trace, and ``torch.tensor`` of a tuple
    # takes no size list
    assert codes(
        """
        import torch, torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                n = x.argmax() % 2 + 1
                a = torch.zeros((n, 3), device=x.device)
                b = x.view((n, -1))
                c = torch.ones([2, n], device=x.device)
                d = x.new_zeros((2, n))
                e = torch.zeros((x.shape[0], 3), device=x.device)
                return a, b, c, d, e
        """
    ) == [(5, "PTC103"), (6, "PTC103"), (7, "PTC103"), (8, "PTC103")]
