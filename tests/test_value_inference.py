"""Value kinds the analysis infers from what ops return and from the run's environment.

Each case was run through Dynamo on torch 2.13 (``pt2lint.confirm.dynamo.graph_breaks``): the
lines asserted here are the lines it broke at, and the near misses compiled into one graph.
"""

from __future__ import annotations

from linttools import found


def test_where_takes_the_dtype_of_its_values_not_of_its_condition():
    # ``torch.where(cond, a, b)`` with integer ``a``/``b`` is an integer tensor: indexing with it
    # gathers (one graph); only the one-argument form is a data-dependent shape
    assert found(
        """
        import torch


        @torch.compile
        def pick(x, n: int):
            g = torch.arange(8, device=x.device).repeat(2, 1)
            idx = torch.where(g > n, g - 1, g)
            return x[:, idx[0]].sum()
        """
    ) == []


def test_like_factories_and_new_factories_keep_a_mask_dtype():
    # ``torch.zeros_like(mask)`` and ``mask.new_zeros(n)`` are boolean: indexing with them is a
    # boolean mask (GB0036); with ``dtype=`` given they are not
    assert found(
        """
        import torch


        @torch.compile
        def keep_first(x):
            keep = torch.zeros_like(x > 0)
            keep[0] = True
            fresh = (x > 0).new_zeros(4)
            fresh[1] = True
            counts = torch.zeros_like(x > 0, dtype=torch.long)
            return x[keep].sum() + x[fresh].sum() + x[counts].sum()
        """,
        codes={"PTC201"},
    ) == [(11, "PTC201"), (11, "PTC201")]


def test_an_environment_switch_is_read_as_unset():
    # Dynamo reads ``os.environ`` while tracing; in a run without the variable the branch is dead
    # (one graph), and a default that makes the test true keeps it live
    assert found(
        """
        import os

        import torch

        PROFILE = os.environ.get("P2L_TEST_PROFILE", "0") == "1"
        DEBUG = os.getenv("P2L_TEST_DEBUG")
        LEVEL = int(os.environ.get("P2L_TEST_LEVEL", 2))


        class M(torch.nn.Module):
            def forward(self, x):
                if PROFILE:
                    print("profiling")
                if DEBUG:
                    print("debug")
                if os.environ.get("P2L_TEST_VERBOSE"):
                    print("verbose")
                if LEVEL > 1:
                    print("level")
                return x * 2
        """
    ) == [(19, "PTC301")]


def test_torch_cond_branch_functions_are_traced_with_the_operands():
    # Dynamo traces both branches as subgraphs that may not break: a print or .item() in one
    # raises UncapturedHigherOrderOpError on every call (measured on torch 2.13, eager backend),
    # so it is reported in the branch, at its line; a clean branch adds nothing
    assert found(
        """
        import torch
        from torch import nn


        def scaled(x):
            return x * x.sum().item()


        class Net(nn.Module):
            def forward(self, x):
                def noisy(v):
                    print("in branch")
                    return v * 2

                y = torch.cond(x.sum() > 0, noisy, lambda v: v.clone(), (x,))
                return torch.cond(y.sum() > 0, scaled, lambda v: v + 1, operands=(y,))
        """,
        codes={"PTC101", "PTC301"},
    ) == [(6, "PTC101"), (12, "PTC301")]


def test_not_of_a_known_flag_is_known():
    # ``if not PROFILE: return`` with PROFILE false (an unset environment switch, a module
    # constant) leaves the rest of the function dead, as ``if PROFILE:`` already did (measured on
    # torch 2.13: one graph); ``not`` of an unknown flag or of a tensor keeps both arms
    assert found(
        """
        import os
        import time

        import torch

        PROFILE = os.environ.get("P2L_TEST_PROFILE", "0") == "1"
        FLAG = False


        def timed(x):
            if not PROFILE:
                return x
            t0 = time.perf_counter()
            return x


        @torch.compile
        def step(x, verbose: bool = False):
            if not FLAG:
                x = x * 2
            else:
                print("never")
            if not verbose:
                print("maybe")
            return timed(x)
        """
    ) == [(24, "PTC301")]
