"""``out-of-place`` is refused when a view (or other name) of the written input is read later.

``y = x.view(-1); x.add_(1); return y``: ``y`` shares ``x``'s storage, so the caller sees
the write through ``y``; ``x = x.add(1)`` would leave ``y`` unchanged (torch shows it).
"""

from __future__ import annotations

import textwrap

import pytest

from pt2lint.diagnostics import Applicability
from test_fix import HEADER, fix, fix_of


def module(body: str) -> str:
    return HEADER + "class M(nn.Module):\n    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8) + "\n"


VIEW_READ_LATER = [
    "y = x.view(-1)\nx.add_(1)\nreturn y",
    "y = x.view(-1)\nx += 1\nreturn x + y",
    "y = x[0]\nx.mul_(2)\nreturn y",
    "y = x.transpose(0, 1)\nx.clamp_(min=0)\nreturn y.sum()",
]


@pytest.mark.parametrize("body", VIEW_READ_LATER)
def test_out_of_place_is_refused_when_a_view_of_the_input_is_read_later(body):
    src = module(body)
    f = fix_of(src, "PTC401")
    assert f.applicability is Applicability.DISPLAY_ONLY and "`y` shares storage" in f.message, f.message
    assert fix(src, "out-of-place") == src


@pytest.mark.parametrize("body", [
    "h = x * 2\nx.add_(1)\nreturn h",          # a new tensor, not a view
    "x.add_(1)\ny = x.view(-1)\nreturn y",      # the view is taken after the write
    "y = x.view(-1)\nx.add_(1)\nreturn x",      # the view is never read again
])
def test_out_of_place_stays_an_unsafe_fix_without_a_live_view(body):
    assert fix_of(module(body), "PTC401").applicability is Applicability.UNSAFE


def test_the_view_really_sees_the_write():
    torch = pytest.importorskip("torch")
    original = module(VIEW_READ_LATER[0])
    rewritten = original.replace("x.add_(1)", "x = x.add(1)")
    outs = []
    for src in (original, rewritten):
        scope: dict = {}
        exec(compile(src, "m.py", "exec"), scope)
        outs.append(scope["M"]()(torch.zeros(2, 2)))
    assert torch.equal(outs[0], torch.ones(4)) and torch.equal(outs[1], torch.zeros(4))
