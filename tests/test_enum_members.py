"""Members of a project ``enum.Enum`` are constants Dynamo specialises on.

``self.mode = Mode.A`` in ``__init__`` and ``if self.mode is Mode.A:`` in ``forward``: Dynamo
guards on the member the attribute holds and traces one branch, so a break in the other is
never compiled.  Before, ``Mode.A`` was of unknown value and both branches were analysed (a
``.nonzero()`` in the dead one was reported).  A member compares equal only to itself; an
``IntEnum`` member against a plain number, or a mode of unknown value, stays undecided.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
import enum
import torch
from torch import nn


class Mode(enum.{base}):
    A = 1
    B = 2


class Net(nn.Module):
    def __init__(self{param}):
        super().__init__()
        self.mode = {value}

    def forward(self, x):
        if {test}:
            return x * 2
        return x.nonzero()
"""

DEAD_LINE = 19


def _source(test: str, value: str = "Mode.A", base: str = "Enum", param: str = "") -> str:
    return SOURCE.format(test=test, value=value, base=base, param=param)


# (source, lines pt2lint reports, how Dynamo builds the model)
CASES = {
    "is the member it holds": (_source("self.mode is Mode.A"), [], "Net()"),
    "equals the member it holds": (_source("self.mode == Mode.A"), [], "Net()"),
    "is not another member": (_source("self.mode is not Mode.B"), [], "Net()"),
    "among a tuple of members": (_source("self.mode in (Mode.A, Mode.B)"), [], "Net()"),
    "is another member": (_source("self.mode is Mode.B"), [DEAD_LINE], "Net()"),
    "a flag enum": (_source("self.mode is Mode.A", base="Flag"), [], "Net()"),
    # ``C = 1`` after ``A = 1`` is an alias: ``Mode.C is Mode.A``
    "an alias of the member it holds": (_source("self.mode is Mode.C").replace("    B = 2\n", "    B = 2\n    C = 1\n"), [], "Net()"),
    # ``auto()`` values: which member is which is not read here, so both branches are analysed
    "members of auto() values": (
        _source("self.mode is Mode.A").replace("    A = 1\n    B = 2\n", "    A = enum.auto()\n    B = enum.auto()\n"),
        [DEAD_LINE], "Net()",
    ),
    # an IntEnum member equals its number: not decided (both branches analysed)
    "an int enum against a number": (_source("self.mode == 1", base="IntEnum"), [DEAD_LINE], "Net()"),
    # the mode is a constructor parameter that nothing in the file decides: either branch
    "a mode of unknown value": (_source("self.mode is Mode.A", value="mode", param=", mode"), [DEAD_LINE], "Net(Mode.B)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_enum_member_tests_are_decided(name):
    src, lines, _ = CASES[name]
    assert found(src, codes=None) == [(line, "PTC202") for line in lines]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [(src, f'torch.compile({make}, backend="eager")(torch.ones(2, 3))') for src, _, make in CASES.values()]
    measured = dynamo_break_lines_many(cases)
    # where pt2lint cannot decide the test, Dynamo took the branch its value gives
    undecided = ("an int enum against a number", "members of auto() values")
    expected = [lines if name not in undecided else [] for name, (_, lines, _m) in CASES.items()]
    assert measured == expected
