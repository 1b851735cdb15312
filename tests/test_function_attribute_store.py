"""PTC330: an attribute stored on a function object in a compiled region is a graph break (GB0467).

The rule's spec examples cover one module; here the decorator comes from another module of the
package (a counter on its wrapper), and the near misses: a store on a function ``forward``
defines itself, and a read.  Dynamo's breaks are measured below (torch 2.13).
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found
from test_project_analysis import PYPROJECT, lint_tree, write
from test_project_analysis import found as found_in_tree

DECO = """\
import functools


def counted(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        wrapper.last = wrapper.calls
        return fn(*args, **kwargs)
    wrapper.calls = 0
    return wrapper
"""

MODEL = """\
class M(torch.nn.Module):
    @counted
    def forward(self, x):
        def f(y):
            return y + 1
        f.tag = 1
        return f(x) + len(counted.__name__)
"""


def test_a_decorator_from_another_module(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/deco.py": DECO,
        "pkg/m.py": "import torch\nfrom .deco import counted\n\n\n" + MODEL,
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == [("pkg/deco.py", 7, "PTC330"), ("pkg/deco.py", 8, "PTC330")]


def test_same_module():
    # the second store (line 8) is after the break: Dynamo runs it in the resumed frame, which
    # breaks on it again; both are reported
    assert found(DECO + "\n\nimport torch\n\n\n" + MODEL, codes={"PTC330"}) == [(7, "PTC330"), (8, "PTC330")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(M(), backend="eager")(torch.randn(2, 4))'
    assert dynamo_break_lines_many([(DECO + "\n\nimport torch\n\n\n" + MODEL, call)]) == [[7, 8]]
