"""``name = staticmethod(ops.fn)`` in a class body binds a function of another module as a static method.

``self.peak_fn(x)`` then calls ``ops.peak(x)`` with no ``self``, and a break inside it is reached
(measured below on torch 2.13, with the function in the same file: Dynamo does not care where it
is defined).  Before, only ``staticmethod`` of a function defined in the same file was followed.
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many
from test_project_analysis import PYPROJECT, lint_tree, write
from test_project_analysis import found as found_in_tree

OPS = """\
def peak(x):
    return x.abs().max().item()


def scale(x):
    return x * 2
"""

MODEL = """\
class M(torch.nn.Module):
    peak_fn = staticmethod(ops.peak)
    scale_fn = staticmethod(ops.scale)

    def forward(self, x):
        p = self.peak_fn(x)
        return self.scale_fn(x) * p
"""


def test_imported_function_as_static_method(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/ops.py": OPS,
        "pkg/m.py": "import torch\nfrom . import ops\n\n\n" + MODEL,
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == [("pkg/ops.py", 2, "PTC101")]


def test_a_later_binding_replaces_it(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/ops.py": OPS,
        "pkg/m.py": "import torch\nfrom . import ops\n\n\n" + MODEL.replace(
            "    scale_fn =", "    peak_fn = staticmethod(ops.scale)\n    scale_fn ="),
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == []


def test_dynamo_agrees():
    pytest.importorskip("torch")
    source = "import types\n\nimport torch\n\n" + OPS + "\n\nops = types.SimpleNamespace(peak=peak, scale=scale)\n\n\n" + MODEL
    call = 'torch.compile(M(), backend="eager")(torch.randn(2, 4))'
    assert dynamo_break_lines_many([(source, call)]) == [[6]]
