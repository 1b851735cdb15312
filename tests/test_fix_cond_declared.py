"""A ``cond`` rewrite never moves a binding of a ``global`` or ``nonlocal`` name into a branch
function: there the name would be a local of the branch function, and the write would be lost
(the module-level ``last`` stays ``None`` after the rewritten forward runs).  Reading such a
name is fine, and its ``if`` is still rewritten."""

from __future__ import annotations

import pytest

from pt2lint.diagnostics import Applicability
from test_fix_cond_hazards import cond_fix, module

PRE = "last = None\nCOUNT = 0\n\n\n"


@pytest.mark.parametrize(
    "body",
    [
        "global last\nif x.sum() > 0:\n    last = x.detach()\n    x = x + 1\nreturn x",
        "global last\nif x.sum() > 0:\n    x = x + 1\nelse:\n    last = x.detach()\n    x = x - 1\nreturn x",
        "global last\nif x.sum() > 0:\n    last, x = x.detach(), x + 1\nreturn x",
        "global last\nif x.sum() > 0:\n    for last in (x, x * 2):\n        x = x + last\nreturn x",
        "global last\nif x.sum() > 0:\n    x = (last := x * 2) + 1\nreturn x",
    ],
    ids=["assign", "else-branch", "tuple", "for-target", "walrus"],
)
def test_a_branch_that_binds_a_global_is_not_rewritten(body):
    fix = cond_fix(module(body, pre=PRE))
    assert fix.applicability is Applicability.DISPLAY_ONLY
    assert "declares `global` or `nonlocal`" in fix.message


def test_a_nonlocal_binding_in_a_branch_is_not_rewritten():
    src = (
        "import torch\nimport torch.nn as nn\n\n\n"
        "class M(nn.Module):\n"
        "    def forward(self, x):\n"
        "        seen = None\n\n"
        "        def step(t):\n"
        "            nonlocal seen\n"
        "            if t.sum() > 0:\n"
        "                seen = t.detach()\n"
        "                t = t + 1\n"
        "            return t\n\n"
        "        return step(x), seen\n"
    )
    fix = cond_fix(src)
    assert fix.applicability is Applicability.DISPLAY_ONLY and "declares `global` or `nonlocal`" in fix.message


def test_reading_a_global_in_a_branch_is_still_rewritten():
    fix = cond_fix(module("global COUNT\nif x.sum() > 0:\n    x = x + COUNT\nreturn x", pre=PRE))
    assert "declares" not in fix.message
    assert fix.applicability is not Applicability.DISPLAY_ONLY
