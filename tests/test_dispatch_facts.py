"""Breaks reached through values the analysis follows across calls: asserts with a computed
message, functions carried in keyword dicts.

Each case was measured on torch 2.13 with ``torch._dynamo.explain``: ``assert t.all()`` and
``assert t.all(), "text"`` compile to ``torch._assert_async`` (no break), while
``assert t.all(), "{}".format(n)``, an f-string with fields or a message in a variable break
with "Data-dependent branching"; an assert on a shape with a computed message does not break.
"""

from __future__ import annotations

import textwrap

from pt2lint.engine import lint_source
from pt2lint.settings import LintSettings, resolve_selection

DEFAULT = LintSettings(enabled=resolve_selection())


def found(code: str, codes=None):
    result = lint_source(textwrap.dedent(code).lstrip("\n"), "m.py", DEFAULT)
    return sorted((d.start.line, d.code) for d in result.diagnostics if codes is None or d.code in codes)


def test_assert_on_a_tensor_breaks_only_with_a_computed_message():
    code = """
        import torch
        from torch import nn

        def check(t, name):
            assert (t[1:] > t[:-1]).all(), "{} must increase".format(name)
            assert (t > -1e9).all(), f"{name} is finite"
            msg = "bad"
            assert t.sum() > -1e9, msg
            assert (t < 1e9).all()
            assert (t < 1e9).all(), "constant message"
            assert (t < 1e9).all(), "implicitly " "joined"
            assert (t < 1e9).all(), f"no fields"
            assert t.shape[0] > 0, "rows: {}".format(t.shape)
            return t

        class M(nn.Module):
            def forward(self, x):
                return check(x, "x")
        """
    assert found(code, codes={"PTC104"}) == [(5, "PTC104"), (6, "PTC104"), (8, "PTC104")]
