"""PTC327: torch calls Dynamo refuses whatever their values, next to the near misses that
Dynamo traced (each measured on torch 2.13 with the eager backend)."""

from __future__ import annotations

from linttools import found


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
