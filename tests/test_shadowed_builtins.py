"""A module's own top-level ``def print`` shadows the builtin in that module, also when the module
is read as another module's import (its top-level definitions are parsed on demand there).

Dynamo inlines the project function and does not break (measured on torch 2.13 with the
graph_breaks log, below); before, the call in the imported module was reported as the builtin
``print`` (PTC301) through the cross-module call chain.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found
from test_project_analysis import PYPROJECT, lint_tree, write
from test_project_analysis import found as found_in_tree

LOG = """\
import warnings


def print(*args, **kwargs):
    return None


class Warning(Exception):
    pass


def report(x):
    print("x", x.shape)
    return x
"""

NET = """\
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        return report(x) + 1
"""


def test_a_shadowed_builtin_in_an_imported_module(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/log.py": LOG,
        "pkg/m.py": "from .log import report\n" + NET,
    })
    assert [f for f in found_in_tree(lint_tree(tmp_path, ["pkg"])) if f[2] == "PTC301"] == []


def test_the_builtin_is_still_reported_when_nothing_shadows_it(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/log.py": LOG.replace("def print(", "def quiet_print("),
        "pkg/m.py": "from .log import report\n" + NET,
    })
    assert [f for f in found_in_tree(lint_tree(tmp_path, ["pkg"])) if f[2] == "PTC301"] == [("pkg/log.py", 13, "PTC301")]


def test_same_file():
    assert found(LOG + NET, codes={"PTC301"}) == []


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 4))'
    source = LOG + NET
    assert dynamo_break_lines_many([(source, call), (source.replace('print("x"', 'builtins.print("x"').replace("import warnings", "import builtins"), call)]) == [[], [13]]
