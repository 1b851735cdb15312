"""PTC327: torch calls Dynamo refuses whatever their values, next to the near misses that
Dynamo traced (each measured on torch 2.13 with the eager backend)."""

from __future__ import annotations

from linttools import dynamo_break_lines_many, found


def test_refused_calls_are_flagged_at_their_line():
    code = """
    import torch
    from torch import nn


    class M(nn.Module):
        def forward(self, x):
            if torch.is_inference_mode_enabled():
                x = x + 1
            a = torch.empty(4, 4).random_(0, 10)
            b = torch.empty(4, 4).uniform_(**{"from": -1.0, "to": 1.0})
            c = x + 1
            c.share_memory_()
            d = x.to_sparse_csr()
            e = torch.sparse_csr_tensor(torch.tensor([0, 1, 2]), torch.tensor([1, 0]), torch.tensor([1.0, 2.0]), (2, 2))
            f = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2))
            g = x.clone()
            g.real = torch.zeros(4, 4)
            return a, b, c, d, e, f, g
    """
    assert found(code, codes={"PTC327"}) == [
        (7, "PTC327"), (9, "PTC327"), (10, "PTC327"), (12, "PTC327"), (13, "PTC327"), (14, "PTC327"),
        (15, "PTC327"), (17, "PTC327"),
    ]


def test_a_sparse_factory_is_one_finding():
    # ``torch.sparse_coo_tensor`` is also in Dynamo's skip table; the break is reported once,
    # as the refusal, not again as a skipped function (PTC307)
    code = """
    import torch
    from torch import nn


    class M(nn.Module):
        def forward(self, x):
            f = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), x[0, :2], (2, 2))
            return f
    """
    assert [f for f in found(code, codes=None) if f[1] != "PTC702"] == [(7, "PTC327")]


def test_near_misses_are_not_flagged():
    # traced by Dynamo: uniform_ with positional or `to=` bounds, randint, to_dense, a `.grad`
    # store; outside the region: __init__; and methods of values not known to be tensors
    code = """
    import torch
    from torch import nn


    class M(nn.Module):
        def __init__(self, sampler):
            super().__init__()
            self.inference = torch.is_inference_mode_enabled()
            self.s = torch.randn(4, 4).to_sparse()
            self.sampler = sampler

        def forward(self, x, cfg=None):
            a = torch.empty(4, 4).uniform_(-1.0, 1.0)
            b = torch.empty(4, 4).uniform_(-1.0, to=1.0)
            c = torch.randint(0, 10, (4, 4))
            d = x.to_dense()
            e = x + 1
            e.grad = torch.zeros(4, 4)
            self.sampler.random_()
            cfg.real = 1.0
            return a, b, c, d, e
    """
    assert found(code, codes={"PTC327"}) == []


def test_check_messages_dynamo_cannot_use():
    # measured on torch 2.13: lines 11-17 broke (GB9840, GB9158); the others were traced
    code = """
    import torch
    from torch import nn


    def msg():
        return "m"


    class M(nn.Module):
        def forward(self, x):
            torch._check(x.shape[0] > 0, "batch must be non-empty")
            torch._check(x.shape[0] > 0, lambda: f"bad input {x.shape}")
            torch._check(x.shape[0] > 0, lambda: f"bad {self.training}")
            torch._check(x.shape[0] > 0, msg)
            torch._check_value(x.shape[0] > 0, message="m")
            torch._check_with(ValueError, x.shape[0] > 0, "m")
            torch._check(x.shape[0] > 0, None)
            torch._check(x.shape[0] > 0)
            torch._check(x.shape[0] > 0, lambda: "bad")
            name = "layer"
            torch._check(x.shape[0] > 0, lambda: f"bad {name}")

            def local():
                return "bad"
            torch._check(x.shape[0] > 0, local)
            torch._check(x.shape[0] > 0, lambda n=3: f"bad {n}")
            torch._check_is_size(x.shape[0], "m")
            return x + 1
    """
    assert found(code, codes={"PTC327"}) == [(n, "PTC327") for n in range(11, 18)]


_CALLABLE_METHODS = """
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x):
        y = x.clone()
        y.apply_(lambda v: v * 2)
        y.map_(x, lambda a, b: a + b)
        z = y.map(lambda t: t) if hasattr(y, "map") else y
        return z * 2
"""


def test_tensor_methods_that_take_a_python_function_break():
    # the methods torch documents as taking a ``callable`` (facts: callable_methods); the
    # near miss is a method of that name Tensor does not have, never called (``hasattr`` is false)
    lines = [ln for ln, code in found(_CALLABLE_METHODS, codes={"PTC327"})]
    assert lines == [8, 9]
    assert set(dynamo_break_lines_many([(_CALLABLE_METHODS.lstrip("\n"), "torch.compile(M(), backend=\"eager\")(torch.randn(4, 4))")])[0]) >= {8, 9}


_FORBIDDEN_PROBE = r"""
import json, sys
import torch
out = []
for source in json.loads(sys.stdin.read()):
    ns = {}
    exec(compile(source, "m.py", "exec"), ns)
    torch._dynamo.reset()
    try:
        torch.compile(ns["M"](), backend="eager")(torch.randn(4, 4))
        out.append("compiled")
    except AssertionError as exc:
        out.append("forbidden" if "forbidden callable" in str(exc) else "other")
print(json.dumps(out))
"""


def test_a_forbidden_function_fails_compilation_and_is_flagged_where_it_runs():
    import json
    import subprocess
    import sys

    bad = """
import torch
from torch import nn


class M(nn.Module):
    def forward(self, x):
        torch._dynamo.mark_dynamic(x, 0)
        torch.compiler.set_stance("default")
        return x * 2
"""
    # dead while tracing (is_compiling() is True), and outside forward
    good = """
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        torch._dynamo.maybe_mark_dynamic(torch.zeros(2), 0)

    def forward(self, x):
        if not torch.compiler.is_compiling():
            torch._dynamo.mark_dynamic(x, 0)
        return x * 2
"""
    assert [f for f in found(bad, codes={"PTC327"})] == [(7, "PTC327"), (8, "PTC327")]
    assert found(good, codes=None) == []
    proc = subprocess.run(
        [sys.executable, "-c", _FORBIDDEN_PROBE], input=json.dumps([bad, good]), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["forbidden", "compiled"]
