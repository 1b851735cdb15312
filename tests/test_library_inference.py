"""Inference found missing on installed library code (bench/libmodels): values Dynamo
draws from Python's ``random``, keyword arguments passed through ``**options``, and
the other cases below.

Each case names the finding that must appear and its near miss that must not.  The
Dynamo behaviour each relies on was measured on torch 2.13 (``torch.compile`` with the
graph_breaks log); the measured line is given with each case.
"""

from __future__ import annotations

from linttools import found as codes
from linttools import found_with_messages as found


# ------------------------------------------------------------ random draws

def test_branch_on_a_draw_of_a_random_instance_breaks():
    # measured: ``if 2 > i:`` breaks ("generic_jump UnspecializedPythonVariable")
    out = found("""
        import random
        import torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                r = random.Random(0)
                i = r.randrange(1, 4)
                if 2 > i:
                    return x + 1
                return x - 1
    """)
    assert [(line, c) for line, c, _ in out] == [(7, "PTC104")]
    assert "drawn by `random`" in out[0][2]


def test_draw_joined_with_a_recomputed_value_still_breaks_on_the_draws_path():
    # measured with mult=1: the loop's ``if`` breaks (line 13 here); the arithmetic on the
    # other path breaks where it happens (GB0213)
    assert codes("""
        import math, random
        import torch.nn as nn
        class M(nn.Module):
            def __init__(self, mult):
                super().__init__()
                self.mult = mult
            def forward(self, x):
                r = random.Random(0)
                idx = r.randrange(1, 4)
                if self.mult != 1:
                    idx = math.ceil((idx + 1) / self.mult) * self.mult - 1
                for i in range(4):
                    if i > idx:
                        continue
                    x = x + 1
                return x
    """) == [(11, "PTC305"), (13, "PTC104")]


def test_near_miss_a_draw_meeting_a_tensor_and_a_second_branch_on_a_spent_draw():
    # measured: ``x * r.uniform(...)`` traces; of two ``if``s on one draw only the first
    # breaks (the frame resumes with the draw as a plain number)
    assert codes("""
        import random
        import torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                r = random.Random(0)
                x = x * r.uniform(0.5, 1.5)
                i = random.randrange(1, 4)
                if i > 1:
                    x = x + 1
                if i > 2:
                    x = x * 2
                return x
    """) == [(8, "PTC104")]


def test_near_miss_math_of_sizes_is_a_size():
    assert codes("""
        import math
        import torch.nn as nn
        class M(nn.Module):
            def forward(self, x):
                n = math.ceil(x.shape[0] / 2)
                if n > 1:
                    x = x[:n]
                return x
    """) == []


# ------------------------------------------- ``**options`` of unknown keys

_SOLVER = """
import torch
import torch.nn as nn


class Solver:
    def __init__(self, y0, step_size=None, grid_constructor=None):
        self.y0 = y0
        if step_size is None:
            if grid_constructor is None:
                self.grid_constructor = lambda t: t
            else:
                self.grid_constructor = grid_constructor
        else:
            self.grid_constructor = self._from_step_size(step_size)

    @staticmethod
    def _from_step_size(step_size):
        def grid(t):
            n = torch.ceil((t[-1] - t[0]) / step_size + 1).item()
            return torch.arange(0, n, dtype=t.dtype) * step_size + t[0]
        return grid

    def integrate(self, t):
        return self.y0 * self.grid_constructor(t).sum()


"""

_OPEN = """
class M(nn.Module):
    def __init__(self, options):
        super().__init__()
        self.options = options

    def forward(self, y0, t):
        return Solver(y0, **self.options).integrate(t)
"""

_CLOSED = """
class M(nn.Module):
    def forward(self, y0, t):
        return Solver(y0, **{"grid_constructor": None}).integrate(t)
"""


def test_parameters_an_open_options_dict_may_give_are_not_their_defaults():
    # measured with options={"step_size": 0.25}: the ``.item()`` in the grid function breaks
    # (line 19); ``self.grid_constructor`` is the lambda, the caller's function or that one.
    # The solver is built in forward, so Dynamo cannot resume after that break: its
    # graph_breaks log reports "Reconstruction failure" at the ``.integrate(t)`` call (line 34)
    assert codes(_SOLVER + _OPEN) == [(19, "PTC101"), (20, "PTC702"), (34, "PTC323")]


def test_near_miss_a_closed_options_dict_leaves_the_defaults():
    # measured: with every key known (no step_size) the lambda is the grid: no break
    assert codes(_SOLVER + _CLOSED) == []


# ----------------------------------------- defaults naming a definition

def test_a_default_naming_a_module_function_is_followed():
    # measured: ``run(y, t)`` with ``interface=solve`` left out breaks in ``solve`` (line 4);
    # ``run2``'s default ``other`` does not break
    assert codes("""
        import torch
        import torch.nn as nn
        def solve(y, t):
            if y.sum() > 0:
                return y
            return -y
        def other(y, t):
            return y * 2
        def run(y, t, *, interface=solve, **kw):
            return interface(y, t, **kw)
        def run2(y, t, *, interface=other):
            return interface(y, t)
        class M(nn.Module):
            def forward(self, y, t):
                return run(y, t) + run2(y, t)
    """) == [(4, "PTC104")]


_ONE_PATH = """
class M(nn.Module):
    def __init__(self, options, reverse):
        super().__init__()
        self.options = options
        self.reverse = reverse

    def forward(self, y0, t):
        options = self.options.copy()
        if self.reverse:
            options["grid_constructor"] = lambda t: t.flip(0)
        return Solver(y0, **options).integrate(t)
"""


def test_an_options_entry_written_on_one_path_is_not_surely_given():
    # measured with options={"step_size": 0.25}, reverse=False: the ``.item()`` breaks (line
    # 19); the entry written only when reversing does not make ``step_size`` surely None
    # (the solver raises when both are given); the call on the solver built here is a
    # "Reconstruction failure" break (line 38), as in the test above
    assert codes(_SOLVER + _ONE_PATH) == [(19, "PTC101"), (20, "PTC702"), (38, "PTC323")]
