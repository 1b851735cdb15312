"""Objects made inside compiled code: instances, registries of classes, records.

Each case was measured on torch 2.13 (``torch._dynamo.explain`` / the graph_breaks log):
an object constructed in ``forward`` has its ``__init__`` traced with the call's
arguments, its tensor attributes stay tensors, and a branch on one of them breaks the
graph; a method called on it is inlined like any other call.
"""

from __future__ import annotations

from test_project_analysis import PYPROJECT, found, lint_tree, write

SOLVERS_LIB = """
    import collections
    import torch

    _State = collections.namedtuple("_State", "y1, t0, t1")


    def _check(d0, d1):
        if d0 < 1e-5 or d1 < 1e-5:
            return 1
        return 2


    class Solver:
        def __init__(self, func, y0, rtol=1e-3, **unused):
            self.func = func
            self.y0 = y0
            self.rtol = rtol
            self.n = 3

        def _before(self, t):
            self.state = _State(self.y0, t[0], t[0])

        def integrate(self, t):
            self._before(t)
            while self.state.t1 < t[-1]:
                self.state = _State(self.func(self.state.y1), self.state.t1, self.state.t1 + 0.1)
            if self.n > 2 and self.rtol > 0:
                self.n = self.n + 1
            return _check(self.y0.norm(), self.y0.abs().sum())


    class Other(Solver):
        def integrate(self, t):
            return self.y0.item()


    class Quiet(Solver):
        def integrate(self, t):
            return self.y0 * 2


    SOLVERS = {"a": Solver, "b": Other}


    def odeint(func, y0, t, method=None):
        solver = SOLVERS[method](func=func, y0=y0)
        return solver.integrate(t)
"""


def test_registry_of_classes_constructed_in_forward_follows_every_candidate(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "lib.py": SOLVERS_LIB,
        "model.py": """
            import torch
            from torch import nn
            from lib import odeint


            class M(nn.Module):
                def __init__(self, method: str):
                    super().__init__()
                    self.method = method
                    self.lin = nn.Linear(3, 3)

                def forward(self, x):
                    t = torch.linspace(0, 1, 3, device=x.device)
                    return odeint(self.lin, x, t, method=self.method)
        """,
    })
    diags = lint_tree(tmp_path, ["lib.py", "model.py"])
    got = found(diags)
    # the while on a namedtuple field set from a tensor, the helper's branch on tensors,
    # and the .item() of the other candidate of SOLVERS[method]
    assert ("lib.py", 25, "PTC104") in got
    assert ("lib.py", 8, "PTC104") in got
    assert ("lib.py", 34, "PTC101") in got
    # near misses: a branch on attributes given Python numbers, and the reassignment of an
    # attribute of an object built in this call (no state outlives it: nothing to guard)
    assert not [g for g in got if g[1] == 27]
    assert not [g for g in got if g[2] == "PTC501"]
    # Quiet is not in the registry: nothing of it is analysed as compiled code
    assert not [g for g in got if g[1] == 39]
    item = next(d for d in diags if d.code == "PTC101")
    assert "one of Solver.integrate, Other.integrate" in item.message


def test_object_built_outside_the_region_is_not_traced(tmp_path):
    # The same classes constructed in __init__ (not compiled): their __init__ is not
    # compiled code, and a method the forward never calls is not either.
    write(tmp_path, {**PYPROJECT,
        "lib.py": """
            class Noisy:
                def __init__(self, y0):
                    print("building")
                    self.y0 = y0

                def value(self):
                    return self.y0.item()
        """,
        "model.py": """
            from torch import nn
            from lib import Noisy


            class M(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.helper = Noisy(3)

                def forward(self, x):
                    return x * 2
        """,
    })
    assert found(lint_tree(tmp_path, ["lib.py", "model.py"])) == []


def test_object_built_in_forward_traces_its_init_with_the_call_kinds(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "lib.py": """
            class Box:
                def __init__(self, value, scale):
                    if scale > 1:
                        self.value = value * scale
                    else:
                        self.value = value

                def positive(self):
                    return bool(self.value.sum() > 0)
        """,
        "model.py": """
            from torch import nn
            from lib import Box


            class M(nn.Module):
                def forward(self, x):
                    box = Box(x, 2)
                    if box.value.dim() > 1:
                        x = x + 1
                    return x, box.positive()
        """,
    })
    got = found(lint_tree(tmp_path, ["lib.py", "model.py"]))
    # bool() of a tensor held by the object: a data-dependent read (scale is the int 2 here:
    # the branch in __init__ is on a Python number, and .dim() is a static shape fact)
    assert ("lib.py", 9, "PTC103") in got
    assert not [g for g in got if g[1] in (3, 8)]
    # the method of the object built in forward breaks inside, so Dynamo (torch 2.13, graph_breaks
    # log) also breaks at the call: "Reconstruction failure" for the bound method (PTC323)
    assert [g for g in got if g[0] == "model.py"] == [("model.py", 10, "PTC323")]


def test_namedtuple_and_dataclass_fields_keep_their_kinds(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "model.py": """
            import collections
            from dataclasses import dataclass
            from typing import NamedTuple

            import torch
            from torch import nn

            Pair = collections.namedtuple("Pair", ["lo", "hi"])


            class Span(NamedTuple):
                start: torch.Tensor
                steps: int


            @dataclass
            class Cfg:
                bound: torch.Tensor
                width: int = 4


            class M(nn.Module):
                def forward(self, x):
                    p = Pair(x.min(), 3)
                    s = Span(x.max(), 5)
                    c = Cfg(x.mean(), 2)
                    if p.hi > 2 and s.steps > 1 and c.width > 1:
                        x = x + 1
                    if p.lo > 0:
                        x = x - 1
                    if s.start > 0:
                        x = x * 2
                    if c.bound > 0:
                        x = x / 2
                    lo, hi = p
                    if lo < 0:
                        x = -x
                    return x
        """,
    })
    got = found(lint_tree(tmp_path, ["model.py"]))
    assert ("model.py", 29, "PTC104") in got
    assert ("model.py", 31, "PTC104") in got
    assert ("model.py", 33, "PTC104") in got
    assert ("model.py", 36, "PTC104") in got
    # the fields given Python ints are not tensors
    assert not [g for g in got if g[1] == 27]


def test_one_of_two_functions_follows_both(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "model.py": """
            from torch import nn


            def fast(x):
                return x * 2


            def slow(x):
                return x.sum().item()


            class M(nn.Module):
                def __init__(self, exact: bool):
                    super().__init__()
                    self.exact = exact

                def forward(self, x):
                    fn = slow if self.exact else fast
                    return fn(x)
        """,
    })
    got = found(lint_tree(tmp_path, ["model.py"]))
    assert got == [("model.py", 9, "PTC101")]


def test_package_binding_wins_over_a_submodule_of_the_same_name(tmp_path):
    # ``from .solve import solve`` in pkg/__init__.py: ``pkg.solve`` is the function
    # (as in Python), not the submodule pkg/solve.py
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "from .solve import solve\n",
        "pkg/solve.py": """
            def solve(x):
                return x.sum().item()
        """,
        "model.py": """
            from torch import nn
            import pkg


            class M(nn.Module):
                def forward(self, x):
                    return pkg.solve(x)
        """,
    })
    got = found(lint_tree(tmp_path, ["model.py"]))
    assert got == [("pkg/solve.py", 2, "PTC101")]


def test_object_built_in_forward_mutating_its_own_state_is_not_a_recompile(tmp_path):
    # An object built in this call: its Python state dies with it, Dynamo guards on nothing.
    # The same method on an object the module keeps is a recompile hazard (a guard on
    # ``self.tracker.calls``).
    tracker = """
        class Tracker:
            def __init__(self):
                self.calls = 0

            def bump(self, x):
                self.calls += 1
                return x * 2
    """
    write(tmp_path, {**PYPROJECT,
        "tracker.py": tracker,
        "fresh.py": """
            from torch import nn
            from tracker import Tracker


            class Fresh(nn.Module):
                def forward(self, x):
                    return Tracker().bump(x)
        """,
    })
    assert found(lint_tree(tmp_path, ["fresh.py", "tracker.py"])) == []
    write(tmp_path, {
        "kept.py": """
            from torch import nn
            from tracker import Tracker


            class Kept(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.tracker = Tracker()

                def forward(self, x):
                    return self.tracker.bump(x)
        """,
    })
    assert found(lint_tree(tmp_path, ["kept.py", "tracker.py"])) == [("tracker.py", 6, "PTC501")]
    # tracker.py is judged by every user in its folder, linted or not: kept.py's Kept too
    assert found(lint_tree(tmp_path, ["fresh.py", "tracker.py"])) == [("tracker.py", 6, "PTC501")]
