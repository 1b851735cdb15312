"""A graph break inside a generator that Dynamo inlines cannot be resumed: Dynamo gives up on the
frame it compiles ("Failed to handle graph break gracefully. Skipping the function and falling
back to eager"), so the rest of ``forward`` runs eagerly and its later breaks are never logged.
That holds for ``any()``/``all()`` over a generator expression of tensor tests (the break is in
Dynamo's polyfill, which holds the generator), a ``@contextmanager`` helper whose code before
``yield`` breaks, and ``list(gen(x))``; ``any([...])`` over a list resumes.  Each source is run on
torch 2.13 and the lines of the ``graph_breaks`` log are compared with the findings'."""

from __future__ import annotations

import textwrap

import pytest

from linttools import dynamo_break_lines_many, found

_TAIL = """
        y = x * 2
        if y.sum() > 0:
            y = y + 1
        print("after")
        return y
"""

_HEAD = """\
import contextlib
import time

import torch

_T = {}


@contextlib.contextmanager
def timed(name):
    t0 = time.perf_counter()
    yield
    _T[name] = time.perf_counter() - t0


def gen(x):
    yield x.sum().item()
    yield x.max().item()


class M(torch.nn.Module):
    def forward(self, x):
"""

# (forward body, the lines Dynamo's log names, a break inside torch at its innermost m.py frame)
CASES = [
    ("if any(r.sum() > 100 for r in x):\n    x = x / 100", [23]),
    ("if all(r.sum() > -100 for r in x):\n    x = x / 100", [23]),
    ("f = any(r.sum() > 100 for r in x)\nx = x * 2\nif f:\n    x = x / 100", [23]),
    ("if any([r.sum() > 100 for r in x]):\n    x = x / 100", [23, 26, 28]),
    ('with timed("a"):\n    x = x * 2', [11]),
    ("vals = list(gen(x))\nx = x * vals[0]", [17]),
]


def _source(body: str) -> str:
    return _HEAD + textwrap.indent(body, " " * 8) + _TAIL


def _break_lines(source: str):
    return sorted({line for line, code in found(source) if code[:4] in ("PTC1", "PTC2", "PTC3")})


@pytest.mark.parametrize("body,lines", CASES)
def test_only_the_breaks_dynamo_meets_are_reported(body, lines):
    assert _break_lines(_source(body)) == lines


def test_cases_match_dynamo():
    pytest.importorskip("torch")
    call = 'torch.compile(M(), backend="eager")(torch.randn(2, 4))'
    measured = dynamo_break_lines_many([(_source(body), call) for body, _ in CASES])
    assert measured == [lines for _, lines in CASES], list(zip(CASES, measured))
