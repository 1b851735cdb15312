"""A module-level name bound to an imported name stands for it, as ``import ... as`` would.

``warn = warnings.warn`` then ``warn("...")`` in ``forward`` is a call of ``warnings.warn`` (a graph
break), and ``no_compile = torch.compiler.disable`` used as ``@no_compile`` disables the function
(each call splits the graph).  Before, the alias was a module global of unknown value, and both
were missed (measured on torch 2.13 with the graph_breaks log, below).
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found

SOURCE = """\
import warnings

import torch
import torch.nn.functional as F

warn = warnings.warn
no_compile = torch.compiler.disable
act = F.gelu


@no_compile
def log_stats(x):
    return x + 1


class Net(torch.nn.Module):
    def forward(self, x):
        warn("careful")
        x = act(x)
        return log_stats(x) * 2
"""


def test_aliases_of_imported_names_are_those_names():
    assert found(SOURCE, codes={"PTC303", "PTC310", "PTC301"}) == [(18, "PTC303"), (20, "PTC310")]


def test_a_later_binding_replaces_the_alias():
    assert found(
        """
        import warnings

        import torch

        warn = warnings.warn

        def warn(msg):
            return None

        class Net(torch.nn.Module):
            def forward(self, x):
                warn("careful")
                return x * 2
        """,
        codes={"PTC303"},
    ) == []


def test_dynamo_agrees():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 4))'
    assert dynamo_break_lines_many([(SOURCE, call)]) == [[18, 20]]


def test_an_alias_imported_from_another_module(tmp_path):
    from test_project_analysis import PYPROJECT, lint_tree, write
    from test_project_analysis import found as found_in_tree

    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/util.py": """
            import warnings

            say = print
            warn = warnings.warn

            def quiet(*args):
                return None

            log = quiet
            """,
        "pkg/model.py": """
            import torch
            from .util import log, say, warn

            class Net(torch.nn.Module):
                def forward(self, x):
                    say("shape", x.shape)
                    warn("careful")
                    log("not printed", x)
                    return x + 1
            """,
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == [("pkg/model.py", 6, "PTC301"), ("pkg/model.py", 7, "PTC303")]
