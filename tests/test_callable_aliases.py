"""Aliases Dynamo sees through: ``forward, other = _impl, None`` and ``forward = Base._impl`` in a
class body bind ``forward``; ``p = print`` (at module level or in the function) makes ``p(x)`` a
``print`` call; ``act = torch.relu`` a ``torch.relu`` call (no break).  Each source is compiled on
torch 2.13 and the lines of the ``graph_breaks`` log are compared with the findings'."""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines, found

_HEAD = "import random\n\nimport torch\nfrom torch import nn\n\n"

CASES = {
    "tuple-bound forward": (
        _HEAD + "def _impl(self, x):\n    return x * x.sum().item()\n\n\nclass M(nn.Module):\n    forward, other = _impl, None\n",
        [7],
    ),
    "forward read through a base class": (
        _HEAD + "class Base(nn.Module):\n    def _impl(self, x):\n        return x * x.sum().item()\n\n\n"
        "class M(Base):\n    forward = Base._impl\n",
        [8],
    ),
    "aliases of print, random.random and torch.relu": (
        _HEAD + "p = print\nr = random.random\nact = torch.relu\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        p(x)\n        y = act(x)\n        if r() > 2.0:\n            y = y * 2\n        q = print\n        q(1)\n        return y\n",
        [13, 15, 18],
    ),
    "a tuple unpacking that is not element by element unbinds forward": (
        _HEAD + "def _impl(self, x):\n    return x * x.sum().item()\n\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x * 2\n\n    forward, other = [_impl, None][::-1]\n",
        None,
    ),
}


def _break_lines(source: str):
    return sorted({line for line, code in found(source) if code[:4] in ("PTC1", "PTC2", "PTC3")})


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][1] is not None])
def test_aliases_are_followed(name):
    source, lines = CASES[name]
    assert _break_lines(source) == lines


def test_an_unpacking_of_another_shape_leaves_no_forward():
    # ``forward`` is rebound to something unknown (here None): no method to analyse, nothing reported
    source, _ = CASES["a tuple unpacking that is not element by element unbinds forward"]
    assert _break_lines(source) == []


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][1] is not None])
def test_matches_dynamo(name):
    pytest.importorskip("torch")
    source, lines = CASES[name]
    assert dynamo_break_lines(source, 'torch.compile(M(), backend="eager")(torch.ones(3))') == lines
