"""``is None`` on a field of an object the compiled frame built is decided.

``out = Output(logits=h)`` with ``aux: Optional[Tensor] = None`` and then ``if out.aux is not
None: print(...)``: the object is built in the frame, so Dynamo knows each field's value and
specialises on ``None``, tracing one branch (the ``print`` is never compiled).  Before, only
parameters had their ``is None`` tests decided and the ``print`` was reported.  The test stays
undecided when something could change the field after the object is built: the object passed
on or a method of it called, a store to the field, a loop that builds it again, a
``__post_init__``.
"""

from __future__ import annotations

import pytest

from linttools import dynamo_break_lines_many, found

SOURCE = """\
from dataclasses import dataclass
from typing import Optional
import torch
from torch import nn


@dataclass
class Output:
    logits: torch.Tensor
    aux: Optional[torch.Tensor] = None
{extra}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        out = {build}
{between}
        if out.aux is not None:
            print("aux", out.aux.shape)
        return out.logits
"""

PRINT_LINE = 22


def _source(build="Output(self.proj(x))", between="", extra="") -> str:
    src = SOURCE.format(build=build, between=between or "        pass", extra=extra)
    return src


SET_AUX = """
    def with_aux(self, t):
        self.aux = t
        return self
"""


POST_INIT = """
    def __post_init__(self):
        if self.aux is None:
            self.aux = self.logits * 0
"""


# (source, lines pt2lint reports)
CASES = {
    "the field keeps its default": (_source(), []),
    "the field is given None": (_source("Output(self.proj(x), None)"), []),
    "the field is given None by keyword": (_source("Output(logits=self.proj(x), aux=None)"), []),
    # the field holds a tensor: the print is traced, and breaks
    "the field is given a tensor": (_source("Output(self.proj(x), x.sum(0))"), [PRINT_LINE]),
    # anything that may change the field keeps both branches
    "the field is stored to": (_source(between="        out.aux = x"), [PRINT_LINE]),
    "a method of the object is called": (_source(between="        out = out.with_aux(x)", extra=SET_AUX), [PRINT_LINE + 4]),
    "__post_init__ fills the field": (_source(extra=POST_INIT), [PRINT_LINE + 4]),
    "the object is passed on": (_source(between="        set_aux(out, x)").replace(
        "\n\nclass Net", "\n\ndef set_aux(o, t):\n    o.aux = t\n\n\nclass Net"), [PRINT_LINE + 4]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_is_none_of_a_field_is_decided(name):
    src, lines = CASES[name]
    assert found(src, codes=None) == [(line, "PTC301") for line in lines]


def test_in_a_loop_stays_undecided():
    src = _source().replace(
        "        out = Output(self.proj(x))\n        pass\n        if out.aux is not None:\n            print(\"aux\", out.aux.shape)\n",
        "        for _ in range(2):\n            if out.aux is not None:\n                print(\"aux\", out.aux.shape)\n            out = Output(self.proj(x), x)\n",
    ).replace("    def forward(self, x):\n", "    def forward(self, x):\n        out = Output(x)\n")
    assert "for _ in range(2)" in src
    assert [code for _, code in found(src, codes=None)] == ["PTC301"]


def test_dynamo_agrees():
    pytest.importorskip("torch")
    cases = [(src, 'torch.compile(Net(), backend="eager")(torch.ones(2, 3))') for src, _ in CASES.values()]
    assert dynamo_break_lines_many(cases) == [lines for _, lines in CASES.values()]


LOCALS = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        mask = None
        h = self.proj(x)
        if mask is not None:
            print("masked")
        cache = self.lookup(h)
        if cache is None:
            return h
        print("cached")
        return h

    def lookup(self, h):
        return None
"""


def test_a_local_bound_to_none_in_straight_line_code():
    # ``mask = None`` and a helper that returns ``None``: both tests are decided, as Dynamo does
    assert found(LOCALS, codes=None) == []


def test_a_local_a_loop_rebinds_stays_undecided():
    src = LOCALS.replace("        mask = None\n", "        mask = None\n        for _ in range(2):\n            mask = x\n")
    assert found(src, codes=None) == [(16, "PTC301")]


def test_dynamo_agrees_on_locals():
    pytest.importorskip("torch")
    src = LOCALS.replace("        mask = None\n", "        mask = None\n        for _ in range(2):\n            mask = x\n")
    call = 'torch.compile(Net(), backend="eager")(torch.ones(2, 3))'
    assert dynamo_break_lines_many([(LOCALS, call), (src, call)]) == [[], [16]]
