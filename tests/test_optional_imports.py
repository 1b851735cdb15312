"""A ``try: import <optional> / except ImportError: <fallback>`` block whose ``try`` imports what the
analysis cannot read (an optional package or compiled extension: ``flash_attn``, ``apex``, the
project's own ``_C``) is read as running without it: the handler's bindings win.

Before, the ``try`` body's binding always won, so the name stood for an external function of
unknown result: the project's own fallback, which is what runs wherever the optional package is
missing (and what Dynamo traced in the labelling runs, below), was never followed, and the
unknown result silenced findings further down.  A ``try`` that imports a project module, torch
or the standard library keeps today's reading (the import works, the handler does not run).
"""

from __future__ import annotations

import pytest
from linttools import dynamo_break_lines_many, found
from test_project_analysis import PYPROJECT, lint_tree, write
from test_project_analysis import found as found_in_tree

SINGLE = """\
import torch


def fused_op_slow(x):
    return torch.nonzero(x).shape[0] * x


try:
    from flash_kernels_not_installed import fused_op
except ImportError:
    fused_op = fused_op_slow

try:
    from apex_not_installed.normalization import FusedLayerNorm as LayerNorm
    HAS_APEX = True
except ImportError:
    from torch.nn import LayerNorm
    HAS_APEX = False


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = LayerNorm(4)

    def forward(self, x):
        h = fused_op(self.norm(x))
        if not HAS_APEX:
            h = h + 1
        return h.tolist()
"""


def test_the_fallback_of_an_unreadable_optional_import_is_followed():
    assert found(SINGLE) == [(5, "PTC202"), (30, "PTC102")]


def test_dynamo_agrees_without_the_optional_packages():
    pytest.importorskip("torch")
    call = 'torch.compile(Net(), backend="eager")(torch.randn(2, 4))'
    assert dynamo_break_lines_many([(SINGLE, call)]) == [[5, 30]]


def test_a_fallback_in_another_module(tmp_path):
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/slow.py": """
            import torch

            def fused_op(x):
                return torch.nonzero(x).shape[0] * x
            """,
        "pkg/model.py": """
            import torch

            try:
                from ._C import fused_op  # the project's compiled extension: no source to read
            except (ImportError, OSError):
                from .slow import fused_op

            class Net(torch.nn.Module):
                def forward(self, x):
                    return fused_op(x)
            """,
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == [("pkg/slow.py", 4, "PTC202")]


def test_a_readable_import_in_the_try_body_still_wins(tmp_path):
    # ``.fast`` is a project module: the import works and the handler's fallback never runs;
    # ``torch.nn.functional`` is torch's: the same
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/fast.py": """
            def fused_op(x):
                return x * 2
            """,
        "pkg/slow.py": """
            import torch

            def fused_op(x):
                return torch.nonzero(x).shape[0] * x
            """,
        "pkg/model.py": """
            import torch

            try:
                from .fast import fused_op
            except ImportError:
                from .slow import fused_op

            try:
                from torch.nn.functional import scaled_dot_product_attention as sdpa
            except ImportError:
                def sdpa(q, k, v):
                    w = (q @ k.transpose(-1, -2)).softmax(-1)
                    return w @ v if w.sum().item() > 0 else v

            class Net(torch.nn.Module):
                def forward(self, x):
                    return sdpa(fused_op(x), x, x)
            """,
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == []


def test_a_handler_that_binds_nothing_changes_nothing():
    # ``except ImportError: raise``: the import is required; its names stay the external ones
    assert found(
        """
        import torch

        try:
            from flash_kernels_not_installed import fused_op
        except ImportError:
            raise ImportError("pip install flash-kernels")

        def fused_op_local(x):
            return x.nonzero()

        class Net(torch.nn.Module):
            def forward(self, x):
                return fused_op(x)
        """
    ) == []


def test_a_project_module_that_lacks_the_name_is_no_import_that_works(tmp_path):
    # ``fast.py`` exists but raises ImportError (no kernels built): the import fails and the
    # fallback runs
    write(tmp_path, {**PYPROJECT,
        "pkg/__init__.py": "",
        "pkg/fast.py": """
            raise ImportError("the fast kernels were not built")
            """,
        "pkg/slow.py": """
            def fused_op(x):
                return x.tolist()
            """,
        "pkg/model.py": """
            import torch

            try:
                from .fast import fused_op
            except ImportError:
                from .slow import fused_op

            class Net(torch.nn.Module):
                def forward(self, x):
                    return fused_op(x)
            """,
    })
    assert found_in_tree(lint_tree(tmp_path, ["pkg"])) == [("pkg/slow.py", 2, "PTC102")]
