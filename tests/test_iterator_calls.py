"""PTC329 and the end of the frame after a break at a call given a generator expression.

``math.prod(d for d in x.shape)`` breaks at the call (GB0055: the iterator is no graph value),
``math.prod([...])`` folds.  A break at any call given a generator expression ends the frame
(Dynamo cannot rebuild the generator to resume), so a later break in the function is not
logged.  Each expectation is the lines Dynamo's graph_breaks log names on torch 2.13.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

HEAD = """\
import math
import statistics
import torch
from torch import nn


@torch.compiler.disable
def external(values):
    return sum(values)


class M(nn.Module):
    def forward(self, x):
"""
TAIL = """
        y = x * 2
        print("after")
        return y
"""

# (body, lines pt2lint reports == lines Dynamo logs)
CASES = [
    # math functions Dynamo puts in the graph, given a lazy iterator: a break; a generator ends the frame
    ("        n = math.prod(d for d in x.shape[1:])", [14]),
    ("        n = math.fsum(float(d) for d in x.shape)", [14]),
    ("        n = math.prod(map(int, x.shape))", [14, 16]),
    ("        n = math.prod(filter(None, x.shape))", [14, 16]),
    ("        n = math.fsum(reversed(x.shape))", [14, 16]),
    # near misses: a list, a tuple, the shape itself, builtins Dynamo handles
    ("        n = math.prod([d for d in x.shape[1:]])", [16]),
    ("        n = math.prod(tuple(d for d in x.shape))", [16]),
    ("        n = math.prod(x.shape)", [16]),
    ("        n = sum(map(int, x.shape)) + max(d for d in x.shape) + min(filter(None, x.shape))", [16]),
    # any break at a call given a generator expression ends the frame
    ("        print(d for d in x.shape)", [14]),
    ("        n = statistics.mean(d for d in x.shape)", [14]),
    ("        n = external(d for d in x.shape)", [14]),
    ("        n = external([d for d in x.shape])", [14, 16]),
]


@pytest.mark.parametrize("body,lines", CASES, ids=[b.strip() for b, _ in CASES])
def test_reported_lines(body, lines):
    got = sorted({line for line, _code in found(HEAD + body + TAIL)})
    assert got == lines


def test_frame_end_is_named_in_the_message():
    from linttools import found_with_messages

    got = found_with_messages(HEAD + "        n = math.prod(d for d in x.shape[1:])" + TAIL)
    assert [(line, code) for line, code, _ in got] == [(14, "PTC329")]
    assert "16" in got[0][2]  # the print the break hides is named


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [(HEAD + body + TAIL, "torch.compile(M(), backend='eager')(torch.randn(2, 4))") for body, _ in CASES]
    assert dynamo_break_lines_many(cases) == [lines for _, lines in CASES]
