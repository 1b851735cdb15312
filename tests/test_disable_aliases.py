"""A project name bound to ``torch.compiler.disable`` (or to a ``functools.partial`` of it) disables
what it decorates, in the module that binds it and in modules that import it.

Calling such a function from a compiled region splits the graph (measured below, torch 2.13);
before, a decorator imported from another module was followed only when it was a project function,
and a partial of the torch decorator was an unknown callable, so both calls were missed.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found
from test_project_analysis import PYPROJECT, lint_tree, write
from test_project_analysis import found as found_in_tree

UTIL = """\
import functools

import torch

no_compile = torch.compiler.disable
shallow_disable = functools.partial(torch.compiler.disable, recursive=False)


def traced(fn):
    return fn
"""

HOOKS = """\
@no_compile
def snapshot(x):
    return x.detach().clone()


@shallow_disable
def passthrough(x):
    return x + 0


@traced
def plain(x):
    return x * 3
"""

NET = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        s = snapshot(x)
        x = x * 2
        y = passthrough(x)
        return plain(x) + s + y
"""


def test_aliases_imported_from_another_module(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/util.py": UTIL,
        "pkg/hooks.py": "from .util import no_compile, shallow_disable, traced\n\n\n" + HOOKS,
        "pkg/m.py": "from .hooks import passthrough, plain, snapshot\n" + NET,
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == [("pkg/m.py", 7, "PTC310"), ("pkg/m.py", 9, "PTC310")]


def test_same_module():
    assert found(UTIL + "\n\n" + HOOKS + "\n\n" + NET, codes={"PTC310"}) == [(33, "PTC310"), (35, "PTC310")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 4))'
    assert dynamo_break_lines_many([(UTIL + "\n\n" + HOOKS + "\n\n" + NET, call)]) == [[33, 35]]
