"""``functools.partial`` of a library callable is a call of that callable with the bound arguments first.

``dbg = functools.partial(print, "dbg:")`` then ``dbg(x.shape)`` in ``forward`` breaks as ``print``
does (measured below, torch 2.13), in the same module or imported from another.  Before, a partial
of anything but a project function was an unknown callable and its calls were not followed.  The
bound keywords count too: ``functools.partial(F.relu, inplace=True)`` writes its input.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found
from test_project_analysis import PYPROJECT, lint_tree, write
from test_project_analysis import found as found_in_tree

SOURCE = """\
import functools
import warnings

import torch
import torch.nn.functional as F

dbg = functools.partial(print, "dbg:")
careful = functools.partial(warnings.warn, "careful", stacklevel=2)
act = functools.partial(F.leaky_relu, negative_slope=0.2)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        dbg("built")

    def forward(self, x):
        dbg(x.shape)
        x = act(x) + 1
        careful()
        say = functools.partial(print, sep=", ")
        say("local", x.shape)
        return x * 2
"""


def test_partials_of_library_callables_are_their_calls():
    assert found(SOURCE, codes={"PTC301", "PTC303"}) == [(18, "PTC301"), (20, "PTC303"), (22, "PTC301")]


def test_bound_keywords_reach_the_call():
    code = """
        import functools

        import torch
        import torch.nn.functional as F

        relu_ = functools.partial(F.relu, inplace=True)
        relu = functools.partial(F.relu, inplace=False)


        class Net(torch.nn.Module):
            def forward(self, x, y):
                relu_(x)
                return relu(y)
        """
    assert found(code, codes={"PTC401"}) == [(12, "PTC401")]


def test_imported_from_another_module(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/util.py": """
            import functools

            dbg = functools.partial(print, "dbg:")
            """,
        "pkg/model.py": """
            import torch
            from .util import dbg

            class Net(torch.nn.Module):
                def forward(self, x):
                    dbg(x.shape)
                    return x + 1
            """,
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == [("pkg/model.py", 6, "PTC301")]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 4))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[18, 20, 22]]
